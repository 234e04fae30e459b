//===- KernelSites.cpp - Where the CPU's kernels can run ------------------===//
#include "targets/CPU/KernelSites.h"

#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::cuvil::cpu {

bool isStaticF32(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

bool isStaticButBatchF32(Value v) { return isStaticButBatch(v, /*allow8Bit=*/false); }

bool isStaticButBatch(Value v, bool allow8Bit) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  if (!t || t.getRank() == 0)
    return false;
  Type e = t.getElementType();
  if (!e.isF32() && !(allow8Bit && e.isInteger(8)))
    return false;
  for (int64_t d = 1; d < t.getRank(); ++d)
    if (t.isDynamicDim(d))
      return false;
  return true;
}

ArrayRef<int64_t> shapeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()).getShape(); }

std::optional<::cuvil::Tensor> constantF32(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || !isStaticF32(v))
    return std::nullopt;
  FailureOr<::cuvil::Tensor> t = reference::tensorFromAttr(c.getValue(), c.getLoc());
  if (failed(t))
    return std::nullopt;
  return std::move(*t);
}

std::optional<F32Weights> f32Weights(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || !isStaticF32(v))
    return std::nullopt;
  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue()))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob()) {
      ArrayRef<char> bytes = blob->getData();
      int64_t count = llvm::cast<RankedTensorType>(v.getType()).getNumElements();
      if (bytes.size() == static_cast<size_t>(count) * sizeof(float) &&
          reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) == 0)
        return F32Weights{std::nullopt, reinterpret_cast<const float *>(bytes.data())};
    }
  std::optional<::cuvil::Tensor> t = constantF32(v);
  if (!t)
    return std::nullopt;
  F32Weights w{std::move(t), nullptr};
  w.data = reinterpret_cast<const float *>(w.copy->data());
  return w;
}

std::optional<Epilogue> matchEpilogue(FusedGroupOp group, Operation *anchor) {
  Epilogue e;
  Value current = anchor->getResult(0);
  Block &body = group.getBody().front();
  for (Operation *op = anchor->getNextNode(); op && op != body.getTerminator();
       op = op->getNextNode()) {
    if (!current.hasOneUse() || *current.getUsers().begin() != op)
      return std::nullopt;
    if (auto add = llvm::dyn_cast<AddOp>(op)) {
      if (e.residual || e.clamp)
        return std::nullopt;
      Value other = add.getOperand(0) == current ? add.getOperand(1) : add.getOperand(0);
      auto arg = llvm::dyn_cast<BlockArgument>(other);
      if (!arg || arg.getOwner() != &body || other.getType() != current.getType() ||
          add.getResult().getType() != current.getType())
        return std::nullopt;
      e.residual = group.getInputs()[arg.getArgNumber()];
    } else if (llvm::isa<ReluOp>(op)) {
      if (e.clamp)
        return std::nullopt;
      e.clamp = true;
      e.lo = 0.0f;
    } else if (auto ht = llvm::dyn_cast<HardtanhOp>(op)) {
      if (e.clamp)
        return std::nullopt;
      e.clamp = true;
      e.lo = static_cast<float>(ht.getMinVal().convertToDouble());
      e.hi = static_cast<float>(ht.getMaxVal().convertToDouble());
    } else if (auto clamp = llvm::dyn_cast<ClampOp>(op)) {
      if (e.clamp)
        return std::nullopt;
      e.clamp = true;
      if (auto min = clamp.getMin())
        e.lo = static_cast<float>(min->convertToDouble());
      if (auto max = clamp.getMax())
        e.hi = static_cast<float>(max->convertToDouble());
    } else {
      return std::nullopt;
    }
    if (op->getNumResults() != 1 || op->getResult(0).getType() != current.getType())
      return std::nullopt;
    current = op->getResult(0);
  }
  if (current != group.getYielded())
    return std::nullopt;
  return e;
}

Operation *groupAnchor(FusedGroupOp g) {
  for (Operation &op : g.getBody().front())
    if (llvm::isa<Conv2DOp, LinearOp, MatmulOp, BatchMatmulOp>(op))
      return &op;
  return nullptr;
}

FusedGroupOp anchoredGroup(Operation *op) {
  auto g = llvm::dyn_cast_or_null<FusedGroupOp>(op->getParentOp());
  return g && groupAnchor(g) == op ? g : FusedGroupOp();
}

bool KernelSite::isStatic() const {
  return llvm::all_of(operands, isStaticF32) && isStaticF32(result());
}

bool KernelSite::isStaticButBatch() const {
  for (auto [i, v] : llvm::enumerate(operands))
    if (!(i == 0 ? isStaticButBatchF32(v) : isStaticF32(v)))
      return false;
  return isStaticButBatchF32(result()) && (!epilogue.residual || isStaticButBatchF32(epilogue.residual));
}

bool KernelSite::isDepthwise() const {
  Conv2DOp conv = this->conv();
  if (!conv || shapeOf(operands[0]).size() != 4)
    return false;
  int64_t c = shapeOf(operands[0])[1];
  ArrayRef<int64_t> w = shapeOf(operands[1]);
  return static_cast<int64_t>(conv.getGroups()) == c && w[0] == c && w[1] == 1;
}

bool KernelSite::hasGeometry(int64_t k, int64_t stride, int64_t pad) const {
  Conv2DOp conv = this->conv();
  if (!conv)
    return false;
  ArrayRef<int64_t> w = shapeOf(operands[1]);
  return conv.getStride().size() == 2 && conv.getPadding().size() == 2 &&
         llvm::all_of(conv.getStride(), [&](int64_t v) { return v == stride; }) &&
         llvm::all_of(conv.getPadding(), [&](int64_t v) { return v == pad; }) &&
         llvm::all_of(conv.getDilation(), [](int64_t v) { return v == 1; }) && w.size() == 4 &&
         w[2] == k && w[3] == k;
}

/// The conv's operands outside `g`: nothing where one is computed inside
/// it, unless `keepInside` (then that value itself, as the opened-up group
/// will leave it).
static std::optional<SmallVector<Value>> operandsOutside(FusedGroupOp g, Operation *product,
                                                         bool keepInside = false) {
  IRMapping map;
  for (auto [arg, input] : llvm::zip(g.getBody().front().getArguments(), g.getInputs()))
    map.map(arg, input);
  SmallVector<Value> out;
  for (Value v : product->getOperands()) {
    Value outside = map.lookupOrNull(v);
    if (!outside && !keepInside)
      return std::nullopt;
    if (!outside)
      outside = v;
    out.push_back(outside);
  }
  return out;
}

std::optional<KernelSite> convSite(Operation *op) {
  if (auto conv = llvm::dyn_cast_or_null<Conv2DOp>(op)) {
    if (conv->getParentOfType<FusedGroupOp>())
      return std::nullopt;
    return KernelSite{op, op, SmallVector<Value>(op->getOperands()), Epilogue{}};
  }
  auto g = llvm::dyn_cast_or_null<FusedGroupOp>(op);
  if (!g)
    return std::nullopt;
  auto conv = llvm::dyn_cast_or_null<Conv2DOp>(groupAnchor(g));
  if (!conv)
    return std::nullopt;
  std::optional<KernelSite> site = siteOf(conv);
  if (!site || site->root != op)
    return std::nullopt;
  return site;
}

std::optional<KernelSite> siteOf(Operation *product) {
  auto g = product->getParentOfType<FusedGroupOp>();
  if (!g)
    return KernelSite{product, product, SmallVector<Value>(product->getOperands()), Epilogue{}};
  // A second product breaks the epilogue chain: its group is always opened
  // up, and it runs alone.
  if (groupAnchor(g) != product)
    return KernelSite{product, product,
                      *operandsOutside(g, product, /*keepInside=*/true), Epilogue{}};
  // The matmul kernel applies no epilogue.
  bool takesEpilogue = !llvm::isa<MatmulOp, BatchMatmulOp>(product);
  if (std::optional<Epilogue> e = matchEpilogue(g, product))
    if (std::optional<SmallVector<Value>> operands = operandsOutside(g, product);
        operands && (takesEpilogue || e->empty()))
      return KernelSite{g, product, std::move(*operands), *e};
  // The group will be opened up: the product runs alone on what it reads.
  std::optional<SmallVector<Value>> operands = operandsOutside(g, product, /*keepInside=*/true);
  return KernelSite{product, product, std::move(*operands), Epilogue{}};
}

SmallVector<Operation *> convCandidates(ModuleOp module) {
  SmallVector<Operation *> candidates;
  module.walk([&](Operation *op) {
    if (llvm::isa<FusedGroupOp, Conv2DOp>(op))
      candidates.push_back(op);
  });
  return candidates;
}

} // namespace mlir::cuvil::cpu
