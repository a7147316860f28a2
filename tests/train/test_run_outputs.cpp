// train/run_outputs.h: the outputs that record a run are all tried after the model, and their
// failures end the run naming each file and where the model is.
#include "train/run_outputs.h"

#include <gtest/gtest.h>

#include <string>

#include "core/base/error.h"

namespace rotor::train {
namespace {

TEST(RunOutputs, EveryOutputIsTriedAndEveryFailureNamedWithTheModel) {
    std::string done;
    EXPECT_NO_THROW(write_run_outputs("m", {[&] { done += "a"; }, [&] { done += "b"; }}));
    EXPECT_EQ(done, "ab");
    done.clear();
    try {
        write_run_outputs("/x/model", {[] { throw SystemError("cannot write /x/m.jsonl: full"); },
                                       [&] { done += "trace"; },
                                       [] { throw SystemError("cannot write /x/t.json: full"); }});
        FAIL() << "no error";
    } catch (const SystemError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot write /x/m.jsonl: full; cannot write /x/t.json: full; the model was "
                  "written to /x/model");
    }
    EXPECT_EQ(done, "trace");  // tried after the metrics failed
    // A bug or bad input is not an output failure: it passes through at once.
    EXPECT_THROW(write_run_outputs("m", {[] { throw InputError("f", "bad"); },
                                         [&] { FAIL() << "ran after a non-system error"; }}),
                 InputError);
}

}  // namespace
}  // namespace rotor::train
