"""A small reader of R's serialization format, enough for the data sets of R packages.

An installed R package with ``LazyData: true`` keeps its data sets in a lazy-load
database: ``data/Rdata.rdx`` (a gzip-compressed serialized list whose
``variables`` map each data set's name to an (offset, length) pair) and
``data/Rdata.rdb`` (at that offset, a 4-byte big-endian length then a zlib
stream holding the serialized object). Objects are serialized in XDR (big-endian)
form, format version 2 or 3 (R Internals, section 1.8 "Serialization formats").

Supported: NULL, symbols, pairlists, logical/integer/double/string/raw vectors,
lists, attributes, references, ALTREP compact integer/real sequences and
wrappers; environments are read as placeholders. That covers data frames of
numbers, strings and factors. Standard library only.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

NA_INTEGER = -(2**31)

# SEXP types (R Internals, "SEXPTYPEs") and the serialization's pseudo-types.
NILSXP, SYMSXP, LISTSXP, CLOSXP, ENVSXP, PROMSXP, LANGSXP = 0, 1, 2, 3, 4, 5, 6
CHARSXP, LGLSXP, INTSXP, REALSXP, CPLXSXP, STRSXP, DOTSXP = 9, 10, 13, 14, 15, 16, 17
VECSXP, EXPRSXP, RAWSXP, S4SXP = 19, 20, 24, 25
REFSXP, NILVALUE_SXP, GLOBALENV_SXP, UNBOUNDVALUE_SXP = 255, 254, 253, 252
MISSINGARG_SXP, BASENAMESPACE_SXP, NAMESPACESXP, PACKAGESXP = 251, 250, 249, 248
PERSISTSXP, EMPTYENV_SXP, BASEENV_SXP, ALTREP_SXP = 247, 242, 241, 238
_SPECIAL = {GLOBALENV_SXP, UNBOUNDVALUE_SXP, MISSINGARG_SXP, BASENAMESPACE_SXP, EMPTYENV_SXP,
            BASEENV_SXP}
_PAIRLIKE = {LISTSXP, CLOSXP, PROMSXP, LANGSXP, DOTSXP}


class RDataError(ValueError):
    """The bytes are not an R serialization this reader understands."""


@dataclass
class RObject:
    """A vector, list or pairlist with its attributes. ``value`` is a Python list
    (strings as ``str`` or None for NA, NA integers as NA_INTEGER); a pairlist's
    value is a list of (tag, value) pairs."""

    type: int
    value: object
    attributes: dict = field(default_factory=dict)

    def attr(self, name: str, default=None):
        return self.attributes.get(name, default)


@dataclass(frozen=True)
class Symbol:
    name: str


def _attribute_dict(pairs: RObject) -> dict:
    return {tag.name if isinstance(tag, Symbol) else tag: v for tag, v in pairs.value}


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0
        self.refs: list = []

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise RDataError(f"truncated serialization at byte {self.pos}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def int(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def length(self) -> int:
        n = self.int()
        if n == -1:  # long vector: two more ints
            hi, lo = self.int(), self.int()
            n = (hi << 32) + (lo & 0xFFFFFFFF)
        return n

    def header(self) -> None:
        if self.take(2) != b"X\n":
            raise RDataError("not an XDR serialization (only format 'X' is supported)")
        version = self.int()
        self.int()  # writer's R version
        self.int()  # minimal reader version
        if version == 3:
            self.take(self.int())  # native encoding
        elif version != 2:
            raise RDataError(f"serialization version {version} (2 or 3 expected)")

    def attributes(self, obj: RObject, flags: int) -> RObject:
        if flags & (1 << 9):
            obj.attributes = _attribute_dict(self.item())
        return obj

    def item(self):
        flags = self.int()
        kind = flags & 0xFF
        if kind == NILVALUE_SXP:
            return None
        if kind in _SPECIAL:
            return Symbol(f"<special {kind}>")
        if kind == REFSXP:
            index = flags >> 8 or self.int()
            return self.refs[index - 1]
        if kind == SYMSXP:
            sym = Symbol(self.item() or "")
            self.refs.append(sym)
            return sym
        if kind in (PERSISTSXP, NAMESPACESXP, PACKAGESXP):
            self.int()
            names = [self.item() for _ in range(self.int())]
            placeholder = Symbol(f"<{kind} {' '.join(map(str, names))}>")
            self.refs.append(placeholder)
            return placeholder
        if kind == ENVSXP:
            placeholder = Symbol("<environment>")
            self.refs.append(placeholder)
            self.int()  # locked
            for _ in range(4):  # enclosure, frame, hash table, attributes
                self.item()
            return placeholder
        if kind in _PAIRLIKE:
            return self.pairlist(flags)
        if kind == CHARSXP:
            n = self.int()
            return None if n == -1 else self.take(n).decode("utf-8", "replace")
        if kind in (LGLSXP, INTSXP):
            n = self.length()
            return self.attributes(RObject(kind, list(struct.unpack(f">{n}i", self.take(4 * n)))),
                                   flags)
        if kind == REALSXP:
            n = self.length()
            return self.attributes(RObject(kind, list(struct.unpack(f">{n}d", self.take(8 * n)))),
                                   flags)
        if kind == RAWSXP:
            return self.attributes(RObject(kind, self.take(self.length())), flags)
        if kind in (STRSXP, VECSXP, EXPRSXP):
            n = self.length()
            return self.attributes(RObject(kind, [self.item() for _ in range(n)]), flags)
        if kind == S4SXP:
            return self.attributes(RObject(kind, None), flags)
        if kind == ALTREP_SXP:
            return self.altrep()
        raise RDataError(f"unsupported SEXP type {kind} at byte {self.pos - 4}")

    def pairlist(self, flags: int) -> RObject:
        """A pairlist (or call, closure, ...) read cell by cell: [attributes] [tag] car, then
        the cdr, another cell or NULL."""
        out = RObject(flags & 0xFF, [])
        while True:
            attrs = self.item() if flags & (1 << 9) else None
            tag = self.item() if flags & (1 << 10) else None
            out.value.append((tag, self.item()))
            if attrs is not None and len(out.value) == 1:
                out.attributes = _attribute_dict(attrs)
            flags = self.int()
            if (flags & 0xFF) not in _PAIRLIKE:
                self.pos -= 4
                if self.item() is not None:
                    raise RDataError("a pairlist ending in something other than NULL")
                return out

    def altrep(self) -> RObject:
        info = self.item()
        state = self.item()
        attrs = self.item()
        cls = info.value[0][1].name if info is not None else "?"
        if cls in ("compact_intseq", "compact_realseq"):
            n, start, step = state.value[:3]
            kind = INTSXP if cls == "compact_intseq" else REALSXP
            conv = int if kind == INTSXP else float
            obj = RObject(kind, [conv(start + k * step) for k in range(int(n))])
        elif cls.startswith("wrap_"):
            obj = state.value[0]
        else:
            raise RDataError(f"unsupported ALTREP class {cls}")
        if attrs is not None:
            obj.attributes = _attribute_dict(attrs)
        return obj


def unserialize(data: bytes):
    """The object serialized in ``data`` (XDR, version 2 or 3)."""
    r = _Reader(data)
    r.header()
    return r.item()


def read_rds(path: Path):
    """The object in an .rds file (gzip-compressed or not)."""
    data = Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return unserialize(data)


def lazyload_names(rdx: Path) -> list[str]:
    """The names of the objects in a lazy-load database (``Rdata.rdx``), sorted."""
    index = read_rds(rdx)
    names = index.attr("names").value
    variables = index.value[names.index("variables")]
    return sorted(variables.attr("names").value)


def lazyload_fetch(rdx: Path, name: str):
    """The object `name` of the lazy-load database ``rdx`` (its ``.rdb`` beside it)."""
    index = read_rds(rdx)
    names = index.attr("names").value
    variables = index.value[names.index("variables")]
    keys = variables.attr("names").value
    if name not in keys:
        raise RDataError(f"{rdx}: no object {name!r} (has {', '.join(sorted(keys))})")
    offset, length = (int(x) for x in variables.value[keys.index(name)].value)
    with open(Path(rdx).with_suffix(".rdb"), "rb") as f:
        f.seek(offset)
        blob = f.read(length)
    size = struct.unpack(">I", blob[:4])[0]
    if blob[4:5] in (b"2", b"X", b"Z"):  # bzip2 / xz / none: not zlib
        raise RDataError(f"{rdx}: object {name!r} uses compression {blob[4:5]!r}, not zlib")
    data = zlib.decompress(blob[4:])
    if len(data) != size:
        raise RDataError(f"{rdx}: object {name!r} is {len(data)} bytes, expected {size}")
    return unserialize(data)


def data_frame_columns(frame: RObject) -> dict[str, RObject]:
    """A data frame's columns by name."""
    if frame is None or frame.type != VECSXP:
        raise RDataError("not a data frame (expected a list)")
    return dict(zip(frame.attr("names").value, frame.value))
