/*===- runtime/cpu/mk_qgeneric.c - Portable int8 micro-kernels ------------===*
 *
 * Plain C with the same arithmetic as the vector variants: what every CPU
 * without them runs, and what the x86 variants fall back to for shapes
 * they do not take (depthwise strides above 2).
 *
 *===----------------------------------------------------------------------===*/
#include "qgemm.h"

static void generic_conv_tile(int64_t kp, const int8_t *w, const uint8_t *b, int64_t ldb, int64_t rows,
                              int64_t cols, const cuvil_qepilogue *e, void *out, int64_t ldo) {
  for (int64_t r = 0; r < rows; ++r) {
    int32_t acc[CUVIL_QCONV_NP] = {0};
    const int8_t *wr = w + r * kp;
    for (int64_t k4 = 0; k4 < kp / 4; ++k4) {
      const uint8_t *bk = b + k4 * ldb;
      for (int64_t p = 0; p < cols; ++p)
        for (int l = 0; l < 4; ++l)
          acc[p] += (int32_t)bk[p * 4 + l] * (int32_t)wr[k4 * 4 + l];
    }
    for (int64_t p = 0; p < cols; ++p)
      cuvil_qstore(e, acc[p], r, out, r * ldo + p);
  }
}

static void generic_linear_tile(int64_t kp, const uint8_t *x, int64_t ldx, int64_t rows,
                                const int8_t *panels, int64_t panel_stride, int64_t cols,
                                const cuvil_qepilogue *e, void *y, int64_t ldy) {
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t n = 0; n < cols; ++n) {
      const int8_t *panel = panels + (n / CUVIL_QN) * panel_stride;
      int64_t lane = n % CUVIL_QN;
      int32_t acc = 0;
      for (int64_t k4 = 0; k4 < kp / 4; ++k4)
        for (int l = 0; l < 4; ++l)
          acc += (int32_t)x[m * ldx + k4 * 4 + l] *
                 (int32_t)panel[(k4 * CUVIL_QN + lane) * 4 + l];
      cuvil_qstore(e, acc, n, y, m * ldy + n);
    }
}

static void generic_depthwise_plane(const uint8_t *plane, int64_t wp, int64_t oh, int64_t ow,
                                    const int64_t *g, const float *taps, const cuvil_qepilogue *e,
                                    void *out) {
  const int64_t kh = g[0], kw = g[1], sh = g[2], sw = g[3], dh = g[4], dw = g[5];
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) {
      int32_t acc = 0;
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b)
          acc += (int32_t)plane[(y * sh + a * dh) * wp + x * sw + b * dw] * (int32_t)taps[a * kw + b];
      cuvil_qstore(e, acc, 0, out, y * ow + x);
    }
}

static const cuvil_qkernels generic_kernels = {"generic", generic_conv_tile, generic_linear_tile,
                                               generic_depthwise_plane, NULL, NULL,
                                               {CUVIL_QLINEAR_MR, CUVIL_QLINEAR_NV}};

const cuvil_qkernels *cuvil_qkernels_generic(void) { return &generic_kernels; }

