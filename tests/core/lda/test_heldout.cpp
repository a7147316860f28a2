// Held-out document completion: exact scores where fold-in cannot matter (K = 1, uniform φ),
// planted topics beating a uniform model, equal results over every φ source, and the same
// result at any number of threads.
#include "core/lda/heldout.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/base/error.h"
#include "core/corpus/vocabulary.h"
#include "core/lda/synthetic_corpus.h"
#include "core/lda/word_topic_table.h"
#include "tests/core/lda/lda_test_util.h"

namespace rotor::lda {
namespace {

using testing::thread_loop;

struct Planted {
    core::Corpus train;
    core::Corpus heldout;
    std::vector<std::vector<double>> phi;  // K rows of V
};

Planted planted(std::uint32_t k_count = 6, std::uint32_t vocab = 300) {
    SyntheticSpec spec;
    spec.num_docs = 400;
    spec.vocab_size = vocab;
    spec.num_topics = k_count;
    spec.mean_doc_length = 50;
    spec.doc_alpha = 0.2;
    spec.seed = 5;
    const SyntheticCorpus s = make_synthetic_corpus(spec);
    std::vector<std::vector<WordId>> train_docs, heldout_docs;
    for (std::uint32_t d = 0; d < s.num_docs(); ++d) {
        std::vector<WordId> doc(
            s.word_ids.begin() + static_cast<std::ptrdiff_t>(s.doc_offsets[d]),
            s.word_ids.begin() + static_cast<std::ptrdiff_t>(s.doc_offsets[d + 1]));
        (d < 300 ? train_docs : heldout_docs).push_back(std::move(doc));
    }
    return {core::Corpus::from_docs(std::move(train_docs), vocab),
            core::Corpus::from_docs(std::move(heldout_docs), vocab), s.topic_word};
}

TopicWordDistribution dense_phi(const std::vector<std::vector<double>>& rows, WordId vocab) {
    std::vector<double> totals(rows.size(), 0.0);
    for (std::size_t k = 0; k < rows.size(); ++k)
        for (const double p : rows[k]) totals[k] += p;
    TopicWordDistribution phi(vocab, totals, 0.0);
    for (WordId w = 0; w < vocab; ++w) {
        std::vector<std::pair<TopicId, double>> row;
        for (std::size_t k = 0; k < rows.size(); ++k)
            if (rows[k][w] > 0) row.emplace_back(static_cast<TopicId>(k), rows[k][w]);
        phi.append_row(w, row);
    }
    return phi;
}

TEST(Heldout, OneTopicScoresOddTokensExactly) {
    // K = 1: θ = 1 whatever fold-in does, so the score is Σ_odd ln φ_w.
    const std::vector<double> weights = {1, 2, 3, 4};
    const TopicWordDistribution phi = dense_phi({weights}, 4);
    const core::Corpus c = core::Corpus::from_docs({{0, 1, 2, 3, 3}, {2}, {}, {1, 1}}, 4);
    const HeldoutEvaluator ev(c, FoldInOptions{5, 1, 1});
    const HeldoutResult r = ev.evaluate(phi, std::vector<double>{0.5});
    EXPECT_EQ(r.docs, 2u);           // {2} and {} have no odd position
    EXPECT_EQ(r.fit_tokens, 5u);     // 3 + 1 + 0 + 1
    EXPECT_EQ(r.scored_tokens, 3u);  // positions 1, 3 of doc 0; position 1 of doc 3
    const double expected = std::log(0.2) + std::log(0.4) + std::log(0.2);
    EXPECT_NEAR(r.loglik, expected, 1e-12);
    EXPECT_NEAR(r.loglik_per_token(), expected / 3, 1e-12);
    EXPECT_NEAR(r.perplexity(), std::exp(-expected / 3), 1e-9);
}

TEST(Heldout, UniformPhiHasPerplexityV) {
    const Planted p = planted();
    const std::vector<std::vector<double>> uniform(6, std::vector<double>(300, 1.0));
    const HeldoutEvaluator ev(p.heldout, FoldInOptions{10, 2, 3});
    const HeldoutResult r = ev.evaluate(dense_phi(uniform, 300), std::vector<double>(6, 0.1));
    EXPECT_GT(r.scored_tokens, 1000u);
    EXPECT_NEAR(r.perplexity(), 300.0, 1e-6);
}

TEST(Heldout, TruePlantedTopicsBeatUniformAndShuffledOnes) {
    const Planted p = planted();
    const std::vector<double> alpha(6, 0.2);
    const HeldoutEvaluator ev(p.heldout, FoldInOptions{30, 10, 3});
    const HeldoutResult truth = ev.evaluate(dense_phi(p.phi, 300), alpha);
    const std::vector<std::vector<double>> uniform(6, std::vector<double>(300, 1.0));
    const HeldoutResult flat = ev.evaluate(dense_phi(uniform, 300), alpha);
    // One topic for everything: the corpus's unigram distribution (a mixture of all topics).
    std::vector<double> unigram(300, 0.0);
    for (const auto& row : p.phi)
        for (WordId w = 0; w < 300; ++w) unigram[w] += row[w] / 6 + 1e-9;
    const HeldoutResult one = ev.evaluate(dense_phi({unigram}, 300), std::vector<double>{1.0});
    EXPECT_GT(truth.loglik_per_token(), one.loglik_per_token() + 0.3);
    EXPECT_GT(one.loglik_per_token(), flat.loglik_per_token());
    EXPECT_LT(truth.perplexity(), 0.75 * one.perplexity());
}

/// The planted topics blurred: planted supports are disjoint, which would leave fold-in no
/// choice; blurred, every token's topic is really sampled.
TopicWordDistribution blurred_phi(const Planted& p) {
    std::vector<std::vector<double>> blurred = p.phi;
    for (auto& row : blurred)
        for (double& x : row) x += 0.002;
    return dense_phi(blurred, 300);
}

TEST(Heldout, SameResultAtAnyThreadCount) {
    const Planted p = planted();
    const HeldoutEvaluator ev(p.heldout, FoldInOptions{20, 5, 11});
    const TopicWordDistribution phi = blurred_phi(p);
    const std::vector<double> alpha = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    const HeldoutResult serial = ev.evaluate(phi, alpha);
    for (const int threads : {1, 2, 3, 7}) {
        const HeldoutResult r = ev.evaluate(phi, alpha, thread_loop(threads));
        EXPECT_EQ(r.loglik, serial.loglik) << threads << " threads";
        EXPECT_EQ(r.scored_tokens, serial.scored_tokens);
        EXPECT_EQ(r.docs, serial.docs);
    }
    // A different seed gives a (slightly) different estimate: the seed is really used.
    const HeldoutEvaluator other(p.heldout, FoldInOptions{20, 5, 12});
    EXPECT_NE(other.evaluate(phi, alpha).loglik, serial.loglik);
}

TEST(Heldout, DocumentRangesSumToTheWholeEvaluation) {
    const Planted p = planted();
    const HeldoutEvaluator ev(p.heldout, FoldInOptions{20, 5, 11});
    const TopicWordDistribution phi = blurred_phi(p);
    const std::vector<double> alpha = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
    const HeldoutResult whole = ev.evaluate(phi, alpha);
    const DocId n = p.heldout.num_docs();
    ASSERT_GT(n, 3u);
    // Ranges as the ranks of the distributed trainer take them, one of them empty.
    for (const std::vector<DocId>& cuts :
         {std::vector<DocId>{0, n}, std::vector<DocId>{0, 1, n / 2, n / 2, n},
          std::vector<DocId>{0, n - 1, n}}) {
        std::vector<HeldoutResult> all;
        for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
            const auto part = ev.evaluate_docs(phi, alpha, cuts[i], cuts[i + 1], thread_loop(2));
            EXPECT_EQ(part.size(), cuts[i + 1] - cuts[i]);
            all.insert(all.end(), part.begin(), part.end());
        }
        const HeldoutResult sum = HeldoutEvaluator::sum(all);
        EXPECT_EQ(sum.loglik, whole.loglik);  // bit for bit: per-document generators, in order
        EXPECT_EQ(sum.scored_tokens, whole.scored_tokens);
        EXPECT_EQ(sum.fit_tokens, whole.fit_tokens);
        EXPECT_EQ(sum.docs, whole.docs);
    }
}

TEST(Heldout, TableModelAndCountsSourcesAgree) {
    // Counts from the planted topics: word w gets round(200 φ_kw) tokens of topic k.
    const Planted p = planted(4, 120);
    LdaModel m;
    m.info.num_topics = 4;
    m.info.num_words = 120;
    m.info.beta = 0.05;
    m.info.alpha = {0.3, 0.3, 0.3, 0.3};
    std::vector<std::uint64_t> freq(120, 0);
    for (WordId w = 0; w < 120; ++w) {
        std::vector<std::pair<TopicId, Count>> row;
        for (TopicId k = 0; k < 4; ++k) {
            const auto c = static_cast<Count>(std::lround(200 * 120 * p.phi[k][w] / 4));
            if (c > 0) row.emplace_back(k, c);
            freq[w] += c;
        }
        m.word_topic.add_row(row);
    }
    m.recompute_totals();
    WordTopicTable table(4, freq);
    for (WordId w = 0; w < 120; ++w)
        for (auto i = m.word_topic.offsets[w]; i < m.word_topic.offsets[w + 1]; ++i)
            for (Count c = 0; c < m.word_topic.counts[i]; ++c)
                table.increment(w, m.word_topic.topics[i]);
    LdaParams params;
    params.num_topics = 4;
    params.alpha = 0.3;
    params.beta = 0.05;

    const HeldoutEvaluator ev(p.heldout, FoldInOptions{10, 2, 1});
    const HeldoutResult a = ev.evaluate(m);
    const HeldoutResult b = ev.evaluate(table, m.topic_totals, params);
    const HeldoutResult c = ev.evaluate(phi_from_model(m), m.info.alpha);
    EXPECT_EQ(a.scored_tokens, b.scored_tokens);
    EXPECT_DOUBLE_EQ(a.loglik, b.loglik);
    EXPECT_DOUBLE_EQ(a.loglik, c.loglik);
}

TEST(Heldout, ExportedPhiWithTheCorpusVocabularyMatchesTheModel) {
    // A model in which words 7 and 50 have no counts at all; its export (nonzero counts only,
    // in topic-major order) omits them. With β > 0 and the corpus's vocabulary, read_phi_tsv
    // puts them back with smoothing only, V is the model's, and the evaluation is bit for bit
    // the model's. With β = 0 they are unknown (probability 0), so their tokens are skipped.
    const Planted p = planted(4, 120);
    LdaModel m;
    m.info.num_topics = 4;
    m.info.num_words = 120;
    m.info.beta = 0.05;
    m.info.alpha = {0.2, 0.2, 0.2, 0.2};
    std::vector<std::string> words;
    for (WordId w = 0; w < 120; ++w) {
        words.push_back("w" + std::to_string(w));
        std::vector<std::pair<TopicId, Count>> row;
        for (TopicId k = 0; k < 4; ++k) {
            const auto c = static_cast<Count>(std::lround(200 * 120 * p.phi[k][w] / 4));
            if (c > 0 && w != 7 && w != 50) row.emplace_back(k, c);
        }
        m.word_topic.add_row(row);
    }
    m.recompute_totals();
    const core::Vocabulary vocab = core::Vocabulary::from_words(words);
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("rotor_heldout_phi_" + std::to_string(::getpid()) + ".tsv"))
                                 .string();
    {
        std::ofstream out(path);
        for (TopicId k = 0; k < 4; ++k)
            for (WordId w = 0; w < 120; ++w)
                for (auto i = m.word_topic.offsets[w]; i < m.word_topic.offsets[w + 1]; ++i)
                    if (m.word_topic.topics[i] == k)
                        out << words[w] << '\t' << k << '\t' << m.word_topic.counts[i] << '\n';
    }
    std::uint64_t absent_tokens = 0;
    for (const WordId w : p.heldout.word_ids()) absent_tokens += (w == 7 || w == 50) ? 1 : 0;
    ASSERT_GT(absent_tokens, 0u);

    const FoldInOptions options{10, 2, 1};
    const HeldoutResult ref = HeldoutEvaluator(p.heldout, options).evaluate(m);

    const PhiFile smoothed = read_phi_tsv(path, 0.05, &vocab);
    EXPECT_EQ(smoothed.vocab.size(), 120u);
    EXPECT_EQ(smoothed.smoothing_only_words, 2u);
    const MappedCorpus mapped =
        map_to_model(p.heldout, &vocab, &smoothed.vocab, smoothed.vocab.size(), "heldout");
    EXPECT_EQ(mapped.skipped_tokens, 0u);
    const HeldoutResult got =
        HeldoutEvaluator(mapped.corpus, options).evaluate(smoothed.phi, m.info.alpha);
    EXPECT_EQ(got.scored_tokens, ref.scored_tokens);
    EXPECT_EQ(got.loglik, ref.loglik);

    const PhiFile plain = read_phi_tsv(path, 0.0, &vocab);
    EXPECT_EQ(plain.vocab.size(), 118u);
    const MappedCorpus dropped =
        map_to_model(p.heldout, &vocab, &plain.vocab, plain.vocab.size(), "heldout");
    EXPECT_EQ(dropped.skipped_tokens, absent_tokens);
    EXPECT_EQ(dropped.unknown_words, 2u);
    std::remove(path.c_str());
}

TEST(Heldout, CorpusWiderThanTheModelIsAConfigError) {
    const core::Corpus c = core::Corpus::from_docs({{0, 5}}, 6);
    const HeldoutEvaluator ev(c, FoldInOptions{});
    const TopicWordDistribution phi = dense_phi({{1, 1, 1}}, 3);
    EXPECT_THROW(ev.evaluate(phi, std::vector<double>{1.0}), ConfigError);
    EXPECT_THROW(HeldoutEvaluator(c, FoldInOptions{5, 5, 1}), ConfigError);
}

}  // namespace
}  // namespace rotor::lda
