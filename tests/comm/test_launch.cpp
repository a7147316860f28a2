// Launch detection (comm/launch.h): the launch variables of Open MPI, PMIx and PMI.
#include "comm/launch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace rotor::comm {
namespace {

const std::vector<std::string> kLaunchVariables = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                                   "PMI_SIZE"};

/// Unsets the launch variables for the test's duration and restores them afterwards.
class LaunchEnv : public ::testing::Test {
  protected:
    void SetUp() override {
        for (const std::string& name : kLaunchVariables) {
            const char* v = std::getenv(name.c_str());
            saved_.emplace_back(v ? std::optional<std::string>(v) : std::nullopt);
            ::unsetenv(name.c_str());
        }
    }
    void TearDown() override {
        for (std::size_t i = 0; i < kLaunchVariables.size(); ++i) {
            if (saved_[i])
                ::setenv(kLaunchVariables[i].c_str(), saved_[i]->c_str(), 1);
            else
                ::unsetenv(kLaunchVariables[i].c_str());
        }
    }

  private:
    std::vector<std::optional<std::string>> saved_;
};

TEST_F(LaunchEnv, PlainRunIsNotLaunchedAndJoinsNothing) {
    EXPECT_FALSE(launched_by_mpi());
    EXPECT_EQ(join_launched_world(nullptr, nullptr), nullptr);
}

TEST_F(LaunchEnv, AnyLaunchVariableMeansLaunched) {
    for (const std::string& name : kLaunchVariables) {
        ::setenv(name.c_str(), "0", 1);
        EXPECT_TRUE(launched_by_mpi()) << name;
        ::unsetenv(name.c_str());
        EXPECT_FALSE(launched_by_mpi()) << name;
    }
}

TEST(Launch, KnowsWhetherItIsBuiltWithMpi) {
#if defined(ROTOR_HAVE_MPI)
    EXPECT_TRUE(built_with_mpi());
#else
    EXPECT_FALSE(built_with_mpi());
#endif
}

}  // namespace
}  // namespace rotor::comm
