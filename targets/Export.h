//===- Export.h - A cuvil model to a compiled library ----------*- C++ -*-===//
//
// The exporter's steps after loading: the graph pipeline (strategy
// graph_fusion), the target's lowering, LLVM IR with the model descriptor,
// machine code, and the link into libinference.so. Any intermediate stage
// can be the output (--emit mlir|llvm|asm|obj|so). Deterministic: the same
// model, target and options give the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_EXPORT_H
#define CUVIL_TARGETS_EXPORT_H

#include "passes/GraphPipeline.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::cuvil {

enum class EmitKind { Mlir, Llvm, Asm, Object, SharedLibrary };

struct ExportOptions {
  std::string target = "x86_64";
  std::string cpu;          ///< "" = the target's default
  EmitKind emit = EmitKind::SharedLibrary;
  std::string modelName = "model";
  GraphPipelineOptions graph;
};

/// What an export produced: the artifact's bytes (for .so: the path of a
/// temporary file holding it, to be renamed into place by the caller).
struct ExportResult {
  std::string bytes;
  std::string libraryTempPath; ///< EmitKind::SharedLibrary only
  int64_t arenaBytes = 0;
  std::vector<std::string> requiredFeatures;
};

/// Compiles `module` (cuvil IR, one public function) for `options.target`.
/// `outputPath` names where the library will go (its temporary file is made
/// next to it). Diagnostics go to the context's handler; the Error says
/// which stage failed.
::cuvil::Result<ExportResult> exportModel(ModuleOp module, const ExportOptions &options,
                                          const std::string &outputPath);

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_EXPORT_H
