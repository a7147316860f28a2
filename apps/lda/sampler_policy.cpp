#include "apps/lda/sampler_policy.h"

namespace rotor::lda {

namespace {
// Blocks with fewer tokens are not timed (their cost is mostly the per-word setup).
constexpr std::uint64_t kMinTimedTokens = 1000;
}  // namespace

bool SamplerPolicy::index_in_use() const {
    if (kind_ == SamplerKind::kSparse) return false;
    if (kind_ == SamplerKind::kMh) return true;
    std::lock_guard lock(mutex_);
    return deterministic_ || !switched_;
}

bool SamplerPolicy::switched() const {
    std::lock_guard lock(mutex_);
    return switched_;
}

void SamplerPolicy::plan_iteration(double mean_doc_topics, double initial) {
    if (kind_ != SamplerKind::kAuto || !deterministic_) return;
    std::lock_guard lock(mutex_);
    switched_ = mean_doc_topics <= kDeterministicSwitch * initial;
}

BlockChoice SamplerPolicy::start_block(std::uint32_t iter) {
    if (kind_ == SamplerKind::kSparse) return {false, false};
    if (iter <= sparse_through_) return {false, index_in_use()};
    if (kind_ == SamplerKind::kMh) return {true, false};
    std::lock_guard lock(mutex_);
    if (deterministic_) return {!switched_, switched_};
    if (switched_) return {false, false};
    if (iter < 2 || probed_ >= iter) return {true, false};
    probed_ = iter;
    return {false, true};
}

void SamplerPolicy::end_block(std::uint32_t iter, bool mh, std::uint64_t tokens, double seconds) {
    std::lock_guard lock(mutex_);
    Tally& t = tally_[iter];
    if (mh) {
        t.mh_tokens += tokens;
        t.mh_seconds += seconds;
        return;
    }
    t.sparse_tokens += tokens;
    if (kind_ != SamplerKind::kAuto || deterministic_ || switched_ || tokens < kMinTimedTokens)
        return;
    // A probe: compare with the mh blocks of the previous iteration (complete, or nearly: sweeps
    // may overlap), or of this one when the previous is gone.
    const auto prev = tally_.find(iter - 1);
    const Tally& ref =
        prev != tally_.end() && prev->second.mh_tokens >= kMinTimedTokens ? prev->second : t;
    if (ref.mh_tokens < kMinTimedTokens) return;
    const double mh_cost = ref.mh_seconds / static_cast<double>(ref.mh_tokens);
    if (seconds / static_cast<double>(tokens) <= mh_cost) switched_ = true;
}

std::string SamplerPolicy::take_label(std::uint32_t iter) {
    std::lock_guard lock(mutex_);
    const auto it = tally_.find(iter);
    std::string label = kind_ == SamplerKind::kMh ? "mh" : "sparse";
    if (it != tally_.end()) {
        const bool mh = it->second.mh_tokens > 0;
        const bool sparse = it->second.sparse_tokens > 0;
        label = mh && sparse ? "mh+sparse" : mh ? "mh" : "sparse";
        // The previous iteration's tally is the probes' reference: keep one back.
        tally_.erase(tally_.begin(), tally_.lower_bound(iter > 0 ? iter - 1 : 0));
    }
    return label;
}

}  // namespace rotor::lda
