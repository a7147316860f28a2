#!/usr/bin/python3
"""Choose rotor's default λ by measurement: test RMSE of `rotor mf train` over a grid of λ.

For every λ, rank K and solver (and the ALS peer with --als), one run on the same 80/20 split
(tools/data/split_ratings.py, seed 1, unless --train/--test): the final and the best test RMSE
over the iterations. The report gives, per K and solver, the λ with the lowest final test RMSE,
and the λ with the lowest worst-case final RMSE over every K and solver (a default must serve
all of them). Any further rotor flag (--lambda-form plain, --lambda-bias ...) passes with
--rotor-arg.

    bench/mf/lambda_sweep.py --ratings /work/data/movielens/ratings.csv --out bench-out/lambda
        [--lambdas 0.01,0.02,0.05,0.1,0.2] [--ranks 20,50] [--solvers ccd,sgd] [--als]
Outputs in --out: lambda.md, lambda.json, every run under --out/runs/.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_bench():
    spec = importlib.util.spec_from_file_location("mf_bench", HERE / "mf_bench.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mf_bench"] = module
    spec.loader.exec_module(module)
    return module


bench = load_bench()


def final_and_best(records: list[dict]) -> tuple[float | None, float | None]:
    rmse = [r["test_rmse"] for r in records if r.get("test_rmse") is not None]
    return (rmse[-1], min(rmse)) if rmse else (None, None)


def sweep(args) -> dict:
    train, test = bench.prepare_split(args)
    rows = []
    for k in args.ranks:
        for lam in args.lambdas:
            args.lam, args.rank = lam, k
            runs = [bench.run_rotor(args, s, args.threads[0], 1, f"k{k}-l{lam:g}-{s}", k, train,
                                    test, args.iterations) for s in args.solvers]
            if args.als:
                runs.append(bench.run_als(args, f"k{k}-l{lam:g}-als", train, test))
            for run in runs:
                final, best = final_and_best(run["records"])
                rows.append({"rank": k, "lambda": lam, "solver": run["solver"], "final": final,
                             "best": best, "time_s": run["records"][-1]["time_s"]})
                bench.log(args, f"K={k} lambda={lam:g} {run['solver']}: final {final}")
    return {"train": str(train), "test": str(test), "iterations": args.iterations,
            "als_iterations": args.als_iterations if args.als else None, "rows": rows,
            "choice": choose(rows)}


def choose(rows: list[dict]) -> dict:
    """Per (K, solver) the λ of the lowest final RMSE; overall the λ of the lowest worst case
    over every (K, solver) (ALS left out: rotor's default is chosen for rotor's solvers)."""
    best = {}
    for r in rows:
        key = f"K={r['rank']} {r['solver']}"
        if r["final"] is not None and (key not in best or r["final"] < best[key]["final"]):
            best[key] = {"lambda": r["lambda"], "final": r["final"]}
    worst = {}
    for r in rows:
        if r["solver"] == "als":
            continue
        value = r["final"] if r["final"] is not None else float("inf")
        worst[r["lambda"]] = max(worst.get(r["lambda"], 0.0), value)
    overall = min(worst, key=worst.get) if worst else None
    return {"per_config": best, "default": overall,
            "default_worst_rmse": worst.get(overall) if overall is not None else None}


def write_report(args, res: dict) -> None:
    (args.out / "lambda.json").write_text(json.dumps(res, indent=1) + "\n")
    configs = sorted({(r["rank"], r["solver"]) for r in res["rows"]})
    head = " | ".join(f"K={k} {s}" for k, s in configs)
    lines = [f"# λ sweep: final (best) test RMSE after {res['iterations']} iterations "
             f"(ALS: {res['als_iterations']})", "", f"| λ | {head} |",
             "|---|" + "---|" * len(configs)]
    cell = {(r["rank"], r["solver"], r["lambda"]): r for r in res["rows"]}
    for lam in args.lambdas:
        cells = []
        for k, s in configs:
            r = cell.get((k, s, lam))
            cells.append(f"{bench.fmt(r['final'], '{:.4f}')} ({bench.fmt(r['best'], '{:.4f}')})"
                         if r else "—")
        lines.append(f"| {lam:g} | " + " | ".join(cells) + " |")
    ch = res["choice"]
    lines += ["", "Lowest final RMSE per configuration: " +
              "; ".join(f"{key}: λ = {v['lambda']:g} ({v['final']:.4f})"
                        for key, v in ch["per_config"].items()), "",
              f"Suggested default (lowest worst case over rotor's runs): λ = "
              f"{bench.fmt(ch['default'], '{:g}')} (worst final RMSE "
              f"{bench.fmt(ch['default_worst_rmse'], '{:.4f}')})"]
    (args.out / "lambda.md").write_text("\n".join(lines) + "\n")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--rotor")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--ratings", type=Path)
    p.add_argument("--train", type=Path)
    p.add_argument("--test", type=Path)
    p.add_argument("--test-fraction", type=float, default=0.2)
    p.add_argument("--lambdas", type=bench.float_list,
                   default=[0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3])
    p.add_argument("--ranks", type=bench.int_list, default=[20, 50])
    p.add_argument("--solvers", type=lambda s: s.split(","), default=["ccd", "sgd"])
    p.add_argument("--threads", type=bench.int_list, default=[2])
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--als", action="store_true", help="also the ALS peer at every λ")
    p.add_argument("--als-iterations", type=int, default=15)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rotor-arg", action="append", default=[])
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    args.mpiexec = "mpiexec"
    args.verbose_rotor = False
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    args.rotor = bench.find_rotor(args.rotor)
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        res = sweep(args)
    except bench.RunError as e:
        print(f"lambda_sweep.py: {e}", file=sys.stderr)
        return 1
    write_report(args, res)
    if not args.quiet:
        print((args.out / "lambda.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
