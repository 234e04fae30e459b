//===- KernelAbiTest.cpp - kernel_abi.h's names against the kernels -------===//
//
// The compiler writes each kernel's params array by the names in
// cuvil/kernel_abi.h and the kernels read it by the same names. These cases
// hold the names to what the kernels do: every layout is dense (each
// position named once), and each kernel, given an array built field by
// field by name (the rest poisoned first) with fields that all differ
// (H != W, KH != KW, SH != SW, ...), computes what those fields describe.
// A kernel reading a field from another position, or a name moved without
// the kernels, fails here.
//
//===----------------------------------------------------------------------===//
#include "cpu/gemm.h"

#include "cuvil/kernel_abi.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

// Whether the names are 0 .. N-1, each once.
template <size_t N> constexpr bool dense(const int (&names)[N]) {
  for (size_t i = 0; i < N; ++i) {
    int seen = 0;
    for (size_t j = 0; j < N; ++j)
      seen += names[j] == static_cast<int>(i);
    if (seen != 1)
      return false;
  }
  return true;
}

constexpr int kConvNames[] = {
    CUVIL_CONV_VERSION, CUVIL_CONV_N,  CUVIL_CONV_C,  CUVIL_CONV_H,      CUVIL_CONV_W,
    CUVIL_CONV_COUT,    CUVIL_CONV_OH, CUVIL_CONV_OW, CUVIL_CONV_KH,     CUVIL_CONV_KW,
    CUVIL_CONV_SH,      CUVIL_CONV_SW, CUVIL_CONV_PH, CUVIL_CONV_PW,     CUVIL_CONV_DH,
    CUVIL_CONV_DW,      CUVIL_CONV_GROUPS, CUVIL_CONV_FLAGS, CUVIL_CONV_LO, CUVIL_CONV_HI,
    CUVIL_CONV_MR};
constexpr int kLinearNames[] = {CUVIL_LINEAR_VERSION, CUVIL_LINEAR_M,     CUVIL_LINEAR_K,
                                CUVIL_LINEAR_N,       CUVIL_LINEAR_FLAGS, CUVIL_LINEAR_LO,
                                CUVIL_LINEAR_HI,      CUVIL_LINEAR_MR};
constexpr int kMatmulNames[] = {CUVIL_MATMUL_VERSION,        CUVIL_MATMUL_BATCH,
                                CUVIL_MATMUL_M,              CUVIL_MATMUL_K,
                                CUVIL_MATMUL_N,              CUVIL_MATMUL_A_BATCH_STRIDE,
                                CUVIL_MATMUL_B_BATCH_STRIDE, CUVIL_MATMUL_MR};
constexpr int kSortNames[] = {CUVIL_SORT_DTYPE, CUVIL_SORT_OUTER, CUVIL_SORT_LEN, CUVIL_SORT_INNER,
                              CUVIL_SORT_DESCENDING};
constexpr int kDftNames[] = {CUVIL_DFT_BATCH, CUVIL_DFT_N, CUVIL_DFT_INVERSE};
constexpr int kLuNames[] = {CUVIL_LU_BATCH, CUVIL_LU_M, CUVIL_LU_N};
constexpr int kCholeskyNames[] = {CUVIL_CHOLESKY_BATCH, CUVIL_CHOLESKY_N, CUVIL_CHOLESKY_UPPER};
constexpr int kTriangularSolveNames[] = {
    CUVIL_TRIANGULAR_SOLVE_BATCH, CUVIL_TRIANGULAR_SOLVE_N,    CUVIL_TRIANGULAR_SOLVE_K,
    CUVIL_TRIANGULAR_SOLVE_UPPER, CUVIL_TRIANGULAR_SOLVE_LEFT, CUVIL_TRIANGULAR_SOLVE_UNITRIANGULAR};
constexpr int kGeqrfNames[] = {CUVIL_GEQRF_BATCH, CUVIL_GEQRF_M, CUVIL_GEQRF_N};
constexpr int kHouseholderNames[] = {CUVIL_HOUSEHOLDER_PRODUCT_BATCH, CUVIL_HOUSEHOLDER_PRODUCT_M,
                                     CUVIL_HOUSEHOLDER_PRODUCT_N, CUVIL_HOUSEHOLDER_PRODUCT_K};
constexpr int kOrmqrNames[] = {CUVIL_ORMQR_BATCH, CUVIL_ORMQR_M,         CUVIL_ORMQR_N,
                               CUVIL_ORMQR_K,     CUVIL_ORMQR_LEFT,      CUVIL_ORMQR_TRANSPOSE,
                               CUVIL_ORMQR_V_COLS};
constexpr int kEighNames[] = {CUVIL_EIGH_BATCH, CUVIL_EIGH_N, CUVIL_EIGH_UPPER, CUVIL_EIGH_VECTORS};
constexpr int kSvdNames[] = {CUVIL_SVD_BATCH, CUVIL_SVD_M, CUVIL_SVD_N, CUVIL_SVD_FULL_MATRICES,
                             CUVIL_SVD_COMPUTE_UV};

// Each layout names every position once and its size counts them all.
static_assert(dense(kConvNames) && std::size(kConvNames) == CUVIL_CONV_NUM_PARAMS);
static_assert(dense(kLinearNames) && std::size(kLinearNames) == CUVIL_LINEAR_NUM_PARAMS);
static_assert(dense(kMatmulNames) && std::size(kMatmulNames) == CUVIL_MATMUL_NUM_PARAMS);
static_assert(dense(kSortNames) && std::size(kSortNames) == CUVIL_SORT_PARAMS);
static_assert(dense(kDftNames) && std::size(kDftNames) == CUVIL_DFT_PARAMS);
static_assert(dense(kLuNames) && std::size(kLuNames) == CUVIL_LU_PARAMS);
static_assert(dense(kCholeskyNames) && std::size(kCholeskyNames) == CUVIL_CHOLESKY_PARAMS);
static_assert(dense(kTriangularSolveNames) &&
              std::size(kTriangularSolveNames) == CUVIL_TRIANGULAR_SOLVE_PARAMS);
static_assert(dense(kGeqrfNames) && std::size(kGeqrfNames) == CUVIL_GEQRF_PARAMS);
static_assert(dense(kHouseholderNames) &&
              std::size(kHouseholderNames) == CUVIL_HOUSEHOLDER_PRODUCT_PARAMS);
static_assert(dense(kOrmqrNames) && std::size(kOrmqrNames) == CUVIL_ORMQR_PARAMS);
static_assert(dense(kEighNames) && std::size(kEighNames) == CUVIL_EIGH_PARAMS);
static_assert(dense(kSvdNames) && std::size(kSvdNames) == CUVIL_SVD_PARAMS);
// The GEMM family's arrays start with the version and end with MR.
static_assert(CUVIL_CONV_VERSION == 0 && CUVIL_CONV_MR == CUVIL_CONV_NUM_PARAMS - 1);
static_assert(CUVIL_LINEAR_VERSION == 0 && CUVIL_LINEAR_MR == CUVIL_LINEAR_NUM_PARAMS - 1);
static_assert(CUVIL_MATMUL_VERSION == 0 && CUVIL_MATMUL_MR == CUVIL_MATMUL_NUM_PARAMS - 1);
// Flags are separate bits.
constexpr int kFlags[] = {CUVIL_FLAG_BIAS,     CUVIL_FLAG_RESIDUAL,   CUVIL_FLAG_CLAMP,
                          CUVIL_FLAG_WINOGRAD, CUVIL_FLAG_PIXEL_ROWS, CUVIL_FLAG_WINOGRAD2};
constexpr bool separateBits() {
  int all = 0;
  for (int f : kFlags) {
    if (f <= 0 || (f & (f - 1)) != 0 || (all & f) != 0)
      return false;
    all |= f;
  }
  return true;
}
static_assert(separateBits());
// Compile-time B panels are read in place by the widest tile.
static_assert(CUVIL_B_PANEL % CUVIL_MAX_NR == 0);

constexpr int64_t kPoison = -0x7ead;

std::vector<float> randomVector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

int64_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// n rows of k in panels of `width` rows interleaved along k: the A operand
// (width MR) or B panels (width B_PANEL), as cuvil-export packs weights.
std::vector<float> packPanels(const float *rows, int64_t n, int64_t k, int64_t width) {
  int64_t panels = (n + width - 1) / width;
  std::vector<float> packed(static_cast<size_t>(panels * k * width), 0.0f);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk)
      packed[static_cast<size_t>(((j / width) * k + kk) * width + j % width)] = rows[j * k + kk];
  return packed;
}

// One convolution (or pooling) as its fields.
struct Conv {
  int64_t n, c, h, w, cout, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  int64_t flags = 0;
  float lo = 0.0f, hi = 0.0f;
  int64_t oh() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
};

// Its params, by name only.
std::array<int64_t, CUVIL_CONV_NUM_PARAMS> convParams(const Conv &t) {
  std::array<int64_t, CUVIL_CONV_NUM_PARAMS> q;
  q.fill(kPoison);
  q[CUVIL_CONV_VERSION] = CUVIL_KERNEL_PARAMS_VERSION;
  q[CUVIL_CONV_N] = t.n;
  q[CUVIL_CONV_C] = t.c;
  q[CUVIL_CONV_H] = t.h;
  q[CUVIL_CONV_W] = t.w;
  q[CUVIL_CONV_COUT] = t.cout;
  q[CUVIL_CONV_OH] = t.oh();
  q[CUVIL_CONV_OW] = t.ow();
  q[CUVIL_CONV_KH] = t.kh;
  q[CUVIL_CONV_KW] = t.kw;
  q[CUVIL_CONV_SH] = t.sh;
  q[CUVIL_CONV_SW] = t.sw;
  q[CUVIL_CONV_PH] = t.ph;
  q[CUVIL_CONV_PW] = t.pw;
  q[CUVIL_CONV_DH] = t.dh;
  q[CUVIL_CONV_DW] = t.dw;
  q[CUVIL_CONV_GROUPS] = t.groups;
  q[CUVIL_CONV_FLAGS] = t.flags;
  q[CUVIL_CONV_LO] = floatBits(t.lo);
  q[CUVIL_CONV_HI] = floatBits(t.hi);
  q[CUVIL_CONV_MR] = CUVIL_MR;
  for (int64_t v : q)
    REQUIRE(v != kPoison);
  return q;
}

// The convolution in double, epilogue as t's flags say; weights
// [cout][c / groups][kh][kw].
std::vector<float> directConv(const Conv &t, const std::vector<float> &x,
                              const std::vector<float> &wt, const std::vector<float> &bias,
                              const std::vector<float> &residual) {
  const int64_t cinG = t.c / t.groups, coutG = t.cout / t.groups, oh = t.oh(), ow = t.ow();
  std::vector<float> y(static_cast<size_t>(t.n * t.cout * oh * ow));
  for (int64_t n = 0; n < t.n; ++n)
    for (int64_t co = 0; co < t.cout; ++co)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          const size_t at = static_cast<size_t>(((n * t.cout + co) * oh + oy) * ow + ox);
          double acc = (t.flags & CUVIL_FLAG_BIAS) ? bias[static_cast<size_t>(co)] : 0.0;
          const int64_t g = co / coutG;
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
          if (t.flags & CUVIL_FLAG_RESIDUAL)
            acc += residual[at];
          if (t.flags & CUVIL_FLAG_CLAMP)
            acc = std::min<double>(std::max<double>(acc, t.lo), t.hi);
          y[at] = float(acc);
        }
  return y;
}

void requireNear(const std::vector<float> &got, const std::vector<float> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(want[i]).margin(1e-4));
  }
}

} // namespace

TEST_CASE("every micro-kernel tile reads compile-time B panels in place", "[kernel_abi]") {
  for (const cuvil_microkernels *mk :
       {cuvil_microkernels_generic(), cuvil_microkernels_avx2(), cuvil_microkernels_avx512()}) {
    for (; mk; mk = mk->half) {
      INFO(mk->name);
      CHECK(mk->nr <= CUVIL_MAX_NR);
      CHECK(CUVIL_B_PANEL % mk->nr == 0);
    }
  }
}

TEST_CASE("convolution params by name: im2col and pixel rows", "[kernel_abi]") {
  // Every field differs from its neighbours; two groups.
  Conv t{2, 4, 7, 9, 6, 3, 2, 2, 1, 1, 0, 1, 2, 2};
  t.flags = CUVIL_FLAG_BIAS | CUVIL_FLAG_RESIDUAL | CUVIL_FLAG_CLAMP;
  t.lo = -0.5f;
  t.hi = 0.75f;
  const int64_t cinG = t.c / t.groups, coutG = t.cout / t.groups, k = cinG * t.kh * t.kw;
  std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 1);
  std::vector<float> wt = randomVector(static_cast<size_t>(t.cout * k), 2);
  std::vector<float> bias = randomVector(static_cast<size_t>(t.cout), 3);
  std::vector<float> residual = randomVector(static_cast<size_t>(t.n * t.cout * t.oh() * t.ow()), 4);
  const std::vector<float> want = directConv(t, x, wt, bias, residual);

  std::vector<float> aPanels, bPanels; // per group
  for (int64_t g = 0; g < t.groups; ++g) {
    std::vector<float> a = packPanels(wt.data() + g * coutG * k, coutG, k, CUVIL_MR);
    std::vector<float> b = packPanels(wt.data() + g * coutG * k, coutG, k, CUVIL_B_PANEL);
    aPanels.insert(aPanels.end(), a.begin(), a.end());
    bPanels.insert(bPanels.end(), b.begin(), b.end());
  }
  std::vector<float> y(want.size(), NAN);
  cuvil_rt_conv2d_f32(convParams(t).data(), x.data(), aPanels.data(), bias.data(),
                      residual.data(), y.data());
  requireNear(y, want);

  Conv rows = t;
  rows.flags |= CUVIL_FLAG_PIXEL_ROWS;
  std::fill(y.begin(), y.end(), NAN);
  cuvil_rt_conv2d_f32(convParams(rows).data(), x.data(), bPanels.data(), bias.data(),
                      residual.data(), y.data());
  requireNear(y, want);
}

// Pixels as rows over a batch whose weights are past a few megabytes: one
// GEMM over every image's pixels, its [pixel][cout] blocks transposed after
// with the residual and the clamp (conv2d_pixel_rows_batched); a panel of
// rows spans two images where the image's pixels are not a multiple of MR.
TEST_CASE("convolution with pixels as rows: a batch in one GEMM", "[kernel_abi]") {
  for (int64_t kh : {3, 1}) {
    INFO("kernel " << kh << "x" << kh);
    Conv t{3, 256, 5, 3, 576, kh, kh, 1, 1, kh / 2, kh / 2, 1, 1, 1};
    if (kh == 1)
      t.c = 2048; // 4.7 MB of pointwise weights
    t.flags = CUVIL_FLAG_BIAS | CUVIL_FLAG_RESIDUAL | CUVIL_FLAG_CLAMP | CUVIL_FLAG_PIXEL_ROWS;
    t.lo = -0.5f;
    t.hi = 0.75f;
    const int64_t k = t.c * t.kh * t.kw;
    REQUIRE(k * t.cout * 4 >= (int64_t(4) << 20));
    std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 31);
    std::vector<float> wt = randomVector(static_cast<size_t>(t.cout * k), 32);
    std::vector<float> bias = randomVector(static_cast<size_t>(t.cout), 33);
    std::vector<float> residual = randomVector(static_cast<size_t>(t.n * t.cout * t.oh() * t.ow()), 34);
    const std::vector<float> want = directConv(t, x, wt, bias, residual);
    const std::vector<float> panels = packPanels(wt.data(), t.cout, k, CUVIL_B_PANEL);
    std::vector<float> y(want.size(), NAN);
    cuvil_rt_conv2d_f32(convParams(t).data(), x.data(), panels.data(), bias.data(), residual.data(), y.data());
    requireNear(y, want);
  }
}

TEST_CASE("convolution params by name: depthwise and max pooling", "[kernel_abi]") {
  // Channel multiplier 2, a 3x5 window, every other field distinct.
  Conv t{2, 3, 10, 8, 6, 3, 5, 2, 1, 1, 2, 2, 1, 3};
  t.flags = CUVIL_FLAG_BIAS | CUVIL_FLAG_RESIDUAL;
  std::vector<float> x = randomVector(static_cast<size_t>(t.n * t.c * t.h * t.w), 5);
  std::vector<float> wt = randomVector(static_cast<size_t>(t.cout * t.kh * t.kw), 6);
  std::vector<float> bias = randomVector(static_cast<size_t>(t.cout), 7);
  std::vector<float> residual = randomVector(static_cast<size_t>(t.n * t.cout * t.oh() * t.ow()), 8);
  const std::vector<float> want = directConv(t, x, wt, bias, residual);
  std::vector<float> y(want.size(), NAN);
  cuvil_rt_depthwise_conv2d_f32(convParams(t).data(), x.data(), wt.data(), bias.data(),
                                residual.data(), y.data());
  requireNear(y, want);

  // Pooling: Cout = groups = C, flags 0.
  Conv p{2, 3, 9, 10, 3, 3, 2, 1, 2, 1, 0, 2, 1, 3};
  const int64_t oh = p.oh(), ow = p.ow();
  std::vector<float> pooled(static_cast<size_t>(p.n * p.c * oh * ow), NAN), max(pooled.size());
  for (int64_t plane = 0; plane < p.n * p.c; ++plane)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        float m = -INFINITY;
        for (int64_t ky = 0; ky < p.kh; ++ky)
          for (int64_t kx = 0; kx < p.kw; ++kx) {
            int64_t iy = oy * p.sh - p.ph + ky * p.dh, ix = ox * p.sw - p.pw + kx * p.dw;
            if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w)
              m = std::max(m, x[static_cast<size_t>((plane * p.h + iy) * p.w + ix)]);
          }
        max[static_cast<size_t>((plane * oh + oy) * ow + ox)] = m;
      }
  cuvil_rt_max_pool2d_f32(convParams(p).data(), x.data(), pooled.data());
  requireNear(pooled, max);
}

TEST_CASE("convolution params by name: the fused depthwise / pointwise pairs", "[kernel_abi]") {
  // Depthwise 3x3 (bias, relu6) then pointwise (bias, residual): two
  // arrays back to back, the second at CUVIL_CONV_NUM_PARAMS.
  const int64_t n = 1, c = 5, h = 6, w = 17, cout = 7;
  Conv dw{n, c, h, w, c, 3, 3, 1, 1, 1, 1, 1, 1, c};
  dw.flags = CUVIL_FLAG_BIAS | CUVIL_FLAG_CLAMP;
  dw.lo = 0.0f;
  dw.hi = 6.0f;
  Conv pw{n, c, h, w, cout, 1, 1, 1, 1, 0, 0, 1, 1, 1};
  pw.flags = CUVIL_FLAG_BIAS | CUVIL_FLAG_RESIDUAL;
  std::vector<float> x = randomVector(static_cast<size_t>(n * c * h * w), 9);
  std::vector<float> wd = randomVector(static_cast<size_t>(c * 9), 10);
  std::vector<float> bd = randomVector(static_cast<size_t>(c), 11);
  std::vector<float> wp = randomVector(static_cast<size_t>(cout * c), 12);
  std::vector<float> bp = randomVector(static_cast<size_t>(cout), 13);
  std::vector<float> residual = randomVector(static_cast<size_t>(n * cout * h * w), 14);
  const std::vector<float> mid = directConv(dw, x, wd, bd, {});
  const std::vector<float> want = directConv(pw, mid, wp, bp, residual);
  std::vector<int64_t> params;
  for (const Conv &part : {dw, pw}) {
    std::array<int64_t, CUVIL_CONV_NUM_PARAMS> q = convParams(part);
    params.insert(params.end(), q.begin(), q.end());
  }
  const std::vector<float> packed = packPanels(wp.data(), cout, c, CUVIL_MR);
  std::vector<float> y(want.size(), NAN);
  cuvil_rt_depthwise_pointwise_f32(params.data(), x.data(), wd.data(), bd.data(), packed.data(),
                                   bp.data(), residual.data(), y.data());
  requireNear(y, want);

  // Pointwise (bias) then depthwise 3x3 stride 2 (bias, clamp).
  const int64_t cin = 3, c2 = 6, h2 = 9, w2 = 34;
  Conv pw2{n, cin, h2, w2, c2, 1, 1, 1, 1, 0, 0, 1, 1, 1};
  pw2.flags = CUVIL_FLAG_BIAS;
  Conv dw2{n, c2, h2, w2, c2, 3, 3, 2, 2, 1, 1, 1, 1, c2};
  dw2.flags = CUVIL_FLAG_BIAS | CUVIL_FLAG_CLAMP;
  dw2.lo = -1.0f;
  dw2.hi = 1.0f;
  std::vector<float> x2 = randomVector(static_cast<size_t>(n * cin * h2 * w2), 15);
  std::vector<float> wp2 = randomVector(static_cast<size_t>(c2 * cin), 16);
  std::vector<float> bp2 = randomVector(static_cast<size_t>(c2), 17);
  std::vector<float> wd2 = randomVector(static_cast<size_t>(c2 * 9), 18);
  std::vector<float> bd2 = randomVector(static_cast<size_t>(c2), 19);
  const std::vector<float> want2 = directConv(dw2, directConv(pw2, x2, wp2, bp2, {}), wd2, bd2, {});
  params.clear();
  for (const Conv &part : {pw2, dw2}) {
    std::array<int64_t, CUVIL_CONV_NUM_PARAMS> q = convParams(part);
    params.insert(params.end(), q.begin(), q.end());
  }
  const std::vector<float> packed2 = packPanels(wp2.data(), c2, cin, CUVIL_MR);
  std::vector<float> y2(want2.size(), NAN);
  cuvil_rt_pointwise_depthwise_f32(params.data(), x2.data(), packed2.data(), bp2.data(),
                                   wd2.data(), bd2.data(), y2.data());
  requireNear(y2, want2);
}

TEST_CASE("linear and matmul params by name", "[kernel_abi]") {
  const int64_t m = 3, k = 7, n = 5;
  std::vector<float> x = randomVector(static_cast<size_t>(m * k), 20);
  std::vector<float> wt = randomVector(static_cast<size_t>(n * k), 21);
  std::vector<float> bias = randomVector(static_cast<size_t>(n), 22);
  std::vector<float> residual = randomVector(static_cast<size_t>(m * n), 23);
  const float lo = -0.25f, hi = 1.5f;
  std::vector<float> want(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = bias[static_cast<size_t>(j)] + residual[static_cast<size_t>(i * n + j)];
      for (int64_t kk = 0; kk < k; ++kk)
        acc += double(x[static_cast<size_t>(i * k + kk)]) * wt[static_cast<size_t>(j * k + kk)];
      want[static_cast<size_t>(i * n + j)] = float(std::min<double>(std::max<double>(acc, lo), hi));
    }
  for (bool rows : {false, true}) {
    INFO((rows ? "pixel rows (B panels)" : "weights as A"));
    std::array<int64_t, CUVIL_LINEAR_NUM_PARAMS> q;
    q.fill(kPoison);
    q[CUVIL_LINEAR_VERSION] = CUVIL_KERNEL_PARAMS_VERSION;
    q[CUVIL_LINEAR_M] = m;
    q[CUVIL_LINEAR_K] = k;
    q[CUVIL_LINEAR_N] = n;
    q[CUVIL_LINEAR_FLAGS] = CUVIL_FLAG_BIAS | CUVIL_FLAG_RESIDUAL | CUVIL_FLAG_CLAMP |
                            (rows ? CUVIL_FLAG_PIXEL_ROWS : 0);
    q[CUVIL_LINEAR_LO] = floatBits(lo);
    q[CUVIL_LINEAR_HI] = floatBits(hi);
    q[CUVIL_LINEAR_MR] = CUVIL_MR;
    for (int64_t v : q)
      REQUIRE(v != kPoison);
    const std::vector<float> packed = packPanels(wt.data(), n, k, rows ? CUVIL_B_PANEL : CUVIL_MR);
    std::vector<float> y(want.size(), NAN);
    cuvil_rt_linear_f32(q.data(), x.data(), packed.data(), bias.data(), residual.data(), y.data());
    requireNear(y, want);
  }

  // Two batch items of a, one b shared (batch stride 0).
  const int64_t batch = 2;
  std::vector<float> a = randomVector(static_cast<size_t>(batch * m * k), 24);
  std::vector<float> b = randomVector(static_cast<size_t>(k * n), 25);
  std::vector<float> product(static_cast<size_t>(batch * m * n));
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += double(a[static_cast<size_t>((i * m + r) * k + kk)]) *
                 b[static_cast<size_t>(kk * n + j)];
        product[static_cast<size_t>((i * m + r) * n + j)] = float(acc);
      }
  std::array<int64_t, CUVIL_MATMUL_NUM_PARAMS> q;
  q.fill(kPoison);
  q[CUVIL_MATMUL_VERSION] = CUVIL_KERNEL_PARAMS_VERSION;
  q[CUVIL_MATMUL_BATCH] = batch;
  q[CUVIL_MATMUL_M] = m;
  q[CUVIL_MATMUL_K] = k;
  q[CUVIL_MATMUL_N] = n;
  q[CUVIL_MATMUL_A_BATCH_STRIDE] = m * k;
  q[CUVIL_MATMUL_B_BATCH_STRIDE] = 0;
  q[CUVIL_MATMUL_MR] = CUVIL_MR;
  for (int64_t v : q)
    REQUIRE(v != kPoison);
  std::vector<float> c(product.size(), NAN);
  cuvil_rt_matmul_f32(q.data(), a.data(), b.data(), c.data());
  requireNear(c, product);
}
