/*===- runtime/cpu/linear.c - Linear layers on the GEMM -------------------===*/
#include "gemm.h"

typedef struct rows_context {
  const float *x; /* [rows][k] */
  int64_t k;
} rows_context;

/* B(k, j) = x[j][k]: the rows of x become columns. */
static void pack_transposed_rows(const void *context, int64_t k0, int64_t kc, int64_t j0,
                                 int64_t n, int64_t nr_stride, float *dst) {
  const rows_context *ctx = context;
  /* Row by row of x: contiguous reads, strided writes into the block. */
  for (int64_t j = 0; j < n; ++j) {
    const float *src = ctx->x + (j0 + j) * ctx->k + k0;
    for (int64_t kk = 0; kk < kc; ++kk)
      dst[kk * nr_stride + j] = src[kk];
  }
  for (int64_t kk = 0; kk < kc && n < nr_stride; ++kk)
    for (int64_t j = n; j < nr_stride; ++j)
      dst[kk * nr_stride + j] = 0.0f;
}

/* y[m][n] = x[m][k] . W[n][k]^T (+ bias[n]) (+ residual[m][n]), clamped.
 * With CUVIL_FLAG_PIXEL_ROWS (several rows of x) the weights are B panels and x is
 * packed as A, once per work item (it is small next to the weights, which
 * then stream through once, in order), so y's tiles are stored straight
 * from registers; otherwise
 * (a row or a few: matrix-vector) y^T = W . x^T with the weights packed as
 * A. */
void cuvil_rt_linear_f32(const int64_t *q, const float *x, const float *weights,
                         const float *bias, const float *residual, float *y) {
  int64_t flags = q[CUVIL_LINEAR_FLAGS];
  if (flags & CUVIL_FLAG_PIXEL_ROWS) {
    cuvil_gemm_matrix a = {x, q[CUVIL_LINEAR_K]};
    cuvil_gemm_problem p = {
        .m = q[CUVIL_LINEAR_M], .n = q[CUVIL_LINEAR_N], .k = q[CUVIL_LINEAR_K],
        .pack_a = cuvil_gemm_pack_a_rows, .a_context = &a,
        .b_panels = weights, .a_pack_once = 1,
        .c = y, .c_row_stride = q[CUVIL_LINEAR_N], .c_col_stride = 1,
        .bias = (flags & CUVIL_FLAG_BIAS) ? bias : NULL, .column_bias = 1,
        .residual = (flags & CUVIL_FLAG_RESIDUAL) ? residual : NULL,
        .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(q[CUVIL_LINEAR_LO]), .hi = cuvil_float_from_bits(q[CUVIL_LINEAR_HI]),
        .split = CUVIL_SPLIT_OF(flags)};
    cuvil_gemm_run(&p, cuvil_microkernels_best(), cuvil_rt_current_exec);
    return;
  }
  rows_context ctx = {x, q[CUVIL_LINEAR_K]};
  cuvil_gemm_problem p = {
      .m = q[CUVIL_LINEAR_N], .n = q[CUVIL_LINEAR_M], .k = q[CUVIL_LINEAR_K],
      .a_packed = weights,
      .pack_b = pack_transposed_rows, .b_context = &ctx,
      .c = y, .c_row_stride = 1, .c_col_stride = q[CUVIL_LINEAR_N],
      .bias = (flags & CUVIL_FLAG_BIAS) ? bias : NULL,
      .residual = (flags & CUVIL_FLAG_RESIDUAL) ? residual : NULL,
      .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
      .lo = cuvil_float_from_bits(q[CUVIL_LINEAR_LO]), .hi = cuvil_float_from_bits(q[CUVIL_LINEAR_HI]),
        .split = CUVIL_SPLIT_OF(flags)};
  cuvil_gemm_run(&p, cuvil_microkernels_best(), cuvil_rt_current_exec);
}
