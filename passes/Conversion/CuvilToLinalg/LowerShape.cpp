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
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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
  if (dynamicCount > 1 && !runTimeSizesKeepOrder(in, type))
    return {};
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
    auto type = convertTensorType(llvm::cast<RankedTensorType>(op.getType()));
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic concat");
    int64_t dim = op.getDim();
    Value result = emptyTensor(rewriter, op.getLoc(), type, {});
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      RankedTensorType t = typeOf(in);
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (int64_t d = 0; d < t.getRank(); ++d) {
        offsets.push_back(rewriter.getIndexAttr(d == dim ? offset : 0));
        sizes.push_back(rewriter.getIndexAttr(t.getDimSize(d)));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      result = rewriter.create<tensor::InsertSliceOp>(op.getLoc(), in, result, offsets, sizes,
                                                      strides);
      offset += t.getRank() ? t.getDimSize(dim) : 0;
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
               ReshapeLikeLowering<SqueezeOp>, ReshapeLikeLowering<UnsqueezeOp>, SliceToLowering, DimLowering>(tc, ctx);
}

} // namespace mlir::cuvil::lowering
