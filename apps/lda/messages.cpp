#include "apps/lda/messages.h"

#include <fmt/format.h>

namespace rotor::lda {

namespace detail {

void read_packed_row(comm::WireReader& r, std::uint32_t num_topics,
                     std::vector<std::pair<TopicId, Count>>& row) {
    const auto m = r.get<std::uint32_t>();
    if (m > num_topics)
        r.fail(fmt::format("a row of {} nonzeros, more than the {} topics", m, num_topics));
    row.clear();
    for (std::uint32_t i = 0; i < m; ++i) {
        const auto k = r.get<TopicId>();
        const auto c = r.get<Count>();
        if (k >= num_topics || c == 0)
            r.fail(fmt::format("bad cell (topic {}, count {}) with K = {}", k, c, num_topics));
        row.emplace_back(k, c);
    }
}

}  // namespace detail

namespace {

// One field list per struct serves both directions, so encoding and decoding cannot disagree.
template <class M, class F>
void rank_metrics_fields(M& m, F&& field) {
    field(m.tokens);
    field(m.tokens_sampled);
    field(m.processed_ratio);
    field(m.iteration_s);
    field(m.compute_s);
    field(m.comm_s);
    field(m.wait_s);
    field(m.overhead_ratio);
    field(m.effective_ratio);
    field(m.load_cv);
    field(m.rebalance_s);
    field(m.tokens_moved_out);
    field(m.model_bytes);
}

template <class H, class F>
void heldout_fields(H& h, F&& field) {
    field(h.docs);
    field(h.fit_tokens);
    field(h.scored_tokens);
    field(h.loglik);
}

}  // namespace

void wire_encode(comm::WireWriter& w, const RankMetrics& m) {
    rank_metrics_fields(m, [&](const auto& x) { w.put(x); });
}

void wire_decode(comm::WireReader& r, RankMetrics& m) {
    rank_metrics_fields(m, [&](auto& x) { r.get(x); });
}

void wire_encode(comm::WireWriter& w, const HeldoutResult& h) {
    heldout_fields(h, [&](const auto& x) { w.put(x); });
}

void wire_decode(comm::WireReader& r, HeldoutResult& h) {
    heldout_fields(h, [&](auto& x) { r.get(x); });
}

void wire_encode(comm::WireWriter& w, const DocTransfer& t) {
    w.put(static_cast<std::int32_t>(t.from));
    w.put(static_cast<std::int32_t>(t.to));
    w.put(t.tokens);
}

void wire_decode(comm::WireReader& r, DocTransfer& t) {
    t.from = r.get<std::int32_t>();
    t.to = r.get<std::int32_t>();
    r.get(t.tokens);
}

}  // namespace rotor::lda
