//===- cuvil-opt.cpp - The Cuvil pass driver ------------------------------===//
//
// mlir-opt for Cuvil: every standard MlirOptMain flag (--pass-pipeline,
// --split-input-file, --verify-diagnostics, --mlir-print-ir-after-all,
// --mlir-timing, crash reproducers) with the Cuvil dialects and passes
// registered. This is the driver the lit tests run.
//
// It opens the files itself rather than through MlirOptMain(argc, argv):
// the input is read 64-byte aligned, as the bytecode reader needs for the
// importer's 64-byte aligned weight blobs (a small file read into a heap
// buffer is only 16-byte aligned), and the output is written to a
// temporary file renamed into place, so a failed run leaves no partial or
// clobbered output. `--load-pass-plugin LIB.so` loads a Cuvil pass plugin
// (cuvil/Plugin.h) before the command line is parsed, so that its passes
// have their flags and take their place in the graph pipeline; a plugin
// that cannot be loaded is an error, not MLIR's warning.
//
//===----------------------------------------------------------------------===//
#include "driver/CompileDriver.h"
#include "passes/InitAll.h"
#include "verify/ValidateRewrites.h"
#include "verify/VerifyFlattening.h"
#include "plugins/PluginRegistry.h"
#include "targets/Targets.h"
#include "support/AtomicFile.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"

#include "mlir/Debug/Counter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "support/IrNesting.h"
#include "support/LargeStack.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // After LLVM's stack dump (a developer tool), an internal-error report and
  // exit 1 instead of death by signal.
  cuvil::installCrashHandlers("cuvil-opt");
  mlir::DialectRegistry registry;
  mlir::cuvil::registerAllDialects(registry);
  mlir::cuvil::registerTargetDialects(registry);
  mlir::cuvil::registerAllPasses();
  ::cuvil::verify::registerValidateRewritesPass(); // translation validation (Z3)
  ::cuvil::verify::registerVerifyFlatteningPass();  // control-flow flattening keeps dependencies
  mlir::cuvil::registerTargetPasses();
  mlir::cuvil::registerCompilePipelines();
  // Plugins first: the pass flags are made from the registered passes.
  std::vector<char *> args(argv, argv + argc);
  {
    std::string error;
    int code = 1;
    if (!cuvil::plugin::loadPluginsFromCommandLine(args, error, code)) {
      llvm::errs() << "cuvil-opt: error: " << error << "\n";
      return code;
    }
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  // mlir::registerAndParseCLIOptions, except that a bad command line is a
  // usage error (exit 2, as every Cuvil tool) and --version is Cuvil's.
  static llvm::cl::opt<std::string> inputPath(llvm::cl::Positional, llvm::cl::desc("<input file>"),
                                              llvm::cl::init("-"));
  static llvm::cl::opt<std::string> outputPath("o", llvm::cl::desc("Output filename"),
                                               llvm::cl::value_desc("filename"), llvm::cl::init("-"));
  mlir::MlirOptMainConfig::registerCLOptions(registry);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  mlir::tracing::DebugCounter::registerCLOptions();
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << cuvil::versionText() << "\n"; });
  if (!llvm::cl::ParseCommandLineOptions(argc, argv,
                                         "Cuvil optimizer driver: runs Cuvil and MLIR passes\n"
                                         "Exit status: 0 success, 1 the input is invalid or a pass "
                                         "failed, 2 usage error, 3 I/O error.\n",
                                         &llvm::errs()))
    return cuvil::kExitUsageError;
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  if (config.shouldShowDialects()) {
    llvm::outs() << "Available Dialects: ";
    llvm::interleave(registry.getDialectNames(), llvm::outs(), ",");
    llvm::outs() << "\n";
    return 0;
  }

  // Read, not mapped: a file truncated meanwhile is then no SIGBUS.
  auto input = inputPath == "-" ? llvm::MemoryBuffer::getFileOrSTDIN("-", /*IsText=*/false,
                                                                    /*RequiresNullTerminator=*/true,
                                                                    llvm::Align(64))
                                : llvm::MemoryBuffer::getFile(inputPath, /*IsText=*/false,
                                                              /*RequiresNullTerminator=*/true,
                                                              /*IsVolatile=*/true, llvm::Align(64));
  if (std::error_code ec = input.getError()) {
    llvm::errs() << "cuvil-opt: error: cannot read '" << inputPath << "': " << ec.message()
                 << "\n";
    return cuvil::kExitIOError;
  }

  // Before the parser, which recurses once per nesting level.
  if (cuvil::Status s = cuvil::checkIrNesting((*input)->getBuffer(), inputPath); !s) {
    llvm::errs() << "cuvil-opt: error: " << cuvil::errorId(s.error()) << ": " << s.error().message << "\n";
    return s.error().code;
  }
  if (outputPath == "-") {
    // A large stack for MLIR's recursive parsing and passes (LargeStack.h).
    bool ok = cuvil::runOnLargeStack([&] {
      return mlir::succeeded(mlir::MlirOptMain(llvm::outs(), std::move(*input), registry, config)) ? 0 : 1;
    }) == 0;
    llvm::outs().flush();
    return ok ? 0 : 1;
  }
  cuvil::Result<cuvil::AtomicOutput> output = cuvil::AtomicOutput::create(outputPath);
  if (!output) {
    llvm::errs() << "cuvil-opt: error: " << output.error().message << "\n";
    return output.error().code;
  }
  {
    llvm::raw_fd_ostream os(output->fd(), /*shouldClose=*/false);
    if (cuvil::runOnLargeStack([&] {
          return mlir::succeeded(mlir::MlirOptMain(os, std::move(*input), registry, config)) ? 0 : 1;
        }) != 0)
      return 1; // the temporary file is removed; an existing output stays as it was
    os.flush();
    if (os.has_error()) {
      llvm::errs() << "cuvil-opt: error: cannot write '" << outputPath
                   << "': " << os.error().message() << "\n";
      os.clear_error();
      return cuvil::kExitIOError;
    }
  }
  if (cuvil::Status s = output->commit(); !s) {
    llvm::errs() << "cuvil-opt: error: " << s.error().message << "\n";
    return s.error().code;
  }
  return 0;
}
