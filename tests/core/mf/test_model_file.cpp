// Tests of MF model directories: a bitwise round trip, and every kind of corruption (each built in
// the test) refused with an InputError naming the file at fault.
#include "core/mf/model_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/io/manifest.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::mf {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

/// A small model: 4 users x 3 items, K = 2, random factors and biases, seen items.
Model small_model(bool bias = true) {
    Model m;
    m.solver = "sgd";
    m.params.lambda = 0.07;
    m.params.lambda_bias = 0.01;
    m.params.form = LambdaForm::kPlain;
    m.params.bias = bias;
    m.iterations = 12;
    m.seed = 0xFFFFFFFFFFFFFFF1ULL;
    m.train_path = "train.csv";
    m.mu = bias ? 3.5415926535897931 : 0.0;
    m.w = Factors(4, 2);
    m.h = Factors(3, 2);
    Rng rng(5);
    for (float& v : m.w.values()) v = static_cast<float>(rng.uniform() - 0.5) * 1e-3f;
    for (float& v : m.h.values()) v = static_cast<float>(rng.uniform() - 0.5);
    if (bias) {
        m.row_bias = {0.1f, -0.2f, 1e-30f, -0.0f};
        m.col_bias = {0.5f, 0.25f, -1.125f};
    }
    for (const char* u : {"alice", "bob", "carol dan", "4"}) m.users.insert(u);
    for (const char* i : {"i:1", "i,2", "x"}) m.items.insert(i);
    m.seen_offsets = {0, 2, 2, 3, 5};
    m.seen_items = {0, 2, 1, 0, 1};
    return m;
}

void expect_equal(const Model& a, const Model& b) {
    EXPECT_EQ(a.solver, b.solver);
    EXPECT_EQ(a.params.lambda, b.params.lambda);
    EXPECT_EQ(a.params.lambda_bias, b.params.lambda_bias);
    EXPECT_EQ(a.params.form, b.params.form);
    EXPECT_EQ(a.params.bias, b.params.bias);
    EXPECT_EQ(a.iterations, b.iterations);
    EXPECT_EQ(a.seed, b.seed);
    EXPECT_EQ(a.train_path, b.train_path);
    EXPECT_EQ(std::memcmp(&a.mu, &b.mu, sizeof a.mu), 0);
    ASSERT_EQ(a.w.values().size(), b.w.values().size());
    EXPECT_EQ(std::memcmp(a.w.values().data(), b.w.values().data(), a.w.values().size_bytes()), 0);
    ASSERT_EQ(a.h.values().size(), b.h.values().size());
    EXPECT_EQ(std::memcmp(a.h.values().data(), b.h.values().data(), a.h.values().size_bytes()), 0);
    EXPECT_EQ(a.w.k(), b.w.k());
    ASSERT_EQ(a.row_bias.size(), b.row_bias.size());
    ASSERT_EQ(a.col_bias.size(), b.col_bias.size());
    EXPECT_EQ(std::memcmp(a.row_bias.data(), b.row_bias.data(), a.row_bias.size() * 4), 0);
    EXPECT_EQ(std::memcmp(a.col_bias.data(), b.col_bias.data(), a.col_bias.size() * 4), 0);
    EXPECT_EQ(a.users, b.users);
    EXPECT_EQ(a.items, b.items);
    EXPECT_EQ(a.seen_offsets, b.seen_offsets);
    EXPECT_EQ(a.seen_items, b.seen_items);
}

class ModelFile : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = tmp_.file("model");
        write_model(dir_, small_model());
    }
    std::string file(const char* name) const { return dir_ + "/" + name; }
    /// Replaces file `name` and seals the model anew (as after an edit on purpose, `rotor
    /// seal`), so that what a test expects next is the reader's own check of the file; the
    /// manifest's are tests/apps/test_sealed_files.cpp's.
    void rewrite(const char* name, const std::string& bytes) const {
        std::filesystem::remove(file(name));
        tmp_.write(std::string("model/") + name, bytes);
        core::write_manifest(dir_);
    }
    /// Deletes file `name` and seals the model anew.
    void remove_file(const char* name) const {
        std::filesystem::remove(file(name));
        core::write_manifest(dir_);
    }
    nlohmann::ordered_json params() const {
        return nlohmann::ordered_json::parse(read_all(file("params.json")));
    }
    void set_params(const nlohmann::ordered_json& j) const { rewrite("params.json", j.dump(2)); }
    /// read_model fails with an InputError whose path is `name` (a file of the model, or the
    /// directory when empty) and whose message holds `what`.
    void expect_refused(const char* name, const std::string& what) const {
        const std::string path = name[0] != 0 ? file(name) : dir_;
        try {
            read_model(dir_);
            ADD_FAILURE() << "no error for " << what;
        } catch (const InputError& e) {
            EXPECT_EQ(e.path(), path) << e.what();
            EXPECT_NE(std::string(e.what()).find(path + ":"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    }

    TempDir tmp_;
    std::string dir_;
};

TEST_F(ModelFile, RoundTripIsBitwise) {
    const Model m = small_model();
    expect_equal(read_model(dir_), m);
    const std::string again = tmp_.file("again");
    write_model(again, read_model(dir_));
    for (const char* f :
         {"params.json", "w.bin", "h.bin", "bias.bin", "seen.bin", "users.txt", "items.txt"})
        EXPECT_EQ(read_all(file(f)), read_all(again + "/" + f)) << f;
    EXPECT_EQ(read_all(file("users.txt")), "alice\nbob\ncarol dan\n4\n");
}

TEST_F(ModelFile, WithoutBiasOrSeenItemsTheFilesAreAbsent) {
    Model m = small_model(false);
    m.seen_offsets.clear();
    m.seen_items.clear();
    write_model(dir_, m);  // replaces the model of SetUp
    EXPECT_FALSE(std::filesystem::exists(file("bias.bin")));
    EXPECT_FALSE(std::filesystem::exists(file("seen.bin")));
    expect_equal(read_model(dir_), m);
    EXPECT_EQ(tmp_.count(), 1u) << "no temporary left beside the model";
}

TEST_F(ModelFile, FlippedByteInEachBinaryFileFailsItsChecksum) {
    for (const char* f : {"w.bin", "h.bin", "bias.bin", "seen.bin"}) {
        SCOPED_TRACE(f);
        const std::string good = read_all(file(f));
        std::string bad = good;
        bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x10);
        rewrite(f, bad);
        expect_refused(f, "CRC-32 mismatch");
        rewrite(f, good);
    }
    EXPECT_NO_THROW(read_model(dir_));
}

TEST_F(ModelFile, TruncatedOrMissingFileIsNamed) {
    for (const char* f : {"w.bin", "h.bin", "bias.bin", "seen.bin"}) {
        SCOPED_TRACE(f);
        const std::string good = read_all(file(f));
        rewrite(f, good.substr(0, good.size() - 1));
        expect_refused(f, "truncated");
        remove_file(f);
        expect_refused(f, "cannot open");
        rewrite(f, good);
    }
    for (const char* f : {"params.json", "users.txt", "items.txt"}) {
        const std::string good = read_all(file(f));
        remove_file(f);
        expect_refused(f, "cannot open");
        rewrite(f, good);
    }
    EXPECT_NO_THROW(read_model(dir_));
}

TEST_F(ModelFile, ParamsJsonIsParsedStrictly) {
    const auto original = params();
    const std::string good = read_all(file("params.json"));
    rewrite("params.json", good + "x");
    expect_refused("params.json", "not valid JSON");
    rewrite("params.json", good + "{}");
    expect_refused("params.json", "not valid JSON");
    rewrite("params.json", "{\"format\": \"rotor-mf-model\", \"format\": \"rotor-mf-model\"}");
    expect_refused("params.json", "\"format\" appears twice");

    auto j = original;
    j["version"] = 2;
    set_params(j);
    expect_refused("params.json", "unsupported version 2");
    j = original;
    j["format"] = "rotor-lda-model";
    set_params(j);
    expect_refused("params.json", "not a rotor MF model");
    j = original;
    j["extra"] = 1;
    set_params(j);
    expect_refused("params.json", "unknown key \"extra\"");
    j = original;
    j.erase("mu");
    set_params(j);
    expect_refused("params.json", "missing key \"mu\"");
    j = original;
    j["rank"] = "2";
    set_params(j);
    expect_refused("params.json", "\"rank\" must be");
    j = original;
    j["lambda"] = -1.0;
    set_params(j);
    expect_refused("params.json", "--lambda");
    j = original;
    j["mu"] = std::numeric_limits<double>::quiet_NaN();  // dumped as null
    set_params(j);
    expect_refused("params.json", "\"mu\" must be a finite number");
    j = original;
    j["solver"] = "svd";
    set_params(j);
    expect_refused("params.json", "\"solver\" must be");
    j = original;
    j["crc32"]["w.bin"] = -1;
    set_params(j);
    expect_refused("params.json", "\"crc32\".\"w.bin\" must be");
}

TEST_F(ModelFile, WrongShapeIsRefused) {
    auto j = params();
    j["users"] = 5;  // w.bin then holds 4 rows, not 5
    set_params(j);
    expect_refused("w.bin", "bytes where params.json implies");
    j = params();
    j["users"] = 4;
    j["rank"] = 1;
    set_params(j);
    expect_refused("w.bin", "bytes where params.json implies");
    j = params();
    j["rank"] = 2;
    set_params(j);
    EXPECT_NO_THROW(read_model(dir_));
    rewrite("items.txt", "i:1\ni,2\nx\ny\n");
    expect_refused("items.txt", "more than the 3 item ids");
    rewrite("items.txt", "i:1\ni,2\n");
    expect_refused("items.txt", "2 item ids where params.json says 3");
}

TEST_F(ModelFile, NonFiniteValueIsRefusedEvenWithAMatchingChecksum) {
    std::string bytes = read_all(file("h.bin"));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(bytes.data() + 3 * sizeof(float), &nan, sizeof nan);
    rewrite("h.bin", bytes);
    auto j = params();
    j["crc32"]["h.bin"] = static_cast<std::uint32_t>(
        crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
    set_params(j);
    expect_refused("h.bin", "non-finite value at row 1, column 1");
}

TEST_F(ModelFile, BadIdFilesAreRefusedWithTheLine) {
    rewrite("users.txt", "alice\nbob\nalice\n4\n");
    expect_refused("users.txt", ":3:1: duplicate user id \"alice\" (first on line 1)");
    rewrite("users.txt", "alice\n\ncarol dan\n4\n");
    expect_refused("users.txt", ":2:1: empty user id");
    rewrite("users.txt", "alice\nbob\ncarol\tdan\n4\n");
    expect_refused("users.txt", ":3:6: tab in a user id");
    rewrite("users.txt", "alice\nbob\ncarol dan\n4");
    expect_refused("users.txt", "no newline");
}

TEST_F(ModelFile, SeenItemsAreChecked) {
    Model m = small_model();
    m.seen_items = {0, 2, 1, 1, 0};  // user 3's items decrease
    EXPECT_THROW(write_model(tmp_.file("bad"), m), InputError);
    EXPECT_FALSE(std::filesystem::exists(tmp_.file("bad")));
}

TEST(ModelCheck, RefusesWhatCannotBeWrittenOrRead) {
    TempDir tmp;
    const std::string dir = tmp.file("m");
    const auto refused = [&](const Model& m, const std::string& what) {
        try {
            write_model(dir, m);
            ADD_FAILURE() << "no error for " << what;
        } catch (const InputError& e) {
            EXPECT_EQ(e.path(), dir);
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
        EXPECT_FALSE(std::filesystem::exists(dir));
    };
    Model m = small_model();
    m.users = IdMap();
    for (const char* u : {"alice", "b\tob", "carol", "4"}) m.users.insert(u);
    refused(m, "holds a tab or a newline");
    m = small_model();
    m.items.insert("extra");
    refused(m, "4 item ids for 3 rows");
    m = small_model();
    m.w.at(2, 1) = std::numeric_limits<float>::infinity();
    refused(m, "W: non-finite value at row 2, column 1");
    m = small_model();
    m.col_bias.pop_back();
    refused(m, "4 user and 2 item biases");
    m = small_model(false);
    m.mu = 1;
    refused(m, "mu must be 0");
    m = small_model();
    m.h = Factors(3, 3);
    refused(m, "rank K = 2 (W) and 3 (H)");
    m = small_model();
    m.solver = "svd";
    refused(m, "not ccd, sgd or als");
}

}  // namespace
}  // namespace rotor::mf
