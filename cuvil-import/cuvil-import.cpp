//===- cuvil-import.cpp - TorchScript .pt to cuvil IR ---------------------===//
//
// cuvil-import MODEL.pt [-o OUT.mlir|OUT.mlirbc] [--input-shape SPEC]...
//              [--unsupported-report FILE.json] [--list-supported-ops]
//              [--disable-optimization dead-code-elimination]
//
// Reads the archive with Cuvil's own readers (no libtorch); writes MLIR text
// or bytecode atomically. Unsupported operators are reported all at once
// (exit status 1, no output file).
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/ModuleWriter.h"
#include "frontend/torchscript/Importer.h"
#include "passes/GraphPipeline.h"
#include "support/LargeStack.h"
#include "support/AtomicFile.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <set>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-import";

struct Options {
  std::string model;
  std::string output;
  std::vector<std::string> inputShapes;
  std::string unsupportedReport;
  std::string method = "forward";
  std::string quantizedEngine = "onednn";
  std::vector<std::string> disabled;
  bool listOps = false;
  LogOptions log;
};

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run(const Options &opt) {
  if (opt.listOps) {
    for (const std::string &op : torchscript::supportedOperators())
      std::printf("%s\n", op.c_str());
    return kExitSuccess;
  }
  if (opt.model.empty())
    return reportError(kTool, usageError("no model given (cuvil-import MODEL.pt ...)"));
  torchscript::ImportOptions options;
  options.method = opt.method;
  options.quantizedEngine = opt.quantizedEngine;
  std::set<std::string> disabled(opt.disabled.begin(), opt.disabled.end());
  std::string unknown;
  if (!mlir::cuvil::checkOptimizationNames(disabled, unknown))
    return reportError(kTool, usageError("--disable-optimization: " + unknown));
  options.eliminateDeadCode = !disabled.count("dead-code-elimination");
  Result<std::vector<torchscript::InputSpec>> specs = torchscript::parseInputShapes(opt.inputShapes);
  if (!specs)
    return reportError(kTool, specs.error());
  options.inputs = std::move(*specs);
  // Fail before any work if an output cannot be written.
  if (!opt.output.empty() && opt.output != "-") {
    if (sameFile(opt.output, opt.model))
      return reportError(kTool, usageError("the output '" + opt.output + "' is the input model"));
    if (Status s = checkOutputPath(opt.output); !s)
      return reportError(kTool, s.error());
  }
  if (!opt.unsupportedReport.empty())
    if (Status s = checkOutputPath(opt.unsupportedReport); !s)
      return reportError(kTool, s.error());

  auto start = std::chrono::steady_clock::now();
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  trackCrashContext(context);
  Result<torchscript::ImportResult> result =
      torchscript::importTorchScript(context, opt.model, options);
  if (!result)
    return reportError(kTool, result.error());
  for (const std::string &w : result->warnings)
    spdlog::warn("{}", w);
  if (!result->unsupported.empty()) {
    std::fprintf(stderr, "%s: error: %s\n", kTool,
                 torchscript::describeUnsupported(opt.model, result->unsupported).c_str());
    if (!opt.unsupportedReport.empty())
      if (Status s = writeFileAtomically(opt.unsupportedReport,
                                         torchscript::unsupportedReportJson(opt.model, result->unsupported));
          !s)
        return reportError(kTool, s.error());
    return kExitInputError;
  }
  if (!opt.unsupportedReport.empty())
    if (Status s = writeFileAtomically(opt.unsupportedReport,
                                       torchscript::unsupportedReportJson(opt.model, {}));
        !s)
      return reportError(kTool, s.error());
  auto imported = std::chrono::steady_clock::now();
  spdlog::info("imported '{}' in {:.1f} ms", opt.model,
               std::chrono::duration<double, std::milli>(imported - start).count());

  bool bytecode = endsWith(opt.output, ".mlirbc");
  if (opt.output.empty() || opt.output == "-") {
    if (bytecode)
      return reportError(kTool, usageError("bytecode cannot go to stdout; use -o FILE.mlirbc"));
    (void)mlir::cuvil::writeModule(*result->module, llvm::outs(), /*bytecode=*/false);
    llvm::outs().flush();
    return kExitSuccess;
  }
  // Stream into a temporary file, then rename: complete or absent.
  Result<AtomicOutput> out = AtomicOutput::create(opt.output);
  if (!out)
    return reportError(kTool, out.error());
  {
    llvm::raw_fd_ostream os(out->fd(), /*shouldClose=*/false);
    if (mlir::failed(mlir::cuvil::writeModule(*result->module, os, bytecode)))
      return reportError(kTool, ioError("cannot write '" + opt.output + "'"));
    os.flush();
    if (os.has_error()) {
      std::string msg = os.error().message();
      os.clear_error();
      return reportError(kTool, ioError("cannot write '" + opt.output + "': " + msg));
    }
  }
  if (Status s = out->commit(); !s)
    return reportError(kTool, s.error());
  spdlog::info("wrote '{}' in {:.1f} ms", opt.output,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - imported).count());
  return kExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"Imports a TorchScript model (.pt, from torch.jit.save) into Cuvil's graph IR.\n\n"
               "The archive is read by Cuvil's own hardened readers: nothing in it is "
               "executed and libtorch is not needed. Tensor inputs need shapes "
               "(--input-shape). Unsupported operators are all reported at once. Exit "
               "status: 0 success, 1 the model cannot be imported, 2 usage error, 3 I/O error.",
               kTool};
  app.add_option("model", opt.model, "TorchScript archive (.pt)");
  app.add_option("-o,--output", opt.output,
                 "Output: .mlir (text) or .mlirbc (bytecode); stdout when absent");
  app.add_option("--input-shape", opt.inputShapes,
                 "Input shape INDEX_OR_NAME=DIMxDIM...xDTYPE, e.g. 0=1x3x224x224xf32 or "
                 "x=f32 (0-d); a run-time dimension is '?', a symbol (seq) or a symbol with bounds "
                 "(seq:1..512; '?' and bare symbols: 1..4096), and inputs naming one symbol have "
                 "equal sizes (0=1xseq:1..512x768xf32 1=1xseqxi64). DTYPE: f32 f64 f16 bf16 i1 i8 "
                 "ui8 i16 i32 i64, or complex64 / complex128 (the C API's c64 / c128: "
                 "(real, imaginary) pairs). Repeat per input.");
  app.add_option("--unsupported-report", opt.unsupportedReport,
                 "Write the unsupported operators (with locations) as JSON here");
  app.add_option("--method", opt.method, "The method to import (default: forward)");
  app.add_option("--quantized-engine", opt.quantizedEngine,
                 "A model PyTorch quantized: the engine whose integer arithmetic its ops "
                 "reproduce bit for bit, onednn (default; PyTorch's on x86) or qnnpack (Arm)")
      ->check(CLI::IsMember({"onednn", "qnnpack"}));
  app.add_option("--disable-optimization", opt.disabled,
                 "Optimizations to switch off (comma-separated or repeated); the importer "
                 "honours dead-code-elimination (keep values the model computes but never uses)")
      ->delimiter(',');
  app.add_flag("--list-supported-ops", opt.listOps, "Print the operators the importer translates");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  installCrashHandlers(kTool);
  setupLogging(kTool, opt.log);
  // A large stack for MLIR's recursive parsing and passes (LargeStack.h).
  return cuvil::runOnLargeStack([&] { return run(opt); });
}
