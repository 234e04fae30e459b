//===- Lifetimes.h - Buffers and live ranges of a function ------*- C++ -*-===//
//
// The storage a compiled function needs for its intermediate tensors: each
// storage root (a value that is not a view, see Aliasing.h) that is neither
// a function input, a constant nor (viewed by) a returned value is a buffer
// of `bytes` (single-result ops outside control flow), live from the position of the op that writes it to the last
// position where it or any view of it is read. Positions are the indices
// of the function body's top-level ops; a use inside a nested region
// counts at its top-level ancestor. Values made inside regions (fusion
// group bodies, scf branches) are not buffers of this function.
//
// In-place candidates: an op may write its result over an operand's buffer
// when that buffer dies at this op, has the same size, is read through a
// contiguous view (same element order) and the op reads each element
// before writing it (element-wise ops; fusion groups through their
// epilogue operands only, never their anchor's inputs).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_ANALYSIS_LIFETIMES_H
#define CUVIL_DIALECT_CUVIL_ANALYSIS_LIFETIMES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::cuvil {

enum class StorageKind { Intermediate, Input, Constant, Output, Unplanned };

struct Storage {
  Value root;
  StorageKind kind = StorageKind::Intermediate;
  int64_t bytes = 0;
  int64_t start = 0; ///< position of the op that writes it
  int64_t end = 0;   ///< last position that reads it (>= start)
};

class FunctionLifetimes {
public:
  explicit FunctionLifetimes(func::FuncOp func);

  /// Every storage root of the function body, in program order.
  llvm::ArrayRef<Storage> storages() const { return storages_; }
  /// The storage of a top-level value (through views), or null.
  const Storage *storageOf(Value v) const;
  /// Position of a top-level op (or of the top-level ancestor of a nested one).
  int64_t position(Operation *op) const;
  /// The top-level ops, in order.
  llvm::ArrayRef<Operation *> ops() const { return ops_; }

  /// The operands of `op` whose buffer it may overwrite with its result
  /// (same size, dies here, contiguous, read-before-write).
  llvm::SmallVector<Value> inPlaceCandidates(Operation *op) const;

private:
  llvm::SmallVector<Operation *> ops_;
  llvm::DenseMap<Operation *, int64_t> positions_;
  llvm::SmallVector<Storage> storages_;
  llvm::DenseMap<Value, size_t> indexOfRoot_;
};

/// Bytes of a statically shaped tensor type, or -1.
int64_t tensorBytes(Type type);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_ANALYSIS_LIFETIMES_H
