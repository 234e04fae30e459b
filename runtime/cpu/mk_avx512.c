/*===- runtime/cpu/mk_avx512.c - AVX-512 micro-kernels ---------------------===*
 *
 * Compiled with -mavx512f -mfma (runtime/CMakeLists.txt) and only called on
 * a CPU that has AVX-512F. 8 x 32 tile: 16 of the 32 zmm registers
 * accumulate, two hold the row of B, one the broadcast element of A; and
 * an 8 x 16 set (`half`) for products with few columns.
 *
 *===----------------------------------------------------------------------===*/
#include "microkernels.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* 8 rows x 16 columns stored transposed, for pixels as rows: column j's 8
 * values (8 pixels of channel j) at c + j * ldc, plus the residual (same
 * layout), clamped to [lo, hi] (NaN kept, as in PyTorch). A 4x4 transpose
 * per 128-bit lane, then lanes paired up so each register holds two whole
 * columns, stored as two 8-float halves. */
static inline void avx512_store_transposed(const __m512 *r, float *c, int64_t ldc,
                                           const float *res, int clamp, __m512 lo, __m512 hi) {
  const __m512 t0 = _mm512_unpacklo_ps(r[0], r[1]), t1 = _mm512_unpackhi_ps(r[0], r[1]);
  const __m512 t2 = _mm512_unpacklo_ps(r[2], r[3]), t3 = _mm512_unpackhi_ps(r[2], r[3]);
  const __m512 t4 = _mm512_unpacklo_ps(r[4], r[5]), t5 = _mm512_unpackhi_ps(r[4], r[5]);
  const __m512 t6 = _mm512_unpacklo_ps(r[6], r[7]), t7 = _mm512_unpackhi_ps(r[6], r[7]);
  /* u[m] (u[4 + m]): rows 0-3 (4-7) of column 4 * lane + m, in each lane. */
  const __m512 u[8] = {
      _mm512_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0)),
      _mm512_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2)),
      _mm512_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0)),
      _mm512_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2)),
      _mm512_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0)),
      _mm512_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2)),
      _mm512_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0)),
      _mm512_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2))};
#pragma GCC unroll 4
  for (int m = 0; m < 4; ++m)
#pragma GCC unroll 2
    for (int half = 0; half < 2; ++half) {
      /* Lanes 2 * half and 2 * half + 1: columns 8 * half + m (low 8
       * floats) and 8 * half + 4 + m (high 8). */
      __m512 w = half ? _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(3, 2, 3, 2))
                      : _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(1, 0, 1, 0));
      __m512 x = _mm512_shuffle_f32x4(w, w, _MM_SHUFFLE(3, 1, 2, 0));
      const int64_t col0 = 8 * half + m, col1 = col0 + 4;
      if (res) {
        __m512 rr = _mm512_castps256_ps512(_mm256_loadu_ps(res + col0 * ldc));
        rr = _mm512_castpd_ps(_mm512_insertf64x4(
            _mm512_castps_pd(rr), _mm256_castps_pd(_mm256_loadu_ps(res + col1 * ldc)), 1));
        x = _mm512_add_ps(x, rr);
      }
      if (clamp) /* max/min return their second operand when either is NaN */
        x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
      _mm256_storeu_ps(c + col0 * ldc, _mm512_castps512_ps256(x));
      _mm256_storeu_ps(c + col1 * ldc,
                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1)));
    }
}
#define MK_STORE_TRANSPOSED(rows, c, ldc, res, clamp, lo, hi)                                  \
  avx512_store_transposed(rows, c, ldc, res, clamp, lo, hi)

#define MK_PREFIX avx512
#define MK_VL 16
#define MK_NV 2
#include "microkernel.inc"
#include "depthwise.inc"
#include "winograd.inc"

/* 8 x 16 tiles (8 accumulators): for Winograd blocks with few tiles. */
#undef MK_PREFIX
#undef MK_NV
#define MK_PREFIX avx512h
#define MK_NV 1
#include "microkernel.inc"
#include "winograd.inc"

static const cuvil_microkernels half = {
    .name = "avx512-16", .nr = MK_NR, .full = avx512h_full, .rows = avx512h_rows, .full_store = avx512h_full_store,
    .narrow = avx512h_narrow, .wino_input = avx512h_wino_input,
    .wino_output = avx512h_wino_output, .wino2_input = avx512h_wino2_input,
    .wino2_output = avx512h_wino2_output, .stores_transposed = 1};
#undef MK_NV
#define MK_NV 2

const cuvil_microkernels *cuvil_microkernels_avx512(void) {
  static const cuvil_microkernels kernels = {
      .name = "avx512", .nr = MK_NR, .full = avx512_full, .rows = avx512_rows, .full_store = avx512_full_store,
      .narrow = avx512_narrow, .depthwise = avx512_depthwise,
      .depthwise_lanes = avx512_depthwise_lanes, .even_floats = avx512_even_floats,
      .depthwise3x3_band = avx512_dw3x3_band,
      .im2col_s2_k3 = avx512_im2col_s2_k3,
      .im2col_s2 = avx512_im2col_s2, .vl = MK_VL, .wino_input = avx512_wino_input,
      .wino_output = avx512_wino_output, .wino2_input = avx512_wino2_input,
      .wino2_output = avx512_wino2_output, .half = &half, .stores_transposed = 1};
  return &kernels;
}
#else
const cuvil_microkernels *cuvil_microkernels_avx512(void) { return NULL; }
#endif
