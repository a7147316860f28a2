#include "comm/inprocess_communicator.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/base/error.h"

namespace rotor::comm {

namespace detail {

/// State shared by the ranks of one group. Every field is guarded by `mu`.
struct InProcessShared {
    explicit InProcessShared(int n)
        : ranks(n), slots(static_cast<std::size_t>(n)), ops(static_cast<std::size_t>(n), 0) {}

    const int ranks;
    std::mutex mu;
    std::condition_variable cv;

    bool poisoned = false;
    std::string poison_reason;

    // One collective round at a time: ranks deposit into `slots` while collecting; once all
    // arrived the round drains (every rank copies what it needs); the last to leave resets.
    bool draining = false;
    int arrived = 0;
    int departed = 0;
    std::uint64_t generation = 0;
    std::vector<std::vector<std::byte>> slots;
    std::vector<int> ops;  ///< which collective each rank entered, to detect mismatches

    /// Mailboxes keyed by (src, dest, tag), FIFO like MPI's non-overtaking rule.
    std::map<std::tuple<int, int, int>, std::deque<std::vector<std::byte>>> mail;
};

namespace {

enum CollectiveOp : int {
    kOpBarrier = 1,
    kOpAllreduce,
    kOpBroadcast,
    kOpGather,
    kOpAllgather,
    kOpReduceScatter,
    kOpAllgatherBlocks,
};

constexpr int kWantAll = -1;
constexpr int kWantNone = -2;

void throw_if_poisoned(const InProcessShared& s, int rank) {
    if (s.poisoned) throw CommError(rank, "group aborted: " + s.poison_reason);
}

/// The one collective primitive: every rank contributes `mine`; returns all contributions
/// (want == kWantAll), only rank `want`'s (at index `want`, others empty), or none.
std::vector<std::vector<std::byte>> exchange(InProcessShared& s, int rank, int op,
                                             std::span<const std::byte> mine, int want) {
    std::unique_lock lock(s.mu);
    s.cv.wait(lock, [&] { return s.poisoned || !s.draining; });
    throw_if_poisoned(s, rank);
    const auto me = static_cast<std::size_t>(rank);
    s.slots[me].assign(mine.begin(), mine.end());
    s.ops[me] = op;
    const std::uint64_t gen = s.generation;
    if (++s.arrived == s.ranks) {
        s.draining = true;
        s.cv.notify_all();
    } else {
        s.cv.wait(lock, [&] { return s.poisoned || (s.draining && s.generation == gen); });
        throw_if_poisoned(s, rank);
    }
    const bool mismatch =
        std::any_of(s.ops.begin(), s.ops.end(), [op](int other) { return other != op; });
    std::vector<std::vector<std::byte>> out;
    if (!mismatch && want != kWantNone) {
        out.resize(s.slots.size());
        if (want == kWantAll) {
            out = s.slots;
        } else {
            out[static_cast<std::size_t>(want)] = s.slots[static_cast<std::size_t>(want)];
        }
    }
    if (++s.departed == s.ranks) {
        s.arrived = 0;
        s.departed = 0;
        s.draining = false;
        ++s.generation;
        s.cv.notify_all();
    }
    if (mismatch) {
        throw CommError(rank, "collective mismatch: ranks entered different collectives");
    }
    return out;
}

template <class T>
void reduce_into(std::span<T> acc, std::span<const std::byte> other, bool first, int op) {
    const auto* src = reinterpret_cast<const T*>(other.data());
    for (std::size_t i = 0; i < acc.size(); ++i) {
        T v;
        std::memcpy(&v, src + i, sizeof(T));
        if (first) {
            acc[i] = v;
        } else if (op == 0) {
            acc[i] += v;
        } else if (op == 1) {
            acc[i] = std::max(acc[i], v);
        } else {
            acc[i] = std::min(acc[i], v);
        }
    }
}

class InProcessRecv final : public RequestImpl {
  public:
    InProcessRecv(std::shared_ptr<InProcessShared> shared, InProcessCommunicator* comm,
                  std::vector<std::byte>* buf, int src, int tag)
        : shared_(std::move(shared)), comm_(comm), buf_(buf), src_(src), tag_(tag) {}

    bool test() override {
        std::unique_lock lock(shared_->mu);
        return take_locked();
    }

    void wait() override {
        std::unique_lock lock(shared_->mu);
        auto& box = shared_->mail[key()];
        shared_->cv.wait(lock, [&] { return shared_->poisoned || !box.empty(); });
        if (!take_locked()) throw_if_poisoned(*shared_, comm_->rank());
    }

    void abandon(std::unique_ptr<RequestImpl> /*self*/) noexcept override {
        comm_->detail_end_recv(src_, tag_);
    }

  private:
    std::tuple<int, int, int> key() const { return {src_, comm_->rank(), tag_}; }

    /// With the lock held: takes the message if there is one.
    bool take_locked() {
        auto it = shared_->mail.find(key());
        if (it == shared_->mail.end() || it->second.empty()) {
            throw_if_poisoned(*shared_, comm_->rank());
            return false;
        }
        *buf_ = std::move(it->second.front());
        it->second.pop_front();
        comm_->detail_end_recv(src_, tag_);
        return true;
    }

    std::shared_ptr<InProcessShared> shared_;
    InProcessCommunicator* comm_;
    std::vector<std::byte>* buf_;
    int src_;
    int tag_;
};

}  // namespace
}  // namespace detail

InProcessCommunicator::InProcessCommunicator(std::shared_ptr<detail::InProcessShared> shared,
                                             int rank)
    : shared_(std::move(shared)), rank_(rank) {}

InProcessCommunicator::~InProcessCommunicator() = default;

int InProcessCommunicator::size() const noexcept { return shared_->ranks; }

void InProcessCommunicator::barrier() {
    detail::exchange(*shared_, rank_, detail::kOpBarrier, {}, detail::kWantNone);
}

void InProcessCommunicator::allreduce(void* data, std::size_t count, ElementType type,
                                      ReduceOp op) {
    const std::size_t elem = type == ElementType::kInt64 ? sizeof(std::int64_t) : sizeof(double);
    const std::span<const std::byte> mine(static_cast<const std::byte*>(data), count * elem);
    const auto all =
        detail::exchange(*shared_, rank_, detail::kOpAllreduce, mine, detail::kWantAll);
    for (const auto& rec : all) {
        if (rec.size() != mine.size()) {
            throw CommError(rank_, "allreduce: ranks passed different element counts");
        }
    }
    const int op_code = op == ReduceOp::kSum ? 0 : (op == ReduceOp::kMax ? 1 : 2);
    // Rank order on every rank: the same additions in the same order give the same bits.
    for (std::size_t r = 0; r < all.size(); ++r) {
        if (type == ElementType::kInt64) {
            detail::reduce_into(std::span(static_cast<std::int64_t*>(data), count), all[r], r == 0,
                                op_code);
        } else {
            detail::reduce_into(std::span(static_cast<double*>(data), count), all[r], r == 0,
                                op_code);
        }
    }
}

void InProcessCommunicator::broadcast(std::vector<std::byte>& buf, int root) {
    ROTOR_ASSERT(root >= 0 && root < size(), "broadcast: root out of range");
    auto all = detail::exchange(
        *shared_, rank_, detail::kOpBroadcast,
        rank_ == root ? std::span<const std::byte>(buf) : std::span<const std::byte>(),
        rank_ == root ? detail::kWantNone : root);
    if (rank_ != root) buf = std::move(all[static_cast<std::size_t>(root)]);
}

std::vector<std::vector<std::byte>> InProcessCommunicator::gather(std::span<const std::byte> mine,
                                                                  int root) {
    ROTOR_ASSERT(root >= 0 && root < size(), "gather: root out of range");
    return detail::exchange(*shared_, rank_, detail::kOpGather, mine,
                            rank_ == root ? detail::kWantAll : detail::kWantNone);
}

std::vector<std::vector<std::byte>> InProcessCommunicator::allgather(
    std::span<const std::byte> mine) {
    return detail::exchange(*shared_, rank_, detail::kOpAllgather, mine, detail::kWantAll);
}

void InProcessCommunicator::reduce_scatter_sum(std::span<const std::int64_t> data,
                                               std::span<const std::size_t> counts,
                                               std::span<std::int64_t> mine) {
    ROTOR_ASSERT(counts.size() == static_cast<std::size_t>(size()),
                 "reduce_scatter_sum: one count per rank");
    std::size_t first = 0;
    for (int q = 0; q < rank_; ++q) first += counts[static_cast<std::size_t>(q)];
    ROTOR_ASSERT(mine.size() == counts[static_cast<std::size_t>(rank_)] &&
                     first + mine.size() <= data.size(),
                 "reduce_scatter_sum: bad counts");
    const auto all = detail::exchange(*shared_, rank_, detail::kOpReduceScatter,
                                      std::as_bytes(data), detail::kWantAll);
    for (std::size_t r = 0; r < all.size(); ++r) {
        if (all[r].size() != data.size_bytes()) {
            throw CommError(rank_, "reduce_scatter_sum: ranks passed different element counts");
        }
        // Rank order, as allreduce: this rank's block of rank r's data.
        detail::reduce_into(mine, std::span(all[r]).subspan(first * sizeof(std::int64_t)), r == 0,
                            0);
    }
}

void InProcessCommunicator::allgather_blocks(std::span<std::int64_t> data,
                                             std::span<const std::size_t> counts) {
    ROTOR_ASSERT(counts.size() == static_cast<std::size_t>(size()),
                 "allgather_blocks: one count per rank");
    const auto all =
        detail::exchange(*shared_, rank_, detail::kOpAllgatherBlocks,
                         std::as_bytes(std::span<const std::int64_t>(data)), detail::kWantAll);
    std::size_t first = 0;
    for (std::size_t q = 0; q < all.size(); ++q) {
        if (all[q].size() != data.size_bytes() || first + counts[q] > data.size()) {
            throw CommError(rank_, "allgather_blocks: ranks passed different element counts");
        }
        std::memcpy(data.data() + first, all[q].data() + first * sizeof(std::int64_t),
                    counts[q] * sizeof(std::int64_t));
        first += counts[q];
    }
}

Request InProcessCommunicator::isend(std::span<const std::byte> data, int dest, int tag) {
    ROTOR_ASSERT(dest >= 0 && dest < size(), "isend: dest out of range");
    ROTOR_ASSERT(tag >= 0 && tag <= kMaxTag, "isend: tag out of range");
    std::vector<std::byte> copy(data.begin(), data.end());
    {
        std::lock_guard lock(shared_->mu);
        detail::throw_if_poisoned(*shared_, rank_);
        shared_->mail[{rank_, dest, tag}].push_back(std::move(copy));
    }
    shared_->cv.notify_all();
    return Request{};  // buffered: complete at once
}

Request InProcessCommunicator::irecv(std::vector<std::byte>& buf, int src, int tag) {
    ROTOR_ASSERT(src >= 0 && src < size(), "irecv: src out of range");
    ROTOR_ASSERT(tag >= 0 && tag <= kMaxTag, "irecv: tag out of range");
    const bool fresh = pending_recvs_.insert({src, tag}).second;
    ROTOR_ASSERT(fresh, "irecv: a receive on this (src, tag) is already pending");
    return Request(std::make_unique<detail::InProcessRecv>(shared_, this, &buf, src, tag));
}

void InProcessCommunicator::detail_end_recv(int src, int tag) noexcept {
    pending_recvs_.erase({src, tag});
}

void InProcessCommunicator::abort(int code) {
    const std::string reason =
        "rank " + std::to_string(rank_) + " called abort(" + std::to_string(code) + ")";
    {
        std::lock_guard lock(shared_->mu);
        if (!shared_->poisoned) {
            shared_->poisoned = true;
            shared_->poison_reason = reason;
        }
    }
    shared_->cv.notify_all();
    throw CommError(rank_, reason);
}

InProcessGroup::InProcessGroup(int n) {
    if (n < 1) throw ConfigError("ranks", "need at least 1 rank, got " + std::to_string(n));
    shared_ = std::make_shared<detail::InProcessShared>(n);
    comms_.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
        comms_.push_back(std::make_unique<InProcessCommunicator>(shared_, r));
}

InProcessGroup::~InProcessGroup() = default;

InProcessCommunicator& InProcessGroup::at(int rank) {
    ROTOR_ASSERT(rank >= 0 && rank < size(), "InProcessGroup::at: rank out of range");
    return *comms_[static_cast<std::size_t>(rank)];
}

void InProcessGroup::poison(std::string reason) {
    {
        std::lock_guard lock(shared_->mu);
        if (!shared_->poisoned) {
            shared_->poisoned = true;
            shared_->poison_reason = std::move(reason);
        }
    }
    shared_->cv.notify_all();
}

void run_ranks(int n, const std::function<void(Communicator&)>& fn) {
    InProcessGroup group(n);
    std::mutex first_mu;
    std::exception_ptr first;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            try {
                fn(group.at(r));
            } catch (...) {
                std::string what = "unknown exception";
                try {
                    throw;
                } catch (const std::exception& e) {
                    what = e.what();
                } catch (...) {
                }
                {
                    std::lock_guard lock(first_mu);
                    if (!first) first = std::current_exception();
                }
                group.poison("rank " + std::to_string(r) + " failed: " + what);
            }
        });
    }
    for (auto& t : threads) t.join();
    if (first) std::rethrow_exception(first);
}

}  // namespace rotor::comm
