//===- FoldConstants.cpp - Evaluate ops on constant operands --------------===//
//
// Folding reuses the reference evaluator rather than per-op folders, so a
// folded constant always equals what the unfolded IR computes.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/WeightDerivations.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/ConstantValues.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

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

/// `op` alone, its operands a function's arguments, in generic form: what
/// the "evaluate" weight transform parses and evaluates again.
std::string opAsFunction(Operation *op) {
  OpBuilder b(op->getContext());
  OwningOpRef<ModuleOp> module = ModuleOp::create(op->getLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto f = b.create<func::FuncOp>(op->getLoc(), "derive",
                                  b.getFunctionType(op->getOperandTypes(), op->getResultTypes()));
  Block *body = f.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping map;
  for (auto [from, to] : llvm::zip(op->getOperands(), body->getArguments()))
    map.map(from, to);
  Operation *copy = b.clone(*op, map);
  b.create<func::ReturnOp>(op->getLoc(), copy->getResults());
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, OpPrintingFlags().printGenericOpForm());
  return text;
}

/// Replays a fold: the op parsed back and evaluated on the new inputs.
LogicalResult evaluateAgain(const WeightDerivation &how, ArrayRef<WeightBytes> inputs, RankedTensorType result,
                            MutableArrayRef<char> out, MLIRContext *ctx) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(how.op, ctx);
  if (!module)
    return failure();
  auto f = module->lookupSymbol<func::FuncOp>("derive");
  if (!f || f.getBody().empty() || f.getBody().front().getOperations().size() != 2)
    return failure();
  Operation *op = &f.getBody().front().front();
  // The result may have been re-typed since (a reshape of the same bytes).
  auto type = op->getNumResults() == 1 ? llvm::dyn_cast<RankedTensorType>(op->getResult(0).getType()) : nullptr;
  if (op->getNumOperands() != inputs.size() || !type || !type.hasStaticShape() ||
      type.getElementType() != result.getElementType() || type.getNumElements() != result.getNumElements())
    return failure();
  SmallVector<reference::Tensor> operands;
  for (const WeightBytes &in : inputs) {
    FailureOr<reference::Tensor> t = tensorOfBytes(in);
    if (failed(t))
      return failure();
    operands.push_back(std::move(*t));
  }
  FailureOr<SmallVector<reference::Tensor>> results = reference::evaluateOp(op, operands);
  if (failed(results) || results->size() != 1 || results->front().byteSize() != out.size())
    return failure();
  std::memcpy(out.data(), results->front().data(), out.size());
  return success();
}
// Evaluating builds the op in the context: one at a time.
[[maybe_unused]] const bool kEvaluateTransform =
    registerWeightTransform("evaluate", evaluateAgain, /*concurrent=*/false);

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
    // Large results as named blobs, as weights are ("w" -> "w.folded"); so
    // is whatever is made of weights, whatever its size: no later rewrite
    // may then decide on the values of weights (x + 0 -> x on a bias that
    // happens to be zero), which a redeploy with new weights replays
    // without those rewrites (WeightDerivations.h).
    bool fromWeights = llvm::any_of(producers, [](ConstantOp c) { return holdsWeights(c.getResult()); });
    std::string derivation = large || fromWeights ? opAsFunction(op) : std::string();
    IRRewriter b(op->getContext(), RewriteObserver::current());
    b.setInsertionPoint(op);
    ElementsAttr value;
    const reference::Tensor &r = results->front();
    if (fromWeights && r.dtype() != ::cuvil::DType::Bool) {
      value = weightAttrFromTensor(r, type, derivedResourceName(producers.front(), "folded", "constant"));
    } else {
      value = large ? reference::elementsAttrFromTensor(r, type, derivedResourceName(producers.front(), "folded", "constant"))
                    : ElementsAttr(reference::attrFromTensor(r, type));
      if (fromWeights) // a mask of weights: its values are in the IR now
        if (WeightDerivations *log = weightDerivations(&getContext()))
          log->markValueDependent("a boolean folded from weights by " + op->getName().getStringRef().str());
    }
    if (!derivation.empty()) {
      WeightDerivation how{"evaluate", {}, std::move(derivation), {}};
      for (ConstantOp c : producers)
        how.inputs.push_back(c.getValue());
      recordWeightDerivation(value, std::move(how));
    }
    auto folded = b.create<ConstantOp>(op->getLoc(), type, value);
    b.replaceOp(op, folded.getResult());
    // An op may read one constant twice: erase each once.
    for (Operation *c : llvm::SmallSetVector<Operation *, 4>(producers.begin(), producers.end()))
      if (c->use_empty())
        b.eraseOp(c);
  }
};

} // namespace
