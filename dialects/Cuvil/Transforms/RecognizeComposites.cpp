//===- RecognizeComposites.cpp - Softmax and layer norm as single ops -----===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/Builders.h"

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILRECOGNIZECOMPOSITESPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// The single reduced dimension of a keepdim reduction, or -1.
template <typename OpTy> int64_t keepdimSingleDim(OpTy op) {
  if (!op || !op.getKeepdim() || op.getDims().size() != 1)
    return -1;
  return op.getDims()[0];
}

/// The value of a constant holding one number (any shape, all equal), if any.
std::optional<double> splatValue(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  if (auto dense = llvm::dyn_cast<DenseElementsAttr>(c.getValue()); dense && dense.isSplat()) {
    if (auto f = llvm::dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>()))
      return f.getValueAsDouble();
    if (auto i = llvm::dyn_cast<IntegerAttr>(dense.getSplatValue<Attribute>()))
      return static_cast<double>(i.getInt());
  }
  return std::nullopt;
}

/// `d` written as `x - mean(x, dims, keepdim)`: returns x and the dims.
std::optional<std::pair<Value, ArrayRef<int64_t>>> matchCentered(Value d) {
  auto sub = d.getDefiningOp<SubOp>();
  if (!sub)
    return std::nullopt;
  auto mean = sub.getRhs().getDefiningOp<MeanOp>();
  if (!mean || !mean.getKeepdim() || mean.getInput() != sub.getLhs())
    return std::nullopt;
  return std::make_pair(sub.getLhs(), mean.getDims());
}

/// True when `v` is the biased variance of `x` over `dims` (keepdim), given
/// `d = x - mean`: mean(d * d), mean(d ^ 2) or var(x, correction = 0).
bool isBiasedVariance(Value v, Value d, Value x, ArrayRef<int64_t> dims) {
  if (auto var = v.getDefiningOp<VarOp>())
    return var.getInput() == x && var.getKeepdim() && var.getCorrection() == 0 &&
           var.getDims() == dims;
  auto mean = v.getDefiningOp<MeanOp>();
  if (!mean || !mean.getKeepdim() || mean.getDims() != dims)
    return false;
  Value sq = mean.getInput();
  if (auto mul = sq.getDefiningOp<MulOp>())
    return mul.getLhs() == d && mul.getRhs() == d;
  if (auto pow = sq.getDefiningOp<PowOp>())
    return pow.getLhs() == d && splatValue(pow.getRhs()) == 2.0;
  return false;
}

struct CuvilRecognizeCompositesPass final
    : mlir::cuvil::impl::CuvilRecognizeCompositesPassBase<CuvilRecognizeCompositesPass> {
  using Base::Base;

  /// e / sum(e, [k], keepdim) with e = exp(x) or exp(x - max(x, [k], keepdim)).
  bool softmax(DivOp div) {
    if (div.getRoundingMode() != RoundingMode::None)
      return false;
    auto sum = div.getRhs().getDefiningOp<SumOp>();
    int64_t k = keepdimSingleDim(sum);
    if (k < 0 || sum.getInput() != div.getLhs())
      return false;
    auto exp = div.getLhs().getDefiningOp<ExpOp>();
    if (!exp)
      return false;
    Value x = exp.getInput();
    if (auto sub = x.getDefiningOp<SubOp>()) {
      auto max = sub.getRhs().getDefiningOp<MaxOp>();
      if (max && keepdimSingleDim(max) == k && max.getInput() == sub.getLhs())
        x = sub.getLhs();
    }
    if (typeOf(x) != typeOf(div.getResult()))
      return false;
    announceRewrite(div, "recognize softmax");
    IRRewriter b(div.getContext(), RewriteObserver::current());
    b.setInsertionPoint(div);
    auto op = b.create<SoftmaxOp>(div.getLoc(), div.getType(), x, b.getI64IntegerAttr(k));
    b.replaceOp(div, op.getResult());
    ++numSoftmax;
    return true;
  }

  /// The normalisation `d * rsqrt(v + eps)` or `d / sqrt(v + eps)`; then an
  /// optional `* weight` and `+ bias` that follow it. Returns the op it
  /// replaced (and erased), or null.
  Operation *layerNorm(Operation *root) {
    Value d;
    Value denominatorInput;
    if (auto mul = llvm::dyn_cast<MulOp>(root)) {
      auto rsqrt = mul.getRhs().getDefiningOp<RsqrtOp>();
      if (!rsqrt)
        return nullptr;
      d = mul.getLhs();
      denominatorInput = rsqrt.getInput();
    } else if (auto div = llvm::dyn_cast<DivOp>(root)) {
      auto sqrt = div.getRhs().getDefiningOp<SqrtOp>();
      if (!sqrt || div.getRoundingMode() != RoundingMode::None)
        return nullptr;
      d = div.getLhs();
      denominatorInput = sqrt.getInput();
    } else {
      return nullptr;
    }
    auto centered = matchCentered(d);
    auto addEps = denominatorInput.getDefiningOp<AddOp>();
    if (!centered || !addEps)
      return nullptr;
    auto [x, dims] = *centered;
    std::optional<double> eps = splatValue(addEps.getRhs());
    if (!eps || !isBiasedVariance(addEps.getLhs(), d, x, dims))
      return nullptr;
    RankedTensorType xt = typeOf(x);
    // The dims must be the trailing ones, with static sizes.
    int64_t rank = xt.getRank(), count = static_cast<int64_t>(dims.size());
    SmallVector<int64_t> normalized;
    for (int64_t i = 0; i < count; ++i) {
      if (dims[i] != rank - count + i || xt.isDynamicDim(dims[i]))
        return nullptr;
      normalized.push_back(xt.getDimSize(dims[i]));
    }
    if (typeOf(root->getResult(0)) != xt)
      return nullptr;
    // Optional affine: * weight, + bias, each of the normalized shape.
    Operation *last = root;
    Value weight, bias;
    auto hasNormalizedShape = [&](Value v) { return typeOf(v).getShape() == ArrayRef(normalized); };
    if (last->getResult(0).hasOneUse()) {
      Operation *user = *last->getResult(0).getUsers().begin();
      if (auto mul = llvm::dyn_cast<MulOp>(user);
          mul && mul.getLhs() == last->getResult(0) && hasNormalizedShape(mul.getRhs()) &&
          typeOf(mul.getResult()) == xt) {
        weight = mul.getRhs();
        last = mul;
      }
    }
    if (last->getResult(0).hasOneUse()) {
      Operation *user = *last->getResult(0).getUsers().begin();
      if (auto add = llvm::dyn_cast<AddOp>(user);
          add && add.getLhs() == last->getResult(0) && hasNormalizedShape(add.getRhs()) &&
          typeOf(add.getResult()) == xt) {
        bias = add.getRhs();
        last = add;
      }
    }
    // Weight and bias must be available where the layer norm goes.
    announceRewrite(last, "recognize layer norm");
    IRRewriter b(last->getContext(), RewriteObserver::current());
    b.setInsertionPoint(last);
    auto op = b.create<LayerNormOp>(root->getLoc(), xt, x, weight, bias,
                                    b.getDenseI64ArrayAttr(normalized), b.getF64FloatAttr(*eps));
    b.replaceOp(last, op.getResult());
    ++numLayerNorm;
    return last;
  }

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (llvm::isa<DivOp, MulOp>(op))
        candidates.push_back(op);
    });
    llvm::DenseSet<Operation *> erased;
    for (Operation *op : candidates) {
      if (erased.contains(op) || op->use_empty())
        continue;
      if (auto div = llvm::dyn_cast<DivOp>(op); div && softmax(div)) {
        erased.insert(op);
        continue;
      }
      if (Operation *replaced = layerNorm(op))
        erased.insert(replaced);
    }
  }
};

} // namespace
