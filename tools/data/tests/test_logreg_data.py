"""Tests of the logistic-regression data scripts: make_logreg_synthetic.py,
make_kernel_drivers.py, make_debian_libs.py, make_sotu_party.py and make_sotu_bigrams.py.

Run: python3 -m unittest discover -s tools/data/tests -v
"""

from __future__ import annotations

import gzip
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent


def run(script: str, *args: str) -> None:
    subprocess.run([sys.executable, str(TOOLS / script), *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class SyntheticTest(unittest.TestCase):
    def test_rows_are_valid_svmlight_reproducible_and_power_law(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = Path(tmp) / "a.svm", Path(tmp) / "b.svm"
            for out in (a, b):
                run("make_logreg_synthetic.py", "--examples", "2000", "--features", "500",
                    "--per-row", "10", "--seed", "7", "--out", str(out))
            self.assertEqual(a.read_bytes(), b.read_bytes())
            lines = a.read_text().splitlines()
            self.assertEqual(len(lines), 2000)
            counts = [0] * 501
            labels = set()
            for line in lines:
                fields = line.split()
                labels.add(fields[0])
                keys = [int(f.split(":")[0]) for f in fields[1:]]
                self.assertEqual(len(keys), 10)
                self.assertEqual(keys, sorted(set(keys)))
                self.assertTrue(all(1 <= k <= 500 for k in keys))
                for k in keys:
                    counts[k] += 1
            self.assertEqual(labels, {"+1", "-1"})
            self.assertGreater(counts[1], 10 * counts[400])  # a head and a long tail
            truth = (Path(str(a) + ".truth")).read_text().splitlines()
            self.assertEqual(len(truth), 10)  # max(10, 500 / 100)


class KernelDriversTest(unittest.TestCase):
    def test_drivers_paths_are_positive(self):
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "kernel"
            for split in ("train", "heldout"):
                (corpus / split).mkdir(parents=True)
                with gzip.open(corpus / split / "docword.txt.gz", "wt") as f:
                    f.write("2\n3\n3\n1 1 2\n1 3 1\n2 2 1\n")
            (corpus / "docs.tsv").write_text(
                "split\tdoc\tline\tpath\ntrain\t1\t1\tdrivers/net/a.c\ntrain\t2\t2\tmm/b.c\n"
                "heldout\t1\t3\tdrivers/x.c\nheldout\t2\t4\tkernel/y.c\n")
            run("make_kernel_drivers.py", "--corpus", str(corpus), "--out", tmp)
            train = (Path(tmp) / "kernel-drivers.train.svm").read_text().splitlines()
            self.assertEqual(train, ["+1 1:1.69315 3:1", "-1 2:1"])
            test = (Path(tmp) / "kernel-drivers.test.svm").read_text().splitlines()
            self.assertEqual([l.split()[0] for l in test], ["+1", "-1"])


class DebianLibsTest(unittest.TestCase):
    def test_lib_packages_are_positive(self):
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "debian-desc"
            for split in ("train", "heldout"):
                (corpus / split).mkdir(parents=True)
                with gzip.open(corpus / split / "docword.txt.gz", "wt") as f:
                    f.write("2\n3\n3\n1 1 2\n1 3 1\n2 2 1\n")
            (corpus / "docs.tsv").write_text(
                "split\tdoc\tline\tpackage\tmd5\ntrain\t1\t1\tlibfoo1\ta\n"
                "train\t2\t2\tcalibre\tb\nheldout\t1\t3\tlibbar-dev\tc\n"
                "heldout\t2\t4\tvim\td\n")
            run("make_debian_libs.py", "--corpus", str(corpus), "--out", tmp)
            train = (Path(tmp) / "debian-libs.train.svm").read_text().splitlines()
            self.assertEqual(train, ["+1 1:1.69315 3:1", "-1 2:1"])
            test = (Path(tmp) / "debian-libs.test.svm").read_text().splitlines()
            self.assertEqual([l.split()[0] for l in test], ["+1", "-1"])


class SotuPartyTest(unittest.TestCase):
    def make_corpus(self, root: Path) -> Path:
        corpus = root / "sotu"
        for split in ("train", "heldout"):
            (corpus / split).mkdir(parents=True)
            with gzip.open(corpus / split / "docword.txt.gz", "wt") as f:
                f.write("3\n3\n4\n1 1 2\n2 2 1\n3 3 1\n3 1 1\n")
        (corpus / "docs.tsv").write_text(
            "split\tdoc\tline\tyear\tpresident\tparty\tchunk\tfile\n"
            "train\t1\t1\t1850\tA\tDemocratic\t1\ta\ntrain\t2\t2\t1890\tB\tWhig\t1\tb\n"
            "train\t3\t3\t1950\tC\tRepublican\t1\tc\n"
            "heldout\t1\t4\t1900\tC\tRepublican\t1\tc\nheldout\t2\t5\t1899\tD\tnone\t1\td\n"
            "heldout\t3\t6\t2000\tE\tDemocratic\t1\te\n")
        return corpus

    def test_party_keeps_two_parties_and_era_labels_by_year(self):
        with tempfile.TemporaryDirectory() as tmp:
            corpus = self.make_corpus(Path(tmp))
            run("make_sotu_party.py", "--corpus", str(corpus), "--out", tmp)
            train = (Path(tmp) / "sotu-party.train.svm").read_text().splitlines()
            self.assertEqual(train, ["-1 1:1.69315", "+1 3:1 1:1"])
            run("make_sotu_party.py", "--corpus", str(corpus), "--out", tmp, "--era", "1900")
            train = (Path(tmp) / "sotu-era.train.svm").read_text().splitlines()
            self.assertEqual([l.split()[0] for l in train], ["-1", "-1", "+1"])
            test = (Path(tmp) / "sotu-era.test.svm").read_text().splitlines()
            self.assertEqual([l.split()[0] for l in test], ["+1", "-1", "+1"])
            run("make_sotu_party.py", "--corpus", str(corpus), "--out", tmp, "--era", "1900",
                "--max-docs", "2")
            self.assertEqual(len((Path(tmp) / "sotu-era.train.svm").read_text().splitlines()), 2)


if __name__ == "__main__":
    unittest.main()


class SotuBigramsTest(unittest.TestCase):
    def test_unigrams_and_bigrams_hashed_with_party_labels(self):
        with tempfile.TemporaryDirectory() as tmp:
            corpus = Path(tmp) / "sotu"
            corpus.mkdir()
            with gzip.open(corpus / "sotu-para.txt.gz", "wt") as f:
                f.write("taxes raise taxes\nwar peace\nignored line\n")
            (corpus / "docs.tsv").write_text(
                "split\tdoc\tline\tyear\tparty\n"
                "train\t1\t1\t1900\tRepublican\ntrain\t2\t2\t1901\tDemocratic\n"
                "heldout\t1\t3\t1902\tnone\n")
            out = Path(tmp) / "out"
            run("make_sotu_bigrams.py", "--corpus", str(corpus), "--out", str(out),
                "--bits", "20")
            lines = (out / "sotu-bigrams.train.svm").read_text().splitlines()
            self.assertEqual([line.split()[0] for line in lines], ["+1", "-1"])
            first = dict(field.split(":") for field in lines[0].split()[1:])
            keys = [int(k) for k in first]
            self.assertEqual(keys, sorted(keys))
            self.assertTrue(all(1 <= k <= 1 << 20 for k in keys))
            # taxes (twice: 1 + ln 2), raise, and the bigrams "taxes raise", "raise taxes"
            self.assertEqual(len(first), 4)
            self.assertIn("1.69315", first.values())
            self.assertEqual((out / "sotu-bigrams.test.svm").read_text(), "")
            again = Path(tmp) / "again"
            run("make_sotu_bigrams.py", "--corpus", str(corpus), "--out", str(again),
                "--bits", "20")
            self.assertEqual((again / "sotu-bigrams.train.svm").read_bytes(),
                             (out / "sotu-bigrams.train.svm").read_bytes())


class OutsideTheRepositoryTest(unittest.TestCase):
    """The sotu scripts find the shipped corpus from their own path: run from / they worked only
    from the repository root (a traceback: data/sotu-para/docs.tsv not found)."""

    def test_sotu_year_and_party_from_another_directory(self):
        with tempfile.TemporaryDirectory() as tmp:
            for script, out in (("make_sotu_year.py", "sotu-year.train.svm"),
                                ("make_sotu_party.py", "sotu-party.train.svm")):
                r = subprocess.run([sys.executable, str(TOOLS / script), "--out", tmp,
                                    "--max-docs", "3"], cwd="/", capture_output=True, text=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(len((Path(tmp) / out).read_text().splitlines()), 3)
