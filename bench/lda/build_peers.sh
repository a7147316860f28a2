#!/bin/bash
# Builds the LDA peers of bench/lda/curve.py OUTSIDE the repository, from their public sources:
#   WarpLDA    (github.com/thu-ml/warplda)                      -> BUILD/warplda/release/src/{warplda,format}
#   F+NomadLDA (github.com/DSC-SPIDAL/harplda, tool/nomadlda)  -> BUILD/nomadlda/nomad-lda-exp-0.2/{f+nomad-lda,lda-converter}
# Their code never enters rotor; CI does not need this script.
#
#   bench/lda/build_peers.sh WARPLDA_SRC HARPLDA_SRC BUILD_DIR
#
# WARPLDA_SRC / HARPLDA_SRC: a source tree, or a (bare) git directory whose HEAD is archived;
# HARPLDA_SRC "-" builds WarpLDA alone.
# Debian packages used: cmake g++ make libnuma-dev libgflags-dev libtbb-dev libopenmpi-dev
# (apt-get install -y libgflags-dev was the only one missing here). WarpLDA's CMakeLists adds
# gflags as a subdirectory fetched by get_gflags.sh (git clone); we use Debian's libgflags
# instead by dropping that line, and force-include <stdexcept>
# (GCC 12). F+NomadLDA: its Makefile (mpicxx, -ltbb) with a tbb::atomic shim for oneTBB.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 WARPLDA_SRC HARPLDA_SRC BUILD_DIR" >&2
  exit 2
fi
warp_src=$1 harp_src=$2 build=$3
mkdir -p "$build"
build=$(cd "$build" && pwd)

# copy_tree SRC DEST [PATH]: a plain copy of SRC (or of PATH inside it) into DEST.
copy_tree() {
  local src=$1 dest=$2 sub=${3:-}
  rm -rf "$dest" && mkdir -p "$dest"
  if git -C "$src" rev-parse --is-bare-repository 2>/dev/null | grep -q true; then
    git -C "$src" archive HEAD ${sub:+"$sub"} | tar -x -C "$dest"
  else
    (cd "$src" && tar -c ${sub:-.}) | tar -x -C "$dest"
  fi
}

# WarpLDA
copy_tree "$warp_src" "$build/warplda"
sed -i '/add_subdirectory(gflags)/d' "$build/warplda/CMakeLists.txt"
# GCC 12 no longer pulls <stdexcept> in through <string>; lda.cpp uses std::runtime_error.
cmake -S "$build/warplda" -B "$build/warplda/release" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-include stdexcept" >/dev/null
make -C "$build/warplda/release/src" -j2 warplda format
echo "built $build/warplda/release/src/warplda"

# F+NomadLDA (the whole harplda tree is large; only tool/nomadlda is needed)
if [ "$harp_src" = - ]; then
  exit 0
fi
copy_tree "$harp_src" "$build/harplda" tool/nomadlda
nomad=$build/nomadlda
rm -rf "$nomad" && mv "$build/harplda/tool/nomadlda" "$nomad" && rm -rf "$build/harplda"
# The tree carries prebuilt binaries (linked to TBB 2's libtbb.so.2): rebuild from source.
# oneTBB (Debian's libtbb-dev) dropped tbb::atomic; a copyable std::atomic stands in for it.
mkdir -p "$nomad/compat/tbb"
cat >"$nomad/compat/tbb/atomic.h" <<'SHIM'
// tbb::atomic (removed in oneTBB) for F+NomadLDA: a copyable std::atomic.
#pragma once
#include <atomic>
namespace tbb {
template <typename T>
struct atomic : std::atomic<T> {
    atomic() noexcept : std::atomic<T>(T()) {}
    atomic(T v) noexcept : std::atomic<T>(v) {}
    atomic(const atomic& o) noexcept : std::atomic<T>(o.load()) {}
    atomic& operator=(const atomic& o) noexcept { this->store(o.load()); return *this; }
    atomic& operator=(T v) noexcept { this->store(v); return *this; }
};
}  // namespace tbb
SHIM
make -C "$nomad/nomad-lda-exp-0.2" clean
make -C "$nomad/nomad-lda-exp-0.2" f+nomad-lda lda-converter \
  CXXFLAGS="-fPIC -O3 -march=native -DNDEBUG -fopenmp -std=c++17 -I$nomad/compat"
echo "built $nomad/nomad-lda-exp-0.2/f+nomad-lda"
