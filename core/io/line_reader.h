// Line-by-line reading of big text files (plain or gzip) with line numbers for error messages.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/byte_source.h"

namespace rotor::core {

/// Reads a text file one line at a time through a large buffer (4 MiB), so a 100 MB file costs
/// a few dozen read(2) calls and no per-line allocation. Lines end at '\n'; a trailing '\r' is
/// removed; the last line need not end with '\n'. Columns in errors are 1-based byte offsets
/// into the line. Not thread-safe; movable, not copyable.
class LineReader {
  public:
    /// Opens `path` (plain or gzip by magic bytes). Throws InputError if it cannot be opened.
    explicit LineReader(const std::string& path);
    /// Reads from an already open source through a buffer of `buffer_bytes` (>= 1; it grows if
    /// a line is longer). Small buffers are for tests and fuzzing.
    explicit LineReader(std::unique_ptr<ByteSource> source,
                        std::size_t buffer_bytes = kDefaultBufferBytes);

    static constexpr std::size_t kDefaultBufferBytes = std::size_t{4} << 20;

    /// Sets `line` to the next line (valid until the next call) and returns true, or returns
    /// false at the end of the input. Throws InputError on a corrupt or truncated .gz. A UTF-8
    /// byte order mark (EF BB BF) at the start of the input is dropped: every text reader sees
    /// the first line without it (columns count from after it).
    bool next(std::string_view& line);

    /// 1-based number of the line last returned by next() (0 before the first).
    std::uint64_t line_number() const noexcept { return line_no_; }
    /// Numbers the next line `first_line` (>= 1) instead of line_number() + 1: for a reader over
    /// a byte range of a file that starts after first_line - 1 lines.
    void number_from(std::uint64_t first_line) noexcept { line_no_ = first_line - 1; }
    /// The path or buffer name, for error messages.
    const std::string& name() const noexcept { return source_->name(); }

    /// Throws InputError `<name>:<line_number()>:<col>: <what>`.
    [[noreturn]] void fail(std::uint64_t col, const std::string& what) const;

  private:
    bool refill();

    std::unique_ptr<ByteSource> source_;
    std::vector<char> buf_;
    std::size_t begin_ = 0;  ///< start of the unread bytes in buf_
    std::size_t end_ = 0;    ///< end of the valid bytes in buf_
    bool eof_ = false;
    std::uint64_t line_no_ = 0;
};

}  // namespace rotor::core
