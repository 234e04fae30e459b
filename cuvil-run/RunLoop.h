//===- RunLoop.h - Read inputs, run, write outputs, time, check -*- C++ -*-===//
//
// The part of cuvil-run shared by the host tool (reference evaluator and
// libraries) and its aarch64 build (libraries only). No LLVM, no logging
// library: plain stdio.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CUVIL_RUN_RUNLOOP_H
#define CUVIL_CUVIL_RUN_RUNLOOP_H

#include "support/Npy.h"
#include "support/Status.h"
#include "support/Tensor.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

struct RunSettings {
  std::string outputDir = ".";
  int benchmark = 0;      ///< timed runs (0: run once, no timing)
  int warmup = -1;        ///< untimed runs first (-1: 1 when benchmarking, else 0)
  double duration = 0;    ///< benchmark for at least this many seconds too
  bool quiet = false;
  std::vector<std::string> expected; ///< expected outputs (.npy), in order
  double rtol = 1e-5, atol = 1e-6;   ///< |got - want| <= atol + rtol * |want|
  std::function<void()> afterWarmup; ///< called once the untimed runs are done
};

/// The timed runs, in milliseconds.
struct LatencyStats {
  int runs = 0, warmup = 0;
  double min = 0, max = 0, mean = 0, stdev = 0, p50 = 0, p90 = 0, p99 = 0;
};

/// One output against its expected value.
struct OutputCheck {
  size_t output = 0;
  std::string expectedPath;
  bool passed = false;
  int64_t mismatches = 0; ///< elements outside the tolerance
  int64_t worst = -1;     ///< flat index of the largest |got - want| - tolerance
  std::string worstAt;    ///< the same as "[i, j, ...]"
  double got = 0, want = 0, absError = 0; ///< at `worst`
  double maxAbsError = 0;                 ///< over every element
  std::string problem;    ///< a shape or dtype mismatch, else ""
};

/// One timed site of an instrumented library (cuvil-export --instrument):
/// its calls and their total time so far.
struct ProfileRow {
  std::string name;
  int64_t calls = 0;
  double totalMs = 0;
};
/// What one cuvil-run did: written outputs, timing, checks.
struct RunReport {
  std::vector<Tensor> outputs; ///< the last run's (bf16 as f32)
  std::vector<std::string> outputPaths;
  std::vector<std::string> outputTypes; ///< "1x1000xf32"
  std::optional<LatencyStats> latency;
  std::vector<OutputCheck> checks;
  int runs = 0; ///< after the warm-up
  std::vector<ProfileRow> profile; ///< --profile
  bool checksPassed() const;
};

/// Runs the model on `inputs` into `outputs`, which holds the previous
/// run's outputs (empty at first): a runner may reuse their buffers, so a
/// benchmark times the model, not allocating and zeroing its outputs.
using RunFn = std::function<Status(const std::vector<Tensor> &inputs, std::vector<Tensor> &outputs)>;

/// Reads .npy inputs (in order), or makes "[INDEX=]DIMx...xDTYPE:random"
/// ones (uniform in [-1, 1) for floats, integers in [0, 10); input i from
/// seed + i, the same on every machine).
/// `expect`, when given, has what the model takes at each position: files
/// are checked against it before their data is read.
Result<std::vector<Tensor>> readInputs(const std::vector<std::string> &paths, uint64_t seed = 0,
                                       const std::vector<NpyExpectation> *expect = nullptr);
/// One of them: input `position` of the model.
Result<Tensor> readInput(const std::string &arg, size_t position, uint64_t seed,
                         const NpyExpectation *expect = nullptr);

/// Runs `run` (after the warm-up) once or, benchmarking, `benchmark` times
/// and for at least `duration` seconds, writes output0.npy, ... into the
/// output directory (atomically), prints the outputs unless quiet, the
/// latency summary when benchmarking and the comparison with the expected
/// outputs. A mismatch is not an error here: see RunReport::checksPassed.
Result<RunReport> runAndWrite(const RunFn &run, const std::vector<Tensor> &inputs,
                              const RunSettings &settings);

/// `got` against `want` with numpy.allclose's rule (NaN matches NaN).
OutputCheck compareOutput(const Tensor &got, const Tensor &want, double rtol, double atol);

/// The profile table (slowest first) of `runs` runs: site, calls per run,
/// ms per run, share of the total.
void printProfile(std::vector<ProfileRow> rows, int runs);

/// The error of a failed check: which output, how many elements, the worst.
Error checkFailure(const std::vector<OutputCheck> &checks, const RunSettings &settings);

} // namespace cuvil

#endif // CUVIL_CUVIL_RUN_RUNLOOP_H
