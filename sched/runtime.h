// The intra-node runtime: P worker threads placed on cores (placement.h), one oneTBB task_arena
// per NUMA node used, and a task_scheduler_observer per arena that pins each thread entering it
// (oneTBB guide "Guiding Task Scheduler Execution"). run_workers() runs P long-lived worker
// functions concurrently (e.g. workers looping over BlockScheduler::acquire); parallel_for() runs
// simple data-parallel loops inside the same arenas.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sched/placement.h"

namespace rotor::sched {

/// How threads are bound to the machine.
enum class PinMode {
    kNone,      ///< no binding at all
    kPu,        ///< each arena slot bound to its worker's PU (hwloc_set_cpubind), the default
    kNumaNode,  ///< threads bound to their arena's NUMA node: through task_arena::constraints
                ///< (tbbbind) when the TBB build supports it, else by the observer with hwloc
    kAuto,      ///< kPu when the workers are at least as many as the CPUs the creating thread may
                ///< run on (the whole machine, or the cpuset mpiexec --bind-to gave the rank),
                ///< else kNone: a run that leaves CPUs free leaves placement to the OS, so that
                ///< runs side by side do not all stack on the first PUs (what `train` uses)
};

/// What one run_workers() task observed, for tests and diagnostics.
struct WorkerRun {
    int worker = -1;      ///< worker index
    int numa_node = -1;   ///< logical NUMA node of the worker's slot (its arena)
    int arena_slot = -1;  ///< tbb::this_task_arena::current_thread_index() in that arena
    int pinned_pu = -1;   ///< OS index of the PU the observer pinned the thread to, -1 if none
    int cpu = -1;         ///< sched_getcpu() when the worker function started
    std::thread::id thread;
};

namespace detail {
class RuntimeImpl;
}

/// Owns the arenas, observers and a tbb::global_control allowing P worker threads. Not copyable
/// or movable. run_workers() and parallel_for() may be called from one thread at a time (the
/// coordinator), never from inside a worker. oneTBB keeps its threads after a Runtime is gone, so
/// a thread pinned by one Runtime stays pinned until another Runtime's arena re-binds it (or, with
/// PinMode::kNone, restores the creating thread's affinity); one Runtime per process is best.
class Runtime {
  public:
    /// Workers as planned by `placement` (threads = placement.threads() >= 1). Pinning is skipped,
    /// and status() says why, when `pin` is kNone, when the placement was not planned on this
    /// machine, or when the calling thread's CPU binding (e.g. mpiexec --bind-to) does not
    /// contain every PU of the plan.
    explicit Runtime(Placement placement, PinMode pin = PinMode::kPu);
    /// Detects this machine's topology and plans `threads` workers with `policy`. Throws
    /// ConfigError (key "threads") for threads < 1.
    explicit Runtime(int threads, PinMode pin = PinMode::kPu, Policy policy = Policy::kCompact);
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;
    ~Runtime();

    int threads() const noexcept;
    const Placement& placement() const noexcept;
    /// The binding in effect: the requested mode (kAuto resolved), or kNone after a fallback.
    PinMode pin_mode() const noexcept;
    /// One line on arenas, constraints and pinning, e.g. "2 arenas (tbb constraints), pinned to
    /// PUs" or "pinning disabled: ...". Includes the placement warning, if any.
    const std::string& status() const noexcept;

    /// Runs fn(0), ..., fn(P-1) concurrently, each on its own thread in its NUMA node's arena,
    /// and returns when all have returned. If any threw, rethrows the exception of the lowest
    /// worker index that threw (after all have finished). fn must be safe to call concurrently.
    void run_workers(const std::function<void(int worker)>& fn);
    /// Starts fn(0), ..., fn(P-1) as run_workers() does and returns at once, without waiting for
    /// them (sched::Team: it knows when the work is done, and a task that a busy core delays
    /// finds nothing left to do). fn is copied into the tasks: everything it refers to must
    /// outlive every task (shared ownership), and it must not throw. No last_runs() record.
    void launch_workers(std::function<void(int worker)> fn);
    /// Calls fn(lo, hi) on disjoint subranges covering [begin, end), in parallel on the P
    /// workers inside their arenas: each worker takes the next chunk (about (end-begin)/(16 P)
    /// indexes) from a shared counter until none is left. After an exception no new chunk starts;
    /// it propagates as in run_workers().
    void parallel_for(std::int64_t begin, std::int64_t end,
                      const std::function<void(std::int64_t lo, std::int64_t hi)>& fn);
    /// What each worker of the last run_workers() observed, indexed by worker.
    std::vector<WorkerRun> last_runs() const;
    /// Threads the observers pinned (count of successful hwloc_set_cpubind calls) and failed to.
    std::int64_t pin_count() const noexcept;
    std::int64_t pin_failures() const noexcept;

  private:
    std::unique_ptr<detail::RuntimeImpl> impl_;
};

}  // namespace rotor::sched
