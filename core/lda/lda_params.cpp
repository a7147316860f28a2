#include "core/lda/lda_params.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/error.h"

namespace rotor::lda {

void LdaParams::validate() const {
    if (num_topics == 0) throw ConfigError("--topics", "must be at least 1");
    if (num_topics > kMaxTopics) {
        throw ConfigError("--topics", "must be at most " + std::to_string(kMaxTopics) + ", got " +
                                          std::to_string(num_topics));
    }
    if (!std::isfinite(alpha)) throw ConfigError("--alpha", "must be a finite number");
    if (alpha > kMaxPrior) throw ConfigError("--alpha", "must be at most 1e6");
    if (!(beta > 0) || !(beta <= kMaxPrior)) {
        throw ConfigError("--beta",
                          "must be a positive number at most 1e6, got " + std::to_string(beta));
    }
    if (!alpha_per_topic.empty()) {
        if (alpha_per_topic.size() != num_topics) {
            throw ConfigError("--alpha", "has " + std::to_string(alpha_per_topic.size()) +
                                             " values but --topics is " +
                                             std::to_string(num_topics));
        }
        for (double a : alpha_per_topic) {
            if (!(a > 0) || !(a <= kMaxPrior)) {
                throw ConfigError("--alpha", "every value must be a positive number at most 1e6");
            }
        }
    }
}

double LdaParams::resolved_alpha() const {
    return alpha > 0 ? alpha : 50.0 / static_cast<double>(num_topics);
}

std::vector<double> LdaParams::topic_alphas() const {
    if (!alpha_per_topic.empty()) return alpha_per_topic;
    return std::vector<double>(num_topics, resolved_alpha());
}

LdaParams LdaParams::with_alphas(const std::vector<double>& alphas) const {
    LdaParams p = *this;
    const bool symmetric =
        std::all_of(alphas.begin(), alphas.end(), [&](double a) { return a == alphas.front(); });
    if (symmetric && !alphas.empty()) {
        p.alpha = alphas.front();
        p.alpha_per_topic.clear();
    } else {
        p.alpha_per_topic = alphas;
    }
    return p;
}

}  // namespace rotor::lda
