// Sharded reading of svmlight text (core/logreg/examples_input.h): byte ranges tile the file at
// line boundaries, the parts read back the whole file's examples in order, counts bound what is
// read, and an error in a later part names its line in the whole file.
#include "core/logreg/examples_input.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/io/byte_source.h"
#include "core/io/line_reader.h"

namespace rotor::logreg {
namespace {

const std::string kText =
    "1 1:1 2:0.5\n"
    "# comment only\n"
    "-1 3:2\n"
    "\n"
    "0 1:1 4:1 9:3  # trailing\n"
    "1 2:1\n"
    "-1 5:1 6:1\n"
    "1 7:1";  // no final newline

Examples whole() {
    core::LineReader r(core::memory_byte_source("t.svm", kText));
    return read_examples(r);
}

void expect_same(const Examples& a, const Examples& b) {
    EXPECT_EQ(a.labels, b.labels);
    EXPECT_EQ(a.offsets, b.offsets);
    EXPECT_EQ(a.keys, b.keys);
    EXPECT_EQ(a.values, b.values);
}

TEST(ExamplesInput, RangesTileTheFileAtLineStarts) {
    for (std::size_t parts = 1; parts <= 12; ++parts) {
        std::uint64_t at = 0;
        for (std::size_t p = 0; p < parts; ++p) {
            const TextRange r = text_range(kText, p, parts);
            EXPECT_EQ(r.begin, at) << parts << " " << p;
            EXPECT_LE(r.begin, r.end);
            if (r.begin > 0) {
                EXPECT_EQ(kText[r.begin - 1], '\n');
            }
            at = r.end;
        }
        EXPECT_EQ(at, kText.size());
    }
}

/// count_text by its definition, a byte at a time.
TextCount count_bytes(std::string_view s) {
    TextCount c;
    std::uint64_t on_line = 0;
    bool in_field = false;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        const char ch = i < s.size() ? s[i] : '\n';
        if (ch == '\n') {
            if (i < s.size()) ++c.newlines;
            if (on_line > 0) ++c.lines, c.fields += on_line - 1;
            on_line = 0;
            in_field = false;
        } else if (ch == ' ' || ch == '\t' || ch == '\r') {
            in_field = false;
        } else if (!in_field) {
            in_field = true;
            ++on_line;
        }
    }
    return c;
}

TEST(ExamplesInput, CountsEqualAByteAtATimeCount) {
    // Lines of every length around the 16-byte steps and the 255-step flush (lines over 4 KB),
    // blanks of each kind in runs, empty lines, a last line without '\n'.
    Rng rng(31);
    const char alphabet[] = {' ', ' ', '\t', '\r', 'a', '1', ':', '#', '\n'};
    for (int trial = 0; trial < 300; ++trial) {
        std::string s;
        const std::size_t size = trial < 100 ? rng.below(70) : rng.below(9000);
        for (std::size_t i = 0; i < size; ++i) {
            s.push_back(alphabet[rng.below(trial % 3 == 0 ? 8 : 9)]);  // some with no newline
        }
        const TextCount got = count_text(s, {0, s.size()});
        const TextCount want = count_bytes(s);
        ASSERT_EQ(got.newlines, want.newlines) << "trial " << trial;
        ASSERT_EQ(got.lines, want.lines) << "trial " << trial;
        ASSERT_EQ(got.fields, want.fields) << "trial " << trial;
    }
    const std::string dense(5000, 'x');  // one field of 5,000 bytes; then 2,500 of one byte
    EXPECT_EQ(count_text(dense, {0, dense.size()}).fields, 0u);
    std::string many;
    for (int i = 0; i < 2501; ++i) many += "x ";
    EXPECT_EQ(count_text(many, {0, many.size()}).fields, 2500u);
    EXPECT_EQ(count_text(many, {0, many.size()}).lines, 1u);
}

TEST(ExamplesInput, PartsReadTheWholeInOrderWithRightLineNumbers) {
    const Examples all = whole();
    for (std::size_t parts = 1; parts <= 12; ++parts) {
        Examples joined;
        std::uint64_t line = 1;
        for (std::size_t p = 0; p < parts; ++p) {
            const TextRange r = text_range(kText, p, parts);
            const TextCount c = count_text(kText, r);
            const Examples e = read_examples_range("t.svm", kText, r, line);
            EXPECT_LE(e.size(), c.lines);
            EXPECT_LE(e.nonzeros(), c.fields);
            for (std::size_t i = 0; i < e.size(); ++i)
                joined.add(e.labels[i], e.keys_of(i), e.values_of(i));
            line += c.newlines;
        }
        expect_same(joined, all);
    }
}

TEST(ExamplesInput, AnErrorInALaterPartNamesItsLineInTheFile) {
    const std::string bad = kText + "\n1 4:1 2:1\n";  // line 9
    bool seen = false;
    std::uint64_t line = 1;
    for (std::size_t p = 0; p < 3; ++p) {
        const TextRange r = text_range(bad, p, 3);
        try {
            read_examples_range("b.svm", bad, r, line);
        } catch (const InputError& e) {
            EXPECT_EQ(p, 2u);
            EXPECT_NE(std::string(e.what()).find("b.svm:9:7:"), std::string::npos) << e.what();
            seen = true;
        }
        line += count_text(bad, r).newlines;
    }
    EXPECT_TRUE(seen);
}

TEST(ExamplesInput, ShareOfSplitsContiguously) {
    const Examples all = whole();
    Examples joined;
    for (std::size_t p = 0; p < 4; ++p) {
        const Examples s = share_of(all, p, 4);
        for (std::size_t i = 0; i < s.size(); ++i)
            joined.add(s.labels[i], s.keys_of(i), s.values_of(i));
    }
    expect_same(joined, all);
}

}  // namespace
}  // namespace rotor::logreg
