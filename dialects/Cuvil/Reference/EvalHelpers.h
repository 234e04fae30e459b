//===- EvalHelpers.h - Shared pieces of the op implementations -*- C++ -*-===//
//
// Internal to the reference evaluator: the op-to-implementation registry
// and the index arithmetic (broadcasting, strided walks) the implementations
// share.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_REFERENCE_EVALHELPERS_H
#define CUVIL_DIALECT_CUVIL_REFERENCE_EVALHELPERS_H

#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/TypeID.h"
#include "llvm/ADT/DenseMap.h"

#include <functional>
#include <vector>

namespace mlir::cuvil::reference {

/// Maps op types to their reference implementations.
class OpEvaluators {
public:
  using Fn = std::function<FailureOr<SmallVector<Tensor>>(Operation *, ArrayRef<Tensor>)>;

  /// A single-result op.
  template <typename OpTy>
  void add(std::function<FailureOr<Tensor>(OpTy, ArrayRef<Tensor>)> fn) {
    table[TypeID::get<OpTy>()] = [fn](Operation *op, ArrayRef<Tensor> args) -> FailureOr<SmallVector<Tensor>> {
      FailureOr<Tensor> r = fn(llvm::cast<OpTy>(op), args);
      if (failed(r))
        return failure();
      SmallVector<Tensor> results;
      results.push_back(std::move(*r));
      return results;
    };
  }
  /// An op with several results.
  template <typename OpTy>
  void addMulti(std::function<FailureOr<SmallVector<Tensor>>(OpTy, ArrayRef<Tensor>)> fn) {
    table[TypeID::get<OpTy>()] = [fn](Operation *op, ArrayRef<Tensor> args) {
      return fn(llvm::cast<OpTy>(op), args);
    };
  }
  const Fn *lookup(Operation *op) const {
    auto name = op->getRegisteredInfo();
    if (!name)
      return nullptr;
    auto it = table.find(name->getTypeID());
    return it == table.end() ? nullptr : &it->second;
  }

private:
  llvm::DenseMap<TypeID, Fn> table;
};

void registerElementwiseEvaluators(OpEvaluators &e);
void registerLinalgEvaluators(OpEvaluators &e);
void registerNormPoolEvaluators(OpEvaluators &e);
void registerReduceEvaluators(OpEvaluators &e);
void registerShapeEvaluators(OpEvaluators &e);
void registerQuantEvaluators(OpEvaluators &e);

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

using Shape = std::vector<int64_t>;

/// The dtype of result `i` of `op` (asserts a supported type).
DType resultDType(Operation *op, unsigned i = 0);

/// Number of elements of a shape (validated shapes only).
int64_t numElements(const Shape &shape);

/// NumPy broadcast of runtime shapes; emits an error at `op` on mismatch.
FailureOr<Shape> broadcastRuntime(Operation *op, const Shape &a, const Shape &b);

/// For each element of `outShape` (row-major), the flat index of the element
/// of a tensor of `inShape` that broadcasts to it.
std::vector<int64_t> broadcastIndexMap(const Shape &outShape,
                                       const Shape &inShape);

/// Allocates a result tensor, reporting an over-large shape at `op`.
FailureOr<Tensor> allocate(Operation *op, DType dtype, Shape shape);

/// Calls fn(index vector, flat index) for every element of `shape`.
void forEachIndex(const Shape &shape,
                  const std::function<void(const Shape &, int64_t)> &fn);

/// Row-major strides.
Shape stridesOf(const Shape &shape);

} // namespace mlir::cuvil::reference

#endif // CUVIL_DIALECT_CUVIL_REFERENCE_EVALHELPERS_H
