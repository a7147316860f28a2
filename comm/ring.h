// Ring rotation of buffers across ranks, the communication pattern of HarpLDA+ (Peng et al.,
// VLDB 2017): the word-topic model is cut into slices that travel around the ranks in a ring.
//
// Protocol (docs/comm.md): start_rotate(buf) posts irecv from prev = (rank - 1 + P) % P and
// isend of buf to next = (rank + 1) % P, both with this rotator's tag; finish_rotate() waits for
// both and returns the buffer that came from prev. After P rotations every buffer is back on the
// rank that first sent it. Each rank holds two slices, one RingRotator per slice with its own
// tag (kRingTagBase + slot), and alternates: rotate slice A while computing on slice B, then the
// other way round, so one transfer is always in flight during compute:
//
//     compute(A); rot0.start_rotate(A)
//     for r in 0..P-1:
//         compute(B); rot1.start_rotate(B)
//         A = rot0.finish_rotate(); if r < P-1: { compute(A); rot0.start_rotate(A) }
//         B = rot1.finish_rotate()
//
// comm/ring_pipeline.h runs this schedule for any model through callbacks (RingPipeline).
// Distinct tags keep the two slices' messages apart (a receive never matches the other slot's
// message), and at most one rotation per rotator is in flight, which the communicator's
// "one receive per (src, tag)" rule requires.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace rotor::comm {

/// First tag used by ring rotation; slot s (0 or 1 in HarpLDA+) uses kRingTagBase + s.
inline constexpr int kRingTagBase = 1000;

/// One slot of ring rotation over a communicator. Not thread-safe: used by the rank's comm
/// thread. `comm` must outlive the rotator. Destroying a rotator with a rotation in flight is an
/// error path only (the receive is cancelled; see Request).
class RingRotator {
  public:
    /// `tag` in [0, kMaxTag]; two rotators in flight on one communicator need distinct tags.
    RingRotator(Communicator& comm, int tag);

    int next() const noexcept { return next_; }  ///< rank that receives from us
    int prev() const noexcept { return prev_; }  ///< rank that sends to us

    /// Takes ownership of `buf` and starts sending it to next() while receiving prev()'s.
    /// Precondition: !in_flight().
    void start_rotate(std::vector<std::byte> buf);

    /// Advances the rotation without blocking; true once both transfers are complete. Call it
    /// between pieces of computation so large transfers make progress. Precondition:
    /// in_flight().
    bool progress();

    /// Waits for the rotation to complete and returns the buffer received from prev(). Time
    /// spent blocked here is added to wait_seconds(). Precondition: in_flight().
    std::vector<std::byte> finish_rotate();

    bool in_flight() const noexcept { return in_flight_; }

    /// Total wall seconds spent blocked in finish_rotate() (communication not hidden by
    /// computation).
    double wait_seconds() const noexcept { return wait_seconds_; }
    /// Completed rotations.
    std::uint64_t rotations() const noexcept { return rotations_; }
    /// Total payload bytes sent by completed and in-flight rotations.
    std::uint64_t bytes_sent() const noexcept { return bytes_sent_; }
    /// Zeroes wait_seconds(), rotations() and bytes_sent().
    void reset_stats() noexcept;

  private:
    Communicator& comm_;
    int tag_;
    int next_;
    int prev_;
    bool in_flight_ = false;
    double wait_seconds_ = 0.0;
    std::uint64_t rotations_ = 0;
    std::uint64_t bytes_sent_ = 0;
    // Buffers before requests: requests are destroyed first, so a cancelled receive never
    // writes into a freed buffer.
    std::vector<std::byte> outgoing_;
    std::vector<std::byte> incoming_;
    Request send_;
    Request recv_;
};

}  // namespace rotor::comm
