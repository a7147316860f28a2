#!/usr/bin/env python3
"""Build the debian-desc corpus: one document per English Debian package description.

Source: apt's ``/var/lib/apt/lists/*_i18n_Translation-en*`` lists (made by
``apt-get update -o Acquire::Languages=en``; run when none is there, or with
``--update``), decompressed with ``/usr/lib/apt/apt-helper cat-file``. Each
description is under its package's licence (the Debian archive's).

Only the release's own lists are read (not ``-updates``, ``-security`` or
``-backports``, whose few hundred packages repeat release packages with newer
descriptions; ``--all-suites`` reads them too). Every stanza (``Package``,
``Description-md5``, ``Description-en``) is read; a (package, md5) pair seen in
several lists is one document. Documents are sorted by package name, then
md5. A document is the short description and the long description, with the
`` .`` paragraph separators removed. The lists follow the archive: a later
``apt-get update`` can change the corpus, so source.json records each list's
SHA-256 (``--lists DIR`` reads saved copies instead).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

import hashlib  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import datalib  # noqa: E402

APT_LISTS = Path("/var/lib/apt/lists")


_POINT_SUITES = ("-updates_", "-security_", "-backports_", "-proposed-updates_")


def find_lists(folder: Path, all_suites: bool = False) -> list[Path]:
    """The Translation-en lists in ``folder``, sorted by name."""
    return sorted(
        p
        for p in folder.glob("*_i18n_Translation-en*")
        if not p.name.endswith(".diff")
        and (all_suites or not any(s in p.name for s in _POINT_SUITES))
    )


def read_list(path: Path) -> bytes:
    """A list's text, decompressed by apt itself (lz4, xz, gz or plain)."""
    return subprocess.run(
        ["/usr/lib/apt/apt-helper", "cat-file", str(path)], check=True, capture_output=True
    ).stdout


def stanzas(text: bytes, path: Path) -> list[tuple[str, str, bytes]]:
    """(package, md5, description) of every stanza."""
    out = []
    for number, block in enumerate(text.split(b"\n\n"), start=1):
        if not block.strip():
            continue
        package = md5 = None
        desc: list[bytes] = []
        in_desc = False
        for line in block.split(b"\n"):
            if line.startswith(b" ") and in_desc:
                body = line[1:]
                desc.append(b"" if body.strip() == b"." else body)
                continue
            in_desc = False
            key, _, value = line.partition(b":")
            if key == b"Package":
                package = value.strip().decode()
            elif key == b"Description-md5":
                md5 = value.strip().decode()
            elif key == b"Description-en":
                desc.append(value.strip())
                in_desc = True
        if package is None or md5 is None or not desc:
            raise SystemExit(f"{path}: stanza {number} lacks Package, Description-md5 or text")
        out.append((package, md5, b"\n".join(desc)))
    return out


def main() -> int:
    def extra(p):
        p.add_argument("--lists", type=Path, default=APT_LISTS, help="folder of apt lists")
        p.add_argument("--update", action="store_true", help="run apt-get update first")
        p.add_argument("--all-suites", action="store_true", help="read -updates etc. too")

    args = datalib.parse_args(__doc__.split("\n\n")[0], extra)
    started = time.time()
    if args.update or not find_lists(args.lists, args.all_suites):
        datalib.run(["apt-get", "update", "-o", "Acquire::Languages=en"])
    lists = find_lists(args.lists, args.all_suites)
    if not lists:
        raise SystemExit(f"{args.lists}: no *_i18n_Translation-en* list")
    found: dict[tuple[str, str], bytes] = {}
    digests = {}
    for path in lists:
        text = read_list(path)
        digests[path.name] = hashlib.sha256(text).hexdigest()
        for package, md5, desc in stanzas(text, path):
            found.setdefault((package, md5), desc)
    keys = sorted(found)
    docs_path, meta_path = datalib.write_docs(
        args.out, (found[k] for k in keys), ("package", "md5"), keys
    )
    source = {
        "package": "apt lists *_i18n_Translation-en*",
        "lists_sha256": digests,
        "input_docs": len(keys),
    }
    datalib.tokenize_docs(args, docs_path, meta_path, source, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
