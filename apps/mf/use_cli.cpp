// `rotor mf predict | recommend | eval | export`: flags -> structs -> a model read with
// mf::read_model and scored with mf::ModelView (one thread: each is a pass over a file or the
// items).
#include "apps/mf/use_cli.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "core/mf/model_file.h"
#include "core/mf/ranking.h"
#include "core/mf/ratings_load.h"
#include "train/common_flags.h"

namespace rotor::apps {
namespace {

/// Text output to a file written atomically, or to stdout when the path is empty. Buffered.
class TextOut {
  public:
    explicit TextOut(const std::string& path) {
        if (!path.empty()) file_.emplace(path);
    }
    fmt::memory_buffer& buffer() { return buf_; }
    /// Hands the buffer on once it is big; call after each record.
    void maybe_flush() {
        if (buf_.size() >= kFlushBytes) flush();
    }
    /// Writes what is left and commits the file (or flushes stdout).
    void commit() {
        flush();
        if (file_) {
            file_->commit();
        } else if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            throw SystemError("cannot write to standard output");
        }
    }

  private:
    void flush() {
        const std::string_view s(buf_.data(), buf_.size());
        if (file_) {
            file_->write(s);
        } else if (!s.empty() && std::fwrite(s.data(), 1, s.size(), stdout) != s.size()) {
            throw SystemError("cannot write to standard output");
        }
        buf_.clear();
    }

    static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
    std::optional<core::AtomicFile> file_;
    fmt::memory_buffer buf_;
};

/// Writes `ids[r]<TAB>row r of f` for every row, floats as %.9g (they read back identical).
void write_factor_rows(core::AtomicFile& out, const mf::Factors& f, const mf::IdMap& ids) {
    fmt::memory_buffer buf;
    for (std::uint32_t r = 0; r < f.rows(); ++r) {
        fmt::format_to(std::back_inserter(buf), "{}", ids.name(r));
        for (const float v : f.row(r)) fmt::format_to(std::back_inserter(buf), "\t{:.9g}", v);
        buf.push_back('\n');
        if (buf.size() >= (std::size_t{1} << 20)) {
            out.write(std::string_view(buf.data(), buf.size()));
            buf.clear();
        }
    }
    out.write(std::string_view(buf.data(), buf.size()));
}

PairsHeader parse_header(const std::string& s) {
    if (s == "auto") return PairsHeader::kAuto;
    if (s == "yes") return PairsHeader::kPresent;
    if (s == "no") return PairsHeader::kAbsent;
    throw ConfigError("--header", "must be auto, yes or no");
}

}  // namespace

MfPredictSummary run_predict(const MfPredictFlags& flags) {
    const mf::Model model = mf::read_model(flags.model);
    const mf::ModelView view = model.view();
    PairsReader pairs(flags.pairs, model.users, model.items, flags.header);
    TextOut out(flags.out);
    MfPredictSummary s;
    Pair p;
    while (pairs.next(p)) {
        const double score = view.predict(p.user_index, p.item_index);
        fmt::format_to(std::back_inserter(out.buffer()), "{}\t{}\t{:.9g}\n", p.user, p.item, score);
        out.maybe_flush();
        ++s.pairs;
        if (p.user_index == model.users.size() || p.item_index == model.items.size()) ++s.unseen;
    }
    out.commit();
    return s;
}

MfRecommendResult run_recommend(const MfRecommendFlags& flags) {
    if (flags.top == 0) throw ConfigError("--top", "must be at least 1");
    const mf::Model model = mf::read_model(flags.model);
    const mf::ModelView view = model.view();
    MfRecommendResult r;
    const auto found = model.users.find(flags.user);
    r.unknown_user = !found;
    // An unknown user scores μ + c_j: the items ranked by their bias.
    const std::uint32_t u = found.value_or(model.users.size());
    std::vector<std::uint8_t> excluded(model.items.size(), 0);
    if (found && !flags.include_seen) {
        if (model.seen_offsets.empty()) {
            r.seen_unknown = true;
        } else {
            for (auto t = model.seen_offsets[u]; t < model.seen_offsets[u + 1]; ++t)
                excluded[model.seen_items[t]] = 1;
        }
    }
    std::vector<Recommendation> all;
    for (std::uint32_t j = 0; j < model.items.size(); ++j)
        if (excluded[j] == 0) all.push_back({j, {}, view.predict(u, j)});
    const std::size_t n = std::min<std::size_t>(flags.top, all.size());
    const auto better = [](const Recommendation& a, const Recommendation& b) {
        return a.score != b.score ? a.score > b.score : a.item < b.item;
    };
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), better);
    all.resize(n);
    for (Recommendation& x : all) x.id = model.items.name(x.item);
    r.items = std::move(all);
    return r;
}

MfEvalSummary run_mf_eval(const MfEvalFlags& flags) {
    const mf::Model model = mf::read_model(flags.model);
    mf::ReadRatingsOptions options;
    options.users = &model.users;
    options.items = &model.items;
    const mf::RatingsFile test = mf::load_ratings(flags.test, options);
    const mf::Ratings& a = test.ratings;
    MfEvalSummary s;
    if (a.nnz() == 0) throw InputError(flags.test, "holds no held-out ratings");
    s.has_rmse = model.solver != "als";
    s.ranking_k = flags.ranking > 0 ? flags.ranking : (s.has_rmse ? 0 : 10);
    if (s.has_rmse) {
        std::vector<std::uint32_t> users;
        users.reserve(a.nnz());
        for (mf::UserId u = 0; u < a.num_users(); ++u)
            users.insert(users.end(), a.user_degree(u), u);
        const mf::ErrorStats e = mf::evaluate(users, a.user_items(), a.user_values(), model.view());
        s.rmse = e.rmse;
        s.mae = e.mae;
        s.count = e.count;
    } else {
        s.count = a.nnz();
    }
    if (s.ranking_k > 0) {
        // The held-out sets of the users the model knows, items it knows (sorted by the CSR).
        const std::uint32_t n = model.users.size(), m = model.items.size();
        std::vector<std::uint64_t> offsets(std::size_t{n} + 1, 0);
        std::vector<std::uint32_t> items;
        for (mf::UserId u = 0; u < n && u < a.num_users(); ++u) {
            for (const std::uint32_t j : a.items_of(u))
                if (j < m) items.push_back(j);
            offsets[u + 1] = items.size();
        }
        for (mf::UserId u = std::min(n, a.num_users()); u < n; ++u) offsets[u + 1] = items.size();
        if (items.empty())
            throw InputError(flags.test,
                             "no held-out pair of a user and an item the model knows: nothing to "
                             "rank");
        const mf::SparseView held{offsets, items, {}};
        const mf::SparseView seen{model.seen_offsets, model.seen_items, {}};
        const mf::RankingSums r = mf::rank_users(model.w, model.h, seen, held, s.ranking_k, 0, n);
        s.precision = r.mean_precision();
        s.map = r.mean_ap();
        s.ndcg = r.mean_ndcg();
        s.ranked_users = r.users;
    }
    s.unseen_ratings = test.ratings_with_new_ids;
    s.new_users = test.new_users();
    s.new_items = test.new_items();
    return s;
}

void run_export(const std::string& model_dir, const std::string& out_dir) {
    const mf::Model model = mf::read_model(model_dir);
    core::AtomicDirectory dir(out_dir);
    {
        core::AtomicFile w(dir.file("W.tsv"));
        write_factor_rows(w, model.w, model.users);
        w.commit();
        core::AtomicFile h(dir.file("H.tsv"));
        write_factor_rows(h, model.h, model.items);
        h.commit();
    }
    fmt::memory_buffer buf;
    fmt::format_to(std::back_inserter(buf), "mean\t*\t{}\n", model.mu);
    for (std::uint32_t i = 0; i < model.row_bias.size(); ++i)
        fmt::format_to(std::back_inserter(buf), "user\t{}\t{:.9g}\n", model.users.name(i),
                       model.row_bias[i]);
    for (std::uint32_t j = 0; j < model.col_bias.size(); ++j)
        fmt::format_to(std::back_inserter(buf), "item\t{}\t{:.9g}\n", model.items.name(j),
                       model.col_bias[j]);
    core::write_file_atomically(dir.file("biases.tsv"), std::string_view(buf.data(), buf.size()));
    dir.commit();
}

namespace {

void add_predict(CLI::App& mf) {
    auto f = std::make_shared<MfPredictFlags>();
    auto header = std::make_shared<std::string>("auto");
    auto* c = mf.add_subcommand("predict", "Predicted ratings of (user, item) pairs");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--pairs", f->pairs, "Pairs: `user item` per line, blank- or comma-separated")
        ->required();
    c->add_option("--out", f->out, "Output user<TAB>item<TAB>score (default: stdout)");
    c->add_option("--header", *header,
                  "Is the first line a header: auto (no number and no known id), yes or no")
        ->capture_default_str();
    c->callback([f, header] {
        f->header = parse_header(*header);
        const MfPredictSummary s = run_predict(*f);
        std::fprintf(stderr,
                     "rotor: mf predict: %llu pairs scored, %llu with an unseen user or "
                     "item (scored from the mean and the known bias)\n",
                     static_cast<unsigned long long>(s.pairs),
                     static_cast<unsigned long long>(s.unseen));
    });
}

void add_recommend(CLI::App& mf) {
    auto f = std::make_shared<MfRecommendFlags>();
    auto* c = mf.add_subcommand("recommend", "The top-N items for a user, by predicted rating");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--user", f->user, "The user's id, as in the training file")->required();
    c->add_option("--top,-n", f->top, "How many items")->capture_default_str();
    c->add_flag("--include-seen", f->include_seen,
                "Also recommend items the user rated in training");
    c->callback([f] {
        const MfRecommendResult r = run_recommend(*f);
        if (r.unknown_user)
            std::fprintf(stderr,
                         "rotor: mf recommend: user \"%s\" is not in the model: the most popular "
                         "items by item bias\n",
                         f->user.c_str());
        if (r.seen_unknown)
            std::fprintf(stderr,
                         "rotor: mf recommend: the model records no rated items: none "
                         "left out\n");
        TextOut out("");
        for (const Recommendation& x : r.items)
            fmt::format_to(std::back_inserter(out.buffer()), "{}\t{}\t{:.9g}\n", f->user, x.id,
                           x.score);
        out.commit();
    });
}

void add_eval(CLI::App& mf) {
    auto f = std::make_shared<MfEvalFlags>();
    auto* c = mf.add_subcommand(
        "eval", "RMSE and MAE of a model on held-out ratings; ranking metrics (--ranking K)");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--test", f->test, "Held-out ratings: text or binary")->required();
    c->add_option("--ranking", f->ranking,
                  "precision@K, MAP@K and NDCG@K of each test user's top K (training items left "
                  "out) against their held-out items (default 10 for an implicit model)");
    c->add_flag("--json", f->json, "Print one JSON object");
    c->callback([f] {
        const MfEvalSummary s = run_mf_eval(*f);
        nlohmann::ordered_json j;
        if (s.has_rmse) {
            j["rmse"] = s.rmse;
            j["mae"] = s.mae;
        }
        if (s.ranking_k > 0) {
            j["k"] = s.ranking_k;
            j["precision_at_k"] = s.precision;
            j["map_at_k"] = s.map;
            j["ndcg_at_k"] = s.ndcg;
            j["ranked_users"] = s.ranked_users;
        }
        j["count"] = s.count;
        j["unseen_ratings"] = s.unseen_ratings;
        j["new_users"] = s.new_users;
        j["new_items"] = s.new_items;
        if (f->json) {
            fmt::print("{}\n", j.dump());
            return;
        }
        for (const auto& [key, value] : j.items()) {
            if (value.is_number_float()) {
                fmt::print("{}: {:.6f}\n", key, value.get<double>());
            } else {
                fmt::print("{}: {}\n", key, value.dump());
            }
        }
    });
}

void add_export(CLI::App& mf) {
    struct Flags {
        std::string model, out;
        bool overwrite = false;
    };
    auto f = std::make_shared<Flags>();
    auto* c = mf.add_subcommand("export", "Write the factors and biases as TSV files");
    c->add_option("--model", f->model, "Model directory")->required();
    c->add_option("--out", f->out,
                  "Output directory: W.tsv, H.tsv, biases.tsv (new, or --overwrite)")
        ->required();
    train::add_overwrite_flag(*c, f->overwrite);
    c->callback([f] {
        core::check_output(f->out, core::OutputKind::kDirectory, "W.tsv", f->overwrite, "--out");
        run_export(f->model, f->out);
        std::fprintf(stderr, "rotor: mf export: written to %s\n", f->out.c_str());
    });
}

}  // namespace

void add_mf_use_commands(CLI::App& mf) {
    add_predict(mf);
    add_recommend(mf);
    add_eval(mf);
    add_export(mf);
}

}  // namespace rotor::apps
