// The communicator interface: every exchange of data between ranks goes through it. Trainers
// talk to other ranks only through this interface (LightGBM's parallel tree learner is the
// model), so the same trainer runs on MPI (comm/mpi_communicator.h) and on ranks that are threads
// of one process (comm/inprocess_communicator.h: tests, and one process as a world of one rank).
//
// Contract shared by every implementation (docs/comm.md has the full protocol):
// - Thread-safety: one Communicator object is used by one thread at a time (the rank's "comm
//   thread"); no method is safe to call concurrently on the same object. Different ranks'
//   communicators are independent objects.
// - Collectives (barrier, allreduce_*, any, broadcast, gather, allgather, agree_on_failure) must
//   be called by every rank of the communicator, in the same order, with matching arguments
//   (same element count for allreduce, same root). They block until this rank's part is done.
// - Buffers: spans are borrowed for the duration of the call; isend borrows its span until the
//   request completes (the caller keeps it alive and unchanged); irecv borrows its vector until
//   the request completes and then owns the received bytes in it.
// - Errors: every failure throws rotor::CommError (what() = "rank <r>: <step>: <cause>"). A broken
//   precondition (bad rank, bad tag, a second receive on the same (src, tag)) is a bug and fails
//   ROTOR_ASSERT.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rotor::comm {

/// Largest tag a caller may use for point-to-point messages (the MPI standard guarantees
/// MPI_TAG_UB >= 32767). Tags are >= 0.
inline constexpr int kMaxTag = 32767;

class Communicator;

namespace detail {

/// What an implementation keeps for one non-blocking operation. Owned by a Request.
class RequestImpl {
  public:
    virtual ~RequestImpl() = default;
    /// Advances the operation without blocking; true once it is complete. Throws CommError.
    virtual bool test() = 0;
    /// Blocks until the operation is complete. Throws CommError.
    virtual void wait() = 0;
    /// Called when the Request is destroyed before completion (an error path): the
    /// implementation cancels what it can and keeps any state the transport still uses alive.
    /// Never throws.
    virtual void abandon(std::unique_ptr<RequestImpl> self) noexcept = 0;
};

}  // namespace detail

/// Handle of one non-blocking send or receive. Move-only. Empty (default-constructed, moved
/// from, or completed by Communicator::wait/test) handles are "done": waiting on them returns at
/// once, like MPI_REQUEST_NULL. Destroying a handle whose operation is not complete is an error
/// path only (the receive is cancelled; an incomplete send may still read its buffer until the
/// communicator is destroyed).
class Request {
  public:
    Request() = default;
    explicit Request(std::unique_ptr<detail::RequestImpl> impl) : impl_(std::move(impl)) {}
    Request(Request&&) noexcept = default;
    Request& operator=(Request&& other) noexcept;
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;
    ~Request();

    /// True while the handle refers to an operation that has not been seen complete.
    bool pending() const noexcept { return impl_ != nullptr; }

  private:
    friend class Communicator;
    void release() noexcept;
    std::unique_ptr<detail::RequestImpl> impl_;
};

/// One failure found by agree_on_failure: the lowest failing rank and its message.
struct Failure {
    int rank = -1;        ///< lowest rank that reported a failure
    std::string message;  ///< that rank's message, verbatim
};

/// Abstract communicator over `size()` ranks numbered 0..size()-1. See the file comment for the
/// contract. Implementations: MpiCommunicator, InProcessCommunicator.
class Communicator {
  public:
    virtual ~Communicator() = default;
    Communicator() = default;
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    /// This rank, in [0, size()).
    virtual int rank() const noexcept = 0;
    /// Number of ranks, >= 1.
    virtual int size() const noexcept = 0;

    /// Blocks until every rank has entered the barrier.
    virtual void barrier() = 0;

    /// Element-wise reduction in place over all ranks; every rank passes the same number of
    /// elements and every rank receives the result. Sums of doubles: the in-process
    /// implementation adds in rank order (bit-reproducible); MPI follows its own algorithm,
    /// which Open MPI keeps fixed for a given rank count.
    void allreduce_sum(std::span<std::int64_t> data);
    void allreduce_sum(std::span<double> data);
    void allreduce_max(std::span<std::int64_t> data);
    void allreduce_max(std::span<double> data);
    void allreduce_min(std::span<std::int64_t> data);
    void allreduce_min(std::span<double> data);

    /// Reduce-scatter of int64 sums: `data` (the same length on every rank) is cut into size()
    /// consecutive blocks of `counts[q]` elements (counts.size() == size(), the same on every
    /// rank, summing to data.size()); rank q receives in `mine` (counts[q] elements) the
    /// element-wise sum over ranks of block q only. Half an allreduce's traffic on 2 ranks.
    virtual void reduce_scatter_sum(std::span<const std::int64_t> data,
                                    std::span<const std::size_t> counts,
                                    std::span<std::int64_t> mine) = 0;

    /// Allgather of int64 blocks in place: `data` (the same length on every rank) is cut into
    /// size() consecutive blocks of `counts[q]` elements (as reduce_scatter_sum's); on return
    /// block q of every rank's `data` holds rank q's block q, bit for bit (this rank's own block
    /// unchanged). The counterpart of reduce_scatter_sum: each rank sends only its block.
    virtual void allgather_blocks(std::span<std::int64_t> data,
                                  std::span<const std::size_t> counts) = 0;

    /// Logical OR over ranks: true on every rank iff `mine` is true on at least one rank.
    bool any(bool mine);

    /// Root's `buf` is copied to every rank; other ranks' `buf` is resized to root's size
    /// (sizes may differ before the call: root's size wins). `root` in [0, size()).
    virtual void broadcast(std::vector<std::byte>& buf, int root) = 0;

    /// Variable-size gather: on `root`, returns size() vectors, element r being rank r's `mine`;
    /// on other ranks returns an empty vector.
    virtual std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine,
                                                       int root) = 0;

    /// Variable-size allgather: every rank receives size() vectors, element r being rank r's
    /// `mine`.
    virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) = 0;

    /// Starts sending `data` to rank `dest` with tag `tag` in [0, kMaxTag]. `data` must stay
    /// alive and unchanged until the request completes. Messages between one (source, dest, tag)
    /// triple arrive in the order they were sent. Sending to oneself is allowed.
    virtual Request isend(std::span<const std::byte> data, int dest, int tag) = 0;

    /// Starts receiving the next message from rank `src` with tag `tag`. The size need not be
    /// known: every message travels as a 16-byte size header followed by its payload (in chunks
    /// for MPI), and `buf` is resized to the message size when the header arrives. `buf` must
    /// stay alive and must not be touched until the request completes. At most one receive per
    /// (src, tag) may be pending on a communicator at a time (ROTOR_ASSERT).
    virtual Request irecv(std::vector<std::byte>& buf, int src, int tag) = 0;

    /// Blocks until `req` is complete, then empties it. An empty request returns at once.
    void wait(Request& req);
    /// Advances `req` without blocking; true (and empties it) once it is complete. Call it now
    /// and then during long computations so large transfers progress (MPI progresses only
    /// inside MPI calls). An empty request is complete.
    bool test(Request& req);

    /// Collective: every rank says whether it failed (and why). Returns nullopt on every rank if
    /// no rank failed, else, on every rank, the message of the lowest failing rank, so all ranks
    /// can exit with the same error. `my_error` is ignored when `i_failed` is false.
    std::optional<std::string> agree_on_failure(bool i_failed, std::string my_error);
    /// The same, also telling which rank failed.
    std::optional<Failure> agree_on_failure_detail(bool i_failed, std::string my_error);

    /// Ends the whole job with exit code `code`, for errors from which the ranks cannot agree
    /// (e.g. an exception while other ranks block in a collective). MPI: MPI_Abort, does not
    /// return. In-process: every rank's pending and later calls throw CommError, and so does
    /// this call (threads cannot be killed).
    [[noreturn]] virtual void abort(int code) = 0;

  protected:
    enum class ReduceOp { kSum, kMax, kMin };
    enum class ElementType { kInt64, kDouble };
    /// In-place reduction of `count` elements of `type` at `data`.
    virtual void allreduce(void* data, std::size_t count, ElementType type, ReduceOp op) = 0;
};

}  // namespace rotor::comm
