"""Tests of the MF benchmark scripts: the ALS peer (bench/mf/als_numpy.py) on planted data, and
mf_bench.py / lambda_sweep.py end to end against a fake rotor (fake_rotor.py, fake_mpiexec.py).

Needs numpy, scipy and matplotlib (Debian's python3-*): run with /usr/bin/python3:
    /usr/bin/python3 -m unittest discover -s bench/mf/tests -v
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
MF = HERE.parent


def load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


try:
    import matplotlib  # noqa: F401 (the plots)
    import numpy as np
    import scipy  # noqa: F401 (the peer)
except ImportError:
    np = None

als = load("als_numpy", MF / "als_numpy.py")
bench = load("mf_bench", MF / "mf_bench.py")
sweep = load("lambda_sweep", MF / "lambda_sweep.py")


def planted(tmp: Path, users=120, items=80, rank=3, noise=0.05, density=0.3, seed=5):
    """Train and test files (CSV with a header; test: 1 rating in 5) of mean + W Hᵀ + noise."""
    rng = np.random.default_rng(seed)
    w = rng.normal(0, rank ** -0.25, (users, rank))
    h = rng.normal(0, rank ** -0.25, (items, rank))
    train, test = ["user,item,rating"], ["user,item,rating"]
    for u in range(users):
        for i in np.flatnonzero(rng.random(items) < density):
            line = f"u{u},i{i},{3.0 + w[u] @ h[i] + noise * rng.standard_normal():.5f}"
            (test if rng.random() < 0.2 else train).append(line)
    (tmp / "train.csv").write_text("\n".join(train) + "\n")
    (tmp / "test.csv").write_text("\n".join(test) + "\n")
    return tmp / "train.csv", tmp / "test.csv"


@unittest.skipIf(np is None, "numpy, scipy, matplotlib missing (run with /usr/bin/python3)")
class AlsTest(unittest.TestCase):
    def run_als(self, *argv):
        args = als.parse_args(list(argv) + ["--quiet"])
        return als.run(args)

    def test_recovers_a_planted_matrix_and_never_increases_the_objective(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, test = planted(Path(tmp))
            recs = self.run_als("--train", str(train), "--test", str(test), "--rank", "3",
                                "--lambda", "0.01", "--iterations", "12")
        objective = [r["objective"] for r in recs]
        for a, b in zip(objective, objective[1:]):
            self.assertLessEqual(b, a * (1 + 1e-9))
        self.assertLess(recs[-1]["test_rmse"], 0.1)  # noise 0.05
        self.assertLess(recs[-1]["train_rmse"], 0.06)
        self.assertEqual([r["iter"] for r in recs], list(range(1, 13)))

    def test_each_half_step_is_the_exact_minimiser(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, _ = planted(Path(tmp), users=30, items=20, density=0.5)
            u, i, v, users, items = als.read_triples(train)
        from scipy import sparse
        data = als.Ratings(np, sparse, np.array(u), np.array(i), np.array(v), len(users),
                           len(items))
        model = als.Als(np, data, 2, 0.3, 0.1, True, True, 1)
        model.iterate()  # users then items: H and c are now optimal for the new W and b
        self.assert_optimal(model, ("h", "c"))
        u_side = data.by_user  # one more user half step: W and b optimal for this H and c
        model.w, model.b = als.solve_side(np, u_side.indptr, u_side.indices, u_side.data,
                                          model.h, model.c, model.mu, model.rho_u, 0.3, 0.1,
                                          True)
        self.assert_optimal(model, ("w", "b"))

    def assert_optimal(self, model, names):
        f0 = model.objective(model.train_loss())
        for name in names:
            arr = getattr(model, name)
            for index in ((1, 1), (7, 0)) if arr.ndim == 2 else ((1,), (7,)):
                for step in (1e-3, -1e-3):
                    arr[index] += step
                    f = model.objective(model.train_loss())
                    arr[index] -= step
                    self.assertGreater(f, f0, (name, index, step))

    def test_unknown_test_ids_fall_back_on_the_mean_and_known_bias(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "a.txt").write_text("a x 1\na y 2\nb x 3\n")
            (Path(tmp) / "t.txt").write_text("c z 5\n")
            u, i, v, users, items = als.read_triples(Path(tmp) / "a.txt")
            tu, ti, _, _, _ = als.read_triples(Path(tmp) / "t.txt", users, items)
        self.assertEqual((u, i, tu, ti), ([0, 0, 1], [0, 1, 0], [-1], [-1]))
        from scipy import sparse
        data = als.Ratings(np, sparse, np.array(u), np.array(i), np.array(v), 2, 2)
        model = als.Als(np, data, 2, 0.1, 0.1, True, True, 1)
        model.iterate()
        self.assertAlmostEqual(float(model.predict(np.array([-1]), np.array([-1]))[0]), 2.0)

    def test_plain_form_and_no_bias(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, test = planted(Path(tmp), users=40, items=30)
            recs = self.run_als("--train", str(train), "--test", str(test), "--rank", "3",
                                "--lambda", "0.5", "--lambda-form", "plain", "--no-bias",
                                "--iterations", "3")
        self.assertEqual(len(recs), 3)
        self.assertGreater(recs[-1]["test_rmse"], 1.0)  # no mean: far off ratings around 3


def bench_args(tmp: Path, *extra: str) -> list[str]:
    return ["--out", str(tmp / "out"), "--rotor", str(HERE / "fake_rotor.py"),
            "--mpiexec", str(HERE / "fake_mpiexec.py"), "--rank", "4", "--iterations", "6",
            "--als-iterations", "2", "--repeats", "2", "--quiet", *extra]


@unittest.skipIf(np is None, "numpy, scipy, matplotlib missing (run with /usr/bin/python3)")
class MfBenchTest(unittest.TestCase):
    def test_ladder_report_against_a_fake_rotor(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, test = planted(Path(tmp), users=40, items=30)
            ratings = Path(tmp) / "all.csv"
            ratings.write_text(train.read_text() + "".join(test.read_text().splitlines(True)[1:]))
            rc = bench.main(bench_args(Path(tmp), "--ratings", str(ratings)))
            self.assertEqual(rc, 0)
            out = Path(tmp) / "out"
            res = json.loads((out / "results.json").read_text())
            report = (out / "report.md").read_text()
            self.assertGreater((out / "rmse_time.png").stat().st_size, 1000)
        ccd1, ccd2 = res["configs"]["rotor ccd 1T"], res["configs"]["rotor ccd 2T"]
        self.assertAlmostEqual(ccd1["epoch_s"], 0.04)
        self.assertAlmostEqual(res["scaling"]["sgd"]["speedup_2T"], 2.0)
        self.assertAlmostEqual(res["scaling"]["ccd"]["ranks2x1_over_ranks1x2"], 1.0)
        self.assertAlmostEqual(res["scaling"]["ccd"]["effective_ratio_2T"], 0.99)
        # 0.87 + 0.3 / it <= 0.95 from it = 4 on; never <= 0.87.
        self.assertAlmostEqual(ccd2["time_to"]["0.950"][0], 4 * 0.02)
        self.assertEqual(ccd2["time_to"]["0.870"], [None, 0])
        self.assertEqual(ccd1["plan_bytes"], int(0.4 * 2**20))
        self.assertIn("refusal", ccd1["plan_source"])
        self.assertEqual(res["configs"]["ALS (numpy)"]["repeats"], 2)
        self.assertIn("| rotor sgd 2 ranks x 1T |", report)

    def test_big_mode_cost_per_rating_against_k(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, _ = planted(Path(tmp), users=20, items=10)
            rc = bench.main(bench_args(Path(tmp), "--big", "--big-train", str(train),
                                       "--big-ranks", "4,16", "--solvers", "ccd"))
            self.assertEqual(rc, 0)
            res = json.loads((Path(tmp) / "out" / "big.json").read_text())
        a, b = res["rows"]
        self.assertEqual((a["rank"], b["rank"]), (4, 16))
        self.assertAlmostEqual(b["cost_ratio"], 4.0)
        self.assertAlmostEqual(b["k_ratio"], 4.0)
        self.assertGreater(a["rss_over_plan"], 0)
        self.assertIn("refusal", a["plan_source"])

    def test_the_plan_from_the_start_line_without_quiet(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, _ = planted(Path(tmp), users=20, items=10)
            rc = bench.main(bench_args(Path(tmp), "--big", "--big-train", str(train),
                                       "--big-ranks", "10", "--solvers", "sgd",
                                       "--verbose-rotor"))
            self.assertEqual(rc, 0)
            row = json.loads((Path(tmp) / "out" / "big.json").read_text())["rows"][0]
        self.assertEqual(row["plan_bytes"], 2 * 2**20)
        self.assertIn("start line", row["plan_source"])

    def test_helpers(self):
        self.assertEqual(bench.parse_needs("x: this run needs about 1.5 GiB but"), 3 * 2**29)
        self.assertEqual(bench.parse_needs("each rank needs about 12.0 MiB"), 12 * 2**20)
        self.assertIsNone(bench.parse_needs("fine"))
        recs = [{"time_s": 1.0, "test_rmse": 0.9}, {"time_s": 3.0, "test_rmse": 0.85}]
        self.assertEqual(bench.epoch_times(recs), [1.0, 2.0])
        self.assertEqual(bench.time_to(recs, 0.86), 3.0)
        runs = [{"records": recs}, {"records": recs[:1]}, {"records": recs}]
        self.assertEqual(bench.time_to_median(runs, 0.86), (3.0, 2))
        self.assertEqual(bench.time_to_median(runs[:2], 0.86), (None, 1))
        with self.assertRaises(SystemExit):
            bench.find_rotor("/nonexistent/rotor")

    def test_libmf_progress_lines_and_data(self):
        # mf-train's header and three iterations, arriving at 10.0, 10.5, 11.5 and 12.0 s.
        lines = [(10.0, "iter      tr_rmse      va_rmse          obj\n"),
                 (10.0, "   0       1.0000       1.2000   3.0000e+05\n"),
                 (10.5, "   1       0.9000       1.1000   2.0000e+05\n"),
                 (11.5, "   2       0.8000       1.0500   1.5000e+05\n"),
                 (12.0, "   3       0.7000       1.0400   1.2000e+05\n")]
        recs = bench.libmf_records(lines)
        self.assertEqual([r["iteration"] for r in recs], [1, 2, 3, 4])
        # The first epoch is not observable: one median gap (0.5 s) stands for it.
        self.assertEqual([r["time_s"] for r in recs], [0.5, 1.0, 2.0, 2.5])
        self.assertEqual([r["test_rmse"] for r in recs], [1.2, 1.1, 1.05, 1.04])
        self.assertEqual(bench.time_to(recs, 1.06), 2.0)
        self.assertNotIn("test_rmse", bench.libmf_records([(1.0, "0 1.0 5e+05\n")])[0])
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "num.csv").write_text("userId,movieId,rating\n3,70,2.5\n1,5,4.0\n")
            (tmp / "str.csv").write_text("user,item,rating\nu1,i9,3.0\nu2,i9,1.5\n")
            (tmp / "str-test.csv").write_text("user,item,rating\nu2,i7,2.0\n")
            args = bench.parse_args(["--out", str(tmp / "out")])
            train, test = bench.libmf_data(args, tmp / "num.csv", None)
            self.assertIsNone(test)
            self.assertEqual(train.read_text(), "3 70 2.5\n1 5 4.0\n")  # integer ids kept
            train, test = bench.libmf_data(args, tmp / "str.csv", tmp / "str-test.csv")
            self.assertEqual(train.read_text(), "0 0 3.0\n1 0 1.5\n")  # one numbering for both
            self.assertEqual(test.read_text(), "1 1 2.0\n")


@unittest.skipIf(np is None, "numpy, scipy, matplotlib missing (run with /usr/bin/python3)")
class LambdaSweepTest(unittest.TestCase):
    def test_the_default_is_the_lowest_worst_case(self):
        with tempfile.TemporaryDirectory() as tmp:
            train, test = planted(Path(tmp), users=30, items=20)
            rc = sweep.main(["--out", str(Path(tmp) / "out"), "--rotor",
                             str(HERE / "fake_rotor.py"), "--train", str(train), "--test",
                             str(test), "--lambdas", "0.05,0.1,0.3", "--ranks", "4,8",
                             "--iterations", "3", "--als", "--als-iterations", "2", "--quiet"])
            self.assertEqual(rc, 0)
            res = json.loads((Path(tmp) / "out" / "lambda.json").read_text())
            report = (Path(tmp) / "out" / "lambda.md").read_text()
        self.assertEqual(len(res["rows"]), 3 * 2 * 3)
        self.assertEqual(res["choice"]["default"], 0.1)
        self.assertAlmostEqual(res["choice"]["default_worst_rmse"], 0.97)
        self.assertEqual(res["choice"]["per_config"]["K=8 sgd"]["lambda"], 0.1)
        self.assertIn("K=4 als", res["choice"]["per_config"])
        self.assertIn("λ = 0.1 (worst final RMSE 0.9700)", report)

    def test_choice_ignores_the_peer_and_missing_values(self):
        rows = [{"rank": 4, "solver": "ccd", "lambda": 0.1, "final": 0.9},
                {"rank": 4, "solver": "ccd", "lambda": 0.2, "final": None},
                {"rank": 4, "solver": "als", "lambda": 0.2, "final": 0.5}]
        self.assertEqual(sweep.choose(rows)["default"], 0.1)
        self.assertEqual(sweep.choose(rows)["per_config"]["K=4 als"]["lambda"], 0.2)


if __name__ == "__main__":
    unittest.main()
