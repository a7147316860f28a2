#include "comm/ring.h"

#include <utility>

#include "core/base/error.h"
#include "core/base/timer.h"

namespace rotor::comm {

RingRotator::RingRotator(Communicator& comm, int tag)
    : comm_(comm),
      tag_(tag),
      next_((comm.rank() + 1) % comm.size()),
      prev_((comm.rank() - 1 + comm.size()) % comm.size()) {
    ROTOR_ASSERT(tag >= 0 && tag <= kMaxTag, "RingRotator: tag out of range");
}

void RingRotator::start_rotate(std::vector<std::byte> buf) {
    ROTOR_ASSERT(!in_flight_, "start_rotate: a rotation is already in flight");
    outgoing_ = std::move(buf);
    incoming_.clear();  // keeps its capacity
    // Receive first so that with P == 1 (send to self) the message meets a posted receive.
    recv_ = comm_.irecv(incoming_, prev_, tag_);
    send_ = comm_.isend(outgoing_, next_, tag_);
    in_flight_ = true;
    bytes_sent_ += outgoing_.size();
    // One early test lets MPI see the header if it is already there and post the payload
    // receive before the caller starts computing.
    comm_.test(recv_);
}

bool RingRotator::progress() {
    ROTOR_ASSERT(in_flight_, "progress: no rotation in flight");
    const bool received = comm_.test(recv_);
    const bool sent = comm_.test(send_);
    return received && sent;
}

std::vector<std::byte> RingRotator::finish_rotate() {
    ROTOR_ASSERT(in_flight_, "finish_rotate: no rotation in flight");
    Stopwatch watch;
    comm_.wait(recv_);
    comm_.wait(send_);
    wait_seconds_ += watch.seconds();
    in_flight_ = false;
    ++rotations_;
    // The sent buffer's memory receives the next rotation: no fresh allocation (and page
    // faults) per round for slices of equal size.
    std::vector<std::byte> received = std::move(incoming_);
    incoming_ = std::move(outgoing_);
    outgoing_ = {};
    return received;
}

void RingRotator::reset_stats() noexcept {
    wait_seconds_ = 0.0;
    rotations_ = 0;
    bytes_sent_ = 0;
}

}  // namespace rotor::comm
