//===- LoweringUtils.h - Shared pieces of the cuvil-to-linalg lowering ---===//
//
// Element types after conversion are signless (ui8 becomes i8); the
// original cuvil types, still visible on the op being lowered, say whether
// an 8-bit integer is unsigned. Scalars are converted between element types
// exactly as the reference evaluator converts host tensors (Tensor::cast).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PASSES_CONVERSION_CUVILTOLINALG_LOWERINGUTILS_H
#define CUVIL_PASSES_CONVERSION_CUVILTOLINALG_LOWERINGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil::lowering {

/// An element type as the lowering computes with it: the signless type
/// plus whether integers are unsigned.
struct ScalarType {
  Type type;             ///< signless (i1, i8, ..., f16, bf16, f32, f64)
  bool isUnsigned = false;
  bool isFloat() const { return llvm::isa<FloatType>(type); }
  bool isBool() const { return type.isInteger(1); }
};

/// The computation type of a cuvil element type (ui8 -> i8, unsigned).
ScalarType scalarTypeOf(Type cuvilElementType);
/// Element type of a (cuvil) tensor value or type.
ScalarType scalarTypeOf(Value cuvilTensor);

/// The C API's cuvil_dtype code (runtime.h) of a cuvil element type (before
/// conversion: ui8 is still unsigned), or nullopt for types it lacks.
std::optional<int32_t> runtimeDtype(Type cuvilElementType);

/// The converted tensor type (ui8 -> i8).
RankedTensorType convertTensorType(RankedTensorType t);

/// The type converter of the lowering (identity except ui8).
TypeConverter makeTypeConverter();

/// Converts a scalar between element types like Tensor::cast: floats to
/// integers truncate toward zero, to bool is "!= 0" (NaN is true), bool
/// to numbers is 0/1, integers wrap.
Value convertScalar(OpBuilder &b, Location loc, Value v, ScalarType from, ScalarType to);

/// A constant scalar of `t` (floats from `f`, integers/bools from `i`).
/// Only for values every type of the family holds exactly (0, 1, small
/// counts): a double cannot carry 64-bit integer limits.
Value scalarConstant(OpBuilder &b, Location loc, ScalarType t, double value);

/// The lowest (`highest` false) or highest value of `t`: -inf/+inf for
/// floats, false/true, 0/2^n-1 unsigned, -2^(n-1)/2^(n-1)-1 signed; the
/// identity of max/min reductions.
Value extremeConstant(OpBuilder &b, Location loc, ScalarType t, bool highest);

/// tensor.empty of `type`, taking dynamic sizes from `like` (same rank,
/// or broadcast-aligned to the right) where available.
Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type, ValueRange like);

/// The indexing map that reads `operandType` broadcast (NumPy, right
/// aligned) into a loop nest of `resultRank` dimensions.
AffineMap broadcastMap(MLIRContext *ctx, RankedTensorType operandType, int64_t resultRank,
                       ArrayRef<int64_t> resultShape);

/// An element-wise linalg.generic: `operands` broadcast to `resultType`;
/// `body(b, loc, scalars)` returns the result element.
Value elementwiseGeneric(
    OpBuilder &b, Location loc, RankedTensorType resultType, ValueRange operands,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// Identity maps / parallel iterators for `rank` loops.
SmallVector<utils::IteratorType> parallelIterators(int64_t rank);

} // namespace mlir::cuvil::lowering

#endif // CUVIL_PASSES_CONVERSION_CUVILTOLINALG_LOWERINGUTILS_H
