#include "core/base/plural.h"

#include <gtest/gtest.h>

namespace rotor {
namespace {

TEST(Plural, OneIsSingular) {
    EXPECT_EQ(plural(1, "document"), "1 document");
    EXPECT_EQ(plural(0, "document"), "0 documents");
    EXPECT_EQ(plural(12, "worker"), "12 workers");
    EXPECT_EQ(plural(2, "document has", "documents have"), "2 documents have");
    EXPECT_EQ(plural(1, "document has", "documents have"), "1 document has");
}

}  // namespace
}  // namespace rotor
