#include "core/mf/factors.h"

#include <string>

#include "core/base/error.h"
#include "core/base/rng.h"

namespace rotor::mf {

Factors::Factors(std::uint32_t rows, std::uint32_t k) : rows_(rows), k_(k) {
    if (k == 0) throw ConfigError("--rank", "must be at least 1");
    if (k > kMaxRank) {
        throw ConfigError(
            "--rank", "must be at most " + std::to_string(kMaxRank) + ", got " + std::to_string(k));
    }
    data_.assign(static_cast<std::size_t>(rows) * k, 0.0f);
}

void Factors::get_column(std::uint32_t k, std::span<float> out) const {
    ROTOR_ASSERT(k < k_ && out.size() == rows_, "get_column: bad factor or size");
    const float* p = data_.data() + k;
    for (std::uint32_t i = 0; i < rows_; ++i, p += k_) out[i] = *p;
}

void Factors::set_column(std::uint32_t k, std::span<const float> v) {
    ROTOR_ASSERT(k < k_ && v.size() == rows_, "set_column: bad factor or size");
    float* p = data_.data() + k;
    for (std::uint32_t i = 0; i < rows_; ++i, p += k_) *p = v[i];
}

void Factors::init_uniform(std::uint64_t seed, std::uint64_t stream, float lo, float hi,
                           std::span<const std::uint32_t> global_ids) {
    ROTOR_ASSERT(global_ids.empty() || global_ids.size() == rows_, "init_uniform: ids size");
    const double width = static_cast<double>(hi) - lo;
    for (std::uint32_t i = 0; i < rows_; ++i) {
        const std::uint64_t id = global_ids.empty() ? i : global_ids[i];
        Rng rng = Rng::from({seed, stream, id});
        for (float& x : row(i)) x = static_cast<float>(lo + width * rng.uniform());
    }
}

}  // namespace rotor::mf
