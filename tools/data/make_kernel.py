#!/usr/bin/env python3
"""Build the kernel corpus: one document per Linux 6.1 source file (comments, docs, Kconfig help).

Source: ``apt-get download linux-source-6.1`` -> ``dpkg-deb -x`` ->
``usr/src/linux-source-6.1.tar.xz``, read as a stream (nothing is unpacked).
GPL-2.0 (the kernel's COPYING).

A document is made from each file of the tarball that is

* a C file (``*.c``, ``*.h``): the text of its comments (``/* ... */`` and
  ``// ...``, found by a scanner that skips string and character literals),
  without the licence blocks: a comment is dropped when it matches
  ``_LICENCE`` (SPDX tags, GPL / BSD / MIT boiler-plate, warranty
  disclaimers), and in the comments kept the attribution lines are removed
  (``_ATTRIBUTION``: lines with ``Copyright``, ``(c) <year>`` or an e-mail address,
  lines starting with ``Author``, ``Written by``, ``Maintainer``);
* documentation (``Documentation/**/*.rst`` or ``*.txt``): the whole text;
* a Kconfig file (``Kconfig``, ``Kconfig.*``): the text of its ``help``
  sections (the lines indented deeper than the ``help`` keyword, up to the
  first non-blank line that is not).

Generated register headers under ``drivers/gpu/drm/amd/include/asic_reg/`` are
skipped. Documents are sorted by path; files that give no text give no
document (and tokenize.py drops documents without tokens).
"""

from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__":
    sys.path.append(sys.path.pop(0))  # keep the standard library's `tokenize` first
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

import re  # noqa: E402
import tarfile  # noqa: E402
import time  # noqa: E402

import datalib  # noqa: E402

SKIP_PREFIXES = ("drivers/gpu/drm/amd/include/asic_reg/",)

_C_TOKEN = re.compile(
    rb"/\*.*?(?:\*/|\Z)"  # block comment (an unterminated one runs to the end)
    rb"|//(?:\\\n|[^\n])*"  # line comment, with backslash continuations
    rb'|"(?:\\.|[^"\\\n])*"'  # string literal
    rb"|'(?:\\.|[^'\\\n])*'",  # character literal
    re.S,
)
_LICENCE = re.compile(
    rb"SPDX-License-Identifier"
    rb"|General\s+Public\s+License"
    rb"|GNU\s+(?:Lesser\s+)?(?:General|Library)"
    rb"|free\s+software;?\s+you\s+can\s+redistribute"
    rb"|Redistribution\s+and\s+use\s+in\s+source"
    rb"|Permission\s+is\s+hereby\s+granted"
    rb"|Permission\s+to\s+use,\s+copy,\s+modify"
    rb"|distributed\s+in\s+the\s+hope\s+that\s+it\s+will\s+be\s+useful"
    rb"|PROVIDED\s+(?:BY\s+.{0,80}?)?\s*[\"`']{0,2}AS\s+IS"
    rb"|Licensed\s+under\s+the",
    re.I | re.S,
)
# Attribution lines inside a comment that is otherwise kept: copyright notices, e-mail
# addresses, "Author:" / "Written by" / "Maintainer" lines.
_ATTRIBUTION = re.compile(
    rb"^.*(?:copyright|\(c\)\s*\d{4}|[\w.+-]+@[\w-]+\.[\w.-]+).*$"
    rb"|^\W*(?:authors?|written\s+by|maintainers?|contributors?)\b.*$",
    re.I | re.M,
)
_KCONFIG_HELP = re.compile(rb"^(\s*)(?:---\s*help\s*---|help)\s*$")


def c_comments(source: bytes) -> bytes:
    """The non-licence comments of a C file, one per line, markers stripped."""
    out = []
    for m in _C_TOKEN.finditer(source):
        token = m.group()
        if token.startswith(b"/*"):
            body = token[2:-2] if token.endswith(b"*/") and len(token) >= 4 else token[2:]
        elif token.startswith(b"//"):
            body = token[2:]
        else:
            continue
        if _LICENCE.search(body):
            continue
        out.append(_ATTRIBUTION.sub(b" ", body))
    return b"\n".join(out)


def kconfig_help(source: bytes) -> bytes:
    """The text of every help section of a Kconfig file."""
    out = []
    help_indent = None
    for line in source.split(b"\n"):
        if help_indent is not None:
            if not line.strip():
                continue
            indent = len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())
            if indent > help_indent:
                out.append(line.strip())
                continue
            help_indent = None
        m = _KCONFIG_HELP.match(line)
        if m:
            help_indent = len(m.group(1).expandtabs(8))
    return b"\n".join(out)


def file_kind(path: str) -> str | None:
    """``doc``, ``c`` or ``kconfig`` for a file that gives a document, else None."""
    if path.startswith(SKIP_PREFIXES):
        return None
    name = path.rsplit("/", 1)[-1]
    if path.startswith("Documentation/") and name.endswith((".rst", ".txt")):
        return "doc"
    if name.endswith((".c", ".h")):
        return "c"
    if name == "Kconfig" or name.startswith("Kconfig."):
        return "kconfig"
    return None


def document(kind: str, data: bytes, code: bool = False) -> bytes:
    """The document text of one file of the given kind (with ``code``, a C file's whole text)."""
    if kind == "doc":
        return data
    if kind == "c":
        return data if code else c_comments(data)
    return kconfig_help(data)


def chunks(text: bytes, words: int) -> list[bytes]:
    """`text` cut into pieces of `words` blank-separated words (the last one shorter)."""
    w = text.split()
    return [b" ".join(w[i : i + words]) for i in range(0, len(w), words)]


def add_options(p) -> None:
    p.add_argument(
        "--code",
        action="store_true",
        help="a C file's document is its whole text (code and comments)",
    )
    p.add_argument(
        "--chunk-words",
        type=int,
        default=0,
        help="cut every file's text into documents of this many blank-separated words "
        "(the last shorter); 0: one document a file. --code --chunk-words 400 "
        "--heldout-frac 0 is the corpus of the 20M-rating MF benchmark (docs/BENCHMARKS.md)",
    )


def main() -> int:
    args = datalib.parse_args(__doc__.split("\n\n")[0], add_options)
    started = time.time()
    deb = datalib.apt_download("linux-source-6.1", args.cache)
    root = datalib.extract_deb(deb, args.cache)
    tarballs = sorted((root / "usr" / "src").glob("linux-source-*.tar.*"))
    if len(tarballs) != 1:
        raise SystemExit(f"{root}/usr/src: expected one linux-source tarball, found {tarballs}")
    found: dict[str, bytes] = {}
    files = 0
    with tarfile.open(tarballs[0], "r|*") as tar:
        for member in tar:
            if not member.isfile():
                continue
            files += 1
            # Member names are "linux-source-6.1/<path>"; drop the first component.
            path = member.name.split("/", 1)[1] if "/" in member.name else member.name
            kind = file_kind(path)
            if kind is None:
                continue
            text = document(kind, tar.extractfile(member).read(), args.code)
            if text and text.strip():
                found[path] = text
    paths = sorted(found)
    datalib.log(f"{tarballs[0].name}: {files} files, {len(paths)} with text")
    if args.chunk_words < 0:
        raise SystemExit("--chunk-words must be >= 0")
    if args.chunk_words == 0:
        docs_path, meta_path = datalib.write_docs(
            args.out, (found[p] for p in paths), ("path",), ((p,) for p in paths)
        )
    else:
        pieces = [(p, i) for p in paths for i in range(len(chunks(found[p], args.chunk_words)))]
        docs_path, meta_path = datalib.write_docs(
            args.out,
            (piece for p in paths for piece in chunks(found[p], args.chunk_words)),
            ("path", "chunk"),
            ((p, str(i)) for p, i in pieces),
        )
    source = {
        "package": "Debian linux-source-6.1",
        "deb": deb.name,
        "files": "usr/src/" + tarballs[0].name,
        "input_docs": len(paths),
        "code": args.code,
        "chunk_words": args.chunk_words,
    }
    datalib.tokenize_docs(args, docs_path, meta_path, source, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
