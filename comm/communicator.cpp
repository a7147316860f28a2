#include "comm/communicator.h"

#include <cstring>

#include "core/base/error.h"

namespace rotor::comm {

Request& Request::operator=(Request&& other) noexcept {
    if (this != &other) {
        release();
        impl_ = std::move(other.impl_);
    }
    return *this;
}

Request::~Request() { release(); }

void Request::release() noexcept {
    if (impl_) {
        // An incomplete operation dropped on an error path: the implementation decides what
        // must outlive the handle.
        detail::RequestImpl* raw = impl_.get();
        raw->abandon(std::move(impl_));
    }
}

void Communicator::wait(Request& req) {
    if (!req.impl_) return;
    req.impl_->wait();
    req.impl_.reset();
}

bool Communicator::test(Request& req) {
    if (!req.impl_) return true;
    if (!req.impl_->test()) return false;
    req.impl_.reset();
    return true;
}

void Communicator::allreduce_sum(std::span<std::int64_t> data) {
    allreduce(data.data(), data.size(), ElementType::kInt64, ReduceOp::kSum);
}
void Communicator::allreduce_sum(std::span<double> data) {
    allreduce(data.data(), data.size(), ElementType::kDouble, ReduceOp::kSum);
}
void Communicator::allreduce_max(std::span<std::int64_t> data) {
    allreduce(data.data(), data.size(), ElementType::kInt64, ReduceOp::kMax);
}
void Communicator::allreduce_max(std::span<double> data) {
    allreduce(data.data(), data.size(), ElementType::kDouble, ReduceOp::kMax);
}
void Communicator::allreduce_min(std::span<std::int64_t> data) {
    allreduce(data.data(), data.size(), ElementType::kInt64, ReduceOp::kMin);
}
void Communicator::allreduce_min(std::span<double> data) {
    allreduce(data.data(), data.size(), ElementType::kDouble, ReduceOp::kMin);
}

bool Communicator::any(bool mine) {
    std::int64_t v = mine ? 1 : 0;
    allreduce_max(std::span<std::int64_t>(&v, 1));
    return v != 0;
}

std::optional<std::string> Communicator::agree_on_failure(bool i_failed, std::string my_error) {
    auto failure = agree_on_failure_detail(i_failed, std::move(my_error));
    if (!failure) return std::nullopt;
    return std::move(failure->message);
}

std::optional<Failure> Communicator::agree_on_failure_detail(bool i_failed, std::string my_error) {
    // One allgather of [flag byte][message bytes]: every rank sees every rank's report and picks
    // the same (lowest) failing rank, so all ranks print and return the same error.
    std::vector<std::byte> mine(1, std::byte{static_cast<unsigned char>(i_failed ? 1 : 0)});
    if (i_failed) {
        const auto* p = reinterpret_cast<const std::byte*>(my_error.data());
        mine.insert(mine.end(), p, p + my_error.size());
    }
    const auto all = allgather(mine);
    for (int r = 0; r < static_cast<int>(all.size()); ++r) {
        const auto& rec = all[static_cast<std::size_t>(r)];
        if (rec.empty())
            throw CommError(rank(),
                            "agree_on_failure: empty report from rank " + std::to_string(r));
        if (rec[0] != std::byte{0}) {
            Failure f;
            f.rank = r;
            f.message.assign(reinterpret_cast<const char*>(rec.data()) + 1, rec.size() - 1);
            return f;
        }
    }
    return std::nullopt;
}

}  // namespace rotor::comm
