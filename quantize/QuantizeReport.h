//===- QuantizeReport.h - What cuvil-quantize measured and chose -*- C++ -*-===//
//
// The report's data (filled by Quantizer.cpp) and its two renderings: JSON
// for programs, and a self-contained HTML page with SVG charts (sensitivity
// per layer in priority order, the error before and after each fallback,
// the activation histograms of the most sensitive layers) for people.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_QUANTIZEREPORT_H
#define CUVIL_QUANTIZE_QUANTIZEREPORT_H

#include "quantize/Calibration.h"

#include <cmath>
#include <string>
#include <vector>

namespace cuvil::quant {

struct TensorReport {
  std::string name;
  double observedMin = 0, observedMax = 0;
  uint64_t count = 0;
  Range range;
  AffineParams params;
  /// The signed histogram, down-sampled for the report (may be empty).
  double histLo = 0, histHi = 0;
  std::vector<double> histogram;
};

/// The outputs compared with the float model's.
struct Comparison {
  double relativeL2 = NAN, cosine = NAN, kl = NAN;
  bool nonFinite = false;
  std::vector<double> perOutputKL;
};

struct LayerReport {
  std::string name, kind; ///< kind: conv2d | linear | add
  int input = -1, output = -1; ///< TensorReport indices
  int rhs = -1;                ///< an add's second operand
  double weightAbsMax = 0;
  Comparison aloneInt8;   ///< only this layer int8 (simulated)
  Comparison aloneFloat;  ///< every layer int8 but this one (simulated)
  int priority = 0;       ///< 1 = most sensitive
  std::string precision = "int8";
  std::string reason;     ///< why it is not int8
  /// In int8, its sums dequantized straight to f32: no int8 layer reads
  /// its output, so rounding that to 8 bits would only add error.
  bool floatOutput = false;
};

struct GateStep {
  std::string layer, precision; ///< the fallback taken ("" for the first check)
  bool simulated = false;
  Comparison result;
};

struct QuantizeReportData {
  std::string model, output, method, backend, fallback, calibrationDigest, graphHash, tableSource;
  std::string tableDigest; ///< of the calibration table used (canonicalTableBytes)
  bool perChannel = true;
  double percentile = 99.99, maxL2 = 0.01, klThreshold = 0.02;
  size_t calibrationSamples = 0, validationSamples = 0, sensitivitySamples = 0;
  std::vector<TensorReport> tensors;
  std::vector<LayerReport> layers; ///< in graph order
  std::vector<size_t> priority;    ///< layer indices, most sensitive first
  Comparison before, after;        ///< all int8 / the final assignment (real)
  std::vector<GateStep> steps;
  bool passed = false;
  std::string failure;
  double seconds = 0;
};

std::string renderJson(const QuantizeReportData &report);
std::string renderHtml(const QuantizeReportData &report);

} // namespace cuvil::quant

#endif // CUVIL_QUANTIZE_QUANTIZEREPORT_H
