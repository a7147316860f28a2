// The trainer's documents (apps/lda/trainer.h): their grid-free layout (checkpoints, moves),
// restoring them from a checkpoint, moving them between ranks, and the rebalancing that decides
// the moves (docs/distributed.md, "Rebalancing").
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/lda/messages.h"
#include "apps/lda/trainer.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/ring.h"
#include "comm/wire.h"
#include "core/base/rng.h"
#include "sched/block_grid.h"
#include "sched/rebalance.h"

namespace rotor::lda {
namespace {

/// First field (u32) of every message of moving documents; then the doc count (u64) and per
/// doc its global id (u32), its length n (u64), n word ids and n topics (u32 each).
constexpr std::uint32_t kDocsMagic = 0x444f4353;  // "DOCS"
/// Point-to-point tag of the documents' messages (the ring uses kRingTagBase + 0/1).
constexpr int kMigrateTag = comm::kRingTagBase + 2;
/// Rebalancing decides on the median of each rank's last kSpeedSamples iteration speeds (after
/// the start or the last move). Before that many are in, one iteration's speeds suffice for a
/// gross imbalance (more than 1 + kQuickTolerance, e.g. a straggler), so that one is fixed
/// early, while the few-percent differences of a noisy machine wait for the median.
constexpr std::size_t kSpeedSamples = 3;
constexpr double kQuickTolerance = 0.5;
/// No rank's rebalancing target drops below this fraction of an even share.
constexpr double kMinShare = 0.1;

}  // namespace

LocalDocs Trainer::local_state(bool by_word) const {
    LocalDocs out;
    out.docs = local_docs_;
    const std::size_t n_docs = local_docs_.size();
    std::vector<std::uint64_t> len(n_docs, 0);
    for (const TokenBlock& b : blocks_)
        for (DocId d : b.docs) ++len[d];
    out.offsets.assign(n_docs + 1, 0);
    for (std::size_t d = 0; d < n_docs; ++d) out.offsets[d + 1] = out.offsets[d] + len[d];
    out.words.resize(out.offsets[n_docs]);
    out.topics.resize(out.offsets[n_docs]);
    std::vector<std::uint64_t> pos(out.offsets.begin(), out.offsets.end() - 1);
    for (const TokenBlock& b : blocks_) {
        for (std::size_t j = 0; j < b.num_words(); ++j) {
            const WordId w = global_word(b, j);
            for (auto t = b.word_offsets[j]; t < b.word_offsets[j + 1]; ++t) {
                const std::uint64_t at = pos[b.docs[t]]++;
                out.words[at] = w;
                out.topics[at] = b.topics[t];
            }
        }
    }
    if (!by_word) return out;
    // Stable by word: a (word, doc) pair's tokens keep their order in the block, so that
    // build_blocks puts every topic back on the token it came from and a restored run continues
    // exactly as the uninterrupted one (deterministic mode).
    std::vector<std::pair<WordId, TopicId>> doc;
    for (std::size_t d = 0; d < n_docs; ++d) {
        doc.clear();
        for (auto i = out.offsets[d]; i < out.offsets[d + 1]; ++i)
            doc.emplace_back(out.words[i], out.topics[i]);
        std::stable_sort(doc.begin(), doc.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < doc.size(); ++i) {
            out.words[out.offsets[d] + i] = doc[i].first;
            out.topics[out.offsets[d] + i] = doc[i].second;
        }
    }
    return out;
}

void Trainer::adopt(LocalDocs docs) {
    const std::uint32_t k_count = options_.params.num_topics;
    const std::size_t n_docs = docs.docs.size();
    std::vector<std::uint64_t> len(n_docs);
    for (std::size_t d = 0; d < n_docs; ++d) len[d] = docs.offsets[d + 1] - docs.offsets[d];
    const auto rows = sched::partition_rows(len, side_, row_seed());
    // Each token's topic travels with it into the new blocks.
    std::vector<TokenBlock> blocks =
        build_blocks(docs.offsets, docs.words, rows.group_of, col_of_word_,
                     static_cast<std::uint32_t>(side_), docs.topics);
    to_slice_local(blocks);
    blocks_ = std::move(blocks);
    index_stale_ = true;
    local_docs_ = std::move(docs.docs);
    local_tokens_ = docs.offsets[n_docs];
    doc_topic_ = DocTopicTable::from_blocks(k_count, static_cast<std::uint32_t>(n_docs), blocks_);
}

std::vector<std::vector<DocId>> Trainer::gather_doc_lists(std::span<const DocId> mine,
                                                          std::string& problem) {
    std::vector<std::vector<DocId>> lists =
        comm::allgather(comm_, std::vector<DocId>(mine.begin(), mine.end()), "document list");
    std::vector<std::uint8_t> seen(num_docs_, 0);
    std::uint64_t count = 0;
    problem.clear();
    for (int q = 0; q < ranks_; ++q) {
        for (DocId d : lists[q]) {
            if (d >= num_docs_ || seen[d] != 0) {
                if (problem.empty())
                    problem =
                        fmt::format("document {} of rank {} is out of range or on two ranks", d, q);
                continue;
            }
            seen[d] = 1;
            ++count;
        }
    }
    if (problem.empty() && count != num_docs_)
        problem = fmt::format("the ranks hold {} of the corpus' {} documents", count, num_docs_);
    return lists;
}

std::vector<std::byte> Trainer::write_documents(const LocalDocs& docs,
                                                std::span<const std::size_t> which) {
    std::size_t tokens = 0;
    for (std::size_t k : which) tokens += docs.offsets[k + 1] - docs.offsets[k];
    comm::WireWriter msg(16 + which.size() * 12 + tokens * 8);
    msg.put(kDocsMagic);
    msg.put_length(which.size());
    for (std::size_t k : which) {
        const std::size_t first = docs.offsets[k];
        const std::size_t len = docs.offsets[k + 1] - first;
        msg.put(docs.docs[k]);
        msg.put_length(len);
        msg.put_array(std::span<const WordId>(docs.words).subspan(first, len));
        msg.put_array(std::span<const TopicId>(docs.topics).subspan(first, len));
    }
    return msg.take();
}

void Trainer::read_documents(comm::WireReader& in, LocalDocs& out) const {
    const std::uint32_t k_count = options_.params.num_topics;
    in.expect_u32(kDocsMagic, "magic");
    // At least an id (4 bytes) and a length (8) per document.
    const std::size_t n_docs = in.get_length(12);
    for (std::size_t e = 0; e < n_docs; ++e) {
        const auto d = in.get<DocId>();
        if (d >= num_docs_) in.fail(fmt::format("document {} of {}", d, num_docs_));
        // A word and a topic per token.
        const std::size_t len = in.get_length(2 * sizeof(std::uint32_t));
        const std::size_t at = out.words.size();
        out.docs.push_back(d);
        out.words.resize(at + len);
        out.topics.resize(at + len);
        in.get_array(std::span<WordId>(out.words).subspan(at, len));
        in.get_array(std::span<TopicId>(out.topics).subspan(at, len));
        out.offsets.push_back(at + len);
        for (std::size_t x = at; x < at + len; ++x)
            if (out.words[x] >= num_words_ || out.topics[x] >= k_count)
                in.fail(fmt::format("document {}: word or topic out of range", d));
    }
}

void Trainer::share_doc_lists() {
    std::string problem;
    auto lists = gather_doc_lists(local_docs_, problem);
    if (!problem.empty()) throw CommError(rank_, problem);
    rank_docs_ = std::move(lists);
}

std::vector<DocTransfer> plan_rebalance(std::span<const std::uint64_t> tokens,
                                        std::span<const double> speeds, double tolerance,
                                        double min_share, std::uint64_t max_tokens) {
    const std::vector<double> target =
        sched::rebalance_targets(tokens, speeds, min_share, max_tokens);
    if (target.empty()) return {};
    const std::size_t ranks = tokens.size();
    std::vector<std::int64_t> excess(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        excess[q] = static_cast<std::int64_t>(tokens[q]) - std::llround(target[q]);
    const double imbalance = sched::rebalance_imbalance(tokens, speeds, min_share, max_tokens);
    if (imbalance <= 1 + tolerance) return {};
    std::vector<DocTransfer> plan;
    std::size_t i = 0;  // senders: excess > 0
    std::size_t j = 0;  // receivers: excess < 0
    for (;;) {
        while (i < ranks && excess[i] <= 0) ++i;
        while (j < ranks && excess[j] >= 0) ++j;
        if (i == ranks || j == ranks) break;
        const std::int64_t amount = std::min(excess[i], -excess[j]);
        plan.push_back(
            {static_cast<int>(i), static_cast<int>(j), static_cast<std::uint64_t>(amount)});
        excess[i] -= amount;
        excess[j] += amount;
    }
    return plan;
}

std::vector<DocTransfer> Trainer::decide_rebalance(bool moved) {
    // The iteration right after a move runs on freshly built blocks (first touch of their
    // pages): its speeds say little about the next ones, so it is not recorded.
    if (!moved) {
        for (int q = 0; q < ranks_; ++q) {
            const RankMetrics& m = rank_metrics_[q];
            auto& h = speed_history_[q];
            if (m.tokens_sampled > 0 && m.compute_s > 0)
                h.push_back(static_cast<double>(m.tokens_sampled) / m.compute_s);
            if (h.size() > kSpeedSamples) h.erase(h.begin());
        }
    }
    // Rank 0 decides and broadcasts: every rank executes the very same plan.
    std::vector<DocTransfer> plan;
    const std::uint32_t remaining =
        last_iteration_ > iterations_done_ ? last_iteration_ - iterations_done_ : 0;
    if (rank_ == 0 && remaining > 0) {
        std::vector<double> speeds(ranks_);
        std::vector<std::uint64_t> tokens(ranks_);
        bool ready = true;  // every rank measured at least once
        bool full = true;   // every rank measured kSpeedSamples times
        double iteration_s = 0;
        for (int q = 0; q < ranks_; ++q) {
            auto h = speed_history_[q];
            ready = ready && !h.empty();
            full = full && h.size() >= kSpeedSamples;
            iteration_s = std::max(iteration_s, rank_metrics_[q].iteration_s);
            if (h.empty()) continue;
            std::nth_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(h.size() / 2),
                             h.end());
            speeds[q] = h[h.size() / 2];
            tokens[q] = rank_metrics_[q].tokens;
        }
        // One iteration's speeds only before the first move, and only for a gross imbalance.
        const bool quick = ready && !full && rebalances_ == 0;
        const double tolerance = quick ? std::max(dist_.rebalance_tolerance, kQuickTolerance)
                                       : dist_.rebalance_tolerance;
        // Worth it only if the iterations left gain more than twice what the move costs: about
        // the time of the last move, or of one iteration before the first (a move rebuilds the
        // blocks, about as much work as a sweep).
        const double imbalance =
            ready ? sched::rebalance_imbalance(tokens, speeds, kMinShare, dist_.max_rank_tokens)
                  : 1.0;
        const double gain = iteration_s * (1 - 1 / imbalance) * remaining;
        const double cost = rebalances_ > 0 ? last_move_s_ : iteration_s;
        if ((full || quick) && gain > 2 * cost)
            plan = plan_rebalance(tokens, speeds, tolerance, kMinShare, dist_.max_rank_tokens);
    }
    comm::broadcast(comm_, plan, 0, "rebalancing plan");
    for (const DocTransfer& t : plan)
        if (t.from < 0 || t.from >= ranks_ || t.to < 0 || t.to >= ranks_)
            throw CommError(
                rank_,
                fmt::format("rebalancing plan: bad rank in the move from {} to {}", t.from, t.to));
    return plan;
}

std::uint64_t Trainer::move_documents(const std::vector<DocTransfer>& plan) {
    for (const DocTransfer& t : plan)
        if (t.from < 0 || t.from >= ranks_ || t.to < 0 || t.to >= ranks_ || t.from == t.to)
            throw ConfigError("move_documents",
                              fmt::format("bad move from rank {} to rank {}", t.from, t.to));
    if (plan.empty()) return 0;
    const std::uint64_t sent = migrate(plan);
    std::vector<std::int64_t> all{static_cast<std::int64_t>(sent)};
    comm_.allreduce_sum(all);
    if (all[0] > 0) {
        ++rebalances_;
        tokens_moved_ += static_cast<std::uint64_t>(all[0]);
    }
    for (auto& h : speed_history_) h.clear();  // the ranks' loads changed: measure anew
    return sent;
}

std::uint64_t Trainer::migrate(const std::vector<DocTransfer>& plan) {
    LocalDocs mine = local_state(/*by_word=*/false);  // any order: words travel with topics
    const std::size_t n_docs = mine.docs.size();
    const auto doc_len = [&](std::size_t d) { return mine.offsets[d + 1] - mine.offsets[d]; };
    // Outgoing: whole docs from the back of the rank's list, as near the planned tokens as
    // whole documents allow (a doc goes when it brings the sum closer to the plan).
    std::vector<std::uint8_t> leaving(n_docs, 0);
    std::vector<std::vector<std::byte>> out_bytes;
    std::vector<int> out_dest;
    std::uint64_t sent_total = 0;
    for (const DocTransfer& t : plan) {
        if (t.from != rank_) continue;
        std::vector<std::size_t> going;
        std::uint64_t sent = 0;
        for (std::size_t k = n_docs; k-- > 0 && sent < t.tokens;) {
            const std::uint64_t len = doc_len(k);
            if (leaving[k] != 0 || sent + len > t.tokens + len / 2) continue;
            leaving[k] = 1;
            sent += len;
            going.push_back(k);
        }
        sent_total += sent;
        out_bytes.push_back(write_documents(mine, going));
        out_dest.push_back(t.to);
    }
    std::vector<comm::Request> requests;
    std::vector<std::vector<std::byte>> in_bytes;
    std::vector<int> in_src;
    for (const DocTransfer& t : plan)
        if (t.to == rank_) in_src.push_back(t.from);
    in_bytes.resize(in_src.size());
    for (std::size_t i = 0; i < in_src.size(); ++i)
        requests.push_back(comm_.irecv(in_bytes[i], in_src[i], kMigrateTag));
    for (std::size_t i = 0; i < out_bytes.size(); ++i)
        requests.push_back(comm_.isend(out_bytes[i], out_dest[i], kMigrateTag));
    for (comm::Request& r : requests) comm_.wait(r);

    // The rank's new docs: the ones it keeps and the ones it received, by increasing global id.
    struct Entry {
        DocId doc;
        const std::uint32_t* words;
        const std::uint32_t* topics;
        std::uint32_t len;
    };
    std::vector<Entry> entries;
    for (std::size_t k = 0; k < n_docs; ++k)
        if (leaving[k] == 0)
            entries.push_back({mine.docs[k], mine.words.data() + mine.offsets[k],
                               mine.topics.data() + mine.offsets[k],
                               static_cast<std::uint32_t>(doc_len(k))});
    // Received documents, decoded whole (entries point into them).
    std::vector<LocalDocs> received(in_bytes.size());
    for (std::size_t i = 0; i < in_bytes.size(); ++i) {
        comm::WireReader in(in_bytes[i], fmt::format("documents from rank {}", in_src[i]), rank_);
        read_documents(in, received[i]);
        in.finish();
        in_bytes[i] = {};
        const LocalDocs& got = received[i];
        for (std::size_t e = 0; e < got.docs.size(); ++e)
            entries.push_back({got.docs[e], got.words.data() + got.offsets[e],
                               got.topics.data() + got.offsets[e],
                               static_cast<std::uint32_t>(got.offsets[e + 1] - got.offsets[e])});
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.doc < b.doc; });
    LocalDocs next;
    for (const Entry& e : entries) {
        next.docs.push_back(e.doc);
        next.words.insert(next.words.end(), e.words, e.words + e.len);
        next.topics.insert(next.topics.end(), e.topics, e.topics + e.len);
        next.offsets.push_back(next.words.size());
    }
    mine = LocalDocs{};
    received.clear();
    adopt(std::move(next));
    share_doc_lists();
    return sent_total;
}

void Trainer::restore(const core::Corpus& corpus, const std::vector<DocId>& docs,
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
    build_tables();
    iterations_done_ = iterations_done;
    for (auto& h : speed_history_) h.clear();
    pending_moves_.clear();
    if (timer_) {
        sched::TimerParams p = dist_.timer_params;
        p.initial_s = timer_budget;  // clamped to [min_s, max_s], as every budget is
        timer_.emplace(p, dist_.timer_always, dist_.rebalance_tolerance);
    }
}

}  // namespace rotor::lda
