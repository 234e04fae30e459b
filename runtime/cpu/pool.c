/*===- runtime/cpu/pool.c - Max pooling -----------------------------------===*/
#include "depthwise.h"
#include "qgemm.h"
#include "schedule.h"

#include <string.h>

/* Max pooling on the depthwise kernels' grid (args.max_pool), plane by
 * plane; the compiler sends only windows that lie inside the padded input
 * (no ceil_mode overhang). */
void cuvil_rt_max_pool2d_f32(const int64_t *q, const float *input, float *output) {
  const cuvil_depthwise_args args = {q, input, NULL, NULL, NULL, output, 1};
  int64_t planes = q[CUVIL_CONV_N] * q[CUVIL_CONV_C];
  int64_t work = planes * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  cuvil_depthwise_run_planes(&args, planes, work);
}

/*--- 8-bit max pooling ----------------------------------------------------*/

/* Quantized tensors pool in their integers (the scale is positive, so the
 * maximum commutes with dequantization). Signed bytes are flipped into
 * unsigned order (x ^ 0x80) and back, so one code serves both, and padding
 * is 0 in that order: the least value, which never wins. */
typedef struct max_pool_8bit_job {
  const int64_t *q;
  const uint8_t *input;
  uint8_t *output;
  uint8_t flip;
  void *exec;
  float *scratch; /* when running without a pool */
} max_pool_8bit_job;

static inline uint8_t max_u8(uint8_t a, uint8_t b) { return a > b ? a : b; }

/* The bytes one output row needs: the padded row of column maxima, and at
 * stride 2 its even and odd columns apart. */
static int64_t max_pool_8bit_row_bytes(const int64_t *q) {
  const int64_t wp = q[CUVIL_CONV_W] + 2 * q[CUVIL_CONV_PW];
  const int64_t half = (wp + 1) / 2 + 1;
  return wp + 2 * half + 64;
}

/* Each output row: the maximum of its window's input rows down each column
 * (contiguous, vectorizes), then of the window's columns; at stride 2 the
 * row is first split into even and odd columns, so every tap is again a
 * contiguous run. */
static void max_pool_8bit_planes(void *closure, int64_t begin, int64_t end) {
  const max_pool_8bit_job *job = closure;
  const int64_t *q = job->q;
  const int64_t h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W], oh = q[CUVIL_CONV_OH], ow = q[CUVIL_CONV_OW];
  const int64_t kh = q[CUVIL_CONV_KH], kw = q[CUVIL_CONV_KW], sh = q[CUVIL_CONV_SH], sw = q[CUVIL_CONV_SW];
  const int64_t ph = q[CUVIL_CONV_PH], pw = q[CUVIL_CONV_PW], dh = q[CUVIL_CONV_DH], dw = q[CUVIL_CONV_DW];
  const uint8_t flip = job->flip;
  const int64_t wp = w + 2 * pw, half = (wp + 1) / 2 + 1;
  uint8_t *scratch =
      (uint8_t *)(job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec));
  uint8_t *restrict v = scratch;                 /* [wp] column maxima, padded */
  uint8_t *restrict even = scratch + wp + 32;    /* [half] v[0], v[2], ... */
  uint8_t *restrict odd = even + half;           /* [half] v[1], v[3], ... */
  const cuvil_qkernels *kernels = cuvil_qkernels_best();
  const int64_t window[8] = {kh, kw, sh, sw, ph, pw, dh, dw};
  for (int64_t plane = begin; plane < end; ++plane) {
    const uint8_t *in = job->input + plane * h * w;
    uint8_t *out = job->output + plane * oh * ow;
    if (kernels->max_pool_plane && kernels->max_pool_plane(in, h, w, out, oh, ow, window, flip))
      continue;
    for (int64_t oy = 0; oy < oh; ++oy) {
      memset(v, 0, (size_t)wp);
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t iy = oy * sh - ph + ky * dh;
        if (iy < 0 || iy >= h)
          continue;
        const uint8_t *restrict row = in + iy * w;
        uint8_t *restrict vc = v + pw;
        for (int64_t x = 0; x < w; ++x)
          vc[x] = max_u8(vc[x], (uint8_t)(row[x] ^ flip));
      }
      uint8_t *restrict o = out + oy * ow;
      if (sw == 1) {
        for (int64_t ox = 0; ox < ow; ++ox)
          o[ox] = v[ox];
        for (int64_t kx = 1; kx < kw; ++kx) {
          const uint8_t *restrict vk = v + kx * dw;
          for (int64_t ox = 0; ox < ow; ++ox)
            o[ox] = max_u8(o[ox], vk[ox]);
        }
      } else if (sw == 2 && dw == 1) {
        /* Column pairs as 16-bit words, split by shifts (a loop over the
         * bytes with stride 2 does not vectorize). */
        for (int64_t j = 0; j < wp / 2; ++j) {
          uint16_t pair;
          memcpy(&pair, v + 2 * j, sizeof pair);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
          even[j] = (uint8_t)pair;
          odd[j] = (uint8_t)(pair >> 8);
#else
          even[j] = (uint8_t)(pair >> 8);
          odd[j] = (uint8_t)pair;
#endif
        }
        if (wp % 2)
          even[wp / 2] = v[wp - 1];
        /* Tap kx of output ox reads column 2 ox + kx. */
        for (int64_t ox = 0; ox < ow; ++ox)
          o[ox] = even[ox];
        for (int64_t kx = 1; kx < kw; ++kx) {
          const uint8_t *restrict src = (kx % 2 ? odd : even) + kx / 2;
          for (int64_t ox = 0; ox < ow; ++ox)
            o[ox] = max_u8(o[ox], src[ox]);
        }
      } else {
        for (int64_t ox = 0; ox < ow; ++ox) {
          uint8_t m = 0;
          for (int64_t kx = 0; kx < kw; ++kx)
            m = max_u8(m, v[ox * sw + kx * dw]);
          o[ox] = m;
        }
      }
      if (flip)
        for (int64_t ox = 0; ox < ow; ++ox)
          o[ox] ^= flip;
    }
  }
}

/* Window by window, for rows too wide for a thread's scratch. */
static void max_pool_8bit_direct(const max_pool_8bit_job *job) {
  const int64_t *q = job->q;
  const int64_t h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W], oh = q[CUVIL_CONV_OH], ow = q[CUVIL_CONV_OW];
  const int64_t planes = q[CUVIL_CONV_N] * q[CUVIL_CONV_C];
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        uint8_t m = 0;
        for (int64_t ky = 0; ky < q[CUVIL_CONV_KH]; ++ky) {
          const int64_t iy = oy * q[CUVIL_CONV_SH] - q[CUVIL_CONV_PH] + ky * q[CUVIL_CONV_DH];
          if (iy < 0 || iy >= h)
            continue;
          for (int64_t kx = 0; kx < q[CUVIL_CONV_KW]; ++kx) {
            const int64_t ix = ox * q[CUVIL_CONV_SW] - q[CUVIL_CONV_PW] + kx * q[CUVIL_CONV_DW];
            if (ix >= 0 && ix < w)
              m = max_u8(m, (uint8_t)(job->input[(p * h + iy) * w + ix] ^ job->flip));
          }
        }
        job->output[(p * oh + oy) * ow + ox] = (uint8_t)(m ^ job->flip);
      }
}

static void max_pool_8bit(const int64_t *q, const uint8_t *input, uint8_t *output, uint8_t flip) {
  max_pool_8bit_job job = {q, input, output, flip, cuvil_rt_current_exec, NULL};
  if (max_pool_8bit_row_bytes(q) > (int64_t)CUVIL_THREAD_SCRATCH_BYTES) {
    max_pool_8bit_direct(&job);
    return;
  }
  const int64_t planes = q[CUVIL_CONV_N] * q[CUVIL_CONV_C];
  /* Work in multiply-add units: a byte compare is far cheaper than a float
   * multiply-add, so a sixteenth of the window's taps. */
  const int64_t work =
      planes * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW] / 16;
  cuvil_run_items(job.exec, planes, work, max_pool_8bit_planes, &job, &job.scratch);
}

void cuvil_rt_max_pool2d_u8(const int64_t *q, const uint8_t *input, uint8_t *output) {
  max_pool_8bit(q, input, output, 0);
}

void cuvil_rt_max_pool2d_s8(const int64_t *q, const int8_t *input, int8_t *output) {
  max_pool_8bit(q, (const uint8_t *)input, (uint8_t *)output, 0x80);
}
