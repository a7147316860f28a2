// `rotor lda infer`, `rotor lda eval` and `rotor lda coherence`: using a trained model on new
// documents (docs/evaluation.md). The CLI parses flags into the structs below; the run_*
// functions do the work, in parallel over documents through a sched::Runtime.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "core/lda/heldout.h"
#include "core/lda/inference.h"

namespace rotor::apps {

/// Registers infer, eval and coherence under the `lda` subcommand. Callbacks throw rotor errors.
void add_lda_use_commands(CLI::App& lda);

/// What `rotor lda infer` does: exactly one of `corpus` and `text`; at least one of `out` and
/// `doc_topics`.
struct InferFlags {
    std::string model;   ///< model directory (--model)
    std::string corpus;  ///< new documents: binary corpus or UCI docword (--corpus)
    std::string vocab;   ///< the corpus's vocabulary (--vocab; default: beside the corpus)
    /// New documents as raw text (--text): a file, one document per line, or a folder of .txt
    /// files, one document each; tokenized as `corpus build` does and mapped onto the model's
    /// vocabulary (which already lacks the stop words and pruned words).
    std::string text;
    std::string token_pattern = "letters";  ///< --token-pattern, as given to corpus build
    std::string out;         ///< TSV `doc<TAB>topic<TAB>θ` written atomically (--out)
    std::string doc_topics;  ///< wide doc × topic TSV with a header (--doc-topics)
    bool dense = false;      ///< every topic, not only θ ≥ kMinTheta (--dense)
    /// --allow-oov: infer when more than EvalFlags::kMaxSkippedShare of a --corpus's tokens
    /// are of words the model does not know (refused otherwise; --text skips stop words and
    /// pruned words by design, so it is not checked).
    bool allow_oov = false;
    int threads = 0;  ///< worker threads, 0: all cores (--threads)
    lda::FoldInOptions fold_in;

    static constexpr double kMinTheta = 1e-4;
};

/// Summary of one infer run (also printed to stderr by the CLI).
struct InferSummary {
    std::uint64_t docs = 0;
    std::uint64_t input_tokens = 0;
    std::uint64_t skipped_tokens = 0;
    std::uint64_t unknown_words = 0;  ///< distinct unknown words (--corpus only)
    /// Documents with tokens none of which the model knows: with --text left out of the output,
    /// with --corpus written with the prior's proportions.
    std::uint64_t empty_docs = 0;
};

/// Loads the model and the documents, maps their words onto the model's by string, folds
/// every document in (documents in parallel; results independent of the thread count) and
/// writes the TSVs; documents are named by their corpus's names (a folder's file names), else
/// by their label. Warns on stderr about documents left empty. Throws rotor errors.
InferSummary run_infer(const InferFlags& flags);

/// What `rotor lda eval` does: exactly one of `model` and `phi`.
struct EvalFlags {
    std::string model;   ///< model directory (--model)
    std::string phi;     ///< `word<TAB>topic<TAB>weight` file (--phi)
    std::string corpus;  ///< held-out documents (--corpus)
    std::string vocab;   ///< the corpus's vocabulary (--vocab; default: beside the corpus)
    double alpha = -1;   ///< --phi only: symmetric prior on θ; <= 0 means 50/K (--alpha)
    double beta = 0;     ///< --phi only: smoothing added to every weight (--beta)
    int threads = 0;
    /// --allow-oov: score the rest when more than kMaxSkippedShare of the corpus's tokens are of
    /// words the model does not know (refused otherwise: likely another vocabulary).
    bool allow_oov = false;
    lda::FoldInOptions fold_in;

    static constexpr double kMaxSkippedShare = 0.05;
};

/// The result of `rotor lda eval` and how the corpus mapped onto the model.
struct EvalSummary {
    lda::HeldoutResult result;
    std::uint64_t input_tokens = 0;
    std::uint64_t skipped_tokens = 0;
    std::uint64_t unknown_words = 0;
    /// skipped_tokens / input_tokens (0 for an empty corpus).
    double skipped_share = 0;
    std::uint32_t num_topics = 0;
    /// --phi only: V of the file's φ (its words, plus with β > 0 the corpus's words it lacks),
    /// and the corpus tokens / distinct words scored by smoothing alone because the file lacks
    /// them (possible only with β > 0).
    std::uint64_t phi_words = 0;
    std::uint64_t smoothing_only_tokens = 0;
    std::uint64_t smoothing_only_words = 0;
};

/// Runs held-out document completion. Throws rotor errors; InputError naming the corpus when
/// more than EvalFlags::kMaxSkippedShare of its tokens are unknown to the model, without
/// --allow-oov.
EvalSummary run_eval(const EvalFlags& flags);

}  // namespace rotor::apps
