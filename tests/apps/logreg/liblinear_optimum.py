#!/usr/bin/env python3
"""`rotor logreg train` reaches liblinear's L1-regularised logistic-regression optimum.

On two real sets built from the shipped corpus data/sotu-para by tools/data/make_sotu_party.py
(sotu-party: Republican against Democratic chunks; sotu-era: chunks from 1900 on against
before), with lambda = 1 and no intercept: liblinear `-s 6 -e 1e-8 -c 1/lambda` (no bias) gives
F_ll, rotor with the fast settings of docs/logreg.md ("Speed": --blocks 1024 --curvature local
--max-step 1) and a fixed number of passes gives F_rotor; both objectives are recomputed from
the model files on the training data (bench/logreg/liblinear_compare.py). Passes when
(F_rotor - F_ll) / F_ll <= 1e-4 on both sets.

    liblinear_optimum.py --rotor build/ci/apps/rotor [--corpus data/sotu-para] [--passes 80]

Exit 0: passed; 1: a set missed the bound (or a tool failed); 77: liblinear-train is not
installed (Debian liblinear-tools; ctest counts it as skipped).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench" / "logreg"))

from liblinear_compare import liblinear_weights, objective, read_svm, rotor_weights  # noqa: E402

LAMBDA = 1.0
REL = 1e-4
BLOCKS = 1024
PASSES = 80  # sotu-era: 1.3e-5 after 60 passes, 1.8e-6 after 80
SETS = (("sotu-party", []), ("sotu-era", ["--era", "1900"]))


def run(cmd: list[str]) -> None:
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def check_set(rotor: str, passes: int, corpus: Path, tmp: Path, name: str,
              extra: list[str]) -> bool:
    """Builds one set, trains both tools, prints their objectives; True when within REL."""
    start = time.perf_counter()
    run([sys.executable, str(ROOT / "tools" / "data" / "make_sotu_party.py"), "--corpus",
         str(corpus), "--out", str(tmp), *extra])
    train = tmp / f"{name}.train.svm"
    ll_model, rotor_model = tmp / f"{name}.liblinear", tmp / f"{name}.rotor"
    run(["liblinear-train", "-s", "6", "-e", "1e-8", "-c", repr(1 / LAMBDA), str(train),
         str(ll_model)])
    run([rotor, "logreg", "train", "-q", "--data", str(train), "--out", str(rotor_model),
         "--lambda", repr(LAMBDA), "--no-intercept", "--blocks", str(BLOCKS), "--curvature",
         "local", "--max-step", "1", "--tol", "0", "--iterations", str(passes * BLOCKS)])
    data = read_svm(train)
    f_ll = objective(data, liblinear_weights(ll_model), LAMBDA)
    f_rotor = objective(data, rotor_weights(rotor_model), LAMBDA)
    gap = (f_rotor - f_ll) / f_ll
    ok = gap <= REL
    print(f"{name}: {len(data)} examples, F_rotor {f_rotor:.8f}, F_ll {f_ll:.8f}, "
          f"(F_rotor - F_ll)/F_ll {gap:.3e} (bound {REL:g}), "
          f"{time.perf_counter() - start:.2f} s: {'ok' if ok else 'FAILED'}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rotor", required=True)
    ap.add_argument("--corpus", type=Path, default=ROOT / "data" / "sotu-para")
    ap.add_argument("--passes", type=int, default=PASSES, help="rotor's passes over the blocks")
    a = ap.parse_args()
    if shutil.which("liblinear-train") is None:
        print("liblinear-train not found (Debian liblinear-tools): skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        results = [check_set(a.rotor, a.passes, a.corpus, Path(tmp), name, extra)
                   for name, extra in SETS]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
