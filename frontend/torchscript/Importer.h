//===- Importer.h - TorchScript archive to cuvil IR -------------*- C++ -*-===//
//
// The public entry point of the TorchScript frontend: reads a .pt archive
// with Cuvil's own readers (no libtorch), partially evaluates its forward
// method with the given input shapes, and returns a module holding
// `func.func @forward` in the cuvil dialect, weights as resource blobs.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_IMPORTER_H
#define CUVIL_FRONTEND_TORCHSCRIPT_IMPORTER_H

#include "support/DType.h"
#include "support/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace cuvil::torchscript {

/// --input-shape INDEX_OR_NAME=DIMxDIM...xDTYPE (ARCHITECTURE.md §3).
struct InputSpec {
  std::string key;             ///< argument index ("0") or name ("x")
  std::vector<int64_t> shape;  ///< -1 for a dynamic dimension
  DType dtype = DType::Float32;
  /// Per dimension: "" for a static one, else its symbol ("seq"; an
  /// anonymous '?' gets one of its own, "<key>.<dim>").
  std::vector<std::string> symbols;
  /// Per dimension: the sizes a run may give (a static one: its size).
  std::vector<int64_t> minSize, maxSize;
  /// Per dimension: whether its bounds were given (or it is static).
  std::vector<bool> explicitBounds;
};
/// The bounds of a '?' or a symbol given without any: the arena is planned
/// at the maximum, so it is modest; give bounds (seq:1..512) for more.
inline constexpr int64_t kDefaultDynamicMax = 4096;
Result<InputSpec> parseInputShape(const std::string &spec);
/// Every --input-shape of a command line; an input given twice is an error.
Result<std::vector<InputSpec>> parseInputShapes(const std::vector<std::string> &specs);

struct ImportOptions {
  std::vector<InputSpec> inputs;
  std::string method = "forward";
  /// Remove ops whose values the model never uses (what pure code computed
  /// on paths the evaluation discarded, or the model's own dead code).
  bool eliminateDeadCode = true;
  /// The PyTorch engine whose integer arithmetic a quantized model's ops
  /// reproduce: "onednn" (x86; PyTorch's default there) or "qnnpack"
  /// (Arm; the one on phones). It cannot be read from the archive: the
  /// same model gives slightly different integers on each.
  std::string quantizedEngine = "onednn";
};

/// An operator or construct the importer does not support, with every place
/// it was met (original Python file:line where the archive says).
struct UnsupportedItem {
  std::string what;
  std::vector<std::string> locations;
};

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module; ///< null when unsupported is non-empty
  std::vector<UnsupportedItem> unsupported;
  std::vector<std::string> warnings;
};

/// Imports `path`. Errors (malformed archive, bad input shapes, a raised
/// exception in the model, verifier failures) are returned as Error;
/// unsupported operators are collected and returned all at once.
Result<ImportResult> importTorchScript(mlir::MLIRContext &context,
                                       const std::string &path,
                                       const ImportOptions &options);

/// The aten/prim operators the importer can translate.
std::vector<std::string> supportedOperators();

/// The unsupported-construct report as JSON.
std::string unsupportedReportJson(const std::string &model,
                                  const std::vector<UnsupportedItem> &items);

/// The report of unsupported operators as printed on stderr: "'MODEL' uses
/// N unsupported operator(s) ...", then each with its count and locations.
std::string describeUnsupported(const std::string &model,
                                const std::vector<UnsupportedItem> &items);

/// The dialects an imported module uses (register them in the context).
void registerImporterDialects(mlir::MLIRContext &context);

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_IMPORTER_H
