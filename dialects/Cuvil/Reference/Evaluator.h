//===- Evaluator.h - Reference semantics of the cuvil dialect ---*- C++ -*-===//
//
// A plain, obviously correct interpreter for cuvil IR: every op is a few
// loops over host tensors, computing in double (floats) or int64 (integers)
// and rounding once to the result type. It is the oracle that the importer,
// every pass and the compiled code are tested against, and it backs
// `cuvil-run model.mlir`.
//
// Errors that only show at run time (an index out of range, integer division
// by zero, a dynamic size that does not match) are reported as diagnostics
// on the op that failed.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_REFERENCE_EVALUATOR_H
#define CUVIL_DIALECT_CUVIL_REFERENCE_EVALUATOR_H

#include "support/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <string>

namespace mlir::cuvil::reference {

using ::cuvil::DType;
using ::cuvil::Tensor;

/// The runtime dtype of an MLIR element type, if Cuvil supports it.
std::optional<DType> toDType(Type elementType);
/// The MLIR element type of a dtype.
Type toElementType(MLIRContext *ctx, DType dtype);
/// The MLIR tensor type of a host tensor.
RankedTensorType tensorTypeOf(MLIRContext *ctx, const Tensor &t);

/// The value of a dense or dense_resource elements attribute. Fails (with
/// an error at `loc`) for unsupported element types or missing blob data.
FailureOr<Tensor> tensorFromAttr(ElementsAttr attr, Location loc);
/// A dense attribute holding `t` (whose dtype and shape must match `type`).
DenseElementsAttr attrFromTensor(const Tensor &t, RankedTensorType type);
/// An attribute holding `t`: a dense one for small or bool tensors, else a
/// dense_resource blob named `name` (made unique by the resource manager).
ElementsAttr elementsAttrFromTensor(const Tensor &t, RankedTensorType type, StringRef name);

/// True when evaluateOp knows `op`.
bool canEvaluate(Operation *op);

/// Evaluates one op on concrete operand values and returns its results.
FailureOr<SmallVector<Tensor>> evaluateOp(Operation *op,
                                          ArrayRef<Tensor> operands);

/// Options of a function evaluation.
struct EvaluateOptions {
  /// Check each result against the op's declared result type (dtype and
  /// static dimensions): catches disagreements between an op's shape rule
  /// and its reference implementation.
  bool checkResultTypes = true;
  /// Where cuvil.effect.print writes (stdout when null).
  llvm::raw_ostream *printStream = nullptr;
  /// When set: each arm of the model's control flow that runs is counted
  /// here by its branchArmName ("m.py:12 if then", "m.py:30 loop body").
  std::map<std::string, int64_t> *branchCounts = nullptr;
};

/// Evaluates `func` on `inputs`: checks the inputs against the signature
/// (count, dtype, static dimensions), runs the body and returns the values
/// given to func.return.
FailureOr<SmallVector<Tensor>>
evaluateFunction(func::FuncOp func, ArrayRef<Tensor> inputs,
                 const EvaluateOptions &options = {});

} // namespace mlir::cuvil::reference

#endif // CUVIL_DIALECT_CUVIL_REFERENCE_EVALUATOR_H
