#!/usr/bin/env python3
"""Compare `rotor logreg train` with liblinear's L1-regularised logistic regression (-s 6).

Both fit min_w sum_i log(1 + exp(-y_i x_i.w)) + lambda ||w||_1 without an intercept
(liblinear's C = 1/lambda, no bias term). The objective is recomputed here from each model file
on the training data, so the two compare whatever each tool prints. liblinear runs to a tight
tolerance (-e 1e-10) and gives F*. Then the time to (F - F*)/F* <= --rel: liblinear with its
stopping tolerance -e loosened 0.1, 0.05, 0.02, 0.01, ... until the first that reaches --rel;
rotor with --iterations = B * passes, passes growing by 1.25 from --passes until it reaches
--rel. The two rows that reach --rel are then timed --repeats times, in turn (liblinear, rotor,
liblinear, ...: a change of load falls on both), medians. Prints a Markdown table: tool, setting,
seconds (wall, including reading the data), CPU seconds (user + system), F, (F - F*)/F*,
nonzeros, test accuracy; then the two ratios.

    liblinear_compare.py --rotor build/ci/apps/rotor --data train.svm [--test test.svm]
        [--lambda 1] [--blocks 1024] [--curvature local] [--rel 1e-4] [--delay 0]
        [--threads 1] [--max-step 0] [--filters kkt] [--passes 8] [--repeats 3] [--defaults]

With --defaults rotor runs once with its defaults only (`rotor logreg train --lambda L
--no-intercept`: the newton solver and its stopping rule); its row is timed only when it reaches
--rel (the table says so either way).

Standard library only; needs Debian's liblinear-tools (liblinear-train, liblinear-predict).
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def read_svm(path: Path) -> list[tuple[int, dict[int, float]]]:
    out = []
    with open(path, encoding="ascii") as f:
        for line in f:
            fields = line.split("#")[0].split()
            if not fields:
                continue
            y = 1 if float(fields[0]) > 0 else -1
            out.append((y, {int(k): float(v) for k, v in (x.split(":") for x in fields[1:])}))
    return out


def objective(data, w: dict[int, float], lam: float) -> float:
    loss = 0.0
    for y, x in data:
        z = y * sum(v * w.get(k, 0.0) for k, v in x.items())
        loss += math.log1p(math.exp(-z)) if z > 0 else -z + math.log1p(math.exp(z))
    return loss + lam * sum(abs(v) for v in w.values())


def accuracy(data, w: dict[int, float]) -> float:
    right = sum(1 for y, x in data if (1 if sum(v * w.get(k, 0.0) for k, v in x.items()) > 0
                                       else -1) == y)
    return right / len(data) if data else float("nan")


def liblinear_weights(model: Path) -> dict[int, float]:
    lines = model.read_text().splitlines()
    labels = next(l.split()[1:] for l in lines if l.startswith("label"))
    start = lines.index("w") + 1
    sign = 1.0 if labels[0] == "1" else -1.0  # liblinear's w scores its first label
    return {j + 1: sign * float(v) for j, v in enumerate(lines[start:]) if float(v) != 0}


def rotor_weights(model: Path) -> dict[int, float]:
    lines = model.read_text().splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith("weights "))
    count = int(lines[at].split()[1])  # then the weight lines; version 2 ends with a crc32 line
    return {int(k): float(v) for k, v in (l.split("\t") for l in lines[at + 1:at + 1 + count])}


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def cpu_timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def alternating(cmds: list[list[str]], repeats: int) -> list[tuple[float, float]]:
    """Median wall and CPU seconds of each command, timed in turn `repeats` times, so that a
    change of the machine's load falls on all of them alike."""
    runs: list[list[tuple[float, float]]] = [[] for _ in cmds]
    for _ in range(repeats):
        for i, cmd in enumerate(cmds):
            runs[i].append(cpu_timed(cmd))
    return [(statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for r in runs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--test", type=Path)
    ap.add_argument("--lambda", dest="lam", type=float, default=1.0)
    ap.add_argument("--blocks", type=int, default=1024)
    ap.add_argument("--curvature", default="local")
    ap.add_argument("--delay", default="0")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-step", default="0")
    ap.add_argument("--filters", default="", help="rotor's --filters (e.g. kkt); empty: none")
    ap.add_argument("--rel", type=float, default=1e-4)
    ap.add_argument("--passes", type=float, default=8)
    ap.add_argument("--max-passes", type=float, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--defaults", action="store_true",
                    help="rotor with its defaults only (--lambda, --no-intercept, --threads): one "
                         "run, stopped by its own rule, instead of the growing pass counts")
    a = ap.parse_args()
    data = read_svm(a.data)
    test = read_svm(a.test) if a.test else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ll = Path(tmp) / "liblinear.model"

        def liblinear(eps: str) -> list[str]:
            return ["liblinear-train", "-s", "6", "-c", repr(1 / a.lam), "-e", eps, str(a.data),
                    str(ll)]

        finals: list[tuple[int, list[str]]] = []  # the rows that reach --rel, and their commands
        secs = timed(liblinear("1e-10"))
        w = liblinear_weights(ll)
        best = objective(data, w, a.lam)
        rows.append(("liblinear -s 6", "-e 1e-10 (F*)", secs, best, w))
        for eps in ("0.1", "0.05", "0.02", "0.01", "0.005", "0.003", "0.002", "0.001", "5e-4", "3e-4",
                    "2e-4", "1e-4", "1e-5"):
            secs = timed(liblinear(eps))
            w = liblinear_weights(ll)
            f = objective(data, w, a.lam)
            if f <= best * (1 + a.rel):
                finals.append((len(rows), liblinear(eps)))
                rows.append(("liblinear -s 6", f"-e {eps}", secs, f, w))
                break
            rows.append(("liblinear -s 6", f"-e {eps}", secs, f, w))
        passes = a.passes
        m = Path(tmp) / "rotor.model"
        if a.defaults:
            cmd = [a.rotor, "logreg", "train", "-q", "--data", str(a.data), "--out", str(m),
                   "--overwrite", "--lambda", repr(a.lam), "--no-intercept"]
            if a.threads != 1:
                cmd += ["--threads", str(a.threads)]
            secs = timed(cmd)
            w = rotor_weights(m)
            f = objective(data, w, a.lam)
            if f <= best * (1 + a.rel):
                finals.append((len(rows), cmd))
            rows.append((f"rotor (defaults, T={a.threads})", "its own stopping rule", secs, f, w))
            passes = a.max_passes + 1  # no pass search
        while passes <= a.max_passes:
            iterations = int(round(passes * a.blocks))
            cmd = [a.rotor, "logreg", "train", "-q", "--data", str(a.data), "--out", str(m), "--overwrite",
                   "--lambda", repr(a.lam), "--no-intercept", "--blocks", str(a.blocks),
                   "--curvature", a.curvature, "--delay", a.delay, "--threads", str(a.threads), "--max-step", a.max_step,
                   "--iterations", str(iterations)]
            if a.filters:
                cmd += ["--filters", a.filters]
            secs = timed(cmd)
            w = rotor_weights(m)
            f = objective(data, w, a.lam)
            tool = f"rotor (B={a.blocks}, {a.curvature}, max-step {a.max_step}, T={a.threads}" + \
                (f", filters {a.filters})" if a.filters else ")")
            setting = f"{iterations} it ({iterations / a.blocks:g} passes)"
            if f <= best * (1 + a.rel):
                finals.append((len(rows), cmd))
                rows.append((tool, setting, secs, f, w))
                break
            rows.append((tool, setting, secs, f, w))
            passes = math.ceil(passes * 1.25)
        cpu = {}
        for (row, _), (wall, cpu_s) in zip(finals, alternating([c for _, c in finals], a.repeats)):
            rows[row] = rows[row][:2] + (wall,) + rows[row][3:]
            cpu[row] = cpu_s
    print(f"{a.data.name}: {len(data)} examples, lambda {a.lam:g} (C = {1 / a.lam:g}); "
          f"median of {a.repeats} where (F - F*)/F* <= {a.rel:g} (the two tools' rows timed in "
          f"turn), single runs above it\n")
    print("| tool | setting | seconds | CPU s | F | (F - F*)/F* | nonzeros | test accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    for i, (tool, setting, secs, f, w) in enumerate(rows):
        cpu_s = f"{cpu[i]:.3f}" if i in cpu else ""
        print(f"| {tool} | {setting} | {secs:.3f} | {cpu_s} | {f:.6f} | {(f - best) / best:.2e} "
              f"| {len(w)} | {accuracy(test, w):.4f} |")
    if len(cpu) == 2:
        (i, j) = sorted(cpu)
        print(f"\nrotor / liblinear: {rows[j][2] / rows[i][2]:.2f}x wall, "
              f"{cpu[j] / cpu[i]:.2f}x CPU")


if __name__ == "__main__":
    main()
