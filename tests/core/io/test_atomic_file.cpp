#include "core/io/atomic_file.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/base/error.h"
#include "core/io/gzip_writer.h"
#include "core/io/line_reader.h"
#include "core/io/mapped_file.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

namespace fs = std::filesystem;
using rotor::testing::read_all;
using rotor::testing::TempDir;

TEST(AtomicFile, CommitPublishesTheContentAndLeavesNoTemporary) {
    TempDir dir;
    const std::string path = dir.file("out.bin");
    {
        AtomicFile f(path);
        EXPECT_TRUE(fs::exists(f.temp_path()));
        EXPECT_FALSE(fs::exists(path));
        f.write("hello ");
        const std::uint32_t x = 0x01020304;
        f.write_pod(x);
        f.commit();
        EXPECT_EQ(f.size(), 10u);
    }
    const std::string got = read_all(path);
    ASSERT_EQ(got.size(), 10u);
    EXPECT_EQ(got.substr(0, 6), "hello ");
    EXPECT_EQ(dir.count(), 1u);
}

TEST(AtomicFile, DestructionWithoutCommitRemovesTheTemporaryAndKeepsTheOldFile) {
    TempDir dir;
    const std::string path = dir.write("out.txt", "old");
    try {
        AtomicFile f(path);
        f.write("new content that must never appear");
        throw std::runtime_error("fail midway");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(read_all(path), "old");
    EXPECT_EQ(dir.count(), 1u);
}

TEST(AtomicFile, ReplacesAnExistingFile) {
    TempDir dir;
    const std::string path = dir.write("out.txt", "old");
    write_file_atomically(path, "new");
    EXPECT_EQ(read_all(path), "new");
    EXPECT_EQ(dir.count(), 1u);
}

TEST(AtomicFile, LargeWritesBypassingTheBufferArriveIntact) {
    TempDir dir;
    std::string big(3u << 20, '\0');
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 131 % 251);
    AtomicFile f(dir.file("big"));
    f.write("head");
    f.write(big);
    f.write("tail");
    f.commit();
    EXPECT_EQ(read_all(dir.file("big")), "head" + big + "tail");
}

TEST(AtomicFile, MissingDirectoryIsASystemError) {
    TempDir dir;
    EXPECT_THROW(AtomicFile f(dir.file("no/such/dir/out.txt")), SystemError);
}

TEST(AtomicFile, TwoFilesToTheSamePathUseDistinctTemporaries) {
    TempDir dir;
    AtomicFile a(dir.file("x"));
    AtomicFile b(dir.file("x"));
    EXPECT_NE(a.temp_path(), b.temp_path());
    a.write("a");
    b.write("b");
    a.commit();
    b.commit();
    EXPECT_EQ(read_all(dir.file("x")), "b");
    EXPECT_EQ(dir.count(), 1u);
}

TEST(AtomicDirectory, CommitMovesTheTreeIntoPlaceAndReplacesTheOldOne) {
    TempDir dir;
    const std::string target = dir.file("model");
    fs::create_directory(target);
    dir.write("model/stale.txt", "stale");
    {
        AtomicDirectory d(target);
        write_file_atomically(d.file("params.json"), "{}");
        EXPECT_FALSE(fs::exists(target + "/params.json"));
        d.commit();
    }
    EXPECT_EQ(read_all(target + "/params.json"), "{}");
    EXPECT_FALSE(fs::exists(target + "/stale.txt"));
    EXPECT_EQ(dir.count(), 1u);
}

TEST(AtomicDirectory, WithoutCommitNothingIsLeft) {
    TempDir dir;
    {
        AtomicDirectory d(dir.file("model"));
        write_file_atomically(d.file("a.txt"), "a");
    }
    EXPECT_EQ(dir.count(), 0u);
}

/// A pid no process has (pid_max is at most 2^22 on Linux).
constexpr const char* kDeadPid = "99999999";

TEST(StaleTemporaries, ThoseOfDeadProcessesGoAndTheLiveOnesStay) {
    TempDir dir;
    fs::create_directory(dir.file("m"));
    fs::create_directory(dir.file(std::string("m.tmp.") + kDeadPid + ".0"));
    fs::create_directory(dir.file(std::string("m.old.") + kDeadPid + ".1"));
    dir.write(std::string("m.jsonl.tmp.") + kDeadPid + ".2", "half");
    const std::string mine = "m.tmp." + std::to_string(::getpid()) + ".3";
    fs::create_directory(dir.file(mine));
    dir.write("mx.tmp.1.0", "another output's");
    EXPECT_EQ(remove_stale_temporaries(dir.file("m")), 2);
    EXPECT_EQ(remove_stale_temporaries(dir.file("m.jsonl")), 1);
    EXPECT_TRUE(fs::exists(dir.file(mine)));
    EXPECT_TRUE(fs::exists(dir.file("mx.tmp.1.0")));
    EXPECT_EQ(dir.count(), 3u);
}

TEST(StaleTemporaries, AnOldCopyIsKeptWhileThePathIsMissingAndFoundForResuming) {
    TempDir dir;
    const std::string old = dir.file(std::string("ckpt.old.") + kDeadPid + ".0");
    fs::create_directory(old);
    // Killed between the two renames: no ckpt, only the whole previous copy.
    EXPECT_EQ(existing_or_old(dir.file("ckpt"), "state.json"), dir.file("ckpt"));  // no marker
    dir.write(std::string("ckpt.old.") + kDeadPid + ".0/state.json", "{}");        // dir made above
    EXPECT_EQ(existing_or_old(dir.file("ckpt"), "state.json"), old);
    EXPECT_EQ(remove_stale_temporaries(dir.file("ckpt")), 0);
    EXPECT_TRUE(fs::exists(old));
    fs::create_directory(dir.file("ckpt"));
    EXPECT_EQ(existing_or_old(dir.file("ckpt"), "state.json"), dir.file("ckpt"));
    EXPECT_EQ(remove_stale_temporaries(dir.file("ckpt")), 1);
}

TEST(AtomicDirectory, RemovesTheStaleTemporariesOfItsPath) {
    TempDir dir;
    fs::create_directory(dir.file(std::string("model.tmp.") + kDeadPid + ".0"));
    {
        AtomicDirectory d(dir.file("model"));
        d.commit();
    }
    EXPECT_EQ(dir.count(), 1u);
}

TEST(CheckReplaceable, OnlyAnEarlierOutputOrAnEmptyDirectoryIsReplaced) {
    TempDir dir;
    EXPECT_NO_THROW(check_replaceable(dir.file("new"), "params.json", "--out"));
    fs::create_directory(dir.file("empty"));
    EXPECT_NO_THROW(check_replaceable(dir.file("empty"), "params.json", "--out"));
    fs::create_directory(dir.file("model"));
    dir.write("model/params.json", "{}");
    EXPECT_NO_THROW(check_replaceable(dir.file("model"), "params.json", "--out"));
    fs::create_directory(dir.file("photos"));
    dir.write("photos/cat.jpg", "meow");
    try {
        check_replaceable(dir.file("photos"), "params.json", "--out");
        FAIL() << "would replace a directory that is not rotor's";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--out");
        EXPECT_NE(std::string(e.what()).find("holds no params.json"), std::string::npos);
    }
    dir.write("file", "x");
    EXPECT_THROW(check_replaceable(dir.file("file"), "params.json", "--out"), ConfigError);
}

/// The message of the ConfigError that check_output throws, or "" when it accepts.
std::string refusal(const std::string& path, OutputKind kind, bool overwrite) {
    const std::string_view marker = kind == OutputKind::kDirectory ? "params.json" : "rotor-x";
    try {
        check_output(path, kind, marker, overwrite, "--out");
        return "";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--out");
        return e.what();
    }
}

TEST(CheckOutput, NewOrAnEarlierOutputWithOverwriteNeverAForeignOne) {
    TempDir dir;
    using enum OutputKind;
    EXPECT_EQ(refusal(dir.file("new"), kDirectory, false), "");
    fs::create_directory(dir.file("empty"));
    EXPECT_EQ(refusal(dir.file("empty"), kDirectory, false), "");
    fs::create_directory(dir.file("model"));
    dir.write("model/params.json", "{}");
    EXPECT_NE(refusal(dir.file("model"), kDirectory, false).find("give --overwrite"),
              std::string::npos);
    EXPECT_EQ(refusal(dir.file("model"), kDirectory, true), "");
    fs::create_directory(dir.file("photos"));
    dir.write("photos/cat.jpg", "meow");
    EXPECT_NE(refusal(dir.file("photos"), kDirectory, true).find("holds no params.json"),
              std::string::npos);
    dir.write("m.txt", "rotor-x model\n");
    dir.write("notes.txt", "mine\n");
    EXPECT_NE(refusal(dir.file("m.txt"), kFile, false).find("give --overwrite"), std::string::npos);
    EXPECT_EQ(refusal(dir.file("m.txt"), kFile, true), "");
    EXPECT_NE(refusal(dir.file("notes.txt"), kFile, true).find("does not begin with rotor-x"),
              std::string::npos);
    EXPECT_NE(refusal(dir.file("m.txt"), kDirectory, true).find("is not a directory"),
              std::string::npos);
    EXPECT_NE(refusal(dir.file("model"), kFile, true).find("is a directory"), std::string::npos);
    EXPECT_NE(refusal(dir.file("no/such/m"), kDirectory, false)
                  .find("the directory " + dir.file("no/such") + " does not exist"),
              std::string::npos);
    EXPECT_NE(refusal(dir.file("notes.txt/m"), kFile, false).find("is not a directory"),
              std::string::npos);
    EXPECT_FALSE(fs::exists(dir.file("no")));
    EXPECT_EQ(read_all(dir.file("notes.txt")), "mine\n");
}

TEST(GzipWriter, RoundTripsThroughTheLineReader) {
    TempDir dir;
    std::string text;
    for (int i = 0; i < 50000; ++i) text += "row " + std::to_string(i) + "\n";
    AtomicFile f(dir.file("t.gz"));
    GzipWriter gz(f);
    gz.write(text.substr(0, 1000));
    gz.write(text.substr(1000));
    gz.finish();
    f.commit();
    EXPECT_LT(read_all(dir.file("t.gz")).size(), text.size() / 3);
    LineReader r(dir.file("t.gz"));
    std::string back;
    std::string_view line;
    while (r.next(line)) back.append(line).push_back('\n');
    EXPECT_EQ(back, text);
}

TEST(MappedFile, MapsTheBytesAndReportsMissingFiles) {
    TempDir dir;
    MappedFile m(dir.write("m.bin", "abcdef"));
    ASSERT_EQ(m.bytes().size(), 6u);
    EXPECT_EQ(static_cast<char>(m.bytes()[2]), 'c');
    MappedFile moved(std::move(m));
    EXPECT_EQ(moved.bytes().size(), 6u);
    MappedFile empty(dir.write("e.bin", ""));
    EXPECT_TRUE(empty.bytes().empty());
    EXPECT_THROW(MappedFile(dir.file("missing.bin")), InputError);
}

}  // namespace
}  // namespace rotor::core
