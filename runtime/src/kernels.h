/*===- runtime/src/kernels.h - Convolution and GEMM kernels ---------------===*
 *
 * The compiled model calls these for its convolutions and matrix products
 * (model_abi.h declares the entry points). One blocked GEMM serves them all:
 *
 *   C(i, j) = epilogue( sum_k A(i, k) * B(k, j) )   i < M rows, j < N columns
 *
 * A is packed at compile time (weights: cuvil-export writes them in this
 * layout), B is packed here, per block, from the activations (im2col for a
 * convolution). A register-blocked micro-kernel computes an MR x NR tile;
 * MR is fixed because weights are packed before the CPU is known, NR is the
 * micro-kernel's, picked at run time for the CPU the library runs on.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_KERNELS_H
#define CUVIL_RUNTIME_KERNELS_H

#include "internal.h"
#include "cuvil/kernel_abi.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* The widest micro-kernel tile (AVX-512: 2 x 16 floats). */
#define CUVIL_MAX_NR 32
/* Columns up to which the "narrow" micro-kernel (vectorised along the MR
 * rows instead of the columns) is used: matrix-vector products. */
#define CUVIL_NARROW_MAX 8

/* c[MR x NR] (row-major) = (accumulate ? c : 0) + a[kc x MR] . b[kc x NR],
 * b's rows ldb floats apart (NR when packed; a row of the activations when
 * B is read in place). */
typedef void (*cuvil_microkernel_fn)(int64_t kc, const float *a, const float *b, int64_t ldb,
                                     float *c, int accumulate);
/* The same for the first `rows` (1 .. MR - 1) rows of the tile only. */
typedef void (*cuvil_microkernel_rows_fn)(int64_t kc, const float *a, const float *b,
                                          int64_t ldb, float *c, int accumulate, int64_t rows);
/* What is applied to a finished tile of C: + bias[row or column] (NULL: none), +
 * residual (NULL: none), then clamp to [lo, hi] when `clamp`. */
typedef struct cuvil_tile_epilogue {
  const float *bias; /* the tile's first row's (or column's) */
  const float *residual;
  int column_bias;   /* bias per column instead of per row */
  int clamp;
  float lo, hi;
  /* C (and the residual) stored transposed: (i, j) at [i + j * ldc] (pixels
   * as rows: a column is a channel's plane); only where the kernels'
   * stores_transposed says so. */
  int transposed;
} cuvil_tile_epilogue;
/* The last K-block of a full tile (kernel's `full` plus the epilogue, in
 * registers): c[i * ldc + j] = epilogue((partial ? partial : 0) + a . b),
 * partial being the earlier blocks' [MR x NR] sums; e->residual is the
 * tile's residual, ldc-strided. */
typedef void (*cuvil_microkernel_store_fn)(int64_t kc, const float *a, const float *b,
                                           int64_t ldb, const float *partial, float *c,
                                           int64_t ldc, const cuvil_tile_epilogue *e);
/* The same for n <= CUVIL_NARROW_MAX columns: b is [kc x n], c is [MR x n]. */
typedef void (*cuvil_narrow_kernel_fn)(int64_t kc, const float *a, const float *b, float *c,
                                       int64_t n, int accumulate);

/* Parameter layouts, flags, CUVIL_MR, CUVIL_B_PANEL, CUVIL_WINO_KC: cuvil/kernel_abi.h,
 * shared with the compiler. */

static inline float cuvil_float_from_bits(int64_t bits) {
  union {
    uint32_t u;
    float f;
  } v = {(uint32_t)bits};
  return v.f;
}

typedef struct cuvil_depthwise_args {
  const int64_t *q; /* conv params */
  const float *input, *weights, *bias, *residual;
  float *output;
  int max_pool; /* max over each window instead (weights unused) */
} cuvil_depthwise_args;

/* One output plane (image, channel) of a depthwise convolution (or of a
 * max pooling: args->max_pool); `scratch` is CUVIL_THREAD_SCRATCH_BYTES of
 * the calling thread's. */
typedef void (*cuvil_depthwise_fn)(const cuvil_depthwise_args *args, int64_t plane,
                                   float *scratch);

/* Where the (up to NR) 4x4 (2x2) output tiles of a Winograd work item lie:
 * worked out once per item, not per channel (divisions). */
typedef struct cuvil_wino_tiles {
  int64_t n;                         /* tiles in use; lanes past n are zero */
  int64_t image[CUVIL_MAX_NR];
  int64_t iy0[CUVIL_MAX_NR], ix0[CUVIL_MAX_NR]; /* input patch origin (< 0: padding) */
  int64_t oy0[CUVIL_MAX_NR], ox0[CUVIL_MAX_NR]; /* output tile origin */
  int interior[CUVIL_MAX_NR];        /* the 6x6 (4x4) patch lies inside the input */
} cuvil_wino_tiles;

/* Winograd F(4x4, 3x3) or F(2x2, 3x3) transforms of NR tiles at once
 * (winograd.inc). */
typedef void (*cuvil_wino_input_fn)(const int64_t *q, const float *channel,
                                    const cuvil_wino_tiles *tiles, float *v, int64_t xi_stride);
typedef void (*cuvil_wino_output_fn)(const int64_t *q, const float *m, int64_t xi_stride,
                                     const cuvil_wino_tiles *tiles, int64_t co,
                                     const float *bias, const float *residual, float *output);

typedef struct cuvil_microkernels {
  const char *name; /* "avx512", "avx2", "generic" */
  int32_t nr;
  cuvil_microkernel_fn full;
  cuvil_microkernel_rows_fn rows; /* `full` for the first rows (< MR) of a tile */
  cuvil_microkernel_store_fn full_store;
  cuvil_narrow_kernel_fn narrow;
  cuvil_depthwise_fn depthwise; /* compiled for the same instruction set */
  /* MK_VL planes at once (channel multiplier 1, small planes); `plane` is
   * the first, scratch holds (H + 2 PH)(W + 2 PW) + OH * OW vectors. */
  cuvil_depthwise_fn depthwise_lanes;
  int32_t vl; /* floats per vector: planes per depthwise_lanes call */
  /* dst[i] = src[2 i] for i < n, reading src[0 .. 2 n): stride-2 im2col rows. */
  void (*even_floats)(float *dst, const float *src, int64_t n);
  /* Output rows [r0, r0 + rows) of a 3x3 padding-1 depthwise plane (h x w;
   * stride 1: w >= vl; stride 2: w even, w / 2 >= vl), bias, clamp to
   * [lo, hi] when `clamp`, into out (rows x output width); input row y is
   * at plane + (y - first) * w (only the rows the band reads); pad holds
   * (rows + 2) x (w + 2) floats. */
  void (*depthwise3x3_band)(const float *plane, int64_t first, int64_t h, int64_t w, int64_t r0,
                            int64_t rows, int stride, const float *w9, float bias, int clamp,
                            float lo, float hi, float *pad, float *out);
  /* d_kx[i] = row[2 (ox + i) - 1 + kx], kx = 0, 1, 2, i < len (column -1
   * is 0): a 3-wide stride-2 padding-1 im2col row's three taps, for output
   * columns within W / 2 of an even-width row. */
  void (*im2col_s2_k3)(const float *row, int64_t ox, int64_t len, float *d0, float *d1,
                       float *d2);
  /* dst[kx * stride + i] = row[ix + kx + 2 i] for kx < kw, i < len, 0 where
   * that column is outside [0, w): a stride-2 im2col tap row's kw columns. */
  void (*im2col_s2)(const float *row, int64_t w, int64_t ix, int64_t len, int64_t kw,
                    float *dst, int64_t stride);
  cuvil_wino_input_fn wino_input;
  cuvil_wino_output_fn wino_output;
  cuvil_wino_input_fn wino2_input; /* F(2x2, 3x3) */
  cuvil_wino_output_fn wino2_output;
  /* The same instruction set with half the tile width (fewer lanes wasted
   * on few columns), GEMM and Winograd only; or NULL. */
  const struct cuvil_microkernels *half;
  /* full_store can write C transposed (cuvil_tile_epilogue.transposed). */
  int stores_transposed;
} cuvil_microkernels;

/* The variants compiled into this runtime (x86-64: avx512, avx2, generic;
 * aarch64: generic, which is NEON there). NULL where not compiled. */
const cuvil_microkernels *cuvil_microkernels_avx512(void);
const cuvil_microkernels *cuvil_microkernels_avx2(void);
const cuvil_microkernels *cuvil_microkernels_generic(void);
/* The best variant this CPU runs (chosen once). */
const cuvil_microkernels *cuvil_microkernels_best(void);

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
} cuvil_gemm_problem;

/* How every kernel runs its work items [0, items): without a pool (exec
 * NULL: a direct call, as the runtime's tests make) on this thread with
 * scratch allocated here (nothing runs if that fails); with one item or
 * too little `work` (multiply-adds: waking a thread costs microseconds) on
 * this thread with its pool scratch; else over the pool's threads, which
 * take chunks of items from a shared counter as they finish (a thread the
 * machine slows takes fewer). Items must be independent (any thread, any
 * order). *scratch is the job's slot its body reads: set for the runs on
 * this thread, NULL (each thread's pool scratch) otherwise. */
void cuvil_run_items(void *exec, int64_t items, int64_t work,
                     void (*body)(void *closure, int64_t begin, int64_t end), void *closure,
                     float **scratch);

/* Runs the problem on `kernels` with the calling model's threads (exec),
 * whose pool provides each thread's scratch. Generated code always runs
 * inside cuvil_model_run, which sets exec; exec NULL (a direct call, as the
 * runtime's tests make) allocates the scratch for the call. */
void cuvil_gemm_run(const cuvil_gemm_problem *problem, const cuvil_microkernels *kernels,
                    void *exec);

/* A 3x3, stride-1 convolution (groups 1, dilation 1) whose weights are in
 * the Winograd F(4x4, 3x3) domain: U = G g G^T stored by blocks of
 * CUVIL_WINO_KC input channels, [ceil(Cin/KC)][36][ceil(Cout/8)][kc][8]
 * (one packed GEMM operand per block and transformed position); with
 * CUVIL_FLAG_WINOGRAD2 in its flags, F(2x2, 3x3)'s, [ceil(Cin/KC)][16][...]. */
void cuvil_conv2d_winograd(const int64_t *q, const float *input, const float *u,
                           const float *bias, const float *residual, float *output,
                           const cuvil_microkernels *kernels, void *exec);

/* The thread pool of the model call running on this thread (set by
 * cuvil_model_run around the entry; NULL: run inline). */
extern _Thread_local void *cuvil_rt_current_exec;

/* Sorts lines of `input` stably (sort.c; parameters in cuvil/kernel_abi.h). */
void cuvil_rt_sort(const int64_t *params, const void *input, void *values, int64_t *indices,
                   int64_t *scratch);
#define CUVIL_SORT_DECLARE(suffix)                                                             \
  void cuvil_rt_sort_##suffix(const int64_t *, const void *, void *, int64_t *, int64_t *);
CUVIL_SORT_DECLARE(f32)
CUVIL_SORT_DECLARE(f64)
CUVIL_SORT_DECLARE(f16)
CUVIL_SORT_DECLARE(bf16)
CUVIL_SORT_DECLARE(i1)
CUVIL_SORT_DECLARE(i8)
CUVIL_SORT_DECLARE(i16)
CUVIL_SORT_DECLARE(i32)
CUVIL_SORT_DECLARE(i64)
#undef CUVIL_SORT_DECLARE

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_KERNELS_H */
