#!/usr/bin/env python3
"""Build debian-size: a large sparse regression set for the Lasso from apt's package lists.

Source: apt's ``/var/lib/apt/lists/*_main_binary-*_Packages*`` of the release (not -updates or
-security), decompressed with ``/usr/lib/apt/apt-helper cat-file``. One sample per package
stanza; y = ln(1 + Installed-Size in KiB). Features, each kept when at least --min-count
packages have it: the words of the short description (lower-cased runs of letters and digits,
value 1 + ln(count)), and indicators ``dep:<name>`` (Depends and Pre-Depends package names),
``tag:<debtag>``, ``section:<s>``, ``priority:<p>``, ``arch:<a>``. The download size is left
out (it is the answer in disguise). Every 10th package (in list order) goes to the test split.

Outputs in --out: ``debian-size.train.svm``, ``debian-size.test.svm`` (LIBSVM, 1-based feature
ids) and ``features.txt`` (one name a line, id order).

    make_debian_size.py --out DIR [--lists /var/lib/apt/lists] [--min-count 3]

Standard library only; the same lists give the same bytes (a later ``apt-get update`` changes
the lists).
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
from collections import Counter
from pathlib import Path

WORD = re.compile(r"[a-z0-9]+")


def read_packages(lists: Path) -> str:
    files = sorted(p for p in lists.glob("*_main_binary-*_Packages*")
                   if not any(s in p.name for s in ("-updates_", "-security_", "-backports_")))
    if not files:
        raise SystemExit(f"no *_main_binary-*_Packages* list in {lists} (run apt-get update)")
    return "".join(subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", str(f)], check=True,
                                  capture_output=True, text=True).stdout + "\n" for f in files)


def stanzas(text: str):
    """Each stanza as a dict field -> value (continuation lines joined)."""
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = None
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and key:
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if "Package" in fields and "Installed-Size" in fields:
            yield fields


def features_of(f: dict[str, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for w, n in Counter(WORD.findall(f.get("Description", "").lower())).items():
        out["word:" + w] = 1 + math.log(n)
    for key in ("Depends", "Pre-Depends"):
        for alt in f.get(key, "").split(","):
            for dep in alt.split("|"):
                name = dep.strip().split(" ")[0].split(":")[0]
                if name:
                    out["dep:" + name] = 1.0
    for tag in f.get("Tag", "").split(","):
        if tag.strip():
            out["tag:" + tag.strip()] = 1.0
    for key in ("Section", "Priority", "Architecture"):
        if f.get(key):
            out[f"{key.lower()}:{f[key]}"] = 1.0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lists", type=Path, default=Path("/var/lib/apt/lists"))
    ap.add_argument("--min-count", type=int, default=3)
    a = ap.parse_args()
    samples = [(math.log1p(int(f["Installed-Size"])), features_of(f))
               for f in stanzas(read_packages(a.lists))]
    counts = Counter(name for _, feats in samples for name in feats)
    names = sorted(n for n, c in counts.items() if c >= a.min_count)
    ids = {n: i + 1 for i, n in enumerate(names)}
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "features.txt").write_text("".join(n + "\n" for n in names), encoding="utf-8")
    with open(a.out / "debian-size.train.svm", "w", encoding="ascii") as train, \
            open(a.out / "debian-size.test.svm", "w", encoding="ascii") as test:
        for k, (y, feats) in enumerate(samples):
            entries = sorted((ids[n], v) for n, v in feats.items() if n in ids)
            line = f"{y:.17g}" + "".join(f" {i}:{v:.17g}" for i, v in entries) + "\n"
            (test if k % 10 == 9 else train).write(line)
    print(f"{a.out}: {len(samples)} packages x {len(names)} features")


if __name__ == "__main__":
    main()
