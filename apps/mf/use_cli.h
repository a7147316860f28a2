// `rotor mf predict`, `rotor mf recommend`, `rotor mf eval` and `rotor mf export`: using a trained
// MF model directory (core/mf/model_file.h; docs/user-guide.md, "Matrix factorization: using a
// model"). The CLI parses flags into the structs below; the run_* functions do the work and throw
// rotor errors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/mf/pairs_reader.h"

namespace rotor::apps {

/// Registers predict, recommend, eval and export under the `mf` subcommand.
void add_mf_use_commands(CLI::App& mf);

/// What `rotor mf predict` does.
struct MfPredictFlags {
    std::string model;  ///< model directory (--model)
    std::string pairs;  ///< `user item` per line (--pairs)
    std::string out;    ///< `user<TAB>item<TAB>score` written atomically; empty: stdout (--out)
    PairsHeader header = PairsHeader::kAuto;  ///< (--header auto|yes|no)
};

/// What predict saw: pairs scored, and those with a user or an item the model does not know
/// (scored from μ and the known side's bias).
struct MfPredictSummary {
    std::uint64_t pairs = 0;
    std::uint64_t unseen = 0;
};

/// Scores every pair with ModelView::predict, in file order. Throws rotor errors; with --out
/// nothing is left behind on failure.
MfPredictSummary run_predict(const MfPredictFlags& flags);

/// What `rotor mf recommend` does.
struct MfRecommendFlags {
    std::string model;          ///< model directory (--model)
    std::string user;           ///< the user's original id (--user)
    std::uint32_t top = 10;     ///< how many items, >= 1 (--top)
    bool include_seen = false;  ///< keep the items the user rated in training (--include-seen)
};

/// One recommended item: its index in the model, its id and its predicted score.
struct Recommendation {
    std::uint32_t item = 0;
    std::string id;
    double score = 0;
};

/// The result of recommend: the items, best first (ties by item index), and whether the user was
/// unknown (then the items are the most popular by item bias, scored without a user) or the model
/// records no seen items (then none could be left out).
struct MfRecommendResult {
    std::vector<Recommendation> items;
    bool unknown_user = false;
    bool seen_unknown = false;
};

/// The top `flags.top` items for the user (fewer when fewer items remain). Throws rotor errors.
MfRecommendResult run_recommend(const MfRecommendFlags& flags);

/// What `rotor mf eval` does.
struct MfEvalFlags {
    std::string model;  ///< model directory (--model)
    std::string test;   ///< held-out ratings, text or binary (--test)
    bool json = false;  ///< one JSON object instead of `key: value` lines (--json)
    /// k of the ranking metrics (--ranking K); 0: none, but 10 for an implicit (als) model.
    std::uint32_t ranking = 0;
};

/// RMSE and MAE of the model on the test ratings (not for an implicit model, whose scores are
/// preferences, not ratings), and how many of them the model could not know; with ranking, the
/// ranking metrics of core/mf/ranking.h over the test users the model knows, their pairs with
/// known items as the held-out sets, the user's training items left out of the top k.
struct MfEvalSummary {
    bool has_rmse = true;
    std::uint32_t ranking_k = 0;  ///< 0: no ranking metrics
    double precision = 0;         ///< mean precision@k
    double map = 0;               ///< MAP@k
    double ndcg = 0;              ///< mean NDCG@k
    std::uint64_t ranked_users = 0;
    double rmse = 0;
    double mae = 0;
    std::uint64_t count = 0;
    std::uint64_t unseen_ratings = 0;  ///< test ratings with a user or an item new to the model
    std::uint32_t new_users = 0;
    std::uint32_t new_items = 0;
};

MfEvalSummary run_mf_eval(const MfEvalFlags& flags);

/// Writes W.tsv, H.tsv and biases.tsv of the model under `out`, atomically as one directory.
void run_export(const std::string& model, const std::string& out);

}  // namespace rotor::apps
