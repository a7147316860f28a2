// make_als_trainer: implicit-feedback ALS (core/mf/ials.h) on 1..N ranks x T threads, the same
// model for any ranks x threads (each row's solve reads only its own ratings, its own x and the
// other side's factors; G is computed whole, in a fixed order, on every rank).
//
// Layout: W and H are replicated on every rank. Users are cut into P contiguous ranges by
// ratings, items likewise over an item-major copy of the matrix (CSC, 8 bytes a rating); a
// rank solves its range and allgathers the rows after each half-step. Inside a rank a half-step
// is three team steps: G's upper part (rows cut by gram_row_split), its mirror, and the solves
// (chunks of rows taken from a shared counter: a row's result does not depend on who solves it).
#include <algorithm>
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/mf/ccd_parallel.h"
#include "apps/mf/trainer.h"
#include "comm/collectives.h"
#include "comm/wire.h"
#include "core/base/error.h"
#include "core/mf/ials.h"
#include "core/mf/ranking.h"
#include "sched/team.h"
#include "sched/worker_clock.h"

namespace rotor::mf {
namespace {

constexpr std::uint64_t kInitStreamW = 0x49414c57;  // "IALW"
constexpr std::uint64_t kInitStreamH = 0x49414c48;  // "IALH"
/// implicit's start: both sides uniform in [0, 0.01).
constexpr float kInitHigh = 0.01f;
/// Rows a worker takes from the shared counter at a time (a multiple of kIalsBatch).
constexpr std::uint32_t kChunkRows = 4 * kIalsBatch;

/// An owning CSR (or CSC) matrix.
struct Compressed {
    std::vector<std::uint64_t> offsets;
    std::vector<std::uint32_t> ids;
    std::vector<float> values;
    SparseView view() const { return {offsets, ids, values}; }
};

/// The item-major copy of the ratings: items' users in increasing order.
Compressed by_item(const Ratings& a) {
    Compressed t;
    t.offsets.assign(std::size_t{a.num_items()} + 1, 0);
    for (ItemId j = 0; j < a.num_items(); ++j) t.offsets[j + 1] = t.offsets[j] + a.item_degree(j);
    t.ids.resize(a.nnz());
    t.values.resize(a.nnz());
    std::vector<std::uint64_t> next(t.offsets.begin(), t.offsets.end() - 1);
    const auto offsets = a.user_offsets();
    const auto items = a.user_items();
    const auto values = a.user_values();
    for (UserId u = 0; u < a.num_users(); ++u)
        for (std::uint64_t e = offsets[u]; e < offsets[u + 1]; ++e) {
            const std::uint64_t at = next[items[e]]++;
            t.ids[at] = u;
            t.values[at] = values[e];
        }
    return t;
}

class AlsTrainer final : public Trainer {
  public:
    explicit AlsTrainer(const TrainerInputs& in);

    std::uint32_t iterations_done() const override { return iterations_done_; }
    train::Record iterate() override;
    void evaluate_record(train::Record& r) override;
    Model gather_model() override;
    TrainerState gather_state() override;
    void restore(const TrainerState& state) override;

  private:
    /// One side's solve: x's rows [begin, end) against y, ratings `a` by x's rows.
    void half_step(const SparseView& a, const Factors& y, Factors& x, std::uint32_t begin,
                   std::uint32_t end);
    /// G = gram(y, λ) on the team.
    void team_gram(const Factors& y);
    /// body(begin, end) over [begin, end) in chunks, on the team; the clocks count it.
    void for_chunks(std::uint32_t begin, std::uint32_t end,
                    const std::function<void(std::uint32_t, std::uint32_t, int)>& body);
    /// Every rank's rows of f (rank q's range [begin[q], begin[q + 1])) on every rank.
    void allgather_rows(Factors& f, const std::vector<std::uint32_t>& begin, const char* what);
    void take_test(const TestRatings& test);

    const Ratings& train_;
    const TrainOptions& options_;
    comm::Communicator& comm_;
    IalsParams params_;
    SparseView by_user_;
    Compressed by_item_;
    std::vector<std::uint32_t> user_begin_, item_begin_;  ///< ranks + 1
    Factors w_, h_;
    std::vector<float> g_;
    std::vector<IalsScratch> scratch_;  ///< per share
    sched::Team team_;
    sched::WorkerClocks clocks_;
    std::uint32_t iterations_done_ = 0;
    bool has_test_ = false;
    Compressed test_;  ///< held-out items by user (known users and items), sorted
};

AlsTrainer::AlsTrainer(const TrainerInputs& in)
    : Trainer(in.comm.rank(), in.comm.size()),
      train_(in.train),
      options_(in.options),
      comm_(in.comm),
      params_(in.options.ials()),
      by_user_{in.train.user_offsets(), in.train.user_items(), in.train.user_values()},
      by_item_(by_item(in.train)),
      w_(in.train.num_users(), in.options.rank),
      h_(in.train.num_items(), in.options.rank),
      g_(std::size_t{in.options.rank} * in.options.rank),
      scratch_(static_cast<std::size_t>(in.runtime.threads())),
      team_(in.runtime),
      clocks_(in.runtime.threads()) {
    user_begin_ = split_rows_by_ratings(by_user_.offsets, comm_.size());
    item_begin_ = split_rows_by_ratings(by_item_.offsets, comm_.size());
    w_.init_uniform(options_.seed, kInitStreamW, 0.0f, kInitHigh);
    h_.init_uniform(options_.seed, kInitStreamH, 0.0f, kInitHigh);
    if (in.test != nullptr) take_test(*in.test);
}

void AlsTrainer::take_test(const TestRatings& test) {
    has_test_ = true;
    const std::uint32_t n = train_.num_users(), m = train_.num_items();
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (std::uint64_t t = 0; t < test.size(); ++t)
        if (test.users[t] < n && test.items[t] < m)
            pairs.emplace_back(test.users[t], test.items[t]);
    std::sort(pairs.begin(), pairs.end());
    test_.offsets.assign(std::size_t{n} + 1, 0);
    for (const auto& [u, j] : pairs) {
        ++test_.offsets[u + 1];
        test_.ids.push_back(j);
    }
    for (std::uint32_t u = 0; u < n; ++u) test_.offsets[u + 1] += test_.offsets[u];
}

void AlsTrainer::for_chunks(std::uint32_t begin, std::uint32_t end,
                            const std::function<void(std::uint32_t, std::uint32_t, int)>& body) {
    std::atomic<std::uint64_t> next{begin};
    const sched::TeamRun run = team_.run([&](int share) {
        const sched::PhaseTimer timer(clocks_.clock(share), sched::Phase::kCompute);
        for (;;) {
            const std::uint64_t b = next.fetch_add(kChunkRows);
            if (b >= end) return;
            body(static_cast<std::uint32_t>(b),
                 static_cast<std::uint32_t>(std::min<std::uint64_t>(end, b + kChunkRows)), share);
        }
    });
    for (int w = 0; w < team_.size(); ++w)
        clocks_.clock(w).add(sched::Phase::kWait, run.wait_s[static_cast<std::size_t>(w)]);
}

void AlsTrainer::team_gram(const Factors& y) {
    const std::vector<std::uint32_t> rows = gram_row_split(options_.rank, team_.size());
    const sched::TeamRun run = team_.run_steps(2, [&](std::size_t step, int share) {
        const sched::PhaseTimer timer(clocks_.clock(share), sched::Phase::kCompute);
        const auto q = static_cast<std::size_t>(share);
        if (step == 0) {
            gram_upper(y, params_.lambda, rows[q], rows[q + 1], g_);
        } else {
            gram_mirror(options_.rank, rows[q], rows[q + 1], g_);
        }
    });
    for (int w = 0; w < team_.size(); ++w)
        clocks_.clock(w).add(sched::Phase::kWait, run.wait_s[static_cast<std::size_t>(w)]);
}

void AlsTrainer::half_step(const SparseView& a, const Factors& y, Factors& x, std::uint32_t begin,
                           std::uint32_t end) {
    team_gram(y);
    for_chunks(begin, end, [&](std::uint32_t b, std::uint32_t e, int share) {
        ials_solve(a, y, g_, params_, x, b, e, scratch_[static_cast<std::size_t>(share)]);
    });
}

void AlsTrainer::allgather_rows(Factors& f, const std::vector<std::uint32_t>& begin,
                                const char* what) {
    if (comm_.size() == 1) return;
    const auto q0 = static_cast<std::size_t>(rank());
    const std::size_t k = f.k();
    const std::span<const float> mine(f.row(begin[q0]).data(),
                                      std::size_t{begin[q0 + 1] - begin[q0]} * k);
    comm::WireWriter w;
    w.put_length(mine.size());
    w.put_array(mine);
    comm::allgather_messages(comm_, w.bytes(), what, [&](int q, comm::WireReader& r) {
        const auto qq = static_cast<std::size_t>(q);
        const std::size_t n = std::size_t{begin[qq + 1] - begin[qq]} * k;
        if (r.get_length(sizeof(float)) != n)
            r.fail(fmt::format("{} of rank {}: wrong size", what, q));
        if (q == rank()) {
            std::vector<float> skip(n);
            r.get_array(std::span<float>(skip));
            return;
        }
        r.get_array(std::span<float>(f.row(begin[qq]).data(), n));
    });
}

train::Record AlsTrainer::iterate() {
    clocks_.begin_iteration();
    const auto q = static_cast<std::size_t>(rank());
    half_step(by_user_, h_, w_, user_begin_[q], user_begin_[q + 1]);
    allgather_rows(w_, user_begin_, "als W rows");
    half_step(by_item_.view(), w_, h_, item_begin_[q], item_begin_[q + 1]);
    allgather_rows(h_, item_begin_, "als H rows");
    train::Record r;
    r.iter = ++iterations_done_;
    r.set_times(clocks_.end_iteration());
    r.processed = train_.nnz();
    r.finish(train_.nnz());
    return r;
}

void AlsTrainer::evaluate_record(train::Record& r) {
    const auto q = static_cast<std::size_t>(rank());
    const std::uint32_t begin = user_begin_[q], end = user_begin_[q + 1];
    // f = Σ_u x_uᵀ G x_u + Σ_Ω [...] + λ‖H‖² with G = gram(H, λ): per-user terms, added exactly
    // (the same bits for any ranks x threads).
    team_gram(h_);
    std::vector<double> terms(end - begin);
    std::vector<UserRanking> ranked(has_test_ ? end - begin : 0);
    std::vector<std::uint8_t> has_heldout(ranked.size(), 0);
    for_chunks(begin, end, [&](std::uint32_t b, std::uint32_t e, int) {
        ials_row_terms(by_user_, h_, g_, params_, w_, b, e,
                       std::span<double>(terms).subspan(b - begin, e - b));
        if (!has_test_) return;
        RankScratch scratch;
        for (std::uint32_t u = b; u < e; ++u) {
            const auto held = std::span<const std::uint32_t>(test_.ids).subspan(
                test_.offsets[u], test_.offsets[u + 1] - test_.offsets[u]);
            if (held.empty()) continue;
            const auto seen = by_user_.ids.subspan(by_user_.offsets[u], by_user_.count(u));
            ranked[u - begin] = rank_user(w_.row(u), h_, seen, held, options_.ranking_k, scratch);
            has_heldout[u - begin] = 1;
        }
    });
    core::ExactSum f;
    for (const double t : terms) f.add(t);
    if (rank() == 0)
        for (const float v : h_.values()) f.add(params_.lambda * static_cast<double>(v) * v);
    RankingSums sums;
    for (std::size_t i = 0; i < ranked.size(); ++i)
        if (has_heldout[i] != 0) sums.add(ranked[i]);
    std::vector<std::int64_t> limbs = sums.to_limbs();
    const auto fl = f.to_limbs();
    limbs.insert(limbs.end(), fl.begin(), fl.end());
    comm_.allreduce_sum(limbs);
    const std::size_t n = limbs.size() - core::ExactSum::kLimbs;
    std::array<std::int64_t, core::ExactSum::kLimbs> total{};
    std::copy_n(limbs.begin() + static_cast<std::ptrdiff_t>(n), total.size(), total.begin());
    r.set("objective", core::ExactSum::from_limbs(total).value());
    if (has_test_) {
        const RankingSums all = RankingSums::from_limbs(std::span(limbs).first(n));
        r.set("test_precision_at_k", all.mean_precision());
        r.set("test_map_at_k", all.mean_ap());
        r.set("test_ndcg_at_k", all.mean_ndcg());
    }
}

Model AlsTrainer::gather_model() {
    if (rank() != 0) return {};  // every rank holds W and H whole
    Model m;
    m.params = options_.objective;
    m.solver = "als";
    m.alpha = options_.alpha;
    m.iterations = iterations_done_;
    m.seed = options_.seed;
    m.w = w_;
    m.h = h_;
    return m;
}

TrainerState AlsTrainer::gather_state() {
    TrainerState s;
    s.model = gather_model();
    if (rank() == 0) s.iterations_done = iterations_done_;
    return s;
}

void AlsTrainer::restore(const TrainerState& state) {
    const Model& m = state.model;
    if (m.w.rows() != w_.rows() || m.w.k() != w_.k() || m.h.rows() != h_.rows() ||
        m.h.k() != h_.k())
        throw InputError("checkpoint",
                         fmt::format("als state does not fit: W {}x{} and H {}x{}, expected {}x{} "
                                     "and {}x{}",
                                     m.w.rows(), m.w.k(), m.h.rows(), m.h.k(), w_.rows(), w_.k(),
                                     h_.rows(), h_.k()));
    w_ = m.w;
    h_ = m.h;
    iterations_done_ = state.iterations_done;
}

}  // namespace

std::unique_ptr<Trainer> make_als_trainer(const TrainerInputs& in) {
    return std::make_unique<AlsTrainer>(in);
}

}  // namespace rotor::mf
