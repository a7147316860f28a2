#include "comm/mpi_communicator.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "comm/result.h"
#include "core/base/error.h"

namespace rotor::comm {

using detail::Result;

namespace {

/// Turns an MPI return code into a Result naming the MPI function.
Result check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return Result::success();
    std::array<char, MPI_MAX_ERROR_STRING> text{};
    int len = 0;
    if (MPI_Error_string(rc, text.data(), &len) != MPI_SUCCESS) {
        return Result::failure(call, "MPI error code " + std::to_string(rc));
    }
    return Result::failure(call, std::string(text.data(), static_cast<std::size_t>(len)));
}

int to_mpi_level(ThreadLevel level) {
    switch (level) {
        case ThreadLevel::kSingle:
            return MPI_THREAD_SINGLE;
        case ThreadLevel::kFunneled:
            return MPI_THREAD_FUNNELED;
        case ThreadLevel::kSerialized:
            return MPI_THREAD_SERIALIZED;
        case ThreadLevel::kMultiple:
            return MPI_THREAD_MULTIPLE;
    }
    return MPI_THREAD_MULTIPLE;
}

ThreadLevel from_mpi_level(int level) {
    if (level >= MPI_THREAD_MULTIPLE) return ThreadLevel::kMultiple;
    if (level >= MPI_THREAD_SERIALIZED) return ThreadLevel::kSerialized;
    if (level >= MPI_THREAD_FUNNELED) return ThreadLevel::kFunneled;
    return ThreadLevel::kSingle;
}

/// Chunks [0, total) into pieces of at most `chunk` bytes and calls fn(offset, count) for each.
template <class Fn>
Result for_each_chunk(std::size_t total, std::size_t chunk, Fn&& fn) {
    std::size_t index = 0;
    for (std::size_t off = 0; off < total; off += chunk, ++index) {
        const int count = static_cast<int>(std::min(chunk, total - off));
        ROTOR_COMM_TRY(fn(off, count), "chunk " + std::to_string(index));
    }
    return Result::success();
}

constexpr int kGatherTag = 1;  ///< tag on the collective communicator for gather's payloads

}  // namespace

struct MpiCommunicator::Impl {
    MPI_Comm p2p = MPI_COMM_NULL;   ///< user point-to-point messages
    MPI_Comm coll = MPI_COMM_NULL;  ///< collectives, including gather's internal sends
    int rank = 0;
    int size = 1;
    MpiOptions options;
    std::set<std::pair<int, int>> pending_recvs;  ///< (src, tag) with a receive in progress
    /// Sends dropped before completion: their headers must live until MPI is done with them.
    std::vector<std::unique_ptr<detail::RequestImpl>> orphans;

    ~Impl() {
        orphans.clear();
        if (p2p != MPI_COMM_NULL) MPI_Comm_free(&p2p);
        if (coll != MPI_COMM_NULL) MPI_Comm_free(&coll);
    }

    /// Chunked blocking broadcast of `len` bytes at `data` from `root` on `coll`.
    Result bcast_bytes(std::byte* data, std::size_t len, int root) const {
        return for_each_chunk(len, options.max_chunk_bytes, [&](std::size_t off, int count) {
            return check(MPI_Bcast(data + off, count, MPI_BYTE, root, coll), "MPI_Bcast");
        });
    }
};

namespace {

/// One isend: the header (payload bytes, chunk bytes) then every chunk, all posted at once.
class MpiSend final : public detail::RequestImpl {
  public:
    explicit MpiSend(MpiCommunicator::Impl* comm) : comm_(comm) {}

    Result start(std::span<const std::byte> data, int dest, int tag) {
        const std::size_t chunk = comm_->options.max_chunk_bytes;
        header_ = {static_cast<std::uint64_t>(data.size()), static_cast<std::uint64_t>(chunk)};
        reqs_.reserve(1 + (data.size() + chunk - 1) / chunk);
        reqs_.push_back(MPI_REQUEST_NULL);
        ROTOR_COMM_TRY(check(MPI_Isend(header_.data(), sizeof(header_), MPI_BYTE, dest, tag,
                                       comm_->p2p, &reqs_.back()),
                             "MPI_Isend"),
                       "header");
        const std::byte* base = data.data();
        return for_each_chunk(data.size(), chunk, [&](std::size_t off, int count) {
            reqs_.push_back(MPI_REQUEST_NULL);
            return check(
                MPI_Isend(base + off, count, MPI_BYTE, dest, tag, comm_->p2p, &reqs_.back()),
                "MPI_Isend");
        });
    }

    bool test() override {
        int flag = 0;
        check(MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE),
              "MPI_Testall")
            .context("isend")
            .throw_if_failed(comm_->rank);
        return flag != 0;
    }

    void wait() override {
        check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall")
            .context("isend")
            .throw_if_failed(comm_->rank);
    }

    void abandon(std::unique_ptr<RequestImpl> self) noexcept override {
        // A send cannot be cancelled portably; MPI may still read the header, so it lives on in
        // the communicator, which frees the requests when it is destroyed.
        try {
            comm_->orphans.push_back(std::move(self));
        } catch (...) {
            release();
        }
    }

    ~MpiSend() override { release(); }

  private:
    void release() noexcept {
        for (auto& r : reqs_) {
            if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
        }
    }

    MpiCommunicator::Impl* comm_;
    std::array<std::uint64_t, 2> header_{};
    std::vector<MPI_Request> reqs_;
};

/// One irecv: the header first; its sizes decide the buffer size and the chunk receives.
class MpiRecv final : public detail::RequestImpl {
  public:
    MpiRecv(MpiCommunicator::Impl* comm, std::vector<std::byte>* buf, int src, int tag)
        : comm_(comm), buf_(buf), src_(src), tag_(tag) {}

    Result start() {
        return check(MPI_Irecv(header_.data(), sizeof(header_), MPI_BYTE, src_, tag_, comm_->p2p,
                               &header_req_),
                     "MPI_Irecv")
            .context("header");
    }

    bool test() override {
        if (!payload_posted_) {
            int flag = 0;
            fail_if(check(MPI_Test(&header_req_, &flag, MPI_STATUS_IGNORE), "MPI_Test")
                        .context("header"));
            if (!flag) return false;
            fail_if(post_payload());
        }
        int flag = 0;
        fail_if(check(
            MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &flag, MPI_STATUSES_IGNORE),
            "MPI_Testall"));
        if (flag) finish();
        return flag != 0;
    }

    void wait() override {
        if (!payload_posted_) {
            fail_if(check(MPI_Wait(&header_req_, MPI_STATUS_IGNORE), "MPI_Wait").context("header"));
            fail_if(post_payload());
        }
        fail_if(
            check(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE),
                  "MPI_Waitall"));
        finish();
    }

    void abandon(std::unique_ptr<RequestImpl> /*self*/) noexcept override {
        cancel_all();
        comm_->pending_recvs.erase({src_, tag_});
    }

    ~MpiRecv() override {
        if (!finished_) cancel_all();
    }

  private:
    void fail_if(Result r) {
        if (r.ok()) return;
        std::move(r)
            .context("irecv from rank " + std::to_string(src_) + " tag " + std::to_string(tag_))
            .throw_if_failed(comm_->rank);
    }

    Result post_payload() {
        payload_posted_ = true;
        const std::uint64_t total = header_[0];
        const std::uint64_t chunk = header_[1];
        if (total > 0 && (chunk == 0 || chunk > static_cast<std::uint64_t>(INT_MAX))) {
            return Result::failure("header", "bad chunk size " + std::to_string(chunk));
        }
        buf_->resize(static_cast<std::size_t>(total));
        reqs_.reserve(total == 0 ? 0 : static_cast<std::size_t>((total + chunk - 1) / chunk));
        return for_each_chunk(buf_->size(), static_cast<std::size_t>(chunk),
                              [&](std::size_t off, int count) {
                                  reqs_.push_back(MPI_REQUEST_NULL);
                                  return check(MPI_Irecv(buf_->data() + off, count, MPI_BYTE, src_,
                                                         tag_, comm_->p2p, &reqs_.back()),
                                               "MPI_Irecv");
                              });
    }

    void finish() {
        finished_ = true;
        comm_->pending_recvs.erase({src_, tag_});
    }

    /// Cancels what is still pending and completes it (a cancelled receive completes at once;
    /// one already matched completes with its data). Never throws.
    void cancel_all() noexcept {
        auto cancel = [](MPI_Request& r) {
            if (r == MPI_REQUEST_NULL) return;
            MPI_Cancel(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        };
        cancel(header_req_);
        for (auto& r : reqs_) cancel(r);
        finished_ = true;
    }

    MpiCommunicator::Impl* comm_;
    std::vector<std::byte>* buf_;
    int src_;
    int tag_;
    std::array<std::uint64_t, 2> header_{};
    MPI_Request header_req_ = MPI_REQUEST_NULL;
    std::vector<MPI_Request> reqs_;
    bool payload_posted_ = false;
    bool finished_ = false;
};

}  // namespace

void MpiOptions::validate() const {
    if (max_chunk_bytes < 1 || max_chunk_bytes > (std::size_t{1} << 30)) {
        throw ConfigError("max_chunk_bytes",
                          "must be in [1, 2^30], got " + std::to_string(max_chunk_bytes));
    }
}

MpiSession::MpiSession(int* argc, char*** argv, ThreadLevel required) {
    int initialized = 0;
    int finalized = 0;
    check(MPI_Finalized(&finalized), "MPI_Finalized").throw_if_failed(-1);
    if (finalized) throw CommError(-1, "MPI is already finalized");
    check(MPI_Initialized(&initialized), "MPI_Initialized").throw_if_failed(-1);
    int provided = MPI_THREAD_SINGLE;
    if (!initialized) {
        check(MPI_Init_thread(argc, argv, to_mpi_level(required), &provided), "MPI_Init_thread")
            .throw_if_failed(-1);
        owns_init_ = true;
    } else {
        check(MPI_Query_thread(&provided), "MPI_Query_thread").throw_if_failed(-1);
    }
    provided_ = from_mpi_level(provided);
    // Errors on MPI_COMM_WORLD itself (MPI_Comm_dup of it) come back as codes too.
    Result r = check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                     "MPI_Comm_set_errhandler");
    if (r.ok()) r = check(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_), "MPI_Comm_rank");
    if (r.ok()) r = check(MPI_Comm_size(MPI_COMM_WORLD, &world_size_), "MPI_Comm_size");
    if (r.ok() && provided < to_mpi_level(required)) {
        r = Result::failure("MPI_Init_thread", "MPI provides thread level " +
                                                   std::to_string(provided) + ", below the " +
                                                   std::to_string(to_mpi_level(required)) +
                                                   " required");
    }
    if (!r.ok()) {
        if (owns_init_) MPI_Finalize();
        r.throw_if_failed(world_rank_);
    }
}

MpiSession::~MpiSession() {
    if (!owns_init_) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

std::unique_ptr<MpiCommunicator> MpiSession::world(const MpiOptions& options) const {
    options.validate();
    auto impl = std::make_unique<MpiCommunicator::Impl>();
    impl->options = options;
    auto dup = [](MPI_Comm* out) -> Result {
        ROTOR_COMM_TRY(check(MPI_Comm_dup(MPI_COMM_WORLD, out), "MPI_Comm_dup"), "dup");
        return check(MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    };
    Result r = dup(&impl->p2p);
    if (r.ok()) r = dup(&impl->coll);
    if (r.ok()) r = check(MPI_Comm_rank(impl->p2p, &impl->rank), "MPI_Comm_rank");
    if (r.ok()) r = check(MPI_Comm_size(impl->p2p, &impl->size), "MPI_Comm_size");
    std::move(r).context("MpiSession::world").throw_if_failed(world_rank_);
    return std::make_unique<MpiCommunicator>(std::move(impl));
}

MpiCommunicator::MpiCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiCommunicator::~MpiCommunicator() = default;

int MpiCommunicator::rank() const noexcept { return impl_->rank; }
int MpiCommunicator::size() const noexcept { return impl_->size; }
const MpiOptions& MpiCommunicator::options() const noexcept { return impl_->options; }

void MpiCommunicator::barrier() {
    check(MPI_Barrier(impl_->coll), "MPI_Barrier").context("barrier").throw_if_failed(rank());
}

void MpiCommunicator::allreduce(void* data, std::size_t count, ElementType type, ReduceOp op) {
    const MPI_Datatype dtype = type == ElementType::kInt64 ? MPI_INT64_T : MPI_DOUBLE;
    const std::size_t elem = type == ElementType::kInt64 ? sizeof(std::int64_t) : sizeof(double);
    const MPI_Op mop = op == ReduceOp::kSum ? MPI_SUM : (op == ReduceOp::kMax ? MPI_MAX : MPI_MIN);
    const std::size_t per_call = std::max<std::size_t>(1, impl_->options.max_chunk_bytes / elem);
    auto* base = static_cast<std::byte*>(data);
    for_each_chunk(
        count, per_call,
        [&](std::size_t off, int n) {
            return check(MPI_Allreduce(MPI_IN_PLACE, base + off * elem, n, dtype, mop, impl_->coll),
                         "MPI_Allreduce");
        })
        .context("allreduce")
        .throw_if_failed(rank());
}

void MpiCommunicator::reduce_scatter_sum(std::span<const std::int64_t> data,
                                         std::span<const std::size_t> counts,
                                         std::span<std::int64_t> mine) {
    const auto ranks = static_cast<std::size_t>(size());
    ROTOR_ASSERT(counts.size() == ranks, "reduce_scatter_sum: one count per rank");
    std::vector<std::size_t> first(ranks + 1, 0);
    for (std::size_t q = 0; q < ranks; ++q) first[q + 1] = first[q] + counts[q];
    ROTOR_ASSERT(
        first[ranks] == data.size() && mine.size() == counts[static_cast<std::size_t>(rank())],
        "reduce_scatter_sum: bad counts");
    // A call reduces at most `per_block` elements of each block (MPI counts are ints): one call
    // when every block fits, else chunks whose pieces of every block are packed side by side.
    const std::size_t per_call = impl_->options.max_chunk_bytes / sizeof(std::int64_t);
    const std::size_t per_block = std::max<std::size_t>(1, per_call / ranks);
    const std::size_t longest = *std::max_element(counts.begin(), counts.end());
    std::vector<int> piece(ranks);
    const auto call = [&](const std::int64_t* send, std::size_t at) {
        return check(MPI_Reduce_scatter(send, mine.data() + std::min(at, mine.size()), piece.data(),
                                        MPI_INT64_T, MPI_SUM, impl_->coll),
                     "MPI_Reduce_scatter");
    };
    Result r = Result::success();
    if (longest <= per_block) {
        for (std::size_t q = 0; q < ranks; ++q) piece[q] = static_cast<int>(counts[q]);
        r = call(data.data(), 0);
    }
    std::vector<std::int64_t> packed;
    for (std::size_t at = 0; longest > per_block && at < longest && r.ok(); at += per_block) {
        packed.clear();
        for (std::size_t q = 0; q < ranks; ++q) {
            const std::size_t n = counts[q] > at ? std::min(per_block, counts[q] - at) : 0;
            piece[q] = static_cast<int>(n);
            const auto from = data.begin() + static_cast<std::ptrdiff_t>(first[q] + at);
            packed.insert(packed.end(), from, from + static_cast<std::ptrdiff_t>(n));
        }
        r = call(packed.data(), at);
    }
    std::move(r).context("reduce_scatter_sum").throw_if_failed(rank());
}

void MpiCommunicator::allgather_blocks(std::span<std::int64_t> data,
                                       std::span<const std::size_t> counts) {
    const auto ranks = static_cast<std::size_t>(size());
    ROTOR_ASSERT(counts.size() == ranks, "allgather_blocks: one count per rank");
    // MPI_Allgatherv's displacements are ints: the blocks' offsets must fit one.
    ROTOR_ASSERT(data.size() <= static_cast<std::size_t>(INT_MAX), "allgather_blocks: too large");
    std::vector<std::size_t> first(ranks + 1, 0);
    for (std::size_t q = 0; q < ranks; ++q) first[q + 1] = first[q] + counts[q];
    ROTOR_ASSERT(first[ranks] == data.size(), "allgather_blocks: bad counts");
    // One call moves at most `per_block` elements of each block (max_chunk_bytes): pieces at the
    // same offset in every block, in place.
    const std::size_t per_call = impl_->options.max_chunk_bytes / sizeof(std::int64_t);
    const std::size_t per_block = std::max<std::size_t>(1, per_call / ranks);
    const std::size_t longest = *std::max_element(counts.begin(), counts.end());
    std::vector<int> piece(ranks), displ(ranks);
    Result r = Result::success();
    for (std::size_t at = 0; (at == 0 || at < longest) && r.ok(); at += per_block) {
        for (std::size_t q = 0; q < ranks; ++q) {
            piece[q] = static_cast<int>(counts[q] > at ? std::min(per_block, counts[q] - at) : 0);
            displ[q] = static_cast<int>(first[q] + std::min(at, counts[q]));
        }
        r = check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data.data(), piece.data(),
                                 displ.data(), MPI_INT64_T, impl_->coll),
                  "MPI_Allgatherv");
    }
    std::move(r).context("allgather_blocks").throw_if_failed(rank());
}

void MpiCommunicator::broadcast(std::vector<std::byte>& buf, int root) {
    ROTOR_ASSERT(root >= 0 && root < size(), "broadcast: root out of range");
    std::uint64_t len = buf.size();
    Result r =
        check(MPI_Bcast(&len, 1, MPI_UINT64_T, root, impl_->coll), "MPI_Bcast").context("size");
    if (r.ok()) {
        if (rank() != root) buf.resize(static_cast<std::size_t>(len));
        r = impl_->bcast_bytes(buf.data(), buf.size(), root);
    }
    std::move(r).context("broadcast from root " + std::to_string(root)).throw_if_failed(rank());
}

std::vector<std::vector<std::byte>> MpiCommunicator::gather(std::span<const std::byte> mine,
                                                            int root) {
    ROTOR_ASSERT(root >= 0 && root < size(), "gather: root out of range");
    // Sizes first (one MPI_Gather), then each payload by chunked point-to-point on the
    // collective communicator: MPI_Gatherv's int counts and displacements cap it at 2^31.
    const std::uint64_t len = mine.size();
    std::vector<std::uint64_t> sizes(rank() == root ? static_cast<std::size_t>(size()) : 0);
    Result r =
        check(MPI_Gather(&len, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, root, impl_->coll),
              "MPI_Gather")
            .context("sizes");
    std::vector<std::vector<std::byte>> out;
    const std::size_t chunk = impl_->options.max_chunk_bytes;
    if (r.ok() && rank() == root) {
        out.resize(static_cast<std::size_t>(size()));
        for (int src = 0; src < size() && r.ok(); ++src) {
            auto& dst = out[static_cast<std::size_t>(src)];
            if (src == root) {
                dst.assign(mine.begin(), mine.end());
                continue;
            }
            dst.resize(static_cast<std::size_t>(sizes[static_cast<std::size_t>(src)]));
            r = for_each_chunk(dst.size(), chunk, [&](std::size_t off, int count) {
                    return check(MPI_Recv(dst.data() + off, count, MPI_BYTE, src, kGatherTag,
                                          impl_->coll, MPI_STATUS_IGNORE),
                                 "MPI_Recv");
                }).context("from rank " + std::to_string(src));
        }
    } else if (r.ok()) {
        const std::byte* base = mine.data();
        r = for_each_chunk(mine.size(), chunk, [&](std::size_t off, int count) {
            return check(MPI_Send(base + off, count, MPI_BYTE, root, kGatherTag, impl_->coll),
                         "MPI_Send");
        });
    }
    std::move(r).context("gather to root " + std::to_string(root)).throw_if_failed(rank());
    return out;
}

std::vector<std::vector<std::byte>> MpiCommunicator::allgather(std::span<const std::byte> mine) {
    // Sizes by one MPI_Allgather, then one chunked broadcast per rank: no int-sized
    // displacement anywhere.
    const std::uint64_t len = mine.size();
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size()));
    Result r =
        check(MPI_Allgather(&len, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, impl_->coll),
              "MPI_Allgather")
            .context("sizes");
    std::vector<std::vector<std::byte>> out(static_cast<std::size_t>(size()));
    for (int src = 0; src < size() && r.ok(); ++src) {
        auto& dst = out[static_cast<std::size_t>(src)];
        if (src == rank()) {
            dst.assign(mine.begin(), mine.end());
        } else {
            dst.resize(static_cast<std::size_t>(sizes[static_cast<std::size_t>(src)]));
        }
        r = impl_->bcast_bytes(dst.data(), dst.size(), src)
                .context("payload of rank " + std::to_string(src));
    }
    std::move(r).context("allgather").throw_if_failed(rank());
    return out;
}

Request MpiCommunicator::isend(std::span<const std::byte> data, int dest, int tag) {
    ROTOR_ASSERT(dest >= 0 && dest < size(), "isend: dest out of range");
    ROTOR_ASSERT(tag >= 0 && tag <= kMaxTag, "isend: tag out of range");
    auto send = std::make_unique<MpiSend>(impl_.get());
    Result r = send->start(data, dest, tag);
    Request req(std::move(send));
    std::move(r)
        .context("isend to rank " + std::to_string(dest) + " tag " + std::to_string(tag))
        .throw_if_failed(rank());
    return req;
}

Request MpiCommunicator::irecv(std::vector<std::byte>& buf, int src, int tag) {
    ROTOR_ASSERT(src >= 0 && src < size(), "irecv: src out of range");
    ROTOR_ASSERT(tag >= 0 && tag <= kMaxTag, "irecv: tag out of range");
    const bool fresh = impl_->pending_recvs.insert({src, tag}).second;
    ROTOR_ASSERT(fresh, "irecv: a receive on this (src, tag) is already pending");
    auto recv = std::make_unique<MpiRecv>(impl_.get(), &buf, src, tag);
    Result r = recv->start();
    Request req(std::move(recv));
    std::move(r)
        .context("irecv from rank " + std::to_string(src) + " tag " + std::to_string(tag))
        .throw_if_failed(rank());
    return req;
}

void MpiCommunicator::abort(int code) {
    MPI_Abort(impl_->p2p, code);
    std::abort();  // MPI_Abort does not return; this only satisfies [[noreturn]]
}

}  // namespace rotor::comm
