// Checkpoints of a training run: enough to continue it exactly where it stopped.
//
// The state of a run is its options, the number of sweeps done and every token's topic; the
// tables are rebuilt from the topics, the grid from the corpus and the seed, and every random
// stream derives from (seed, iteration, block), so no generator state needs saving. In
// deterministic mode the tables' rows are kept in a canonical order, so a resumed run equals the
// uninterrupted one byte for byte.
//
// Directory layout (written with core::AtomicDirectory: the previous checkpoint stays in place
// until the new one is whole, then is replaced by two renames):
//   state.json   format, options, iterations done, corpus fingerprint
//   topics.bin   magic "ROTORCKP", u32 version, u64 blocks, then per block u64 n and n u32 topics
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/lda/trainer.h"
#include "core/corpus/corpus.h"

namespace rotor::lda {

/// Identifies a corpus cheaply but surely enough to refuse resuming on another one.
struct CorpusFingerprint {
    std::uint64_t docs = 0;
    std::uint64_t words = 0;
    std::uint64_t tokens = 0;
    std::uint64_t hash = 0;  ///< FNV-1a over doc offsets and word ids
    friend bool operator==(const CorpusFingerprint&, const CorpusFingerprint&) = default;
};
CorpusFingerprint fingerprint(const core::Corpus& corpus);

/// What a checkpoint holds.
struct Checkpoint {
    static constexpr int kFormatVersion = 1;
    TrainOptions options;       ///< as the run was started (iterations = its target)
    std::vector<double> alpha;  ///< α_k in force (may have been optimised)
    std::uint32_t iterations_done = 0;
    int grid_side = 0;
    CorpusFingerprint corpus;
    std::vector<std::vector<TopicId>> block_topics;  ///< per block, its tokens' topics
};

/// Writes `trainer`'s state to `dir` atomically. Throws SystemError.
void write_checkpoint(const std::string& dir, const Trainer& trainer, const TrainOptions& options,
                      const CorpusFingerprint& corpus);
/// Removes what killed runs left beside `dir`: `<dir>.tmp.<pid>.<n>` and `<dir>.old.<pid>.<n>`
/// directories whose process is gone (SIGKILL gives no chance to clean up). Returns how many.
int remove_stale_temporaries(const std::string& dir);
/// Reads a checkpoint directory. Throws InputError naming the file on anything malformed.
Checkpoint read_checkpoint(const std::string& dir);

}  // namespace rotor::lda
