// rotor: subcommand dispatch and error-to-exit-code mapping. Parse -> config -> run; every
// error is caught here and nowhere else (LightGBM's src/main.cpp is the model).
#include <cstdio>
#include <exception>
#include <new>

#include <CLI/CLI.hpp>

#include "apps/corpus/cli.h"
#include "apps/lda/cli.h"
#include "core/base/error.h"

int main(int argc, char** argv) {
    CLI::App app{"rotor: big-model machine learning on multicore NUMA nodes and MPI clusters"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "rotor 0.1.0");
    rotor::apps::add_corpus_commands(app);
    rotor::apps::add_lda_commands(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "rotor: error: %s\nRun with --help for usage.\n", e.what());
        return static_cast<int>(rotor::ExitCode::kConfig);
    } catch (const rotor::Error& e) {
        std::fprintf(stderr, "rotor: error: %s\n", e.what());
        return static_cast<int>(e.exit_code());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "rotor: error: out of memory\n");
        return static_cast<int>(rotor::ExitCode::kSystem);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rotor: internal error: %s\n", e.what());
        return static_cast<int>(rotor::ExitCode::kInternal);
    }
    return 0;
}
