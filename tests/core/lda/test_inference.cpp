// Fold-in inference with φ fixed: the φ representation, vocabulary mapping by string, the
// topic-word TSV reader and its errors, and the fold-in kernel on planted topics.
#include "core/lda/inference.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/lda/fold_in_sampler.h"
#include "core/lda/model.h"

namespace rotor::lda {
namespace {

namespace fs = std::filesystem;

class TempDir {
  public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        path_ = fs::temp_directory_path() /
                (std::string("rotor_inference_") + info->name() + "_" + std::to_string(::getpid()));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() { fs::remove_all(path_); }
    std::string file(const std::string& name, const std::string& contents) const {
        const std::string p = (path_ / name).string();
        std::ofstream(p) << contents;
        return p;
    }

  private:
    fs::path path_;
};

// K planted topics over V = K * width words: topic k puts its mass uniformly on words
// [k*width, (k+1)*width). Counts are `per_word` per (word, own topic), so φ is nearly the truth.
LdaModel planted_model(std::uint32_t k_count, std::uint32_t width, Count per_word,
                       std::vector<double> alpha) {
    LdaModel m;
    m.info.num_topics = k_count;
    m.info.num_words = k_count * width;
    m.info.beta = 0.01;
    m.info.alpha = std::move(alpha);
    for (WordId w = 0; w < m.info.num_words; ++w) {
        m.word_topic.add_row({{w / width, per_word}});
        m.vocab.push_back("w" + std::to_string(w));
    }
    m.recompute_totals();
    return m;
}

TEST(TopicWordDistribution, MatchesTheSmoothedFormulaAndSumsToOne) {
    LdaModel m;
    m.info.num_topics = 3;
    m.info.num_words = 4;
    m.info.beta = 0.5;
    m.info.alpha = {1, 1, 1};
    m.word_topic.add_row({{0, 3}, {2, 1}});
    m.word_topic.add_row({});
    m.word_topic.add_row({{1, 5}});
    m.word_topic.add_row({{0, 2}, {1, 1}, {2, 4}});
    m.recompute_totals();
    const TopicWordDistribution phi = phi_from_model(m);
    ASSERT_EQ(phi.num_topics(), 3u);
    ASSERT_EQ(phi.num_words(), 4u);
    // n_k = {5, 6, 5}; V β = 2.
    EXPECT_DOUBLE_EQ(phi.phi(0, 0), 3.5 / 7.0);
    EXPECT_DOUBLE_EQ(phi.phi(1, 0), 0.5 / 7.0);
    EXPECT_DOUBLE_EQ(phi.phi(2, 1), 5.5 / 8.0);
    EXPECT_DOUBLE_EQ(phi.phi(3, 2), 4.5 / 7.0);
    for (TopicId k = 0; k < 3; ++k) {
        double sum = 0;
        for (WordId w = 0; w < 4; ++w) sum += phi.phi(w, k);
        EXPECT_NEAR(sum, 1.0, 1e-12) << "topic " << k;
        EXPECT_DOUBLE_EQ(phi.phi(1, k), m.phi(k, 0));  // a word with no counts: smoothing only
    }
}

TEST(TopicWordDistribution, SubsetOfRowsKeepsTheFullVocabularyInTheDenominator) {
    const LdaModel m = planted_model(2, 5, 10, {0.1, 0.1});
    const std::vector<WordId> words = {1, 7};
    const TopicWordDistribution part =
        phi_from_counts(m.word_topic, m.topic_totals, m.info.beta, words);
    const TopicWordDistribution full = phi_from_model(m);
    EXPECT_DOUBLE_EQ(part.phi(1, 0), full.phi(1, 0));
    EXPECT_DOUBLE_EQ(part.phi(7, 1), full.phi(7, 1));
    EXPECT_DOUBLE_EQ(part.phi(7, 0), full.phi(7, 0));
    // Rows not asked for are smoothing only.
    EXPECT_DOUBLE_EQ(part.phi(2, 0), m.info.beta / (50 + 10 * m.info.beta));
    EXPECT_TRUE(part.row_topics(9).empty());
}

TEST(FoldIn, RecoversTheMixtureOfPlantedTopics) {
    const LdaModel m = planted_model(3, 10, 1000, {0.1, 0.1, 0.1});
    const TopicWordDistribution phi = phi_from_model(m);
    // 60 tokens of topic 0's words, 30 of topic 2's, interleaved.
    std::vector<WordId> doc;
    for (int i = 0; i < 90; ++i) doc.push_back(i % 3 == 2 ? 20 + i % 10 : i % 10);
    const FoldInTables tables(phi, m.info.alpha);
    FoldInSampler sampler(tables);
    std::vector<double> theta(3);
    Rng rng = Rng::from({7, 1});
    sampler.infer(doc, FoldInOptions{}, rng, theta);
    EXPECT_NEAR(theta[0], 60.1 / 90.3, 0.01);
    EXPECT_NEAR(theta[1], 0.1 / 90.3, 0.01);
    EXPECT_NEAR(theta[2], 30.1 / 90.3, 0.01);
    EXPECT_NEAR(std::accumulate(theta.begin(), theta.end(), 0.0), 1.0, 1e-12);
}

TEST(FoldIn, AmbiguousWordsFollowTheUnambiguousOnes) {
    // Word 10 belongs to both topics; with 20 tokens of topic 1's own words beside it, its
    // tokens are explained by topic 1, so θ_1 stays high.
    LdaModel m = planted_model(2, 5, 100, {0.5, 0.5});
    m.vocab.push_back("shared");
    m.info.num_words = 11;
    m.word_topic.add_row({{0, 100}, {1, 100}});
    m.recompute_totals();
    const TopicWordDistribution phi = phi_from_model(m);
    std::vector<WordId> doc(20, 10);
    for (int i = 0; i < 20; ++i) doc.push_back(5 + i % 5);
    const FoldInTables tables(phi, m.info.alpha);
    FoldInSampler sampler(tables);
    std::vector<double> theta(2);
    Rng rng(3);
    sampler.infer(doc, FoldInOptions{200, 20, 3}, rng, theta);
    EXPECT_GT(theta[1], 0.8);
}

TEST(FoldIn, EmptyDocumentGetsThePriorMean) {
    const LdaModel m = planted_model(3, 4, 10, {0.5, 1.5, 3.0});
    const TopicWordDistribution phi = phi_from_model(m);
    const FoldInTables tables(phi, m.info.alpha);
    FoldInSampler sampler(tables);
    std::vector<double> theta(3, -1);
    Rng rng(1);
    sampler.infer({}, FoldInOptions{}, rng, theta);
    EXPECT_DOUBLE_EQ(theta[0], 0.1);
    EXPECT_DOUBLE_EQ(theta[1], 0.3);
    EXPECT_DOUBLE_EQ(theta[2], 0.6);
}

TEST(FoldIn, SameSeedSameThetaOtherSeedOtherTheta) {
    const LdaModel m = planted_model(4, 5, 20, {1, 1, 1, 1});
    const TopicWordDistribution phi = phi_from_model(m);
    const std::vector<WordId> doc = {0, 5, 10, 15, 1, 6, 11, 16, 2, 7};
    const FoldInTables tables(phi, m.info.alpha);
    FoldInSampler a(tables);
    FoldInSampler b(tables);
    std::vector<double> ta(4), tb(4), tc(4);
    Rng r1 = Rng::from({9, 4});
    Rng r2 = Rng::from({9, 4});
    Rng r3 = Rng::from({10, 4});
    a.infer(doc, FoldInOptions{}, r1, ta);
    b.infer(doc, FoldInOptions{}, r2, tb);
    a.infer(doc, FoldInOptions{}, r3, tc);
    EXPECT_EQ(ta, tb);
    EXPECT_NE(ta, tc);
}

TEST(FoldInOptions, ValidateNamesTheFlag) {
    EXPECT_NO_THROW((FoldInOptions{1, 0, 1}.validate()));
    try {
        FoldInOptions{0, 0, 1}.validate();
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--iterations");
    }
    try {
        FoldInOptions{10, 10, 1}.validate();
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--burn-in");
    }
}

TEST(MapToModel, MatchesWordsByStringAndSkipsUnknownOnes) {
    // Corpus vocabulary: 0 "b", 1 "zz", 2 "a", 3 "yy"; model: 0 "a", 1 "b", 2 "c".
    const auto corpus_vocab = core::Vocabulary::from_words({"b", "zz", "a", "yy"});
    const auto model_vocab = core::Vocabulary::from_words({"a", "b", "c"});
    core::CorpusBuilder builder(4);
    builder.begin_doc(10).add(0).add(1, 2).add(2);
    builder.begin_doc(11).add(1).add(3);  // only unknown words
    builder.begin_doc(12);                // empty
    builder.begin_doc(13).add(2, 3);
    const core::Corpus corpus = builder.build();
    const MappedCorpus m = map_to_model(corpus, &corpus_vocab, &model_vocab, 3, "new.txt");
    EXPECT_EQ(m.input_tokens, 9u);
    EXPECT_EQ(m.skipped_tokens, 4u);
    EXPECT_EQ(m.unknown_words, 2u);
    ASSERT_EQ(m.corpus.num_docs(), 4u);
    EXPECT_EQ(m.corpus.num_words(), 3u);
    EXPECT_EQ(
        std::vector<std::uint64_t>(m.corpus.doc_labels().begin(), m.corpus.doc_labels().end()),
        (std::vector<std::uint64_t>{10, 11, 12, 13}));
    const auto d0 = m.corpus.doc(0);
    EXPECT_EQ(std::vector<WordId>(d0.begin(), d0.end()), (std::vector<WordId>{1, 0}));
    EXPECT_EQ(m.corpus.doc_length(1), 0u);
    EXPECT_EQ(m.corpus.doc_length(2), 0u);
    const auto d3 = m.corpus.doc(3);
    EXPECT_EQ(std::vector<WordId>(d3.begin(), d3.end()), (std::vector<WordId>{0, 0, 0}));
}

TEST(MapToModel, WithoutVocabulariesIdsAreKeptAndLargeOnesUnknown) {
    const core::Corpus corpus = core::CorpusBuilder(6).doc({0, 5, 2, 4}).build();
    const MappedCorpus m = map_to_model(corpus, nullptr, nullptr, 4, "c");
    EXPECT_EQ(m.skipped_tokens, 2u);
    EXPECT_EQ(m.unknown_words, 2u);
    const auto d0 = m.corpus.doc(0);
    EXPECT_EQ(std::vector<WordId>(d0.begin(), d0.end()), (std::vector<WordId>{0, 2}));
}

TEST(MapToModel, OneSidedVocabularyIsAnInputError) {
    const core::Corpus corpus = core::CorpusBuilder(2).doc({0, 1}).build();
    const auto vocab = core::Vocabulary::from_words({"a", "b"});
    EXPECT_THROW(map_to_model(corpus, nullptr, &vocab, 2, "c"), InputError);
    EXPECT_THROW(map_to_model(corpus, &vocab, nullptr, 2, "c"), InputError);
    const auto short_vocab = core::Vocabulary::from_words({"a"});
    EXPECT_THROW(map_to_model(corpus, &short_vocab, &vocab, 2, "c"), InputError);
}

TEST(PhiTsv, NormalisesEachTopicAndSmoothsWithBeta) {
    TempDir dir;
    const std::string path = dir.file("phi.tsv",
                                      "# a comment\n"
                                      "apple\t0\t3\n"
                                      "pear\t0\t1\n"
                                      "\n"
                                      "pear\t1\t2.5\n"
                                      "plum\t1\t0.5e1\n"
                                      "kiwi\t1\t0\n");
    const PhiFile f = read_phi_tsv(path, 0.0);
    ASSERT_EQ(f.phi.num_topics(), 2u);
    ASSERT_EQ(f.vocab.size(), 3u);  // kiwi has no weight anywhere: left out
    EXPECT_FALSE(f.vocab.find("kiwi").has_value());
    const WordId apple = *f.vocab.find("apple");
    const WordId pear = *f.vocab.find("pear");
    const WordId plum = *f.vocab.find("plum");
    EXPECT_DOUBLE_EQ(f.phi.phi(apple, 0), 0.75);
    EXPECT_DOUBLE_EQ(f.phi.phi(pear, 0), 0.25);
    EXPECT_DOUBLE_EQ(f.phi.phi(plum, 0), 0.0);
    EXPECT_DOUBLE_EQ(f.phi.phi(pear, 1), 2.5 / 7.5);
    EXPECT_DOUBLE_EQ(f.phi.phi(plum, 1), 5.0 / 7.5);

    // With β > 0 kiwi is kept (smoothing only): V = 4.
    const PhiFile g = read_phi_tsv(path, 0.5);
    ASSERT_EQ(g.vocab.size(), 4u);
    EXPECT_EQ(g.file_words, 4u);
    EXPECT_EQ(g.smoothing_only_words, 0u);
    EXPECT_DOUBLE_EQ(g.phi.phi(*g.vocab.find("apple"), 0), 3.5 / 6.0);
    EXPECT_DOUBLE_EQ(g.phi.phi(*g.vocab.find("plum"), 0), 0.5 / 6.0);
    EXPECT_DOUBLE_EQ(g.phi.phi(*g.vocab.find("kiwi"), 1), 0.5 / 9.5);
}

TEST(PhiTsv, WithBetaTheCorpusWordsTheFileLacksGetSmoothingAndCountInV) {
    TempDir dir;
    const std::string path = dir.file("phi.tsv", "apple\t0\t3\npear\t0\t1\npear\t1\t2\n");
    const core::Vocabulary corpus = core::Vocabulary::from_words({"fig", "pear", "apple", "date"});
    // β = 0: the extra words would have probability 0, so they stay out (unknown).
    const PhiFile f = read_phi_tsv(path, 0.0, &corpus);
    EXPECT_EQ(f.vocab.size(), 2u);
    EXPECT_EQ(f.smoothing_only_words, 0u);
    EXPECT_FALSE(f.vocab.find("fig").has_value());
    // β = 1: fig and date are appended after the file's words; V = 4.
    const PhiFile g = read_phi_tsv(path, 1.0, &corpus);
    ASSERT_EQ(g.vocab.size(), 4u);
    EXPECT_EQ(g.file_words, 2u);
    EXPECT_EQ(g.smoothing_only_words, 2u);
    EXPECT_EQ(*g.vocab.find("fig"), 2u);
    EXPECT_EQ(*g.vocab.find("date"), 3u);
    EXPECT_DOUBLE_EQ(g.phi.phi(*g.vocab.find("apple"), 0), 4.0 / 8.0);
    EXPECT_DOUBLE_EQ(g.phi.phi(*g.vocab.find("fig"), 0), 1.0 / 8.0);
    EXPECT_DOUBLE_EQ(g.phi.phi(*g.vocab.find("date"), 1), 1.0 / 6.0);
    for (TopicId k = 0; k < 2; ++k) {
        double sum = 0;
        for (WordId w = 0; w < 4; ++w) sum += g.phi.phi(w, k);
        EXPECT_NEAR(sum, 1.0, 1e-12);
    }
}

struct BadPhi {
    const char* name;
    const char* contents;
    const char* fragment;  // expected in what()
};

class PhiTsvErrors : public ::testing::TestWithParam<BadPhi> {};

TEST_P(PhiTsvErrors, AreInputErrorsWithTheLine) {
    TempDir dir;
    const std::string path = dir.file("phi.tsv", GetParam().contents);
    try {
        read_phi_tsv(path, 0.0);
        FAIL() << "no error for " << GetParam().name;
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), path);
        EXPECT_NE(std::string(e.what()).find(GetParam().fragment), std::string::npos) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PhiTsvErrors,
    ::testing::Values(
        BadPhi{"two_fields", "a\t0\t1\nb\t0\nc\t0\t1\n", ":2:1: expected 3"},
        BadPhi{"four_fields", "a\t0\t1\nb\t0\t1\nc\t0\t1\t2\n", ":3:1: expected 3"},
        BadPhi{"space_separated", "a 0 1\n", ":1:1: expected 3"},
        BadPhi{"empty_word", "\t0\t1\n", ":1:1: empty word"},
        BadPhi{"topic_text", "a\t0\t1\nb\tx\t1\n", ":2:3: topic 'x'"},
        BadPhi{"negative_topic", "a\t-1\t1\n", ":1:3: topic '-1'"},
        BadPhi{"huge_topic", "a\t99999999999\t1\n", ":1:3: topic 99999999999"},
        BadPhi{"weight_text", "a\t0\t1\nb\t0\tlots\n", ":2:5: weight 'lots'"},
        BadPhi{"negative_weight", "a\t0\t-2\n", ":1:5: weight -2"},
        BadPhi{"nan_weight", "a\t0\tnan\n", ":1:5: weight nan"},
        BadPhi{"inf_weight", "a\t0\tinf\n", ":1:5: weight inf"},
        BadPhi{"trailing_junk", "a\t0\t1.5x\n", ":1:5: weight '1.5x'"},
        BadPhi{"duplicate", "a\t0\t1\nb\t0\t1\na\t0\t2\n", ":3:1: word 'a' topic 0 repeats line 1"},
        BadPhi{"empty", "# nothing\n", "no word-topic rows"},
        BadPhi{"topic_without_weight", "a\t0\t1\nb\t2\t1\n", "topic 1 has no weight"}),
    [](const ::testing::TestParamInfo<BadPhi>& p) { return std::string(p.param.name); });

TEST(PhiTsv, MissingFileIsAnInputError) {
    EXPECT_THROW(read_phi_tsv("/nonexistent/phi.tsv", 0.0), InputError);
}

}  // namespace
}  // namespace rotor::lda
