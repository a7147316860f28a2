#include "core/mf/ratings_binary.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/base/error.h"
#include "core/io/binary_sections.h"
#include "core/io/mapped_file.h"
#include "core/mf/ratings_reader.h"

namespace rotor::mf {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the binary ratings format is little-endian; big-endian hosts need byte swapping");

constexpr char kMagic[8] = {'R', 'O', 'T', 'O', 'R', 'R', 'A', 'T'};
constexpr std::uint32_t kVersion = 1;

/// The 64-byte header at offset 0; the payload follows (docs/formats.md, "Binary ratings").
struct Header {
    char magic[8];                ///< "ROTORRAT"
    std::uint32_t version;        ///< kVersion
    std::uint32_t flags;          ///< 0; any other bit is an error in version 1
    std::uint64_t num_users;      ///< N
    std::uint64_t num_items;      ///< M
    std::uint64_t nnz;            ///< number of ratings
    std::uint64_t payload_bytes;  ///< file size - 64
    std::uint32_t crc32;          ///< CRC-32 (zlib's) of the payload
    std::uint32_t reserved0;      ///< 0
    std::uint64_t reserved1;      ///< 0
};
static_assert(sizeof(Header) == 64);

using core::padding;

/// An id map section (core::encode_strings): count 0 (no names) or the dimension.
std::vector<std::byte> encode_names(const IdMap& map) {
    return core::encode_strings(
        map.size(), [&](std::size_t i) { return map.name(static_cast<std::uint32_t>(i)); });
}

IdMap decode_names(core::SectionCursor& c, std::uint64_t dimension, const char* what,
                   const std::string& name) {
    const core::StringsSection s = core::decode_strings(c, dimension, what, name);
    IdMap map;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s.offsets[i + 1] <= s.offsets[i]) {
            throw InputError(name,
                             fmt::format("{}: id {} is empty or its offsets decrease", what, i));
        }
        const std::string_view id = s.at(i);
        const auto [index, added] = map.insert(id);
        if (!added) {
            throw InputError(name, fmt::format("{}: id \"{}\" appears twice (indices {} and {})",
                                               what, id, index, i));
        }
    }
    return map;
}

Header check_header(std::span<const std::byte> bytes, const std::string& name) {
    const auto h = core::read_header<Header>(bytes, name, "binary ratings", kMagic, kVersion);
    if (h.flags != 0) throw InputError(name, fmt::format("unknown flags {:#x}", h.flags));
    if (h.num_users > 0xFFFFFFFFu || h.num_items > 0xFFFFFFFFu) {
        throw InputError(name, fmt::format("N = {} or M = {} does not fit in 32 bits", h.num_users,
                                           h.num_items));
    }
    core::check_payload(h, bytes, name);
    return h;
}

/// Refuses a file whose ratings and ids would take more than limits.max_bytes (saturating: a
/// header's counts are any 64-bit values until the arrays are checked against the file).
void refuse_beyond(const Header& h, const core::ReadLimits& limits, const std::string& name) {
    constexpr std::uint64_t kMax = UINT64_MAX;
    constexpr std::uint64_t kPerRating = ReadRatingsOptions::kBytesPerRating;
    const std::uint64_t ids = h.num_users + h.num_items;  // each < 2^32: checked by check_header
    const std::uint64_t bytes =
        h.nnz > (kMax - 8 * ids) / kPerRating ? kMax : kPerRating * h.nnz + 8 * ids;
    if (bytes > limits.max_bytes) limits.refuse_bytes(bytes, name, 0, 0, "the ratings");
}

}  // namespace

bool has_ratings_binary_magic(std::span<const std::byte> prefix) noexcept {
    return prefix.size() >= sizeof kMagic && std::memcmp(prefix.data(), kMagic, sizeof kMagic) == 0;
}

void write_ratings_binary(const std::string& path, const Ratings& ratings, const IdMap& users,
                          const IdMap& items) {
    ROTOR_ASSERT(users.empty() || users.size() == ratings.num_users(), "user map size != N");
    ROTOR_ASSERT(items.empty() || items.size() == ratings.num_items(), "item map size != M");
    const auto item_bytes = std::as_bytes(ratings.user_items());
    const auto value_bytes = std::as_bytes(ratings.user_values());
    const std::vector<std::byte> user_names = encode_names(users);
    const std::vector<std::byte> item_names = encode_names(items);
    const std::span<const std::byte> sections[] = {
        std::as_bytes(ratings.user_offsets()),
        item_bytes,
        padding(item_bytes.size()),
        value_bytes,
        padding(value_bytes.size()),
        user_names,
        item_names,
    };
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.num_users = ratings.num_users();
    h.num_items = ratings.num_items();
    h.nnz = ratings.nnz();
    core::write_sections(path, h, sections);
}

RatingsFile parse_ratings_binary(std::span<const std::byte> bytes, const std::string& name,
                                 const core::ReadLimits& limits) {
    const Header h = check_header(bytes, name);
    refuse_beyond(h, limits, name);
    core::SectionCursor c(bytes.subspan(sizeof h), name, "binary ratings");
    auto offsets = c.take<std::uint64_t>(h.num_users + 1, "user offsets");
    auto items = c.take<ItemId>(h.nnz, "item ids");
    c.align("item ids");
    auto values = c.take<float>(h.nnz, "ratings");
    c.align("ratings");
    RatingsFile out;
    out.users = decode_names(c, h.num_users, "user ids", name);
    out.items = decode_names(c, h.num_items, "item ids", name);
    if (c.remaining() != 0) {
        throw InputError(name, fmt::format("{} bytes after the item ids", c.remaining()));
    }
    out.ratings = Ratings::from_csr(static_cast<std::uint32_t>(h.num_users),
                                    static_cast<std::uint32_t>(h.num_items), std::move(offsets),
                                    std::move(items), std::move(values), name);
    out.ratings_with_new_ids = out.ratings.nnz();
    return out;
}

RatingsFile read_ratings_binary(const std::string& path, const core::ReadLimits& limits) {
    const core::MappedFile mapped(path);
    return parse_ratings_binary(mapped.bytes(), path, limits);
}

}  // namespace rotor::mf
