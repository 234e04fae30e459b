//===- FlatteningListener.cpp - The flattening check in rewrite drivers ---===//
#include "dialects/Cuvil/Transforms/FlatteningListener.h"

#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil {

void FlatteningListener::watch(Operation *op, StringRef name) {
  watched = op;
  deps = ControlDependencies::of(op);
  rewrite = name.str();
}

void FlatteningListener::notifyPatternBegin(const Pattern &pattern, Operation *op) {
  if (next)
    next->notifyPatternBegin(pattern, op);
  watch(op, patternName(pattern));
}

void FlatteningListener::notifyPatternEnd(const Pattern &pattern, LogicalResult status) {
  if (next)
    next->notifyPatternEnd(pattern, status);
  watched = nullptr;
  deps.reset();
}

void FlatteningListener::notifyOperationReplaced(Operation *op, ValueRange replacement) {
  if (next)
    next->notifyOperationReplaced(op, replacement);
  if (!deps)
    return;
  if (op == watched)
    lost |= failed(deps->checkReplacement(replacement, rewrite));
  else
    deps->noteReplaced(op, replacement);
}

void FlatteningListener::notifyOperationErased(Operation *op) {
  if (next)
    next->notifyOperationErased(op);
  if (op == watched) { // replaced (and checked) or simply dead
    watched = nullptr;
    deps.reset();
  }
}

void FlatteningListener::notifyOperationInserted(Operation *op, OpBuilder::InsertPoint previous) {
  if (next)
    next->notifyOperationInserted(op, previous);
}

void FlatteningListener::notifyOperationModified(Operation *op) {
  if (next)
    next->notifyOperationModified(op);
}

void FlatteningListener::notifyBlockInserted(Block *block, Region *previous, Region::iterator previousIt) {
  if (next)
    next->notifyBlockInserted(block, previous, previousIt);
}

void FlatteningListener::notifyBlockErased(Block *block) {
  if (next)
    next->notifyBlockErased(block);
}

void FlatteningListener::notifyMatchFailure(Location loc, function_ref<void(Diagnostic &)> reasonCallback) {
  if (next)
    next->notifyMatchFailure(loc, reasonCallback);
}

namespace {

struct WrongIfConversion : OpRewritePattern<scf::IfOp> {
  explicit WrongIfConversion(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/100) {
    setDebugName("test: if-conversion to the then-branch");
  }
  LogicalResult matchAndRewrite(scf::IfOp op, PatternRewriter &rewriter) const override {
    if (!op.getNumResults() || matchPattern(op.getCondition(), m_Constant()))
      return failure();
    SmallVector<Value> values(op.thenYield().getOperands());
    rewriter.eraseOp(op.thenYield());
    rewriter.inlineBlockBefore(op.thenBlock(), op);
    rewriter.replaceOp(op, values);
    return success();
  }
};

} // namespace

void populateWrongIfConversionForTests(RewritePatternSet &patterns) {
  patterns.add<WrongIfConversion>(patterns.getContext());
}

} // namespace mlir::cuvil
