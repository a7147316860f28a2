// The ratings matrix of matrix factorization: A (N users x M items) with its observed set Ω,
// held by user (CSR) with the items' rating counts, and the maps from the input's string ids to the
// dense indices the kernels use (docs/architecture.md, "Matrix factorization: the shapes").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rotor::mf {

using UserId = std::uint32_t;  ///< dense 0-based user (row) index, < N
using ItemId = std::uint32_t;  ///< dense 0-based item (column) index, < M

/// Original string ids (as read from a file) <-> dense indices 0..size()-1, in the order the ids
/// were inserted. Kept with a model so that predictions can name users and items as the input
/// did. A value type; const methods may be called from any number of threads at once, insert()
/// needs exclusive access.
///
/// Ids written as plain decimal integers (digits only, no leading zero, below 10^19), the common
/// case, are held as their values: 8 bytes an id, and a table indexed by the value (4 bytes a
/// slot) where the values are dense, a hash table where they are not. The first id that is not
/// such an integer turns the map into strings (each name held by index and in a hash table,
/// about 100 bytes an id). Either way the map says the same: name(i) is the text inserted.
class IdMap {
  public:
    /// The index of `id`, appending it as index size() if it is new; `second` is true when it
    /// was new. Precondition: fewer than 2^32 - 1 ids are held (callers check with full()).
    std::pair<std::uint32_t, bool> insert(std::string_view id);
    /// The index of `id`, or nothing.
    std::optional<std::uint32_t> find(std::string_view id) const;
    /// The id of `index` (< size()).
    std::string name(std::uint32_t index) const {
        return integers_ ? std::to_string(values_[index]) : names_[index];
    }
    /// Every id, by index (a copy).
    std::vector<std::string> names() const;
    std::uint32_t size() const noexcept {
        return static_cast<std::uint32_t>(integers_ ? values_.size() : names_.size());
    }
    bool empty() const noexcept { return size() == 0; }
    /// True when no further id fits in a 32-bit index.
    bool full() const noexcept { return size() >= kMaxSize; }
    /// True while every id is a plain decimal integer (held as its value).
    bool integers() const noexcept { return integers_; }
    /// Approximate heap bytes held.
    std::size_t memory_bytes() const noexcept;

    friend bool operator==(const IdMap& a, const IdMap& b);

    static constexpr std::size_t kMaxSize = 0xFFFFFFFFu;

  private:
    struct Hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    /// The index of the integer id `value`, or kNone.
    std::uint32_t find_value(std::uint64_t value) const;
    /// Turns an integer map into strings (before the first id that is not a plain integer).
    void to_strings();

    bool integers_ = true;
    std::vector<std::uint64_t> values_;    ///< integer ids, by index
    std::vector<std::uint32_t> by_value_;  ///< index of the dense value v, or kNone
    std::unordered_map<std::uint64_t, std::uint32_t> sparse_;  ///< values beyond by_value_
    std::vector<std::string> names_;                           ///< string ids, by index
    std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> index_;
};

/// One observed rating A_ui, as built by a reader: 12 bytes, so 10^8 of them fit in 1.2 GB.
struct RatingTriple {
    UserId user = 0;
    ItemId item = 0;
    float value = 0.0f;
};

/// Where a list of triples came from, for error messages: a duplicate (user, item) pair is then
/// reported as `<path>:<line of the second>:1: duplicate rating for user U, item I (first on
/// line L)`, with U and I the original ids when the maps are given; for the rows of an array
/// (`rows`) as `<path>: rows A and B: duplicate rating for user U, item I`.
struct TripleOrigin {
    std::string path;
    /// The 1-based line of triple i (its index in the list); empty: lines unknown.
    std::function<std::uint64_t(std::uint64_t)> line_of;
    /// The triples are the rows of an array named `path`, numbered from 0 (numpy's rows).
    bool rows = false;
    const IdMap* users = nullptr;  ///< may be null: indices are printed
    const IdMap* items = nullptr;
};

/// Triples as a reader appends them: in chunks of kChunk, so that growing never copies what is
/// held (a doubling vector peaks at three times its triples while it moves them) and the memory
/// is 12 bytes a triple to within one chunk. Indexed like a vector. A value type.
class TripleList {
  public:
    static constexpr unsigned kChunkShift = 16;
    static constexpr std::uint64_t kChunk = std::uint64_t{1} << kChunkShift;  ///< 768 KiB

    void push_back(const RatingTriple& t) {
        if ((size_ & (kChunk - 1)) == 0) {
            chunks_.emplace_back();
            chunks_.back().reserve(kChunk);
        }
        chunks_.back().push_back(t);
        ++size_;
    }
    std::uint64_t size() const noexcept { return size_; }
    const RatingTriple& operator[](std::uint64_t i) const noexcept {
        return chunks_[i >> kChunkShift][i & (kChunk - 1)];
    }
    /// Releases the whole chunks of triples before index `end` (the caller reads them no more).
    void release_before(std::uint64_t end) noexcept {
        for (std::uint64_t c = 0; c < (end >> kChunkShift) && c < chunks_.size(); ++c)
            std::vector<RatingTriple>().swap(chunks_[c]);
    }
    /// Releases every triple.
    void clear() noexcept {
        std::vector<std::vector<RatingTriple>>().swap(chunks_);
        size_ = 0;
    }

  private:
    std::vector<std::vector<RatingTriple>> chunks_;
    std::uint64_t size_ = 0;
};

/// A sparse ratings matrix A of N users x M items with nnz observed ratings (float values), held
/// by user (CSR): user_offsets() (u64, N+1), user_items() (u32, nnz), user_values() (float,
/// nnz); the ratings of user u are at [user_offsets()[u], user_offsets()[u+1]), items strictly
/// increasing. By item only the counts: item_offsets() (u64, M+1), whose differences are the
/// item degrees (no solver reads the ratings by item, so the matrix is not held twice).
/// Memory: 8(N+M+2) + 8 nnz bytes.
///
/// A value type owning its arrays; immutable after construction, so any number of threads may
/// read one at once. Users and items without ratings are allowed (empty rows and columns).
class Ratings {
  public:
    /// An empty 0 x 0 matrix.
    Ratings();

    /// Builds from triples in any order. Preconditions: every user < num_users, every item
    /// < num_items, every value finite (the readers check these on their input). Throws
    /// InputError if a (user, item) pair occurs twice, naming `origin` (path, the lines of both
    /// and the original ids when known). Time O(nnz + N + M) when each user's triples come in
    /// increasing item order, else O(nnz log d) for d the largest user degree; transient memory
    /// 16(N+M) bytes and one user's ratings besides the result (so reading peaks at the triples
    /// and the CSR: 20 bytes a rating).
    static Ratings from_triples(std::uint32_t num_users, std::uint32_t num_items,
                                std::span<const RatingTriple> triples,
                                const TripleOrigin& origin = {});
    static Ratings from_triples(std::uint32_t num_users, std::uint32_t num_items,
                                const TripleList& triples, const TripleOrigin& origin = {});
    /// The same from a list given away: when each user's triples are contiguous in it (a file
    /// grouped by user, as most are), the CSR fills in input order and each chunk of triples is
    /// released once copied, so the two are never held whole together: 12 bytes a rating and
    /// 8 a user, not 20 a rating. `triples` is left empty.
    static Ratings from_triples(std::uint32_t num_users, std::uint32_t num_items,
                                TripleList&& triples, const TripleOrigin& origin = {});

    /// Builds from the CSR arrays (moved in) and counts the items' ratings. Throws InputError
    /// naming `name` unless offsets has N+1 entries rising from 0 to nnz, items and values have nnz
    /// entries, every item is < num_items, items rise strictly within each user and every value
    /// is finite.
    static Ratings from_csr(std::uint32_t num_users, std::uint32_t num_items,
                            std::vector<std::uint64_t> offsets, std::vector<ItemId> items,
                            std::vector<float> values, const std::string& name);

    std::uint32_t num_users() const noexcept { return num_users_; }  ///< N
    std::uint32_t num_items() const noexcept { return num_items_; }  ///< M
    std::uint64_t nnz() const noexcept { return user_offsets_.empty() ? 0 : user_offsets_.back(); }

    std::span<const std::uint64_t> user_offsets() const noexcept { return user_offsets_; }
    std::span<const ItemId> user_items() const noexcept { return user_items_; }
    std::span<const float> user_values() const noexcept { return user_values_; }
    std::span<const std::uint64_t> item_offsets() const noexcept { return item_offsets_; }

    /// The items user u rated (increasing) and the ratings, aligned. u < N.
    std::span<const ItemId> items_of(UserId u) const noexcept;
    std::span<const float> values_of_user(UserId u) const noexcept;
    std::uint64_t user_degree(UserId u) const noexcept {
        return user_offsets_[u + 1] - user_offsets_[u];
    }
    std::uint64_t item_degree(ItemId i) const noexcept {
        return item_offsets_[i + 1] - item_offsets_[i];
    }

    /// Gives back to the system the memory of the ratings of users < u: their values, and their
    /// items too when `items`. For an owner that copies the ratings out in increasing user order
    /// (the sgd trainer, into its blocks), so that the copy takes the matrix's place instead of
    /// adding to it. Those users' ratings must not be read again (items_of() and
    /// values_of_user() read zeros or nothing); the shape, nnz(), the offsets, the item counts
    /// and mean() stay. Below u = N only whole pages go, so call it as often as convenient; at
    /// u = N the arrays themselves are freed: user_values() (and user_items() when `items`) are
    /// empty after.
    void release_users_before(UserId u, bool items) noexcept;

    /// Moves the CSR's offsets and items out (what a model keeps as each user's items) and
    /// leaves an empty 0 x 0 matrix: for an owner that needs nothing else of the ratings.
    std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> take_user_items() &&;

    /// The mean of all ratings (summed in double, in CSR order); 0 when nnz = 0.
    double mean() const noexcept { return mean_; }
    /// Bytes held by the arrays: 8(N+M+2) + 8 nnz.
    std::size_t memory_bytes() const noexcept;
    /// The most bytes building it held (the triples, the CSR and the counts): 20 a rating, 12
    /// when built from a list given away and grouped by user. For the memory plan.
    std::uint64_t build_peak_bytes() const noexcept;

    friend bool operator==(const Ratings& a, const Ratings& b);

  private:
    /// `consume`: null, or the list `triples` is, whose chunks may be released once copied.
    template <class Triples>
    static Ratings build(std::uint32_t num_users, std::uint32_t num_items, const Triples& triples,
                         const TripleOrigin& origin, TripleList* consume);
    void count_items();
    void compute_mean() noexcept;

    std::uint32_t num_users_ = 0;
    std::uint32_t num_items_ = 0;
    std::vector<std::uint64_t> user_offsets_;
    std::vector<ItemId> user_items_;
    std::vector<float> user_values_;
    std::vector<std::uint64_t> item_offsets_;
    double mean_ = 0.0;
    bool built_in_place_ = false;  ///< from a list given away, grouped by user
};

/// Ratings with the ids they were read under. A reader's result.
struct RatingsFile {
    Ratings ratings;
    IdMap users;  ///< size N: users.name(u) is user u's original id
    IdMap items;  ///< size M
    /// Indices >= these are ids that were not in the maps given to the reader (a test file read
    /// against a training file's maps): the given maps' sizes, 0 when none were given (every id
    /// is then new).
    std::uint32_t first_new_user = 0;
    std::uint32_t first_new_item = 0;
    /// Ratings whose user or item is new (index >= first_new_*): nnz when no maps were given.
    std::uint64_t ratings_with_new_ids = 0;

    std::uint32_t new_users() const noexcept { return users.size() - first_new_user; }
    std::uint32_t new_items() const noexcept { return items.size() - first_new_item; }
};

}  // namespace rotor::mf
