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

#include "core/base/huge_pages.h"

namespace rotor::lda::detail {

/// Bytes in a cache line; rows of the count tables start on such a boundary so that two rows
/// (hence two threads working on different rows) never share a line of mutable data.
inline constexpr std::size_t kCacheLineBytes = 64;

/// Owns `size()` elements aligned to kCacheLineBytes, all zero after construction. Buffers of
/// kHugeAllocationBytes or more are huge-page aligned and advised (core/base/huge_pages.h): the
/// samplers read doc rows at random, and with 4 KiB pages nearly every row was a TLB miss (perf:
/// the prefetch of the next rows' headers held a fifth of SparseLdaSampler's time;
/// docs/sampler.md "Branches"). Copyable (deep copy) and movable. Not thread-safe for concurrent
/// writes to the same element.
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
        // Large: advised before the first touch (the memset), so the pages fault in huge.
        void* p = bytes >= kHugeAllocationBytes ? allocate_maybe_huge(bytes)
                                                : std::aligned_alloc(kCacheLineBytes, bytes);
        if (p == nullptr) throw std::bad_alloc();
        std::memset(p, 0, bytes);
        return std::unique_ptr<T[], Free>(static_cast<T*>(p));
    }

    std::unique_ptr<T[], Free> data_;
    std::size_t size_ = 0;
};

}  // namespace rotor::lda::detail
