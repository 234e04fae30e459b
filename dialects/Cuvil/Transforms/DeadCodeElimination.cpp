//===- DeadCodeElimination.cpp - Remove unused pure operations ------------===//
//
// A worklist over the function: an op is removed when MLIR's effect
// interfaces say it is trivially dead (no uses, no effects, recursively for
// ops with regions); removing it may make its operands' producers dead.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILDEADCODEELIMINATIONPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;

namespace {

struct CuvilDeadCodeEliminationPass final
    : mlir::cuvil::impl::CuvilDeadCodeEliminationPassBase<CuvilDeadCodeEliminationPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::SetVector<Operation *> worklist;
    // Post-order: nested ops before their parents, users before producers
    // within a block is not guaranteed, hence the worklist.
    getOperation().walk([&](Operation *op) {
      if (op != getOperation().getOperation())
        worklist.insert(op);
    });
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!isOpTriviallyDead(op))
        continue;
      // Producers of values used by `op` or by ops nested in it may become
      // dead; the nested ops go with `op`.
      SmallVector<Operation *> producers;
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *p = v.getDefiningOp(); p && !op->isAncestor(p))
            producers.push_back(p);
        if (inner != op)
          worklist.remove(inner);
      });
      op->erase();
      worklist.insert(producers.begin(), producers.end());
      ++numErased;
    }
  }
};

} // namespace
