//===- ModelLoader.h - A model file of any supported kind as cuvil IR -*- C++ -*-===//
//
// What every compiler tool that takes a model reads: a TorchScript archive
// (imported, with the input shapes the user gave) or cuvil IR as MLIR text
// or bytecode (read 64-byte aligned, as bytecode weights need).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_LOADER_MODELLOADER_H
#define CUVIL_FRONTEND_LOADER_MODELLOADER_H

#include "frontend/torchscript/Importer.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace cuvil {

struct LoadOptions {
  /// --input-shape flags, for .pt models.
  std::vector<std::string> inputShapes;
  /// What the importer may leave out (dead-code elimination).
  bool eliminateDeadCode = true;
  /// Where the unsupported-operator report goes, if anywhere.
  std::string unsupportedReport;
  /// Models PyTorch quantized: the engine whose arithmetic they reproduce
  /// ("onednn" or "qnnpack"; torchscript::ImportOptions).
  std::string quantizedEngine = "onednn";
};

/// Loads `path` (.pt, .mlir, .mlirbc) into `context`. Import problems are
/// printed (all unsupported operators at once) and returned as an Error.
/// Checks a command line's --input-shape specs (syntax, sizes, an input
/// given twice) before any work.
Status checkInputShapes(const std::vector<std::string> &specs);

Result<mlir::OwningOpRef<mlir::ModuleOp>> loadModel(mlir::MLIRContext &context,
                                                    const std::string &path,
                                                    const LoadOptions &options);

} // namespace cuvil

#endif // CUVIL_FRONTEND_LOADER_MODELLOADER_H
