//===- KernelTest.cpp - GEMM and convolution kernels against plain loops --===//
//
// Every micro-kernel variant this CPU can run, the blocked driver (edges in
// M, N and K, several K-blocks, strided C, epilogues, 1 and 3 threads) and
// the convolution / linear entry points, each compared with a direct
// triple loop in double precision.
//
//===----------------------------------------------------------------------===//
#include "cpu/gemm.h"
#include "cpu/schedule.h"
#include "cpu/sort.h"
#include "cpu/winograd.h"

#include "cuvil/kernel_abi.h"
#include "cuvil/runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <iterator>
#include <random>
#include <vector>

namespace {

std::vector<float> randomVector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

// n rows of k (row-major, like weights [cout][K]) in panels of `width` rows
// interleaved along k, [ceil(n/width)][k][width], zero-padded: what
// cuvil-export writes for weights, as the A operand (width MR) or as B
// panels (width B_PANEL: row j is column j of B).
std::vector<float> packPanels(const std::vector<float> &rows, int64_t n, int64_t k,
                              int64_t width) {
  int64_t panels = (n + width - 1) / width;
  std::vector<float> packed(static_cast<size_t>(panels * k * width), 0.0f);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk)
      packed[static_cast<size_t>(((j / width) * k + kk) * width + j % width)] =
          rows[static_cast<size_t>(j * k + kk)];
  return packed;
}

std::vector<float> packRows(const std::vector<float> &a, int64_t m, int64_t k) {
  return packPanels(a, m, k, CUVIL_MR);
}

std::vector<const cuvil_microkernels *> runnableKernels() {
  std::vector<const cuvil_microkernels *> result{cuvil_microkernels_generic()};
  if (cuvil_microkernels_avx2() && cuvil_cpu_detects_feature("avx2") &&
      cuvil_cpu_detects_feature("fma"))
    result.push_back(cuvil_microkernels_avx2());
  if (cuvil_microkernels_avx512() && cuvil_cpu_detects_feature("avx512f"))
    result.push_back(cuvil_microkernels_avx512());
  return result;
}

// The runnable variants and their half-width GEMM/Winograd sets.
std::vector<const cuvil_microkernels *> runnableGemmKernels() {
  std::vector<const cuvil_microkernels *> result;
  for (const cuvil_microkernels *mk : runnableKernels()) {
    result.push_back(mk);
    if (mk->half)
      result.push_back(mk->half);
  }
  return result;
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

struct RowMajorB {
  const float *b; // [k][n]
  int64_t n;
  static void pack(const void *context, int64_t k0, int64_t kc, int64_t j0, int64_t n,
                   int64_t nrStride, float *dst) {
    auto *self = static_cast<const RowMajorB *>(context);
    for (int64_t k = 0; k < kc; ++k)
      for (int64_t j = 0; j < nrStride; ++j)
        dst[k * nrStride + j] = j < n ? self->b[(k0 + k) * self->n + j0 + j] : 0.0f;
  }
};

int64_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

} // namespace

TEST_CASE("micro-kernels compute a tile, fresh and accumulating", "[kernels]") {
  for (const cuvil_microkernels *mk : runnableGemmKernels()) {
    INFO("variant " << mk->name << ", NR " << mk->nr);
    REQUIRE(mk->nr <= CUVIL_MAX_NR);
    for (int64_t kc : {1, 7, 64}) {
      std::vector<float> a = randomVector(static_cast<size_t>(kc * CUVIL_MR), 1);
      // Wide enough for the full tile and for the widest narrow one.
      std::vector<float> b = randomVector(
          static_cast<size_t>(kc * std::max<int64_t>(mk->nr, CUVIL_NARROW_MAX)), 2);
      std::vector<float> c0 = randomVector(static_cast<size_t>(CUVIL_MR * mk->nr), 3);
      for (int accumulate : {0, 1}) {
        std::vector<float> c = c0;
        mk->full(kc, a.data(), b.data(), mk->nr, c.data(), accumulate);
        for (int64_t i = 0; i < CUVIL_MR; ++i)
          for (int64_t j = 0; j < mk->nr; ++j) {
            double want = accumulate ? c0[static_cast<size_t>(i * mk->nr + j)] : 0.0;
            for (int64_t k = 0; k < kc; ++k)
              want += double(a[static_cast<size_t>(k * CUVIL_MR + i)]) *
                      b[static_cast<size_t>(k * mk->nr + j)];
            REQUIRE(c[static_cast<size_t>(i * mk->nr + j)] == Approx(want).margin(1e-4));
          }
      }
      // The first `rows` rows only; the rest of the tile untouched.
      for (int64_t rows = 1; rows < CUVIL_MR; ++rows)
        for (int accumulate : {0, 1}) {
          INFO("rows " << rows << " accumulate " << accumulate);
          std::vector<float> c = c0;
          mk->rows(kc, a.data(), b.data(), mk->nr, c.data(), accumulate, rows);
          for (int64_t i = 0; i < CUVIL_MR; ++i)
            for (int64_t j = 0; j < mk->nr; ++j) {
              size_t at = static_cast<size_t>(i * mk->nr + j);
              if (i >= rows) {
                REQUIRE(c[at] == c0[at]);
                continue;
              }
              double want = accumulate ? c0[at] : 0.0;
              for (int64_t k = 0; k < kc; ++k)
                want += double(a[static_cast<size_t>(k * CUVIL_MR + i)]) *
                        b[static_cast<size_t>(k * mk->nr + j)];
              REQUIRE(c[at] == Approx(want).margin(1e-4));
            }
        }
      for (int64_t n = 1; n <= CUVIL_NARROW_MAX; ++n) {
        std::vector<float> c(static_cast<size_t>(CUVIL_MR * n), 0.5f);
        mk->narrow(kc, a.data(), b.data(), c.data(), n, 1);
        for (int64_t i = 0; i < CUVIL_MR; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = 0.5;
            for (int64_t k = 0; k < kc; ++k)
              want += double(a[static_cast<size_t>(k * CUVIL_MR + i)]) *
                      b[static_cast<size_t>(k * n + j)];
            REQUIRE(c[static_cast<size_t>(i * n + j)] == Approx(want).margin(1e-4));
          }
      }
    }
  }
}

TEST_CASE("run_items hands every item to exactly one call, in chunks", "[kernels]") {
  struct Visits {
    std::vector<std::atomic<int>> count;
    std::atomic<int> calls{0};
    explicit Visits(int64_t n) : count(static_cast<size_t>(n)) {}
    static void body(void *closure, int64_t begin, int64_t end) {
      auto *self = static_cast<Visits *>(closure);
      self->calls++;
      for (int64_t i = begin; i < end; ++i)
        self->count[static_cast<size_t>(i)]++;
    }
  };
  for (int32_t threads : {2, 3}) {
    Pool pool(threads);
    for (int64_t items : {1, 2, 3, 7, 48, 49, 1000}) {
      INFO("threads " << threads << " items " << items);
      Visits v(items);
      float *scratch = nullptr;
      cuvil_run_items(pool.pool, items, int64_t{1} << 30, Visits::body, &v, &scratch);
      for (int64_t i = 0; i < items; ++i)
        REQUIRE(v.count[static_cast<size_t>(i)] == 1);
      // About eight chunks per thread (one item each when there are few).
      REQUIRE(v.calls <= std::max<int64_t>(items < 8 * threads ? items : 8 * threads + threads, 1));
    }
  }
}

TEST_CASE("even_floats takes every other float (stride-2 im2col rows)", "[kernels]") {
  std::vector<float> src = randomVector(100, 4);
  for (const cuvil_microkernels *mk : runnableKernels())
    for (int64_t n : {0, 1, 3, 4, 8, 15, 16, 17, 33, 50}) {
      INFO("variant " << mk->name << " n " << n);
      std::vector<float> dst(51, NAN);
      mk->even_floats(dst.data(), src.data(), n);
      for (int64_t i = 0; i < 51; ++i)
        if (i < n)
          REQUIRE(dst[static_cast<size_t>(i)] == src[static_cast<size_t>(2 * i)]);
        else
          REQUIRE(std::isnan(dst[static_cast<size_t>(i)]));
    }
}

TEST_CASE("the blocked GEMM handles edges, K-blocks, strides and epilogues", "[kernels]") {
  struct Shape {
    int64_t m, n, k;
  };
  for (const cuvil_microkernels *mk : runnableGemmKernels())
    for (int32_t threads : {1, 3})
      for (Shape s : {Shape{1, 1, 1}, Shape{13, 37, 300}, Shape{8, 5, 9}, Shape{64, 96, 513},
                      Shape{3, 8, 2}, Shape{20, 33, 0}})
        for (int mode : {0, 1, 2, 3}) {
          // 0: B read in place for full tiles (pack_b for the rest); 1: C
          // transposed, B packed per block; 2: C transposed, B in compile-time
          // panels, bias per column (convolutions with pixels as rows); 3: the
          // same with C row-major (linear layers with x's rows as rows).
          bool transposedC = mode == 1 || mode == 2, panels = mode >= 2;
          INFO("variant " << mk->name << ", threads " << threads << ", m " << s.m << " n "
                          << s.n << " k " << s.k << ", mode " << mode);
          Pool pool(threads);
          std::vector<float> a = randomVector(static_cast<size_t>(s.m * s.k), 4);
          std::vector<float> b = randomVector(static_cast<size_t>(s.k * s.n), 5);
          std::vector<float> bias = randomVector(static_cast<size_t>(std::max(s.m, s.n)), 6);
          std::vector<float> residual = randomVector(static_cast<size_t>(s.m * s.n), 7);
          std::vector<float> packed = packRows(a, s.m, s.k);
          std::vector<float> c(static_cast<size_t>(s.m * s.n), NAN);
          std::vector<float> bT(b.size());
          for (int64_t k = 0; k < s.k; ++k)
            for (int64_t j = 0; j < s.n; ++j)
              bT[static_cast<size_t>(j * s.k + k)] = b[static_cast<size_t>(k * s.n + j)];
          std::vector<float> bPanels = packPanels(bT, s.n, s.k, CUVIL_B_PANEL);
          RowMajorB source{b.data(), s.n};
          cuvil_gemm_problem p{};
          p.m = s.m;
          p.n = s.n;
          p.k = s.k;
          p.a_packed = packed.data();
          p.pack_b = RowMajorB::pack;
          p.b_context = &source;
          // Half the cases read B in place for full tiles (pack_b for the rest).
          if (mode == 0) {
            p.b_direct = b.data();
            p.b_direct_ld = s.n;
          }
          if (panels) {
            p.pack_b = nullptr;
            p.b_context = nullptr;
            p.b_panels = bPanels.data();
            p.column_bias = 1;
          }
          p.c = c.data();
          p.c_row_stride = transposedC ? 1 : s.n;
          p.c_col_stride = transposedC ? s.m : 1;
          p.bias = bias.data();
          p.residual = residual.data();
          p.clamp = 1;
          p.lo = -0.5f;
          p.hi = 2.0f;
          cuvil_gemm_run(&p, mk, pool.pool);
          for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
              int64_t at = i * p.c_row_stride + j * p.c_col_stride;
              double want = bias[static_cast<size_t>(panels ? j : i)] +
                            residual[static_cast<size_t>(at)];
              for (int64_t k = 0; k < s.k; ++k)
                want += double(a[static_cast<size_t>(i * s.k + k)]) *
                        b[static_cast<size_t>(k * s.n + j)];
              want = std::min(std::max(want, -0.5), 2.0);
              REQUIRE(c[static_cast<size_t>(at)] == Approx(want).margin(1e-4));
            }
        }
}

namespace {

struct ConvCase {
  int64_t n, c, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, groups;
};

// Direct convolution in double: the reference.
std::vector<float> naiveConv(const ConvCase &t, int64_t oh, int64_t ow, const std::vector<float> &x,
                             const std::vector<float> &wt, const std::vector<float> &bias) {
  int64_t cinG = t.c / t.groups, coutG = t.cout / t.groups;
  std::vector<float> y(static_cast<size_t>(t.n * t.cout * oh * ow));
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t co = 0; co < t.cout; ++co)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = bias[static_cast<size_t>(co)];
          int64_t g = co / coutG;
          for (int64_t ci = 0; ci < cinG; ++ci)
            for (int64_t ky = 0; ky < t.kh; ++ky)
              for (int64_t kx = 0; kx < t.kw; ++kx) {
                int64_t iy = oy * t.sh - t.ph + ky * t.dh, ix = ox * t.sw - t.pw + kx * t.dw;
                if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w)
                  continue;
                acc += double(x[static_cast<size_t>(((n * t.c + g * cinG + ci) * t.h + iy) * t.w +
                                                    ix)]) *
                       wt[static_cast<size_t>(((co * cinG + ci) * t.kh + ky) * t.kw + kx)];
              }
          y[static_cast<size_t>(((n * t.cout + co) * oh + oy) * ow + ox)] = float(acc);
        }
  return y;
}

} // namespace

TEST_CASE("conv2d and depthwise conv2d match a direct convolution", "[kernels]") {
  Pool pool(2);
  for (ConvCase t : {ConvCase{1, 3, 11, 13, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                     ConvCase{2, 4, 9, 9, 6, 3, 2, 2, 1, 0, 1, 2, 1, 2},
                     ConvCase{1, 16, 7, 7, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1},
                     ConvCase{1, 3, 20, 20, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1},
                     ConvCase{1, 8, 10, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 8},
                     ConvCase{2, 6, 9, 8, 12, 5, 3, 2, 3, 2, 1, 1, 2, 6},
                     ConvCase{1, 4, 15, 15, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4},
                     ConvCase{1, 4, 16, 16, 4, 3, 3, 2, 2, 0, 0, 1, 1, 4},
                     ConvCase{2, 40, 7, 7, 70, 1, 1, 1, 1, 0, 0, 1, 1, 1},
                     ConvCase{2, 20, 7, 7, 20, 3, 3, 1, 1, 1, 1, 1, 1, 20},
                     ConvCase{1, 5, 6, 5, 5, 5, 3, 1, 1, 2, 1, 2, 1, 5},
                     // Vectors of channels, the general kernel: 8 and 4 pixels
                     // at once and single ones; dilated 5x5 on a plane smaller
                     // than its padded window (tap rows and columns skipped).
                     ConvCase{2, 20, 6, 8, 20, 5, 5, 1, 1, 4, 4, 2, 2, 20},
                     ConvCase{1, 18, 7, 13, 18, 5, 5, 1, 1, 2, 2, 1, 1, 18},
                     ConvCase{1, 17, 9, 23, 17, 5, 5, 2, 2, 2, 2, 1, 1, 17},
                     ConvCase{1, 3, 8, 8, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3},
                     ConvCase{1, 24, 9, 7, 36, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                     // Depthwise rows of a vector or more, stored straight into the
                     // output (the last vector overlapping): 37, 18, 16 and 33 wide.
                     ConvCase{1, 4, 19, 37, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4},
                     ConvCase{1, 3, 40, 35, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3},
                     ConvCase{1, 2, 16, 16, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2},
                     ConvCase{1, 3, 20, 33, 3, 5, 5, 1, 1, 2, 2, 1, 1, 3},
                     // 3x3 stride 1 straight from the input: two filters per
                     // channel; two rows only (no block of four).
                     ConvCase{1, 3, 6, 20, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3},
                     ConvCase{1, 2, 2, 17, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2},
                     // Planes past a few KiB: only the phases' padding is filled.
                     ConvCase{1, 2, 48, 50, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2},
                     ConvCase{1, 2, 50, 61, 2, 3, 3, 2, 2, 1, 1, 1, 1, 2},
                     // 3x3 stride 2 straight from the input rows (even widths):
                     // blocks of four rows and the rest, the last vector
                     // overlapping (18, 17 wide), padding below (odd height),
                     // two filters per channel.
                     ConvCase{1, 3, 38, 36, 3, 3, 3, 2, 2, 1, 1, 1, 1, 3},
                     ConvCase{1, 2, 21, 64, 2, 3, 3, 2, 2, 1, 1, 1, 1, 2},
                     ConvCase{1, 2, 12, 34, 4, 3, 3, 2, 2, 1, 1, 1, 1, 2},
                     // Stride-2 3-wide im2col rows split in registers: runs of
                     // 32 and of 20 + 12 columns (vector, overlapping and short),
                     // and K = 270 past one K-block (a row triple across it).
                     ConvCase{1, 3, 20, 64, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1},
                     ConvCase{2, 3, 9, 40, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1},
                     ConvCase{1, 30, 10, 12, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1},
                     // Other stride-2 widths (7x7, padding 3: resnet's first
                     // layer): a tap row's 7 columns per call, runs of 32 and
                     // 3, K = 294 with a row of taps across the K-block.
                     ConvCase{1, 3, 36, 70, 16, 7, 7, 2, 2, 3, 3, 1, 1, 1},
                     ConvCase{1, 6, 30, 64, 8, 7, 7, 2, 2, 3, 3, 1, 1, 1},
                     // A batch of 9 on two threads: whole images taken in
                     // chunks (it does not divide evenly; 2 above: static
                     // blocks of images).
                     ConvCase{9, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                     // Pixels as rows with K past one block (320) and many
                     // column tiles (1280 channels: mobilenet_v2's last conv).
                     ConvCase{1, 320, 7, 7, 1280, 1, 1, 1, 1, 0, 0, 1, 1, 1}}) {
    int64_t oh = (t.h + 2 * t.ph - t.dh * (t.kh - 1) - 1) / t.sh + 1;
    int64_t ow = (t.w + 2 * t.pw - t.dw * (t.kw - 1) - 1) / t.sw + 1;
    int64_t cinG = t.c / t.groups, coutG = t.cout / t.groups, k = cinG * t.kh * t.kw;
    INFO("conv " << t.c << "->" << t.cout << " k " << t.kh << "x" << t.kw << " groups "
                 << t.groups << " output " << oh << "x" << ow);
    std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 8);
    std::vector<float> wt = randomVector(static_cast<size_t>(t.cout * k), 9);
    std::vector<float> bias = randomVector(static_cast<size_t>(t.cout), 10);
    std::vector<float> want = naiveConv(t, oh, ow, x, wt, bias);
    std::vector<float> residual = randomVector(want.size(), 11);
    const float lo = 0.0f, hi = 6.0f;
    int64_t params[] = {1,    t.n,  t.c,  t.h,  t.w,  t.cout, oh,       ow,
                        t.kh, t.kw, t.sh, t.sw, t.ph, t.pw,   t.dh,     t.dw,
                        t.groups, 1 | 2 | 4, floatBits(lo), floatBits(hi), CUVIL_MR};
    std::vector<float> expected(want.size());
    for (size_t i = 0; i < want.size(); ++i)
      expected[i] = std::min(std::max(want[i] + residual[i], lo), hi);

    // Packed per group, as the compiler does.
    std::vector<float> packed;
    for (int64_t g = 0; g < t.groups; ++g) {
      std::vector<float> rows(wt.begin() + g * coutG * k, wt.begin() + (g + 1) * coutG * k);
      std::vector<float> p = packRows(rows, coutG, k);
      packed.insert(packed.end(), p.begin(), p.end());
    }
    std::vector<float> y(want.size(), NAN);
    cuvil_rt_current_exec = pool.pool;
    cuvil_rt_conv2d_f32(params, x.data(), packed.data(), bias.data(), residual.data(), y.data());
    for (size_t i = 0; i < y.size(); ++i)
      REQUIRE(y[i] == Approx(expected[i]).margin(1e-4));

    // Pixels as rows: weights as B panels per group, flag 16.
    std::vector<float> panels;
    for (int64_t g = 0; g < t.groups; ++g) {
      std::vector<float> rows(wt.begin() + g * coutG * k, wt.begin() + (g + 1) * coutG * k);
      std::vector<float> p = packPanels(rows, coutG, k, CUVIL_B_PANEL);
      panels.insert(panels.end(), p.begin(), p.end());
    }
    int64_t pixelRows[std::size(params)];
    std::copy(std::begin(params), std::end(params), pixelRows);
    pixelRows[17] |= 16;
    std::vector<float> yp(want.size(), NAN);
    cuvil_rt_conv2d_f32(pixelRows, x.data(), panels.data(), bias.data(), residual.data(),
                        yp.data());
    for (size_t i = 0; i < yp.size(); ++i)
      REQUIRE(yp[i] == Approx(expected[i]).margin(1e-4));
    // Every work split a tuned schedule can ask for, both forms.
    for (int split : {CUVIL_SPLIT_FINE, CUVIL_SPLIT_WHOLE, CUVIL_SPLIT_STREAM})
      for (const auto &[form, weights] : {std::pair{params, packed.data()},
                                          std::pair{pixelRows, panels.data()}}) {
        INFO("split " << split << ", pixel rows " << ((form[17] & 16) != 0));
        int64_t q[std::size(params)];
        std::copy(form, form + std::size(params), q);
        q[17] |= int64_t(split) << CUVIL_FLAG_SPLIT_SHIFT;
        std::vector<float> ys(want.size(), NAN);
        cuvil_rt_conv2d_f32(q, x.data(), weights, bias.data(), residual.data(), ys.data());
        for (size_t i = 0; i < ys.size(); ++i)
          REQUIRE(ys[i] == Approx(expected[i]).margin(1e-4));
      }
    // Both forms again on one thread (no pool): blocks are sized per
    // thread count, one thread's being the largest.
    cuvil_rt_current_exec = nullptr;
    for (const auto &[form, weights] : {std::pair{params, packed.data()},
                                        std::pair{pixelRows, panels.data()}}) {
      INFO("one thread, pixel rows " << ((form[17] & 16) != 0));
      std::vector<float> y1(want.size(), NAN);
      cuvil_rt_conv2d_f32(form, x.data(), weights, bias.data(), residual.data(), y1.data());
      for (size_t i = 0; i < y1.size(); ++i)
        REQUIRE(y1[i] == Approx(expected[i]).margin(1e-4));
    }
    cuvil_rt_current_exec = pool.pool;

    if (cinG == 1) {
      std::vector<float> yd(want.size(), NAN);
      cuvil_rt_depthwise_conv2d_f32(params, x.data(), wt.data(), bias.data(), residual.data(),
                                    yd.data());
      for (size_t i = 0; i < yd.size(); ++i)
        REQUIRE(yd[i] == Approx(expected[i]).margin(1e-4));
      // Every variant's own depthwise code, plane by plane.
      std::vector<float> scratch(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float));
      for (const cuvil_microkernels *mk : runnableKernels()) {
        INFO("depthwise variant " << mk->name);
        std::vector<float> yv(want.size(), NAN);
        cuvil_depthwise_args args{params, x.data(), wt.data(), bias.data(), residual.data(),
                                  yv.data(), 0};
        for (int64_t plane = 0; plane < t.n * t.cout; ++plane)
          mk->depthwise(&args, plane, scratch.data());
        for (size_t i = 0; i < yv.size(); ++i)
          REQUIRE(yv[i] == Approx(expected[i]).margin(1e-4));
        if (t.cout == t.c) {
          // And a vector of channels at a time (small planes' form).
          std::vector<float> yl(want.size(), NAN);
          cuvil_depthwise_args largs{params, x.data(), wt.data(), bias.data(), residual.data(),
                                     yl.data(), 0};
          for (int64_t n = 0; n < t.n; ++n)
            for (int64_t c0 = 0; c0 < t.c; c0 += mk->vl)
              mk->depthwise_lanes(&largs, n * t.c + c0, scratch.data());
          for (size_t i = 0; i < yl.size(); ++i)
            REQUIRE(yl[i] == Approx(expected[i]).margin(1e-4));
        }
        // The residual in the output's place (an in-place add): rows whose
        // last vector overlaps must not add it twice.
        std::vector<float> yr = residual;
        cuvil_depthwise_args rargs{params, x.data(), wt.data(), bias.data(), yr.data(),
                                   yr.data(), 0};
        for (int64_t plane = 0; plane < t.n * t.cout; ++plane)
          mk->depthwise(&rargs, plane, scratch.data());
        for (size_t i = 0; i < yr.size(); ++i)
          REQUIRE(yr[i] == Approx(expected[i]).margin(1e-4));
      }
    }
    cuvil_rt_current_exec = nullptr;
  }
}

TEST_CASE("depthwise then pointwise in bands matches the two convolutions", "[kernels]") {
  Pool pool(2);
  struct Case {
    int64_t n, c, h, w, cout;
  };
  // Bands: one (5 rows), several with a short last one (37 rows of 112:
  // bands of up to 18 rows), widths at and past a vector.
  for (Case t : {Case{1, 8, 20, 17, 12}, Case{2, 3, 5, 32, 5}, Case{1, 32, 37, 112, 16}}) {
    ConvCase dw{t.n, t.c, t.h, t.w, t.c, 3, 3, 1, 1, 1, 1, 1, 1, t.c};
    ConvCase pw{t.n, t.c, t.h, t.w, t.cout, 1, 1, 1, 1, 0, 0, 1, 1, 1};
    std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 21);
    std::vector<float> wd = randomVector(static_cast<size_t>(t.c * 9), 22);
    std::vector<float> bd = randomVector(static_cast<size_t>(t.c), 23);
    std::vector<float> wp = randomVector(static_cast<size_t>(t.cout * t.c), 24);
    std::vector<float> bp = randomVector(static_cast<size_t>(t.cout), 25);
    std::vector<float> packed = packRows(wp, t.cout, t.c);
    std::vector<float> mid = naiveConv(dw, t.h, t.w, x, wd, bd);
    for (float &v : mid)
      v = std::min(std::max(v, 0.0f), 6.0f);
    std::vector<float> want = naiveConv(pw, t.h, t.w, mid, wp, bp);
    std::vector<float> residual = randomVector(want.size(), 26);
    for (size_t i = 0; i < want.size(); ++i)
      want[i] = std::min(std::max(want[i] + residual[i], -1.0f), 1.0f);
    // Depthwise: bias, relu6; pointwise: bias, residual, clamp to [-1, 1].
    int64_t params[] = {1, t.n, t.c, t.h, t.w, t.c, t.h, t.w, 3, 3, 1, 1, 1, 1, 1, 1, t.c,
                        1 | 4, floatBits(0.0f), floatBits(6.0f), CUVIL_MR,
                        1, t.n, t.c, t.h, t.w, t.cout, t.h, t.w, 1, 1, 1, 1, 0, 0, 1, 1, 1,
                        1 | 2 | 4, floatBits(-1.0f), floatBits(1.0f), CUVIL_MR};
    for (bool threads : {true, false}) {
      INFO("n " << t.n << " c " << t.c << " " << t.h << "x" << t.w << " cout " << t.cout
                << (threads ? " on 2 threads" : " without a pool"));
      cuvil_rt_current_exec = threads ? pool.pool : nullptr;
      std::vector<float> y(want.size(), NAN);
      cuvil_rt_depthwise_pointwise_f32(params, x.data(), wd.data(), bd.data(), packed.data(),
                                       bp.data(), residual.data(), y.data());
      cuvil_rt_current_exec = nullptr;
      for (size_t i = 0; i < y.size(); ++i)
        REQUIRE(y[i] == Approx(want[i]).margin(1e-4));
    }
    // Every variant's band kernel, rows 3 .. 7 of the first plane.
    for (const cuvil_microkernels *mk : runnableKernels()) {
      INFO("variant " << mk->name);
      std::vector<float> pad(static_cast<size_t>(7 * (t.w + 2)), NAN);
      std::vector<float> out(static_cast<size_t>(5 * t.w), NAN);
      int64_t r0 = t.h > 7 ? 3 : 0, rows = std::min<int64_t>(5, t.h - r0);
      mk->depthwise3x3_band(x.data(), 0, t.h, t.w, r0, rows, 1, wd.data(), bd[0], 1, 0.0f, 6.0f,
                            pad.data(), out.data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < t.w; ++j)
          REQUIRE(out[static_cast<size_t>(r * t.w + j)] ==
                  Approx(mid[static_cast<size_t>((r0 + r) * t.w + j)]).margin(1e-4));
    }
  }
}

TEST_CASE("pointwise then depthwise in bands matches the two convolutions", "[kernels]") {
  Pool pool(2);
  struct Case {
    int64_t n, cin, c, h, w, stride;
  };
  // One band (two images); several bands with a short last one at stride 1
  // (144 x 56: 10-row bands, 2 rows shared) and at stride 2 (96 x 112:
  // 4-row bands, 1 row shared; odd height: padding below).
  for (Case t : {Case{2, 3, 8, 9, 32, 2}, Case{1, 5, 8, 20, 17, 1}, Case{1, 6, 144, 23, 56, 1},
                 Case{1, 4, 96, 37, 112, 2}}) {
    const int64_t oh = (t.h - 1) / t.stride + 1, ow = (t.w - 1) / t.stride + 1;
    ConvCase pw{t.n, t.cin, t.h, t.w, t.c, 1, 1, 1, 1, 0, 0, 1, 1, 1};
    ConvCase dw{t.n, t.c, t.h, t.w, t.c, 3, 3, t.stride, t.stride, 1, 1, 1, 1, t.c};
    std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.cin * t.h * t.w), 31);
    std::vector<float> wp = randomVector(static_cast<size_t>(t.c * t.cin), 32);
    std::vector<float> bp = randomVector(static_cast<size_t>(t.c), 33);
    std::vector<float> wd = randomVector(static_cast<size_t>(t.c * 9), 34);
    std::vector<float> bd = randomVector(static_cast<size_t>(t.c), 35);
    std::vector<float> mid = naiveConv(pw, t.h, t.w, x, wp, bp);
    for (float &v : mid)
      v = std::min(std::max(v, 0.0f), 6.0f);
    std::vector<float> want = naiveConv(dw, oh, ow, mid, wd, bd);
    for (float &v : want)
      v = std::min(std::max(v, -1.0f), 1.0f);
    // Pointwise: bias, relu6; depthwise: bias, clamp to [-1, 1].
    int64_t params[] = {1, t.n, t.cin, t.h, t.w, t.c, t.h, t.w, 1, 1, 1, 1, 0, 0, 1, 1, 1,
                        1 | 4, floatBits(0.0f), floatBits(6.0f), CUVIL_MR,
                        1, t.n, t.c, t.h, t.w, t.c, oh, ow, 3, 3, t.stride, t.stride, 1, 1, 1, 1,
                        t.c, 1 | 4, floatBits(-1.0f), floatBits(1.0f), CUVIL_MR};
    std::vector<float> packed = packRows(wp, t.c, t.cin);
    for (bool threads : {true, false}) {
      INFO("n " << t.n << " cin " << t.cin << " c " << t.c << " " << t.h << "x" << t.w
                << " stride " << t.stride << (threads ? " on 2 threads" : " without a pool"));
      cuvil_rt_current_exec = threads ? pool.pool : nullptr;
      std::vector<float> y(want.size(), NAN);
      cuvil_rt_pointwise_depthwise_f32(params, x.data(), packed.data(), bp.data(), wd.data(),
                                       bd.data(), y.data());
      cuvil_rt_current_exec = nullptr;
      for (size_t i = 0; i < y.size(); ++i)
        REQUIRE(y[i] == Approx(want[i]).margin(1e-4));
    }
    // Every variant's band kernel on a band of the last channel's rows held
    // apart (input row y at band[y - first]): output rows 1 .. 5.
    const int64_t o0 = 1, rows = std::min<int64_t>(5, oh - 1), last = t.c - 1;
    const int64_t first = o0 * t.stride - 1, end = std::min(t.h, (o0 + rows - 1) * t.stride + 2);
    const float *plane = mid.data() + last * t.h * t.w;
    std::vector<float> band(plane + first * t.w, plane + end * t.w);
    for (const cuvil_microkernels *mk : runnableKernels()) {
      if (ow < mk->vl)
        continue;
      INFO("variant " << mk->name << " stride " << t.stride << " " << t.h << "x" << t.w);
      std::vector<float> pad(static_cast<size_t>((rows + 2) * (t.w + 2)), NAN);
      std::vector<float> out(static_cast<size_t>(rows * ow), NAN);
      mk->depthwise3x3_band(band.data(), first, t.h, t.w, o0, rows, static_cast<int>(t.stride),
                            wd.data() + last * 9, bd[last], 1, -1.0f, 1.0f, pad.data(),
                            out.data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < ow; ++j)
          REQUIRE(out[static_cast<size_t>(r * ow + j)] ==
                  Approx(want[static_cast<size_t>((last * oh + o0 + r) * ow + j)]).margin(1e-4));
    }
  }
}

TEST_CASE("max pooling matches a direct window maximum, NaN included", "[kernels]") {
  Pool pool(2);
  struct PoolCase {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, dh, dw;
  };
  // resnet's 3x3/2 pad 1; 2x2/2; a dilated 3x2 window; a plane larger than
  // a thread's scratch (window by window).
  for (PoolCase t : {PoolCase{1, 3, 12, 11, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{2, 2, 8, 8, 2, 2, 2, 2, 0, 0, 1, 1},
                     PoolCase{1, 2, 9, 10, 3, 2, 1, 2, 1, 1, 2, 1},
                     PoolCase{1, 2, 40, 37, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{1, 1, 20, 33, 3, 3, 1, 1, 1, 1, 1, 1},
                     PoolCase{1, 1, 60, 70, 3, 3, 2, 2, 1, 1, 1, 1},
                     PoolCase{1, 1, 740, 740, 3, 3, 2, 2, 1, 1, 1, 1}}) {
    int64_t oh = (t.h + 2 * t.ph - t.dh * (t.kh - 1) - 1) / t.sh + 1;
    int64_t ow = (t.w + 2 * t.pw - t.dw * (t.kw - 1) - 1) / t.sw + 1;
    INFO("pool " << t.h << "x" << t.w << " window " << t.kh << "x" << t.kw);
    std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 22);
    x[5] = NAN;
    std::vector<float> want(static_cast<size_t>(t.n * t.c * oh * ow));
    for (int64_t p = 0; p < t.n * t.c; ++p)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          float acc = -INFINITY;
          for (int64_t ky = 0; ky < t.kh; ++ky)
            for (int64_t kx = 0; kx < t.kw; ++kx) {
              int64_t iy = oy * t.sh - t.ph + ky * t.dh, ix = ox * t.sw - t.pw + kx * t.dw;
              if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w)
                continue;
              float v = x[static_cast<size_t>((p * t.h + iy) * t.w + ix)];
              acc = std::isnan(acc) || (!std::isnan(v) && v <= acc) ? acc : v;
            }
          want[static_cast<size_t>((p * oh + oy) * ow + ox)] = acc;
        }
    int64_t params[] = {1,    t.n,  t.c,  t.h,  t.w,  t.c, oh, ow, t.kh, t.kw, t.sh,
                        t.sw, t.ph, t.pw, t.dh, t.dw, t.c, 0,  0,  0,    CUVIL_MR};
    std::vector<float> y(want.size(), 0.0f);
    cuvil_rt_current_exec = pool.pool;
    cuvil_rt_max_pool2d_f32(params, x.data(), y.data());
    cuvil_rt_current_exec = nullptr;
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(want[i]))
        REQUIRE(std::isnan(y[i]));
      else
        REQUIRE(y[i] == want[i]);
    }
  }
}

namespace {

// 3x3 filters into the Winograd F(4x4, 3x3) domain (side 6) or F(2x2, 3x3)'s
// (side 4), U = G g G^T, packed [ceil(cin/KC)][side^2][ceil(cout/8)][kc][8]:
// what cuvil-export writes (SelectKernels.cpp).
std::vector<float> winogradWeights(const std::vector<float> &wt, int64_t cout, int64_t cin,
                                   int side = 6) {
  const double g6[6][3] = {{0.25, 0, 0},          {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                           {-1.0 / 6, 1.0 / 6, -1.0 / 6}, {1.0 / 24, 1.0 / 12, 1.0 / 6},
                           {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  const double g4[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const double(*g)[3] = side == 6 ? g6 : g4;
  const int64_t positions = side * side;
  int64_t panels = (cout + CUVIL_MR - 1) / CUVIL_MR;
  std::vector<float> u(static_cast<size_t>(positions * panels * cin * CUVIL_MR), 0.0f);
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t ci = 0; ci < cin; ++ci)
      for (int a = 0; a < side; ++a)
        for (int b = 0; b < side; ++b) {
          double acc = 0;
          for (int k = 0; k < 3; ++k)
            for (int l = 0; l < 3; ++l)
              acc += g[a][k] * wt[static_cast<size_t>(((co * cin + ci) * 3 + k) * 3 + l)] *
                     g[b][l];
          // Blocks of CUVIL_WINO_KC input channels, [positions][panels][kc][MR] each.
          int64_t c0 = ci / CUVIL_WINO_KC * CUVIL_WINO_KC;
          int64_t kc = std::min<int64_t>(CUVIL_WINO_KC, cin - c0);
          u[static_cast<size_t>(c0 * positions * panels * CUVIL_MR +
                                (((a * side + b) * panels + co / CUVIL_MR) * kc + ci - c0) *
                                    CUVIL_MR +
                                co % CUVIL_MR)] = float(acc);
        }
  return u;
}

} // namespace

namespace {

// A Winograd convolution (side 6: F(4x4, 3x3), 4: F(2x2, 3x3)) against the
// direct one, through the entry point and every variant this CPU runs.
void checkWinograd(const std::vector<ConvCase> &cases, int side) {
  Pool pool(2);
  for (ConvCase t : cases) {
    int64_t oh = t.h + 2 * t.ph - 2, ow = t.w + 2 * t.pw - 2;
    INFO("F(" << side - 2 << "x" << side - 2 << ", 3x3) conv " << t.n << "x" << t.c << "x"
                << t.h << "x" << t.w << " -> " << t.cout << " padding " << t.ph << "," << t.pw);
    std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 18);
    std::vector<float> wt = randomVector(static_cast<size_t>(t.cout * t.c * 9), 19);
    std::vector<float> bias = randomVector(static_cast<size_t>(t.cout), 20);
    std::vector<float> want = naiveConv(t, oh, ow, x, wt, bias);
    std::vector<float> residual = randomVector(want.size(), 21);
    const float lo = -1.0f, hi = 2.0f;
    std::vector<float> u = winogradWeights(wt, t.cout, t.c, side);
    // Winograd's rounding error grows with the sum of |terms| (sum over K =
    // 9 * c products of values in [-1, 1]); a wrong transform is off by O(1).
    const double margin = 1e-4 * std::max<double>(1.0, double(9 * t.c) / 128);
    // Bias; bias and clamp (applied to whole vectors); bias, residual, clamp.
    for (int64_t flags : {1, 1 | 4, 1 | 2 | 4}) {
      int64_t params[] = {1,    t.n,  t.c,  t.h,  t.w,  t.cout, oh,       ow,
                          3,    3,    1,    1,    t.ph, t.pw,   1,        1,
                          1,    flags | 8 | (side == 4 ? 32 : 0), floatBits(lo), floatBits(hi),
                          CUVIL_MR};
      std::vector<float> expected(want);
      for (size_t i = 0; i < want.size(); ++i) {
        if (flags & 2)
          expected[i] += residual[i];
        if (flags & 4)
          expected[i] = std::min(std::max(expected[i], lo), hi);
      }
      // Through the entry point (the best kernels, the pool's threads) and
      // every variant this CPU runs, on one thread.
      std::vector<float> y(want.size(), NAN);
      cuvil_rt_current_exec = pool.pool;
      cuvil_rt_conv2d_f32(params, x.data(), u.data(), bias.data(), residual.data(), y.data());
      cuvil_rt_current_exec = nullptr;
      for (size_t i = 0; i < y.size(); ++i)
        REQUIRE(y[i] == Approx(expected[i]).margin(margin));
      for (const cuvil_microkernels *mk : runnableGemmKernels()) {
        INFO("variant " << mk->name << " flags " << flags);
        std::vector<float> yv(want.size(), NAN);
        cuvil_conv2d_winograd(params, x.data(), u.data(), bias.data(), residual.data(),
                              yv.data(), mk, nullptr);
        for (size_t i = 0; i < yv.size(); ++i)
          REQUIRE(yv[i] == Approx(expected[i]).margin(margin));
      }
    }
  }
}

} // namespace

TEST_CASE("Winograd F(4x4, 3x3) convolution matches a direct convolution", "[kernels]") {
  // Ragged tiles, padding 0..2, batches whose tiles share a work item,
  // input channels past one block (128) and output channels past one block
  // of M (320 with the AVX-512 kernels).
  checkWinograd({ConvCase{1, 8, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                 ConvCase{3, 5, 9, 7, 9, 3, 3, 1, 1, 0, 0, 1, 1, 1},
                 ConvCase{1, 130, 6, 11, 12, 3, 3, 1, 1, 2, 1, 1, 1, 1},
                 ConvCase{1, 16, 13, 12, 336, 3, 3, 1, 1, 1, 1, 1, 1, 1}},
                6);
}

TEST_CASE("Winograd F(2x2, 3x3) convolution matches a direct convolution", "[kernels]") {
  // 7x7 (16 tiles, the last row and column ragged), an even image with no
  // padding, batches, input channels past one block and output channels
  // past one block of M.
  checkWinograd({ConvCase{1, 8, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                 ConvCase{3, 5, 10, 8, 9, 3, 3, 1, 1, 0, 0, 1, 1, 1},
                 ConvCase{1, 130, 7, 9, 12, 3, 3, 1, 1, 2, 1, 1, 1, 1},
                 ConvCase{1, 16, 7, 7, 600, 3, 3, 1, 1, 1, 1, 1, 1, 1}},
                4);
}

TEST_CASE("linear matches x . W^T + b for one row, a few and many", "[kernels]") {
  Pool pool(2);
  // 100 columns: several tiles, split across the threads; 1800 rows: x too
  // large to pack whole in one work item.
  for (int64_t m : {1, 3, 31, 32, 64, 1800})
    for (int64_t n : {1, 10, 40, 100})
      for (void *exec : {static_cast<void *>(nullptr), static_cast<void *>(pool.pool)}) {
        const int64_t k = 300;
        INFO("m " << m << " n " << n << (exec ? " two threads" : " one thread"));
        cuvil_rt_current_exec = exec;
        std::vector<float> x = randomVector(static_cast<size_t>(m * k), 12);
        std::vector<float> w = randomVector(static_cast<size_t>(n * k), 13);
        std::vector<float> bias = randomVector(static_cast<size_t>(n), 14);
        std::vector<float> packed = packRows(w, n, k);
        std::vector<float> panels = packPanels(w, n, k, CUVIL_B_PANEL);
        std::vector<float> residual = randomVector(static_cast<size_t>(m * n), 17);
        // Bias only; then bias, residual and a clamp to [-1, 1]; each with the
        // weights as A (packed rows) and, flag 16, as B panels.
        // Every work split a tuned schedule can ask for, too.
        for (int64_t flags : {1, 7, 16 | 1, 16 | 7, 7 | (CUVIL_SPLIT_FINE << CUVIL_FLAG_SPLIT_SHIFT),
                              16 | 7 | (CUVIL_SPLIT_FINE << CUVIL_FLAG_SPLIT_SHIFT),
                              7 | (CUVIL_SPLIT_WHOLE << CUVIL_FLAG_SPLIT_SHIFT),
                              16 | 7 | (CUVIL_SPLIT_WHOLE << CUVIL_FLAG_SPLIT_SHIFT),
                              16 | 7 | (CUVIL_SPLIT_STREAM << CUVIL_FLAG_SPLIT_SHIFT)}) {
          INFO("flags " << flags);
          int64_t params[] = {1, m, k, n, flags, floatBits(-1.0f), floatBits(1.0f), CUVIL_MR};
          std::vector<float> y(static_cast<size_t>(m * n), NAN);
          cuvil_rt_linear_f32(params, x.data(), (flags & 16) ? panels.data() : packed.data(),
                              bias.data(), residual.data(), y.data());
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double want = bias[static_cast<size_t>(j)];
              for (int64_t kk = 0; kk < k; ++kk)
                want += double(x[static_cast<size_t>(i * k + kk)]) *
                        w[static_cast<size_t>(j * k + kk)];
              if (flags & 2)
                want += residual[static_cast<size_t>(i * n + j)];
              if (flags & 4)
                want = std::min(std::max(want, -1.0), 1.0);
              REQUIRE(y[static_cast<size_t>(i * n + j)] == Approx(want).margin(1e-4));
            }
        }
        cuvil_rt_current_exec = nullptr;
      }
}

TEST_CASE("matmul of two run-time operands, batched and broadcast", "[kernels]") {
  Pool pool(2);
  struct Shape {
    int64_t batch, m, k, n;
    bool broadcastB;
  };
  for (Shape s : {Shape{1, 1, 1, 1, false}, Shape{3, 17, 300, 37, false},
                  Shape{2, 16, 64, 16, true}, Shape{4, 9, 5, 130, false}}) {
    INFO("batch " << s.batch << " m " << s.m << " k " << s.k << " n " << s.n);
    std::vector<float> a = randomVector(static_cast<size_t>(s.batch * s.m * s.k), 15);
    std::vector<float> b =
        randomVector(static_cast<size_t>((s.broadcastB ? 1 : s.batch) * s.k * s.n), 16);
    std::vector<float> c(static_cast<size_t>(s.batch * s.m * s.n), NAN);
    int64_t params[] = {1, s.batch, s.m, s.k, s.n, s.m * s.k, s.broadcastB ? 0 : s.k * s.n,
                        CUVIL_MR};
    cuvil_rt_current_exec = pool.pool;
    cuvil_rt_matmul_f32(params, a.data(), b.data(), c.data());
    cuvil_rt_current_exec = nullptr;
    for (int64_t i = 0; i < s.batch; ++i)
      for (int64_t r = 0; r < s.m; ++r)
        for (int64_t j = 0; j < s.n; ++j) {
          double want = 0;
          for (int64_t k = 0; k < s.k; ++k)
            want += double(a[static_cast<size_t>((i * s.m + r) * s.k + k)]) *
                    b[static_cast<size_t>(((s.broadcastB ? 0 : i) * s.k + k) * s.n + j)];
          REQUIRE(c[static_cast<size_t>((i * s.m + r) * s.n + j)] == Approx(want).margin(1e-4));
        }
  }
}

TEST_CASE("sort is stable along any dimension, NaN greatest, for every dtype", "[kernels]") {
  // A [2][6][3] tensor sorted along the middle dimension: lines 3 apart.
  const int64_t outer = 2, len = 6, inner = 3;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(-2, 2);
  std::vector<float> f(outer * len * inner);
  for (float &x : f)
    x = float(small(rng));
  f[0] = NAN;
  f[3 * 2] = NAN;
  f[5] = -INFINITY;
  for (int descending : {0, 1}) {
    int64_t q[CUVIL_SORT_PARAMS] = {};
    q[CUVIL_SORT_DTYPE] = CUVIL_DTYPE_F32;
    q[CUVIL_SORT_OUTER] = outer;
    q[CUVIL_SORT_LEN] = len;
    q[CUVIL_SORT_INNER] = inner;
    q[CUVIL_SORT_DESCENDING] = descending;
    std::vector<float> values(f.size());
    std::vector<int64_t> indices(f.size()), scratch(2 * len);
    cuvil_rt_sort_f32(q, f.data(), values.data(), indices.data(), scratch.data());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        // The reference: std::stable_sort with NaN as the greatest key.
        std::vector<int64_t> want(len);
        for (int64_t k = 0; k < len; ++k)
          want[k] = k;
        auto key = [&](int64_t k) { return f[(o * len + k) * inner + i]; };
        std::stable_sort(want.begin(), want.end(), [&](int64_t a, int64_t b) {
          float x = key(a), y = key(b);
          if (std::isnan(x) || std::isnan(y))
            return descending ? (std::isnan(x) && !std::isnan(y)) : (!std::isnan(x) && std::isnan(y));
          return descending ? x > y : x < y;
        });
        for (int64_t k = 0; k < len; ++k) {
          int64_t at = (o * len + k) * inner + i;
          CHECK(indices[at] == want[k]);
          float got = values[at], expected = key(want[k]);
          CHECK((got == expected || (std::isnan(got) && std::isnan(expected))));
        }
      }
  }
  // Unsigned bytes compare as unsigned; the i8 entry serves both.
  uint8_t u[5] = {200, 3, 255, 0, 3};
  uint8_t uv[5];
  int64_t ui[5], us[10];
  int64_t q[CUVIL_SORT_PARAMS] = {CUVIL_DTYPE_U8, 1, 5, 1, 0};
  cuvil_rt_sort_i8(q, u, uv, ui, us);
  const uint8_t wantU[5] = {0, 3, 3, 200, 255};
  const int64_t wantI[5] = {3, 1, 4, 0, 2};
  CHECK(std::equal(uv, uv + 5, wantU));
  CHECK(std::equal(ui, ui + 5, wantI));
  int8_t s[5] = {-56, 3, -1, 0, 3};
  int8_t sv[5];
  q[CUVIL_SORT_DTYPE] = CUVIL_DTYPE_I8;
  q[CUVIL_SORT_DESCENDING] = 1;
  cuvil_rt_sort_i8(q, s, sv, ui, us);
  const int8_t wantS[5] = {3, 3, 0, -1, -56};
  const int64_t wantSI[5] = {1, 4, 3, 2, 0};
  CHECK(std::equal(sv, sv + 5, wantS));
  CHECK(std::equal(ui, ui + 5, wantSI));
}
