// Every file of every model directory, model file and checkpoint of the four models, damaged in
// every way the hostile-input run tried (single-bit flips, truncation, bytes appended with and
// without a NUL, deletion, a file added), is refused by the model's own reader with an error
// naming the file (docs/reliability.md, theme 2; docs/formats.md, "Manifests"). The models are
// trained once per suite by the real binary (tiny data, 2 iterations, a checkpoint each); the
// damage is done in place, read in-process, and undone, so thousands of cases take a second or two.
// Also: models of rotor before the manifest still read; NUL-hidden garbage in their JSON does
// not; an edit on purpose is refused until `rotor seal`, which seals nothing unreadable.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/lasso/checkpoint.h"
#include "apps/lda/checkpoint.h"
#include "apps/logreg/checkpoint.h"
#include "apps/mf/checkpoint.h"
#include "apps/seal_cli.h"
#include "core/base/error.h"
#include "core/io/manifest.h"
#include "core/lasso/model_file.h"
#include "core/lda/model.h"
#include "core/logreg/model_file.h"
#include "core/mf/model_file.h"
#include "tests/apps/mf/rotor_cli_util.h"
#include "tests/core/io/temp_dir.h"

namespace rotor {
namespace {

namespace fs = std::filesystem;
using apps::testing::run_rotor;
using rotor::testing::read_all;
using rotor::testing::TempDir;

void write_all(const std::string& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

/// One thing a model writes, and the reader its commands use.
struct Saved {
    std::string name;                              ///< for the report
    std::string path;                              ///< directory or file
    std::function<void(const std::string&)> read;  ///< throws InputError when refused
};

/// Tallies of one kind of damage.
struct Tally {
    int tried = 0;
    int refused = 0;  ///< InputError naming the damaged file
    int accepted = 0;
};

class SealedFiles : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        const TempDir& d = *dir_;
        // LDA: a folder of text files, so the model has docs.txt as well as vocab.txt.
        fs::create_directory(d.file("docs"));
        const char* texts[] = {"apple banana cherry apple banana", "cherry apple grape grape",
                               "melon grape banana melon",         "apple melon cherry banana",
                               "grape cherry melon apple",         "banana banana grape melon"};
        for (int i = 0; i < 6; ++i)
            write_all(d.file("docs/d" + std::to_string(i) + ".txt"), texts[i]);
        run("corpus build --corpus " + d.file("docs") +
            " --format text --min-df 1 --no-stopwords"
            " --out " +
            d.file("c.bin"));
        run("lda train -q --threads 1 --corpus " + d.file("c.bin") +
            " --topics 2 --iterations 2 --checkpoint-every 1 --out " + d.file("lda"));
        // MF: 6 users x 5 items.
        std::string ratings = "user,item,rating\n";
        for (int u = 1; u <= 6; ++u)
            for (int i = 1; i <= 5; ++i)
                if ((u + i) % 3 != 0) ratings += rating_line(u, i, 1 + (u * i) % 5);
        write_all(d.file("r.csv"), ratings);
        run("mf train -q --threads 1 --train " + d.file("r.csv") +
            " --rank 2 --iterations 2 --checkpoint-every 1 --out " + d.file("mf"));
        // Lasso and logistic regression: 12 samples of 4 features.
        std::string svm, labelled;
        for (int s = 0; s < 12; ++s) {
            svm += std::to_string(s % 5) + ".5";
            labelled += s % 3 == 0 ? "+1" : "-1";
            for (int j = 1; j <= 4; ++j) {
                const std::string e = " " + std::to_string(j) + ":" + std::to_string((s * j) % 7);
                svm += e;
                labelled += e;
            }
            svm += "\n";
            labelled += "\n";
        }
        write_all(d.file("d.svm"), svm);
        write_all(d.file("l.svm"), labelled);
        run("lasso train -q --threads 1 --data " + d.file("d.svm") +
            " --lambda 0.05 --checkpoint-every 1 --out " + d.file("lasso.txt"));
        run("logreg train -q --threads 1 --data " + d.file("l.svm") +
            " --lambda 0.1 --iterations 2 --checkpoint-every 1 --out " + d.file("logreg.txt"));
    }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }

    static std::string rating_line(int u, int i, int r) {
        return std::to_string(u) + "," + std::to_string(i) + "," + std::to_string(r) + "\n";
    }
    static void run(const std::string& args) {
        const auto r = run_rotor(*dir_, args);
        ASSERT_EQ(r.code, 0) << args << "\n" << r.err;
    }
    static std::string path(const std::string& name) { return dir_->file(name); }

    static std::vector<Saved> lda() {
        return {{"LDA model", path("lda"), [](const std::string& p) { lda::load_model(p); }},
                {"LDA checkpoint", path("lda.checkpoint"),
                 [](const std::string& p) { lda::read_checkpoint(p, 0, 1); }}};
    }
    static std::vector<Saved> mf() {
        return {{"MF model", path("mf"), [](const std::string& p) { mf::read_model(p); }},
                {"MF checkpoint", path("mf.checkpoint"),
                 [](const std::string& p) { mf::read_checkpoint(p); }}};
    }
    static std::vector<Saved> lasso() {
        return {
            {"Lasso model", path("lasso.txt"), [](const std::string& p) { lasso::read_model(p); }},
            {"Lasso checkpoint", path("lasso.txt.checkpoint"),
             [](const std::string& p) { lasso::read_checkpoint(p); }}};
    }
    static std::vector<Saved> logreg() {
        return {{"logreg model", path("logreg.txt"),
                 [](const std::string& p) { logreg::read_model(p); }},
                {"logreg checkpoint", path("logreg.txt.checkpoint"),
                 [](const std::string& p) { logreg::read_checkpoint(p); }}};
    }

    /// Damages every file of each of `saved` in every way, reads it, undoes the damage. Every
    /// case must be refused by an InputError whose message names the damaged file; the tallies
    /// are printed (docs/reliability.md quotes them).
    static void expect_every_damage_refused(const std::vector<Saved>& saved) {
        for (const Saved& s : saved) {
            ASSERT_NO_THROW(s.read(s.path)) << s.name << " does not read undamaged";
            std::vector<std::string> files;
            if (fs::is_directory(s.path)) {
                for (const auto& e : fs::directory_iterator(s.path))
                    files.push_back(e.path().string());
                std::sort(files.begin(), files.end());
            } else {
                files.push_back(s.path);
            }
            std::map<std::string, Tally> tallies;
            std::vector<std::string> failures;
            for (const std::string& file : files) {
                const std::string original = read_all(file);
                const auto attempt = [&](const std::string& kind, const std::string& what,
                                         const std::function<void()>& damage) {
                    Tally& t = tallies[kind];
                    ++t.tried;
                    damage();
                    std::string verdict;
                    try {
                        s.read(s.path);
                        ++t.accepted;
                        verdict = "accepted";
                    } catch (const InputError& e) {
                        if (std::string(e.what()).find(file) != std::string::npos) {
                            ++t.refused;
                        } else {
                            verdict = std::string("refused naming another file: ") + e.what();
                        }
                    } catch (const std::exception& e) {
                        verdict = std::string("not an InputError: ") + e.what();
                    }
                    write_all(file, original);  // undo (a deleted file comes back too)
                    if (!verdict.empty()) failures.push_back(file + ": " + what + ": " + verdict);
                };
                // Single-bit flips: every byte of a small file, 64 spread bytes of a larger one.
                const std::size_t n = original.size();
                ASSERT_GT(n, 0U) << file;
                const std::size_t flips = std::min<std::size_t>(n, 64);
                for (std::size_t k = 0; k < flips; ++k) {
                    const std::size_t at = flips == n ? k : k * (n - 1) / (flips - 1);
                    const int bit = static_cast<int>((k * 3) % 8);
                    attempt("bit flip",
                            "bit " + std::to_string(bit) + " of byte " + std::to_string(at), [&] {
                                std::string b = original;
                                b[at] = static_cast<char>(b[at] ^ (1 << bit));
                                write_all(file, b);
                            });
                }
                for (const std::size_t keep : {std::size_t{0}, n / 2, n - 1}) {
                    attempt("truncation", "cut to " + std::to_string(keep) + " bytes",
                            [&] { write_all(file, original.substr(0, keep)); });
                }
                for (const std::string& tail :
                     {std::string("X"), std::string("\n"), std::string("\0", 1),
                      std::string("\0GARBAGE", 8)}) {
                    attempt(tail.find('\0') != std::string::npos ? "appended, with a NUL"
                                                                 : "appended, no NUL",
                            "appended " + std::to_string(tail.size()) + " bytes",
                            [&] { write_all(file, original + tail); });
                }
                attempt("deletion", "deleted", [&] { fs::remove(file); });
            }
            if (fs::is_directory(s.path)) {
                // A file the directory was not written with (docs.txt would change an LDA model).
                const std::string added = s.path + "/docs.txt.extra";
                Tally& t = tallies["file added"];
                ++t.tried;
                write_all(added, "x\n");
                try {
                    s.read(s.path);
                    ++t.accepted;
                    failures.push_back(added + ": accepted");
                } catch (const InputError& e) {
                    if (std::string(e.what()).find(added) != std::string::npos)
                        ++t.refused;
                    else
                        failures.push_back(added + ": " + e.what());
                }
                fs::remove(added);
            }
            for (const auto& [kind, t] : tallies)
                std::printf("%s, %zu files, %s: tried %d, refused %d, accepted %d\n",
                            s.name.c_str(), files.size(), kind.c_str(), t.tried, t.refused,
                            t.accepted);
            EXPECT_TRUE(failures.empty())
                << s.name << ": " << failures.size() << " cases wrong, first: " << failures.front();
            ASSERT_NO_THROW(s.read(s.path)) << s.name << " was not restored";
        }
    }

    /// A copy of fixture `name` at `to`, as a model of rotor before the manifest wrote it: no
    /// MANIFEST, no "manifest" key in its JSON file.
    static std::string older_copy(const std::string& name, const std::string& json,
                                  const TempDir& to) {
        const std::string copy = to.file(name);
        fs::copy(path(name), copy, fs::copy_options::recursive);
        fs::remove(copy + "/MANIFEST");
        const std::string json_path = copy + "/" + json;
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(read_all(json_path));
        j.erase("manifest");
        write_all(json_path, j.dump(2) + "\n");
        return copy;
    }

    static TempDir* dir_;
};

TempDir* SealedFiles::dir_ = nullptr;

TEST_F(SealedFiles, LdaModelAndCheckpointRefuseEveryDamageNamingTheFile) {
    expect_every_damage_refused(lda());
}

TEST_F(SealedFiles, MfModelAndCheckpointRefuseEveryDamageNamingTheFile) {
    expect_every_damage_refused(mf());
}

TEST_F(SealedFiles, LassoModelAndCheckpointRefuseEveryDamageNamingTheFile) {
    expect_every_damage_refused(lasso());
}

TEST_F(SealedFiles, LogregModelAndCheckpointRefuseEveryDamageNamingTheFile) {
    expect_every_damage_refused(logreg());
}

TEST_F(SealedFiles, ModelsOfOlderRotorsStillReadButNotWithGarbageBehindANul) {
    const TempDir scratch;
    const std::vector<std::pair<Saved, std::string>> older = {
        {{"LDA model", older_copy("lda", "params.json", scratch),
          [](const std::string& p) { lda::load_model(p); }},
         "params.json"},
        {{"MF model", older_copy("mf", "params.json", scratch),
          [](const std::string& p) { mf::read_model(p); }},
         "params.json"},
        {{"LDA checkpoint", older_copy("lda.checkpoint", "state.json", scratch),
          [](const std::string& p) { lda::read_checkpoint(p, 0, 1); }},
         "state.json"},
        {{"MF checkpoint", older_copy("mf.checkpoint", "state.json", scratch),
          [](const std::string& p) { mf::read_checkpoint(p); }},
         "state.json"},
        {{"Lasso checkpoint", older_copy("lasso.txt.checkpoint", "state.json", scratch),
          [](const std::string& p) { lasso::read_checkpoint(p); }},
         "state.json"},
        {{"logreg checkpoint", older_copy("logreg.txt.checkpoint", "state.json", scratch),
          [](const std::string& p) { logreg::read_checkpoint(p); }},
         "state.json"}};
    for (const auto& [s, json] : older) {
        EXPECT_NO_THROW(s.read(s.path)) << s.name << " without a manifest";
        // Issue 37: `{...}\0GARBAGE` was read as `{...}`: nlohmann/json stops at a NUL.
        const std::string json_path = s.path + "/" + json;
        const std::string text = read_all(json_path);
        write_all(json_path, text + std::string("\0GARBAGE", 8));
        try {
            s.read(s.path);
            ADD_FAILURE() << s.name << ": garbage behind a NUL accepted";
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(json_path), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("NUL"), std::string::npos) << e.what();
        }
        write_all(json_path, text);
        // A manifest its JSON does not claim cannot be deleted unseen, but one it claims can not.
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
        j["manifest"] = "MANIFEST";
        write_all(json_path, j.dump(2) + "\n");
        try {
            s.read(s.path);
            ADD_FAILURE() << s.name << ": a claimed manifest missing was accepted";
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(s.path + "/MANIFEST"), std::string::npos)
                << e.what();
        }
        write_all(json_path, text);
    }
    // A logistic-regression model of version 1: no crc32 line.
    std::string text = read_all(path("logreg.txt"));
    text.replace(0, std::string("rotor-logreg-model 2").size(), "rotor-logreg-model 1");
    text.erase(text.rfind("crc32 "));
    const std::string v1 = scratch.write("v1.txt", text);
    const logreg::Model m = logreg::read_model(v1);
    EXPECT_EQ(m.weights, logreg::read_model(path("logreg.txt")).weights);
    // `rotor verify` says what it is; `rotor seal` makes it version 2.
    auto r = run_rotor(scratch, "verify " + v1);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("without a manifest"), std::string::npos) << r.out;
    r = run_rotor(scratch, "seal " + v1);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_all(v1), read_all(path("logreg.txt")));
}

TEST_F(SealedFiles, AnEditOnPurposeIsRefusedUntilSealedAndABrokenOneIsNotSealed) {
    const TempDir scratch;
    const std::string model = scratch.file("lda");
    fs::copy(path("lda"), model, fs::copy_options::recursive);
    auto r = run_rotor(scratch, "verify " + model);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("LDA model, 6 files verified"), std::string::npos) << r.out;
    // The edit: a field of params.json changed by hand.
    const std::string params = model + "/params.json";
    const std::string text = read_all(params);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
    j["corpus"] = "/elsewhere/c.bin";
    write_all(params, j.dump(2) + "\n");
    r = run_rotor(scratch, "lda topics --model " + model);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(params + ": has "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("rotor seal"), std::string::npos) << r.err;
    r = run_rotor(scratch, "seal " + model);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(lda::load_model(model).info.corpus, "/elsewhere/c.bin");
    // An edit that breaks the model is not sealed: the manifest stays as it was.
    const std::string manifest = read_all(model + "/MANIFEST");
    write_all(params, "{\"format\": \"rotor-lda-model\"}\n");
    r = run_rotor(scratch, "seal " + model);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("not sealed"), std::string::npos) << r.err;
    EXPECT_EQ(read_all(model + "/MANIFEST"), manifest);

    // The checkpoint edit: "deterministic": false, refused on --resume (exit 2).
    const std::string ckpt = scratch.file("lda.checkpoint");
    fs::copy(path("lda.checkpoint"), ckpt, fs::copy_options::recursive);
    const std::string state = ckpt + "/state.json";
    std::string s = read_all(state);
    const std::size_t at = s.find("\"deterministic\": true");
    const std::string was = at != std::string::npos ? "true" : "false";
    const std::size_t pos = s.find("\"deterministic\": " + was);
    ASSERT_NE(pos, std::string::npos) << s;
    s.replace(pos, std::string("\"deterministic\": " + was).size(),
              std::string("\"deterministic\": ") + (was == "true" ? "false" : "true"));
    write_all(state, s);
    r = run_rotor(scratch, "lda train -q --threads 1 --corpus " + path("c.bin") +
                               " --iterations 3 --resume " + ckpt + " --out " + scratch.file("m2"));
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(state), std::string::npos) << r.err;

    // A Lasso model's coefficient edited by hand: refused, then sealed and read as edited.
    const std::string lasso_model = scratch.write("lasso.txt", read_all(path("lasso.txt")));
    std::string lt = read_all(lasso_model);
    const std::size_t beta0 = lt.find("beta0\t");
    ASSERT_NE(beta0, std::string::npos);
    lt.replace(beta0, lt.find('\n', beta0) - beta0, "beta0\t2.5");
    write_all(lasso_model, lt);
    r = run_rotor(scratch, "verify " + lasso_model);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find(lasso_model), std::string::npos) << r.err;
    r = run_rotor(scratch, "seal " + lasso_model);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(lasso::read_model(lasso_model).intercept, 2.5);
}

}  // namespace
}  // namespace rotor
