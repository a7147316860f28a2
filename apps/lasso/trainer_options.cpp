// The trainer's options, names and free helpers (apps/lasso/trainer.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "apps/lasso/trainer.h"
#include "core/base/error.h"
#include "core/base/huge_pages.h"

namespace rotor::lasso {

std::string_view schedule_name(Schedule s) {
    switch (s) {
        case Schedule::kCyclic:
            return "cyclic";
        case Schedule::kShotgun:
            return "shotgun";
        case Schedule::kStrads:
            return "strads";
    }
    return "?";
}

Schedule parse_schedule(std::string_view name) {
    if (name == "cyclic") return Schedule::kCyclic;
    if (name == "shotgun") return Schedule::kShotgun;
    if (name == "strads") return Schedule::kStrads;
    throw ConfigError("--schedule", "must be cyclic, shotgun or strads");
}

StopRule parse_stop_rule(std::string_view name) {
    if (name == "gap") return StopRule::kGap;
    if (name == "kkt") return StopRule::kKkt;
    throw ConfigError("--stop", "must be gap or kkt");
}

std::string_view stop_rule_name(StopRule s) { return s == StopRule::kGap ? "gap" : "kkt"; }

void TrainOptions::validate() const {
    if (!(lambda >= 0) || !std::isfinite(lambda))
        throw ConfigError("--lambda", "must be a finite number >= 0");
    if (!(tol >= 0)) throw ConfigError("--tol", "must be >= 0");
    if (max_iterations == 0) throw ConfigError("--max-iterations", "must be at least 1");
    if (schedule == Schedule::kStrads) strads.validate();
    if (schedule == Schedule::kShotgun && strads.parallel == 0)
        throw ConfigError("--parallel", "must be at least 1");
}

std::vector<std::uint32_t> split_by_entries(std::span<const std::uint64_t> row_offsets, int parts) {
    ROTOR_ASSERT(parts >= 1 && !row_offsets.empty(), "split_by_entries: no parts or no offsets");
    const auto rows = static_cast<std::uint32_t>(row_offsets.size() - 1);
    const auto cost = [&](std::uint32_t i) { return row_offsets[i] + i; };  // entries + 1 per row
    const std::uint64_t total = cost(rows);
    std::vector<std::uint32_t> begin(static_cast<std::size_t>(parts) + 1, rows);
    begin[0] = 0;
    for (int q = 1; q < parts; ++q) {
        const auto qq = static_cast<std::uint64_t>(q), pp = static_cast<std::uint64_t>(parts);
        const std::uint64_t target = total / pp * qq + total % pp * qq / pp;
        std::uint32_t lo = begin[q - 1], hi = rows;  // first i with cost(i) >= target
        while (lo < hi) {
            const std::uint32_t mid = lo + (hi - lo) / 2;
            if (cost(mid) < target) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        begin[q] = lo;
    }
    return begin;
}

ThreadChoice choose_threads(std::uint64_t rank_entries, std::uint32_t features,
                            const TrainOptions& options, int cores, double busy) {
    cores = std::max(cores, 1);
    const std::uint64_t per_round =
        (options.schedule == Schedule::kCyclic ? 1 : std::uint64_t{options.strads.parallel}) *
        (rank_entries / std::max<std::uint64_t>(features, 1));
    if (cores == 1) return {1, "one core"};
    if (per_round < kThreadRoundEntries)
        return {1, fmt::format("a round reads ~{} stored entries, under the {} a second thread "
                               "needs to pay, --threads N overrides",
                               per_round, kThreadRoundEntries)};
    const double free = cores - std::max(busy, 0.0);
    const int threads = std::clamp(static_cast<int>(std::lround(free)), 1, cores);
    if (threads == 1)
        return {1, fmt::format("a round reads ~{} stored entries, but the load average is "
                               "{:.1f} on {} cores, --threads N overrides",
                               per_round, busy, cores)};
    return {threads, fmt::format("a round reads ~{} stored entries; {} of {} cores free", per_round,
                                 threads, cores)};
}

Reducer comm_reducer(comm::Communicator& comm) {
    if (comm.size() == 1) return Reducer::single();
    Reducer r;
    r.sum = [&comm](std::span<core::ExactSum> sums) {
        std::vector<std::int64_t> limbs(sums.size() * core::ExactSum::kLimbs);
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const auto l = sums[i].to_limbs();
            std::copy(l.begin(), l.end(), limbs.begin() + static_cast<std::ptrdiff_t>(i * 4));
        }
        comm.allreduce_sum(limbs);
        for (std::size_t i = 0; i < sums.size(); ++i) {
            std::array<std::int64_t, core::ExactSum::kLimbs> l{};
            std::copy_n(limbs.begin() + static_cast<std::ptrdiff_t>(i * 4), 4, l.begin());
            sums[i] = core::ExactSum::from_limbs(l);
        }
    };
    r.max = [&comm](std::span<double> values) { comm.allreduce_max(values); };
    return r;
}

train::RecordSchema record_schema() {
    train::RecordSchema s;
    s.count_key = "updates";
    s.rate_key = "updates_per_s";
    s.rate_unit = "updates/s";
    s.headline_key = "objective";
    s.headline_label = "objective";
    return s;
}

std::uint64_t estimate_memory(std::uint64_t entries, std::uint64_t rows, std::uint32_t features,
                              bool whole_read, int ranks, int threads, bool checkpoints,
                              const TrainOptions& options) {
    const std::uint64_t p = features;
    const std::uint64_t whole = 12 * entries + 16 * rows;
    const auto r = static_cast<std::uint64_t>(ranks), t = static_cast<std::uint64_t>(threads);
    const std::uint64_t slice = whole / r + 1;
    const std::uint64_t reading = (whole_read ? whole : 0) + slice;
    const std::uint64_t per_feature = 176 + 48 * t + (ranks > 1 ? 64 : 0);
    const std::uint64_t state = checkpoints ? 2 * 8 * (rows + 3 * p) : 0;
    const std::uint64_t tiles =
        row_tiles(static_cast<std::uint32_t>(rows / (r * t) + 1), entries / (r * t),
                  static_cast<std::uint32_t>(p), options.tile_rows, options.tile_column_entries);
    const std::uint64_t per_tile = 8 * (p + 1) + 2 * kHugePageBytes;
    // shotgun and strads keep the state of the last accepted evaluation to roll back to: the
    // rank's residuals, b and the last changes.
    const std::uint64_t saved =
        options.schedule == Schedule::kCyclic ? 0 : 8 * (rows / r + 1) + 16 * p;
    return std::max(reading, 2 * slice) + per_feature * p + state + saved +
           t * (tiles - 1) * per_tile;
}

}  // namespace rotor::lasso
