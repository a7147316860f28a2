// The manifest of a directory rotor writes (a model directory, a checkpoint): one text file,
// MANIFEST, listing every other file of the directory with its size and CRC-32, written last, and
// checked on every read, so that a flipped bit, a truncation, an appended byte, a deleted or an
// added file anywhere in the directory is refused with an error naming the file
// (docs/formats.md, "Manifests"):
//
//     rotor-manifest<TAB>1
//     params.json<TAB>412<TAB>5f1c09a2        one line per file, sorted by name
//     vocab.txt<TAB>1890<TAB>0be3d471
//     crc32<TAB>9a0c3e11                      CRC-32 of every byte above this line
//
// Thread-safe (functions over their arguments; files are read and written whole).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rotor::core {

/// The manifest's name inside its directory.
inline constexpr std::string_view kManifestName = "MANIFEST";

/// One file as a manifest lists it.
struct ManifestEntry {
    std::string file;         ///< name inside the directory: no '/', tab, newline or CR
    std::uint64_t bytes = 0;  ///< its size
    std::uint32_t crc32 = 0;  ///< zlib's CRC-32 of its bytes (core::crc32)
};

/// The text of a manifest listing `entries`, sorted by name, its CRC line last.
std::string manifest_text(std::vector<ManifestEntry> entries);

/// Parses a manifest's text strictly (header, entries, names unique, the CRC line last and
/// right). Throws InputError `path:line:col: what`.
std::vector<ManifestEntry> parse_manifest(std::string_view text, const std::string& path);

/// The entry of file `name` of `dir`, read and hashed now.
ManifestEntry manifest_entry(const std::string& dir, const std::string& name);

/// Writes `dir`/MANIFEST (atomically; call it once every other file is whole) listing every file
/// of `dir`: those in `known` as given (a checkpoint's parts, hashed as they were written, on
/// other ranks), every other one read back and hashed. Throws InputError for an entry that is not
/// a regular file or a name a manifest cannot hold, SystemError when a file cannot be read back
/// or the manifest cannot be written.
void write_manifest(const std::string& dir, const std::vector<ManifestEntry>& known = {});

/// Verifies `dir` against its MANIFEST: the manifest itself (parse_manifest), then every listed
/// file present with its size and CRC-32, and no other entry in `dir`. Files for which
/// `checked_by_caller` is true are only checked for presence and size here: their reader checks
/// their bytes against checksums of a file this verified (a checkpoint's parts against
/// state.json), so they are not read twice. Returns false, checking nothing, when `dir` has no
/// MANIFEST (written before rotor wrote one: see require_manifest). Throws InputError naming the
/// file at fault.
bool verify_manifest(const std::string& dir,
                     const std::function<bool(std::string_view)>& checked_by_caller = {});

/// For a reader after verify_manifest() returned `verified` and it has read the directory's
/// main file `claimed_by`: throws InputError naming `dir`/MANIFEST as missing when `claimed` (the
/// main file says the directory was written with a manifest) and it was not verified.
void require_manifest(const std::string& dir, bool verified, bool claimed,
                      const std::string& claimed_by);

}  // namespace rotor::core
