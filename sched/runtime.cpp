#include "sched/runtime.h"

#include <hwloc.h>
#include <sched.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <latch>
#include <mutex>
#include <optional>
#include <string>

#include "core/base/error.h"
#include "core/base/plural.h"
#include "sched/topology.h"

namespace rotor::sched {
namespace detail {
namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

/// Carries a pointer into a oneTBB task. oneTBB is not instrumented, so ThreadSanitizer cannot
/// see that a task runs after the coordinator enqueued it; passing the task's inputs through an
/// atomic (release on every copy, acquire on use) makes that hand-off visible, without any
/// sanitizer-specific code.
template <class T>
class Handoff {
  public:
    explicit Handoff(T* p) noexcept { p_.store(p, std::memory_order_release); }
    Handoff(const Handoff& o) noexcept { p_.store(o.get(), std::memory_order_release); }
    Handoff& operator=(const Handoff&) = delete;
    T* get() const noexcept { return p_.load(std::memory_order_acquire); }

  private:
    std::atomic<T*> p_{nullptr};
};

/// What the current thread was last bound to by an observer: which observer (by a process-unique
/// id, never reused), which arena slot and which PU (-1 for a node cpuset or no binding).
/// Binding is skipped when the same observer sees the same thread in the same slot again, so
/// each thread is pinned once per slot it occupies.
struct PinState {
    std::uint64_t owner = 0;
    int slot = -1;
    int pu = -1;
};
thread_local PinState tls_pin;
std::atomic<std::uint64_t> next_observer_id{1};

struct Bitmap {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    Bitmap() {
        if (set == nullptr) throw SystemError("hwloc_bitmap_alloc failed");
    }
    Bitmap(const Bitmap&) = delete;
    Bitmap& operator=(const Bitmap&) = delete;
    ~Bitmap() { hwloc_bitmap_free(set); }
};

/// What an arena's observer does to a thread entering it.
enum class ObserverAction {
    kBind,     ///< bind to the slot's cpuset with hwloc
    kTrack,    ///< oneTBB binds (task_arena::constraints); only record
    kRestore,  ///< no pinning: undo a pin left on the thread by another runtime's observer
};

/// What an observer needs; immutable once published.
struct PinConfig {
    std::uint64_t id = 0;
    ObserverAction action = ObserverAction::kRestore;
    hwloc_topology_t topo = nullptr;
    std::vector<int> slot_pus;
    std::vector<hwloc_const_cpuset_t> slot_sets;
    cpu_set_t original{};
    std::atomic<std::int64_t>* pinned = nullptr;
    std::atomic<std::int64_t>* failed = nullptr;
};

/// Binds each thread entering its arena to the cpuset of the thread's arena slot (oneTBB's
/// threads move between arenas, so a thread is re-bound when it comes from another arena).
class PinObserver final : public tbb::task_scheduler_observer {
  public:
    PinObserver(tbb::task_arena& arena, PinConfig config)
        : tbb::task_scheduler_observer(arena), config_(std::move(config)) {
        config_.id = next_observer_id.fetch_add(1);
        // Published through an atomic: oneTBB calls the observer from its own threads through
        // uninstrumented code, and this makes the hand-off visible to ThreadSanitizer.
        published_.store(&config_, std::memory_order_release);
        observe(true);
    }
    ~PinObserver() override {
        observe(false);
        // Every callback ended with a release increment; acquiring the count orders them all
        // before this object is freed (oneTBB's own ordering is invisible to ThreadSanitizer).
        (void)callbacks_.load(std::memory_order_acquire);
    }

    void on_scheduler_entry(bool /*is_worker*/) override {
        enter();
        callbacks_.fetch_add(1, std::memory_order_release);
    }

  private:
    void enter() {
        const PinConfig* c = published_.load(std::memory_order_acquire);
        const int slot = tbb::this_task_arena::current_thread_index();
        if (c == nullptr || slot < 0) return;
        if (tls_pin.owner == c->id && tls_pin.slot == slot) return;
        switch (c->action) {
            case ObserverAction::kTrack:
                tls_pin = PinState{c->id, slot, -1};
                return;
            case ObserverAction::kRestore:
                if (tls_pin.owner != 0 &&
                    sched_setaffinity(0, sizeof(c->original), &c->original) != 0) {
                    c->failed->fetch_add(1, std::memory_order_relaxed);
                }
                tls_pin = PinState{c->id, slot, -1};
                return;
            case ObserverAction::kBind:
                break;
        }
        const auto i = static_cast<std::size_t>(slot) % c->slot_sets.size();
        if (hwloc_set_cpubind(c->topo, c->slot_sets[i], HWLOC_CPUBIND_THREAD) == 0) {
            tls_pin = PinState{c->id, slot, c->slot_pus[i]};
            c->pinned->fetch_add(1, std::memory_order_relaxed);
        } else {
            tls_pin = PinState{c->id, slot, -1};
            c->failed->fetch_add(1, std::memory_order_relaxed);
        }
    }

    PinConfig config_;
    std::atomic<const PinConfig*> published_{nullptr};
    std::atomic<std::uint64_t> callbacks_{0};
};

/// One NUMA node's share of the runtime.
struct NodeArena {
    int node = 0;
    std::vector<int> workers;
    std::unique_ptr<tbb::task_arena> arena;
    std::vector<std::unique_ptr<Bitmap>> sets;  ///< cpusets the observer binds to (owned here)
    std::unique_ptr<PinObserver> observer;
};

/// Collects the exceptions of a parallel call; rethrows the lowest index's.
class Errors {
  public:
    explicit Errors(std::size_t n) : errors_(n) {}
    void set(std::size_t i, std::exception_ptr e) { errors_[i] = std::move(e); }
    void rethrow() const {
        for (const auto& e : errors_) {
            if (e) std::rethrow_exception(e);
        }
    }

  private:
    std::vector<std::exception_ptr> errors_;
};

struct Call;
/// One worker's task in a run_workers() call.
struct Job {
    Call* call = nullptr;
    int worker = -1;
    int node = -1;
};

/// The state of one run_workers() call, shared by its tasks; lives on the caller's stack.
struct Call {
    Call(const std::function<void(int)>& f, int p)
        : fn(f),
          done(p),
          errors(static_cast<std::size_t>(p)),
          jobs(static_cast<std::size_t>(p)),
          runs(static_cast<std::size_t>(p)) {}
    const std::function<void(int)>& fn;
    std::latch done;
    Errors errors;
    std::vector<Job> jobs;
    std::vector<WorkerRun> runs;
};

}  // namespace

class RuntimeImpl {
  public:
    RuntimeImpl(Placement placement, PinMode pin) : placement_(std::move(placement)), pin_(pin) {
        const int p = placement_.threads();
        if (p < 1) throw ConfigError("threads", "the placement has no worker");
        if (sched_getaffinity(0, sizeof(original_), &original_) != 0) {
            throw SystemError::from_errno("sched_getaffinity", errno);
        }
        // The coordinator only waits, so P TBB worker threads must be allowed besides it.
        control_ = std::make_unique<tbb::global_control>(
            tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(p) + 1);
        std::string why_not, why_off;
        if (pin_ == PinMode::kAuto) {
            const int allowed = CPU_COUNT(&original_);
            pin_ = p >= allowed ? PinMode::kPu : PinMode::kNone;
            if (pin_ == PinMode::kNone)
                why_off = ": " + plural(static_cast<std::uint64_t>(p), "worker") + " on " +
                          plural(static_cast<std::uint64_t>(allowed), "allowed CPU") +
                          ", placed by the OS";
        }
        if (pin_ != PinMode::kNone) why_not = check_pinning();
        if (!why_not.empty()) pin_ = PinMode::kNone;

        // tbb::info::numa_nodes() loads tbbbind, which oneTBB dlopen()s with RTLD_DEEPBIND; the
        // ThreadSanitizer runtime aborts on that, so TSan builds bind NUMA nodes with hwloc.
        std::vector<int> tbb_nodes;
        if (pin_ == PinMode::kNumaNode && !kThreadSanitizer) tbb_nodes = tbb::info::numa_nodes();
        bool any_constraints = false;
        for (int node : placement_.nodes_used()) {
            NodeArena a;
            a.node = node;
            a.workers = placement_.workers_on(node);
            const int n = static_cast<int>(a.workers.size());
            const int os = static_cast<int>(
                placement_.slots[static_cast<std::size_t>(a.workers.front())].numa_os_index);
            const bool constraints =
                std::find(tbb_nodes.begin(), tbb_nodes.end(), os) != tbb_nodes.end();
            if (constraints) {
                tbb::task_arena::constraints c;
                c.numa_id = os;
                c.max_concurrency = n;
                a.arena = std::make_unique<tbb::task_arena>(c, 0);
                any_constraints = true;
            } else {
                a.arena = std::make_unique<tbb::task_arena>(n, 0);
            }
            a.arena->initialize();
            add_observer(a, constraints);
            arenas_.push_back(std::move(a));
        }

        status_ = std::to_string(arenas_.size()) + (arenas_.size() == 1 ? " arena" : " arenas") +
                  (any_constraints ? " (tbb NUMA constraints)" : "") + ", " +
                  plural(static_cast<std::uint64_t>(p), "worker") + "; ";
        switch (pin_) {
            case PinMode::kNone:
                status_ +=
                    why_not.empty() ? "pinning off" + why_off : "pinning disabled: " + why_not;
                break;
            case PinMode::kAuto:  // resolved above
                break;
            case PinMode::kPu:
                status_ += "threads pinned to PUs";
                break;
            case PinMode::kNumaNode:
                status_ += "threads bound to NUMA nodes";
                break;
        }
        if (!placement_.warning.empty()) status_ += "; " + placement_.warning;
        runs_.resize(static_cast<std::size_t>(p));
    }

    ~RuntimeImpl() {
        // Launched tasks that have not finished yet (a task a busy core delayed) still use the
        // arenas: wait for them. Polled, since a notify after the decrement could outlive this.
        while (pending_.load(std::memory_order_acquire) != 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        // Observers stop observing before their arenas go away.
        for (NodeArena& a : arenas_) a.observer.reset();
        for (NodeArena& a : arenas_) a.arena.reset();
    }

    void run_workers(const std::function<void(int)>& fn) {
        const int p = placement_.threads();
        Call call(fn, p);
        for (NodeArena& a : arenas_) {
            for (int w : a.workers) call.jobs[static_cast<std::size_t>(w)] = Job{&call, w, a.node};
        }
        for (NodeArena& a : arenas_) {
            for (int w : a.workers) {
                // The task captures nothing but the Handoff, so everything it reads was written
                // before the Handoff's release.
                a.arena->enqueue([h = Handoff<const Job>(&call.jobs[static_cast<std::size_t>(w)])] {
                    const Job& job = *h.get();
                    Call& c = *job.call;
                    WorkerRun& run = c.runs[static_cast<std::size_t>(job.worker)];
                    run.worker = job.worker;
                    run.numa_node = job.node;
                    run.arena_slot = tbb::this_task_arena::current_thread_index();
                    run.pinned_pu = tls_pin.pu;
                    run.cpu = sched_getcpu();
                    run.thread = std::this_thread::get_id();
                    try {
                        c.fn(job.worker);
                    } catch (...) {
                        c.errors.set(static_cast<std::size_t>(job.worker),
                                     std::current_exception());
                    }
                    c.done.count_down();
                });
            }
        }
        call.done.wait();
        {
            std::lock_guard lock(runs_mutex_);
            runs_ = std::move(call.runs);
        }
        call.errors.rethrow();
    }

    void launch_workers(std::function<void(int)> fn) {
        // Shared by the tasks; the last one to finish frees it (the release/acquire count orders
        // every task's use before the delete). As in run_workers, a task captures nothing but a
        // Handoff, here to its own slot: its worker id is written before the Handoff's release,
        // so ThreadSanitizer sees every byte the task reads ordered by that handoff (a plain int
        // capture is copied into task memory that oneTBB recycles out of TSan's sight).
        struct Launch;
        struct Slot {
            Launch* launch = nullptr;
            int worker = -1;
        };
        struct Launch {
            Launch(std::function<void(int)> f, int tasks, std::atomic<int>& pending)
                : fn(std::move(f)),
                  slots(static_cast<std::size_t>(tasks)),
                  left(tasks),
                  runtime_pending(pending) {}
            std::function<void(int)> fn;
            std::vector<Slot> slots;
            std::atomic<int> left;
            std::atomic<int>& runtime_pending;
        };
        pending_.fetch_add(placement_.threads(), std::memory_order_relaxed);
        auto owned = std::make_unique<Launch>(std::move(fn), placement_.threads(), pending_);
        std::size_t next = 0;
        for (NodeArena& a : arenas_) {
            for (int w : a.workers) owned->slots[next++] = Slot{owned.get(), w};
        }
        Launch* launch = owned.release();  // owned by the tasks from here on
        next = 0;
        for (NodeArena& a : arenas_) {
            for (std::size_t i = 0; i < a.workers.size(); ++i) {
                a.arena->enqueue([h = Handoff<const Slot>(&launch->slots[next++])]() noexcept {
                    const Slot& slot = *h.get();
                    Launch* l = slot.launch;
                    l->fn(slot.worker);
                    std::atomic<int>& pending = l->runtime_pending;
                    if (l->left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                        const std::unique_ptr<Launch> last(l);
                    }
                    // The task's last touch of the runtime: its destructor may go on after it.
                    pending.fetch_sub(1, std::memory_order_release);
                });
            }
        }
    }

    void parallel_for(std::int64_t begin, std::int64_t end,
                      const std::function<void(std::int64_t, std::int64_t)>& fn) {
        if (end <= begin) return;
        // Dynamic self-scheduling: each worker takes the next chunk from a shared counter, so
        // uneven chunks balance out; about 16 chunks per worker.
        const std::int64_t n = end - begin;
        const std::int64_t grain = std::max<std::int64_t>(1, n / (16 * placement_.threads()));
        std::atomic<std::int64_t> next{begin};
        std::atomic<bool> failed{false};
        run_workers([&](int) {
            for (;;) {
                if (failed.load(std::memory_order_relaxed)) return;
                const std::int64_t lo = next.fetch_add(grain, std::memory_order_relaxed);
                if (lo >= end) return;
                try {
                    fn(lo, std::min(end, lo + grain));
                } catch (...) {
                    failed.store(true, std::memory_order_relaxed);
                    throw;
                }
            }
        });
    }

    std::vector<WorkerRun> last_runs() const {
        std::lock_guard lock(runs_mutex_);
        return runs_;
    }

    const Placement& placement() const noexcept { return placement_; }
    PinMode pin_mode() const noexcept { return pin_; }
    const std::string& status() const noexcept { return status_; }
    std::int64_t pinned() const noexcept { return pinned_.load(std::memory_order_relaxed); }
    std::int64_t failed() const noexcept { return failed_.load(std::memory_order_relaxed); }

  private:
    /// Empty when the plan's PUs may be pinned to; else the reason they may not.
    std::string check_pinning() {
        if (!placement_.this_system) return "the placement was not planned on this machine";
        topology_.emplace(Topology::detect());
        Bitmap bound;
        if (hwloc_get_cpubind(topology_->handle(), bound.set, HWLOC_CPUBIND_THREAD) != 0) {
            return "cannot read the thread's CPU binding";
        }
        for (const Slot& s : placement_.slots) {
            if (!hwloc_bitmap_isset(bound.set, s.pu_os_index)) {
                char* text = nullptr;
                hwloc_bitmap_list_asprintf(&text, bound.set);
                const std::string allowed = text != nullptr ? text : "?";
                std::free(text);
                return "the process is bound to CPUs " + allowed + ", which do not include PU " +
                       std::to_string(s.pu_os_index);
            }
        }
        return {};
    }

    void add_observer(NodeArena& a, bool tbb_binds) {
        std::vector<int> pus;
        std::vector<hwloc_const_cpuset_t> sets;
        hwloc_topology_t topo = topology_ ? topology_->handle() : nullptr;
        ObserverAction action = ObserverAction::kBind;
        if (pin_ == PinMode::kNone) {
            action = ObserverAction::kRestore;
        } else if (tbb_binds) {
            action = ObserverAction::kTrack;
        } else if (pin_ == PinMode::kPu) {
            for (int w : a.workers) {
                const unsigned pu = placement_.slots[static_cast<std::size_t>(w)].pu_os_index;
                auto set = std::make_unique<Bitmap>();
                hwloc_bitmap_only(set->set, pu);
                pus.push_back(static_cast<int>(pu));
                sets.push_back(set->set);
                a.sets.push_back(std::move(set));
            }
        } else {
            auto set = std::make_unique<Bitmap>();
            const unsigned os =
                placement_.slots[static_cast<std::size_t>(a.workers.front())].numa_os_index;
            hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topo, os);
            if (node == nullptr) throw SystemError("hwloc: no NUMA node " + std::to_string(os));
            hwloc_bitmap_copy(set->set, node->cpuset);
            pus.push_back(-1);
            sets.push_back(set->set);
            a.sets.push_back(std::move(set));
        }
        PinConfig config;
        config.action = action;
        config.topo = topo;
        config.slot_pus = std::move(pus);
        config.slot_sets = std::move(sets);
        config.original = original_;
        config.pinned = &pinned_;
        config.failed = &failed_;
        a.observer = std::make_unique<PinObserver>(*a.arena, std::move(config));
    }

    Placement placement_;
    PinMode pin_;
    std::string status_;
    std::optional<Topology> topology_;
    cpu_set_t original_{};  ///< the constructing thread's CPU affinity
    std::unique_ptr<tbb::global_control> control_;
    std::vector<NodeArena> arenas_;
    std::atomic<std::int64_t> pinned_{0};
    std::atomic<std::int64_t> failed_{0};
    std::atomic<int> pending_{0};  ///< launch_workers tasks not finished
    mutable std::mutex runs_mutex_;
    std::vector<WorkerRun> runs_;
};

}  // namespace detail

Runtime::Runtime(Placement placement, PinMode pin)
    : impl_(std::make_unique<detail::RuntimeImpl>(std::move(placement), pin)) {}

Runtime::Runtime(int threads, PinMode pin, Policy policy)
    : Runtime(plan_placement(Topology::detect(), threads, policy), pin) {}

Runtime::~Runtime() = default;

int Runtime::threads() const noexcept { return impl_->placement().threads(); }
const Placement& Runtime::placement() const noexcept { return impl_->placement(); }
PinMode Runtime::pin_mode() const noexcept { return impl_->pin_mode(); }
const std::string& Runtime::status() const noexcept { return impl_->status(); }
void Runtime::run_workers(const std::function<void(int)>& fn) { impl_->run_workers(fn); }
void Runtime::launch_workers(std::function<void(int)> fn) { impl_->launch_workers(std::move(fn)); }
void Runtime::parallel_for(std::int64_t begin, std::int64_t end,
                           const std::function<void(std::int64_t, std::int64_t)>& fn) {
    impl_->parallel_for(begin, end, fn);
}
std::vector<WorkerRun> Runtime::last_runs() const { return impl_->last_runs(); }
std::int64_t Runtime::pin_count() const noexcept { return impl_->pinned(); }
std::int64_t Runtime::pin_failures() const noexcept { return impl_->failed(); }

}  // namespace rotor::sched
