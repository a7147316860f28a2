// The LDA trainer's construction and layout (documents over ranks, words into slices and grid
// columns), its options, α, memory estimates and the training loop; one process's sweeps are in
// trainer_local.cpp, the ring's iteration in trainer_ring.cpp, slice storage in slices.cpp,
// documents and rebalancing in documents.cpp, evaluation and results in evaluation.cpp.
#include "apps/lda/trainer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <exception>
#include <numeric>

#include <fmt/format.h>

#include "apps/lda/sampler_policy.h"
#include "apps/lda/seed_streams.h"
#include "comm/inprocess_communicator.h"
#include "core/base/plural.h"
#include "core/base/rng.h"
#include "core/lda/coherence.h"
#include "core/lda/mh_sampler.h"
#include "core/lda/sparse_lda_sampler.h"
#include "sched/block_grid.h"
#include "sched/block_scheduler.h"
#include "sched/runtime.h"
#include "sched/worker_clock.h"

namespace rotor::lda {

train::RecordSchema record_schema() {
    train::RecordSchema s;
    s.count_key = "tokens_sampled";
    s.rate_key = "tokens_per_s";
    s.rate_unit = "tok/s";
    s.headline_key = "loglik_per_token";
    s.headline_label = "loglik/token";
    s.shown = {{"heldout_perplexity", "held-out perplexity"}};
    return s;
}

void add_loglik(train::Record& r, const LogLikelihood& ll, std::uint64_t num_tokens) {
    const double n = static_cast<double>(std::max<std::uint64_t>(num_tokens, 1));
    r.set("loglik_word", ll.loglik_word);
    r.set("loglik", ll.loglik);
    r.set("loglik_word_per_token", ll.loglik_word / n);
    r.set("loglik_per_token", ll.loglik / n);
}

void TrainOptions::validate() const {
    params.validate();
    init.validate();
    if (blocks < 0) throw ConfigError("--blocks", "must be 0 (automatic) or at least 1");
    if (blocks > 4096) throw ConfigError("--blocks", "at most 4096 blocks per side");
    if (mh_steps == 0 || mh_steps > MhSampler::kMaxCycles)
        throw ConfigError("--mh-steps", fmt::format("must be in [1, {}]", MhSampler::kMaxCycles));
    // With no sweep every token would stay unassigned: no model to write.
    if (init.method == InitMethod::kSequential && iterations == 0)
        throw ConfigError("--iterations",
                          "must be at least 1 with --init sequential (its first sweep draws the "
                          "topics)");
}

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

Trainer::Trainer(const core::Corpus& corpus, const TrainOptions& options,
                 const DistributedOptions& dist, sched::Runtime& runtime, comm::Communicator& comm)
    : Trainer(corpus, options, dist, runtime, &comm, nullptr) {}

Trainer::Trainer(const core::Corpus& corpus, const TrainOptions& options, sched::Runtime& runtime)
    : Trainer(corpus, options, DistributedOptions{}, runtime, nullptr,
              std::make_unique<comm::InProcessGroup>(1)) {}

Trainer::Trainer(const core::Corpus& corpus, const TrainOptions& options,
                 const DistributedOptions& dist, sched::Runtime& runtime, comm::Communicator* comm,
                 std::unique_ptr<comm::InProcessGroup> own)
    : options_(options),
      dist_(dist),
      runtime_(runtime),
      own_comm_(std::move(own)),
      comm_(own_comm_ ? own_comm_->at(0) : *comm),
      rank_(comm_.rank()),
      ranks_(comm_.size()),
      num_words_(corpus.num_words()),
      num_tokens_(corpus.num_tokens()),
      num_docs_(corpus.num_docs()),
      likelihood_(options.params, std::max<std::uint32_t>(corpus.num_words(), 1)) {
    options_.validate();
    dist_.validate(ranks_);
    if (options_.deterministic && ranks_ > 1)
        throw ConfigError("--deterministic", "is not supported with more than one rank");
    if (corpus.num_words() == 0 || corpus.num_tokens() == 0)
        throw ConfigError("--corpus", "the corpus has no tokens to train on");
    if (options_.init.method == InitMethod::kSequential && options_.init.word_prior == 0) {
        // The same on every rank: the whole corpus' mean document length.
        options_.init.word_prior = auto_word_prior(static_cast<double>(corpus.num_tokens()) /
                                                   static_cast<double>(corpus.num_docs()));
    }
    const int threads = runtime_.threads();
    const std::uint32_t k_count = options_.params.num_topics;
    choose_grid(threads);
    // One process reads its docs straight from the corpus; a rank of P > 1 copies its share.
    const LocalDocs mine = split_docs(corpus);
    const std::span<const std::uint64_t> offsets =
        ranks_ == 1 ? corpus.doc_offsets() : std::span<const std::uint64_t>(mine.offsets);
    const std::span<const WordId> words =
        ranks_ == 1 ? corpus.word_ids() : std::span<const WordId>(mine.words);
    split_words(corpus);

    // The rank's docs in G groups of equal token count, the grid's blocks, the first topics.
    std::vector<std::uint64_t> local_len(local_docs_.size());
    for (std::size_t d = 0; d < local_docs_.size(); ++d) local_len[d] = offsets[d + 1] - offsets[d];
    const auto rows = sched::partition_rows(local_len, side_, row_seed());
    blocks_ = build_blocks(offsets, words, rows.group_of, col_of_word_,
                           static_cast<std::uint32_t>(side_));
    to_slice_local(blocks_);
    init_topics(blocks_, static_cast<std::uint32_t>(local_docs_.size()), k_count, options_.init,
                init_seed());
    doc_topic_ = DocTopicTable::from_blocks(k_count, static_cast<std::uint32_t>(local_docs_.size()),
                                            blocks_);
    build_tables();

    alpha_ = options_.params.topic_alphas();
    policy_ = std::make_unique<SamplerPolicy>(options_.sampler, options_.deterministic);
    if (options_.init.method == InitMethod::kSequential) policy_->sparse_through(1);
    make_samplers();
    // Copies of the topic totals: per worker, or per block of a diagonal round.
    const std::size_t copies = options_.deterministic ? static_cast<std::size_t>(side_)
                                                      : static_cast<std::size_t>(threads);
    local_totals_.assign(copies, std::vector<TotalCount>(k_count, 0));
    scheduler_ = std::make_unique<sched::BlockScheduler>(side_);
    if (dist_.timer && ranks_ > 1)
        timer_.emplace(dist_.timer_params, dist_.timer_always, dist_.rebalance_tolerance);
    speed_history_.resize(ranks_);
    last_iteration_ = options_.iterations;
    if (options_.record_schedule) {
        // One time origin for every rank's timeline (to within the barrier's latency).
        comm_.barrier();
        since_start_.reset();
    }
}

namespace {

/// One process's default grid side: ceil(sqrt(2)·P) for the P = min(threads, cpus) workers
/// that run at once, at least TrainOptions::kMinThreadedBlocks when P >= 2.
int threaded_grid_side(int threads, int cpus) {
    const int side = sched::default_grid_side(threads, cpus);
    return std::min(threads, std::max(cpus, 1)) >= 2
               ? std::max(side, TrainOptions::kMinThreadedBlocks)
               : side;
}

}  // namespace

void Trainer::choose_grid(int threads) {
    const int cpus = sched::available_cpus();
    if (ranks_ == 1) {
        // One slice of every word: the grid side is the column count.
        cols_per_slice_ = options_.blocks > 0           ? options_.blocks
                          : dist_.columns_per_slice > 0 ? dist_.columns_per_slice
                          : options_.deterministic      ? TrainOptions::kDeterministicBlocks
                                                        : threaded_grid_side(threads, cpus);
    } else {
        cols_per_slice_ = dist_.columns_per_slice > 0 ? dist_.columns_per_slice
                                                      : sched::default_grid_side(threads, cpus);
    }
    side_ = num_slices() * cols_per_slice_;
    if (side_ > 4096)
        throw ConfigError(ranks_ == 1 ? "--blocks" : "columns_per_slice",
                          "the rank's grid would exceed 4096 blocks per side");
}

LocalDocs Trainer::split_docs(const core::Corpus& corpus) {
    // Docs across ranks: the same seeded cut on every rank (every rank reads the whole corpus).
    std::vector<std::uint64_t> doc_len(num_docs_);
    for (DocId d = 0; d < num_docs_; ++d) doc_len[d] = corpus.doc_length(d);
    const auto by_rank = sched::partition_rows(
        doc_len, ranks_, Rng::from({options_.seed, detail::kRankStream}).next());
    rank_docs_.resize(ranks_);
    for (int q = 0; q < ranks_; ++q) {
        rank_docs_[q].assign(by_rank.members[q].begin(), by_rank.members[q].end());
        std::sort(rank_docs_[q].begin(), rank_docs_[q].end());
    }
    local_docs_ = rank_docs_[rank_];
    if (rank_ == 0) all_labels_.assign(corpus.doc_labels().begin(), corpus.doc_labels().end());

    // The rank's own doc-major corpus, local doc ids (one process: the corpus itself, not copied).
    LocalDocs mine;
    if (ranks_ == 1) {
        local_tokens_ = corpus.num_tokens();
        return mine;
    }
    mine.docs = local_docs_;
    for (DocId d : local_docs_) {
        const auto words = corpus.doc(d);
        mine.words.insert(mine.words.end(), words.begin(), words.end());
        mine.offsets.push_back(mine.words.size());
    }
    local_tokens_ = mine.words.size();
    return mine;
}

void Trainer::split_words(const core::Corpus& corpus) {
    // Words: one slice of every word (P = 1), or 2P slices (P > 1), each cut into c column
    // groups; column s·c + j is group j of slice s. The 2P slices balance every rank's share of
    // them, not only their totals: in each round every rank samples its tokens of one slice, and
    // the round ends for a rank when its neighbour's slice arrives, so unequal (rank, slice)
    // cells turn into waiting.
    const auto freq = corpus.word_frequencies();
    word_freq_.assign(freq.begin(), freq.end());
    sched::Partition slices;
    if (ranks_ == 1) {
        slices.members.resize(1);
        slices.members[0].resize(num_words_);
        std::iota(slices.members[0].begin(), slices.members[0].end(), std::uint32_t{0});
    } else {
        std::vector<std::uint64_t> word_rank_w(static_cast<std::size_t>(num_words_) * ranks_, 0);
        for (int q = 0; q < ranks_; ++q)
            for (DocId d : rank_docs_[q])
                for (WordId w : corpus.doc(d))
                    ++word_rank_w[static_cast<std::size_t>(w) * ranks_ + q];
        slices = sched::partition_cols_balanced(word_rank_w, ranks_, num_slices());
    }
    col_of_word_.assign(num_words_, 0);
    slice_words_.resize(num_slices());
    for (int s = 0; s < num_slices(); ++s) {
        const auto& members = slices.members[s];
        std::vector<std::uint64_t> weights;
        weights.reserve(members.size());
        for (std::uint32_t w : members) weights.push_back(word_freq_[w]);
        const auto sub = sched::partition_cols_greedy(weights, cols_per_slice_);
        for (std::size_t i = 0; i < members.size(); ++i)
            col_of_word_[members[i]] =
                static_cast<std::uint32_t>(s * cols_per_slice_) + sub.group_of[i];
        slice_words_[s].assign(members.begin(), members.end());
        std::sort(slice_words_[s].begin(), slice_words_[s].end());
    }
}

std::uint64_t Trainer::row_seed() const {
    if (ranks_ == 1) return Rng::from({options_.seed, detail::kLocalRowStream}).next();
    return Rng::from({options_.seed, detail::kRingRowStream, static_cast<std::uint64_t>(rank_)})
        .next();
}

std::uint64_t Trainer::init_seed() const {
    if (ranks_ == 1) return Rng::from({options_.seed, detail::kLocalInitStream}).next();
    return Rng::from({options_.seed, detail::kRingInitStream, static_cast<std::uint64_t>(rank_)})
        .next();
}

void Trainer::build_tables() {
    const std::uint32_t k_count = options_.params.num_topics;
    totals_ = count_topic_totals(blocks_, k_count);
    if (ranks_ == 1) {
        held_.clear();
        held_.push_back(std::make_unique<WordTopicTable>(
            WordTopicTable::from_blocks(k_count, num_words_, blocks_)));
        if (options_.deterministic) canonicalize_rows();
        return;
    }
    comm_.allreduce_sum(totals_);
    init_word_topic();
}

const WordTopicTable& Trainer::word_topic() const {
    ROTOR_ASSERT(ranks_ == 1 && held_[0] != nullptr, "word_topic() is the one-process table");
    return *held_[0];
}

void Trainer::make_samplers() {
    // A symmetric α stays symmetric (the sampler's fast path).
    const LdaParams p = options_.params.with_alphas(alpha_);
    samplers_.clear();
    mh_samplers_.clear();
    init_samplers_.clear();
    for (int w = 0; w < runtime_.threads(); ++w) {
        samplers_.push_back(std::make_unique<SparseLdaSampler>(p, num_words_));
        if (draws_first_topics(iterations_done_ + 1)) {
            LdaParams q = p;
            q.beta = first_sweep_beta(options_.init, p.beta, p.num_topics);
            init_samplers_.push_back(std::make_unique<SparseLdaSampler>(q, num_words_));
        }
        if (options_.sampler != SamplerKind::kSparse)
            mh_samplers_.push_back(
                std::make_unique<MhSampler>(p, num_words_, doc_index_, options_.mh_steps));
    }
    likelihood_ = Likelihood(p, std::max<std::uint32_t>(num_words_, 1));
}

void Trainer::set_alpha(std::vector<double> alpha) {
    if (alpha.size() != options_.params.num_topics)
        throw ConfigError("--alpha", "needs one value per topic");
    for (double a : alpha)
        if (!(a > 0) || !std::isfinite(a)) throw ConfigError("--alpha", "values must be positive");
    alpha_ = std::move(alpha);
    make_samplers();
}

Trainer::~Trainer() = default;

std::uint64_t Trainer::sample_block(int worker, std::uint32_t iter, TokenBlock& block,
                                    WordTopicTable& word_topic, std::span<TotalCount> totals,
                                    Rng& rng, const std::atomic<bool>* stop) {
    const BlockChoice choice = policy_->start_block(iter);
    Stopwatch clock;
    Sampler& kernel = choice.mh ? *mh_samplers_[worker]
                      : draws_first_topics(iter) && !init_samplers_.empty()
                          ? *init_samplers_[worker]
                          : *samplers_[worker];
    const std::uint64_t n = kernel.sample_block(block, doc_topic_, word_topic, totals, rng, stop);
    const double seconds = clock.seconds();
    if (choice.sync_index) doc_index_.sync_block(block);
    policy_->end_block(iter, choice.mh, n, seconds);
    return n;
}

void Trainer::prepare_index() {
    if (!index_stale_ || !policy_->index_in_use()) return;
    doc_index_.build(blocks_, static_cast<std::uint32_t>(side_),
                     static_cast<std::uint32_t>(local_docs_.size()),
                     [this](std::int64_t lo, std::int64_t hi, const auto& body) {
                         runtime_.parallel_for(lo, hi, body);
                     });
    index_stale_ = false;
}

double Trainer::mean_doc_topics(bool at_random) const {
    const double k = options_.params.num_topics;
    double weighted = 0;
    double tokens = 0;
    for (DocId d = 0; d < doc_topic_.num_docs(); ++d) {
        const auto row = doc_topic_.row(d);
        double n = 0;
        for (const TopicCount& e : row) n += e.count;
        const double topics = at_random ? k * (1 - std::pow(1 - 1 / k, n)) : row.size();
        weighted += n * topics;
        tokens += n;
    }
    return tokens > 0 ? weighted / tokens : 0;
}

void Trainer::label_sampler(train::Record& r) {
    if (options_.sampler == SamplerKind::kSparse) return;
    r.set_label("sampler", policy_->take_label(r.iter));
}

double Trainer::timer_budget() const noexcept { return timer_ ? timer_->budget() : 0.0; }

void Trainer::to_slice_local(std::vector<TokenBlock>& blocks) {
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

std::uint64_t Trainer::estimate_memory(const core::Corpus& corpus, const TrainOptions& options,
                                       int ranks, int threads, std::uint64_t rank_tokens) {
    const std::uint64_t k = options.params.num_topics;
    const auto t = static_cast<std::uint64_t>(threads);
    std::uint64_t bytes = 0;
    // Blocks: doc and topic per token, the word lists (at most one entry per token) and
    // build_blocks' temporary 4 bytes per token.
    bytes += rank_tokens * (sizeof(DocId) + sizeof(TopicId) + 4);
    // MhSampler's doc-token index: a topic and a slot per token, an offset per document.
    if (options.sampler != SamplerKind::kSparse) bytes += rank_tokens * 8 + corpus.num_docs() * 8;
    bytes +=
        std::min<std::uint64_t>(rank_tokens, static_cast<std::uint64_t>(corpus.num_words()) * 64) *
        12;
    const std::uint64_t doc_rows = estimate_doc_rows(corpus, options.params.num_topics);
    // Word-topic rows: dense 4K bytes, or sparse 8 * (1 + min(K, f)), whichever the table picks.
    const auto freq = corpus.word_frequencies();
    const std::vector<std::uint64_t> f(freq.begin(), freq.end());
    const std::uint64_t table = WordTopicTable::bytes_for(options.params.num_topics, f);
    if (ranks <= 1) {
        // One process: every doc row and the whole table; the topic totals' global copy, one
        // copy per worker or per block, and the samplers' scratch.
        const std::uint64_t side = options.blocks > 0 ? options.blocks : 2 * t;
        return bytes + doc_rows + table + k * 8 * (1 + std::max<std::uint64_t>(t, side)) +
               k * 40 * t;
    }
    // While documents move: the grid-free copy (word and topic per token, 8 more while sorting)
    // and the new blocks beside the old.
    bytes += rank_tokens * (8 + 8 + sizeof(DocId) + sizeof(TopicId));
    // Doc rows: the rank's share, by tokens, of every doc's row.
    const std::uint64_t n = std::max<std::uint64_t>(corpus.num_tokens(), 1);
    bytes += static_cast<std::uint64_t>(static_cast<double>(doc_rows) *
                                        static_cast<double>(rank_tokens) / static_cast<double>(n));
    // Model: the held slices (about 1/P of the table) and the ring's messages (up to as much).
    bytes += 2 * table / static_cast<std::uint64_t>(ranks);
    // Per-worker topic totals, the global copy and the samplers' scratch.
    return bytes + k * 8 * (2 + t) + k * 40 * t;
}

std::uint64_t Trainer::estimate_memory(const core::Corpus& corpus, const TrainOptions& options,
                                       int threads) {
    return estimate_memory(corpus, options, 1, threads, corpus.num_tokens());
}

std::uint64_t Trainer::estimate_finish_memory(const core::Corpus& corpus,
                                              const TrainOptions& options, int ranks,
                                              std::size_t coherence_top, std::uint64_t text_bytes) {
    const std::uint64_t k = options.params.num_topics;
    const std::uint64_t v = corpus.num_words();
    const std::uint64_t d = corpus.num_docs();
    // A bounded heap of `top` (count, word) entries per topic, grown by doubling.
    const auto heaps = [k](std::uint64_t top) { return k * (24 + 8 * std::bit_ceil(top)); };
    std::uint64_t coherence = 0;
    if (coherence_top > 0) {
        // Every rank's heaps, the merged ones, the message, the lists of words, the result.
        const std::uint64_t top = coherence_top;
        coherence = 2 * heaps(top) + k * (4 + 8 * top) + k * (24 + 4 * std::bit_ceil(top)) + 8 * k +
                    umass_coherence_bytes(corpus.num_tokens(), corpus.num_words(),
                                          corpus.num_docs(), k, top);
    }
    // The model: 8 bytes per cell (topic, count) and per offset, a label per doc, α and totals.
    const auto freq = corpus.word_frequencies();
    std::uint64_t cells = 0;
    for (const std::uint64_t f : freq) cells += std::min<std::uint64_t>(k, f);
    for (DocId doc = 0; doc < corpus.num_docs(); ++doc)
        cells += std::min<std::uint64_t>(k, corpus.doc_length(doc));
    std::uint64_t model = 8 * cells + 8 * (v + d + 2) + 16 * d + 16 * k + text_bytes;
    // Gathered from ranks: a vector per row (24 bytes and an allocation's 16) holding the cells.
    if (ranks > 1) model += 8 * cells + 40 * (v + d);
    // save_model: the top 20 words per topic (heaps, then summaries of 16 bytes a word), and
    // params.json's α (a JSON value and its text per topic).
    constexpr std::uint64_t kSavedTop = 20;
    const std::uint64_t save = heaps(kSavedTop) + k * (40 + 16 * kSavedTop) + k * 64;
    return std::max(coherence, model + save);
}

std::uint64_t Trainer::estimate_doc_rows(const core::Corpus& corpus, std::uint32_t num_topics) {
    // 8 bytes per (topic, count) slot, capacity min(K, length), 64-byte lines.
    std::uint64_t bytes = 0;
    for (DocId d = 0; d < corpus.num_docs(); ++d) {
        const std::uint64_t cells =
            8 * (1 + std::min<std::uint64_t>(num_topics, corpus.doc_length(d)));
        bytes += (cells + 63) / 64 * 64 + 8;
    }
    return bytes;
}

void Trainer::train(train::Reporter& reporter, const train::Hooks& hooks,
                    std::uint32_t last_iteration) {
    const std::uint32_t last =
        last_iteration > 0 ? last_iteration : iterations_done_ + options_.iterations;
    last_iteration_ = last;
    // How the topics start (a resumed run's started long ago).
    const InitOptions& init = options_.init;
    const std::string start =
        iterations_done_ > 0 ? ""
        : init.method == InitMethod::kSequential
            ? fmt::format(", sequential start (word prior {:.3g})", init.word_prior)
        : init.method == InitMethod::kSparse
            ? fmt::format(", sparse start ({} topics a document)", init.doc_topics)
            : ", random start";
    if (ranks_ == 1) {
        reporter.on_start(fmt::format(
            "{}, {}, {}; K = {}, alpha = {:g}, beta = {:g}{}; {}, {}x{} blocks{}; {}",
            plural(num_tokens_, "token"), plural(num_docs_, "doc"), plural(num_words_, "word"),
            options_.params.num_topics, options_.params.resolved_alpha(), options_.params.beta,
            start, plural(static_cast<std::uint64_t>(runtime_.threads()), "thread"), side_, side_,
            options_.deterministic ? ", deterministic" : "", runtime_.status()));
    } else if (rank_ == 0) {
        reporter.on_start(fmt::format(
            "{} tokens, {} docs, {} words; K = {}, alpha = {:g}, beta = {:g}{}; {} ranks x {} "
            "threads, {} slices, {}x{} blocks per rank; timer {}{}; {}",
            num_tokens_, num_docs_, num_words_, options_.params.num_topics,
            options_.params.resolved_alpha(), options_.params.beta, start, ranks_,
            runtime_.threads(), num_slices(), side_, side_,
            timer_ ? fmt::format("{} ({:g} s, [{:g}, {:g}])",
                                 dist_.timer_always ? "on" : "on while ranks' speeds differ",
                                 timer_->budget(), dist_.timer_params.low, dist_.timer_params.high)
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
