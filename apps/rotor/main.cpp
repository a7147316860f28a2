// rotor: subcommand dispatch and error-to-exit-code mapping. Parse -> config -> run; every
// error is caught here and nowhere else (LightGBM's src/main.cpp is the model).
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "apps/corpus/cli.h"
#include "apps/lasso/cli.h"
#include "apps/lda/cli.h"
#include "apps/logreg/cli.h"
#include "apps/mf/cli.h"
#include "apps/mf/ratings_cli.h"
#include "apps/rica/cli.h"
#include "apps/seal_cli.h"
#include "comm/agreed.h"
#include "comm/launch.h"
#include "core/base/error.h"
#include "train/cli_text.h"

namespace {

/// The MPI world of a process started by mpiexec; empty for a plain run, which never touches
/// MPI.
struct MpiWorld {
    std::unique_ptr<rotor::comm::LaunchedWorld> launched;
    rotor::comm::Communicator* comm = nullptr;

    /// Prints `rotor: error: <what>` and returns `code`. Under MPI, an error every rank agreed
    /// on (or a world of one) is printed by rank 0 only and the rank exits normally; any other
    /// error cannot be agreed (other ranks may be blocked waiting for this one), so the job is
    /// aborted: MPI_Abort ends every rank at once.
    int fail(int code, const char* what, bool agreed) const {
        const bool alone = comm == nullptr || comm->size() == 1;
        if (alone || !agreed) {
            if (comm != nullptr && !alone) {
                std::fprintf(stderr, "rotor: error: rank %d: %s\n", comm->rank(), what);
            } else {
                std::fprintf(stderr, "rotor: error: %s\n", what);
            }
        } else if (comm->rank() == 0) {
            std::fprintf(stderr, "rotor: error: %s\n", what);
        }
        std::fflush(stderr);
        if (!alone && !agreed) comm->abort(code);
        return code;
    }
};

}  // namespace

int main(int argc, char** argv) {
    MpiWorld mpi;
    try {
        mpi.launched = rotor::comm::join_launched_world(&argc, &argv);
        if (mpi.launched) mpi.comm = &mpi.launched->world();
    } catch (const rotor::Error& e) {
        std::fprintf(stderr, "rotor: error: %s\n", e.what());
        return static_cast<int>(e.exit_code());
    }
    CLI::App app{"rotor: big-model machine learning on multicore NUMA nodes and MPI clusters"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "rotor 0.1.0");
    rotor::apps::add_corpus_commands(app);
    rotor::apps::add_lda_commands(app, mpi.comm);
    rotor::apps::add_mf_commands(app, mpi.comm);
    rotor::apps::add_ratings_commands(app);
    rotor::apps::add_lasso_commands(app, mpi.comm);
    rotor::apps::add_logreg_commands(app, mpi.comm);
    rotor::apps::add_rica_commands(app, mpi.comm);
    rotor::apps::add_seal_commands(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // Every rank parses the same arguments: an agreed failure.
        if (mpi.comm == nullptr || mpi.comm->rank() == 0) {
            const std::string hint = rotor::train::typo_hint(app);
            std::fprintf(stderr, "rotor: error: %s\n%s%sRun with --help for usage.\n", e.what(),
                         hint.c_str(), hint.empty() ? "" : "\n");
        }
        return static_cast<int>(rotor::ExitCode::kConfig);
    } catch (const rotor::Error& e) {
        const bool agreed = dynamic_cast<const rotor::comm::AgreedError*>(&e) != nullptr;
        return mpi.fail(static_cast<int>(e.exit_code()), e.what(), agreed);
    } catch (const std::bad_alloc&) {
        return mpi.fail(static_cast<int>(rotor::ExitCode::kSystem), "out of memory", false);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rotor: internal error: %s\n", e.what());
        std::fflush(stderr);
        if (mpi.comm != nullptr && mpi.comm->size() > 1)
            mpi.comm->abort(static_cast<int>(rotor::ExitCode::kInternal));
        return static_cast<int>(rotor::ExitCode::kInternal);
    }
    return 0;
}
