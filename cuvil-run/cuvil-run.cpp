//===- cuvil-run.cpp - Run a model on .npy inputs -------------------------===//
//
// cuvil-run MODEL --input X.npy [--input Y.npy...] [--output-dir DIR]
//           [--function NAME] [--benchmark N] [--threads T]
//
// MODEL is a library made by cuvil-export (.so, run through its C API) or a
// .mlir / .mlirbc file, run on Cuvil's reference evaluator.
// Outputs are written as output0.npy, output1.npy, ... (atomically).
//
//===----------------------------------------------------------------------===//
#include "cuvil-run/LibraryRunner.h"
#include "cuvil-run/RunLoop.h"
#include "dialects/Cuvil/Reference/ModelRunner.h"
#include "support/AtomicFile.h"
#include "support/Npy.h"
#include "support/Tool/ToolSupport.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-run";

struct Options {
  std::string model;
  std::vector<std::string> inputs;
  std::string outputDir = ".";
  std::string function;
  int benchmark = 0;
  int threads = 0;
  bool quiet = false;
  LogOptions log;
};

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run(const Options &opt) {
  bool library = endsWith(opt.model, ".so");
  if (!library && !endsWith(opt.model, ".mlir") && !endsWith(opt.model, ".mlirbc"))
    return reportError(kTool, usageError("'" + opt.model +
                                         "': expected a compiled library (.so) or a .mlir / "
                                         ".mlirbc model"));
  // Fail before any work if the outputs cannot be written.
  if (Status s = prepareOutputDir(opt.outputDir); !s)
    return reportError(kTool, s.error());
  Result<std::vector<Tensor>> inputs = readInputs(opt.inputs);
  if (!inputs)
    return reportError(kTool, inputs.error());
  for (size_t i = 0; i < inputs->size(); ++i)
    spdlog::info("input {}: {} from '{}'", i, (*inputs)[i].describe(), opt.inputs[i]);
  RunSettings settings{opt.outputDir, opt.benchmark, opt.quiet};

  if (library) { // a library from cuvil-export, through its C API
    Result<LibraryRunner> lib = LibraryRunner::load(opt.model, opt.threads);
    if (!lib)
      return reportError(kTool, lib.error());
    spdlog::info("library '{}': {}", opt.model, lib->signature());
    if (inputs->size() != lib->numInputs())
      return reportError(kTool, inputError("'" + opt.model + "' takes " +
                                           std::to_string(lib->numInputs()) + " input(s) (" +
                                           lib->signature() + "), got " +
                                           std::to_string(inputs->size()) + " --input file(s)"));
    Status s = runAndWrite(
        [&](const std::vector<Tensor> &in, std::vector<Tensor> &out) { return lib->run(in, out); },
        *inputs, settings);
    return s ? kExitSuccess : reportError(kTool, s.error());
  }

  auto model = mlir::cuvil::reference::ModelRunner::load(opt.model, opt.function);
  if (!model)
    return reportError(kTool, model.error());
  spdlog::info("model '{}': {}", opt.model, model->signature());
  if (inputs->size() != model->numInputs())
    return reportError(kTool, inputError(
        "'" + opt.model + "' takes " + std::to_string(model->numInputs()) +
        " input(s) (" + model->signature() + "), got " +
        std::to_string(inputs->size()) + " --input file(s)"));
  if (opt.threads > 1)
    spdlog::info("--threads {}: the reference evaluator runs single-threaded", opt.threads);
  Status s = runAndWrite(
      [&](const std::vector<Tensor> &in, std::vector<Tensor> &out) -> Status {
        Result<std::vector<Tensor>> r = model->run(in);
        if (!r)
          return r.error();
        out = std::move(*r);
        return Status::ok();
      },
      *inputs, settings);
  return s ? kExitSuccess : reportError(kTool, s.error());
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"Runs a Cuvil model on NumPy .npy inputs and writes its outputs "
               "as output0.npy, output1.npy, ...\n\n"
               "MODEL is a library compiled by cuvil-export (.so), run through its C API, "
               "or a .mlir / .mlirbc file (cuvil dialect), evaluated by Cuvil's reference "
               "evaluator: plain loops that define what every op computes. Exit status: 0 "
               "success, 1 the model or an input is invalid, 2 usage error, 3 I/O error.",
               kTool};
  app.add_option("model", opt.model, "Model file (.so, .mlir, .mlirbc)")->required();
  app.add_option("-i,--input", opt.inputs,
                 "Input tensor (.npy), one per model input, in order");
  app.add_option("-o,--output-dir", opt.outputDir,
                 "Directory for output0.npy, output1.npy, ... (created if "
                 "missing; default: current directory)");
  app.add_option("--function", opt.function,
                 "Entry function (default: the only public one, or 'forward')");
  app.add_option("--benchmark", opt.benchmark,
                 "Run N times and print min/median/p90 latency")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--threads", opt.threads, "Threads to use (default: all cores)")
      ->check(CLI::Range(0, 4096));
  app.add_flag("-q,--quiet", opt.quiet, "Do not print the outputs");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  setupLogging(kTool, opt.log);
  return run(opt);
}
