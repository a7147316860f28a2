#!/usr/bin/python3
"""LDA convergence curves: rotor against WarpLDA and F+NomadLDA on one corpus (issue 16).

    bench/lda/curve.py --corpus DIR --topics K --threads T --iterations N --rotor BIN
        [--rotor-variant LABEL=ARGS ...] [--warplda DIR] [--nomad DIR] [--nomad-seconds S]
        [--heldout DOCWORD [--heldout-every 10] [--warplda-points 40,80,160]]
        [--repeats 3] [--targets -9.0,-8.6,-8.4,-8.2] --work DIR [--md FILE] [--png FILE]
    bench/lda/curve.py --self-check     (parses the checked-in peer output in bench/lda/fixtures)

DIR holds a UCI docword.txt[.gz] and vocab.txt. Every tool trains on it with α = 50/K (the
peers take the sum over topics, 50), β = 0.01, and T threads, under GNU time (peak RSS); each is
timed by its own training clock (corpus loading and initialisation excluded, as each tool
reports it):
  rotor     `rotor lda train --eval-every 1 --metrics`: time_s and loglik_per_token
            (log p(w,z)/N) and loglik_word_per_token (log p(w|z)/N) after every sweep; one run
            per --rotor-variant (extra flags, e.g. sparse="--init sparse").
  WarpLDA   --warplda: its build directory's release/src (format, warplda). Prints, per
            iteration, its time and "log_likelihood (per token)": log p(w,z)/N, the word part
            summed in one of its two passes and the document part in the other (so it mixes
            the states of the two half-iterations). OMP_NUM_THREADS=T.
  F+Nomad   --nomad: the directory with f+nomad-lda and lda-converter, run as
            `mpiexec -n 1 f+nomad-lda -n T` (T samplers, plus its own communication threads).
            Prints "totaltime" and "training-LL" every -T seconds: the TOTAL log p(w|z) only
            (its document part is commented out in its source), divided here by N.
So log p(w,z)/token compares rotor with WarpLDA, and log p(w|z)/token rotor with F+Nomad: two
ladders. The ladders are the --targets (log p(w,z)) and, for log p(w|z), three even steps from
the highest first value to the best common final; both include the best common final value
(the lowest of the tools' median final values); a tool that never reaches a target shows
never. A time to a target is interpolated linearly between evaluations and is the median over
repeats of the runs that reach it. A third table gives each tool's value at a quarter, half
and all of the shortest tool's training time (who is ahead at equal time).

Held out (--heldout, issue 36): what users get, and the measure the ladder is read on. Every
tool's word-topic counts are scored by ONE evaluator, `rotor lda eval --phi` (document
completion; compare_lib/score.py writes the counts without the prior and gives it back as
--beta, so V is the training vocabulary for every tool):
  rotor     scores itself every --heldout-every sweeps and at the last (`--heldout`: the same
            scorer, α, β, fold-in options and seed as `lda eval --phi` on its exported counts;
            compare_lib/tests/test_compare.py checks the numbers are identical), outside time_s.
  WarpLDA   one run per --warplda-points entry (it writes its state only at the end), with
            --dumpz: the counts n_wk are summed from its --z file (document by document, `N
            word:topic ...`, in its own word ids, mapped back through its .vocab), written
            with compare_lib.score and scored with `rotor lda eval --phi --beta β`; its time is
            that run's training clock.
The held-out ladder's targets are WarpLDA's median held-out log-likelihood per token at each of
its points and the best common final; the tables show them as perplexity, exp(−loglik).
F+NomadLDA's model is not read (its output format is not parsed here): --heldout with --nomad
is refused.
"""
import argparse
import gzip
import json
import math
import os
import re
import shlex
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from compare_lib.report import time_to_reach  # noqa: E402
from compare_lib.rotor_run import read_metrics, run_timed  # noqa: E402

# compare_lib.score and .corpus need numpy (Debian's /usr/bin/python3, as the shebang says):
# imported where used (held-out mode and the z conversion).

kAlphaSum = 50.0
kBeta = 0.01
kFixtures = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


# ---- corpus conversion ---------------------------------------------------------------------

def docword_path(corpus_dir):
    for name in ("docword.txt.gz", "docword.txt"):
        if os.path.exists(os.path.join(corpus_dir, name)):
            return os.path.join(corpus_dir, name)
    raise SystemExit(f"{corpus_dir}: no docword.txt[.gz]")


def uci_entries(path):
    """(D, W, [(doc, word, count)] 1-based) of a UCI docword file."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d, w, nnz = (int(f.readline()) for _ in range(3))
        entries = [tuple(map(int, line.split())) for line in f if line.strip()]
    if len(entries) != nnz:
        raise SystemExit(f"{path}: header says {nnz} entries, found {len(entries)}")
    return d, w, entries


def write_warplda_text(entries, path):
    """WarpLDA's (Yahoo! LDA) text format: `doc doc word word ...`, a word repeated count times;
    words are written as w<id> (it builds its own vocabulary from them)."""
    docs = {}
    for d, w, c in entries:
        docs.setdefault(d, []).extend([f"w{w}"] * c)
    with open(path, "w") as f:
        for d in sorted(docs):
            f.write(f"d{d} d{d} {' '.join(docs[d])}\n")


def write_nomad_dir(num_docs, num_words, entries, out_dir):
    """F+Nomad's data directory: `meta` (W; then D nnz N file for the training and the test
    set) and the UCI bodies; its lda-converter then makes the .petsc binaries it reads. It
    crashes without a test set, which it only scores with -p 1: the first document stands in."""
    os.makedirs(out_dir, exist_ok=True)
    tokens = sum(c for _, _, c in entries)
    with open(os.path.join(out_dir, "train"), "w") as f:
        f.writelines(f"{d} {w} {c}\n" for d, w, c in entries)
    first = [e for e in entries if e[0] == entries[0][0]]
    with open(os.path.join(out_dir, "test"), "w") as f:
        f.writelines(f"1 {w} {c}\n" for _, w, c in first)
    with open(os.path.join(out_dir, "meta"), "w") as f:
        f.write(f"{num_words}\n{num_docs} {len(entries)} {tokens} train\n"
                f"1 {len(first)} {sum(c for _, _, c in first)} test\n")
    return tokens


def prepare_peers(args, work):
    """Converts the corpus once per work dir for the peers given; returns their inputs."""
    out = {}
    if not (args.warplda or args.nomad):
        return out
    num_docs, num_words, entries = uci_entries(docword_path(args.corpus))
    out["tokens"] = sum(c for _, _, c in entries)
    if args.warplda:
        prefix = os.path.join(work, "warplda", "corpus")
        if not os.path.exists(prefix + ".bin"):
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
            write_warplda_text(entries, prefix + ".txt")
            subprocess.run([os.path.join(args.warplda, "format"), "-input", prefix + ".txt",
                            "-prefix", prefix], check=True, capture_output=True)
            os.remove(prefix + ".txt")
        out["warplda"] = prefix
    if args.nomad:
        ndir = os.path.join(work, "nomad")
        if not os.path.exists(os.path.join(ndir, "train.petsc")):
            write_nomad_dir(num_docs, num_words, entries, ndir)
            subprocess.run([os.path.join(args.nomad, "lda-converter"), ndir], check=True,
                           capture_output=True, cwd=args.nomad)
        out["nomad"] = ndir
    return out


# ---- output parsers --------------------------------------------------------------------------

kWarpLine = re.compile(r"^Iteration (\d+), ([0-9.eE+-]+) s, .*log_likelihood \(per token\) "
                       r"([0-9.eE+-]+|-?nan|-?inf)")
kNomadLine = re.compile(r"iter (\d+) time ([0-9.eE+-]+) totaltime ([0-9.eE+-]+) .*"
                        r"training-LL ([0-9.eE+-]+)")


def parse_warplda(text):
    """[(cumulative seconds, log p(w,z)/token, iteration seconds)] from WarpLDA's stdout."""
    points, total = [], 0.0
    for line in text.splitlines():
        m = kWarpLine.match(line.strip())
        if m:
            total += float(m.group(2))
            points.append((total, float(m.group(3)), float(m.group(2))))
    return points


def parse_nomad(text, tokens):
    """[(totaltime, log p(w|z)/token, interval seconds)] from F+Nomad's stdout; its training-LL
    is a total over the corpus, divided here by `tokens`."""
    points = []
    for line in text.splitlines():
        m = kNomadLine.search(line)
        if m:
            points.append((float(m.group(3)), float(m.group(4)) / tokens, float(m.group(2))))
    return points


def warplda_word_topic(z_path, warp_vocab_path, num_words, topics):
    """K x V counts n_wk (V in the corpus's word order) from WarpLDA's --z file: a line per
    document, `N w:k w:k ...` with w its own word ids, line i of its .vocab (`w<uci id>`, as
    write_warplda_text names them). Raises SystemExit naming the file on a line it cannot read."""
    import numpy as np

    with open(warp_vocab_path) as f:
        to_uci = np.array([int(line.split()[0][1:]) - 1 for line in f if line.strip()],
                          dtype=np.int64)
    if to_uci.size and (to_uci.min() < 0 or to_uci.max() >= num_words):
        raise SystemExit(f"{warp_vocab_path}: a word outside the corpus's {num_words} words")
    counts = np.zeros(num_words * topics, dtype=np.int64)
    pending, held = [], 0
    with open(z_path) as f:
        for lineno, line in enumerate(f, 1):
            a = np.array(line.replace(":", " ").split(), dtype=np.int64)
            if a.size == 0:
                continue
            pairs = a[1:].reshape(-1, 2) if a.size % 2 == 1 else None
            if pairs is None or pairs.shape[0] != a[0] or (
                    a[0] and (pairs[:, 0].max() >= to_uci.size or pairs[:, 1].max() >= topics
                              or pairs.min() < 0)):
                raise SystemExit(f"{z_path}:{lineno}: not `N word:topic ...` with {topics} "
                                 f"topics and {to_uci.size} words")
            pending.append(to_uci[pairs[:, 0]] * topics + pairs[:, 1])
            held += pairs.shape[0]
            if held > 1 << 20:
                counts += np.bincount(np.concatenate(pending), minlength=counts.size)
                pending, held = [], 0
    if pending:
        counts += np.bincount(np.concatenate(pending), minlength=counts.size)
    return counts.reshape(num_words, topics).T


# ---- runs ------------------------------------------------------------------------------------

def run_rotor(args, label, extra, repeat, work):
    d = os.path.join(work, f"rotor-{label}-{repeat}")
    os.makedirs(d, exist_ok=True)
    metrics = os.path.join(d, "metrics.jsonl")
    cmd = [args.rotor, "lda", "train", "--corpus", docword_path(args.corpus), "--topics",
           str(args.topics), "--threads", str(args.threads), "--iterations", str(args.iterations),
           "--alpha", repr(kAlphaSum / args.topics), "--beta", repr(kBeta), "--seed",
           str(repeat + 1), "--eval-every", str(args.heldout_every if args.heldout else 1),
           "--coherence-top", "0", "--metrics", metrics, "--out", os.path.join(d, "model"),
           "--overwrite", "-q"]
    if args.heldout:
        cmd += ["--heldout", args.heldout, "--heldout-vocab", heldout_vocab(args)]
    extra = shlex.split(extra)
    if "--iterations" in extra:  # a variant's own sweep count replaces --iterations
        at = cmd.index("--iterations")
        del cmd[at:at + 2]
    cmd += extra
    wall, rss, _ = run_timed(["nice", "-n", "19"] + cmd)
    recs = read_metrics(metrics)
    return {"tool": "rotor", "label": f"rotor {label}", "repeat": repeat, "wall_s": wall,
            "peak_rss_mb": rss, "cmd": cmd,
            "joint": [(r["time_s"], r["loglik_per_token"]) for r in recs
                      if "loglik_per_token" in r],
            "word": [(r["time_s"], r["loglik_word_per_token"]) for r in recs
                     if "loglik_word_per_token" in r],
            "heldout": [(r["time_s"], r["heldout_loglik_per_token"], r["iter"]) for r in recs
                        if "heldout_loglik_per_token" in r],
            "iter_s": [r["iteration_s"] for r in recs]}


def run_warplda(args, prefix, repeat):
    """One WarpLDA run of --warplda-iterations; with --heldout, one run per --warplda-points
    entry instead, each scored held out from its --z (the longest gives the training curve)."""
    points = warplda_points(args) if args.heldout else [args.warplda_iterations or args.iterations]
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    held, rss, wall = [], 0.0, 0.0
    for niter in points:
        z = os.path.join(args.work, f"warplda-{repeat}-{niter}.z")
        cmd = [os.path.join(args.warplda, "warplda"), "--prefix", prefix, "--k", str(args.topics),
               "--niter", str(niter), "--alpha", repr(kAlphaSum), "--beta", repr(kBeta),
               "--dumpmodel=false", "--writeinfo=false"]
        cmd += ["--dumpz=true", "--z", z] if args.heldout else ["--dumpz=false"]
        w, r, out = run_timed(["nice", "-n", "19"] + cmd)
        pts = parse_warplda(out)
        wall, rss = wall + w, max(rss, r)
        if args.heldout:
            held.append((pts[-1][0], score_warplda(args, prefix, z), niter))
            os.remove(z)
    return {"tool": "warplda", "label": "WarpLDA", "repeat": repeat, "wall_s": wall,
            "peak_rss_mb": rss, "cmd": cmd, "joint": [(t, ll) for t, ll, _ in pts], "word": [],
            "heldout": held, "iter_s": [s for _, _, s in pts]}


def heldout_vocab(args):
    return args.heldout_vocab or os.path.join(os.path.dirname(args.heldout), "vocab.txt")


def warplda_points(args):
    return [int(x) for x in args.warplda_points.split(",") if x]


def score_warplda(args, prefix, z):
    """Held-out log-likelihood per token of WarpLDA's state in z, by `rotor lda eval --phi`."""
    from compare_lib.corpus import read_vocab
    from compare_lib.score import evaluate, write_phi_from_counts

    vocab = read_vocab(os.path.join(args.corpus, "vocab.txt"))
    counts = warplda_word_topic(z, prefix + ".vocab", len(vocab), args.topics)
    phi = z + ".phi.tsv"
    write_phi_from_counts(counts, vocab, phi)
    ev = evaluate(args.rotor, phi, args.heldout, heldout_vocab(args), kAlphaSum / args.topics,
                  kBeta, threads=args.threads)
    os.remove(phi)
    return ev["heldout_loglik_per_token"]


def run_nomad(args, ndir, tokens, seconds, repeat):
    interval = args.nomad_interval
    cmd = ["mpiexec", "-n", "1", os.path.join(args.nomad, "f+nomad-lda"), "-k", str(args.topics),
           "-a", repr(kAlphaSum), "-b", repr(kBeta), "-n", str(args.threads), "-t",
           str(max(1, round(seconds / interval))), "-T", repr(interval), ndir,
           os.path.join(ndir, "model")]
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    os.environ.update(env)
    wall, rss, out = run_timed(["nice", "-n", "19"] + cmd)
    pts = parse_nomad(out, tokens)
    return {"tool": "nomad", "label": "F+NomadLDA", "repeat": repeat, "wall_s": wall,
            "peak_rss_mb": rss, "cmd": cmd, "joint": [],
            "word": [(t, ll) for t, ll, _ in pts], "iter_s": [s for _, _, s in pts]}


# ---- report ----------------------------------------------------------------------------------

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def groups(runs):
    out = {}
    for r in runs:
        out.setdefault(r["label"], []).append(r)
    return out


def final_ll(rs, key):
    return median(r[key][-1][1] for r in rs if r.get(key))


def ladder(runs, key, given):
    """The targets of one quantity: `given` (or four even steps from the highest first value),
    then the best common final (the lowest median final among the tools that report `key`)."""
    g = {label: rs for label, rs in groups(runs).items() if any(r.get(key) for r in rs)}
    if len(g) < 2:
        return []
    common = min(final_ll(rs, key) for rs in g.values())
    if given:  # targets past the common final stay: the tools that reach them show it
        targets = sorted(t for t in given if t != common)
    else:
        start = max(median(r[key][0][1] for r in rs) for rs in g.values())
        targets = [start + (common - start) * i / 4 for i in range(1, 4)] if start < common else []
    return sorted(targets + [math.floor(common * 1e4) / 1e4])


def reach(rs, key, target):
    """(median seconds over the runs that reach target, runs reaching, runs, whether a run was
    already past target at its first point: its time is then an upper bound)."""
    times = [(time_to_reach([p[:2] for p in r[key]], target), r[key]) for r in rs]
    hit = [(t, pts) for t, pts in times if t is not None]
    return ((median(t[0] for t, _ in hit) if hit else None), len(hit), len(rs),
            any(not t[1] and pts[0][1] > target + 1e-6 for t, pts in hit))


def heldout_targets(runs):
    """The held-out ladder: each peer's median held-out loglik/token at each of its points (the
    issue's "WarpLDA after 40, 80, 160 iterations"), then the best common final."""
    g = {label: rs for label, rs in groups(runs).items() if any(r.get("heldout") for r in rs)}
    if len(g) < 2:
        return []
    targets = set()
    for label, rs in g.items():
        if label.startswith("rotor"):
            continue
        for i in range(min(len(r["heldout"]) for r in rs)):
            targets.add(math.floor(median(r["heldout"][i][1] for r in rs) * 1e6) / 1e6)
    common = math.floor(min(final_ll(rs, "heldout") for rs in g.values()) * 1e6) / 1e6
    return sorted(targets | {common})


def perplexity(loglik):
    return f"{math.exp(-loglik):,.0f}"


def heldout_points_table(runs):
    """Per tool, at each evaluated point: iterations, median training s → median perplexity."""
    lines = ["| tool | iterations: training s → held-out perplexity (medians) |", "|---|---|"]
    for label, rs in groups(runs).items():
        by_iter = {}
        for r in rs:
            for t, ll, it in r.get("heldout", []):
                by_iter.setdefault(it, []).append((t, ll))
        if by_iter:
            cells = [f"{it}: {median(t for t, _ in v):.1f} → {perplexity(median(ll for _, ll in v))}"
                     for it, v in sorted(by_iter.items())]
            lines.append(f"| {label} | " + "; ".join(cells) + " |")
    return "\n".join(lines)


def ladder_table(runs, key, targets, quantity, show=lambda t: f"{t:.4g}"):
    g = {label: rs for label, rs in groups(runs).items() if any(r.get(key) for r in rs)}
    rotors = [label for label in g if label.startswith("rotor")]
    peers = [label for label in g if not label.startswith("rotor")]
    # Without a peer for this quantity (e.g. no --nomad for log p(w|z)) the rotor runs' times
    # only, no ratio columns.
    ratio_of = rotors if peers else []
    head = [f"{quantity} target"] + [f"{label}, s" for label in g] + \
        [f"{label} / {'fastest peer' if len(peers) > 1 else peers[0]}" for label in ratio_of]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for t in targets:
        cells, secs = [show(t)], {}
        for label, rs in g.items():
            s, n, m, bound = reach(rs, key, t)
            secs[label] = s
            cells.append("never" if s is None else ("≤ " if bound else "") + f"{s:.1f}" +
                         ("" if n == m else f" ({n}/{m})"))
        peer_best = min((secs[p] for p in peers if secs[p] is not None), default=None)
        for label in ratio_of:
            ok = secs[label] is not None and peer_best is not None
            cells.append(f"{secs[label] / peer_best:.2f}" if ok else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def value_at(points, t):
    """A curve's value at training time t, interpolated; None before its first or after its
    last point."""
    prev = None
    for x, y in points:
        if x >= t:
            if prev is None:
                return None
            return prev[1] + (y - prev[1]) * (t - prev[0]) / (x - prev[0])
        prev = (x, y)
    return None


def equal_time_table(runs, key, quantity, show=lambda v: f"{v:.4f}"):
    """Each tool's median value at a quarter, half and all of the shortest tool's median
    training time: who is ahead at the same time, up to the end of the shortest run."""
    g = {label: rs for label, rs in groups(runs).items() if any(r.get(key) for r in rs)}
    if len(g) < 2:
        return ""
    end = min(median(r[key][-1][0] for r in rs if r.get(key)) for rs in g.values())
    times = [end / 4, end / 2, end * 0.999]
    head = [f"{quantity} at training time"] + [f"{t:.0f} s" for t in times]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, rs in g.items():
        vals = [median(value_at([p[:2] for p in r[key]], t) for r in rs if r.get(key))
                for t in times]
        lines.append(f"| {label} | " + " | ".join("–" if v is None else show(v) for v in vals)
                     + " |")
    return "\n".join(lines)


def steady(iter_s):
    half = iter_s[len(iter_s) // 2:]
    return median(half) if half else None


def summary_table(runs):
    lines = ["| tool | runs | first iteration s | steady iteration s (median, 2nd half) | "
             "training s | wall s | peak RSS MiB | final log p(w,z)/token | "
             "final log p(w\\|z)/token | final held-out perplexity |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def f(x, spec):
        return "–" if x is None else format(x, spec)

    for label, rs in groups(runs).items():
        first = median(r["iter_s"][0] for r in rs if r["iter_s"])
        st = median(steady(r["iter_s"]) for r in rs)
        train = median((r["joint"] or r["word"])[-1][0] for r in rs if r["joint"] or r["word"])
        ho = final_ll(rs, "heldout")
        held = "–" if ho is None else perplexity(ho)
        lines.append(f"| {label} | {len(rs)} | {f(first, '.2f')} | {f(st, '.2f')} | "
                     f"{f(train, '.1f')} | {f(median(r['wall_s'] for r in rs), '.1f')} | "
                     f"{f(median(r['peak_rss_mb'] for r in rs), '.0f')} | "
                     f"{f(final_ll(rs, 'joint'), '.4f')} | {f(final_ll(rs, 'word'), '.4f')} | "
                     f"{held} |")
    if any(r["tool"] == "nomad" for r in runs):
        lines.append("\nF+Nomad's \"iteration\" is its evaluation interval (-T seconds), not a "
                     "sweep.")
    return "\n".join(lines)


def plot(runs, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("joint", "log p(w,z) / token"), ("word", "log p(w|z) / token")]
    if any(r.get("heldout") for r in runs):
        panels.insert(0, ("heldout", "held-out perplexity (rotor lda eval --phi)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.8))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (key, name) in zip(axes, panels):
        ys = (lambda r: [math.exp(-p[1]) for p in r[key]]) if key == "heldout" else \
            (lambda r: [p[1] for p in r[key]])
        for i, (label, rs) in enumerate(groups(runs).items()):
            for j, r in enumerate(r for r in rs if r.get(key)):
                ax.plot([p[0] for p in r[key]], ys(r),
                        "-" if label.startswith("rotor") else "--", color=colours[i % 10],
                        marker=".", markersize=3, alpha=1.0 if j == 0 else 0.35,
                        label=label if j == 0 else None)
        ax.set_xlabel("training time, s (each tool's own clock)")
        ax.set_ylabel(name)
        ax.grid(True, alpha=0.3)
        lows = [p[1] for r in runs for p in r.get(key, [])[len(r.get(key, [])) // 10:]]
        if lows and key != "heldout":
            ax.set_ylim(min(lows) - 0.05, max(p[1] for r in runs for p in r[key]) + 0.05)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8, loc="upper right" if key == "heldout" else "lower right")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ---- main ------------------------------------------------------------------------------------

def self_check():
    with open(os.path.join(kFixtures, "warplda.out")) as f:
        w = parse_warplda(f.read())
    with open(os.path.join(kFixtures, "nomad.out")) as f:
        n = parse_nomad(f.read(), 1000)
    assert len(w) >= 2 and w[1][0] == w[0][2] + w[1][2] and w[-1][1] < 0, w
    assert len(n) >= 2 and n[-1][0] > n[0][0] and n[0][1] == float(n[0][1]), n
    runs = [{"label": "rotor x", "joint": [(1, -9.5), (2, -8.5)], "word": []},
            {"label": "peer", "joint": [(1, -9.0), (3, -8.0)], "word": []}]
    assert ladder(runs, "joint", [-9.0, -8.2]) == [-9.0, -8.5, -8.2], ladder(runs, "joint", [-9.0])
    assert reach(runs[:1], "joint", -9.0) == (1.5, 1, 1, False)
    assert value_at(runs[0]["joint"], 1.5) == -9.0 and value_at(runs[0]["joint"], 3) is None
    # WarpLDA's --z in its own word ids (its .vocab names them w<uci id>), K = 3, V = 4.
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "v"), "w") as f:
            f.write("w3\nw1\nw4\n")
        with open(os.path.join(tmp, "z"), "w") as f:
            f.write("3 0:2 1:0 0:2 \n0 \n2 2:1 1:0 \n")
        c = warplda_word_topic(os.path.join(tmp, "z"), os.path.join(tmp, "v"), 4, 3)
        assert c.shape == (3, 4) and c.sum() == 5, c
        assert c[2, 2] == 2 and c[0, 0] == 2 and c[1, 3] == 1 and c[:, 1].sum() == 0, c
        with open(os.path.join(tmp, "z"), "w") as f:
            f.write("2 0:1 \n")
        try:
            warplda_word_topic(os.path.join(tmp, "z"), os.path.join(tmp, "v"), 4, 3)
            raise AssertionError("a short z line was read")
        except SystemExit as e:
            assert str(e).endswith("with 3 topics and 3 words") and ":1:" in str(e), e
    held = [{"label": "rotor x", "heldout": [(1, -7.3, 10), (2, -7.1, 20)]},
            {"label": "WarpLDA", "heldout": [(2, -7.2, 40), (4, -7.15, 80)]}]
    assert heldout_targets(held) == [-7.2, -7.15], heldout_targets(held)
    t, hit, runs_, bound = reach(held[:1], "heldout", -7.2)
    assert abs(t - 1.5) < 1e-9 and (hit, runs_, bound) == (1, 1, False), t
    print(f"self-check ok: {len(w)} WarpLDA and {len(n)} F+Nomad lines parsed, z conversion, "
          "held-out ladder")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--self-check", action="store_true")
    p.add_argument("--corpus", help="directory with docword.txt[.gz] and vocab.txt")
    p.add_argument("--topics", type=int, default=100)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--iterations", type=int, default=100, help="rotor's sweeps")
    p.add_argument("--warplda-iterations", type=int, default=0,
                   help="WarpLDA's iterations (default: --iterations; with --heldout, "
                   "--warplda-points instead)")
    p.add_argument("--rotor", help="the rotor binary")
    p.add_argument("--rotor-variant", action="append", default=[],
                   help="LABEL=EXTRA_FLAGS, one rotor configuration (default: default=); "
                   "an --iterations among the flags replaces the common one")
    p.add_argument("--warplda", help="directory with WarpLDA's format and warplda")
    p.add_argument("--nomad", help="directory with F+Nomad's f+nomad-lda and lda-converter")
    p.add_argument("--nomad-seconds", type=float, default=0,
                   help="F+Nomad's run time (default: rotor's median training time)")
    p.add_argument("--nomad-interval", type=float, default=1.0, help="its -T, seconds")
    p.add_argument("--heldout", help="held-out docword: score every tool's model on it "
                   "(rotor lda eval --phi) and read the ladder on held-out perplexity")
    p.add_argument("--heldout-vocab", help="its vocabulary (default: vocab.txt beside it)")
    p.add_argument("--heldout-every", type=int, default=10,
                   help="with --heldout: rotor scores itself every N sweeps (and at the last)")
    p.add_argument("--warplda-points", default="40,80,160",
                   help="with --heldout: WarpLDA's iteration counts, one run each")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--targets", default="-9.0,-8.6,-8.4,-8.2", help="log p(w,z)/token ladder")
    p.add_argument("--work", help="scratch directory (converted corpora, models, runs.jsonl)")
    p.add_argument("--md", help="write the tables here (also printed)")
    p.add_argument("--png", help="write the curves here")
    p.add_argument("--report-only", action="store_true", help="redo tables from runs.jsonl")
    args = p.parse_args()
    if args.self_check:
        return self_check()
    if not (args.corpus and args.work and (args.rotor or args.report_only)):
        p.error("--corpus, --work and --rotor are required")
    if args.heldout and args.nomad:
        p.error("--heldout scores rotor and WarpLDA only: F+NomadLDA's model is not read")
    if args.heldout and not args.report_only:
        for path in (args.heldout, heldout_vocab(args), os.path.join(args.corpus, "vocab.txt")):
            if not os.path.exists(path):
                p.error(f"{path}: no such file (--heldout needs it)")
        if args.heldout_every < 1 or not warplda_points(args):
            p.error("--heldout-every must be >= 1 and --warplda-points name an iteration count")
    os.makedirs(args.work, exist_ok=True)
    log = os.path.join(args.work, "runs.jsonl")
    runs = []
    if args.report_only:
        with open(log) as f:
            runs = [json.loads(line) for line in f]
    else:
        variants = [v.split("=", 1) for v in (args.rotor_variant or ["default="])]
        peers = prepare_peers(args, args.work)
        for repeat in range(args.repeats):  # interleaved: one run of every tool per repeat
            batch = [run_rotor(args, label, extra, repeat, args.work) for label, extra in variants]
            if args.warplda:
                batch.append(run_warplda(args, peers["warplda"], repeat))
            if args.nomad:
                secs = args.nomad_seconds or median(
                    r["joint"][-1][0] for r in runs + batch if r["tool"] == "rotor")
                batch.append(run_nomad(args, peers["nomad"], peers["tokens"], secs, repeat))
            runs += batch
            with open(log, "a") as f:
                f.writelines(json.dumps(r) + "\n" for r in batch)
            print(f"repeat {repeat + 1}/{args.repeats} done", file=sys.stderr)
    load = os.getloadavg()
    title = (f"{os.path.basename(os.path.normpath(args.corpus))}, K = {args.topics}, "
             f"{args.threads} thread(s)")
    given = [float(t) for t in args.targets.split(",") if t]
    md = [f"### {title}", "",
          f"Load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; medians of "
          f"{max(len(rs) for rs in groups(runs).values())} runs.", "",
          summary_table(runs), ""]
    held = heldout_targets(runs)
    if held:
        md += ["Held out (rotor lda eval --phi on every tool's counts):", "",
               heldout_points_table(runs), "",
               ladder_table(runs, "heldout", held, "held-out perplexity", show=perplexity), "",
               equal_time_table(runs, "heldout", "held-out perplexity", show=perplexity), ""]
    for key, quantity, tg in (("joint", "log p(w,z)/token", given), ("word", "log p(w\\|z)/token",
                                                                      [])):
        targets = ladder(runs, key, tg)
        if targets:
            md += [ladder_table(runs, key, targets, quantity), "",
                   equal_time_table(runs, key, quantity), ""]
    text = "\n".join(md)
    print(text)
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    if args.png:
        plot(runs, args.png, title)


if __name__ == "__main__":
    main()
