#!/usr/bin/python3
"""rotor `mf train --implicit` against the numpy/scipy CG-iALS of ials_reference.py, side by side
in one run (docs/mf.md, "Implicit feedback"; docs/BENCHMARKS.md).

For each K, `--repeats` runs of each (alternating), the same data, λ, α, CG steps, iterations
and threads (rotor's --threads, the reference's BLAS threads). Reports per K: the median over
runs of the mean seconds per iteration (rotor: the metrics' iteration_s, evaluation excluded;
the reference: its own clock around the two half-steps), their ratio, and the ranking metrics
after the last iteration (rotor's by `rotor mf eval --ranking k`, the reference's by its own
code of the same definitions), and the load average before and after.

    ials_compare.py --rotor build/release/apps/rotor --train T --test V --out DIR
                    [--ranks 64,256] [--threads 2] [--iterations 15] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run_rotor(args, k: int, out: Path) -> dict:
    model = out / f"rotor-k{k}"
    metrics = out / f"rotor-k{k}.jsonl"
    subprocess.run([args.rotor, "mf", "train", "--implicit", "--train", args.train, "-k", str(k),
                    "--lambda", str(args.lam), "--alpha", str(args.alpha),
                    "--cg-steps", str(args.cg_steps), "-n", str(args.iterations),
                    "--eval-every", str(args.iterations), "--threads", str(args.threads),
                    "--metrics", str(metrics), "--out", str(model), "--overwrite", "--quiet"],
                   check=True)
    its = [json.loads(line)["iteration_s"] for line in metrics.read_text().splitlines() if line]
    ev = subprocess.run([args.rotor, "mf", "eval", "--model", str(model), "--test", args.test,
                         "--ranking", str(args.k), "--json"],
                        check=True, capture_output=True, text=True)
    res = json.loads(ev.stdout)
    res["per_iteration_s"] = sum(its) / len(its)
    return res


def run_reference(args, k: int) -> dict:
    p = subprocess.run([sys.executable, str(HERE / "ials_reference.py"), "--train", args.train,
                        "--test", args.test, "--rank", str(k), "--lambda", str(args.lam),
                        "--alpha", str(args.alpha), "--cg-steps", str(args.cg_steps),
                        "--iterations", str(args.iterations), "--k", str(args.k),
                        "--threads", str(args.threads)],
                       check=True, capture_output=True, text=True)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    its = [x["iteration_s"] for x in lines if "iteration_s" in x]
    res = lines[-1]
    res["per_iteration_s"] = sum(its) / len(its)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ranks", default="64,256")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--lambda", dest="lam", type=float, default=10.0)
    ap.add_argument("--alpha", type=float, default=5.0)
    ap.add_argument("--cg-steps", type=int, default=3)
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    rows = []
    for k in [int(x) for x in args.ranks.split(",")]:
        rotor, ref = [], []
        for _ in range(args.repeats):
            rotor.append(run_rotor(args, k, out))
            ref.append(run_reference(args, k))
        med = {name: statistics.median(r["per_iteration_s"] for r in runs)
               for name, runs in (("rotor", rotor), ("reference", ref))}
        row = {"k": k, "threads": args.threads, "rotor_s": med["rotor"],
               "reference_s": med["reference"], "ratio": med["rotor"] / med["reference"]}
        for name, runs in (("rotor", rotor), ("reference", ref)):
            for key in ("precision_at_k", "map_at_k", "ndcg_at_k"):
                row[f"{name}_{key}"] = statistics.median(r[key] for r in runs)
        rows.append(row)
        print(json.dumps(row), flush=True)
    load_after = os.getloadavg()
    print(f"\nload average before {load_before[0]:.2f}, after {load_after[0]:.2f}")
    print(f"\n| K | threads | rotor s/iter | reference s/iter | ratio | P@{args.k} rotor / ref "
          f"| MAP@{args.k} rotor / ref | NDCG@{args.k} rotor / ref |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['k']} | {r['threads']} | {r['rotor_s']:.3f} | {r['reference_s']:.3f} | "
              f"{r['ratio']:.2f} | {r['rotor_precision_at_k']:.4f} / "
              f"{r['reference_precision_at_k']:.4f} | {r['rotor_map_at_k']:.4f} / "
              f"{r['reference_map_at_k']:.4f} | {r['rotor_ndcg_at_k']:.4f} / "
              f"{r['reference_ndcg_at_k']:.4f} |")
    (out / "summary.json").write_text(json.dumps({"rows": rows, "load_before": load_before,
                                                  "load_after": load_after}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
