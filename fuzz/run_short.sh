#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for SECONDS; exits non-zero if any finds a crash.
#
#   fuzz/run_short.sh BUILD_DIR [SECONDS=30]
#
# If BUILD_DIR is not configured yet it is configured with clang-14 and -DROTOR_FUZZ=ON (tests
# and benchmarks off). Seeds are (re)written to BUILD_DIR/fuzz-seeds/<target>/, the growing
# corpus is kept in BUILD_DIR/fuzz-corpus/<target>/, crash inputs go to
# BUILD_DIR/fuzz-artifacts/.
set -euo pipefail

build=${1:?usage: fuzz/run_short.sh BUILD_DIR [SECONDS]}
seconds=${2:-30}
src=$(cd "$(dirname "$0")/.." && pwd)
targets=(fuzz_uci_reader fuzz_binary_corpus fuzz_text_reader fuzz_svmlight_reader fuzz_lasso_data_binary)

if [[ ! -f "$build/CMakeCache.txt" ]]; then
    CC=clang-14 CXX=clang++-14 cmake -S "$src" -B "$build" -G Ninja -DROTOR_FUZZ=ON \
        -DROTOR_BUILD_TESTS=OFF -DROTOR_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" --target "${targets[@]}"

python3 "$src/fuzz/make_seeds.py" "$build/fuzz-seeds"
mkdir -p "$build/fuzz-artifacts"

failed=()
for t in "${targets[@]}"; do
    mkdir -p "$build/fuzz-corpus/$t"
    echo "== $t for ${seconds}s"
    if ! "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$t-" \
        "$build/fuzz-corpus/$t" "$build/fuzz-seeds/$t" 2>"$build/fuzz-artifacts/$t.log"; then
        tail -n 40 "$build/fuzz-artifacts/$t.log"
        failed+=("$t")
    else
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb" \
            "$build/fuzz-artifacts/$t.log" || true
    fi
done

if ((${#failed[@]})); then
    echo "fuzz: crashes in: ${failed[*]} (inputs in $build/fuzz-artifacts/)" >&2
    exit 1
fi
echo "fuzz: no crash"
