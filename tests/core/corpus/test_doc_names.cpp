#include "core/corpus/doc_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/corpus/corpus.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::TempDir;

TEST(DocNames, CleanReplacesFieldAndLineBreaks) {
    EXPECT_EQ(clean_doc_name("a\tb\nc\rd.txt"), "a_b_c_d.txt");
    EXPECT_EQ(clean_doc_name(""), "_");
}

TEST(DocNames, RoundTripAndCountChecked) {
    TempDir dir;
    const std::vector<std::string> names{"one.txt", "two words.txt"};
    const std::string path = dir.file("c.bin.docs");
    save_doc_names(names, path);
    EXPECT_EQ(load_doc_names(path, 2), names);
    EXPECT_THROW(load_doc_names(path, 3), InputError);
    EXPECT_THROW(load_doc_names(path, 1), InputError);
    EXPECT_THROW(load_doc_names(dir.write("e.docs", "a\n\nb\n"), 3), InputError);
}

TEST(DocNames, NameIsTheNameElseTheLabel) {
    const std::vector<std::uint64_t> labels{4, 9};
    const std::vector<std::string> names{"x", "y"};
    EXPECT_EQ(doc_name(names, labels, 1), "y");
    EXPECT_EQ(doc_name({}, labels, 1), "9");
}

TEST(DocNames, LoadCorpusReadsTheSiblingNamesFile) {
    TempDir dir;
    const Corpus c = CorpusBuilder(3).doc({0, 1}).doc({2}).build();
    const std::string path = dir.file("c.bin");
    save_binary_corpus(c, path);
    EXPECT_TRUE(load_corpus(path, "").doc_names.empty());
    save_doc_names({"a.txt", "b.txt"}, doc_names_path(path));
    EXPECT_EQ(load_corpus(path, "").doc_names, (std::vector<std::string>{"a.txt", "b.txt"}));
    save_doc_names({"a.txt"}, doc_names_path(path));
    EXPECT_THROW(load_corpus(path, ""), InputError);
}

}  // namespace
}  // namespace rotor::core
