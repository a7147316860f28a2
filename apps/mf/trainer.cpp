#include "apps/mf/trainer.h"

#include <algorithm>
#include <climits>
#include <cmath>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "core/base/error.h"

namespace rotor::mf {

std::string_view solver_name(Solver s) {
    switch (s) {
        case Solver::kCcd:
            return "ccd";
        case Solver::kSgd:
            return "sgd";
        case Solver::kAls:
            return "als";
    }
    return "?";
}

Solver parse_solver(std::string_view name) {
    if (name == "ccd") return Solver::kCcd;
    if (name == "sgd") return Solver::kSgd;
    if (name == "als") return Solver::kAls;
    throw ConfigError("--solver", fmt::format("'{}' is not a solver (ccd, sgd or als)", name));
}

CcdParams TrainOptions::ccd() const {
    CcdParams p;
    p.objective = objective;
    p.inner = inner;
    return p;
}

SgdParams TrainOptions::sgd() const {
    SgdParams p;
    p.objective = objective;
    p.eta = eta;
    return p;
}

IalsParams TrainOptions::ials() const {
    IalsParams p;
    p.lambda = objective.lambda;
    p.alpha = alpha;
    p.cg_steps = cg_steps;
    return p;
}

void TrainOptions::validate(int ranks) const {
    if (ranks < 1) throw ConfigError("ranks", "at least one rank is needed");
    if (rank == 0 || rank > kMaxRank)
        throw ConfigError("--rank", fmt::format("must be in 1..{}, got {}", kMaxRank, rank));
    if (iterations == 0) throw ConfigError("--iterations", "must be at least 1");
    if (blocks < 0) throw ConfigError("--blocks", "must be positive (0: the default)");
    if (blocks > 4096) throw ConfigError("--blocks", "at most 4096 per side");
    if (implicit != (solver == Solver::kAls)) {
        throw ConfigError("--solver", implicit ? "--implicit is solved by als only"
                                               : "als solves the implicit-feedback objective: "
                                                 "add --implicit");
    }
    if (solver == Solver::kCcd) {
        ccd().validate();
    } else if (solver == Solver::kSgd) {
        sgd().validate();
    } else {
        ials().validate();
        if (objective.bias || objective.form != LambdaForm::kPlain)
            throw ConfigError("--implicit", "has no biases and a plain lambda");
        if (ranking_k == 0) throw ConfigError("--ranking", "must be at least 1");
    }
    if (timer) timer_params.validate();
}

TestRatings TestRatings::from(const Ratings& test) {
    TestRatings t;
    t.users.reserve(test.nnz());
    t.items.reserve(test.nnz());
    t.values.reserve(test.nnz());
    for (UserId u = 0; u < test.num_users(); ++u) {
        const auto items = test.items_of(u);
        const auto values = test.values_of_user(u);
        for (std::size_t k = 0; k < items.size(); ++k) {
            t.users.push_back(u);
            t.items.push_back(items[k]);
            t.values.push_back(values[k]);
        }
    }
    return t;
}

train::Record Trainer::iterate_span(std::uint32_t sweeps,
                                    const std::function<void(train::Record&)>& on_sweep) {
    for (std::uint32_t s = 1;; ++s) {
        train::Record r = iterate();
        if (s >= sweeps) return r;
        if (on_sweep) on_sweep(r);
    }
}

std::unique_ptr<Trainer> make_trainer(const TrainerInputs& in) {
    in.options.validate(in.comm.size());
    switch (in.options.solver) {
        case Solver::kCcd:
            return make_ccd_trainer(in);
        case Solver::kSgd:
            return make_sgd_trainer(in);
        case Solver::kAls:
            return make_als_trainer(in);
    }
    return nullptr;
}

namespace {
constexpr std::uint64_t kProcessBytes = std::uint64_t{12} << 20;
}  // namespace

std::uint64_t estimate_memory(const Ratings& train, const TrainOptions& options, int ranks,
                              int threads) {
    const auto p = static_cast<std::uint64_t>(std::max(ranks, 1));
    const auto t = static_cast<std::uint64_t>(std::max(threads, 1));
    const std::uint64_t n = train.num_users();
    const std::uint64_t m = train.num_items();
    const std::uint64_t k = options.rank;
    const std::uint64_t nnz = train.nnz();
    // The program, its libraries and the runtime's threads (10.5 MiB measured on a tiny input).
    std::uint64_t bytes = kProcessBytes;
    // Reading (every rank reads the whole matrix): the triples (12 bytes a rating) while
    // Ratings::from_triples sorts them into the CSR (8 bytes a rating), offsets and counts; the
    // CSR in the place of the triples when a file is grouped by user (12 in all).
    const std::uint64_t read_peak = train.build_peak_bytes();
    // Its rows of W and its H rows (ccd: all of H, replicated; sgd: its slices), biases and
    // per-row state; on evaluation a gathered H, and rank 0's gathered model at the end.
    const std::uint64_t rows = 4 * k * (n / p + 1) + 4 * k * m + 16 * (n + m);
    const std::uint64_t gathered = 4 * k * m + 4 * k * (n + m);
    if (options.solver == Solver::kAls) {
        // The matrix and its item-major copy (8 bytes a rating, 8 an item); W and H whole on
        // every rank; G; each worker's batch buffers; the evaluation's terms (8 bytes a user)
        // and rankings (32); rank 0's model and, under MPI, the allgather's message and buffer.
        const std::uint64_t factors = 4 * k * (n + m);
        const std::uint64_t held = train.memory_bytes() + 8 * nnz + 8 * (m + 1) + factors +
                                   4 * k * k + t * 16 * 4 * k * 4 + 40 * (n / p + 1);
        bytes += std::max(read_peak, held) + factors + (p > 1 ? 8 * k * std::max(n, m) : 0);
    } else if (options.solver == Solver::kCcd) {
        // The matrix, the rank's users' ratings (a CSR copy: 8 bytes a rating and 8 a row);
        // residuals (4 bytes a rating); u and each worker's rebased offsets (12 bytes a row); v
        // twice and a column of ones (12 bytes a column); each worker's exact column sums and the
        // pulled totals (48 bytes a column each); across ranks, a pull's narrow limbs and the
        // reduce-scatter's buffer (32 bytes a column each, 64 a column of the rank's block),
        // the rank's block and its pulled totals (32 + 48), the pulled values and the
        // allgather's buffer (8). A pull that goes wide (a column sum of 2^38 or more: a run
        // that diverges) adds 64 bytes a column more and its buffers, outside the plan.
        const std::uint64_t held = train.memory_bytes() + 8 * (nnz / p + 1) + 8 * (n / p + 1) +
                                   4 * (nnz / p + 1) + 12 * (n / p + t) + 12 * m +
                                   48 * m * (t + 1) + (p > 1 ? 72 * m + 144 * (m / p + 1) : 0);
        bytes += std::max(read_peak, held) + rows + gathered;
        // Rank 0's gather beside the model under MPI: its own rows encoded and every rank's
        // received (one process copies its rows straight into the model).
        if (p > 1) bytes += 4 * k * (n / p + 1) + 4 * k * n;
    } else {
        // The larger of three phases: reading (no factors yet); building the trainer: the blocks
        // (8 bytes a rating of the rank) fill in the place of the matrix, whose pages go behind
        // the fill (one rank: items and values, which the blocks hold; under MPI the values,
        // while the CLI keeps the items for the model: 4 bytes a rating and 8 a user), with a
        // page of slack a block and the release's step, the trainer's maps (20 bytes a user, 28
        // an item) and W; training: the blocks, the factors and on evaluation a gathered H;
        // one rank at the end: each user's items, by local row and then by user, in the place
        // of the blocks, then the gathered model beside the items; under MPI the seen items
        // throughout, two slices in flight, the gathered model.
        const std::uint64_t blocks = 8 * (nnz / p + 1);
        const std::uint64_t maps = 20 * n + 28 * m;
        // The grid's side: --blocks, else at most 16 (--deterministic) or ⌈√2·T⌉, per slice.
        const std::uint64_t side =
            (options.blocks > 0 ? static_cast<std::uint64_t>(options.blocks)
                                : std::max<std::uint64_t>(16, (3 * t + 1) / 2)) *
            (p > 1 ? 2 * p : 1);
        const std::uint64_t slack = std::min((std::uint64_t{4} << 20) + 4096 * side * side, blocks);
        const std::uint64_t seen = 4 * nnz + 8 * (n + 1);
        const std::uint64_t build = train.memory_bytes() + slack + maps + rows;
        const std::uint64_t eval_h = 4 * k * m + 12 * m;
        const std::uint64_t after =
            p > 1 ? blocks + seen + rows + maps + gathered + 2 * 4 * k * (m / p + 1)
                  : maps + rows +
                        std::max({blocks + eval_h, blocks + 16 * (n + 1),
                                  seen + 4 * k * (n + m) + 12 * (n + m)});
        bytes += std::max({read_peak, build, after});
    }
    return bytes;
}

train::RecordSchema record_schema(bool has_test, bool implicit) {
    train::RecordSchema s;
    s.count_key = "ratings_processed";
    s.rate_key = "ratings_per_s";
    s.rate_unit = "ratings/s";
    if (implicit) {
        s.headline_key = has_test ? "test_ndcg_at_k" : "objective";
        s.headline_label = has_test ? "test NDCG@k" : "objective";
        return s;
    }
    s.headline_key = has_test ? "test_rmse" : "train_rmse";
    s.headline_label = has_test ? "test RMSE" : "train RMSE";
    return s;
}

void keep_messages_in_heap(std::size_t bytes) {
#ifdef __GLIBC__
    const std::size_t b =
        std::min<std::size_t>(std::size_t{1} << 30, bytes + (std::size_t{1} << 16));
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(b));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::min<std::size_t>(4 * b, INT_MAX)));
#else
    (void)bytes;
#endif
}

std::pair<std::vector<std::uint64_t>, std::vector<ItemId>> Trainer::release_seen_items() {
    ROTOR_ASSERT(false, "release_seen_items() of a trainer without gives_seen_items()");
    return {};
}

}  // namespace rotor::mf
