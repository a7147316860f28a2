#include "apps/logreg/worker.h"

#include <algorithm>

#include "core/base/error.h"

namespace rotor::logreg {
std::vector<std::uint32_t> row_cuts(const Shard& part, int threads) {
    ROTOR_ASSERT(threads >= 1, "row_cuts: threads >= 1");
    const std::uint32_t n = part.examples();
    if (threads == 1) return {0, n};
    // Nonzeros of each row (transient, 4 bytes an example: less than the 32 of the block
    // scratch the worker sizes after it), then the cuts walking their running sum.
    std::vector<std::uint32_t> per_row(n, 0);
    for (const std::uint32_t i : part.rows()) ++per_row[i];
    const std::uint64_t total = part.rows().size();
    const auto tn = static_cast<std::uint64_t>(threads);
    std::vector<std::uint32_t> cuts{0};
    std::uint64_t before = 0;  // nonzeros of rows < i
    std::uint32_t i = 0;
    for (std::uint64_t j = 1; j < tn; ++j) {
        // The first row whose nonzeros before it reach j/T of all (rows cut evenly when empty).
        if (total == 0) {
            cuts.push_back(static_cast<std::uint32_t>(std::uint64_t{n} * j / tn));
            continue;
        }
        while (i < n && before < total * j / tn) before += per_row[i++];
        cuts.push_back(i);
    }
    cuts.push_back(n);
    return cuts;
}

WorkerThreads::WorkerThreads(int threads, sched::PinMode pin)
    : runtime(std::make_unique<sched::Runtime>(threads, pin)),
      team(std::make_unique<sched::Team>(*runtime)) {}

WorkerThreads::~WorkerThreads() = default;

Worker::Worker(Shard& part, const BlockProxOptions& o, int threads, std::span<const double> start,
               KktScreen* screen, std::size_t pull_width, bool exact, sched::PinMode pin,
               WorkerThreads* shared)
    : part_(part),
      options_(o),
      threads_(threads),
      w_(part.keys().size(), 0.0),
      order_(std::max<std::uint32_t>(o.blocks, 1), o.seed),
      g_(static_cast<std::size_t>(std::max(threads, 1))),
      u_(static_cast<std::size_t>(std::max(threads, 1))),
      screen_(screen),
      pull_width_(pull_width),
      exact_(exact) {
    if (threads < 1) throw ConfigError("threads", "must be >= 1");
    ROTOR_ASSERT(start.empty() || start.size() == w_.size(), "w over the part's keys");
    if (!start.empty()) w_.assign(start.begin(), start.end());
    blocks_ = split_blocks(part.keys(), o.blocks, o.seed, o.groups.get());
    index_.resize(blocks_.size());
    slices_.resize(blocks_.size());
    const auto keys = part.keys();
    const std::vector<std::uint32_t> cuts = row_cuts(part, threads);
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
        for (const std::uint64_t k : blocks_[b]) {
            index_[b].push_back(static_cast<std::size_t>(
                std::lower_bound(keys.begin(), keys.end(), k) - keys.begin()));
        }
        for (std::size_t j = 0; j + 1 < cuts.size(); ++j) {
            slices_[b].push_back(column_slices(part, blocks_[b], cuts[j], cuts[j + 1]));
        }
        if (threads > 1) whole_.push_back(column_slices(part, blocks_[b], 0, part.examples()));
    }
    scratch_.reserve(part.examples());
    if (threads > 1) {
        if (shared == nullptr) {
            own_ = std::make_unique<WorkerThreads>(threads, pin);
            shared = own_.get();
        }
        ROTOR_ASSERT(shared->team->size() == threads, "shared threads of another count");
        team_ = shared->team.get();
    }
}

Worker::~Worker() = default;

template <class Fn>
void Worker::on_threads(const Fn& fn) {
    ranges_ = g_.size();
    if (!team_) {
        fn(std::size_t{0});
        return;
    }
    team_->run([&fn](int j) { fn(static_cast<std::size_t>(j)); },
               [&] {
                   ranges_ = 1;
                   fn(kAllRows);
               });
}

const ColumnSlices& Worker::slices(std::uint32_t b, std::size_t j) const {
    return j == kAllRows ? whole_[b] : slices_[b][j];
}

std::uint32_t Worker::prepare_push(std::uint64_t t, std::uint64_t kv_t) {
    const std::uint32_t b = order_.at(t);
    const std::size_t n = blocks_[b].size();
    skip_.clear();
    if (screen_ != nullptr) {
        skip_.resize(n);
        for (std::size_t i = 0; i < n; ++i) skip_[i] = screen_->skips(kv_t, blocks_[b][i]) ? 1 : 0;
    }
    scratch_.next_block();
    return b;
}

void Worker::push_rows(std::uint32_t b, std::size_t j) {
    const std::size_t n = blocks_[b].size();
    const std::size_t at = j == kAllRows ? 0 : j;  // all rows: the first range's sums
    g_[at].assign(n, core::ExactSum{});
    u_[at].assign(n, core::ExactSum{});
    push_slices(part_, slices(b, j), options_.curvature, g_[at], u_[at], scratch_, skip_);
}

void Worker::combine(std::uint32_t b, std::vector<double>& values) const {
    const std::size_t n = blocks_[b].size();
    const std::size_t width = exact_ ? kPushWidth : kFloatPushWidth;
    values.resize(n * width);
    for (std::size_t i = 0; i < n; ++i) {
        core::ExactSum g = g_[0][i], u = u_[0][i];
        for (std::size_t j = 1; j < ranges_; ++j) {
            g.add(g_[j][i]);
            u.add(u_[j][i]);
        }
        double* out = values.data() + i * width;
        if (!exact_) {  // the kv engine rounds them to float32 (KvOptions::push_float32)
            out[0] = g.value();
            out[1] = u.value();
            continue;
        }
        for (const std::int64_t l : g.to_limbs()) *out++ = static_cast<double>(l);
        for (const std::int64_t l : u.to_limbs()) *out++ = static_cast<double>(l);
    }
}

void Worker::take_weights(std::uint32_t b, std::span<const double> pulled) {
    deltas_.resize(blocks_[b].size());
    for (std::size_t i = 0; i < deltas_.size(); ++i) {
        double& w = w_[index_[b][i]];
        const double next = pulled[i * pull_width_];
        deltas_[i] = next - w;
        w = next;
        if (screen_ != nullptr) screen_->observe(blocks_[b][i], next, pulled[i * pull_width_ + 1]);
    }
}

std::uint32_t Worker::push_values(std::uint64_t t, std::vector<double>& values,
                                  std::uint64_t kv_t) {
    const std::uint32_t b = prepare_push(t, kv_t);
    on_threads([&](std::size_t j) { push_rows(b, j); });
    combine(b, values);
    return b;
}

void Worker::apply(std::uint32_t b, std::span<const double> pulled) {
    take_weights(b, pulled);
    on_threads([&](std::size_t j) { apply_slices(part_, slices(b, j), deltas_); });
}

std::uint32_t Worker::apply_and_push(std::uint32_t applied, std::span<const double> pulled,
                                     std::uint64_t t, std::vector<double>& values,
                                     std::uint64_t kv_t) {
    take_weights(applied, pulled);
    const std::uint32_t b = prepare_push(t, kv_t);
    // Thread j's margins are its rows' only: it may push block b on them as soon as it has
    // applied the pulled changes to them, without waiting for the other threads.
    on_threads([&](std::size_t j) {
        apply_slices(part_, slices(applied, j), deltas_);
        push_rows(b, j);
    });
    combine(b, values);
    return b;
}

void Worker::apply_all(std::span<const double> pulled) {
    std::vector<double> deltas(w_.size());
    for (std::size_t i = 0; i < w_.size(); ++i) {
        deltas[i] = pulled[i * pull_width_] - w_[i];
        w_[i] = pulled[i * pull_width_];
    }
    apply_deltas(part_, part_.keys(), deltas, scratch_.columns);
}

}  // namespace rotor::logreg
