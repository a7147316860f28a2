#!/usr/bin/python3
"""Compare rotor's Lasso schedules with each other and with scikit-learn and glmnet.

At one lambda (a fraction of lambda_max) on one LIBSVM data set, every tool fits the same
problem (docs/lasso.md): columns standardised to mean 0 and population sd 1, an unpenalised
intercept, F(b0, w) = 1/(2N) ||y - b0 - Z w||^2 + lambda ||w||_1 in y's units. F is recomputed
here, in numpy, from each tool's coefficients, so the numbers compare whatever each tool
reports.

- rotor: `rotor lasso train` for every --schedules x --threads, with --metrics, evaluating
  every iteration: objective against time and against coordinate updates. Its seconds are
  training plus the evaluations that test convergence (time_s + eval_s: the duality gap is
  rotor's convergence check, as glmnet's KKT sweep is glmnet's); "train" leaves them out.
  Schedule "cyclic-full" is cyclic with --no-active-set (every coordinate every sweep).
- Every configuration runs --repeats times; the table shows the median run.
- scikit-learn: Lasso(alpha=lambda) on the sparse X with each column divided by its sd
  (scikit-learn centres sparse input implicitly), tol as rotor's (both are the relative
  duality gap).
- glmnet (R, when Rscript and glmnet are installed): glmnet(x, y, lambda=lambda,
  standardize=TRUE, thresh=t) for each t of --glmnet-thresh, timed inside R (median of the
  repeats); glmnet's sd is the population one, as rotor's.
- "s to target": seconds until (F - F*) / F* <= --target (F* the best F of any run): rotor's
  first evaluation there, the other tools' run when their final F is there.

Outputs in --out: results.tsv (one line per run: tool, schedule, threads, seconds,
iterations, updates, F, F - F*, nonzeros, test R^2), objective_vs_time.png and
objective_vs_updates.png (F - F*, F* the smallest F any run reached), and a Markdown table on
stdout.

    lasso_bench.py --rotor build/ci/apps/rotor --data train.svm [--test test.svm] --out DIR
        [--lambda-frac 0.05] [--schedules cyclic,shotgun,strads] [--threads 1,2] [--tol 1e-6]
        [--max-iterations 200] [--parallel 16] [--candidates 32] [--rho 0.3] [--repeats 3]
        [--glmnet-thresh 1e-6,1e-7,1e-10] [--target 1e-6] [--no-glmnet] [--no-sklearn]
        [--target-column NAME]   (CSV/TSV data; glmnet reads LIBSVM only: add --no-glmnet)

Needs numpy, scipy, scikit-learn and matplotlib (/usr/bin/python3 on Debian with
python3-sklearn and python3-matplotlib).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import Lasso


def load(path: Path, features: int | None = None, target: str | None = None):
    """LIBSVM, or CSV/TSV with a header (the target: the column named `target`, else the last),
    as rotor reads them."""
    if path.suffix in (".csv", ".tsv"):
        sep = "," if path.suffix == ".csv" else "\t"
        with open(path, encoding="utf-8") as f:
            names = f.readline().rstrip("\n").split(sep)
        raw = np.loadtxt(path, delimiter=sep, skiprows=1, ndmin=2)
        t = names.index(target) if target else len(names) - 1
        return sp.csc_matrix(np.delete(raw, t, axis=1)), raw[:, t]
    x, y = load_svmlight_file(str(path), n_features=features, dtype=np.float64)
    return sp.csc_matrix(x), y


def standardisation(x):
    """Column means and population sds (1 for a constant column)."""
    n = x.shape[0]
    mean = np.asarray(x.mean(axis=0)).ravel()
    sq = np.asarray(x.multiply(x).mean(axis=0)).ravel()
    sd = np.sqrt(np.maximum(sq - mean * mean, 0))
    sd[sd == 0] = 1
    return mean, sd, n


def objective(x, y, lam, b0, beta, sd):
    """F on raw coefficients (beta on raw features, penalty on beta * sd)."""
    r = y - b0 - x @ beta
    return r @ r / (2 * len(y)) + lam * np.abs(beta * sd).sum()


def r2(x, y, b0, beta):
    r = y - b0 - x @ beta
    return 1 - (r @ r) / ((y - y.mean()) @ (y - y.mean()))


def read_rotor_model(path: Path, p: int):
    beta = np.zeros(p)
    b0 = 0.0
    for line in path.read_text().splitlines():
        f = line.split("\t")
        if f[0] == "beta0":
            b0 = float(f[1])
        elif f[0] == "feature":
            beta[int(f[1])] = float(f[4])
    return b0, beta


# Schedule variants: a name on the command line -> rotor's --schedule and extra flags.
VARIANTS = {"cyclic-full": ("cyclic", ["--no-active-set"])}


def run_rotor(a, variant: str, threads: int, lam: float, out: Path):
    schedule, extra = VARIANTS.get(variant, (variant, []))
    model = out / f"rotor-{variant}-t{threads}.txt"
    metrics = out / f"rotor-{variant}-t{threads}.jsonl"
    cmd = [a.rotor, "lasso", "train", "-q", "--data", str(a.data), "--lambda", repr(lam),
           "--schedule", schedule, *extra, "--threads", str(threads), "--tol", repr(a.tol),
           "--max-iterations", str(a.max_iterations), "--parallel", str(a.parallel),
           "--candidates", str(a.candidates), "--rho", repr(a.rho), "--seed", "1",
           "--out", str(model), "--overwrite", "--metrics", str(metrics)]
    if a.target_column:
        cmd += ["--target", a.target_column]
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - start
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    return model, records, wall


def run_glmnet(a, lam: float, thresh: float, out: Path):
    if shutil.which("Rscript") is None:
        return None
    script = out / "glmnet.R"
    result = out / "glmnet.tsv"
    script.write_text(f"""
suppressMessages({{library(glmnet); library(Matrix)}})
lines <- sub("#.*$", "", readLines("{a.data.resolve()}"))
lines <- trimws(lines[grepl("[^[:space:]]", lines)])
fields <- strsplit(lines, "[[:space:]]+")
y <- as.numeric(vapply(fields, function(f) f[1], ""))
ij <- do.call(rbind, lapply(seq_along(fields), function(i) {{
  f <- fields[[i]][-1]
  if (length(f) == 0) return(NULL)
  kv <- do.call(rbind, strsplit(f, ":", fixed = TRUE))
  cbind(i, as.integer(kv[, 1]), as.numeric(kv[, 2]))
}}))
x <- sparseMatrix(i = ij[, 1], j = ij[, 2], x = ij[, 3], dims = c(length(y), {a.features}))
times <- c()
for (k in seq_len({a.repeats})) {{
  t0 <- Sys.time()
  fit <- glmnet(x, y, family = "gaussian", lambda = {lam!r}, standardize = TRUE,
                thresh = {thresh!r})
  times <- c(times, as.numeric(difftime(Sys.time(), t0, units = "secs")))
}}
secs <- median(times)
b <- as.numeric(coef(fit, s = {lam!r}))
writeLines(c(paste("seconds", secs), paste("passes", fit$npasses),
             paste("coef", paste(sprintf("%.17g", b), collapse = ","))), "{result.resolve()}")
""")
    r = subprocess.run(["Rscript", str(script)], capture_output=True, text=True)
    if r.returncode != 0:
        print("glmnet failed:", r.stderr.strip().splitlines()[-1:])
        return None
    got = dict(line.split(" ", 1) for line in result.read_text().splitlines())
    coef = np.array([float(v) for v in got["coef"].split(",")])
    return float(got["seconds"]), int(got["passes"]), coef[0], coef[1:]


def sklearn_row(a, x, y, xt, yt, lam, sd, model, secs, rows) -> None:
    """The row of scikit-learn's run (model fitted in secs, median)."""
    beta = model.coef_ / sd
    rows.append(dict(tool="scikit-learn", schedule="cyclic", threads=1, seconds=secs, train=secs,
                     wall=secs, iterations=int(model.n_iter_),
                     updates=int(model.n_iter_) * a.features,
                     F=objective(x, y, lam, model.intercept_, beta, sd),
                     nnz=int((beta != 0).sum()),
                     r2=r2(xt, yt, model.intercept_, beta) if a.test else float("nan")))


def plot(runs, best: float, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for key, label, name in (("time_s", "seconds", "objective_vs_time.png"),
                             ("updates_total", "coordinate updates", "objective_vs_updates.png")):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for (schedule, threads), records in runs.items():
            xs = [r[key] + (r.get("eval_s", 0) if key == "time_s" else 0)
                  for r in records if r.get("objective") is not None]
            ys = [max(r["objective"] - best, 1e-12) for r in records if r.get("objective") is not None]
            ax.plot(xs, ys, label=f"rotor {schedule}, {threads} thread{'s' if threads > 1 else ''}")
        ax.set_xlabel(label)
        ax.set_ylabel("F - F* (log)")
        ax.set_yscale("log")
        ax.set_title("Lasso: suboptimality against " + label)
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--test", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lambda-frac", type=float, default=0.05)
    ap.add_argument("--schedules", default="cyclic,shotgun,strads")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iterations", type=int, default=200)
    ap.add_argument("--parallel", type=int, default=16)
    ap.add_argument("--candidates", type=int, default=32)
    ap.add_argument("--rho", type=float, default=0.3)
    ap.add_argument("--glmnet-thresh", default="1e-6,1e-7,1e-10",
                    help="comma-separated glmnet thresh values, one row each")
    ap.add_argument("--target", type=float, default=1e-6,
                    help="relative suboptimality (F - F*) / F* for the 's to target' column")
    ap.add_argument("--repeats", type=int, default=3, help="runs per configuration (median)")
    ap.add_argument("--no-glmnet", action="store_true")
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--target-column",
                    help="CSV/TSV: the target column's name (default: the last)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)

    x, y = load(a.data, target=a.target_column)
    a.features = x.shape[1]
    mean, sd, n = standardisation(x)
    yc = y - y.mean()
    lam_max = np.abs((x.T @ yc) / sd).max() / n
    lam = a.lambda_frac * lam_max
    xt, yt = load(a.test, a.features, a.target_column) if a.test else (None, None)
    print(f"{a.data}: {n} x {a.features}, {x.nnz} nonzeros; lambda_max {lam_max:.6g}, "
          f"lambda {lam:.6g}")

    rows, runs = [], {}
    for schedule in a.schedules.split(","):
        for threads in (int(t) for t in a.threads.split(",")):
            reps = [run_rotor(a, schedule, threads, lam, a.out) for _ in range(a.repeats)]
            secs = [rec[-1]["time_s"] + rec[-1].get("eval_s", 0) for _, rec, _ in reps]
            k = sorted(range(len(reps)), key=lambda i: secs[i])[len(reps) // 2]  # the median run
            model, records, wall = reps[k]
            runs[(schedule, threads)] = records
            b0, beta = read_rotor_model(model, a.features)
            last = records[-1]
            rows.append(dict(tool="rotor", schedule=schedule, threads=threads,
                             seconds=secs[k], train=last["time_s"], wall=wall,
                             iterations=last["iter"], updates=int(last["updates_total"]),
                             F=objective(x, y, lam, b0, beta, sd), nnz=int((beta != 0).sum()),
                             r2=r2(xt, yt, b0, beta) if a.test else float("nan")))

    xs = sp.csc_matrix(x @ sp.diags(1 / sd))
    times = []
    for _ in range(0 if a.no_sklearn else a.repeats):
        model = Lasso(alpha=lam, tol=a.tol, max_iter=100000, selection="cyclic")
        start = time.perf_counter()
        model.fit(xs, y)
        times.append(time.perf_counter() - start)
    if times:
        sklearn_row(a, x, y, xt, yt, lam, sd, model, float(np.median(times)), rows)

    for thresh in ([] if a.no_glmnet else [float(t) for t in a.glmnet_thresh.split(",")]):
        g = run_glmnet(a, lam, thresh, a.out)
        if g is None:
            break
        secs, passes, b0, beta = g
        rows.append(dict(tool="glmnet", schedule=f"cyclic+active, thresh {thresh:g}", threads=1,
                         seconds=secs, train=secs, wall=secs, iterations=passes, updates=-1,
                         F=objective(x, y, lam, b0, beta, sd), nnz=int((beta != 0).sum()),
                         r2=r2(xt, yt, b0, beta) if a.test else float("nan")))

    best = min(r["F"] for r in rows)
    # Seconds to (F - F*) / F* <= --target: rotor's first evaluation there (training plus the
    # evaluations so far); the other tools' whole run when their final F is there.
    for r in rows:
        r["to_target"] = float("nan")
        if r["tool"] == "rotor":
            for rec in runs[(r["schedule"], r["threads"])]:
                if rec.get("objective") is not None and rec["objective"] - best <= a.target * best:
                    r["to_target"] = rec["time_s"] + rec.get("eval_s", 0)
                    break
        elif r["F"] - best <= a.target * best:
            r["to_target"] = r["seconds"]
    with open(a.out / "results.tsv", "w") as f:
        keys = ["tool", "schedule", "threads", "seconds", "train", "to_target", "wall", "iterations",
                "updates", "F",
                "F_minus_best", "nnz", "r2"]
        f.write("\t".join(keys) + "\n")
        for r in rows:
            r["F_minus_best"] = r["F"] - best
            f.write("\t".join(str(r[k]) for k in keys) + "\n")
    plot(runs, best, a.out)
    print(f"| tool | schedule | threads | s | s (train) | s to {a.target:g} | iterations | updates "
          "| F | F − F* | nnz | test R² |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['tool']} | {r['schedule']} | {r['threads']} | {r['seconds']:.3f} | "
              f"{r['train']:.3f} | {r['to_target']:.3f} | "
              f"{r['iterations']} | {r['updates']} | {r['F']:.10g} | {r['F_minus_best']:.2e} | "
              f"{r['nnz']} | {r['r2']:.4f} |")


if __name__ == "__main__":
    main()
