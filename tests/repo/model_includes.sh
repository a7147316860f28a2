#!/bin/sh
# No model kernel includes another model's folder: core/<model> (lda with its corpus, mf, lasso,
# logreg) includes only core/base, core/io and its own folder. What two models share belongs in
# core/base or core/io (docs/architecture.md, "Layers"). Prints each offending include and exits
# 1; exits 0 when there is none.
#   tests/repo/model_includes.sh [REPO_ROOT]
root=${1:-$(dirname "$0")/../..}
cd "$root" || exit 2
bad=0
for model in lda mf lasso logreg corpus; do
  case $model in
    lda | corpus) own='core/(lda|corpus)/' ;;
    *) own="core/$model/" ;;
  esac
  # The includes of core/<model> that name a core folder other than base, io and its own.
  hits=$(grep -rnE '^#include "core/' "core/$model" |
    grep -vE "#include \"(core/base/|core/io/|$own)")
  if [ -n "$hits" ]; then
    echo "$hits"
    bad=1
  fi
done
if [ "$bad" = 1 ]; then
  echo "model_includes: a model kernel includes another model's folder (above)" >&2
  exit 1
fi
exit 0
