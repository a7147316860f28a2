#include "train/run_outputs.h"

#include "core/base/error.h"

namespace rotor::train {

void write_run_outputs(const std::string& model,
                       std::initializer_list<std::function<void()>> steps) {
    std::string failures;
    for (const auto& step : steps) {
        try {
            step();
        } catch (const SystemError& e) {
            failures += (failures.empty() ? "" : "; ") + std::string(e.what());
        }
    }
    if (!failures.empty()) throw SystemError(failures + "; the model was written to " + model);
}

}  // namespace rotor::train
