// The two-slot ring pipeline of HarpLDA+ (Peng et al., VLDB 2017) for any model whose state is
// cut into 2P slices that visit every rank once per iteration: LDA's word-topic slices today,
// the column slices of H for matrix factorization next (NOMAD's rotation). The model says what
// to do with a slice through three callbacks; the pipeline decides when, so that one slot's slice
// travels while the model computes on the other's.
//
// With P ranks, rank p holds two slots; after j rotations slot s holds slice
//     slice_at(p, P, s, j) = 2·((p − j) mod P) + s,
// so slices 2p and 2p + 1 are "home" on rank p at the start and again at the end of an iteration.
// One iteration (docs/comm.md, "Ring pipeline"):
//
//     compute(A); send A
//     for r in 0..P-1:
//         compute(B) while A travels; send B
//         receive A
//         if r < P-1: { compute(A) while B travels; send A }
//         receive B
//
// where A is slot 0's slice, B slot 1's, "send" is pack then RingRotator::start_rotate and
// "receive" is finish_rotate then unpack. Every rank computes on each of the 2P slices exactly
// once per iteration: slot 0's slices in the order slice_at(p, P, 0, 0..P-1), slot 1's likewise,
// interleaved A, B, A, B, ... (2P computes).
//
// Thread-safety: not thread-safe; run() is called by the rank's comm thread, and so are the
// callbacks (compute may hand the work to other threads, but only the calling thread may call
// progress()). run() is collective: every rank of the communicator runs it at the same time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "comm/communicator.h"
#include "comm/ring.h"

namespace rotor::comm {

/// What compute() gets to move the transfer in flight along while it computes. Calling it is
/// cheap (non-blocking tests of the transfer's requests); MPI progresses large messages only
/// inside MPI calls, so a long compute should call it every few hundred microseconds.
class RingProgress {
  public:
    /// A progress with nothing in flight (the first compute of an iteration).
    RingProgress() = default;
    explicit RingProgress(RingRotator& rotator) : rotator_(&rotator) {}

    /// True when a rotation is in flight during this compute.
    bool active() const noexcept { return rotator_ != nullptr; }
    /// Advances the rotation in flight without blocking; true once it has fully arrived (and at
    /// once when none is in flight). Throws CommError.
    bool operator()() { return rotator_ == nullptr || rotator_->progress(); }

  private:
    RingRotator* rotator_ = nullptr;
};

/// What a model plugs into the pipeline. All three are required.
struct RingCallbacks {
    /// Computes on `slice`, which this rank holds (it was unpacked here, or is home); calls
    /// `progress` now and then while it works.
    std::function<void(int slice, RingProgress& progress)> compute;
    /// Packs `slice` into a message for the next rank; the rank no longer holds the slice
    /// afterwards.
    std::function<std::vector<std::byte>(int slice)> pack;
    /// Takes `slice` from the message `bytes` that came from the previous rank (borrowed for the
    /// call); throws CommError on a malformed message.
    std::function<void(int slice, std::span<const std::byte> bytes)> unpack;
};

/// The time and traffic of one run().
struct RingStats {
    /// Seconds in pack, posting the transfers and unpack (not hidden by computation).
    double comm_s = 0;
    /// Seconds blocked waiting for a transfer to complete (RingRotator::finish_rotate).
    double wait_s = 0;
    /// Seconds inside compute.
    double compute_s = 0;
    /// Completed rotations: 2P per run.
    std::uint64_t rotations = 0;
    /// Payload bytes sent.
    std::uint64_t bytes_sent = 0;
};

/// The pipeline over one communicator. `comm` must outlive it.
class RingPipeline {
  public:
    /// Slot s rotates with tag `tag_base` + s; both tags in [0, kMaxTag], unused by other
    /// transfers in flight during run().
    explicit RingPipeline(Communicator& comm, int tag_base = kRingTagBase);

    /// The slice slot `slot` (0 or 1) of `rank` holds after `rotations` rotations, out of
    /// 2·`ranks`.
    static int slice_at(int rank, int ranks, int slot, int rotations) noexcept {
        return 2 * (((rank - rotations) % ranks + ranks) % ranks) + slot;
    }
    int num_slices() const noexcept { return 2 * comm_.size(); }

    /// Collective: one iteration (2P computes, 2P rotations), on return the home slices are back.
    /// Exceptions from callbacks or the communicator propagate; the pipeline is then unusable for
    /// this iteration on every rank (an error path: the caller aborts the job).
    RingStats run(const RingCallbacks& callbacks);

  private:
    Communicator& comm_;
    int tag_base_;
};

}  // namespace rotor::comm
