//===- FoldConstants.cpp - Evaluate ops on constant operands --------------===//
//
// Folding reuses the reference evaluator rather than per-op folders, so a
// folded constant always equals what the unfolded IR computes.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/ConstantValues.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDCONSTANTSPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// Ops that only move a tensor's elements (each result element is one
/// operand element).
bool isRearrangement(Operation *op) {
  return llvm::isa<SliceOp, ReshapeOp, PermuteOp, TransposeOp>(op);
}

int64_t numElements(ConstantOp c) {
  auto t = llvm::dyn_cast<RankedTensorType>(c.getType());
  return t && t.hasStaticShape() ? t.getNumElements() : 0;
}

struct CuvilFoldConstantsPass final
    : mlir::cuvil::impl::CuvilFoldConstantsPassBase<CuvilFoldConstantsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (llvm::isa<CuvilDialect>(op->getDialect()) && !llvm::isa<ConstantOp>(op) &&
          op->getNumResults() == 1 && isPure(op) && op->getNumOperands() > 0)
        candidates.push_back(op);
    });
    // Program order: folding an op can make its users foldable.
    for (Operation *op : candidates)
      tryFold(op);
  }

  void tryFold(Operation *op) {
    auto type = llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.hasStaticShape())
      return;
    SmallVector<reference::Tensor> operands;
    SmallVector<ConstantOp> producers;
    for (Value v : op->getOperands()) {
      auto c = v.getDefiningOp<ConstantOp>();
      if (!c)
        return;
      producers.push_back(c);
    }
    // Past max-elements only a rearrangement of one constant (a slice,
    // reshape or permute of weights: what a 3-D convolution's import makes
    // of its kernel) folds: it never holds more than its source, and the
    // kernels need the weights as constants.
    bool large = type.getNumElements() > maxElements;
    if (large && !(op->getNumOperands() == 1 && isRearrangement(op) &&
                   type.getNumElements() <= numElements(producers.front())))
      return;
    // Evaluation failures (out-of-range indices, division by zero) are not
    // compile errors: the op stays and fails at run time as it should.
    ScopedDiagnosticHandler silence(&getContext(),
                                    [](Diagnostic &) { return success(); });
    for (ConstantOp c : producers) {
      FailureOr<reference::Tensor> t =
          reference::tensorFromAttr(c.getValue(), c.getLoc());
      if (failed(t))
        return;
      operands.push_back(std::move(*t));
    }
    FailureOr<SmallVector<reference::Tensor>> results =
        reference::evaluateOp(op, operands);
    if (failed(results))
      return;
    announceRewrite(op, ("fold-constants " + op->getName().getStringRef()).str());
    IRRewriter b(op->getContext(), RewriteObserver::current());
    b.setInsertionPoint(op);
    // Large results as named blobs, as weights are ("w" -> "w.folded").
    auto folded = b.create<ConstantOp>(
        op->getLoc(), type,
        large ? reference::elementsAttrFromTensor(results->front(), type, derivedResourceName(producers.front(), "folded", "constant"))
              : ElementsAttr(reference::attrFromTensor(results->front(), type)));
    b.replaceOp(op, folded.getResult());
    // An op may read one constant twice: erase each once.
    for (Operation *c : llvm::SmallSetVector<Operation *, 4>(producers.begin(), producers.end()))
      if (c->use_empty())
        b.eraseOp(c);
  }
};

} // namespace
