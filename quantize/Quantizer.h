//===- Quantizer.h - cuvil-quantize's workflow ------------------*- C++ -*-===//
//
// Post-training quantization of a float model, as cuvil-quantize runs it:
//   1. load the model and run the graph pipeline without fusion (batch norm
//      folded, shapes known): the float graph;
//   2. calibrate: a float library that also returns every activation tensor
//      to be quantized runs over the samples (range pass, then histogram
//      pass); the method picks each tensor's range and parameters -- or a
//      calibration table made earlier for the same graph supplies them;
//   3. sensitivity: one simulation library in which every layer has an int8
//      branch (fake-quantized input, weights and output) selected by a
//      mask input measures the output error of each layer alone in int8 and
//      alone in float: the priority table;
//   4. the gate: the real int8 model (cuvil-quantize-layers) is compiled and
//      compared with the float outputs on the validation samples; while the
//      relative L2 error is above --max-l2, the most sensitive layers fall
//      back to fp16/bf16 (fp32 where fp16 overflows), first predicted on the
//      simulation library, then checked on the real model;
//   5. the quantized IR (every layer's precision recorded in it) and the
//      JSON/HTML reports, all written atomically.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_QUANTIZER_H
#define CUVIL_QUANTIZE_QUANTIZER_H

#include "quantize/Calibration.h"
#include "support/Status.h"

#include <string>
#include <vector>

namespace cuvil::quant {

struct QuantizeOptions {
  std::string model, calibrationData, output;
  std::vector<std::string> inputShapes;
  Method method = Method::Percentile;
  double percentile = 99.99;
  bool perChannel = true;
  std::string backend = "x86"; ///< x86 | qnnpack | onednn
  double maxL2 = 0.01, klThreshold = 0.02;
  std::string fallback = "fp16"; ///< fp16 | bf16 | fp32
  std::string validationData;    ///< "" = the calibration samples
  std::string calibrationTable;  ///< read when it exists, else written
  std::string report, html;
  size_t samples = 0;            ///< calibration samples to use; 0 = all
  size_t sensitivitySamples = 8; ///< validation samples the sensitivity runs use
  int threads = 0;               ///< 0 = all cores
  bool progress = true;          ///< a progress bar when stderr is a terminal
};

/// Runs the workflow. A gate that cannot be met is an input error (exit 1)
/// after the reports are written; the output IR is then not written.
Status quantizeModel(const QuantizeOptions &options);

} // namespace cuvil::quant

#endif // CUVIL_QUANTIZE_QUANTIZER_H
