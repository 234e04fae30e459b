/*===- runtime/cpu/gemm.h - The blocked GEMM -------------------------------===*
 *
 * One blocked GEMM serves the convolutions, linear layers and matrix
 * products:
 *
 *   C(i, j) = epilogue( sum_k A(i, k) * B(k, j) )   i < M rows, j < N columns
 *
 * A is packed at compile time (weights: cuvil-export writes them in this
 * layout) or here by pack_a, B is packed here, per block, from the
 * activations (im2col for a convolution) or read in place.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_GEMM_H
#define CUVIL_RUNTIME_CPU_GEMM_H

#include "microkernels.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* Fills dst[kc x nr_stride] with B(k0 + k, j0 + j) for k < kc, j < n and
 * zero for n <= j < nr_stride. */
typedef void (*cuvil_pack_b_fn)(const void *context, int64_t k0, int64_t kc, int64_t j0,
                                int64_t n, int64_t nr_stride, float *dst);

/* Fills dst[kc x MR] with A(i0 + r, k0 + k) for r < rows and zero for the
 * rows past them: one row panel of a K-block. */
typedef void (*cuvil_pack_a_fn)(const void *context, int64_t i0, int64_t rows, int64_t k0,
                                int64_t kc, float *dst);

typedef struct cuvil_gemm_problem {
  int64_t m, n, k;
  const float *a_packed; /* [ceil(m/MR)][k][MR]; or NULL: packed here by pack_a */
  cuvil_pack_a_fn pack_a;
  const void *a_context;
  cuvil_pack_b_fn pack_b;
  const void *b_context;
  /* Optional: B(k, j) = b_direct[k * b_direct_ld + j], read in place by the
   * micro-kernel for full column tiles (no packing); pack_b serves the rest. */
  const float *b_direct;
  int64_t b_direct_ld;
  /* Optional: B packed at compile time, [ceil(n/CUVIL_B_PANEL)][k]
   * [CUVIL_B_PANEL] (zero-padded), read in place; pack_b is then unused. */
  const float *b_panels;
  /* pack_a is costly (im2col) or A is small next to B: each work item packs
   * its rows of A once for all its columns (with B panels and room in the
   * scratch, whole, and B streams through tile by tile). */
  int a_pack_once;
  float *c;               /* C(i, j) = c[i * c_row_stride + j * c_col_stride] */
  int64_t c_row_stride, c_col_stride;
  const float *bias;      /* per row (per column with column_bias), or NULL */
  int column_bias;
  const float *residual;  /* added after the bias, same strides as c; or NULL */
  int clamp;              /* clamp to [lo, hi] last */
  float lo, hi;
  int split;              /* CUVIL_SPLIT_* (kernel_abi.h): the work split; 0 = planned here */
} cuvil_gemm_problem;

/* Runs the problem on `kernels` with the calling model's threads (exec),
 * whose pool provides each thread's scratch. Generated code always runs
 * inside cuvil_model_run, which sets exec; exec NULL (a direct call, as the
 * runtime's tests make) allocates the scratch for the call. */
void cuvil_gemm_run(const cuvil_gemm_problem *problem, const cuvil_microkernels *kernels,
                    void *exec);

/* The same on this thread, in `scratch` (CUVIL_THREAD_SCRATCH_BYTES): a
 * GEMM inside another kernel's work item, which has the scratch past the
 * driver's CUVIL_GEMM_SCRATCH_FLOATS to itself. */
void cuvil_gemm_run_here(const cuvil_gemm_problem *problem, const cuvil_microkernels *kernels,
                         float *scratch);

/* The driver's blocking (gemm.c says why these sizes). */
enum { CUVIL_GEMM_KC = 256, CUVIL_GEMM_MC = 256, CUVIL_GEMM_NC = 128 };
/* Floats of a thread's scratch the driver uses: B, C and A blocks. */
enum {
  CUVIL_GEMM_SCRATCH_FLOATS =
      CUVIL_GEMM_KC * CUVIL_GEMM_NC + CUVIL_GEMM_MC * CUVIL_GEMM_NC + CUVIL_GEMM_MC * CUVIL_GEMM_KC
};

/* A row-major matrix, `ld` floats per row, and the packers that read one:
 * A(i, k) = m[i][k] and B(k, j) = m[k][j] (the context is the matrix). */
typedef struct cuvil_gemm_matrix {
  const float *m;
  int64_t ld;
} cuvil_gemm_matrix;
void cuvil_gemm_pack_a_rows(const void *context, int64_t i0, int64_t rows, int64_t k0,
                            int64_t kc, float *dst);
void cuvil_gemm_pack_b_rows(const void *context, int64_t k0, int64_t kc, int64_t j0, int64_t n,
                            int64_t nr_stride, float *dst);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_GEMM_H */
