//===- PluginRegistry.h - Loaded pass plugins and their steps ----*- C++ -*-===//
//
// The tool side of cuvil/Plugin.h: loading a plugin library (its versions
// checked before any of its code runs), the passes it registers for the
// graph pipeline, and the pass that runs one of them under its constraint.
// The graph pipeline (passes/GraphPipeline) merges these steps with its
// built-in ones by phase and priority.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PLUGINS_PLUGINREGISTRY_H
#define CUVIL_PLUGINS_PLUGINREGISTRY_H

#include "cuvil/Plugin.h"

#include "mlir/Pass/Pass.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace cuvil::plugin {

/// A pass a loaded plugin registered.
struct PluginStep {
  PipelinePass registration;
  std::string plugin; ///< the library's file name, "libexample.so"
  std::string path;   ///< as given on the command line
};

/// Every plugin step, in load and registration order.
const std::vector<PluginStep> &pluginSteps();

/// The names a plugin step may not take (the built-in steps', given by the
/// graph pipeline before any plugin loads).
void setReservedStepNames(std::set<std::string> names);

/// Loads the plugin at `path`: a shared library built with CUVIL_PLUGIN for
/// this tool's plugin API, LLVM and Cuvil versions, whose registration
/// function registers at least one pass and only valid ones. On failure
/// `error` names the file and the reason and `exitCode` is 3 (the file
/// cannot be read) or 1; nothing of a refused plugin stays registered.
bool loadPlugin(const std::string &path, std::string &error, int &exitCode);

/// Loads every `--load-pass-plugin PATH` / `--load-pass-plugin=PATH` of a
/// command line and removes them from it (MLIR's own handling of that flag
/// only warns). False, with `error`, when one fails.
bool loadPluginsFromCommandLine(std::vector<char *> &args, std::string &error, int &exitCode);

/// The pass that runs `step` on a func.func when its constraint holds for
/// (that function, `target`), and otherwise leaves it alone with a remark
/// naming the constraint; a failure or invalid IR is an error naming the
/// plugin and the pass.
std::unique_ptr<mlir::Pass> createPluginStepPass(const PluginStep &step, std::string target);

} // namespace cuvil::plugin

#endif // CUVIL_PLUGINS_PLUGINREGISTRY_H
