// MPI implementation of Communicator, and the RAII session that initialises MPI. This header
// does not include <mpi.h> (the .cpp does): nothing outside comm/ sees MPI.
//
// Every MPI call runs on communicators with MPI_ERRORS_RETURN, and every return code is checked:
// a failure throws rotor::CommError "rank <r>: <operation>: <step>: <MPI_Error_string text>".
// Messages and collectives larger than MpiOptions::max_chunk_bytes are split into chunks, so
// buffers above 2^31 bytes work although MPI counts are int.
#pragma once

#include <cstddef>
#include <memory>

#include "comm/communicator.h"

namespace rotor::comm {

/// Thread support levels of MPI_Init_thread, in increasing order.
enum class ThreadLevel { kSingle, kFunneled, kSerialized, kMultiple };

/// Options of an MpiCommunicator. Every rank must use the same values for collectives;
/// point-to-point messages carry their chunk size, so senders and receivers may differ there.
struct MpiOptions {
    /// Largest number of bytes handed to one MPI call; larger buffers are split. In
    /// [1, 2^30]; the default 2^30 keeps every count well inside int.
    std::size_t max_chunk_bytes = std::size_t{1} << 30;

    /// Throws ConfigError("max_chunk_bytes") when out of range.
    void validate() const;
};

class MpiCommunicator;

/// Owns MPI initialisation for the process: MPI_Init_thread in the constructor (unless MPI is
/// already initialised, in which case it only checks the thread level and will not finalise),
/// MPI_Finalize in the destructor. Works as a singleton (plain `./rotor` without mpiexec) and
/// under mpiexec. Create one per process, in main(), on the thread that will call MPI.
/// Not thread-safe.
class MpiSession {
  public:
    /// `argc`/`argv` may be null. Throws CommError if MPI is finalised already, if
    /// initialisation fails, or if MPI provides a thread level below `required`.
    explicit MpiSession(int* argc = nullptr, char*** argv = nullptr,
                        ThreadLevel required = ThreadLevel::kFunneled);
    /// MPI_Finalize if this session initialised MPI. Every MpiCommunicator must be destroyed
    /// first. After a failure that the ranks did not agree on, call abort() instead of
    /// letting the session end: MPI_Finalize would wait for ranks that never arrive.
    ~MpiSession();
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

    /// Thread level MPI provided (>= the required one).
    ThreadLevel provided() const noexcept { return provided_; }
    /// Whether this session called MPI_Init_thread (and so will call MPI_Finalize).
    bool owns_init() const noexcept { return owns_init_; }
    /// Number of processes in MPI_COMM_WORLD: 1 for a singleton (no mpiexec, or `-n 1`).
    int world_size() const noexcept { return world_size_; }
    /// This process's rank in MPI_COMM_WORLD.
    int world_rank() const noexcept { return world_rank_; }
    /// True when the process runs alone (world_size() == 1).
    bool singleton() const noexcept { return world_size_ == 1; }

    /// A new communicator over every process (its own duplicates of MPI_COMM_WORLD, so its
    /// traffic never mixes with another communicator's). Collective over MPI_COMM_WORLD: every
    /// process calls it, in the same order. Throws ConfigError for bad options, CommError.
    std::unique_ptr<MpiCommunicator> world(const MpiOptions& options = {}) const;

  private:
    bool owns_init_ = false;
    ThreadLevel provided_ = ThreadLevel::kSingle;
    int world_size_ = 1;
    int world_rank_ = 0;
};

/// Communicator over MPI. Point-to-point traffic runs on one duplicate of the parent
/// communicator, collectives on another. Used by one thread at a time (the thread level of the
/// session must allow the calling thread). Must outlive every Request it returned.
class MpiCommunicator final : public Communicator {
  public:
    ~MpiCommunicator() override;

    int rank() const noexcept override;
    int size() const noexcept override;
    void barrier() override;
    void broadcast(std::vector<std::byte>& buf, int root) override;
    std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine, int root) override;
    std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override;
    void reduce_scatter_sum(std::span<const std::int64_t> data, std::span<const std::size_t> counts,
                            std::span<std::int64_t> mine) override;
    void allgather_blocks(std::span<std::int64_t> data,
                          std::span<const std::size_t> counts) override;
    /// Posts the 16-byte header (size, chunk size) and every payload chunk at once.
    Request isend(std::span<const std::byte> data, int dest, int tag) override;
    /// Posts the header receive; the payload receives are posted when test()/wait() sees the
    /// header, so call test() now and then while computing.
    Request irecv(std::vector<std::byte>& buf, int src, int tag) override;
    /// MPI_Abort on this communicator: ends every process of the job with `code`.
    [[noreturn]] void abort(int code) override;

    const MpiOptions& options() const noexcept;

    struct Impl;  ///< MPI handles and bookkeeping; defined in the .cpp
    /// Internal: made by MpiSession::world(); Impl is complete only inside comm/.
    explicit MpiCommunicator(std::unique_ptr<Impl> impl);

  protected:
    void allreduce(void* data, std::size_t count, ElementType type, ReduceOp op) override;

  private:
    std::unique_ptr<Impl> impl_;
};

}  // namespace rotor::comm
