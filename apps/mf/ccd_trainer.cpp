// make_ccd_trainer: CCD++ (core/mf/ccd.h) on 1..N ranks x T threads, bitwise the same model for
// any ranks x threads (apps/mf/ccd_parallel.h runs one rank's iteration).
//
// Layout: users are split over ranks by assign_users; a rank keeps its Shard, its rows of W
// (initialised from the global user ids, so the start does not depend on the split), its b and
// the residuals of its ratings; H, c and |Ω_j| are replicated. μ is the exact sum of every
// training rating over nnz, the same on every rank.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/mf/ccd_parallel.h"
#include "apps/mf/shard.h"
#include "apps/mf/trainer.h"
#include "comm/collectives.h"
#include "comm/wire.h"
#include "core/base/error.h"

namespace rotor::mf {
namespace {

/// The stream of W's initial values (Factors::init_uniform).
constexpr std::uint64_t kCcdInitStream = 0x43434457;  // "CCDW"
/// CCD++'s start as LIBPMF has it: W uniform in [0, 0.1), H = 0.
constexpr float kInitHigh = 0.1f;
/// A test user the model never saw (predict counts it as a zero factor and bias).
constexpr std::uint32_t kUnseen = std::numeric_limits<std::uint32_t>::max();

class CcdTrainer final : public Trainer {
  public:
    explicit CcdTrainer(const TrainerInputs& in);

    std::uint32_t iterations_done() const override { return iterations_done_; }
    train::Record iterate() override;
    void evaluate_record(train::Record& r) override;
    Model gather_model() override;
    TrainerState gather_state() override;
    void restore(const TrainerState& state) override;

  private:
    void init_state(sched::Runtime& runtime);
    void take_test(const TestRatings& test);
    void check_state(const TrainerState& state) const;

    const Ratings& train_;
    const TrainOptions& options_;
    comm::Communicator& comm_;
    bool bias_;
    std::vector<std::vector<std::uint32_t>> users_of_rank_;
    Shard shard_;
    std::vector<std::uint64_t> row_counts_;  ///< |Ω_i| of the rank's rows
    double mu_ = 0;
    CcdRankState state_;
    std::unique_ptr<ParallelCcd> engine_;
    std::uint32_t iterations_done_ = 0;
    bool has_test_ = false;
    std::vector<std::uint32_t> test_rows_;  ///< local row, or kUnseen
    std::vector<std::uint32_t> test_items_;
    std::vector<float> test_values_;
};

CcdTrainer::CcdTrainer(const TrainerInputs& in)
    : Trainer(in.comm.rank(), in.comm.size()),
      train_(in.train),
      options_(in.options),
      comm_(in.comm),
      bias_(in.options.objective.bias) {
    users_of_rank_ = assign_users(train_, comm_.size(), options_.seed);
    shard_ = Shard::of(train_, users_of_rank_[static_cast<std::size_t>(rank())]);
    row_counts_ = row_counts(shard_.view());
    init_state(in.runtime);
    if (in.test != nullptr) take_test(*in.test);
}

void CcdTrainer::init_state(sched::Runtime& runtime) {
    const std::uint32_t k = options_.rank;
    const std::uint32_t m = train_.num_items();
    state_.ratings = shard_.view();
    state_.w = Factors(shard_.rows(), k);
    state_.w.init_uniform(options_.seed, kCcdInitStream, 0.0f, kInitHigh, shard_.users);
    state_.h = Factors(m, k);
    if (bias_) {
        state_.row_bias.assign(shard_.rows(), 0.0f);
        state_.col_bias.assign(m, 0.0f);
        // core::ExactSum: the same μ whichever rank sums, in whatever order.
        if (train_.nnz() > 0) {
            mu_ = rating_sum(train_.user_values()).value() / static_cast<double>(train_.nnz());
        }
    }
    state_.col_counts.resize(m);
    for (ItemId j = 0; j < m; ++j) state_.col_counts[j] = train_.item_degree(j);
    state_.residuals.resize(shard_.nnz());
    compute_residuals(state_.ratings, state_.w, state_.row_bias, state_.h, state_.col_bias, mu_,
                      state_.residuals);
    engine_ = std::make_unique<ParallelCcd>(state_, options_.ccd(), runtime, comm_);
    // Open MPI's reduce-scatter and allgather allocate their temporaries every pull.
    if (comm_.size() > 1) keep_messages_in_heap(engine_->largest_message_bytes());
}

void CcdTrainer::take_test(const TestRatings& test) {
    has_test_ = true;
    std::vector<std::uint32_t> local(train_.num_users(), kUnseen);
    for (std::uint32_t r = 0; r < shard_.rows(); ++r) local[shard_.users[r]] = r;
    for (std::uint64_t t = 0; t < test.size(); ++t) {
        const std::uint32_t u = test.users[t];
        const bool unseen = u >= train_.num_users();
        if (unseen ? rank() != 0 : local[u] == kUnseen) continue;  // another rank's user
        test_rows_.push_back(unseen ? kUnseen : local[u]);
        test_items_.push_back(test.items[t]);
        test_values_.push_back(test.values[t]);
    }
}

train::Record CcdTrainer::iterate() {
    const sched::IterationTimes times = engine_->iterate();
    train::Record r;
    r.iter = ++iterations_done_;
    r.set_times(times);
    if (comm_.size() > 1) r.set("comm_s", engine_->comm_seconds());
    // processed counts ratings: every training rating (of every rank) once per iteration, as an
    // SGD epoch does, although CCD++ reads each 2 + 2·inner times per factor (6 for the biases).
    r.processed = train_.nnz();
    r.finish(train_.nnz());
    return r;
}

void CcdTrainer::evaluate_record(train::Record& r) {
    const ObjectiveParams& p = options_.objective;
    ErrorStats test;
    if (has_test_) {
        const ModelView view{mu_, &state_.w, &state_.h, state_.row_bias, state_.col_bias};
        test = evaluate(test_rows_, test_items_, test_values_, view);
    }
    // The training error and the penalties exactly (the same bits at any ranks x threads, like
    // the model); H's penalty once (rank 0): H is replicated.
    core::ExactSum exact[3] = {squared_error_exact(state_.residuals),
                               penalty_exact(state_.w, state_.row_bias, row_counts_, p),
                               rank() == 0
                                   ? penalty_exact(state_.h, state_.col_bias, state_.col_counts, p)
                                   : core::ExactSum{}};
    std::vector<std::int64_t> limbs;
    for (const core::ExactSum& e : exact) {
        const auto l = e.to_limbs();
        limbs.insert(limbs.end(), l.begin(), l.end());
    }
    comm_.allreduce_sum(limbs);
    double total[3];
    for (std::size_t q = 0; q < 3; ++q) {
        std::array<std::int64_t, core::ExactSum::kLimbs> l{};
        std::copy_n(limbs.begin() + static_cast<std::ptrdiff_t>(q * core::ExactSum::kLimbs),
                    core::ExactSum::kLimbs, l.begin());
        total[q] = core::ExactSum::from_limbs(l).value();
    }
    std::vector<double> sums{total[0],         total[1],          total[2],
                             test.squared_sum, test.absolute_sum, static_cast<double>(test.count)};
    std::vector<double> test_sums{test.squared_sum, test.absolute_sum,
                                  static_cast<double>(test.count)};
    comm_.allreduce_sum(test_sums);
    sums[3] = test_sums[0];
    sums[4] = test_sums[1];
    sums[5] = test_sums[2];
    r.set("train_rmse", rmse(sums[0], train_.nnz()));
    if (has_test_) {
        const auto n = static_cast<std::uint64_t>(sums[5]);
        r.set("test_rmse", rmse(sums[3], n));
        r.set("test_mae", n > 0 ? sums[4] / static_cast<double>(n) : 0.0);
    }
    r.set("objective", sums[0] + sums[1] + sums[2]);
}

Model CcdTrainer::gather_model() {
    const std::uint32_t k = options_.rank;
    Model m;
    if (rank() == 0) {
        m.params = options_.objective;
        m.solver = "ccd";
        m.iterations = iterations_done_;
        m.seed = options_.seed;
        m.mu = mu_;
        m.w = Factors(train_.num_users(), k);
        if (bias_) m.row_bias.assign(train_.num_users(), 0.0f);
    }
    // Rows go straight into place: one copy of W on one rank, W's bytes once more on rank 0 of
    // several (the memory plan counts 8 K N bytes beside the model).
    const auto place = [&](const std::vector<std::uint32_t>& users, std::size_t r,
                           std::span<const float> row, float bias) {
        std::copy(row.begin(), row.end(), m.w.row(users[r]).begin());
        if (bias_) m.row_bias[users[r]] = bias;
    };
    if (comm_.size() == 1) {
        for (std::size_t r = 0; r < users_of_rank_[0].size(); ++r) {
            const auto i = static_cast<std::uint32_t>(r);
            place(users_of_rank_[0], r, state_.w.row(i), bias_ ? state_.row_bias[r] : 0.0f);
        }
    } else {
        comm::WireWriter mine;
        mine.put_length(state_.w.values().size());
        mine.put_array(std::span<const float>(state_.w.values()));
        mine.put(state_.row_bias);
        comm::gather_messages(comm_, mine.bytes(), 0, "ccd W rows",
                              [&](int q, comm::WireReader& r) {
                                  const std::vector<std::uint32_t>& users =
                                      users_of_rank_[static_cast<std::size_t>(q)];
                                  if (r.get_length(sizeof(float)) != std::size_t{k} * users.size())
                                      r.fail(fmt::format("W rows of rank {}: wrong size", q));
                                  for (std::size_t i = 0; i < users.size(); ++i)
                                      r.get_array(m.w.row(users[i]));
                                  const auto b = r.get<std::vector<float>>();
                                  if (b.size() != (bias_ ? users.size() : 0))
                                      r.fail(fmt::format("user biases of rank {}: wrong size", q));
                                  for (std::size_t i = 0; bias_ && i < users.size(); ++i)
                                      m.row_bias[users[i]] = b[i];
                              });
    }
    if (rank() != 0) return {};
    m.h = state_.h;
    m.col_bias = state_.col_bias;
    return m;
}

TrainerState CcdTrainer::gather_state() {
    TrainerState s;
    s.model = gather_model();
    const auto res = comm::gather(comm_, state_.residuals, 0, "ccd residuals");
    if (rank() != 0) return {};
    s.iterations_done = iterations_done_;
    s.residuals.resize(train_.nnz());
    const auto offsets = train_.user_offsets();
    for (std::size_t q = 0; q < users_of_rank_.size(); ++q) {
        std::uint64_t e = 0;
        for (const std::uint32_t u : users_of_rank_[q]) {
            const std::uint64_t n = offsets[u + 1] - offsets[u];
            if (e + n > res[q].size()) {
                throw CommError(rank(), fmt::format("ccd residuals of rank {}: too short", q));
            }
            std::copy_n(res[q].begin() + static_cast<std::ptrdiff_t>(e), n,
                        s.residuals.begin() + static_cast<std::ptrdiff_t>(offsets[u]));
            e += n;
        }
    }
    return s;
}

void CcdTrainer::check_state(const TrainerState& state) const {
    const Model& m = state.model;
    const std::uint32_t n = train_.num_users(), items = train_.num_items(), k = options_.rank;
    const auto fail = [](const std::string& what) {
        throw InputError("checkpoint", "ccd state does not fit: " + what);
    };
    if (m.w.rows() != n || m.w.k() != k || m.h.rows() != items || m.h.k() != k) {
        fail(fmt::format("W {}x{} and H {}x{}, expected {}x{} and {}x{}", m.w.rows(), m.w.k(),
                         m.h.rows(), m.h.k(), n, k, items, k));
    }
    if (m.params.bias != bias_ || m.row_bias.size() != (bias_ ? n : 0) ||
        m.col_bias.size() != (bias_ ? items : 0)) {
        fail("the biases differ from the options");
    }
    if (state.residuals.size() != train_.nnz()) {
        fail(fmt::format("{} residuals for {} ratings", state.residuals.size(), train_.nnz()));
    }
    if (bias_ && m.mu != mu_) fail("the global mean differs (another training file?)");
}

void CcdTrainer::restore(const TrainerState& state) {
    check_state(state);
    const Model& m = state.model;
    const auto offsets = train_.user_offsets();
    std::uint64_t e = 0;
    for (std::uint32_t r = 0; r < shard_.rows(); ++r) {
        const std::uint32_t u = shard_.users[r];
        std::copy_n(m.w.row(u).begin(), options_.rank, state_.w.row(r).begin());
        if (bias_) state_.row_bias[r] = m.row_bias[u];
        const std::uint64_t n = offsets[u + 1] - offsets[u];
        std::copy_n(state.residuals.begin() + static_cast<std::ptrdiff_t>(offsets[u]), n,
                    state_.residuals.begin() + static_cast<std::ptrdiff_t>(e));
        e += n;
    }
    std::copy(m.h.values().begin(), m.h.values().end(), state_.h.values().begin());
    std::copy(m.col_bias.begin(), m.col_bias.end(), state_.col_bias.begin());
    iterations_done_ = state.iterations_done;
}

}  // namespace

std::unique_ptr<Trainer> make_ccd_trainer(const TrainerInputs& in) {
    return std::make_unique<CcdTrainer>(in);
}

}  // namespace rotor::mf
