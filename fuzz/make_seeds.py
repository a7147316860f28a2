#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets into OUT_DIR/<target>/ (deterministic)."""
import gzip
import os
import struct
import sys
import zlib

MASK = (1 << 64) - 1


def checksum(body: bytes) -> int:
    """core/corpus/binary_format.h Checksum: h = (h ^ w) * K; h ^= h >> 32, then the length."""
    k = 0x9E3779B97F4A7C15

    def mix(h, w):
        h = ((h ^ w) * k) & MASK
        return h ^ (h >> 32)

    h = 0x243F6A8885A308D3
    padded = body + b"\0" * (-len(body) % 8)
    for i in range(0, len(padded), 8):
        h = mix(h, struct.unpack_from("<Q", padded, i)[0])
    return mix(h, len(body))


def binary_corpus(docs, num_words):
    offsets = [0]
    words = []
    for d in docs:
        words += d
        offsets.append(len(words))
    body = struct.pack(f"<{len(offsets)}Q", *offsets) + struct.pack(f"<{len(words)}I", *words)
    body += b"\0" * (-len(body) % 8)
    body += struct.pack(f"<{len(docs)}Q", *range(1, len(docs) + 1))
    header = b"ROTORCRP" + struct.pack("<IIQQQQ", 1, 0, len(docs), num_words, len(words),
                                       checksum(body)) + b"\0" * 16
    return header + body


def lasso_data(rows, features, targets, dense=False, names=()):
    """core/lasso/data_binary.h: header, row offsets, columns (+pad), values, targets, names."""
    offsets, cols, values = [0], [], []
    for row in rows:
        for c, v in row:
            cols.append(c)
            values.append(v)
        offsets.append(len(cols))
    body = struct.pack(f"<{len(offsets)}Q", *offsets) + struct.pack(f"<{len(cols)}I", *cols)
    body += b"\0" * (-len(body) % 8)
    body += struct.pack(f"<{len(values)}d", *values) + struct.pack(f"<{len(targets)}d", *targets)
    chars = b"".join(n.encode() for n in names)
    body += struct.pack("<QQ", len(names), len(chars))
    if names:
        ends = [0]
        for n in names:
            ends.append(ends[-1] + len(n.encode()))
        body += struct.pack(f"<{len(ends)}Q", *ends)
    body += chars + b"\0" * (-len(chars) % 8)
    header = b"ROTORLSO" + struct.pack("<IIQQQQII", 1, 1 if dense else 0, len(targets), features,
                                       len(cols), len(body), zlib.crc32(body), 0) + b"\0" * 8
    return header + body


def main():
    out = sys.argv[1]
    uci = {
        "good": b"4\n5\n5\n1 2 3\n1 5 1\n2 1 2\n4 4 1\n4 2 2\n",
        "crlf": b"2\r\n3\r\n2\r\n1 1 1\r\n2 3 4\r\n\r\n",
        "dup": b"2\n3\n2\n1 1 1\n1 1 2\n",
        "order": b"3\n3\n2\n2 1 1\n1 1 1\n",
        "empty_docs": b"9\n2\n1\n5 2 7\n",
    }
    uci["good_gz"] = gzip.compress(uci["good"], mtime=0)
    text = {
        "docs": b"The cat sat on the mat.\nA dog and a cat!\n\nCAT dog bird\n",
        "mixed": b"x86_64 caf\xc3\xa9 re-enter\r\nkernel driver memory kernel\n",
    }
    text["docs_gz"] = gzip.compress(text["docs"], mtime=0)
    binary = {
        "small": binary_corpus([[0, 1, 1], [], [4]], 5),
        "empty": binary_corpus([], 0),
        "odd": binary_corpus([[2]], 3),
    }
    lasso = {
        "sparse": lasso_data([[(0, 2.0), (2, -1.0)], [], [(3, 0.25)]], 4, [1.5, -2.0, 0.5]),
        "dense": lasso_data([[(0, 1.0), (1, 2.0)], [(0, 5.0), (1, 0.0)]], 2, [4.0, 8.5], True,
                            ("a", "bb")),
        "empty": lasso_data([], 3, []),
    }
    # First byte: the key kind (0 Lasso indices, 1 logreg keys, 2 hashed names), then the text.
    svm = {
        "index": b"\0" + b"1.5 1:2 3:-1e-3 # comment\n-2 qid:7 2:0 4:0.25\r\n\n+1 1:1\n",
        "keys": b"\1" + b"+1 0:1 18446744073709551614:2\n-1 5:1.5e300 6:-2\n",
        "hashed": b"\2" + b"1 kernel:2 driver memory:-1 kernel_2:1\n-1 a b:0 c:3\n",
        "bom": b"\0" + b"\xef\xbb\xbf0.5 1:1\t2:2\n",
    }
    for target, seeds in (("fuzz_uci_reader", uci), ("fuzz_text_reader", text),
                          ("fuzz_svmlight_reader", svm),
                          ("fuzz_binary_corpus", binary), ("fuzz_lasso_data_binary", lasso)):
        os.makedirs(os.path.join(out, target), exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(out, target, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
