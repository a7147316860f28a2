#include "core/lda/sampler.h"

#include <string>

#include "core/base/error.h"

namespace rotor::lda {

std::string_view sampler_name(SamplerKind kind) {
    switch (kind) {
        case SamplerKind::kSparse:
            return "sparse";
        case SamplerKind::kMh:
            return "mh";
        case SamplerKind::kAuto:
            return "auto";
    }
    return "sparse";
}

SamplerKind parse_sampler(std::string_view name) {
    for (SamplerKind k : {SamplerKind::kSparse, SamplerKind::kMh, SamplerKind::kAuto}) {
        if (sampler_name(k) == name) return k;
    }
    throw ConfigError("--sampler", "'" + std::string(name) + "' is not sparse, mh or auto");
}

}  // namespace rotor::lda
