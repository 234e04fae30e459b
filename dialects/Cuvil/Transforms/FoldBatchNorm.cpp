//===- FoldBatchNorm.cpp - Batch norm into weights, or scale and shift ----===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "dialects/Cuvil/Transforms/BatchNormFolding.h"
#include "dialects/Cuvil/Transforms/ConstantValues.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDBATCHNORMPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;
using reference::Tensor;

namespace {

Value makeConstant(OpBuilder &b, Location loc, const Tensor &t, RankedTensorType type,
                   StringRef name) {
  return b.create<ConstantOp>(loc, type, reference::elementsAttrFromTensor(t, type, name));
}

} // namespace

int64_t mlir::cuvil::foldedChannel(Operation *producer, ArrayRef<int64_t> w, int64_t flat) {
  int64_t numel = 1;
  for (int64_t d : w)
    numel *= d;
  if (llvm::isa<Conv1DOp, Conv2DOp, LinearOp>(producer)) {
    if (auto linear = llvm::dyn_cast<LinearOp>(producer))
      if (llvm::cast<RankedTensorType>(linear.getType()).getRank() != 2)
        return -1; // batch norm normalises dim 1, not the features
    return flat / (numel / w[0]); // [C_out, ...]
  }
  if (llvm::isa<ConvTranspose1DOp, ConvTranspose2DOp>(producer)) {
    // [C_in, C_out / groups, kernel...]: output channel g * C_out/g + j.
    int64_t groups = producer->getAttrOfType<IntegerAttr>("groups").getInt();
    int64_t inner = numel / (w[0] * w[1]);
    int64_t i = flat / (w[1] * inner), j = (flat / inner) % w[1];
    int64_t perGroupIn = w[0] / groups;
    return (i / perGroupIn) * w[1] + j;
  }
  return -1;
}

namespace {

struct CuvilFoldBatchNormPass final
    : mlir::cuvil::impl::CuvilFoldBatchNormPassBase<CuvilFoldBatchNormPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<BatchNormOp> norms;
    getOperation().walk([&](BatchNormOp bn) { norms.push_back(bn); });
    for (BatchNormOp bn : norms)
      rewrite(bn);
  }

  /// Per-channel scale s and shift t of `bn`, or failure (with a remark).
  LogicalResult scaleShift(BatchNormOp bn, std::vector<double> &s, std::vector<double> &t) {
    std::optional<Tensor> mean = constantValue(bn.getMean()), var = constantValue(bn.getVar());
    std::optional<Tensor> weight, bias;
    if (bn.getWeight())
      weight = constantValue(bn.getWeight());
    if (bn.getBias())
      bias = constantValue(bn.getBias());
    if (!mean || !var || (bn.getWeight() && !weight) || (bn.getBias() && !bias)) {
      if (remarks)
        bn.emitRemark() << "batch norm not folded: its statistics, weight or bias are not "
                           "constants";
      return failure();
    }
    double eps = bn.getEps().convertToDouble();
    int64_t c = mean->numElements();
    s.assign(c, 0);
    t.assign(c, 0);
    for (int64_t i = 0; i < c; ++i) {
      ScaleShift<double> ss = batchNormScaleShift<double>(
          mean->getDouble(i), var->getDouble(i), weight ? weight->getDouble(i) : 1.0,
          bias ? bias->getDouble(i) : 0.0, eps, [](double x) { return std::sqrt(x); },
          [](double a, double b) { return a / b; });
      s[i] = ss.scale;
      t[i] = ss.shift;
    }
    return success();
  }

  void rewrite(BatchNormOp bn) {
    std::vector<double> s, t;
    if (failed(scaleShift(bn, s, t)))
      return;
    IRRewriter b(bn.getContext(), RewriteObserver::current());
    b.setInsertionPoint(bn);
    Operation *producer = bn.getInput().getDefiningOp();
    if (producer && producer->hasOneUse() && foldInto(producer, bn, s, t, b))
      return;
    if (remarks && producer)
      bn.emitRemark() << "batch norm kept as a per-channel scale and shift: its input "
                         "comes from '"
                      << producer->getName() << "'"
                      << (producer->hasOneUse() ? "" : ", which has other users");
    replaceWithScaleShift(bn, s, t, b);
  }

  /// Rebuilds a conv/linear producer with folded weights. False when the
  /// producer is not foldable.
  bool foldInto(Operation *producer, BatchNormOp bn, const std::vector<double> &s,
                const std::vector<double> &t, IRRewriter &b) {
    if (!llvm::isa<Conv1DOp, Conv2DOp, ConvTranspose1DOp, ConvTranspose2DOp, LinearOp>(producer))
      return false;
    Value weight = producer->getOperand(1);
    Value bias = producer->getNumOperands() > 2 ? producer->getOperand(2) : Value();
    auto weightShape = llvm::cast<RankedTensorType>(weight.getType()).getShape();
    if (foldedChannel(producer, weightShape, 0) < 0)
      return false;
    std::optional<Tensor> w = constantValue(weight);
    std::optional<Tensor> bv = bias ? constantValue(bias) : std::nullopt;
    if (!w || (bias && !bv)) {
      if (remarks)
        bn.emitRemark() << "batch norm not folded into '" << producer->getName()
                        << "': its weight or bias is not a constant";
      return false;
    }
    int64_t channels = static_cast<int64_t>(s.size());
    Tensor newW = *w;
    for (int64_t k = 0; k < w->numElements(); ++k) {
      int64_t c = foldedChannel(producer, weightShape, k);
      if (c < 0 || c >= channels)
        return false;
      newW.setDouble(k, foldedWeight<double>(w->getDouble(k), {s[c], t[c]}));
    }
    Tensor newB = Tensor::fromDoubles(w->dtype(), {channels}, std::vector<double>(channels, 0.0));
    for (int64_t c = 0; c < channels; ++c)
      newB.setDouble(c, foldedBias<double>(bv ? bv->getDouble(c) : 0.0, {s[c], t[c]}));
    auto wType = llvm::cast<RankedTensorType>(weight.getType());
    auto bType = RankedTensorType::get({channels}, wType.getElementType());
    announceRewrite(bn, "fold batch norm into weights");
    b.setInsertionPoint(producer);
    Value w2 = makeConstant(b, weight.getLoc(), newW, wType, derivedResourceName(weight, "bn_folded"));
    Value b2 = makeConstant(b, bn.getLoc(), newB, bType,
                            derivedResourceName(weight, "bn_folded_bias"));
    // Same op, new weight and bias (the bias operand may be new).
    OperationState state(producer->getLoc(), producer->getName());
    state.addOperands({producer->getOperand(0), w2, b2});
    state.addAttributes(producer->getAttrs());
    state.addTypes(producer->getResultTypes());
    Operation *folded = b.create(state);
    b.replaceOp(bn, folded->getResults());
    b.eraseOp(producer);
    ++numFolded;
    return true;
  }

  void replaceWithScaleShift(BatchNormOp bn, const std::vector<double> &s,
                             const std::vector<double> &t, IRRewriter &b) {
    auto xType = llvm::cast<RankedTensorType>(bn.getInput().getType());
    SmallVector<int64_t> shape(xType.getRank() - 1, 1);
    shape[0] = static_cast<int64_t>(s.size()); // [C, 1, ...]: broadcasts over dim 1
    auto type = RankedTensorType::get(shape, xType.getElementType());
    std::vector<int64_t> dims(shape.begin(), shape.end());
    Tensor scale = Tensor::fromDoubles(*reference::toDType(xType.getElementType()), dims, s);
    Tensor shift = Tensor::fromDoubles(*reference::toDType(xType.getElementType()), dims, t);
    announceRewrite(bn, "batch norm to scale and shift");
    b.setInsertionPoint(bn);
    Value sc = makeConstant(b, bn.getLoc(), scale, type, "bn_scale");
    Value sh = makeConstant(b, bn.getLoc(), shift, type, "bn_shift");
    Value mul = b.create<MulOp>(bn.getLoc(), bn.getType(), bn.getInput(), sc);
    Value add = b.create<AddOp>(bn.getLoc(), bn.getType(), mul, sh);
    b.replaceOp(bn, add);
    ++numScaleShift;
  }
};

} // namespace
