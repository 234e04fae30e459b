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

#include <pthread.h>
#include <stdlib.h>

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
  /* The sums start from the epilogue's offset (one addition less a vector). */
  const __m512i offset = _mm512_set1_epi32(e->offset[0]);
  __m512i acc[4][4];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v)
      acc[r][v] = offset;
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
                hi = _mm512_set1_epi32(e->y_max);
  const __m512 multiplier = _mm512_set1_ps(e->multiplier[0]);
  const __m512 bias = e->bias ? _mm512_set1_ps(e->bias[0]) : _mm512_setzero_ps();
  CUVIL_UNROLL
  for (int r = 0; r < R; ++r)
    requantize_store_row(acc[r], NV, _mm512_setzero_si512(), multiplier, bias, zero, lo, hi, e, out,
                         (y0 + r) * ow + x0, left);
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

/* ---- Depthwise by plan: the plane as one run of bytes ----------------
 *
 * The row kernel above spends a vector of 16 lanes on each output row's
 * 16 pixels: a 7x7 plane is 7 vectors of 7 pixels, a 14x14 one 14 of 14,
 * and each block works out its column masks and row bounds again. Here
 * each plane is staged in the thread's scratch with its rows pw bytes
 * apart (the gap between two rows is the right padding of one and the
 * left padding of the next) between margins that stand for the padding
 * rows, all of the zero point, so every tap is a byte of the stage. The
 * flattened output plane is cut into segments of up to 16 pixels that run
 * across row ends, and for each segment and kernel row one 64-byte window
 * of the stage (two, 128 bytes, where the taps spread wider) holds every
 * byte its pixels read: one plain load and one vpermb (vpermt2b) gather
 * them. A 7x7 plane is then 4 vectors. The cutting repeats every `rows`
 * output rows (ow * rows a multiple of 16, at most 16 rows): the plan
 * holds one period, and period k reads k * rows * sh rows further on. The
 * plane with rows under 64 bytes is staged 64 bytes at a time, each chunk
 * one load of the input, one vpermb that spreads its rows apart and puts
 * the zero point in the gaps, and one store (the chunks' patterns repeat
 * every ws / gcd(ws, 64) chunks: the plan holds one such period); wider
 * rows are copied row by row. The plan is worked out once per layer, the
 * stage's margins (and the gaps of wide rows) once per run of planes. */

enum { kPlanMaxSegments = 128, kPlanMaxRowQuads = 32 };

/* The plan's header; its arrays follow it (dw_arrays). */
typedef struct dw_plan {
  int64_t kh, kw, quads, two /* windows of 128 bytes */, segments;
  int64_t h, w, ws, ohow, period_out, period_in, periods;
  /* The stage: `front` bytes of zx, then h rows ws = w + pw bytes apart,
   * then `back` bytes of zx (h * ws + back past the first row). */
  int64_t front, back;
  /* Rows under 64 bytes: `chunks` 64-byte pieces of the stage's rows (the
   * last reaching into back, its bytes past the rows kept by last_keep),
   * `period` patterns of them, chunk c + period reading period_rows * w
   * input bytes further on. 0 chunks: rows copied one by one. */
  int64_t chunks, period, period_rows;
  uint64_t last_keep;
  int64_t bytes;  /* the plan's, arrays included */
  int32_t zx;
  /* Each kernel row's taps as the 4-byte words vpdpbusd takes, gathered
   * from the layer's weight row (tap t at byte 4t, kh * kw * 4 bytes, at
   * most 128: otherwise taps_from_weights is 0 and they are put together
   * byte by byte): word byte b of quad j of row a is weight byte
   * taps_index[a * quads + j][4l + b] where taps_keep has the bit, else 0. */
  int64_t taps_from_weights;
  uint64_t taps_keep[kPlanMaxRowQuads];
  uint8_t taps_index[kPlanMaxRowQuads][64];
} dw_plan;

typedef struct dw_arrays {
  int32_t *first, *count; /* [segments]: the segment's first pixel in the period, pixels */
  int64_t *start;         /* [segments][kh]: the window's first byte in period 0 */
  /* [segments][kh][quads]: byte 4t + b of the gathered vector is byte
   * index[.][4t + b] of the window (taps past the row, pixels past the
   * segment: byte 0, against a zero weight or not stored). */
  uint8_t (*index)[64];
  /* [period]: stage bytes [64c, 64c + 64) past the first row's start are
   * input bytes chunk_index[c][i] past chunk_from[c] where chunk_keep has
   * the bit, the zero point elsewhere. */
  int64_t *chunk_from;
  uint64_t *chunk_keep;
  uint8_t (*chunk_index)[64];
} dw_arrays;

static size_t align64(size_t n) { return (n + 63) & ~(size_t)63; }

static size_t plan_bytes(int64_t segments, int64_t kh, int64_t quads, int64_t period) {
  const size_t rows = (size_t)(segments * kh), gathers = rows * (size_t)quads;
  return align64(sizeof(dw_plan)) + align64(2 * sizeof(int32_t) * (size_t)segments) +
         align64(sizeof(int64_t) * rows) + 64 * gathers + align64(16 * (size_t)period) +
         64 * (size_t)period;
}

static dw_arrays plan_arrays(const dw_plan *p) {
  const size_t rows = (size_t)(p->segments * p->kh);
  /* Written while the plan is made, read after: one layout for both. */
  uint8_t *at = (uint8_t *)(uintptr_t)p + align64(sizeof(dw_plan));
  dw_arrays a;
  a.first = (int32_t *)at;
  a.count = a.first + p->segments;
  at += align64(2 * sizeof(int32_t) * (size_t)p->segments);
  a.start = (int64_t *)at;
  at += align64(sizeof(int64_t) * rows);
  a.index = (uint8_t(*)[64])at;
  at += 64 * rows * (size_t)p->quads;
  a.chunk_from = (int64_t *)at;
  a.chunk_keep = (uint64_t *)(a.chunk_from + p->period);
  at += align64(16 * (size_t)p->period);
  a.chunk_index = (uint8_t(*)[64])at;
  return a;
}

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    const int64_t t = a % b;
    a = b, b = t;
  }
  return a;
}

typedef struct dw_geometry {
  int64_t kh, kw, sh, sw, dh, dw, h, w, ph, pw, oh, ow;
} dw_geometry;

/* The stage's byte (from its first row's first) that tap (a, b) of
 * output pixel (y, x) reads: padding columns are the gaps between rows. */
static inline int64_t tap_byte(const dw_geometry *d, int64_t y, int64_t x, int64_t a, int64_t b) {
  return (y * d->sh + a * d->dh - d->ph) * (d->w + d->pw) + x * d->sw + b * d->dw - d->pw;
}

/* One period's segments with windows of `window` bytes: the number of
 * segments, or -1 when a pixel's taps alone spread wider or there are too
 * many. Fills first, count and start when `a` is not NULL. Each segment
 * grows a pixel at a time while every kernel row's bytes [lo, hi] (lo >
 * hi: none, all padding columns) fit one window. */
static int64_t cut_period(const dw_geometry *d, int64_t pixels, int64_t window,
                          const dw_arrays *arrays) {
  int64_t segments = 0;
  for (int64_t q = 0; q < pixels;) {
    int64_t lo[kPlanMaxRowQuads], hi[kPlanMaxRowQuads];
    for (int64_t a = 0; a < d->kh; ++a)
      lo[a] = INT64_MAX, hi[a] = INT64_MIN;
    int64_t n = 0, y = q / d->ow, x = q % d->ow;
    while (n < 16 && q + n < pixels) {
      int64_t new_lo[kPlanMaxRowQuads], new_hi[kPlanMaxRowQuads];
      bool fits = true;
      for (int64_t a = 0; a < d->kh && fits; ++a) {
        new_lo[a] = lo[a], new_hi[a] = hi[a];
        for (int64_t b = 0; b < d->kw; ++b) {
          const int64_t at = tap_byte(d, y, x, a, b);
          new_lo[a] = at < new_lo[a] ? at : new_lo[a];
          new_hi[a] = at > new_hi[a] ? at : new_hi[a];
        }
        fits = new_hi[a] - new_lo[a] < window;
      }
      if (!fits)
        break;
      for (int64_t a = 0; a < d->kh; ++a)
        lo[a] = new_lo[a], hi[a] = new_hi[a];
      ++n;
      if (++x == d->ow)
        x = 0, ++y;
    }
    if (n == 0 || segments == kPlanMaxSegments)
      return -1;
    if (arrays) {
      arrays->first[segments] = (int32_t)q;
      arrays->count[segments] = (int32_t)n;
      for (int64_t a = 0; a < d->kh; ++a)
        arrays->start[segments * d->kh + a] = lo[a];
    }
    ++segments;
    q += n;
  }
  return segments;
}

/* kRefused: the row kernel is better or the geometry is not taken (the
 * same for every layer of this geometry); kNoRoom: the plan or its stage
 * does not fit the memory given. */
typedef enum { kMade, kRefused, kNoRoom } plan_result;

static plan_result make_plan(void *plan, size_t bytes, size_t stage_bytes, const int64_t *g,
                             int64_t h, int64_t w, int64_t ph, int64_t pw, uint8_t zx, int64_t oh,
                             int64_t ow, bool force) {
  dw_plan *p = plan;
  const dw_geometry d = {g[0], g[1], g[2], g[3], g[4], g[5], h, w, ph, pw, oh, ow};
  const int64_t quads = (d.kw + 3) / 4;
  if (!p || ((uintptr_t)p & 63) || quads > 2 || d.kh * quads > kPlanMaxRowQuads || oh < 1 ||
      ow < 1 || h < 1 || w < 1 || h * w >= (int64_t)1 << 40)
    return kRefused;
  int64_t rows = 16 / gcd(ow, 16); /* ow * rows: a multiple of 16 */
  rows = rows < oh ? rows : oh;
  const int64_t pixels = rows * ow;
  const int64_t periods = (oh + rows - 1) / rows;
  const int64_t ws = w + pw, narrow = ws < 64;
  const int64_t chunks = narrow ? (h * ws + 63) / 64 : 0;
  const int64_t common = gcd(ws, 64), period = narrow ? ws / common : 0;
  /* Estimated instructions, against the row kernel (the vbmi table's
   * depthwise_direct), which reads the input in place but spends a vector
   * on every 16 pixels of a row (about ten for the epilogue and three per
   * kernel row and quad) and works out masks per block of rows (four
   * vectors of one row, or one vector of four rows). A segment costs as
   * much plus the loads of its gathers' indices (a second window: one
   * more load a kernel row); staging costs about twelve per 64 bytes,
   * which strided layers pay for several rows per output row. The plan
   * only where it saves a tenth. */
  const int64_t nv = (ow + 15) / 16, per_vector = 10 + d.kh * (1 + 2 * quads);
  const int64_t row_kernel =
      nv >= 3 ? oh * nv * per_vector + oh * ((ow + 63) / 64) * 40
              : oh * nv * per_vector + (oh + (nv == 2 ? 1 : 3)) / (nv == 2 ? 2 : 4) * 20;
  const int64_t staging = 12 * (narrow ? chunks : h * ((w + 63) / 64));
  const int64_t least = periods * ((pixels + 15) / 16) * (per_vector + d.kh) + staging;
  if (!force && 10 * least > 9 * row_kernel) /* not even with full segments */
    return kRefused;
  /* One window or two: whichever costs fewer. */
  const int64_t one = cut_period(&d, pixels, 64, NULL), two = cut_period(&d, pixels, 128, NULL);
  if (one < 0 && two < 0)
    return kRefused;
  const int64_t cost_one = one * (per_vector + d.kh), cost_two = two * (per_vector + 2 * d.kh);
  const bool two_windows = one < 0 || (two >= 0 && cost_two < cost_one);
  const int64_t window = two_windows ? 128 : 64, segments = two_windows ? two : one;
  if (!force && 10 * (periods * (two_windows ? cost_two : cost_one) + staging) > 9 * row_kernel)
    return kRefused;
  const size_t need = plan_bytes(segments, d.kh, quads, period);
  if (need > bytes)
    return kNoRoom;
  *p = (dw_plan){.kh = d.kh, .kw = d.kw, .quads = quads, .two = two_windows, .segments = segments,
                 .h = h, .w = w, .ws = w + pw, .ohow = oh * ow, .period_out = pixels,
                 .period_in = rows * d.sh * (w + pw), .periods = periods,
                 .chunks = chunks, .period = period, .period_rows = 64 / common,
                 .bytes = (int64_t)need, .zx = zx};
  const dw_arrays arrays = plan_arrays(p);
  cut_period(&d, pixels, window, &arrays);
  /* The gathers: byte 4t + b of quad j is tap 4j + b of the segment's
   * pixel t. */
  memset(arrays.index, 0, 64 * (size_t)(segments * d.kh * quads));
  for (int64_t s = 0; s < segments; ++s) {
    for (int64_t t = 0, y = arrays.first[s] / ow, x = arrays.first[s] % ow; t < arrays.count[s]; ++t) {
      for (int64_t a = 0; a < d.kh; ++a)
        for (int64_t tap = 0; tap < d.kw; ++tap) {
          const int64_t i = (s * d.kh + a) * quads + tap / 4, byte = 4 * t + tap % 4;
          arrays.index[i][byte] = (uint8_t)(tap_byte(&d, y, x, a, tap) - arrays.start[s * d.kh + a]);
        }
      if (++x == ow)
        x = 0, ++y;
    }
  }
  /* The margins: every window of every period, the last one's rows past
   * the output included, lies in [-front, h * ws + back). */
  int64_t lo = 0, hi = 0;
  for (int64_t i = 0; i < segments * d.kh; ++i) {
    lo = arrays.start[i] < lo ? arrays.start[i] : lo;
    hi = arrays.start[i] + window > hi ? arrays.start[i] + window : hi;
  }
  p->taps_from_weights = d.kh * d.kw * 4 <= 128;
  for (int64_t a = 0; a < d.kh; ++a)
    for (int64_t j = 0; j < quads; ++j) {
      p->taps_keep[a * quads + j] = 0;
      for (int64_t byte = 0; byte < 64; ++byte) {
        const int64_t tap = 4 * j + byte % 4;
        p->taps_index[a * quads + j][byte] = tap < d.kw ? (uint8_t)((a * d.kw + tap) * 4) : 0;
        p->taps_keep[a * quads + j] |= (uint64_t)(tap < d.kw) << byte;
      }
    }
  /* One period of chunks: stage byte o is row o / ws, column o % ws (a
   * gap from w on), which is input byte row * w + column; a chunk's input
   * bytes lie in one 64-byte load (it has fewer than 64 of them, in
   * order). Every chunk of a period has a row start, so `from` is set. */
  for (int64_t c = 0, row = 0, column = 0; c < period; ++c) {
    int64_t from = -1;
    uint64_t keep = 0;
    for (int64_t i = 0; i < 64; ++i) {
      arrays.chunk_index[c][i] = 0;
      if (column < w) {
        if (from < 0)
          from = row * w + column;
        arrays.chunk_index[c][i] = (uint8_t)(row * w + column - from);
        keep |= 1ull << i;
      }
      if (++column == ws)
        column = 0, ++row;
    }
    arrays.chunk_from[c] = from;
    arrays.chunk_keep[c] = keep;
  }
  const int64_t last = h * ws - 64 * (chunks - 1); /* the last chunk's bytes in the rows */
  p->last_keep = narrow ? (last >= 64 ? ~0ull : ~0ull >> (64 - last)) : 0;
  p->front = (int64_t)align64((size_t)-lo);
  hi += (p->periods - 1) * p->period_in;
  hi = hi > 64 * chunks ? hi : 64 * chunks;
  if (!narrow) /* row copies: whole 64-byte pieces (the last may overwrite the next row's start) */
    hi = hi > (h - 1) * ws + (w + 63) / 64 * 64 ? hi : (h - 1) * ws + (w + 63) / 64 * 64;
  p->back = hi > h * p->ws ? hi - h * p->ws : 0;
  return (size_t)(p->front + h * p->ws + p->back) <= stage_bytes ? kMade : kNoRoom;
}

/* Plans by geometry, for the life of the process: a model runs the same
 * layers again and again, and working a plan out (or finding that the
 * row kernel is better) costs as much as a small layer. Few entries (a
 * model's distinct depthwise geometries), each a few kilobytes; a full
 * table just plans again each time. */
enum { kPlanCacheEntries = 64, kPlanKey = 12 };

static struct {
  int64_t key[kPlanKey];
  const dw_plan *plan; /* NULL: the row kernel takes it */
} plan_cache[kPlanCacheEntries];
static int plan_cache_used;
static pthread_mutex_t plan_cache_lock = PTHREAD_MUTEX_INITIALIZER;

const void *cuvil_qdepthwise_vbmi_prepare(void *memory, size_t bytes, size_t stage_bytes,
                                          const int64_t *g, int64_t h, int64_t w, int64_t ph,
                                          int64_t pw, uint8_t zx, int64_t oh, int64_t ow,
                                          bool force) {
  if (force) /* tests: a plan wherever the geometry is taken, not kept */
    return make_plan(memory, bytes, stage_bytes, g, h, w, ph, pw, zx, oh, ow, true) == kMade ? memory
                                                                                          : NULL;
  const int64_t key[kPlanKey] = {g[0], g[1], g[2], g[3], g[4], g[5], h, w, ph, pw, zx, oh * ((int64_t)1 << 32) + ow};
  pthread_mutex_lock(&plan_cache_lock);
  for (int i = 0; i < plan_cache_used; ++i)
    if (!memcmp(plan_cache[i].key, key, sizeof key)) {
      const dw_plan *found = plan_cache[i].plan;
      pthread_mutex_unlock(&plan_cache_lock);
      return found && (size_t)(found->front + found->h * found->ws + found->back) <= stage_bytes
                 ? found
                 : NULL;
    }
  pthread_mutex_unlock(&plan_cache_lock);
  /* Worked out in the caller's memory, then kept in memory of its own. */
  const plan_result result = make_plan(memory, bytes, stage_bytes, g, h, w, ph, pw, zx, oh, ow, false);
  const bool made = result == kMade;
  void *kept = NULL;
  if (made) {
    const size_t size = (size_t)((const dw_plan *)memory)->bytes;
    kept = aligned_alloc(64, align64(size));
    if (kept)
      memcpy(kept, memory, size);
  }
  pthread_mutex_lock(&plan_cache_lock);
  if (plan_cache_used < kPlanCacheEntries && (kept || result == kRefused)) {
    memcpy(plan_cache[plan_cache_used].key, key, sizeof key);
    plan_cache[plan_cache_used++].plan = kept;
    kept = NULL; /* the table owns it */
  }
  pthread_mutex_unlock(&plan_cache_lock);
  free(kept);
  return made ? memory : NULL;
}

/* What the segments' loops read, as locals: the output is bytes, which may
 * alias anything, so fields behind pointers would be loaded again after
 * every store. */
typedef struct dw_walk {
  dw_arrays arrays;
  const uint8_t *in;
  int64_t ohow;
  __m512i zero, lo, hi, offset;
  __m512 multiplier, bias;
  cuvil_qepilogue e;
} dw_walk;

/* NS segments of one period at once (independent sums: the dot products'
 * and the epilogue's latencies overlap). */
static inline __attribute__((always_inline)) void run_segments(
    const dw_walk *k, int64_t shift, int64_t first, int64_t s0, const int NS, const __m512i *taps,
    void *out, const int64_t KH, const int64_t Q, const int TWO) {
  __m512i acc[4]; /* from the epilogue's offset (one addition less a segment) */
  for (int i = 0; i < NS; ++i)
    acc[i] = k->offset;
  for (int64_t a = 0; a < KH; ++a)
    for (int i = 0; i < NS; ++i) {
      const int64_t s = s0 + i;
      const uint8_t *window = k->in + shift + k->arrays.start[s * KH + a];
      const __m512i w0 = _mm512_loadu_si512(window);
      const __m512i w1 = TWO ? _mm512_loadu_si512(window + 64) : w0;
      for (int64_t j = 0; j < Q; ++j) {
        const __m512i index = _mm512_load_si512(k->arrays.index[(s * KH + a) * Q + j]);
        const __m512i gathered =
            TWO ? _mm512_permutex2var_epi8(w0, index, w1) : _mm512_permutexvar_epi8(index, w0);
        acc[i] = _mm512_dpbusd_epi32(acc[i], gathered, taps[a * Q + j]);
      }
    }
  for (int i = 0; i < NS; ++i) {
    const int64_t at = first + k->arrays.first[s0 + i];
    if (at >= k->ohow) /* the last period's rows past the output */
      break;
    const int64_t left = k->ohow - at, n = left < k->arrays.count[s0 + i] ? left : k->arrays.count[s0 + i];
    requantize_store(acc[i], _mm512_setzero_si512(), k->multiplier, k->bias, k->zero, k->lo, k->hi,
                     &k->e, out, at, n);
  }
}

static inline __attribute__((always_inline)) void run_plan(const dw_plan *p, const uint8_t *in,
                                                           const __m512i *taps,
                                                           const cuvil_qepilogue *e, void *out,
                                                           const int64_t KH, const int64_t Q,
                                                           const int TWO) {
  const dw_walk k = {plan_arrays(p),
                     in,
                     p->ohow,
                     _mm512_set1_epi32(e->y_zero),
                     _mm512_set1_epi32(e->y_min),
                     _mm512_set1_epi32(e->y_max),
                     _mm512_set1_epi32(e->offset[0]),
                     _mm512_set1_ps(e->multiplier[0]),
                     e->bias ? _mm512_set1_ps(e->bias[0]) : _mm512_setzero_ps(),
                     *e};
  const int64_t periods = p->periods, segments = p->segments, period_in = p->period_in,
                period_out = p->period_out;
  for (int64_t t = 0; t < periods; ++t) {
    const int64_t shift = t * period_in, first = t * period_out;
    int64_t s = 0;
    for (; s + 4 <= segments; s += 4)
      run_segments(&k, shift, first, s, 4, taps, out, KH, Q, TWO);
    for (; s < segments; ++s)
      run_segments(&k, shift, first, s, 1, taps, out, KH, Q, TWO);
  }
}

void cuvil_qdepthwise_vbmi_run(const void *plan, uint8_t *stage, bool fresh, const uint8_t *input,
                               const int8_t *weights, const cuvil_qepilogue *e, void *out) {
  const dw_plan *p = plan;
  /* The margins (and the gaps between wide rows) once per run of planes;
   * then the plane: its chunks, gaps included, or its rows. */
  const int64_t h = p->h, w = p->w, ws = p->ws;
  if (fresh) {
    memset(stage, p->zx, (size_t)p->front);
    if (p->chunks)
      memset(stage + p->front + h * ws, p->zx, (size_t)p->back);
    else
      memset(stage + p->front, p->zx, (size_t)(h * ws + p->back));
  }
  uint8_t *plane = stage + p->front;
  const __m512i zxv = _mm512_set1_epi8((char)p->zx);
  if (p->chunks) {
    const dw_arrays arrays = plan_arrays(p);
    const int64_t chunks = p->chunks, period = p->period, step = p->period_rows * w, hw = h * w;
    for (int64_t c0 = 0, shift = 0; c0 < chunks; c0 += period, shift += step)
      for (int64_t i = 0; i < period && c0 + i < chunks; ++i) {
        /* Nothing past the plane is read (the input may end there). */
        const int64_t from = shift + arrays.chunk_from[i], inside = hw - from;
        const __mmask64 load = (__mmask64)(inside >= 64 ? ~0ull : inside <= 0 ? 0 : ~0ull >> (64 - inside));
        const __mmask64 keep = (__mmask64)(arrays.chunk_keep[i] & (c0 + i == chunks - 1 ? p->last_keep : ~0ull));
        _mm512_store_si512(plane + 64 * (c0 + i),
                           _mm512_mask_permutexvar_epi8(zxv, keep, _mm512_load_si512(arrays.chunk_index[i]),
                                                        _mm512_maskz_loadu_epi8(load, input + from)));
      }
  } else {
    /* Whole 64-byte pieces: a row's last one holds the zero point past
     * the row, over the gap and maybe the next row's start (which that
     * row's copy writes again) or the back margin. */
    const int64_t pieces = (w + 63) / 64;
    const __mmask64 rest = (__mmask64)(w % 64 ? ~0ull >> (64 - w % 64) : ~0ull);
    for (int64_t r = 0; r < h; ++r) {
      const uint8_t *from = input + r * w;
      uint8_t *to = plane + r * ws;
      for (int64_t i = 0; i + 1 < pieces; ++i)
        _mm512_storeu_si512(to + 64 * i, _mm512_loadu_si512(from + 64 * i));
      _mm512_storeu_si512(to + 64 * (pieces - 1),
                          _mm512_mask_loadu_epi8(zxv, rest, from + 64 * (pieces - 1)));
    }
  }
  /* Each kernel row's taps as words of 4 bytes (past the row: zero). */
  __m512i taps[kPlanMaxRowQuads];
  const int64_t row_bytes = p->kh * p->kw * 4;
  if (p->taps_from_weights) {
    const __mmask64 m0 = (__mmask64)(row_bytes >= 64 ? ~0ull : ~0ull >> (64 - row_bytes));
    const __mmask64 m1 = (__mmask64)(row_bytes <= 64 ? 0 : ~0ull >> (128 - row_bytes));
    const __m512i w0 = _mm512_maskz_loadu_epi8(m0, weights),
                  w1 = _mm512_maskz_loadu_epi8(m1, weights + 64);
    for (int64_t t = 0; t < p->kh * p->quads; ++t)
      taps[t] = _mm512_maskz_permutex2var_epi8((__mmask64)p->taps_keep[t], w0,
                                               _mm512_loadu_si512(p->taps_index[t]), w1);
  } else {
    for (int64_t a = 0; a < p->kh; ++a)
      for (int64_t j = 0; j < p->quads; ++j) {
        uint32_t word = 0;
        for (int b = 0; b < 4; ++b) {
          const int64_t tap = 4 * j + b;
          const int8_t w = tap < p->kw ? weights[(a * p->kw + tap) * 4] : 0;
          word |= (uint32_t)(uint8_t)w << (8 * b);
        }
        taps[a * p->quads + j] = _mm512_set1_epi32((int32_t)word);
      }
  }
  const uint8_t *in = plane;
  if (p->kh == 3 && p->quads == 1 && !p->two)
    run_plan(p, in, taps, e, out, 3, 1, 0);
  else if (p->kh == 3 && p->quads == 1)
    run_plan(p, in, taps, e, out, 3, 1, 1);
  else if (p->two)
    run_plan(p, in, taps, e, out, p->kh, p->quads, 1);
  else
    run_plan(p, in, taps, e, out, p->kh, p->quads, 0);
}

/*--- Words of adjacent columns ----------------------------------------------------*/

/* 16 words a step: bytes s x + b of a 64-byte load, by one vpermb. */
void cuvil_qcolumn_words_vbmi(uint32_t *out, const uint8_t *row, int64_t n, int64_t s) {
  uint8_t pick[64];
  for (int i = 0; i < 64; ++i)
    pick[i] = (uint8_t)(s * (i / 4) + i % 4);
  const __m512i index = _mm512_loadu_si512(pick);
  for (int64_t x = 0; x < n; x += 16) {
    const __m512i words = _mm512_permutexvar_epi8(index, _mm512_loadu_si512(row + s * x));
    const int64_t left = n - x;
    _mm512_mask_storeu_epi32(out + x, (__mmask16)(left >= 16 ? 0xffff : (1u << left) - 1), words);
  }
}

/*--- 8-bit max pooling ------------------------------------------------------------*/

/* An output row in chunks of up to 64 outputs whose windows span at most
 * 128 input bytes: the chunk's columns are loaded from each of the
 * window's input rows (masked at the row's ends, where the padding's least
 * value is merged in) and their maximum taken, then each tap of the window
 * is one vpermt2b of those 128 column maxima (output i reads column
 * i sw + b dw). Signed bytes are flipped into unsigned order (x ^ 0x80). */
bool cuvil_qmax_pool_vbmi(const uint8_t *in, int64_t h, int64_t w, uint8_t *out, int64_t oh,
                          int64_t ow, const int64_t *window, uint8_t flip) {
  const int64_t kh = window[0], kw = window[1], sh = window[2], sw = window[3], ph = window[4],
                pw = window[5], dh = window[6], dw = window[7];
  const int64_t reach = (kw - 1) * dw;
  if (kw < 1 || sw < 1 || reach > 127 || (127 - reach) / sw + 1 < 16)
    return false;
  const int64_t chunk = (127 - reach) / sw + 1 < 64 ? (127 - reach) / sw + 1 : 64;
  uint8_t first[64];
  for (int i = 0; i < 64; ++i)
    first[i] = (uint8_t)(i * sw);
  const __m512i lane_columns = _mm512_loadu_si512(first), vflip = _mm512_set1_epi8((char)flip);
  for (int64_t oy = 0; oy < oh; ++oy) {
    uint8_t *o = out + oy * ow;
    for (int64_t ox0 = 0; ox0 < ow; ox0 += chunk) {
      const int64_t count = ow - ox0 < chunk ? ow - ox0 : chunk;
      const int64_t start = ox0 * sw - pw, span = (count - 1) * sw + reach + 1;
      const __mmask64 m0 = column_mask(start, w) & column_mask(0, span),
                      m1 = column_mask(start + 64, w) & column_mask(64, span);
      __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t iy = oy * sh - ph + ky * dh;
        if (iy < 0 || iy >= h)
          continue;
        /* Masked loads do not touch the bytes outside the row. */
        const uintptr_t at = (uintptr_t)(in + iy * w) + (uintptr_t)start;
        lo = _mm512_max_epu8(lo, _mm512_xor_si512(_mm512_mask_loadu_epi8(vflip, m0, (const void *)at), vflip));
        hi = _mm512_max_epu8(hi, _mm512_xor_si512(_mm512_mask_loadu_epi8(vflip, m1, (const void *)(at + 64)), vflip));
      }
      __m512i best = _mm512_setzero_si512();
      for (int64_t b = 0; b < kw; ++b) {
        const __m512i index = _mm512_add_epi8(lane_columns, _mm512_set1_epi8((char)(b * dw)));
        best = _mm512_max_epu8(best, _mm512_permutex2var_epi8(lo, index, hi));
      }
      _mm512_mask_storeu_epi8(o + ox0, column_mask(0, count), _mm512_xor_si512(best, vflip));
    }
  }
  return true;
}

#else
const void *cuvil_qdepthwise_vbmi_prepare(void *memory, size_t bytes, size_t stage_bytes,
                                          const int64_t *g, int64_t h, int64_t w, int64_t ph,
                                          int64_t pw, uint8_t zx, int64_t oh, int64_t ow,
                                          bool force) {
  (void)force, (void)memory, (void)bytes, (void)stage_bytes, (void)g, (void)h, (void)w, (void)ph, (void)pw,
      (void)zx, (void)oh, (void)ow;
  return NULL;
}
void cuvil_qdepthwise_vbmi_run(const void *plan, uint8_t *stage, bool fresh, const uint8_t *input,
                               const int8_t *weights, const cuvil_qepilogue *e, void *out) {
  (void)plan, (void)stage, (void)fresh, (void)input, (void)weights, (void)e, (void)out;
}
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
void cuvil_qcolumn_words_vbmi(uint32_t *out, const uint8_t *row, int64_t n, int64_t s) {
  (void)out, (void)row, (void)n, (void)s;
}
bool cuvil_qmax_pool_vbmi(const uint8_t *in, int64_t h, int64_t w, uint8_t *out, int64_t oh,
                          int64_t ow, const int64_t *window, uint8_t flip) {
  (void)in, (void)h, (void)w, (void)out, (void)oh, (void)ow, (void)window, (void)flip;
  return false;
}
#endif
