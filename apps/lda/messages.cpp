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

void wire_encode(comm::WireWriter& w, const RankMetrics& m) {
    w.put(m.tokens);
    w.put(m.tokens_sampled);
    w.put(m.processed_ratio);
    w.put(m.iteration_s);
    w.put(m.compute_s);
    w.put(m.comm_s);
    w.put(m.wait_s);
    w.put(m.overhead_ratio);
    w.put(m.effective_ratio);
    w.put(m.load_cv);
    w.put(m.rebalance_s);
    w.put(m.tokens_moved_out);
    w.put(m.model_bytes);
}

void wire_decode(comm::WireReader& r, RankMetrics& m) {
    r.get(m.tokens);
    r.get(m.tokens_sampled);
    r.get(m.processed_ratio);
    r.get(m.iteration_s);
    r.get(m.compute_s);
    r.get(m.comm_s);
    r.get(m.wait_s);
    r.get(m.overhead_ratio);
    r.get(m.effective_ratio);
    r.get(m.load_cv);
    r.get(m.rebalance_s);
    r.get(m.tokens_moved_out);
    r.get(m.model_bytes);
}

void wire_encode(comm::WireWriter& w, const HeldoutResult& h) {
    w.put(h.docs);
    w.put(h.fit_tokens);
    w.put(h.scored_tokens);
    w.put(h.loglik);
}

void wire_decode(comm::WireReader& r, HeldoutResult& h) {
    r.get(h.docs);
    r.get(h.fit_tokens);
    r.get(h.scored_tokens);
    r.get(h.loglik);
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
