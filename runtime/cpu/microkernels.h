/*===- runtime/cpu/microkernels.h - The micro-kernel interface -------------===*
 *
 * The register-blocked kernels every CPU kernel family is built on, one
 * table per instruction set (mk_<isa>.c, chosen at run time): GEMM tiles
 * (an MR x NR tile of C += A . B; MR is fixed because weights are packed
 * before the CPU is known, NR is the micro-kernel's), depthwise planes and
 * bands, im2col row helpers and Winograd transforms.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_MICROKERNELS_H
#define CUVIL_RUNTIME_CPU_MICROKERNELS_H

#include "../core/internal.h"
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

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_MICROKERNELS_H */
