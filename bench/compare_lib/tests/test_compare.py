"""Tests of bench/compare's helpers and of bench/plot_paper.py.

Run: /usr/bin/python3 -m unittest discover -s bench/compare_lib/tests -v
(Debian's python3 with python3-numpy, python3-scipy, python3-matplotlib; the tests that run
rotor need a built rotor: ROTOR is looked up like bench/compare does, or they are skipped.)
"""
import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[1]
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from compare_lib import corpus, report, rotor_run, score  # noqa: E402


def load_plot_paper():
    spec = importlib.util.spec_from_file_location("plot_paper", BENCH / "plot_paper.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def find_rotor():
    for rel in ("build-bench", "build/release", "build-lead", "build"):
        path = REPO / rel / "apps" / "rotor"
        if os.access(path, os.X_OK):
            return str(path)
    return shutil.which("rotor")


def write_uci(path, docs, num_words):
    """docs: list of {word_id (0-based): count}; writes a gzip UCI file."""
    nnz = sum(len(d) for d in docs)
    with gzip.open(path, "wt") as f:
        f.write(f"{len(docs)}\n{num_words}\n{nnz}\n")
        for i, d in enumerate(docs):
            for w in sorted(d):
                f.write(f"{i + 1} {w + 1} {d[w]}\n")


class TempDir(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="rotor-compare-test-")

    def tearDown(self):
        shutil.rmtree(self.dir)


class CorpusTest(TempDir):
    def test_read_uci_counts_and_shape(self):
        path = os.path.join(self.dir, "docword.txt.gz")
        write_uci(path, [{0: 2, 3: 1}, {}, {1: 5}], 4)
        x = corpus.read_uci(path)
        self.assertEqual(x.shape, (3, 4))
        self.assertEqual(x[0, 0], 2)
        self.assertEqual(x[0, 3], 1)
        self.assertEqual(x[2, 1], 5)
        self.assertEqual(x.sum(), 8)

    def test_read_uci_rejects_wrong_entry_count(self):
        path = os.path.join(self.dir, "bad.txt")
        with open(path, "w") as f:
            f.write("1\n2\n3\n1 1 1\n")
        with self.assertRaisesRegex(ValueError, "bad.txt: header says 3"):
            corpus.read_uci(path)

    def test_read_uci_rejects_ids_outside_header(self):
        path = os.path.join(self.dir, "bad.txt")
        with open(path, "w") as f:
            f.write("1\n2\n1\n1 3 1\n")
        with self.assertRaisesRegex(ValueError, "outside"):
            corpus.read_uci(path)

    def test_write_subset_keeps_every_nth_nonempty_doc(self):
        src = os.path.join(self.dir, "docword.txt.gz")
        docs = [{i % 5: i + 1} for i in range(7)]
        docs.insert(2, {})  # empty documents are not counted
        write_uci(src, docs, 5)
        out = os.path.join(self.dir, "sub.txt")
        n_docs, tokens = corpus.write_subset(src, out, 3)
        x = corpus.read_uci(out)
        # non-empty docs have counts 1..7; every 3rd from the first: counts 1, 4, 7
        self.assertEqual((n_docs, tokens), (3, 12))
        self.assertEqual(sorted(x.sum(axis=1).A.ravel().tolist()), [1, 4, 7])

    def test_cached_csr_reuses_the_cache(self):
        src = os.path.join(self.dir, "docword.txt.gz")
        write_uci(src, [{0: 1}, {1: 2}], 2)
        cache_dir = os.path.join(self.dir, "cache")
        p1, x1 = corpus.cached_csr(src, cache_dir)
        mtime = os.stat(p1).st_mtime_ns
        p2, x2 = corpus.cached_csr(src, cache_dir)
        self.assertEqual(p1, p2)
        self.assertEqual(os.stat(p2).st_mtime_ns, mtime)
        self.assertEqual((x1 != x2).nnz, 0)


class ScoreFileTest(TempDir):
    def read(self, path):
        rows = {}
        with open(path) as f:
            for line in f:
                w, k, c = line.rstrip("\n").split("\t")
                rows[(w, int(k))] = float(c)
        return rows

    def test_counts_are_written_and_missing_words_padded(self):
        vocab = ["a", "b", "c"]
        counts = np.array([[3.0, 0.0, 0.0], [1e-9, 2.5, 0.0]], dtype=np.float32)
        path = os.path.join(self.dir, "phi.tsv")
        score.write_phi_from_counts(counts, vocab, path)
        rows = self.read(path)
        self.assertEqual(rows[("a", 0)], 3.0)
        self.assertEqual(rows[("b", 1)], 2.5)
        self.assertNotIn(("a", 1), rows)  # below kDropBelow
        self.assertEqual(rows[("c", 0)], score.kPad)  # never counted: padded
        self.assertEqual({w for w, _ in rows}, set(vocab))

    def test_counts_must_match_vocabulary(self):
        with self.assertRaises(ValueError):
            score.write_phi_from_counts(np.ones((2, 2)), ["a"], os.path.join(self.dir, "x"))

    def test_rotor_export_is_padded(self):
        src = os.path.join(self.dir, "word_topic.tsv")
        with open(src, "w") as f:
            f.write("b\t1\t4\n")
        path = os.path.join(self.dir, "phi.tsv")
        score.write_phi_from_rotor(src, ["a", "b", "c"], path)
        rows = self.read(path)
        self.assertEqual(rows, {("b", 1): 4.0, ("a", 0): score.kPad, ("c", 0): score.kPad})


class ReportTest(unittest.TestCase):
    def test_time_to_reach_interpolates(self):
        pts = [(1.0, -9.0), (3.0, -8.0), (7.0, -7.5)]
        self.assertEqual(report.time_to_reach(pts, -8.5), (2.0, True))
        self.assertEqual(report.time_to_reach(pts, -9.5), (1.0, False))
        self.assertIsNone(report.time_to_reach(pts, -7.0))

    def run_(self, label, k, ll_final, t_final, curve=()):
        snaps = [{"train_s": t, "progress": 1, "heldout_loglik_per_token": ll,
                  "heldout_perplexity": 1} for t, ll in curve]
        snaps.append({"train_s": t_final, "progress": 2, "heldout_loglik_per_token": ll_final,
                      "heldout_perplexity": 1})
        return {"topics": k, "label": label, "train_s": t_final, "wall_s": t_final + 1,
                "peak_rss_mb": 10, "tokens_per_s": 100.0, "progress": 2,
                "progress_unit": "passes", "repeat": 0, "snapshots": snaps}

    def test_ratio_table_uses_the_peers_median_final_quality(self):
        runs = [self.run_("rotor t=1", 10, -7.0, 8.0, [(2.0, -8.0)]),
                self.run_("peer", 10, -7.5, 10.0), self.run_("peer", 10, -7.9, 30.0),
                self.run_("peer", 10, -7.6, 20.0)]
        table = report.ratio_table(runs)
        # median peer quality -7.6 is reached at 2 + 6 * 0.4/1.0 = 4.4 s; median peer time 20 s
        self.assertIn("| 10 | rotor t=1 | peer | -7.6000 | 4.4 | 20.0 | 0.220 |", table)


class PlotPaperTest(TempDir):
    def metrics(self, name, threads):
        recs = []
        for i in range(1, 5):
            wall = 1.0
            c = [0.9, 0.7] if threads == 2 else [0.95]
            mean = sum(c) / len(c)
            std = (sum((x - mean) ** 2 for x in c) / len(c)) ** 0.5
            recs.append({"iter": i, "time_s": float(i), "iteration_s": wall,
                         "tokens_per_s": 1000.0 * threads, "effective_ratio": mean / wall,
                         "load_cv": std / mean, "overhead_ratio": 1 - mean / wall,
                         "s_error": 0.01 * (threads - 1), "loglik_per_token": -9.0 + i / 10})
        path = os.path.join(self.dir, name + ".metrics.jsonl")
        with open(path, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in recs)
        return path, recs

    def test_breakdown_without_trace_recovers_two_threads(self):
        pp = load_plot_paper()
        _, recs = self.metrics("t2", 2)
        b = pp.breakdown(recs, None, 2, skip=1)
        self.assertAlmostEqual(b[0][0], 3 * 0.9)
        self.assertAlmostEqual(b[1][0], 3 * 0.7)
        self.assertAlmostEqual(b[1][2], 3 * 0.3)
        self.assertIsNone(b[0][1])

    def test_breakdown_with_trace_splits_wait_and_overhead(self):
        pp = load_plot_paper()
        recs = [{"iter": 1, "iteration_s": 1.0}]
        trace = {1: {0: [(0.0, 0.4), (0.5, 0.8)], 1: [(0.1, 0.8)]}}
        b = pp.breakdown(recs, trace, 2, skip=0)
        # span 0.8: worker 0 computes 0.7 and waits 0.1; worker 1 computes 0.7, waits 0.1;
        # overhead 1.0 - 0.8 for both
        for w in range(2):
            self.assertAlmostEqual(b[w][0], 0.7)
            self.assertAlmostEqual(b[w][1], 0.1)
            self.assertAlmostEqual(b[w][2], 0.2)

    def test_cli_writes_tables_and_pngs(self):
        p1, _ = self.metrics("t1", 1)
        p2, _ = self.metrics("t2", 2)
        out = os.path.join(self.dir, "out")
        proc = subprocess.run([sys.executable, str(BENCH / "plot_paper.py"), "--out", out,
                               "--threads", "1,2", p1, p2], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for name in ("paper_tables.md", "load_overhead.png", "throughput_convergence.png",
                     "s_error.png"):
            self.assertGreater(os.path.getsize(os.path.join(out, name)), 0, name)
        self.assertIn("- 2 threads: 2.00×", proc.stdout)

    def test_cli_needs_thread_counts_without_traces(self):
        p1, _ = self.metrics("t1", 1)
        proc = subprocess.run([sys.executable, str(BENCH / "plot_paper.py"), "--out", self.dir,
                               p1], capture_output=True, text=True)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--threads", proc.stderr)


@unittest.skipUnless(find_rotor(), "no rotor executable built")
class EvalWithRotorTest(TempDir):
    """The scorer on a tiny corpus: a φ that puts each held-out word where the documents use it
    must score better than a flat φ, and padding makes every word known."""

    def test_scores_and_orders_models(self):
        rotor = find_rotor()
        vocab = ["alpha", "beta", "gamma", "delta"]
        with open(os.path.join(self.dir, "vocab.txt"), "w") as f:
            f.write("\n".join(vocab) + "\n")
        heldout = os.path.join(self.dir, "docword.txt.gz")
        write_uci(heldout, [{0: 6, 1: 6}, {2: 6, 3: 6}, {0: 4, 1: 4}], 4)
        good = np.array([[50, 50, 0, 0], [0, 0, 50, 50]], dtype=np.float32)
        flat = np.full((2, 4), 25, dtype=np.float32)
        res = {}
        for name, counts in (("good", good), ("flat", flat)):
            phi = os.path.join(self.dir, name + ".tsv")
            score.write_phi_from_counts(counts, vocab, phi)
            res[name] = score.evaluate(rotor, phi, heldout, os.path.join(self.dir, "vocab.txt"),
                                       alpha=0.1, beta=0.01, threads=2)
        self.assertEqual(res["good"]["skipped_tokens"], 0)
        self.assertEqual(res["good"]["heldout_tokens"], 16)
        self.assertGreater(res["good"]["heldout_loglik_per_token"],
                           res["flat"]["heldout_loglik_per_token"])
        self.assertAlmostEqual(res["flat"]["heldout_perplexity"], 4.0, places=2)

    def test_train_heldout_equals_eval_phi_of_the_export(self):
        """bench/compare lets rotor score itself (train --heldout) and the peers through
        eval --phi: the two must be the same scorer."""
        rotor = find_rotor()
        data = REPO / "data" / "tiny"
        heldout = str(data / "heldout" / "docword.txt.gz")
        vocab = str(data / "heldout" / "vocab.txt")
        model = os.path.join(self.dir, "model")
        r = rotor_run.train(rotor, str(data / "train" / "docword.txt.gz"), 5, 2, 7, 4, 2, 0.3,
                            0.05, heldout, vocab, self.dir)
        self.assertEqual([s["iter"] for s in r["snapshots"]], [2, 4])
        self.assertEqual(r["model"], model)
        tsv = rotor_run.export_word_topic(rotor, model, self.dir)
        phi = os.path.join(self.dir, "phi.tsv")
        score.write_phi_from_rotor(tsv, corpus.read_vocab(str(data / "train" / "vocab.txt")), phi)
        res = score.evaluate(rotor, phi, heldout, vocab, alpha=0.3, beta=0.05, threads=1)
        self.assertEqual(res["skipped_tokens"], 0)
        self.assertAlmostEqual(res["heldout_loglik_per_token"],
                               r["snapshots"][-1]["heldout_loglik_per_token"], places=9)


if __name__ == "__main__":
    unittest.main()
