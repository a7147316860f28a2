// The wire format (comm/wire.h): the exact bytes of each field, round trips of every type, and
// every way a message can be wrong (short at any point, trailing bytes, corrupt lengths, bad
// bools and magics), each a CommError naming the message and the rank.
#include "comm/wire.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/base/error.h"

namespace rotor::comm {
namespace test_types {

/// A user struct with its wire functions (found by argument-dependent lookup).
struct Point {
    std::int32_t id = 0;
    double x = 0;
    std::string label;
    std::vector<std::uint32_t> tags;
    bool operator==(const Point&) const = default;
};

void wire_encode(WireWriter& w, const Point& p) {
    w.put(p.id);
    w.put(p.x);
    w.put(p.label);
    w.put(p.tags);
}

void wire_decode(WireReader& r, Point& p) {
    r.get(p.id);
    r.get(p.x);
    r.get(p.label);
    r.get(p.tags);
}

}  // namespace test_types

namespace {

using test_types::Point;

std::vector<std::uint8_t> as_u8(std::span<const std::byte> b) {
    std::vector<std::uint8_t> out;
    for (std::byte x : b) out.push_back(std::to_integer<std::uint8_t>(x));
    return out;
}

/// The message `what` on rank 1 fails with `fragment` in its what().
template <class F>
void expect_comm_error(F&& f, const std::string& fragment) {
    try {
        f();
        ADD_FAILURE() << "no CommError; wanted '" << fragment << "'";
    } catch (const CommError& e) {
        EXPECT_EQ(e.rank(), 1);
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
            << e.what() << " lacks '" << fragment << "'";
    }
}

template <class T>
T round_trip(const T& value) {
    const std::vector<std::byte> bytes = encode_message(value);
    return decode_message<T>(bytes, "round trip", 1);
}

template <class T>
std::uint64_t bits(T v) {
    if constexpr (sizeof(T) == 8) {
        return std::bit_cast<std::uint64_t>(v);
    } else {
        return std::bit_cast<std::uint32_t>(v);
    }
}

TEST(WireWriter, EncodesFieldsLittleEndianFixedWidth) {
    WireWriter w;
    w.put(std::uint32_t{0x01020304});
    w.put(std::int16_t{-2});
    w.put(true);
    w.put(1.0);
    w.put_length(3);
    w.put(std::string("ab"));
    EXPECT_EQ(as_u8(w.bytes()),
              (std::vector<std::uint8_t>{0x04, 0x03, 0x02, 0x01,                          // u32
                                         0xfe, 0xff,                                      // i16 -2
                                         0x01,                                            // bool
                                         0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf0, 0x3f,  // 1.0
                                         0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // length
                                         0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // "ab"
                                         'a',  'b'}));
    const std::vector<std::uint32_t> v{1, 0xaabbccdd};
    WireWriter vec;
    vec.put(v);
    EXPECT_EQ(as_u8(vec.bytes()), (std::vector<std::uint8_t>{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
                                                             0xdd, 0xcc, 0xbb, 0xaa}));
    EXPECT_EQ(vec.size(), 16u);
    EXPECT_EQ(vec.take().size(), 16u);
    EXPECT_EQ(vec.size(), 0u);
}

TEST(WireReader, RoundTripsEveryScalar) {
    WireWriter w;
    w.put(std::uint8_t{250});
    w.put(std::int8_t{-7});
    w.put(std::uint16_t{65000});
    w.put(std::int16_t{-30000});
    w.put(std::uint32_t{4'000'000'000u});
    w.put(std::int32_t{-2'000'000'000});
    w.put(std::numeric_limits<std::uint64_t>::max());
    w.put(std::numeric_limits<std::int64_t>::min());
    w.put(false);
    w.put(true);
    w.put(char{'z'});
    w.put(1.5f);
    const double specials[] = {-0.0, std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::denorm_min(),
                               std::bit_cast<double>(std::uint64_t{0x7ff8000000000123}), 0.1 + 0.2};
    for (double d : specials) w.put(d);
    const std::vector<std::byte> bytes = w.take();
    WireReader r(bytes, "scalars", 1);
    EXPECT_EQ(r.get<std::uint8_t>(), 250);
    EXPECT_EQ(r.get<std::int8_t>(), -7);
    EXPECT_EQ(r.get<std::uint16_t>(), 65000);
    EXPECT_EQ(r.get<std::int16_t>(), -30000);
    EXPECT_EQ(r.get<std::uint32_t>(), 4'000'000'000u);
    EXPECT_EQ(r.get<std::int32_t>(), -2'000'000'000);
    EXPECT_EQ(r.get<std::uint64_t>(), std::numeric_limits<std::uint64_t>::max());
    EXPECT_EQ(r.get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
    EXPECT_FALSE(r.get<bool>());
    EXPECT_TRUE(r.get<bool>());
    EXPECT_EQ(r.get<char>(), 'z');
    EXPECT_EQ(bits(r.get<float>()), bits(1.5f));
    for (double d : specials) EXPECT_EQ(bits(r.get<double>()), bits(d)) << "bit pattern kept";
    EXPECT_EQ(r.remaining(), 0u);
    r.finish();
}

TEST(WireReader, RoundTripsStringsVectorsAndUserTypes) {
    EXPECT_EQ(round_trip(std::string()), "");
    EXPECT_EQ(round_trip(std::string("with\0nul", 8)), std::string("with\0nul", 8));
    EXPECT_EQ(round_trip(std::vector<std::uint32_t>{}), std::vector<std::uint32_t>{});
    EXPECT_EQ(round_trip(std::vector<std::int64_t>{-1, 0, 1LL << 40}),
              (std::vector<std::int64_t>{-1, 0, 1LL << 40}));
    EXPECT_EQ(round_trip(std::vector<double>{0.5, -2.25}), (std::vector<double>{0.5, -2.25}));
    EXPECT_EQ(round_trip(std::vector<std::string>{"a", "", "ccc"}),
              (std::vector<std::string>{"a", "", "ccc"}));
    EXPECT_EQ(round_trip(std::vector<std::vector<std::uint32_t>>{{1, 2}, {}, {3}}),
              (std::vector<std::vector<std::uint32_t>>{{1, 2}, {}, {3}}));
    const Point p{-4, 2.5, "p", {7, 8, 9}};
    EXPECT_EQ(round_trip(p), p);
    const std::vector<Point> ps{p, Point{}, Point{3, -1e300, "", {}}};
    EXPECT_EQ(round_trip(ps), ps);

    // Large arrays: the bulk path.
    std::vector<std::uint32_t> big(1'000'003);
    for (std::size_t i = 0; i < big.size(); ++i)
        big[i] = static_cast<std::uint32_t>(i * 2654435761u);
    EXPECT_EQ(round_trip(big), big);
}

TEST(WireReader, ArraysWithoutLength) {
    WireWriter w;
    const std::vector<std::uint16_t> in{1, 2, 65535};
    w.put_array(std::span<const std::uint16_t>(in));
    EXPECT_EQ(w.size(), 6u);
    const auto bytes = w.take();
    WireReader r(bytes, "array", 1);
    std::vector<std::uint16_t> out(3);
    r.get_array(std::span<std::uint16_t>(out));
    r.finish();
    EXPECT_EQ(out, in);
}

/// A message like the trainer's slice message: magic, slice id, rows, then a name and a double.
std::vector<std::byte> slice_like_message() {
    WireWriter w;
    w.put(std::uint32_t{0x534c4943});
    w.put(std::uint32_t{5});
    w.put(std::vector<std::uint32_t>{3, 1, 4, 1, 5});
    w.put(std::string("slice"));
    w.put(0.25);
    return w.take();
}

void read_slice_like(std::span<const std::byte> bytes) {
    WireReader r(bytes, "slice message", 1);
    r.expect_u32(0x534c4943, "magic");
    EXPECT_EQ(r.get<std::uint32_t>(), 5u);
    EXPECT_EQ(r.get<std::vector<std::uint32_t>>(), (std::vector<std::uint32_t>{3, 1, 4, 1, 5}));
    EXPECT_EQ(r.get_string(), "slice");
    EXPECT_EQ(r.get<double>(), 0.25);
    r.finish();
}

TEST(WireReader, EveryTruncationPointThrowsNamingTheMessage) {
    const std::vector<std::byte> bytes = slice_like_message();
    ASSERT_EQ(bytes.size(), 4u + 4 + 8 + 20 + 8 + 5 + 8);
    read_slice_like(bytes);  // whole: fine
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
        SCOPED_TRACE("cut at " + std::to_string(cut));
        expect_comm_error([&] { read_slice_like(std::span(bytes).first(cut)); },
                          "rank 1: slice message: ");
    }
    // The exact text of two of them: a short fixed field, and a length the bytes cannot back.
    expect_comm_error([&] { read_slice_like(std::span(bytes).first(52)); },
                      "rank 1: slice message: truncated: needs 8 bytes at offset 49 of 52");
    expect_comm_error(
        [&] { read_slice_like(std::span(bytes).first(30)); },
        "rank 1: slice message: truncated or corrupt length: 5 elements of 4 bytes at offset 8 "
        "exceed the 14 bytes left");
}

TEST(WireReader, FinishRefusesTrailingBytes) {
    std::vector<std::byte> bytes = slice_like_message();
    const std::size_t size = bytes.size();
    bytes.push_back(std::byte{0});
    bytes.push_back(std::byte{0});
    expect_comm_error([&] { read_slice_like(bytes); },
                      "slice message: 2 trailing bytes after offset " + std::to_string(size));
    expect_comm_error(
        [&] { (void)decode_message<std::uint32_t>(encode_message(std::uint64_t{7}), "one", 1); },
        "one: 4 trailing bytes after offset 4");
}

/// `bytes` with the u64 at `offset` replaced by `value`.
std::vector<std::byte> with_u64(std::vector<std::byte> bytes, std::size_t offset,
                                std::uint64_t value) {
    WireWriter w;
    w.put(value);
    std::copy(w.bytes().begin(), w.bytes().end(), bytes.begin() + static_cast<long>(offset));
    return bytes;
}

TEST(WireReader, CorruptLengthsFailBeforeAllocating) {
    const auto u32s = encode_message(std::vector<std::uint32_t>{1, 2, 3});
    // 2^61 u32s would be 8 EiB: refused from the 12 bytes left, not attempted.
    for (std::uint64_t n :
         {std::uint64_t{4}, std::uint64_t{1} << 61, std::numeric_limits<std::uint64_t>::max()}) {
        SCOPED_TRACE(n);
        expect_comm_error(
            [&] { (void)decode_message<std::vector<std::uint32_t>>(with_u64(u32s, 0, n), "v", 1); },
            "v: truncated or corrupt length: " + std::to_string(n) +
                " elements of 4 bytes at offset 0");
    }
    const auto str = encode_message(std::string("abc"));
    expect_comm_error(
        [&] { (void)decode_message<std::string>(with_u64(str, 0, 1ULL << 40), "name", 1); },
        "name: truncated or corrupt length");
    const auto strings = encode_message(std::vector<std::string>{"x"});
    expect_comm_error(
        [&] {
            (void)decode_message<std::vector<std::string>>(with_u64(strings, 0, 1ULL << 50),
                                                           "names", 1);
        },
        "names: truncated or corrupt length");
    const auto points = encode_message(std::vector<Point>{Point{}});
    expect_comm_error(
        [&] {
            (void)decode_message<std::vector<Point>>(with_u64(points, 0, 1ULL << 50), "points", 1);
        },
        "points: truncated or corrupt length");
    // A count that fits the bytes left but not the elements: truncated inside the elements.
    expect_comm_error(
        [&] { (void)decode_message<std::vector<Point>>(with_u64(points, 0, 3), "points", 1); },
        "points: truncated");
    WireReader r(u32s, "lengths", 1);
    expect_comm_error([&] { (void)r.get_length(16); }, "lengths: truncated or corrupt length");
}

TEST(WireReader, MalformedValuesNameTheMessage) {
    expect_comm_error(
        [&] { (void)decode_message<bool>(encode_message(std::uint8_t{2}), "flag", 1); },
        "flag: a bool that is neither 0 nor 1 at offset 0");
    const auto bytes = encode_message(std::uint32_t{0x1234});
    WireReader r(bytes, "docs message", 1);
    expect_comm_error([&] { r.expect_u32(0x444f4353, "magic"); },
                      "docs message: bad magic: 0x1234 (expected 0x444f4353)");
    WireReader r2(bytes, "docs message", 1);
    expect_comm_error([&] { r2.fail("document 9 of 3"); }, "rank 1: docs message: document 9 of 3");
    EXPECT_EQ(r2.message(), "docs message");
    EXPECT_EQ(r2.rank(), 1);
    EXPECT_EQ(r2.offset(), 0u);
    EXPECT_EQ(r2.remaining(), 4u);
}

TEST(WireVarint, BytesAndRoundTrips) {
    // LEB128: 7 bits a byte, low first, the high bit set on every byte but the last.
    WireWriter w;
    w.put_varint(300);
    EXPECT_EQ(w.bytes().size(), 2u);
    EXPECT_EQ(w.bytes()[0], std::byte{0xac});
    EXPECT_EQ(w.bytes()[1], std::byte{0x02});
    const std::vector<std::uint64_t> values = {
        0,          1,
        127,        128,
        16383,      16384,
        1ULL << 35, (1ULL << 63) - 1,
        1ULL << 63, std::numeric_limits<std::uint64_t>::max()};
    WireWriter all;
    std::size_t expected = 0;
    for (const std::uint64_t v : values) {
        all.put_varint(v);
        expected += varint_bytes(v);
    }
    EXPECT_EQ(varint_bytes(127), 1u);
    EXPECT_EQ(varint_bytes(128), 2u);
    EXPECT_EQ(varint_bytes(std::numeric_limits<std::uint64_t>::max()), 10u);
    const std::vector<float> floats = {1.5f, -2.0f};
    all.put_counted(std::span<const float>(floats));
    expected += counted_bytes(floats.size(), sizeof(float));
    ASSERT_EQ(all.size(), expected);
    const std::vector<std::byte> bytes = all.take();
    WireReader r(bytes, "varints", 0);
    for (const std::uint64_t v : values) EXPECT_EQ(r.get_varint(), v);
    std::vector<float> back;
    r.get_counted(back);
    EXPECT_EQ(back, floats);
    r.finish();
}

TEST(WireVarint, MalformedOnesFail) {
    // Eleven bytes, or a tenth byte above 1: past 2^64.
    std::vector<std::byte> long_one(10, std::byte{0x80});
    long_one.push_back(std::byte{0x01});
    WireReader r1(long_one, "clock message", 1);
    expect_comm_error([&] { r1.get_varint(); }, "rank 1: clock message: a varint past 2^64");
    std::vector<std::byte> over(9, std::byte{0xff});
    over.push_back(std::byte{0x02});
    WireReader r2(over, "clock message", 1);
    expect_comm_error([&] { r2.get_varint(); }, "a varint past 2^64 at offset 0");
    // Truncated: a continuation bit on the last byte.
    const std::vector<std::byte> cut = {std::byte{0x80}};
    WireReader r3(cut, "clock message", 1);
    expect_comm_error([&] { r3.get_varint(); }, "truncated");
    // A count the bytes cannot back, before anything is allocated.
    WireWriter w;
    w.put_varint(1ULL << 40);
    w.put(std::uint32_t{7});
    const std::vector<std::byte> bytes = w.take();
    WireReader r4(bytes, "answer", 1);
    std::vector<double> out;
    expect_comm_error([&] { r4.get_counted(out); },
                      "answer: truncated or corrupt length: 1099511627776 elements of 8 bytes at "
                      "offset 0 exceed the 4 bytes left");
}

}  // namespace
}  // namespace rotor::comm
