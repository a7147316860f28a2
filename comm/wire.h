// The wire format of every message between ranks: explicit field encoding, bounds-checked
// decoding. A model builds a message with WireWriter, the communicator carries the bytes, and the
// receiver takes it apart with WireReader, which knows what message it reads and on which rank,
// so a short, malformed or over-long message fails with a CommError naming both, e.g.
// "rank 1: slice message: truncated: needs 8 bytes at offset 40 of 44".
//
// Encoding (docs/comm.md, "Wire format"), the same on every host:
// - integers: fixed width (1, 2, 4 or 8 bytes, as the C++ type), little-endian, two's complement;
// - bool: one byte, 0 or 1 (anything else is malformed);
// - float and double: their IEEE-754 bit pattern as a u32 / u64;
// - lengths: u64;
// - std::string: u64 length, then the bytes;
// - std::vector<T>: u64 element count, then the elements; vectors of arithmetic types are copied
//   in bulk (one memcpy on little-endian hosts: an LDA slice is millions of u32 words);
// - arrays without a length (put_array / get_array): the elements only, the count known to both
//   sides;
// - varints (put_varint / get_varint, for small counters and counts in short messages: the
//   key-value engine's headers): LEB128, 7 bits a byte, low first, at most 10 bytes; vectors with
//   a varint count (put_counted / get_counted), then the elements as above;
// - user types: whatever the ADL functions `wire_encode(WireWriter&, const T&)` and
//   `wire_decode(WireReader&, T&)` in T's namespace write and read, field by field.
// No padding, no alignment, no raw copies of structs: the bytes do not depend on the compiler's
// layout. Lengths are checked against the bytes left before anything is allocated, so a corrupt
// length fails at once instead of allocating gigabytes.
//
// Thread-safety: a writer or reader is a value used by one thread; independent ones may be used
// concurrently.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace rotor::comm {

class WireWriter;
class WireReader;

/// Types the wire format encodes as a fixed-width field: integers, bool, float, double.
template <class T>
concept WireScalar = std::is_arithmetic_v<T> &&
    (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

/// User types with `wire_encode(WireWriter&, const T&)` and `wire_decode(WireReader&, T&)` found
/// by argument-dependent lookup (declared in T's namespace).
template <class T>
concept WireUserType = requires(WireWriter& w, WireReader& r, const T& in, T& out) {
    wire_encode(w, in);
    wire_decode(r, out);
};

namespace detail {

/// Copies `n` scalars of `size` bytes from host order at `src` to little-endian at `dst`, or
/// back (the same operation both ways).
inline void copy_little_endian(void* dst, const void* src, std::size_t n, std::size_t size) {
    if constexpr (std::endian::native == std::endian::little) {
        if (n != 0) std::memcpy(dst, src, n * size);
    } else {
        auto* out = static_cast<unsigned char*>(dst);
        const auto* in = static_cast<const unsigned char*>(src);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t b = 0; b < size; ++b) out[i * size + b] = in[i * size + size - 1 - b];
    }
}

template <class T>
struct IsVector : std::false_type {};
template <class T, class A>
struct IsVector<std::vector<T, A>> : std::true_type {};

}  // namespace detail

/// Bytes of `v` as a varint (LEB128): 1 for v < 128, up to 10.
constexpr std::size_t varint_bytes(std::uint64_t v) noexcept {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

/// Bytes of a vector of `n` elements of `element_bytes` each written by put_counted.
constexpr std::size_t counted_bytes(std::size_t n, std::size_t element_bytes) noexcept {
    return varint_bytes(n) + n * element_bytes;
}

/// Builds one message. put() appends a field; take() hands the bytes over. Appending never
/// fails except for memory.
class WireWriter {
  public:
    WireWriter() = default;
    /// Reserves `bytes` up front (the message's expected size: no regrowth while writing).
    explicit WireWriter(std::size_t bytes) { bytes_.reserve(bytes); }

    /// Appends one field: a scalar, a std::string, a std::vector of encodable elements, or a
    /// user type with wire_encode (see the file comment for each encoding).
    template <class T>
    void put(const T& value) {
        if constexpr (WireScalar<T>) {
            put_array(std::span<const T>(&value, 1));
        } else if constexpr (std::is_same_v<T, std::string>) {
            put_string(value);
        } else if constexpr (detail::IsVector<T>::value) {
            put_length(value.size());
            if constexpr (WireScalar<typename T::value_type>) {
                put_array(std::span<const typename T::value_type>(value));
            } else {
                for (const auto& v : value) put(v);
            }
        } else {
            static_assert(WireUserType<T>,
                          "no wire encoding for this type: declare wire_encode "
                          "and wire_decode in its namespace");
            wire_encode(*this, value);
        }
    }

    /// Appends a string: u64 length, then its bytes.
    void put_string(std::string_view s) {
        put_length(s.size());
        append(s.data(), s.size());
    }

    /// Appends a length or element count (u64).
    void put_length(std::size_t n) { put(static_cast<std::uint64_t>(n)); }

    /// Appends `v` as a varint (LEB128: 7 bits a byte, low first; varint_bytes(v) bytes).
    void put_varint(std::uint64_t v) {
        while (v >= 0x80) {
            bytes_.push_back(static_cast<std::byte>((v & 0x7f) | 0x80));
            v >>= 7;
        }
        bytes_.push_back(static_cast<std::byte>(v));
    }

    /// Appends a vector with a varint count, then its elements (counted_bytes(size, sizeof(T))).
    template <WireScalar T>
    void put_counted(std::span<const T> values) {
        put_varint(values.size());
        put_array(values);
    }

    /// Appends `values` without a length (the reader knows the count): a bulk copy on
    /// little-endian hosts.
    template <WireScalar T>
    void put_array(std::span<const T> values) {
        const std::size_t at = bytes_.size();
        bytes_.resize(at + values.size_bytes());
        if constexpr (std::is_same_v<T, bool>) {
            for (std::size_t i = 0; i < values.size(); ++i)
                bytes_[at + i] = values[i] ? std::byte{1} : std::byte{0};
        } else {
            detail::copy_little_endian(bytes_.data() + at, values.data(), values.size(), sizeof(T));
        }
    }

    /// Bytes written so far.
    std::size_t size() const noexcept { return bytes_.size(); }
    /// The message so far (borrowed: valid until the next put or take).
    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    /// Hands the message over; the writer is empty afterwards.
    std::vector<std::byte> take() noexcept { return std::move(bytes_); }

  private:
    void append(const void* data, std::size_t n) {
        const std::size_t at = bytes_.size();
        bytes_.resize(at + n);
        if (n != 0) std::memcpy(bytes_.data() + at, data, n);
    }

    std::vector<std::byte> bytes_;
};

/// Takes one message apart, front to back, checking every read against the bytes left. Every
/// failure throws CommError(rank, "<message>: <what>"), the message being the name given at
/// construction (e.g. "slice message", "metrics of rank 2"). The bytes are borrowed: they must
/// outlive the reader.
class WireReader {
  public:
    /// `message` names what is read in errors; `rank` is the rank reading (the CommError's).
    WireReader(std::span<const std::byte> bytes, std::string message, int rank)
        : bytes_(bytes), message_(std::move(message)), rank_(rank) {}

    /// Reads one field written by WireWriter::put of the same type.
    template <class T>
    void get(T& out) {
        if constexpr (WireScalar<T>) {
            get_array(std::span<T>(&out, 1));
        } else if constexpr (std::is_same_v<T, std::string>) {
            out = get_string();
        } else if constexpr (detail::IsVector<T>::value) {
            using V = typename T::value_type;
            if constexpr (WireScalar<V>) {
                const std::size_t n = get_length(sizeof(V));
                out.resize(n);
                get_array(std::span<V>(out));
            } else {
                // Elements of unknown size: at least one byte each; no reservation from a length
                // the bytes cannot back.
                const std::size_t n = get_length(1);
                out.clear();
                for (std::size_t i = 0; i < n; ++i) get(out.emplace_back());
            }
        } else {
            static_assert(WireUserType<T>,
                          "no wire encoding for this type: declare wire_encode "
                          "and wire_decode in its namespace");
            wire_decode(*this, out);
        }
    }

    /// Reads and returns one field of type T (default-constructible).
    template <class T>
    T get() {
        T out{};
        get(out);
        return out;
    }

    /// Reads a string written by put_string or put(std::string).
    std::string get_string();

    /// Reads a length written by put_length for elements of at least `element_bytes` bytes each
    /// (> 0); throws unless that many elements fit in the bytes left, so the caller may allocate
    /// the count.
    std::size_t get_length(std::size_t element_bytes);

    /// Reads a varint written by put_varint; throws on more than 10 bytes or a value past 2^64.
    std::uint64_t get_varint();

    /// Reads a vector written by put_counted (the count checked against the bytes left first).
    template <WireScalar T>
    void get_counted(std::vector<T>& out) {
        const std::size_t at = pos_;
        const std::uint64_t n = get_varint();
        if (n > remaining() / sizeof(T)) fail_length(n, sizeof(T), at);
        out.resize(static_cast<std::size_t>(n));
        get_array(std::span<T>(out));
    }

    /// Reads out.size() values written by put_array.
    template <WireScalar T>
    void get_array(std::span<T> out) {
        const std::size_t start = pos_;
        const std::byte* at = consume(out.size_bytes());
        if constexpr (std::is_same_v<T, bool>) {
            for (std::size_t i = 0; i < out.size(); ++i) {
                const auto b = std::to_integer<std::uint8_t>(at[i]);
                if (b > 1) fail_at(start + i, "a bool that is neither 0 nor 1");
                out[i] = b == 1;
            }
        } else {
            detail::copy_little_endian(out.data(), at, out.size(), sizeof(T));
        }
    }

    /// Reads a u32 and throws "<message>: bad <what>: 0x... (expected 0x...)" unless it equals
    /// `expected` (a message's magic number or kind).
    void expect_u32(std::uint32_t expected, std::string_view what);

    /// Throws unless every byte was read: "<message>: N trailing bytes after offset X".
    void finish() const;

    /// Throws CommError(rank, "<message>: <what>"): for checks of the decoded values (a topic out
    /// of range, a wrong slice id), so they name the message too.
    [[noreturn]] void fail(std::string_view what) const;

    std::size_t offset() const noexcept { return pos_; }
    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    const std::string& message() const noexcept { return message_; }
    int rank() const noexcept { return rank_; }

  private:
    /// The next `n` bytes, after checking that they are there.
    const std::byte* consume(std::size_t n) {
        if (n > remaining()) truncated(n);
        const std::byte* at = bytes_.data() + pos_;
        pos_ += n;
        return at;
    }
    [[noreturn]] void truncated(std::size_t n) const;
    /// Throws "truncated or corrupt length" for a count `n` read at `at`.
    [[noreturn]] void fail_length(std::uint64_t n, std::size_t element_bytes, std::size_t at) const;
    [[noreturn]] void fail_at(std::size_t offset, std::string_view what) const;

    std::span<const std::byte> bytes_;
    std::string message_;
    int rank_;
    std::size_t pos_ = 0;
};

/// Encodes `value` as one message (a WireWriter with one put).
template <class T>
std::vector<std::byte> encode_message(const T& value) {
    WireWriter w;
    w.put(value);
    return w.take();
}

/// Decodes a whole message holding one `T` (get, then finish).
template <class T>
T decode_message(std::span<const std::byte> bytes, std::string message, int rank) {
    WireReader r(bytes, std::move(message), rank);
    T out{};
    r.get(out);
    r.finish();
    return out;
}

}  // namespace rotor::comm
