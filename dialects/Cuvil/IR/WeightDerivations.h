//===- WeightDerivations.h - Constants made from weights, as data -*- C++ -*-===//
//
// The compiler turns a model's weights into other constants (packed into a
// kernel's panels, moved into the Winograd domain, sliced, transposed). Each
// pass that does so records how, here: a registered transform, its integer
// parameters and its input constants. A redeploy whose model differs only in
// its weights then recomputes the library's constants from the new weights
// by replaying these records, without running the passes (the compile
// driver's weights plan). A constant made without a record makes its model
// ineligible for the replay, never wrong.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_WEIGHTDERIVATIONS_H
#define CUVIL_DIALECT_CUVIL_IR_WEIGHTDERIVATIONS_H

#include "support/Tensor.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mlir::cuvil {

/// How one resource constant was computed.
struct WeightDerivation {
  std::string transform;         ///< a registered WeightTransform's name
  std::vector<int64_t> params;   ///< its parameters
  std::string op;                ///< for "evaluate": the op, in a generic MLIR function
  std::vector<Attribute> inputs; ///< the constants it read (ElementsAttr)
};

/// The records of one MLIRContext (the cuvil dialect's), by the result's
/// resource key: a resource keeps its key when a pass re-types it.
class WeightDerivations {
public:
  void record(StringRef resourceKey, WeightDerivation how);
  std::optional<WeightDerivation> lookup(StringRef resourceKey) const;
  /// A pass put values computed from weights into the IR itself (where
  /// rewrites may decide on them): no replay for this compile.
  void markValueDependent(std::string why);
  /// Why the compile depends on its weights' values ("" when it does not).
  std::string valueDependence() const;
  void clear();

private:
  mutable std::mutex mutex_;
  llvm::StringMap<WeightDerivation> records_;
  std::string valueDependence_;
};

/// The records of `ctx` (null when the cuvil dialect is not loaded).
WeightDerivations *weightDerivations(MLIRContext *ctx);

/// Records that the resource constant `result` is `how` (no-op for other
/// attributes or without the cuvil dialect).
void recordWeightDerivation(Attribute result, WeightDerivation how);

/// A constant's bytes as a transform reads them.
struct WeightBytes {
  RankedTensorType type;
  llvm::ArrayRef<char> bytes;
};

/// Computes a derivation's result (of type `result`) from its inputs'
/// values into `out` (zeroed, the result's size); a failure makes the
/// replay fall back to compiling.
using WeightTransform =
    std::function<LogicalResult(const WeightDerivation &how, llvm::ArrayRef<WeightBytes> inputs,
                                RankedTensorType result, llvm::MutableArrayRef<char> out, MLIRContext *ctx)>;

/// Registers `fn` under `name` (each recording library registers its own,
/// at static initialisation); a name registered twice keeps the first.
/// `concurrent`: whether the replay may run it on several threads at once
/// (it reads its inputs and writes `out` only; a transform that builds IR
/// in `ctx` is not).
bool registerWeightTransform(llvm::StringRef name, WeightTransform fn, bool concurrent = true);
/// The transform named `name`, or null; `concurrent` receives its flag.
const WeightTransform *lookupWeightTransform(llvm::StringRef name, bool *concurrent = nullptr);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_WEIGHTDERIVATIONS_H
