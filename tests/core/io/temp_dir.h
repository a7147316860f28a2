// Test helpers: a fresh temporary directory per test, and small file utilities.
#pragma once

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rotor::testing {

/// Creates a unique directory under $TMPDIR (or /tmp); removes it with its contents on
/// destruction.
class TempDir {
  public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "rotor-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    const std::filesystem::path& path() const { return path_; }
    /// Path of `name` inside the directory, as a string.
    std::string file(std::string_view name) const { return (path_ / name).string(); }
    /// Writes `contents` to `name` and returns its path.
    std::string write(std::string_view name, std::string_view contents) const {
        const std::string p = file(name);
        std::ofstream out(p, std::ios::binary);
        out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        if (!out) throw std::runtime_error("cannot write " + p);
        return p;
    }
    /// Writes `contents` gzip-compressed (with zlib's gzwrite, independent of rotor's writer).
    std::string write_gz(std::string_view name, std::string_view contents) const {
        const std::string p = file(name);
        gzFile g = gzopen(p.c_str(), "wb");
        if (g == nullptr) throw std::runtime_error("gzopen failed");
        if (!contents.empty() &&
            gzwrite(g, contents.data(), static_cast<unsigned>(contents.size())) <= 0) {
            throw std::runtime_error("gzwrite failed");
        }
        gzclose(g);
        return p;
    }
    /// Number of entries in the directory.
    std::size_t count() const {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path_),
                                                      std::filesystem::directory_iterator()));
    }

  private:
    std::filesystem::path path_;
};

/// The whole content of a file.
inline std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace rotor::testing
