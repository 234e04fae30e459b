//===- ModelLoader.cpp - A model file of any supported kind as cuvil IR ---===//
#include "frontend/loader/ModelLoader.h"

#include "support/IrNesting.h"

#include "support/AtomicFile.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

namespace cuvil {

namespace {
bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
} // namespace

Result<mlir::OwningOpRef<mlir::ModuleOp>> loadModel(mlir::MLIRContext &context,
                                                    const std::string &path,
                                                    const LoadOptions &options) {
  if (endsWith(path, ".mlir") || endsWith(path, ".mlirbc")) {
    if (!options.inputShapes.empty())
      return usageError("--input-shape applies to TorchScript models; '" + path +
                        "' already has its shapes");
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/true,
                                              /*IsVolatile=*/true, llvm::Align(64)); // read, not mapped: a file truncated meanwhile is no SIGBUS
    if (std::error_code ec = buffer.getError())
      return ioError("cannot read '" + path + "': " + ec.message());
    // Before the parser, which recurses once per nesting level.
    if (Status s = checkIrNesting((*buffer)->getBuffer(), path); !s)
      return s.error();
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, llvm::errs());
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
    if (!module)
      return inputError("'" + path + "' is not a valid Cuvil model (see the diagnostics above)");
    return module;
  }
  if (!endsWith(path, ".pt") && !endsWith(path, ".pth") && !endsWith(path, ".zip"))
    return usageError("'" + path + "': expected a TorchScript archive (.pt) or cuvil IR (.mlir, .mlirbc)");

  torchscript::ImportOptions import;
  import.eliminateDeadCode = options.eliminateDeadCode;
  import.quantizedEngine = options.quantizedEngine;
  Result<std::vector<torchscript::InputSpec>> specs = torchscript::parseInputShapes(options.inputShapes);
  if (!specs)
    return specs.error();
  import.inputs = std::move(*specs);
  Result<torchscript::ImportResult> result = torchscript::importTorchScript(context, path, import);
  if (!result)
    return result.error();
  if (!options.unsupportedReport.empty())
    if (Status s = writeFileAtomically(options.unsupportedReport,
                                       torchscript::unsupportedReportJson(path, result->unsupported));
        !s)
      return s.error();
  if (!result->unsupported.empty())
    return inputError(torchscript::describeUnsupported(path, result->unsupported));
  return std::move(result->module);
}

Status checkInputShapes(const std::vector<std::string> &specs) {
  return torchscript::parseInputShapes(specs).status();
}

} // namespace cuvil
