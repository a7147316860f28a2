// Key-range push/pull between workers and servers with bounded delay: the communication of the
// parameter server (Li et al., "Scaling distributed machine learning with the parameter server",
// OSDI 2014; the delayed block proximal gradient of their NIPS 2014 paper), for any model whose
// state is a vector indexed by 64-bit keys (docs/logreg.md, "Key-value push/pull").
//
// Roles. A KvLayout names the server ranks and the worker ranks (a rank may be both). Server s
// owns the keys [bounds[s], bounds[s+1]) (the last range includes 2^64 − 1). Servers[0] is also
// the scheduler: it keeps the clock of finished iterations.
//
// Protocol, per iteration t (t = 0, 1, 2, ... on every worker, each worker running them all):
//   worker: begin_iteration(t)   blocks until t − τ − 1 has finished on every worker
//           push(t, keys, values) one message per server: the keys it owns (sorted) and their
//                                 values, possibly none (range push: never one message a key)
//           pull(t, keys)         one request per server owning some of the keys, answered once
//                                 every worker's push of t has reached that server and been
//                                 applied; non-blocking: pull_ready / wait_pull
//           end_iteration(t)      t has finished here: tells the scheduler
//   server: on_push(t, worker, keys, values) as each push arrives (updates applied on arrival),
//           on_complete(t) once every worker's push of t has arrived (in order of t),
//           on_pull(keys, out) to answer a pull (after on_complete of its iteration).
// With τ = 0 the iterations run one after the other everywhere (sequential consistency); with
// τ = kInfiniteDelay nobody waits (eventual consistency).
//
// Progress engine. Everything moves inside progress() (called by every blocking call here, and
// by the caller now and then during long computations): it tests the posted receives (one per
// peer and channel), handles what arrived, and retires completed sends. Messages travel over
// Communicator::isend/irecv with the tags kKvRequestTag (worker to server), kKvReplyTag (server
// to worker) and kKvControlTag (failures), in the wire format of comm/wire.h. Without filters a
// message of a rank to itself is handled at once instead (KvOptions::direct_self): a delivery
// the communicator could have made too (at once, in the order sent), so it changes no result,
// only the cost (in one process at a thousand small iterations a pass, the encoding, copies and
// mailboxes were most of the engine's time).
//
// Failures. fail(error) tells every rank of the layout that this rank failed; any rank that
// learns it (in any call of the engine) throws AgreedError with that rank, message and exit
// code, so every rank ends with the same error. A rank that goes silent (killed, hung) makes the
// others throw CommError after KvOptions::timeout_s without any message, never a hang (so the
// timeout must exceed the longest computation between two messages).
//
// Thread-safety: one KvNode per rank, used by the rank's comm thread only (the Communicator's
// rule). Callbacks run on that thread, inside the engine's calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/agreed.h"
#include "comm/communicator.h"
#include "comm/kv_filter.h"
#include "core/base/error.h"

namespace rotor::comm {

inline constexpr int kKvRequestTag = 2000;
inline constexpr int kKvReplyTag = 2001;
inline constexpr int kKvControlTag = 2002;
/// τ for eventual consistency: no iteration ever waits.
inline constexpr std::int64_t kInfiniteDelay = -1;

/// Who serves which keys and who works. A value type.
struct KvLayout {
    std::vector<int> servers;           ///< server ranks, distinct
    std::vector<int> workers;           ///< worker ranks, distinct
    std::vector<std::uint64_t> bounds;  ///< servers.size() + 1 increasing bounds, first 0

    /// Servers own equal shares of the 64-bit key space.
    static KvLayout even(std::vector<int> servers, std::vector<int> workers);
    /// The index in `servers` of the server owning `key`.
    std::size_t server_of(std::uint64_t key) const noexcept;
    /// Throws ConfigError("kv layout") unless well formed for a communicator of `ranks` ranks.
    void validate(int ranks) const;
};

/// Options of a KvNode. A plain struct.
struct KvOptions {
    std::int64_t delay = 0;      ///< τ >= 0, or kInfiniteDelay
    std::size_t push_width = 1;  ///< values per key in a push (e.g. 2: g_k and u_k)
    std::size_t pull_width = 1;  ///< values per key in a pull answer
    double timeout_s = 60;       ///< a wait without any message for this long throws CommError
    /// Without filters, a message of this rank to itself (its worker's push, pull and done to its
    /// own server, the answers and clock back) is handled at once instead of being encoded and
    /// sent through the communicator: the same calls of the handler in the same order, the same
    /// values, and the stats count it as the message it stands for. false: always send.
    bool direct_self = true;
    /// Push values travel as float32: push() rounds every value to the nearest float, and the
    /// server sees the rounded values (sent or delivered directly alike). false: doubles.
    bool push_float32 = false;
    /// Added to an iteration in what the filters see (KvFilterContext::t): consecutive nodes
    /// sharing one filter stack (release_filters) count on from where the last one ended.
    std::uint64_t filter_first = 0;
};

/// What a server does with the messages (all required on server ranks).
struct KvServerHandler {
    /// A worker's push of iteration t: sorted keys of this server and push_width values each.
    std::function<void(std::uint64_t t, int worker, std::span<const std::uint64_t> keys,
                       std::span<const double> values)>
        on_push;
    /// Every worker's push of iteration t has arrived (called for t = 0, 1, ... in order).
    std::function<void(std::uint64_t t)> on_complete;
    /// Appends pull_width values per key of `keys` (sorted, this server's) to `out`.
    std::function<void(std::span<const std::uint64_t> keys, std::vector<double>& out)> on_pull;
    /// Optional: the keys (sorted) a filter dropped from a worker's push of t and no filter
    /// restored (comm/kv_filter.h), called after that push's on_push.
    std::function<void(std::uint64_t t, int worker, std::span<const std::uint64_t> keys)>
        on_push_dropped = nullptr;
};

/// One worker event of the schedule (for checking the delay bound).
struct KvEvent {
    enum class Kind { kBegin, kEnd };
    Kind kind = Kind::kBegin;
    std::uint64_t iteration = 0;
    std::int64_t time_ns = 0;    ///< steady_clock, nanoseconds
    std::uint64_t finished = 0;  ///< iterations known finished everywhere at that moment
};

/// Traffic of one node.
struct KvStats {
    std::uint64_t bytes_sent = 0;          ///< payload bytes of every message sent
    std::uint64_t request_bytes_sent = 0;  ///< of them, as a worker (pushes, pulls, done, stop)
    std::uint64_t reply_bytes_sent = 0;    ///< of them, as a server (pull answers, clocks)
    std::uint64_t messages_sent = 0;
    std::uint64_t bytes_received = 0;
    std::uint64_t messages_received = 0;
    double wait_s = 0;  ///< seconds blocked in begin_iteration, wait_pull and finish
    std::vector<KvFilterStats> filters;  ///< per filter of the node's stack, in order

    /// Adds another run's stats (the same filter stack, or none yet here).
    void add(const KvStats& run);
};

/// The engine of one rank. See the file comment. Not copyable.
class KvNode {
  public:
    /// `comm` must outlive the node. `handler` is used when this rank is a server. `filters`
    /// shrink pushes and pulls (comm/kv_filter.h); every rank of the layout needs the same
    /// stack (same filters, same order), with its own instances. None: the plain messages.
    KvNode(Communicator& comm, KvLayout layout, KvOptions options, KvServerHandler handler = {},
           KvFilterStack filters = {});
    ~KvNode();
    KvNode(const KvNode&) = delete;
    KvNode& operator=(const KvNode&) = delete;

    bool is_server() const noexcept { return server_index_ >= 0; }
    bool is_worker() const noexcept { return worker_index_ >= 0; }
    const KvLayout& layout() const noexcept { return layout_; }

    /// Worker: waits until iteration t − τ − 1 has finished on every worker. t must be the next
    /// iteration (0, then one more than the last ended).
    void begin_iteration(std::uint64_t t);
    /// Worker: pushes push_width values per key (keys strictly increasing) for iteration t, once
    /// per iteration.
    void push(std::uint64_t t, std::span<const std::uint64_t> keys, std::span<const double> values);
    /// Worker: asks for the values of `keys` (strictly increasing) after iteration t has been
    /// applied on their servers. Returns a handle for pull_ready / wait_pull. `exact`: the lossy
    /// filters let every value of the answer through (e.g. a final synchronisation).
    std::uint64_t pull(std::uint64_t t, std::span<const std::uint64_t> keys, bool exact = false);
    /// True once every answer of pull `id` has arrived (progresses first).
    bool pull_ready(std::uint64_t id);
    /// Waits for pull `id` and returns pull_width values per key, aligned with its keys.
    std::vector<double> wait_pull(std::uint64_t id);
    /// Worker: iteration t has finished here (its pulls that matter have been waited for).
    void end_iteration(std::uint64_t t);

    /// Advances everything without blocking. Throws AgreedError when a rank failed.
    void progress();
    /// Ends the node's part: a worker waits until every worker has ended every iteration it
    /// ran and says so to the servers; a server waits until every worker has; both wait for
    /// their sends. Call it on every rank of the layout, once, at the end.
    void finish();
    /// Tells every rank of the layout that this rank failed with `error` (best effort, never
    /// throws); they throw AgreedError with its message, exit code and this rank.
    void fail(const Error& error) noexcept;
    /// This rank's part of a run: `body`, then finish(). An Error from either that the ranks
    /// have not agreed on yet (anything but AgreedError) is told to every rank (fail) and
    /// rethrown, so that every rank ends with the same error.
    template <class Body>
    void run(Body&& body) {
        try {
            body();
            finish();
        } catch (const AgreedError&) {
            throw;
        } catch (const Error& e) {
            fail(e);
            throw;
        }
    }

    /// After finish(): hands the filter stack over with what it remembers (key caches, last
    /// values), for a next node of the same ranks to go on with (every rank of the layout does
    /// the same, so both ends of each pair keep moving in lockstep).
    KvFilterStack release_filters();

    /// The worker's schedule so far, in order.
    const std::vector<KvEvent>& schedule() const noexcept { return schedule_; }
    KvStats stats() const;
    /// Iterations finished on every worker, as this worker knows.
    std::uint64_t finished_everywhere() const noexcept { return clock_; }

  private:
    struct Inbox;
    struct PendingPull;
    struct Deferred;

    void post_receives();
    void send(int dest, int tag, std::vector<std::byte> bytes);
    bool direct_to(int rank) const noexcept { return direct_self_ && rank == comm_.rank(); }
    void count_direct(int tag, std::size_t bytes);
    void take_pull_request(std::unique_ptr<Deferred> d);
    /// The pending pull `id` with server `server`'s answer now taken off its wait list, or null
    /// when no such answer is awaited.
    PendingPull* answered_pull(std::uint64_t id, std::size_t server);
    /// Copies server s's answer into p.values at its keys' place; false (nothing copied) when
    /// `values` is not pull_width values for each of its keys.
    bool store_answer(PendingPull& p, std::size_t s, std::span<const double> values) const;
    /// The index in layout_.servers of server rank `src`.
    std::size_t server_slot(int src) const;
    void take_clock(std::uint64_t clock);
    void handle(int src, int tag, std::span<const std::byte> bytes);
    void handle_request(int src, std::span<const std::byte> bytes);
    void handle_reply(int src, std::span<const std::byte> bytes);
    void handle_control(int src, std::span<const std::byte> bytes);
    void on_push_message(int src, std::uint64_t t, std::span<const std::uint64_t> keys,
                         std::span<const double> values,
                         std::span<const std::uint64_t> dropped = {});
    void handle_filtered_push(int src, WireReader& r);
    void send_push(int server, std::uint64_t t, std::span<const std::uint64_t> keys,
                   std::span<const double> values);
    void send_pull(int server, std::uint64_t t, std::uint64_t id,
                   std::span<const std::uint64_t> keys, bool exact);
    void send_answer(const Deferred& d, std::vector<double> values);
    void take_filtered_answer(int src, WireReader& r);
    void on_done(int src, std::uint64_t t);
    void answer_pulls();
    /// Makes progress until ready() holds; returns at once, without a progress call, when it
    /// already does. A template, so that the common already-ready case builds no std::function.
    template <class Ready>
    void wait_until(const Ready& ready, const char* what);
    int worker_slot(int rank, const char* what) const;

    Communicator& comm_;
    KvLayout layout_;
    KvOptions options_;
    KvServerHandler handler_;
    KvFilterStack filters_;
    bool direct_self_ = false;  ///< options_.direct_self and no filters
    int server_index_ = -1;
    int worker_index_ = -1;
    std::vector<std::unique_ptr<Inbox>> inboxes_;
    struct Outgoing {
        std::unique_ptr<std::vector<std::byte>> bytes;
        Request request;
    };
    std::vector<Outgoing> outgoing_;
    // Worker state.
    std::uint64_t next_iteration_ = 0;
    bool in_iteration_ = false;
    bool pushed_ = false;  ///< the current iteration has pushed
    std::uint64_t clock_ = 0;
    std::uint64_t next_pull_id_ = 0;
    /// A filtered answer's id travels as its step from the last one between the same server and
    /// worker: the last taken, per server slot.
    std::vector<std::uint64_t> answer_id_taken_;
    std::map<std::uint64_t, std::unique_ptr<PendingPull>> pulls_;
    std::vector<double> rounded_;  ///< push_float32: the values pushed, rounded
    std::vector<KvEvent> schedule_;
    // Server state.
    std::map<std::uint64_t, std::size_t> pushes_;  ///< pushes arrived per incomplete iteration
    std::uint64_t completed_ = 0;                  ///< iterations complete here
    std::vector<std::unique_ptr<Deferred>> deferred_;
    std::vector<std::uint64_t> done_;            ///< scheduler: iterations ended, per worker
    std::vector<std::uint64_t> answer_id_sent_;  ///< the last filtered answer's id, per worker
    std::uint64_t clock_sent_ = 0;               ///< scheduler: the last clock sent to the workers
    std::size_t stops_ = 0;
    bool finished_ = false;
    bool progressed_ = false;  ///< the last progress() handled a message
    KvStats stats_;
};

}  // namespace rotor::comm
