// CCD++: cyclic coordinate descent for matrix factorization, one rank-one factor at a time (Yu
// et al., "Scalable coordinate descent approaches to parallel matrix factorization for
// recommender systems", ICDM 2012), written as the push/pull of STRADS (Lee et al., NIPS 2014):
// a column update sums over every row, so each part of the rows PUSHES its partial sums and a
// PULL adds the parts and divides. The objective, the λ forms and the biases are objective.h's.
//
// State. Ratings are split by rows into parts (a rank's rows, or all of them); a part holds its
// rows' ratings as a CSR view, its rows of W and b, and the residuals of its ratings
//     r_ij = a_ij − μ − b_i − c_j − w_i·h_j
// (compute_residuals), kept current by every update. H and c are replicated: every part sees
// the same H, and a pull writes the same values everywhere.
//
// Rank-one update of factor k (u = column k of W, v = column k of H, as contiguous vectors):
//   (a) r̂_ij = r_ij + u_i v_j                                 add_rank_one
//   (b) v_j = Σ_{i∈Ω_j} r̂_ij u_i / (λρ_j + Σ_{i∈Ω_j} u_i²)   push_column_sums, pull_columns
//   (c) u_i = Σ_{j∈Ω_i} r̂_ij v_j / (λρ_i + Σ_{j∈Ω_i} v_j²)   update_rows (local)
//       (b)-(c) repeated `inner` times (CCD++'s inner iterations)
//   (d) r_ij = r̂_ij − u_i v_j                                 subtract_rank_one
// Each of (b) and (c) sets its coordinates to the exact minimisers of the objective with every
// other coordinate fixed, so the objective never increases. The column update comes first so
// that CCD++'s start H = 0 makes progress (with W first, H = 0 gives u = 0).
// Biases are the same updates with the other side fixed at 1: c_j = Σ (r_ij + c_j) / (λ_b ρ_j +
// |Ω_j|) pushed and pulled, then b_i locally.
//
// Exactness. A push adds its terms into core::ExactSum accumulators, so a pull's total does not
// depend on how the rows are split or in which order parts are added: 1 part and P parts give
// bitwise the same W, H, b, c (the parts' sums are nevertheless combined in part index order, the
// order a driver's reduction uses). Row updates and residual updates touch one row's ratings in its
// CSR order, which does not depend on the split either. Single-threaded; no threads, no ranks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/exact_sum.h"
#include "core/mf/factors.h"
#include "core/mf/objective.h"
#include "core/mf/sparse_view.h"

namespace rotor::mf {

/// CCD's parameters. validate() throws ConfigError naming the flag.
struct CcdParams {
    ObjectiveParams objective;
    /// Sweeps of (column update, row update) per rank-one update, >= 1 (flag --inner). CCD++'s
    /// inner iterations T; LIBPMF defaults to 5 with an early stop. 3 here: each sweep costs two
    /// passes over the ratings against the two of (a) and (d) that it amortises.
    std::uint32_t inner = 3;

    void validate() const;
};

/// The pushed partial sums of one column: o_j = Σ r̂_ij u_i and b_j = Σ u_i² over some rows.
struct ColumnSum {
    core::ExactSum num;
    core::ExactSum den;
};

/// One ColumnSum per column (size = the columns of H): a part's push, or the total of a pull.
struct ColumnSums {
    std::vector<ColumnSum> sums;

    explicit ColumnSums(std::uint32_t cols = 0) : sums(cols) {}
    /// Every sum back to zero; the size is kept.
    void clear();
    /// Adds another part's sums (same size), exactly.
    void add(const ColumnSums& other);
    /// The sums as 2 * core::ExactSum::kLimbs int64 per column (num's limbs, then den's): the
    /// elementwise sum of several parts' limbs (allreduce_sum) is the total's.
    std::vector<std::int64_t> to_limbs() const;
    /// The sums whose limbs are `limbs` (size 2 * kLimbs * columns).
    static ColumnSums from_limbs(std::span<const std::int64_t> limbs);
};

/// r_ij += u_i v_j for every rating of the part (u: the part's rows, v: every column).
void add_rank_one(const SparseView& part, std::span<const float> u, std::span<const float> v,
                  std::span<float> residuals);
/// r_ij −= u_i v_j for every rating of the part.
void subtract_rank_one(const SparseView& part, std::span<const float> u, std::span<const float> v,
                       std::span<float> residuals);

/// PUSH: adds this part's terms to sums: sums[j].num += r̂_ij u_i, sums[j].den += u_i² for every
/// rating (i, j) of the part. rhat are the residuals after add_rank_one. sums is not cleared.
void push_column_sums(const SparseView& part, std::span<const float> u, std::span<const float> rhat,
                      ColumnSums& sums);

/// The total of the parts' pushes, added in part index order.
ColumnSums combine(std::span<const ColumnSums> parts);

/// PULL: v_j = o_j / (lambda ρ_j + b_j) from the total over every part; col_counts[j] = |Ω_j|
/// over every part (read only for the weighted form, may be empty for plain). A column with no
/// rating (or all u_i zero) gets 0.
void pull_columns(const ColumnSums& total, std::span<const std::uint64_t> col_counts, double lambda,
                  LambdaForm form, std::span<float> v);

/// Row update, local to a part: u_i = Σ r̂_ij v_j / (lambda ρ_i + Σ v_j²) over the row's ratings
/// in CSR order (ρ_i = |Ω_i| from the part's offsets for the weighted form).
void update_rows(const SparseView& part, std::span<const float> v, std::span<const float> rhat,
                 double lambda, LambdaForm form, std::span<float> u);

/// A part of the rows, as one rank holds it.
struct CcdPart {
    SparseView ratings;          ///< CSR: the part's rows (0..rows-1), ids global columns
    Factors* w = nullptr;        ///< the part's rows of W (ratings.outer_size() x K)
    std::span<float> row_bias;   ///< b of the part's rows; empty without bias
    std::span<float> residuals;  ///< r_ij of the part's ratings, current; in ratings' order
};

/// The bias step over P parts: c by push/pull, then b of every part. No-op without bias.
/// col_bias has h's row count; col_counts = |Ω_j| summed over all parts.
void ccd_update_biases(std::span<const CcdPart> parts, std::span<float> col_bias,
                       std::span<const std::uint64_t> col_counts, const CcdParams& p);

/// The rank-one update (a)-(d) of factor k over P parts.
void ccd_rank_one(std::span<const CcdPart> parts, Factors& h, std::uint32_t k,
                  std::span<const std::uint64_t> col_counts, const CcdParams& p);

/// One CCD iteration over P parts, exactly as P ranks would run it with an exact reduction: the
/// bias step, then the rank-one updates of k = 0..K-1. Validates p.
void ccd_iteration(std::span<const CcdPart> parts, Factors& h, std::span<float> col_bias,
                   std::span<const std::uint64_t> col_counts, const CcdParams& p);

/// One CCD iteration on a single part holding every rating (column counts taken from it).
void ccd_iteration(const CcdPart& all, Factors& h, std::span<float> col_bias, const CcdParams& p);

}  // namespace rotor::mf
