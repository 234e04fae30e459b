/*===- runtime/cpu/qavx512.h - What the AVX-512 int8 kernels share ---------===*
 *
 * Included only by micro-kernel files compiled for AVX-512 (F, BW, VL and
 * more): the requantizing store of 16 int32 sums.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_QAVX512_H
#define CUVIL_RUNTIME_CPU_QAVX512_H

#include "qgemm.h"

#include <immintrin.h>
#include <string.h>

/* Loops over a tile's rows or vectors (constant trip counts) unrolled:
 * with a variable index the sums go through the stack (24 stores and
 * loads a tile, a third of a 1x1 layer's time at 16 input channels). */
#if defined(__clang__)
#define CUVIL_UNROLL _Pragma("clang loop unroll(full)")
#else
#define CUVIL_UNROLL _Pragma("GCC unroll 8")
#endif

static inline int32_t load4(const void *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* 16 accumulators of one row to bytes: acc + offset, * multiplier, rounded,
 * + zero, clamped; `count` (<= 16) of them stored at out. */
static inline void requantize_store(__m512i acc, __m512i offset, __m512 multiplier, __m512 bias,
                                    __m512i zero, __m512i lo, __m512i hi, const cuvil_qepilogue *e,
                                    void *base, int64_t at, int64_t count) {
#ifdef __clang__
#pragma clang fp contract(off)
#endif
  __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(acc, offset));
  if (e->bias) /* oneDNN's epilogue: the bias in the sums' domain first */
    f = _mm512_add_ps(f, bias);
  f = _mm512_mul_ps(f, multiplier);
  if (e->y_float) { /* the sums dequantized: float(acc + offset) * multiplier */
    float *dst = (float *)base + at;
    if (count >= 16)
      _mm512_storeu_ps(dst, f);
    else
      _mm512_mask_storeu_ps(dst, (__mmask16)((1u << count) - 1), f);
    return;
  }
  uint8_t *out = (uint8_t *)base + at;
  /* Clamped in float to the output's range first, then rounded: the same
   * as rounding and clamping the integer (the bounds are integers and
   * rounding is monotone), and no float reaches the conversion's overflow.
   * The bounds are loop invariants the callers' loops hoist. */
  __m512i v;
  if (e->bias) {
    __m512 t = _mm512_add_ps(f, _mm512_cvtepi32_ps(zero));
    t = _mm512_min_ps(_mm512_max_ps(t, _mm512_cvtepi32_ps(lo)), _mm512_cvtepi32_ps(hi));
    v = _mm512_cvt_roundps_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
    __m512 t = _mm512_min_ps(_mm512_max_ps(f, _mm512_cvtepi32_ps(_mm512_sub_epi32(lo, zero))),
                             _mm512_cvtepi32_ps(_mm512_sub_epi32(hi, zero)));
    v = _mm512_add_epi32(_mm512_cvt_roundps_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zero);
  }
  if (count >= 16)
    _mm_storeu_si128((__m128i *)out, _mm512_cvtepi32_epi8(v));
  else
    _mm512_mask_cvtepi32_storeu_epi8(out, (__mmask16)((1u << count) - 1), v);
}

/* NV (1 to 4) consecutive vectors of 16 sums of one output row to 16 NV
 * bytes (u8 outputs, not y_float): the same bytes as requantize_store on
 * each, for fewer instructions. Each vector is bounded above in float
 * (below the conversion's overflow) and rounded, then the vectors are
 * packed to bytes with unsigned saturation (which clamps to [0, 255]: the
 * bounds are integers and rounding is monotone, so clamping after
 * rounding is the same) and clamped to [y_min, y_max] as bytes: vpmovdb
 * costs two instructions for every vector. */
static inline __m512i requantize_row_bytes(const __m512i *acc, const int NV, __m512i offset,
                                           __m512 multiplier, __m512 bias, __m512i zero,
                                           __m512i lo, __m512i hi, const cuvil_qepilogue *e) {
  /* Each step rounded on its own, whatever the file's -ffp-contract says:
   * the embedded-rounding forms are never fused into multiply-adds. */
#define CUVIL_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
  __m512i q[4];
  CUVIL_UNROLL
  for (int v = 0; v < NV; ++v) {
    __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(acc[v], offset));
    if (e->bias) { /* oneDNN's epilogue: the bias in the sums' domain first */
      f = _mm512_add_round_ps(f, bias, CUVIL_NEAREST);
      f = _mm512_add_round_ps(_mm512_mul_round_ps(f, multiplier, CUVIL_NEAREST), _mm512_cvtepi32_ps(zero),
                              CUVIL_NEAREST);
      f = _mm512_min_ps(f, _mm512_cvtepi32_ps(hi));
      q[v] = _mm512_cvt_roundps_epi32(f, CUVIL_NEAREST);
    } else {
      f = _mm512_min_ps(_mm512_mul_round_ps(f, multiplier, CUVIL_NEAREST),
                        _mm512_cvtepi32_ps(_mm512_sub_epi32(hi, zero)));
      q[v] = _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, CUVIL_NEAREST), zero);
    }
  }
  for (int v = NV; v < 4; ++v)
    q[v] = q[0];
  /* Per 128-bit lane L, dwords [v0 L, v1 L, v2 L, v3 L]: to v0, v1, v2, v3. */
  __m512i bytes = _mm512_packus_epi16(_mm512_packus_epi32(q[0], q[1]), _mm512_packus_epi32(q[2], q[3]));
  bytes = _mm512_permutexvar_epi32(
      _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), bytes);
  return _mm512_min_epu8(_mm512_max_epu8(bytes, _mm512_set1_epi8((char)_mm_cvtsi128_si32(_mm512_castsi512_si128(lo)))),
                         _mm512_set1_epi8((char)_mm_cvtsi128_si32(_mm512_castsi512_si128(hi))));
}

/* The f32 outputs' sums dequantized: float(acc + offset) (+ bias) *
 * multiplier, each step rounded. */
static inline __m512 requantize_float(__m512i acc, __m512i offset, __m512 multiplier, __m512 bias,
                                      const cuvil_qepilogue *e) {
  __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(acc, offset));
  if (e->bias)
    f = _mm512_add_round_ps(f, bias, CUVIL_NEAREST);
  return _mm512_mul_round_ps(f, multiplier, CUVIL_NEAREST);
}
#undef CUVIL_NEAREST

/* requantize_row_bytes's bytes (or, with y_float, each vector's floats)
 * stored at [at, at + count), count <= 16 NV. */
static inline void requantize_store_row(const __m512i *acc, const int NV, __m512i offset,
                                        __m512 multiplier, __m512 bias, __m512i zero, __m512i lo,
                                        __m512i hi, const cuvil_qepilogue *e, void *base,
                                        int64_t at, int64_t count) {
  if (e->y_float) {
    for (int v = 0; v < NV && 16 * v < count; ++v)
      requantize_store(acc[v], offset, multiplier, bias, zero, lo, hi, e, base, at + 16 * v,
                       count - 16 * v);
    return;
  }
  const __m512i bytes = requantize_row_bytes(acc, NV, offset, multiplier, bias, zero, lo, hi, e);
  uint8_t *out = (uint8_t *)base + at;
  if (count >= 64)
    _mm512_storeu_si512(out, bytes);
  else
    _mm512_mask_storeu_epi8(out, (__mmask64)(~0ull >> (64 - count)), bytes);
}

/* The depthwise kernels' walk over an output plane of oh x ow pixels:
 * wide rows 64 pixels (or the rest) at a time, narrow ones (up to 32
 * pixels) several rows at once, so that each block has enough independent
 * sums. BLOCK(R, NV) computes R rows x NV vectors of 16 pixels from row y,
 * column x0, `left` pixels wide (the last vector masked). */
#define CUVIL_DEPTHWISE_WALK(oh, ow, BLOCK)                                                       \
  do {                                                                                             \
    const int64_t nv_ = ((ow) + 15) / 16;                                                          \
    if (nv_ >= 3) {                                                                                \
      for (int64_t y = 0; y < (oh); ++y)                                                           \
        for (int64_t x0 = 0; x0 < (ow); x0 += 64) {                                                \
          int64_t left = (ow) - x0;                                                                \
          if (left > 48)                                                                           \
            BLOCK(1, 4);                                                                           \
          else if (left > 32)                                                                      \
            BLOCK(1, 3);                                                                           \
          else if (left > 16)                                                                      \
            BLOCK(1, 2);                                                                           \
          else                                                                                     \
            BLOCK(1, 1);                                                                           \
        }                                                                                          \
      break;                                                                                       \
    }                                                                                              \
    const int64_t x0 = 0, left = (ow), step_ = nv_ == 2 ? 2 : 4;                                   \
    int64_t y = 0;                                                                                 \
    for (; y + step_ <= (oh); y += step_) {                                                        \
      if (nv_ == 2)                                                                                \
        BLOCK(2, 2);                                                                               \
      else                                                                                         \
        BLOCK(4, 1);                                                                               \
    }                                                                                              \
    for (; y < (oh); ++y) {                                                                        \
      if (nv_ == 2)                                                                                \
        BLOCK(1, 2);                                                                               \
      else                                                                                         \
        BLOCK(1, 1);                                                                               \
    }                                                                                              \
  } while (0)

#endif /* CUVIL_RUNTIME_CPU_QAVX512_H */
