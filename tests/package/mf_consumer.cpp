// A program built outside rotor's tree against an installed rotor, as a user's would be: matrix
// factorization of a planted low-rank ratings matrix with rotor::apps' trainers over
// rotor::sched's workers, one process and 2 in-process ranks of rotor::comm, then the model
// written and read back with rotor::core. Exit 0 when every check holds; 1, naming each failed
// check on stderr, otherwise; 2 on a rotor error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/mf/trainer.h"
#include "comm/inprocess_communicator.h"
#include "core/base/error.h"
#include "core/base/rng.h"
#include "core/mf/model_file.h"
#include "core/mf/ratings.h"
#include "sched/runtime.h"

namespace {

using namespace rotor;
using namespace rotor::mf;

int failed = 0;

void expect(bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "mf_consumer: FAILED: %s\n", what.c_str());
    ++failed;
}

/// a_ij = 3 + w*_i·h*_j on a random 30% of a 120 x 80 matrix, rank 2.
Ratings planted() {
    Rng rng(3);
    std::vector<double> w(120 * 2), h(80 * 2);
    for (double& x : w) x = rng.uniform() - 0.5;
    for (double& x : h) x = 2 * rng.uniform() - 1;
    std::vector<RatingTriple> t;
    for (std::uint32_t i = 0; i < 120; ++i)
        for (std::uint32_t j = 0; j < 80; ++j)
            if (rng.uniform() < 0.3 || j == i % 80)
                t.push_back(
                    {i, j,
                     static_cast<float>(3 + w[2 * i] * h[2 * j] + w[2 * i + 1] * h[2 * j + 1])});
    return Ratings::from_triples(120, 80, t);
}

Model fit(const Ratings& a, Solver solver, int ranks, double* rmse) {
    TrainOptions o;
    o.solver = solver;
    o.rank = 4;
    o.iterations = 15;
    o.objective.lambda = 0.01;
    o.deterministic = true;
    Model out;
    comm::run_ranks(ranks, [&](comm::Communicator& comm) {
        sched::Runtime runtime(2, sched::PinMode::kNone);
        const auto trainer = make_trainer({a, nullptr, o, runtime, comm});
        for (std::uint32_t i = 0; i < o.iterations; ++i) trainer->iterate();
        train::Record r;
        trainer->evaluate_record(r);
        Model m = trainer->gather_model();
        if (comm.rank() == 0) {
            *rmse = r.get("train_rmse").value_or(1e9);
            out = std::move(m);
        }
    });
    return out;
}

}  // namespace

int main() {
    try {
        const Ratings a = planted();
        double ccd1 = 0, ccd2 = 0, sgd = 0;
        const Model one = fit(a, Solver::kCcd, 1, &ccd1);
        const Model two = fit(a, Solver::kCcd, 2, &ccd2);
        expect(ccd1 < 0.1, "ccd fits the planted matrix (train RMSE " + std::to_string(ccd1) + ")");
        expect(one.w.values().size() == two.w.values().size() &&
                   std::equal(one.w.values().begin(), one.w.values().end(), two.w.values().begin()),
               "ccd gives the same W on 1 and 2 ranks");
        fit(a, Solver::kSgd, 1, &sgd);
        expect(sgd < 0.3, "sgd fits the planted matrix (train RMSE " + std::to_string(sgd) + ")");

        const std::string dir = std::filesystem::temp_directory_path() / "rotor-mf-consumer";
        std::filesystem::remove_all(dir);
        Model m = one;
        for (std::uint32_t u = 0; u < 120; ++u) m.users.insert("u" + std::to_string(u));
        for (std::uint32_t i = 0; i < 80; ++i) m.items.insert("i" + std::to_string(i));
        write_model(dir, m);
        const Model back = read_model(dir);
        expect(std::abs(back.view().predict(5, 7) - m.view().predict(5, 7)) == 0,
               "the model reads back as written");
        std::filesystem::remove_all(dir);
    } catch (const Error& e) {
        std::fprintf(stderr, "mf_consumer: rotor error: %s\n", e.what());
        return 2;
    }
    return failed == 0 ? 0 : 1;
}
