#include "comm/ring_pipeline.h"

#include "core/base/error.h"
#include "core/base/timer.h"

namespace rotor::comm {

RingPipeline::RingPipeline(Communicator& comm, int tag_base) : comm_(comm), tag_base_(tag_base) {
    ROTOR_ASSERT(tag_base >= 0 && tag_base + 1 <= kMaxTag, "RingPipeline: tags out of range");
}

RingStats RingPipeline::run(const RingCallbacks& callbacks) {
    ROTOR_ASSERT(callbacks.compute && callbacks.pack && callbacks.unpack,
                 "RingPipeline: every callback is required");
    const int rank = comm_.rank();
    const int ranks = comm_.size();
    RingRotator slot0(comm_, tag_base_);
    RingRotator slot1(comm_, tag_base_ + 1);
    RingStats stats;
    const auto slice = [&](int slot, int rotations) {
        return slice_at(rank, ranks, slot, rotations);
    };
    const auto compute = [&](int s, RingRotator* in_flight) {
        RingProgress progress = in_flight != nullptr ? RingProgress(*in_flight) : RingProgress();
        Stopwatch watch;
        callbacks.compute(s, progress);
        stats.compute_s += watch.seconds();
    };
    const auto send = [&](RingRotator& rotator, int s) {
        Stopwatch watch;
        rotator.start_rotate(callbacks.pack(s));
        stats.comm_s += watch.seconds();
    };
    const auto receive = [&](RingRotator& rotator, int s) {
        Stopwatch watch;
        const double waited = rotator.wait_seconds();
        const std::vector<std::byte> bytes = rotator.finish_rotate();
        const double wait = rotator.wait_seconds() - waited;
        callbacks.unpack(s, bytes);
        stats.wait_s += wait;
        stats.comm_s += watch.seconds() - wait;
    };

    // The schedule of the file comment: slot 0 travels while slot 1 is computed on, and back.
    compute(slice(0, 0), nullptr);
    send(slot0, slice(0, 0));
    for (int r = 0; r < ranks; ++r) {
        compute(slice(1, r), &slot0);
        send(slot1, slice(1, r));
        receive(slot0, slice(0, r + 1));
        if (r < ranks - 1) {
            compute(slice(0, r + 1), &slot1);
            send(slot0, slice(0, r + 1));
        }
        receive(slot1, slice(1, r + 1));
    }
    stats.rotations = slot0.rotations() + slot1.rotations();
    stats.bytes_sent = slot0.bytes_sent() + slot1.bytes_sent();
    return stats;
}

}  // namespace rotor::comm
