#!/usr/bin/env python3
"""Time `rotor logreg path` with warm starts against cold starts and against liblinear.

The path is rotor's grid (--n-lambdas log-spaced from lambda_max down to --eps x lambda_max),
without an intercept so that liblinear (-s 6, C = 1/lambda, no bias) solves the same problems.
Three commands, timed in turn --repeats times (a change of the machine's load falls on all),
medians of wall and CPU seconds including reading the data:

- rotor path, each lambda warm started from the last (the default);
- rotor path --cold-start, each lambda from w = 0;
- liblinear-train once per lambda (it has no path: each run reads the data again; the table also
  gives its reading cost, liblinear-train at C = 1e-3 / lambda_max per lambda, where w = 0 at
  once), at -e chosen so that its stopping rule is rotor's --tol (liblinear scales the rule by
  min(#pos, #neg) / l: -e = tol * l / min(#pos, #neg)).

With --intercept rotor fits its default unpenalised intercept and liblinear (whose bias is
penalised) is left out: warm against cold starts only.

Then every lambda's objective of liblinear's model (recomputed here on the training data) against
rotor's path file: the largest relative difference. Prints a Markdown table.

    path_compare.py --rotor build/ci/apps/rotor --data train.svm [--n-lambdas 20] [--eps 1e-3]
        [--tol 1e-4] [--repeats 3] [--intercept]

Standard library only; needs Debian's liblinear-tools.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
from pathlib import Path

from liblinear_compare import alternating, liblinear_weights, objective, read_svm


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--n-lambdas", type=int, default=20)
    ap.add_argument("--eps", type=float, default=1e-3)
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--intercept", action="store_true")
    a = ap.parse_args()
    data = read_svm(a.data)
    pos = sum(1 for y, _ in data if y > 0)
    lib_eps = a.tol * len(data) / min(pos, len(data) - pos)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        rotor = [a.rotor, "logreg", "path", "--data", str(a.data), "-q", "--n-lambdas",
                 str(a.n_lambdas), "--eps", repr(a.eps), "--tol", repr(a.tol)]
        if not a.intercept:
            rotor.append("--no-intercept")
        out = subprocess.run(rotor + ["--out", str(t / "path.tsv")], check=True,
                             capture_output=True, text=True).stdout
        rows = [l.split("\t") for l in (t / "path.tsv").read_text().splitlines()[2:]]
        lambdas = [float(r[0]) for r in rows]
        rotor_f = [float(r[2]) for r in rows]
        lam_max = lambdas[0]

        def lib_loop(lams: list[float], eps: float) -> list[str]:
            runs = "; ".join(f"liblinear-train -q -s 6 -c {1 / l!r} -e {eps!r} {a.data} "
                             f"{t}/lib-{k}.model" for k, l in enumerate(lams))
            return ["sh", "-c", runs]

        def rotor_seconds(cmd: list[str]) -> float:
            text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            return float(re.search(r"path of \d+ lambdas from lambda_max \S+: ([0-9.]+) s",
                                   text).group(1))

        warm, cold = rotor, rotor + ["--cold-start"]
        lib, lib_read = lib_loop(lambdas, lib_eps), lib_loop([1e3 * lam_max] * len(lambdas), 1.0)
        med = alternating([warm, cold] + ([] if a.intercept else [lib, lib_read]), a.repeats)
        solve = [sorted(rotor_seconds(c) for _ in range(a.repeats))[a.repeats // 2]
                 for c in (warm, cold)]
        diffs = []
        if not a.intercept:
            subprocess.run(lib, check=True)
            for k, l in enumerate(lambdas):
                f_lib = objective(data, liblinear_weights(t / f"lib-{k}.model"), l)
                diffs.append((f_lib - rotor_f[k]) / abs(rotor_f[k]))
    said = next((l for l in out.splitlines() if "path of" in l), "")
    print(f"{a.data.name}: {len(data)} examples, "
          f"{'intercept' if a.intercept else 'no intercept'}, {a.n_lambdas} lambdas from "
          f"lambda_max {lam_max:.6g} to {a.eps:g} x, --tol {a.tol:g} (liblinear -e "
          f"{lib_eps:.3g}), medians of {a.repeats}, load {os.getloadavg()[0]:.1f}\n")
    print("| run | wall s | CPU s | path solve s (rotor's own) |")
    print("|---|---|---|---|")
    print(f"| rotor path (warm starts) | {med[0][0]:.3f} | {med[0][1]:.3f} | {solve[0]:.3f} |")
    print(f"| rotor path --cold-start | {med[1][0]:.3f} | {med[1][1]:.3f} | {solve[1]:.3f} |")
    if not a.intercept:
        print(f"| liblinear-train per lambda | {med[2][0]:.3f} | {med[2][1]:.3f} | "
              f"{med[2][0] - med[3][0]:.3f} (minus its reading, {med[3][0]:.3f} s) |")
    print(f"\nwarm / cold: {med[0][0] / med[1][0]:.2f}x wall, {med[0][1] / med[1][1]:.2f}x CPU, "
          f"{solve[0] / solve[1]:.2f}x solve")
    print(f"rotor (warm): {said}")
    if a.intercept:
        return
    print(f"warm / liblinear: {med[0][0] / med[2][0]:.2f}x wall, {med[0][1] / med[2][1]:.2f}x "
          f"CPU, {solve[0] / (med[2][0] - med[3][0]):.2f}x solve (liblinear minus its reading)")
    worst = max(range(len(diffs)), key=lambda k: abs(diffs[k]))
    print(f"objectives (F_liblinear - F_rotor) / F_rotor: from {min(diffs):.2e} to "
          f"{max(diffs):.2e} (largest |.| at lambda {lambdas[worst]:.6g})")

if __name__ == "__main__":
    main()
