/*===- runtime/cpu/mk_qvnni512.c - AVX-512 VNNI int8 micro-kernels --------===*
 *
 * Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512vnni (runtime/CMakeLists.txt)
 * and only called on a CPU that has them. vpdpbusd multiplies 4 unsigned
 * bytes by 4 signed bytes and adds the 4 products to an int32 lane, exactly
 * (no intermediate saturation), 64 multiply-adds per instruction.
 *   conv tile:   up to 8 output channels x 48 pixels: 24 zmm accumulators,
 *                3 loads of packed patches and one 4-byte weight broadcast
 *                per channel for every 4 values of k;
 *   linear tile: up to 4 rows x 64 output features: 16 accumulators, 4
 *                loads of weight panels and one 4-byte broadcast of x per
 *                row.
 * The epilogue requantizes in registers (round to nearest even, as the
 * reference's nearbyint) and stores bytes, masked at the edges.
 *
 *===----------------------------------------------------------------------===*/
#include "qgemm.h"

#if defined(__x86_64__)
#include "qavx512.h"

/* The sums of R rows x NV vectors of 16 pixels: B's row k4 at b + k4 ldb,
 * or at b + k4_offsets[k4] (the grid; callers pass either as constants). */
static inline __attribute__((always_inline)) void conv_sums(
    int64_t kp, const int8_t *w, const uint8_t *b, int64_t ldb, const int32_t *k4_offsets,
    const int R, const int NV, const int32_t *row_offsets, __m512i acc[CUVIL_QCONV_MR][3]) {
  /* The sums start from each row's epilogue offset: the epilogue then
   * has one addition less a vector (and a loop that zeroed them was made
   * a memset of them on the stack, 3% of int8 resnet18). */
  const int64_t k4s = kp / 4;
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = _mm512_set1_epi32(row_offsets[r]);
  for (int64_t k4 = 0; k4 < k4s; ++k4) {
    const uint8_t *bk = k4_offsets ? b + k4_offsets[k4] : b + k4 * ldb;
    __m512i bv[3];
    for (int v = 0; v < NV; ++v)
      bv[v] = _mm512_loadu_si512(bk + 64 * v);
    for (int r = 0; r < R; ++r) {
      __m512i a = _mm512_set1_epi32(load4(w + r * kp + k4 * 4));
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], bv[v], a);
    }
  }
}

/* The conv tiles' dispatch: CALL(r, v) with constant rows r (1 to 8) and
 * vectors v (1 to 3, enough for `cols` pixels), so each is unrolled. */
#define CONV_TILE_DISPATCH(rows, cols, CALL)                                                       \
  do {                                                                                             \
    const int nv_ = (cols) > 32 ? 3 : (cols) > 16 ? 2 : 1;                                         \
    switch ((rows) * 4 + nv_) {                                                                    \
    TILE_ROWS(1, CALL) TILE_ROWS(2, CALL) TILE_ROWS(3, CALL) TILE_ROWS(4, CALL)                    \
    TILE_ROWS(5, CALL) TILE_ROWS(6, CALL) TILE_ROWS(7, CALL) TILE_ROWS(8, CALL)                    \
    }                                                                                              \
  } while (0)
#define TILE_ROWS(r, CALL) TILE_CASE(r, 1, CALL) TILE_CASE(r, 2, CALL) TILE_CASE(r, 3, CALL)
#define TILE_CASE(r, v, CALL)                                                                      \
  case r * 4 + v:                                                                                  \
    CALL(r, v);                                                                                    \
    return;

/* R rows x NV vectors of 16 pixels (the last tile of a plane may need
 * fewer than 3). */
static inline __attribute__((always_inline)) void conv_tile_rows(
    int64_t kp, const int8_t *w, const uint8_t *b, int64_t ldb, const int R, const int NV, int64_t cols,
    const cuvil_qepilogue *e, void *out, int64_t ldo) {
  __m512i acc[CUVIL_QCONV_MR][3];
  conv_sums(kp, w, b, ldb, NULL, R, NV, e->offset, acc);
  const __m512i zero = _mm512_set1_epi32(e->y_zero), lo = _mm512_set1_epi32(e->y_min),
                hi = _mm512_set1_epi32(e->y_max);
  CUVIL_UNROLL
  for (int r = 0; r < R; ++r) {
    const __m512i offset = _mm512_setzero_si512(); /* in the sums */
    __m512 multiplier = _mm512_set1_ps(e->multiplier[r]);
    __m512 bias = e->bias ? _mm512_set1_ps(e->bias[r]) : _mm512_setzero_ps();
    requantize_store_row(acc[r], NV, offset, multiplier, bias, zero, lo, hi, e, out, r * ldo,
                         cols < 16 * NV ? cols : 16 * NV);
  }
}

static void vnni_conv_tile(int64_t kp, const int8_t *w, const uint8_t *b, int64_t ldb, int64_t rows,
                           int64_t cols, const cuvil_qepilogue *e, void *out, int64_t ldo) {
#define CALL(r, v) conv_tile_rows(kp, w, b, ldb, r, v, cols, e, out, ldo)
  CONV_TILE_DISPATCH(rows, cols, CALL);
#undef CALL
}

/* The tile over the padded grid: as conv_tile_rows, the B rows at their
 * own offsets, the outputs stored by segments (the positions in the
 * padding's columns dropped). */
static inline __attribute__((always_inline)) void conv_grid_rows(
    int64_t kp, const int8_t *w, const uint8_t *b, const int32_t *k4_offsets, const int R,
    const int NV, const cuvil_qgrid *grid, const cuvil_qepilogue *e, void *out, int64_t ldo) {
  __m512i acc[CUVIL_QCONV_MR][3];
  conv_sums(kp, w, b, 0, k4_offsets, R, NV, e->offset, acc);
  const __m512i zero = _mm512_set1_epi32(e->y_zero), lo = _mm512_set1_epi32(e->y_min),
                hi = _mm512_set1_epi32(e->y_max);
  const int64_t segments = grid->count;
  CUVIL_UNROLL
  for (int r = 0; r < R; ++r) {
    const __m512i offset = _mm512_setzero_si512(); /* in the sums */
    __m512 multiplier = _mm512_set1_ps(e->multiplier[r]);
    __m512 bias = e->bias ? _mm512_set1_ps(e->bias[r]) : _mm512_setzero_ps();
    if (e->y_float) {
      float *row = (float *)out + r * ldo;
      for (int v = 0; v < NV; ++v) {
        const __m512 f = requantize_float(acc[r][v], offset, multiplier, bias, e);
        for (int64_t s = 0; s < segments; ++s)
          _mm512_mask_storeu_ps(row + grid->base[s] + 16 * v, (__mmask16)(grid->mask[s] >> (16 * v)), f);
      }
      continue;
    }
    const __m512i bytes = requantize_row_bytes(acc[r], NV, offset, multiplier, bias, zero, lo, hi, e);
    uint8_t *row = (uint8_t *)out + r * ldo;
    for (int64_t s = 0; s < segments; ++s)
      _mm512_mask_storeu_epi8(row + grid->base[s], (__mmask64)grid->mask[s], bytes);
  }
}

static void vnni_conv_tile_grid(int64_t kp, const int8_t *w, const uint8_t *b,
                                const int32_t *k4_offsets, int64_t rows, int64_t np,
                                const cuvil_qgrid *grid, const cuvil_qepilogue *e, void *out,
                                int64_t ldo) {
#define CALL(r, v) conv_grid_rows(kp, w, b, k4_offsets, r, v, grid, e, out, ldo)
  CONV_TILE_DISPATCH(rows, np, CALL);
#undef CALL
}

/* R rows x NV panels (NV * 16 columns, the last `cols` - 16 (NV - 1)
 * wide): R * NV accumulators, NV panel loads and R broadcasts of x a step. */
static inline __attribute__((always_inline)) void linear_tile_rows(
    int64_t kp, const uint8_t *x, int64_t ldx, const int R, const int NV, const int8_t *panels,
    int64_t panel_stride, int64_t cols, const cuvil_qepilogue *e, void *y, int64_t ldy) {
  /* The sums start from the columns' epilogue offsets, as conv_sums'. */
  __m512i acc[8][CUVIL_QLINEAR_NV];
  for (int v = 0; v < NV; ++v) {
    const int64_t count = cols - v * 16 < 16 ? cols - v * 16 : 16;
    const __m512i start = _mm512_maskz_loadu_epi32(
        (__mmask16)(count >= 16 ? 0xffff : (1u << count) - 1), e->offset + v * 16);
    for (int r = 0; r < R; ++r)
      acc[r][v] = start;
  }
  const int64_t k4s = kp / 4;
  for (int64_t k4 = 0; k4 < k4s; ++k4) {
    __m512i wv[CUVIL_QLINEAR_NV];
    for (int v = 0; v < NV; ++v)
      wv[v] = _mm512_loadu_si512(panels + v * panel_stride + k4 * 64);
    for (int r = 0; r < R; ++r) {
      __m512i a = _mm512_set1_epi32(load4(x + r * ldx + k4 * 4));
      for (int v = 0; v < NV; ++v)
        acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], a, wv[v]);
    }
  }
  const __m512i zero = _mm512_set1_epi32(e->y_zero), lo = _mm512_set1_epi32(e->y_min),
                hi = _mm512_set1_epi32(e->y_max);
  CUVIL_UNROLL
  for (int v = 0; v < NV; ++v) {
    int64_t count = cols - v * 16 < 16 ? cols - v * 16 : 16;
    __mmask16 mask = (__mmask16)(count >= 16 ? 0xffff : (1u << count) - 1);
    const __m512i offset = _mm512_setzero_si512(); /* in the sums */
    __m512 multiplier = _mm512_maskz_loadu_ps(mask, e->multiplier + v * 16);
    __m512 bias = e->bias ? _mm512_maskz_loadu_ps(mask, e->bias + v * 16) : _mm512_setzero_ps();
    CUVIL_UNROLL
    for (int r = 0; r < R; ++r)
      requantize_store(acc[r][v], offset, multiplier, bias, zero, lo, hi, e, y, r * ldy + v * 16,
                       count);
  }
}

static void vnni_linear_tile(int64_t kp, const uint8_t *x, int64_t ldx, int64_t rows,
                             const int8_t *panels, int64_t panel_stride, int64_t cols,
                             const cuvil_qepilogue *e, void *y, int64_t ldy) {
  const int nv = (int)((cols + 15) / 16);
  switch (rows * 8 + nv) {
#define TILE(r, v)                                                                                 \
  case r * 8 + v:                                                                                  \
    linear_tile_rows(kp, x, ldx, r, v, panels, panel_stride, cols, e, y, ldy);                     \
    return;
#define ROWS(r) TILE(r, 1) TILE(r, 2) TILE(r, 3) TILE(r, 4)
    ROWS(1) ROWS(2) ROWS(3) ROWS(4)
#undef ROWS
#define ROWS(r) TILE(r, 1) TILE(r, 2) TILE(r, 3)
    ROWS(5) ROWS(6) ROWS(7) ROWS(8)
#undef ROWS
#undef TILE
  }
}

/* 16 pixels at a time: the taps' bytes widened to float (stride 1: 16
 * consecutive bytes; stride 2: the even bytes of 32), multiplied and summed
 * exactly (the offset holds -zx * sum(w)), then requantized. Loads are masked at the row's end
 * so nothing past the workspace is read. */
/* 16 taps' bytes at x (stride 1: consecutive; stride 2: the even bytes of
 * 32), widened to float; `count` (< 16: masked, nothing past it read). */
static inline __m512 depthwise_load(const uint8_t *src, int64_t sw, int64_t count) {
  __m512i v;
  if (sw == 1) {
    __m128i bytes = count >= 16 ? _mm_loadu_si128((const __m128i *)src)
                                : _mm_maskz_loadu_epi8((__mmask16)((1u << count) - 1), src);
    v = _mm512_cvtepu8_epi32(bytes);
  } else {
    __mmask32 m = count >= 16 ? 0xffffffffu : (__mmask32)((1ull << (2 * count - 1)) - 1);
    v = _mm512_and_si512(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi8(m, src)),
                         _mm512_set1_epi32(0xff));
  }
  return _mm512_cvtepi32_ps(v);
}

/* R output rows x NV vectors of 16 pixels from column x0 (the last vector
 * `left - 16 (NV - 1)` wide), R * NV independent sums in registers: one
 * chain would wait on the FMA latency tap after tap. */
static inline __attribute__((always_inline)) void depthwise_block(
    const uint8_t *plane, int64_t wp, int64_t y0, int64_t x0, int64_t left, const int R,
    const int NV, const int64_t *g, const float *taps, const cuvil_qepilogue *e, void *out,
    int64_t ow) {
  const int64_t kh = g[0], kw = g[1], sh = g[2], sw = g[3], dh = g[4], dw = g[5];
  __m512 acc[4][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = _mm512_setzero_ps();
  for (int64_t a = 0; a < kh; ++a)
    for (int64_t b = 0; b < kw; ++b) {
      __m512 t = _mm512_set1_ps(taps[a * kw + b]);
      for (int r = 0; r < R; ++r) {
        const uint8_t *src = plane + ((y0 + r) * sh + a * dh) * wp + x0 * sw + b * dw;
        for (int v = 0; v < NV; ++v)
          acc[r][v] = _mm512_fmadd_ps(depthwise_load(src + 16 * v * sw, sw, left - 16 * v), t, acc[r][v]);
      }
    }
  const __m512i zero = _mm512_set1_epi32(e->y_zero), lo = _mm512_set1_epi32(e->y_min),
                hi = _mm512_set1_epi32(e->y_max), offset = _mm512_set1_epi32(e->offset[0]);
  const __m512 multiplier = _mm512_set1_ps(e->multiplier[0]);
  const __m512 bias = e->bias ? _mm512_set1_ps(e->bias[0]) : _mm512_setzero_ps();
  /* Exact integers: to int32, then the epilogue as everywhere. */
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      requantize_store(_mm512_cvtps_epi32(acc[r][v]), offset, multiplier, bias, zero, lo, hi, e,
                       out, (y0 + r) * ow + x0 + 16 * v, left - 16 * v);
}

#define DW_BLOCK(R, NV) depthwise_block(plane, wp, y, x0, left, R, NV, g, taps, e, out, ow)

static void vnni_depthwise_plane(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                                 const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                                 void *out) {
  if (g[3] > 2) {
    cuvil_qkernels_generic()->depthwise_plane(plane, wp, oh, ow, g, taps, e, out);
    return;
  }
  CUVIL_DEPTHWISE_WALK(oh, ow, DW_BLOCK);
}

#undef DW_BLOCK

/* n words from src (every sw-th) to out, in registers: masked at the
 * run's end so that nothing past its last word is read. */
static inline void copy_run(uint32_t *out, const uint32_t *src, int64_t n, int64_t sw) {
  if (sw == 1) {
    for (; n >= 16; n -= 16, src += 16, out += 16)
      _mm512_storeu_si512(out, _mm512_loadu_si512(src));
    if (n > 0) {
      __mmask16 m = (__mmask16)((1u << n) - 1);
      _mm512_mask_storeu_epi32(out, m, _mm512_maskz_loadu_epi32(m, src));
    }
    return;
  }
  if (sw == 2) { /* the even words of 32 */
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (; n >= 16; n -= 16, src += 32, out += 16) {
      __m512i lo = _mm512_loadu_si512(src), hi = _mm512_maskz_loadu_epi32(0x7fff, src + 16);
      _mm512_storeu_si512(out, _mm512_permutex2var_epi32(lo, even, hi));
    }
    if (n > 0) { /* words 0 .. 2 (n - 1) */
      int64_t words = 2 * n - 1;
      __mmask16 mlo = (__mmask16)(words >= 16 ? 0xffff : (1u << words) - 1);
      __mmask16 mhi = (__mmask16)(words > 16 ? (1u << (words - 16)) - 1 : 0);
      __m512i lo = _mm512_maskz_loadu_epi32(mlo, src), hi = _mm512_maskz_loadu_epi32(mhi, src + 16);
      _mm512_mask_storeu_epi32(out, (__mmask16)((1u << n) - 1), _mm512_permutex2var_epi32(lo, even, hi));
    }
    return;
  }
  for (int64_t t = 0; t < n; ++t)
    out[t] = src[t * sw];
}

static void vnni_pack_patches(const uint32_t *planes, int64_t plane_words, const int64_t *g,
                              int64_t quads, int64_t sw, const cuvil_qsegments *s, uint32_t *b) {
  for (int64_t kh = 0; kh < g[0]; ++kh)
    for (int64_t kw = 0; kw < g[1]; ++kw)
      for (int64_t quad = 0; quad < quads; ++quad, b += CUVIL_QCONV_NP) {
        const uint32_t *plane = planes + quad * plane_words + kh * g[2] + kw * g[3];
        for (int64_t i = 0; i < s->count; ++i)
          copy_run(b + s->p[i], plane + s->start[i], s->n[i], sw);
      }
}

/* 64 pixels at a time: bytes of rows 0 and 1 (and 2 and 3) paired, then
 * the pairs paired into words, all within 128-bit lanes (lane L then holds
 * pixels 16 L + 4 i .. + 3 in word vector i); two rounds of 128-bit lane
 * shuffles put pixels in order. Masked at the row's end: nothing past it
 * is read or written. */
static void vnni_interleave_row(uint32_t *out, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                const uint8_t *r3, int64_t w) {
  for (int64_t x = 0; x < w; x += 64) {
    const int64_t n = w - x < 64 ? w - x : 64;
    const __mmask64 m = n == 64 ? ~(__mmask64)0 : (((__mmask64)1 << n) - 1);
    const __m512i a = _mm512_maskz_loadu_epi8(m, r0 + x), b = _mm512_maskz_loadu_epi8(m, r1 + x);
    const __m512i c = _mm512_maskz_loadu_epi8(m, r2 + x), d = _mm512_maskz_loadu_epi8(m, r3 + x);
    const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
    const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
    const __m512i w0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), w1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
    const __m512i w2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), w3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
    /* t0: w0 L0 L1, w1 L0 L1; t1: w2 L0 L1, w3 L0 L1; t2, t3: lanes 2, 3. */
    const __m512i t0 = _mm512_shuffle_i32x4(w0, w1, 0x44), t1 = _mm512_shuffle_i32x4(w2, w3, 0x44);
    const __m512i t2 = _mm512_shuffle_i32x4(w0, w1, 0xEE), t3 = _mm512_shuffle_i32x4(w2, w3, 0xEE);
    const __m512i v[4] = {_mm512_shuffle_i32x4(t0, t1, 0x88), _mm512_shuffle_i32x4(t0, t1, 0xDD),
                          _mm512_shuffle_i32x4(t2, t3, 0x88), _mm512_shuffle_i32x4(t2, t3, 0xDD)};
    for (int i = 0; i < 4 && 16 * i < n; ++i) {
      const int64_t left = n - 16 * i;
      const __mmask16 k = (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1);
      _mm512_mask_storeu_epi32(out + x + 16 * i, k, v[i]);
    }
  }
}

/* src[r lds + c] to dst[c ldd + r] for r < rows, c < cols (both <= 16):
 * 16 rows of 16 bytes through four rounds of unpacks (masked at the
 * block's edges, nothing outside it read or written). */
static void vnni_transpose_bytes(uint8_t *dst, int64_t ldd, const uint8_t *src, int64_t lds,
                                 int64_t rows, int64_t cols) {
  const __mmask16 col_mask = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1);
  const __mmask16 row_mask = (__mmask16)(rows >= 16 ? 0xffff : (1u << rows) - 1);
  __m128i x[16];
  for (int r = 0; r < 16; ++r)
    x[r] = r < rows ? _mm_maskz_loadu_epi8(col_mask, src + r * lds) : _mm_setzero_si128();
  __m128i t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]);
    t[2 * i + 1] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) {
      x[4 * i + 2 * j] = _mm_unpacklo_epi16(t[4 * i + j], t[4 * i + j + 2]);
      x[4 * i + 2 * j + 1] = _mm_unpackhi_epi16(t[4 * i + j], t[4 * i + j + 2]);
    }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      t[8 * i + 2 * j] = _mm_unpacklo_epi32(x[8 * i + j], x[8 * i + j + 4]);
      t[8 * i + 2 * j + 1] = _mm_unpackhi_epi32(x[8 * i + j], x[8 * i + j + 4]);
    }
  for (int j = 0; j < 8; ++j) {
    x[2 * j] = _mm_unpacklo_epi64(t[j], t[j + 8]);
    x[2 * j + 1] = _mm_unpackhi_epi64(t[j], t[j + 8]);
  }
  for (int c = 0; c < cols; ++c)
    _mm_mask_storeu_epi8(dst + c * ldd, row_mask, x[c]);
}

/* 32 words at a time: two loads, two vpermt2d, two stores (masked at the
 * row's end, nothing past it read). */
static void vnni_split_row2(uint32_t *even, uint32_t *odd, const uint32_t *row, int64_t n) {
  const __m512i pick_even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i pick_odd = _mm512_add_epi32(pick_even, _mm512_set1_epi32(1));
  for (int64_t x = 0; x < n; x += 32) {
    const int64_t left = n - x;
    const __mmask16 m0 = (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1);
    const __mmask16 m1 = (__mmask16)(left >= 32 ? 0xffff : left <= 16 ? 0 : (1u << (left - 16)) - 1);
    const __m512i lo = _mm512_maskz_loadu_epi32(m0, row + x), hi = _mm512_maskz_loadu_epi32(m1, row + x + 16);
    const int64_t evens = (left + 1) / 2 < 16 ? (left + 1) / 2 : 16, odds = left / 2 < 16 ? left / 2 : 16;
    _mm512_mask_storeu_epi32(even + x / 2, (__mmask16)((1u << evens) - 1),
                             _mm512_permutex2var_epi32(lo, pick_even, hi));
    _mm512_mask_storeu_epi32(odd + x / 2, (__mmask16)((1u << odds) - 1),
                             _mm512_permutex2var_epi32(lo, pick_odd, hi));
  }
}

static const cuvil_qkernels vnni_kernels = {
    "avx512_vnni",       vnni_conv_tile,      vnni_linear_tile, vnni_depthwise_plane,
    vnni_pack_patches,   vnni_interleave_row, {8, 3},          NULL,
    NULL,                NULL,                vnni_conv_tile_grid,
    vnni_split_row2,     NULL,                NULL,
    vnni_transpose_bytes};

const cuvil_qkernels *cuvil_qkernels_avx512_vnni(void) { return &vnni_kernels; }

static void vbmi_depthwise_plane(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                                 const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                                 void *out) {
  if (!cuvil_qdepthwise_vbmi(plane, wp, oh, ow, g, taps, e, out))
    vnni_depthwise_plane(plane, wp, oh, ow, g, taps, e, out);
}

static const cuvil_qkernels vnni_vbmi_kernels = {
    "avx512_vnni_vbmi", vnni_conv_tile,      vnni_linear_tile, vbmi_depthwise_plane,
    vnni_pack_patches,  vnni_interleave_row, {8, 3},          cuvil_qdepthwise_vbmi_direct,
    cuvil_qdepthwise_vbmi_prepare, cuvil_qdepthwise_vbmi_run, vnni_conv_tile_grid,
    vnni_split_row2,    cuvil_qmax_pool_vbmi, cuvil_qcolumn_words_vbmi,
    vnni_transpose_bytes};

const cuvil_qkernels *cuvil_qkernels_avx512_vnni_vbmi(void) { return &vnni_vbmi_kernels; }

#else
const cuvil_qkernels *cuvil_qkernels_avx512_vnni(void) { return NULL; }
const cuvil_qkernels *cuvil_qkernels_avx512_vnni_vbmi(void) { return NULL; }
#endif
