#include "apps/rica/trainer.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "comm/agreed.h"
#include "core/base/error.h"
#include "core/base/exact_sum.h"
#include "core/base/timer.h"
#include "core/rica/augmented.h"

namespace rotor::rica {
namespace {

constexpr std::size_t kLimbs = core::ExactSum::kLimbs;

std::size_t key_count(std::size_t p) { return p * (p + 1) / 2 + 1; }

std::uint64_t stride_of(std::size_t p) {
    return std::numeric_limits<std::uint64_t>::max() / key_count(p);
}

void put_limbs(const core::ExactSum& s, double* out) {
    for (const std::int64_t l : s.to_limbs()) *out++ = static_cast<double>(l);
}

core::ExactSum from_values(std::span<const double> v) {
    std::array<std::int64_t, kLimbs> limbs{};
    for (std::size_t i = 0; i < kLimbs; ++i) limbs[i] = static_cast<std::int64_t>(v[i]);
    return core::ExactSum::from_limbs(limbs);
}

/// A server's sums: those of the iterations not complete, and the last complete one's.
struct ServerState {
    std::uint64_t stride = 1;
    std::map<std::uint64_t, std::vector<core::ExactSum>> pending;
    std::vector<core::ExactSum> current;
};

comm::KvServerHandler server_handler(ServerState& s, std::size_t keys) {
    return {
        .on_push =
            [&s, keys](std::uint64_t t, int, std::span<const std::uint64_t> k,
                       std::span<const double> values) {
                auto& sums = s.pending[t];
                sums.resize(keys);
                for (std::size_t i = 0; i < k.size(); ++i)
                    sums[k[i] / s.stride].add(from_values(values.subspan(i * kLimbs, kLimbs)));
            },
        .on_complete =
            [&s](std::uint64_t t) {
                const auto it = s.pending.find(t);
                if (it == s.pending.end()) return;
                s.current = std::move(it->second);
                s.pending.erase(it);
            },
        .on_pull =
            [&s](std::span<const std::uint64_t> k, std::vector<double>& out) {
                for (const std::uint64_t key : k) {
                    const std::size_t i = key / s.stride;
                    out.push_back(i < s.current.size() ? s.current[i].value() : 0.0);
                }
            },
    };
}

}  // namespace

std::pair<std::size_t, std::size_t> worker_blocks(std::size_t components, std::size_t block_rows,
                                                  std::size_t worker, std::size_t workers) {
    const std::size_t blocks = (components + block_rows - 1) / block_rows;
    return {blocks * worker / workers, blocks * (worker + 1) / workers};
}

std::vector<std::uint64_t> rica_keys(std::size_t p) {
    std::vector<std::uint64_t> keys(key_count(p));
    const std::uint64_t stride = stride_of(p);
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * stride;
    return keys;
}

std::vector<double> s_of(std::span<const double> pulled, std::size_t p) {
    std::vector<double> s(p * p);
    std::size_t e = 0;
    for (std::size_t k = 0; k < p; ++k)
        for (std::size_t l = k; l < p; ++l, ++e) s[k * p + l] = s[l * p + k] = pulled[e];
    return s;
}

RowWorker::RowWorker(const Dense& data, const std::vector<double>& c, const Spectrum& spectrum,
                     const TrainerOptions& options, std::size_t first_block, std::size_t last_block,
                     std::vector<double> w, std::vector<double> metric)
    : data_(data),
      c_(c),
      spectrum_(spectrum),
      options_(options),
      w_(std::move(w)),
      rho_(options.rho),
      last_objective_(std::numeric_limits<double>::infinity()) {
    const std::size_t p = data.p, first_row = first_block * options.block_rows;
    for (std::size_t b = first_block; b <= last_block; ++b)
        block_first_.push_back(std::min(b * options.block_rows, options.components) - first_row);
    const std::size_t blocks = last_block - first_block;
    const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(blocks)));
    scratch_.resize(static_cast<std::size_t>(threads));
    if (threads > 1) {
        runtime_ = std::make_unique<sched::Runtime>(threads, sched::PinMode::kAuto);
        team_ = std::make_unique<sched::Team>(*runtime_);
        loop_ = [this](std::int64_t begin, std::int64_t end,
                       const std::function<void(std::int64_t, std::int64_t)>& body) {
            parallel(begin, end, body);
        };
    } else {
        loop_ = core::serial_loop;
    }
    if (options.solver == Solver::kAdmm) {
        admm_metric_ = metric.empty() ? std::vector<double>(rows(), 1.0) : std::move(metric);
        split_ = std::make_unique<AdmmSplit>(data_, rows());
        split_->reset(w_, loop_);
        contribute();
        return;
    }
    states_.resize(blocks);
    l1_.assign(blocks, 0.0);
    const auto init = [&](int share) {
        for (std::size_t b = static_cast<std::size_t>(share); b < blocks;
             b += static_cast<std::size_t>(threads)) {
            const std::size_t r0 = block_first_[b], rows = block_first_[b + 1] - r0;
            l1_[b] = init_block(data_, std::span<const double>(w_).subspan(r0 * p, rows * p), rows,
                                states_[b], scratch_[static_cast<std::size_t>(share)]);
            if (!metric.empty()) std::copy_n(metric.begin() + r0, rows, states_[b].h.begin());
        }
    };
    run_shares(init);
    contribute();
}

void RowWorker::parallel(std::int64_t begin, std::int64_t end,
                         const std::function<void(std::int64_t, std::int64_t)>& body) {
    if (end - begin <= 1) {
        core::serial_loop(begin, end, body);
        return;
    }
    std::atomic<std::int64_t> next{begin};
    team_->run([&](int) {
        for (std::int64_t i = next.fetch_add(1); i < end; i = next.fetch_add(1)) body(i, i + 1);
    });
}

void RowWorker::run_shares(const std::function<void(int)>& body) {
    if (team_) {
        team_->run(body);
    } else {
        body(0);
    }
}

RowWorker::~RowWorker() = default;

std::vector<double> RowWorker::metric() const {
    if (split_) return admm_metric_;
    std::vector<double> h;
    for (const BlockState& s : states_) h.insert(h.end(), s.h.begin(), s.h.end());
    return h;
}

void RowWorker::contribute() {
    const std::size_t p = data_.p;
    std::vector<core::ExactSum> sums(key_count(p));
    // A Gram matrix's upper triangle and an L1 total into the keys' sums.
    const auto add = [&](const std::vector<double>& g, double l1) {
        std::size_t e = 0;
        for (std::size_t k = 0; k < p; ++k)
            for (std::size_t l = k; l < p; ++l, ++e) sums[e].add(g[k * p + l]);
        sums[e].add(l1);
    };
    if (split_) {  // every row is here: S = WᵀW in one product, by slabs on the team
        add(outer_gram(w_, rows(), p, loop_), split_->l1());
    } else {
        for (std::size_t b = 0; b + 1 < block_first_.size(); ++b) {
            const std::size_t r0 = block_first_[b], rows = block_first_[b + 1] - r0;
            add(outer_gram(std::span<const double>(w_).subspan(r0 * p, rows * p), rows, p), l1_[b]);
        }
    }
    push_.resize(sums.size() * kLimbs);
    for (std::size_t e = 0; e < sums.size(); ++e) put_limbs(sums[e], push_.data() + e * kLimbs);
}

void RowWorker::step_admm(std::span<const double> pulled) {
    const std::size_t p = data_.p;
    // A rise of F (nonconvex ADMM with too small a ρ oscillates) doubles ρ; the scaled dual
    // U = Y/ρ is halved with it, so the unscaled Y carries over.
    const double objective =
        smooth_terms(s_of(pulled, p), c_, p, false, loop_).value + options_.lambda * pulled.back();
    if (objective > last_objective_) {
        rho_ *= 2;
        split_->rescale(0.5, loop_);
    }
    last_objective_ = objective;
    augmented_w_step(w_, rows(), p, c_, split_->target(), rho_, options_.inner_iterations, loop_);
    split_->update(w_, options_.lambda / rho_, loop_);
}

void RowWorker::step(std::span<const double> pulled) {
    if (options_.solver == Solver::kAdmm) {
        step_admm(pulled);
        contribute();
        return;
    }
    const std::size_t p = data_.p;
    const std::vector<double> s = s_of(pulled, p);
    const SmoothTerms smooth = smooth_terms(s, c_, p, true);
    StepOptions o;
    o.lambda = options_.lambda;
    o.eta = options_.eta;
    o.admm_iterations = options_.admm_iterations;
    o.lipschitz = lipschitz_bound(largest_eigenvalue(s, p), spectrum_.largest);
    const std::size_t blocks = states_.size(), shares = scratch_.size();
    const auto work = [&](int share) {
        for (std::size_t b = static_cast<std::size_t>(share); b < blocks; b += shares) {
            const std::size_t r0 = block_first_[b], rows = block_first_[b + 1] - r0;
            l1_[b] = prox_gradient_step(data_, spectrum_, smooth.m, o,
                                        std::span<double>(w_).subspan(r0 * p, rows * p), states_[b],
                                        scratch_[static_cast<std::size_t>(share)]);
        }
    };
    run_shares(work);
    contribute();
}

SegmentResult run_segment(comm::Communicator& comm, const comm::KvLayout& layout, RowWorker* worker,
                          std::size_t p, std::uint64_t steps, const TrainerOptions& o) {
    ServerState state;
    state.stride = stride_of(p);
    const std::vector<std::uint64_t> keys = rica_keys(p);
    comm::KvOptions kv;
    kv.delay = o.delay;
    kv.push_width = kLimbs;
    kv.pull_width = 1;
    kv.timeout_s = o.timeout_s;
    comm::KvNode node(comm, layout, kv, server_handler(state, keys.size()));
    ROTOR_ASSERT(node.is_worker() == (worker != nullptr), "rows exactly on workers");
    SegmentResult result;
    node.run([&] {
        if (worker != nullptr) {
            const double slow = comm.rank() == o.straggler_rank ? o.straggler_factor : 1.0;
            std::deque<std::pair<std::uint64_t, std::uint64_t>> pulls;  // (t, pull id)
            const auto take = [&] {
                result.pulled = node.wait_pull(pulls.front().second);
                pulls.pop_front();
            };
            for (std::uint64_t t = 0; t <= steps; ++t) {
                node.begin_iteration(t);
                while (!pulls.empty() && node.pull_ready(pulls.front().second)) take();
                if (t > 0) {
                    Stopwatch compute;
                    worker->step(result.pulled);
                    if (slow > 1)
                        std::this_thread::sleep_for(
                            std::chrono::duration<double>((slow - 1) * compute.seconds()));
                }
                node.push(t, keys, worker->contribution());
                pulls.emplace_back(t, node.pull(t, keys));
                // The first pull is always waited for: no step without an S.
                while (!pulls.empty() &&
                       (t == 0 || (o.delay != comm::kInfiniteDelay &&
                                   pulls.front().first + static_cast<std::uint64_t>(o.delay) <= t)))
                    take();
                node.end_iteration(t);
            }
            while (!pulls.empty()) take();
        }
    });
    result.stats = node.stats();
    return result;
}

std::uint64_t estimate_memory(std::size_t n, std::size_t p, std::size_t rows,
                              const TrainerOptions& options) {
    const auto threads = static_cast<std::uint64_t>(options.threads);
    const std::uint64_t state =
        options.solver == Solver::kAdmm
            ? AdmmSplit::bytes(n, p, rows, options.threads)
            : 8 * (2 * std::uint64_t{n} * rows + std::uint64_t{n} * options.block_rows * threads);
    return 8 * (std::uint64_t{n} * p + 3 * std::uint64_t{p} * p) + state;
}

train::RecordSchema record_schema() {
    train::RecordSchema schema;
    schema.count_key = "observations";
    schema.rate_key = "observations_per_s";
    schema.rate_unit = "observations/s";
    return schema;
}

train::Record evaluation_record(std::uint64_t done, std::uint64_t steps, double seconds,
                                double time_s, std::size_t n, double objective,
                                double reconstruction, double l1, double previous) {
    train::Record rec;
    rec.iter = static_cast<std::uint32_t>(done);
    rec.time_s = time_s;
    rec.iteration_s = seconds / static_cast<double>(steps);
    rec.processed = n;
    rec.per_s = static_cast<double>(n) / rec.iteration_s;
    rec.set("objective", objective);
    rec.set("reconstruction", reconstruction);
    rec.set("l1", l1);
    rec.set("relative_change", (previous - objective) / std::fabs(objective));
    return rec;
}

std::string progress_line(const train::Record& r, std::uint64_t iterations) {
    return fmt::format(
        "rotor: iteration {}/{}: objective {:.10g} (reconstruction {:.6g}, l1 {:.6g}), {:.2f} s\n",
        r.iter, iterations, r.get("objective").value_or(NAN), r.get("reconstruction").value_or(NAN),
        r.get("l1").value_or(NAN), r.time_s);
}

}  // namespace rotor::rica
