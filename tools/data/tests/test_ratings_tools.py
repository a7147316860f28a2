"""Tests of split_ratings.py, make_docword_ratings.py and the streaming and presets of
make_synthetic_ratings.py (those skipped without numpy: run with /usr/bin/python3).

Run: python3 -m unittest discover -s tools/data/tests -v
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import math
import sys
import tempfile
import unittest
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent


def load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


split = load("split_ratings", "split_ratings.py")
docword = load("make_docword_ratings", "make_docword_ratings.py")
synthetic = load("make_synthetic_ratings", "make_synthetic_ratings.py")

try:
    import numpy
except ImportError:
    numpy = None


def run_quiet(fn, argv):
    with contextlib.redirect_stderr(io.StringIO()):
        return fn(argv)


class SplitTest(unittest.TestCase):
    def ratings(self) -> str:
        lines = ["# a comment", "userId,movieId,rating"]
        for u in range(1, 41):
            lines += [f"{u},{i},{(u + i) % 5 + 0.5}" for i in range(1, u % 13 + 2)]
        return "\n".join(lines) + "\n"

    def split(self, tmp: str, text: str, *extra: str, name="r.csv", gz=False):
        src = Path(tmp) / name
        if gz:
            src.write_bytes(gzip.compress(text.encode(), mtime=0))
        else:
            src.write_text(text)
        train, test = Path(tmp) / "train.csv", Path(tmp) / "test.csv.gz"
        run_quiet(split.main, [str(src), "--train", str(train), "--test", str(test), *extra])
        return train.read_text().splitlines(), gzip.decompress(test.read_bytes()).decode() \
            .splitlines()

    def test_every_rating_once_header_in_both_every_user_kept_in_train(self):
        text = self.ratings()
        with tempfile.TemporaryDirectory() as tmp:
            train, test = self.split(tmp, text)
        data = [x for x in text.splitlines()[2:]]
        self.assertEqual(train[0], "userId,movieId,rating")
        self.assertEqual(test[0], "userId,movieId,rating")
        self.assertEqual(sorted(train[1:] + test[1:]), sorted(data))
        per_user = Counter(x.split(",")[0] for x in data)
        in_test = Counter(x.split(",")[0] for x in test[1:])
        for user, n in per_user.items():
            self.assertEqual(in_test[user], min(int(0.2 * n + 0.5), n - 1), user)
        self.assertEqual(train[1:], [x for x in data if x in set(train[1:])])  # input order

    def test_deterministic_for_a_seed_and_gzip_input(self):
        text = self.ratings()
        with tempfile.TemporaryDirectory() as tmp:
            a = self.split(tmp, text)
            b = self.split(tmp, text, gz=True)
            c = self.split(tmp, text, "--seed", "2")
        self.assertEqual(a, b)
        self.assertNotEqual(a[1], c[1])

    def test_blank_separated_without_header_and_fraction_extremes(self):
        text = "".join(f"u{u} i{i} 3\n" for u in range(5) for i in range(4))
        with tempfile.TemporaryDirectory() as tmp:
            train, test = self.split(tmp, text, "--fraction", "1")
            self.assertEqual((len(train), len(test)), (5, 15))  # each user keeps one
            train, test = self.split(tmp, text, "--fraction", "0")
            self.assertEqual((len(train), len(test)), (20, 0))
            with self.assertRaises(SystemExit):
                self.split(tmp, "1 2\n")


class DocwordTest(unittest.TestCase):
    UCI = "3\n5\n4\n1 2 1\n1 5 3\n3 1 2\n3 4 1\n"

    def test_values_are_one_plus_log_count_in_input_order(self):
        out = []
        stats = docword.convert(io.StringIO(self.UCI), out.append, 4)
        rows = [line.split() for line in "".join(out).splitlines()]
        self.assertEqual([(r[0], r[1]) for r in rows], [("1", "2"), ("1", "5"), ("3", "1"),
                                                        ("3", "4")])
        self.assertEqual(rows[1][2], f"{1 + math.log(3):.4f}")
        self.assertEqual(rows[0][2], "1.0000")
        self.assertEqual(stats["ratings"], 4)
        self.assertEqual(stats["rated_docs"], 2)
        out.clear()
        self.assertEqual(docword.convert(io.StringIO(self.UCI), out.append, 2, 1)["ratings"], 2)

    def test_corpus_folder_and_gzip_and_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "train").mkdir()
            (Path(tmp) / "train" / "docword.txt.gz").write_bytes(
                gzip.compress(self.UCI.encode(), mtime=0))
            out = Path(tmp) / "r.txt.gz"
            run_quiet(docword.main, [tmp, "--out", str(out)])
            self.assertEqual(len(gzip.decompress(out.read_bytes()).splitlines()), 4)
        for bad in ("3\n5\n", "3\n5\n9\n1 2 1\n", "3\n5\n1\n4 1 1\n", "3\n5\n1\n1 1 0\n"):
            with self.assertRaises(SystemExit):
                docword.convert(io.StringIO(bad), lambda s: None, 4)


@unittest.skipIf(numpy is None, "numpy missing (python3-numpy; run with /usr/bin/python3)")
class SyntheticStreamTest(unittest.TestCase):
    def test_blocks_hold_whole_users_and_add_up_to_the_matrix(self):
        np = numpy
        w, h, blocks = synthetic.stream_ratings(np, 400, 200, 6000, 3, 0.1, 1.0, 0.5, 0.8, 7,
                                                chunk=500)
        parts = list(blocks)
        self.assertGreater(len(parts), 5)
        users = [set(p[0].tolist()) for p in parts]
        for a, b in zip(users, users[1:]):
            self.assertLess(max(a), min(b))  # a user never spans two blocks
        codes = np.concatenate([p[0] * 200 + p[1] for p in parts])
        self.assertEqual(len(codes), 6000)
        self.assertTrue(np.all(np.diff(codes) > 0))  # sorted and distinct
        self.assertEqual(w.shape, (400, 3))

    def test_heavy_users_draw_distinct_items(self):
        np = numpy
        rng = np.random.default_rng(1)
        pi = synthetic.degree_weights(np, 50, 0.8, 1.0, rng)
        degrees = np.array([0, 3, 40, 50, 1])  # 40 and 50 of 50 items: the Gumbel path
        codes = synthetic.draw_items(np, degrees, 50, pi, np.cumsum(pi), rng)
        self.assertTrue(np.all(np.diff(codes) > 0))
        self.assertEqual(np.bincount(codes // 50, minlength=5).tolist(), degrees.tolist())

    def test_user_degrees_add_up_and_respect_the_item_count(self):
        np = numpy
        rng = np.random.default_rng(2)
        pu = np.array([0.9, 0.05, 0.05])
        d = synthetic.user_degrees(np, 30, 12, pu, rng)
        self.assertEqual(int(d.sum()), 30)
        self.assertLessEqual(int(d.max()), 12)

    def test_presets(self):
        for name, nnz in (("1e5", 10**5), ("1e6", 10**6), ("1e7", 10**7), ("1e8", 10**8)):
            args = synthetic.parse_args(["--out", "x", "--preset", name])
            self.assertEqual(args.nnz, nnz)
            density = args.nnz / (args.users * args.items)
            self.assertAlmostEqual(density, 10**8 / (480_189 * 17_770), delta=2e-4)
        args = synthetic.parse_args(["--out", "x", "--preset", "netflix", "--nnz", "5"])
        self.assertEqual((args.users, args.items, args.nnz, args.rank), (480_189, 17_770, 5, 20))
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            synthetic.parse_args(["--out", "x", "--preset", "1e5", "--netflix-shape"])

    def test_small_preset_writes_its_ratings(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "r.txt"
            run_quiet(synthetic.main, ["--out", str(out), "--preset", "1e5", "--nnz", "3000"])
            rows = [line.split() for line in out.read_text().splitlines()]
        self.assertEqual(len(rows), 3000)
        values = numpy.array([float(r[2]) for r in rows])
        self.assertAlmostEqual(float(values.mean()), 3.6, delta=0.1)
        self.assertTrue(all(0 <= int(r[0]) < 15_185 and 0 <= int(r[1]) < 562 for r in rows))


if __name__ == "__main__":
    unittest.main()
