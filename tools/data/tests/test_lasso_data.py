"""Tests of the Lasso data scripts: make_debian_size.py, make_lasso_correlated.py and (when
Debian's r-bioc-all is installed) make_all_age.py.

Run: python3 -m unittest discover -s tools/data/tests -v
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent


def load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


size = load("make_debian_size", "make_debian_size.py")

PACKAGES = """Package: alpha
Installed-Size: 99
Depends: libc6 (>= 2.34), libfoo1 | libbar2
Description: A tool tool for alpha
Tag: role::program,
 use::editing
Section: utils
Priority: optional
Architecture: amd64

Package: beta
Installed-Size: 0
Description: Data for alpha
Section: utils
Architecture: all

Package: no-size
Description: skipped: no Installed-Size
"""


class DebianSizeTest(unittest.TestCase):
    def test_stanzas_join_continuation_lines_and_skip_packages_without_a_size(self):
        got = list(size.stanzas(PACKAGES))
        self.assertEqual([s["Package"] for s in got], ["alpha", "beta"])
        self.assertEqual(got[0]["Tag"], "role::program, use::editing")

    def test_features_of_a_package(self):
        f = size.features_of(next(size.stanzas(PACKAGES)))
        self.assertAlmostEqual(f["word:tool"], 1 + math.log(2))
        self.assertEqual(f["word:alpha"], 1.0)
        for name in ("dep:libc6", "dep:libfoo1", "dep:libbar2", "tag:use::editing",
                     "section:utils", "priority:optional", "architecture:amd64"):
            self.assertEqual(f[name], 1.0, name)
        self.assertNotIn("dep:(>=", f)

    @unittest.skipUnless(Path("/usr/lib/apt/apt-helper").exists(), "needs apt-helper")
    def test_writes_libsvm_with_the_log_size_as_target(self):
        with tempfile.TemporaryDirectory() as tmp:
            lists = Path(tmp) / "lists"
            lists.mkdir()
            (lists / "x_dists_r_main_binary-amd64_Packages").write_text(PACKAGES)
            out = Path(tmp) / "out"
            subprocess.run([sys.executable, str(TOOLS / "make_debian_size.py"), "--out", str(out),
                            "--lists", str(lists), "--min-count", "2"], check=True,
                           capture_output=True)
            names = (out / "features.txt").read_text().split()
            self.assertEqual(names, ["section:utils", "word:alpha", "word:for"])  # in both
            lines = (out / "debian-size.train.svm").read_text().splitlines()
            self.assertEqual(len(lines), 2)
            y, *entries = lines[0].split()
            self.assertAlmostEqual(float(y), math.log1p(99))
            self.assertEqual(entries, ["1:1", "2:1", "3:1"])
            self.assertEqual(lines[1], "0 1:1 2:1 3:1")


class CorrelatedTest(unittest.TestCase):
    def test_same_bytes_and_correlated_groups(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = [Path(tmp) / f"c{k}.svm" for k in range(2)]
            for f in files:
                subprocess.run([sys.executable, str(TOOLS / "make_lasso_correlated.py"), "--out",
                                str(f), "--samples", "300", "--features", "8", "--group", "4",
                                "--spread", "0.2"], check=True, capture_output=True)
            self.assertEqual(files[0].read_bytes(), files[1].read_bytes())
            rows = [[float(e.split(":")[1]) for e in line.split()[1:]]
                    for line in files[0].read_text().splitlines()]

            def corr(a: int, b: int) -> float:
                xa, xb = [r[a] for r in rows], [r[b] for r in rows]
                ma, mb = sum(xa) / len(xa), sum(xb) / len(xb)
                cov = sum((u - ma) * (v - mb) for u, v in zip(xa, xb))
                va = sum((u - ma) ** 2 for u in xa)
                vb = sum((v - mb) ** 2 for v in xb)
                return cov / math.sqrt(va * vb)

            self.assertGreater(corr(0, 1), 0.9)  # one group
            self.assertLess(abs(corr(0, 4)), 0.3)  # two groups

    @unittest.skipUnless(importlib.util.find_spec("numpy"), "needs numpy")
    def test_sparse_mode_power_law_and_same_bytes(self):
        with tempfile.TemporaryDirectory() as tmp:
            files = [Path(tmp) / f"s{k}.svm" for k in range(2)]
            for f in files:
                subprocess.run([sys.executable, str(TOOLS / "make_lasso_correlated.py"), "--sparse",
                                "--out", str(f), "--samples", "2000", "--features", "4000",
                                "--group", "4", "--planted", "20"], check=True, capture_output=True)
            self.assertEqual(files[0].read_bytes(), files[1].read_bytes())
            counts = [0] * 4000
            for line in files[0].read_text().splitlines():
                fields = line.split()
                float(fields[0])
                ids = [int(e.split(":")[0]) for e in fields[1:]]
                self.assertEqual(ids, sorted(set(ids)))  # strictly increasing, 1-based
                self.assertGreaterEqual(min(ids, default=1), 1)
                self.assertLessEqual(max(ids, default=1), 4000)
                for j in ids:
                    counts[j - 1] += 1
            # Power law: group 0 in many rows, the tail's columns in few.
            self.assertGreater(counts[0], 500)
            self.assertLess(sum(counts[2000:]) / 2000, 20)


ALL_RDA = Path("/usr/lib/R/site-library/ALL/data/ALL.rda")


@unittest.skipUnless(ALL_RDA.exists(), "needs Debian's r-bioc-all")
class AllAgeTest(unittest.TestCase):
    def test_patients_with_an_age_by_probe_sets(self):
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, str(TOOLS / "make_all_age.py"), "--out", tmp],
                           check=True, capture_output=True)
            lines = (Path(tmp) / "all-age.csv").read_text().splitlines()
            header = lines[0].split(",")
            self.assertEqual(header[0], "age")
            self.assertEqual(len(header), 1 + 12625)
            self.assertEqual(len(lines), 1 + 123)
            self.assertTrue(all(len(line.split(",")) == len(header) for line in lines[1:]))
            ages = [float(line.split(",", 1)[0]) for line in lines[1:]]
            self.assertTrue(all(5 <= a <= 60 for a in ages), (min(ages), max(ages)))
            train = (Path(tmp) / "all-age.train.csv").read_text().splitlines()
            self.assertEqual(len(train), 1 + 100)


if __name__ == "__main__":
    unittest.main()
