// Memory placed on a NUMA node. With libnuma available (numa_available() >= 0) a NumaBuffer's
// pages are bound to the node asked for (numa_alloc_onnode, i.e. mmap + mbind); otherwise it is
// plain 64-byte-aligned heap memory and first touch decides where the pages land. Either way the
// owning worker should call first_touch() from its own (pinned) thread before others read it.
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>

namespace rotor::sched {

/// True when libnuma works on this machine (numa_available() >= 0).
bool numa_supported() noexcept;
/// The OS index of the NUMA node holding the page at `addr`, or nullopt when the page is not
/// yet backed (never touched) or the kernel cannot tell (no NUMA support, move_pages refused).
std::optional<int> numa_node_of(const void* addr) noexcept;
/// The system page size in bytes.
std::size_t page_size() noexcept;

namespace detail {
/// Raw storage for NumaBuffer. `numa` records which allocator must free it.
struct NumaBlock {
    void* ptr = nullptr;
    std::size_t bytes = 0;
    bool numa = false;
};
/// Allocates `bytes` on OS NUMA node `node` (node < 0: no preference). Throws ConfigError
/// (key "numa_node") for a node that does not exist, SystemError when memory runs out.
NumaBlock numa_allocate(std::size_t bytes, int node);
void numa_release(NumaBlock& block) noexcept;
}  // namespace detail

/// Whether a NumaBuffer's memory is written at construction.
enum class Touch {
    kDeferred,  ///< untouched; contents unspecified until first_touch() or a write
    kNow,       ///< zero-filled by the constructing thread
};

/// `size` elements of a trivial type T on one NUMA node. Owns its memory; move-only. Not
/// thread-safe as an object; its elements may be shared like any array.
template <class T>
class NumaBuffer {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "NumaBuffer holds trivial types only");

  public:
    NumaBuffer() = default;
    /// `size` elements on OS NUMA node `node` (< 0: no preference). See detail::numa_allocate.
    NumaBuffer(std::size_t size, int node, Touch touch = Touch::kDeferred)
        : block_(detail::numa_allocate(size * sizeof(T), node)), size_(size), node_(node) {
        if (touch == Touch::kNow && block_.ptr != nullptr) std::memset(block_.ptr, 0, block_.bytes);
    }
    NumaBuffer(NumaBuffer&& other) noexcept
        : block_(std::exchange(other.block_, {})),
          size_(std::exchange(other.size_, 0)),
          node_(other.node_) {}
    NumaBuffer& operator=(NumaBuffer&& other) noexcept {
        if (this != &other) {
            detail::numa_release(block_);
            block_ = std::exchange(other.block_, {});
            size_ = std::exchange(other.size_, 0);
            node_ = other.node_;
        }
        return *this;
    }
    NumaBuffer(const NumaBuffer&) = delete;
    NumaBuffer& operator=(const NumaBuffer&) = delete;
    ~NumaBuffer() { detail::numa_release(block_); }

    T* data() noexcept { return static_cast<T*>(block_.ptr); }
    const T* data() const noexcept { return static_cast<const T*>(block_.ptr); }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    T& operator[](std::size_t i) noexcept { return data()[i]; }
    const T& operator[](std::size_t i) const noexcept { return data()[i]; }
    std::span<T> span() noexcept { return {data(), size_}; }
    std::span<const T> span() const noexcept { return {data(), size_}; }
    /// The node asked for (< 0: none).
    int node() const noexcept { return node_; }
    /// True when libnuma allocated the memory, so its pages are bound to node().
    bool bound() const noexcept { return block_.numa; }

  private:
    detail::NumaBlock block_;
    std::size_t size_ = 0;
    int node_ = -1;
};

/// Zero-fills `data`; call it from the worker thread that owns the memory, so that with
/// first-touch placement its pages land on that worker's NUMA node.
template <class T>
void first_touch(std::span<T> data) noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!data.empty()) std::memset(static_cast<void*>(data.data()), 0, data.size_bytes());
}

}  // namespace rotor::sched
