// Thread scaling of the CCD++ trainer (apps/mf/ccd_trainer.cpp) on one process: seconds per
// iteration and ratings/s at each thread count, and the speedup over one thread. Ratings from a
// file (text, as `rotor mf train --train` reads them) or a synthetic matrix (users x items,
// `per_user` ratings per user, items skewed towards low ids, values in [1, 5)).
//
//   bench_ccd_scaling FILE|synthetic:USERS:ITEMS:PER_USER [K=32] [ITERATIONS=5] [THREADS=1,2]
//
// Each thread count runs ITERATIONS iterations after one warm-up; the best iteration is reported
// (the machine may be shared). Runs alternate between thread counts to spread the noise.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "apps/mf/trainer.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/mf/ratings_reader.h"

namespace rotor::mf {
namespace {

Ratings synthetic(std::uint32_t users, std::uint32_t items, std::uint32_t per_user) {
    Rng rng(5);
    std::vector<RatingTriple> t;
    t.reserve(std::uint64_t{users} * per_user);
    std::vector<std::uint32_t> row;
    for (std::uint32_t u = 0; u < users; ++u) {
        row.clear();
        while (row.size() < per_user) {
            const double x = rng.uniform();
            const auto j = static_cast<std::uint32_t>(x * x * items);
            if (std::find(row.begin(), row.end(), j) == row.end()) row.push_back(j);
        }
        for (const std::uint32_t j : row) {
            t.push_back({u, j, static_cast<float>(1.0 + 4.0 * rng.uniform())});
        }
    }
    return Ratings::from_triples(users, items, t);
}

Ratings load(const std::string& spec) {
    if (spec.rfind("synthetic:", 0) == 0) {
        unsigned users = 0, items = 0, per_user = 0;
        if (std::sscanf(spec.c_str(), "synthetic:%u:%u:%u", &users, &items, &per_user) != 3) {
            throw ConfigError("spec", "synthetic:USERS:ITEMS:PER_USER");
        }
        return synthetic(users, items, per_user);
    }
    return read_ratings(spec).ratings;
}

/// The best iteration's wall seconds; `effective` its effective ratio and `busiest` the largest
/// compute seconds of one worker (the wall time the iteration would take without waits).
double best_iteration(const Ratings& r, const TrainOptions& o, int threads, int iterations,
                      double& effective, double& busiest) {
    double best = 1e300;
    comm::run_ranks(1, [&](comm::Communicator& c) {
        sched::Runtime runtime(
            threads, std::getenv("ROTOR_NO_PIN") ? sched::PinMode::kNone : sched::PinMode::kPu);
        auto trainer = make_ccd_trainer({r, nullptr, o, runtime, c});
        trainer->iterate();  // warm-up
        for (int i = 0; i < iterations; ++i) {
            const train::Record rec = trainer->iterate();
            if (rec.iteration_s < best) {
                best = rec.iteration_s;
                effective = rec.effective_ratio;
                const std::vector<double>* busy = rec.array("thread_compute_s");
                busiest = busy ? *std::max_element(busy->begin(), busy->end()) : 0;
            }
        }
    });
    return best;
}

int run(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE|synthetic:U:I:PER_USER [K] [ITERATIONS] [T,T,...]\n",
                     argv[0]);
        return 2;
    }
    const Ratings r = load(argv[1]);
    TrainOptions o;
    o.solver = Solver::kCcd;
    o.rank = argc > 2 ? static_cast<std::uint32_t>(std::atoi(argv[2])) : 32;
    const int iterations = argc > 3 ? std::atoi(argv[3]) : 5;
    std::vector<int> threads{1, 2};
    if (argc > 4) {
        threads.clear();
        for (const char* p = argv[4]; *p != '\0';) {
            char* end = nullptr;
            threads.push_back(static_cast<int>(std::strtol(p, &end, 10)));
            p = *end == ',' ? end + 1 : end;
        }
    }
    std::printf("%u users x %u items, %llu ratings, K = %u, inner = %u\n", r.num_users(),
                r.num_items(), static_cast<unsigned long long>(r.nnz()), o.rank, o.inner);
    std::map<int, double> best, effective, busiest;
    for (int round = 0; round < 2; ++round) {
        for (const int t : threads) {
            double eff = 0, busy = 0;
            const double s = best_iteration(r, o, t, iterations, eff, busy);
            if (!best.count(t) || s < best[t]) {
                best[t] = s;
                effective[t] = eff;
                busiest[t] = busy;
            }
        }
    }
    for (const int t : threads) {
        std::printf(
            "threads %d: %.4f s/iteration, %.3g ratings/s, effective ratio %.3f, "
            "speedup %.3f (busiest worker's compute: %.3f)\n",
            t, best[t], static_cast<double>(r.nnz()) / best[t], effective[t],
            best[threads.front()] / best[t], busiest[threads.front()] / busiest[t]);
    }
    return 0;
}

}  // namespace
}  // namespace rotor::mf

int main(int argc, char** argv) {
    try {
        return rotor::mf::run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_ccd_scaling: %s\n", e.what());
        return 1;
    }
}
