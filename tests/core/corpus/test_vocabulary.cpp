#include "core/corpus/vocabulary.h"

#include <gtest/gtest.h>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

TEST(Vocabulary, LookupAddAndRoundTrip) {
    Vocabulary v = Vocabulary::from_words({"alpha", "beta"});
    EXPECT_EQ(v.add("gamma"), 2u);
    EXPECT_EQ(v.find("beta"), 1u);
    EXPECT_FALSE(v.find("delta").has_value());
    TempDir dir;
    v.save(dir.file("v.txt"));
    EXPECT_EQ(read_all(dir.file("v.txt")), "alpha\nbeta\ngamma\n");
    EXPECT_EQ(Vocabulary::load(dir.file("v.txt")), v);
    EXPECT_EQ(dir.count(), 1u);
}

TEST(Vocabulary, LoadStripsCarriageReturnsAndReadsGzip) {
    TempDir dir;
    const Vocabulary v = Vocabulary::load(dir.write_gz("v.txt.gz", "a\r\nb\r\n"));
    EXPECT_EQ(v.size(), 2u);
    EXPECT_EQ(v.word(1), "b");
}

TEST(Vocabulary, EmptyFileIsAnError) {
    TempDir dir;
    EXPECT_THROW(Vocabulary::load(dir.write("v.txt", "")), InputError);
}

TEST(Vocabulary, EmptyEntryNamesItsLine) {
    TempDir dir;
    const std::string p = dir.write("v.txt", "a\n  \nc\n");
    try {
        Vocabulary::load(p);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.line(), 2u);
        EXPECT_NE(std::string(e.what()).find(p + ":2:"), std::string::npos);
    }
}

TEST(Vocabulary, ATabInAWordIsRefusedWhereverTheWordComesFrom) {
    TempDir dir;
    const std::string p = dir.write("v.txt", "a\nnew\tyork\n");
    try {
        Vocabulary::load(p);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), p + ":2:4: vocabulary entry contains a tab (rotor's TSV "
                                             "files separate fields with tabs)");
    }
    Vocabulary v = Vocabulary::from_words({"a"});
    EXPECT_THROW(v.add("b\tc"), InputError);
}

TEST(Vocabulary, AByteOrderMarkIsNotPartOfTheFirstWord) {
    TempDir dir;
    const Vocabulary v = Vocabulary::load(dir.write("v.txt",
                                                    "\xEF\xBB\xBF"
                                                    "apple\nbanana\n"));
    EXPECT_EQ(v.word(0), "apple");
    EXPECT_EQ(v.find("apple"), 0u);
}

TEST(Vocabulary, DuplicateAddIsAnError) {
    Vocabulary v = Vocabulary::from_words({"x"});
    EXPECT_THROW(v.add("x"), InputError);
    EXPECT_THROW(v.add("bad\nword"), InputError);
    EXPECT_EQ(v.size(), 1u);
}

}  // namespace
}  // namespace rotor::core
