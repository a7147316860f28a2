// Pieces shared by rotor's binary data files (docs/formats.md: "Binary ratings", "Binary Lasso
// data"): a 64-byte header, then sections of native little-endian arrays, each padded to a
// multiple of 8 bytes, the payload covered by one CRC-32.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/io/checksum.h"

namespace rotor::core {

/// The first `n` bytes of `path` (fewer when it is shorter, none when it cannot be opened: the
/// reader of the text form then names the problem), to tell a binary file by its magic.
inline std::string file_prefix(const std::string& path, std::size_t n = 8) {
    std::string prefix(n, '\0');
    std::ifstream in(path, std::ios::binary);
    in.read(prefix.data(), static_cast<std::streamsize>(n));
    prefix.resize(static_cast<std::size_t>(in.gcount()));
    return prefix;
}

/// Zero bytes that bring `n` to a multiple of 8.
inline std::span<const std::byte> padding(std::uint64_t n) {
    static constexpr std::byte kZeros[8] = {};
    return {kZeros, static_cast<std::size_t>((8 - n % 8) % 8)};
}

/// crc32() over bytes.
inline std::uint32_t crc_update(std::uint32_t crc, std::span<const std::byte> bytes) {
    return crc32(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), crc);
}

/// The header of a binary file (a 64-byte POD that starts with an 8-byte magic and a u32
/// version, and has `payload_bytes` and `crc32` fields) read from `bytes` and its size, magic and
/// version checked: InputError naming `name` ("truncated <kind>", "not a rotor <kind> file (bad
/// magic)", "unsupported <kind> version").
template <class Header>
Header read_header(std::span<const std::byte> bytes, const std::string& name,
                   const std::string& kind, const char (&magic)[8], std::uint32_t version) {
    static_assert(sizeof(Header) == 64);
    Header h{};
    if (bytes.size() < sizeof h) {
        throw InputError(name, fmt::format("truncated {}: {} bytes, the header alone is 64", kind,
                                           bytes.size()));
    }
    std::memcpy(&h, bytes.data(), sizeof h);
    if (std::memcmp(h.magic, magic, sizeof magic) != 0)
        throw InputError(name, fmt::format("not a rotor {} file (bad magic)", kind));
    if (h.version != version) {
        throw InputError(name, fmt::format("unsupported {} version {} (this build reads version "
                                           "{})",
                                           kind, h.version, version));
    }
    return h;
}

/// The payload after header `h` against its stored size and CRC-32. `done`, when given, is
/// called with each 32 MiB piece of the payload once the CRC has read it (a mapped file's
/// reader releases it: MappedFile::release).
template <class Header>
void check_payload(const Header& h, std::span<const std::byte> bytes, const std::string& name,
                   const std::function<void(std::span<const std::byte>)>& done = {}) {
    if (h.payload_bytes != bytes.size() - sizeof h) {
        throw InputError(name, fmt::format("the header says {} payload bytes, the file has {} "
                                           "(truncated or appended to)",
                                           h.payload_bytes, bytes.size() - sizeof h));
    }
    constexpr std::size_t kPiece = std::size_t{32} << 20;
    std::uint32_t crc = 0;
    for (std::span<const std::byte> rest = bytes.subspan(sizeof h); !rest.empty();) {
        const std::span<const std::byte> piece = rest.first(std::min(kPiece, rest.size()));
        crc = crc_update(crc, piece);
        if (done) done(piece);
        rest = rest.subspan(piece.size());
    }
    if (crc != h.crc32) {
        throw InputError(name, fmt::format("CRC-32 mismatch (corrupt file): stored {:08x}, "
                                           "computed {:08x}",
                                           h.crc32, crc));
    }
}

/// Writes header `h` (its payload_bytes and crc32 set here from `sections`) and the sections
/// to `path` atomically (AtomicFile).
template <class Header>
void write_sections(const std::string& path, Header h,
                    std::span<const std::span<const std::byte>> sections) {
    h.payload_bytes = 0;
    std::uint32_t crc = 0;
    for (const auto s : sections) {
        crc = crc_update(crc, s);
        h.payload_bytes += s.size();
    }
    h.crc32 = crc;
    AtomicFile f(path);
    f.write_pod(h);
    for (const auto s : sections) f.write(s);
    f.commit();
}

/// A strings section: count, total bytes B of the strings (u64 each); when count > 0, count + 1
/// offsets (u64) from 0 to B; the strings' bytes back to back; zero padding to 8. `name(i)` gives
/// string i of `count`.
template <class Name>
std::vector<std::byte> encode_strings(std::size_t count, const Name& name) {
    std::vector<std::uint64_t> head(2 + count + (count == 0 ? 0 : 1), 0);
    head[0] = count;
    std::string chars;
    for (std::size_t i = 0; i < count; ++i) {
        chars += name(i);
        head[3 + i] = chars.size();
    }
    head[1] = chars.size();
    std::vector<std::byte> out(head.size() * 8 + chars.size());
    std::memcpy(out.data(), head.data(), head.size() * 8);
    std::memcpy(out.data() + head.size() * 8, chars.data(), chars.size());
    out.resize(out.size() + padding(out.size()).size(), std::byte{0});
    return out;
}

/// Reads a payload's sections in order, every read checked against the end: InputError naming
/// `name`, "truncated <kind>: <what> cut short ...".
class SectionCursor {
  public:
    SectionCursor(std::span<const std::byte> bytes, const std::string& name, std::string kind)
        : bytes_(bytes), name_(name), kind_(std::move(kind)) {}

    template <class T>
    std::vector<T> take(std::uint64_t count, const char* what) {
        const std::span<const std::byte> b = skip(count, sizeof(T), what);
        std::vector<T> v(static_cast<std::size_t>(count));
        if (count > 0) std::memcpy(v.data(), b.data(), b.size());
        return v;
    }
    /// The next `count` T's where they lie, not copied (a mapped file's arrays). The section
    /// must start aligned for T: the 8-byte padded sections of an 8-byte aligned payload are.
    template <class T>
    std::span<const T> view(std::uint64_t count, const char* what) {
        const std::span<const std::byte> b = skip(count, sizeof(T), what);
        ROTOR_ASSERT(reinterpret_cast<std::uintptr_t>(b.data()) % alignof(T) == 0,
                     "SectionCursor::view: a misaligned section");
        return {reinterpret_cast<const T*>(b.data()), static_cast<std::size_t>(count)};
    }
    std::uint64_t take_u64(const char* what) { return take<std::uint64_t>(1, what)[0]; }
    void align(const char* what) {
        const std::size_t n = padding(pos_).size();
        if (n > bytes_.size() - pos_) {
            throw InputError(name_, fmt::format("truncated {}: {} cut short", kind_, what));
        }
        pos_ += n;
    }
    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

  private:
    /// The next `count` items of `size` bytes, checked against the end, and the cursor past them.
    std::span<const std::byte> skip(std::uint64_t count, std::size_t size, const char* what) {
        if (count > (bytes_.size() - pos_) / size) {
            throw InputError(name_, fmt::format("truncated {}: {} cut short at byte {}", kind_,
                                                what, bytes_.size()));
        }
        const std::span<const std::byte> b = bytes_.subspan(pos_, count * size);
        pos_ += count * size;
        return b;
    }

    std::span<const std::byte> bytes_;
    const std::string& name_;
    std::string kind_;
    std::size_t pos_ = 0;
};

/// A strings section read by `c` (encode_strings' layout) for a dimension of `dimension`: the
/// offsets and the bytes, checked (count 0 or `dimension`, offsets from 0 rising to B).
struct StringsSection {
    std::vector<std::uint64_t> offsets;  ///< count + 1, or empty
    std::vector<char> chars;

    std::size_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
    std::string_view at(std::size_t i) const {
        return {chars.data() + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])};
    }
};
inline StringsSection decode_strings(SectionCursor& c, std::uint64_t dimension, const char* what,
                                     const std::string& name) {
    const std::uint64_t count = c.take_u64(what);
    const std::uint64_t chars = c.take_u64(what);
    if (count != 0 && count != dimension) {
        throw InputError(name,
                         fmt::format("{}: {} ids for a dimension of {}", what, count, dimension));
    }
    StringsSection s;
    s.offsets = c.take<std::uint64_t>(count == 0 ? 0 : count + 1, what);
    s.chars = c.take<char>(chars, what);
    c.align(what);
    if (count == 0) return s;
    if (s.offsets.front() != 0 || s.offsets.back() != chars) {
        throw InputError(name, fmt::format("{}: offsets run from {} to {}, expected 0 to {}", what,
                                           s.offsets.front(), s.offsets.back(), chars));
    }
    for (std::uint64_t i = 0; i < count; ++i) {
        if (s.offsets[i + 1] < s.offsets[i])
            throw InputError(name, fmt::format("{}: the offsets of id {} decrease", what, i));
    }
    return s;
}

}  // namespace rotor::core
