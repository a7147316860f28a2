#!/usr/bin/env python3
"""Build ALL-age: a real dense p >> n regression set for the Lasso from Bioconductor's ALL.

The ALL package (Debian: ``r-bioc-all``) ships ``data/ALL.rda``: an ExpressionSet of 128 acute
lymphoblastic leukemia patients x 12,625 Affymetrix HG-U95Av2 probe sets (RMA-normalised log2
expression; Chiaretti et al., Blood 2004). The sample: one patient; the features: the probe
sets' expression; y: the patient's age (phenoData column ``age``; the 5 patients without an age
are dropped). A Lasso on it asks which genes' expression tracks age: n = 123, p = 12,625.

The .rda is read with ``rdata.py`` (no R needed), extended here to keep environments' contents:
an ExpressionSet keeps its matrix in ``assayData``, an environment. Output: ``all-age.csv``
(header ``age,<probe>,...``; the target first, read with ``--target age``), the first 100
patients in ``all-age.train.csv`` and the other 23 in ``all-age.test.csv``.

    make_all_age.py --out DIR [--rda /usr/lib/R/site-library/ALL/data/ALL.rda]

Standard library only; the same package gives the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

# This directory after the standard library's (its tokenize.py would shadow the standard one).
_HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != _HERE] + [str(_HERE)]

import argparse  # noqa: E402
import lzma  # noqa: E402
import math  # noqa: E402

import rdata  # noqa: E402

DEFAULT_RDA = Path("/usr/lib/R/site-library/ALL/data/ALL.rda")
TRAIN = 100


class Environment:
    """An R environment's variables (frame and hash table), name -> object."""

    def __init__(self) -> None:
        self.variables: dict[str, object] = {}


class _EnvReader(rdata._Reader):  # noqa: SLF001 (the reader's one extension point)
    """rdata's reader, keeping what environments hold instead of a placeholder, and reading the
    closures an S4 object's class carries."""

    def item(self):
        start = self.pos
        flags = self.int()
        if flags & 0xFF != rdata.ENVSXP:
            self.pos = start
            return super().item()
        env = Environment()
        self.refs.append(env)
        self.int()  # locked
        self.item()  # enclosure
        frame, table = self.item(), self.item()
        self.item()  # attributes
        for cells in ([frame] if frame is not None else []) + (
                [b for b in table.value if b is not None] if table is not None else []):
            for tag, value in cells.value:
                env.variables[tag.name if isinstance(tag, rdata.Symbol) else str(tag)] = value
        return env


    def pairlist(self, flags: int) -> rdata.RObject:
        """rdata's pairlist, allowing a last cdr other than NULL (a closure's body, serialized
        as the cdr of its cell, may be a symbol); that cdr is dropped."""
        out = rdata.RObject(flags & 0xFF, [])
        while True:
            attrs = self.item() if flags & (1 << 9) else None
            tag = self.item() if flags & (1 << 10) else None
            out.value.append((tag, self.item()))
            if attrs is not None and len(out.value) == 1:
                out.attributes = rdata._attribute_dict(attrs)  # noqa: SLF001
            flags = self.int()
            if (flags & 0xFF) not in rdata._PAIRLIKE:  # noqa: SLF001
                self.pos -= 4
                self.item()
                return out


def load_all(rda: Path) -> rdata.RObject:
    data = rda.read_bytes()
    if data[:6] == b"\xfd7zXZ\x00":
        data = lzma.decompress(data)
    if not data.startswith(b"RDX2\n") and not data.startswith(b"RDX3\n"):
        raise rdata.RDataError(f"{rda}: not an .rda file")
    r = _EnvReader(data[5:])
    r.header()
    saved = r.item()  # a pairlist name -> object
    for tag, value in saved.value:
        if getattr(tag, "name", tag) == "ALL":
            return value
    raise rdata.RDataError(f"{rda}: no object ALL")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rda", type=Path, default=DEFAULT_RDA)
    a = ap.parse_args()
    eset = load_all(a.rda)
    exprs = eset.attr("assayData").variables["exprs"]
    rows, cols = exprs.attr("dim").value  # probe sets x patients, column-major
    probes = exprs.attr("dimnames").value[0].value
    pheno = rdata.data_frame_columns(eset.attr("phenoData").attr("data"))
    ages = pheno["age"].value
    if len(ages) != cols:
        raise rdata.RDataError("phenoData and exprs disagree on the patients")
    a.out.mkdir(parents=True, exist_ok=True)
    header = "age," + ",".join(probes) + "\n"
    lines = []
    for j in range(cols):
        age = ages[j]
        if age is None or age == rdata.NA_INTEGER or (isinstance(age, float) and math.isnan(age)):
            continue
        column = exprs.value[j * rows:(j + 1) * rows]
        lines.append(f"{age:g}," + ",".join(repr(v) for v in column) + "\n")
    for name, part in (("all-age.csv", lines), ("all-age.train.csv", lines[:TRAIN]),
                       ("all-age.test.csv", lines[TRAIN:])):
        with open(a.out / name, "w", encoding="ascii") as f:
            f.write(header)
            f.writelines(part)
    print(f"{a.out}: {len(lines)} patients x {rows} probe sets "
          f"({TRAIN} train, {len(lines) - TRAIN} test)")


if __name__ == "__main__":
    main()
