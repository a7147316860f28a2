// LDA model directories (core/lda/model_io.cpp): what save_model writes, load_model reads back
// exactly, and every file is verified on the way in (CRC-32 of the binary files, strict
// params.json ranges, the vocabulary's rules, count tables against each other).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/io/manifest.h"
#include "core/lda/model.h"
#include "tests/core/io/manifest_test_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::lda {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

/// K = 2, V = 3, D = 2, N = 6.
LdaModel small_model() {
    LdaModel m;
    m.info.num_topics = 2;
    m.info.alpha = {0.5, 0.25};
    m.info.beta = 0.01;
    m.info.num_words = 3;
    m.info.num_docs = 2;
    m.info.num_tokens = 6;
    m.info.iterations = 7;
    m.info.seed = 42;
    m.vocab = {"apple", "banana", "cherry"};
    m.word_topic.add_row({{0, 2}});
    m.word_topic.add_row({{0, 1}, {1, 1}});
    m.word_topic.add_row({{1, 2}});
    m.doc_topic.add_row({{0, 3}});
    m.doc_topic.add_row({{1, 3}});
    m.doc_labels = {1, 5};
    m.recompute_totals();
    return m;
}

void overwrite(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// Expects load_model(dir) to throw an InputError whose message holds `path` and `what`.
void expect_refused(const std::string& dir, const std::string& path, const std::string& what) {
    rotor::testing::expect_manifest_refuses_then_reseal(dir, path, [&] { load_model(dir); });
    try {
        load_model(dir);
        FAIL() << "loaded; expected: " << what;
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
}

TEST(ModelIo, RoundTripsEveryField) {
    TempDir dir;
    const LdaModel m = small_model();
    save_model(m, dir.file("m"));
    const LdaModel r = load_model(dir.file("m"));
    EXPECT_EQ(r.vocab, m.vocab);
    EXPECT_EQ(r.info.alpha, m.info.alpha);
    EXPECT_EQ(r.info.seed, 42u);
    EXPECT_EQ(r.info.vocabulary, std::optional<bool>(true));
    EXPECT_EQ(r.word_topic.offsets, m.word_topic.offsets);
    EXPECT_EQ(r.word_topic.topics, m.word_topic.topics);
    EXPECT_EQ(r.word_topic.counts, m.word_topic.counts);
    EXPECT_EQ(r.doc_topic.counts, m.doc_topic.counts);
    EXPECT_EQ(r.doc_labels, m.doc_labels);
    EXPECT_EQ(r.topic_totals, m.topic_totals);
}

TEST(ModelIo, TheInitialisationRoundTripsAndIsOptional) {
    TempDir dir;
    LdaModel m = small_model();
    m.info.init = "sparse";
    m.info.init_doc_topics = 3;
    save_model(m, dir.file("m"));
    const LdaModel r = load_model(dir.file("m"));
    EXPECT_EQ(r.info.init, "sparse");
    EXPECT_EQ(r.info.init_doc_topics, 3u);
    // A model that does not say (as rotor wrote them before): no field, read back empty.
    save_model(small_model(), dir.file("old"));
    const auto j = nlohmann::json::parse(read_all(dir.file("old/params.json")));
    EXPECT_FALSE(j.contains("init"));
    EXPECT_FALSE(j.contains("init_doc_topics"));
    EXPECT_EQ(load_model(dir.file("old")).info.init, "");
    EXPECT_EQ(load_model(dir.file("old")).info.init_doc_topics, 0u);
}

TEST(ModelIo, AModelWithoutVocabularyRoundTrips) {
    TempDir dir;
    LdaModel m = small_model();
    m.vocab.clear();
    save_model(m, dir.file("m"));
    EXPECT_EQ(read_all(dir.file("m/vocab.txt")), "");
    EXPECT_TRUE(load_model(dir.file("m")).vocab.empty());
}

TEST(ModelIo, DocumentNamesRoundTripAndNameTheTables) {
    TempDir dir;
    LdaModel m = small_model();
    EXPECT_EQ(doc_name(m, 1), "5");  // no names: the label
    m.doc_names = {"a.txt", "b.txt"};
    save_model(m, dir.file("m"));
    EXPECT_EQ(read_all(dir.file("m/docs.txt")), "a.txt\nb.txt\n");
    const LdaModel r = load_model(dir.file("m"));
    EXPECT_EQ(r.doc_names, m.doc_names);
    EXPECT_EQ(doc_name(r, 1), "b.txt");
    // θ_dk = (n_dk + α_k) / (n_d + Σα): doc 0 has 3 tokens of topic 0, α = (0.5, 0.25).
    const std::vector<double> theta = doc_theta(r, 0);
    EXPECT_DOUBLE_EQ(theta[0], 3.5 / 3.75);
    EXPECT_DOUBLE_EQ(theta[1], 0.25 / 3.75);
    write_doc_topics(r, dir.file("dt.tsv"));
    EXPECT_EQ(read_all(dir.file("dt.tsv")),
              "doc\ttopic_0\ttopic_1\na.txt\t0.933333\t0.0666667\nb.txt\t0.133333\t0.866667\n");
    export_tsv(r, dir.file("p"), true);
    EXPECT_EQ(read_all(dir.file("p/doc_topic.tsv")),
              "a.txt\t0\t0.933333\na.txt\t1\t0.0666667\nb.txt\t0\t0.133333\nb.txt\t1\t0.866667\n");
    // A names file of another length is refused, naming it.
    overwrite(dir.file("m/docs.txt"), "a.txt\n");
    EXPECT_THROW(load_model(dir.file("m")), InputError);
}

TEST(ModelIo, AFlippedByteAnywhereInABinaryFileIsRefused) {
    for (const char* name : {"word_topic.bin", "doc_topic.bin"}) {
        TempDir dir;
        save_model(small_model(), dir.file("m"));
        const std::string path = dir.file(std::string("m/") + name);
        const std::string good = read_all(path);
        // Past the header's checked fields: offsets, topic ids, counts, labels, the CRC itself.
        for (std::size_t at = 32; at < good.size(); ++at) {
            std::string bad = good;
            bad[at] = static_cast<char>(bad[at] ^ 0x01);
            overwrite(path, bad);
            expect_refused(dir.file("m"), path, "checksum mismatch");
        }
    }
}

TEST(ModelIo, AnInRangeTopicIdChangedIsRefused) {
    TempDir dir;
    save_model(small_model(), dir.file("m"));
    const std::string path = dir.file("m/word_topic.bin");
    std::string bad = read_all(path);
    // Word 1's pair (0, 1) -> (1, 1): every count still sums to N, only the checksum tells.
    const std::size_t topics_at = 32 + 4 * sizeof(std::uint64_t);
    const TopicId one = 1;
    std::memcpy(bad.data() + topics_at + sizeof(TopicId), &one, sizeof one);
    overwrite(path, bad);
    expect_refused(dir.file("m"), path, "checksum mismatch");
}

TEST(ModelIo, AVersion1FileWithoutChecksumIsStillRead) {
    TempDir dir;
    save_model(small_model(), dir.file("m"));
    for (const char* name : {"word_topic.bin", "doc_topic.bin"}) {
        const std::string path = dir.file(std::string("m/") + name);
        std::string old = read_all(path);
        old.resize(old.size() - 4);
        const std::uint32_t v1 = 1;
        std::memcpy(old.data() + 8, &v1, sizeof v1);
        overwrite(path, old);
    }
    core::write_manifest(dir.file("m"));  // as the older rotor wrote it, sealed since
    EXPECT_EQ(load_model(dir.file("m")).word_topic.counts, small_model().word_topic.counts);
}

/// Saves the small model, edits its params.json with `edit`, and expects `what`.
template <class Edit>
void expect_params_refused(Edit edit, const std::string& what) {
    TempDir dir;
    save_model(small_model(), dir.file("m"));
    const std::string path = dir.file("m/params.json");
    nlohmann::json j = nlohmann::json::parse(read_all(path));
    edit(j);
    overwrite(path, j.dump(2));
    expect_refused(dir.file("m"), path, what);
}

TEST(ModelIo, ParametersAreRangeChecked) {
    expect_params_refused(
        [](nlohmann::json& j) {
            j["alpha"] = {1e308, 0.5};
        },
        "alpha: every value must be a positive number at most 1e6");
    expect_params_refused([](nlohmann::json& j) { j["beta"] = 1e300; }, "beta: must be");
    expect_params_refused([](nlohmann::json& j) { j["alpha"] = {-1, 0.5}; }, "alpha");
    expect_params_refused([](nlohmann::json& j) { j["num_topics"] = 3; },
                          "alpha has 2 entries for 3 topics");
}

TEST(ModelIo, TrailingGarbageInParamsIsRefused) {
    TempDir dir;
    save_model(small_model(), dir.file("m"));
    const std::string path = dir.file("m/params.json");
    overwrite(path, read_all(path) + " x");
    expect_refused(dir.file("m"), path, "not valid JSON");
}

TEST(ModelIo, AnEmptyOrBadVocabularyIsRefused) {
    TempDir dir;
    save_model(small_model(), dir.file("m"));
    const std::string path = dir.file("m/vocab.txt");
    overwrite(path, "");
    expect_refused(dir.file("m"), path, "empty vocabulary file (params.json says V = 3)");
    overwrite(path, "apple\nbanana\n");
    expect_refused(dir.file("m"), path, "has 2 lines but the model has V = 3");
    overwrite(path, "apple\nbanana\napple\n");
    expect_refused(dir.file("m"), path, "duplicate vocabulary entry");
    overwrite(path,
              "\xEF\xBB\xBF"
              "apple\nbanana\ncherry\n");  // a BOM is dropped
    core::write_manifest(dir.file("m"));
    EXPECT_EQ(load_model(dir.file("m")).vocab[0], "apple");
}

TEST(ModelIo, CountTablesMustAgree) {
    TempDir dir;
    LdaModel m = small_model();
    m.doc_topic.counts[0] = 2;  // doc-topic sums to 5, word-topic to 6
    save_model(m, dir.file("m"));
    expect_refused(dir.file("m"), dir.file("m"), "counts disagree");
}

}  // namespace
}  // namespace rotor::lda
