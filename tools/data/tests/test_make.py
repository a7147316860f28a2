"""Tests of the document extraction in tools/data/make_*.py and of the corpora shipped in data/.

Run: python3 -m unittest discover -s tools/data/tests -v
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parent
REPO = TOOLS.parents[1]


def load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, TOOLS / file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tok = load("rotor_tokenize", "tokenize.py")
sotu = load("make_sotu", "make_sotu.py")
kernel = load("make_kernel", "make_kernel.py")
gcide = load("make_gcide", "make_gcide.py")
wordnet = load("make_wordnet", "make_wordnet.py")
debian = load("make_debian_desc", "make_debian_desc.py")


class SotuChunkTest(unittest.TestCase):
    def sentence(self, n: int, end: str = ".") -> str:
        return " ".join(["word"] * n) + end

    def test_chunks_are_whole_sentences_of_at_least_150_words(self):
        text = " ".join([self.sentence(100), self.sentence(60, "?"), self.sentence(149, "!"),
                         self.sentence(1), self.sentence(30)]).encode()
        keep = sotu.split_chunks(text)
        self.assertEqual([len(c.split()) for c in keep], [160, 150, 30])
        self.assertTrue(keep[1].endswith(b"word."))
        merge = sotu.split_chunks(text, merge_remainder=True)
        self.assertEqual([len(c.split()) for c in merge], [160, 180])
        self.assertEqual(b" ".join(merge), b" ".join(keep))

    def test_short_address_is_one_chunk(self):
        self.assertEqual(sotu.split_chunks(b"Too short. Really."), [b"Too short. Really."])
        self.assertEqual(
            sotu.split_chunks(b"Too short. Really.", merge_remainder=True), [b"Too short. Really."]
        )

    def test_abbreviation_inside_a_sentence_does_not_end_it_without_space(self):
        self.assertEqual(len(sotu.split_chunks(b"U.S.A. is " + b"x " * 200)), 1)


class KernelTest(unittest.TestCase):
    def test_c_comments_skip_strings_and_licence_blocks(self):
        source = (
            b"// SPDX-License-Identifier: GPL-2.0\n"
            b"/*\n * Copyright (C) 2020 Someone\n *\n * This program is free software; you can\n"
            b" * redistribute it under the GNU General Public License.\n */\n"
            b'#include "foo.h"\n'
            b"/* Scheduler core: picks the next task. */\n"
            b'static const char *s = "/* not a comment */ // nor this";\n'
            b"static char c = '\"'; /* after a quote char */\n"
            b"int x; // trailing note \\\n continued\n"
        )
        text = kernel.c_comments(source)
        self.assertIn(b"Scheduler core", text)
        self.assertIn(b"after a quote char", text)
        self.assertIn(b"continued", text)
        self.assertNotIn(b"not a comment", text)
        self.assertNotIn(b"nor this", text)
        self.assertNotIn(b"SPDX", text)
        self.assertNotIn(b"redistribute", text)

    def test_attribution_lines_are_removed_from_kept_comments(self):
        text = kernel.c_comments(
            b"/*\n * foo.c - the foo driver\n *\n * Copyright (C) 2001 Bob Smith\n"
            b" * Author: Alice Jones\n * Send patches to x@example.org\n"
            b" * The authors of this driver say hello.\n * (c) unlock the queue\n */\n"
        )
        self.assertIn(b"the foo driver", text)
        self.assertIn(b"(c) unlock the queue", text)
        self.assertIn(b"The authors of this driver say hello.", text)
        for gone in (b"Bob", b"Alice", b"example"):
            self.assertNotIn(gone, text)

    def test_kconfig_help_takes_indented_help_text_only(self):
        source = (
            b"config FOO\n\ttristate \"Foo support\"\n\tdepends on BAR\n\thelp\n"
            b"\t  Say Y to get foo.\n\n\t  More about foo.\n\nconfig BAZ\n\tbool \"baz\"\n"
            b"\t---help---\n\t  Baz help.\nendmenu\n"
        )
        self.assertEqual(
            kernel.kconfig_help(source), b"Say Y to get foo.\nMore about foo.\nBaz help."
        )

    def test_file_kinds(self):
        self.assertEqual(kernel.file_kind("kernel/sched/core.c"), "c")
        self.assertEqual(kernel.file_kind("include/linux/list.h"), "c")
        self.assertEqual(kernel.file_kind("Documentation/admin-guide/README.rst"), "doc")
        self.assertEqual(kernel.file_kind("Documentation/dev-tools/kasan.txt"), "doc")
        self.assertEqual(kernel.file_kind("arch/x86/Kconfig.debug"), "kconfig")
        self.assertIsNone(kernel.file_kind("README.rst"))
        self.assertIsNone(kernel.file_kind("drivers/gpu/drm/amd/include/asic_reg/gc/gc_9_0.h"))
        self.assertIsNone(kernel.file_kind("arch/x86/entry/entry_64.S"))


class DictionaryTest(unittest.TestCase):
    def test_dictd_numbers_and_blocks(self):
        self.assertEqual(gcide.dictd_number("A"), 0)
        self.assertEqual(gcide.dictd_number("Kj"), 10 * 64 + 35)
        with tempfile.TemporaryDirectory() as tmp:
            body = b"zero block\nAbc \\Abc\\ n. [1913 Webster]\n  A word.\n"
            dz = Path(tmp) / "x.dict.dz"
            dz.write_bytes(gzip.compress(body))
            index = Path(tmp) / "x.index"
            index.write_text("00-database-info\tA\tK\nabc\tL\tm\nAbc\tL\tm\n")
            items = gcide.entries(index, dz)
        self.assertEqual(len(items), 1)
        self.assertEqual(items[0][0], "abc")
        self.assertNotIn(b"Webster", items[0][1])
        self.assertIn(b"A word.", items[0][1])

    def test_wordnet_synset_lines(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "data.adj"
            path.write_bytes(
                b"  1 This software and database is being provided\n"
                b"00001740 00 a 01 able(a) 0 005 = 05207437 n 0000 | (usually followed by `to') "
                b"having the means; \"able to swim\"  \n"
                b"00002098 00 s 02 ice_cream 0 frozen 1 000 | a frozen dessert  \n"
            )
            got = wordnet.synsets(path)
        self.assertEqual(
            got,
            [
                (
                    "00001740",
                    b"able",
                    b"(usually followed by `to') having the means; \"able to swim\"",
                ),
                ("00002098", b"ice cream frozen", b"a frozen dessert"),
            ],
        )

    def test_debian_stanzas(self):
        text = (
            b"Package: foo\nDescription-md5: aa\nDescription-en: Foo tool\n first line\n .\n"
            b" second para\n\nPackage: bar\nDescription-md5: bb\nDescription-en: Bar\n"
        )
        self.assertEqual(
            debian.stanzas(text, Path("x")),
            [("foo", "aa", b"Foo tool\nfirst line\n\nsecond para"), ("bar", "bb", b"Bar")],
        )
        with self.assertRaises(SystemExit):
            debian.stanzas(b"Package: foo\n", Path("x"))


class ShippedDataTest(unittest.TestCase):
    """data/sotu-para and data/tiny are what tools/data/make_sotu.py builds."""

    def check_folder(self, folder: Path, raw_name: str) -> dict:
        stats = json.loads((folder / "stats.json").read_text())
        vocab = (folder / "train" / "vocab.txt").read_bytes()
        self.assertEqual(vocab, (folder / "heldout" / "vocab.txt").read_bytes())
        for split in ("train", "heldout"):
            with gzip.open(folder / split / "docword.txt.gz", "rt") as f:
                d, w, nnz = (int(next(f)) for _ in range(3))
                rows = sum(1 for _ in f)
            self.assertEqual((d, w, nnz), (stats[split]["docs"], vocab.count(b"\n"), rows))
        tsv = (folder / "docs.tsv").read_text().splitlines()
        self.assertEqual(len(tsv) - 1, stats["train"]["docs"] + stats["heldout"]["docs"])
        with gzip.open(folder / f"{raw_name}.txt.gz", "rb") as f:
            self.assertEqual(sum(1 for _ in f), stats["full"]["docs"])
        return stats

    def test_sotu_para(self):
        stats = self.check_folder(REPO / "data" / "sotu-para", "sotu-para")
        self.assertEqual(stats["full"]["docs"], 10650)

    def test_tiny_is_reproduced_by_tokenize_from_its_text(self):
        folder = REPO / "data" / "tiny"
        self.check_folder(folder, "tiny")
        with tempfile.TemporaryDirectory() as tmp:
            tok.tokenize_file(
                folder / "tiny.txt.gz", tmp, tok.load_stopwords(), heldout_frac=0.1, seed=1
            )
            for rel in ("train/docword.txt.gz", "train/vocab.txt", "heldout/docword.txt.gz"):
                self.assertEqual((Path(tmp) / rel).read_bytes(), (folder / rel).read_bytes(), rel)


if __name__ == "__main__":
    unittest.main()
