// Feature blocks from a feature-group file (`rotor logreg train --block-file`; docs/formats.md,
// "Logistic-regression block files"): each line `key<TAB>group` puts a key (a feature name with
// hashed features) in a named group; group g (numbered in order of first appearance) is block g,
// and keys the file does not list fall into the hash blocks after the groups (shard.h,
// split_blocks). Every rank reads the same file and so splits its keys alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace rotor::logreg {

/// Keys assigned to groups. An immutable value type once built; thread-safe to read.
class BlockGroups {
  public:
    /// `group_of`: key -> group in [0, names.size()); `digest`: block_file_digest() of the file.
    BlockGroups(std::unordered_map<std::uint64_t, std::uint32_t> group_of,
                std::vector<std::string> names, std::uint64_t digest);

    /// The number of groups (each one block).
    std::uint32_t groups() const noexcept { return static_cast<std::uint32_t>(names_.size()); }
    /// The group of `key`, or nullopt when the file does not list it.
    std::optional<std::uint32_t> group_of(std::uint64_t key) const;
    /// Group g's name as the file spells it.
    const std::string& name(std::uint32_t g) const { return names_.at(g); }
    std::uint64_t digest() const noexcept { return digest_; }

  private:
    std::unordered_map<std::uint64_t, std::uint32_t> group_of_;
    std::vector<std::string> names_;
    std::uint64_t digest_;
};

/// A 64-bit FNV-1a hash of the file's lines (each with its '\n', a trailing '\r' dropped, plain
/// or gzip): what a checkpoint stores to recognise the file. InputError if it cannot be read.
std::uint64_t block_file_digest(const std::string& path);

/// Reads a block file. Keys are unsigned integers below 2^64 - 1 or, with `hash_features`,
/// feature names hashed by hash_feature() (examples.h). Strict: InputError `path:line:col` on a
/// line without exactly one tab, an empty key or group, a malformed key, or a key listed twice;
/// InputError on a file without groups.
BlockGroups read_block_file(const std::string& path, bool hash_features);

}  // namespace rotor::logreg
