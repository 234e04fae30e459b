//===- MathOps.cpp - cuvil.math.* -----------------------------------------===//
//
// The unary and binary rules come from MathOps.td; this file adds division's
// result rule and the algebraic identities that fold exactly (bit for bit,
// including NaN and signed zeros).
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/SpecialFunctions.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/MathOps.cpp.inc"

namespace {

/// True when `attr` is a splat constant equal to `value`. For floats,
/// `negativeZero` asks for -0.0 specifically.
bool isSplat(Attribute attr, double value, bool negativeZero = false) {
  auto dense = llvm::dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  Type elt = dense.getElementType();
  if (isFloatElement(elt)) {
    APFloat v = dense.getSplatValue<APFloat>();
    if (negativeZero)
      return v.isZero() && v.isNegative();
    return v.convertToDouble() == value && !v.isNegative() == !(value < 0);
  }
  APInt v = dense.getSplatValue<APInt>();
  if (elt.isInteger(1))
    return v.getBoolValue() == (value != 0);
  return v.getSExtValue() == static_cast<int64_t>(value);
}

/// x op c -> x when c is the identity and the op does not change x's type.
OpFoldResult foldIdentity(Value x, Attribute c, Type resultType, double ident,
                          bool floatNeedsNegativeZero) {
  if (x.getType() != resultType)
    return {};
  bool isFloat = isFloatElement(getElementTypeOrSelf(resultType));
  if (isSplat(c, ident, isFloat && floatNeedsNegativeZero))
    return x;
  return {};
}

} // namespace

OpFoldResult NegOp::fold(FoldAdaptor) {
  // neg(neg(x)) -> x
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 -> x (for floats only x + -0.0: +0.0 would turn -0.0 into +0.0).
  if (OpFoldResult r = foldIdentity(getLhs(), adaptor.getRhs(), getType(), 0, true))
    return r;
  return foldIdentity(getRhs(), adaptor.getLhs(), getType(), 0, true);
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  // x - 0 -> x (x - +0.0 is exact for floats).
  return foldIdentity(getLhs(), adaptor.getRhs(), getType(), 0, false);
}

namespace {
/// x ^ 2 -> x * x: a float x whose type the result keeps, the exponent a
/// constant 2 of any shape that does not broadcast x. One rounding of the
/// exact square, as a correctly rounded powf, without the call (a tenth of
/// an audio front end's time in `spec.abs().pow(2)`).
struct SquareForPow final : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op, PatternRewriter &rewriter) const override {
    Value x = op.getLhs();
    if (x.getType() != op.getType() || !isFloatElement(getElementTypeOrSelf(x.getType())))
      return failure();
    DenseElementsAttr exponent;
    if (!matchPattern(op.getRhs(), m_Constant(&exponent)) || !exponent.isSplat())
      return failure();
    auto two = llvm::dyn_cast<FloatAttr>(exponent.getSplatValue<Attribute>());
    auto twoInt = llvm::dyn_cast<IntegerAttr>(exponent.getSplatValue<Attribute>());
    if (!(two && two.getValueAsDouble() == 2.0) && !(twoInt && twoInt.getValue() == 2))
      return failure();
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), x, x);
    return success();
  }
};
} // namespace

void PowOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<SquareForPow>(context);
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  // x * 1 -> x
  if (OpFoldResult r = foldIdentity(getLhs(), adaptor.getRhs(), getType(), 1, false))
    return r;
  return foldIdentity(getRhs(), adaptor.getLhs(), getType(), 1, false);
}

LogicalResult DivOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                      SmallVectorImpl<Type> &types) {
  if (failed(inferBinaryResult(adaptor.getLhs(), adaptor.getRhs(),
                               ElementKind::Any, BinaryResultRule::Promote,
                               emitError, types)))
    return failure();
  auto result = llvm::cast<RankedTensorType>(types.back());
  // True division of integers (and bools) is floating-point in PyTorch.
  if (adaptor.getRoundingMode() == RoundingMode::None &&
      !isFloatElement(result.getElementType())) {
    types.back() = result.clone(defaultFloatType(result.getContext()));
  } else if (adaptor.getRoundingMode() != RoundingMode::None &&
             isBoolElement(result.getElementType())) {
    return emitError() << "rounding division of two i1 tensors is not "
                          "supported (PyTorch rejects it too)";
  }
  return success();
}
