#include "train/memory_plan.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "comm/collectives.h"
#include "comm/communicator.h"
#include "core/base/checked.h"
#include "core/base/error.h"

namespace rotor::train {

std::uint64_t parse_bytes(const std::string& text, std::string_view key) {
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    double unit = 1;
    if (used > 0 && used + 1 == text.size()) {
        switch (std::toupper(static_cast<unsigned char>(text.back()))) {
            case 'K':
                unit = 1024.0;
                break;
            case 'M':
                unit = 1024.0 * 1024;
                break;
            case 'G':
                unit = 1024.0 * 1024 * 1024;
                break;
            case 'T':
                unit = 1024.0 * 1024 * 1024 * 1024;
                break;
            default:
                used = 0;
        }
        if (used) ++used;
    }
    if (used == 0 || used != text.size() || !(v > 0) || !std::isfinite(v))
        throw ConfigError(std::string(key),
                          fmt::format("'{}' is not a size (e.g. 512M, 16G)", text));
    const double bytes = v * unit;
    if (!(bytes <= static_cast<double>(kMaxBytes)))
        throw ConfigError(std::string(key), fmt::format("'{}' is more than 1 EiB", text));
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(bytes));
}

std::string human_bytes(std::uint64_t b) { return core::human_bytes(b); }

std::uint64_t physical_memory() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * page : 0;
}

int ranks_on_this_host(comm::Communicator& world) {
    char name[256] = {};
    const bool known = ::gethostname(name, sizeof name - 1) == 0;
    const std::string mine = known ? std::string(name) : std::string();
    const std::vector<std::string> all = comm::allgather(world, mine, "host name");
    if (!known) return world.size();  // unknown: assume every rank is here
    int same = 0;
    for (const std::string& other : all) same += other == mine;
    return std::max(same, 1);
}

std::uint64_t memory_limit(const std::string& flag, int host_ranks) {
    if (!flag.empty()) return parse_bytes(flag, "--max-memory");
    return physical_memory() / 10 * 9 / static_cast<std::uint64_t>(std::max(host_ranks, 1));
}

core::ReadLimits corpus_limits(const std::string& flag, int host_ranks) {
    const std::uint64_t limit = memory_limit(flag, host_ranks);
    if (!flag.empty())
        return core::ReadLimits::for_memory(limit, "--max-memory",
                                            fmt::format("--max-memory {}", flag));
    return core::ReadLimits::for_memory(
        limit, "",
        fmt::format("{} ({}90% of this machine's memory; see --max-memory)", human_bytes(limit),
                    host_ranks > 1 ? "this rank's share of " : ""));
}

void check_memory(std::uint64_t need, std::uint64_t limit, std::string_view advice, bool per_rank) {
    if (limit == 0 || need <= limit) return;
    throw ConfigError("--max-memory", fmt::format("{} about {} but the limit is {}; {}",
                                                  per_rank ? "each rank needs" : "this run needs",
                                                  human_bytes(need), human_bytes(limit), advice));
}

}  // namespace rotor::train
