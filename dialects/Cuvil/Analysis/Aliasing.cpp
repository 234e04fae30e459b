//===- Aliasing.cpp - Which cuvil values share storage --------------------===//
#include "dialects/Cuvil/Analysis/Aliasing.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

namespace mlir::cuvil {

bool isViewOp(Operation *op) {
  return llvm::isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp, TransposeOp, PermuteOp,
                   ExpandOp, SliceOp, SelectOp>(op);
}

namespace {
RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// All dimensions before `dim` have size 1 (so slicing `dim` keeps the
/// selected elements contiguous).
bool onlyUnitDimsBefore(RankedTensorType t, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d)
    if (t.getDimSize(d) != 1)
      return false;
  return true;
}

/// A permutation that keeps the relative order of the non-unit dimensions.
bool movesOnlyUnitDims(RankedTensorType in, llvm::ArrayRef<int64_t> perm) {
  int64_t last = -1;
  for (int64_t d : perm) {
    if (in.getDimSize(d) == 1)
      continue;
    if (d < last)
      return false;
    last = d;
  }
  return true;
}
} // namespace

bool isContiguousView(Operation *op) {
  if (llvm::isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
    return true;
  RankedTensorType in = typeOf(op->getOperand(0));
  if (auto p = llvm::dyn_cast<PermuteOp>(op))
    return movesOnlyUnitDims(in, p.getDims());
  if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < in.getRank(); ++d)
      perm.push_back(d);
    int64_t r = in.getRank();
    int64_t d0 = (t.getDim0() % r + r) % r, d1 = (t.getDim1() % r + r) % r;
    std::swap(perm[d0], perm[d1]);
    return movesOnlyUnitDims(in, perm);
  }
  if (auto e = llvm::dyn_cast<ExpandOp>(op))
    return typeOf(e.getResult()).getNumElements() == in.getNumElements() &&
           in.hasStaticShape();
  if (auto s = llvm::dyn_cast<SliceOp>(op)) {
    int64_t r = in.getRank(), dim = (s.getDim() % r + r) % r;
    return s.getStep() == 1 && onlyUnitDimsBefore(in, dim);
  }
  if (auto s = llvm::dyn_cast<SelectOp>(op)) {
    int64_t r = in.getRank(), dim = (s.getDim() % r + r) % r;
    return onlyUnitDimsBefore(in, dim);
  }
  return false;
}

Value storageRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isViewOp(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

Operation *firstStridedView(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isViewOp(def))
      return nullptr;
    if (!isContiguousView(def))
      return def;
    v = def->getOperand(0);
  }
  return nullptr;
}

} // namespace mlir::cuvil
