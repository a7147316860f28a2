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
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/base/exact_sum.h"
#include "core/base/timer.h"
#include "core/rica/augmented.h"
#include "sched/rebalance.h"

namespace rotor::rica {
namespace {

constexpr std::size_t kLimbs = core::ExactSum::kLimbs;

/// Row blocks move once the busiest worker holds more than 1 + this of its share of the rows;
/// no worker's share drops below kMinShare of an even one (sched::rebalance_targets).
constexpr double kRebalanceTolerance = 0.25;
constexpr double kMinShare = 0.1;

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
    start(first_block, last_block);
    const std::size_t p = data.p, blocks = last_block - first_block, threads = scratch_.size();
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
        for (std::size_t b = static_cast<std::size_t>(share); b < blocks; b += threads) {
            const std::size_t r0 = block_first_[b], rows = block_first_[b + 1] - r0;
            l1_[b] = init_block(data_, std::span<const double>(w_).subspan(r0 * p, rows * p), rows,
                                states_[b], scratch_[static_cast<std::size_t>(share)]);
            if (!metric.empty()) std::copy_n(metric.begin() + r0, rows, states_[b].h.begin());
        }
    };
    run_shares(init);
    contribute();
}

RowWorker::RowWorker(const Dense& data, const std::vector<double>& c, const Spectrum& spectrum,
                     const TrainerOptions& options, std::size_t first_block,
                     std::vector<RowBlock> blocks)
    : data_(data), c_(c), spectrum_(spectrum), options_(options), rho_(options.rho) {
    ROTOR_ASSERT(options.solver == Solver::kProx, "row blocks move only with the prox solver");
    start(first_block, first_block + blocks.size());
    for (RowBlock& b : blocks) {
        w_.insert(w_.end(), b.w.begin(), b.w.end());
        states_.push_back(std::move(b.state));
        l1_.push_back(b.l1);
    }
    ROTOR_ASSERT(w_.size() == block_first_.back() * data.p, "moved blocks of the wrong size");
    contribute();
}

void RowWorker::start(std::size_t first_block, std::size_t last_block) {
    const std::size_t first_row = first_block * options_.block_rows;
    for (std::size_t b = first_block; b <= last_block; ++b)
        block_first_.push_back(std::min(b * options_.block_rows, options_.components) - first_row);
    const std::size_t blocks = last_block - first_block;
    const int threads = std::max(1, std::min<int>(options_.threads, static_cast<int>(blocks)));
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
}

std::vector<RowBlock> RowWorker::release() {
    ROTOR_ASSERT(!split_, "row blocks move only with the prox solver");
    const std::size_t p = data_.p;
    std::vector<RowBlock> out(states_.size());
    for (std::size_t b = 0; b < out.size(); ++b) {
        out[b].w.assign(w_.begin() + static_cast<std::ptrdiff_t>(block_first_[b] * p),
                        w_.begin() + static_cast<std::ptrdiff_t>(block_first_[b + 1] * p));
        out[b].state = std::move(states_[b]);
        out[b].l1 = l1_[b];
    }
    w_.clear();
    states_.clear();
    l1_.clear();
    return out;
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
                    result.compute_s += compute.seconds();
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

std::vector<std::size_t> plan_blocks(std::span<const std::size_t> bounds,
                                     std::span<const double> speeds, std::size_t components,
                                     std::size_t block_rows, double tolerance,
                                     std::uint64_t max_rows) {
    std::vector<std::size_t> same(bounds.begin(), bounds.end());
    const std::size_t workers = bounds.size() - 1, blocks = bounds.back();
    ROTOR_ASSERT(speeds.size() == workers, "one speed per worker");
    if (workers < 2 || blocks < workers) return same;
    for (const double v : speeds)
        if (!(v > 0) || !std::isfinite(v)) return same;
    const auto row_of = [&](std::size_t b) { return std::min(b * block_rows, components); };
    std::vector<std::uint64_t> rows(workers);
    for (std::size_t q = 0; q < workers; ++q) rows[q] = row_of(bounds[q + 1]) - row_of(bounds[q]);
    if (sched::rebalance_imbalance(rows, speeds, kMinShare, max_rows) <= 1 + tolerance) return same;
    const std::vector<double> target = sched::rebalance_targets(rows, speeds, kMinShare, max_rows);
    std::vector<std::size_t> next(workers + 1, 0);
    next[workers] = blocks;
    double end = 0;  // the rows of workers 0..q by their targets
    for (std::size_t q = 0; q + 1 < workers; ++q) {
        end += target[q];
        const auto b =
            static_cast<std::size_t>(std::llround(end / static_cast<double>(block_rows)));
        next[q + 1] = std::clamp(b, next[q] + 1, blocks - (workers - 1 - q));
    }
    return next;
}

namespace {

/// Tag of the messages of moving row blocks (after a segment's kv node is gone).
constexpr int kBlocksTag = comm::kKvControlTag + 10;

std::vector<std::byte> write_blocks(std::span<const RowBlock> blocks) {
    comm::WireWriter out;
    out.put(static_cast<std::uint64_t>(blocks.size()));
    for (const RowBlock& b : blocks) {
        out.put(static_cast<std::uint64_t>(b.state.rows));
        out.put(b.w);
        out.put(b.state.h);
        out.put(b.state.rho);
        out.put(b.state.z);
        out.put(b.state.u);
        out.put(b.l1);
    }
    return out.take();
}

/// Blocks of a message written by write_blocks, each checked against the data's n and p.
std::vector<RowBlock> read_blocks(std::span<const std::byte> bytes, const Dense& data, int from,
                                  int rank) {
    const std::string what = fmt::format("row blocks from rank {}", from);
    comm::WireReader in(bytes, what, rank);
    std::vector<RowBlock> blocks(in.get<std::uint64_t>());
    for (RowBlock& b : blocks) {
        b.state.rows = in.get<std::uint64_t>();
        in.get(b.w);
        in.get(b.state.h);
        in.get(b.state.rho);
        in.get(b.state.z);
        in.get(b.state.u);
        in.get(b.l1);
        const std::size_t r = b.state.rows;
        if (b.w.size() != r * data.p || b.state.h.size() != r || b.state.rho.size() != r ||
            b.state.z.size() != r * data.n || b.state.u.size() != r * data.n)
            throw CommError(rank, what + ": a block's arrays do not match its rows");
    }
    in.finish();
    return blocks;
}

}  // namespace

std::size_t rebalance_blocks(comm::Communicator& comm, const comm::KvLayout& layout,
                             std::unique_ptr<RowWorker>& worker, std::vector<std::size_t>& bounds,
                             std::uint64_t steps, double compute_s, const Dense& data,
                             const std::vector<double>& c, const Spectrum& spectrum,
                             const TrainerOptions& options, std::uint64_t max_rows) {
    const std::size_t workers = layout.workers.size();
    const auto it = std::find(layout.workers.begin(), layout.workers.end(), comm.rank());
    const std::size_t me = static_cast<std::size_t>(it - layout.workers.begin());
    // Every worker's speed, summed into its own slot (exact: one term is not zero).
    std::vector<double> speeds(workers, 0.0);
    if (worker && compute_s > 0)
        speeds[me] = static_cast<double>(worker->rows() * steps) / compute_s;
    comm.allreduce_sum(speeds);
    const std::vector<std::size_t> next = plan_blocks(
        bounds, speeds, options.components, options.block_rows, kRebalanceTolerance, max_rows);
    if (next == bounds) return 0;
    const auto owner = [&](const std::vector<std::size_t>& at, std::size_t b) {
        return static_cast<std::size_t>(std::upper_bound(at.begin(), at.end(), b) - at.begin()) - 1;
    };
    std::size_t moved = 0;
    for (std::size_t b = 0; b < bounds.back(); ++b)
        if (owner(bounds, b) != owner(next, b))
            moved +=
                std::min((b + 1) * options.block_rows, options.components) - b * options.block_rows;
    if (worker) {
        const std::size_t first = bounds[me], last = bounds[me + 1];
        const std::size_t new_first = next[me], new_last = next[me + 1];
        std::vector<RowBlock> mine = worker->release();
        worker.reset();
        std::vector<std::vector<std::byte>> out, in(workers);
        std::vector<comm::Request> requests;
        for (std::size_t q = 0; q < workers; ++q) {
            if (q == me) continue;
            // Mine going to q, then q's coming to me: each a contiguous range (maybe empty).
            const std::size_t s0 = std::max(first, next[q]), s1 = std::min(last, next[q + 1]);
            if (s0 < s1) {
                out.push_back(
                    write_blocks(std::span<const RowBlock>(mine).subspan(s0 - first, s1 - s0)));
                requests.push_back(comm.isend(out.back(), layout.workers[q], kBlocksTag));
            }
            const std::size_t r0 = std::max(bounds[q], new_first),
                              r1 = std::min(bounds[q + 1], new_last);
            if (r0 < r1) requests.push_back(comm.irecv(in[q], layout.workers[q], kBlocksTag));
        }
        for (comm::Request& r : requests) comm.wait(r);
        std::vector<RowBlock> blocks;
        for (std::size_t b = new_first; b < new_last;) {
            const std::size_t q = owner(bounds, b);
            if (q == me) {
                blocks.push_back(std::move(mine[b - first]));
                ++b;
                continue;
            }
            std::vector<RowBlock> got = read_blocks(in[q], data, layout.workers[q], comm.rank());
            const std::size_t expect = std::min(bounds[q + 1], new_last) - b;
            if (got.size() != expect)
                throw CommError(comm.rank(),
                                fmt::format("row blocks from rank {}: {} blocks, not {}",
                                            layout.workers[q], got.size(), expect));
            for (RowBlock& g : got) blocks.push_back(std::move(g));
            b += expect;
        }
        worker =
            std::make_unique<RowWorker>(data, c, spectrum, options, new_first, std::move(blocks));
    }
    bounds = next;
    return moved;
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
