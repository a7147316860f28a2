// The trainer's results (apps/lda/trainer.h): the log-likelihood, the model gathered on rank 0
// (written straight from the tables by one process), held-out evaluation, top words, α, the
// block timeline, and the metrics summary of a ring iteration. Every message is written
// with comm::WireWriter and read with comm::WireReader or comm's typed collectives.
#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include <fmt/format.h>

#include "apps/lda/messages.h"
#include "apps/lda/parallel_sum.h"
#include "apps/lda/trainer.h"
#include "comm/collectives.h"
#include "comm/wire.h"
#include "core/lda/inference.h"
#include "sched/runtime.h"
#include "train/ring_iteration.h"

namespace rotor::lda {

train::Record detail::summarize_ranks(const std::vector<RankMetrics>& per_rank, std::uint32_t iter,
                                      std::uint64_t sampled_all, double ratio_all, double s_error,
                                      double budget_s) {
    std::uint64_t moved_all = 0;
    double rebalance_max = 0;
    std::vector<train::RingRankTimes> times;
    std::vector<double> tokens, model;
    for (const RankMetrics& r : per_rank) {
        moved_all += r.tokens_moved_out;
        rebalance_max = std::max(rebalance_max, r.rebalance_s);
        times.push_back({.iteration_s = r.iteration_s,
                         .compute_s = r.compute_s,
                         .comm_s = r.comm_s,
                         .wait_s = r.wait_s,
                         .effective_ratio = r.effective_ratio,
                         .load_cv = r.load_cv,
                         .overhead_ratio = r.overhead_ratio,
                         .processed_ratio = r.processed_ratio});
        tokens.push_back(static_cast<double>(r.tokens));
        model.push_back(static_cast<double>(r.model_bytes));
    }
    train::Record m;
    m.iter = iter;
    m.set("s_error", s_error);
    train::add_ring_ranks(m, times, budget_s);
    m.processed = sampled_all;
    m.per_s = m.iteration_s > 0 ? sampled_all / m.iteration_s : 0;
    m.processed_ratio = ratio_all;
    m.set("tokens_moved", static_cast<double>(moved_all));
    m.set("rebalance_s", rebalance_max);
    m.set("model_bytes_max", *std::max_element(model.begin(), model.end()));
    m.set_array("rank_tokens", std::move(tokens));
    m.set_array("rank_model_bytes", std::move(model));
    return m;
}

LdaModel Trainer::model_shell(std::vector<std::string> vocab, std::string corpus_path) const {
    LdaModel model;
    model.info.num_topics = options_.params.num_topics;
    model.info.alpha = alpha_;
    model.info.beta = options_.params.beta;
    model.info.num_words = num_words_;
    model.info.num_docs = num_docs_;
    model.info.num_tokens = num_tokens_;
    model.info.iterations = iterations_done_;
    model.info.seed = options_.seed;
    model.info.init = init_method_name(options_.init.method);
    model.info.init_doc_topics =
        options_.init.method == InitMethod::kSparse ? options_.init.doc_topics : 0;
    model.info.init_word_prior =
        options_.init.method == InitMethod::kSequential ? options_.init.word_prior : 0;
    model.info.corpus = std::move(corpus_path);
    model.vocab = std::move(vocab);
    model.doc_labels = all_labels_;
    model.topic_totals = totals_;
    return model;
}

LdaModel Trainer::local_model(std::vector<std::string> vocab, std::string corpus_path) const {
    // One process holds every row: straight into the model, one row at a time, no messages.
    LdaModel model = model_shell(std::move(vocab), std::move(corpus_path));
    // Exact sizes first: vectors grown by doubling would hold up to twice the counts, three
    // times while moving (estimate_finish_memory counts the exact size).
    std::uint64_t word_nnz = 0;
    for (WordId w = 0; w < num_words_; ++w) word_nnz += held_[0]->nonzeros(w);
    std::uint64_t doc_nnz = 0;
    for (DocId d = 0; d < doc_topic_.num_docs(); ++d) doc_nnz += doc_topic_.row(d).size();
    model.word_topic.offsets.reserve(std::uint64_t{num_words_} + 1);
    model.word_topic.topics.reserve(word_nnz);
    model.word_topic.counts.reserve(word_nnz);
    model.doc_topic.offsets.reserve(std::uint64_t{doc_topic_.num_docs()} + 1);
    model.doc_topic.topics.reserve(doc_nnz);
    model.doc_topic.counts.reserve(doc_nnz);
    std::vector<std::pair<TopicId, Count>> row;
    for (WordId w = 0; w < num_words_; ++w) {
        row.clear();
        held_[0]->for_each_nonzero(w, [&](TopicId k, Count n) { row.emplace_back(k, n); });
        std::sort(row.begin(), row.end());
        model.word_topic.add_row(row);
    }
    for (DocId d = 0; d < doc_topic_.num_docs(); ++d) {
        row.clear();
        for (const TopicCount& e : doc_topic_.row(d)) row.emplace_back(e.topic, e.count);
        std::sort(row.begin(), row.end());
        model.doc_topic.add_row(row);
    }
    return model;
}

LdaModel Trainer::gather_model(std::vector<std::string> vocab, std::string corpus_path) {
    if (ranks_ == 1) return local_model(std::move(vocab), std::move(corpus_path));
    const std::uint32_t k_count = options_.params.num_topics;
    // Word rows of the home slices (pack_rows' raw words), then doc rows in local order.
    scratch_.clear();
    for (const int s : home_slices(rank_)) {
        ROTOR_ASSERT(held_[s] != nullptr, "a home slice is not held between iterations");
        held_[s]->pack_rows(slice_ids(s), scratch_);
    }
    comm::WireWriter words_out(scratch_.size() * sizeof(std::uint32_t));
    words_out.put_array(std::span<const std::uint32_t>(scratch_));
    std::vector<std::vector<std::pair<TopicId, Count>>> word_rows;
    if (rank_ == 0) word_rows.resize(num_words_);
    comm::gather_messages(comm_, words_out.bytes(), 0, "model gather: word rows",
                          [&](int q, comm::WireReader& r) {
                              for (const int s : home_slices(q)) {
                                  for (WordId w : slice_words_[s]) {
                                      detail::read_packed_row(r, k_count, word_rows[w]);
                                      std::sort(word_rows[w].begin(), word_rows[w].end());
                                  }
                              }
                          });
    comm::WireWriter docs_out;
    for (DocId d = 0; d < doc_topic_.num_docs(); ++d) {
        const auto row = doc_topic_.row(d);
        docs_out.put(static_cast<std::uint32_t>(row.size()));
        for (const TopicCount& e : row) {
            docs_out.put(e.topic);
            docs_out.put(e.count);
        }
    }
    std::vector<std::vector<std::pair<TopicId, Count>>> doc_rows;
    if (rank_ == 0) doc_rows.resize(num_docs_);
    comm::gather_messages(comm_, docs_out.bytes(), 0, "model gather: doc rows",
                          [&](int q, comm::WireReader& r) {
                              for (DocId d : rank_docs_[q]) {
                                  detail::read_packed_row(r, k_count, doc_rows[d]);
                                  std::sort(doc_rows[d].begin(), doc_rows[d].end());
                              }
                          });
    if (rank_ != 0) return LdaModel{};
    LdaModel model = model_shell(std::move(vocab), std::move(corpus_path));
    for (const auto& row : word_rows) model.word_topic.add_row(row);
    for (const auto& row : doc_rows) model.doc_topic.add_row(row);
    return model;
}

TopicWordDistribution Trainer::heldout_phi(std::span<const WordId> wanted) {
    const std::uint32_t k_count = options_.params.num_topics;
    // The slice-local ids of the held-out words of slice s (both sides agree on the order).
    const auto wanted_ids = [&](int s) {
        const auto& sw = slice_words_[s];
        std::vector<WordId> out;
        std::size_t j = 0;
        for (std::size_t i = 0; i < sw.size() && j < wanted.size(); ++i) {
            while (j < wanted.size() && wanted[j] < sw[i]) ++j;
            if (j < wanted.size() && wanted[j] == sw[i]) out.push_back(static_cast<WordId>(i));
        }
        return out;
    };
    // Every rank sends every rank the held-out rows of its home slices.
    scratch_.clear();
    for (const int s : home_slices(rank_)) {
        ROTOR_ASSERT(held_[s] != nullptr, "a home slice is not held between iterations");
        held_[s]->pack_rows(wanted_ids(s), scratch_);
    }
    comm::WireWriter rows_out(scratch_.size() * sizeof(std::uint32_t));
    rows_out.put_array(std::span<const std::uint32_t>(scratch_));
    // The rows as they arrive: each row's cells in the order its table keeps them, as
    // phi_from_table reads them.
    struct RowAt {
        WordId word;
        std::size_t first;  // into cells
        std::size_t size;
    };
    std::vector<RowAt> at;
    at.reserve(wanted.size());
    std::vector<std::pair<TopicId, Count>> cells;
    std::vector<std::pair<TopicId, Count>> row;
    comm::allgather_messages(
        comm_, rows_out.bytes(), "held-out rows", [&](int q, comm::WireReader& r) {
            for (const int s : home_slices(q)) {
                for (WordId i : wanted_ids(s)) {
                    detail::read_packed_row(r, k_count, row);
                    at.push_back({slice_words_[s][i], cells.size(), row.size()});
                    cells.insert(cells.end(), row.begin(), row.end());
                }
            }
        });
    // φ of the held-out words only (V = the global W), rows appended in increasing word id.
    std::sort(at.begin(), at.end(), [](const RowAt& a, const RowAt& b) { return a.word < b.word; });
    const std::vector<double> totals(totals_.begin(), totals_.end());
    TopicWordDistribution phi(num_words_, totals, options_.params.beta);
    std::vector<std::pair<TopicId, double>> phi_row;
    for (const RowAt& r : at) {
        phi_row.clear();
        for (std::size_t e = r.first; e < r.first + r.size; ++e)
            phi_row.emplace_back(cells[e].first, static_cast<double>(cells[e].second));
        phi.append_row(r.word, phi_row);
    }
    return phi;
}

HeldoutResult Trainer::evaluate_heldout(const HeldoutEvaluator& heldout) {
    // Every rank builds φ of the held-out words and folds in its share of the held-out
    // documents (contiguous, about equal in tokens); rank 0 adds the per-document results in
    // document order, so the total does not depend on how the documents were split.
    const TopicWordDistribution phi = heldout_phi(heldout.words());
    const RangeLoop loop = [this](std::int64_t b, std::int64_t e,
                                  const std::function<void(std::int64_t, std::int64_t)>& fn) {
        runtime_.parallel_for(b, e, fn);
    };
    const core::Corpus& docs = heldout.corpus();
    const std::uint64_t total = docs.num_tokens();
    const auto cut = [&](int q) {
        // The first doc whose preceding tokens reach q/P of the total.
        if (q >= ranks_) return docs.num_docs();
        const std::uint64_t want = total * static_cast<std::uint64_t>(q) / ranks_;
        std::uint64_t seen = 0;
        DocId d = 0;
        while (d < docs.num_docs() && seen < want) seen += docs.doc_length(d++);
        return d;
    };
    const std::vector<HeldoutResult> mine =
        heldout.evaluate_docs(phi, alpha_, cut(rank_), cut(rank_ + 1), loop);
    const auto per_rank = comm::gather(comm_, mine, 0, "held-out results");
    HeldoutResult result;
    if (rank_ == 0) {
        std::vector<HeldoutResult> all;
        for (const auto& part : per_rank) all.insert(all.end(), part.begin(), part.end());
        if (all.size() != docs.num_docs())
            throw CommError(rank_, fmt::format("held-out results: {} for {} documents", all.size(),
                                               docs.num_docs()));
        result = HeldoutEvaluator::sum(all);
    }
    comm::broadcast(comm_, result, 0, "held-out result");
    return result;
}

std::vector<std::vector<WordId>> Trainer::top_words(std::size_t top) {
    const std::uint32_t k_count = options_.params.num_topics;
    TopCounts mine(k_count, top);
    for (const int slice : home_slices(rank_)) {
        ROTOR_ASSERT(held_[slice] != nullptr, "a home slice is not held between iterations");
        const auto& words = slice_words_[slice];
        for (std::size_t i = 0; i < words.size(); ++i)
            held_[slice]->for_each_nonzero(static_cast<WordId>(i),
                                           [&](TopicId k, Count n) { mine.offer(k, n, words[i]); });
    }
    // Message: per topic its entry count m (u32), then m (count, word) pairs.
    comm::WireWriter out;
    for (const auto& entries : std::move(mine).take_sorted()) {
        out.put(static_cast<std::uint32_t>(entries.size()));
        for (const auto& [n, w] : entries) {
            out.put(n);
            out.put(w);
        }
    }
    // Every word of a global top is in its home rank's top, so merging the tops is exact.
    TopCounts all(k_count, top);
    comm::gather_messages(comm_, out.bytes(), 0, "top words", [&](int, comm::WireReader& r) {
        for (TopicId k = 0; k < k_count; ++k) {
            const auto m = r.get<std::uint32_t>();
            if (m > top) r.fail(fmt::format("topic {} has {} entries, more than {}", k, m, top));
            for (std::uint32_t i = 0; i < m; ++i) {
                const auto n = r.get<Count>();
                all.offer(k, n, r.get<WordId>());
            }
        }
    });
    std::vector<std::vector<WordId>> out_words;
    if (rank_ != 0) return out_words;
    for (const auto& entries : std::move(all).take_sorted()) {
        out_words.emplace_back();
        for (const auto& [n, w] : entries) out_words.back().push_back(w);
    }
    return out_words;
}

DocTopicHistograms Trainer::doc_topic_histograms() {
    const std::uint32_t k_count = options_.params.num_topics;
    DocTopicHistograms h = lda::doc_topic_histograms(doc_topic_);
    // Pad every histogram to its longest over the ranks, then sum element-wise.
    std::vector<std::int64_t> len(k_count + 1);
    for (std::uint32_t k = 0; k < k_count; ++k)
        len[k] = static_cast<std::int64_t>(h.topic_counts[k].size());
    len[k_count] = static_cast<std::int64_t>(h.doc_lengths.size());
    comm_.allreduce_max(len);
    std::vector<std::int64_t> flat;
    flat.reserve(
        static_cast<std::size_t>(std::accumulate(len.begin(), len.end(), std::int64_t{0})));
    const auto append = [&](std::vector<std::uint64_t>& v, std::int64_t n) {
        v.resize(static_cast<std::size_t>(n), 0);
        for (std::uint64_t x : v) flat.push_back(static_cast<std::int64_t>(x));
    };
    for (std::uint32_t k = 0; k < k_count; ++k) append(h.topic_counts[k], len[k]);
    append(h.doc_lengths, len[k_count]);
    comm_.allreduce_sum(flat);
    std::size_t pos = 0;
    const auto take = [&](std::vector<std::uint64_t>& v) {
        for (auto& x : v) x = static_cast<std::uint64_t>(flat[pos++]);
    };
    for (std::uint32_t k = 0; k < k_count; ++k) take(h.topic_counts[k]);
    take(h.doc_lengths);
    return h;
}

bool Trainer::optimize_alpha(const AlphaOptimizerOptions& options) {
    options.validate();  // on every rank alike, before any collective
    const DocTopicHistograms hist = doc_topic_histograms();
    // Rank 0 computes and broadcasts: every rank gets bit-identical α, whatever its libm. The
    // message: 1 or 0 (updated or not), then α.
    std::vector<double> msg;
    if (rank_ == 0) {
        const AlphaOptimizerResult r = lda::optimize_alpha(hist, alpha_, options);
        msg.push_back(r.updated ? 1.0 : 0.0);
        msg.insert(msg.end(), r.alpha.begin(), r.alpha.end());
    }
    comm::broadcast(comm_, msg, 0, "optimised alpha");
    if (msg.size() != alpha_.size() + 1)
        throw CommError(rank_, fmt::format("optimised alpha from rank 0: {} values for {} topics",
                                           msg.size(), alpha_.size()));
    if (msg[0] == 0.0) return false;
    set_alpha(std::vector<double>(msg.begin() + 1, msg.end()));
    return true;
}

std::vector<std::vector<train::BlockRun>> Trainer::gather_schedule() {
    return comm::gather(comm_, schedule_, 0, "timeline");
}

LogLikelihood Trainer::evaluate() {
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

}  // namespace rotor::lda
