// Memory that a phase fills and frees piece by piece, so that what a phase holds is not on top of
// what the next one builds: release_pages() gives the whole pages inside a range back to the
// system, and PageArray is an array in its own mapping whose pages cost nothing until written.
// The SGD trainer builds its blocks in the place of the ratings matrix it reads this way, and
// the model's seen items in the place of its blocks (docs/mf.md, "Memory").
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace rotor {

/// Drops the pages wholly inside [p, p + bytes) from the process (madvise MADV_DONTNEED): they
/// read as zeros afterwards (anonymous memory; a file mapping reads its file again). For an
/// owner done with that part of a large array: the memory must be the caller's to overwrite
/// (the interior of an allocation, whose allocator keeps its bookkeeping outside the bytes it
/// hands out). Advice only: a failure leaves the pages resident, which is harmless.
inline void release_pages(const void* p, std::size_t bytes) noexcept {
    if (p == nullptr || bytes == 0) return;
    const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto lo = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t first = (lo + page - 1) / page * page, last = (lo + bytes) / page * page;
    if (first >= last) return;
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

/// n elements of a trivial type in an anonymous mapping of their own, uninitialised (each page
/// reads as zeros until written, and is not resident before), without transparent huge pages: an
/// array filled at many places at once (one per SGD block) then holds one small page beyond
/// what is written per place, not 2 MiB. release() gives ranges back. Move-only; not
/// thread-safe beyond what a plain array is (threads may write disjoint elements at once).
template <class T>
class PageArray {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

  public:
    PageArray() = default;
    /// Throws std::bad_alloc when the mapping fails.
    explicit PageArray(std::size_t n) : size_(n) {
        if (n == 0) return;
        bytes_ = n * sizeof(T);
        void* p =
            ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_NOHUGEPAGE
        ::madvise(p, bytes_, MADV_NOHUGEPAGE);
#endif
        data_ = static_cast<T*>(p);
    }
    PageArray(PageArray&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)),
          size_(std::exchange(o.size_, 0)),
          bytes_(std::exchange(o.bytes_, 0)) {}
    PageArray& operator=(PageArray&& o) noexcept {
        if (this != &o) {
            reset();
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
            bytes_ = std::exchange(o.bytes_, 0);
        }
        return *this;
    }
    PageArray(const PageArray&) = delete;
    PageArray& operator=(const PageArray&) = delete;
    ~PageArray() { reset(); }

    T* data() noexcept { return data_; }
    const T* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    T& operator[](std::size_t i) noexcept { return data_[i]; }
    const T& operator[](std::size_t i) const noexcept { return data_[i]; }
    std::span<T> span() noexcept { return {data_, size_}; }
    std::span<const T> span() const noexcept { return {data_, size_}; }

    /// Gives the whole pages of elements [lo, hi) back to the system: they read as zeros after.
    void release(std::size_t lo, std::size_t hi) noexcept {
        if (lo < hi && hi <= size_) release_pages(data_ + lo, (hi - lo) * sizeof(T));
    }
    /// Unmaps everything: an empty array.
    void reset() noexcept {
        if (data_ != nullptr) ::munmap(data_, bytes_);
        data_ = nullptr;
        size_ = bytes_ = 0;
    }

  private:
    T* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t bytes_ = 0;
};

}  // namespace rotor
