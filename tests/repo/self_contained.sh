#!/bin/sh
# The repository stands alone: no source, script or document cites a file outside it (the
# planning notes the project started from lived in a sibling "shared" directory). Prints each
# offending line and exits 1; exits 0 when there is none.
#   tests/repo/self_contained.sh [REPO_ROOT]
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 2
# The bracketed letters keep this file from matching itself.
pattern='shared/[A]RCHITECTURE\.md|shared/[D]ATA\.md|shared/[S]TYLE\.md|shared/[t]ools/|\.\./[s]hared|/work/[s]hared'
if grep -rInE "$pattern" apps core sched comm train tools docs tests bench fuzz cmake data \
    README.md CMakeLists.txt 2>/dev/null; then
  echo "self_contained: the lines above cite files outside the repository" >&2
  exit 1
fi
exit 0
