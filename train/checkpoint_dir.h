// Checkpoint framing for any model: a directory holding one part per rank, state.json (the
// model's manifest of the run: its state and each part's size and FNV-1a) and a MANIFEST of every
// file (core/io/manifest.h), built under a temporary name and moved into place only once all are
// whole, with every failure agreed across ranks, so that a checkpoint is either the previous one
// or the new one, never a mix (docs/formats.md, "Checkpoints"). The model says what a part holds
// and what state.json says; the framing decides where and when they are written, and verifies
// every part's size and FNV-1a checksum against state.json when it is read back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace rotor::core {
class AtomicFile;
}  // namespace rotor::core

namespace rotor::comm {
class Communicator;
}  // namespace rotor::comm

namespace rotor::train {

/// One rank's part as the manifest lists it.
struct PartInfo {
    std::string file;         ///< name inside the directory, part_name(rank)
    std::uint64_t bytes = 0;  ///< size of the file
    std::uint64_t fnv1a = 0;  ///< FNV-1a (64-bit) of its bytes
};

/// "part-00003.bin" for rank 3.
std::string part_name(int rank);
/// FNV-1a, 64-bit, continuing from `h`.
std::uint64_t fnv1a(std::span<const std::byte> bytes,
                    std::uint64_t h = 0xcbf29ce484222325ULL) noexcept;

/// Writes one part: through a core::AtomicFile, hashing what goes through. Not thread-safe.
class PartWriter {
  public:
    explicit PartWriter(core::AtomicFile& file) : file_(file) {}
    void write(std::span<const std::byte> bytes);
    /// The object representation of a trivially copyable value (host byte order).
    template <class T>
    void pod(const T& value) {
        write(std::as_bytes(std::span<const T>(&value, 1)));
    }
    std::uint64_t hash() const noexcept { return hash_; }
    /// zlib's CRC-32 of what went through, for the directory's MANIFEST (core/io/manifest.h).
    std::uint32_t crc32() const noexcept { return crc_; }

  private:
    core::AtomicFile& file_;
    std::uint64_t hash_ = 0xcbf29ce484222325ULL;
    std::uint32_t crc_ = 0;
};

/// Collective over `comm`: writes checkpoint directory `dir`. Rank 0 creates it under a
/// temporary name (core::AtomicDirectory) and broadcasts the name; every rank writes its part
/// with `write_part` (an AtomicFile: temporary name, fsync, rename); rank 0 gathers the parts'
/// sizes and checksums (after every part is whole), writes `manifest(parts)` (the text of
/// state.json), then the directory's MANIFEST (core::write_manifest: every file's size and CRC-32)
/// last, and renames the directory into place, replacing the previous checkpoint. A
/// failure on any rank (disk full, no shared filesystem) makes every rank throw the same
/// comm::AgreedError and leaves `dir` as it was. Under MPI `dir` must be on a filesystem every
/// rank sees.
void write_checkpoint_dir(const std::string& dir, comm::Communicator& comm,
                          const std::function<void(PartWriter&)>& write_part,
                          const std::function<std::string(const std::vector<PartInfo>&)>& manifest);

/// Reads part `expected.file` of checkpoint directory `dir` and checks it against the manifest:
/// present, of expected.bytes bytes, with checksum expected.fnv1a. Throws InputError naming the
/// part otherwise ("missing", "not whole", "corrupt").
std::string read_checked_part(const std::string& dir, const PartInfo& expected, int rank);

/// Removes what killed runs left beside `dir`: `<dir>.tmp.<pid>.<n>` and `<dir>.old.<pid>.<n>`
/// directories whose process is gone (SIGKILL gives no chance to clean up), except an `.old`
/// while `dir` is missing (core::remove_stale_temporaries). Returns how many.
int remove_stale_temporaries(const std::string& dir);

}  // namespace rotor::train
