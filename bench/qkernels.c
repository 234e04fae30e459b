/*===- bench/qkernels.c - The int8 convolution kernel on resnet/mobilenet layers ===*
 *
 * cuvil-bench-qkernels times cuvil_rt_qconv2d_u8s8 (one thread, no pool)
 * on the layer shapes of resnet18 and mobilenet_v2, as GOP/s (2 ops per
 * multiply-add of the direct convolution), to compare with the int8 peak
 * cuvil-bench-ceilings measures: the layers the padded grid takes also
 * with packed patches, mobilenet_v2's depthwise layers also on the row
 * kernels alone (without plans), each pair in the same run. Not a test.
 *
 *===----------------------------------------------------------------------===*/
#include "cuvil/kernel_abi.h"
#include "cuvil/model_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* runtime/cpu/qgemm.h: depthwise plans as the kernels choose (0) or never
 * (-1, the row kernels alone). */
void cuvil_qdepthwise_plans_for_test(int mode);
/* ... and stride-1 convolutions on the padded grid (true) or with patches. */
void cuvil_qconv_grid_for_test(_Bool enabled);
/* ... and layers of few channels in words of adjacent columns (true) or
 * of 4 channels. */
void cuvil_qconv_columns_for_test(_Bool enabled);

typedef void (*qconv_fn)(const int64_t *, const uint8_t *, const int8_t *, const int32_t *,
                         const float *, uint8_t *, void *);

static double run_with(const char *name, qconv_fn conv, int c, int h, int cout, int k, int s, int p,
                       int groups) {
  int oh = (h + 2 * p - k) / s + 1;
  int64_t q[CUVIL_QCONV_NUM_PARAMS] = {0};
  q[CUVIL_QCONV_VERSION] = CUVIL_KERNEL_PARAMS_VERSION;
  q[CUVIL_QCONV_N] = 1;
  q[CUVIL_QCONV_C] = c;
  q[CUVIL_QCONV_H] = q[CUVIL_QCONV_W] = h;
  q[CUVIL_QCONV_COUT] = cout;
  q[CUVIL_QCONV_OH] = q[CUVIL_QCONV_OW] = oh;
  q[CUVIL_QCONV_KH] = q[CUVIL_QCONV_KW] = k;
  q[CUVIL_QCONV_SH] = q[CUVIL_QCONV_SW] = s;
  q[CUVIL_QCONV_PH] = q[CUVIL_QCONV_PW] = p;
  q[CUVIL_QCONV_DH] = q[CUVIL_QCONV_DW] = 1;
  q[CUVIL_QCONV_GROUPS] = groups;
  q[CUVIL_QCONV_X_ZERO] = 3;
  q[CUVIL_QCONV_Y_MAX] = 255;
  int64_t kp = cuvil_qconv_kp(q);
  uint8_t *in = malloc((size_t)c * h * h), *out = malloc((size_t)cout * oh * oh);
  int8_t *w = malloc((size_t)(cout + CUVIL_QN) * kp); /* room for panels */
  int32_t *offset = calloc((size_t)cout, sizeof(int32_t));
  /* The multipliers, then oneDNN's biases (PyTorch's onednn engine, the
   * epilogue its models take). */
  float *m = malloc(2 * (size_t)cout * sizeof(float));
  q[CUVIL_QCONV_Y_ONEDNN] = 1;
  int64_t ws_bytes = conv == cuvil_rt_qconv2d_u8s8_rows ? cuvil_qconv_rows_workspace_bytes(q)
                                                       : cuvil_qconv_workspace_bytes(q);
  uint8_t *ws = malloc((size_t)ws_bytes);
  if (!in || !out || !w || !offset || !m || !ws) {
    fprintf(stderr, "cuvil-bench-qkernels: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < (int64_t)c * h * h; ++i)
    in[i] = (uint8_t)rand();
  for (int64_t i = 0; i < (cout + CUVIL_QN) * kp; ++i)
    w[i] = (int8_t)rand();
  for (int i = 0; i < cout; ++i)
    m[i] = 0.001f, m[cout + i] = (float)(i % 7) - 3.0f;
  conv(q, in, w, offset, m, ws, out);
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    int reps = 10;
    double t = now();
    for (int r = 0; r < reps; ++r)
      conv(q, in, w, offset, m, ws, out);
    t = (now() - t) / reps;
    if (t < best)
      best = t;
  }
  double ops = 2.0 * cout * (c / groups) * k * k * oh * oh;
  printf("  {\"layer\": \"%s\", \"ms\": %.3f, \"gops\": %.0f},\n", name, best * 1e3, ops / best / 1e9);
  free(in), free(out), free(w), free(offset), free(m), free(ws);
  return best;
}

static double run(const char *name, int c, int h, int cout, int k, int s, int p, int groups) {
  return run_with(name, cuvil_rt_qconv2d_u8s8, c, h, cout, k, s, p, groups);
}

/* A layer the grid takes, then the same with patches (and a stem with
 * words of channels). */
static void run_grid_and_patches(const char *name, int c, int h, int cout, int k, int s, int p) {
  char patches[128];
  snprintf(patches, sizeof patches, "%s, patches", name);
  run(name, c, h, cout, k, s, p, 1);
  if (c < 4) { /* a stem: also its channels in words */
    char channels[128];
    snprintf(channels, sizeof channels, "%s, channel words", name);
    cuvil_qconv_columns_for_test(0);
    run(channels, c, h, cout, k, s, p, 1);
    cuvil_qconv_columns_for_test(1);
  }
  cuvil_qconv_grid_for_test(0);
  run(patches, c, h, cout, k, s, p, 1);
  cuvil_qconv_grid_for_test(1);
}

/* mobilenet_v2's 17 depthwise layers (3x3; channels, input size, stride)
 * and their sum: a third of the model's int8 time at 224x224. */
static void mobilenet_v2_depthwise(void) {
  static const int layers[][3] = {{32, 112, 1}, {96, 112, 2},  {144, 56, 1}, {144, 56, 2}, {192, 28, 1},
                                  {192, 28, 1}, {192, 28, 2},  {384, 14, 1}, {384, 14, 1}, {384, 14, 1},
                                  {384, 14, 1}, {576, 14, 1},  {576, 14, 1}, {576, 14, 2}, {960, 7, 1},
                                  {960, 7, 1},  {960, 7, 1}};
  double total = 0, rows_only = 0;
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; ++i) {
    char name[96];
    snprintf(name, sizeof name, "mobilenet_v2 depthwise 3x3/%d %d %d", layers[i][2], layers[i][0],
             layers[i][1]);
    total += run(name, layers[i][0], layers[i][1], layers[i][0], 3, layers[i][2], 1, layers[i][0]);
    /* The same layer on the row kernels alone (the plans' baseline). */
    snprintf(name, sizeof name, "mobilenet_v2 depthwise 3x3/%d %d %d, row kernels", layers[i][2],
             layers[i][0], layers[i][1]);
    cuvil_qdepthwise_plans_for_test(-1);
    rows_only += run(name, layers[i][0], layers[i][1], layers[i][0], 3, layers[i][2], 1, layers[i][0]);
    cuvil_qdepthwise_plans_for_test(0);
  }
  printf("  {\"layer\": \"mobilenet_v2 depthwise, all 17\", \"ms\": %.3f, \"row kernels ms\": %.3f},\n",
         total * 1e3, rows_only * 1e3);
}

int main(void) {
  printf("[\n");
  run_grid_and_patches("resnet18 conv1 7x7/2 3->64 224", 3, 224, 64, 7, 2, 3);
  run_grid_and_patches("resnet18 layer2.0 3x3/2 64->128 56", 64, 56, 128, 3, 2, 1);
  run_grid_and_patches("resnet18 layer1 3x3 64->64 56", 64, 56, 64, 3, 1, 1);
  run_grid_and_patches("resnet18 layer2 3x3 128->128 28", 128, 28, 128, 3, 1, 1);
  run("resnet18 layer3 3x3 256->256 14", 256, 14, 256, 3, 1, 1, 1);
  run("resnet18 layer4 3x3 512->512 7", 512, 7, 512, 3, 1, 1, 1);
  run_with("resnet18 layer4 3x3 512->512 7, pixel rows", cuvil_rt_qconv2d_u8s8_rows, 512, 7, 512, 3, 1, 1, 1);
  run("resnet18 layer3 3x3 256->256 14", 256, 14, 256, 3, 1, 1, 1);
  run_with("resnet18 layer3 3x3 256->256 14, pixel rows", cuvil_rt_qconv2d_u8s8_rows, 256, 14, 256, 3, 1, 1, 1);
  run("resnet18 downsample 1x1/2 64->128 56", 64, 56, 128, 1, 2, 0, 1);
  run("mobilenet_v2 pointwise 1x1 16->96 112", 16, 112, 96, 1, 1, 0, 1);
  run("mobilenet_v2 pointwise 1x1 24->144 56", 24, 56, 144, 1, 1, 0, 1);
  run("mobilenet_v2 pointwise 1x1 144->24 56", 144, 56, 24, 1, 1, 0, 1);
  mobilenet_v2_depthwise();
  printf("  {}\n]\n");
  return 0;
}
