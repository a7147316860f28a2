// Slice storage: a rank holds the word-topic tables of the slices it holds (one slice of every
// word for one process; its two home slices between iterations with P > 1), each indexed by
// slice-local word id with rows sized by the global frequencies, so any slice fits on any rank;
// the tables' first build (summed on each slice's home rank) and the ring's slice messages.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "apps/lda/messages.h"
#include "apps/lda/trainer.h"
#include "comm/collectives.h"
#include "comm/wire.h"

namespace rotor::lda {
namespace {

/// First field of every slice message (u32), then the slice id (u32), then pack_rows' output
/// (a vector of u32).
constexpr std::uint32_t kSliceMagic = 0x534c4943;  // "SLIC"

}  // namespace

std::unique_ptr<WordTopicTable> Trainer::new_slice_table(int s) const {
    // Rows get their kind and capacity from the GLOBAL frequency, so any slice fits on any rank.
    const auto& words = slice_words_[s];
    std::vector<std::uint64_t> freqs(words.size());
    for (std::size_t i = 0; i < words.size(); ++i) freqs[i] = word_freq_[words[i]];
    return std::make_unique<WordTopicTable>(options_.params.num_topics, freqs);
}

Count Trainer::word_count(WordId w, TopicId k) const {
    for (int s = 0; s < num_slices(); ++s) {
        if (!held_[s]) continue;
        const auto& words = slice_words_[s];
        const auto it = std::lower_bound(words.begin(), words.end(), w);
        if (it != words.end() && *it == w)
            return held_[s]->get(static_cast<WordId>(it - words.begin()), k);
    }
    return 0;
}

std::size_t Trainer::model_bytes() const {
    std::size_t bytes = 0;
    for (const auto& table : held_)
        if (table) bytes += table->memory_bytes();
    return bytes;
}

void Trainer::init_word_topic() {
    const std::uint32_t k_count = options_.params.num_topics;
    held_.clear();
    held_.resize(num_slices());
    // Every rank's counts of slice s are summed on its home rank s / 2, which alone then holds
    // slice s' table. One slice at a time: at most one temporary slice table on top of the
    // held ones.
    std::vector<Count> acc(k_count, 0);
    std::vector<std::uint32_t> merged;
    std::vector<std::pair<TopicId, Count>> cells;
    std::vector<std::uint32_t> slot_of;  // add_tokens' scratch
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
                                                        b.word_offsets[i + 1] - b.word_offsets[i]),
                                         slot_of);
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

std::vector<std::byte> Trainer::pack_slice(int slice) {
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

void Trainer::unpack_slice(int slice, std::span<const std::byte> buf) {
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

}  // namespace rotor::lda
