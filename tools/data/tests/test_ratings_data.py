"""Tests of the ratings data tools: rdata.py (R lazy-load databases), make_movielens.py and
make_synthetic_ratings.py (skipped without numpy: run with /usr/bin/python3).

Run: python3 -m unittest discover -s tools/data/tests -v
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import struct
import sys
import tempfile
import unittest
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent


def load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sys.path.append(str(TOOLS))  # after the standard library: tokenize.py must not shadow it
rdata = load("rdata", "rdata.py")
movielens = load("make_movielens", "make_movielens.py")
synthetic = load("make_synthetic_ratings", "make_synthetic_ratings.py")

try:
    import numpy
except ImportError:
    numpy = None


# A small R serializer (XDR, version 3) for the objects the tests need. ----------------------

def _i(v: int) -> bytes:
    return struct.pack(">i", v)


def _flags(kind: int, attr: bool = False, tag: bool = False, obj: bool = False) -> bytes:
    return _i(kind | (obj << 8) | (attr << 9) | (tag << 10))


def charsxp(s: str | None) -> bytes:
    if s is None:
        return _flags(rdata.CHARSXP) + _i(-1)
    b = s.encode()
    return _i(rdata.CHARSXP | (64 << 12)) + _i(len(b)) + b  # gp bits (ASCII) are ignored


def sym(name: str) -> bytes:
    return _flags(rdata.SYMSXP) + charsxp(name)


def attributes(pairs: list[tuple[bytes, bytes]]) -> bytes:
    """A pairlist of (serialized tag symbol, serialized value)."""
    return b"".join(_flags(rdata.LISTSXP, tag=True) + t + v for t, v in pairs) + \
        _i(rdata.NILVALUE_SXP)


def vector(kind: int, body: bytes, n: int, attrs: bytes | None = None) -> bytes:
    return _flags(kind, attr=attrs is not None) + _i(n) + body + (attrs or b"")


def ints(values, attrs=None) -> bytes:
    return vector(rdata.INTSXP, b"".join(map(_i, values)), len(values), attrs)


def reals(values, attrs=None) -> bytes:
    return vector(rdata.REALSXP, struct.pack(f">{len(values)}d", *values), len(values), attrs)


def strings(values, attrs=None) -> bytes:
    return vector(rdata.STRSXP, b"".join(map(charsxp, values)), len(values), attrs)


def generic_list(items, attrs=None) -> bytes:
    return vector(rdata.VECSXP, b"".join(items), len(items), attrs)


def compact_intseq(n: int, start: int) -> bytes:
    """An ALTREP compact integer sequence start, start + 1, ..., as R writes 1:n."""
    info = (_flags(rdata.LISTSXP) + sym("compact_intseq") + _flags(rdata.LISTSXP) + sym("base") +
            _flags(rdata.LISTSXP) + ints([13]) + _i(rdata.NILVALUE_SXP))
    return _flags(rdata.ALTREP_SXP) + info + reals([n, start, 1]) + _i(rdata.NILVALUE_SXP)


def ref(index: int) -> bytes:
    """A reference to the index-th (1-based) symbol or environment read so far."""
    return _i((index << 8) | rdata.REFSXP)


def serialize(body: bytes) -> bytes:
    return b"X\n" + _i(3) + _i(0x040101) + _i(0x030500) + _i(5) + b"UTF-8" + body


def data_frame(columns: dict[str, bytes], rows: int) -> bytes:
    return generic_list(list(columns.values()),
                        attributes([(sym("names"), strings(list(columns))),
                                    (sym("row.names"), compact_intseq(rows, 1)),
                                    (sym("class"), strings(["data.frame"]))]))


def write_lazyload(folder: Path, objects: dict[str, bytes]) -> Path:
    """Rdata.rdx / Rdata.rdb holding the serialized objects; returns the .rdx path."""
    rdb = b""
    keys = {}
    for name, body in objects.items():
        data = serialize(body)
        blob = struct.pack(">I", len(data)) + zlib.compress(data)
        keys[name] = (len(rdb), len(blob))
        rdb += blob
    variables = generic_list([ints(list(v)) for v in keys.values()],
                             attributes([(sym("names"), strings(list(keys)))]))
    index = generic_list([variables, generic_list([]), ints([1])],
                         attributes([(sym("names"),
                                      strings(["variables", "references", "compressed"]))]))
    (folder / "Rdata.rdb").write_bytes(rdb)
    (folder / "Rdata.rdx").write_bytes(gzip.compress(serialize(index), mtime=0))
    return folder / "Rdata.rdx"


def movielens_frame(users, movies, ratings) -> bytes:
    # The first column's attribute names the symbol "label" (symbol 1); the third column's
    # attribute refers to it (a REFSXP), as R writes a symbol used twice.
    return data_frame({
        "movieId": ints(movies, attributes([(sym("label"), strings(["movie"]))])),
        "title": strings(["t"] * (len(movies) - 1) + [None]),
        "userId": ints(users, attributes([(ref(1), strings(["user"]))])),
        "rating": reals(ratings),
    }, len(users))


class RdataTest(unittest.TestCase):
    def test_lazyload_database_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            rdx = write_lazyload(Path(tmp), {
                "movielens": movielens_frame([2, 1, 1], [31, 1029, 31], [4.0, 3.0, 2.5]),
                "other": ints([7, rdata.NA_INTEGER]),
            })
            self.assertEqual(rdata.lazyload_names(rdx), ["movielens", "other"])
            frame = rdata.lazyload_fetch(rdx, "movielens")
            self.assertEqual(frame.attr("class").value, ["data.frame"])
            self.assertEqual(frame.attr("row.names").value, [1, 2, 3])  # ALTREP expanded
            cols = rdata.data_frame_columns(frame)
            self.assertEqual(list(cols), ["movieId", "title", "userId", "rating"])
            self.assertEqual(cols["userId"].value, [2, 1, 1])
            self.assertEqual(cols["userId"].attr("label").value, ["user"])
            self.assertEqual(cols["rating"].value, [4.0, 3.0, 2.5])
            self.assertEqual(cols["title"].value, ["t", "t", None])
            self.assertEqual(rdata.lazyload_fetch(rdx, "other").value, [7, rdata.NA_INTEGER])
            with self.assertRaises(rdata.RDataError):
                rdata.lazyload_fetch(rdx, "missing")

    def test_bad_input_is_an_error(self):
        with self.assertRaises(rdata.RDataError):
            rdata.unserialize(b"A\n" + _i(3))
        with self.assertRaises(rdata.RDataError):
            rdata.unserialize(serialize(ints([1, 2]))[:-3])
        with self.assertRaises(rdata.RDataError):
            rdata.unserialize(serialize(_flags(21) + _i(0)))  # bytecode: unsupported


class MovielensTest(unittest.TestCase):
    def frame(self, users, movies, ratings):
        return rdata.unserialize(serialize(movielens_frame(users, movies, ratings)))

    def test_rows_sorted_by_user_then_movie_and_written_as_csv(self):
        rows = movielens.ratings_from_frame(self.frame([2, 1, 1], [31, 1029, 31], [4.0, 3.0, 2.5]))
        self.assertEqual(rows, [(1, 31, 2.5), (1, 1029, 3.0), (2, 31, 4.0)])
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "ratings.csv"
            movielens.write_csv(path, rows)
            self.assertEqual(path.read_text(),
                             "userId,movieId,rating\n1,31,2.5\n1,1029,3.0\n2,31,4.0\n")
        self.assertEqual(movielens.stats(rows)["users"], 2)
        self.assertEqual(movielens.stats(rows)["mean"], 3.166667)

    def test_duplicates_and_missing_values_are_refused(self):
        with self.assertRaises(SystemExit):
            movielens.ratings_from_frame(self.frame([1, 1], [5, 5], [1.0, 2.0]))
        with self.assertRaises(SystemExit):
            movielens.ratings_from_frame(self.frame([1, rdata.NA_INTEGER], [5, 6], [1.0, 2.0]))
        with self.assertRaises(SystemExit):
            movielens.ratings_from_frame(self.frame([1, 2], [5, 6], [1.0, float("nan")]))


@unittest.skipIf(numpy is None, "numpy missing (python3-numpy; run with /usr/bin/python3)")
class SyntheticTest(unittest.TestCase):
    def make(self, tmp: str, name: str, *extra: str) -> Path:
        out = Path(tmp) / name
        with contextlib.redirect_stderr(io.StringIO()):
            synthetic.main(["--out", str(out), "--users", "300", "--items", "120", "--nnz",
                            "4000", "--rank", "4", *extra])
        return out

    def read(self, path: Path):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as f:
            return [(int(u), int(i), float(r)) for u, i, r in (line.split() for line in f)]

    def test_exact_count_distinct_sorted_pairs_in_range(self):
        with tempfile.TemporaryDirectory() as tmp:
            rows = self.read(self.make(tmp, "r.txt"))
        self.assertEqual(len(rows), 4000)
        pairs = [(u, i) for u, i, _ in rows]
        self.assertEqual(pairs, sorted(set(pairs)))
        self.assertTrue(all(0 <= u < 300 and 0 <= i < 120 for u, i in pairs))

    def test_same_seed_same_bytes_other_seed_other_bytes(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = self.make(tmp, "a.txt.gz").read_bytes()
            b = self.make(tmp, "b.txt.gz").read_bytes()
            c = self.make(tmp, "c.txt.gz", "--seed", "2").read_bytes()
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)

    def test_without_noise_the_ratings_are_the_planted_matrix(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.make(tmp, "r.txt", "--noise", "0", "--mean", "3", "--digits", "6",
                            "--factors", str(Path(tmp) / "f.npz"))
            rows = self.read(out)
            f = numpy.load(Path(tmp) / "f.npz")
            w, h = f["w"], f["h"]
        self.assertEqual(w.shape, (300, 4))
        self.assertEqual(h.shape, (120, 4))
        for u, i, r in rows[::97]:
            self.assertAlmostEqual(r, 3 + float(w[u] @ h[i]), places=5)
        # Rank 4: the dense planted matrix has exactly 4 non-negligible singular values.
        s = numpy.linalg.svd(w @ h.T, compute_uv=False)
        self.assertGreater(s[3], 1e-6)
        self.assertLess(s[4], 1e-9)

    def test_noise_has_the_requested_spread(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = self.make(tmp, "r.txt", "--noise", "0.5", "--digits", "6", "--factors",
                            str(Path(tmp) / "f.npz"))
            rows = self.read(out)
            f = numpy.load(Path(tmp) / "f.npz")
        resid = [r - float(f["w"][u] @ f["h"][i]) for u, i, r in rows]
        self.assertAlmostEqual(float(numpy.std(resid)), 0.5, delta=0.03)

    def test_degrees_follow_a_power_law(self):
        np = numpy
        rng = np.random.default_rng(3)
        pu = synthetic.degree_weights(np, 1000, 1.0, 0.05, rng)
        self.assertAlmostEqual(float(pu.sum()), 1.0)
        self.assertLessEqual(float(pu.max()), 0.05 + 1e-12)
        ordered = np.sort(pu)[::-1]
        self.assertGreater(ordered[10] / ordered[500], 10)  # a heavy head
        with tempfile.TemporaryDirectory() as tmp:
            rows = self.read(self.make(tmp, "r.txt", "--user-exponent", "1.0"))
        degrees = np.bincount([u for u, _, _ in rows], minlength=300)
        self.assertGreater(degrees.max(), 4 * degrees.mean())
        self.assertLessEqual(degrees.max(), 120)

    def test_presets_and_bad_sizes(self):
        args = synthetic.parse_args(["--out", "x", "--netflix-shape"])
        self.assertEqual((args.users, args.items, args.nnz), (480_189, 17_770, 100_000_000))
        self.assertEqual(synthetic.parse_args(["--out", "x", "--netflix-shape", "--rank",
                                               "5"]).rank, 5)
        with self.assertRaises(SystemExit):
            synthetic.generate(numpy, 10, 10, 50, 2, 0.1, 0.0, 0.5, 0.8, 1)  # too dense
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
            synthetic.parse_args(["--out", "x", "--nnz", "0"])


if __name__ == "__main__":
    unittest.main()
