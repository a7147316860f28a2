#!/usr/bin/env python3
"""Objective against time: liblinear -s 6 and rotor's solvers on one set, one thread.

Each point is one run, timed whole (wall seconds, reading the file included): liblinear at a
grid of its tolerance -e, rotor's newton (its defaults) and prox (`--solver prox`, its
defaults) at a grid of --tol. The y value is (F - F*)/F*, F recomputed from each model file
(liblinear_compare.py's functions), F* from liblinear -e 1e-10. Every run is repeated --repeats
times in turn (liblinear, newton, prox, liblinear, ...) and its median time plotted. Writes a
PNG and prints the points as a Markdown table.

    objective_vs_time.py --rotor build/ci/apps/rotor --data train.svm --png out.png
        [--lambda 1] [--repeats 3] [--no-prox]

Needs Debian's liblinear-tools and python3-matplotlib.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from liblinear_compare import liblinear_weights, objective, read_svm, rotor_weights, timed

LIBLINEAR_EPS = ("0.1", "0.03", "0.01", "0.003", "0.001", "3e-4", "1e-4", "3e-5", "1e-5")
ROTOR_TOL = ("0.1", "0.03", "0.01", "0.003", "0.001", "3e-4", "1e-4", "3e-5", "1e-5")
PROX_TOL = ("0.01", "0.003", "0.001", "3e-4", "1e-4")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--png", type=Path, required=True)
    ap.add_argument("--lambda", dest="lam", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-prox", action="store_true", help="leave out rotor --solver prox")
    a = ap.parse_args()
    data = read_svm(a.data)
    with tempfile.TemporaryDirectory() as tmp:
        ll_model, rotor_model = Path(tmp) / "liblinear.model", Path(tmp) / "rotor.model"

        def liblinear(eps: str) -> list[str]:
            return ["liblinear-train", "-q", "-s", "6", "-c", repr(1 / a.lam), "-e", eps,
                    str(a.data), str(ll_model)]

        def rotor(tol: str, prox: bool) -> list[str]:
            return [a.rotor, "logreg", "train", "-q", "--data", str(a.data), "--out",
                    str(rotor_model), "--overwrite", "--lambda", repr(a.lam), "--no-intercept",
                    "--tol", tol] + \
                (["--solver", "prox"] if prox else [])

        timed(liblinear("1e-10"))
        best = objective(data, liblinear_weights(ll_model), a.lam)
        runs = [("liblinear -s 6", f"-e {e}", liblinear(e), lambda: liblinear_weights(ll_model))
                for e in LIBLINEAR_EPS]
        runs += [("rotor newton (default)", f"--tol {t}", rotor(t, False),
                  lambda: rotor_weights(rotor_model)) for t in ROTOR_TOL]
        if not a.no_prox:
            runs += [("rotor --solver prox", f"--tol {t}", rotor(t, True),
                      lambda: rotor_weights(rotor_model)) for t in PROX_TOL]
        seconds: list[list[float]] = [[] for _ in runs]
        gaps = []
        for r in range(a.repeats):
            for i, (_, _, cmd, weights) in enumerate(runs):
                seconds[i].append(timed(cmd))
                if r == 0:
                    gaps.append((objective(data, weights(), a.lam) - best) / best)
    points = [(tool, setting, statistics.median(s), g)
              for (tool, setting, _, _), s, g in zip(runs, seconds, gaps)]
    print(f"{a.data.name}: {len(data)} examples, lambda {a.lam:g}, F* {best:.6f}; median wall "
          f"seconds of {a.repeats}\n")
    print("| tool | setting | seconds | (F - F*)/F* |")
    print("|---|---|---|---|")
    for tool, setting, s, g in points:
        print(f"| {tool} | {setting} | {s:.3f} | {g:.2e} |")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for tool, marker in (("liblinear -s 6", "o"), ("rotor newton (default)", "s"),
                         ("rotor --solver prox", "^")):
        xs = [s for t, _, s, g in points if t == tool]
        ys = [max(g, 1e-9) for t, _, s, g in points if t == tool]
        if xs:
            ax.plot(xs, ys, marker=marker, label=tool)
    ax.axhline(1e-4, color="grey", lw=0.8, ls="--")
    ax.set_yscale("log")
    ax.set_xlabel("wall seconds (reading included), median of runs")
    ax.set_ylabel("(F - F*) / F*")
    ax.set_title(f"{a.data.name}, lambda {a.lam:g}, one thread")
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)


if __name__ == "__main__":
    main()
