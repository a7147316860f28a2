// `rotor lda infer | eval | coherence` through the real binary: a small model is trained once on
// planted topics in a temp dir, then used on new corpora with their own vocabularies.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/corpus/corpus.h"
#include "core/corpus/uci_writer.h"
#include "core/corpus/vocabulary.h"
#include "core/lda/synthetic_corpus.h"

namespace rotor::apps {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kTopics = 4;
constexpr std::uint32_t kVocab = 120;

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

struct CommandResult {
    int code = -1;
    std::string out;
    std::string err;
};

class UseCli : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = fs::temp_directory_path() / ("rotor_use_cli_" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        lda::SyntheticSpec spec;
        spec.num_docs = 360;
        spec.vocab_size = kVocab;
        spec.num_topics = kTopics;
        spec.mean_doc_length = 40;
        spec.doc_alpha = 0.1;
        spec.seed = 4;
        const lda::SyntheticCorpus s = lda::make_synthetic_corpus(spec);
        planted_ = s.topic_word;
        std::vector<std::string> words;
        for (WordId w = 0; w < kVocab; ++w) words.push_back("w" + std::to_string(w));
        vocab_ = core::Vocabulary::from_words(words);
        std::vector<std::vector<WordId>> train, heldout;
        for (std::uint32_t d = 0; d < s.num_docs(); ++d) {
            std::vector<WordId> doc(
                s.word_ids.begin() + static_cast<std::ptrdiff_t>(s.doc_offsets[d]),
                s.word_ids.begin() + static_cast<std::ptrdiff_t>(s.doc_offsets[d + 1]));
            (d < 300 ? train : heldout).push_back(std::move(doc));
        }
        core::save_uci(core::Corpus::from_docs(train, kVocab), &vocab_, path("train.txt"),
                       path("train.vocab"));
        core::save_uci(core::Corpus::from_docs(heldout, kVocab), &vocab_, path("heldout.txt"),
                       path("heldout.vocab"));
        const CommandResult r =
            rotor("lda train --corpus " + path("train.txt") + " --vocab " + path("train.vocab") +
                  " --topics 4 --alpha 0.1 --beta 0.05" +
                  " --iterations 60 --threads 1 --seed 3 --quiet --out " + path("model"));
        ASSERT_EQ(r.code, 0) << r.err;
    }
    static void TearDownTestSuite() { fs::remove_all(dir_); }

    static std::string path(const std::string& name) { return (dir_ / name).string(); }

    static CommandResult rotor(const std::string& args) {
        static int n = 0;
        const std::string out = path("stdout." + std::to_string(n));
        const std::string err = path("stderr." + std::to_string(n++));
        const std::string cmd =
            std::string(ROTOR_BINARY_DIR "/apps/rotor ") + args + " >" + out + " 2>" + err;
        const int status = std::system(cmd.c_str());
        CommandResult r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    /// θ by doc label from an infer TSV: theta[label][topic].
    static std::map<std::uint64_t, std::vector<double>> read_theta(const std::string& file) {
        std::map<std::uint64_t, std::vector<double>> theta;
        std::ifstream in(file);
        std::uint64_t doc = 0;
        std::uint32_t k = 0;
        double t = 0;
        while (in >> doc >> k >> t) {
            auto& row = theta[doc];
            row.resize(kTopics, 0.0);
            EXPECT_LT(k, kTopics);
            if (k < kTopics) row[k] = t;
        }
        return theta;
    }

    /// The `n` most probable planted words of topic t.
    static std::vector<WordId> top_planted(std::uint32_t t, std::size_t n) {
        std::vector<WordId> order(kVocab);
        std::iota(order.begin(), order.end(), WordId{0});
        std::sort(order.begin(), order.end(),
                  [&](WordId a, WordId b) { return planted_[t][a] > planted_[t][b]; });
        order.resize(n);
        return order;
    }

    static inline fs::path dir_;
    static inline core::Vocabulary vocab_;
    static inline std::vector<std::vector<double>> planted_;
};

TEST_F(UseCli, InferWritesTheSameFileAtAnyThreadCount) {
    const std::string base = "lda infer --model " + path("model") + " --corpus " +
                             path("heldout.txt") + " --vocab " + path("heldout.vocab") + " --dense";
    const CommandResult one = rotor(base + " --threads 1 --out " + path("theta1.tsv"));
    ASSERT_EQ(one.code, 0) << one.err;
    const CommandResult two = rotor(base + " --threads 2 --out " + path("theta2.tsv"));
    ASSERT_EQ(two.code, 0) << two.err;
    EXPECT_NE(one.err.find("skipped 0 tokens of 0 unknown words"), std::string::npos) << one.err;
    const std::string a = slurp(path("theta1.tsv"));
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, slurp(path("theta2.tsv")));

    const auto theta = read_theta(path("theta1.tsv"));
    ASSERT_EQ(theta.size(), 60u);
    EXPECT_EQ(theta.begin()->first, 1u);  // 1-based input labels
    EXPECT_EQ(theta.rbegin()->first, 60u);
    for (const auto& [doc, row] : theta)
        EXPECT_NEAR(std::accumulate(row.begin(), row.end(), 0.0), 1.0, 1e-4) << "doc " << doc;

    // A different seed changes some estimate; the sparse output drops θ < 1e-4.
    const CommandResult other = rotor(base + " --threads 2 --seed 99 --out " + path("theta3.tsv"));
    ASSERT_EQ(other.code, 0) << other.err;
    EXPECT_NE(a, slurp(path("theta3.tsv")));
    const CommandResult sparse =
        rotor("lda infer --model " + path("model") + " --corpus " + path("heldout.txt") +
              " --vocab " + path("heldout.vocab") + " --out " + path("theta_sparse.tsv"));
    ASSERT_EQ(sparse.code, 0) << sparse.err;
    // The sparse file is the dense one without the lines whose θ < 1e-4.
    std::istringstream dense(a);
    std::string line, filtered;
    while (std::getline(dense, line))
        if (std::stod(line.substr(line.rfind('\t') + 1)) >= 1e-4) filtered += line + "\n";
    EXPECT_EQ(slurp(path("theta_sparse.tsv")), filtered);
}

TEST_F(UseCli, InferMatchesWordsByStringSkipsUnknownsAndGivesEmptyDocsThePrior) {
    // The new corpus has its own vocabulary: two unknown words, then topic 3's top words,
    // then topic 0's, at ids that mean other words in the model.
    const auto t3 = top_planted(3, 8);
    const auto t0 = top_planted(0, 8);
    std::vector<std::string> words = {"zzz_unknown"};
    for (const WordId w : t3) words.push_back(vocab_.word(w));
    words.push_back("yyy_unknown");
    for (const WordId w : t0) words.push_back(vocab_.word(w));
    const auto new_vocab = core::Vocabulary::from_words(words);
    std::vector<WordId> doc1, doc4, doc5;
    for (int rep = 0; rep < 3; ++rep)
        for (WordId i = 1; i <= 8; ++i) doc1.push_back(i);  // topic 3's words
    for (int rep = 0; rep < 3; ++rep)
        for (WordId i = 10; i <= 17; ++i) doc4.push_back(i);  // topic 0's words
    doc5 = doc4;
    doc5.insert(doc5.end(), {0, 0, 9});  // known words and 3 unknown tokens
    // A long document: θ_dk ≥ α_k/(n+Σα) falls below the 1e-4 cut only for n > 1000.
    std::vector<WordId> doc6;
    for (int rep = 0; rep < 400; ++rep)
        for (WordId i = 10; i <= 17; ++i) doc6.push_back(i);
    const core::Corpus corpus =
        core::Corpus::from_docs({doc1, {0, 9, 9, 0}, {}, doc4, doc5, doc6}, new_vocab.size());
    core::save_uci(corpus, &new_vocab, path("new.txt"), path("new.vocab"));

    const CommandResult r =
        rotor("lda infer --model " + path("model") + " --corpus " + path("new.txt") + " --vocab " +
              path("new.vocab") + " --dense --out " + path("new.tsv"));
    ASSERT_EQ(r.code, 0) << r.err;
    // doc 2: 4 tokens, doc 5: 3 tokens of the two unknown words.
    EXPECT_NE(r.err.find("skipped 7 tokens of 2 unknown words"), std::string::npos) << r.err;
    const auto theta = read_theta(path("new.tsv"));
    ASSERT_EQ(theta.size(), 6u);
    for (const std::uint64_t doc : {2u, 3u}) {  // only unknown words; empty: the prior α/Σα
        for (TopicId k = 0; k < kTopics; ++k)
            EXPECT_DOUBLE_EQ(theta.at(doc)[k], 0.25) << "doc " << doc;
    }
    auto argmax = [](const std::vector<double>& v) {
        return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
    };
    const auto& th1 = theta.at(1);
    const auto& th4 = theta.at(4);
    EXPECT_GT(th1[argmax(th1)], 0.8);
    EXPECT_GT(th4[argmax(th4)], 0.8);
    EXPECT_NE(argmax(th1), argmax(th4));  // by id both would land in the same words' topics
    EXPECT_EQ(argmax(theta.at(5)), argmax(th4));
    EXPECT_EQ(argmax(theta.at(6)), argmax(th4));

    const CommandResult sparse =
        rotor("lda infer --model " + path("model") + " --corpus " + path("new.txt") + " --vocab " +
              path("new.vocab") + " --out " + path("new_sparse.tsv"));
    ASSERT_EQ(sparse.code, 0) << sparse.err;
    const auto sparse_theta = read_theta(path("new_sparse.tsv"));
    std::size_t small = 0;
    for (TopicId k = 0; k < kTopics; ++k) {
        if (theta.at(6)[k] < 1e-4) {
            ++small;
            EXPECT_EQ(sparse_theta.at(6)[k], 0.0);  // not written
        } else {
            EXPECT_EQ(sparse_theta.at(6)[k], theta.at(6)[k]);
        }
    }
    EXPECT_GT(small, 0u);
}

TEST_F(UseCli, EvalOfModelAndOfItsExportedPhiAgreeAndBeatUniform) {
    const CommandResult m =
        rotor("lda eval --model " + path("model") + " --corpus " + path("heldout.txt") +
              " --vocab " + path("heldout.vocab") + " --threads 2 --seed 5");
    ASSERT_EQ(m.code, 0) << m.err;
    const auto jm = nlohmann::json::parse(m.out);
    EXPECT_EQ(jm.at("topics").get<int>(), 4);
    EXPECT_GT(jm.at("heldout_tokens").get<int>(), 1000);
    EXPECT_LT(jm.at("heldout_perplexity").get<double>(), 0.8 * kVocab);
    EXPECT_NEAR(jm.at("heldout_perplexity").get<double>(),
                std::exp(-jm.at("heldout_loglik_per_token").get<double>()), 1e-9);

    const CommandResult e =
        rotor("lda export --model " + path("model") + " --out " + path("export"));
    ASSERT_EQ(e.code, 0) << e.err;
    const CommandResult p = rotor("lda eval --phi " + path("export/word_topic.tsv") +
                                  " --beta 0.05 --alpha 0.1 --corpus " + path("heldout.txt") +
                                  " --vocab " + path("heldout.vocab") + " --threads 1 --seed 5");
    ASSERT_EQ(p.code, 0) << p.err;
    const auto jp = nlohmann::json::parse(p.out);
    EXPECT_EQ(jp.at("heldout_tokens"), jm.at("heldout_tokens"));
    EXPECT_DOUBLE_EQ(jp.at("heldout_loglik").get<double>(), jm.at("heldout_loglik").get<double>());

    // The same φ without smoothing and with the default α = 50/K scores differently.
    const CommandResult q = rotor("lda eval --phi " + path("export/word_topic.tsv") + " --corpus " +
                                  path("heldout.txt") + " --vocab " + path("heldout.vocab"));
    ASSERT_EQ(q.code, 0) << q.err;
    EXPECT_NE(nlohmann::json::parse(q.out).at("heldout_loglik").get<double>(),
              jm.at("heldout_loglik").get<double>());
}

TEST_F(UseCli, EvalPhiScoresWordsTheFileLacksBySmoothingAndSaysSo) {
    // A φ file without the held-out set's most frequent word: with --beta > 0 its tokens are
    // scored by smoothing alone and counted; with --beta 0 they are unknown and skipped.
    ASSERT_EQ(rotor("lda export --model " + path("model") + " --out " + path("export_lack")).code,
              0);
    std::map<std::uint32_t, std::uint64_t> count;  // 1-based word id -> tokens in heldout.txt
    {
        std::ifstream uci(path("heldout.txt"));
        std::uint64_t header = 0;
        for (int i = 0; i < 3; ++i) uci >> header;
        std::uint64_t doc = 0;
        std::uint32_t word = 0;
        std::uint64_t n = 0;
        while (uci >> doc >> word >> n) count[word] += n;
    }
    const auto top = std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
    });
    ASSERT_NE(top, count.end());
    const std::string lacking = "w" + std::to_string(top->first - 1);
    {
        std::ifstream in(path("export_lack/word_topic.tsv"));
        std::ofstream out(path("lacking_phi.tsv"));
        std::string line;
        std::size_t dropped = 0;
        while (std::getline(in, line)) {
            if (line.rfind(lacking + "\t", 0) == 0) {
                ++dropped;
                continue;
            }
            out << line << '\n';
        }
        ASSERT_GT(dropped, 0u);
    }
    const std::string args = "lda eval --phi " + path("lacking_phi.tsv") + " --corpus " +
                             path("heldout.txt") + " --vocab " + path("heldout.vocab") +
                             " --alpha 0.1 --threads 1 --seed 5";
    const CommandResult smooth = rotor(args + " --beta 0.05");
    ASSERT_EQ(smooth.code, 0) << smooth.err;
    const auto js = nlohmann::json::parse(smooth.out);
    EXPECT_EQ(js.at("smoothing_only_tokens").get<std::uint64_t>(), top->second);
    EXPECT_EQ(js.at("smoothing_only_words").get<std::uint64_t>(), 1u);
    EXPECT_EQ(js.at("skipped_tokens").get<std::uint64_t>(), 0u);
    EXPECT_NE(smooth.err.find("scored by smoothing only"), std::string::npos) << smooth.err;

    // The most frequent word is more than 5% of the tokens: skipping it takes --allow-oov.
    EXPECT_EQ(rotor(args + " --beta 0").code, 2);
    const CommandResult unknown = rotor(args + " --beta 0 --allow-oov");
    ASSERT_EQ(unknown.code, 0) << unknown.err;
    const auto ju = nlohmann::json::parse(unknown.out);
    EXPECT_EQ(ju.at("skipped_tokens").get<std::uint64_t>(), top->second);
    EXPECT_EQ(ju.at("unknown_words").get<std::uint64_t>(), 1u);
    EXPECT_EQ(ju.at("heldout_tokens").get<std::uint64_t>() +
                  ju.at("heldout_fit_tokens").get<std::uint64_t>() + top->second,
              js.at("heldout_tokens").get<std::uint64_t>() +
                  js.at("heldout_fit_tokens").get<std::uint64_t>());
    EXPECT_NE(unknown.err.find("--beta 0"), std::string::npos) << unknown.err;
}

// A corpus read with another vocabulary (every other word renamed): eval scored the few known
// tokens left and printed a perplexity far better than the model's, with a note on stderr only.
// Above 5% of skipped tokens it is refused (exit 2, naming the corpus) unless --allow-oov, and
// the skipped share is printed beside the figure.
TEST_F(UseCli, EvalAndInferRefuseACorpusOfAnotherVocabularyUnlessAllowed) {
    {
        std::ifstream in(path("heldout.vocab"));
        std::ofstream out(path("other.vocab"));
        int i = 0;
        for (std::string word; std::getline(in, word); ++i)
            out << (i % 2 == 0 ? "zz_" : "") << word << '\n';
    }
    const std::string args =
        "lda eval --model " + path("model") + " --corpus " + path("heldout.txt") + " --threads 1";
    const CommandResult same = rotor(args + " --vocab " + path("heldout.vocab"));
    ASSERT_EQ(same.code, 0) << same.err;
    EXPECT_EQ(nlohmann::json::parse(same.out).at("skipped_share").get<double>(), 0.0);
    const CommandResult other = rotor(args + " --vocab " + path("other.vocab"));
    EXPECT_EQ(other.code, 2) << other.out;
    EXPECT_NE(other.err.find("rotor: error: " + path("heldout.txt") + ": "), std::string::npos)
        << other.err;
    EXPECT_NE(other.err.find("--allow-oov"), std::string::npos) << other.err;
    EXPECT_EQ(other.out, "");
    const CommandResult allowed = rotor(args + " --vocab " + path("other.vocab") + " --allow-oov");
    ASSERT_EQ(allowed.code, 0) << allowed.err;
    const auto j = nlohmann::json::parse(allowed.out);
    const double share = j.at("skipped_share").get<double>();
    EXPECT_GT(share, 0.05);
    EXPECT_LT(share, 1.0);
    const double skipped = static_cast<double>(j.at("skipped_tokens").get<std::uint64_t>());
    const double scored = static_cast<double>(j.at("heldout_tokens").get<std::uint64_t>() +
                                              j.at("heldout_fit_tokens").get<std::uint64_t>());
    EXPECT_NEAR(share, skipped / (skipped + scored), 1e-12);
    // infer --corpus follows the same rule (it inferred from the words left, silently).
    const std::string infer = "lda infer --model " + path("model") + " --corpus " +
                              path("heldout.txt") + " --threads 1 --vocab " + path("other.vocab") +
                              " --out " + path("oov_theta.tsv");
    const CommandResult refused = rotor(infer);
    EXPECT_EQ(refused.code, 2) << refused.err;
    EXPECT_NE(refused.err.find("--allow-oov"), std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(path("oov_theta.tsv")));
    const CommandResult inferred = rotor(infer + " --allow-oov");
    EXPECT_EQ(inferred.code, 0) << inferred.err;
    EXPECT_TRUE(std::filesystem::exists(path("oov_theta.tsv")));
}

TEST_F(UseCli, BadPhiFileIsAnInputErrorWithTheLine) {
    std::ofstream(path("bad_phi.tsv")) << "w1\t0\t2\nw2\t1\t1\nw3\tone\t1\n";
    const CommandResult r = rotor("lda eval --phi " + path("bad_phi.tsv") + " --corpus " +
                                  path("heldout.txt") + " --vocab " + path("heldout.vocab"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("rotor: error: " + path("bad_phi.tsv") + ":3:"), std::string::npos)
        << r.err;
}

TEST_F(UseCli, FlagMistakesAreConfigErrors) {
    const std::string corpus = " --corpus " + path("heldout.txt");
    EXPECT_EQ(rotor("lda eval --model " + path("model") + " --phi x" + corpus).code, 3);
    EXPECT_EQ(rotor("lda eval" + corpus).code, 3);
    EXPECT_EQ(rotor("lda eval --model " + path("model") + " --alpha 0.3" + corpus).code, 3);
    const CommandResult r = rotor("lda infer --model " + path("model") + corpus +
                                  " --iterations 5 --burn-in 5 --out " + path("never.tsv"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("--burn-in"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("never.tsv")));
}

TEST_F(UseCli, CoherenceRanksTopicsOnTheTrainingCorpus) {
    const CommandResult r =
        rotor("lda coherence --model " + path("model") + " --corpus " + path("train.txt") +
              " --vocab " + path("train.vocab") + " --top 5");
    ASSERT_EQ(r.code, 0) << r.err;
    std::istringstream in(r.out);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "topic\tumass\twords");
    int topics = 0;
    double mean = 1;
    while (std::getline(in, line)) {
        if (line.rfind("mean\t", 0) == 0) {
            mean = std::stod(line.substr(5));
        } else {
            ++topics;
        }
    }
    EXPECT_EQ(topics, 4);
    EXPECT_LT(mean, 0.0);
    EXPECT_GT(mean, -10 * std::log(300.0));  // a bound every 5-word list obeys on 300 docs
}

// Theme 5: raw text straight into infer, with the model's vocabulary. The held-out documents
// written as text (one per line, tokens in the corpus's order) give the very θ of --corpus; a
// line of words the model does not know is left out with a warning; a folder's documents are
// named by their files in both tables.
TEST_F(UseCli, InferReadsRawTextWithTheModelsVocabulary) {
    const core::LoadedCorpus held = core::load_corpus(path("heldout.txt"), path("heldout.vocab"));
    std::string text;
    for (DocId d = 0; d < held.corpus.num_docs(); ++d) {
        for (const WordId w : held.corpus.doc(d)) text += held.vocab->word(w) + " ";
        text += "\n";
    }
    std::ofstream(path("raw.txt")) << text << "Zebra, quagga; OKAPI!\n";
    const CommandResult by_corpus =
        rotor("lda infer --model " + path("model") + " --corpus " + path("heldout.txt") +
              " --vocab " + path("heldout.vocab") + " --threads 1 --out " + path("c.tsv"));
    ASSERT_EQ(by_corpus.code, 0) << by_corpus.err;
    const CommandResult by_text =
        rotor("lda infer --model " + path("model") + " --text " + path("raw.txt") +
              " --token-pattern alnum --threads 1 --out " + path("t.tsv"));
    ASSERT_EQ(by_text.code, 0) << by_text.err;
    EXPECT_EQ(slurp(path("t.tsv")), slurp(path("c.tsv")));
    EXPECT_NE(by_text.err.find("warning: 1 document has no word of the model's vocabulary"),
              std::string::npos)
        << by_text.err;
    EXPECT_NE(by_text.err.find("skipped 3 tokens"), std::string::npos) << by_text.err;

    fs::create_directories(path("new"));
    std::ofstream(path("new/a.txt")) << "w1 w2 w3\nw1\n";
    std::ofstream(path("new/b.txt")) << "w100 w101 w102 w103\n";
    const CommandResult folder = rotor("lda infer --model " + path("model") + " --text " +
                                       path("new") + " --token-pattern alnum --doc-topics " +
                                       path("wide.tsv") + " --out " + path("long.tsv"));
    ASSERT_EQ(folder.code, 0) << folder.err;
    EXPECT_NE(folder.err.find("2 documents written"), std::string::npos) << folder.err;
    std::istringstream wide(slurp(path("wide.tsv")));
    std::string header, a, b;
    std::getline(wide, header);
    EXPECT_EQ(header, "doc\ttopic_0\ttopic_1\ttopic_2\ttopic_3");
    std::getline(wide, a);
    std::getline(wide, b);
    EXPECT_EQ(a.substr(0, a.find('\t')), "a.txt");
    EXPECT_EQ(b.substr(0, b.find('\t')), "b.txt");
    EXPECT_EQ(slurp(path("long.tsv")).substr(0, 6), "a.txt\t");
    // Letters only: "w1" is the token "w", which the model does not know.
    const CommandResult letters = rotor("lda infer --model " + path("model") + " --text " +
                                        path("new") + " --out " + path("none.tsv"));
    ASSERT_EQ(letters.code, 0) << letters.err;
    EXPECT_NE(letters.err.find("2 documents have no word"), std::string::npos) << letters.err;
    EXPECT_EQ(rotor("lda infer --model " + path("model") + " --text " + path("new")).code, 3);
    EXPECT_EQ(rotor("lda infer --model " + path("model") + " --text " + path("new") + " --corpus " +
                    path("heldout.txt") + " --out " + path("x.tsv"))
                  .code,
              3);
}

}  // namespace
}  // namespace rotor::apps
