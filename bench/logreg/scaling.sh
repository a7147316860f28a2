#!/usr/bin/env bash
# Threads and ranks of `rotor logreg train` (docs/BENCHMARKS.md, "Logistic regression: Scaling"):
# alternating runs of two configurations, the training seconds rotor prints (reading the data
# excluded), wall seconds and peak RSS of each run (/usr/bin/time), REPEATS times each.
#   scaling.sh threads ROTOR DATA BLOCKS ITERATIONS [REPEATS]   # --threads 1 against 2
#   scaling.sh ranks ROTOR DATA BLOCKS ITERATIONS [REPEATS]     # 1 process against mpiexec -n 2
set -euo pipefail
mode=$1 rotor=$2 data=$3 blocks=$4 iterations=$5 repeats=${6:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(logreg train --data "$data" --out "$out/m" --overwrite --lambda 1 --no-intercept --blocks "$blocks"
        --curvature local --max-step 1 --iterations "$iterations")
run() {  # label, command...
  local label=$1
  shift
  local line
  line=$(/usr/bin/time -f "wall %e rss_kb %M" "$@" 2>&1 | grep -E "objective|wall" | tr '\n' ' ')
  echo "$label $(sed -E 's/.*objective ([^,]*),.*, ([0-9.]+) s;.*wall ([0-9.]+) rss_kb ([0-9]+).*/objective \1 train_s \2 wall_s \3 rss_kb \4/' <<<"$line")"
}
for ((i = 0; i < repeats; i++)); do
  if [[ $mode == threads ]]; then
    run "threads=1" "$rotor" "${common[@]}" --threads 1
    run "threads=2" "$rotor" "${common[@]}" --threads 2
  else
    run "ranks=1" "$rotor" "${common[@]}"
    run "ranks=2" mpiexec -n 2 "$rotor" "${common[@]}"
  fi
done
