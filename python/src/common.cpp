#include "common.h"

#include <Python.h>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <new>
#include <string_view>
#include <thread>

#include "comm/agreed.h"
#include "core/base/error.h"
#include "core/io/atomic_file.h"
#include "train/checkpoint_dir.h"

namespace rotor::python {

void SignalCheck::operator()() const {
    if (std::this_thread::get_id() != owner_) return;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw Interrupted{};
}

InterruptWatch::InterruptWatch() {
    const py::module_ signal = py::module_::import("signal");
    const py::module_ threading = py::module_::import("threading");
    main_thread_ = threading.attr("current_thread")().is(threading.attr("main_thread")());
    if (!main_thread_ ||
        !signal.attr("getsignal")(signal.attr("SIGINT")).is(signal.attr("default_int_handler")))
        return;
    int fds[2];
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return;  // inactive: SignalCheck still runs
    try {
        previous_ = signal.attr("set_wakeup_fd")(fds[1], py::arg("warn_on_full_buffer") = false);
    } catch (const py::error_already_set&) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    read_fd_ = fds[0];
    write_fd_ = fds[1];
}

InterruptWatch::~InterruptWatch() {
    if (!active()) return;
    // Possibly while a KeyboardInterrupt is being raised: kept aside for the call.
    const py::error_scope pending;
    try {
        py::module_::import("signal").attr("set_wakeup_fd")(previous_);
    } catch (py::error_already_set& e) {
        e.discard_as_unraisable("rotor: restoring the signal wakeup fd");
    }
    close(read_fd_);
    close(write_fd_);
}

void InterruptWatch::poll() const {
    if (!active()) return;
    unsigned char signals[64];
    for (;;) {
        const ssize_t n = read(read_fd_, signals, sizeof signals);
        if (n <= 0) return;  // nothing (EAGAIN) or nothing more
        for (ssize_t i = 0; i < n; ++i)
            if (signals[i] == SIGINT) throw Interrupted{};
    }
}

Records::Records(train::RecordSchema schema, bool verbose)
    : schema_(schema), verbose_(verbose), terminal_(stdout, std::move(schema)) {}

void Records::on_start(std::string_view summary) {
    if (verbose_) terminal_.on_start(summary);
}

void Records::on_iteration(const train::Record& r, std::uint32_t last_iteration) {
    std::string line = train::record_json(r, schema_);
    const std::lock_guard<std::mutex> lock(mutex_);
    lines_.push_back(std::move(line));
    if (verbose_) {
        terminal_.on_iteration(r, last_iteration);
        std::fflush(stdout);
    }
}

py::list Records::lines() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    py::list out;
    for (const std::string& l : lines_) out.append(py::str(l));
    return out;
}

std::string Records::summary() const { return verbose_ ? terminal_.summary() : std::string(); }

int resolve_threads(int n_jobs) {
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    if (n_jobs >= 1) return n_jobs;
    if (n_jobs == 0) return cores;
    if (n_jobs < 0 && cores + 1 + n_jobs >= 1) return cores + 1 + n_jobs;
    throw py::value_error(
        "n_jobs: must be a positive number of threads, or -1 for every core "
        "(-2 for all but one, ...)");
}

CheckpointParams::CheckpointParams(const py::dict& p)
    : every(p["checkpoint_every"].cast<std::uint32_t>()),
      dir(p["checkpoint_dir"].cast<std::string>()),
      resume(p["resume"].cast<std::string>()) {}

void CheckpointParams::prepare() const {
    if (!writes()) return;
    core::check_output_parent(dir, "--checkpoint-dir");
    train::remove_stale_temporaries(dir);
}

void check_resume(std::span<const train::ResumeSetting> settings, std::uint64_t done,
                  std::uint64_t target, const std::string& resume, const std::string& target_flag,
                  const std::function<bool(const std::string&)>& given) {
    const std::function<bool(const std::string&)> all = [](const std::string&) { return true; };
    // A flag --no-X is a parameter X=True/False here (--no-intercept: fit_intercept): its value
    // as the parameter has it.
    std::vector<train::ResumeSetting> named(settings.begin(), settings.end());
    for (train::ResumeSetting& s : named)
        if (s.flag.starts_with("--no-"))
            for (std::string* v : {&s.ours, &s.theirs})
                if (*v == "on" || *v == "off") *v = *v == "on" ? "False" : "True";
    train::refuse_resume_conflicts(named, given ? given : all, resume,
                                   "give the checkpoint's value, or fit without resume to start "
                                   "a new run");
    train::check_resume_target(done, target, resume, target_flag);
}

sched::PinMode pin_mode(bool pin) { return pin ? sched::PinMode::kAuto : sched::PinMode::kNone; }

namespace {

/// `message` with a leading flag of `names` replaced by its parameter.
std::string rename_flag(const ConfigError& e, ParamNames names) {
    std::string message = e.what();
    static constexpr std::pair<const char*, const char*> kCheckpoints[] = {
        {"--checkpoint-every", "checkpoint_every"},
        {"--checkpoint-dir", "checkpoint_dir"},
        {"--resume", "resume"}};
    for (const auto& [flag, param] : names)
        if (e.key() == flag) return std::string(param) + message.substr(e.key().size());
    for (const auto& [flag, param] : kCheckpoints)
        if (e.key() == flag) return std::string(param) + message.substr(e.key().size());
    return message;
}

}  // namespace

void translate_errors(const std::function<void()>& body, ParamNames names) {
    try {
        body();
    } catch (const Interrupted&) {
        // The KeyboardInterrupt of the signal handler: raised already (SignalCheck), or due
        // (InterruptWatch saw the signal on a worker; the handler runs now, with the GIL).
        if (!PyErr_Occurred()) PyErr_CheckSignals();
        if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
        throw py::error_already_set();
    } catch (const InputError& e) {
        throw py::value_error(e.what());
    } catch (const ConfigError& e) {
        // The memory plan refuses a run with ConfigError("--max-memory").
        if (e.key() == "--max-memory") {
            PyErr_SetString(PyExc_MemoryError, rename_flag(e, names).c_str());
            throw py::error_already_set();
        }
        throw py::value_error(rename_flag(e, names));
    } catch (const SystemError& e) {
        PyErr_SetString(PyExc_OSError, e.what());
        throw py::error_already_set();
    } catch (const comm::AgreedError& e) {
        // A checkpoint written or restored (collective steps, one rank here): the error of the
        // step, by its exit code.
        if (e.exit_code() == ExitCode::kSystem) {
            PyErr_SetString(PyExc_OSError, e.what());
            throw py::error_already_set();
        }
        if (e.exit_code() == ExitCode::kInput || e.exit_code() == ExitCode::kConfig)
            throw py::value_error(e.what());
        throw;
    }
}

namespace {

/// Runs translate_errors(body, names), then `keep()` (with the GIL), whether the body returned or
/// raised.
void keep_after(const std::function<void()>& body, ParamNames names,
                const std::function<void()>& keep) {
    try {
        translate_errors(body, names);
    } catch (...) {
        const py::error_scope pending;  // the exception raised, kept aside while the list grows
        keep();
        throw;
    }
    keep();
}

}  // namespace

void run_fit(const std::function<void()>& body, ParamNames names,
             const std::optional<Records>& records, py::list& sink) {
    keep_after(body, names, [&] {
        if (records)
            for (const py::handle line : records->lines()) sink.append(line);
    });
}

void run_fit(const std::function<void()>& body, ParamNames names,
             const std::vector<std::string>& lines, py::list& sink) {
    keep_after(body, names, [&] {
        for (const std::string& line : lines) sink.append(py::str(line));
    });
}

}  // namespace rotor::python
