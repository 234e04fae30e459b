//===- Export.cpp - A cuvil model to a compiled library -------------------===//
#include "targets/Export.h"

#include "targets/CPU/ModelInterface.h"
#include "targets/Target.h"
#include "support/Crash/CrashRecovery.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil {

using ::cuvil::Error;
using ::cuvil::Result;

namespace {

/// The model's entry: the only public function with a body, or `forward`.
FailureOr<func::FuncOp> entryFunction(ModuleOp module) {
  SmallVector<func::FuncOp> candidates;
  for (func::FuncOp f : module.getOps<func::FuncOp>())
    if (!f.isExternal() && f.isPublic())
      candidates.push_back(f);
  if (candidates.size() == 1)
    return candidates.front();
  for (func::FuncOp f : candidates)
    if (f.getSymName() == "forward")
      return f;
  return failure();
}

Error stageError(const std::string &stage, const std::string &detail = "") {
  return ::cuvil::inputError(stage + " failed" + (detail.empty() ? " (see the diagnostics above)"
                                                                 : ": " + detail));
}

/// Runs `pm`; a crash caught under --crash-reproducer is an internal error.
::cuvil::Status runPipeline(PassManager &pm, ModuleOp module, const std::string &stage) {
  ::cuvil::PipelineRun run = ::cuvil::runPassManager(pm, module);
  if (run.crashed)
    return ::cuvil::inputError("internal error in " + stage + "; the IR the failing pass was given, "
                               "and the pass, are in '" + run.reproducer +
                               "' (rerun: cuvil-opt " + run.reproducer + " --run-reproducer)");
  if (run.failed)
    return stageError(stage);
  return ::cuvil::Status();
}

} // namespace

Result<ExportResult> exportModel(ModuleOp module, const ExportOptions &options,
                                 const std::string &outputPath) {
  MLIRContext *ctx = module.getContext();
  Result<std::unique_ptr<TargetBackend>> backend =
      createTargetBackend(options.target, TargetOptions{options.cpu});
  if (!backend)
    return backend.error();
  const TargetBackend &target = **backend;
  FailureOr<func::FuncOp> entry = entryFunction(module);
  if (failed(entry))
    return ::cuvil::inputError("the model must have one public function (or one named 'forward')");
  std::string entryName = entry->getSymName().str();

  // Graph pipeline, then the interface the library describes.
  PassManager graph(ctx);
  buildGraphPipeline(graph, options.graph);
  if (::cuvil::Status s = runPipeline(graph, module, "the graph optimisation pipeline"); !s)
    return s.error();
  FailureOr<ModelInterface> interface = readModelInterface(*entry, options.modelName);
  if (failed(interface))
    return stageError("reading the model's inputs and outputs");
  if (::cuvil::Status s = target.checkModel(*entry); !s)
    return s.error();

  // Lowering to the LLVM dialect.
  PassManager lower(ctx);
  target.buildLoweringPipeline(lower);
  if (::cuvil::Status s = runPipeline(lower, module, "lowering to " + options.target + " code"); !s)
    return s.error();
  ExportResult result;
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(entryName)) {
    if (auto arena = f->getAttrOfType<IntegerAttr>("cuvil.arena_bytes"))
      result.arenaBytes = arena.getInt();
    // Run-time checks: the function returns their status (RuntimeChecks.h).
    if (auto messages = f->getAttrOfType<ArrayAttr>("cuvil.failure_messages"))
      for (auto m : messages.getAsValueRange<StringAttr>())
        interface->failureMessages.push_back(m.str());
  }
  if (options.emit == EmitKind::Mlir) {
    llvm::raw_string_ostream os(result.bytes);
    module.print(os);
    return result;
  }

  // Cuvil's own attributes (names, memory plan) have no LLVM meaning.
  module.walk([](LLVM::LLVMFuncOp f) {
    auto ownOf = [](DictionaryAttr attrs) {
      SmallVector<StringAttr> names;
      if (attrs)
        for (NamedAttribute a : attrs)
          if (a.getName().strref().starts_with("cuvil."))
            names.push_back(a.getName());
      return names;
    };
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      for (StringAttr name : ownOf(f.getArgAttrDict(i)))
        f.removeArgAttr(i, name);
    SmallVector<StringAttr> own;
    for (NamedAttribute a : f->getDiscardableAttrs())
      if (a.getName().strref().starts_with("cuvil."))
        own.push_back(a.getName());
    for (StringAttr name : own)
      f->removeAttr(name);
  });

  // LLVM IR with the descriptor the runtime reads.
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule = translateModuleToLLVMIR(module, llvmContext, options.modelName);
  if (!llvmModule)
    return stageError("translating to LLVM IR");
  DescriptorInfo info;
  info.target = target.name();
  info.cpu = target.cpu();
  info.requiredFeatures = target.requiredFeatures();
  info.arenaBytes = result.arenaBytes;
  result.requiredFeatures = info.requiredFeatures;
  std::string error;
  if (failed(addModelDescriptor(*llvmModule, entryName, *interface, info, error)))
    return stageError("building the model descriptor", error);
  if (options.emit == EmitKind::Llvm) {
    llvm::raw_string_ostream os(result.bytes);
    llvmModule->print(os, nullptr);
    return result;
  }

  Result<std::string> code =
      target.emitCode(*llvmModule, options.emit == EmitKind::Asm ? CodeKind::Assembly : CodeKind::Object);
  if (!code)
    return code.error();
  if (options.emit != EmitKind::SharedLibrary) {
    result.bytes = std::move(*code);
    return result;
  }

  // Link next to the output; the caller renames the file into place.
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(outputPath + ".tmp.%%%%%%", temp))
    return ::cuvil::ioError("cannot create a temporary file next to '" + outputPath +
                            "': " + ec.message());
  // Removed should the process crash or be killed before the rename.
  llvm::sys::RemoveFileOnSignal(temp);
  if (::cuvil::Status s = target.link(*code, std::string(temp)); !s) {
    llvm::sys::fs::remove(temp);
    llvm::sys::DontRemoveFileOnSignal(temp);
    return s.error();
  }
  result.libraryTempPath = std::string(temp);
  return result;
}

} // namespace mlir::cuvil
