//===- NpuTrace.h - The NPU simulator's account, drawn ----------*- C++ -*-===//
//
// cuvil-run --npu-trace FILE: the report an NPU library's runtime keeps of
// its last run (cuvil_model_npu_report) as a Chrome/Perfetto trace
// (FILE.json: one track per unit, one slice per command, the report itself
// under "cuvil") or as an SVG timeline of DMA against compute (FILE.svg).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CUVIL_RUN_NPUTRACE_H
#define CUVIL_CUVIL_RUN_NPUTRACE_H

#include "support/Status.h"

#include <string>

namespace cuvil {

/// Writes `reportJson` as a trace (.json) or timeline (.svg), atomically.
Status writeNpuTrace(const std::string &path, const std::string &reportJson);
/// One line per segment: cycles, MAC utilization, DMA bytes and how much
/// of the DMA time compute hid.
std::string npuSummary(const std::string &reportJson);

} // namespace cuvil

#endif // CUVIL_CUVIL_RUN_NPUTRACE_H
