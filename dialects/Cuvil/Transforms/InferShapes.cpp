//===- InferShapes.cpp - Refine dynamic dimensions -----------------------===//
//
// Re-runs every op's shape rule (InferTypeOpInterface) in program order and
// keeps whatever the rule learns that the IR did not know: a dynamic
// dimension becomes static, a static one never changes. The function's
// result types follow what it returns.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/RunTimeSizes.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

  /// Re-infers `op`'s result types and keeps what is more precise.
  void inferAndRefine(Operation *op) {
    SmallVector<Type> inferred;
    if (auto infer = llvm::dyn_cast<InferTypeOpInterface>(op)) {
      if (failed(infer.inferReturnTypes(&getContext(), op->getLoc(), op->getOperands(),
                                        op->getAttrDictionary(), op->getPropertiesStorage(),
                                        op->getRegions(), inferred)))
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
  }

  /// The value of a small shape computation (sizes, dims, their
  /// arithmetic) when its leaves are constants and static dimensions.
  std::optional<reference::Tensor> evaluateShape(Value v, llvm::DenseMap<Value, reference::Tensor> &memo,
                                                 int depth = 0) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
    if (!def || depth > 64 || !type || !type.hasStaticShape() || type.getNumElements() > 64 ||
        !isPure(def) || def->getNumResults() != 1 || def->getNumRegions() > 0)
      return std::nullopt;
    if (auto c = llvm::dyn_cast<ConstantOp>(def)) {
      FailureOr<reference::Tensor> t = reference::tensorFromAttr(c.getValue(), c.getLoc());
      if (failed(t))
        return std::nullopt;
      return memo[v] = *t;
    }
    if (auto dim = llvm::dyn_cast<DimOp>(def)) {
      auto in = llvm::cast<RankedTensorType>(dim.getInput().getType());
      if (in.isDynamicDim(dim.getDim()))
        return std::nullopt;
      return memo[v] = reference::Tensor::fromDoubles(
                 ::cuvil::DType::Int64, {}, {static_cast<double>(in.getDimSize(dim.getDim()))});
    }
    if (!reference::canEvaluate(def))
      return std::nullopt;
    SmallVector<reference::Tensor> operands;
    for (Value o : def->getOperands()) {
      std::optional<reference::Tensor> t = evaluateShape(o, memo, depth + 1);
      if (!t)
        return std::nullopt;
      operands.push_back(*t);
    }
    ScopedDiagnosticHandler silence(&getContext(), [](Diagnostic &) { return success(); });
    FailureOr<SmallVector<reference::Tensor>> r = reference::evaluateOp(def, operands);
    if (failed(r))
      return std::nullopt;
    return memo[v] = (*r)[0];
  }

  /// True when `v` is computed from tensor data (not only from constants
  /// and dimension sizes).
  bool dependsOnTensorData(Value v, int depth = 0) {
    Operation *def = v.getDefiningOp();
    if (!def || depth > 64)
      return true; // a function argument's data
    if (llvm::isa<ConstantOp, DimOp>(def))
      return false;
    return llvm::any_of(def->getOperands(),
                        [&](Value o) { return dependsOnTensorData(o, depth + 1); });
  }

  /// What can be said of each size of `op`'s shape when it is the
  /// importer's concat of one-element parts: a constant, or the size of a
  /// dimension of the input (which cancels that dimension when inferring
  /// a -1, as in x.view(x.size(0), -1)). Refines the result type with it.
  void refinePartially(ReshapeDynamicOp op, llvm::DenseMap<Value, reference::Tensor> &memo) {
    auto in = llvm::cast<RankedTensorType>(op.getInput().getType());
    auto concat = op.getShape().getDefiningOp<ConcatOp>();
    SmallVector<Value> parts;
    if (concat)
      parts.append(concat.getInputs().begin(), concat.getInputs().end());
    else
      parts.push_back(op.getShape());
    auto result = llvm::cast<RankedTensorType>(op.getType());
    SmallVector<int64_t> sizes;
    SmallVector<bool> fromInput(in.getRank(), false); // input dims matched by a DimOp part
    int64_t inferAt = -1, known = 1;
    bool allKnownOrInput = true;
    for (Value part : parts) {
      auto partType = llvm::cast<RankedTensorType>(part.getType());
      if (partType.getRank() != 1 || partType.isDynamicDim(0))
        return;
      Value scalar = part;
      if (auto r = part.getDefiningOp<ReshapeOp>())
        scalar = r.getInput();
      if (auto dim = scalar.getDefiningOp<DimOp>(); dim && dim.getInput() == op.getInput()) {
        sizes.push_back(in.isDynamicDim(dim.getDim()) ? ShapedType::kDynamic
                                                      : in.getDimSize(dim.getDim()));
        fromInput[dim.getDim()] = true;
        continue;
      }
      // A run-time size the input has in a dimension (y.reshape(b, t, -1)
      // with t = x.size(1) of the tensor y was computed from).
      if (partType.getDimSize(0) == 1) {
        int64_t k = 0;
        while (k < in.getRank() && !(in.isDynamicDim(k) && !fromInput[k] && dimIsSize(op.getInput(), k, scalar)))
          ++k;
        if (k < in.getRank()) {
          sizes.push_back(ShapedType::kDynamic);
          fromInput[k] = true;
          continue;
        }
      }
      std::optional<reference::Tensor> t = evaluateShape(part, memo);
      if (!t) {
        allKnownOrInput = false;
        sizes.append(partType.getDimSize(0), ShapedType::kDynamic);
        continue;
      }
      for (int64_t size : t->toInts()) {
        if (size == -1) {
          inferAt = static_cast<int64_t>(sizes.size());
          sizes.push_back(ShapedType::kDynamic);
        } else {
          sizes.push_back(size);
          known *= size;
        }
      }
    }
    if (static_cast<int64_t>(sizes.size()) != result.getRank())
      return;
    if (inferAt >= 0 && allKnownOrInput) {
      int64_t rest = 1;
      bool staticRest = true;
      for (int64_t d = 0; d < in.getRank(); ++d) {
        if (fromInput[d])
          continue;
        staticRest &= !in.isDynamicDim(d);
        if (!in.isDynamicDim(d))
          rest *= in.getDimSize(d);
      }
      if (staticRest && known > 0 && rest % known == 0)
        sizes[inferAt] = rest / known;
    }
    // One size left unknown is what the element count leaves of the
    // others (PyTorch refuses a view whose sizes disagree with it), as a
    // static reshape's -1: x.view(b, x.size(1), h, d) with a run-time
    // sequence length compiles as x.view(b, -1, h, d).
    if (llvm::count(sizes, ShapedType::kDynamic) == 1 && known > 0 &&
        (inferAt < 0 || !ShapedType::isDynamic(sizes[inferAt]))) {
      SmallVector<int64_t> attr(sizes);
      for (int64_t &size : attr)
        if (ShapedType::isDynamic(size))
          size = -1;
      OpBuilder b(op);
      auto reshape = b.create<ReshapeOp>(op.getLoc(), op.getInput(), b.getDenseI64ArrayAttr(attr));
      if (succeeded(mlir::verify(reshape, /*verifyRecursively=*/false))) {
        inferAndRefine(reshape);
        refineResult(op.getResult(), reshape.getType());
        op.getResult().replaceAllUsesWith(reshape.getResult());
        op.erase();
        return;
      }
      reshape.erase();
    }
    if (succeeded(asUnitDimensionChanges(op, parts)))
      return;
    refineResult(op.getResult(),
                 refine(op.getType(), RankedTensorType::get(sizes, result.getElementType())));
  }

  /// x.view(1, 1, t, t) of a t x t tensor made at run time: the sizes are
  /// the input's with unit dimensions inserted or removed, so the view is
  /// a squeeze and unsqueezes, which keep several run-time sizes (a
  /// reshape's shape has one -1).
  LogicalResult asUnitDimensionChanges(ReshapeDynamicOp op, ArrayRef<Value> parts) {
    Value input = op.getInput();
    auto in = llvm::cast<RankedTensorType>(input.getType());
    SmallVector<Value> sizes;
    for (Value part : parts) {
      auto t = llvm::cast<RankedTensorType>(part.getType());
      if (t.getRank() != 1 || t.getDimSize(0) != 1)
        return failure();
      auto r = part.getDefiningOp<ReshapeOp>();
      sizes.push_back(r ? r.getInput() : part);
    }
    SmallVector<int64_t> squeezed, unsqueezed;
    int64_t i = 0, p = 0, n = sizes.size();
    while (i < in.getRank() || p < n) {
      bool unit = p < n && constantSize(sizes[p]) == std::optional<int64_t>(1);
      if (i < in.getRank() && p < n && (in.getDimSize(i) != 1 || unit) && dimIsSize(input, i, sizes[p])) {
        ++i, ++p;
      } else if (unit) {
        unsqueezed.push_back(p++);
      } else if (i < in.getRank() && in.getDimSize(i) == 1) {
        squeezed.push_back(i++);
      } else {
        return failure();
      }
    }
    OpBuilder b(op);
    Value v = input;
    if (!squeezed.empty())
      v = b.create<SqueezeOp>(op.getLoc(), v, b.getDenseI64ArrayAttr(squeezed));
    for (int64_t at : unsqueezed)
      v = b.create<UnsqueezeOp>(op.getLoc(), v, b.getI64IntegerAttr(at));
    refineResult(op.getResult(), v.getType());
    op.getResult().replaceAllUsesWith(v);
    op.erase();
    return success();
  }

  /// A run-time reshape whose sizes are known now becomes a static one;
  /// otherwise its known sizes refine its type, and a shape that really
  /// depends on tensor values gets a remark.
  void resolveDynamicReshape(ReshapeDynamicOp op, llvm::DenseMap<Value, reference::Tensor> &memo) {
    std::optional<reference::Tensor> shape = evaluateShape(op.getShape(), memo);
    if (!shape) {
      bool dependent = dependsOnTensorData(op.getShape());
      Location loc = op.getLoc();
      refinePartially(op, memo); // erases op when it becomes a static reshape
      if (dependent) {
        mlir::emitRemark(loc) << "the shape of this reshape depends on tensor values: its unknown "
                           "sizes stay dynamic (later optimizations still apply)";
        ++numValueDependent;
      }
      return;
    }
    OpBuilder b(op);
    auto reshape = b.create<ReshapeOp>(op.getLoc(), op.getType(), op.getInput(),
                                       b.getDenseI64ArrayAttr(shape->toInts()));
    if (failed(mlir::verify(reshape, /*verifyRecursively=*/false))) {
      reshape.erase();
      signalPassFailure();
      return;
    }
    inferAndRefine(reshape);
    op.getResult().replaceAllUsesWith(reshape.getResult());
    op.erase();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    llvm::DenseMap<Value, reference::Tensor> memo;
    func.walk([&](Operation *op) {
      if (auto reshape = llvm::dyn_cast<ReshapeDynamicOp>(op))
        return resolveDynamicReshape(reshape, memo);
      inferAndRefine(op);
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
