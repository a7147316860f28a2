// Dense linear algebra: the few BLAS and LAPACK calls rotor's dense models use (RICA,
// docs/rica.md, "Linear algebra"), behind one small interface, so that the kernels name no
// library. Matrices are row-major, with explicit leading dimensions (the row strides).
//
// Backend. blas.cpp implements this with OpenBLAS from Debian (libopenblas-dev: cblas_dgemm,
// LAPACK's dsyev). A GPU backend (cuBLAS and cuSOLVER, as the parameter-server paper used for
// RICA) would be a second implementation of these same functions, blas_cuda.cpp, chosen by a
// CMake option where a CUDA toolkit exists; the kernels above would not change (a GPU backend
// would keep X and the ADMM's z and u on the device: the calls take host pointers today, which
// is the one thing such a backend would widen). rotor's machines have no CUDA toolkit, so only the
// OpenBLAS backend exists.
//
// Determinism. The backend runs every call on the calling thread: the first call sets
// OpenBLAS's own thread count to 1 (openblas_set_num_threads), and rotor's threads split the
// work (sched::Team) instead. A call's result then depends only on its arguments and shapes,
// never on the number of threads or on which thread made it; RICA makes every call on a row
// block with shapes that depend on the block only, which is why its result is the same bit for
// bit for any number of threads and ranks (docs/rica.md, "Determinism").
//
// Thread-safety: every function may be called from several threads at once on disjoint outputs.
#pragma once

#include <cstddef>
#include <span>

namespace rotor::core::blas {

/// Whether an operand is used as stored or transposed.
enum class Op { kNone, kTranspose };

/// C (m×n) = alpha · op(A) · op(B) + beta · C, with op(A) m×k and op(B) k×n; row-major, lda,
/// ldb, ldc the row strides of A, B, C as stored. beta = 0: C's old contents are ignored.
void gemm(Op op_a, Op op_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta,
          double* c, std::size_t ldc);

/// The eigenvalues (ascending, into `values`, p of them) of the symmetric p×p matrix `a`
/// (row-major; both triangles must hold it). With `vectors`, `a` is overwritten by the
/// orthonormal eigenvectors, as COLUMNS (a[r·p + j] is row r of vector j); without, `a` is
/// destroyed. Throws SystemError when LAPACK fails to converge.
void symmetric_eigen(std::span<double> a, std::span<double> values, std::size_t p, bool vectors);

/// The name of the backend, e.g. "OpenBLAS 0.3.21 (serial calls)", for logs and benchmarks.
const char* backend_name();

}  // namespace rotor::core::blas
