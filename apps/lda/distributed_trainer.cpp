#include "apps/lda/distributed_trainer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <iterator>
#include <numeric>

#include <fmt/format.h>

#include "apps/lda/distributed_messages.h"
#include "apps/lda/parallel_sum.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/ring_pipeline.h"
#include "comm/wire.h"
#include "core/base/rng.h"
#include "core/base/timer.h"
#include "core/lda/inference.h"
#include "core/lda/sparse_lda_sampler.h"
#include "sched/block_grid.h"
#include "sched/block_loop.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"
#include "sched/worker_clock.h"

namespace rotor::lda {
namespace {

using detail::kRowStream;

// Seed streams (distinct from the single-node trainer's, which the rank also folds in).
constexpr std::uint64_t kSampleStream = 0x44534d50;  // "DSMP": block b of rank p, iteration t
constexpr std::uint64_t kPickStream = 0x4450434b;    // "DPCK": which free block a worker takes
constexpr std::uint64_t kInitStream = 0x44494e54;    // "DINT": initial topics of rank p
constexpr std::uint64_t kRankStream = 0x4452414e;    // "DRAN": docs across ranks
/// First field of every slice message (u32), then the slice id (u32), then pack_rows' output
/// (a vector of u32).
constexpr std::uint32_t kSliceMagic = 0x534c4943;  // "SLIC"
/// How often the driving thread lets MPI progress a rotation while the workers sample.
constexpr auto kProgressPeriod = std::chrono::microseconds(500);

}  // namespace

// ---------------------------------------------------------------------------------------------
// Options

void DistributedOptions::validate(int ranks) const {
    if (timer) {
        if (!(timer_params.initial_s > 0)) throw ConfigError("--timer-init", "must be > 0 seconds");
        if (!(timer_params.low > 0 && timer_params.low < 1))
            throw ConfigError("--timer-low", "must be in (0, 1)");
        if (!(timer_params.high > timer_params.low && timer_params.high <= 1))
            throw ConfigError("--timer-high", "must be in (--timer-low, 1]");
        timer_params.validate();
    }
    if (straggler_rank < -1 || straggler_rank >= ranks)
        throw ConfigError("--simulate-straggler",
                          fmt::format("rank {} is not in [0, {})", straggler_rank, ranks));
    if (!(straggler_factor >= 1) || !std::isfinite(straggler_factor))
        throw ConfigError("--simulate-straggler", "the slow-down factor must be >= 1");
    if (columns_per_slice < 0) throw ConfigError("columns_per_slice", "must be >= 0");
    if (!(rebalance_tolerance > 0) || !std::isfinite(rebalance_tolerance))
        throw ConfigError("--rebalance-tolerance", "must be > 0");
}

void parse_straggler(const std::string& text, DistributedOptions& options) {
    const std::size_t colon = text.find(':');
    const auto bad = [&] {
        return ConfigError("--simulate-straggler",
                           fmt::format("'{}' is not RANK:FACTOR (e.g. 1:5)", text));
    };
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) throw bad();
    const std::string r = text.substr(0, colon);
    const std::string f = text.substr(colon + 1);
    std::size_t used_r = 0;
    std::size_t used_f = 0;
    int rank = 0;
    double factor = 0;
    try {
        rank = std::stoi(r, &used_r);
        factor = std::stod(f, &used_f);
    } catch (const std::exception&) {
        throw bad();
    }
    if (used_r != r.size() || used_f != f.size() || rank < 0) throw bad();
    options.straggler_rank = rank;
    options.straggler_factor = factor;
}

// ---------------------------------------------------------------------------------------------
// Construction

/// What one iteration accumulates on this rank.
struct DistributedTrainer::Round {
    explicit Round(int threads) : clocks(threads), sampled(threads, 0) {}
    sched::WorkerClocks clocks;
    std::vector<std::uint64_t> sampled;  // per worker
    double compute_s = 0;
};

DistributedTrainer::DistributedTrainer(const core::Corpus& corpus, const TrainOptions& options,
                                       const DistributedOptions& dist, sched::Runtime& runtime,
                                       comm::Communicator& comm)
    : options_(options),
      dist_(dist),
      runtime_(runtime),
      comm_(comm),
      rank_(comm.rank()),
      ranks_(comm.size()),
      num_words_(corpus.num_words()),
      num_tokens_(corpus.num_tokens()),
      num_docs_(corpus.num_docs()),
      likelihood_(options.params, std::max<std::uint32_t>(corpus.num_words(), 1)) {
    options_.validate();
    dist_.validate(ranks_);
    if (options_.deterministic)
        throw ConfigError("--deterministic", "is not supported with more than one rank");
    if (corpus.num_words() == 0 || corpus.num_tokens() == 0)
        throw ConfigError("--corpus", "the corpus has no tokens to train on");
    const int threads = runtime_.threads();
    const std::uint32_t k_count = options_.params.num_topics;
    cols_per_slice_ =
        dist_.columns_per_slice > 0 ? dist_.columns_per_slice : sched::default_grid_side(threads);
    side_ = 2 * ranks_ * cols_per_slice_;
    if (side_ > 4096)
        throw ConfigError("columns_per_slice", "the rank's grid would exceed 4096 blocks per side");

    // Docs across ranks: the same seeded cut on every rank (every rank reads the whole corpus).
    std::vector<std::uint64_t> doc_len(num_docs_);
    for (DocId d = 0; d < num_docs_; ++d) doc_len[d] = corpus.doc_length(d);
    const auto by_rank =
        sched::partition_rows(doc_len, ranks_, Rng::from({options_.seed, kRankStream}).next());
    rank_docs_.resize(ranks_);
    for (int q = 0; q < ranks_; ++q) {
        rank_docs_[q].assign(by_rank.members[q].begin(), by_rank.members[q].end());
        std::sort(rank_docs_[q].begin(), rank_docs_[q].end());
    }
    local_docs_ = rank_docs_[rank_];
    if (rank_ == 0) all_labels_.assign(corpus.doc_labels().begin(), corpus.doc_labels().end());

    // The rank's own doc-major corpus, local doc ids.
    std::vector<std::uint64_t> local_offsets{0};
    std::vector<WordId> local_words;
    std::vector<std::uint64_t> local_len;
    for (DocId d : local_docs_) {
        const auto words = corpus.doc(d);
        local_words.insert(local_words.end(), words.begin(), words.end());
        local_offsets.push_back(local_words.size());
        local_len.push_back(words.size());
    }
    local_tokens_ = local_words.size();

    // Words: 2P slices, each cut into c column groups; column s·c + j is group j of slice s.
    // Slices balance every rank's share of them, not only their totals: in each round every
    // rank samples its tokens of one slice, and the round ends for a rank when its neighbour's
    // slice arrives, so unequal (rank, slice) cells turn into waiting.
    const auto freq = corpus.word_frequencies();
    word_freq_.assign(freq.begin(), freq.end());
    const std::vector<std::uint64_t>& word_w = word_freq_;
    std::vector<std::uint64_t> word_rank_w(static_cast<std::size_t>(num_words_) * ranks_, 0);
    for (int q = 0; q < ranks_; ++q)
        for (DocId d : rank_docs_[q])
            for (WordId w : corpus.doc(d)) ++word_rank_w[static_cast<std::size_t>(w) * ranks_ + q];
    const auto slices = sched::partition_cols_balanced(word_rank_w, ranks_, num_slices());
    col_of_word_.assign(num_words_, 0);
    slice_words_.resize(num_slices());
    for (int s = 0; s < num_slices(); ++s) {
        const auto& members = slices.members[s];
        std::vector<std::uint64_t> weights;
        weights.reserve(members.size());
        for (std::uint32_t w : members) weights.push_back(word_w[w]);
        const auto sub = sched::partition_cols_greedy(weights, cols_per_slice_);
        for (std::size_t i = 0; i < members.size(); ++i)
            col_of_word_[members[i]] =
                static_cast<std::uint32_t>(s * cols_per_slice_) + sub.group_of[i];
        slice_words_[s].assign(members.begin(), members.end());
        std::sort(slice_words_[s].begin(), slice_words_[s].end());
    }

    const auto rows = sched::partition_rows(
        local_len, side_,
        Rng::from({options_.seed, kRowStream, static_cast<std::uint64_t>(rank_)}).next());
    blocks_ = build_blocks(local_offsets, local_words, rows.group_of, col_of_word_,
                           static_cast<std::uint32_t>(side_));
    to_slice_local(blocks_);
    init_topics(blocks_, k_count,
                Rng::from({options_.seed, kInitStream, static_cast<std::uint64_t>(rank_)}).next());
    doc_topic_ = DocTopicTable::from_blocks(k_count, static_cast<std::uint32_t>(local_docs_.size()),
                                            blocks_);
    totals_ = count_topic_totals(blocks_, k_count);
    comm_.allreduce_sum(totals_);
    init_word_topic();

    alpha_ = options_.params.topic_alphas();
    make_samplers();
    local_totals_.assign(threads, std::vector<TotalCount>(k_count, 0));
    scheduler_ = std::make_unique<sched::BlockScheduler>(side_);
    if (dist_.timer) timer_.emplace(dist_.timer_params);
    speed_history_.resize(ranks_);
    last_iteration_ = options_.iterations;
    if (options_.record_schedule) {
        // One time origin for every rank's timeline (to within the barrier's latency).
        comm_.barrier();
        since_start_.reset();
    }
}

void DistributedTrainer::make_samplers() {
    // As the single-node trainer: a symmetric α stays symmetric (the sampler's fast path).
    const LdaParams p = options_.params.with_alphas(alpha_);
    samplers_.clear();
    for (int w = 0; w < runtime_.threads(); ++w)
        samplers_.push_back(std::make_unique<SparseLdaSampler>(p, num_words_));
    likelihood_ = Likelihood(p, std::max<std::uint32_t>(num_words_, 1));
}

void DistributedTrainer::set_alpha(std::vector<double> alpha) {
    if (alpha.size() != options_.params.num_topics)
        throw ConfigError("--alpha", "needs one value per topic");
    for (double a : alpha)
        if (!(a > 0) || !std::isfinite(a)) throw ConfigError("--alpha", "values must be positive");
    alpha_ = std::move(alpha);
    make_samplers();
}

DistributedTrainer::~DistributedTrainer() = default;

std::uint64_t DistributedTrainer::estimate_memory(const core::Corpus& corpus,
                                                  const TrainOptions& options, int ranks,
                                                  int threads, std::uint64_t rank_tokens) {
    const std::uint64_t k = options.params.num_topics;
    const std::uint64_t n = std::max<std::uint64_t>(corpus.num_tokens(), 1);
    const auto p = static_cast<std::uint64_t>(std::max(ranks, 1));
    std::uint64_t bytes = 0;
    // Blocks: doc and topic per token, the word lists (at most one entry per token) and
    // build_blocks' temporary 4 bytes per token; while documents move, the grid-free copy (word
    // and topic per token, 8 more while sorting) and the new blocks beside the old.
    bytes += rank_tokens * (sizeof(DocId) + sizeof(TopicId) + 4);
    bytes +=
        std::min<std::uint64_t>(rank_tokens, static_cast<std::uint64_t>(corpus.num_words()) * 64) *
        12;
    bytes += rank_tokens * (8 + 8 + sizeof(DocId) + sizeof(TopicId));
    // Doc rows: the rank's share, by tokens, of every doc's row (as the single-node estimate).
    const std::uint64_t doc_rows = Trainer::estimate_doc_rows(corpus, options.params.num_topics);
    bytes += static_cast<std::uint64_t>(static_cast<double>(doc_rows) *
                                        static_cast<double>(rank_tokens) / static_cast<double>(n));
    // Model: the held slices (about 1/P of the table) and the ring's messages (up to as much).
    const auto freq = corpus.word_frequencies();
    const std::vector<std::uint64_t> f(freq.begin(), freq.end());
    bytes += 2 * WordTopicTable::bytes_for(options.params.num_topics, f) / p;
    // Per-worker topic totals, the global copy and the samplers' scratch.
    bytes += k * 8 * (2 + static_cast<std::uint64_t>(threads)) +
             k * 40 * static_cast<std::uint64_t>(threads);
    return bytes;
}

double DistributedTrainer::timer_budget() const noexcept { return timer_ ? timer_->budget() : 0.0; }

void DistributedTrainer::to_slice_local(std::vector<TokenBlock>& blocks) {
    // Slices are sorted and a block's words increasing, so positions stay increasing.
    std::vector<WordId> local_of(num_words_, 0);
    std::size_t largest = 0;
    for (const auto& words : slice_words_) {
        for (std::size_t i = 0; i < words.size(); ++i) local_of[words[i]] = static_cast<WordId>(i);
        largest = std::max(largest, words.size());
    }
    for (TokenBlock& b : blocks) {
        const auto& words = slice_words_[slice_of_column(static_cast<int>(b.col))];
        for (WordId& w : b.words) {
            const WordId i = local_of[w];
            ROTOR_ASSERT(i < words.size() && words[i] == w, "word outside its block's slice");
            w = i;
        }
    }
    local_ids_.resize(largest);
    std::iota(local_ids_.begin(), local_ids_.end(), WordId{0});
}

std::unique_ptr<WordTopicTable> DistributedTrainer::new_slice_table(int s) const {
    // Rows get their kind and capacity from the GLOBAL frequency, so any slice fits on any rank.
    const auto& words = slice_words_[s];
    std::vector<std::uint64_t> freqs(words.size());
    for (std::size_t i = 0; i < words.size(); ++i) freqs[i] = word_freq_[words[i]];
    return std::make_unique<WordTopicTable>(options_.params.num_topics, freqs);
}

Count DistributedTrainer::word_count(WordId w, TopicId k) const {
    for (int s = 0; s < num_slices(); ++s) {
        if (!held_[s]) continue;
        const auto& words = slice_words_[s];
        const auto it = std::lower_bound(words.begin(), words.end(), w);
        if (it != words.end() && *it == w)
            return held_[s]->get(static_cast<WordId>(it - words.begin()), k);
    }
    return 0;
}

std::size_t DistributedTrainer::model_bytes() const {
    std::size_t bytes = 0;
    for (const auto& table : held_)
        if (table) bytes += table->memory_bytes();
    return bytes;
}

void DistributedTrainer::init_word_topic() {
    const std::uint32_t k_count = options_.params.num_topics;
    held_.clear();
    held_.resize(num_slices());
    // Every rank's counts of slice s are summed on its home rank s / 2, which alone then holds
    // slice s' table. One slice at a time: at most one temporary slice table on top of the
    // held ones.
    std::vector<Count> acc(k_count, 0);
    std::vector<std::uint32_t> merged;
    std::vector<std::pair<TopicId, Count>> cells;
    for (int s = 0; s < num_slices(); ++s) {
        const int home = s / 2;
        const auto ids = slice_ids(s);
        {
            const std::unique_ptr<WordTopicTable> mine = new_slice_table(s);
            for (int row = 0; row < side_; ++row) {
                for (int j = 0; j < cols_per_slice_; ++j) {
                    const TokenBlock& b =
                        blocks_[static_cast<std::size_t>(row) * side_ +
                                static_cast<std::size_t>(s) * cols_per_slice_ + j];
                    for (std::size_t i = 0; i < b.num_words(); ++i) {
                        const std::span<const TopicId> topics(b.topics);
                        mine->add_tokens(b.words[i],
                                         topics.subspan(b.word_offsets[i],
                                                        b.word_offsets[i + 1] - b.word_offsets[i]));
                    }
                }
            }
            scratch_.clear();
            mine->pack_rows(ids, scratch_);
        }
        comm::WireWriter message(scratch_.size() * sizeof(std::uint32_t));
        message.put_array(std::span<const std::uint32_t>(scratch_));
        const auto gathered = comm_.gather(message.bytes(), home);
        if (rank_ != home) continue;
        // Row i of every rank's message, summed: the messages are read side by side.
        std::vector<comm::WireReader> parts;
        for (std::size_t q = 0; q < gathered.size(); ++q)
            parts.emplace_back(gathered[q],
                               comm::message_of_rank("initial counts", static_cast<int>(q)), rank_);
        merged.clear();
        std::vector<TopicId> nz;
        for (std::size_t i = 0; i < ids.size(); ++i) {
            nz.clear();
            for (comm::WireReader& part : parts) {
                detail::read_packed_row(part, k_count, cells);
                for (const auto& [k, c] : cells) {
                    if (acc[k] == 0) nz.push_back(k);
                    acc[k] += c;
                }
            }
            merged.push_back(static_cast<std::uint32_t>(nz.size()));
            for (TopicId k : nz) {
                merged.push_back(k);
                merged.push_back(acc[k]);
                acc[k] = 0;
            }
        }
        for (const comm::WireReader& part : parts) part.finish();
        held_[s] = new_slice_table(s);
        held_[s]->unpack_rows(ids, merged);
    }
}

void DistributedTrainer::restore(const core::Corpus& corpus, const std::vector<DocId>& docs,
                                 const std::vector<TopicId>& topics, std::uint32_t iterations_done,
                                 double timer_budget, const std::string& source) {
    const std::uint32_t k_count = options_.params.num_topics;
    std::vector<std::int64_t> lo{static_cast<std::int64_t>(iterations_done)};
    std::vector<std::int64_t> hi = lo;
    comm_.allreduce_min(lo);
    comm_.allreduce_max(hi);
    LocalDocs next;
    // Checked on every rank before any change; one rank's mismatch stops every rank alike.
    comm::run_agreed(comm_, [&] {
        if (lo[0] != hi[0])
            throw InputError(
                source, fmt::format("the ranks' parts are of iterations {} to {}", lo[0], hi[0]));
        if (corpus.num_docs() != num_docs_ || corpus.num_words() != num_words_ ||
            corpus.num_tokens() != num_tokens_)
            throw InputError(source, "restored against another corpus than the trainer's");
        std::uint64_t tokens = 0;
        for (std::size_t i = 0; i < docs.size(); ++i) {
            if (docs[i] >= num_docs_ || (i > 0 && docs[i] <= docs[i - 1]))
                throw InputError(source, fmt::format("rank {}: document ids are not increasing "
                                                     "ids below {} (entry {}: {})",
                                                     rank_, num_docs_, i, docs[i]));
            tokens += corpus.doc_length(docs[i]);
        }
        if (tokens != topics.size())
            throw InputError(source, fmt::format("rank {}: {} topics for documents of {} tokens",
                                                 rank_, topics.size(), tokens));
        for (TopicId k : topics)
            if (k >= k_count)
                throw InputError(source, fmt::format("topic {} out of range [0, {})", k, k_count));
        if (timer_ && !(timer_budget > 0 && std::isfinite(timer_budget)))
            throw InputError(source, fmt::format("timer budget {} is not > 0", timer_budget));
        next.docs = docs;
        next.offsets.reserve(docs.size() + 1);
        next.words.reserve(tokens);
        for (DocId d : docs) {
            const auto w = corpus.doc(d);
            const std::size_t at = next.words.size();
            next.words.insert(next.words.end(), w.begin(), w.end());
            std::sort(next.words.begin() + static_cast<std::ptrdiff_t>(at), next.words.end());
            next.offsets.push_back(next.words.size());
        }
        next.topics = topics;
    });
    // Every document on exactly one rank, checked across ranks before anything changes (every
    // rank sees the same lists, so every rank finds the same problem).
    std::string problem;
    auto lists = gather_doc_lists(docs, problem);
    comm::run_agreed(comm_, [&] {
        if (!problem.empty()) throw InputError(source, problem);
    });
    adopt(std::move(next));
    rank_docs_ = std::move(lists);
    totals_ = count_topic_totals(blocks_, k_count);
    comm_.allreduce_sum(totals_);
    init_word_topic();
    iterations_done_ = iterations_done;
    for (auto& h : speed_history_) h.clear();
    pending_moves_.clear();
    if (timer_) {
        sched::TimerParams p = dist_.timer_params;
        p.initial_s = timer_budget;  // clamped to [min_s, max_s], as every budget is
        timer_.emplace(p);
    }
}

// ---------------------------------------------------------------------------------------------
// Slices on the wire

std::vector<std::byte> DistributedTrainer::pack_slice(int slice) {
    ROTOR_ASSERT(held_[slice] != nullptr, "packing a slice this rank does not hold");
    scratch_.clear();
    held_[slice]->pack_rows(slice_ids(slice), scratch_);
    comm::WireWriter message(16 + scratch_.size() * sizeof(std::uint32_t));
    message.put(kSliceMagic);
    message.put(static_cast<std::uint32_t>(slice));
    message.put(scratch_);
    // The rows now travel: this rank no longer holds them, and frees their table.
    held_[slice].reset();
    return message.take();
}

void DistributedTrainer::unpack_slice(int slice, std::span<const std::byte> buf) {
    comm::WireReader message(buf, "slice message", rank_);
    message.expect_u32(kSliceMagic, "magic");
    const auto got = message.get<std::uint32_t>();
    if (got != static_cast<std::uint32_t>(slice))
        message.fail(fmt::format("expected slice {}, received slice {}", slice, got));
    message.get(scratch_);
    message.finish();
    std::unique_ptr<WordTopicTable> table = new_slice_table(slice);
    std::size_t used = 0;
    try {
        used = table->unpack_rows(slice_ids(slice), scratch_);
    } catch (const InputError& e) {
        message.fail(fmt::format("slice {}: {}", slice, e.what()));
    }
    if (used != scratch_.size())
        message.fail(fmt::format("slice {}: {} trailing words", slice, scratch_.size() - used));
    held_[slice] = std::move(table);
    peak_model_bytes_ = std::max(peak_model_bytes_, model_bytes());
}

// ---------------------------------------------------------------------------------------------
// Iterations

std::uint64_t DistributedTrainer::compute(int slice, std::uint32_t iter, int phase, Round& st,
                                          comm::RingProgress& in_flight) {
    std::vector<int> cols(cols_per_slice_);
    std::iota(cols.begin(), cols.end(), slice * cols_per_slice_);
    sched::BlockScheduler& scheduler = *scheduler_;
    scheduler.reset_columns(cols);
    ROTOR_ASSERT(held_[slice] != nullptr, "sampling a slice this rank does not hold");
    WordTopicTable& word_topic = *held_[slice];

    // The timer (loop.budget_s) stops the round on this rank: the flag ends the block being
    // sampled (between words), and the block stays not done. Unreached tokens wait for a later
    // visit.
    const auto kernel = [&](int w, const sched::Job& job, const std::atomic<bool>& stop) {
        const std::size_t id = static_cast<std::size_t>(job.block.row) * side_ + job.block.col;
        Rng rng =
            Rng::from({options_.seed, kSampleStream, iter, static_cast<std::uint64_t>(rank_), id});
        const std::uint64_t n =
            samplers_[w]->sample_block(blocks_[id], doc_topic_, word_topic,
                                       std::span<TotalCount>(local_totals_[w]), rng, &stop);
        return sched::BlockResult{n, n == blocks_[id].num_tokens()};
    };
    sched::DynamicLoopOptions loop;
    loop.pick_seed = {options_.seed, kPickStream, iter, static_cast<std::uint64_t>(rank_),
                      static_cast<std::uint64_t>(phase)};
    loop.budget_s = timer_ ? timer_->budget() : 0.0;
    if (rank_ == dist_.straggler_rank) loop.straggler_factor = dist_.straggler_factor;
    loop.record = options_.record_schedule;
    loop.origin = &since_start_;
    if (in_flight.active()) {
        // MPI progresses only inside MPI calls, and only this thread may call MPI: the workers
        // run under a helper thread while this one polls the rotation in flight.
        loop.poll = [&in_flight, arrived = false]() mutable {
            if (!arrived) arrived = in_flight();
        };
        loop.poll_period = kProgressPeriod;
    }
    const sched::LoopResult result = sched::run_dynamic_loop(runtime_, scheduler, loop, kernel);

    st.compute_s += result.times.wall_s;
    for (const sched::ScheduleEvent& e : result.events)
        schedule_.push_back({iter, e.worker, e.block.row, e.block.col, e.start_s, e.end_s});
    for (std::size_t w = 0; w < result.units.size(); ++w) {
        st.sampled[w] += result.units[w];
        st.clocks.clock(static_cast<int>(w)).add(sched::Phase::kCompute, result.times.compute_s[w]);
        st.clocks.clock(static_cast<int>(w)).add(sched::Phase::kWait, result.times.wait_s[w]);
    }
    return std::accumulate(result.units.begin(), result.units.end(), std::uint64_t{0});
}

train::Record DistributedTrainer::iterate() {
    const std::uint32_t iter = iterations_done_ + 1;
    if (dist_.on_iteration_start) dist_.on_iteration_start(rank_, iter);
    Stopwatch wall;
    Round st(runtime_.threads());
    double comm_s = 0;
    double rebalance_s = 0;
    std::uint64_t moved_out = 0;
    if (!pending_moves_.empty()) {
        // Documents move before any slice does: every word row is at home and n_k is exact.
        Stopwatch t;
        const std::vector<DocTransfer> plan = std::move(pending_moves_);
        pending_moves_.clear();
        moved_out = move_documents(plan);
        rebalance_s = t.seconds();
        comm_s += rebalance_s;
    }
    for (auto& local : local_totals_) local = totals_;
    peak_model_bytes_ = model_bytes();

    // The pipelined two-slice ring of docs/comm.md: slot 0 travels while slot 1 is sampled and
    // the other way round.
    st.clocks.begin_iteration();
    int phase = 0;
    comm::RingPipeline ring(comm_);
    const comm::RingStats ring_stats = ring.run({
        .compute =
            [&](int slice, comm::RingProgress& progress) {
                compute(slice, iter, phase++, st, progress);
            },
        .pack = [&](int slice) { return pack_slice(slice); },
        .unpack = [&](int slice, std::span<const std::byte> bytes) { unpack_slice(slice, bytes); },
    });
    const sched::IterationTimes times = st.clocks.end_iteration();
    const double wait_s = ring_stats.wait_s;
    comm_s += ring_stats.comm_s;

    Stopwatch coll;
    const std::uint64_t sampled_here =
        std::accumulate(st.sampled.begin(), st.sampled.end(), std::uint64_t{0});
    const Reconciled all = reconcile_totals(sampled_here);
    comm_s += coll.seconds();

    RankMetrics mine;
    mine.tokens = local_tokens_;
    mine.tokens_sampled = sampled_here;
    mine.processed_ratio =
        local_tokens_ ? static_cast<double>(sampled_here) / static_cast<double>(local_tokens_) : 1;
    mine.iteration_s = wall.seconds();
    mine.compute_s = st.compute_s;
    mine.wait_s = wait_s;
    mine.comm_s = comm_s;
    mine.overhead_ratio =
        mine.iteration_s > 0 ? std::clamp(1 - st.compute_s / mine.iteration_s, 0.0, 1.0) : 0;
    mine.effective_ratio = times.effective_ratio;
    mine.load_cv = times.load_cv;
    mine.rebalance_s = rebalance_s;
    mine.tokens_moved_out = moved_out;
    mine.model_bytes = peak_model_bytes_;
    rank_metrics_ = comm::allgather(comm_, mine, "metrics");
    iterations_done_ = iter;
    std::uint64_t moved_all = 0;
    double rebalance_max = 0;
    for (const RankMetrics& r : rank_metrics_) {
        moved_all += r.tokens_moved_out;
        rebalance_max = std::max(rebalance_max, r.rebalance_s);
    }
    if (moved_all > 0) last_move_s_ = rebalance_max;
    if (dist_.rebalance && ranks_ > 1) pending_moves_ = decide_rebalance(moved_all > 0);

    return detail::summarize_ranks(rank_metrics_, iter, all.sampled, all.ratio, all.s_error,
                                   timer_budget());
}

DistributedTrainer::Reconciled DistributedTrainer::reconcile_totals(std::uint64_t sampled_here) {
    const std::uint32_t k_count = options_.params.num_topics;
    // Exact reconciliation across workers and ranks: n_k(new) = n_k(old) + Σ_{ranks, workers}
    // (ñ_k − n_k(old)). The token count rides along in the same allreduce.
    std::vector<std::int64_t> delta(k_count + 1, 0);
    for (const auto& local : local_totals_)
        for (std::uint32_t k = 0; k < k_count; ++k) delta[k] += local[k] - totals_[k];
    delta[k_count] = static_cast<std::int64_t>(sampled_here);
    comm_.allreduce_sum(delta);
    std::vector<TotalCount> next = totals_;
    for (std::uint32_t k = 0; k < k_count; ++k) next[k] += delta[k];
    // STRADS eq. 1 over every worker of every rank: Δ_t = Σ_p ‖ñ^p − n‖₁ / (P·N).
    std::vector<double> err{0.0, static_cast<double>(runtime_.threads())};
    for (const auto& local : local_totals_)
        for (std::uint32_t k = 0; k < k_count; ++k)
            err[0] += static_cast<double>(std::abs(local[k] - next[k]));
    comm_.allreduce_sum(err);
    totals_ = std::move(next);
    Reconciled out;
    out.sampled = static_cast<std::uint64_t>(delta[k_count]);
    out.ratio =
        num_tokens_ ? static_cast<double>(out.sampled) / static_cast<double>(num_tokens_) : 1.0;
    out.s_error = err[0] / (err[1] * static_cast<double>(num_tokens_));
    // Every rank feeds the same allreduced ratio, so every rank keeps the same budget.
    if (timer_) timer_->update(std::clamp(out.ratio, 0.0, 1.0));
    return out;
}

LogLikelihood DistributedTrainer::evaluate() {
    // Between iterations rank p holds exactly its home slices, so summing the word part over
    // the held tables of all ranks counts each slice once.
    std::vector<double> parts(2, 0.0);
    for (int s = 0; s < num_slices(); ++s) {
        if (!held_[s]) continue;
        const WordTopicTable& table = *held_[s];
        parts[0] += detail::ordered_parallel_sum(
            runtime_, table.num_words(), [&](std::uint64_t b, std::uint64_t e) {
                return likelihood_.word_part(table, static_cast<WordId>(b), static_cast<WordId>(e));
            });
    }
    parts[1] = detail::ordered_parallel_sum(
        runtime_, doc_topic_.num_docs(), [&](std::uint64_t b, std::uint64_t e) {
            return likelihood_.doc_part(doc_topic_, static_cast<DocId>(b), static_cast<DocId>(e));
        });
    comm_.allreduce_sum(parts);
    return likelihood_.combine(parts[0], parts[1], totals_);
}

void DistributedTrainer::train(train::Reporter& reporter, const train::Hooks& hooks,
                               std::uint32_t last_iteration) {
    const std::uint32_t last =
        last_iteration > 0 ? last_iteration : iterations_done_ + options_.iterations;
    last_iteration_ = last;
    if (rank_ == 0) {
        reporter.on_start(fmt::format(
            "{} tokens, {} docs, {} words; K = {}, alpha = {:g}, beta = {:g}; {} ranks x {} "
            "threads, {} slices, {}x{} blocks per rank; timer {}{}; {}",
            num_tokens_, num_docs_, num_words_, options_.params.num_topics,
            options_.params.resolved_alpha(), options_.params.beta, ranks_, runtime_.threads(),
            num_slices(), side_, side_,
            timer_ ? fmt::format("on ({:g} s, [{:g}, {:g}])", timer_->budget(),
                                 dist_.timer_params.low, dist_.timer_params.high)
                   : "off",
            dist_.straggler_rank >= 0 ? fmt::format("; rank {} simulated {:g}x slower",
                                                    dist_.straggler_rank, dist_.straggler_factor)
                                      : "",
            runtime_.status()));
    }
    train::run_iterations(*this,
                          {.last = last, .eval_every = options_.eval_every, .report = rank_ == 0},
                          reporter, hooks);
}

}  // namespace rotor::lda
