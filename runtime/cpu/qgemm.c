/*===- runtime/cpu/qgemm.c - int8 convolution and linear layers -----------===*
 *
 * cuvil_rt_qconv2d_u8s8: the input is first rewritten into the workspace
 * with its zero point around it and 4 channels interleaved (one 32-bit
 * word per pixel, what vpdpbusd/sdot take); then for each image, group and
 * tile of up to CUVIL_QCONV_NP output pixels the tile's patches are copied
 * once into the calling thread's scratch as [Kp/4][NP][4] bytes (K ordered
 * (kh, kw, channel): at stride 1 a run of words per output row), and every
 * output channel of the group runs over it, 8 at a time, writing u8 rows
 * of the NCHW output straight from the tile.
 * cuvil_rt_qlinear_u8s8: rows of x (padded to Kp in scratch when K is not
 * a multiple of 4) times weight panels of 16 output features.
 * Work is split over the call's threads by pixel tiles (and output-channel
 * chunks when there are few tiles).
 *
 *===----------------------------------------------------------------------===*/
#include "qgemm.h"
#include "schedule.h"

#include "cuvil/model_abi.h"

#include <pthread.h>
#include <string.h>

_Static_assert((int64_t)CUVIL_QCONV_NP * CUVIL_QCONV_MAX_KP <= CUVIL_THREAD_SCRATCH_BYTES &&
                   (int64_t)CUVIL_QLINEAR_MR * CUVIL_QCONV_MAX_KP <= CUVIL_THREAD_SCRATCH_BYTES,
               "a tile of patches (or of padded rows) must fit in a thread's scratch");

/* Y_ONEDNN: the biases follow the `count` multipliers (kernel_abi.h). */
static void onednn_epilogue(cuvil_qepilogue *e, const float *multipliers, int64_t count, int64_t first,
                            int64_t onednn) {
  if (!onednn)
    return;
  e->bias = multipliers + count + first;
}

static const cuvil_qkernels *best_qkernels;
static pthread_once_t best_qkernels_once = PTHREAD_ONCE_INIT;

static bool usable(const char *feature) {
  return cuvil_cpu_detects_feature(feature) && !cuvil_cpu_feature_hidden_for_test(feature);
}

static void choose_qkernels(void) {
  const cuvil_qkernels *k = NULL;
  if (cuvil_qkernels_avx512_vnni() && usable("avx512f") && usable("avx512bw") && usable("avx512vl") &&
      usable("avx512vnni"))
    k = usable("avx512vbmi") ? cuvil_qkernels_avx512_vnni_vbmi() : cuvil_qkernels_avx512_vnni();
  if (!k && cuvil_qkernels_neon_dotprod() && usable("dotprod"))
    k = cuvil_qkernels_neon_dotprod();
  best_qkernels = k ? k : cuvil_qkernels_generic();
}

static const cuvil_qkernels *test_qkernels;

const cuvil_qkernels *cuvil_qkernels_best(void) {
  if (test_qkernels)
    return test_qkernels;
  pthread_once(&best_qkernels_once, choose_qkernels);
  return best_qkernels;
}

void cuvil_qkernels_use_for_test(const cuvil_qkernels *kernels) { test_qkernels = kernels; }

static int depthwise_plans = 0;

void cuvil_qdepthwise_plans_for_test(int mode) { depthwise_plans = mode; }

static bool qconv_grid_enabled = true;

void cuvil_qconv_grid_for_test(bool enabled) { qconv_grid_enabled = enabled; }

static bool qconv_columns_enabled = true;

void cuvil_qconv_columns_for_test(bool enabled) { qconv_columns_enabled = enabled; }

/*--- Convolution -----------------------------------------------------------------*/

typedef struct qconv_job {
  const int64_t *q;
  const uint8_t *input;
  const int8_t *weights;
  const int32_t *offset;
  const float *multiplier;
  uint8_t *workspace; /* the input, padded, 4 channels interleaved */
  void *output;       /* u8, or f32 with Y_FLOAT */
  const cuvil_qkernels *kernels;
  int64_t tiles, group_tiles, tile_groups, chunks, chunk_rows, kp, quads, hp, wp;
  int direct_b; /* the tiles read the workspace itself (1x1, stride 1, unpadded) */
  void *exec;
  float *scratch; /* set for runs on this thread (cuvil_run_items) */
  const void *depthwise_plan; /* the kernels' depthwise plan, read by every thread */
  /* On the padded grid (conv_tile_grid): the tiles read the workspace at
   * each tap's offset, over grid_pixels positions, gw a row; with stride
   * `phases` > 1 the workspace holds each quad's plane as phases x phases
   * planes of (hp / phases) x gw words. */
  int grid;
  int64_t grid_pixels, phases, gw;
  /* Words of 4 adjacent columns of one channel (cuvil_qconv_column_quads):
   * that many a kernel row, 0 for channel quads. The workspace then holds
   * each image's channels, their S row phases of hp / S rows of gw words. */
  int64_t column_quads;
} qconv_job;

/* Element `at` of the output (u8, or f32 with Y_FLOAT). */
static void *out_at(const qconv_job *j, int64_t at) {
  return j->q[CUVIL_QCONV_Y_FLOAT] ? (void *)((float *)j->output + at)
                                   : (void *)((uint8_t *)j->output + at);
}

/* The epilogue of output channels from `first` on (the sums of y_float
 * layers dequantized, else requantized). */
static cuvil_qepilogue conv_epilogue(const qconv_job *j, int64_t first, int64_t y_float) {
  const int64_t *q = j->q;
  cuvil_qepilogue e = {j->offset + first, j->multiplier + first, (int32_t)q[CUVIL_QCONV_Y_ZERO],
                       (int32_t)q[CUVIL_QCONV_Y_MIN], (int32_t)q[CUVIL_QCONV_Y_MAX], (int32_t)y_float,
                       NULL};
  onednn_epilogue(&e, j->multiplier, q[CUVIL_QCONV_COUT], first, q[CUVIL_QCONV_Y_ONEDNN]);
  return e;
}

/* One (image, group, quad) of the workspace: 4 channel planes interleaved
 * into 32-bit words, the zero point around them (and in the lanes of
 * channels past the group's). */
static void interleave_body(void *closure, int64_t begin, int64_t end) {
  const qconv_job *j = closure;
  const int64_t *q = j->q;
  const int64_t C = q[CUVIL_QCONV_C], H = q[CUVIL_QCONV_H], W = q[CUVIL_QCONV_W];
  const int64_t groups = q[CUVIL_QCONV_GROUPS], cg = C / groups;
  const int64_t PH = q[CUVIL_QCONV_PH], PW = q[CUVIL_QCONV_PW];
  const uint8_t zx = (uint8_t)q[CUVIL_QCONV_X_ZERO];
  const uint32_t zero_word = zx * 0x01010101u;
  for (int64_t item = begin; item < end; ++item) {
    int64_t quad = item % j->quads, ng = item / j->quads;
    int64_t g = ng % groups, n = ng / groups;
    uint32_t *dst = (uint32_t *)(j->workspace + item * j->hp * j->wp * 4);
    const uint8_t *planes[4];
    for (int l = 0; l < 4; ++l) {
      int64_t c = quad * 4 + l;
      planes[l] = c < cg ? j->input + ((n * C + g * cg + c) * H) * W : NULL;
    }
    if (PH == 0 && PW == 0 && planes[3] && j->kernels->interleave_row && j->phases == 1) {
      /* No padding: the planes are one row each. */
      j->kernels->interleave_row(dst, planes[0], planes[1], planes[2], planes[3], H * W);
      continue;
    }
    /* Phases: each padded row is made in the thread's scratch, then its
     * columns go to their phases' rows. Channels past the group's (the
     * last quad of 3 channels, say) read a row of the zero point there,
     * so that every row takes the vector interleave. */
    const int64_t S = j->phases, phase_words = j->hp / S * j->gw;
    uint8_t *scratch = (uint8_t *)(j->scratch ? (void *)j->scratch : cuvil_thread_pool_scratch(j->exec));
    uint32_t *staged = S > 1 ? (uint32_t *)scratch : NULL;
    const uint8_t *zero_row = NULL;
    if (!planes[3] && j->kernels->interleave_row && W <= (int64_t)CUVIL_THREAD_SCRATCH_BYTES / 2 - j->wp * 4) {
      uint8_t *row = scratch + j->wp * 4;
      memset(row, zx, (size_t)W);
      zero_row = row;
    }
    for (int64_t y = 0; y < j->hp; ++y) {
      uint32_t *row = staged ? staged : dst + y * j->wp;
      int64_t ih = y - PH;
      if (ih < 0 || ih >= H) {
        for (int64_t x = 0; x < j->wp; ++x)
          row[x] = zero_word;
      } else {
        for (int64_t x = 0; x < PW; ++x)
          row[x] = row[j->wp - 1 - x] = zero_word;
        const uint8_t *r0 = planes[0] ? planes[0] + ih * W : zero_row;
        const uint8_t *r1 = planes[1] ? planes[1] + ih * W : zero_row;
        const uint8_t *r2 = planes[2] ? planes[2] + ih * W : zero_row;
        const uint8_t *r3 = planes[3] ? planes[3] + ih * W : zero_row;
        uint32_t *out = row + PW;
        if (r3 && j->kernels->interleave_row) { /* all four channels: the common case */
          j->kernels->interleave_row(out, r0, r1, r2, r3, W);
        } else if (r3) {
          for (int64_t x = 0; x < W; ++x)
            out[x] = (uint32_t)r0[x] | (uint32_t)r1[x] << 8 | (uint32_t)r2[x] << 16 | (uint32_t)r3[x] << 24;
        } else {
          for (int64_t x = 0; x < W; ++x)
            out[x] = (uint32_t)(r0 ? r0[x] : zx) | (uint32_t)(r1 ? r1[x] : zx) << 8 |
                     (uint32_t)(r2 ? r2[x] : zx) << 16 | (uint32_t)zx << 24;
        }
      }
      if (staged && S == 2 && j->kernels->split_row2) {
        uint32_t *to = dst + (y % 2) * 2 * phase_words + y / 2 * j->gw;
        j->kernels->split_row2(to, to + phase_words, staged, j->wp);
      } else if (staged) /* column x to phase (y % S, x % S), row y / S, word x / S */
        for (int64_t c = 0; c < S; ++c) {
          uint32_t *to = dst + ((y % S) * S + c) * phase_words + y / S * j->gw;
          for (int64_t x = c, X = 0; x < j->wp; x += S, ++X)
            to[X] = staged[x];
        }
    }
  }
}

/* One (image, channel) of the column-word workspace: each padded row
 * (the zero point around the input row, staged in the thread's scratch)
 * as the words of 4 adjacent columns at every S-th column, into its row
 * phase. */
static void column_body(void *closure, int64_t begin, int64_t end) {
  const qconv_job *j = closure;
  const int64_t *q = j->q;
  const int64_t H = q[CUVIL_QCONV_H], W = q[CUVIL_QCONV_W], PH = q[CUVIL_QCONV_PH],
                PW = q[CUVIL_QCONV_PW], S = j->phases, gw = j->gw, phase_rows = j->hp / S;
  const uint8_t zx = (uint8_t)q[CUVIL_QCONV_X_ZERO];
  uint8_t *staged = (uint8_t *)(j->scratch ? (void *)j->scratch : cuvil_thread_pool_scratch(j->exec));
  /* every word's 4 bytes, and a vector's reach */
  const int64_t staged_bytes = (S * gw > PW + W ? S * gw : PW + W) + 64;
  memset(staged, zx, (size_t)staged_bytes);
  for (int64_t item = begin; item < end; ++item) {
    const uint8_t *plane = j->input + item * H * W;
    uint32_t *dst = (uint32_t *)j->workspace + item * j->hp * gw;
    for (int64_t y = 0; y < j->hp; ++y) {
      uint32_t *row = dst + ((y % S) * phase_rows + y / S) * gw;
      const int64_t ih = y - PH;
      if (ih < 0 || ih >= H) {
        for (int64_t x = 0; x < gw; ++x)
          row[x] = zx * 0x01010101u;
        continue;
      }
      memcpy(staged + PW, plane + ih * W, (size_t)W);
      if (j->kernels->column_words)
        j->kernels->column_words(row, staged, gw, S);
      else
        for (int64_t x = 0; x < gw; ++x)
          row[x] = (uint32_t)staged[S * x] | (uint32_t)staged[S * x + 1] << 8 |
                   (uint32_t)staged[S * x + 2] << 16 | (uint32_t)staged[S * x + 3] << 24;
    }
  }
}

/* The weights from K (kh, kw, channel quad) to (channel, kh, column word):
 * byte b of word w of row kh is tap kw = 4 w + b (0 past the row). */
static void repack_column_weights(const qconv_job *j, int8_t *to) {
  const int64_t *q = j->q;
  const int64_t C = q[CUVIL_QCONV_C], KH = q[CUVIL_QCONV_KH], KW = q[CUVIL_QCONV_KW];
  const int64_t kp = cuvil_qconv_kp(q), quads4 = 4 * cuvil_qconv_quads(q), nq = j->column_quads;
  for (int64_t co = 0; co < q[CUVIL_QCONV_COUT]; ++co) {
    const int8_t *from = j->weights + co * kp;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t a = 0; a < KH; ++a)
        for (int64_t t = 0; t < 4 * nq; ++t)
          *to++ = t < KW ? from[(a * KW + t) * quads4 + c] : 0;
  }
}

void cuvil_qpack_patches_portable(const uint32_t *planes, int64_t plane_words, const int64_t *g,
                                  int64_t quads, int64_t sw, const cuvil_qsegments *s, uint32_t *b) {
  for (int64_t kh = 0; kh < g[0]; ++kh)
    for (int64_t kw = 0; kw < g[1]; ++kw)
      for (int64_t quad = 0; quad < quads; ++quad, b += CUVIL_QCONV_NP) {
        const uint32_t *plane = planes + quad * plane_words + kh * g[2] + kw * g[3];
        for (int64_t i = 0; i < s->count; ++i) {
          const uint32_t *src = plane + s->start[i];
          uint32_t *out = b + s->p[i];
          if (sw == 1) {
            memcpy(out, src, (size_t)s->n[i] * 4);
          } else {
            for (int64_t t = 0; t < s->n[i]; ++t)
              out[t] = src[t * sw];
          }
        }
      }
}

/* The patches of pixels [p0, p0 + np) of image n, group g into
 * b[Kp/4][NP][4]: for every (kh, kw, quad), the tile's pixels run along
 * output rows (segments), whose words in the padded workspace are
 * contiguous at stride 1. */
static void pack_patches(const qconv_job *j, int64_t n, int64_t g, int64_t p0, int64_t np,
                         uint8_t *b) {
  const int64_t *q = j->q;
  const int64_t OW = q[CUVIL_QCONV_OW], SH = q[CUVIL_QCONV_SH], SW = q[CUVIL_QCONV_SW];
  const int64_t groups = q[CUVIL_QCONV_GROUPS];
  const uint32_t *planes = (const uint32_t *)(j->workspace) + (n * groups + g) * j->quads * j->hp * j->wp;
  cuvil_qsegments s;
  s.count = 0;
  for (int64_t p = 0; p < np;) {
    int64_t pix = p0 + p, oh = pix / OW, ow = pix % OW;
    int64_t run = OW - ow < np - p ? OW - ow : np - p;
    s.p[s.count] = p;
    s.start[s.count] = oh * SH * j->wp + ow * SW; /* word of the window's corner */
    s.n[s.count++] = run;
    p += run;
  }
  const int64_t geometry[4] = {q[CUVIL_QCONV_KH], q[CUVIL_QCONV_KW], q[CUVIL_QCONV_DH] * j->wp,
                               q[CUVIL_QCONV_DW]};
  cuvil_qpack_fn pack = j->kernels->pack_patches ? j->kernels->pack_patches : cuvil_qpack_patches_portable;
  pack(planes, j->hp * j->wp, geometry, j->quads, SW, &s, (uint32_t *)b);
}

/* Work item `item` of a convolution: its chunk of output channels, its
 * group of tiles (rest: the image, group and tile group, which the chunks
 * of one group share), its image n, group g and tiles [t0, t1). */
static void place_item(const qconv_job *j, int64_t item, int64_t *chunk, int64_t *rest,
                       int64_t *n, int64_t *g, int64_t *t0, int64_t *t1) {
  const int64_t groups = j->q[CUVIL_QCONV_GROUPS];
  *chunk = item % j->chunks, *rest = item / j->chunks;
  const int64_t tg = *rest % j->tile_groups, ng = *rest / j->tile_groups;
  *g = ng % groups, *n = ng / groups;
  *t0 = tg * j->group_tiles;
  *t1 = *t0 + j->group_tiles < j->tiles ? *t0 + j->group_tiles : j->tiles;
}

/* qconv_body on the padded grid (stride 1): no patches; each tap and quad
 * is an offset into the interleaved planes (computed once per run, in the
 * thread's scratch), and each tile's outputs are the grid positions that
 * are not in the padding's columns. */
static void grid_body(const qconv_job *j, int64_t begin, int64_t end, int32_t *k4_offsets) {
  const int64_t *q = j->q;
  const int64_t groups = q[CUVIL_QCONV_GROUPS], cout = q[CUVIL_QCONV_COUT];
  const int64_t cog = cout / groups, OW = q[CUVIL_QCONV_OW], pixels = q[CUVIL_QCONV_OH] * OW;
  const int64_t KH = q[CUVIL_QCONV_KH], KW = q[CUVIL_QCONV_KW], wp = j->gw, S = j->phases;
  const int64_t phase_words = j->hp / S * wp;
  int64_t block_bytes; /* the planes of one (image, group) */
  if (j->column_quads) {
    /* K is (channel, kh, word): the channel's planes, the row's phase,
     * its row in the phase, and the word's 4 w columns (w 4 / S words). */
    for (int64_t c = 0, k4 = 0; c < q[CUVIL_QCONV_C]; ++c)
      for (int64_t a = 0; a < KH; ++a)
        for (int64_t w = 0; w < j->column_quads; ++w, ++k4) {
          const int64_t ra = a * q[CUVIL_QCONV_DH];
          k4_offsets[k4] = (int32_t)((c * j->hp * wp + ra % S * phase_words + ra / S * wp + w * 4 / S) * 4);
        }
    block_bytes = q[CUVIL_QCONV_C] * j->hp * wp * 4;
  } else {
    /* K is (kh, kw, quad): the quad's plane, the tap's phase in it (padded
     * row a dh past the window's, which is S times the output row), and
     * the tap's word in the phase. */
    for (int64_t a = 0, k4 = 0; a < KH; ++a)
      for (int64_t b = 0; b < KW; ++b)
        for (int64_t quad = 0; quad < j->quads; ++quad, ++k4) {
          const int64_t ra = a * q[CUVIL_QCONV_DH], cb = b * q[CUVIL_QCONV_DW];
          k4_offsets[k4] = (int32_t)((quad * j->hp * j->wp + (ra % S * S + cb % S) * phase_words +
                                      ra / S * wp + cb / S) * 4);
        }
    block_bytes = j->quads * j->hp * j->wp * 4;
  }
  for (int64_t item = begin; item < end; ++item) {
    int64_t chunk, rest, n, g, t0, t1;
    place_item(j, item, &chunk, &rest, &n, &g, &t0, &t1);
    const uint8_t *planes = j->workspace + (n * groups + g) * block_bytes;
    int64_t r0 = chunk * j->chunk_rows;
    int64_t r1 = r0 + j->chunk_rows < cog ? r0 + j->chunk_rows : cog;
    for (int64_t t = t0; t < t1; ++t) {
      /* The tile's positions by output row: position P is row P / wp,
       * column P % wp (an output pixel below OW). */
      const int64_t p0 = t * CUVIL_QCONV_NP;
      const int64_t np = j->grid_pixels - p0 < CUVIL_QCONV_NP ? j->grid_pixels - p0 : CUVIL_QCONV_NP;
      /* Rows of 16 or more (the grid's condition): 48 positions touch at
       * most 4 rows. */
      _Static_assert(CUVIL_QCONV_NP / 16 + 1 <= CUVIL_QGRID_MAX_SEGMENTS, "grid segments");
      cuvil_qgrid grid = {0, {0}, {0}};
      for (int64_t i = 0; i < np;) {
        const int64_t y = (p0 + i) / wp, x = (p0 + i) % wp;
        if (x >= OW) { /* the padding's columns */
          i += wp - x;
          continue;
        }
        const int64_t run = OW - x < np - i ? OW - x : np - i;
        grid.mask[grid.count] = (run >= 64 ? ~0ull : ((1ull << run) - 1)) << i;
        grid.base[grid.count++] = y * OW + x - i;
        i += run;
      }
      for (int64_t r = r0; r < r1; r += CUVIL_QCONV_MR) {
        int64_t rows = r1 - r < CUVIL_QCONV_MR ? r1 - r : CUVIL_QCONV_MR;
        int64_t co = g * cog + r;
        const cuvil_qepilogue e = conv_epilogue(j, co, q[CUVIL_QCONV_Y_FLOAT]);
        j->kernels->conv_tile_grid(j->kp, j->weights + co * j->kp, planes + p0 * 4, k4_offsets, rows,
                                   np, &grid, &e, out_at(j, (n * cout + co) * pixels), pixels);
      }
    }
  }
}

/* A work item: the channels of one chunk over a group of tiles whose
 * patches are packed side by side, so that each block of weight rows is
 * read from memory once for all of them. */
static void qconv_body(void *closure, int64_t begin, int64_t end) {
  const qconv_job *j = closure;
  const int64_t *q = j->q;
  const int64_t groups = q[CUVIL_QCONV_GROUPS], cout = q[CUVIL_QCONV_COUT];
  const int64_t cog = cout / groups, pixels = q[CUVIL_QCONV_OH] * q[CUVIL_QCONV_OW];
  const int64_t tile_bytes = j->kp * CUVIL_QCONV_NP;
  uint8_t *b = (uint8_t *)(j->scratch ? j->scratch : cuvil_thread_pool_scratch(j->exec));
  int64_t packed_item = -1;
  if (j->grid) {
    grid_body(j, begin, end, (int32_t *)b);
    return;
  }
  for (int64_t item = begin; item < end; ++item) {
    int64_t chunk, rest, n, g, t0, t1;
    place_item(j, item, &chunk, &rest, &n, &g, &t0, &t1);
    const uint8_t *direct = NULL; /* 1x1, stride 1, no padding: the workspace is the patches */
    if (j->direct_b)
      direct = j->workspace + (n * groups + g) * j->quads * j->hp * j->wp * 4;
    else if (packed_item != rest) { /* the chunks of one group share its patches */
      for (int64_t t = t0; t < t1; ++t) {
        int64_t p0 = t * CUVIL_QCONV_NP;
        pack_patches(j, n, g, p0, pixels - p0 < CUVIL_QCONV_NP ? pixels - p0 : CUVIL_QCONV_NP,
                     b + (t - t0) * tile_bytes);
      }
      packed_item = rest;
    }
    int64_t r0 = chunk * j->chunk_rows;
    int64_t r1 = r0 + j->chunk_rows < cog ? r0 + j->chunk_rows : cog;
    for (int64_t r = r0; r < r1; r += CUVIL_QCONV_MR) {
      int64_t rows = r1 - r < CUVIL_QCONV_MR ? r1 - r : CUVIL_QCONV_MR;
      int64_t co = g * cog + r;
      const cuvil_qepilogue e = conv_epilogue(j, co, q[CUVIL_QCONV_Y_FLOAT]);
      for (int64_t t = t0; t < t1; ++t) {
        int64_t p0 = t * CUVIL_QCONV_NP;
        int64_t np = pixels - p0 < CUVIL_QCONV_NP ? pixels - p0 : CUVIL_QCONV_NP;
        if (direct)
          j->kernels->conv_tile(j->kp, j->weights + co * j->kp, direct + p0 * 4, j->hp * j->wp * 4,
                                rows, np, &e, out_at(j, (n * cout + co) * pixels + p0), pixels);
        else
          j->kernels->conv_tile(j->kp, j->weights + co * j->kp, b + (t - t0) * tile_bytes,
                                CUVIL_QCONV_NP * 4, rows, np, &e,
                                out_at(j, (n * cout + co) * pixels + p0), pixels);
      }
    }
  }
}

/* Depthwise (one input and one output channel per group): per (image,
 * channel), the plane with its zero point around it in the workspace, then
 * row kernels over it; the taps are the weights' first lane of each quad. */
static void qdepthwise_body(void *closure, int64_t begin, int64_t end) {
  const qconv_job *j = closure;
  const int64_t *q = j->q;
  const int64_t C = q[CUVIL_QCONV_C], H = q[CUVIL_QCONV_H], W = q[CUVIL_QCONV_W];
  const int64_t OH = q[CUVIL_QCONV_OH], OW = q[CUVIL_QCONV_OW], KH = q[CUVIL_QCONV_KH],
                KW = q[CUVIL_QCONV_KW];
  const int64_t SH = q[CUVIL_QCONV_SH], PH = q[CUVIL_QCONV_PH], PW = q[CUVIL_QCONV_PW],
                DH = q[CUVIL_QCONV_DH];
  const uint8_t zx = (uint8_t)q[CUVIL_QCONV_X_ZERO];
  const int64_t geometry[6] = {KH, KW, SH, q[CUVIL_QCONV_SW], DH, q[CUVIL_QCONV_DW]};
  uint8_t *stage = j->depthwise_plan ? (uint8_t *)(j->scratch ? j->scratch : cuvil_thread_pool_scratch(j->exec))
                                     : NULL;
  for (int64_t item = begin; item < end; ++item) {
    int64_t c = item % C;
    uint8_t *plane = j->workspace + item * j->hp * j->wp;
    const uint8_t *src = j->input + item * H * W;
    const cuvil_qepilogue e = conv_epilogue(j, c, q[CUVIL_QCONV_Y_FLOAT]);
    if (j->depthwise_plan) {
      j->kernels->depthwise_run(j->depthwise_plan, stage, item == begin, src,
                                j->weights + c * j->kp, &e, out_at(j, item * OH * OW));
      continue;
    }
    float taps[CUVIL_QDEPTHWISE_MAX_TAPS];
    for (int64_t t = 0; t < KH * KW; ++t)
      taps[t] = (float)j->weights[c * j->kp + t * 4];
    /* Kernels that read the input itself need no padded copy. */
    if (j->kernels->depthwise_direct &&
        j->kernels->depthwise_direct(src, H, W, PH, PW, zx, OH, OW, geometry, taps, &e,
                                     out_at(j, item * OH * OW)))
      continue;
    for (int64_t y = 0; y < j->hp; ++y) {
      uint8_t *row = plane + y * j->wp;
      int64_t ih = y - PH;
      if (ih < 0 || ih >= H) {
        memset(row, zx, (size_t)j->wp);
        continue;
      }
      for (int64_t x = 0; x < PW; ++x) /* a pixel or two: no call */
        row[x] = row[PW + W + x] = zx;
      memcpy(row + PW, src + ih * W, (size_t)W);
    }
    j->kernels->depthwise_plane(plane, j->wp, OH, OW, geometry, taps, &e, out_at(j, item * OH * OW));
  }
}

void cuvil_rt_qconv2d_u8s8(const int64_t *q, const uint8_t *input, const int8_t *weights,
                           const int32_t *offset, const float *multiplier, uint8_t *workspace,
                           void *output) {
  const int64_t groups = q[CUVIL_QCONV_GROUPS];
  const int64_t cog = q[CUVIL_QCONV_COUT] / groups;
  const int64_t pixels = q[CUVIL_QCONV_OH] * q[CUVIL_QCONV_OW];
  const int64_t tiles = (pixels + CUVIL_QCONV_NP - 1) / CUVIL_QCONV_NP;
  qconv_job j = {q, input, weights, offset, multiplier, workspace, output, cuvil_qkernels_best(),
                 tiles, 1, tiles, 1, cog, cuvil_qconv_kp(q),
                 cuvil_qconv_quads(q), q[CUVIL_QCONV_H] + 2 * q[CUVIL_QCONV_PH],
                 q[CUVIL_QCONV_W] + 2 * q[CUVIL_QCONV_PW], 0, cuvil_rt_current_exec, NULL, NULL, 0, 0, 1, 0, 0};
  if (groups == q[CUVIL_QCONV_C] && groups == q[CUVIL_QCONV_COUT] &&
      q[CUVIL_QCONV_KH] * q[CUVIL_QCONV_KW] <= CUVIL_QDEPTHWISE_MAX_TAPS) {
    /* A plan the kernels work out once per layer geometry and keep (in
     * the workspace, which the planes' padded copies would have used, the
     * first time); each thread stages planes in its scratch. */
    if (j.kernels->depthwise_prepare && depthwise_plans >= 0) {
      const int64_t geometry[6] = {q[CUVIL_QCONV_KH], q[CUVIL_QCONV_KW], q[CUVIL_QCONV_SH],
                                   q[CUVIL_QCONV_SW], q[CUVIL_QCONV_DH], q[CUVIL_QCONV_DW]};
      uint8_t *memory = (uint8_t *)(((uintptr_t)workspace + 63) & ~(uintptr_t)63);
      const int64_t room = cuvil_qconv_workspace_bytes(q) - (memory - workspace);
      if (room > 0)
        j.depthwise_plan = j.kernels->depthwise_prepare(
            memory, (size_t)room, CUVIL_THREAD_SCRATCH_BYTES, geometry, q[CUVIL_QCONV_H],
            q[CUVIL_QCONV_W], q[CUVIL_QCONV_PH], q[CUVIL_QCONV_PW], (uint8_t)q[CUVIL_QCONV_X_ZERO],
            q[CUVIL_QCONV_OH], q[CUVIL_QCONV_OW], depthwise_plans > 0);
    }
    cuvil_run_items(j.exec, q[CUVIL_QCONV_N] * groups,
                    q[CUVIL_QCONV_N] * groups * pixels * q[CUVIL_QCONV_KH] * q[CUVIL_QCONV_KW],
                    qdepthwise_body, &j, &j.scratch);
    return;
  }
  j.direct_b = q[CUVIL_QCONV_KH] == 1 && q[CUVIL_QCONV_KW] == 1 && q[CUVIL_QCONV_SH] == 1 &&
               q[CUVIL_QCONV_SW] == 1 && q[CUVIL_QCONV_PH] == 0 && q[CUVIL_QCONV_PW] == 0;
  /* A window with stride 1 (and rows wide enough that a tile crosses few
   * of them): the grid, which computes the padding's columns too (2 of 58
   * at 56x56) instead of packing every tap of every pixel. Stride s: the
   * same on the s x s phases of the padded plane (phase (r, c) holds its
   * rows s Y + r, columns s X + c), where every tap is a stride-1 tap of
   * one phase, when the padded plane divides into them. */
  const int64_t S = q[CUVIL_QCONV_SH];
  const int64_t column_quads = cuvil_qconv_column_quads(q);
  if (column_quads && j.kernels->conv_tile_grid && qconv_grid_enabled && qconv_columns_enabled) {
    /* Few input channels: words of adjacent columns (the same grid, on
     * each channel's row phases). */
    j.grid = 1;
    j.column_quads = column_quads;
    j.phases = S;
    j.hp = cuvil_qconv_column_rows(q);
    j.gw = cuvil_qconv_column_row_words(q);
    j.kp = q[CUVIL_QCONV_C] * q[CUVIL_QCONV_KH] * column_quads * 4;
    const int64_t planes_bytes = cuvil_qconv_column_planes_bytes(q);
    int8_t *repacked = (int8_t *)(((uintptr_t)workspace + planes_bytes + 63) & ~(uintptr_t)63);
    repack_column_weights(&j, repacked);
    j.weights = repacked;
    /* The words past the last plane, which the last tiles read (their
     * outputs are dropped). */
    memset(workspace + planes_bytes - 64 * 4, (int)q[CUVIL_QCONV_X_ZERO], 64 * 4);
    j.grid_pixels = (q[CUVIL_QCONV_OH] - 1) * j.gw + q[CUVIL_QCONV_OW];
    j.tiles = j.tile_groups = (j.grid_pixels + CUVIL_QCONV_NP - 1) / CUVIL_QCONV_NP;
    cuvil_run_items(j.exec, q[CUVIL_QCONV_N] * q[CUVIL_QCONV_C],
                    q[CUVIL_QCONV_N] * q[CUVIL_QCONV_C] * j.hp * j.gw, column_body, &j, &j.scratch);
  } else {
    if (!j.direct_b && j.kernels->conv_tile_grid && q[CUVIL_QCONV_SW] == S && S >= 1 && S <= 4 &&
        j.hp % S == 0 && j.wp % S == 0 && q[CUVIL_QCONV_OW] >= 16 && qconv_grid_enabled) {
      j.grid = 1;
      j.phases = S;
      j.gw = j.wp / S;
      j.grid_pixels = (q[CUVIL_QCONV_OH] - 1) * j.gw + q[CUVIL_QCONV_OW];
      j.tiles = j.tile_groups = (j.grid_pixels + CUVIL_QCONV_NP - 1) / CUVIL_QCONV_NP;
    }
    cuvil_run_items(j.exec, q[CUVIL_QCONV_N] * groups * j.quads,
                    q[CUVIL_QCONV_N] * q[CUVIL_QCONV_C] * j.hp * j.wp, interleave_body, &j, &j.scratch);
  }
  /* Weights beyond what stays in L2: tiles in groups (as many as the
   * scratch holds), so each weight row streams in once per group. */
  const int64_t kWeightsCached = 1024 * 1024;
  if (cog * j.kp > kWeightsCached) {
    /* (the grid packs nothing: any number of tiles a group) */
    int64_t fit = j.grid ? j.tiles : CUVIL_THREAD_SCRATCH_BYTES / (j.kp * CUVIL_QCONV_NP);
    j.group_tiles = fit < j.tiles ? (fit > 0 ? fit : 1) : j.tiles;
    j.tile_groups = (j.tiles + j.group_tiles - 1) / j.group_tiles;
  }
  /* Few items: split the channels too, so every thread has work. */
  int64_t threads = j.exec ? cuvil_thread_pool_size(j.exec) : 1;
  int64_t items = q[CUVIL_QCONV_N] * groups * j.tile_groups;
  if (threads > 1 && items < 2 * threads && cog >= 2 * CUVIL_QCONV_MR) {
    int64_t want = (2 * threads + items - 1) / items;
    int64_t max_chunks = cog / CUVIL_QCONV_MR;
    j.chunks = want < max_chunks ? want : max_chunks;
    j.chunk_rows = (cog / j.chunks + CUVIL_QCONV_MR - 1) / CUVIL_QCONV_MR * CUVIL_QCONV_MR;
    j.chunks = (cog + j.chunk_rows - 1) / j.chunk_rows;
  }
  j.scratch = NULL;
  cuvil_run_items(j.exec, items * j.chunks, q[CUVIL_QCONV_N] * q[CUVIL_QCONV_COUT] * pixels * j.kp,
                  qconv_body, &j, &j.scratch);
}

/*--- Convolution with pixels as rows ----------------------------------------------*/

typedef struct qrows_job {
  qconv_job conv;    /* the interleaving's */
  uint8_t *patches;  /* [pixels][Kp] */
  uint8_t *staged;   /* [pixels][Cout], u8 or f32 */
  int64_t pixels, row_blocks, col_blocks;
} qrows_job;

/* Pixel `item`'s patch: the (kh, kw, quad) words of its window, K in the
 * weights' order. */
static void qrows_patch_body(void *closure, int64_t begin, int64_t end) {
  const qrows_job *r = closure;
  const qconv_job *j = &r->conv;
  const int64_t *q = j->q;
  const int64_t OH = q[CUVIL_QCONV_OH], OW = q[CUVIL_QCONV_OW], KH = q[CUVIL_QCONV_KH],
                KW = q[CUVIL_QCONV_KW];
  const int64_t SH = q[CUVIL_QCONV_SH], SW = q[CUVIL_QCONV_SW], DH = q[CUVIL_QCONV_DH],
                DW = q[CUVIL_QCONV_DW];
  const int64_t plane = j->hp * j->wp;
  for (int64_t item = begin; item < end; ++item) {
    int64_t n = item / (OH * OW), pix = item % (OH * OW), oh = pix / OW, ow = pix % OW;
    const uint32_t *planes = (const uint32_t *)j->workspace + n * j->quads * plane;
    uint32_t *dst = (uint32_t *)(r->patches + item * j->kp);
    for (int64_t a = 0; a < KH; ++a)
      for (int64_t b = 0; b < KW; ++b) {
        const uint32_t *src = planes + (oh * SH + a * DH) * j->wp + ow * SW + b * DW;
        for (int64_t quad = 0; quad < j->quads; ++quad)
          *dst++ = src[quad * plane];
      }
  }
}

/* A (column block, row block) of the GEMM: column blocks outermost, so
 * consecutive items reuse one block of weight panels. */
static void qrows_gemm_body(void *closure, int64_t begin, int64_t end) {
  const qrows_job *r = closure;
  const qconv_job *j = &r->conv;
  const int64_t *q = j->q;
  const int64_t cout = q[CUVIL_QCONV_COUT], panel_stride = j->kp * CUVIL_QN;
  const int64_t mr = j->kernels->rows_block.rows, block_cols = CUVIL_QN * j->kernels->rows_block.panels;
  const int64_t y_float = q[CUVIL_QCONV_Y_FLOAT];
  for (int64_t item = begin; item < end; ++item) {
    int64_t cb = item / r->row_blocks, rb = item % r->row_blocks;
    int64_t m0 = rb * mr, n0 = cb * block_cols;
    int64_t rows = r->pixels - m0 < mr ? r->pixels - m0 : mr;
    int64_t cols = cout - n0 < block_cols ? cout - n0 : block_cols;
    const cuvil_qepilogue e = conv_epilogue(j, n0, y_float);
    int64_t at = m0 * cout + n0;
    void *y = y_float ? (void *)((float *)r->staged + at) : (void *)(r->staged + at);
    j->kernels->linear_tile(j->kp, r->patches + m0 * j->kp, j->kp, rows,
                            j->weights + (n0 / CUVIL_QN) * panel_stride, panel_stride, cols, &e, y, cout);
  }
}

/* Output channels [16 item, 16 item + 16) of an image from the pixel-major
 * staging: blocks of 16 pixels x 16 channels (a loop in C for f32 outputs
 * and kernels without a block transpose). */
static void qrows_transpose_body(void *closure, int64_t begin, int64_t end) {
  const qrows_job *r = closure;
  const int64_t *q = r->conv.q;
  const int64_t cout = q[CUVIL_QCONV_COUT], pixels = q[CUVIL_QCONV_OH] * q[CUVIL_QCONV_OW];
  const int64_t blocks = (cout + 15) / 16;
  const cuvil_qkernels *k = r->conv.kernels;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / blocks, c0 = item % blocks * 16, cn = cout - c0 < 16 ? cout - c0 : 16;
    const int64_t from = n * pixels * cout + c0, to = (n * cout + c0) * pixels;
    if (!q[CUVIL_QCONV_Y_FLOAT] && k->transpose_bytes) {
      const uint8_t *src = r->staged + from;
      uint8_t *dst = (uint8_t *)r->conv.output + to;
      for (int64_t p = 0; p < pixels; p += 16)
        k->transpose_bytes(dst + p, pixels, src + p * cout, cout, pixels - p < 16 ? pixels - p : 16, cn);
      continue;
    }
    for (int64_t c = 0; c < cn; ++c) {
      if (q[CUVIL_QCONV_Y_FLOAT]) {
        const float *src = (const float *)r->staged + from + c;
        float *dst = (float *)r->conv.output + to + c * pixels;
        for (int64_t p = 0; p < pixels; ++p)
          dst[p] = src[p * cout];
      } else {
        const uint8_t *src = r->staged + from + c;
        uint8_t *dst = (uint8_t *)r->conv.output + to + c * pixels;
        for (int64_t p = 0; p < pixels; ++p)
          dst[p] = src[p * cout];
      }
    }
  }
}

void cuvil_rt_qconv2d_u8s8_rows(const int64_t *q, const uint8_t *input, const int8_t *weights,
                                const int32_t *offset, const float *multiplier, uint8_t *workspace,
                                void *output) {
  const int64_t n = q[CUVIL_QCONV_N], cout = q[CUVIL_QCONV_COUT];
  const int64_t pixels = n * q[CUVIL_QCONV_OH] * q[CUVIL_QCONV_OW];
  qrows_job r;
  memset(&r, 0, sizeof r);
  qconv_job *j = &r.conv;
  *j = (qconv_job){q, input, weights, offset, multiplier, workspace, output, cuvil_qkernels_best(),
                   0, 1, 1, 1, cout, cuvil_qconv_kp(q), cuvil_qconv_quads(q),
                   q[CUVIL_QCONV_H] + 2 * q[CUVIL_QCONV_PH], q[CUVIL_QCONV_W] + 2 * q[CUVIL_QCONV_PW], 0,
                   cuvil_rt_current_exec, NULL, NULL, 0, 0, 1, 0, 0};
  r.patches = workspace + cuvil_qconv_workspace_bytes(q);
  r.staged = r.patches + pixels * j->kp;
  r.pixels = pixels;
  const int64_t mr = j->kernels->rows_block.rows, block_cols = CUVIL_QN * j->kernels->rows_block.panels;
  r.row_blocks = (pixels + mr - 1) / mr;
  r.col_blocks = (cout + block_cols - 1) / block_cols;
  cuvil_run_items(j->exec, n * j->quads, n * q[CUVIL_QCONV_C] * j->hp * j->wp, interleave_body, j,
                  &j->scratch);
  j->scratch = NULL;
  cuvil_run_items(j->exec, pixels, pixels * j->kp, qrows_patch_body, &r, &j->scratch);
  j->scratch = NULL;
  cuvil_run_items(j->exec, r.row_blocks * r.col_blocks, pixels * cout * j->kp, qrows_gemm_body, &r,
                  &j->scratch);
  j->scratch = NULL;
  cuvil_run_items(j->exec, n * ((cout + 15) / 16), pixels * cout, qrows_transpose_body, &r, &j->scratch);
}

void cuvil_rt_qconv2d_u8s8_rows_f32(const int64_t *q, const uint8_t *input, const int8_t *weights,
                                    const int32_t *offset, const float *multiplier, uint8_t *workspace,
                                    float *output) {
  cuvil_rt_qconv2d_u8s8_rows(q, input, weights, offset, multiplier, workspace, output);
}

/*--- Linear ----------------------------------------------------------------------*/

typedef struct qlinear_job {
  const int64_t *q;
  const uint8_t *x;
  const int8_t *weights;
  const int32_t *offset;
  const float *multiplier;
  void *y; /* u8, or f32 with Y_FLOAT */
  const cuvil_qkernels *kernels;
  int64_t kp, row_blocks, col_blocks;
  void *exec;
  float *scratch;
} qlinear_job;

static void qlinear_body(void *closure, int64_t begin, int64_t end) {
  const qlinear_job *j = closure;
  const int64_t *q = j->q;
  const int64_t m = q[CUVIL_QLINEAR_M], k = q[CUVIL_QLINEAR_K], nn = q[CUVIL_QLINEAR_N];
  const int64_t panel_stride = j->kp * CUVIL_QN, block_cols = CUVIL_QN * CUVIL_QLINEAR_NV;
  uint8_t *padded = (uint8_t *)(j->scratch ? j->scratch : cuvil_thread_pool_scratch(j->exec));
  for (int64_t item = begin; item < end; ++item) {
    int64_t rb = item / j->col_blocks, cb = item % j->col_blocks;
    int64_t m0 = rb * CUVIL_QLINEAR_MR, rows = m - m0 < CUVIL_QLINEAR_MR ? m - m0 : CUVIL_QLINEAR_MR;
    int64_t n0 = cb * block_cols, cols = nn - n0 < block_cols ? nn - n0 : block_cols;
    const uint8_t *x = j->x + m0 * k;
    int64_t ldx = k;
    if (k != j->kp) { /* rows padded to Kp (the pad meets zero weights) */
      for (int64_t r = 0; r < rows; ++r) {
        memcpy(padded + r * j->kp, x + r * k, (size_t)k);
        memset(padded + r * j->kp + k, 0, (size_t)(j->kp - k));
      }
      x = padded;
      ldx = j->kp;
    }
    cuvil_qepilogue e = {j->offset + n0, j->multiplier + n0, (int32_t)q[CUVIL_QLINEAR_Y_ZERO],
                         (int32_t)q[CUVIL_QLINEAR_Y_MIN], (int32_t)q[CUVIL_QLINEAR_Y_MAX],
                         (int32_t)q[CUVIL_QLINEAR_Y_FLOAT], NULL};
    onednn_epilogue(&e, j->multiplier, q[CUVIL_QLINEAR_N], n0, q[CUVIL_QLINEAR_Y_ONEDNN]);
    int64_t at = m0 * nn + n0;
    void *y = q[CUVIL_QLINEAR_Y_FLOAT] ? (void *)((float *)j->y + at) : (void *)((uint8_t *)j->y + at);
    j->kernels->linear_tile(j->kp, x, ldx, rows, j->weights + (n0 / CUVIL_QN) * panel_stride,
                            panel_stride, cols, &e, y, nn);
  }
}

void cuvil_rt_qlinear_u8s8(const int64_t *q, const uint8_t *x, const int8_t *weights,
                           const int32_t *offset, const float *multiplier, void *y) {
  const int64_t m = q[CUVIL_QLINEAR_M], n = q[CUVIL_QLINEAR_N];
  const int64_t block_cols = CUVIL_QN * CUVIL_QLINEAR_NV;
  qlinear_job j = {q, x, weights, offset, multiplier, y, cuvil_qkernels_best(),
                   cuvil_qk_padded(q[CUVIL_QLINEAR_K]), (m + CUVIL_QLINEAR_MR - 1) / CUVIL_QLINEAR_MR,
                   (n + block_cols - 1) / block_cols, cuvil_rt_current_exec, NULL};
  cuvil_run_items(j.exec, j.row_blocks * j.col_blocks, m * n * q[CUVIL_QLINEAR_K], qlinear_body, &j,
                  &j.scratch);
}

/* The f32-output entry points (Y_FLOAT set): the same kernels under names
 * of their own, as each name is declared with one output type. */
void cuvil_rt_qconv2d_u8s8_f32(const int64_t *q, const uint8_t *input, const int8_t *weights,
                               const int32_t *offset, const float *multiplier, uint8_t *workspace,
                               float *output) {
  cuvil_rt_qconv2d_u8s8(q, input, weights, offset, multiplier, workspace, output);
}

void cuvil_rt_qlinear_u8s8_f32(const int64_t *q, const uint8_t *x, const int8_t *weights,
                               const int32_t *offset, const float *multiplier, float *y) {
  cuvil_rt_qlinear_u8s8(q, x, weights, offset, multiplier, y);
}
