// core/io/manifest.h and core/io/whole_file.h: a directory's MANIFEST written and verified, every
// deviation named; JSON text with a NUL refused at its line and column.
#include "core/io/manifest.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/base/error.h"
#include "core/io/checksum.h"
#include "core/io/whole_file.h"
#include "tests/core/io/temp_dir.h"

namespace rotor::core {
namespace {

using rotor::testing::TempDir;

/// The message of the InputError `f` throws, or "" when it throws none.
template <class F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

/// The manifest's spelling of a CRC-32.
std::string fmt_crc(std::string_view bytes) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", crc32(bytes));
    return buf;
}

TEST(Manifest, ListsEveryFileAndVerifiesThem) {
    const TempDir d;
    d.write("b.bin", std::string("\0\1\2", 3));
    d.write("a.txt", "hello\n");
    d.write("empty", "");
    EXPECT_FALSE(verify_manifest(d.path().string()));  // none yet: an older directory
    write_manifest(d.path().string());
    const std::string body = "rotor-manifest\t1\na.txt\t6\t" + fmt_crc("hello\n") + "\nb.bin\t3\t" +
                             fmt_crc(std::string("\0\1\2", 3)) + "\nempty\t0\t00000000\n";
    EXPECT_EQ(rotor::testing::read_all(d.file("MANIFEST")), body + crc32_line(body, '\t'));
    EXPECT_TRUE(verify_manifest(d.path().string()));
}

TEST(Manifest, EveryDeviationIsNamed) {
    const TempDir d;
    const std::string dir = d.path().string();
    d.write("a.txt", "hello\n");
    write_manifest(dir);
    d.write("a.txt", "hellO\n");
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find(d.file("a.txt") + ": CRC-32 differs"),
              std::string::npos);
    d.write("a.txt", "hello\n\n");
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find("has 7 bytes, the manifest says 6"),
              std::string::npos);
    std::filesystem::remove(d.file("a.txt"));
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find(d.file("a.txt") + ": missing"),
              std::string::npos);
    d.write("a.txt", "hello\n");
    d.write("b.txt", "");
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find(d.file("b.txt") + ": not listed"),
              std::string::npos);
    std::filesystem::remove(d.file("b.txt"));
    EXPECT_TRUE(verify_manifest(dir));
    // Files the caller checks itself: their size only.
    d.write("a.txt", "hellO\n");
    EXPECT_TRUE(verify_manifest(dir, [](std::string_view f) { return f == "a.txt"; }));
    // The manifest's own damage, named at its line.
    const std::string m = rotor::testing::read_all(d.file("MANIFEST"));
    std::string flipped = m;
    flipped[20] ^= 1;
    d.write("MANIFEST", flipped);
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find(d.file("MANIFEST") + ":3:7: CRC-32"),
              std::string::npos)
        << error_of([&] { verify_manifest(dir); });
    d.write("MANIFEST", m + std::string("\0", 1));
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find("the last line has no newline"),
              std::string::npos);
    d.write("MANIFEST", m.substr(0, m.size() - 1));
    EXPECT_NE(error_of([&] { verify_manifest(dir); }).find(d.file("MANIFEST")), std::string::npos);
    // A claim without a manifest.
    std::filesystem::remove(d.file("MANIFEST"));
    EXPECT_NE(error_of([&] {
                  require_manifest(dir, false, true, dir + "/params.json");
              }).find(d.file("MANIFEST") + ": missing: params.json says"),
              std::string::npos);
    EXPECT_EQ(error_of([&] { require_manifest(dir, false, false, "params.json"); }), "");
}

TEST(JsonText, ANulByteIsRefusedAtItsLineAndColumn) {
    EXPECT_EQ(error_of([] { check_json_text("{\"a\": 1}\n", "p.json"); }), "");
    EXPECT_NE(error_of([] {
                  check_json_text(std::string("{\"a\": 1}\n\0GARBAGE", 18), "p.json");
              }).find("p.json:2:1: a NUL byte"),
              std::string::npos);
    const TempDir d;
    d.write("s.json", std::string("{\n  \"a\": \0}", 11));
    EXPECT_NE(error_of([&] { read_json_text(d.file("s.json")); }).find("s.json:2:8: a NUL byte"),
              std::string::npos);
}

}  // namespace
}  // namespace rotor::core
