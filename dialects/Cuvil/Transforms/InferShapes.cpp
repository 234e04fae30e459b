//===- InferShapes.cpp - Refine dynamic dimensions -----------------------===//
//
// Re-runs every op's shape rule (InferTypeOpInterface) in program order and
// keeps whatever the rule learns that the IR did not know: a dynamic
// dimension becomes static, a static one never changes. The function's
// result types follow what it returns.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILINFERSHAPESPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

/// The more precise of two compatible tensor types: static sizes win.
/// Returns `current` when the two do not describe the same kind of tensor.
Type refine(Type current, Type inferred) {
  auto c = llvm::dyn_cast<RankedTensorType>(current);
  auto i = llvm::dyn_cast<RankedTensorType>(inferred);
  if (!c || !i || c.getElementType() != i.getElementType() ||
      !areCompatibleShapes(c.getShape(), i.getShape()))
    return current;
  SmallVector<int64_t> shape;
  for (auto [a, b] : llvm::zip(c.getShape(), i.getShape()))
    shape.push_back(ShapedType::isDynamic(a) ? b : a);
  return RankedTensorType::get(shape, c.getElementType(), c.getEncoding());
}

/// Users that re-derive or accept refined types: cuvil ops and func.return.
bool acceptsRefinedType(OpOperand &use) {
  Operation *user = use.getOwner();
  return llvm::isa<func::ReturnOp>(user) ||
         llvm::isa<CuvilDialect>(user->getDialect());
}

struct CuvilInferShapesPass final
    : mlir::cuvil::impl::CuvilInferShapesPassBase<CuvilInferShapesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    func.walk([&](Operation *op) {
      SmallVector<Type> inferred;
      if (auto infer = llvm::dyn_cast<InferTypeOpInterface>(op)) {
        if (failed(infer.inferReturnTypes(
                ctx, op->getLoc(), op->getOperands(), op->getAttrDictionary(),
                op->getPropertiesStorage(), op->getRegions(), inferred)))
          return;
      } else if (auto cast = llvm::dyn_cast<CastOp>(op)) {
        // A cast keeps its result element type and takes the operand's shape.
        auto in = llvm::cast<RankedTensorType>(cast.getInput().getType());
        inferred.push_back(in.clone(cast.getType().getElementType()));
      } else {
        return;
      }
      for (auto [result, type] : llvm::zip(op->getResults(), inferred))
        refineResult(result, refine(result.getType(), type));
    });
    if (func.isExternal())
      return;
    auto ret = llvm::dyn_cast<func::ReturnOp>(func.getBody().back().getTerminator());
    if (ret)
      func.setType(FunctionType::get(ctx, func.getArgumentTypes(),
                                     ret.getOperandTypes()));
  }

  void refineResult(Value result, Type newType) {
    Type oldType = result.getType();
    if (newType == oldType)
      return;
    // Keep other dialects' users on the old type through a tensor.cast.
    SmallVector<OpOperand *> keepOld;
    for (OpOperand &use : result.getUses())
      if (!acceptsRefinedType(use))
        keepOld.push_back(&use);
    result.setType(newType);
    if (keepOld.empty())
      return;
    OpBuilder b(result.getContext());
    b.setInsertionPointAfterValue(result);
    Value back = b.create<tensor::CastOp>(result.getLoc(), oldType, result);
    for (OpOperand *use : keepOld)
      use->set(back);
  }
};

} // namespace
