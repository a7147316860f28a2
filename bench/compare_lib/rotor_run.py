"""rotor's side of the comparison: calibration, timed runs scored on the held-out set, export.

A run is one `rotor lda train` process under GNU time. It scores its own model on the held-out
set at evaluation sweeps (`--heldout`), with the same evaluator, α, β, fold-in options and seed
as `rotor lda eval --phi` on its exported counts with `--beta β`: the numbers are identical
(tests/test_compare.py checks it), and the scoring time is outside rotor's `time_s`, so the
curve's times are pure training time, as for the peers.
"""
import json
import os
import shutil
import subprocess
import time


class RunError(RuntimeError):
    """A child process failed; the message holds its command and stderr."""


def run_timed(cmd, cwd=None):
    """Runs cmd under GNU time; returns (wall seconds, peak RSS in MiB, stdout).

    Peak RSS is GNU time's %M: the largest resident set of the child (for a tree of processes,
    the largest single one, not the sum)."""
    marker = "@@peak_kb="
    t0 = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", marker + "%M"] + cmd, capture_output=True,
                          text=True, cwd=cwd)
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise RunError(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-4000:]}")
    peak = [ln for ln in proc.stderr.splitlines() if ln.startswith(marker)]
    return wall, int(peak[-1][len(marker):]) / 1024, proc.stdout


def run(cmd):
    """Runs cmd, raising RunError with its stderr on failure; returns stdout."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RunError(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-4000:]}")
    return proc.stdout


def read_metrics(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def calibrate(rotor, corpus, topics, threads, seed, workdir, iterations=3):
    """Seconds per sweep at (topics, threads): the last sweep of a short run (the first sweeps
    are the slowest, so budgets computed from it err on the short side)."""
    os.makedirs(workdir, exist_ok=True)
    metrics = os.path.join(workdir, "calibration.metrics.jsonl")
    run([rotor, "lda", "train", "--corpus", corpus, "--topics", str(topics), "--iterations",
         str(iterations), "--threads", str(threads), "--seed", str(seed), "--eval-every", "0",
         "--metrics", metrics, "--out", os.path.join(workdir, "calibration.model"), "--overwrite", "-q"])
    recs = read_metrics(metrics)
    shutil.rmtree(os.path.join(workdir, "calibration.model"), ignore_errors=True)
    return recs[-1]["iteration_s"]


def train(rotor, corpus, topics, threads, seed, iterations, eval_every, alpha, beta, heldout,
          heldout_vocab, workdir):
    """One timed run that scores the held-out set itself every `eval_every` sweeps and at the
    last (`--heldout`: the scorer of `rotor lda eval`, outside rotor's time_s). Returns a dict:
    wall_s, peak_rss_mb, train_s, iterations, tokens_per_s (median of the sweeps after the
    first), metrics path, model dir, snapshots [{iter, train_s, heldout_loglik_per_token,
    heldout_perplexity}]."""
    os.makedirs(workdir, exist_ok=True)
    metrics = os.path.join(workdir, "metrics.jsonl")
    model = os.path.join(workdir, "model")
    cmd = [rotor, "lda", "train", "--corpus", corpus, "--topics", str(topics), "--iterations",
           str(iterations), "--threads", str(threads), "--seed", str(seed), "--alpha", f"{alpha!r}",
           "--beta", f"{beta!r}", "--eval-every", str(eval_every), "--heldout", heldout,
           "--heldout-vocab", heldout_vocab, "--metrics", metrics, "--out", model, "--overwrite", "-q"]
    wall, peak, _ = run_timed(cmd)
    recs = read_metrics(metrics)
    snaps = [{"iter": r["iter"], "train_s": r["time_s"],
              "heldout_loglik_per_token": r["heldout_loglik_per_token"],
              "heldout_perplexity": r["heldout_perplexity"]}
             for r in recs if "heldout_loglik_per_token" in r]
    if not snaps or snaps[-1]["iter"] != recs[-1]["iter"]:
        raise RunError(f"{metrics}: no held-out score at the last sweep (is --heldout supported?)")
    steady = recs[1:] or recs
    tps = sorted(r["tokens_per_s"] for r in steady)
    return {"wall_s": wall, "peak_rss_mb": peak, "train_s": recs[-1]["time_s"],
            "iterations": recs[-1]["iter"], "tokens_per_s": tps[len(tps) // 2],
            "metrics": metrics, "model": model, "snapshots": snaps}


def export_word_topic(rotor, model, workdir):
    """`rotor lda export --format tsv`; returns the path of word_topic.tsv (word, topic, count)."""
    out = os.path.join(workdir, "export")
    run([rotor, "lda", "export", "--model", model, "--format", "tsv", "--out", out, "--overwrite"])
    return os.path.join(out, "word_topic.tsv")
