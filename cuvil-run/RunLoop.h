//===- RunLoop.h - Read inputs, run, write outputs, time -------*- C++ -*-===//
//
// The part of cuvil-run shared by the host tool (reference evaluator and
// libraries) and its aarch64 build (libraries only). No LLVM, no logging
// library: plain stdio.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CUVIL_RUN_RUNLOOP_H
#define CUVIL_CUVIL_RUN_RUNLOOP_H

#include "support/Status.h"
#include "support/Tensor.h"

#include <functional>
#include <string>
#include <vector>

namespace cuvil {

struct RunSettings {
  std::string outputDir = ".";
  int benchmark = 0; ///< runs to time (0: run once, no timing)
  bool quiet = false;
};

/// Runs the model on `inputs` into `outputs`, which holds the previous
/// run's outputs (empty at first): a runner may reuse their buffers, so a
/// benchmark times the model, not allocating and zeroing its outputs.
using RunFn = std::function<Status(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs)>;

/// Reads .npy inputs (in order).
Result<std::vector<Tensor>> readInputs(const std::vector<std::string> &paths);

/// Runs `run` once or `benchmark` times, writes output0.npy, ... into the
/// output directory (atomically), prints the outputs unless quiet and the
/// latency summary when benchmarking. Returns the exit status.
Status runAndWrite(const RunFn &run, const std::vector<Tensor> &inputs, const RunSettings &settings);

} // namespace cuvil

#endif // CUVIL_CUVIL_RUN_RUNLOOP_H
