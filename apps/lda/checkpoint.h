// Checkpoints of a training run: enough to continue it exactly where it stopped, on any number
// of ranks (one process is one rank).
//
// The state of a run is its options, the number of sweeps done and every token's topic; the
// tables are rebuilt from the topics, the grid from the corpus and the seed, and every random
// stream derives from (seed, iteration, block), so no generator state needs saving. In
// deterministic mode (one process) the tables' rows are kept in a canonical order, and the
// topics are listed in the order of the tokens in their blocks, so a resumed run equals the
// uninterrupted one byte for byte.
//
// One format (docs/formats.md, "Checkpoints"): a directory with one part per rank and a manifest.
//   part-<rank>.bin  magic "ROTORDCP", u32 version, u32 rank, u32 ranks, u32 iterations done,
//                    u64 D and the rank's D documents' global ids (u32, increasing), u64 N and
//                    N u32 topics: per document, its tokens' topics in the order of the tokens
//                    sorted by word id, a word's tokens in their order in the blocks
//                    (Trainer::local_state). Documents are listed, not implied by the grid,
//                    because rebalancing moves them, and so that any number of ranks can resume.
//   state.json       format "rotor-lda-checkpoint", format_version 3: options (with --init,
//                    --init-doc-topics and --init-word-prior since they were recorded; older
//                    ones read as random), α,
//                    iterations done, P, columns per slice, timer settings and budget, corpus
//                    fingerprint, and per part its file, size and FNV-1a hash
// The framing is train::write_checkpoint_dir's (train/checkpoint_dir.h): parts written whole,
// the manifest last, the directory renamed into place, every failure agreed across ranks; a job
// killed before that leaves the previous checkpoint as it was. Under MPI the directory must be on
// a filesystem every rank sees.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apps/lda/trainer.h"
#include "core/corpus/corpus.h"
#include "train/resume.h"

namespace rotor::lda {

class Trainer;

/// Identifies a corpus cheaply but surely enough to refuse resuming on another one.
struct CorpusFingerprint {
    std::uint64_t docs = 0;
    std::uint64_t words = 0;
    std::uint64_t tokens = 0;
    std::uint64_t hash = 0;  ///< FNV-1a over doc offsets and word ids
    friend bool operator==(const CorpusFingerprint&, const CorpusFingerprint&) = default;
};
CorpusFingerprint fingerprint(const core::Corpus& corpus);
/// Throws ConfigError(`flag`) when checkpoint `resume` was made on another corpus than `ours`
/// (named `name`), saying what differs: "<resume> was made on another corpus than <name>
/// (<name> has 200 documents, 9000 words and 13000 tokens, the checkpoint's 1500 documents,
/// ...)", or "(the same sizes, other tokens)" when only the hash differs.
void check_same_corpus(const CorpusFingerprint& theirs, const CorpusFingerprint& ours,
                       const std::string& resume, const std::string& name,
                       const std::string& flag = "--resume");

/// What one rank reads of a checkpoint: the shared state and its own part.
struct Checkpoint {
    static constexpr int kFormatVersion = 3;
    TrainOptions options;       ///< as the run was started (iterations = its target)
    std::vector<double> alpha;  ///< α_k in force
    std::uint32_t iterations_done = 0;
    int ranks = 0;
    int columns_per_slice = 0;  ///< the grid's c (Trainer::columns_per_slice())
    bool timer = true;
    bool timer_always = true;
    double timer_low = 0;
    double timer_high = 0;
    double timer_budget = 0;  ///< the next round's budget (0 with the timer off)
    bool rebalance = true;    ///< DistributedOptions::rebalance
    double rebalance_tolerance = 0;
    /// Whether state.json names the run's --init (false: a checkpoint of rotor before it; then
    /// options.init is the default, random, the only start that rotor had).
    bool init_recorded = true;
    CorpusFingerprint corpus;
    std::string part_path;  ///< this rank's part (named in errors of restore)
    /// Every part's path, size and FNV-1a hash, as the manifest lists them.
    std::vector<std::string> part_paths;
    std::vector<std::uint64_t> part_bytes;
    std::vector<std::uint64_t> part_hashes;
    std::vector<DocId> docs;      ///< this rank's documents, global ids, increasing
    std::vector<TopicId> topics;  ///< their tokens' topics (LocalDocs' order)
};

/// The model-defining settings a resumed run cannot change (train::refuse_resume_conflicts), as
/// `a` has them and as `b` does, named by their flags (--topics, --alpha, --beta, --seed,
/// --deterministic, --blocks, --init, --init-doc-topics, --init-word-prior). A checkpoint's α
/// is the one the run reached, after any --optimize-alpha.
std::vector<train::ResumeSetting> resume_settings(const TrainOptions& a, const TrainOptions& b);

/// The grid, the timer and rebalancing of the checkpointed run, into `dist`: a resumed run's
/// blocks are the ones saved (with --blocks 0 one process' grid side is the checkpoint's
/// columns per slice, not the default for this run's threads).
void apply_checkpoint_layout(const Checkpoint& c, DistributedOptions& dist);

/// Collective over trainer.comm(): writes `trainer`'s state to `dir` (layout above), replacing
/// the checkpoint there only once every part and the manifest are whole. `options` and `dist`
/// are the run's (options.iterations its target). A failure on any rank (disk full, no shared
/// filesystem) makes every rank throw the same comm::AgreedError and leaves `dir` as it was. Rank 0
/// alone calls remove_stale_temporaries, before the run.
void write_checkpoint(const std::string& dir, const Trainer& trainer, const TrainOptions& options,
                      const DistributedOptions& dist, const CorpusFingerprint& corpus);
/// Reads `dir`'s manifest and, when the checkpoint was written by `ranks` ranks, the part of
/// `rank` (docs, topics). Written by another number of ranks, docs and topics stay empty: the
/// caller builds its trainer (whose static split says which documents this rank takes) and calls
/// read_checkpoint_parts. Not collective: every rank calls it, the caller agrees on failures
/// (comm::run_agreed). Throws InputError naming the file: not a rotor LDA checkpoint (one of
/// rotor's first format, by blocks, says so), a part missing, truncated, of another size or hash
/// than the manifest says, or disagreeing with it on the rank, ranks or iteration.
Checkpoint read_checkpoint(const std::string& dir, int rank = 0, int ranks = 1);
/// Resuming with another number of ranks: reads every part of `c` (one at a time, each checked
/// as above) and keeps the topics of the documents `wanted` (increasing global ids, e.g. the new
/// trainer's local_docs()), in restore()'s layout. Throws InputError naming the part for a
/// document listed twice or not in `corpus`, topics that do not match the documents' lengths,
/// or a wanted document in no part.
void read_checkpoint_parts(Checkpoint& c, const core::Corpus& corpus,
                           std::span<const DocId> wanted);

}  // namespace rotor::lda
