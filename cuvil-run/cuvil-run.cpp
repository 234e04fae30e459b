//===- cuvil-run.cpp - Run a model on .npy inputs -------------------------===//
//
// cuvil-run MODEL --input X.npy [--input Y.npy...] [--output-dir DIR]
//           [--function NAME] [--benchmark N] [--threads T]
//
// MODEL is a .mlir / .mlirbc file, run on Cuvil's reference evaluator.
// Outputs are written as output0.npy, output1.npy, ... (atomically).
//
//===----------------------------------------------------------------------===//
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
  if (endsWith(opt.model, ".so"))
    return reportError(kTool, usageError(
        "'" + opt.model + "': running compiled libraries needs cuvil-export, "
        "which is not part of this build yet; pass a .mlir or .mlirbc model "
        "to run it on the reference evaluator"));
  if (!endsWith(opt.model, ".mlir") && !endsWith(opt.model, ".mlirbc"))
    return reportError(kTool, usageError("'" + opt.model +
                                         "': expected a .mlir or .mlirbc model"));
  // Fail before any work if the outputs cannot be written.
  if (Status s = prepareOutputDir(opt.outputDir); !s)
    return reportError(kTool, s.error());

  std::vector<Tensor> inputs;
  for (const std::string &path : opt.inputs) {
    Result<Tensor> t = readNpy(path);
    if (!t)
      return reportError(kTool, t.error());
    spdlog::info("input {}: {} from '{}'", inputs.size(), t->describe(), path);
    inputs.push_back(std::move(*t));
  }

  auto model = mlir::cuvil::reference::ModelRunner::load(opt.model, opt.function);
  if (!model)
    return reportError(kTool, model.error());
  spdlog::info("model '{}': {}", opt.model, model->signature());
  if (inputs.size() != model->numInputs())
    return reportError(kTool, inputError(
        "'" + opt.model + "' takes " + std::to_string(model->numInputs()) +
        " input(s) (" + model->signature() + "), got " +
        std::to_string(inputs.size()) + " --input file(s)"));
  if (opt.threads > 1)
    spdlog::info("--threads {}: the reference evaluator runs single-threaded",
                 opt.threads);

  std::vector<double> times;
  Result<std::vector<Tensor>> outputs = std::vector<Tensor>();
  int runs = std::max(1, opt.benchmark);
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    outputs = model->run(inputs);
    auto end = std::chrono::steady_clock::now();
    if (!outputs)
      return reportError(kTool, outputs.error());
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }

  for (size_t i = 0; i < outputs->size(); ++i) {
    Tensor out = (*outputs)[i];
    if (out.dtype() == DType::BFloat16) {
      spdlog::warn("output{} is bf16, which NumPy lacks; writing it as f32", i);
      out = out.cast(DType::Float32);
    }
    std::string path = opt.outputDir + "/output" + std::to_string(i) + ".npy";
    if (Status s = writeNpy(path, out); !s)
      return reportError(kTool, s.error());
    if (!opt.quiet)
      std::printf("output%zu: %s -> %s\n", i, out.preview().c_str(), path.c_str());
  }
  if (opt.benchmark > 0) {
    std::sort(times.begin(), times.end());
    auto pct = [&](double p) {
      return times[std::min(times.size() - 1, size_t(p * (times.size() - 1) + 0.5))];
    };
    std::printf("latency over %d run(s): min %.3f ms, median %.3f ms, p90 %.3f ms\n",
                runs, times.front(), pct(0.5), pct(0.9));
  }
  return kExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"Runs a Cuvil model on NumPy .npy inputs and writes its outputs "
               "as output0.npy, output1.npy, ...\n\n"
               "MODEL is a .mlir or .mlirbc file (cuvil dialect), evaluated by "
               "Cuvil's reference evaluator: plain loops that define what every "
               "op computes. Exit status: 0 success, 1 the model or an input "
               "is invalid, 2 usage error, 3 I/O error.",
               kTool};
  app.add_option("model", opt.model, "Model file (.mlir, .mlirbc)")->required();
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
