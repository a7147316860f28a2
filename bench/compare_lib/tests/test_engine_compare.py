"""Tests of bench/engine_compare.py against fake rotor binaries (no build needed).

Run: python3 -m unittest discover -s bench/compare_lib/tests -p 'test_engine*' -v
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "engine_compare.py"

# A stand-in for `rotor lda train`: writes --metrics with `tokens` tokens per sweep, the first
# two sweeps taking 10 s (so a wrong --skip shows), the others `seconds`; the final loglik
# depends on the seed only, plus `shift` (to make a candidate that differs).
FAKE = """#!{python}
import json, sys
a = sys.argv
get = lambda flag: a[a.index(flag) + 1]
n, seed = int(get("--iterations")), int(get("--seed"))
with open(get("--metrics"), "w") as f:
    for i in range(1, n + 1):
        rec = {{"iter": i, "iteration_s": 10.0 if i <= 2 else {seconds}, "tokens_sampled": {tokens}}}
        if i == n:
            rec["loglik_per_token"] = -8.0 - seed / 100 + {shift}
        f.write(json.dumps(rec) + "\\n")
"""


def load_json(path):
    with open(path) as f:
        return json.load(f)


def write_fake(directory, name, seconds, tokens=1000, shift=0.0):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(FAKE.format(python=sys.executable, seconds=seconds, tokens=tokens, shift=shift))
    os.chmod(path, 0o755)
    return path


class EngineCompareTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.corpus = os.path.join(self.dir, "docword.txt")
        with open(self.corpus, "w") as f:
            f.write("1\n1\n1\n1 1 1\n")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, baseline, candidate, *extra):
        cmd = [sys.executable, str(SCRIPT), "--baseline", baseline, "--candidate", candidate,
               "--corpus", self.corpus, "--out", os.path.join(self.dir, "out"),
               "--configs", "1x1", "1x2"] + list(extra)
        return subprocess.run(cmd, capture_output=True, text=True)

    def test_throughput_skips_warmup_and_ratio_is_of_medians(self):
        base = write_fake(self.dir, "base", seconds=1.0)
        cand = write_fake(self.dir, "cand", seconds=0.5, shift=0.25)
        out = os.path.join(self.dir, "res.json")
        proc = self.run_script(base, cand, "--iterations", "6", "--skip", "2", "--repeats", "3",
                               "--json", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        res = load_json(out)
        self.assertEqual(len(res["runs"]), 2 * 2 * 3)
        # Alternation: baseline, candidate, baseline, candidate ...
        self.assertEqual([r["binary"] for r in res["runs"][:4]],
                         ["baseline", "candidate", "baseline", "candidate"])
        for s in res["summary"]:
            self.assertAlmostEqual(s["baseline_tokens_per_s"], 1000.0)
            self.assertAlmostEqual(s["candidate_tokens_per_s"], 2000.0)
            self.assertAlmostEqual(s["ratio"], 2.0)
            self.assertEqual(len(s["ratio_per_repeat"]), 3)
            for r in s["ratio_per_repeat"]:
                self.assertAlmostEqual(r, 2.0)
            self.assertFalse(s["same_final_loglik"])
        self.assertIn("| 1x1 (single node, 1 thread) | 0.001M | 0.002M | 2.000 |", proc.stdout)
        # With the two 10 s sweeps counted the baseline would show 4000 / 24 tokens/s.
        proc = self.run_script(base, base, "--iterations", "6", "--skip", "0", "--repeats", "1",
                               "--json", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        s = load_json(out)["summary"][0]
        self.assertAlmostEqual(s["baseline_tokens_per_s"], 6000 / 24)
        self.assertTrue(s["same_final_loglik"])

    def test_slower_candidate_is_marked(self):
        base = write_fake(self.dir, "base", seconds=1.0)
        cand = write_fake(self.dir, "cand", seconds=1.05)
        proc = self.run_script(base, cand, "--iterations", "4", "--skip", "2", "--repeats", "1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("0.952 **below**", proc.stdout)

    def test_missing_binary_is_a_clear_error(self):
        base = write_fake(self.dir, "base", seconds=1.0)
        proc = self.run_script(base, os.path.join(self.dir, "nope"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--candidate", proc.stderr)
        self.assertIn("no such file", proc.stderr)

    def test_failing_run_reports_its_command(self):
        base = write_fake(self.dir, "base", seconds=1.0)
        proc = self.run_script(base, "/bin/false", "--iterations", "3", "--skip", "1",
                               "--repeats", "1")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("run failed", proc.stderr)
        self.assertIn("/bin/false lda train", proc.stderr)

    def test_skip_must_leave_iterations(self):
        base = write_fake(self.dir, "base", seconds=1.0)
        proc = self.run_script(base, base, "--iterations", "3", "--skip", "3")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--skip", proc.stderr)


if __name__ == "__main__":
    unittest.main()
