//===- CalibrationTest.cpp - cuvil-quantize's numeric core ----------------===//
//
// Known data and histograms give known ranges, parameters and gate figures.
//
//===----------------------------------------------------------------------===//
#include "quantize/Calibration.h"

#include "CatchCompat.h"

#include <cmath>
#include <vector>

using namespace cuvil::quant;
#if __has_include(<catch2/catch_approx.hpp>)
using Catch::Approx;
#else
using Catch::Detail::Approx;
#endif

namespace {

TensorObserver observe(const std::vector<float> &x, size_t bins = TensorObserver::kDefaultBins) {
  TensorObserver o;
  o.observeRange(x.data(), x.size());
  o.startHistograms(bins);
  o.observeHistograms(x.data(), x.size());
  return o;
}

/// n evenly spaced quantiles of the exponential distribution (a heavy
/// tail, as activations have): max ln(2n), median ln 2.
std::vector<float> exponential(size_t n) {
  std::vector<float> x;
  for (size_t i = 0; i < n; ++i)
    x.push_back(static_cast<float>(-std::log(1 - (i + 0.5) / n)));
  return x;
}

std::vector<float> uniform(double lo, double hi, size_t n) {
  std::vector<float> x;
  for (size_t i = 0; i < n; ++i)
    x.push_back(static_cast<float>(lo + (hi - lo) * (i + 0.5) / n));
  return x;
}

const QuantGrid kU8{0, 255, false};
const QuantGrid kS8Sym{-127, 127, true};

} // namespace

TEST_CASE("observer: range, count and non-finite values", "[calibration]") {
  std::vector<float> x = {1.0f, -2.0f, NAN, 3.5f, INFINITY, 0.0f};
  TensorObserver o = observe(x, 8);
  CHECK(o.min() == -2.0);
  CHECK(o.max() == 3.5);
  CHECK(o.count() == 4);
  CHECK(o.nonFinite() == 2);
  CHECK(o.histogram().total() == 4);
  CHECK(o.absHistogram().hi == 3.5);
}

TEST_CASE("histogram: quantiles interpolate within bins", "[calibration]") {
  Histogram h(0, 10, 10);
  for (int i = 0; i < 10; ++i)
    h.add(i + 0.5);
  CHECK(h.quantile(0.5) == Approx(5.0));
  CHECK(h.quantile(0.25) == Approx(2.5));
  CHECK(h.quantile(1.0) == Approx(10.0));
  h.add(100); // beyond hi: the last bin
  CHECK(h.counts.back() == 2);
}

TEST_CASE("minmax: PyTorch's affine and symmetric parameters", "[calibration]") {
  TensorObserver o = observe({-1.0f, 0.5f, 3.0f});
  Range r = chooseRange(Method::MinMax, o, kU8);
  CHECK(r.lo == -1.0);
  CHECK(r.hi == 3.0);
  AffineParams a = chooseParams(r, kU8);
  CHECK(a.scale == Approx(4.0 / 255));
  CHECK(a.zeroPoint == 64); // 0 - round(-1 / (4/255)) = round(63.75)
  AffineParams s = chooseParams({-2.54, 1.0}, kS8Sym);
  CHECK(s.scale == Approx(0.02));
  CHECK(s.zeroPoint == 0);
  // A range that excludes zero is widened to include it.
  AffineParams pos = chooseParams({2.0, 5.1}, kU8);
  CHECK(pos.zeroPoint == 0);
  CHECK(pos.scale == Approx(5.1 / 255));
  // An all-zero tensor still has a usable scale.
  CHECK(chooseParams({0, 0}, kU8).scale > 0);
}

TEST_CASE("percentile: clips each tail the data reaches", "[calibration]") {
  TensorObserver o = observe(uniform(0, 1, 100000));
  Range r = percentileRange(o, 99.0);
  CHECK(r.lo == Approx(o.min())); // non-negative data keeps its lower end
  CHECK(r.hi == Approx(0.99).margin(1e-3));
  TensorObserver s = observe(uniform(-1, 1, 100000));
  Range rs = percentileRange(s, 99.0);
  CHECK(rs.lo == Approx(-0.98).margin(2e-3));
  CHECK(rs.hi == Approx(0.98).margin(2e-3));
  CHECK(chooseRange(Method::Percentile, s, kU8, 100.0).hi == Approx(s.max()));
}

TEST_CASE("entropy: a heavy tail is clipped, a uniform range is kept", "[calibration]") {
  // Uniform over [0, 1]: the best threshold is the whole range.
  TensorObserver u = observe(uniform(0, 1, 50000));
  double tu = entropyThreshold(u.absHistogram(), 128);
  CHECK(tu > 0.9);
  CHECK(tu <= u.absMax() + 1e-9);
  // A heavy tail: the threshold clips it, yet keeps the 99th percentile.
  TensorObserver e = observe(exponential(100000));
  double te = entropyThreshold(e.absHistogram(), 128);
  INFO("exponential: max " << e.max() << ", entropy threshold " << te);
  CHECK(te < 0.9 * e.max());
  CHECK(te > std::log(100.0));
  // Non-negative data uses all 256 levels of a u8 grid.
  Range r = chooseRange(Method::Entropy, e, kU8);
  CHECK(r.hi == Approx(entropyThreshold(e.absHistogram(), 256)));
  CHECK(r.lo == Approx(e.min()));
}

TEST_CASE("entropy: a relu's exact zeros do not shrink the range", "[calibration]") {
  // A relu output: as many exact zeros as positive values (here
  // exponential). The zeros quantize exactly whatever the range, so the
  // range is the positive part's alone.
  std::vector<float> positive = exponential(50000), relu = positive;
  relu.resize(250000, 0.0f);
  TensorObserver p = observe(positive), r = observe(relu);
  CHECK(r.zeros() == 200000);
  Range rp = chooseRange(Method::Entropy, p, kU8), rr = chooseRange(Method::Entropy, r, kU8);
  INFO("entropy range: positive part " << rp.hi << ", with the zeros " << rr.hi);
  CHECK(rr.hi == Approx(rp.hi).epsilon(0.02));
}

TEST_CASE("mse: clips a heavy tail, keeps a uniform range", "[calibration]") {
  std::vector<float> x = exponential(1000000);
  TensorObserver o = observe(x);
  Range r = chooseRange(Method::Mse, o, kU8);
  INFO("exponential: max " << o.max() << ", mse range " << r.lo << ".." << r.hi);
  CHECK(r.hi < 0.9 * o.max());
  CHECK(r.hi > std::log(100.0));
  // A far outlier among a million: clipping it halfway costs less than the
  // coarse step everywhere else; the negative end is kept.
  std::vector<float> y = uniform(-1, 1, 1000000);
  y.push_back(50.0f);
  TensorObserver oy = observe(y);
  CHECK(mseRange(oy, kU8).hi < 0.5 * oy.max());
  CHECK(mseRange(oy, kU8).lo == Approx(oy.min()).epsilon(0.02));
  TensorObserver u = observe(uniform(-1, 1, 20000));
  Range ru = mseRange(u, kU8);
  CHECK(ru.hi > 0.9);
  CHECK(ru.lo < -0.9);
}

TEST_CASE("per-channel symmetric weight parameters", "[calibration]") {
  std::vector<float> w = {0.5f, -1.27f, 0.1f, 0.2f, -0.3f, 0.254f};
  std::vector<AffineParams> p = perChannelSymmetricParams(w.data(), 2, 3, kS8Sym);
  REQUIRE(p.size() == 2);
  CHECK(p[0].scale == Approx(0.01));
  CHECK(p[1].scale == Approx(0.3 / 127));
  CHECK(p[0].zeroPoint == 0);
}

TEST_CASE("gate metrics: relative L2, cosine, softmax KL", "[calibration][gate]") {
  std::vector<double> p = {0.5, 0.5}, q = {0.25, 0.75};
  CHECK(klDivergence(p, q) == Approx(0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0)));
  CHECK(klDivergence(p, p) == Approx(0.0).margin(1e-15));

  OutputComparison same;
  std::vector<float> f = {3.0f, 4.0f};
  same.add(f.data(), f.data(), 2, 2);
  CHECK(same.relativeL2() == 0);
  CHECK(same.cosine() == Approx(1.0));
  CHECK(same.meanKL() == Approx(0.0).margin(1e-12));

  // Over two samples the norms accumulate: ||(0, 0.5)|| / ||(3, 4)|| = 0.1.
  OutputComparison c;
  std::vector<float> q1 = {3.0f, 4.5f};
  c.add(f.data(), f.data(), 2, 2);
  c.add(f.data(), q1.data(), 2, 2);
  CHECK(c.relativeL2() == Approx(0.5 / std::sqrt(50.0)));
  CHECK(c.cosine() < 1.0);
  CHECK(c.meanKL() > 0);
  // The gate: 0.0707 passes 0.1 and fails 0.01.
  CHECK(c.relativeL2() <= 0.1);
  CHECK_FALSE(c.relativeL2() <= 0.01);

  OutputComparison bad;
  std::vector<float> qn = {NAN, 4.0f};
  bad.add(f.data(), qn.data(), 2, 2);
  CHECK(bad.nonFinite());
}

TEST_CASE("method names round-trip", "[calibration]") {
  for (Method m : {Method::MinMax, Method::Percentile, Method::Entropy, Method::Mse})
    CHECK(parseMethod(methodName(m)) == m);
  CHECK_FALSE(parseMethod("kl"));
}
