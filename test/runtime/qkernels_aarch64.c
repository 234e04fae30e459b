/*===- qkernels_aarch64.c - aarch64 int8 micro-kernels against portable C -===*
 *
 * Run under qemu-aarch64 -cpu max (dotprod): every tile shape of the
 * neon_dotprod conv and linear micro-kernels (rows, columns and K at and
 * off their blockings, u8 and f32 outputs) against the generic kernels
 * (which test/runtime/QuantKernelTest.cpp checks against plain loops),
 * byte for byte. Exit 0 pass, 1 a difference, 77 no dotprod here.
 *
 *===----------------------------------------------------------------------===*/
#include "cpu/qgemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t state = 12345;
static uint32_t next(void) {
  state = state * 1103515245u + 12345u;
  return state >> 8;
}

int main(void) {
  const cuvil_qkernels *dot = cuvil_qkernels_neon_dotprod(), *gen = cuvil_qkernels_generic();
  if (!dot || !cuvil_cpu_detects_feature("dotprod")) {
    printf("SKIP: no dotprod on this CPU (run under qemu-aarch64 -cpu max)\n");
    return 77;
  }
  int failures = 0, cases = 0;
  static const int64_t kps[] = {4, 12, 16, 20, 68, 576};
  for (int yf = 0; yf < 2; ++yf)
    for (size_t ki = 0; ki < sizeof kps / sizeof kps[0]; ++ki) {
      int64_t kp = kps[ki];
      int8_t *w = malloc(8 * kp);
      uint8_t *b = malloc(kp * CUVIL_QCONV_NP);
      for (int64_t i = 0; i < 8 * kp; ++i)
        w[i] = (int8_t)(next() & 0xff);
      for (int64_t i = 0; i < kp * CUVIL_QCONV_NP; ++i)
        b[i] = (uint8_t)next();
      int32_t offset[64];
      float multiplier[64];
      for (int i = 0; i < 64; ++i) {
        offset[i] = (int32_t)(next() % 40000) - 20000;
        multiplier[i] = (float)(next() % 1000 + 1) * 1e-6f;
      }
      cuvil_qepilogue e = {offset, multiplier, 7, 0, 255, yf, NULL};
      for (int64_t rows = 1; rows <= 8; ++rows)
        for (int64_t cols = 1; cols <= CUVIL_QCONV_NP; cols += 5) {
          float a[8 * CUVIL_QCONV_NP], c[8 * CUVIL_QCONV_NP];
          memset(a, 0x5a, sizeof a);
          memset(c, 0x5a, sizeof c);
          gen->conv_tile(kp, w, b, CUVIL_QCONV_NP * 4, rows, cols, &e, a, CUVIL_QCONV_NP);
          dot->conv_tile(kp, w, b, CUVIL_QCONV_NP * 4, rows, cols, &e, c, CUVIL_QCONV_NP);
          ++cases;
          if (memcmp(a, c, sizeof a)) {
            printf("FAIL conv tile kp %lld rows %lld cols %lld y_float %d\n", (long long)kp,
                   (long long)rows, (long long)cols, yf);
            ++failures;
          }
        }
      /* Linear: x rows kp apart, 4 panels. */
      uint8_t *x = malloc(4 * kp);
      int8_t *panels = malloc(4 * kp * CUVIL_QN);
      for (int64_t i = 0; i < 4 * kp; ++i)
        x[i] = (uint8_t)next();
      for (int64_t i = 0; i < 4 * kp * CUVIL_QN; ++i)
        panels[i] = (int8_t)(next() & 0xff);
      for (int64_t rows = 1; rows <= 4; ++rows)
        for (int64_t cols = 1; cols <= 64; cols += 7) {
          float a[4 * 64], c[4 * 64];
          memset(a, 0x5a, sizeof a);
          memset(c, 0x5a, sizeof c);
          gen->linear_tile(kp, x, kp, rows, panels, kp * CUVIL_QN, cols, &e, a, 64);
          dot->linear_tile(kp, x, kp, rows, panels, kp * CUVIL_QN, cols, &e, c, 64);
          ++cases;
          if (memcmp(a, c, sizeof a)) {
            printf("FAIL linear tile kp %lld rows %lld cols %lld y_float %d\n", (long long)kp,
                   (long long)rows, (long long)cols, yf);
            ++failures;
          }
        }
      free(w);
      free(b);
      free(x);
      free(panels);
    }
  printf("%d of %d tile cases differ\n", failures, cases);
  return failures ? 1 : 0;
}
