#!/usr/bin/python3
"""Interleaved A/B of rotor binaries on scaling.py's runs: for each repeat, each configuration
(1x1, 1x2, 2x1) and each binary in turn, one `rotor lasso train` (scaling.run); prints every
run (seconds of training plus the checks, the last iteration's handoffs, barrier_sleeps and
per-worker compute and wait seconds, the 1-minute load average before it), then the medians,
and whether every model file is byte-identical.

    scaling_ab.py --bins old=PATH new=PATH --data FILE --lambda 0.001049634
        [--configs 1x1,1x2,2x1] [--repeats 3] [--args '-L 4096'] [--schedule shotgun]
        [--max-iterations 10] [--tol 0] [--out DIR]

The defaults (shotgun, L = 4096, 10 iterations) are a converging run on the 10^6-feature set
(F after 10 iterations within 3e-7, relative, of F after 60). Sessions 9-11 timed `--args '-L 8192'
--max-iterations 5`, which diverges at iteration 6 on that set (the benchmark log,
`git show b26f669:docs/BENCHMARKS.md`, "Session 11"): pass those to compare with their tables.

Standard library only (and scaling.py beside it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scaling  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bins", nargs="+", required=True, help="name=path of a rotor binary")
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, required=True)
    ap.add_argument("--configs", default="1x1,1x2,2x1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--args", default="-L 4096")
    ap.add_argument("--schedule", default="shotgun")
    ap.add_argument("--max-iterations", type=int, default=10)
    ap.add_argument("--tol", type=float, default=0.0)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--out", type=Path, default=Path("/tmp/scaling_ab"))
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    bins = dict(b.split("=", 1) for b in a.bins)
    shapes = {name: (ranks, threads) for name, ranks, threads in scaling.CONFIGS}
    runs: dict[tuple[str, str], list[dict]] = {}
    loads = []
    for k in range(a.repeats):
        for config in a.configs.split(","):
            for name, path in bins.items():
                a.rotor = Path(path)
                loads.append(os.getloadavg()[0])
                tag = f"{name}-{config}-{k}"
                r = scaling.run(a, *shapes[config], a.schedule, a.out, tag)
                runs.setdefault((name, config), []).append(r)
                last = json.loads((a.out / f"{tag}.jsonl").read_text().splitlines()[-1])
                print(f"{name} {config} #{k}: {r['train_s']:.3f} s, handoffs "
                      f"{last.get('handoffs', '-')}, barrier_sleeps "
                      f"{last.get('barrier_sleeps', '-')}, compute {last.get('thread_compute_s')}"
                      f", wait {last.get('thread_wait_s')}, load {loads[-1]:.2f}", flush=True)
    same = len({r["model"] for rs in runs.values() for r in rs}) == 1
    print(f"\nload average {min(loads):.2f}-{max(loads):.2f}; models identical: {same}")
    for (name, config), rs in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        times = [r["train_s"] for r in rs]
        print(f"{config} {name}: median {statistics.median(times):.3f} s "
              f"({', '.join(f'{t:.3f}' for t in times)}), F = {rs[0]['objective']:.10g}")


if __name__ == "__main__":
    main()
