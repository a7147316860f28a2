// The distributed trainer's documents (apps/lda/distributed_trainer.h): their grid-free layout
// (checkpoints, moves), moving them between ranks, and the rebalancing that decides the moves
// (docs/distributed.md, "Rebalancing").
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "apps/lda/distributed_trainer.h"
#include "apps/lda/distributed_wire.h"
#include "comm/ring.h"
#include "core/base/rng.h"
#include "sched/block_grid.h"

namespace rotor::lda {
namespace {

using detail::from_bytes;
using detail::kRowStream;
using detail::to_bytes;

/// First word of every message of moving documents, then the doc count, then per doc its
/// global id, its length n, n word ids and n topics.
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

LocalDocs DistributedTrainer::local_state(bool by_word) const {
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
    std::vector<std::pair<WordId, TopicId>> doc;
    for (std::size_t d = 0; d < n_docs; ++d) {
        doc.clear();
        for (auto i = out.offsets[d]; i < out.offsets[d + 1]; ++i)
            doc.emplace_back(out.words[i], out.topics[i]);
        std::sort(doc.begin(), doc.end());
        for (std::size_t i = 0; i < doc.size(); ++i) {
            out.words[out.offsets[d] + i] = doc[i].first;
            out.topics[out.offsets[d] + i] = doc[i].second;
        }
    }
    return out;
}

void DistributedTrainer::adopt(LocalDocs docs) {
    const std::uint32_t k_count = options_.params.num_topics;
    const std::size_t n_docs = docs.docs.size();
    std::vector<std::uint64_t> len(n_docs);
    for (std::size_t d = 0; d < n_docs; ++d) len[d] = docs.offsets[d + 1] - docs.offsets[d];
    const auto rows = sched::partition_rows(
        len, side_,
        Rng::from({options_.seed, kRowStream, static_cast<std::uint64_t>(rank_)}).next());
    // Each token's topic travels with it into the new blocks.
    std::vector<TokenBlock> blocks =
        build_blocks(docs.offsets, docs.words, rows.group_of, col_of_word_,
                     static_cast<std::uint32_t>(side_), docs.topics);
    to_slice_local(blocks);
    blocks_ = std::move(blocks);
    local_docs_ = std::move(docs.docs);
    local_tokens_ = docs.offsets[n_docs];
    doc_topic_ = DocTopicTable::from_blocks(k_count, static_cast<std::uint32_t>(n_docs), blocks_);
}

std::vector<std::vector<DocId>> DistributedTrainer::gather_doc_lists(std::span<const DocId> mine,
                                                                     std::string& problem) {
    const auto all = comm_.allgather(std::as_bytes(mine));
    std::vector<std::vector<DocId>> lists(ranks_);
    std::vector<std::uint8_t> seen(num_docs_, 0);
    std::uint64_t count = 0;
    problem.clear();
    for (int q = 0; q < ranks_; ++q) {
        if (all[q].size() % sizeof(DocId) != 0)
            throw CommError(rank_, fmt::format("document list of rank {}: bad size", q));
        lists[q].resize(all[q].size() / sizeof(DocId));
        if (!all[q].empty()) std::memcpy(lists[q].data(), all[q].data(), all[q].size());
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

void DistributedTrainer::share_doc_lists() {
    std::string problem;
    auto lists = gather_doc_lists(local_docs_, problem);
    if (!problem.empty()) throw CommError(rank_, problem);
    rank_docs_ = std::move(lists);
}

namespace {

/// Each rank's target token count for plan_rebalance / rebalance_imbalance (empty when there is
/// nothing to balance).
std::vector<double> rebalance_targets(std::span<const std::uint64_t> tokens,
                                      std::span<const double> speeds, double min_share,
                                      std::uint64_t max_tokens) {
    const std::size_t ranks = tokens.size();
    ROTOR_ASSERT(speeds.size() == ranks, "rebalancing: one speed per rank");
    const double total_speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    const std::uint64_t total = std::accumulate(tokens.begin(), tokens.end(), std::uint64_t{0});
    if (ranks < 2 || !(total_speed > 0) || total == 0) return {};
    std::vector<double> share(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        share[q] = std::max(speeds[q] / total_speed, min_share / static_cast<double>(ranks));
    const double share_sum = std::accumulate(share.begin(), share.end(), 0.0);
    std::vector<double> target(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        target[q] = static_cast<double>(total) * share[q] / share_sum;
    const double cap = static_cast<double>(max_tokens);
    if (max_tokens == 0 || cap * static_cast<double>(ranks) < static_cast<double>(total))
        return target;
    // Water-filling: ranks over the cap are held at it, their excess shared out by the others'
    // shares, until none is over (at most P rounds).
    std::vector<std::uint8_t> capped(ranks, 0);
    for (std::size_t round = 0; round < ranks; ++round) {
        double excess = 0;
        double free_share = 0;
        for (std::size_t q = 0; q < ranks; ++q) {
            if (target[q] > cap) {
                excess += target[q] - cap;
                target[q] = cap;
                capped[q] = 1;
            }
            if (capped[q] == 0) free_share += share[q];
        }
        if (excess <= 0 || free_share <= 0) break;
        for (std::size_t q = 0; q < ranks; ++q)
            if (capped[q] == 0) target[q] += excess * share[q] / free_share;
    }
    return target;
}

}  // namespace

double rebalance_imbalance(std::span<const std::uint64_t> tokens, std::span<const double> speeds,
                           double min_share, std::uint64_t max_tokens) {
    const std::vector<double> target = rebalance_targets(tokens, speeds, min_share, max_tokens);
    double imbalance = 1;
    for (std::size_t q = 0; q < target.size(); ++q)
        imbalance = std::max(imbalance, static_cast<double>(tokens[q]) / std::max(target[q], 1.0));
    return imbalance;
}

std::vector<DocTransfer> plan_rebalance(std::span<const std::uint64_t> tokens,
                                        std::span<const double> speeds, double tolerance,
                                        double min_share, std::uint64_t max_tokens) {
    const std::vector<double> target = rebalance_targets(tokens, speeds, min_share, max_tokens);
    if (target.empty()) return {};
    const std::size_t ranks = tokens.size();
    std::vector<std::int64_t> excess(ranks);
    for (std::size_t q = 0; q < ranks; ++q)
        excess[q] = static_cast<std::int64_t>(tokens[q]) - std::llround(target[q]);
    const double imbalance = rebalance_imbalance(tokens, speeds, min_share, max_tokens);
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

std::vector<DocTransfer> DistributedTrainer::decide_rebalance(bool moved) {
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
    std::vector<std::uint64_t> msg;
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
            ready ? rebalance_imbalance(tokens, speeds, kMinShare, dist_.max_rank_tokens) : 1.0;
        const double gain = iteration_s * (1 - 1 / imbalance) * remaining;
        const double cost = rebalances_ > 0 ? last_move_s_ : iteration_s;
        if ((full || quick) && gain > 2 * cost)
            for (const DocTransfer& t :
                 plan_rebalance(tokens, speeds, tolerance, kMinShare, dist_.max_rank_tokens)) {
                msg.push_back(static_cast<std::uint64_t>(t.from));
                msg.push_back(static_cast<std::uint64_t>(t.to));
                msg.push_back(t.tokens);
            }
    }
    std::vector<std::byte> buf(msg.size() * sizeof(std::uint64_t));
    if (!buf.empty()) std::memcpy(buf.data(), msg.data(), buf.size());
    comm_.broadcast(buf, 0);
    if (buf.size() % (3 * sizeof(std::uint64_t)) != 0)
        throw CommError(rank_, "rebalancing plan: bad size");
    msg.resize(buf.size() / sizeof(std::uint64_t));
    if (!buf.empty()) std::memcpy(msg.data(), buf.data(), buf.size());
    std::vector<DocTransfer> plan;
    for (std::size_t i = 0; i < msg.size(); i += 3) {
        if (msg[i] >= static_cast<std::uint64_t>(ranks_) ||
            msg[i + 1] >= static_cast<std::uint64_t>(ranks_))
            throw CommError(rank_, "rebalancing plan: bad rank");
        plan.push_back({static_cast<int>(msg[i]), static_cast<int>(msg[i + 1]), msg[i + 2]});
    }
    return plan;
}

std::uint64_t DistributedTrainer::move_documents(const std::vector<DocTransfer>& plan) {
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

std::uint64_t DistributedTrainer::migrate(const std::vector<DocTransfer>& plan) {
    LocalDocs mine = local_state(/*by_word=*/false);  // any order: words travel with topics
    const std::size_t n_docs = mine.docs.size();
    const auto doc_len = [&](std::size_t d) { return mine.offsets[d + 1] - mine.offsets[d]; };
    // Outgoing: whole docs from the back of the rank's list, as near the planned tokens as
    // whole documents allow (a doc goes when it brings the sum closer to the plan).
    std::vector<std::uint8_t> leaving(n_docs, 0);
    std::vector<std::vector<std::uint32_t>> out_words;
    std::vector<int> out_dest;
    std::uint64_t sent_total = 0;
    for (const DocTransfer& t : plan) {
        if (t.from != rank_) continue;
        std::vector<std::uint32_t> msg{kDocsMagic, 0};
        std::uint64_t sent = 0;
        for (std::size_t k = n_docs; k-- > 0 && sent < t.tokens;) {
            const std::uint64_t len = doc_len(k);
            if (leaving[k] != 0 || sent + len > t.tokens + len / 2) continue;
            leaving[k] = 1;
            sent += len;
            ++msg[1];
            msg.push_back(mine.docs[k]);
            msg.push_back(static_cast<std::uint32_t>(len));
            const auto first = static_cast<std::ptrdiff_t>(mine.offsets[k]);
            const auto last = static_cast<std::ptrdiff_t>(mine.offsets[k + 1]);
            msg.insert(msg.end(), mine.words.begin() + first, mine.words.begin() + last);
            msg.insert(msg.end(), mine.topics.begin() + first, mine.topics.begin() + last);
        }
        sent_total += sent;
        out_words.push_back(std::move(msg));
        out_dest.push_back(t.to);
    }
    std::vector<std::vector<std::byte>> out_bytes;
    for (const auto& m : out_words) out_bytes.push_back(to_bytes(m));
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
    std::vector<std::vector<std::uint32_t>> in_words(in_bytes.size());
    const std::uint32_t k_count = options_.params.num_topics;
    for (std::size_t i = 0; i < in_bytes.size(); ++i) {
        from_bytes(in_bytes[i], in_words[i], rank_, "moved documents");
        const auto& in = in_words[i];
        const auto bad = [&](const char* what) {
            return CommError(rank_, fmt::format("documents from rank {}: {}", in_src[i], what));
        };
        if (in.size() < 2 || in[0] != kDocsMagic) throw bad("bad header");
        std::size_t pos = 2;
        for (std::uint32_t e = 0; e < in[1]; ++e) {
            if (in.size() - pos < 2) throw bad("truncated");
            const DocId d = in[pos];
            const std::uint32_t len = in[pos + 1];
            pos += 2;
            if (d >= num_docs_ || (in.size() - pos) / 2 < len) throw bad("bad document");
            for (std::uint32_t x = 0; x < len; ++x)
                if (in[pos + x] >= num_words_ || in[pos + len + x] >= k_count)
                    throw bad("word or topic out of range");
            entries.push_back({d, in.data() + pos, in.data() + pos + len, len});
            pos += 2 * static_cast<std::size_t>(len);
        }
        if (pos != in.size()) throw bad("trailing words");
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
    adopt(std::move(next));
    share_doc_lists();
    return sent_total;
}

}  // namespace rotor::lda
