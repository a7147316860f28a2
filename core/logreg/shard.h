// One part of the examples as the block proximal gradient of sparse logistic regression needs
// it (docs/logreg.md, "Algorithm"): its features in column form over its own keys (the part's
// working set of w), and the margins m_i = x_iᵀ w of its examples, kept current as w changes.
//
// A part is what a worker (a rank, or a thread of one) holds; the whole data is the union of the
// parts. Column order is key order, rows in each column in example order, so the operations a
// row's margin sees do not depend on how the examples are split into parts.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/logreg/block_groups.h"
#include "core/logreg/examples.h"

namespace rotor::logreg {

/// Examples in column form with their margins. Movable value type; not thread-safe.
class Shard {
  public:
    /// Copies `examples` into column form; with `intercept` every example also has the feature
    /// kInterceptKey of value 1 (the last column). Margins start at 0 (w = 0).
    Shard(const Examples& examples, bool intercept);

    std::uint32_t examples() const noexcept { return static_cast<std::uint32_t>(labels_.size()); }
    /// The part's keys, strictly increasing (kInterceptKey last when present).
    std::span<const std::uint64_t> keys() const noexcept { return keys_; }
    /// Column c: entries offsets()[c] .. offsets()[c+1) of rows() and values().
    std::span<const std::uint64_t> offsets() const noexcept { return offsets_; }
    std::span<const std::uint32_t> rows() const noexcept { return rows_; }
    std::span<const double> values() const noexcept { return values_; }
    /// y_i in {-1, +1}.
    std::span<const std::int8_t> labels() const noexcept { return labels_; }
    /// m_i = x_iᵀ w.
    std::span<const double> margins() const noexcept { return margins_; }
    std::span<double> margins() noexcept { return margins_; }

    /// For each key of `wanted` (strictly increasing), the index of its column here, or -1
    /// when the part has no such key. O(|wanted| + |keys()|) by a merge.
    void match(std::span<const std::uint64_t> wanted, std::vector<std::int64_t>& columns) const;

  private:
    std::vector<std::uint64_t> keys_;
    std::vector<std::uint64_t> offsets_;
    std::vector<std::uint32_t> rows_;
    std::vector<double> values_;
    std::vector<std::int8_t> labels_;
    std::vector<double> margins_;
};

/// The block of a key among `blocks` (>= 1) blocks, the same on every rank without any
/// exchange: a SplitMix64 hash of key and seed, modulo blocks.
std::uint32_t block_of(std::uint64_t key, std::uint32_t blocks, std::uint64_t seed) noexcept;

/// `keys` (strictly increasing) split into `blocks` blocks: element b holds block b's keys,
/// increasing. Without `groups` (or null) key k is in block_of(k, blocks, seed); with them (G =
/// groups->groups() < blocks) a listed key is in its group's block and any other key in block
/// G + block_of(k, blocks - G, seed).
std::vector<std::vector<std::uint64_t>> split_blocks(std::span<const std::uint64_t> keys,
                                                     std::uint32_t blocks, std::uint64_t seed,
                                                     const BlockGroups* groups = nullptr);

/// The sorted union of the parts' keys.
std::vector<std::uint64_t> union_keys(std::span<const Shard> parts);

}  // namespace rotor::logreg
