#include "comm/kv.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "comm/agreed.h"
#include "comm/wire.h"
#include "core/base/timer.h"

namespace rotor::comm {

void KvStats::add(const KvStats& run) {
    bytes_sent += run.bytes_sent;
    request_bytes_sent += run.request_bytes_sent;
    reply_bytes_sent += run.reply_bytes_sent;
    messages_sent += run.messages_sent;
    bytes_received += run.bytes_received;
    messages_received += run.messages_received;
    wait_s += run.wait_s;
    if (filters.empty()) filters.resize(run.filters.size());
    for (std::size_t i = 0; i < run.filters.size(); ++i) {
        KvFilterStats& t = filters[i];
        const KvFilterStats& f = run.filters[i];
        t.name = f.name;
        t.push_in += f.push_in;
        t.push_out += f.push_out;
        t.pull_in += f.pull_in;
        t.pull_out += f.pull_out;
        t.entries_dropped += f.entries_dropped;
    }
}

namespace {

enum class Kind : std::uint8_t {
    kPush = 1,
    kPull = 2,
    kDone = 3,
    kStop = 4,
    kReply = 5,
    kClock = 6,  ///< the clock advanced by a varint (more than one)
    kFail = 7,
    kPushFiltered = 8,    ///< a push through the filters: t, then a KvWire
    kPullFiltered = 9,    ///< a pull through the filters: t, id, exact, then a KvWire of keys
    kReplyFiltered = 10,  ///< an answer through the filters: id's step, then a KvWire of values
    kPushFloat32 = 11,    ///< kPush with float32 values (KvOptions::push_float32)
    kClockNext = 12,      ///< the clock advanced by one (no payload)
};

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

WireWriter start(Kind kind) {
    WireWriter w;
    w.put(static_cast<std::uint8_t>(kind));
    return w;
}

// Sizes of the messages in the wire format (a u8 kind; iterations, ids, clocks and counts as
// varints, keys as u64, values as doubles or floats): what a direct delivery to this rank counts
// in the stats.
constexpr std::size_t kKindBytes = sizeof(std::uint8_t);

/// kPush (kPushFloat32): t, keys, values of `value_bytes` each.
constexpr std::size_t push_bytes(std::uint64_t t, std::size_t keys, std::size_t width,
                                 std::size_t value_bytes) {
    return kKindBytes + varint_bytes(t) + counted_bytes(keys, sizeof(std::uint64_t)) +
           counted_bytes(keys * width, value_bytes);
}
/// kPull: t, id, keys.
constexpr std::size_t pull_bytes(std::uint64_t t, std::uint64_t id, std::size_t keys) {
    return kKindBytes + varint_bytes(t) + varint_bytes(id) +
           counted_bytes(keys, sizeof(std::uint64_t));
}
/// kReply: id, values.
constexpr std::size_t reply_bytes(std::uint64_t id, std::size_t values) {
    return kKindBytes + varint_bytes(id) + counted_bytes(values, sizeof(double));
}
/// kDone (t).
constexpr std::size_t counter_bytes(std::uint64_t value) {
    return kKindBytes + varint_bytes(value);
}
/// kClockNext (a step of one) or kClock (the step).
constexpr std::size_t clock_bytes(std::uint64_t step) {
    return step == 1 ? kKindBytes : counter_bytes(step);
}
constexpr std::size_t kStopBytes = kKindBytes;

/// Throws unless keys are strictly increasing and inside [lo, hi) (hi == 0: up to 2^64 − 1).
void check_keys(const WireReader& r, std::span<const std::uint64_t> keys, std::uint64_t lo,
                std::uint64_t hi, bool last) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
        if (i > 0 && keys[i] <= keys[i - 1]) r.fail("keys not strictly increasing");
        if (keys[i] < lo || (!last && keys[i] >= hi)) {
            r.fail(fmt::format("key {} outside the server's range", keys[i]));
        }
    }
}

}  // namespace

struct KvNode::Inbox {
    int src = 0;
    int tag = 0;
    std::vector<std::byte> buf;
    Request request;
};

struct KvNode::PendingPull {
    std::vector<std::uint64_t> keys;
    std::vector<double> values;
    std::vector<std::size_t> first;  ///< per server: index of its first key (size servers + 1)
    std::uint64_t t = 0;
    bool exact = false;
    std::set<std::size_t> waiting;  ///< servers whose answer has not arrived
};

struct KvNode::Deferred {
    int src = 0;
    std::uint64_t t = 0;
    std::uint64_t id = 0;
    bool exact = false;
    std::vector<std::uint64_t> keys;
};

KvLayout KvLayout::even(std::vector<int> servers, std::vector<int> workers) {
    KvLayout l;
    l.servers = std::move(servers);
    l.workers = std::move(workers);
    const std::uint64_t n = l.servers.size();
    l.bounds.push_back(0);
    for (std::uint64_t s = 1; s < n; ++s) {
        __extension__ using U128 = unsigned __int128;
        l.bounds.push_back(static_cast<std::uint64_t>((static_cast<U128>(1) << 64) * s / n));
    }
    l.bounds.push_back(std::numeric_limits<std::uint64_t>::max());
    return l;
}

std::size_t KvLayout::server_of(std::uint64_t key) const noexcept {
    const auto it = std::upper_bound(bounds.begin() + 1, bounds.end() - 1, key);
    return static_cast<std::size_t>(it - (bounds.begin() + 1));
}

void KvLayout::validate(int ranks) const {
    const auto distinct_in_range = [&](const std::vector<int>& v) {
        std::set<int> seen;
        for (const int r : v) {
            if (r < 0 || r >= ranks || !seen.insert(r).second) return false;
        }
        return !v.empty();
    };
    if (!distinct_in_range(servers) || !distinct_in_range(workers)) {
        throw ConfigError("kv layout", "servers and workers must be distinct ranks of the job");
    }
    if (bounds.size() != servers.size() + 1 || bounds.front() != 0 ||
        !std::is_sorted(bounds.begin(), bounds.end())) {
        throw ConfigError("kv layout", "bounds must be servers + 1 increasing keys from 0");
    }
}

KvNode::KvNode(Communicator& comm, KvLayout layout, KvOptions options, KvServerHandler handler,
               KvFilterStack filters)
    : comm_(comm),
      layout_(std::move(layout)),
      options_(options),
      handler_(std::move(handler)),
      filters_(std::move(filters)) {
    layout_.validate(comm_.size());
    direct_self_ = options_.direct_self && filters_.empty();
    if (options_.delay < 0 && options_.delay != kInfiniteDelay) {
        throw ConfigError("delay", "must be >= 0 or infinite");
    }
    const auto index = [&](const std::vector<int>& v) {
        const auto it = std::find(v.begin(), v.end(), comm_.rank());
        return it == v.end() ? -1 : static_cast<int>(it - v.begin());
    };
    server_index_ = index(layout_.servers);
    worker_index_ = index(layout_.workers);
    if (is_server()) {
        ROTOR_ASSERT(handler_.on_push && handler_.on_complete && handler_.on_pull,
                     "a server needs every handler");
    }
    if (server_index_ == 0) done_.assign(layout_.workers.size(), 0);
    if (is_server()) answer_id_sent_.assign(layout_.workers.size(), 0);
    if (is_worker()) answer_id_taken_.assign(layout_.servers.size(), 0);
    post_receives();
}

KvNode::~KvNode() = default;

void KvNode::post_receives() {
    const auto add = [&](int src, int tag) {
        if (direct_to(src)) return;  // never sent: handled at once
        auto in = std::make_unique<Inbox>();
        in->src = src;
        in->tag = tag;
        in->request = comm_.irecv(in->buf, src, tag);
        inboxes_.push_back(std::move(in));
    };
    if (is_server()) {
        for (const int w : layout_.workers) add(w, kKvRequestTag);
    }
    if (is_worker()) {
        for (const int s : layout_.servers) add(s, kKvReplyTag);
    }
    std::set<int> peers(layout_.servers.begin(), layout_.servers.end());
    peers.insert(layout_.workers.begin(), layout_.workers.end());
    if (server_index_ < 0 && worker_index_ < 0) return;
    for (const int p : peers) {
        if (p != comm_.rank()) add(p, kKvControlTag);
    }
}

void KvNode::send(int dest, int tag, std::vector<std::byte> bytes) {
    Outgoing out;
    out.bytes = std::make_unique<std::vector<std::byte>>(std::move(bytes));
    stats_.bytes_sent += out.bytes->size();
    (tag == kKvReplyTag ? stats_.reply_bytes_sent : stats_.request_bytes_sent) += out.bytes->size();
    ++stats_.messages_sent;
    out.request = comm_.isend(*out.bytes, dest, tag);
    outgoing_.push_back(std::move(out));
}

void KvNode::count_direct(int tag, std::size_t bytes) {
    stats_.bytes_sent += bytes;
    (tag == kKvReplyTag ? stats_.reply_bytes_sent : stats_.request_bytes_sent) += bytes;
    ++stats_.messages_sent;
    stats_.bytes_received += bytes;
    ++stats_.messages_received;
}

void KvNode::progress() {
    bool any = false;
    for (auto& in : inboxes_) {
        while (comm_.test(in->request)) {
            any = true;
            stats_.bytes_received += in->buf.size();
            ++stats_.messages_received;
            const std::vector<std::byte> bytes = std::move(in->buf);
            in->buf.clear();
            in->request = comm_.irecv(in->buf, in->src, in->tag);
            handle(in->src, in->tag, bytes);
        }
    }
    std::erase_if(outgoing_, [&](Outgoing& o) { return comm_.test(o.request); });
    progressed_ = any;
}

void KvNode::handle(int src, int tag, std::span<const std::byte> bytes) {
    if (tag == kKvRequestTag) {
        handle_request(src, bytes);
    } else if (tag == kKvReplyTag) {
        handle_reply(src, bytes);
    } else {
        handle_control(src, bytes);
    }
}

int KvNode::worker_slot(int rank, const char* what) const {
    const auto it = std::find(layout_.workers.begin(), layout_.workers.end(), rank);
    if (it == layout_.workers.end()) {
        throw CommError(comm_.rank(), fmt::format("kv: {} from rank {}, not a worker", what, rank));
    }
    return static_cast<int>(it - layout_.workers.begin());
}

void KvNode::handle_request(int src, std::span<const std::byte> bytes) {
    WireReader r(bytes, fmt::format("kv request from rank {}", src), comm_.rank());
    const auto kind = static_cast<Kind>(r.get<std::uint8_t>());
    const std::uint64_t lo = layout_.bounds[server_index_];
    const std::uint64_t hi = layout_.bounds[server_index_ + 1];
    const bool last = server_index_ + 1 == static_cast<int>(layout_.servers.size());
    if (kind == Kind::kPush || kind == Kind::kPushFloat32) {
        const auto t = r.get_varint();
        std::vector<std::uint64_t> keys;
        r.get_counted(keys);
        std::vector<double> values;
        if (kind == Kind::kPush) {
            r.get_counted(values);
        } else {
            std::vector<float> narrow;
            r.get_counted(narrow);
            values.assign(narrow.begin(), narrow.end());
        }
        r.finish();
        if ((kind == Kind::kPushFloat32) != options_.push_float32) {
            r.fail("a push of another value width than this node's");
        }
        check_keys(r, keys, lo, hi, last);
        if (values.size() != keys.size() * options_.push_width) r.fail("wrong number of values");
        on_push_message(src, t, keys, values);
    } else if (kind == Kind::kPushFiltered) {
        if (filters_.empty()) r.fail("a filtered push to a node without filters");
        handle_filtered_push(src, r);
    } else if (kind == Kind::kPull || kind == Kind::kPullFiltered) {
        auto d = std::make_unique<Deferred>();
        d->src = src;
        d->t = r.get_varint();
        d->id = r.get_varint();
        if (kind == Kind::kPull) {
            r.get_counted(d->keys);
        } else {
            if (filters_.empty()) r.fail("a filtered pull to a node without filters");
            d->exact = r.get<bool>();
            const KvFilterContext ctx{KvChannel::kPullRequest, comm_.rank(), src,
                                      options_.filter_first + d->t, d->exact};
            d->keys = filters_.receive(ctx, read_kv_wire(r), {}, 0).keys;
        }
        r.finish();
        check_keys(r, d->keys, lo, hi, last);
        take_pull_request(std::move(d));
    } else if (kind == Kind::kDone) {
        const auto t = r.get_varint();
        r.finish();
        if (server_index_ != 0) r.fail("a done message to a server that is not the scheduler");
        on_done(src, t);
    } else if (kind == Kind::kStop) {
        r.finish();
        ++stops_;
    } else {
        r.fail(fmt::format("unknown kind {}", static_cast<int>(kind)));
    }
}

void KvNode::handle_filtered_push(int src, WireReader& r) {
    const auto t = r.get_varint();
    KvWire wire = read_kv_wire(r);
    r.finish();
    const KvFilterContext ctx{KvChannel::kPush,          comm_.rank(), src,
                              options_.filter_first + t, false,        options_.push_float32};
    const KvEntries e = filters_.receive(ctx, std::move(wire), {}, options_.push_width);
    check_keys(r, e.keys, layout_.bounds[server_index_], layout_.bounds[server_index_ + 1],
               server_index_ + 1 == static_cast<int>(layout_.servers.size()));
    std::vector<std::uint64_t> keys, dropped;
    std::vector<double> values;
    for (std::size_t i = 0; i < e.size(); ++i) {
        if (e.dropped_by[i] != 0) {
            dropped.push_back(e.keys[i]);
            continue;
        }
        keys.push_back(e.keys[i]);
        const auto v = e.values_of(i);
        values.insert(values.end(), v.begin(), v.end());
    }
    on_push_message(src, t, keys, values, dropped);
}

void KvNode::on_push_message(int src, std::uint64_t t, std::span<const std::uint64_t> keys,
                             std::span<const double> values,
                             std::span<const std::uint64_t> dropped) {
    const int w = worker_slot(src, "push");
    if (t < completed_) {
        throw CommError(comm_.rank(), fmt::format("kv: push of finished iteration {}", t));
    }
    handler_.on_push(t, w, keys, values);
    if (!dropped.empty() && handler_.on_push_dropped) handler_.on_push_dropped(t, w, dropped);
    ++pushes_[t];
    for (auto it = pushes_.find(completed_);
         it != pushes_.end() && it->second == layout_.workers.size();
         it = pushes_.find(completed_)) {
        pushes_.erase(it);
        handler_.on_complete(completed_);
        ++completed_;
    }
    answer_pulls();
}

void KvNode::take_pull_request(std::unique_ptr<Deferred> d) {
    deferred_.push_back(std::move(d));
    answer_pulls();
}

void KvNode::answer_pulls() {
    std::vector<double> values;
    std::erase_if(deferred_, [&](const std::unique_ptr<Deferred>& d) {
        if (d->t >= completed_) return false;
        values.clear();
        values.reserve(d->keys.size() * options_.pull_width);
        handler_.on_pull(d->keys, values);
        ROTOR_ASSERT(values.size() == d->keys.size() * options_.pull_width,
                     "on_pull gives pull_width values per key");
        send_answer(*d, std::move(values));
        values.clear();
        return true;
    });
}

void KvNode::send_answer(const Deferred& d, std::vector<double> values) {
    if (direct_to(d.src)) {
        count_direct(kKvReplyTag, reply_bytes(d.id, values.size()));
        const auto s = static_cast<std::size_t>(server_index_);
        PendingPull* p = answered_pull(d.id, s);
        ROTOR_ASSERT(p != nullptr, "a direct answer to a pending pull");
        const bool stored = store_answer(*p, s, values);
        ROTOR_ASSERT(stored, "a direct answer of the pull's size");
        return;
    }
    if (filters_.empty()) {
        WireWriter w = start(Kind::kReply);
        w.put_varint(d.id);
        w.put_counted(std::span<const double>(values));
        send(d.src, kKvReplyTag, w.take());
        return;
    }
    KvEntries e;
    e.keys = d.keys;
    e.values = std::move(values);
    e.width = options_.pull_width;
    const KvFilterContext ctx{KvChannel::kPullReply, comm_.rank(), d.src,
                              options_.filter_first + d.t, d.exact};
    const KvWire wire = filters_.send(ctx, e);
    WireWriter w = start(Kind::kReplyFiltered);
    // A server answers a worker's pulls in the order of their ids (each waits for its iteration,
    // and a worker's iterations only grow): the id travels as its step from the last answered.
    std::uint64_t& last = answer_id_sent_[static_cast<std::size_t>(worker_slot(d.src, "pull"))];
    ROTOR_ASSERT(d.id >= last, "a worker's pulls answered in order");
    w.put_varint(d.id - last);
    last = d.id;
    write_kv_wire(w, wire);
    send(d.src, kKvReplyTag, w.take());
}

void KvNode::on_done(int src, std::uint64_t t) {
    const int w = worker_slot(src, "done");
    if (t != done_[w]) {
        throw CommError(comm_.rank(),
                        fmt::format("kv: rank {} ended iteration {} after {}", src, t, done_[w]));
    }
    done_[w] = t + 1;
    const std::uint64_t clock = *std::min_element(done_.begin(), done_.end());
    if (clock <= clock_sent_) return;
    // Every worker has had every clock sent: the message is the step (one byte when it is 1).
    const std::uint64_t step = clock - clock_sent_;
    clock_sent_ = clock;
    for (const int worker : layout_.workers) {
        if (direct_to(worker)) {
            count_direct(kKvReplyTag, clock_bytes(step));
            take_clock(clock);
            continue;
        }
        WireWriter m = start(step == 1 ? Kind::kClockNext : Kind::kClock);
        if (step != 1) m.put_varint(step);
        send(worker, kKvReplyTag, m.take());
    }
}

void KvNode::handle_reply(int src, std::span<const std::byte> bytes) {
    WireReader r(bytes, fmt::format("kv reply from rank {}", src), comm_.rank());
    const auto kind = static_cast<Kind>(r.get<std::uint8_t>());
    if (kind == Kind::kClock || kind == Kind::kClockNext) {
        const std::uint64_t step = kind == Kind::kClock ? r.get_varint() : 1;
        r.finish();
        if (src != layout_.servers.front()) r.fail("a clock from a rank that is not the scheduler");
        if (step == 0 || clock_ + step < clock_) r.fail("a clock step of 0 or past 2^64");
        take_clock(clock_ + step);
        return;
    }
    if (kind == Kind::kReplyFiltered) {
        if (filters_.empty()) r.fail("a filtered answer to a node without filters");
        take_filtered_answer(src, r);
        return;
    }
    if (kind != Kind::kReply) r.fail(fmt::format("unknown kind {}", static_cast<int>(kind)));
    const auto id = r.get_varint();
    std::vector<double> values;
    r.get_counted(values);
    r.finish();
    const std::size_t s = server_slot(src);
    PendingPull* pending = answered_pull(id, s);
    if (pending == nullptr) r.fail(fmt::format("an answer to pull {} that is not pending", id));
    if (!store_answer(*pending, s, values)) r.fail("wrong number of values");
}

void KvNode::take_clock(std::uint64_t clock) { clock_ = std::max(clock_, clock); }

KvNode::PendingPull* KvNode::answered_pull(std::uint64_t id, std::size_t server) {
    const auto it = pulls_.find(id);
    if (it == pulls_.end() || it->second->waiting.erase(server) != 1) return nullptr;
    return it->second.get();
}

bool KvNode::store_answer(PendingPull& p, std::size_t s, std::span<const double> values) const {
    const std::size_t w = options_.pull_width;
    if (values.size() != (p.first[s + 1] - p.first[s]) * w) return false;
    std::copy(values.begin(), values.end(),
              p.values.begin() + static_cast<std::ptrdiff_t>(p.first[s] * w));
    return true;
}

std::size_t KvNode::server_slot(int src) const {
    return static_cast<std::size_t>(std::find(layout_.servers.begin(), layout_.servers.end(), src) -
                                    layout_.servers.begin());
}

void KvNode::take_filtered_answer(int src, WireReader& r) {
    const std::size_t s = server_slot(src);
    if (s >= answer_id_taken_.size()) r.fail("an answer from a rank that is not a server");
    const std::uint64_t id = answer_id_taken_[s] + r.get_varint();
    answer_id_taken_[s] = id;
    KvWire wire = read_kv_wire(r);
    r.finish();
    PendingPull* pending = answered_pull(id, s);
    if (pending == nullptr) r.fail(fmt::format("an answer to pull {} that is not pending", id));
    PendingPull& p = *pending;
    const std::span<const std::uint64_t> keys(p.keys.data() + p.first[s],
                                              p.first[s + 1] - p.first[s]);
    const KvFilterContext ctx{KvChannel::kPullReply, comm_.rank(), src, options_.filter_first + p.t,
                              p.exact};
    const KvEntries e = filters_.receive(ctx, std::move(wire), keys, options_.pull_width);
    if (!store_answer(p, s, e.values)) r.fail("wrong number of values");
}

void KvNode::handle_control(int src, std::span<const std::byte> bytes) {
    WireReader r(bytes, fmt::format("kv control from rank {}", src), comm_.rank());
    if (static_cast<Kind>(r.get<std::uint8_t>()) != Kind::kFail) r.fail("unknown kind");
    const auto code = r.get<std::int32_t>();
    const auto message = r.get<std::string>();
    r.finish();
    throw AgreedError(static_cast<ExitCode>(code), src, message);
}

template <class Ready>
void KvNode::wait_until(const Ready& ready, const char* what) {
    if (ready()) return;
    Stopwatch watch;
    double last_event = 0;
    for (;;) {
        progress();
        if (ready()) break;
        const double now = watch.seconds();
        if (progressed_) {
            last_event = now;
        } else if (now - last_event > options_.timeout_s) {
            throw CommError(comm_.rank(), fmt::format("kv: {}: no message for {} s (a rank "
                                                      "died or hangs)",
                                                      what, options_.timeout_s));
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }
    stats_.wait_s += watch.seconds();
}

void KvNode::begin_iteration(std::uint64_t t) {
    ROTOR_ASSERT(is_worker(), "begin_iteration on a worker");
    ROTOR_ASSERT(t == next_iteration_ && !in_iteration_, "iterations begin in order");
    if (options_.delay != kInfiniteDelay) {
        const auto tau = static_cast<std::uint64_t>(options_.delay);
        wait_until([&] { return clock_ + tau >= t; }, "waiting for the delay bound");
    }
    in_iteration_ = true;
    pushed_ = false;
    schedule_.push_back({KvEvent::Kind::kBegin, t, now_ns(), clock_});
}

void KvNode::push(std::uint64_t t, std::span<const std::uint64_t> keys,
                  std::span<const double> values) {
    ROTOR_ASSERT(in_iteration_ && t == next_iteration_ && !pushed_, "one push an iteration");
    pushed_ = true;
    ROTOR_ASSERT(values.size() == keys.size() * options_.push_width, "push_width values per key");
    ROTOR_ASSERT(std::adjacent_find(keys.begin(), keys.end(), std::greater_equal<>()) == keys.end(),
                 "push keys strictly increasing");
    const std::size_t w = options_.push_width;
    if (options_.push_float32) {  // what the server sees, whichever way the push goes
        rounded_.assign(values.begin(), values.end());
        for (double& v : rounded_) v = static_cast<double>(static_cast<float>(v));
        values = rounded_;
    }
    std::size_t lo = 0;
    for (std::size_t s = 0; s < layout_.servers.size(); ++s) {
        std::size_t hi = lo;
        while (hi < keys.size() && layout_.server_of(keys[hi]) == s) ++hi;
        send_push(layout_.servers[s], t, keys.subspan(lo, hi - lo),
                  values.subspan(lo * w, (hi - lo) * w));
        lo = hi;
    }
    progress();
}

void KvNode::send_push(int server, std::uint64_t t, std::span<const std::uint64_t> keys,
                       std::span<const double> values) {
    if (direct_to(server)) {
        count_direct(kKvRequestTag,
                     push_bytes(t, keys.size(), options_.push_width,
                                options_.push_float32 ? sizeof(float) : sizeof(double)));
        on_push_message(server, t, keys, values);
        return;
    }
    if (filters_.empty()) {
        WireWriter m = start(options_.push_float32 ? Kind::kPushFloat32 : Kind::kPush);
        m.put_varint(t);
        m.put_counted(keys);
        if (options_.push_float32) {
            const std::vector<float> narrow(values.begin(),
                                            values.end());  // exact: rounded in push
            m.put_counted(std::span<const float>(narrow));
        } else {
            m.put_counted(values);
        }
        send(server, kKvRequestTag, m.take());
        return;
    }
    KvEntries e;
    e.keys.assign(keys.begin(), keys.end());
    e.values.assign(values.begin(), values.end());
    e.width = options_.push_width;
    const KvWire wire = filters_.send({KvChannel::kPush, comm_.rank(), server,
                                       options_.filter_first + t, false, options_.push_float32},
                                      e);
    WireWriter m = start(Kind::kPushFiltered);
    m.put_varint(t);
    write_kv_wire(m, wire);
    send(server, kKvRequestTag, m.take());
}

void KvNode::send_pull(int server, std::uint64_t t, std::uint64_t id,
                       std::span<const std::uint64_t> keys, bool exact) {
    if (direct_to(server)) {
        count_direct(kKvRequestTag, pull_bytes(t, id, keys.size()));
        auto d = std::make_unique<Deferred>();
        d->src = server;
        d->t = t;
        d->id = id;
        d->keys.assign(keys.begin(), keys.end());
        take_pull_request(std::move(d));
        return;
    }
    if (filters_.empty()) {
        WireWriter m = start(Kind::kPull);
        m.put_varint(t);
        m.put_varint(id);
        m.put_counted(keys);
        send(server, kKvRequestTag, m.take());
        return;
    }
    KvEntries e;
    e.keys.assign(keys.begin(), keys.end());
    const KvWire wire = filters_.send(
        {KvChannel::kPullRequest, comm_.rank(), server, options_.filter_first + t, exact}, e);
    WireWriter m = start(Kind::kPullFiltered);
    m.put_varint(t);
    m.put_varint(id);
    m.put(exact);
    write_kv_wire(m, wire);
    send(server, kKvRequestTag, m.take());
}

std::uint64_t KvNode::pull(std::uint64_t t, std::span<const std::uint64_t> keys, bool exact) {
    ROTOR_ASSERT(is_worker(), "pull on a worker");
    ROTOR_ASSERT(std::adjacent_find(keys.begin(), keys.end(), std::greater_equal<>()) == keys.end(),
                 "pull keys strictly increasing");
    // Pending before any request goes out: a direct answer comes back within send_pull.
    const std::uint64_t id = next_pull_id_++;
    PendingPull& p = *pulls_.emplace(id, std::make_unique<PendingPull>()).first->second;
    p.keys.assign(keys.begin(), keys.end());
    p.values.assign(keys.size() * options_.pull_width, 0.0);
    p.t = t;
    p.exact = exact;
    std::size_t lo = 0;
    p.first.push_back(0);
    for (std::size_t s = 0; s < layout_.servers.size(); ++s) {
        std::size_t hi = lo;
        while (hi < keys.size() && layout_.server_of(keys[hi]) == s) ++hi;
        p.first.push_back(hi);
        if (hi > lo) p.waiting.insert(s);
        lo = hi;
    }
    for (std::size_t s = 0; s < layout_.servers.size(); ++s) {
        const std::size_t n = p.first[s + 1] - p.first[s];
        if (n != 0) send_pull(layout_.servers[s], t, id, keys.subspan(p.first[s], n), exact);
    }
    progress();
    return id;
}

bool KvNode::pull_ready(std::uint64_t id) {
    progress();
    const auto it = pulls_.find(id);
    ROTOR_ASSERT(it != pulls_.end(), "pull_ready of a pending pull");
    return it->second->waiting.empty();
}

std::vector<double> KvNode::wait_pull(std::uint64_t id) {
    const auto it = pulls_.find(id);
    ROTOR_ASSERT(it != pulls_.end(), "wait_pull of a pending pull");
    PendingPull& p = *it->second;
    wait_until([&] { return p.waiting.empty(); }, "waiting for a pull");
    std::vector<double> values = std::move(p.values);
    pulls_.erase(it);
    return values;
}

void KvNode::end_iteration(std::uint64_t t) {
    ROTOR_ASSERT(in_iteration_ && t == next_iteration_ && pushed_,
                 "end_iteration of the current one, after its push");
    in_iteration_ = false;
    ++next_iteration_;
    schedule_.push_back({KvEvent::Kind::kEnd, t, now_ns(), clock_});
    const int scheduler = layout_.servers.front();
    if (direct_to(scheduler)) {
        count_direct(kKvRequestTag, counter_bytes(t));
        on_done(scheduler, t);
    } else {
        WireWriter m = start(Kind::kDone);
        m.put_varint(t);
        send(scheduler, kKvRequestTag, m.take());
    }
    progress();
}

void KvNode::finish() {
    ROTOR_ASSERT(!finished_ && !in_iteration_, "finish once, between iterations");
    if (is_worker()) {
        wait_until([&] { return clock_ >= next_iteration_; }, "waiting for the other workers");
        for (const int s : layout_.servers) {
            if (direct_to(s)) {
                count_direct(kKvRequestTag, kStopBytes);
                ++stops_;
            } else {
                send(s, kKvRequestTag, start(Kind::kStop).take());
            }
        }
    }
    if (is_server()) {
        wait_until([&] { return stops_ == layout_.workers.size(); }, "waiting for the workers");
    }
    wait_until([&] { return outgoing_.empty(); }, "sending");
    finished_ = true;
}

KvFilterStack KvNode::release_filters() {
    ROTOR_ASSERT(finished_, "release_filters after finish");
    return std::move(filters_);
}

KvStats KvNode::stats() const {
    KvStats s = stats_;
    s.filters = filters_.stats();
    return s;
}

void KvNode::fail(const Error& error) noexcept {
    try {
        std::set<int> peers(layout_.servers.begin(), layout_.servers.end());
        peers.insert(layout_.workers.begin(), layout_.workers.end());
        for (const int p : peers) {
            if (p == comm_.rank()) continue;
            WireWriter m = start(Kind::kFail);
            m.put(static_cast<std::int32_t>(error.exit_code()));
            m.put(std::string(error.what()));
            send(p, kKvControlTag, m.take());
        }
        Stopwatch watch;
        while (!outgoing_.empty() && watch.seconds() < 1.0) {
            std::erase_if(outgoing_, [&](Outgoing& o) { return comm_.test(o.request); });
        }
    } catch (...) {
        // Best effort: the caller ends the job anyway.
    }
}

}  // namespace rotor::comm
