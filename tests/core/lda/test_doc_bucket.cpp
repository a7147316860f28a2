#include "core/lda/doc_bucket.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/base/rng.h"

namespace rotor::lda {
namespace {

struct Row {
    std::vector<TopicCount> entries;
    std::vector<double> coef;
};

// A row of n distinct topics out of K with counts in [1, 1000] and coefficients spread over
// many binades, so that the order of the additions shows in the last bits.
Row random_row(Rng& rng, std::uint32_t n, std::uint32_t K) {
    Row row;
    row.coef.resize(K);
    for (double& c : row.coef) c = rng.uniform() * static_cast<double>(1 + rng.below(1u << 20));
    std::vector<TopicId> topics(K);
    for (TopicId k = 0; k < K; ++k) topics[k] = k;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::swap(topics[i], topics[i + rng.below(K - i)]);
        row.entries.push_back(TopicCount{topics[i], static_cast<Count>(1 + rng.below(1000))});
    }
    return row;
}

// The definition, written out: masses, then four chains in order, tail into chain 0.
double reference(const Row& row, TopicId old, std::vector<double>& masses) {
    const std::uint32_t n = static_cast<std::uint32_t>(row.entries.size());
    masses.assign(n, 0);
    double chain[4] = {0, 0, 0, 0};
    for (std::uint32_t i = 0; i < n; ++i) {
        const TopicCount& e = row.entries[i];
        const double c = static_cast<double>(e.count) - (e.topic == old ? 1.0 : 0.0);
        masses[i] = c * row.coef[e.topic];
        chain[i < n / 4 * 4 ? i % 4 : 0] += masses[i];
    }
    return (chain[0] + chain[1]) + (chain[2] + chain[3]);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(DocBucket, EveryVersionMatchesTheDefinitionBitForBitAndFindsTheOldTopic) {
    Rng rng(11);
    std::vector<detail::DocMassesFn> versions = {&detail::doc_masses_scalar};
    if (detail::doc_masses_avx2() != nullptr) versions.push_back(detail::doc_masses_avx2());
    versions.push_back(detail::doc_masses_best());
    for (std::uint32_t n = 0; n <= 41; ++n) {
        for (int trial = 0; trial < 20; ++trial) {
            const std::uint32_t K = n + 1 + static_cast<std::uint32_t>(rng.below(300));
            const Row row = random_row(rng, n, K);
            // The removed token's topic: in the row, or (trial odd) not in it.
            const TopicId old = n > 0 && trial % 2 == 0 ? row.entries[rng.below(n)].topic : K;
            std::vector<double> want;
            const double q = reference(row, old, want);
            std::uint32_t want_at = n;
            for (std::uint32_t i = 0; i < n; ++i) {
                if (row.entries[i].topic == old) want_at = i;
            }
            for (detail::DocMassesFn f : versions) {
                std::vector<double> got(n + 1, -1.0);
                std::uint32_t at = 12345;
                const double q_got =
                    f(row.entries.data(), n, old, row.coef.data(), got.data(), &at);
                ASSERT_EQ(at, want_at);
                ASSERT_TRUE(same_bits(q_got, q)) << "n = " << n << ": " << q_got << " vs " << q;
                for (std::uint32_t i = 0; i < n; ++i) ASSERT_TRUE(same_bits(got[i], want[i]));
                EXPECT_EQ(got[n], -1.0) << "wrote past the row";
            }
        }
    }
}

TEST(DocBucket, BestIsAvx2WhenTheCpuHasIt) {
    if (detail::doc_masses_avx2() == nullptr) GTEST_SKIP() << "no AVX2 here";
    EXPECT_EQ(detail::doc_masses_best(), detail::doc_masses_avx2());
}

}  // namespace
}  // namespace rotor::lda
