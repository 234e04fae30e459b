//===- WeightsPlan.h - A library's weights as made from its model -*- C++ -*-===//
//
// A full build records how each weight of its library (the weights table)
// is made from the model: one of the model's tensors, by resource key; a
// constant of the IR; or a derivation the compiler recorded
// (WeightDerivations.h) of other such nodes. A later build of a model with
// the same structure (structureDigest: the imported IR with its weights'
// values left out) replays the plan on the new model's tensors and places
// the result in the cached linked image: no graph pipeline, no lowering, no
// code generation. Only floating-point tensors of 64 bytes or more are left
// out of the structure: any other tensor (shapes, indices, tiny tables a
// pass may decide on) is part of it, value and all.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_WEIGHTSPLAN_H
#define CUVIL_DRIVER_WEIGHTSPLAN_H

#include "support/Status.h"
#include "support/Tensor.h"
#include "targets/Target.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::cuvil {

struct WeightsPlan {
  struct Node {
    enum class Kind { Model, Ir, Derived } kind = Kind::Model;
    std::string key;  ///< Model: the resource key; Derived: the result's
    std::string type; ///< the tensor type, printed
    uint64_t bytes = 0;
    std::string attr; ///< Ir: the attribute, printed
    std::string transform, op;
    std::vector<int64_t> params;
    std::vector<size_t> inputs; ///< earlier nodes
  };
  struct Symbol {
    std::string name;
    uint64_t alignment = 1, bytes = 0;
    size_t node = 0;
    /// The model's name (kModelNameSymbol), NUL-padded: no node.
    bool modelName = false;
  };
  std::vector<Node> nodes; ///< inputs before their users
  std::vector<Symbol> symbols;

  size_t derivations() const;
  llvm::json::Value toJson() const;
  static ::cuvil::Result<WeightsPlan> fromJson(const llvm::json::Value &json);
};

/// The digest of `module`'s structure (fresh from the importer, before any
/// pass): its IR with every location, the weights' values left out, and
/// the model file's path (`modelPath`, in locations) as one placeholder.
std::string structureDigest(ModuleOp module, llvm::StringRef modelPath = {});

/// `module`'s tensors (its resources), by key.
llvm::StringMap<DenseResourceElementsAttr> modelTensors(ModuleOp module);

/// The plan of a full build's `table`; an error saying which weight was
/// made without a record. `model`: the keys of the model's tensors.
::cuvil::Result<WeightsPlan> buildWeightsPlan(const WeightsTable &table, const llvm::StringMap<DenseResourceElementsAttr> &model,
                                              MLIRContext *ctx);

/// A replayed plan: the weights table, whose bytes lie in one buffer laid
/// out as the library's weights section (mapped, zero, on huge pages where
/// the system gives them: a hundred megabytes written once, few faults).
class ReplayedWeights {
public:
  ReplayedWeights() = default;
  ReplayedWeights(const ReplayedWeights &) = delete;
  ReplayedWeights &operator=(const ReplayedWeights &) = delete;
  ~ReplayedWeights();

  WeightsTable table;

private:
  friend ::cuvil::Result<std::unique_ptr<ReplayedWeights>>
  replayWeightsPlan(const WeightsPlan &, const llvm::StringMap<DenseResourceElementsAttr> &, llvm::StringRef,
                    MLIRContext *);
  char *section_ = nullptr;
  size_t mapped_ = 0;
  std::vector<std::vector<char>> scratch_; ///< nodes that are no weight of the table
};

/// The weights table of `plan` replayed on `model` (named `modelName`); an
/// error when a tensor, a transform or the name does not fit.
::cuvil::Result<std::unique_ptr<ReplayedWeights>>
replayWeightsPlan(const WeightsPlan &plan, const llvm::StringMap<DenseResourceElementsAttr> &model,
                  llvm::StringRef modelName, MLIRContext *ctx);

} // namespace mlir::cuvil

#endif // CUVIL_DRIVER_WEIGHTSPLAN_H
