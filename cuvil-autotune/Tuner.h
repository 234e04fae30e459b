//===- Tuner.h - cuvil-autotune tune: measured kernel configurations -*- C++ -*-===//
//
// For every kernel op of a model (convolutions, linear layers, int8
// products) with more than one configuration the target can run, the tuner
// builds the model with each candidate in place, at its real shape, and
// measures every kernel call (cuvil-export --instrument, cuvil-run
// --profile) in a child process: libraries interleaved, repeated until the
// medians settle, each run with a timeout, a crashing candidate recorded
// and skipped. Kernels with the same signature are tuned once; those the
// database has already are not measured again. The best configuration per
// signature and device goes into the tuning database (tuning/).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_AUTOTUNE_TUNER_H
#define CUVIL_AUTOTUNE_TUNER_H

#include "support/Status.h"

#include <string>
#include <vector>

namespace cuvil::tuning {

struct TuneOptions {
  std::string model;
  std::vector<std::string> inputShapes;
  std::string target = "x86_64";
  std::string device;        ///< a built-in profile's name ("" = this machine)
  std::string deviceProfile; ///< a profile file ("" = none)
  std::string output;        ///< the database; an existing one is extended
  bool fresh = false;        ///< ignore an existing output database
  int trials = 0;            ///< candidates per kernel at most (0 = all)
  double timeBudget = 0;     ///< seconds of measurement at most (0 = none)
  unsigned shardIndex = 1, shardCount = 1;
  std::string runner; ///< a command prefixed to each measured run ("" = here)
  std::string report; ///< an HTML report
  int threads = 0;    ///< threads of the measured runs (0 = every core)
  double candidateTimeout = 120; ///< seconds per measured run
  int minRepetitions = 3, maxRepetitions = 8;
  bool costModel = false; ///< rank by the cost model, measure nothing
};

/// What a tune did (for messages and tests).
struct TuneSummary {
  int kernelOps = 0;      ///< kernel ops of the model
  int signatures = 0;     ///< distinct tunable signatures (in this shard)
  int fromDatabase = 0;   ///< of those, already in the database
  int tuned = 0;          ///< measured (or ranked) now
  int improved = 0;       ///< better than the heuristics by more than the noise
  int measurements = 0;   ///< library runs measured
  int libraries = 0;      ///< libraries built
  int failedCandidates = 0;
};

Result<TuneSummary> tune(const TuneOptions &options);

} // namespace cuvil::tuning

#endif // CUVIL_AUTOTUNE_TUNER_H
