//===- Measurement.h - Timed runs in child processes, and their statistics -*- C++ -*-===//
//
// What cuvil-autotune's measurements stand on: each run is a child process
// of its own process group (killed at its timeout, its death by a signal
// told apart from an exit status), an interrupted tune leaves no run and no
// work directory behind, samples become medians and spreads without their
// outliers, and cuvil-run's --profile table is read back. No MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_AUTOTUNE_MEASUREMENT_H
#define CUVIL_AUTOTUNE_MEASUREMENT_H

#include "support/Status.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace cuvil::tuning {

/// How a child process ended.
struct ChildResult {
  int exitCode = -1; ///< when it exited
  int signal = 0;    ///< when a signal ended it
  bool timedOut = false;
  std::string output; ///< stdout and stderr (the first 8 MiB)
  /// "" when it exited 0, else "timed out", "crashed: signal 11 (...)"
  /// (also a shell's 128 + N), "exited with status N".
  std::string failure() const;
};

/// Runs `argv` in a process group of its own, collecting its output, killed
/// with its group after `timeout` seconds. None starts once the tune was
/// interrupted.
ChildResult runChild(const std::vector<std::string> &argv, double timeout);

/// `s` quoted for /bin/sh.
std::string shellQuote(const std::string &s);

/// While set, an interruption (support/Staging.h's cleanup: the signals,
/// the crash and out-of-memory handlers) kills the run in progress and
/// removes `dir` with what it holds.
void guardWorkDirectory(const std::string &dir);
void releaseWorkDirectory();
/// Whether the cleanup ran: the tune must stop and publish nothing.
bool interrupted();

/// The median and the spread (interquartile range / median) of samples,
/// those beyond 1.5 interquartile ranges left out (from 5 samples on); NaN
/// and 0 for none.
double median(const std::vector<double> &samples);
double spread(const std::vector<double> &samples);

/// cuvil-run --profile's table: site name -> (ms per run, calls per run).
Result<std::map<std::string, std::pair<double, double>>> parseProfile(const std::string &output);

} // namespace cuvil::tuning

#endif // CUVIL_AUTOTUNE_MEASUREMENT_H
