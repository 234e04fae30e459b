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
#include <cstring>

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

// Replaying a fold (WeightDerivations.h). Parameters of every transform:
// kind of producer (0: channels first, as convolutions and linear layers;
// 1: transposed convolution), its groups, eps's bits, has weight (gamma),
// has bias (beta), the producer has a bias. Inputs: [the producer's weight
// or bias,] mean, var, [gamma,] [beta].
enum BnParam { kBnLayout, kBnGroups, kBnEps, kBnGamma, kBnBeta, kBnProducerBias, kBnParams };

/// Per-channel scale and shift from the statistics (gamma and beta
/// optional), as the pass computes them.
void scaleShiftOf(const Tensor &mean, const Tensor &var, const Tensor *gamma, const Tensor *beta, double eps,
                  std::vector<double> &s, std::vector<double> &t) {
  int64_t c = mean.numElements();
  s.assign(c, 0);
  t.assign(c, 0);
  for (int64_t i = 0; i < c; ++i) {
    ScaleShift<double> ss = batchNormScaleShift<double>(
        mean.getDouble(i), var.getDouble(i), gamma ? gamma->getDouble(i) : 1.0, beta ? beta->getDouble(i) : 0.0,
        eps, [](double x) { return std::sqrt(x); }, [](double a, double b) { return a / b; });
    s[i] = ss.scale;
    t[i] = ss.shift;
  }
}

/// The channel of element `flat` of a weight of shape `w`, by layout.
int64_t channelOf(int64_t layout, int64_t groups, ArrayRef<int64_t> w, int64_t flat) {
  int64_t numel = 1;
  for (int64_t d : w)
    numel *= d;
  if (layout == 0)
    return flat / (numel / w[0]);
  int64_t inner = numel / (w[0] * w[1]);
  int64_t i = flat / (w[1] * inner), j = (flat / inner) % w[1];
  return (i / (w[0] / groups)) * w[1] + j;
}

/// bn.weight (0), bn.bias (1), bn.scale (2), bn.shift (3) replayed.
LogicalResult replayBatchNorm(int what, const WeightDerivation &how, ArrayRef<WeightBytes> inputs,
                              RankedTensorType result, MutableArrayRef<char> out) {
  const std::vector<int64_t> &p = how.params;
  if (p.size() != kBnParams)
    return failure();
  std::vector<Tensor> in;
  for (const WeightBytes &b : inputs) {
    FailureOr<Tensor> t = tensorOfBytes(b);
    if (failed(t))
      return failure();
    in.push_back(std::move(*t));
  }
  size_t first = what <= 1 && (what == 0 || p[kBnProducerBias]) ? 1 : 0; // the producer's tensor
  size_t need = first + 2 + (p[kBnGamma] ? 1 : 0) + (p[kBnBeta] ? 1 : 0);
  if (in.size() != need)
    return failure();
  const Tensor &mean = in[first], &var = in[first + 1];
  const Tensor *gamma = p[kBnGamma] ? &in[first + 2] : nullptr;
  const Tensor *beta = p[kBnBeta] ? &in[first + 2 + (p[kBnGamma] ? 1 : 0)] : nullptr;
  double eps;
  uint64_t bits = static_cast<uint64_t>(p[kBnEps]);
  std::memcpy(&eps, &bits, sizeof eps);
  std::vector<double> s, t;
  scaleShiftOf(mean, var, gamma, beta, eps, s, t);
  std::optional<::cuvil::DType> dtype = reference::toDType(result.getElementType());
  if (!dtype || !result.hasStaticShape())
    return failure();
  Tensor r(*dtype, std::vector<int64_t>(result.getShape().begin(), result.getShape().end()));
  int64_t channels = static_cast<int64_t>(s.size());
  if (what == 0) {
    const Tensor &w = in[0];
    if (w.numElements() != r.numElements() || w.shape().empty())
      return failure();
    for (int64_t k = 0; k < w.numElements(); ++k) {
      int64_t c = channelOf(p[kBnLayout], std::max<int64_t>(p[kBnGroups], 1), w.shape(), k);
      if (c < 0 || c >= channels)
        return failure();
      r.setDouble(k, foldedWeight<double>(w.getDouble(k), {s[c], t[c]}));
    }
  } else {
    if (r.numElements() != channels)
      return failure();
    for (int64_t c = 0; c < channels; ++c)
      r.setDouble(c, what == 1   ? foldedBias<double>(first ? in[0].getDouble(c) : 0.0, {s[c], t[c]})
                     : what == 2 ? s[c]
                                 : t[c]);
  }
  if (r.byteSize() != out.size())
    return failure();
  std::memcpy(out.data(), r.data(), out.size());
  return success();
}

template <int What>
LogicalResult replayBatchNormAs(const WeightDerivation &how, ArrayRef<WeightBytes> inputs, RankedTensorType result,
                                MutableArrayRef<char> out, MLIRContext *) {
  return replayBatchNorm(What, how, inputs, result, out);
}
[[maybe_unused]] const bool kBatchNormTransforms = registerWeightTransform("bn.weight", replayBatchNormAs<0>) &&
                                                   registerWeightTransform("bn.bias", replayBatchNormAs<1>) &&
                                                   registerWeightTransform("bn.scale", replayBatchNormAs<2>) &&
                                                   registerWeightTransform("bn.shift", replayBatchNormAs<3>);

/// The derivation `transform` of batch norm `bn` (folded into `producer`,
/// when there is one) reading `producerTensor` first when given.
WeightDerivation bnDerivation(StringRef transform, BatchNormOp bn, Operation *producer, Value producerTensor) {
  WeightDerivation how;
  how.transform = transform.str();
  double eps = bn.getEps().convertToDouble();
  uint64_t bits;
  std::memcpy(&bits, &eps, sizeof bits);
  bool transposed = producer && llvm::isa<ConvTranspose1DOp, ConvTranspose2DOp>(producer);
  int64_t groups = transposed ? producer->getAttrOfType<IntegerAttr>("groups").getInt() : 1;
  bool producerBias = producer && producer->getNumOperands() > 2;
  how.params = {transposed ? 1 : 0, groups, static_cast<int64_t>(bits), bn.getWeight() ? 1 : 0,
                bn.getBias() ? 1 : 0, producerBias ? 1 : 0};
  auto attrOf = [](Value v) -> Attribute {
    auto c = v ? v.getDefiningOp<ConstantOp>() : nullptr;
    return c ? Attribute(c.getValue()) : Attribute();
  };
  if (producerTensor)
    how.inputs.push_back(attrOf(producerTensor));
  how.inputs.push_back(attrOf(bn.getMean()));
  how.inputs.push_back(attrOf(bn.getVar()));
  if (bn.getWeight())
    how.inputs.push_back(attrOf(bn.getWeight()));
  if (bn.getBias())
    how.inputs.push_back(attrOf(bn.getBias()));
  return how;
}

/// What the fold makes: weights (recorded, opaque) when it reads weights,
/// else a constant as before.
Value makeFolded(OpBuilder &b, Location loc, const Tensor &t, RankedTensorType type, StringRef name, bool fromWeights,
                 WeightDerivation how) {
  if (!fromWeights)
    return makeConstant(b, loc, t, type, name);
  ElementsAttr attr = weightAttrFromTensor(t, type, name);
  if (llvm::all_of(how.inputs, [](Attribute a) { return static_cast<bool>(a); }))
    recordWeightDerivation(attr, std::move(how));
  return b.create<ConstantOp>(loc, type, attr);
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

  /// Whether the statistics, weight or bias of `bn` hold weights.
  static bool readsWeights(BatchNormOp bn) {
    return holdsWeights(bn.getMean()) || holdsWeights(bn.getVar()) || (bn.getWeight() && holdsWeights(bn.getWeight())) ||
           (bn.getBias() && holdsWeights(bn.getBias()));
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
    scaleShiftOf(*mean, *var, weight ? &*weight : nullptr, bias ? &*bias : nullptr,
                 bn.getEps().convertToDouble(), s, t);
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
    bool fromWeights = readsWeights(bn) || holdsWeights(weight) || (bias && holdsWeights(bias));
    Value w2 = makeFolded(b, weight.getLoc(), newW, wType, derivedResourceName(weight, "bn_folded"), fromWeights,
                          bnDerivation("bn.weight", bn, producer, weight));
    Value b2 = makeFolded(b, bn.getLoc(), newB, bType, derivedResourceName(weight, "bn_folded_bias"), fromWeights,
                          bnDerivation("bn.bias", bn, producer, bias));
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
    bool fromWeights = readsWeights(bn);
    Value sc = makeFolded(b, bn.getLoc(), scale, type, "bn_scale", fromWeights, bnDerivation("bn.scale", bn, nullptr, {}));
    Value sh = makeFolded(b, bn.getLoc(), shift, type, "bn_shift", fromWeights, bnDerivation("bn.shift", bn, nullptr, {}));
    Value mul = b.create<MulOp>(bn.getLoc(), bn.getType(), bn.getInput(), sc);
    Value add = b.create<AddOp>(bn.getLoc(), bn.getType(), mul, sh);
    b.replaceOp(bn, add);
    ++numScaleShift;
  }
};

} // namespace
