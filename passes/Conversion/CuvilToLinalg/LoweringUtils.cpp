//===- LoweringUtils.cpp - Shared pieces of the cuvil-to-linalg lowering -===//
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "runtime/include/cuvil/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::cuvil::lowering {

std::optional<int32_t> runtimeDtype(Type t) {
  if (t.isF32()) return CUVIL_DTYPE_F32;
  if (t.isF64()) return CUVIL_DTYPE_F64;
  if (t.isF16()) return CUVIL_DTYPE_F16;
  if (t.isBF16()) return CUVIL_DTYPE_BF16;
  if (t.isInteger(1)) return CUVIL_DTYPE_BOOL;
  if (auto i = llvm::dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 8: return i.isUnsigned() ? CUVIL_DTYPE_U8 : CUVIL_DTYPE_I8;
    case 16: return CUVIL_DTYPE_I16;
    case 32: return CUVIL_DTYPE_I32;
    case 64: return CUVIL_DTYPE_I64;
    }
  }
  return std::nullopt;
}


ScalarType scalarTypeOf(Type t) {
  if (auto i = llvm::dyn_cast<IntegerType>(t))
    return {IntegerType::get(t.getContext(), i.getWidth()), i.isUnsigned()};
  return {t, false};
}

ScalarType scalarTypeOf(Value v) {
  return scalarTypeOf(llvm::cast<ShapedType>(v.getType()).getElementType());
}

RankedTensorType convertTensorType(RankedTensorType t) {
  return t.clone(scalarTypeOf(t.getElementType()).type);
}

TypeConverter makeTypeConverter() {
  TypeConverter converter;
  converter.addConversion([](Type t) { return t; });
  converter.addConversion([](RankedTensorType t) -> Type { return convertTensorType(t); });
  // ui8 <-> i8 have the same bits: materialise with a bitcast-free cast.
  auto materialize = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
    if (inputs.size() != 1)
      return Value();
    return b.create<UnrealizedConversionCastOp>(loc, type, inputs).getResult(0);
  };
  converter.addSourceMaterialization(materialize);
  converter.addTargetMaterialization(materialize);
  converter.addArgumentMaterialization(materialize);
  return converter;
}

Value scalarConstant(OpBuilder &b, Location loc, ScalarType t, double value) {
  if (t.isFloat())
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(t.type, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(t.type, t.isBool() ? int64_t(value != 0.0) : int64_t(value)));
}

Value extremeConstant(OpBuilder &b, Location loc, ScalarType t, bool highest) {
  if (auto ft = llvm::dyn_cast<FloatType>(t.type))
    return b.create<arith::ConstantOp>(
        loc, b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), /*Negative=*/!highest)));
  unsigned width = t.type.getIntOrFloatBitWidth();
  APInt v = t.isUnsigned || t.isBool()
                ? (highest ? APInt::getMaxValue(width) : APInt::getMinValue(width))
                : (highest ? APInt::getSignedMaxValue(width) : APInt::getSignedMinValue(width));
  return b.create<arith::ConstantOp>(loc, b.getIntegerAttr(t.type, v));
}

Value convertScalar(OpBuilder &b, Location loc, Value v, ScalarType from, ScalarType to) {
  if (from.type == to.type && from.isUnsigned == to.isUnsigned)
    return v;
  // To bool: a non-zero test (NaN is non-zero).
  if (to.isBool()) {
    if (from.isFloat())
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, v,
                                     scalarConstant(b, loc, from, 0.0));
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, v,
                                   scalarConstant(b, loc, from, 0.0));
  }
  if (from.isFloat() && to.isFloat()) {
    unsigned fw = from.type.getIntOrFloatBitWidth(), tw = to.type.getIntOrFloatBitWidth();
    if (fw == tw) // f16 <-> bf16: through f32
      return b.create<arith::TruncFOp>(loc, to.type,
                                       b.create<arith::ExtFOp>(loc, b.getF32Type(), v));
    if (fw < tw)
      return b.create<arith::ExtFOp>(loc, to.type, v);
    return b.create<arith::TruncFOp>(loc, to.type, v);
  }
  if (from.isFloat()) { // float -> integer: toward zero
    if (to.isUnsigned)
      return b.create<arith::FPToUIOp>(loc, to.type, v);
    return b.create<arith::FPToSIOp>(loc, to.type, v);
  }
  if (to.isFloat()) { // integer/bool -> float
    if (from.isUnsigned || from.isBool())
      return b.create<arith::UIToFPOp>(loc, to.type, v);
    return b.create<arith::SIToFPOp>(loc, to.type, v);
  }
  unsigned fw = from.type.getIntOrFloatBitWidth(), tw = to.type.getIntOrFloatBitWidth();
  if (fw == tw)
    return v; // same bits, signedness is interpretation
  if (fw > tw)
    return b.create<arith::TruncIOp>(loc, to.type, v);
  if (from.isUnsigned || from.isBool())
    return b.create<arith::ExtUIOp>(loc, to.type, v);
  return b.create<arith::ExtSIOp>(loc, to.type, v);
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange like) {
  SmallVector<Value> dynamic;
  int64_t rank = type.getRank();
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d))
      continue;
    Value size;
    for (Value l : like) {
      auto lt = llvm::cast<RankedTensorType>(l.getType());
      int64_t ld = d - (rank - lt.getRank());
      if (ld < 0 || lt.getDimSize(ld) == 1)
        continue;
      size = b.create<tensor::DimOp>(loc, l, ld);
      break;
    }
    // Nothing to take it from: a size-1 broadcast, when there were
    // operands; none at all is a lowering that forgot its run-time sizes,
    // which must not compile into a wrong size.
    if (!size && like.empty())
      llvm::report_fatal_error("cuvil-to-linalg: an empty tensor of dynamic type without the "
                               "operands its run-time sizes come from");
    if (!size)
      size = b.create<arith::ConstantIndexOp>(loc, 1);
    dynamic.push_back(size);
  }
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType(), dynamic);
}

AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operandType, int64_t resultRank,
                       ArrayRef<int64_t> resultShape) {
  SmallVector<AffineExpr> exprs;
  int64_t offset = resultRank - operandType.getRank();
  for (int64_t d = 0; d < operandType.getRank(); ++d) {
    int64_t size = operandType.getDimSize(d), out = resultShape[d + offset];
    // A static size-1 dimension against a larger (or dynamic) one broadcasts.
    if (size == 1 && out != 1)
      exprs.push_back(getAffineConstantExpr(0, ctx));
    else
      exprs.push_back(getAffineDimExpr(d + offset, ctx));
  }
  return AffineMap::get(resultRank, 0, exprs, ctx);
}

SmallVector<utils::IteratorType> parallelIterators(int64_t rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

Value elementwiseGeneric(OpBuilder &b, Location loc, RankedTensorType resultType,
                         ValueRange operands,
                         function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  SmallVector<AffineMap> maps;
  for (Value o : operands)
    maps.push_back(broadcastMap(ctx, llvm::cast<RankedTensorType>(o.getType()), rank,
                                resultType.getShape()));
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Value init = emptyTensor(b, loc, resultType, operands);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, operands, ValueRange{init}, maps, parallelIterators(rank),
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = body(nb, nloc, args.drop_back());
        nb.create<linalg::YieldOp>(nloc, r);
      });
  return generic.getResult(0);
}

} // namespace mlir::cuvil::lowering
