//===- Calibration.cpp - Observers, range methods, gate metrics -----------===//
#include "quantize/Calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cuvil::quant {

double Histogram::total() const {
  double t = 0;
  for (double c : counts)
    t += c;
  return t;
}

void Histogram::add(double x, double weight) {
  if (counts.empty())
    return;
  size_t i = 0;
  if (hi > lo) {
    double f = (x - lo) / (hi - lo) * counts.size();
    i = f <= 0 ? 0 : std::min(counts.size() - 1, static_cast<size_t>(f));
  }
  counts[i] += weight;
}

double Histogram::quantile(double fraction) const {
  double target = std::clamp(fraction, 0.0, 1.0) * total();
  double seen = 0, w = binWidth();
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] > 0 && seen + counts[i] >= target)
      return lo + w * (i + (target - seen) / counts[i]);
    seen += counts[i];
  }
  return hi;
}

void TensorObserver::observeRange(const float *data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float x = data[i];
    if (!std::isfinite(x)) {
      ++nonFinite_;
      continue;
    }
    if (count_ == 0)
      min_ = max_ = x;
    min_ = std::min<double>(min_, x);
    max_ = std::max<double>(max_, x);
    ++count_;
  }
}

double TensorObserver::absMax() const { return std::max(std::fabs(min_), std::fabs(max_)); }

void TensorObserver::startHistograms(size_t bins) {
  hist_ = Histogram(min_, max_, bins);
  absHist_ = Histogram(0, absMax(), bins);
  zeros_ = 0;
}

void TensorObserver::observeHistograms(const float *data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float x = data[i];
    if (!std::isfinite(x))
      continue;
    hist_.add(x);
    absHist_.add(std::fabs(x));
    zeros_ += x == 0.0f;
  }
}

std::optional<Method> parseMethod(const std::string &name) {
  for (Method m : {Method::MinMax, Method::Percentile, Method::Entropy, Method::Mse})
    if (name == methodName(m))
      return m;
  return std::nullopt;
}

const char *methodName(Method method) {
  switch (method) {
  case Method::MinMax: return "minmax";
  case Method::Percentile: return "percentile";
  case Method::Entropy: return "entropy";
  case Method::Mse: return "mse";
  }
  return "";
}

Range percentileRange(const TensorObserver &o, double percentile) {
  double p = std::clamp(percentile / 100.0, 0.5, 1.0);
  const Histogram &h = o.histogram();
  Range r{o.min(), o.max()};
  if (h.size() == 0)
    return r;
  // Clip a tail only on a side of zero the data reaches: a relu output
  // keeps its lower end at its minimum.
  if (o.max() > 0)
    r.hi = std::max(0.0, std::min(o.max(), h.quantile(p)));
  if (o.min() < 0)
    r.lo = std::min(0.0, std::max(o.min(), h.quantile(1 - p)));
  return r;
}

double klDivergence(const std::vector<double> &p, const std::vector<double> &q) {
  double sp = 0, sq = 0;
  for (double v : p)
    sp += v;
  for (double v : q)
    sq += v;
  if (sp <= 0)
    return 0;
  const double eps = 1e-12;
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0)
      continue;
    double pi = p[i] / sp;
    double qi = sq > 0 ? q[i] / sq : 0;
    kl += pi * std::log(pi / std::max(qi, eps));
  }
  return kl;
}

double entropyThreshold(const Histogram &h, size_t levels) {
  size_t n = h.size();
  if (n == 0 || h.hi <= 0)
    return h.hi;
  if (levels >= n)
    return h.hi;
  double bestKL = std::numeric_limits<double>::infinity();
  size_t best = n;
  std::vector<double> p, q;
  for (size_t i = levels; i <= n; ++i) {
    // P: the first i bins, the outliers folded into the last one.
    p.assign(h.counts.begin(), h.counts.begin() + i);
    double outliers = 0;
    for (size_t j = i; j < n; ++j)
      outliers += h.counts[j];
    p[i - 1] += outliers;
    // Q: the first i bins merged into `levels` levels, each level's mass
    // spread evenly over the bins of it that were non-empty.
    q.assign(i, 0.0);
    for (size_t l = 0; l < levels; ++l) {
      size_t begin = l * i / levels, end = (l + 1) * i / levels;
      double mass = 0;
      size_t nonEmpty = 0;
      for (size_t j = begin; j < end; ++j) {
        mass += h.counts[j];
        nonEmpty += h.counts[j] > 0;
      }
      for (size_t j = begin; j < end; ++j)
        if (h.counts[j] > 0)
          q[j] = mass / nonEmpty;
    }
    double kl = klDivergence(p, q);
    if (kl < bestKL) {
      bestKL = kl;
      best = i;
    }
  }
  return std::min(h.hi, (best + 0.5) * h.binWidth());
}

namespace {

/// The expected squared error of quantizing what `h` holds on `grid` with
/// the range `r`.
double expectedSquaredError(const Histogram &h, Range r, const QuantGrid &grid) {
  AffineParams a = chooseParams(r, grid);
  double lo = (grid.qmin - a.zeroPoint) * a.scale, hi = (grid.qmax - a.zeroPoint) * a.scale;
  double w = h.binWidth(), inside = a.scale * a.scale / 12, err = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    if (h.counts[i] == 0)
      continue;
    double c = h.lo + w * (i + 0.5);
    double d = c < lo ? lo - c : c > hi ? c - hi : 0;
    err += h.counts[i] * (d > 0 ? d * d : inside);
  }
  return err;
}

} // namespace

Range mseRange(const TensorObserver &o, const QuantGrid &grid) {
  Range best{o.min(), o.max()};
  if (o.histogram().size() == 0)
    return best;
  double bestErr = expectedSquaredError(o.histogram(), best, grid);
  // Each end shrinks toward zero on its own (an outlier on one side must
  // not cost the other side its range): two rounds of coordinate descent
  // over 1%-steps of the observed ends.
  for (int round = 0; round < 2; ++round)
    for (int end = 0; end < 2; ++end)
      for (int step = 100; step >= 5; --step) {
        Range r = best;
        (end ? r.lo : r.hi) = (end ? o.min() : o.max()) * (step / 100.0);
        double e = expectedSquaredError(o.histogram(), r, grid);
        if (e < bestErr) {
          bestErr = e;
          best = r;
        }
      }
  return best;
}

Range chooseRange(Method method, const TensorObserver &o, const QuantGrid &grid,
                  double percentile) {
  switch (method) {
  case Method::MinMax:
    return {o.min(), o.max()};
  case Method::Percentile:
    return percentileRange(o, percentile);
  case Method::Entropy: {
    // Signed data spends half the levels on each side of zero.
    size_t levels = o.min() < 0 ? grid.levels() / 2 : grid.levels();
    // Exact zeros (a relu's) quantize without error whatever the range, so
    // they do not vote: left in, their spike in the first bin drives the
    // KL search to needlessly small thresholds.
    Histogram abs = o.absHistogram();
    if (abs.size())
      abs.counts[0] = std::max(0.0, abs.counts[0] - static_cast<double>(o.zeros()));
    double t = entropyThreshold(abs, levels);
    return {std::max(o.min(), -t), std::min(o.max(), t)};
  }
  case Method::Mse:
    return mseRange(o, grid);
  }
  return {o.min(), o.max()};
}

AffineParams chooseParams(Range range, const QuantGrid &grid) {
  const double eps = std::numeric_limits<float>::epsilon();
  double lo = std::min(range.lo, 0.0), hi = std::max(range.hi, 0.0);
  double span = static_cast<double>(grid.qmax - grid.qmin);
  AffineParams a;
  if (grid.symmetric) {
    double amax = std::max(-lo, hi);
    a.scale = std::max(amax / (span / 2), eps);
    a.zeroPoint = grid.qmin < 0 ? 0 : (grid.qmin + grid.qmax + 1) / 2;
    return a;
  }
  a.scale = std::max((hi - lo) / span, eps);
  int64_t zp = grid.qmin - static_cast<int64_t>(std::nearbyint(lo / a.scale));
  a.zeroPoint = std::clamp(zp, grid.qmin, grid.qmax);
  return a;
}

std::vector<AffineParams> perChannelSymmetricParams(const float *w, size_t channels,
                                                    size_t perChannel, const QuantGrid &grid) {
  std::vector<AffineParams> out;
  QuantGrid sym = grid;
  sym.symmetric = true;
  for (size_t c = 0; c < channels; ++c) {
    double amax = 0;
    for (size_t i = 0; i < perChannel; ++i)
      if (std::isfinite(w[c * perChannel + i]))
        amax = std::max(amax, std::fabs(static_cast<double>(w[c * perChannel + i])));
    out.push_back(chooseParams({-amax, amax}, sym));
  }
  return out;
}

void OutputComparison::add(const float *f, const float *q, size_t n, size_t lastDim) {
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(f[i]) || !std::isfinite(q[i])) {
      nonFinite_ = true;
      continue;
    }
    double d = static_cast<double>(q[i]) - f[i];
    diff2_ += d * d;
    ref2_ += static_cast<double>(f[i]) * f[i];
    cand2_ += static_cast<double>(q[i]) * q[i];
    dot_ += static_cast<double>(f[i]) * q[i];
  }
  if (lastDim == 0 || n % lastDim)
    return;
  // KL of the softmax distributions along the last dimension, row by row.
  for (size_t r = 0; r < n / lastDim; ++r) {
    const float *fr = f + r * lastDim, *qr = q + r * lastDim;
    double fm = -INFINITY, qm = -INFINITY;
    for (size_t j = 0; j < lastDim; ++j) {
      fm = std::max<double>(fm, fr[j]);
      qm = std::max<double>(qm, qr[j]);
    }
    if (!std::isfinite(fm) || !std::isfinite(qm))
      continue;
    double fs = 0, qs = 0;
    for (size_t j = 0; j < lastDim; ++j) {
      fs += std::exp(fr[j] - fm);
      qs += std::exp(qr[j] - qm);
    }
    double kl = 0;
    for (size_t j = 0; j < lastDim; ++j) {
      double lp = fr[j] - fm - std::log(fs), lq = qr[j] - qm - std::log(qs);
      kl += std::exp(lp) * (lp - lq);
    }
    kl_ += std::max(0.0, kl);
    ++rows_;
  }
}

double OutputComparison::relativeL2() const {
  if (ref2_ == 0)
    return diff2_ == 0 ? 0 : INFINITY;
  return std::sqrt(diff2_ / ref2_);
}

double OutputComparison::cosine() const {
  if (ref2_ == 0 && cand2_ == 0)
    return 1;
  if (ref2_ == 0 || cand2_ == 0)
    return 0;
  return dot_ / std::sqrt(ref2_ * cand2_);
}

double OutputComparison::meanKL() const { return rows_ ? kl_ / rows_ : 0; }

} // namespace cuvil::quant
