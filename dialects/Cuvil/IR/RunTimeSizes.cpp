//===- RunTimeSizes.cpp - What is known of a run-time size ---------------===//
#include "dialects/Cuvil/IR/RunTimeSizes.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::cuvil {
namespace {

/// Size computations are short; deeper ones are not looked into.
constexpr int kMaxDepth = 32;

} // namespace

Value lookThroughSize(Value v) {
  for (int k = 0; k < kMaxDepth; ++k) {
    if (auto g = v.getDefiningOp<FusedGroupOp>()) {
      v = g.getYielded();
      continue;
    }
    if (auto arg = llvm::dyn_cast<BlockArgument>(v))
      if (auto g = llvm::dyn_cast_or_null<FusedGroupOp>(arg.getOwner()->getParentOp())) {
        v = g.getInputs()[arg.getArgNumber()];
        continue;
      }
    if (auto cast = v.getDefiningOp<CastOp>();
        cast && llvm::isa<IntegerType>(getElementTypeOrSelf(cast.getInput().getType())) &&
        !getElementTypeOrSelf(cast.getInput().getType()).isInteger(1)) {
      v = cast.getInput();
      continue;
    }
    break;
  }
  return v;
}

namespace {

bool nonNegative(Value size, int depth) {
  if (depth > kMaxDepth)
    return false;
  size = lookThroughSize(size);
  if (std::optional<int64_t> c = constantSize(size))
    return *c >= 0;
  Operation *def = size.getDefiningOp();
  if (!def)
    return false;
  if (llvm::isa<DimOp>(def))
    return true;
  if (llvm::isa<AddOp, MulOp, MaximumOp, MinimumOp>(def))
    return nonNegative(def->getOperand(0), depth + 1) && nonNegative(def->getOperand(1), depth + 1);
  if (auto div = llvm::dyn_cast<DivOp>(def)) {
    std::optional<int64_t> divisor = constantSize(lookThroughSize(div.getRhs()));
    return div.getRoundingMode() != RoundingMode::None && divisor && *divisor > 0 &&
           nonNegative(div.getLhs(), depth + 1);
  }
  return false;
}

bool fromShapes(Value v, int depth) {
  if (depth > kMaxDepth)
    return false;
  v = lookThroughSize(v);
  Operation *def = v.getDefiningOp();
  if (!def)
    return false; // an argument's data
  if (llvm::isa<DimOp>(def) || def->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (def->getNumRegions() != 0)
    return false; // a branch or loop: what it returns depends on data
  return llvm::all_of(def->getOperands(), [&](Value o) { return fromShapes(o, depth + 1); });
}

} // namespace

std::optional<int64_t> constantSize(Value size) {
  // The size of a static dimension (a run-time dimension made static by
  // shape propagation, --specialize) is known before the op folds.
  if (auto d = lookThroughSize(size).getDefiningOp<DimOp>()) {
    auto t = llvm::cast<RankedTensorType>(d.getInput().getType());
    if (int64_t(d.getDim()) < t.getRank() && !t.isDynamicDim(d.getDim()))
      return t.getDimSize(d.getDim());
    return std::nullopt;
  }
  DenseIntElementsAttr values;
  if (!matchPattern(size, m_Constant(&values)) || values.getNumElements() != 1)
    return std::nullopt;
  return (*values.begin()).getSExtValue();
}

bool isDimOf(Value size, Value tensor, int64_t dim) {
  size = lookThroughSize(size);
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim)) {
    std::optional<int64_t> c = constantSize(size);
    return c && *c == type.getDimSize(dim);
  }
  auto d = size.getDefiningOp<DimOp>();
  return d && int64_t(d.getDim()) == dim && lookThroughSize(d.getInput()) == lookThroughSize(tensor);
}

bool isNonNegativeSize(Value size) { return nonNegative(size, 0); }

bool isSameSize(Value a, Value b) {
  a = lookThroughSize(a);
  b = lookThroughSize(b);
  if (a == b)
    return true;
  std::optional<int64_t> ca = constantSize(a), cb = constantSize(b);
  if (ca || cb)
    return ca && cb && *ca == *cb;
  auto da = a.getDefiningOp<DimOp>(), db = b.getDefiningOp<DimOp>();
  return da && db && da.getDim() == db.getDim() && lookThroughSize(da.getInput()) == lookThroughSize(db.getInput());
}

namespace {

/// dimIsSize, following the ops that keep a dimension from an operand;
/// `budget` bounds the ops visited (a residual network would otherwise be
/// walked along every path).
bool dimIsSizeFrom(Value tensor, int64_t dim, Value size, int &budget) {
  if (--budget < 0)
    return false;
  if (isDimOf(size, tensor, dim))
    return true;
  auto type = llvm::cast<RankedTensorType>(tensor.getType());
  if (dim < 0 || dim >= type.getRank())
    return false;
  if (!type.isDynamicDim(dim)) {
    std::optional<int64_t> c = constantSize(size);
    return c && *c == type.getDimSize(dim);
  }
  Operation *def = tensor.getDefiningOp();
  if (!def)
    return false;
  auto from = [&](Value v, int64_t d) { return d >= 0 && dimIsSizeFrom(v, d, size, budget); };
  if (auto iota = llvm::dyn_cast<IotaOp>(def))
    return isSameSize(iota.getCount(), size);
  if (auto x = llvm::dyn_cast<ExpandDynamicOp>(def)) {
    auto in = llvm::cast<RankedTensorType>(x.getInput().getType());
    int64_t j = dim - (type.getRank() - in.getRank());
    // A dimension other than a static 1 keeps the input's size.
    if (j >= 0 && in.getDimSize(j) != 1)
      return from(x.getInput(), j);
    return isSameSize(x.getSizes()[dim], size);
  }
  if (auto st = llvm::dyn_cast<SliceToOp>(def))
    return int64_t(st.getDim()) == dim ? isSameSize(st.getSize(), size) : from(st.getInput(), dim);
  if (auto sl = llvm::dyn_cast<SliceOp>(def))
    return int64_t(sl.getDim()) != dim && from(sl.getInput(), dim);
  if (auto t = llvm::dyn_cast<TransposeOp>(def)) {
    int64_t a = t.getDim0(), b = t.getDim1();
    return from(t.getInput(), dim == a ? b : dim == b ? a : dim);
  }
  if (auto p = llvm::dyn_cast<PermuteOp>(def))
    return dim < int64_t(p.getDims().size()) && from(p.getInput(), p.getDims()[dim]);
  if (auto u = llvm::dyn_cast<UnsqueezeOp>(def)) {
    int64_t at = u.getDim();
    return dim != at && from(u.getInput(), dim < at ? dim : dim - 1);
  }
  if (auto sq = llvm::dyn_cast<SqueezeOp>(def)) {
    auto in = llvm::cast<RankedTensorType>(sq.getInput().getType());
    if (in.getRank() != type.getRank() + int64_t(sq.getDims().size()))
      return false;
    int64_t d = 0, k = -1;
    for (int64_t j = 0; j < in.getRank(); ++j)
      if (!llvm::is_contained(sq.getDims(), j) && d++ == dim)
        k = j;
    return from(sq.getInput(), k);
  }
  if (llvm::isa<ReshapeOp, FlattenOp>(def)) {
    // A view keeps its run-time sizes in order when the static sizes
    // around them agree (x.view(b, t, h, d) of b x t x e): the k-th
    // run-time dimension is the input's k-th.
    auto in = llvm::cast<RankedTensorType>(def->getOperand(0).getType());
    if (!keepsRunTimeSizesInOrder(in, type))
      return false;
    int64_t k = 0;
    for (int64_t d = 0; d < dim; ++d)
      k += type.isDynamicDim(d);
    for (int64_t j = 0; j < in.getRank(); ++j)
      if (in.isDynamicDim(j) && k-- == 0)
        return from(def->getOperand(0), j);
    return false;
  }
  if (llvm::isa<SoftmaxOp, LayerNormOp>(def))
    return from(def->getOperand(0), dim);
  if (auto l = llvm::dyn_cast<LinearOp>(def))
    return dim + 1 < type.getRank() && from(l.getInput(), dim);
  if (llvm::isa<MatmulOp, BatchMatmulOp>(def)) {
    Value a = def->getOperand(0), b = def->getOperand(1);
    int64_t ra = llvm::cast<RankedTensorType>(a.getType()).getRank(),
            rb = llvm::cast<RankedTensorType>(b.getType()).getRank(), r = type.getRank();
    if (ra < 2 || rb < 2)
      return false;
    if (dim == r - 2)
      return from(a, ra - 2);
    if (dim == r - 1)
      return from(b, rb - 1);
    return from(a, dim - (r - ra)) || from(b, dim - (r - rb));
  }
  // Element-wise ops keep the sizes of their operands whose dimension is
  // not a broadcast 1 (such operands agree).
  if (def->hasTrait<CuvilElementwise>())
    for (Value o : def->getOperands()) {
      auto ot = llvm::dyn_cast<RankedTensorType>(o.getType());
      int64_t j = ot ? dim - (type.getRank() - ot.getRank()) : -1;
      if (ot && j >= 0 && ot.isDynamicDim(j) && dimIsSizeFrom(o, j, size, budget))
        return true;
    }
  return false;
}

} // namespace

bool dimIsSize(Value tensor, int64_t dim, Value size) {
  int budget = 256;
  return dimIsSizeFrom(tensor, dim, size, budget);
}

bool isComputedFromShapes(Value size) { return fromShapes(size, 0); }

bool keepsRunTimeSizesInOrder(RankedTensorType from, RankedTensorType to) {
  // The products of the static sizes before, between and after the
  // run-time ones.
  auto segments = [](RankedTensorType t) {
    SmallVector<int64_t> products(1, 1);
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (t.isDynamicDim(d))
        products.push_back(1);
      else
        products.back() *= t.getDimSize(d);
    }
    return products;
  };
  return segments(from) == segments(to);
}

} // namespace mlir::cuvil
