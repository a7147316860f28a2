// In-process communicator: n ranks that are threads of one process, sharing mailboxes and one
// condition variable (xgboost's tests/cpp/collective/test_worker.h is the model). It exists so
// that every distributed code path can be tested with gtest alone, P = 1..n, and it has the same
// semantics as MpiCommunicator: the same collectives, the same point-to-point ordering, the same
// agree_on_failure. Reductions run in rank order on every rank, so results are bit-reproducible.
//
// Transport: isend copies the message into the receiver's mailbox at once (the returned Request
// is already complete); irecv takes the oldest message of its (src, tag) mailbox. Collectives are
// built on one all-to-all exchange round guarded by a generation counter.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.h"

namespace rotor::comm {

namespace detail {
struct InProcessShared;
}  // namespace detail

/// One rank of an InProcessGroup. Owned by its group; used by one thread at a time.
class InProcessCommunicator final : public Communicator {
  public:
    InProcessCommunicator(std::shared_ptr<detail::InProcessShared> shared, int rank);
    ~InProcessCommunicator() override;

    int rank() const noexcept override { return rank_; }
    int size() const noexcept override;
    void barrier() override;
    void broadcast(std::vector<std::byte>& buf, int root) override;
    std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine, int root) override;
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override;
    void reduce_scatter_sum(std::span<const std::int64_t> data, std::span<const std::size_t> counts,
                            std::span<std::int64_t> mine) override;
    void allgather_blocks(std::span<std::int64_t> data,
                          std::span<const std::size_t> counts) override;
    Request isend(std::span<const std::byte> data, int dest, int tag) override;
    Request irecv(std::vector<std::byte>& buf, int src, int tag) override;
    /// Poisons the group (every pending and later call of every rank throws CommError), then
    /// throws CommError on this rank.
    [[noreturn]] void abort(int code) override;

    /// Internal: forgets a pending receive of (src, tag); called by its request.
    void detail_end_recv(int src, int tag) noexcept;

  protected:
    void allreduce(void* data, std::size_t count, ElementType type, ReduceOp op) override;

  private:
    std::shared_ptr<detail::InProcessShared> shared_;
    int rank_;
    std::set<std::pair<int, int>> pending_recvs_;  ///< (src, tag) with a receive in progress
};

/// n communicators that talk to each other. Not copyable or movable; members are accessed by
/// rank. Thread-safe: distinct ranks may be used from distinct threads concurrently.
class InProcessGroup {
  public:
    /// Throws ConfigError("ranks") unless n >= 1.
    explicit InProcessGroup(int n);
    ~InProcessGroup();
    InProcessGroup(const InProcessGroup&) = delete;
    InProcessGroup& operator=(const InProcessGroup&) = delete;

    int size() const noexcept { return static_cast<int>(comms_.size()); }
    /// The communicator of `rank`, in [0, size()).
    InProcessCommunicator& at(int rank);
    /// Makes every pending and later call of every member throw CommError carrying `reason`.
    /// Thread-safe; idempotent (the first reason is kept).
    void poison(std::string reason);

  private:
    std::shared_ptr<detail::InProcessShared> shared_;
    std::vector<std::unique_ptr<InProcessCommunicator>> comms_;
};

/// Runs `fn(comm)` for ranks 0..n-1 of a fresh InProcessGroup, each on its own std::thread, and
/// joins them. If any rank throws, the group is poisoned (so ranks blocked waiting for it throw
/// instead of hanging) and the first exception thrown is rethrown here after every thread ended.
void run_ranks(int n, const std::function<void(Communicator&)>& fn);

}  // namespace rotor::comm
