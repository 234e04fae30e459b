/*===- runtime/cpu/mk_qdot_neon.c - aarch64 dot-product int8 micro-kernels -===*
 *
 * Armv8.2 dotprod (sdot / udot: 4 byte products summed into each int32
 * lane, exactly), compiled for it with a target pragma and called only on
 * a CPU that reports it. The operands' signedness is made to agree:
 *   conv tile:   activations flipped to signed (x ^ 0x80 = x - 128) and
 *                sdot against the s8 weights; 128 * sum(w) of each row adds
 *                the difference back. 4 channels x 24 pixels per block: 24
 *                accumulators, one 16-byte weight load per row covering 4
 *                steps of k (sdot by lane);
 *   linear tile: weights flipped to unsigned (w ^ 0x80 = w + 128) and udot
 *                against the u8 activations; 128 * sum(x) of each row is
 *                subtracted. 4 rows x 16 features per block.
 * Both are exact in int32 (the differences are the same integers mod 2^32)
 * and share the requantize epilogue's arithmetic (round to nearest even,
 * as nearbyint).
 *
 *===----------------------------------------------------------------------===*/
#include "qgemm.h"

#if defined(__aarch64__)
#pragma GCC target("arch=armv8.2-a+dotprod")
#include <arm_neon.h>
#include <string.h>

/* Four int32 sums of one row (or column) to the output: requantized, or
 * dequantized with Y_FLOAT; `count` (<= 4) of them stored at out[at]. */
static inline void store4(int32x4_t acc, int32_t offset, float multiplier, float bias,
                          const cuvil_qepilogue *e, void *out, int64_t at, int64_t count) {
  int32x4_t sum = vaddq_s32(acc, vdupq_n_s32(offset));
  float32x4_t t = vcvtq_f32_s32(sum);
  if (e->bias) { /* oneDNN's epilogue: the bias in the sums' domain first */
    t = vaddq_f32(t, vdupq_n_f32(bias));
    CUVIL_FP_ROUNDED(t);
  }
  t = vmulq_n_f32(t, multiplier);
  if (e->y_float) {
    float v[4];
    vst1q_f32(v, t);
    memcpy((float *)out + at, v, (size_t)count * sizeof(float));
    return;
  }
  int32x4_t q;
  if (e->bias) {
    CUVIL_FP_ROUNDED(t);
    t = vaddq_f32(t, vdupq_n_f32((float)e->y_zero));
    t = vminq_f32(vmaxq_f32(t, vdupq_n_f32(-1073741824.0f)), vdupq_n_f32(1073741824.0f));
    q = vcvtnq_s32_f32(t);
  } else {
    t = vminq_f32(vmaxq_f32(t, vdupq_n_f32(-1073741824.0f)), vdupq_n_f32(1073741824.0f));
    q = vaddq_s32(vcvtnq_s32_f32(t), vdupq_n_s32(e->y_zero));
  }
  q = vminq_s32(vmaxq_s32(q, vdupq_n_s32(e->y_min)), vdupq_n_s32(e->y_max));
  int32_t v[4];
  vst1q_s32(v, q);
  uint8_t *dst = (uint8_t *)out + at;
  for (int64_t i = 0; i < count; ++i)
    dst[i] = (uint8_t)v[i];
}

/* 4 rows (R <= 4) x 6 vectors of 4 pixels from pixel p0 of the packed
 * patches b[kp/4][NP][4]. */
static inline __attribute__((always_inline)) void conv_block(int64_t kp, const int8_t *w,
                                                             const uint8_t *b, int64_t ldb, const int R,
                                                             int64_t p0, int64_t cols,
                                                             const cuvil_qepilogue *e, void *out,
                                                             int64_t ldo) {
  int32x4_t acc[4][6];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 6; ++v)
      acc[r][v] = vdupq_n_s32(0);
  const uint8x16_t flip = vdupq_n_u8(0x80);
  int64_t k4s = kp / 4, k4 = 0;
  for (; k4 + 4 <= k4s; k4 += 4) {
    int8x16_t wv[4];
    for (int r = 0; r < R; ++r)
      wv[r] = vld1q_s8(w + r * kp + k4 * 4);
#define STEP(s)                                                                                    \
  {                                                                                                \
    const uint8_t *bk = b + (k4 + s) * ldb + p0 * 4;                                  \
    for (int v = 0; v < 6; ++v) {                                                                  \
      int8x16_t bv = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(bk + 16 * v), flip));                   \
      for (int r = 0; r < R; ++r)                                                                  \
        acc[r][v] = vdotq_laneq_s32(acc[r][v], bv, wv[r], s);                                      \
    }                                                                                              \
  }
    STEP(0) STEP(1) STEP(2) STEP(3)
#undef STEP
  }
  for (; k4 < k4s; ++k4) {
    const uint8_t *bk = b + k4 * ldb + p0 * 4;
    int8x16_t wv[4];
    for (int r = 0; r < R; ++r) {
      uint32_t word;
      memcpy(&word, w + r * kp + k4 * 4, 4);
      wv[r] = vreinterpretq_s8_u32(vdupq_n_u32(word));
    }
    for (int v = 0; v < 6; ++v) {
      int8x16_t bv = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(bk + 16 * v), flip));
      for (int r = 0; r < R; ++r)
        acc[r][v] = vdotq_s32(acc[r][v], bv, wv[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    /* The flip took 128 off every x: add 128 * sum(w) back. */
    int32_t wsum = 0;
    for (int64_t k = 0; k < kp; ++k)
      wsum += w[r * kp + k];
    int32_t offset = (int32_t)((uint32_t)e->offset[r] + (uint32_t)wsum * 128u);
    for (int v = 0; v < 6 && 4 * v < cols - p0; ++v) {
      int64_t left = cols - p0 - 4 * v;
      store4(acc[r][v], offset, e->multiplier[r], e->bias ? e->bias[r] : 0.0f, e, out, r * ldo + p0 + 4 * v,
             left < 4 ? left : 4);
    }
  }
}

static void dot_conv_tile(int64_t kp, const int8_t *w, const uint8_t *b, int64_t ldb, int64_t rows,
                          int64_t cols, const cuvil_qepilogue *e, void *out, int64_t ldo) {
  for (int64_t r0 = 0; r0 < rows; r0 += 4) {
    int64_t r = rows - r0 < 4 ? rows - r0 : 4;
    cuvil_qepilogue er = *e;
    er.offset += r0;
    er.multiplier += r0;
    if (er.bias)
      er.bias += r0;
    void *o = e->y_float ? (void *)((float *)out + r0 * ldo) : (void *)((uint8_t *)out + r0 * ldo);
    for (int64_t p0 = 0; p0 < cols; p0 += 24) {
      switch (r) {
      case 1: conv_block(kp, w + r0 * kp, b, ldb, 1, p0, cols, &er, o, ldo); break;
      case 2: conv_block(kp, w + r0 * kp, b, ldb, 2, p0, cols, &er, o, ldo); break;
      case 3: conv_block(kp, w + r0 * kp, b, ldb, 3, p0, cols, &er, o, ldo); break;
      default: conv_block(kp, w + r0 * kp, b, ldb, 4, p0, cols, &er, o, ldo); break;
      }
    }
  }
}

/* R rows of x times one panel of 16 features ([kp/4][16][4]): columns
 * n0 .. n0 + count of the tile. */
static inline __attribute__((always_inline)) void linear_block(
    int64_t kp, const uint8_t *x, int64_t ldx, const int R, const int8_t *panel, int64_t n0,
    int64_t count, const cuvil_qepilogue *e, void *y, int64_t ldy) {
  uint32x4_t acc[4][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < 4; ++v)
      acc[r][v] = vdupq_n_u32(0);
  const uint8x16_t flip = vdupq_n_u8(0x80);
  for (int64_t k4 = 0; k4 < kp / 4; ++k4) {
    uint8x16_t wv[4];
    for (int v = 0; v < 4; ++v)
      wv[v] = veorq_u8(vld1q_u8((const uint8_t *)panel + k4 * 64 + 16 * v), flip);
    for (int r = 0; r < R; ++r) {
      uint32_t word;
      memcpy(&word, x + r * ldx + k4 * 4, 4);
      uint8x16_t xv = vreinterpretq_u8_u32(vdupq_n_u32(word));
      for (int v = 0; v < 4; ++v)
        acc[r][v] = vdotq_u32(acc[r][v], xv, wv[v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    /* The flip added 128 to every w: take 128 * sum(x) off. */
    uint32_t xsum = 0;
    for (int64_t k = 0; k < kp; ++k)
      xsum += x[r * ldx + k];
    for (int v = 0; v < 4 && 4 * v < count; ++v) {
      int32x4_t sum = vreinterpretq_s32_u32(vsubq_u32(acc[r][v], vdupq_n_u32(xsum * 128u)));
      int64_t left = count - 4 * v < 4 ? count - 4 * v : 4;
      /* Per-feature offsets and multipliers: 4 lanes, one store each. */
      int32_t s[4];
      vst1q_s32(s, sum);
      for (int64_t i = 0; i < left; ++i) {
        int64_t n = n0 + 4 * v + i;
        cuvil_qstore(e, s[i], n, y, r * ldy + n);
      }
    }
  }
}

static void dot_linear_tile(int64_t kp, const uint8_t *x, int64_t ldx, int64_t rows,
                            const int8_t *panels, int64_t panel_stride, int64_t cols,
                            const cuvil_qepilogue *e, void *y, int64_t ldy) {
  for (int64_t n0 = 0; n0 < cols; n0 += CUVIL_QN) {
    const int8_t *panel = panels + (n0 / CUVIL_QN) * panel_stride;
    int64_t count = cols - n0 < CUVIL_QN ? cols - n0 : CUVIL_QN;
    switch (rows) {
    case 1: linear_block(kp, x, ldx, 1, panel, n0, count, e, y, ldy); break;
    case 2: linear_block(kp, x, ldx, 2, panel, n0, count, e, y, ldy); break;
    case 3: linear_block(kp, x, ldx, 3, panel, n0, count, e, y, ldy); break;
    default: linear_block(kp, x, ldx, 4, panel, n0, count, e, y, ldy); break;
    }
  }
}

/* Depthwise convolutions: the portable row kernels (one channel per
 * product gives dot products nothing to sum). */
static void dot_depthwise_plane(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                                const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                                void *out) {
  cuvil_qkernels_generic()->depthwise_plane(plane, wp, oh, ow, g, taps, e, out);
}

static const cuvil_qkernels dot_kernels = {"neon_dotprod", dot_conv_tile, dot_linear_tile,
                                           dot_depthwise_plane, NULL, NULL,
                                               {CUVIL_QLINEAR_MR, CUVIL_QLINEAR_NV}};

const cuvil_qkernels *cuvil_qkernels_neon_dotprod(void) { return &dot_kernels; }

#else
const cuvil_qkernels *cuvil_qkernels_neon_dotprod(void) { return NULL; }
#endif
