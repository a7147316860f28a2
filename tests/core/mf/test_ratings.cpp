// Tests of Ratings (the CSR and the item counts, built from triples or from a CSR), TripleList
// and IdMap.
#include "core/mf/ratings.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "tests/core/mf/ratings_test_util.h"

namespace rotor::mf {
namespace {

using testing::csr_entries;
using testing::entries;
using testing::item_degrees_match;
using testing::random_triples;

template <class T>
std::vector<T> vec(std::span<const T> s) {
    return {s.begin(), s.end()};
}

TEST(IdMap, IndicesInOrderOfFirstInsertion) {
    IdMap m;
    EXPECT_EQ(m.insert("b"), std::make_pair(0u, true));
    EXPECT_EQ(m.insert("a"), std::make_pair(1u, true));
    EXPECT_EQ(m.insert("b"), std::make_pair(0u, false));
    EXPECT_EQ(m.size(), 2u);
    EXPECT_EQ(m.name(1), "a");
    EXPECT_EQ(m.find("a"), 1u);
    EXPECT_FALSE(m.find("c").has_value());
    const IdMap copy = m;  // the copy's index is its own
    EXPECT_EQ(copy.find("b"), 0u);
    EXPECT_EQ(copy, m);
    EXPECT_GT(m.memory_bytes(), 0u);
}

TEST(IdMap, PlainIntegersAreHeldAsValuesDenseAndSparse) {
    IdMap m;
    // Dense values (into the table), two far beyond it (hashed), one beyond the table's first
    // bound (hashed, then moved into the grown table).
    const std::vector<std::string> ids = {
        "7", "0", "123456789012345678", "3", "9999999999999999999", "150001"};
    for (std::uint32_t i = 0; i < ids.size(); ++i)
        EXPECT_EQ(m.insert(ids[i]), std::make_pair(i, true));
    for (std::uint32_t v = 100; v < 200000; v += 3) m.insert(std::to_string(v));
    EXPECT_TRUE(m.integers());
    for (std::uint32_t i = 0; i < ids.size(); ++i) {
        EXPECT_EQ(m.name(i), ids[i]);
        EXPECT_EQ(m.find(ids[i]), i);
        EXPECT_EQ(m.insert(ids[i]), std::make_pair(i, false));
    }
    EXPECT_EQ(m.find("103"), 7u);
    EXPECT_EQ(m.name(7), "103");
    EXPECT_EQ(m.find("150001"), 5u);  // hashed when inserted, in the table once it grew
    EXPECT_EQ(m.size(), 6u + (200000 - 100 + 2) / 3 - 1);
    // Not the same text, so not the same id: leading zeros, signs, 20 digits, empty.
    for (const char* other : {"07", "+7", "-7", "00", "10000000000000000000", "", "7 "})
        EXPECT_FALSE(m.find(other).has_value()) << other;
    EXPECT_FALSE(m.find("8").has_value());
    EXPECT_EQ(m.names()[2], "123456789012345678");
    // About 12 bytes an id here (8 for the value, a dense table), far below the strings' ~100.
    EXPECT_LT(m.memory_bytes(), 40u * m.size());
}

TEST(IdMap, TheFirstOtherIdTurnsTheMapIntoStringsKeepingEveryIndex) {
    IdMap ints;
    IdMap strings;
    for (const char* id : {"5", "2", "40000000000", "0"}) {
        ints.insert(id);
        strings.insert(id);
    }
    EXPECT_EQ(ints, strings);
    EXPECT_EQ(ints.insert("007"), std::make_pair(4u, true));  // not "7": a string from here on
    EXPECT_FALSE(ints.integers());
    EXPECT_NE(ints, strings);
    strings.insert("007");
    EXPECT_EQ(ints, strings);
    EXPECT_EQ(ints.names(), (std::vector<std::string>{"5", "2", "40000000000", "0", "007"}));
    EXPECT_EQ(ints.find("40000000000"), 2u);
    EXPECT_EQ(ints.find("0"), 3u);
    EXPECT_FALSE(ints.find("7").has_value());
    EXPECT_EQ(ints.insert("2"), std::make_pair(1u, false));
    EXPECT_EQ(ints.insert("7"), std::make_pair(5u, true));
    // Equality across the two forms compares the names.
    IdMap a;
    IdMap b;
    for (const char* id : {"1", "x"}) a.insert(id);
    b.insert("1");
    EXPECT_TRUE(b.integers());
    EXPECT_NE(a, b);
    IdMap c = a;
    EXPECT_EQ(c, a);
}

TEST(Ratings, SmallMatrixByUserAndByItem) {
    // 3 users x 4 items; user 1 and item 2 have no ratings.
    const std::vector<RatingTriple> t = {
        {2, 3, 5.0f}, {0, 1, 3.0f}, {2, 0, 1.0f}, {0, 0, 4.0f}, {2, 1, 2.0f}};
    const Ratings r = Ratings::from_triples(3, 4, t);
    EXPECT_EQ(r.num_users(), 3u);
    EXPECT_EQ(r.num_items(), 4u);
    EXPECT_EQ(r.nnz(), 5u);
    EXPECT_EQ(vec(r.user_offsets()), (std::vector<std::uint64_t>{0, 2, 2, 5}));
    EXPECT_EQ(vec(r.user_items()), (std::vector<ItemId>{0, 1, 0, 1, 3}));
    EXPECT_EQ(vec(r.user_values()), (std::vector<float>{4, 3, 1, 2, 5}));
    EXPECT_EQ(vec(r.item_offsets()), (std::vector<std::uint64_t>{0, 2, 4, 4, 5}));
    EXPECT_TRUE(r.items_of(1).empty());
    EXPECT_EQ(r.item_degree(2), 0u);
    EXPECT_EQ(r.user_degree(2), 3u);
    EXPECT_EQ(r.item_degree(1), 2u);
    EXPECT_DOUBLE_EQ(r.mean(), 3.0);
    EXPECT_EQ(r.memory_bytes(), 8u * (4 + 5) + 8u * 5);
}

TEST(Ratings, EmptyMatrix) {
    const Ratings empty;
    EXPECT_EQ(empty.nnz(), 0u);
    EXPECT_EQ(empty.user_offsets().size(), 1u);
    EXPECT_EQ(empty.item_offsets().size(), 1u);
    EXPECT_EQ(empty.mean(), 0.0);
    const Ratings shaped = Ratings::from_triples(3, 2, std::span<const RatingTriple>{});
    EXPECT_EQ(vec(shaped.user_offsets()), (std::vector<std::uint64_t>{0, 0, 0, 0}));
    EXPECT_EQ(vec(shaped.item_offsets()), (std::vector<std::uint64_t>{0, 0, 0}));
}

TEST(Ratings, CsrHoldsEveryEntryOnceInIncreasingOrder) {
    const auto t = random_triples(50, 70, 900, 7);
    const Ratings r = Ratings::from_triples(50, 70, t);
    EXPECT_EQ(csr_entries(r), entries(t));
    EXPECT_TRUE(item_degrees_match(r));
    for (UserId u = 0; u < r.num_users(); ++u) {
        const auto items = r.items_of(u);
        for (std::size_t k = 1; k < items.size(); ++k) EXPECT_LT(items[k - 1], items[k]);
    }
    double sum = 0;
    for (const auto& x : t) sum += x.value;
    EXPECT_NEAR(r.mean(), sum / 900.0, 1e-12);
}

TEST(Ratings, TheOrderOfTheTriplesDoesNotMatter) {
    auto t = random_triples(20, 30, 200, 3);
    const Ratings a = Ratings::from_triples(20, 30, t);
    std::reverse(t.begin(), t.end());
    const Ratings b = Ratings::from_triples(20, 30, t);
    EXPECT_EQ(a, b);
    EXPECT_EQ(vec(a.item_offsets()), vec(b.item_offsets()));
}

TEST(Ratings, ATripleListAcrossChunksGivesTheSameMatrix) {
    const auto t = random_triples(400, 400, TripleList::kChunk + 1000, 5);
    TripleList list;
    for (const RatingTriple& x : t) list.push_back(x);
    ASSERT_EQ(list.size(), t.size());
    EXPECT_EQ(list[TripleList::kChunk].item, t[TripleList::kChunk].item);
    EXPECT_EQ(Ratings::from_triples(400, 400, list), Ratings::from_triples(400, 400, t));
    list.clear();
    EXPECT_EQ(list.size(), 0u);
}

TEST(Ratings, FromCsrCountsTheSameItems) {
    const auto t = random_triples(40, 25, 300, 11);
    const Ratings a = Ratings::from_triples(40, 25, t);
    const Ratings b = Ratings::from_csr(40, 25, vec(a.user_offsets()), vec(a.user_items()),
                                        vec(a.user_values()), "csr");
    EXPECT_EQ(a, b);
    EXPECT_EQ(vec(a.item_offsets()), vec(b.item_offsets()));
    EXPECT_EQ(a.mean(), b.mean());
}

TEST(Ratings, DuplicateWithoutOriginNamesTheListPositions) {
    const std::vector<RatingTriple> t = {{0, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 1, 4}};
    try {
        Ratings::from_triples(2, 2, t);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("duplicate rating for user 0, item 1"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("#1 and #4"), std::string::npos) << e.what();
    }
}

TEST(Ratings, ThriceInAnUnsortedUserNamesTheFirstTwo) {
    const std::vector<RatingTriple> t = {{0, 2, 1}, {0, 1, 1}, {0, 2, 2}, {1, 0, 1}, {0, 2, 3}};
    try {
        Ratings::from_triples(2, 3, t);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("user 0, item 2 (ratings #1 and #3 of the list)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Ratings, AListGivenAwayAndGroupedByUserFillsTheCsrInItsPlace) {
    // Three users' ratings in order (more than a chunk of triples): the CSR of the list given
    // away is the span's, built at 12 bytes a rating; a list whose users go back at 20.
    std::vector<RatingTriple> t;
    for (std::uint32_t u = 0; u < 3; ++u)
        for (std::uint32_t i = 0; i < 30000; ++i)
            t.push_back({u, (i * 7919 + u) % 30000, static_cast<float>(i % 5)});
    TripleList list;
    for (const RatingTriple& x : t) list.push_back(x);
    const Ratings a = Ratings::from_triples(3, 30000, std::move(list));
    const Ratings b = Ratings::from_triples(3, 30000, t);
    EXPECT_EQ(a, b);
    EXPECT_EQ(list.size(), 0u);
    EXPECT_EQ(a.build_peak_bytes() + 8 * a.nnz(), b.build_peak_bytes());
    TripleList mixed;
    for (const RatingTriple& x : {t[0], t[30000], t[1]}) mixed.push_back(x);
    EXPECT_EQ(Ratings::from_triples(3, 30000, std::move(mixed)).build_peak_bytes(),
              20u * 3 + 16u * (3 + 30000 + 2));
    // A duplicate in a user whose items are not in order is named by its places in the list.
    TripleList dup;
    for (const RatingTriple& x : std::vector<RatingTriple>{
             {0, 0, 1}, {1, 2, 1}, {1, 1, 1}, {1, 2, 2}, {1, 2, 3}, {2, 0, 1}})
        dup.push_back(x);
    try {
        Ratings::from_triples(3, 3, std::move(dup));
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("user 1, item 2 (ratings #2 and #4 of the list)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Ratings, DuplicateWithOriginNamesBothLinesAndTheIds) {
    IdMap users;
    IdMap items;
    users.insert("alice");
    users.insert("bob");
    items.insert("x");
    items.insert("y");
    // Two duplicates: (bob, x) on lines 20 and 40, (alice, y) on lines 10 and 30. The one whose
    // second line comes first is reported.
    const std::vector<RatingTriple> t = {{0, 1, 1}, {1, 0, 2}, {0, 1, 3}, {1, 0, 4}};
    TripleOrigin origin;
    origin.path = "r.txt";
    origin.line_of = [](std::uint64_t k) { return 10 * (k + 1); };
    origin.users = &users;
    origin.items = &items;
    try {
        Ratings::from_triples(2, 2, t, origin);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.path(), "r.txt");
        EXPECT_EQ(e.line(), 30u);
        EXPECT_NE(std::string(e.what()).find("r.txt:30:1: duplicate rating for user \"alice\", "
                                             "item \"y\" (first on line 10)"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Ratings, DuplicateInTheRowsOfAnArrayNamesBothRows) {
    const std::vector<RatingTriple> t = {{0, 1, 1}, {2, 2, 1}, {0, 1, 2}};
    TripleOrigin origin;
    origin.path = "X";
    origin.rows = true;
    try {
        Ratings::from_triples(3, 3, t, origin);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_STREQ(e.what(), "X: rows 0 and 2: duplicate rating for user 0, item 1");
    }
}

TEST(Ratings, FromCsrRejectsBadArrays) {
    const auto bad = [](std::vector<std::uint64_t> off, std::vector<ItemId> items,
                        std::vector<float> values, const std::string& what) {
        try {
            Ratings::from_csr(2, 3, off, items, values, "f.bin");
            FAIL() << "no error for " << what;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find("f.bin: "), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
        }
    };
    bad({0, 1}, {0}, {1}, "expected N + 1");
    bad({0, 1, 2}, {0}, {1, 2}, "1 item ids but 2 values");
    bad({0, 1, 3}, {0, 1}, {1, 2}, "expected 0 to 2");
    bad({0, 2, 1}, {0, 1}, {1, 2}, "expected 0 to 2");
    bad({0, 2, 2}, {1, 1}, {1, 2}, "not strictly increasing");
    bad({0, 2, 2}, {2, 1}, {1, 2}, "not strictly increasing");
    bad({0, 1, 2}, {0, 3}, {1, 2}, "item 3 is >= M = 3");
    bad({0, 1, 2}, {0, 1}, {1, std::numeric_limits<float>::infinity()}, "not finite");
    bad({0, 1, 2}, {0, 1}, {std::nanf(""), 1}, "not finite");
}

TEST(Ratings, FromCsrRejectsDecreasingOffsets) {
    EXPECT_THROW(Ratings::from_csr(3, 3, {0, 2, 1, 2}, {0, 1}, {1, 2}, "x"), InputError);
}

}  // namespace
}  // namespace rotor::mf
