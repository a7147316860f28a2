// The doc bucket of SparseLDA over one sparse doc row: the masses of the row's topics and their
// sum. The sampler's hottest loop (docs/sampler.md, "Cost per token"); an AVX2 version, chosen at
// run time, gives the same bits as the portable one.
#pragma once

#include <cstdint>

#include "core/base/types.h"
#include "core/lda/doc_topic_table.h"

namespace rotor::lda::detail {

/// Writes masses[i] = (e[i].count - [e[i].topic == old]) * coef[e[i].topic] for i < n and
/// sets *old_at to the position of `old` in the row (n when absent), and
/// returns their sum, added in four chains (chain j takes the i ≡ j mod 4 in order, the tail
/// past the last multiple of 4 goes to chain 0) combined as (q0 + q1) + (q2 + q3). Every
/// version returns the same bits. `coef` is indexed by topic; `masses` holds n doubles. Counts
/// must be < 2^31 and topics < 2^31 (counts are bounded by a doc's length).
using DocMassesFn = double (*)(const TopicCount* e, std::uint32_t n, TopicId old,
                               const double* coef, double* masses, std::uint32_t* old_at);

/// The portable version.
double doc_masses_scalar(const TopicCount* e, std::uint32_t n, TopicId old, const double* coef,
                         double* masses, std::uint32_t* old_at);

/// The AVX2 version (a gather of 4 coefficients per step); nullptr when this build or this CPU
/// has no AVX2.
DocMassesFn doc_masses_avx2();

/// The fastest version this CPU runs.
DocMassesFn doc_masses_best();

}  // namespace rotor::lda::detail
