// The rule every model's `train` follows for its outputs (docs/reliability.md, "One rule for
// every output"): the model is what a run is for, and the outputs that record the run (the
// metrics file, the trace, LDA's document-topic table, logistic regression's traffic stats)
// never cost it. They are written after the model is committed; each is tried even when one
// before it failed; a failure of any makes the run end with exit 4 and a message naming the
// file and saying where the model is. The model itself and the checkpoints are the run's state:
// a failure writing them ends the run at once (exit 4), leaving the previous checkpoint whole.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>

namespace rotor::train {

/// Runs `steps` in order (each writes one output that records the run), all of them even when
/// some throw SystemError; then, if any did, throws one SystemError joining their messages and
/// ending "; the model was written to <model>". Other exceptions pass through at once.
void write_run_outputs(const std::string& model,
                       std::initializer_list<std::function<void()>> steps);

}  // namespace rotor::train
