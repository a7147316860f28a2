"""Summaries of bench/compare's results.jsonl: Markdown tables, ratios, the quality/time PNG."""
import math
import statistics


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "–" if x is None else format(x, spec)


def final(run):
    """The last snapshot of a run (the model at the end of its budget)."""
    return run["snapshots"][-1]


def curve(run):
    """[(train seconds, held-out loglik/token)] of a run's scored snapshots, by time."""
    return sorted((s["train_s"], s["heldout_loglik_per_token"]) for s in run["snapshots"]
                  if "heldout_loglik_per_token" in s)


def time_to_reach(points, target):
    """Training seconds at which a curve first reaches `target` loglik/token, by linear
    interpolation between snapshots; (seconds, exact) with exact False when the first snapshot
    is already past the target (the time is then an upper bound); None when never reached."""
    prev = None
    for t, ll in points:
        if ll >= target:
            if prev is None:
                return t, False
            t0, l0 = prev
            return t0 + (t - t0) * (target - l0) / (ll - l0), True
        prev = (t, ll)
    return None


def group(runs):
    """{(topics, label): [runs]} in first-seen order."""
    out = {}
    for r in runs:
        out.setdefault((r["topics"], r["label"]), []).append(r)
    return out


def summary_table(runs):
    lines = ["| K | tool | runs | train s | wall s | peak RSS MiB | tokens/s | sweeps or passes | "
             "held-out loglik/token | perplexity |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (k, label), rs in group(runs).items():
        ll = median(final(r).get("heldout_loglik_per_token") for r in rs)
        lines.append(
            f"| {k} | {label} | {len(rs)} | {fmt(median(r['train_s'] for r in rs), '.1f')} | "
            f"{fmt(median(r['wall_s'] for r in rs), '.1f')} | "
            f"{fmt(median(r['peak_rss_mb'] for r in rs), '.0f')} | "
            f"{fmt(median(r['tokens_per_s'] for r in rs), ',.0f')} | "
            f"{fmt(median(r['progress'] for r in rs), '.2f')} {rs[0]['progress_unit']} | "
            f"{fmt(ll, '.4f')} | {fmt(None if ll is None else math.exp(-ll), '.0f')} |")
    return "\n".join(lines)


def ratio_table(runs):
    """For each rotor configuration and each peer at the same K: rotor's time to reach the
    peer's median final held-out quality / the peer's median training time (median over rotor's
    runs with a scored curve), the throughput ratio (tokens/s; a Gibbs sweep and a VB pass do
    different work per token), and the peer's final perplexity / rotor's final perplexity."""
    groups = group(runs)
    lines = ["| K | rotor | peer | peer's final loglik/token | rotor's time to reach it, s | "
             "peer's time, s | time ratio rotor/peer | throughput ratio rotor/peer | "
             "perplexity ratio peer/rotor at the budget |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (k, rl), rr in groups.items():
        if not rl.startswith("rotor"):
            continue
        for (k2, pl), pr in groups.items():
            if k2 != k or pl.startswith("rotor"):
                continue
            target = median(final(r).get("heldout_loglik_per_token") for r in pr)
            peer_s = median(r["train_s"] for r in pr)
            if target is None:
                continue
            # Runs with a scored curve; a lone final point only bounds the time from above.
            curves = [curve(r) for r in rr if len(curve(r)) > 1] or [curve(r) for r in rr]
            reach = [time_to_reach(c, target) for c in curves if c]
            reached = [x for x in reach if x is not None]
            if not reached:
                t_txt, ratio_txt = "not reached", "–"
            else:
                t = median(x[0] for x in reached)
                bound = "≤ " if not all(x[1] for x in reached) else ""
                t_txt = f"{bound}{t:.1f}"
                ratio_txt = f"{bound}{t / peer_s:.3f}"
                if len(reached) < len(reach):
                    t_txt += f" ({len(reached)}/{len(reach)} runs)"
            rotor_ll = median(final(r).get("heldout_loglik_per_token") for r in rr)
            tp = median(r["tokens_per_s"] for r in rr) / median(r["tokens_per_s"] for r in pr)
            ppl = math.exp(rotor_ll - target) if rotor_ll is not None else None
            lines.append(f"| {k} | {rl} | {pl} | {target:.4f} | {t_txt} | {peer_s:.1f} | "
                         f"{ratio_txt} | {tp:.1f} | {fmt(ppl, '.3f')} |")
    return "\n".join(lines)


def curve_table(runs):
    """Every scored snapshot: the numbers behind the PNG."""
    lines = ["| K | tool | repeat | train s | sweeps or passes | held-out loglik/token | perplexity |",
             "|---|---|---|---|---|---|---|"]
    for r in runs:
        for s in r["snapshots"]:
            if "heldout_loglik_per_token" not in s:
                continue
            lines.append(f"| {r['topics']} | {r['label']} | {r['repeat']} | {s['train_s']:.1f} | "
                         f"{s['progress']:.2f} | {s['heldout_loglik_per_token']:.4f} | "
                         f"{s['heldout_perplexity']:.0f} |")
    return "\n".join(lines)


def plot(runs, topics, path, title):
    """Held-out loglik/token against training seconds, one colour per tool configuration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(10, 5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, ((k, label), rs) in enumerate(group(runs).items()):
        if k != topics:
            continue
        style = "-" if label.startswith("rotor") else "--"
        first = True
        # Runs with a scored curve first (opaque, labelled), lone final points after (faint).
        for r in sorted(rs, key=lambda r: -len(curve(r))):
            pts = curve(r)
            if not pts:
                continue
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", markersize=4,
                    color=colours[i % len(colours)], label=label if first else None,
                    alpha=1.0 if len(pts) > 1 or first else 0.5)
            first = False
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0, 7.0)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("training time, s (log scale; corpus loading and snapshotting excluded)")
    ax.set_ylabel("held-out log-likelihood per token (higher is better)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, borderaxespad=0)
    ax.text(1.01, 0.0, "lines: scored curve(s);\nfaint dots: final models\nof the other repeats",
            transform=ax.transAxes, fontsize=8, va="bottom")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
