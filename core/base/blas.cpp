#include "core/base/blas.h"

#include <mutex>
#include <string>
#include <vector>

#include <cblas.h>

#include "core/base/error.h"

// LAPACK's symmetric eigensolver (Fortran calling convention), shipped inside libopenblas.
extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda,
                       double* w, double* work, const int* lwork, int* info);

namespace rotor::core::blas {
namespace {

/// OpenBLAS's own threads off, once per process: see the header ("Determinism").
void serial_once() {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

CBLAS_TRANSPOSE op_of(Op op) { return op == Op::kNone ? CblasNoTrans : CblasTrans; }

}  // namespace

void gemm(Op op_a, Op op_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta,
          double* c, std::size_t ldc) {
    serial_once();
    if (m == 0 || n == 0) return;
    cblas_dgemm(CblasRowMajor, op_of(op_a), op_of(op_b), static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
}

void symmetric_eigen(std::span<double> a, std::span<double> values, std::size_t p, bool vectors) {
    serial_once();
    ROTOR_ASSERT(a.size() >= p * p && values.size() >= p, "symmetric_eigen: sizes");
    if (p == 0) return;
    // Row-major a is column-major aᵀ = a (symmetric); LAPACK's column-major eigenvectors read
    // row-major are the transpose: transposed back below so that vectors are columns.
    const int n = static_cast<int>(p);
    const char jobz = vectors ? 'V' : 'N', uplo = 'U';
    int info = 0, lwork = -1;
    double query = 0;
    dsyev_(&jobz, &uplo, &n, a.data(), &n, values.data(), &query, &lwork, &info);
    lwork = static_cast<int>(query);
    std::vector<double> work(static_cast<std::size_t>(lwork > 1 ? lwork : 1));
    dsyev_(&jobz, &uplo, &n, a.data(), &n, values.data(), work.data(), &lwork, &info);
    if (info != 0)
        throw SystemError("LAPACK dsyev: no convergence (info " + std::to_string(info) + ")");
    if (!vectors) return;
    for (std::size_t r = 0; r < p; ++r)
        for (std::size_t j = r + 1; j < p; ++j) std::swap(a[r * p + j], a[j * p + r]);
}

const char* backend_name() {
    static const std::string name =
        std::string("OpenBLAS ") + openblas_get_config() + " (one thread per call)";
    return name.c_str();
}

}  // namespace rotor::core::blas
