//===- cuvil-run.cpp - Run a model on .npy inputs -------------------------===//
//
// cuvil-run MODEL --input X.npy [--input Y.npy...] [--output-dir DIR]
//           [--function NAME] [--benchmark N] [--warmup N] [--duration S]
//           [--expected-output Y.npy... --rtol R --atol A] [--json FILE]
//           [--threads T]
//
// MODEL is a library made by cuvil-export (.so, run through its C API) or a
// .mlir / .mlirbc file, run on Cuvil's reference evaluator.
// Outputs are written as output0.npy, output1.npy, ... (atomically).
//
//===----------------------------------------------------------------------===//
#include "cuvil-run/LibraryRunner.h"
#include "cuvil-run/NpuTrace.h"
#include "frontend/torchscript/Npz.h"
#include "cuvil-run/RunLoop.h"
#include "cuvil-run/RunOptions.h"
#include "dialects/Cuvil/Reference/ModelRunner.h"
#include "support/LargeStack.h"
#include "support/AtomicFile.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Npy.h"
#include "support/Tool/ToolSupport.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-run";

struct Options : RunOptions {
  std::string function;
  std::string json, outputNpz, npuTrace;
  LogOptions log;
};

/// The run as JSON (--json): outputs, latency, checks.
std::string reportJson(const Options &opt, const std::string &signature, const std::string &device,
                       const RunReport &r) {
  llvm::json::Array outputs, checks;
  for (size_t i = 0; i < r.outputPaths.size(); ++i)
    outputs.push_back(llvm::json::Object{{"path", r.outputPaths[i]}, {"type", r.outputTypes[i]}});
  for (const OutputCheck &c : r.checks) {
    llvm::json::Object o{{"output", int64_t(c.output)}, {"expected", c.expectedPath},
                         {"passed", c.passed}, {"mismatches", c.mismatches},
                         {"max_abs_error", c.maxAbsError}};
    if (!c.problem.empty())
      o["problem"] = c.problem;
    else if (!c.passed)
      o["worst"] = llvm::json::Object{{"index", c.worstAt}, {"got", c.got}, {"expected", c.want},
                                      {"abs_error", c.absError}};
    checks.push_back(std::move(o));
  }
  llvm::json::Object root{{"schema", "cuvil-run/1"}, {"model", opt.model}, {"signature", signature},
                          {"inputs", llvm::json::Array(opt.inputs)}, {"outputs", std::move(outputs)}};
  if (!device.empty()) // a library's instance: "cpu", "cuda:NAME (sm_XY, ...)"
    root["device"] = device;
  if (r.latency) {
    const LatencyStats &s = *r.latency;
    root["latency_ms"] = llvm::json::Object{{"runs", s.runs}, {"warmup_runs", s.warmup}, {"min", s.min},
                                            {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99},
                                            {"max", s.max}, {"mean", s.mean}, {"stdev", s.stdev}};
    root["threads"] = opt.threads;
  }
  if (!r.profile.empty()) {
    llvm::json::Array sites;
    for (const ProfileRow &p : r.profile)
      sites.push_back(llvm::json::Object{{"site", p.name}, {"calls", p.calls},
                                         {"ms_per_run", p.totalMs / std::max(r.runs, 1)}});
    root["profile"] = std::move(sites);
  }
  if (!r.checks.empty()) {
    root["checks"] = std::move(checks);
    root["rtol"] = opt.settings.rtol;
    root["atol"] = opt.settings.atol;
    root["passed"] = r.checksPassed();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return os.str();
}

/// After a run: the JSON report, then the exit status (1 on a mismatch).
int finish(const Options &opt, const RunSettings &settings, const std::string &signature,
           const Result<RunReport> &report, const std::string &device = "") {
  if (!report)
    return reportError(kTool, report.error());
  if (!opt.outputNpz.empty()) {
    std::vector<std::pair<std::string, Tensor>> arrays;
    for (size_t i = 0; i < report->outputs.size(); ++i)
      arrays.emplace_back("output" + std::to_string(i), report->outputs[i]);
    if (Status s = writeNpz(opt.outputNpz, arrays); !s)
      return reportError(kTool, s.error());
  }
  if (!opt.json.empty())
    if (Status s = writeFileAtomically(opt.json, reportJson(opt, signature, device, *report)); !s)
      return reportError(kTool, s.error());
  if (!report->checksPassed())
    return reportError(kTool, checkFailure(report->checks, settings));
  return kExitSuccess;
}

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
  if (Status s = prepareOutputDir(opt.settings.outputDir); !s)
    return reportError(kTool, s.error());
  if (!opt.npuTrace.empty() && !library)
    return reportError(kTool, usageError("--npu-trace records a library compiled with --target npu; '" +
                                         opt.model + "' runs on the reference evaluator"));
  if (!opt.npuTrace.empty() && !endsWith(opt.npuTrace, ".json") && !endsWith(opt.npuTrace, ".svg"))
    return reportError(kTool, usageError("--npu-trace '" + opt.npuTrace +
                                         "': name a .json (Chrome/Perfetto trace) or .svg (timeline) file"));
  if (opt.profile && !library)
    return reportError(kTool, usageError("--profile times a compiled library's layers; '" + opt.model +
                                         "' runs on the reference evaluator"));
  RunSettings settings = opt.settings;
  for (const std::string &out : {opt.json, opt.outputNpz, opt.npuTrace})
    if (!out.empty())
      if (Status s = checkOutputPath(out); !s)
        return reportError(kTool, s.error());
  // A library is loaded (checked first) before the inputs are read, so that
  // each input file's header is checked against what the model takes
  // before its data is read.
  std::optional<LibraryRunner> lib;
  std::vector<NpyExpectation> expect;
  if (library) {
    Result<LibraryRunner> loaded =
        LibraryRunner::load(opt.model, opt.threads, opt.symbolPrefix, opt.device);
    if (!loaded)
      return reportError(kTool, loaded.error());
    lib.emplace(std::move(*loaded));
    for (size_t i = 0; i < lib->numInputs(); ++i)
      expect.push_back(lib->inputExpectation(i));
  }
  // The inputs in order; an .npz holds several (input0, input1, ...).
  Result<std::vector<Tensor>> inputs = std::vector<Tensor>();
  for (const std::string &in : opt.inputs) {
    if (endsWith(in, ".npz")) {
      Result<std::vector<std::pair<std::string, Tensor>>> arrays = readNpz(in);
      if (!arrays)
        return reportError(kTool, arrays.error());
      for (auto &[name, t] : *arrays) {
        spdlog::info("input {}: {} from '{}:{}'", inputs->size(), t.describe(), in, name);
        inputs->push_back(std::move(t));
      }
      continue;
    }
    size_t i = inputs->size();
    Result<Tensor> t = readInput(in, i, opt.seed, i < expect.size() ? &expect[i] : nullptr);
    if (!t)
      return reportError(kTool, t.error());
    spdlog::info("input {}: {} from '{}'", inputs->size(), t->describe(), in);
    inputs->push_back(std::move(*t));
  }

  if (library) { // a library from cuvil-export, through its C API
    spdlog::info("library '{}': {}", opt.model, lib->signature());
    spdlog::info("library '{}' runs on {}", opt.model, lib->device());
    if (inputs->size() != lib->numInputs())
      return reportError(kTool, inputError("'" + opt.model + "' takes " +
                                           std::to_string(lib->numInputs()) + " input(s) (" +
                                           lib->signature() + "), got " +
                                           std::to_string(inputs->size()) + " --input file(s)"));
    settings.afterWarmup = [&] { lib->resetProfile(); };
    if (!opt.npuTrace.empty() && !lib->recordNpu())
      return reportError(kTool, inputError("'" + opt.model + "' keeps no NPU record (its runtime predates "
                                           "cuvil_model_set_npu_recording)"));
    Result<RunReport> report = runAndWrite(
        [&](const std::vector<Tensor> &in, std::vector<Tensor> &out) { return lib->run(in, out); },
        *inputs, settings);
    if (report && opt.profile) {
      report->profile = lib->profile();
      if (report->profile.empty())
        return reportError(kTool, inputError("'" + opt.model + "' has no profile: compile it with "
                                             "cuvil-export --instrument"));
      printProfile(report->profile, report->runs);
    }
    if (report && !opt.npuTrace.empty()) {
      std::string npu = lib->npuReport();
      if (npu.empty())
        return reportError(kTool, inputError("'" + opt.model + "' recorded no NPU run"));
      if (npu.find("\"name\"") == std::string::npos)
        return reportError(kTool, inputError("'" + opt.model + "' ran nothing on an NPU: compile it with "
                                             "cuvil-export --target npu"));
      if (Status s = writeNpuTrace(opt.npuTrace, npu); !s)
        return reportError(kTool, s.error());
      std::fputs(npuSummary(npu).c_str(), stderr);
    }
    return finish(opt, settings, lib->signature(), report, lib->device());
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
  Result<RunReport> report = runAndWrite(
      [&](const std::vector<Tensor> &in, std::vector<Tensor> &out) -> Status {
        Result<std::vector<Tensor>> r = model->run(in);
        if (!r)
          return r.error();
        out = std::move(*r);
        return Status::ok();
      },
      *inputs, settings);
  return finish(opt, settings, model->signature(), report);
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
  addRunOptions(app, opt, "Model file (.so, .mlir, .mlirbc)");
  app.add_option("--function", opt.function,
                 "Entry function (default: the only public one, or 'forward')");
  app.add_option("--output-npz", opt.outputNpz,
                 "Also write every output into one .npz (output0, output1, ...; numpy.load reads it)");
  app.add_option("--npu-trace", opt.npuTrace,
                 "A library compiled with --target npu: write the NPU simulator's account of the last "
                 "run, a Chrome/Perfetto trace (FILE.json: per unit, every command's cycles; totals and "
                 "per layer cycles, MAC utilization, DMA bytes, stalls and roofline bounds under \"cuvil\") "
                 "or an SVG timeline of DMA against compute (FILE.svg); a summary goes to stderr");
  app.add_option("--json", opt.json,
                 "Write the run as JSON: outputs, latency statistics, checks (written "
                 "atomically, also when a check fails)");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  cuvil::installResourceHandlers(kTool);
  setupLogging(kTool, opt.log);
  // A large stack for MLIR's recursive parsing and passes (LargeStack.h).
  return cuvil::runOnLargeStack([&] { return run(opt); });
}
