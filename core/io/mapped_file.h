// Read-only memory map of a whole file.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace rotor::core {

/// Maps a file read-only (MAP_PRIVATE) for its lifetime. The bytes are immutable, so any number
/// of threads may read them. Movable, not copyable. An empty file maps to an empty span.
class MappedFile {
  public:
    /// Throws InputError if the file is missing or unreadable, SystemError if mmap fails.
    explicit MappedFile(const std::string& path);
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile();

    /// The file's bytes; page-aligned start.
    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    const std::string& path() const noexcept { return path_; }
    /// Drops the pages wholly inside `range` (a part of bytes()) from this process's resident
    /// set (madvise MADV_DONTNEED): a later read faults them in again from the file, unchanged.
    /// For a reader done with a part of a big file, so that its peak memory is not the file's
    /// size on top of what it copied.
    void release(std::span<const std::byte> range) const noexcept;

  private:
    std::string path_;
    const std::byte* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace rotor::core
