//===- QuantKernelTest.cpp - int8 kernels against plain loops -------------===//
//
// cuvil_rt_qconv2d_u8s8 and cuvil_rt_qlinear_u8s8 with every int8
// micro-kernel variant this CPU runs (the others are skipped with a
// warning), on one thread and on a pool of three, against direct loops
// with the arithmetic of QuantArithmetic.h: sum (x - zx) * w in int32 plus
// the quantized bias, then zero point + nearbyint(acc * multiplier),
// clamped (or, with f32 outputs, float(acc) * multiplier). Bit for bit:
// integer sums have no rounding to forgive.
//
//===----------------------------------------------------------------------===//
#include "cpu/qgemm.h"

#include "cuvil/kernel_abi.h"
#include "cuvil/model_abi.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

uint8_t requantizeReference(int32_t acc, float multiplier, int32_t zero, int32_t lo = 0,
                            int32_t hi = 255) {
  float v = static_cast<float>(zero) + std::nearbyint(static_cast<float>(acc) * multiplier);
  return static_cast<uint8_t>(v < lo ? lo : v > hi ? hi : v);
}

// PyTorch's onednn engine: the bias in float in the sums' domain, then
// each step rounded to float on its own (no fused multiply-add).
uint8_t requantizeOnednn(int32_t acc, float bias, float multiplier, int32_t zero, int32_t lo,
                         int32_t hi) {
  volatile float v = static_cast<float>(acc);
  v = v + bias;
  v = v * multiplier;
  v = v + static_cast<float>(zero);
  float r = std::nearbyint(v);
  return static_cast<uint8_t>(r < lo ? lo : r > hi ? hi : r);
}

std::vector<const cuvil_qkernels *> runnableQKernels() {
  std::vector<const cuvil_qkernels *> k{cuvil_qkernels_generic()};
  if (cuvil_qkernels_avx512_vnni() && cuvil_cpu_detects_feature("avx512f") &&
      cuvil_cpu_detects_feature("avx512bw") && cuvil_cpu_detects_feature("avx512vnni"))
    k.push_back(cuvil_qkernels_avx512_vnni());
  else
    WARN("SKIPPED: the avx512_vnni int8 micro-kernels (this CPU lacks AVX-512 VNNI)");
  if (k.size() > 1 && cuvil_qkernels_avx512_vnni_vbmi() && cuvil_cpu_detects_feature("avx512vbmi"))
    k.push_back(cuvil_qkernels_avx512_vnni_vbmi());
  else
    WARN("SKIPPED: the avx512_vnni_vbmi depthwise kernel (this CPU lacks AVX-512 VBMI or VNNI)");
  return k;
}

struct Pool {
  cuvil_thread_pool *pool = nullptr;
  explicit Pool(int32_t threads) {
    int error = 0;
    pool = cuvil_thread_pool_create(threads, &error);
    REQUIRE(pool);
  }
  ~Pool() { cuvil_thread_pool_destroy(pool); }
};

struct ConvCase {
  int64_t n, c, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, groups;
};

void checkConv(const ConvCase &t, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255), weight(-127, 127), bias(-20000, 20000);
  int64_t oh = (t.h + 2 * t.ph - t.dh * (t.kh - 1) - 1) / t.sh + 1;
  int64_t ow = (t.w + 2 * t.pw - t.dw * (t.kw - 1) - 1) / t.sw + 1;
  int64_t cg = t.c / t.groups, cog = t.cout / t.groups;
  int64_t zx = byte(rng), zy = byte(rng);
  // Odd seeds: an activation's narrower output range (relu6's, say).
  const int32_t yMin = seed % 2 ? std::max<int32_t>(0, static_cast<int32_t>(zy) - 40) : 0;
  const int32_t yMax = seed % 2 ? std::min<int32_t>(255, static_cast<int32_t>(zy) + 60) : 255;
  std::vector<uint8_t> x(t.n * t.c * t.h * t.w);
  for (uint8_t &v : x)
    v = static_cast<uint8_t>(byte(rng));
  std::vector<int8_t> w(t.cout * cg * t.kh * t.kw);
  for (int8_t &v : w)
    v = static_cast<int8_t>(weight(rng));
  std::vector<int32_t> biasQ(t.cout);
  std::vector<float> multiplier(t.cout);
  // onednn: the multipliers, then the float biases (kernel_abi.h's Y_ONEDNN).
  std::vector<float> onednnMultiplier(2 * t.cout);
  for (int64_t c = 0; c < t.cout; ++c) {
    biasQ[c] = bias(rng);
    multiplier[c] = std::ldexp(1.0f + (byte(rng) / 256.0f), -12);
    onednnMultiplier[c] = multiplier[c];
    onednnMultiplier[t.cout + c] = static_cast<float>(biasQ[c]) * 0.37f + 0.3f;
  }
  // The reference, on the layouts as PyTorch has them.
  std::vector<uint8_t> want(t.n * t.cout * oh * ow);
  std::vector<float> wantFloat(want.size()); // Y_FLOAT: the sums dequantized
  std::vector<uint8_t> wantOnednn(want.size());
  std::vector<float> wantOnednnFloat(want.size());
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t co = 0; co < t.cout; ++co) {
      int64_t g = co / cog;
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          int32_t acc = biasQ[co];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t a = 0; a < t.kh; ++a)
              for (int64_t b = 0; b < t.kw; ++b) {
                int64_t ih = y * t.sh - t.ph + a * t.dh, iw = xo * t.sw - t.pw + b * t.dw;
                int32_t v = (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w)
                                ? static_cast<int32_t>(zx)
                                : x[((n * t.c + g * cg + ci) * t.h + ih) * t.w + iw];
                acc += (v - static_cast<int32_t>(zx)) * w[((co * cg + ci) * t.kh + a) * t.kw + b];
              }
          const int64_t at = ((n * t.cout + co) * oh + y) * ow + xo;
          want[at] = requantizeReference(acc, multiplier[co], zy, yMin, yMax);
          wantFloat[at] = static_cast<float>(acc) * multiplier[co];
          const float biasF = onednnMultiplier[t.cout + co];
          wantOnednn[at] = requantizeOnednn(acc - biasQ[co], biasF, multiplier[co], zy, yMin, yMax);
          volatile float f = static_cast<float>(acc - biasQ[co]);
          f = f + biasF;
          wantOnednnFloat[at] = f * multiplier[co];
        }
    }
  // What the compiler writes: params, weights in (kh, kw, channel) order
  // with channels padded to quads, the offsets.
  int64_t q[CUVIL_QCONV_NUM_PARAMS] = {};
  q[CUVIL_QCONV_VERSION] = CUVIL_KERNEL_PARAMS_VERSION;
  q[CUVIL_QCONV_N] = t.n;
  q[CUVIL_QCONV_C] = t.c;
  q[CUVIL_QCONV_H] = t.h;
  q[CUVIL_QCONV_W] = t.w;
  q[CUVIL_QCONV_COUT] = t.cout;
  q[CUVIL_QCONV_OH] = oh;
  q[CUVIL_QCONV_OW] = ow;
  q[CUVIL_QCONV_KH] = t.kh;
  q[CUVIL_QCONV_KW] = t.kw;
  q[CUVIL_QCONV_SH] = t.sh;
  q[CUVIL_QCONV_SW] = t.sw;
  q[CUVIL_QCONV_PH] = t.ph;
  q[CUVIL_QCONV_PW] = t.pw;
  q[CUVIL_QCONV_DH] = t.dh;
  q[CUVIL_QCONV_DW] = t.dw;
  q[CUVIL_QCONV_GROUPS] = t.groups;
  q[CUVIL_QCONV_X_ZERO] = zx;
  q[CUVIL_QCONV_Y_ZERO] = zy;
  q[CUVIL_QCONV_Y_MIN] = yMin;
  q[CUVIL_QCONV_Y_MAX] = yMax;
  int64_t kp = cuvil_qconv_kp(q), quads = cuvil_qconv_quads(q);
  std::vector<int8_t> packed(t.cout * kp, 0);
  std::vector<int32_t> offset(t.cout), onednnOffset(t.cout);
  for (int64_t co = 0; co < t.cout; ++co) {
    uint32_t sum = 0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t a = 0; a < t.kh; ++a)
        for (int64_t b = 0; b < t.kw; ++b) {
          int8_t v = w[((co * cg + ci) * t.kh + a) * t.kw + b];
          packed[co * kp + (a * t.kw + b) * 4 * quads + ci] = v;
          sum += static_cast<uint32_t>(static_cast<int32_t>(v));
        }
    offset[co] = static_cast<int32_t>(static_cast<uint32_t>(biasQ[co]) - static_cast<uint32_t>(zx) * sum);
    onednnOffset[co] = static_cast<int32_t>(0u - static_cast<uint32_t>(zx) * sum);
  }
  // Both entry points (u8 and f32 outputs) of one convolution kernel, on
  // every variant this CPU runs, with and without threads, with the
  // integer bias and with onednn's float one.
  using Conv = void (*)(const int64_t *, const uint8_t *, const int8_t *, const int32_t *,
                        const float *, uint8_t *, void *);
  auto checkKernel = [&](const char *label, Conv u8, Conv f32, int64_t (*workspaceBytes)(const int64_t *),
                         const std::vector<int8_t> &weights) {
    for (const cuvil_qkernels *k : runnableQKernels())
    for (bool onednn : {false, true}) {
      cuvil_qkernels_use_for_test(k);
      q[CUVIL_QCONV_Y_ONEDNN] = onednn;
      const std::vector<int32_t> &offsets = onednn ? onednnOffset : offset;
      const std::vector<float> &multipliers = onednn ? onednnMultiplier : multiplier;
      const std::vector<uint8_t> &wanted = onednn ? wantOnednn : want;
      const std::vector<float> &wantedFloat = onednn ? wantOnednnFloat : wantFloat;
      // Depthwise plans where the kernels choose them, everywhere they
      // take the geometry, and never.
      std::vector<int> plans{0};
      if (k->depthwise_prepare)
        plans = {0, 1, -1};
      // Stride-1 convolutions on the padded grid and with patches; layers
      // of few channels in words of columns and of channels.
      std::vector<bool> grids{true}, columnWords{true};
      if (k->conv_tile_grid)
        grids = {true, false};
      if (k->conv_tile_grid && cuvil_qconv_column_quads(q))
        columnWords = {true, false};
      for (bool grid : grids)
      for (bool columns : columnWords)
      for (int plan : plans)
      for (int threads : {1, 3}) {
        cuvil_qdepthwise_plans_for_test(plan);
        cuvil_qconv_grid_for_test(grid);
        cuvil_qconv_columns_for_test(columns);
        INFO(label << ", variant " << k->name << (onednn ? ", onednn" : "") << ", depthwise plans "
                   << plan << (grid ? ", grid" : ", patches") << (columns ? "" : ", channel words")
                   << ", " << threads << " thread(s), seed " << seed);
        Pool pool(threads);
        cuvil_rt_current_exec = threads > 1 ? pool.pool : nullptr;
        std::vector<uint8_t> workspace(workspaceBytes(q));
        std::vector<uint8_t> y(want.size(), 0xAA);
        u8(q, x.data(), weights.data(), offsets.data(), multipliers.data(), workspace.data(), y.data());
        size_t bad = 0;
        for (size_t i = 0; i < y.size(); ++i)
          bad += y[i] != wanted[i];
        CHECK(bad == 0);
        q[CUVIL_QCONV_Y_FLOAT] = 1;
        std::vector<uint8_t> floatWorkspace(workspaceBytes(q));
        std::vector<float> yf(want.size(), NAN);
        f32(q, x.data(), weights.data(), offsets.data(), multipliers.data(), floatWorkspace.data(), yf.data());
        q[CUVIL_QCONV_Y_FLOAT] = 0;
        cuvil_rt_current_exec = nullptr;
        size_t badFloat = 0;
        for (size_t i = 0; i < yf.size(); ++i)
          badFloat += !(yf[i] == wantedFloat[i]);
        CHECK(badFloat == 0);
      }
    }
    q[CUVIL_QCONV_Y_ONEDNN] = 0;
  };
  Conv tilesF32 = [](const int64_t *p, const uint8_t *in, const int8_t *w, const int32_t *o,
                     const float *m, uint8_t *ws, void *y) {
    cuvil_rt_qconv2d_u8s8_f32(p, in, w, o, m, ws, static_cast<float *>(y));
  };
  checkKernel("pixel tiles", cuvil_rt_qconv2d_u8s8, tilesF32, cuvil_qconv_workspace_bytes, packed);
  if (t.groups == 1) {
    // Pixels as GEMM rows: the same results from weights in panels.
    std::vector<int8_t> panels(((t.cout + CUVIL_QN - 1) / CUVIL_QN) * CUVIL_QN * kp, 0);
    for (int64_t co = 0; co < t.cout; ++co)
      for (int64_t k = 0; k < kp; ++k)
        panels[cuvil_qpanel_index(co, k, kp)] = packed[co * kp + k];
    Conv rowsF32 = [](const int64_t *p, const uint8_t *in, const int8_t *w, const int32_t *o,
                      const float *m, uint8_t *ws, void *y) {
      cuvil_rt_qconv2d_u8s8_rows_f32(p, in, w, o, m, ws, static_cast<float *>(y));
    };
    checkKernel("pixel rows", cuvil_rt_qconv2d_u8s8_rows, rowsF32, cuvil_qconv_rows_workspace_bytes, panels);
  }
  cuvil_qkernels_use_for_test(nullptr);
  cuvil_qdepthwise_plans_for_test(0);
  cuvil_qconv_grid_for_test(true);
  cuvil_qconv_columns_for_test(true);
}

} // namespace

TEST_CASE("int8 convolution: every variant against plain loops", "[qkernels]") {
  // Edges everywhere: channels not in quads, output channels not in 8s,
  // pixels not in 16s or 48s, several images, groups, strides, dilation.
  checkConv({1, 5, 7, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 1);
  checkConv({2, 8, 10, 6, 6, 3, 3, 2, 2, 2, 2, 2, 2, 2}, 2);
  checkConv({1, 16, 13, 13, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1}, 3);
  checkConv({1, 3, 23, 23, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1}, 4);
  checkConv({1, 12, 9, 9, 12, 3, 3, 1, 1, 1, 1, 1, 1, 12}, 5); // depthwise: row kernels
  checkConv({2, 24, 17, 35, 24, 3, 3, 2, 2, 1, 1, 1, 1, 24}, 9);
  checkConv({1, 8, 12, 40, 8, 5, 5, 1, 1, 4, 4, 2, 2, 8}, 10);
  checkConv({1, 4, 11, 11, 4, 3, 3, 3, 3, 1, 1, 1, 1, 4}, 11);
  // Depthwise straight from the unpadded input (avx512_vnni_vbmi): rows of
  // several 64-byte loads, both borders masked, stride 2, two tap quads a
  // row (7 wide), padding of 3 rows and columns.
  checkConv({1, 3, 10, 150, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3}, 14);
  checkConv({2, 3, 9, 141, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3}, 15);
  checkConv({1, 2, 12, 20, 2, 7, 7, 1, 1, 3, 3, 1, 1, 2}, 16);
  // Depthwise by plan (avx512_vnni_vbmi): segments across row ends (7x7,
  // 14x14, odd widths), stride 2 (one window, and two where a segment's
  // taps spread past 64 bytes), wide rows (several segments a row), 5x5
  // and 7x7 windows (taps in two quads; the weights' row past 64 bytes),
  // dilation, rows narrower than the padding, one column, periods that
  // end past the last output row, several images.
  checkConv({1, 6, 7, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6}, 17);
  checkConv({2, 5, 14, 14, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5}, 18);
  checkConv({1, 4, 14, 14, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4}, 19);
  checkConv({1, 3, 56, 56, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3}, 20);
  checkConv({1, 3, 13, 29, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3}, 21);
  checkConv({1, 2, 9, 100, 2, 5, 5, 1, 2, 2, 2, 1, 1, 2}, 22);
  checkConv({1, 3, 11, 10, 3, 7, 7, 1, 1, 3, 3, 1, 1, 3}, 23);
  checkConv({1, 3, 12, 12, 3, 3, 3, 1, 1, 2, 2, 2, 2, 3}, 24);
  checkConv({1, 2, 3, 2, 2, 3, 3, 1, 1, 2, 2, 1, 1, 2}, 25);
  checkConv({1, 2, 9, 1, 2, 3, 1, 1, 1, 1, 0, 1, 1, 2}, 26);
  checkConv({1, 3, 10, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 3}, 27);
  checkConv({3, 2, 15, 22, 2, 3, 3, 2, 1, 1, 1, 1, 1, 2}, 28);
  checkConv({1, 2, 8, 40, 2, 1, 8, 1, 1, 0, 3, 1, 1, 2}, 29);
  checkConv({1, 64, 8, 8, 72, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 6);  // 64 pixels: 48 + 16
  checkConv({1, 16, 7, 7, 8, 1, 1, 2, 2, 0, 0, 1, 1, 1}, 7);   // 1x1 stride 2
  checkConv({1, 4, 40, 37, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1}, 12); // stride 2, rows of 19-20 pixels
  checkConv({1, 8, 13, 14, 8, 3, 3, 3, 3, 1, 1, 1, 1, 1}, 13); // stride 3
  // Stride 1 on the padded grid (tiles across row ends, the padding's
  // columns dropped): rows of 16 to 64 pixels, two images, a 5x5 and a
  // 7x7 window, dilation, groups, channels not in quads, weights beyond
  // 1 MiB, one output row.
  checkConv({1, 16, 20, 37, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 30);
  checkConv({2, 8, 17, 16, 12, 5, 5, 1, 1, 2, 2, 1, 1, 1}, 31);
  checkConv({1, 3, 16, 64, 8, 7, 7, 1, 1, 3, 3, 1, 1, 1}, 32);
  checkConv({1, 8, 12, 30, 8, 3, 3, 1, 1, 2, 2, 2, 2, 1}, 33);
  checkConv({1, 8, 9, 33, 16, 3, 3, 1, 1, 1, 1, 1, 1, 2}, 34);
  checkConv({1, 256, 5, 20, 520, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 35);
  checkConv({1, 6, 3, 40, 10, 3, 3, 1, 1, 0, 1, 1, 1, 1}, 36);
  // Strides on the phases of the padded plane (its rows and columns in
  // S x S planes): a 7x7 stem at stride 2, 3x3 at stride 2 and 3,
  // dilation with stride, groups and two images.
  checkConv({1, 3, 40, 40, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1}, 37);
  checkConv({1, 16, 34, 36, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1}, 38);
  checkConv({1, 5, 40, 52, 8, 3, 3, 3, 3, 1, 1, 1, 1, 1}, 39);
  checkConv({1, 8, 30, 40, 8, 3, 3, 2, 2, 2, 2, 2, 2, 1}, 40);
  checkConv({2, 8, 32, 34, 8, 3, 3, 2, 2, 1, 1, 1, 1, 2}, 41);
  // Few input channels in words of 4 adjacent columns: the 7x7/2 stem
  // above (seed 37) and a 7x7/1 (32); 11x11/4 (three words a row), one
  // channel 3x3/1, two channels 5x5/2 with dilated rows, padded rows not
  // in a multiple of the stride, two images, odd widths.
  checkConv({1, 3, 45, 67, 16, 11, 11, 4, 4, 2, 2, 1, 1, 1}, 43);
  checkConv({2, 1, 9, 37, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 44);
  checkConv({1, 2, 30, 41, 9, 5, 5, 2, 2, 2, 2, 2, 1, 1}, 45);
  checkConv({2, 3, 41, 47, 8, 7, 7, 2, 2, 3, 3, 1, 1, 1}, 46);
  // Weights beyond 1 MiB: tiles packed in groups; on the grid, where it
  // has more tiles than the pixels.
  checkConv({1, 256, 7, 9, 520, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 8);
  checkConv({1, 256, 6, 16, 520, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 42);
}

TEST_CASE("int8 linear: every variant against plain loops", "[qkernels]") {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127), bias(-5000, 5000);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 7, 1}, {3, 64, 17}, {5, 130, 64},
                         {9, 33, 70}, {1, 512, 1000}, {4, 256, 65}}) {
    int64_t zx = byte(rng), zy = byte(rng), kp = cuvil_qk_padded(k);
    std::vector<uint8_t> x(m * k);
    for (uint8_t &v : x)
      v = static_cast<uint8_t>(byte(rng));
    std::vector<int8_t> w(n * k);
    for (int8_t &v : w)
      v = static_cast<int8_t>(weight(rng));
    std::vector<int32_t> biasQ(n), offset(n);
    std::vector<float> multiplier(n);
    int64_t panels = (n + CUVIL_QN - 1) / CUVIL_QN;
    std::vector<int8_t> packed(panels * kp * CUVIL_QN, 0);
    for (int64_t j = 0; j < n; ++j) {
      biasQ[j] = bias(rng);
      multiplier[j] = std::ldexp(1.0f + byte(rng) / 256.0f, -11);
      uint32_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        packed[(((j / CUVIL_QN) * (kp / 4) + kk / 4) * CUVIL_QN + j % CUVIL_QN) * 4 + kk % 4] = w[j * k + kk];
        sum += static_cast<uint32_t>(static_cast<int32_t>(w[j * k + kk]));
      }
      offset[j] = static_cast<int32_t>(static_cast<uint32_t>(biasQ[j]) - static_cast<uint32_t>(zx) * sum);
    }
    std::vector<uint8_t> want(m * n);
    std::vector<float> wantFloat(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int32_t acc = biasQ[j];
        for (int64_t kk = 0; kk < k; ++kk)
          acc += (static_cast<int32_t>(x[i * k + kk]) - static_cast<int32_t>(zx)) * w[j * k + kk];
        want[i * n + j] = requantizeReference(acc, multiplier[j], zy);
        wantFloat[i * n + j] = static_cast<float>(acc) * multiplier[j];
      }
    int64_t q[CUVIL_QLINEAR_NUM_PARAMS] = {};
    q[CUVIL_QLINEAR_VERSION] = CUVIL_KERNEL_PARAMS_VERSION;
    q[CUVIL_QLINEAR_M] = m;
    q[CUVIL_QLINEAR_K] = k;
    q[CUVIL_QLINEAR_N] = n;
    q[CUVIL_QLINEAR_X_ZERO] = zx;
    q[CUVIL_QLINEAR_Y_ZERO] = zy;
    q[CUVIL_QLINEAR_Y_MIN] = 0;
    q[CUVIL_QLINEAR_Y_MAX] = 255;
    for (const cuvil_qkernels *kernels : runnableQKernels()) {
      cuvil_qkernels_use_for_test(kernels);
      for (int threads : {1, 3}) {
        INFO("variant " << kernels->name << ", " << threads << " thread(s), " << m << "x" << k << "x" << n);
        Pool pool(threads);
        cuvil_rt_current_exec = threads > 1 ? pool.pool : nullptr;
        std::vector<uint8_t> y(want.size(), 0xAA);
        cuvil_rt_qlinear_u8s8(q, x.data(), packed.data(), offset.data(), multiplier.data(), y.data());
        size_t bad = 0;
        for (size_t i = 0; i < y.size(); ++i)
          bad += y[i] != want[i];
        CHECK(bad == 0);
        q[CUVIL_QLINEAR_Y_FLOAT] = 1;
        std::vector<float> yf(want.size(), NAN);
        cuvil_rt_qlinear_u8s8_f32(q, x.data(), packed.data(), offset.data(), multiplier.data(), yf.data());
        q[CUVIL_QLINEAR_Y_FLOAT] = 0;
        cuvil_rt_current_exec = nullptr;
        size_t badFloat = 0;
        for (size_t i = 0; i < yf.size(); ++i)
          badFloat += !(yf[i] == wantFloat[i]);
        CHECK(badFloat == 0);
      }
    }
    cuvil_qkernels_use_for_test(nullptr);
  }
}

TEST_CASE("8-bit max pooling matches a direct window maximum, unsigned and signed", "[kernels]") {
  Pool pool(2);
  struct PoolCase {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  };
  // resnet's 3x3/2 pad 1 (odd and even padded widths); 2x2/2; stride 1;
  // a dilated window at stride 2 and a stride of 3 (the general column
  // loop); rows in several chunks of the vector kernel, a 13x13 window,
  // stride 4, dilations within and past the vector kernel's reach (the
  // loops); one row too wide for a thread's scratch (window by window).
  // Each with every int8 kernel table.
  for (PoolCase t : {PoolCase{1, 3, 12, 11, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{2, 5, 15, 16, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{2, 2, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1},
                     PoolCase{1, 4, 20, 33, 3, 5, 1, 1, 1, 2, 1, 1},
                     PoolCase{1, 2, 9, 10, 3, 2, 1, 2, 1, 1, 2, 2},
                     PoolCase{1, 3, 17, 29, 3, 3, 3, 3, 1, 1, 1, 1},
                     PoolCase{1, 64, 112, 112, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{1, 2, 7, 300, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{1, 2, 20, 150, 13, 13, 1, 1, 6, 6, 1, 1},
                     PoolCase{1, 2, 9, 131, 2, 5, 1, 4, 0, 2, 1, 1},
                     PoolCase{1, 2, 9, 100, 3, 3, 1, 1, 1, 1, 1, 40},
                     PoolCase{1, 2, 9, 150, 3, 3, 1, 1, 1, 1, 1, 70},
                     PoolCase{1, 1, 1, 1100000, 1, 3, 1, 2, 0, 1, 1, 1}}) {
    int64_t oh = (t.h + 2 * t.ph - t.dh * (t.kh - 1) - 1) / t.sh + 1;
    int64_t ow = (t.w + 2 * t.pw - t.dw * (t.kw - 1) - 1) / t.sw + 1;
    INFO("pool " << t.h << "x" << t.w << " window " << t.kh << "x" << t.kw << " stride " << t.sh
                 << "x" << t.sw);
    std::mt19937 rng(7);
    std::vector<uint8_t> x(static_cast<size_t>(t.n * t.c * t.h * t.w));
    for (uint8_t &v : x)
      v = static_cast<uint8_t>(rng());
    // Extremes that padding must not beat (0 unsigned, -128 signed) on a
    // border of the first plane.
    x[0] = 0;
    x[1] = 0x80;
    int64_t params[] = {1,    t.n,  t.c,  t.h,  t.w,  t.c, oh, ow, t.kh, t.kw, t.sh,
                        t.sw, t.ph, t.pw, t.dh, t.dw, t.c, 0,  0,  0,    CUVIL_MR};
    for (bool isSigned : {false, true}) {
      INFO((isSigned ? "i8" : "ui8"));
      std::vector<uint8_t> want(static_cast<size_t>(t.n * t.c * oh * ow));
      for (int64_t p = 0; p < t.n * t.c; ++p)
        for (int64_t oy = 0; oy < oh; ++oy)
          for (int64_t ox = 0; ox < ow; ++ox) {
            int best = INT_MIN;
            for (int64_t ky = 0; ky < t.kh; ++ky)
              for (int64_t kx = 0; kx < t.kw; ++kx) {
                int64_t iy = oy * t.sh - t.ph + ky * t.dh, ix = ox * t.sw - t.pw + kx * t.dw;
                if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w)
                  continue;
                uint8_t b = x[static_cast<size_t>((p * t.h + iy) * t.w + ix)];
                best = std::max(best, isSigned ? int(static_cast<int8_t>(b)) : int(b));
              }
            want[static_cast<size_t>((p * oh + oy) * ow + ox)] = static_cast<uint8_t>(best);
          }
      for (const cuvil_qkernels *kernels : runnableQKernels())
      for (void *exec : {static_cast<void *>(pool.pool), static_cast<void *>(nullptr)}) {
        INFO(kernels->name << (exec ? ", thread pool" : ", one thread"));
        cuvil_qkernels_use_for_test(kernels);
        std::vector<uint8_t> y(want.size(), 0x55);
        cuvil_rt_current_exec = exec;
        if (isSigned)
          cuvil_rt_max_pool2d_s8(params, reinterpret_cast<const int8_t *>(x.data()),
                                 reinterpret_cast<int8_t *>(y.data()));
        else
          cuvil_rt_max_pool2d_u8(params, x.data(), y.data());
        cuvil_rt_current_exec = nullptr;
        cuvil_qkernels_use_for_test(nullptr);
        size_t wrong = 0, first = 0;
        for (size_t i = 0; i < y.size(); ++i)
          if (y[i] != want[i] && wrong++ == 0)
            first = i;
        INFO("first wrong element " << first);
        REQUIRE(wrong == 0);
      }
    }
  }
}
