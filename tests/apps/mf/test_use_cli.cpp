// `rotor mf predict | recommend | eval | export` through the real binary, on a small known model
// written with write_model: every number printed is checked against ModelView::predict.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/rng.h"
#include "core/mf/model_file.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::apps {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;
using testing::run_rotor;

/// The lines of `text`, split at tabs.
std::vector<std::vector<std::string>> tsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        rows.emplace_back();
        std::size_t pos = 0;
        while (true) {
            const std::size_t tab = line.find('\t', pos);
            rows.back().push_back(line.substr(pos, tab - pos));
            if (tab == std::string::npos) break;
            pos = tab + 1;
        }
    }
    return rows;
}

/// Entries of `dir` whose name starts with `prefix` (an output or its temporary).
int entries_named(const TempDir& dir, const std::string& prefix) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        if (e.path().filename().string().starts_with(prefix)) ++n;
    return n;
}

class MfUseCli : public ::testing::Test {
  protected:
    /// 5 users x 6 items, K = 3, random factors and biases; items i4 and i5 are identical (a
    /// tie); user u0 rated i1 and i3 in training.
    void SetUp() override {
        Rng rng(11);
        m_.solver = "ccd";
        m_.mu = 3.25;
        m_.w = mf::Factors(5, 3);
        m_.h = mf::Factors(6, 3);
        for (float& v : m_.w.values()) v = static_cast<float>(rng.uniform() * 2 - 1);
        for (float& v : m_.h.values()) v = static_cast<float>(rng.uniform() * 2 - 1);
        for (int u = 0; u < 5; ++u) m_.row_bias.push_back(static_cast<float>(rng.uniform() - 0.5));
        for (int i = 0; i < 6; ++i) m_.col_bias.push_back(static_cast<float>(rng.uniform() - 0.5));
        for (std::uint32_t k = 0; k < 3; ++k) m_.h.at(5, k) = m_.h.at(4, k);
        m_.col_bias[5] = m_.col_bias[4];
        for (int u = 0; u < 5; ++u) m_.users.insert("u" + std::to_string(u));
        for (int i = 0; i < 6; ++i) m_.items.insert("i" + std::to_string(i));
        m_.seen_offsets = {0, 2, 3, 3, 3, 4};
        m_.seen_items = {1, 3, 0, 5};
        model_ = dir_.file("model");
        mf::write_model(model_, m_);
    }

    /// The model's prediction for ids as strings (unknown ids: past the end, as predict does).
    double predict(const std::string& user, const std::string& item) const {
        const auto u = m_.users.find(user).value_or(m_.users.size());
        const auto i = m_.items.find(item).value_or(m_.items.size());
        return m_.view().predict(u, i);
    }

    testing::CommandResult rotor(const std::string& args) const { return run_rotor(dir_, args); }

    TempDir dir_;
    mf::Model m_;
    std::string model_;
};

TEST_F(MfUseCli, PredictScoresEveryPairLikeTheModelView) {
    const std::string pairs = dir_.write("pairs.csv",
                                         "user,item\nu0,i1\nu4, i5 \n# a comment\n\nu2,i0,3.5\n"
                                         "newbie,i2\nu3,newitem\nnobody,nothing\n");
    const auto r = rotor("mf predict --model " + model_ + " --pairs " + pairs + " --out " +
                         dir_.file("pred.tsv"));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("6 pairs scored, 3 with an unseen user or item"), std::string::npos)
        << r.err;
    const auto rows = tsv(read_all(dir_.file("pred.tsv")));
    ASSERT_EQ(rows.size(), 6u);
    const std::vector<std::pair<std::string, std::string>> expect = {
        {"u0", "i1"},     {"u4", "i5"},      {"u2", "i0"},
        {"newbie", "i2"}, {"u3", "newitem"}, {"nobody", "nothing"}};
    for (std::size_t k = 0; k < rows.size(); ++k) {
        ASSERT_EQ(rows[k].size(), 3u);
        EXPECT_EQ(rows[k][0], expect[k].first);
        EXPECT_EQ(rows[k][1], expect[k].second);
        const double want = predict(expect[k].first, expect[k].second);
        EXPECT_NEAR(std::strtod(rows[k][2].c_str(), nullptr), want, 1e-7 * std::abs(want))
            << rows[k][0] << " " << rows[k][1];
    }
    // Both unknown: μ alone; an unknown user: μ + c_j.
    EXPECT_EQ(std::strtod(rows[5][2].c_str(), nullptr), 3.25);
    EXPECT_NEAR(std::strtod(rows[3][2].c_str(), nullptr), 3.25 + m_.col_bias[2], 1e-6);
    // Blank-separated, to stdout: the same text.
    const std::string blank = dir_.write("pairs.txt", "u0 i1\nu4\ti5\nu2 i0\n");
    const auto s = rotor("mf predict --model " + model_ + " --pairs " + blank);
    ASSERT_EQ(s.code, 0) << s.err;
    const std::string file = read_all(dir_.file("pred.tsv"));
    EXPECT_EQ(s.out, file.substr(0, s.out.size()));
    EXPECT_EQ(tsv(s.out).size(), 3u);
}

TEST_F(MfUseCli, PredictRefusesABadLineAndLeavesNoOutput) {
    const std::string out = dir_.file("bad_pred.tsv");
    const std::string cases[][2] = {
        {"u0,i1\nu1\n", ":2:3: missing item id"},
        {"u0 i1\nu1 i2,x\n", ":2:6: ',' in a blank-separated file"},
        {"u0,i1\nu1,\"i2\"\n", ":2:4: quoted fields are not supported"},
        {"u0,i1\n, i2\n", ":2:1: empty user id"},
    };
    for (const auto& [text, what] : cases) {
        const std::string pairs = dir_.write("bad.csv", text);
        const auto r =
            rotor("mf predict --model " + model_ + " --pairs " + pairs + " --out " + out);
        EXPECT_EQ(r.code, 2) << text;
        EXPECT_NE(r.err.find("rotor: error: " + pairs + what), std::string::npos) << r.err;
        EXPECT_EQ(entries_named(dir_, "bad_pred.tsv"), 0) << text;
    }
    const auto r = rotor("mf predict --model " + dir_.file("nomodel") + " --pairs " +
                         dir_.write("ok.csv", "u0,i1\n") + " --out " + out);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(dir_.file("nomodel") + "/params.json: cannot open"), std::string::npos)
        << r.err;
    EXPECT_EQ(entries_named(dir_, "bad_pred.tsv"), 0);
}

TEST_F(MfUseCli, PredictHeaderFlag) {
    // "u0,i1" holds known ids: data even in auto mode; --header yes skips it.
    const std::string pairs = dir_.write("h.csv", "u0,i1\nu1,i2\n");
    const auto a = rotor("mf predict --model " + model_ + " --pairs " + pairs);
    ASSERT_EQ(a.code, 0) << a.err;
    EXPECT_EQ(tsv(a.out).size(), 2u);
    const auto y = rotor("mf predict --header yes --model " + model_ + " --pairs " + pairs);
    ASSERT_EQ(y.code, 0) << y.err;
    EXPECT_EQ(tsv(y.out).size(), 1u);
    const std::string unknown = dir_.write("n.csv", "x,y\nu1,i2\n");
    const auto n = rotor("mf predict --header no --model " + model_ + " --pairs " + unknown);
    ASSERT_EQ(n.code, 0) << n.err;
    EXPECT_EQ(tsv(n.out).size(), 2u);
    EXPECT_EQ(rotor("mf predict --header maybe --model " + model_ + " --pairs " + unknown).code, 3);
}

TEST_F(MfUseCli, RecommendLeavesOutSeenItemsAndBreaksTiesByIndex) {
    // Brute force: the items of u0 by score, ties by index.
    const auto ranked = [&](const std::string& user, const std::vector<std::string>& skip) {
        std::vector<std::pair<double, int>> all;
        for (int i = 0; i < 6; ++i) {
            const std::string id = "i" + std::to_string(i);
            if (std::find(skip.begin(), skip.end(), id) == skip.end())
                all.emplace_back(-predict(user, id), i);
        }
        std::sort(all.begin(), all.end());
        std::vector<std::string> out;
        for (const auto& [s, i] : all) out.push_back("i" + std::to_string(i));
        return out;
    };
    const auto check = [&](const std::string& args, const std::string& user,
                           const std::vector<std::string>& want) {
        const auto r = rotor("mf recommend --model " + model_ + " " + args);
        ASSERT_EQ(r.code, 0) << r.err;
        const auto rows = tsv(r.out);
        ASSERT_EQ(rows.size(), want.size()) << r.out;
        for (std::size_t k = 0; k < rows.size(); ++k) {
            EXPECT_EQ(rows[k][0], user);
            EXPECT_EQ(rows[k][1], want[k]) << r.out;
            const double p = predict(user, rows[k][1]);
            EXPECT_NEAR(std::strtod(rows[k][2].c_str(), nullptr), p, 1e-7 * std::abs(p));
        }
    };
    auto want = ranked("u0", {"i1", "i3"});
    want.resize(3);
    check("--user u0 --top 3", "u0", want);
    check("--user u0 --top 10", "u0", ranked("u0", {"i1", "i3"}));  // only 4 left
    check("--user u0 --top 6 --include-seen", "u0", ranked("u0", {}));
    // i4 and i5 tie for every user: i4 always comes first.
    for (const char* user : {"u1", "u2", "u3"}) {
        const auto all = ranked(user, {});
        EXPECT_LT(std::find(all.begin(), all.end(), "i4"), std::find(all.begin(), all.end(), "i5"));
        check(std::string("--include-seen --top 6 --user ") + user, user, all);
    }
    // Unknown user: by item bias, said on stderr.
    const auto r = rotor("mf recommend --model " + model_ + " --user stranger --top 6");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("user \"stranger\" is not in the model"), std::string::npos) << r.err;
    check("--user stranger --top 6", "stranger", ranked("stranger", {}));
    std::vector<std::pair<float, int>> by_bias;
    for (int i = 0; i < 6; ++i) by_bias.emplace_back(-m_.col_bias[i], i);
    std::sort(by_bias.begin(), by_bias.end());
    EXPECT_EQ(tsv(r.out)[0][1], "i" + std::to_string(by_bias[0].second));
    EXPECT_EQ(rotor("mf recommend --model " + model_ + " --user u0 --top 0").code, 3);
}

TEST_F(MfUseCli, EvalMatchesTheModelsErrorsAndCountsUnseenRatings) {
    const std::string test =
        dir_.write("test.csv", "u0,i0,4\nu1,i2,1.5\nu4,i5,5\nnew,i1,3\nu2,newitem,2\n");
    const auto r = rotor("mf eval --json --model " + model_ + " --test " + test);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const std::vector<std::tuple<std::string, std::string, double>> t = {{"u0", "i0", 4},
                                                                         {"u1", "i2", 1.5},
                                                                         {"u4", "i5", 5},
                                                                         {"new", "i1", 3},
                                                                         {"u2", "newitem", 2}};
    double se = 0, ae = 0;
    for (const auto& [u, i, a] : t) {
        se += (a - predict(u, i)) * (a - predict(u, i));
        ae += std::abs(a - predict(u, i));
    }
    EXPECT_NEAR(j.at("rmse").get<double>(), std::sqrt(se / 5), 1e-12);
    EXPECT_NEAR(j.at("mae").get<double>(), ae / 5, 1e-12);
    EXPECT_EQ(j.at("count").get<int>(), 5);
    EXPECT_EQ(j.at("unseen_ratings").get<int>(), 2);
    EXPECT_EQ(j.at("new_users").get<int>(), 1);
    EXPECT_EQ(j.at("new_items").get<int>(), 1);
    const auto text = rotor("mf eval --model " + model_ + " --test " + test);
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("rmse: "), std::string::npos);
    EXPECT_NE(text.out.find("count: 5\nunseen_ratings: 2\n"), std::string::npos) << text.out;
    const std::string bad = dir_.write("bad.csv", "u0,i0,4\nu1,i2,high\n");
    const auto b = rotor("mf eval --model " + model_ + " --test " + bad);
    EXPECT_EQ(b.code, 2);
    EXPECT_NE(b.err.find(bad + ":2:7: rating \"high\" is not a number"), std::string::npos)
        << b.err;
}

/// An implicit (als) model: eval ranks instead of RMSE, against the top k computed here from
/// the factors (seen items left out, unknown users and items skipped); recommend leaves the
/// seen items out; a held-out file with nothing to rank names itself.
TEST_F(MfUseCli, EvalRanksAnImplicitModel) {
    mf::Model m = m_;
    m.solver = "als";
    m.alpha = 1.5;
    m.mu = 0;
    m.params.bias = false;
    m.params.form = mf::LambdaForm::kPlain;
    m.row_bias.clear();
    m.col_bias.clear();
    const std::string model = dir_.file("als-model");
    mf::write_model(model, m);
    const std::string test =
        dir_.write("held.txt", "u0 i0 1\nu0 i4 1\nu1 i2 1\nnew i1 1\nu2 newitem 1\n");
    const auto r = rotor("mf eval --json --ranking 2 --model " + model + " --test " + test);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_FALSE(j.contains("rmse"));
    // Expected: users u0 (held i0, i4) and u1 (held i2), k = 2.
    const auto top2 = [&](std::uint32_t u) {
        std::vector<std::pair<double, std::uint32_t>> s;
        for (std::uint32_t i = 0; i < 6; ++i) {
            bool seen = false;
            for (auto t = m.seen_offsets[u]; t < m.seen_offsets[u + 1]; ++t)
                seen = seen || m.seen_items[t] == i;
            if (!seen) s.emplace_back(-mf::dot(m.w.row(u), m.h.row(i)), i);
        }
        std::sort(s.begin(), s.end());
        return std::vector<std::uint32_t>{s[0].second, s[1].second};
    };
    const std::vector<std::vector<std::uint32_t>> held = {{0, 4}, {2}};
    double precision = 0, ap = 0, ndcg = 0;
    for (std::uint32_t u = 0; u < 2; ++u) {
        const auto top = top2(u);
        double hits = 0, a = 0, dcg = 0;
        for (std::size_t n = 0; n < 2; ++n) {
            if (std::find(held[u].begin(), held[u].end(), top[n]) == held[u].end()) continue;
            hits += 1;
            a += hits / static_cast<double>(n + 1);
            dcg += 1 / std::log2(static_cast<double>(n) + 2);
        }
        const std::size_t ideal = std::min<std::size_t>(2, held[u].size());
        double idcg = 0;
        for (std::size_t n = 0; n < ideal; ++n) idcg += 1 / std::log2(static_cast<double>(n) + 2);
        precision += hits / 2;
        ap += a / static_cast<double>(ideal);
        ndcg += dcg / idcg;
    }
    EXPECT_EQ(j.at("k").get<int>(), 2);
    EXPECT_EQ(j.at("ranked_users").get<int>(), 2);
    EXPECT_NEAR(j.at("precision_at_k").get<double>(), precision / 2, 1e-12);
    EXPECT_NEAR(j.at("map_at_k").get<double>(), ap / 2, 1e-12);
    EXPECT_NEAR(j.at("ndcg_at_k").get<double>(), ndcg / 2, 1e-12);
    EXPECT_EQ(j.at("unseen_ratings").get<int>(), 2);
    // Text form, k = 10 by default for an implicit model.
    const auto text = rotor("mf eval --model " + model + " --test " + test);
    ASSERT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("k: 10\nprecision_at_k: "), std::string::npos) << text.out;
    const auto rec = rotor("mf recommend --model " + model + " --user u0 --top 6");
    ASSERT_EQ(rec.code, 0) << rec.err;
    const auto rows = tsv(rec.out);
    EXPECT_EQ(rows.size(), 4u);  // 6 items, 2 seen
    for (const auto& row : rows) EXPECT_TRUE(row.at(1) != "i1" && row.at(1) != "i3") << rec.out;
    const std::string none = dir_.write("none.txt", "new i1 1\nu2 newitem 1\n");
    const auto e = rotor("mf eval --model " + model + " --test " + none);
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_NE(e.err.find(none), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("nothing to rank"), std::string::npos) << e.err;
    const std::string empty = dir_.write("empty.txt", "");
    const auto e2 = rotor("mf eval --model " + model + " --test " + empty);
    EXPECT_EQ(e2.code, 2) << e2.err;
    EXPECT_NE(e2.err.find(empty), std::string::npos) << e2.err;
}

TEST_F(MfUseCli, ExportWritesFactorsThatReadBackIdentical) {
    const std::string out = dir_.file("export");
    const auto r = rotor("mf export --model " + model_ + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto check = [](const std::string& file, const mf::Factors& f, const mf::IdMap& ids) {
        const auto rows = tsv(read_all(file));
        ASSERT_EQ(rows.size(), f.rows());
        for (std::uint32_t i = 0; i < f.rows(); ++i) {
            ASSERT_EQ(rows[i].size(), f.k() + 1);
            EXPECT_EQ(rows[i][0], ids.name(i));
            for (std::uint32_t k = 0; k < f.k(); ++k)
                EXPECT_EQ(std::strtof(rows[i][k + 1].c_str(), nullptr), f.at(i, k));
        }
    };
    check(out + "/W.tsv", m_.w, m_.users);
    check(out + "/H.tsv", m_.h, m_.items);
    const auto b = tsv(read_all(out + "/biases.tsv"));
    ASSERT_EQ(b.size(), 1u + 5 + 6);
    EXPECT_EQ(b[0], (std::vector<std::string>{"mean", "*", "3.25"}));
    EXPECT_EQ(b[1][0], "user");
    EXPECT_EQ(b[1][1], "u0");
    EXPECT_EQ(std::strtof(b[1][2].c_str(), nullptr), m_.row_bias[0]);
    EXPECT_EQ(b[6][0], "item");
    EXPECT_EQ(b[11][1], "i5");
    EXPECT_EQ(std::strtof(b[11][2].c_str(), nullptr), m_.col_bias[5]);
    // A corrupt model: exit 2, nothing written.
    std::string w = read_all(model_ + "/w.bin");
    w[0] = static_cast<char>(w[0] ^ 1);
    std::filesystem::remove(model_ + "/w.bin");
    dir_.write("model/w.bin", w);
    const auto bad = rotor("mf export --model " + model_ + " --out " + dir_.file("export2"));
    EXPECT_EQ(bad.code, 2);
    EXPECT_NE(bad.err.find(model_ + "/w.bin: CRC-32 differs from the manifest's"),
              std::string::npos)
        << bad.err;
    EXPECT_EQ(entries_named(dir_, "export2"), 0);
}

// export --out: a directory that is not rotor's is never replaced (it was deleted and replaced
// whole), an earlier export only with --overwrite, and a missing parent is refused.
TEST_F(MfUseCli, ExportReplacesOnlyAnEarlierExportWithOverwrite) {
    std::filesystem::create_directory(dir_.file("photos"));
    dir_.write("photos/cat.jpg", "meow");
    const std::string exp = "mf export --model " + model_ + " --out ";
    auto r = rotor(exp + dir_.file("photos"));
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_NE(r.err.find("not an output of rotor"), std::string::npos) << r.err;
    EXPECT_EQ(read_all(dir_.file("photos/cat.jpg")), "meow");
    EXPECT_EQ(rotor(exp + dir_.file("photos") + " --overwrite").code, 3);
    EXPECT_EQ(read_all(dir_.file("photos/cat.jpg")), "meow");
    ASSERT_EQ(rotor(exp + dir_.file("e")).code, 0);
    r = rotor(exp + dir_.file("e"));
    EXPECT_EQ(r.code, 3);
    EXPECT_NE(r.err.find("give --overwrite"), std::string::npos) << r.err;
    EXPECT_EQ(rotor(exp + dir_.file("e") + " --overwrite").code, 0);
    EXPECT_EQ(rotor(exp + dir_.file("no/e")).code, 3);
    EXPECT_FALSE(std::filesystem::exists(dir_.file("no")));
}

}  // namespace
}  // namespace rotor::apps
