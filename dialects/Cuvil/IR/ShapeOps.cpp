//===- ShapeOps.cpp - cuvil.shape.* ---------------------------------------===//
//
// Rules, folders and canonical forms of the view-like ops. Canonical form:
// flatten, squeeze and unsqueeze of statically shaped tensors become
// reshape; chains of reshapes and of permutes collapse.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/RunTimeSizes.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ShapeOps.cpp.inc"

namespace {

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}
bool isStatic(int64_t d) { return !ShapedType::isDynamic(d); }

/// Rewrites a statically shaped view op into a reshape to its result shape.
template <typename OpTy>
struct ViewToReshape final : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto resultType = llvm::cast<RankedTensorType>(op.getType());
    if (!tensorType(op.getInput()).hasStaticShape() ||
        !resultType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    rewriter.replaceOpWithNewOp<ReshapeOp>(
        op, resultType, op.getInput(),
        rewriter.getDenseI64ArrayAttr(resultType.getShape()));
    return success();
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> shape = adaptor.getShape();
  int64_t inferred = -1, known = 1;
  for (int64_t i = 0, e = shape.size(); i < e; ++i) {
    if (shape[i] == -1) {
      if (inferred != -1)
        return emitError() << "shape [" << shape << "] has more than one -1";
      inferred = i;
    } else if (shape[i] < 0) {
      return emitError() << "shape entries must be >= -1, got [" << shape
                         << "]";
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {
      return emitError() << "shape [" << shape << "] overflows int64";
    }
  }
  SmallVector<int64_t> out(shape);
  if (in.hasStaticShape()) {
    int64_t numel = in.getNumElements();
    if (inferred >= 0) {
      if (known == 0 || numel % known != 0)
        return emitError() << "cannot infer the -1 in [" << shape
                           << "] for " << numel << " elements";
      out[inferred] = numel / known;
    } else if (known != numel) {
      return emitError() << "shape [" << shape << "] has " << known
                         << " elements, input " << formatShape(in.getShape())
                         << " has " << numel;
    }
  } else if (inferred >= 0) {
    out[inferred] = ShapedType::kDynamic;
  }
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  // A static reshape to the same shape is the identity.
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  return {};
}

namespace {
/// reshape(reshape(x)) -> reshape(x): only the element count matters.
struct CollapseReshapes final : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<ReshapeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a reshape");
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), inner.getInput(),
                                           op.getShapeAttr());
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<CollapseReshapes>(context);
}

//===----------------------------------------------------------------------===//
// FlattenOp
//===----------------------------------------------------------------------===//

LogicalResult FlattenOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  int64_t start = adaptor.getStartDim(), end = adaptor.getEndDim();
  if (failed(checkDim(start, in.getRank(), "start_dim", emitError)) ||
      failed(checkDim(end, in.getRank(), "end_dim", emitError)))
    return failure();
  if (start > end)
    return emitError() << "start_dim (" << start << ") must not exceed end_dim ("
                       << end << ")";
  SmallVector<int64_t> out;
  if (in.getRank() == 0) {
    out.push_back(1);
  } else {
    out.append(in.getShape().begin(), in.getShape().begin() + start);
    int64_t merged = 1;
    for (int64_t i = start; i <= end; ++i)
      merged = isStatic(in.getDimSize(i)) && isStatic(merged)
                   ? merged * in.getDimSize(i)
                   : ShapedType::kDynamic;
    out.push_back(merged);
    out.append(in.getShape().begin() + end + 1, in.getShape().end());
  }
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

void FlattenOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ViewToReshape<FlattenOp>>(context);
}

//===----------------------------------------------------------------------===//
// SqueezeOp / UnsqueezeOp
//===----------------------------------------------------------------------===//

LogicalResult SqueezeOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> dims = adaptor.getDims();
  if (failed(checkDimList(dims, in.getRank(), "dims", emitError)))
    return failure();
  if (in.getRank() == 0) {
    types.push_back(in);
    return success();
  }
  for (int64_t d : dims)
    if (isStatic(in.getDimSize(d)) && in.getDimSize(d) != 1)
      return emitError() << "dimension " << d << " has size "
                         << in.getDimSize(d) << "; only size-1 dimensions "
                         << "can be squeezed";
  types.push_back(RankedTensorType::get(
      reducedShape(in.getShape(), dims, /*keepdim=*/false), in.getElementType()));
  return success();
}

void SqueezeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ViewToReshape<SqueezeOp>>(context);
}

LogicalResult UnsqueezeOp::inferResultTypes(Adaptor adaptor,
                                            EmitErrorFn emitError,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  int64_t dim = adaptor.getDim();
  if (dim < 0 || dim > in.getRank())
    return emitError() << "dim " << dim << " is out of range for rank "
                       << in.getRank() << " (expected 0 <= dim <= "
                       << in.getRank() << ")";
  SmallVector<int64_t> out(in.getShape());
  out.insert(out.begin() + dim, 1);
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

void UnsqueezeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ViewToReshape<UnsqueezeOp>>(context);
}

//===----------------------------------------------------------------------===//
// PermuteOp / TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult PermuteOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> dims = adaptor.getDims();
  SmallVector<bool> seen(in.getRank(), false);
  bool valid = static_cast<int64_t>(dims.size()) == in.getRank();
  for (int64_t d : dims) {
    if (!valid || d < 0 || d >= in.getRank() || seen[d]) {
      valid = false;
      break;
    }
    seen[d] = true;
  }
  if (!valid)
    return emitError() << "dims [" << dims << "] is not a permutation of the "
                       << in.getRank() << " input dimensions";
  SmallVector<int64_t> out;
  for (int64_t d : dims)
    out.push_back(in.getDimSize(d));
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

OpFoldResult PermuteOp::fold(FoldAdaptor) {
  for (auto [i, d] : llvm::enumerate(getDims()))
    if (static_cast<int64_t>(i) != d)
      return {};
  return getInput();
}

namespace {
/// permute(permute(x, p), q) -> permute(x, p o q).
struct ComposePermutes final : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<PermuteOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "input is not a permute");
    SmallVector<int64_t> dims;
    for (int64_t d : op.getDims())
      dims.push_back(inner.getDims()[d]);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, op.getType(), inner.getInput(),
                                           rewriter.getDenseI64ArrayAttr(dims));
    return success();
  }
};
} // namespace

namespace {
/// A permutation that keeps the order of the non-unit dimensions moves no
/// data: it is a reshape (static shapes).
struct UnitPermuteToReshape final : OpRewritePattern<PermuteOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PermuteOp op,
                                PatternRewriter &rewriter) const override {
    RankedTensorType in = tensorType(op.getInput());
    auto out = llvm::cast<RankedTensorType>(op.getType());
    if (!in.hasStaticShape() || !out.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic shape");
    int64_t last = -1;
    for (int64_t d : op.getDims()) {
      if (in.getDimSize(d) == 1)
        continue;
      if (d < last)
        return rewriter.notifyMatchFailure(op, "moves data");
      last = d;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, out, op.getInput(),
                                           rewriter.getDenseI64ArrayAttr(out.getShape()));
    return success();
  }
};

/// transpose(x, a, b) -> permute(x, ...): one form, so that chains of
/// transposes and permutes compose (and cancel).
struct TransposeToPermute final : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    int64_t rank = tensorType(op.getInput()).getRank();
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      dims.push_back(d);
    std::swap(dims[op.getDim0()], dims[op.getDim1()]);
    rewriter.replaceOpWithNewOp<PermuteOp>(op, op.getType(), op.getInput(),
                                           rewriter.getDenseI64ArrayAttr(dims));
    return success();
  }
};
} // namespace

void PermuteOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<ComposePermutes, UnitPermuteToReshape>(context);
}

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<TransposeToPermute>(context);
}

LogicalResult TransposeOp::inferResultTypes(Adaptor adaptor,
                                            EmitErrorFn emitError,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  int64_t d0 = adaptor.getDim0(), d1 = adaptor.getDim1();
  if (failed(checkDim(d0, in.getRank(), "dim0", emitError)) ||
      failed(checkDim(d1, in.getRank(), "dim1", emitError)))
    return failure();
  SmallVector<int64_t> out(in.getShape());
  if (in.getRank() > 0)
    std::swap(out[d0], out[d1]);
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (getDim0() == getDim1())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> shape = adaptor.getShape();
  int64_t rank = shape.size(), inRank = in.getRank();
  if (rank < inRank)
    return emitError() << "shape [" << shape << "] has fewer dimensions than "
                       << "the input " << formatShape(in.getShape());
  SmallVector<int64_t> out(shape);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t target = shape[i];
    int64_t j = i - (rank - inRank);
    if (j < 0) {
      if (target < 0)
        return emitError() << "new leading dimension " << i
                           << " needs an explicit size, got " << target;
      continue;
    }
    int64_t size = in.getDimSize(j);
    if (target == -1) {
      out[i] = size;
    } else if (target < -1) {
      return emitError() << "shape entries must be >= -1, got [" << shape
                         << "]";
    } else if (isStatic(size) && size != 1 && size != target) {
      return emitError() << "input dimension " << j << " of size " << size
                         << " cannot expand to " << target
                         << " (only size-1 dimensions expand)";
    }
  }
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

OpFoldResult ExpandOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType() && getType().hasStaticShape())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// ExpandDynamicOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandDynamicOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                                SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ValueRange sizes = adaptor.getSizes();
  int64_t rank = sizes.size(), inRank = in.getRank();
  if (rank < inRank)
    return emitError() << rank << " sizes for an input of rank " << inRank
                       << " (expanding may only add leading dimensions)";
  SmallVector<int64_t> out(rank, ShapedType::kDynamic);
  for (int64_t i = 0; i < rank; ++i) {
    std::optional<int64_t> c = constantSize(sizes[i]);
    if (c && *c < 0)
      return emitError() << "size " << i << " is negative (" << *c << ")";
    int64_t j = i - (rank - inRank);
    // A dimension other than a static 1 keeps its own size.
    if (j >= 0 && in.getDimSize(j) != 1) {
      if (c && isStatic(in.getDimSize(j)) && *c != in.getDimSize(j))
        return emitError() << "input dimension " << j << " of size " << in.getDimSize(j)
                           << " cannot expand to " << *c << " (only size-1 dimensions expand)";
      out[i] = in.getDimSize(j);
      continue;
    }
    if (c)
      out[i] = *c;
  }
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

OpFoldResult ExpandDynamicOp::fold(FoldAdaptor adaptor) {
  // A splat (a factory's fill value) of a size that became static.
  auto splat = llvm::dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput());
  if (!splat || !getType().hasStaticShape())
    return {};
  return SplatElementsAttr::get(getType(), splat.getSplatValue<Attribute>());
}

//===----------------------------------------------------------------------===//
// ReshapeDynamicOp, DimOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeDynamicOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                                 SmallVectorImpl<Type> &types) {
  auto in = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  auto shape = llvm::cast<RankedTensorType>(adaptor.getShape().getType());
  if (shape.getRank() != 1 || shape.isDynamicDim(0))
    return emitError() << "shape must be a 1-D tensor of static length, got " << shape;
  SmallVector<int64_t> out(shape.getDimSize(0), ShapedType::kDynamic);
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

LogicalResult DimOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                      SmallVectorImpl<Type> &types) {
  auto in = llvm::cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(checkDim(adaptor.getDim(), std::max<int64_t>(in.getRank(), 1), "dim", emitError)))
    return failure();
  if (in.getRank() == 0)
    return emitError() << "input must have at least one dimension";
  types.push_back(RankedTensorType::get({}, IntegerType::get(in.getContext(), 64)));
  return success();
}

OpFoldResult DimOp::fold(FoldAdaptor) {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  int64_t d = getDim();
  if (d < 0 || d >= in.getRank() || in.isDynamicDim(d))
    return {};
  return DenseElementsAttr::get(llvm::cast<ShapedType>(getType()), in.getDimSize(d));
}
