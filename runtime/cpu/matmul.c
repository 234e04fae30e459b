/*===- runtime/cpu/matmul.c - Matrix products of two run-time operands ----===*/
#include "gemm.h"

void cuvil_rt_matmul_f32(const int64_t *q, const float *a, const float *b, float *c) {
  const cuvil_microkernels *mk = cuvil_microkernels_best();
  int64_t m = q[CUVIL_MATMUL_M], k = q[CUVIL_MATMUL_K], n = q[CUVIL_MATMUL_N];
  for (int64_t i = 0; i < q[CUVIL_MATMUL_BATCH]; ++i) {
    cuvil_gemm_matrix actx = {a + i * q[CUVIL_MATMUL_A_BATCH_STRIDE], k};
    cuvil_gemm_matrix bctx = {b + i * q[CUVIL_MATMUL_B_BATCH_STRIDE], n};
    cuvil_gemm_problem p = {
        .m = m, .n = n, .k = k,
        .pack_a = cuvil_gemm_pack_a_rows, .a_context = &actx,
        .pack_b = cuvil_gemm_pack_b_rows, .b_context = &bctx,
        .b_direct = bctx.m, .b_direct_ld = n,
        .c = c + i * m * n, .c_row_stride = n, .c_col_stride = 1};
    cuvil_gemm_run(&p, mk, cuvil_rt_current_exec);
  }
}
