//===- LowerShape.cpp - Constants, views and data movement ----------------===//
//
// Views become tensor reshapes (collapse to 1-D, expand to the target:
// static shapes), linalg.transpose and broadcasting generics; slices and
// selects become extract_slice; concat becomes insert_slices into one
// tensor. Shapes must be static except where noted: the dynamic cases are
// reported by the pass as unsupported.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/RunTimeSizes.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>
#include <limits>

namespace mlir::cuvil::lowering {
namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// Reshapes `src` (converted) to the static `type` through 1-D.
Value staticReshape(OpBuilder &b, Location loc, Value src, RankedTensorType type) {
  RankedTensorType in = typeOf(src);
  if (in == type)
    return src;
  Value flat = src;
  if (in.getRank() != 1) {
    SmallVector<ReassociationIndices> all;
    if (in.getRank() > 0) {
      all.emplace_back();
      for (int64_t d = 0; d < in.getRank(); ++d)
        all.back().push_back(d);
    }
    auto flatType = RankedTensorType::get({in.getNumElements()}, in.getElementType());
    if (in.getRank() == 0)
      flat = b.create<tensor::ExpandShapeOp>(loc, flatType, src, ArrayRef<ReassociationIndices>{});
    else
      flat = b.create<tensor::CollapseShapeOp>(loc, flatType, src, all);
  }
  if (type.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all;
  if (type.getRank() > 0) {
    all.emplace_back();
    for (int64_t d = 0; d < type.getRank(); ++d)
      all.back().push_back(d);
  }
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, flat, ArrayRef<ReassociationIndices>{});
  return b.create<tensor::ExpandShapeOp>(loc, type, flat, all);
}

/// Groups the dimensions of `t` around its run-time ones: group k holds
/// run-time dimension k and the static ones after it (the first group also
/// those before it).
SmallVector<ReassociationIndices> aroundRunTimeSizes(RankedTensorType t) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices leading;
  for (int64_t d = 0; d < t.getRank(); ++d) {
    if (t.isDynamicDim(d)) {
      groups.push_back(groups.empty() ? leading : ReassociationIndices{});
      groups.back().push_back(d);
    } else if (groups.empty()) {
      leading.push_back(d);
    } else {
      groups.back().push_back(d);
    }
  }
  return groups;
}

/// A view that keeps several run-time sizes in order (keepsRunTimeSizesInOrder):
/// collapsed to one dimension per run-time size, then expanded, so that
/// each reassociation group holds one run-time size (tensor.dim of the
/// result then folds to the right size; MLIR assumes one per group).
Value segmentedReshape(OpBuilder &b, Location loc, Value src, RankedTensorType type,
                       ArrayRef<Value> runTimeSizes) {
  RankedTensorType in = typeOf(src);
  SmallVector<ReassociationIndices> inGroups = aroundRunTimeSizes(in), outGroups = aroundRunTimeSizes(type);
  auto middle = RankedTensorType::get(SmallVector<int64_t>(inGroups.size(), ShapedType::kDynamic),
                                      in.getElementType());
  Value collapsed = b.create<tensor::CollapseShapeOp>(loc, middle, src, inGroups);
  SmallVector<OpFoldResult> outputShape;
  size_t next = 0;
  for (int64_t d = 0; d < type.getRank(); ++d)
    outputShape.push_back(type.isDynamicDim(d) ? OpFoldResult(runTimeSizes[next++])
                                               : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  return b.create<tensor::ExpandShapeOp>(loc, type, collapsed, outGroups, outputShape);
}

/// Reshapes `src` to `type` with run-time sizes, through 1-D. The result's
/// dynamic sizes: one alone is what the static ones leave of the element
/// count; several take the input's dynamic sizes in order (a view keeps a
/// run-time dimension where it was, as for batch and sequence lengths).
/// Null when neither applies.
Value dynamicReshape(OpBuilder &b, Location loc, Value src, RankedTensorType type) {
  RankedTensorType in = typeOf(src);
  SmallVector<Value> inputSizes;
  Value total = b.create<arith::ConstantIndexOp>(loc, 1);
  for (int64_t d = 0; d < in.getRank(); ++d) {
    Value size = in.isDynamicDim(d) ? b.create<tensor::DimOp>(loc, src, d).getResult()
                                    : b.create<arith::ConstantIndexOp>(loc, in.getDimSize(d)).getResult();
    if (in.isDynamicDim(d))
      inputSizes.push_back(size);
    total = b.create<arith::MulIOp>(loc, total, size);
  }
  int64_t staticProduct = 1;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!type.isDynamicDim(d))
      staticProduct *= type.getDimSize(d);
  int64_t dynamicCount = type.getNumDynamicDims();
  if (dynamicCount > 1 && dynamicCount != int64_t(inputSizes.size()))
    return {};
  // Several run-time sizes pass through in order only where they keep it.
  if (dynamicCount > 1 && !keepsRunTimeSizesInOrder(in, type))
    return {};
  if (dynamicCount > 1)
    return segmentedReshape(b, loc, src, type, inputSizes);
  SmallVector<OpFoldResult> outputShape;
  size_t next = 0;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      outputShape.push_back(b.getIndexAttr(type.getDimSize(d)));
      continue;
    }
    outputShape.push_back(dynamicCount == 1
                              ? b.create<arith::DivUIOp>(
                                     loc, total, b.create<arith::ConstantIndexOp>(loc, std::max<int64_t>(staticProduct, 1)))
                                    .getResult()
                              : inputSizes[next++]);
  }
  Value flat = src;
  auto flatType = RankedTensorType::get({ShapedType::kDynamic}, in.getElementType());
  if (in.getRank() == 0)
    return {};
  if (in.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t d = 0; d < in.getRank(); ++d)
      all[0].push_back(d);
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, src, all);
  }
  if (type.getRank() == 0)
    return {};
  SmallVector<ReassociationIndices> all(1);
  for (int64_t d = 0; d < type.getRank(); ++d)
    all[0].push_back(d);
  if (type.getRank() == 1)
    return b.create<tensor::CastOp>(loc, type, flat);
  return b.create<tensor::ExpandShapeOp>(loc, type, flat, all, outputShape);
}

/// Any cuvil view whose result type says everything (static shapes), or
/// whose run-time sizes follow the input's (dynamicReshape).
template <typename OpTy> struct ReshapeLikeLowering final : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getResult().getType()));
    Value input = adaptor.getOperands()[0];
    if (!type.hasStaticShape() || !typeOf(input).hasStaticShape()) {
      Value r = dynamicReshape(rewriter, op.getLoc(), input, type);
      if (!r)
        return rewriter.notifyMatchFailure(op, "dynamic reshape whose sizes do not follow the input's");
      rewriter.replaceOp(op, r);
      return success();
    }
    rewriter.replaceOp(op, staticReshape(rewriter, op.getLoc(), input, type));
    return success();
  }
};

/// The init of a transpose of `input` by `perm` into `type`.
Value transposedEmpty(OpBuilder &b, Location loc, Value input, RankedTensorType type,
                      ArrayRef<int64_t> perm) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(b.create<tensor::DimOp>(loc, input, perm[d]));
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), sizes);
}

/// A 0-d resource constant as a plain dense one: MLIR lowers a 0-d global
/// to a scalar through its value, which a resource cannot give (and a
/// single number reads better in the IR). Null when the blob is missing.
DenseElementsAttr scalarFromResource(DenseResourceElementsAttr res, RankedTensorType type) {
  AsmResourceBlob *blob = res.getRawHandle().getBlob();
  if (!blob)
    return {};
  ArrayRef<char> bytes = blob->getData();
  Type element = type.getElementType();
  unsigned bits = element.getIntOrFloatBitWidth();
  unsigned storedBytes = std::max(1u, bits / 8); // bools: one byte each
  if (bytes.size() < storedBytes)
    return {};
  uint64_t raw = 0;
  std::memcpy(&raw, bytes.data(), storedBytes); // little-endian hosts only
  if (auto ft = llvm::dyn_cast<FloatType>(element))
    return DenseElementsAttr::get(type, FloatAttr::get(ft, APFloat(ft.getFloatSemantics(), APInt(bits, raw))));
  if (bits == 1)
    return DenseElementsAttr::get(type, Attribute(BoolAttr::get(type.getContext(), raw != 0)));
  return DenseElementsAttr::get(type, IntegerAttr::get(element, APInt(bits, raw)));
}

struct ConstantLowering final : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    ElementsAttr value = op.getValue();
    if (value.getShapedType() != type) { // ui8 -> i8: same bytes, new type
      if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value))
        value = dense.bitcast(type.getElementType());
      else if (auto res = llvm::dyn_cast<DenseResourceElementsAttr>(value))
        value = DenseResourceElementsAttr::get(type, res.getRawHandle());
      else
        return rewriter.notifyMatchFailure(op, "unsupported constant attribute");
    }
    if (auto res = llvm::dyn_cast<DenseResourceElementsAttr>(value); res && type.getRank() == 0)
      if (DenseElementsAttr dense = scalarFromResource(res, type))
        value = dense;
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, llvm::cast<TypedAttr>(value));
    return success();
  }
};

struct PermuteLowering final : OpConversionPattern<PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    Value init = transposedEmpty(rewriter, op.getLoc(), adaptor.getInput(), type, op.getDims());
    auto t = rewriter.create<linalg::TransposeOp>(op.getLoc(), adaptor.getInput(), init,
                                                  op.getDims());
    rewriter.replaceOp(op, t.getResult());
    return success();
  }
};

struct TransposeLowering final : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    int64_t rank = type.getRank();
    SmallVector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d)
      perm.push_back(d);
    if (rank > 0)
      std::swap(perm[op.getDim0()], perm[op.getDim1()]);
    Value init = transposedEmpty(rewriter, op.getLoc(), adaptor.getInput(), type, perm);
    auto t = rewriter.create<linalg::TransposeOp>(op.getLoc(), adaptor.getInput(), init, perm);
    rewriter.replaceOp(op, t.getResult());
    return success();
  }
};

/// expand: a copy through a broadcasting indexing map.
struct ExpandLowering final : OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    Value r = elementwiseGeneric(rewriter, op.getLoc(), type, adaptor.getInput(),
                                 [](OpBuilder &, Location, ValueRange a) { return a[0]; });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct SliceLowering final : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType in = typeOf(adaptor.getInput());
    int64_t dim = op.getDim();
    if (in.isDynamicDim(dim)) {
      // x[:, ...] along a run-time dimension: the whole of it.
      bool whole = op.getStep() == 1 && op.getStart() == 0 &&
                   op.getEnd() >= std::numeric_limits<int64_t>::max() / 2;
      if (!whole)
        return rewriter.notifyMatchFailure(op, "slice of a dynamic dimension");
      auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
      Value input = adaptor.getInput();
      rewriter.replaceOp(op, type == in ? input
                                        : rewriter.create<tensor::CastOp>(op.getLoc(), type, input).getResult());
      return success();
    }
    int64_t start = 0;
    int64_t length = sliceLength(in.getDimSize(dim), op.getStart(), op.getEnd(), op.getStep(), &start);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      bool sliced = d == dim;
      offsets.push_back(rewriter.getIndexAttr(sliced ? start : 0));
      if (sliced)
        sizes.push_back(rewriter.getIndexAttr(length));
      else if (in.isDynamicDim(d))
        sizes.push_back(rewriter.create<tensor::DimOp>(op.getLoc(), adaptor.getInput(), d).getResult());
      else
        sizes.push_back(rewriter.getIndexAttr(in.getDimSize(d)));
      strides.push_back(rewriter.getIndexAttr(sliced ? op.getStep() : 1));
    }
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, adaptor.getInput(), offsets,
                                                        sizes, strides);
    return success();
  }
};

/// x.size(d) as a 0-d i64 tensor (unused once the ops reading it take the
/// dimension itself, as slice_to does).
struct DimLowering final : OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(DimOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value size = rewriter.create<tensor::DimOp>(loc, adaptor.getInput(), op.getDim());
    Value i64 = rewriter.create<arith::IndexCastOp>(loc, rewriter.getI64Type(), size);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(
        op, RankedTensorType::get({}, rewriter.getI64Type()), ValueRange{i64});
    return success();
  }
};

/// x[..., :n, ...]: an extract_slice of min(n, size) (n < 0: from the end).
/// The end of `cuvil.shape.dim` is read as the other tensor's dimension
/// itself, so that the slice's size keeps that dimension's bounds.
struct SliceToLowering final : OpConversionPattern<SliceToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SliceToOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType in = typeOf(input);
    int64_t dim = op.getDim();
    Value size = in.isDynamicDim(dim) ? rewriter.create<tensor::DimOp>(loc, input, dim).getResult()
                                      : rewriter.create<arith::ConstantIndexOp>(loc, in.getDimSize(dim)).getResult();
    Value end;
    if (auto d = op.getSize().getDefiningOp<DimOp>()) {
      Value source = rewriter.getRemappedValue(d.getInput());
      if (!source)
        return rewriter.notifyMatchFailure(op, "the end's tensor is not converted");
      end = rewriter.create<tensor::DimOp>(loc, source, d.getDim());
    } else {
      Value n = rewriter.create<tensor::ExtractOp>(loc, adaptor.getSize(), ValueRange{});
      n = rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), n);
      Value zero = rewriter.create<arith::ConstantIndexOp>(loc, 0);
      Value negative = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, n, zero);
      n = rewriter.create<arith::SelectOp>(loc, negative, rewriter.create<arith::AddIOp>(loc, n, size), n);
      end = rewriter.create<arith::MaxSIOp>(loc, n, zero);
    }
    end = rewriter.create<arith::MinUIOp>(loc, end, size);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      offsets.push_back(rewriter.getIndexAttr(0));
      strides.push_back(rewriter.getIndexAttr(1));
      if (d == dim)
        sizes.push_back(end);
      else if (in.isDynamicDim(d))
        sizes.push_back(rewriter.create<tensor::DimOp>(loc, input, d).getResult());
      else
        sizes.push_back(rewriter.getIndexAttr(in.getDimSize(d)));
    }
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, input, offsets, sizes, strides);
    return success();
  }
};

/// A run-time size (a 0-d i64 cuvil value) as an `index`, rebuilt from
/// the dimensions and constants it is computed from, so that the sizes of
/// the buffers it makes keep the inputs' bounds (SizeBounds.h); a size of
/// any other origin is read from its tensor.
FailureOr<Value> materializeSize(ConversionPatternRewriter &rewriter, Location loc, Value size,
                                 int depth = 0) {
  Value v = lookThroughSize(size);
  if (std::optional<int64_t> c = constantSize(v))
    return rewriter.create<arith::ConstantIndexOp>(loc, *c).getResult();
  Operation *def = v.getDefiningOp();
  if (auto d = llvm::dyn_cast_or_null<DimOp>(def)) {
    Value source = rewriter.getRemappedValue(d.getInput());
    if (source) {
      RankedTensorType t = typeOf(source);
      if (!t.isDynamicDim(d.getDim()))
        return rewriter.create<arith::ConstantIndexOp>(loc, t.getDimSize(d.getDim())).getResult();
      return rewriter.create<tensor::DimOp>(loc, source, d.getDim()).getResult();
    }
  }
  if (def && depth < 32 && llvm::isa<AddOp, SubOp, MulOp, MaximumOp, MinimumOp, DivOp>(def)) {
    auto div = llvm::dyn_cast<DivOp>(def);
    if (!div || div.getRoundingMode() != RoundingMode::None) {
      FailureOr<Value> a = materializeSize(rewriter, loc, def->getOperand(0), depth + 1);
      FailureOr<Value> b = materializeSize(rewriter, loc, def->getOperand(1), depth + 1);
      if (succeeded(a) && succeeded(b)) {
        if (llvm::isa<AddOp>(def))
          return rewriter.create<arith::AddIOp>(loc, *a, *b).getResult();
        if (llvm::isa<SubOp>(def))
          return rewriter.create<arith::SubIOp>(loc, *a, *b).getResult();
        if (llvm::isa<MulOp>(def))
          return rewriter.create<arith::MulIOp>(loc, *a, *b).getResult();
        if (llvm::isa<MaximumOp>(def))
          return rewriter.create<arith::MaxSIOp>(loc, *a, *b).getResult();
        if (llvm::isa<MinimumOp>(def))
          return rewriter.create<arith::MinSIOp>(loc, *a, *b).getResult();
        // Integer division by zero is refused by the division's own
        // lowering; a size divides by positive constants.
        std::optional<int64_t> divisor = constantSize(lookThroughSize(div.getRhs()));
        if (divisor && *divisor > 0)
          return div.getRoundingMode() == RoundingMode::Floor
                     ? rewriter.create<arith::FloorDivSIOp>(loc, *a, *b).getResult()
                     : rewriter.create<arith::DivSIOp>(loc, *a, *b).getResult();
      }
    }
  }
  Value converted = rewriter.getRemappedValue(size);
  if (!converted)
    return failure();
  Value element = rewriter.create<tensor::ExtractOp>(loc, converted, ValueRange{});
  return rewriter.create<arith::IndexCastOp>(loc, rewriter.getIndexType(), element).getResult();
}

/// `size` clamped at 0, its being negative recorded in `anyFailed` (i1 or
/// null) when the op carries a check.
Value clampNegative(OpBuilder &b, Location loc, Value size, Value originalSize, Value &anyFailed) {
  if (isNonNegativeSize(originalSize))
    return size;
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, size, zero);
  anyFailed = anyFailed ? b.create<arith::OrIOp>(loc, anyFailed, negative).getResult() : negative;
  return b.create<arith::MaxSIOp>(loc, size, zero);
}

/// x.expand(sizes) / a factory with run-time sizes: a broadcasting generic
/// into a tensor of those sizes. A dimension that is not a static 1 keeps
/// the input's size (so nothing is read out of bounds), its size operand
/// checked against it at run time.
struct ExpandDynamicLowering final : OpConversionPattern<ExpandDynamicOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ExpandDynamicOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    RankedTensorType in = typeOf(input);
    RankedTensorType type = convertTensorType(op.getType());
    int64_t rank = type.getRank(), offset = rank - in.getRank();
    bool checked = needsRuntimeCheck(op);
    Value anyFailed;
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t j = i - offset;
      Value sizeOperand = op.getSizes()[i];
      if (j >= 0 && in.getDimSize(j) != 1) {
        Value own = in.isDynamicDim(j) ? rewriter.create<tensor::DimOp>(loc, input, j).getResult()
                                       : rewriter.create<arith::ConstantIndexOp>(loc, in.getDimSize(j)).getResult();
        if (checked && !isDimOf(sizeOperand, op.getInput(), j)) {
          FailureOr<Value> s = materializeSize(rewriter, loc, sizeOperand);
          if (failed(s))
            return rewriter.notifyMatchFailure(op, "a size is not converted");
          Value differs = rewriter.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, *s, own);
          anyFailed = anyFailed ? rewriter.create<arith::OrIOp>(loc, anyFailed, differs).getResult() : differs;
        }
        if (type.isDynamicDim(i))
          dynamicSizes.push_back(own);
        continue;
      }
      if (!type.isDynamicDim(i))
        continue;
      FailureOr<Value> s = materializeSize(rewriter, loc, sizeOperand);
      if (failed(s))
        return rewriter.notifyMatchFailure(op, "a size is not converted");
      dynamicSizes.push_back(checked ? clampNegative(rewriter, loc, *s, sizeOperand, anyFailed) : *s);
    }
    if (anyFailed)
      recordCheck(rewriter, loc, op, anyFailed);
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), dynamicSizes);
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps = {broadcastMap(ctx, in, rank, type.getShape()),
                                   rewriter.getMultiDimIdentityMap(rank)};
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{input}, ValueRange{init}, maps, parallelIterators(rank),
        [](OpBuilder &b, Location l, ValueRange args) { b.create<linalg::YieldOp>(l, args[0]); });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// 0, 1, ..., n - 1 of a run-time count (a negative count is checked).
struct IotaLowering final : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = typeOf(op.getResult());
    SmallVector<Value> dynamicSizes;
    Value anyFailed;
    if (type.isDynamicDim(0)) {
      FailureOr<Value> n = materializeSize(rewriter, loc, op.getCount());
      if (failed(n))
        return rewriter.notifyMatchFailure(op, "the count is not converted");
      dynamicSizes.push_back(needsRuntimeCheck(op) ? clampNegative(rewriter, loc, *n, op.getCount(), anyFailed) : *n);
    }
    if (anyFailed)
      recordCheck(rewriter, loc, op, anyFailed);
    Value init = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), dynamicSizes);
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, type, ValueRange{}, ValueRange{init}, SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(1)},
        parallelIterators(1), [](OpBuilder &b, Location l, ValueRange) {
          Value k = b.create<linalg::IndexOp>(l, 0);
          b.create<linalg::YieldOp>(l, ValueRange{b.create<arith::IndexCastOp>(l, b.getI64Type(), k).getResult()});
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct SelectLowering final : OpConversionPattern<SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(SelectOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    RankedTensorType in = typeOf(adaptor.getInput());
    int64_t dim = op.getDim(), index = op.getIndex();
    if (in.isDynamicDim(dim))
      return rewriter.notifyMatchFailure(op, "select on a dynamic dimension");
    if (index < 0)
      index += in.getDimSize(dim);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < in.getRank(); ++d) {
      offsets.push_back(rewriter.getIndexAttr(d == dim ? index : 0));
      if (d == dim)
        sizes.push_back(rewriter.getIndexAttr(1));
      else if (in.isDynamicDim(d))
        sizes.push_back(rewriter.create<tensor::DimOp>(op.getLoc(), adaptor.getInput(), d).getResult());
      else
        sizes.push_back(rewriter.getIndexAttr(in.getDimSize(d)));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    // A rank-reducing extract_slice drops the selected dimension.
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, type, adaptor.getInput(), offsets,
                                                        sizes, strides);
    return success();
  }
};

struct ConcatLowering final : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    int64_t dim = op.getDim(), rank = type.getRank();
    auto sizeOf = [&](Value v, int64_t d) -> OpFoldResult {
      RankedTensorType t = typeOf(v);
      if (!t.isDynamicDim(d))
        return rewriter.getIndexAttr(t.getDimSize(d));
      return rewriter.create<tensor::DimOp>(loc, v, d).getResult();
    };
    auto asValue = [&](OpFoldResult f) { return getValueOrCreateConstantIndexOp(rewriter, loc, f); };
    // Run-time sizes: the concatenated dimension is the sum of the inputs';
    // the others are the first input's (the inputs agree on them).
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d != dim) {
        Value first = *llvm::find_if(adaptor.getInputs(), [&](Value in) { return typeOf(in).getRank() == rank; });
        dynamicSizes.push_back(asValue(sizeOf(first, d)));
        continue;
      }
      Value total;
      for (Value in : adaptor.getInputs()) {
        if (typeOf(in).getRank() != rank)
          continue;
        Value s = asValue(sizeOf(in, dim));
        total = total ? rewriter.create<arith::AddIOp>(loc, total, s).getResult() : s;
      }
      dynamicSizes.push_back(total);
    }
    Value result = rewriter.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), dynamicSizes);
    OpFoldResult offset = rewriter.getIndexAttr(0);
    for (Value in : adaptor.getInputs()) {
      RankedTensorType t = typeOf(in);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        offsets.push_back(d == dim ? offset : rewriter.getIndexAttr(0));
        sizes.push_back(sizeOf(in, d));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      result = rewriter.create<tensor::InsertSliceOp>(loc, in, result, offsets, sizes, strides);
      if (!t.getRank())
        continue;
      OpFoldResult size = sizeOf(in, dim);
      auto a = llvm::dyn_cast<Attribute>(offset), b = llvm::dyn_cast<Attribute>(size);
      if (a && b)
        offset = rewriter.getIndexAttr(llvm::cast<IntegerAttr>(a).getInt() + llvm::cast<IntegerAttr>(b).getInt());
      else
        offset = rewriter.create<arith::AddIOp>(loc, asValue(offset), asValue(size)).getResult();
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void populateShapeLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering, PermuteLowering, TransposeLowering, ExpandLowering,
               SliceLowering, SelectLowering, ConcatLowering,
               ReshapeLikeLowering<ReshapeOp>, ReshapeLikeLowering<FlattenOp>,
               ReshapeLikeLowering<SqueezeOp>, ReshapeLikeLowering<UnsqueezeOp>, SliceToLowering, DimLowering,
               ExpandDynamicLowering, IotaLowering>(tc, ctx);
}

} // namespace mlir::cuvil::lowering
