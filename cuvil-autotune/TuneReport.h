//===- TuneReport.h - cuvil-autotune's HTML report --------------*- C++ -*-===//
//
// The page `cuvil-autotune tune --report FILE.html` writes: what was tuned,
// where, what each kernel gained, and how the search converged.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_AUTOTUNE_TUNEREPORT_H
#define CUVIL_AUTOTUNE_TUNEREPORT_H

#include <string>
#include <utility>
#include <vector>

namespace cuvil::tuning {

/// One kernel's tuning, as the report shows it.
struct KernelTuneResult {
  std::string layer;      ///< the layer's name or source line, e.g. "layer1.0.conv1" or "model.py:17"
  std::string op;         ///< "cuvil.conv.conv2d"
  std::string signature;  ///< the database key (long text)
  std::string shapes;     ///< "1x64x56x56xf32, 64x64x3x3xf32 -> 1x64x56x56xf32"
  std::string baselineChoice, bestChoice; ///< "conv2d/im2col", "conv2d/winograd_f4x4"
  double baselineMs = 0, bestMs = 0; ///< medians, ms per call
  double spreadPct = 0;   ///< the best's spread (interquartile range / median, %)
  int trials = 0;         ///< candidates measured
  bool fromDatabase = false; ///< already in the database: nothing measured
  std::vector<double> bestSoFarMs; ///< best time after trial 1, 2, ... (the curve to plot)
  std::vector<std::pair<std::string, double>> candidates; ///< choice and median ms; a negative ms = failed
  std::string note;       ///< e.g. "crashed: signal 11", "ranked by the cost model"
};

struct TuneReportData {
  std::string model, device, target, compilerVersion;
  double seconds = 0;     ///< the tuning's wall time
  int measurements = 0;   ///< library runs measured
  int threads = 1;
  std::vector<KernelTuneResult> kernels;
};

/// A self-contained HTML page (inline CSS and SVG, no scripts needed, no network).
///
/// Every string is HTML-escaped; numbers are printed with fixed precision and
/// nothing depends on the clock, so the same data always gives the same page.
/// The gains table lists the kernels by time saved (baseline - best, largest
/// first); a speedup above 1.02 is highlighted. Each measured kernel with at
/// least two points on its curve gets an <svg class="chart"> of the best time
/// so far against trials, with the baseline dashed.
std::string renderTuneReportHtml(const TuneReportData &data);

} // namespace cuvil::tuning

#endif // CUVIL_AUTOTUNE_TUNEREPORT_H
