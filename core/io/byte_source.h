// Sequential byte sources for the text readers: a file, a memory buffer, and a gzip decoder over
// either. open_byte_source() sniffs the gzip magic bytes (1f 8b), never the file name.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace rotor::core {

/// A forward-only stream of bytes. Not thread-safe; one reader at a time.
class ByteSource {
  public:
    virtual ~ByteSource() = default;
    /// Reads up to out.size() bytes into out; returns how many were read, 0 only at the end.
    /// Throws InputError (naming name()) on corrupt data, SystemError on an I/O failure.
    virtual std::size_t read(std::span<char> out) = 0;
    /// The file name (or the name given to a memory buffer) used in error messages.
    virtual const std::string& name() const = 0;
};

/// Opens `path` for reading; gzip-compressed content (by magic bytes) is decompressed
/// transparently. Throws InputError if the file is missing, unreadable or a directory.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path);

/// A source over `data` (not copied: it must outlive the source), named `name` in errors.
/// Gzip-compressed data (by magic bytes) is decompressed transparently.
std::unique_ptr<ByteSource> memory_byte_source(std::string name, std::string_view data);

/// True if `prefix` starts with the gzip magic bytes 1f 8b.
bool has_gzip_magic(std::string_view prefix) noexcept;

}  // namespace rotor::core
