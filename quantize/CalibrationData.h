//===- CalibrationData.h - Directories of calibration samples ---*- C++ -*-===//
//
// ARCHITECTURE.md §5: calibration (and validation) data is a directory of
// samples, each an .npz file or a sub-directory of input0.npy, input1.npy,
// ... in the shapes the model takes. Samples are ordered by name so that
// every run sees them in the same order; a sample with NaN or Inf is an
// error that names the file.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_QUANTIZE_CALIBRATIONDATA_H
#define CUVIL_QUANTIZE_CALIBRATIONDATA_H

#include "support/Status.h"
#include "support/Tensor.h"

#include <string>
#include <vector>

namespace cuvil::quant {

/// The samples in `dir` (paths), sorted. An empty or missing directory, or
/// one without a single sample, is an error.
Result<std::vector<std::string>> listSamples(const std::string &dir);

/// One sample's input tensors, in input order. In an .npz, arrays named
/// input<N> or arr_<N> (numpy.savez's default) are ordered by N; other
/// names keep the archive's order.
Result<std::vector<Tensor>> loadSample(const std::string &path);

/// SHA-256 over the samples' tensors (dtype, shape, bytes), in order.
class SampleDigest {
public:
  SampleDigest();
  ~SampleDigest();
  void add(const std::vector<Tensor> &sample);
  std::string hex();

private:
  struct Impl;
  Impl *impl_;
};

} // namespace cuvil::quant

#endif // CUVIL_QUANTIZE_CALIBRATIONDATA_H
