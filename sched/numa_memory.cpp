#include "sched/numa_memory.h"

#include <numa.h>
#include <numaif.h>
#include <unistd.h>

#include <cstdint>
#include <new>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {
namespace {
constexpr std::size_t kAlignment = 64;
}

bool numa_supported() noexcept { return numa_available() >= 0; }

std::optional<int> numa_node_of(const void* addr) noexcept {
    if (!numa_supported() || addr == nullptr) return std::nullopt;
    const auto page = reinterpret_cast<std::uintptr_t>(addr) & ~(page_size() - 1);
    void* pages[1] = {reinterpret_cast<void*>(page)};
    int status[1] = {-1};
    // move_pages with nodes == nullptr only queries: status is the node or -errno (-ENOENT for a
    // page not yet backed).
    if (move_pages(0, 1, pages, nullptr, status, 0) != 0) return std::nullopt;
    if (status[0] < 0) return std::nullopt;
    return status[0];
}

std::size_t page_size() noexcept {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : 4096;
}

namespace detail {

NumaBlock numa_allocate(std::size_t bytes, int node) {
    NumaBlock block;
    block.bytes = bytes;
    if (bytes == 0) return block;
    if (numa_supported()) {
        if (node > numa_max_node()) {
            throw ConfigError("numa_node", "node " + std::to_string(node) +
                                               " does not exist (highest is " +
                                               std::to_string(numa_max_node()) + ")");
        }
        block.ptr = node >= 0 ? numa_alloc_onnode(bytes, node) : numa_alloc_local(bytes);
        if (block.ptr == nullptr) {
            throw SystemError("numa_alloc_onnode: cannot allocate " + std::to_string(bytes) +
                              " bytes on node " + std::to_string(node));
        }
        block.numa = true;
        return block;
    }
    block.ptr = ::operator new (bytes, std::align_val_t{kAlignment}, std::nothrow);
    if (block.ptr == nullptr) {
        throw SystemError("cannot allocate " + std::to_string(bytes) + " bytes");
    }
    return block;
}

void numa_release(NumaBlock& block) noexcept {
    if (block.ptr == nullptr) return;
    if (block.numa) {
        numa_free(block.ptr, block.bytes);
    } else {
        ::operator delete (block.ptr, std::align_val_t{kAlignment});
    }
    block = {};
}

}  // namespace detail
}  // namespace rotor::sched
