// Checkpoint framing on 1-3 in-process ranks: every part whole with its checksum in the manifest,
// a part checked on read, and a failure on one rank leaving the previous checkpoint in place.
#include "train/checkpoint_dir.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "comm/agreed.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/whole_file.h"

namespace rotor::train {
namespace {

namespace fs = std::filesystem;

std::string temp_dir(const std::string& name) {
    const fs::path p = fs::path(::testing::TempDir()) / name;
    fs::remove_all(p);
    return p.string();
}

/// Writes a checkpoint whose part on rank r holds r + 1 copies of `tag`, and whose manifest
/// lists "tag|file:bytes:fnv1a|...". `fail_rank` (>= 0) throws an InputError while writing.
void write_tagged(const std::string& dir, comm::Communicator& c, const std::string& tag,
                  int fail_rank = -1) {
    write_checkpoint_dir(
        dir, c,
        [&](PartWriter& w) {
            if (c.rank() == fail_rank) throw InputError("disk", "full");
            for (int i = 0; i <= c.rank(); ++i)
                w.write(std::as_bytes(std::span<const char>(tag.data(), tag.size())));
        },
        [&](const std::vector<PartInfo>& parts) {
            std::string m = tag;
            for (const PartInfo& p : parts)
                m += "|" + p.file + ":" + std::to_string(p.bytes) + ":" + std::to_string(p.fnv1a);
            return m;
        });
}

class CheckpointDir : public ::testing::TestWithParam<int> {};

TEST_P(CheckpointDir, PartsAreWholeAndListedInTheManifest) {
    const int ranks = GetParam();
    const std::string dir = temp_dir("ckdir-" + std::to_string(ranks));
    comm::run_ranks(ranks, [&](comm::Communicator& c) { write_tagged(dir, c, "first"); });
    const std::string manifest = core::read_whole_file(dir + "/state.json");
    ASSERT_EQ(manifest.rfind("first|", 0), 0u) << manifest;
    for (int r = 0; r < ranks; ++r) {
        const std::string bytes = core::read_whole_file(dir + "/" + part_name(r));
        EXPECT_EQ(bytes.size(), 5u * (r + 1));
        const std::uint64_t sum = fnv1a(std::as_bytes(std::span<const char>(bytes)));
        const std::string entry =
            part_name(r) + ":" + std::to_string(bytes.size()) + ":" + std::to_string(sum);
        EXPECT_NE(manifest.find(entry), std::string::npos) << manifest;
        EXPECT_EQ(read_checked_part(dir, {part_name(r), bytes.size(), sum}, r), bytes);
    }
    // A failure on the last rank: every rank throws the same error, the checkpoint is the old one.
    int agreed = 0;
    comm::run_ranks(ranks, [&](comm::Communicator& c) {
        try {
            write_tagged(dir, c, "second", ranks - 1);
        } catch (const comm::AgreedError& e) {
            if (std::string(e.what()).find("full") != std::string::npos) ++agreed;
        }
    });
    EXPECT_EQ(agreed, ranks);
    EXPECT_EQ(core::read_whole_file(dir + "/state.json"), manifest);
    // Replaced whole by the next good one; nothing temporary left beside it.
    comm::run_ranks(ranks, [&](comm::Communicator& c) { write_tagged(dir, c, "third"); });
    EXPECT_EQ(core::read_whole_file(dir + "/state.json").rfind("third|", 0), 0u);
    for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path())) {
        const std::string name = e.path().filename().string();
        if (name.rfind(fs::path(dir).filename().string() + ".", 0) == 0) ADD_FAILURE() << name;
    }
}

INSTANTIATE_TEST_SUITE_P(Ranks, CheckpointDir, ::testing::Values(1, 2, 3));

TEST(CheckpointDir, CheckedPartRefusesMissingShortAndCorruptParts) {
    const std::string dir = temp_dir("ckdir-bad");
    comm::run_ranks(1, [&](comm::Communicator& c) { write_tagged(dir, c, "payload"); });
    const std::string bytes = core::read_whole_file(dir + "/" + part_name(0));
    const PartInfo good{part_name(0), bytes.size(), fnv1a(std::as_bytes(std::span(bytes)))};
    const auto refused = [&](const PartInfo& p, const std::string& what) {
        try {
            read_checked_part(dir, p, 0);
            ADD_FAILURE() << "accepted: " << what;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(p.file), std::string::npos) << e.what();
        }
    };
    refused({part_name(1), good.bytes, good.fnv1a}, "missing");
    refused({good.file, good.bytes + 1, good.fnv1a}, "not whole");
    refused({good.file, good.bytes, good.fnv1a ^ 1}, "corrupt");
}

TEST(CheckpointDir, StaleTemporariesOfDeadProcessesAreRemoved) {
    const std::string dir = temp_dir("ckdir-stale");
    // pid 2^22 + 1 is above Linux's pid_max default: no such process. The checkpoint itself is
    // there, so its .old copy is stale too (without it, the .old is the copy to resume from).
    fs::create_directories(dir);
    fs::create_directories(dir + ".tmp.4194305.0");
    fs::create_directories(dir + ".old.4194305.1");
    fs::create_directories(dir + ".tmp." + std::to_string(::getpid()) + ".0");  // alive: kept
    EXPECT_EQ(remove_stale_temporaries(dir), 2);
    EXPECT_TRUE(fs::exists(dir + ".tmp." + std::to_string(::getpid()) + ".0"));
    fs::remove_all(dir + ".tmp." + std::to_string(::getpid()) + ".0");
}

}  // namespace
}  // namespace rotor::train
