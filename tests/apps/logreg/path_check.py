#!/usr/bin/env python3
"""`rotor logreg path` on a tiny real set, through the binary.

The set is sotu-era built from the shipped data/tiny (the first 200 chunks of sotu-para) by
tools/data/make_sotu_party.py --era 1797: 180 examples, 649 words, label +1 for the addresses
from 1797 on. Checks:

- the top of the path, lambda_max, has no nonzero weight (only the intercept), and the nonzeros
  grow down the grid while the objective falls;
- with --folds, lambda.min is the least mean held-out logloss, lambda.1se the largest lambda
  within one standard error of it, and --model writes the chosen lambda's weights, those of the
  path file's row;
- the folds are deterministic by seed: the same seed gives the same table, another seed other
  cross-validation columns;
- warm starts reach the objective of cold starts (--cold-start) to 1e-8 at --tol 1e-9, and the
  cold-started path's objective is `rotor logreg train`'s at that lambda;
- bad flags exit 3 naming the flag, a bad input line exits 2 naming file:line, one class with
  the intercept exits 2; none of them writes --out.

    path_check.py --rotor build/ci/apps/rotor [--corpus data/tiny]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def rotor_run(rotor: str, args: list[str], code: int = 0) -> subprocess.CompletedProcess:
    r = subprocess.run([rotor, "logreg", *args], capture_output=True, text=True)
    if r.returncode != code:
        sys.exit(f"FAIL: rotor logreg {' '.join(args)} exited {r.returncode}, not {code}\n"
                 f"{r.stdout}{r.stderr}")
    return r


def table(path: Path) -> list[dict[str, str]]:
    lines = path.read_text().splitlines()
    assert lines[0].startswith("# rotor logreg path:"), lines[0]
    head = lines[1].split("\t")
    return [dict(zip(head, l.split("\t"))) for l in lines[2:]]


def check(cond: bool, what: str) -> None:
    if not cond:
        sys.exit("FAIL: " + what)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--corpus", type=Path, default=ROOT / "data" / "tiny")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        subprocess.run([sys.executable, str(ROOT / "tools" / "data" / "make_sotu_party.py"),
                        "--corpus", str(a.corpus), "--era", "1797", "--out", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        data = str(t / "sotu-era.train.svm")
        base = ["path", "--data", data, "--n-lambdas", "8", "-q"]

        # The path and cross-validation.
        rotor_run(a.rotor, base + ["--folds", "4", "--out", str(t / "p.tsv"), "--model",
                                   str(t / "m.txt")])
        rows = table(t / "p.tsv")
        check(len(rows) == 8, "8 rows")
        nz = [int(r["nonzeros"]) for r in rows]
        obj = [float(r["objective"]) for r in rows]
        check(nz[0] == 0 and rows[0]["weights"] == "-", f"lambda_max has no weight: {nz[0]}")
        check(all(b >= a for a, b in zip(nz, nz[1:])) and nz[-1] > 10, f"nonzeros grow: {nz}")
        check(all(b < a for a, b in zip(obj, obj[1:])), f"objective falls: {obj}")
        check(all(r["converged"] == "yes" for r in rows), "every lambda converged")
        mean = [float(r["cv_logloss"]) for r in rows]
        sd = [float(r["cv_logloss_sd"]) for r in rows]
        best = min(range(8), key=lambda k: (mean[k], k))
        one_se = next(k for k in range(8) if mean[k] <= mean[best] + sd[best] / 4 ** 0.5)
        chosen = {k: r["chosen"] for k, r in enumerate(rows) if r["chosen"] != "-"}
        want = {best: "min"} if best != one_se else {best: "min,1se"}
        if best != one_se:
            want[one_se] = "1se"
        check(chosen == want, f"chosen {chosen}, want {want} from {mean} +- {sd}")
        model = (t / "m.txt").read_text().splitlines()
        check(float(model[1].split()[1]) == float(rows[one_se]["lambda"]), "--model at 1se")
        at = model.index(next(l for l in model if l.startswith("weights ")))
        count = int(model[at].split()[1])
        weights = ",".join(l.replace("\t", ":") for l in model[at + 1:at + 1 + count])
        check(weights == rows[one_se]["weights"], "--model has the path row's weights")

        # Deterministic by seed.
        same = rotor_run(a.rotor, base + ["--folds", "4", "--seed", "1"]).stdout
        again = rotor_run(a.rotor, base + ["--folds", "4", "--seed", "1"]).stdout
        other = rotor_run(a.rotor, base + ["--folds", "4", "--seed", "2"]).stdout
        cv = lambda text: [l.split("\t")[6:10] for l in text.splitlines()[1:9]]  # noqa: E731
        check(cv(same) == cv(again), "the same seed gives the same folds")
        check(cv(same) != cv(other), "another seed gives other folds")

        # Warm starts reach the cold starts' objectives; cold is train's.
        tight = base + ["--tol", "1e-9", "--eps", "1e-2"]
        rotor_run(a.rotor, tight + ["--out", str(t / "w.tsv")])
        rotor_run(a.rotor, tight + ["--cold-start", "--out", str(t / "c.tsv")])
        warm, cold = table(t / "w.tsv"), table(t / "c.tsv")
        for w, c in zip(warm, cold):
            fw, fc = float(w["objective"]), float(c["objective"])
            check(abs(fw - fc) <= 1e-8 * fc, f"warm {fw} = cold {fc} at {w['lambda']}")
        check(sum(int(w["iterations"]) for w in warm) < sum(int(c["iterations"]) for c in cold),
              "warm starts take fewer Newton iterations")
        lam = cold[4]["lambda"]
        rotor_run(a.rotor, ["train", "--data", data, "--lambda", lam, "--tol", "1e-9", "-q",
                            "--out", str(t / "t.txt")])
        f_train = next(float(l.split()[1]) for l in (t / "t.txt").read_text().splitlines()
                       if l.startswith("objective "))
        check(abs(f_train - float(cold[4]["objective"])) <= 1e-12 * f_train,
              f"train's objective {f_train} is the cold path's {cold[4]['objective']}")

        # Errors: nothing written.
        out = t / "never.tsv"
        for flags, name in ((["--n-lambdas", "0"], "--n-lambdas"), (["--eps", "1.5"], "--eps"),
                            (["--folds", "1"], "--folds"), (["--folds", "500"], "--folds"),
                            (["--model", str(t / "x")], "--model"),
                            (["--select", "min"], "--select"), (["--tol", "-1"], "--tol")):
            r = rotor_run(a.rotor, base + flags + ["--out", str(out)], 3)
            check(name in r.stderr, f"{flags}: names {name}: {r.stderr}")
        bad = t / "bad.svm"
        lines = Path(data).read_text().splitlines()
        bad.write_text("\n".join(lines[:2] + ["+1 5:1 3:2"] + lines[3:]) + "\n")
        r = rotor_run(a.rotor, ["path", "--data", str(bad), "--out", str(out)], 2)
        check(f"{bad}:3:" in r.stderr, f"names the line: {r.stderr}")
        one = t / "one.svm"
        one.write_text("\n".join(l for l in lines if l.startswith("+1")) + "\n")
        r = rotor_run(a.rotor, ["path", "--data", str(one), "--out", str(out)], 2)
        check("label" in r.stderr, f"one class: {r.stderr}")
        check(not out.exists(), "no --out after an error")
    print("path_check: passed")


if __name__ == "__main__":
    main()
