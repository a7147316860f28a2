"""Tests of tools/data/tokenize.py (the reference tokenization of docs/data.md).

Run: python3 -m unittest discover -s tools/data/tests -v
"""

from __future__ import annotations

import collections
import gzip
import importlib.util
import io
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent


def load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tok = load("rotor_tokenize", "tokenize.py")


def read_uci(folder: Path) -> tuple[list[bytes], dict[int, dict[int, int]], tuple[int, int, int]]:
    """Parse a UCI folder back, checking its own invariants on the way."""
    vocab = (folder / "vocab.txt").read_bytes().split(b"\n")
    assert vocab[-1] == b""
    vocab = vocab[:-1]
    lines = gzip.decompress((folder / "docword.txt.gz").read_bytes()).decode().split("\n")
    assert lines[-1] == ""
    d, w, nnz = (int(x) for x in lines[:3])
    rows = [tuple(int(x) for x in line.split()) for line in lines[3:-1]]
    docs: dict[int, dict[int, int]] = collections.defaultdict(dict)
    for doc, word, count in rows:
        docs[doc][word] = count
    return vocab, docs, (d, w, nnz, rows)


class TokenizeTextTest(unittest.TestCase):
    def test_lowercases_and_takes_maximal_letter_runs(self):
        self.assertEqual(
            tok.tokenize_text("Hello, WORLD! state-of-the-art x86_64 abc123def"),
            [b"hello", b"world", b"state", b"the", b"art", b"abc", b"def"],
        )

    def test_length_bounds_drop_runs_instead_of_cutting_them(self):
        text = "ab abc " + "y" * 25 + " " + "z" * 26
        self.assertEqual(tok.tokenize_text(text), [b"abc", b"y" * 25])

    def test_stopwords_are_dropped_after_lowercasing(self):
        stop = frozenset({b"the", b"and"})
        self.assertEqual(tok.tokenize_text("The cat AND the dog", stop), [b"cat", b"dog"])

    def test_non_ascii_letters_split_words_and_are_not_folded(self):
        # U+212A KELVIN SIGN lowercases to ASCII 'k' under Unicode rules; bytes do not.
        self.assertEqual(tok.tokenize_text("caf\u00e9 \u212aelvin na\u00efve"), [b"caf", b"elvin"])

    def test_shipped_stopword_list_is_the_npm_list(self):
        words = tok.load_stopwords()
        self.assertEqual(len(words), 301)
        self.assertIn(b"the", words)
        self.assertNotIn(b"president", words)
        self.assertTrue(all(w.isalpha() and w.islower() for w in words))


def bows(*texts: str) -> list[tuple[int, collections.Counter]]:
    return [(i, tok.bag_of_words(t)) for i, t in enumerate(texts, start=1)]


class BuildCorpusTest(unittest.TestCase):
    def test_min_df_vocab_order_and_empty_docs(self):
        texts = ["bbb aaa ccc"] * 4 + ["bbb aaa ccc ddd ddd", "", "zzz", "aaa aaa aaa"]
        corpus = tok.build_corpus(bows(*texts), min_df=5)
        # aaa: 8 tokens, bbb and ccc: 5 each (tie -> alphabetical); ddd, zzz in < 5 docs.
        self.assertEqual(corpus.vocab, [b"aaa", b"bbb", b"ccc"])
        (split,) = corpus.splits
        self.assertEqual(split.name, "all")
        # Line 6 is empty, line 7 becomes empty once zzz is dropped.
        self.assertEqual([line for line, _ in split.docs], [1, 2, 3, 4, 5, 8])
        self.assertEqual(split.docs[4][1], [(1, 1), (2, 1), (3, 1)])
        self.assertEqual(split.docs[5][1], [(1, 3)])
        self.assertEqual(split.stats(3), {"docs": 6, "vocab": 3, "nnz": 16, "tokens": 18})

    def test_heldout_split_is_exact_deterministic_and_uses_train_vocab(self):
        texts = [f"common word{chr(97 + i % 7)}xx rare{i}zz" for i in range(200)]
        texts[10] = "rarity only"
        data = bows(*texts)
        a = tok.build_corpus(data, min_df=5, heldout_frac=0.1, seed=7)
        b = tok.build_corpus(data, min_df=5, heldout_frac=0.1, seed=7)
        c = tok.build_corpus(data, min_df=5, heldout_frac=0.1, seed=8)
        train, held = a.splits
        self.assertEqual((train.name, held.name), ("train", "heldout"))
        self.assertEqual([s.docs for s in a.splits], [s.docs for s in b.splits])
        self.assertNotEqual([line for line, _ in held.docs], [line for line, _ in c.splits[1].docs])
        train_lines = {line for line, _ in train.docs}
        held_lines = {line for line, _ in held.docs}
        self.assertFalse(train_lines & held_lines)
        # The 20 lines (round(0.1 * 200)) with the smallest keys are drawn; line 11
        # ("rarity only") is empty once "rarity" (1 doc) is dropped, wherever it went.
        drawn = set(sorted(range(1, 201), key=lambda line: tok.heldout_key(7, line))[:20])
        self.assertEqual(held_lines, drawn - {11})
        self.assertEqual(train_lines, set(range(1, 201)) - drawn - {11})
        self.assertNotIn(11, train_lines)
        # The vocabulary comes from the training docs only.
        train_words = {w for _, row in train.docs for w, _ in row}
        self.assertEqual(train_words, set(range(1, len(a.vocab) + 1)))
        self.assertNotIn(b"rarity", a.vocab)

    def test_rejects_bad_fraction(self):
        with self.assertRaises(ValueError):
            tok.build_corpus(bows("abc"), heldout_frac=1.0)


class FilesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write_input(self, n: int = 60) -> tuple[Path, Path]:
        words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape"]
        lines, meta = [], ["year\tname"]
        for i in range(n):
            picked = [words[(i * k) % len(words)] for k in range(1, 6)]
            rare = f"rare{chr(97 + i % 26)}{chr(97 + i // 26)}"
            lines.append(" ".join(picked) + f" The {i} {rare}" + ("" if i % 9 else " Apple"))
            meta.append(f"{1900 + i}\tdoc {i}")
        lines[5] = "the and of 42"  # empty after stop words
        docs = self.dir / "docs.txt"
        docs.write_text("\n".join(lines) + "\n")
        meta_path = self.dir / "meta.tsv"
        meta_path.write_text("\n".join(meta) + "\n")
        return docs, meta_path

    def test_written_files_round_trip_and_match_a_recount(self):
        docs, meta = self.write_input()
        stop = tok.load_stopwords()
        stats = tok.tokenize_file(
            docs, self.dir / "out", stop, heldout_frac=0.1, seed=3, meta_path=meta
        )
        out = self.dir / "out"
        input_lines = docs.read_text().split("\n")
        tsv = (out / "docs.tsv").read_text().splitlines()
        self.assertEqual(tsv[0], "split\tdoc\tline\tyear\tname")
        by_split = collections.defaultdict(dict)
        for row in tsv[1:]:
            split, doc, line, year, _ = row.split("\t")
            self.assertEqual(int(year), 1900 + int(line) - 1)
            by_split[split][int(doc)] = int(line)
        train_vocab = None
        for split in ("train", "heldout"):
            vocab, parsed, (d, w, nnz, rows) = read_uci(out / split)
            train_vocab = train_vocab or vocab
            self.assertEqual(vocab, train_vocab)
            self.assertEqual((d, w, nnz), (len(parsed), len(vocab), len(rows)))
            self.assertEqual(rows, sorted(rows))
            self.assertEqual(stats[split]["docs"], d)
            self.assertEqual(stats[split]["tokens"], sum(r[2] for r in rows))
            for doc, counts in parsed.items():
                line = by_split[split][doc]
                expect = collections.Counter(
                    t for t in tok.tokenize_text(input_lines[line - 1], stop) if t in vocab
                )
                self.assertEqual({vocab[w - 1]: c for w, c in counts.items()}, dict(expect))
        self.assertNotIn(6, by_split["train"].values())
        self.assertNotIn(6, by_split["heldout"].values())
        self.assertEqual(stats["full"]["docs"], 59)
        # Frequency order: "apple" is in every doc, plus the extra "Apple"s.
        self.assertEqual(train_vocab[0], b"apple")

    def test_output_bytes_are_deterministic(self):
        docs, meta = self.write_input()
        stop = tok.load_stopwords()
        tok.tokenize_file(docs, self.dir / "a", stop, heldout_frac=0.2, seed=1, meta_path=meta)
        tok.tokenize_file(docs, self.dir / "b", stop, heldout_frac=0.2, seed=1, meta_path=meta)
        a, b = self.dir / "a", self.dir / "b"
        files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
        self.assertEqual(len(files), 6)
        for rel in files:
            self.assertEqual((a / rel).read_bytes(), (b / rel).read_bytes(), rel)
        raw = (self.dir / "a" / "train" / "docword.txt.gz").read_bytes()
        self.assertEqual(raw[3], 0, "no FNAME flag")
        self.assertEqual(raw[4:8], b"\0\0\0\0", "mtime 0")

    def test_meta_row_count_must_match(self):
        docs, meta = self.write_input()
        meta.write_text("year\tname\n1\tx\n")
        with self.assertRaisesRegex(ValueError, "metadata rows"):
            tok.tokenize_file(docs, self.dir / "out", frozenset(), meta_path=meta)

    def test_cli_without_split_and_with_gzip_input(self):
        docs, _ = self.write_input()
        gz = self.dir / "docs.txt.gz"
        gz.write_bytes(gzip.compress(docs.read_bytes()))
        with redirect_stdout(io.StringIO()) as out:
            rc = tok.main([str(gz), "--out", str(self.dir / "cli"), "--min-df", "3"])
        self.assertEqual(rc, 0)
        self.assertIn('"all"', out.getvalue())
        vocab, parsed, (d, _, _, _) = read_uci(self.dir / "cli")
        self.assertEqual(d, 59)
        self.assertIn(b"apple", vocab)
        self.assertFalse((self.dir / "cli" / "train").exists())

    def test_cli_as_a_script_reports_errors(self):
        result = subprocess.run(
            [sys.executable, str(TOOLS / "tokenize.py"), str(self.dir / "missing.txt"),
             "--out", str(self.dir)],
            capture_output=True,
            text=True,
        )
        self.assertEqual(result.returncode, 1)
        self.assertIn("tokenize.py: error:", result.stderr)
        self.assertIn("missing.txt", result.stderr)


if __name__ == "__main__":
    unittest.main()
