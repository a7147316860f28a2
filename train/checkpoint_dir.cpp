#include "train/checkpoint_dir.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/communicator.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"
#include "core/io/manifest.h"
#include "core/io/whole_file.h"

namespace rotor::train {
namespace {

/// What each rank tells rank 0 of the part it wrote.
struct PartSum {
    std::uint64_t bytes = 0;
    std::uint64_t fnv1a = 0;
    std::uint32_t crc32 = 0;
};

void wire_encode(comm::WireWriter& w, const PartSum& p) {
    w.put(p.bytes);
    w.put(p.fnv1a);
    w.put(p.crc32);
}

void wire_decode(comm::WireReader& r, PartSum& p) {
    r.get(p.bytes);
    r.get(p.fnv1a);
    r.get(p.crc32);
}

}  // namespace

std::string part_name(int rank) { return fmt::format("part-{:05d}.bin", rank); }

std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t h) noexcept {
    for (std::byte b : bytes) {
        h ^= static_cast<std::uint8_t>(b);
        h *= 0x100000001b3ULL;
    }
    return h;
}

void PartWriter::write(std::span<const std::byte> bytes) {
    hash_ = fnv1a(bytes, hash_);
    crc_ = core::crc32(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                       crc_);
    file_.write(bytes);
}

void write_checkpoint_dir(
    const std::string& dir, comm::Communicator& comm,
    const std::function<void(PartWriter&)>& write_part,
    const std::function<std::string(const std::vector<PartInfo>&)>& manifest) {
    const int rank = comm.rank();
    // 1. Rank 0 makes the temporary directory; every rank learns its name.
    std::optional<core::AtomicDirectory> out;
    std::string temp_path;
    comm::run_agreed(comm, [&] {
        if (rank != 0) return;
        out.emplace(dir);
        temp_path = out->temp_path();
    });
    comm::broadcast(comm, temp_path, 0, "checkpoint directory");

    // 2. Every rank writes its part there, whole (AtomicFile: temporary name, fsync, rename).
    PartSum mine;
    comm::run_agreed(comm, [&] {
        core::AtomicFile f(temp_path + "/" + part_name(rank));
        PartWriter w(f);
        write_part(w);
        mine.bytes = f.size();
        mine.fnv1a = w.hash();
        mine.crc32 = w.crc32();
        f.commit();
    });

    // 3. Every part is whole (the gather completes after every rank's commit): rank 0 writes
    // state.json, then the MANIFEST of every file (the parts as their ranks hashed them), and
    // moves the directory into place.
    const std::vector<PartSum> sums = comm::gather(comm, mine, 0, "checkpoint part info");
    comm::run_agreed(comm, [&] {
        if (rank != 0) return;
        std::vector<PartInfo> parts;
        std::vector<core::ManifestEntry> entries;
        for (std::size_t q = 0; q < sums.size(); ++q) {
            parts.push_back({part_name(static_cast<int>(q)), sums[q].bytes, sums[q].fnv1a});
            entries.push_back({parts.back().file, sums[q].bytes, sums[q].crc32});
        }
        core::write_file_atomically(out->file("state.json"), manifest(parts));
        core::write_manifest(out->temp_path(), entries);
        out->commit();
    });
}

std::string read_checked_part(const std::string& dir, const PartInfo& expected, int rank) {
    const std::string path = (std::filesystem::path(dir) / expected.file).string();
    if (!std::filesystem::exists(path))
        throw InputError(path, fmt::format("the part of rank {} is missing", rank));
    std::string bytes = core::read_whole_file(path);
    if (bytes.size() != expected.bytes)
        throw InputError(path,
                         fmt::format("has {} bytes, state.json says {}: the part is not whole",
                                     bytes.size(), expected.bytes));
    if (fnv1a(std::as_bytes(std::span<const char>(bytes))) != expected.fnv1a)
        throw InputError(path, "checksum differs from state.json's: the part is corrupt");
    return bytes;
}

int remove_stale_temporaries(const std::string& dir) { return core::remove_stale_temporaries(dir); }

}  // namespace rotor::train
