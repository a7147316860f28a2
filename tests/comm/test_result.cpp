#include "comm/result.h"

#include <gtest/gtest.h>

#include "core/base/error.h"

namespace rotor::comm::detail {
namespace {

Result inner(bool fail) {
    if (fail) return Result::failure("MPI_Isend", "Invalid rank");
    return Result::success();
}

Result middle(bool fail) {
    ROTOR_COMM_TRY(inner(fail), "chunk 3");
    return Result::success();
}

TEST(CommResult, SuccessDoesNotThrow) {
    const Result r = middle(false);
    EXPECT_TRUE(r.ok());
    EXPECT_NO_THROW(r.throw_if_failed(0));
}

TEST(CommResult, FailureKeepsTheChainOutermostFirst) {
    Result r = middle(true).context("isend to rank 2");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), "isend to rank 2: chunk 3: MPI_Isend: Invalid rank");
    try {
        r.throw_if_failed(4);
        ADD_FAILURE() << "no throw";
    } catch (const CommError& e) {
        EXPECT_EQ(e.rank(), 4);
        EXPECT_NE(std::string(e.what()).find("rank 4"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("chunk 3: MPI_Isend: Invalid rank"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace rotor::comm::detail
