// An allocator for large arrays read at random: allocations of kHugeAllocationBytes or more are
// aligned to 2 MiB, rounded up to whole 2 MiB pages and advised to use transparent huge pages
// before the container first touches them (Linux's THP "madvise" mode, the default of Debian's
// kernels, gives huge pages only to advised memory). A column read at a random place in a 100 MB
// array is then a cache miss but no longer also a TLB miss and a page walk (docs/lasso.md,
// "Rounds in address order; huge pages"). Smaller allocations are plain malloc. At most 2 MiB more
// per large allocation; advice only, so a kernel without THP leaves small pages and nothing else
// changes.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include <sys/mman.h>

namespace rotor {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugeAllocationBytes = std::size_t{4} << 20;

/// Memory for n bytes, huge-page advised when n >= kHugeAllocationBytes; free with std::free.
inline void* allocate_maybe_huge(std::size_t bytes) {
    void* p = nullptr;
    if (bytes >= kHugeAllocationBytes) {
        const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
        p = std::aligned_alloc(kHugePageBytes, rounded);
#ifdef MADV_HUGEPAGE
        if (p != nullptr) ::madvise(p, rounded, MADV_HUGEPAGE);
#endif
    } else {
        p = std::malloc(bytes == 0 ? 1 : bytes);
    }
    if (p == nullptr) throw std::bad_alloc();
    return p;
}

/// A std::allocator-compatible allocator over allocate_maybe_huge. Stateless.
template <class T>
struct HugePageAllocator {
    using value_type = T;
    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: converting, as std's
    T* allocate(std::size_t n) {
        if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
        return static_cast<T*>(allocate_maybe_huge(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t) noexcept { std::free(p); }
    template <class U>
    bool operator==(const HugePageAllocator<U>&) const noexcept {
        return true;
    }
};

/// A vector whose large buffers sit on huge pages.
template <class T>
using HugeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace rotor
