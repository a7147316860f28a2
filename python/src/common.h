// What every model's binding shares (docs/python.md, "How it is built"): numpy arrays as spans,
// the GIL released around training with Python's signal handlers run from the progress hook,
// the metrics records collected as JSON lines, and rotor's errors mapped to Python's.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/base/error.h"
#include "sched/runtime.h"
#include "train/record.h"
#include "train/reporter.h"
#include "train/resume.h"

namespace rotor::python {

namespace py = pybind11;

/// C-contiguous arrays, converted (copied) by numpy only when the dtype or layout differs.
template <class T>
using Array = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// A read-only view of `a`'s elements (C-contiguous); valid while the array's data lives.
template <class T, int Flags>
std::span<const T> view(const py::array_t<T, Flags>& a) {
    return {a.data(), static_cast<std::size_t>(a.size())};
}

namespace detail {
template <class I, class V, class F>
bool visit_csr_as(const py::array& indptr, const py::array& indices, const py::array& values,
                  F& f) {
    using Index = py::array_t<I, py::array::c_style>;
    using Value = py::array_t<V, py::array::c_style>;
    if (!py::isinstance<Index>(indptr) || !py::isinstance<Index>(indices) ||
        !py::isinstance<Value>(values))
        return false;
    f(view(py::reinterpret_borrow<Index>(indptr)), view(py::reinterpret_borrow<Index>(indices)),
      view(py::reinterpret_borrow<Value>(values)));
    return true;
}
}  // namespace detail

/// Calls f(indptr, indices, values) with std::spans of a CSR matrix's arrays (scipy's indptr,
/// indices, data). Arrays as scipy holds them (C-contiguous, native byte order; std::int32_t or
/// std::int64_t indices; double, float, std::int64_t or std::int32_t values) are read in place;
/// other dtypes are converted (copied) to std::int64_t indices and double values first. The
/// spans live while the call does; f may release the GIL (the caller keeps the arrays).
template <class F>
void visit_csr(const py::array& indptr, const py::array& indices, const py::array& values, F&& f) {
    const auto with_index = [&]<class I>(I*) {
        return detail::visit_csr_as<I, double>(indptr, indices, values, f) ||
               detail::visit_csr_as<I, float>(indptr, indices, values, f) ||
               detail::visit_csr_as<I, std::int64_t>(indptr, indices, values, f) ||
               detail::visit_csr_as<I, std::int32_t>(indptr, indices, values, f);
    };
    if (with_index(static_cast<std::int32_t*>(nullptr)) ||
        with_index(static_cast<std::int64_t*>(nullptr)))
        return;
    const auto p = indptr.cast<Array<std::int64_t>>();
    const auto i = indices.cast<Array<std::int64_t>>();
    const auto v = values.cast<Array<double>>();
    f(view(p), view(i), view(v));
}

/// Checks a CSR matrix of `columns` columns in one pass, as the readers check a file: indptr
/// of rows + 1 >= 1 entries rising from 0 to nnz, indices and values of nnz entries, every
/// index in [0, columns), every value finite. InputError naming `name` and the row (and
/// column) otherwise ("X: row 3, column 7: value NaN is not finite", 0-based as numpy counts).
template <class I, class V>
void check_csr(std::span<const I> indptr, std::span<const I> indices, std::span<const V> values,
               std::uint64_t columns, const std::string& name) {
    if (indices.size() != values.size())
        throw InputError(
            name, fmt::format("{} column indices but {} values", indices.size(), values.size()));
    if (indptr.empty())
        throw InputError(name, "indptr is empty: it needs one entry per row plus one");
    if (indptr.front() != 0)
        throw InputError(name, fmt::format("indptr[0] is {}, not 0", indptr.front()));
    for (std::size_t r = 0; r + 1 < indptr.size(); ++r) {
        const I b = indptr[r], e = indptr[r + 1];
        if (e < b || static_cast<std::uint64_t>(e) > indices.size())
            throw InputError(name, fmt::format("row {}: indptr goes from {} to {} ({} entries)", r,
                                               b, e, indices.size()));
        for (auto j = static_cast<std::size_t>(b); j < static_cast<std::size_t>(e); ++j) {
            if (indices[j] < 0 || static_cast<std::uint64_t>(indices[j]) >= columns)
                throw InputError(name, fmt::format("row {}: column {} is outside [0, {})", r,
                                                   indices[j], columns));
            const auto v = static_cast<double>(values[j]);
            if (!std::isfinite(v))
                throw InputError(
                    name, fmt::format("row {}, column {}: value {} is not finite", r, indices[j],
                                      std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf")));
        }
    }
    if (static_cast<std::uint64_t>(indptr.back()) != indices.size())
        throw InputError(name, fmt::format("indptr ends at {} but there are {} entries",
                                           indptr.back(), indices.size()));
}

/// A new 1-d numpy array holding a copy of `v`.
template <class T>
py::array_t<T> to_numpy(std::span<const T> v) {
    py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}
template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v) {
    return to_numpy(std::span<const T>(v));
}

/// A copy of a 1-d array held by a Python object (a model state's entry) as a vector.
template <class T>
std::vector<T> vector_of(const py::handle& h) {
    const auto a = h.cast<Array<T>>();
    return std::vector<T>(a.data(), a.data() + a.size());
}

/// Thrown on the training thread when Python's signal handlers raised (Ctrl-C): the Python error
/// stays set, and the binding re-raises it once training has unwound.
struct Interrupted {};

/// Runs Python's signal handlers when called on the thread that started training (the handlers
/// run only on Python's main thread, and only with the GIL); elsewhere it does nothing. Throws
/// Interrupted when a handler raised (KeyboardInterrupt). Called from the iteration hooks with
/// the GIL released.
class SignalCheck {
  public:
    SignalCheck() : owner_(std::this_thread::get_id()) {}
    void operator()() const;

  private:
    std::thread::id owner_;
};

/// Sees Ctrl-C on any thread, without the GIL, while training runs. Made with the GIL on the
/// thread that calls fit: when that is Python's main thread and SIGINT has Python's default
/// handler (KeyboardInterrupt), a non-blocking pipe becomes Python's signal wakeup fd
/// (signal.set_wakeup_fd) until the watch is destroyed (with the GIL; the previous fd is put
/// back), so that the C-level handler writes each signal's number to it. Otherwise the watch is
/// inactive and Ctrl-C is seen only where SignalCheck runs (which on another thread than the
/// main one is never: Python runs signal handlers only there). Unless every_iteration(),
/// training may run sweeps back to back, as the command line does, and still stop within a
/// sweep of a Ctrl-C.
class InterruptWatch {
  public:
    InterruptWatch();
    ~InterruptWatch();
    InterruptWatch(const InterruptWatch&) = delete;
    InterruptWatch& operator=(const InterruptWatch&) = delete;

    bool active() const { return read_fd_ >= 0; }
    /// Whether Ctrl-C is seen only if every iteration's hook runs on the calling thread (the
    /// main thread, where the watch could not be set up).
    bool every_iteration() const { return main_thread_ && !active(); }
    /// Throws Interrupted when a SIGINT has arrived (the Python handler, already tripped, raises
    /// KeyboardInterrupt once the binding takes the GIL back). Any thread; other signals are
    /// left to their Python handlers, which run when the GIL is next taken on the main thread.
    void poll() const;

  private:
    bool main_thread_ = false;
    int read_fd_ = -1;
    int write_fd_ = -1;
    py::object previous_;  ///< the wakeup fd set before (-1: none)
};

/// The records of a run as JSON lines (train::record_json: the keys of the command line's
/// --metrics file), and with `verbose` the command line's progress lines on stdout. Records may
/// arrive from a worker thread (one at a time).
class Records final : public train::Reporter {
  public:
    Records(train::RecordSchema schema, bool verbose);
    void on_start(std::string_view summary) override;
    void on_iteration(const train::Record& r, std::uint32_t last_iteration) override;
    /// The JSON lines so far, as a Python list of str (with the GIL).
    py::list lines() const;
    /// The progress reporter's closing line ("" when not verbose).
    std::string summary() const;

  private:
    train::RecordSchema schema_;
    bool verbose_;
    train::TerminalReporter terminal_;
    mutable std::mutex mutex_;
    std::vector<std::string> lines_;
};

/// The worker threads for `n_jobs`: n >= 1 as given, -1 or None (0 here) every core, -2 all but
/// one, ... (scikit-learn's convention). ValueError naming n_jobs otherwise.
int resolve_threads(int n_jobs);

/// How `key` names a flag of the command line and the parameter it is in Python.
using ParamNames = std::initializer_list<std::pair<const char*, const char*>>;

/// Runs `body` and maps rotor's errors to Python's (ValueError for input and configuration,
/// MemoryError for the memory plan, OSError for the system, KeyboardInterrupt kept), a
/// ConfigError's flag renamed to its parameter by `names` ("--topics: must be >= 1" becomes
/// "n_components: must be >= 1").
void translate_errors(const std::function<void()>& body, ParamNames names);

/// The checkpoint parameters of a fit: checkpoint_every and checkpoint_dir (the command line's
/// --checkpoint-every and --checkpoint-dir) and fit's resume (--resume), from `p`'s
/// "checkpoint_every", "checkpoint_dir" and "resume" ("" for none; the Python side has checked
/// that a directory is named when checkpoint_every > 0).
struct CheckpointParams {
    std::uint32_t every = 0;
    std::string dir;
    std::string resume;

    explicit CheckpointParams(const py::dict& p);
    /// Whether checkpoints are written.
    bool writes() const { return every > 0 && !dir.empty(); }
    /// Whether iteration `iter` of a run to `last` writes one (train::checkpoint_due).
    bool due(std::uint32_t iter, std::uint32_t last) const {
        return writes() && train::checkpoint_due(iter, every, last);
    }
    /// Before any work, as the command line does: checkpoint_dir's parent exists (ConfigError
    /// naming checkpoint_dir otherwise), and what killed runs left beside it is removed.
    void prepare() const;
};

/// fit's `resume` as the command line's --resume with every flag given: refuses a model-defining
/// setting that is not the checkpoint's (all of `settings` unless `given` leaves some out; a
/// --no-X flag's on/off said as its parameter's False/True) and a
/// total `target` below the `done` iterations of checkpoint `resume` (train/resume.h:
/// ConfigError naming the flag, which translate_errors renames to the parameter).
void check_resume(std::span<const train::ResumeSetting> settings, std::uint64_t done,
                  std::uint64_t target, const std::string& resume,
                  const std::string& target_flag = "--iterations",
                  const std::function<bool(const std::string&)>& given = {});

/// Runs translate_errors(body, names), then appends the records of `records` (if made) to
/// `sink`, whether the body returned or raised: an interrupted fit's records reach the caller,
/// which keeps them for a resumed fit (docs/python.md, "Checkpoints").
void run_fit(const std::function<void()>& body, ParamNames names,
             const std::optional<Records>& records, py::list& sink);

/// The same for a binding whose records are JSON lines of its own (`lines`, filled by the body).
void run_fit(const std::function<void()>& body, ParamNames names,
             const std::vector<std::string>& lines, py::list& sink);

/// sched::PinMode::kAuto (workers pinned to cores when they fill the CPUs the process may use, as
/// the command line does) or kNone.
sched::PinMode pin_mode(bool pin);

}  // namespace rotor::python
