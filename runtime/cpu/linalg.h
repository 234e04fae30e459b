/*===- runtime/cpu/linalg.h - Dense linear algebra for torch.linalg --------===*
 *
 * What the compiled code calls for torch.linalg: LU (LAPACK getrf),
 * Cholesky (potrf), triangular solves (trsm), QR (geqrf, orgqr, ormqr),
 * the symmetric eigenproblem (syevd) and the SVD (gesdd), on batches of
 * dense matrices. The factorisations follow LAPACK's conventions exactly
 * (pivots, reflector signs, what a failed Cholesky leaves), so their
 * outputs equal PyTorch's to rounding; eigh and svd are Jacobi methods,
 * equal to LAPACK's up to the signs LAPACK leaves arbitrary, which are
 * fixed here (see each).
 *
 * Shared by every kernel:
 *  - matrices are row-major and contiguous, `batch` of them one after
 *    another; per-matrix vectors (pivots, tau, eigen/singular values) and
 *    info likewise, batch of them.
 *  - each kernel has an _f64 and an _f32 entry point. Both compute in
 *    double in `scratch`, which the caller provides: CUVIL_*_SCRATCH(...)
 *    doubles, reused for each matrix of the batch. Nothing is allocated and
 *    there is no global state: calls with different scratch may run at
 *    the same time.
 *  - each matrix is read whole into scratch before any of its results is
 *    written, so an output may be the very buffer of an input of the same
 *    element type and shape (in place).
 *  - params is an int64 array laid out as cuvil/kernel_abi.h names it.
 *  - a size of 0 (batch or a dimension) is allowed; buffers without
 *    elements (scratch too, where its size is 0) may be NULL. What has
 *    elements is still written: LU's and Cholesky's info (0), svd's full
 *    U or Vh (the identity, as in PyTorch).
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_LINALG_H
#define CUVIL_RUNTIME_LINALG_H

#include "../core/internal.h"
#include "cuvil/kernel_abi.h" /* parameters and CUVIL_*_SCRATCH sizes */

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif


/*--- LU with partial pivoting: torch.linalg.lu_factor_ex (getrf) -----------
 * params {batch, m, n} (CUVIL_LU_*). a, lu: [batch][m][n]; pivots:
 * [batch][min(m, n)]; info: [batch].
 * A = P L U: lu holds L below the diagonal (unit diagonal not stored) and U
 * on and above it. Column j's pivot is the first row with the largest
 * |value| (idamax: ties go to the first); pivots[j] is the 1-based row that
 * row j was swapped with, in order. info is 0, or the 1-based index of the
 * first exactly-zero pivot: that column is left unscaled (no swap) and the
 * factorisation goes on, as in LAPACK. */
void cuvil_rt_lu_f64(const int64_t *params, const double *a, double *lu, int32_t *pivots,
                     int32_t *info, double *scratch);
void cuvil_rt_lu_f32(const int64_t *params, const float *a, float *lu, int32_t *pivots,
                     int32_t *info, double *scratch);

/*--- Cholesky: torch.linalg.cholesky_ex (potrf) ---------------------------
 * params {batch, n, upper} (CUVIL_CHOLESKY_*). a, out: [batch][n][n];
 * info: [batch].
 * upper 0: A = L L^T, out = L with zeros above the diagonal, reading only
 * a's lower triangle; upper 1: A = U^T U, out = U (= L^T) with zeros below,
 * reading only the upper triangle. info is 0, or the order j (1-based) of
 * the first leading minor that is not positive definite; out then holds
 * what unblocked LAPACK (dpotf2) leaves, as PyTorch returns it: the first
 * j - 1 columns of L factored, L(j, j) = A(j, j) - sum_k<j L(j, k)^2 (<= 0
 * or NaN), the rest of the triangle A's. That is PyTorch's output exactly
 * for n <= 32; above, OpenBLAS's blocked potrf leaves parts of its panels
 * unfinished, and only info, L's first j - 1 rows (U's columns) and L(j, j)
 * agree. */
void cuvil_rt_cholesky_f64(const int64_t *params, const double *a, double *out, int32_t *info,
                           double *scratch);
void cuvil_rt_cholesky_f32(const int64_t *params, const float *a, float *out, int32_t *info,
                           double *scratch);

/*--- Triangular solve: torch.linalg.solve_triangular (trsm) ---------------
 * params {batch, n, k, upper, left, unitriangular}
 * (CUVIL_TRIANGULAR_SOLVE_*). a: [batch][n][n], triangular (upper or
 * lower: only that triangle is read, and not the diagonal when
 * unitriangular, which takes it as ones).
 * left 1: A X = B, b and x [batch][n][k];
 * left 0: X A = B, b and x [batch][k][n].
 * Every matrix of the batch is its own problem: the caller broadcasts
 * (expands) a or b. A zero on the diagonal gives infinities / NaNs, as
 * trsm does (no check). */
void cuvil_rt_triangular_solve_f64(const int64_t *params, const double *a, const double *b,
                                   double *x, double *scratch);
void cuvil_rt_triangular_solve_f32(const int64_t *params, const float *a, const float *b,
                                   float *x, double *scratch);

/*--- QR factorisation: torch.geqrf (geqrf) --------------------------------
 * params {batch, m, n} (CUVIL_GEQRF_*). a, qr: [batch][m][n]; tau:
 * [batch][min(m, n)].
 * A = Q R, Q = H(1) ... H(k), H(i) = I - tau(i) v v^T, k = min(m, n). qr
 * holds R on and above the diagonal and v(i + 1 .. m - 1) of each H(i)
 * below it (v(i) = 1 is not stored), as LAPACK's dgeqr2 with dlarfg:
 * beta = -sign(alpha) |(alpha, x)|, tau = (beta - alpha) / beta, v = x /
 * (alpha - beta); tau = 0 (H = I, R(i, i) = alpha, sign kept) where x is
 * already zero, as it always is for the last reflector when m <= n.
 * With householder_product this is torch.linalg.qr: R = triu(qr) (mode
 * "reduced": its first min(m, n) rows), Q = householder_product(qr, tau)
 * (m x min(m, n); mode "complete" with m > n: pass qr widened to m x m,
 * k = n, for the m x m Q). */
void cuvil_rt_geqrf_f64(const int64_t *params, const double *a, double *qr, double *tau,
                        double *scratch);
void cuvil_rt_geqrf_f32(const int64_t *params, const float *a, float *qr, float *tau,
                        double *scratch);

/*--- Product of Householder reflectors: torch.linalg.householder_product
 * (orgqr) ---------------------------------------------------------------
 * params {batch, m, n, k} (CUVIL_HOUSEHOLDER_PRODUCT_*), m >= n >= k >= 0
 * (the caller checks, as PyTorch does). v, q: [batch][m][n]; tau:
 * [batch][k].
 * q = the first n columns of H(1) ... H(k), H(i) = I - tau(i) v_i v_i^T
 * with v_i = (0, .., 0, 1, v(i + 1 .., i)): only the part of v's first k
 * columns below the diagonal is read (geqrf's layout). */
void cuvil_rt_householder_product_f64(const int64_t *params, const double *v, const double *tau,
                                      double *q, double *scratch);
void cuvil_rt_householder_product_f32(const int64_t *params, const float *v, const float *tau,
                                      float *q, double *scratch);

/*--- Multiplication by Q: torch.ormqr (ormqr) -----------------------------
 * params {batch, m, n, k, left, transpose, v_cols} (CUVIL_ORMQR_*). c, out:
 * [batch][m][n]; v: [batch][nq][v_cols] with nq = left ? m : n and v_cols
 * >= k (geqrf's output as it is: only the part of the first k columns below
 * the diagonal is read), k <= nq; tau: [batch][k].
 * Q = H(1) ... H(k) (nq x nq, as in householder_product);
 * out = Q C (left, transpose 0), Q^T C (left, 1), C Q (right: left 0,
 * transpose 0) or C Q^T (right, 1). */
void cuvil_rt_ormqr_f64(const int64_t *params, const double *v, const double *tau,
                        const double *c, double *out, double *scratch);
void cuvil_rt_ormqr_f32(const int64_t *params, const float *v, const float *tau, const float *c,
                        float *out, double *scratch);

/*--- Symmetric eigenproblem: torch.linalg.eigh / eigvalsh (syevd) ---------
 * params {batch, n, upper, vectors} (CUVIL_EIGH_*). a: [batch][n][n], of
 * which only the lower triangle (upper 0: UPLO "L", PyTorch's default) or
 * the upper one (upper 1) is read; w: [batch][n]; v: [batch][n][n], written
 * only when `vectors` (else it may be NULL).
 * w ascending; column j of v (v[i * n + j], i < n) the unit eigenvector
 * of w[j], orthonormal, so that A = V diag(w) V^T (for a repeated
 * eigenvalue, some orthonormal basis of its space, as in LAPACK). Cyclic Jacobi to convergence (eps-relative
 * off-diagonal), so the values agree with LAPACK's to rounding; the
 * vectors' signs, arbitrary in LAPACK, are fixed here: each column's
 * largest |component| (the first of equal ones) is positive. A non-finite
 * entry in the triangle read makes every output of that matrix NaN. */
void cuvil_rt_eigh_f64(const int64_t *params, const double *a, double *w, double *v,
                       double *scratch);
void cuvil_rt_eigh_f32(const int64_t *params, const float *a, float *w, float *v,
                       double *scratch);

/*--- Singular value decomposition: torch.linalg.svd / svdvals (gesdd) ----
 * params {batch, m, n, full_matrices, compute_uv} (CUVIL_SVD_*), k =
 * min(m, n). a: [batch][m][n]; s: [batch][k], descending; with compute_uv
 * (else u and vh are not written and may be NULL):
 *   full_matrices 0: u [batch][m][k], vh [batch][k][n];
 *   full_matrices 1: u [batch][m][m], vh [batch][n][n];
 * A = U diag(S) Vh, U's columns and Vh's rows orthonormal. One-sided
 * Jacobi (Hestenes) on the columns of A (of A^T when m < n); the vectors
 * of zero singular values (below 1e-150 of A's largest |entry|) on the
 * side Jacobi does not give, and the extra columns / rows of the full
 * matrices, are an orthonormal completion (Gram-Schmidt on the unit
 * vectors e_0, e_1, ... in order: the identity for a zero A, as LAPACK). Signs, arbitrary in LAPACK, are fixed here: for j < k, column
 * j of U has its largest |component| (the first of equal ones) positive
 * and row j of Vh goes with it; each completing column of U (j >= k) or
 * row of Vh has its own largest |component| positive. A non-finite entry
 * makes every output of that matrix NaN. */
void cuvil_rt_svd_f64(const int64_t *params, const double *a, double *u, double *s, double *vh,
                      double *scratch);
void cuvil_rt_svd_f32(const int64_t *params, const float *a, float *u, float *s, float *vh,
                      double *scratch);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_LINALG_H */
