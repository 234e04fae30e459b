/*===- runtime/cpu/mk_qvbmi512.c - AVX-512 VNNI + VBMI depthwise kernel ----===*
 *
 * Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mavx512vbmi
 * and only called on a CPU that has them (Ice Lake and later, Zen 4): the
 * avx512_vnni table with a depthwise kernel in integers. For 16 output
 * pixels and one kernel row, one 64-byte load of the input row and one
 * vpermb put each pixel's taps side by side (4 bytes per pixel, tap b of
 * pixel t is byte t * sw + b * dw of the load), and one vpdpbusd against
 * the row's 4 taps multiplies and sums them: 3 instructions per row of a
 * 3x3 window where the float kernel needs 4 per tap. Sums are exact int32,
 * as everywhere. Windows that do not fit (more than 8 taps along a row, or
 * 16 pixels' taps beyond 64 bytes) take the float kernel.
 *
 *===----------------------------------------------------------------------===*/
#include "qgemm.h"

#if defined(__x86_64__)
#include "qavx512.h"

/* Where a block reads its input: rows [0, h) of w bytes at `base` (row
 * stride w), with `ph` rows and `pw` columns of the zero point `zx` around
 * them that are never stored. A load that reaches past a row's ends is
 * masked and merged with zx, so nothing outside the rows is read. */
typedef struct dw_source {
  const uint8_t *base;
  int64_t h, w, ph, pw;
  __m512i zx;
} dw_source;

/* The bytes of a 64-byte load from column c (unpadded) that lie in a row
 * of w bytes. */
static inline __mmask64 column_mask(int64_t c, int64_t w) {
  const int64_t lo = c < 0 ? -c : 0, hi = w - c < 64 ? w - c : 64;
  if (lo >= 64 || hi <= lo)
    return 0;
  const uint64_t below_hi = hi == 64 ? ~0ull : (1ull << hi) - 1, from_lo = ~((1ull << lo) - 1);
  return (__mmask64)(below_hi & from_lo);
}

/* One accumulator block: R output rows x NV vectors of 16 pixels from
 * column x0 (the last vector `left - 16 (NV - 1)` wide). */
static inline __attribute__((always_inline)) void block(
    const dw_source *src, int64_t y0, int64_t x0, int64_t left, const int R, const int NV,
    const int64_t *g, const int64_t kh, const int64_t quads, const __m512i *index,
    const __m512i *taps, const cuvil_qepilogue *e, void *out, int64_t ow) {
  const int64_t sh = g[2], sw = g[3], dh = g[4];
  __m512i acc[4][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = _mm512_setzero_si512();
  /* Every load is masked (rows outside: nothing read), so the loop has no
   * branches: the columns' masks once per block, the row's per tap row. */
  __mmask64 columns[4];
  int64_t column[4];
  for (int v = 0; v < NV; ++v) {
    column[v] = (x0 + 16 * v) * sw - src->pw;
    columns[v] = column_mask(column[v], src->w);
  }
  for (int64_t a = 0; a < kh; ++a)
    for (int r = 0; r < R; ++r) {
      const int64_t iy = (y0 + r) * sh + a * dh - src->ph;
      const __mmask64 inside = iy >= 0 && iy < src->h ? ~(__mmask64)0 : 0;
      /* Rows outside are never read (mask 0): any address in the plane. */
      const uint8_t *row = src->base + (inside ? iy * src->w : 0);
      for (int v = 0; v < NV; ++v) {
        __m512i bytes = _mm512_mask_loadu_epi8(src->zx, columns[v] & inside, row + column[v]);
        for (int64_t j = 0; j < quads; ++j)
          acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], _mm512_permutexvar_epi8(index[j], bytes),
                                          taps[a * quads + j]);
      }
    }
  const __m512i zero = _mm512_set1_epi32(e->y_zero), lo = _mm512_set1_epi32(e->y_min),
                hi = _mm512_set1_epi32(e->y_max), offset = _mm512_set1_epi32(e->offset[0]);
  const __m512 multiplier = _mm512_set1_ps(e->multiplier[0]);
  const __m512 bias = e->bias ? _mm512_set1_ps(e->bias[0]) : _mm512_setzero_ps();
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      requantize_store(acc[r][v], offset, multiplier, bias, zero, lo, hi, e, out,
                       (y0 + r) * ow + x0 + 16 * v, left - 16 * v);
}

/* The 3x3 windows (one quad of taps a row) with both loops unrolled. */
#define DW_BLOCK(R, NV)                                                                            \
  do {                                                                                             \
    if (kh == 3 && quads == 1)                                                                     \
      block(src, y, x0, left, R, NV, g, 3, 1, index, taps, e, out, ow);                            \
    else                                                                                           \
      block(src, y, x0, left, R, NV, g, kh, quads, index, taps, e, out, ow);                       \
  } while (0)

static bool depthwise(const dw_source *src, int64_t oh, int64_t ow, const int64_t *g,
                      const float *taps_f, const cuvil_qepilogue *e, void *out) {
  const int64_t kh = g[0], kw = g[1], sw = g[3], dw = g[5];
  const int64_t quads = (kw + 3) / 4;
  if (quads > 2 || 15 * sw + (kw - 1) * dw > 63 || kh * quads > 32)
    return false;
  /* index[j]: byte 4t + b of the permuted vector is tap 4j + b of pixel t
   * (beyond the row's taps: any byte, against a zero weight). */
  __m512i index[2], taps[32];
  const __m512i pixel = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32((int32_t)(sw * 0x01010101)));
  for (int64_t j = 0; j < quads; ++j) { /* every byte < 64: no carries */
    uint32_t offsets = 0;
    for (int b = 0; b < 4; ++b) {
      int64_t tap = 4 * j + b;
      offsets |= (uint32_t)((tap < kw ? tap : 0) * dw) << (8 * b);
    }
    index[j] = _mm512_add_epi32(pixel, _mm512_set1_epi32((int32_t)offsets));
  }
  for (int64_t a = 0; a < kh; ++a)
    for (int64_t j = 0; j < quads; ++j) {
      uint32_t word = 0;
      for (int b = 0; b < 4; ++b) {
        int64_t tap = 4 * j + b;
        int8_t w = tap < kw ? (int8_t)taps_f[a * kw + tap] : 0;
        word |= (uint32_t)(uint8_t)w << (8 * b);
      }
      taps[a * quads + j] = _mm512_set1_epi32((int32_t)word);
    }
  CUVIL_DEPTHWISE_WALK(oh, ow, DW_BLOCK);
  return true;
}

bool cuvil_qdepthwise_vbmi(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                           const int64_t *g, const float *taps_f, const cuvil_qepilogue *e,
                           void *out) {
  /* The padded plane, as far down as the windows read (nothing past it:
   * bytes past a row's end only meet zero weights or unstored pixels). */
  const dw_source src = {plane, (oh - 1) * g[2] + (g[0] - 1) * g[4] + 1, wp, 0, 0,
                         _mm512_setzero_si512()};
  return depthwise(&src, oh, ow, g, taps_f, e, out);
}

bool cuvil_qdepthwise_vbmi_direct(const uint8_t *input, int64_t h, int64_t w, int64_t ph,
                                  int64_t pw, uint8_t zx, int64_t oh, int64_t ow,
                                  const int64_t *g, const float *taps_f,
                                  const cuvil_qepilogue *e, void *out) {
  const dw_source src = {input, h, w, ph, pw, _mm512_set1_epi8((char)zx)};
  return depthwise(&src, oh, ow, g, taps_f, e, out);
}

#undef DW_BLOCK

#else
bool cuvil_qdepthwise_vbmi_direct(const uint8_t *input, int64_t h, int64_t w, int64_t ph,
                                  int64_t pw, uint8_t zx, int64_t oh, int64_t ow,
                                  const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                                  void *out) {
  (void)input, (void)h, (void)w, (void)ph, (void)pw, (void)zx, (void)oh, (void)ow, (void)g,
      (void)taps, (void)e, (void)out;
  return false;
}
bool cuvil_qdepthwise_vbmi(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                           const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                           void *out) {
  (void)plane, (void)wp, (void)oh, (void)ow, (void)g, (void)taps, (void)e, (void)out;
  return false;
}
#endif
