// Internal to the LDA trainer's sources (trainer*.cpp, documents.cpp, evaluation.cpp): the wire
// encodings of the structs its messages carry (comm/wire.h; found by argument-dependent lookup,
// so comm's typed collectives take them as they are) and the metrics summary of an iteration.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "apps/lda/trainer.h"
#include "comm/wire.h"
#include "core/lda/heldout.h"

namespace rotor::lda {

namespace detail {

/// Reads one row written by WordTopicTable::pack_rows (its nonzero count m, then m (topic,
/// count) pairs, raw u32 words) into `row` (cleared); topics must be < `num_topics` and counts
/// nonzero, or the reader fails naming its message.
void read_packed_row(comm::WireReader& r, std::uint32_t num_topics,
                     std::vector<std::pair<TopicId, Count>>& row);

/// The iteration's metrics from every rank's (`per_rank`, the same on every rank): maxima,
/// means and per-rank arrays (docs/distributed.md, "Metrics").
train::Record summarize_ranks(const std::vector<RankMetrics>& per_rank, std::uint32_t iter,
                              std::uint64_t sampled_all, double ratio_all, double s_error,
                              double budget_s);

}  // namespace detail

// Field by field, in declaration order.
void wire_encode(comm::WireWriter& w, const RankMetrics& m);
void wire_decode(comm::WireReader& r, RankMetrics& m);
void wire_encode(comm::WireWriter& w, const HeldoutResult& h);
void wire_decode(comm::WireReader& r, HeldoutResult& h);
/// Ranks must be in [0, P) of the reading rank's communicator: checked where the plan is used.
void wire_encode(comm::WireWriter& w, const DocTransfer& t);
void wire_decode(comm::WireReader& r, DocTransfer& t);

}  // namespace rotor::lda
