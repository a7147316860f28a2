// `rotor logreg train|predict|eval`. Train: every worker rank reads the data file and keeps its
// share of the examples (a contiguous range); the servers own equal key ranges; rank 0 gathers
// the weights and writes the model (docs/logreg.md, "Command line").
#include "apps/logreg/cli.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "apps/logreg/traffic.h"
#include "apps/logreg/trainer.h"
#include "comm/agreed.h"
#include "comm/collectives.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/timer.h"
#include "core/io/atomic_file.h"
#include "core/logreg/metrics.h"
#include "core/logreg/model_file.h"

namespace rotor::apps {
namespace {

using logreg::ExactSum;
using logreg::Examples;
using logreg::Model;

struct TrainFlags {
    std::string data;
    std::string out;
    std::string test;
    std::string delay = "0";
    std::string curvature = "bound";
    bool no_intercept = false;
    bool hash_features = false;
    bool quiet = false;
    int servers = 0;
    logreg::DelayedOptions options;
    // Filters (apps/logreg/filters.h): the --filters list and the --stats file.
    std::string filters;
    std::string stats;
};

std::int64_t parse_delay(const std::string& s) {
    if (s == "inf") return comm::kInfiniteDelay;
    std::size_t end = 0;
    long long v = -1;
    try {
        v = std::stoll(s, &end);
    } catch (const std::exception&) {
        end = 0;
    }
    if (end != s.size() || v < 0) throw ConfigError("--delay", "a number >= 0 or inf");
    return v;
}

comm::KvLayout layout_of(int servers, int ranks) {
    std::vector<int> all(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
    if (servers == 0) return comm::KvLayout::even(all, all);
    if (servers < 0 || servers >= ranks) {
        throw ConfigError("--servers", fmt::format("0 (every rank both) or 1..{} with {} ranks",
                                                   ranks - 1, ranks));
    }
    return comm::KvLayout::even(std::vector<int>(all.begin(), all.begin() + servers),
                                std::vector<int>(all.begin() + servers, all.end()));
}

/// Examples [n w / W, n (w + 1) / W) of the file.
Examples share_of(const Examples& all, std::size_t w, std::size_t workers) {
    Examples out;
    const std::size_t n = all.size();
    for (std::size_t i = n * w / workers; i < n * (w + 1) / workers; ++i) {
        out.add(all.labels[i], all.keys_of(i), all.values_of(i));
    }
    return out;
}

void validate(TrainFlags& f) {
    logreg::DelayedOptions& o = f.options;
    if (!(o.prox.lambda > 0)) throw ConfigError("--lambda", "must be > 0");
    if (o.prox.blocks < 1) throw ConfigError("--blocks", "must be >= 1");
    if (!(o.prox.eta > 0 && o.prox.eta <= 1)) throw ConfigError("--eta", "must be in (0, 1]");
    if (!(o.timeout_s > 0)) throw ConfigError("--timeout", "must be > 0");
    o.delay = parse_delay(f.delay);
    o.filters.stack = logreg::parse_filters(f.filters);
    o.filters.seed = o.prox.seed;
    o.prox.curvature =
        f.curvature == "local" ? logreg::Curvature::kLocal : logreg::Curvature::kBound;
}

/// The test metrics of `m` on a file.
logreg::Metrics metrics_on(const Model& m, const std::string& path) {
    logreg::ReadExamplesOptions ro;
    ro.hash_features = m.hashed;
    const Examples ex = logreg::read_examples(path, ro);
    std::vector<double> margins(ex.size());
    for (std::size_t i = 0; i < ex.size(); ++i)
        margins[i] = m.margin(ex.keys_of(i), ex.values_of(i));
    return logreg::compute_metrics(margins, ex.labels);
}

/// Objective and model, summed over every rank (collective); the model on rank 0 only.
Model collect(comm::Communicator& world, const logreg::Shard* part, const logreg::DelayedResult& r,
              const TrainFlags& f) {
    ExactSum loss, l1;
    if (part != nullptr) logreg::push_loss(*part, loss);
    std::vector<std::uint64_t> keys;
    std::vector<double> weights;
    for (const auto& [k, w] : r.server_weights) {
        if (w == 0) continue;
        if (k != logreg::kInterceptKey) l1.add(std::fabs(w));
        keys.push_back(k);
        weights.push_back(w);
    }
    std::vector<std::int64_t> limbs;
    for (const std::int64_t l : loss.to_limbs()) limbs.push_back(l);
    for (const std::int64_t l : l1.to_limbs()) limbs.push_back(l);
    world.allreduce_sum(limbs);
    const auto sum_of = [&](std::size_t at) {
        std::array<std::int64_t, ExactSum::kLimbs> l{};
        std::copy(limbs.begin() + static_cast<std::ptrdiff_t>(at),
                  limbs.begin() + static_cast<std::ptrdiff_t>(at + ExactSum::kLimbs), l.begin());
        return ExactSum::from_limbs(l).value();
    };
    const auto all_keys = comm::gather(world, keys, 0, "model keys");
    const auto all_weights = comm::gather(world, weights, 0, "model weights");
    Model m;
    m.lambda = f.options.prox.lambda;
    m.hashed = f.hash_features;
    m.iterations = f.options.iterations;
    m.objective = sum_of(0) + f.options.prox.lambda * sum_of(ExactSum::kLimbs);
    for (std::size_t q = 0; q < all_keys.size(); ++q) {  // servers own increasing key ranges
        for (std::size_t i = 0; i < all_keys[q].size(); ++i) {
            if (all_keys[q][i] == logreg::kInterceptKey) {
                m.intercept = all_weights[q][i];
            } else {
                m.keys.push_back(all_keys[q][i]);
                m.weights.push_back(all_weights[q][i]);
            }
        }
    }
    return m;
}

void run_train(TrainFlags& f, comm::Communicator& world) {
    comm::KvLayout layout;
    std::optional<logreg::Shard> part;
    std::size_t examples = 0;
    comm::run_agreed(world, [&] {
        validate(f);
        layout = layout_of(f.servers, world.size());
        const auto it = std::find(layout.workers.begin(), layout.workers.end(), world.rank());
        if (it == layout.workers.end()) return;
        logreg::ReadExamplesOptions ro;
        ro.hash_features = f.hash_features;
        const Examples all = logreg::read_examples(f.data, ro);
        if (all.size() == 0) throw InputError(f.data, "no examples");
        examples = all.size();
        const auto w = static_cast<std::size_t>(it - layout.workers.begin());
        part.emplace(share_of(all, w, layout.workers.size()), !f.no_intercept);
    });
    const bool talk = !f.quiet && world.rank() == 0;
    if (talk && examples > 0) {
        fmt::print(
            "rotor: logreg train: {} examples; {} blocks, delay {}, {} iterations; {} "
            "server{}, {} worker{}\n",
            examples, f.options.prox.blocks, f.delay, f.options.iterations, layout.servers.size(),
            layout.servers.size() == 1 ? "" : "s", layout.workers.size(),
            layout.workers.size() == 1 ? "" : "s");
        std::fflush(stdout);
    }
    Stopwatch clock;
    const logreg::DelayedResult r =
        logreg::train_delayed(world, layout, part ? &*part : nullptr, f.options);
    const double seconds = clock.seconds();
    const Model m = collect(world, part ? &*part : nullptr, r, f);
    const logreg::Traffic traffic = logreg::gather_traffic(world, r.stats);  // filters: bytes
    comm::run_agreed(world, [&] {
        if (world.rank() != 0) return;
        logreg::write_model(f.out, m);
        if (!f.stats.empty()) core::write_file_atomically(f.stats, logreg::traffic_json(traffic));
        if (f.quiet) return;
        fmt::print("rotor: objective {:.10g}, {} nonzeros, {:.3f} s; model written to {}\n",
                   m.objective, m.keys.size(), seconds, f.out);
        fmt::print("rotor: {}\n", logreg::traffic_line(traffic));
        if (!f.test.empty()) {
            const logreg::Metrics t = metrics_on(m, f.test);
            fmt::print("rotor: test: logloss {:.6g}, auc {:.6g}, accuracy {:.6g} ({} examples)\n",
                       t.logloss, t.auc, t.accuracy, t.examples);
        }
    });
}

void add_train(CLI::App& logreg, comm::Communicator* world) {
    auto f = std::make_shared<TrainFlags>();
    f->options.iterations = 100;
    logreg::DelayedOptions& o = f->options;
    auto* c = logreg.add_subcommand("train", "Fit L1-regularised logistic regression");
    c->add_option("--data,-d", f->data, "Training examples: LIBSVM/svmlight (gzip allowed)")
        ->required();
    c->add_option("--out,-o", f->out, "The model file to write")->required();
    c->add_option(
         "--lambda", o.prox.lambda,
         "L1 penalty: sum log(1 + exp(-y x.w)) + lambda ||w||_1 (liblinear's C = 1/lambda)")
        ->required();
    c->add_option("--blocks", o.prox.blocks, "Feature blocks (by a hash of key and seed)")
        ->capture_default_str();
    c->add_option("--iterations", o.iterations, "Iterations, one block each")
        ->capture_default_str();
    c->add_option("--delay", f->delay, "Bounded delay tau: 0 (sequential) .. inf (eventual)")
        ->capture_default_str();
    c->add_option("--servers", f->servers,
                  "Server ranks (the first ones; the rest are workers); 0: every rank both")
        ->capture_default_str();
    c->add_option("--curvature", f->curvature,
                  "bound (1/4: every step descends) or local (sigma(1 - sigma) at w)")
        ->check(CLI::IsMember({"bound", "local"}))
        ->capture_default_str();
    c->add_option("--eta", o.prox.eta, "Step scale in (0, 1]")->capture_default_str();
    c->add_option("--seed", o.prox.seed, "Seed of the blocks and their order")
        ->capture_default_str();
    c->add_option("--timeout", o.timeout_s, "Seconds without a message before a rank gives up")
        ->capture_default_str();
    c->add_option("--test", f->test, "Examples to report logloss, AUC and accuracy on");
    c->add_flag("--no-intercept", f->no_intercept, "Fit no intercept");
    c->add_flag("--hash-features", f->hash_features, "Features are strings, hashed to keys");
    c->add_flag("--quiet,-q", f->quiet, "No progress lines");
    // Filters of pushes and pulls (docs/logreg.md, "Filters").
    c->add_option("--filters", f->filters,
                  "Filters stacked in this order: kkt, sigmod, skip, keycache, zstd (comma list)");
    c->add_option("--kkt-delta", o.filters.kkt_delta,
                  "kkt: skip w_k = 0 with |last gradient| <= lambda - delta")
        ->capture_default_str();
    c->add_option("--kkt-refresh", o.filters.kkt_refresh,
                  "kkt: every this-many-th pass pushes every key (0: never)")
        ->capture_default_str();
    c->add_option("--sigmod-threshold", o.filters.sigmod_threshold,
                  "sigmod: send entries changed by more than c / (t + 1)")
        ->capture_default_str();
    c->add_option("--skip-rate", o.filters.skip_rate, "skip: share of push entries skipped")
        ->capture_default_str();
    c->add_option("--stats", f->stats, "Write the bytes sent (per role and filter) as JSON here");
    c->callback([f, world] {
        if (world != nullptr) {
            run_train(*f, *world);
        } else {
            comm::InProcessGroup one(1);  // one process: a world of one rank
            run_train(*f, one.at(0));
        }
    });
}

struct UseFlags {
    std::string model;
    std::string data;
    std::string out;
};

void run_predict(const UseFlags& f) {
    const Model m = logreg::read_model(f.model);
    logreg::ReadExamplesOptions ro;
    ro.hash_features = m.hashed;
    const Examples ex = logreg::read_examples(f.data, ro);
    std::string text;
    for (std::size_t i = 0; i < ex.size(); ++i) {
        const double margin = m.margin(ex.keys_of(i), ex.values_of(i));
        text += fmt::format("{:.17g}\n", 1.0 / (1.0 + std::exp(-margin)));
    }
    if (f.out.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
        core::write_file_atomically(f.out, text);
    }
}

void add_use(CLI::App& logreg, bool predict) {
    auto f = std::make_shared<UseFlags>();
    auto* c = predict ? logreg.add_subcommand("predict",
                                              "The probability of +1 for each example, one a line")
                      : logreg.add_subcommand("eval", "Logloss, AUC and accuracy on examples");
    c->add_option("--model,-m", f->model, "A model file of `rotor logreg train`")->required();
    c->add_option("--data,-d", f->data, "Examples: LIBSVM/svmlight (gzip allowed)")->required();
    if (predict) c->add_option("--out,-o", f->out, "Write here (default: stdout)");
    c->callback([f, predict] {
        if (predict) {
            run_predict(*f);
            return;
        }
        const logreg::Metrics t = metrics_on(logreg::read_model(f->model), f->data);
        fmt::print("examples\t{}\nlogloss\t{:.10g}\nauc\t{:.10g}\naccuracy\t{:.10g}\n", t.examples,
                   t.logloss, t.auc, t.accuracy);
    });
}

}  // namespace

void add_logreg_commands(CLI::App& app, comm::Communicator* world) {
    auto* logreg = app.add_subcommand(
        "logreg", "Sparse L1 logistic regression on servers and workers: train, predict, eval");
    logreg->require_subcommand(1);
    add_train(*logreg, world);
    add_use(*logreg, true);
    add_use(*logreg, false);
}

}  // namespace rotor::apps
