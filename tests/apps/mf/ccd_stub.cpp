// A weak stand-in for make_ccd_trainer so that the SGD tests link on a branch without the CCD
// trainer: the real definition, when linked, takes precedence. Remove once both trainers are in.
#include "apps/mf/trainer.h"
#include "core/base/error.h"

namespace rotor::mf {

[[gnu::weak]] std::unique_ptr<Trainer> make_ccd_trainer(const TrainerInputs&) {
    throw ConfigError("--solver", "ccd is not built in");
}

}  // namespace rotor::mf
