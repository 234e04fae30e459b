/*===- runtime/cpu/conv2d.c - Convolutions on the GEMM ---------------------===*
 *
 * cuvil_rt_conv2d_f32: im2col (each K-block of B packed from the input),
 * the image's pixels as the GEMM's rows for small images, or Winograd
 * (winograd.c) where the compiler transformed the weights.
 *
 *===----------------------------------------------------------------------===*/
#include "gemm.h"
#include "schedule.h"
#include "winograd.h"

#include <string.h>

/* Row k of im2col is input channel ci's tap (ky, kx): worked out once per
 * K-block and stepped along from there (divisions per row are slow). */
typedef struct im2col_tap {
  int64_t ci, ky, kx;
} im2col_tap;

static inline im2col_tap im2col_tap_at(int64_t k, int64_t kh, int64_t kw) {
  return (im2col_tap){k / (kh * kw), k % (kh * kw) / kw, k % kw};
}

static inline void im2col_tap_next(im2col_tap *t, int64_t kh, int64_t kw) {
  if (++t->kx == kw) {
    t->kx = 0;
    if (++t->ky == kh) {
      t->ky = 0;
      ++t->ci;
    }
  }
}

typedef struct im2col_context {
  const float *input; /* this image's first channel of the group */
  const int64_t *prm;
  const cuvil_microkernels *mk; /* its stride-2 row helpers */
  /* Pixels as rows over several images (pack_im2col_rows): row i is pixel
   * i % pixels of image i / pixels, images image_stride floats apart; 0:
   * one image. */
  int64_t pixels, image_stride;
} im2col_context;

/* B(k, j) for k = (ci, ky, kx), j = an output pixel (oy, ox). */
static void pack_im2col(const void *context, int64_t k0, int64_t kc, int64_t j0, int64_t n,
                        int64_t nr_stride, float *dst) {
  const im2col_context *ctx = context;
  const int64_t *q = ctx->prm;
  int64_t h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W], kh = q[CUVIL_CONV_KH], kw = q[CUVIL_CONV_KW], ow = q[CUVIL_CONV_OW];
  int64_t sh = q[CUVIL_CONV_SH], sw = q[CUVIL_CONV_SW], ph = q[CUVIL_CONV_PH], pw = q[CUVIL_CONV_PW];
  int64_t dh = q[CUVIL_CONV_DH], dw = q[CUVIL_CONV_DW];
  if (kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0) {
    /* A pointwise convolution reads B straight from the input rows. */
    for (int64_t k = 0; k < kc; ++k) {
      float *row = dst + k * nr_stride;
      memcpy(row, ctx->input + (k0 + k) * h * w + j0, (size_t)n * sizeof(float));
      for (int64_t j = n; j < nr_stride; ++j)
        row[j] = 0.0f;
    }
    return;
  }
  /* The tile's columns as runs of consecutive pixels on one output row:
   * for each, a row of the input is read with stride sw, and only the ends
   * of a run can fall into the padding. */
  int64_t run_oy[CUVIL_MAX_NR], run_ox[CUVIL_MAX_NR], run_len[CUVIL_MAX_NR], runs = 0;
  for (int64_t j = 0; j < n;) {
    int64_t pixel = j0 + j, oy = pixel / ow, ox = pixel % ow;
    int64_t len = ow - ox < n - j ? ow - ox : n - j;
    run_oy[runs] = oy;
    run_ox[runs] = ox;
    run_len[runs++] = len;
    j += len;
  }
  /* Small images (output rows of a few pixels: the late layers, grouped
   * convolutions' many small GEMMs): each tap's source per column, -1 in
   * the padding, worked out once per call for every channel, then each K
   * row gathered without bounds tests or a call per run. */
  enum { TABLE_TAPS = 64 };
  if (ow < 8 && kh * kw <= TABLE_TAPS && n <= CUVIL_MAX_NR) {
    int32_t off[TABLE_TAPS][CUVIL_MAX_NR];
    for (int64_t t = 0; t < kh * kw; ++t)
      for (int64_t j = 0; j < n; ++j) {
        int64_t pixel = j0 + j, iy = pixel / ow * sh - ph + t / kw * dh, ix = pixel % ow * sw - pw + t % kw * dw;
        off[t][j] = (uint64_t)iy < (uint64_t)h && (uint64_t)ix < (uint64_t)w ? (int32_t)(iy * w + ix) : -1;
      }
    im2col_tap tap = im2col_tap_at(k0, kh, kw);
    for (int64_t k = 0; k < kc; ++k, im2col_tap_next(&tap, kh, kw)) {
      const float *plane = ctx->input + tap.ci * h * w;
      const int32_t *o = off[tap.ky * kw + tap.kx];
      float *row = dst + k * nr_stride;
      for (int64_t j = 0; j < n; ++j)
        row[j] = o[j] >= 0 ? plane[o[j]] : 0.0f;
      for (int64_t j = n; j < nr_stride; ++j)
        row[j] = 0.0f;
    }
    return;
  }
  /* 3-wide stride-2 rows with padding 1 on an even width (first layers):
   * the three columns from one pair of loads, split in registers. */
  const int s2k3 = sw == 2 && kw == 3 && dw == 1 && pw == 1 && w % 2 == 0 && ow == w / 2;
  im2col_tap tap = im2col_tap_at(k0, kh, kw);
  for (int64_t k = 0; k < kc; ++k, im2col_tap_next(&tap, kh, kw)) {
    int64_t dy = tap.ky * dh, dx = tap.kx * dw;
    const float *plane = ctx->input + tap.ci * h * w;
    float *row = dst + k * nr_stride;
    if (sw == 2 && dw == 1 && tap.kx == 0 && k + kw <= kc) {
      /* Stride 2: a tap row's kw columns in one call, where all of them
       * are in this K-block. */
      for (int64_t t = 0, j = 0; t < runs; j += run_len[t++]) {
        int64_t iy = run_oy[t] * sh - ph + dy;
        if (iy < 0 || iy >= h)
          for (int64_t r = 0; r < kw; ++r)
            memset(row + r * nr_stride + j, 0, (size_t)run_len[t] * sizeof(float));
        else if (s2k3)
          ctx->mk->im2col_s2_k3(plane + iy * w, run_ox[t], run_len[t], row + j,
                                row + nr_stride + j, row + 2 * nr_stride + j);
        else
          ctx->mk->im2col_s2(plane + iy * w, w, run_ox[t] * 2 - pw, run_len[t], kw, row + j,
                             nr_stride);
      }
      for (int64_t r = 0; r < kw; ++r)
        for (int64_t j = n; j < nr_stride; ++j)
          row[r * nr_stride + j] = 0.0f;
      k += kw - 1;
      for (int64_t r = 1; r < kw; ++r)
        im2col_tap_next(&tap, kh, kw);
      continue;
    }
    for (int64_t t = 0; t < runs; ++t) {
      int64_t iy = run_oy[t] * sh - ph + dy, len = run_len[t];
      if (iy < 0 || iy >= h) {
        memset(row, 0, (size_t)len * sizeof(float));
        row += len;
        continue;
      }
      const float *src = plane + iy * w;
      int64_t ix = run_ox[t] * sw - pw + dx;
      /* Columns [a, b) of the run read inside the row. */
      int64_t a = ix >= 0 ? 0 : sw == 2 ? (-ix + 1) >> 1 : (-ix + sw - 1) / sw;
      int64_t b = w - ix <= 0 ? 0 : sw == 2 ? (w - ix + 1) >> 1 : (w - ix + sw - 1) / sw;
      if (a > len)
        a = len;
      if (b > len)
        b = len;
      if (b < a)
        b = a;
      for (int64_t q = 0; q < a; ++q)
        row[q] = 0.0f;
      if (sw == 1)
        memcpy(row + a, src + ix + a, (size_t)(b - a) * sizeof(float));
      else if (sw == 2) {
        /* The micro-kernels' instruction set (this file is built for any
         * x86-64), over the columns whose pair lies inside the row. */
        const float *s0 = src + ix;
        int64_t pairs = (w - ix) / 2 < b ? (w - ix) / 2 : b, q = a;
        if (pairs > a) {
          ctx->mk->even_floats(row + a, s0 + 2 * a, pairs - a);
          q = pairs;
        }
        for (; q < b; ++q)
          row[q] = s0[2 * q];
      } else
        for (int64_t q = a; q < b; ++q)
          row[q] = src[ix + q * sw];
      for (int64_t q = b; q < len; ++q)
        row[q] = 0.0f;
      row += len;
    }
    for (int64_t j = n; j < nr_stride; ++j)
      dst[k * nr_stride + j] = 0.0f;
  }
}

/* A(i, k) for i = an output pixel, k = (ci, ky, kx): im2col transposed, an
 * MR-pixel panel of a K-block (pixels as rows, CUVIL_FLAG_PIXEL_ROWS). */
static void pack_im2col_rows(const void *context, int64_t i0, int64_t rows, int64_t k0,
                             int64_t kc, float *dst) {
  const im2col_context *ctx = context;
  const int64_t *q = ctx->prm;
  int64_t h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W], kh = q[CUVIL_CONV_KH], kw = q[CUVIL_CONV_KW], ow = q[CUVIL_CONV_OW];
  int64_t sh = q[CUVIL_CONV_SH], sw = q[CUVIL_CONV_SW], ph = q[CUVIL_CONV_PH], pw = q[CUVIL_CONV_PW];
  int64_t dh = q[CUVIL_CONV_DH], dw = q[CUVIL_CONV_DW];
  int pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  /* Each row's input origin; rows past `rows` read nothing (-h: out). */
  int64_t oy[CUVIL_MR], ox[CUVIL_MR], iy0[CUVIL_MR], ix0[CUVIL_MR], base[CUVIL_MR];
  for (int64_t r = 0; r < CUVIL_MR; ++r) {
    int64_t pixel = i0 + r;
    base[r] = 0;
    if (ctx->pixels) {
      base[r] = pixel / ctx->pixels * ctx->image_stride;
      pixel %= ctx->pixels;
    }
    oy[r] = pixel / ow;
    ox[r] = pixel % ow;
    iy0[r] = r < rows ? oy[r] * sh - ph : -h - kh * dh;
    ix0[r] = ox[r] * sw - pw;
  }
  /* The panel's rows in one image (rows past `rows` read nothing): read
   * from that image's origin, as with one image. */
  const int one_image = base[0] == base[rows > 0 ? rows - 1 : 0];
  const float *input = ctx->input + (one_image ? base[0] : 0);
  if (one_image)
    for (int64_t r = 0; r < CUVIL_MR; ++r)
      base[r] = 0;
  const int64_t first = ctx->pixels ? (i0 % ctx->pixels) : i0; /* the panel's first pixel */
  /* The panel's pixels on one output row: each k reads MR columns of one
   * input row, sw apart. */
  int one_row = one_image && rows == CUVIL_MR && oy[0] == oy[CUVIL_MR - 1];
  /* Otherwise (small images: a panel spans output rows) each tap's source
   * offset per pixel, -1 in the padding, worked out once per call: the K
   * rows (every channel reuses the taps) then gather without bounds tests. */
  enum { TABLE_TAPS = 64 };
  int64_t off[TABLE_TAPS][CUVIL_MR];
  const int table = (!pointwise || !one_image) && !one_row && kh * kw <= TABLE_TAPS;
  if (table)
    for (int64_t t = 0; t < kh * kw; ++t)
      for (int64_t r = 0; r < CUVIL_MR; ++r) {
        int64_t iy = iy0[r] + t / kw * dh, ix = ix0[r] + t % kw * dw;
        off[t][r] = (uint64_t)iy < (uint64_t)h && (uint64_t)ix < (uint64_t)w ? base[r] + iy * w + ix : -1;
      }
  im2col_tap tap = im2col_tap_at(k0, kh, kw);
  for (int64_t k = 0; k < kc; ++k, im2col_tap_next(&tap, kh, kw)) {
    int64_t dy = tap.ky * dh, dx = tap.kx * dw;
    const float *plane = input + tap.ci * h * w;
    float *d = dst + k * CUVIL_MR;
    if (pointwise && one_image && rows == CUVIL_MR) {
      memcpy(d, plane + first, CUVIL_MR * sizeof(float)); /* pixel = input offset */
      continue;
    }
    if (table) {
      const int64_t *o = off[tap.ky * kw + tap.kx];
      for (int64_t r = 0; r < CUVIL_MR; ++r)
        d[r] = o[r] >= 0 ? plane[o[r]] : 0.0f;
      continue;
    }
    if (one_row) {
      int64_t iy = oy[0] * sh - ph + dy, ix = ox[0] * sw - pw + dx;
      if (iy >= 0 && iy < h && ix >= 0 && ix + (CUVIL_MR - 1) * sw < w) {
        const float *src = plane + iy * w + ix;
        for (int r = 0; r < CUVIL_MR; ++r)
          d[r] = src[r * sw];
        continue;
      }
    }
    for (int64_t r = 0; r < CUVIL_MR; ++r) {
      int64_t iy = iy0[r] + dy, ix = ix0[r] + dx;
      d[r] = (uint64_t)iy < (uint64_t)h && (uint64_t)ix < (uint64_t)w ? plane[base[r] + iy * w + ix] : 0.0f;
    }
  }
}

/* One call's operands, for its images (conv_image). */
typedef struct conv_job {
  const int64_t *q;
  const float *input, *weights, *bias, *residual;
  float *output;
  const cuvil_microkernels *mk;
  void *exec;
} conv_job;

/* Pixels as the GEMM's rows and output channels as its columns (the
 * vector lanes): for small images, where MR-pixel panels waste less than
 * NR-pixel tiles. Weights are B panels, [groups][ceil(Cout_g / B_PANEL)]
 * [K][B_PANEL]; C is the output transposed (one column per channel). */
static void conv2d_pixel_rows(const conv_job *j, int64_t image) {
  const int64_t *q = j->q;
  int64_t groups = q[CUVIL_CONV_GROUPS];
  int64_t cin_g = q[CUVIL_CONV_C] / groups, cout_g = q[CUVIL_CONV_COUT] / groups;
  int64_t k = cin_g * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  int64_t pixels = q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW];
  int64_t panels = (cout_g + CUVIL_B_PANEL - 1) / CUVIL_B_PANEL;
  int64_t flags = q[CUVIL_CONV_FLAGS];
  for (int64_t g = 0; g < groups; ++g) {
    im2col_context ctx = {j->input + (image * q[CUVIL_CONV_C] + g * cin_g) * q[CUVIL_CONV_H] * q[CUVIL_CONV_W], q,
                           j->mk, 0, 0};
    int64_t out_offset = (image * q[CUVIL_CONV_COUT] + g * cout_g) * pixels;
    cuvil_gemm_problem p = {
        .m = pixels, .n = cout_g, .k = k,
        .pack_a = pack_im2col_rows, .a_context = &ctx,
        .b_panels = j->weights + g * panels * k * CUVIL_B_PANEL, .a_pack_once = 1,
        .c = j->output + out_offset, .c_row_stride = 1, .c_col_stride = pixels,
        .bias = (flags & CUVIL_FLAG_BIAS) ? j->bias + g * cout_g : NULL, .column_bias = 1,
        .residual = (flags & CUVIL_FLAG_RESIDUAL) ? j->residual + out_offset : NULL,
        .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(q[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(q[CUVIL_CONV_HI]),
        .split = CUVIL_SPLIT_OF(flags)};
    cuvil_gemm_run(&p, j->mk, j->exec);
  }
}

/* The output's [pixels][cout] blocks (image by image, as the batched GEMM
 * wrote them) transposed in place to [cout][pixels] through the thread's
 * scratch, with the residual added and the clamp applied (the GEMM's
 * epilogue added only the bias: the same operations in the same order). */
typedef struct pixel_rows_transpose {
  const conv_job *j;
  float *scratch;
} pixel_rows_transpose;

static void transpose_images_body(void *closure, int64_t begin, int64_t end) {
  const pixel_rows_transpose *t = closure;
  const conv_job *j = t->j;
  const int64_t *q = j->q;
  const int64_t cout = q[CUVIL_CONV_COUT], pixels = q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW];
  const int64_t flags = q[CUVIL_CONV_FLAGS];
  const float lo = cuvil_float_from_bits(q[CUVIL_CONV_LO]), hi = cuvil_float_from_bits(q[CUVIL_CONV_HI]);
  float *tmp = t->scratch ? t->scratch : cuvil_thread_pool_scratch(j->exec);
  for (int64_t image = begin; image < end; ++image) {
    float *y = j->output + image * cout * pixels;
    const float *r = (flags & CUVIL_FLAG_RESIDUAL) ? j->residual + image * cout * pixels : NULL;
    memcpy(tmp, y, (size_t)(cout * pixels) * sizeof(float));
    for (int64_t c = 0; c < cout; ++c)
      for (int64_t p = 0; p < pixels; ++p) {
        float v = tmp[p * cout + c];
        if (r)
          v += r[c * pixels + p];
        if (flags & CUVIL_FLAG_CLAMP)
          v = v < lo ? lo : (v > hi ? hi : v);
        y[c * pixels + p] = v;
      }
  }
}

/* Pixels as rows for a batch whose weights do not stay in cache from one
 * image to the next (the late layers of a network at batch 8: 9 to 28 MB
 * of them): one GEMM whose rows are every image's pixels reads each weight
 * panel once for the batch instead of once per image. Its C is the output
 * laid out [image][pixel][cout], transposed image by image after. Returns
 * false where it does not apply (one image, groups, blocks past the
 * scratch, weights that stay in cache). */
static int conv2d_pixel_rows_batched(const conv_job *j) {
  const int64_t *q = j->q;
  const int64_t n = q[CUVIL_CONV_N], cout = q[CUVIL_CONV_COUT], pixels = q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW];
  const int64_t k = q[CUVIL_CONV_C] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  const int64_t flags = q[CUVIL_CONV_FLAGS];
  if (n < 2 || q[CUVIL_CONV_GROUPS] != 1 ||
      cout * pixels * (int64_t)sizeof(float) > (int64_t)CUVIL_THREAD_SCRATCH_BYTES ||
      k * cout * (int64_t)sizeof(float) < ((int64_t)4 << 20))
    return 0;
  im2col_context ctx = {j->input, q, j->mk, pixels, q[CUVIL_CONV_C] * q[CUVIL_CONV_H] * q[CUVIL_CONV_W]};
  cuvil_gemm_problem p = {
      .m = n * pixels, .n = cout, .k = k,
      .pack_a = pack_im2col_rows, .a_context = &ctx,
      .b_panels = j->weights, .a_pack_once = 1,
      .c = j->output, .c_row_stride = cout, .c_col_stride = 1,
      .bias = (flags & CUVIL_FLAG_BIAS) ? j->bias : NULL, .column_bias = 1};
  cuvil_gemm_run(&p, j->mk, j->exec);
  pixel_rows_transpose t = {j, NULL};
  cuvil_run_items(j->exec, n, n * cout * pixels, transpose_images_body, &t, &t.scratch);
  return 1;
}

/* Weights as the GEMM's rows, the image's pixels (im2col) as its columns. */
static void conv2d_im2col(const conv_job *j, int64_t image) {
  const int64_t *q = j->q;
  int64_t groups = q[CUVIL_CONV_GROUPS];
  int64_t cin_g = q[CUVIL_CONV_C] / groups, cout_g = q[CUVIL_CONV_COUT] / groups;
  int64_t k = cin_g * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  int64_t pixels = q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW];
  int64_t panels = (cout_g + CUVIL_MR - 1) / CUVIL_MR;
  int64_t flags = q[CUVIL_CONV_FLAGS];
  for (int64_t g = 0; g < groups; ++g) {
    im2col_context ctx = {j->input + (image * q[CUVIL_CONV_C] + g * cin_g) * q[CUVIL_CONV_H] * q[CUVIL_CONV_W], q,
                           j->mk, 0, 0};
    /* A pointwise convolution's B is the input itself: rows of H x W. */
    int pointwise = q[CUVIL_CONV_KH] == 1 && q[CUVIL_CONV_KW] == 1 && q[CUVIL_CONV_SH] == 1 && q[CUVIL_CONV_SW] == 1 &&
                    q[CUVIL_CONV_PH] == 0 && q[CUVIL_CONV_PW] == 0;
    int64_t out_offset = (image * q[CUVIL_CONV_COUT] + g * cout_g) * pixels;
    cuvil_gemm_problem p = {
        .m = cout_g, .n = pixels, .k = k,
        .a_packed = j->weights + g * panels * k * CUVIL_MR,
        .pack_b = pack_im2col, .b_context = &ctx,
        .b_direct = pointwise ? ctx.input : NULL, .b_direct_ld = pixels,
        .c = j->output + out_offset, .c_row_stride = pixels, .c_col_stride = 1,
        .bias = (flags & CUVIL_FLAG_BIAS) ? j->bias + g * cout_g : NULL,
        .residual = (flags & CUVIL_FLAG_RESIDUAL) ? j->residual + out_offset : NULL,
        .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(q[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(q[CUVIL_CONV_HI]),
        .split = CUVIL_SPLIT_OF(flags)};
    cuvil_gemm_run(&p, j->mk, j->exec);
  }
}

static void conv_image(const conv_job *j, int64_t image) {
  if (j->q[CUVIL_CONV_FLAGS] & CUVIL_FLAG_PIXEL_ROWS)
    conv2d_pixel_rows(j, image);
  else
    conv2d_im2col(j, image);
}

static void conv_images_body(void *closure, int64_t begin, int64_t end) {
  for (int64_t image = begin; image < end; ++image)
    conv_image(closure, image);
}

void cuvil_rt_conv2d_f32(const int64_t *q, const float *input, const float *weights,
                         const float *bias, const float *residual, float *output) {
  const cuvil_microkernels *mk = cuvil_microkernels_best();
  if (q[CUVIL_CONV_FLAGS] & CUVIL_FLAG_WINOGRAD) {
    cuvil_conv2d_winograd(q, input, weights, bias, residual, output, mk, cuvil_rt_current_exec);
    return;
  }
  conv_job j = {q, input, weights, bias, residual, output, mk, cuvil_rt_current_exec};
  if ((q[CUVIL_CONV_FLAGS] & CUVIL_FLAG_PIXEL_ROWS) && conv2d_pixel_rows_batched(&j))
    return;
  /* A batch of at least as many images as threads, in whole images: the
   * threads share none of an image's blocks, so there is no wait between
   * images (each image's GEMM alone splits over the threads, which for
   * small images costs more than it gains). A batch that does not divide
   * evenly goes image by image unless it is long enough to balance. */
  const int64_t n = q[CUVIL_CONV_N];
  const int64_t threads = j.exec ? cuvil_thread_pool_size(j.exec) : 1;
  if (threads > 1 && n >= threads && (n % threads == 0 || n >= 4 * threads)) {
    const int64_t groups = q[CUVIL_CONV_GROUPS];
    const int64_t work = n * q[CUVIL_CONV_COUT] * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] *
                         (q[CUVIL_CONV_C] / groups) * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
    float *unused = NULL;
    if (n % threads == 0 && work >= CUVIL_SMALL_WORK)
      /* Static blocks, as the element-wise loops split a batch: the
       * images a thread writes are those it reads next, in its cache. */
      cuvil_rt_parallel_for(j.exec, n, conv_images_body, &j);
    else
      cuvil_run_items(j.exec, n, work, conv_images_body, &j, &unused);
    return;
  }
  for (int64_t image = 0; image < n; ++image)
    conv_image(&j, image);
}
