// A fixed-size, zero-initialised, cache-line-aligned array of a trivially copyable type: the
// single pool that the count tables carve their rows from (no per-row heap allocation).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>

#include <sys/mman.h>

namespace rotor::lda::detail {

/// Bytes in a cache line; rows of the count tables start on such a boundary so that two rows
/// (hence two threads working on different rows) never share a line of mutable data.
inline constexpr std::size_t kCacheLineBytes = 64;

/// Buffers of at least kHugeBufferBytes are aligned to kHugePageBytes, rounded up to whole
/// huge pages and advised to use transparent huge pages (Linux, madvise mode): the samplers read
/// doc rows at random, and with 4 KiB pages nearly every row was a TLB miss (perf: the prefetch
/// of the next rows' headers held a fifth of SparseLdaSampler's time; docs/sampler.md
/// "Branches"). At most 2 MiB more per buffer, and only for buffers of 4 MiB or more.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugeBufferBytes = std::size_t{4} << 20;

/// Owns `size()` elements aligned to kCacheLineBytes (large ones to kHugePageBytes), all zero
/// after construction. Copyable (deep copy) and movable. Not thread-safe for concurrent writes to the same element.
template <class T>
class AlignedBuffer {
    static_assert(std::is_trivially_copyable_v<T>);

  public:
    AlignedBuffer() = default;
    explicit AlignedBuffer(std::size_t size) : data_(allocate(size)), size_(size) {}
    AlignedBuffer(const AlignedBuffer& other) : data_(allocate(other.size_)), size_(other.size_) {
        if (size_ != 0) std::memcpy(data_.get(), other.data_.get(), size_ * sizeof(T));
    }
    AlignedBuffer& operator=(const AlignedBuffer& other) {
        if (this != &other) *this = AlignedBuffer(other);
        return *this;
    }
    AlignedBuffer(AlignedBuffer&&) noexcept = default;
    AlignedBuffer& operator=(AlignedBuffer&&) noexcept = default;

    T* data() noexcept { return data_.get(); }
    const T* data() const noexcept { return data_.get(); }
    std::size_t size() const noexcept { return size_; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    const T& operator[](std::size_t i) const noexcept { return data_[i]; }
    /// Sets every element to zero bytes.
    void zero() noexcept {
        if (size_ != 0) std::memset(static_cast<void*>(data_.get()), 0, size_ * sizeof(T));
    }

  private:
    struct Free {
        void operator()(T* p) const noexcept { std::free(p); }
    };
    static std::unique_ptr<T[], Free> allocate(std::size_t size) {
        if (size == 0) return nullptr;
        std::size_t bytes = size * sizeof(T);
        bytes = (bytes + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
        const bool huge = bytes >= kHugeBufferBytes;
        if (huge) bytes = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
        void* p = std::aligned_alloc(huge ? kHugePageBytes : kCacheLineBytes, bytes);
        if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
        // Before the first touch (the memset), so the pages are faulted in huge. Advice only:
        // a kernel without transparent huge pages leaves small pages, and nothing else changes.
        if (huge) ::madvise(p, bytes, MADV_HUGEPAGE);
#endif
        std::memset(p, 0, bytes);
        return std::unique_ptr<T[], Free>(static_cast<T*>(p));
    }

    std::unique_ptr<T[], Free> data_;
    std::size_t size_ = 0;
};

}  // namespace rotor::lda::detail
