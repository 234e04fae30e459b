//===- Calibration.h - Observers, range methods, gate metrics ---*- C++ -*-===//
//
// The numeric core of cuvil-quantize, free of MLIR so that it is tested on
// known data: an observer collects a tensor's range and histograms over the
// calibration samples (two passes: the range first, then histograms over
// that fixed range, so that no re-binning blurs them); a method turns the
// observation into a clipping range; the range becomes affine parameters
// the way PyTorch's observers compute them; the accuracy gate's metrics
// compare quantized outputs with float ones.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_CALIBRATION_H
#define CUVIL_QUANTIZE_CALIBRATION_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::quant {

/// Equal-width bins over [lo, hi]; the last bin includes hi.
struct Histogram {
  double lo = 0, hi = 0;
  std::vector<double> counts;

  Histogram() = default;
  Histogram(double lo, double hi, size_t bins) : lo(lo), hi(hi), counts(bins, 0.0) {}
  size_t size() const { return counts.size(); }
  double binWidth() const { return counts.empty() ? 0 : (hi - lo) / counts.size(); }
  double total() const;
  void add(double x, double weight = 1);
  /// The value below which `fraction` (0..1) of the mass lies, linear
  /// within a bin.
  double quantile(double fraction) const;
};

/// What calibration saw of one tensor.
class TensorObserver {
public:
  static constexpr size_t kDefaultBins = 2048;

  /// Pass 1: the finite range, the element count, non-finite values.
  void observeRange(const float *data, size_t n);
  /// Between the passes: fixes the histograms' ranges to the one observed.
  void startHistograms(size_t bins = kDefaultBins);
  /// Pass 2: the signed histogram over [min, max] and the histogram of |x|
  /// over [0, max|x|] (entropy calibration reads the latter).
  void observeHistograms(const float *data, size_t n);

  bool empty() const { return count_ == 0; }
  double min() const { return min_; }
  double max() const { return max_; }
  double absMax() const;
  uint64_t count() const { return count_; }
  uint64_t nonFinite() const { return nonFinite_; }
  /// Exact zeros seen by the histogram pass.
  uint64_t zeros() const { return zeros_; }
  const Histogram &histogram() const { return hist_; }
  const Histogram &absHistogram() const { return absHist_; }

private:
  double min_ = 0, max_ = 0;
  uint64_t count_ = 0, nonFinite_ = 0, zeros_ = 0;
  Histogram hist_, absHist_;
};

enum class Method { MinMax, Percentile, Entropy, Mse };
std::optional<Method> parseMethod(const std::string &name);
const char *methodName(Method method);

/// An integer grid: [qmin, qmax], symmetric (zero point at the middle or 0)
/// or affine.
struct QuantGrid {
  int64_t qmin = 0, qmax = 255;
  bool symmetric = false;
  int64_t levels() const { return qmax - qmin + 1; }
};

/// A clipping range [lo, hi].
struct Range {
  double lo = 0, hi = 0;
};

/// Affine quantization parameters: real = (q - zeroPoint) * scale.
struct AffineParams {
  double scale = 1;
  int64_t zeroPoint = 0;
};

/// The range `method` picks for what `observer` saw, to be quantized on
/// `grid`. `percentile` (e.g. 99.99) is the percentile method's.
Range chooseRange(Method method, const TensorObserver &observer, const QuantGrid &grid,
                  double percentile = 99.99);

/// [quantile(1 - p), quantile(p)] of the histogram, each end only where the
/// data extends to that side of zero.
Range percentileRange(const TensorObserver &observer, double percentile);
/// TensorRT's entropy calibration: the threshold T over |x| whose clipped
/// and `levels`-level quantized distribution has the least KL divergence
/// from the observed one; T = (i + 0.5) bin widths for the best bin count i.
double entropyThreshold(const Histogram &absHistogram, size_t levels);
/// The range (a shrink of [min, max] toward zero) with the least expected
/// squared error: clipping error of the mass outside plus the rounding
/// error step^2 / 12 of the mass inside.
Range mseRange(const TensorObserver &observer, const QuantGrid &grid);

/// PyTorch's observer parameters: the range widened to include 0; affine:
/// scale = (hi - lo) / (qmax - qmin), zero point = qmin - round(lo / scale)
/// clamped to the grid; symmetric: scale = max|x| / ((qmax - qmin) / 2),
/// zero point at the grid's middle (0 for int8). The scale is at least
/// float epsilon (an all-zero tensor).
AffineParams chooseParams(Range range, const QuantGrid &grid);

/// Per-channel symmetric parameters of a weight tensor laid out
/// [channels, rest...] (row-major): scale_c = max|w_c| / ((qmax - qmin)/2).
std::vector<AffineParams> perChannelSymmetricParams(const float *weights, size_t channels,
                                                    size_t perChannel, const QuantGrid &grid);

/// Accumulates the accuracy gate's figures of one output over the samples.
class OutputComparison {
public:
  /// `softmaxDim`: the extent of the last dimension, over which the KL
  /// divergence of softmax(float) to softmax(quantized) is taken (rows).
  void add(const float *reference, const float *candidate, size_t n, size_t lastDim);
  /// ||q - f|| / ||f|| over everything added (0 when both are zero).
  double relativeL2() const;
  /// <q, f> / (||q|| ||f||) (1 when both are zero).
  double cosine() const;
  /// Mean over rows of KL(softmax(f) || softmax(q)).
  double meanKL() const;
  bool nonFinite() const { return nonFinite_; }

private:
  double diff2_ = 0, ref2_ = 0, cand2_ = 0, dot_ = 0, kl_ = 0;
  uint64_t rows_ = 0;
  bool nonFinite_ = false;
};

/// KL(p || q) of two histograms of the same binning (each normalized; bins
/// where p is 0 contribute nothing; q's empty bins are smoothed by eps).
double klDivergence(const std::vector<double> &p, const std::vector<double> &q);

} // namespace cuvil::quant

#endif // CUVIL_QUANTIZE_CALIBRATION_H
