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
