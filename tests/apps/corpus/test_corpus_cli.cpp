// End-to-end tests of `rotor corpus build|info`: the real executable, real files, exit codes.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/corpus/corpus.h"
#include "tests/core/io/temp_dir.h"

namespace rotor {
namespace {

using rotor::testing::read_all;
using rotor::testing::TempDir;

struct RunResult {
    int exit_code;
    std::string out;
    std::string err;
};

/// Runs `rotor <args>` (args are shell words, already quoted as needed).
RunResult run_rotor(const TempDir& dir, const std::string& args) {
    const std::string out = dir.file("stdout.log");
    const std::string err = dir.file("stderr.log");
    const std::string cmd =
        std::string(ROTOR_BINARY_DIR "/apps/rotor ") + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    RunResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_all(out), read_all(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
}

std::string text_corpus() {
    // 12 documents: "kernel" in all, "driver" in 6, "memory" in 5, "rare" in 1, stop words.
    std::string t;
    for (int i = 0; i < 12; ++i) {
        t += "The kernel";
        if (i % 2 == 0) t += " driver";
        if (i < 5) t += " memory and the memory";
        if (i == 7) t += " rare";
        t += "\n";
        if (i == 3) t += "\n";  // an empty line: no document
    }
    return t;
}

TEST(CorpusCli, BuildTextThenInfo) {
    TempDir dir;
    const std::string input = dir.write("docs.txt", text_corpus());
    const std::string out = dir.file("c.bin");
    RunResult r = run_rotor(
        dir, "corpus build --input " + input + " --out " + out + " --uci-out " + dir.file("uci"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const core::LoadedCorpus l = core::load_corpus(out, "");
    ASSERT_TRUE(l.vocab.has_value());
    // kernel 12 tokens, memory 10, driver 6; "rare" (df 1) and stop words dropped.
    ASSERT_EQ(l.vocab->size(), 3u);
    EXPECT_EQ(l.vocab->word(0), "kernel");
    EXPECT_EQ(l.vocab->word(1), "memory");
    EXPECT_EQ(l.vocab->word(2), "driver");
    EXPECT_EQ(l.corpus.num_docs(), 12u);
    EXPECT_EQ(l.corpus.num_tokens(), 28u);
    EXPECT_EQ(l.corpus.doc_labels()[4], 6u);  // line 5 is empty, so doc 5 is on line 6

    // The UCI copy reads back to the same tokens (labels become 1..D).
    const core::Corpus uci =
        core::read_uci(dir.file("uci/docword.txt.gz"), dir.file("uci/vocab.txt"), nullptr);
    EXPECT_EQ(uci.num_tokens(), 28u);
    EXPECT_EQ(uci.word_frequencies(), l.corpus.word_frequencies());

    r = run_rotor(dir, "corpus info --corpus " + out + " --top 2");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("docs         12"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tokens       28"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("min 1  median 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("kernel"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("driver"), std::string::npos) << r.out;  // only the top 2
}

TEST(CorpusCli, BuildUciGzipAutoDetected) {
    TempDir dir;
    dir.write("vocab.txt", "apple\nbanana\ncherry\n");
    const std::string input = dir.write_gz("docword.txt.gz", "3\n3\n3\n1 1 2\n1 3 1\n3 2 4\n");
    RunResult r = run_rotor(dir, "corpus build --input " + input + " --out " + dir.file("c.bin"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const core::LoadedCorpus l = core::load_corpus(dir.file("c.bin"), "");
    EXPECT_EQ(l.corpus.num_docs(), 3u);
    EXPECT_EQ(l.corpus.num_tokens(), 7u);
    ASSERT_TRUE(l.vocab.has_value());
    EXPECT_EQ(l.vocab->word(1), "banana");
    r = run_rotor(dir, "corpus info --corpus " + input);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("empty docs   1"), std::string::npos) << r.out;
}

TEST(CorpusCli, BadUciInputExitsTwoWithLocationAndLeavesNoOutput) {
    TempDir dir;
    const std::string input = dir.write("docword.txt", "3\n3\n2\n1 1 2\n2 7 1\n");
    const std::string out = dir.file("c.bin");
    const RunResult r = run_rotor(dir, "corpus build --format uci --input " + input + " --out " +
                                           out + " --uci-out " + dir.file("uci"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("rotor: error: " + input + ":5:3: word id 7 is out of range"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".vocab"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("uci/docword.txt.gz")));
    EXPECT_EQ(dir.count(), 1u);  // only the input
}

TEST(CorpusCli, TruncatedGzipExitsTwo) {
    TempDir dir;
    std::string body = "50\n4\n50\n";
    for (int d = 1; d <= 50; ++d) body += std::to_string(d) + " 2 3\n";
    const std::string gz = read_all(dir.write_gz("full.gz", body));
    const std::string input = dir.write("docword.txt.gz", gz.substr(0, gz.size() - 10));
    const RunResult r =
        run_rotor(dir, "corpus build --input " + input + " --out " + dir.file("c.bin"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("rotor: error: " + input + ": truncated gzip"), std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("c.bin")));
}

TEST(CorpusCli, CorruptBinaryInfoExitsTwo) {
    TempDir dir;
    core::save_binary_corpus(core::Corpus::from_docs({{0, 1}, {1}}, 2), dir.file("c.bin"));
    std::string bytes = read_all(dir.file("c.bin"));
    bytes.resize(bytes.size() - 4);
    const std::string bad = dir.write("bad.bin", bytes);
    const RunResult r = run_rotor(dir, "corpus info --corpus " + bad);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("rotor: error: " + bad + ": truncated binary corpus"), std::string::npos)
        << r.err;
}

TEST(CorpusCli, BadFlagsExitThree) {
    TempDir dir;
    const std::string input = dir.write("docs.txt", "hello world\n");
    RunResult r = run_rotor(dir, "corpus build --input " + input + " --out " + dir.file("c.bin") +
                                     " --min-len 5 --max-len 4");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("--max-len"), std::string::npos) << r.err;
    r = run_rotor(
        dir, "corpus build --input " + input + " --out " + dir.file("c.bin") + " --format xml");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_FALSE(std::filesystem::exists(dir.file("c.bin")));
}

TEST(CorpusCli, MissingInputExitsTwo) {
    TempDir dir;
    const RunResult r = run_rotor(
        dir, "corpus build --input " + dir.file("none.txt") + " --out " + dir.file("c.bin"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("none.txt: cannot open"), std::string::npos) << r.err;
}

// Theme 5: a folder of .txt files, one document each, named by its file; gensim's no_above
// (--max-df), stop words added to the default list, a token pattern; a warning counts the
// documents pruning left empty.
TEST(CorpusCli, BuildAFolderWithNamesMaxDfExtraStopWordsAndPattern) {
    TempDir dir;
    const std::string in = dir.file("letters");
    std::filesystem::create_directories(in);
    dir.write("letters/b.txt", "The kernel and the driver.\nKernel memory.\n");
    dir.write("letters/a.txt", "kernel driver win98 caf\xc3\xa9\n");
    dir.write("letters/c.txt", "kernel kernel\n");  // only "kernel": emptied by --max-df
    dir.write("letters/d.txt", "memory driver foobar\n");
    dir.write("letters/readme.md", "not a document\n");
    dir.write("extra.txt", "foobar\n");
    const std::string out = dir.file("c.bin");
    RunResult r = run_rotor(dir, "corpus build --corpus " + in + " --out " + out +
                                     " --min-df 1 --max-df 0.5 --stopwords-add " +
                                     dir.file("extra.txt") + " --token-pattern unicode");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("warning: 1 document of 4 left empty by pruning"), std::string::npos)
        << r.err;
    const core::LoadedCorpus l = core::load_corpus(out, "");
    ASSERT_TRUE(l.vocab.has_value());
    EXPECT_FALSE(l.vocab->find("kernel").has_value());  // in 3 of 4 documents
    EXPECT_FALSE(l.vocab->find("driver").has_value());  // 3 of 4
    EXPECT_FALSE(l.vocab->find("the").has_value());     // default stop words still apply
    EXPECT_FALSE(l.vocab->find("foobar").has_value());  // --stopwords-add
    EXPECT_TRUE(l.vocab->find("memory").has_value());   // 2 of 4
    EXPECT_TRUE(l.vocab->find("win98").has_value());
    EXPECT_TRUE(l.vocab->find("caf\xc3\xa9").has_value());
    EXPECT_EQ(l.doc_names, (std::vector<std::string>{"a.txt", "b.txt", "d.txt"}));
    EXPECT_EQ(read_all(out + ".docs"), "a.txt\nb.txt\nd.txt\n");
    r = run_rotor(dir, "corpus info --corpus " + out);
    EXPECT_NE(r.out.find("doc names    " + out + ".docs (first: a.txt)"), std::string::npos)
        << r.out;
    // A build from a one-per-line file at the same path leaves no stale names behind.
    r = run_rotor(dir, "corpus build --corpus " + dir.write("lines.txt", "memory driver\n") +
                           " --min-df 1 --out " + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("1 doc, 2 words, 2 tokens"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(out + ".docs"));
    r = run_rotor(dir, "corpus build --corpus " + in + " --out " + out + " --max-df 0");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_NE(r.err.find("--max-df"), std::string::npos) << r.err;
    r = run_rotor(dir, "corpus build --corpus " + in + " --out " + out + " --token-pattern re");
    EXPECT_EQ(r.exit_code, 3);
}

}  // namespace
}  // namespace rotor
