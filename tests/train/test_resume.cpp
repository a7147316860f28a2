#include "train/resume.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/base/error.h"

namespace rotor::train {
namespace {

const std::vector<ResumeSetting> kSettings = {{"--topics", "9", "8"}, {"--seed", "3", "3"}};

TEST(Resume, AChangedSettingIsRefusedByNameOnlyWhenGiven) {
    const auto all = [](const std::string&) { return true; };
    const auto none = [](const std::string&) { return false; };
    try {
        refuse_resume_conflicts(kSettings, all, "ckpt");
        FAIL() << "accepted";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--topics");
        EXPECT_EQ(std::string(e.what()),
                  "--topics: is 9 but ckpt was trained with 8; resume "
                  "without it or start a new run");
    }
    EXPECT_NO_THROW(refuse_resume_conflicts(kSettings, none, "ckpt"));  // defaults: no conflict
    EXPECT_NO_THROW(refuse_resume_conflicts(
        kSettings, [](const std::string& f) { return f == "--seed"; }, "ckpt"));
}

TEST(Resume, TheTotalMayNotFallBelowWhatIsDone) {
    EXPECT_NO_THROW(check_resume_target(30, 30, "ckpt"));  // a finished run, continued or not
    EXPECT_NO_THROW(check_resume_target(30, 50, "ckpt"));
    try {
        check_resume_target(90, 50, "ckpt");
        FAIL() << "accepted";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.key(), "--iterations");
        EXPECT_EQ(std::string(e.what()),
                  "--iterations: is 50 but ckpt already has 90 iterations: give a total of at "
                  "least 90 (or take the model it ended with)");
    }
    EXPECT_THROW(check_resume_target(31, 30, "ckpt", "--max-iterations"), ConfigError);
}

TEST(Resume, TheAdviceIsTheCallers) {
    try {
        refuse_resume_conflicts(
            kSettings, [](const std::string&) { return true; }, "ckpt", "fit anew");
        FAIL() << "accepted";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()), "--topics: is 9 but ckpt was trained with 8; fit anew");
    }
}

TEST(Resume, CheckpointsFallEveryNAndOnTheLastIteration) {
    EXPECT_TRUE(checkpoint_due(10, 5, 12));
    EXPECT_FALSE(checkpoint_due(11, 5, 12));
    EXPECT_TRUE(checkpoint_due(12, 5, 12));   // the last, so that a finished run can go on
    EXPECT_FALSE(checkpoint_due(12, 0, 12));  // 0: never
}

}  // namespace
}  // namespace rotor::train
