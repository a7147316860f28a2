#include "core/corpus/text_corpus.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::TempDir;

std::vector<std::string> tokens_of(std::string_view text, std::uint32_t min_len = 3,
                                   std::uint32_t max_len = 25) {
    std::vector<std::string> out;
    tokenize(text, min_len, max_len, [&](std::string_view t) { out.emplace_back(t); });
    return out;
}

std::vector<std::string> doc_words(const Corpus& c, const Vocabulary& v, DocId d) {
    std::vector<std::string> out;
    for (WordId w : c.doc(d)) out.push_back(v.word(w));
    return out;
}

TEST(Tokenize, MaximalRunsOfAsciiLettersLowercased) {
    EXPECT_EQ(tokens_of("Hello, WORLD! it's x86_64 caf\xc3\xa9 re-enter"),
              (std::vector<std::string>{"hello", "world", "caf", "enter"}));
    EXPECT_EQ(tokens_of("[abc]`def`{ghi}@jkl"),
              (std::vector<std::string>{"abc", "def", "ghi", "jkl"}));
}

TEST(Tokenize, LengthBoundsAreInclusive) {
    const std::string w25(25, 'a');
    const std::string w26(26, 'b');
    EXPECT_EQ(tokens_of("ab abc " + w25 + " " + w26), (std::vector<std::string>{"abc", w25}));
    EXPECT_EQ(tokens_of("a ab abc abcd", 1, 2), (std::vector<std::string>{"a", "ab"}));
}

TEST(DefaultStopwords, IsTheCompiledInEnglishList) {
    const StopWords& sw = default_stopwords();
    EXPECT_EQ(sw.size(), 301u);
    EXPECT_TRUE(sw.contains("the"));
    EXPECT_TRUE(sw.contains("yours"));
    EXPECT_FALSE(sw.contains("topic"));
}

TEST(ReadText, DropsStopWordsShortTokensRareWordsAndEmptyDocs) {
    TempDir dir;
    const std::string path = dir.write("docs.txt",
                                       "The cat sat on the mat.\n"
                                       "\n"
                                       "A dog and a cat.\n"
                                       "of the and\n"
                                       "Cat! DOG? bird\n");
    TextOptions opt;
    opt.min_df = 2;
    Vocabulary vocab;
    const Corpus c = read_text(path, opt, &vocab);
    // cat: 3 docs, 3 tokens; dog: 2 docs; sat, mat, bird: 1 doc each (dropped by min_df).
    ASSERT_EQ(vocab.size(), 2u);
    EXPECT_EQ(vocab.word(0), "cat");
    EXPECT_EQ(vocab.word(1), "dog");
    ASSERT_EQ(c.num_docs(), 3u);
    EXPECT_EQ(std::vector<std::uint64_t>(c.doc_labels().begin(), c.doc_labels().end()),
              (std::vector<std::uint64_t>{1, 3, 5}));
    EXPECT_EQ(doc_words(c, vocab, 2), (std::vector<std::string>{"cat", "dog"}));
}

TEST(ReadText, VocabularyOrderIsFrequencyThenAlphabetical) {
    TempDir dir;
    const std::string path = dir.write("d.txt", "zeta beta alpha beta\ngamma zeta zeta alpha\n");
    TextOptions opt;
    opt.min_df = 1;
    Vocabulary vocab;
    const Corpus c = read_text(path, opt, &vocab);
    EXPECT_EQ(std::vector<std::string>(vocab.words().begin(), vocab.words().end()),
              (std::vector<std::string>{"zeta", "alpha", "beta", "gamma"}));
    EXPECT_EQ(c.num_tokens(), 8u);
    EXPECT_EQ(doc_words(c, vocab, 0), (std::vector<std::string>{"zeta", "beta", "alpha", "beta"}));
}

TEST(ReadText, MaxVocabKeepsTheMostFrequentAndDropsDocsLeftEmpty) {
    TempDir dir;
    const std::string path = dir.write("d.txt", "aaa aaa bbb\nccc\nbbb aaa\n");
    TextOptions opt;
    opt.min_df = 1;
    opt.max_vocab = 2;
    Vocabulary vocab;
    const Corpus c = read_text(path, opt, &vocab);
    EXPECT_EQ(vocab.size(), 2u);
    EXPECT_FALSE(vocab.find("ccc").has_value());
    EXPECT_EQ(c.num_docs(), 2u);
    EXPECT_EQ(c.doc_labels()[1], 3u);
}

TEST(ReadText, CustomAndDisabledStopWords) {
    TempDir dir;
    const std::string path = dir.write("d.txt", "the kernel the driver\n");
    TextOptions opt;
    opt.min_df = 1;
    opt.stopwords = nullptr;
    Vocabulary vocab;
    read_text(path, opt, &vocab);
    EXPECT_TRUE(vocab.find("the").has_value());

    const StopWords custom = load_stopwords(dir.write("sw.txt", "# comment\nKERNEL\n\n"));
    EXPECT_EQ(custom.size(), 1u);
    opt.stopwords = &custom;
    read_text(path, opt, &vocab);
    EXPECT_EQ(std::vector<std::string>(vocab.words().begin(), vocab.words().end()),
              (std::vector<std::string>{"the", "driver"}));
}

TEST(ReadText, FixedVocabularyMapsTokensAndDropsUnknownWords) {
    TempDir dir;
    const Vocabulary fixed = Vocabulary::from_words({"dog", "cat"});
    TextOptions opt;
    opt.fixed_vocab = &fixed;
    Vocabulary out;
    const Corpus c = read_text(dir.write("d.txt", "cat bird\nfish\ndog cat\n"), opt, &out);
    EXPECT_EQ(out, fixed);
    EXPECT_EQ(c.num_docs(), 2u);
    EXPECT_EQ(std::vector<WordId>(c.doc(1).begin(), c.doc(1).end()), (std::vector<WordId>{0, 1}));
}

TEST(ReadText, GzipInputGivesTheSameCorpus) {
    TempDir dir;
    const std::string text = "alpha beta\nbeta gamma\n";
    TextOptions opt;
    opt.min_df = 1;
    EXPECT_EQ(read_text(dir.write("a.txt", text), opt, nullptr),
              read_text(dir.write_gz("a.gz", text), opt, nullptr));
}

TEST(TextOptions, ValidateNamesTheFlag) {
    TextOptions opt;
    opt.max_len = 2;
    try {
        opt.validate();
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--max-len");
    }
    opt = TextOptions{};
    opt.min_df = 0;
    EXPECT_THROW(opt.validate(), ConfigError);
}

TEST(Tokenize, PatternsAlnumAndUnicode) {
    const std::string text = "Win98 caf\xc3\xa9 x86_64 STRASSE";
    std::vector<std::string> out;
    const auto collect = [&](std::string_view t) { out.emplace_back(t); };
    tokenize(text, 2, 25, collect, TokenPattern::kAlnum);
    EXPECT_EQ(out, (std::vector<std::string>{"win98", "caf", "x86", "64", "strasse"}));
    out.clear();
    tokenize(text, 2, 25, collect, TokenPattern::kUnicode);
    EXPECT_EQ(out, (std::vector<std::string>{"win98", "caf\xc3\xa9", "x86", "64", "strasse"}));
    EXPECT_EQ(parse_token_pattern("alnum"), TokenPattern::kAlnum);
    EXPECT_EQ(token_pattern_name(parse_token_pattern("unicode")), std::string("unicode"));
    EXPECT_THROW(parse_token_pattern("regex"), ConfigError);
}

TEST(ReadText, MaxDfDropsWordsInMoreThanThatShareOfDocuments) {
    TempDir dir;
    // kernel: 4 of 4 docs; driver: 2 of 4; memory: 1 of 4.
    const std::string path =
        dir.write("d.txt", "kernel driver\nkernel memory\nkernel driver\nkernel\n");
    TextOptions opt;
    opt.min_df = 1;
    opt.max_df = 0.5;  // at most 2 documents
    Vocabulary vocab;
    TextReport report;
    const Corpus c = read_text(path, opt, &vocab, &report);
    EXPECT_FALSE(vocab.find("kernel").has_value());
    EXPECT_TRUE(vocab.find("driver").has_value());
    EXPECT_TRUE(vocab.find("memory").has_value());
    // The last document had only "kernel": pruning left it empty.
    EXPECT_EQ(c.num_docs(), 3u);
    EXPECT_EQ(report.docs_with_tokens, 4u);
    EXPECT_EQ(report.docs_emptied, 1u);
    opt.max_df = 0;
    EXPECT_THROW(opt.validate(), ConfigError);
    opt.max_df = 1.5;
    EXPECT_THROW(opt.validate(), ConfigError);
}

TEST(ReadText, FixedVocabularyReportsDocumentsLeftEmpty) {
    TempDir dir;
    const Vocabulary fixed = Vocabulary::from_words({"dog", "cat"});
    TextOptions opt;
    opt.fixed_vocab = &fixed;
    TextReport report;
    const Corpus c =
        read_text(dir.write("d.txt", "cat bird\nfish\n\ndog cat\n"), opt, nullptr, &report);
    EXPECT_EQ(c.num_docs(), 2u);
    EXPECT_EQ(report.docs_with_tokens, 3u);  // the blank line is no document
    EXPECT_EQ(report.docs_emptied, 1u);      // "fish"
}

TEST(ReadTextFiles, OneDocumentPerFileLabelledByPosition) {
    TempDir dir;
    const std::string a = dir.write("a.txt", "alpha beta\nbeta\n");
    const std::string b = dir.write("b.txt", "the of\n");  // stop words only
    const std::string c = dir.write_gz("c.txt.gz", "gamma\nalpha\n");
    dir.write("notes.md", "not a document\n");
    const std::vector<std::string> files = list_text_files(dir.file(""));
    EXPECT_EQ(files, (std::vector<std::string>{a, b, c}));
    TextOptions opt;
    opt.min_df = 1;
    Vocabulary vocab;
    TextReport report;
    const Corpus corpus = read_text_files(files, opt, &vocab, &report);
    ASSERT_EQ(corpus.num_docs(), 2u);
    EXPECT_EQ(corpus.doc_labels()[0], 1u);
    EXPECT_EQ(corpus.doc_labels()[1], 3u);
    EXPECT_EQ(doc_words(corpus, vocab, 0), (std::vector<std::string>{"alpha", "beta", "beta"}));
    EXPECT_EQ(doc_words(corpus, vocab, 1), (std::vector<std::string>{"gamma", "alpha"}));
    EXPECT_EQ(report.docs_with_tokens, 3u);
    EXPECT_EQ(report.docs_emptied, 1u);
}

TEST(ReadTextFiles, AFolderWithoutTextFilesIsRefused) {
    TempDir dir;
    dir.write("x.md", "alpha\n");
    EXPECT_THROW(list_text_files(dir.file("")), InputError);
    EXPECT_THROW(list_text_files(dir.file("missing")), InputError);
}

TEST(ReadText, MissingFile) {
    TempDir dir;
    EXPECT_THROW(read_text(dir.file("none.txt"), TextOptions{}, nullptr), InputError);
}

}  // namespace
}  // namespace rotor::core
