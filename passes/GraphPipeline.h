//===- GraphPipeline.h - The graph optimisation pipeline --------*- C++ -*-===//
//
// The `graph_fusion` strategy's graph-level pipeline, declared as ordered
// phases of named steps. Each step has a switch name (what
// `--disable-optimization NAME` takes), a phase and a priority inside it;
// the pipeline is built by sorting the steps, so adding an optimisation is
// one entry in the table. Steps with the same name (dead-code elimination
// runs after cleanup and after fusion) are switched together. Passes of
// loaded plugins (plugins/, cuvil/Plugin.h) join the table by phase and
// priority, after a built-in step of the same priority.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PASSES_GRAPHPIPELINE_H
#define CUVIL_PASSES_GRAPHPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace mlir::cuvil {

enum class PipelinePhase { Cleanup, ShapePropagation, GraphOptimization, Fusion, MemoryPlanning };

/// "cleanup", "shape-propagation", ...
const char *phaseName(PipelinePhase phase);

struct GraphPipelineOptions {
  /// Switch names of the steps to leave out.
  std::set<std::string> disabled;
  /// Explain every fusion the fusion step rejects (remarks on stderr).
  bool fusionRemarks = false;
  /// Print op counts before and after the pipeline (stderr).
  bool graphStats = false;
  /// Print the memory plan's summary (stderr).
  bool memoryReport = false;
  /// The target compiled for ("x86_64", "aarch64"; empty in cuvil-opt):
  /// what plugin constraints such as target("x86_64") see.
  std::string target;
};

struct PipelineStep {
  std::string name;        ///< switch name, e.g. "dead-code-elimination"
  PipelinePhase phase;
  int priority;            ///< order within the phase, lowest first
  std::string description; ///< one line for --cuvil-print-pipeline
  /// Adds the step's pass(es) to a function-level pass manager.
  std::function<void(OpPassManager &, const GraphPipelineOptions &)> add;
  std::string origin = {}; ///< empty for built-in steps, "plugin libx.so" for a plugin's
};

/// Every step, the built-in ones and those of loaded plugins, in pipeline
/// order (phase, then priority).
std::vector<PipelineStep> graphPipelineSteps();

/// The distinct switch names, sorted.
std::vector<std::string> optimizationNames();

/// Checks `--disable-optimization` names; on failure `error` lists the
/// known ones.
bool checkOptimizationNames(const std::set<std::string> &names, std::string &error);

/// Adds the enabled steps, nested on func.func, to a module pass manager.
void buildGraphPipeline(OpPassManager &pm, const GraphPipelineOptions &options);

/// The ordered phases and steps, marking the disabled ones.
void printGraphPipeline(llvm::raw_ostream &os, const GraphPipelineOptions &options);

/// Registers `cuvil-graph-optimize` (the pipeline, with a `disable` option)
/// and the `cuvil-print-pipeline` pass for cuvil-opt.
void registerGraphPipeline();

} // namespace mlir::cuvil

#endif // CUVIL_PASSES_GRAPHPIPELINE_H
