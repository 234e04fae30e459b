//===- TypeRules.h - Shape and element-type rules of cuvil ops --*- C++ -*-===//
//
// PyTorch's typing rules written once: type promotion (result_type),
// broadcasting, dimension checks and the shared result rules of the
// element-wise and reduction op classes. The generated op code calls these;
// so do the importer and the reference evaluator.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_TYPERULES_H
#define CUVIL_DIALECT_CUVIL_IR_TYPERULES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeRange.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>

namespace mlir::cuvil {

/// Produces an error diagnostic; may be inactive (no location to report on).
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// An error at `loc` prefixed like emitOpError ("'name' op "), or an inactive
/// diagnostic when there is no location.
InFlightDiagnostic emitOptionalOpError(std::optional<Location> loc,
                                       llvm::StringRef opName);

/// Result types are compatible when element types are equal and ranks match;
/// a dynamic dimension on either side matches any size.
bool areCompatibleResultTypes(TypeRange inferred, TypeRange actual);
bool areCompatibleShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// What an operand's element type must be.
enum class ElementKind {
  Any,           ///< every cuvil element type
  Numeric,       ///< anything but i1
  Float,         ///< f16, bf16, f32, f64
  IntegerOrBool, ///< i1 and the integer types
};

bool isBoolElement(Type t);
bool isIntegerElement(Type t); ///< integer types other than i1
bool isFloatElement(Type t);
bool satisfiesKind(Type elementType, ElementKind kind);
llvm::StringRef describeKind(ElementKind kind);

/// Checks the element type of `tensorType` against `kind`; `what` names the
/// operand in the message.
LogicalResult checkElementKind(Type tensorType, ElementKind kind,
                               llvm::StringRef what, EmitErrorFn emitError);

/// torch.promote_types on element types: bool < integers < floats; u8 with
/// i8 gives i16; f16 with bf16 gives f32.
Type promoteElementTypes(Type a, Type b);

/// torch.result_type over tensor operands: operands with dimensions take
/// priority over 0-d ones, which only win when they are of a higher category
/// (e.g. a 0-d f64 with an i64 tensor gives f64, with an f32 tensor gives f32).
Type resultElementType(TypeRange tensorTypes);

/// PyTorch's default floating type (integer true division, int-to-float ops).
Type defaultFloatType(MLIRContext *ctx);

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

/// NumPy broadcasting of two shapes. Fails when two static sizes differ and
/// neither is 1.
LogicalResult broadcastShapes(llvm::ArrayRef<int64_t> a,
                              llvm::ArrayRef<int64_t> b,
                              llvm::SmallVectorImpl<int64_t> &result);

/// "2x?x3" (0-d: "scalar").
std::string formatShape(llvm::ArrayRef<int64_t> shape);

/// Checks 0 <= dim < rank; a 0-d tensor accepts dim 0 (PyTorch wraps scalars).
LogicalResult checkDim(int64_t dim, int64_t rank, llvm::StringRef name,
                       EmitErrorFn emitError);

/// Checks that `dims` is sorted, distinct and every entry a valid dim.
LogicalResult checkDimList(llvm::ArrayRef<int64_t> dims, int64_t rank,
                           llvm::StringRef name, EmitErrorFn emitError);

/// Checks that a spatial attribute has `spatialRank` entries, each >= minValue.
LogicalResult checkSpatialAttr(llvm::ArrayRef<int64_t> values,
                               int64_t spatialRank, int64_t minValue,
                               llvm::StringRef name, EmitErrorFn emitError);

//===----------------------------------------------------------------------===//
// Result rules shared by op classes
//===----------------------------------------------------------------------===//

LogicalResult inferUnaryResult(Value input, ElementKind kind,
                               EmitErrorFn emitError,
                               llvm::SmallVectorImpl<Type> &types);

/// How a binary element-wise op's result element type is found.
enum class BinaryResultRule {
  Promote, ///< result_type of the operands
  Compare, ///< i1, operands compared in their promoted type
  Logical, ///< i1, operands tested for non-zero
};

/// Broadcasts the operands and applies `rule`; `kind` constrains each
/// operand (e.g. sub rejects i1 operands, as PyTorch does).
LogicalResult inferBinaryResult(Value lhs, Value rhs, ElementKind kind,
                                BinaryResultRule rule, EmitErrorFn emitError,
                                llvm::SmallVectorImpl<Type> &types);

/// Element-type rule of a reduction.
enum class ReduceKind {
  Sum,       ///< integers and bools accumulate in i64
  FloatOnly, ///< needs a float operand, keeps its type
  SameType,  ///< keeps the operand's type
  Bool,      ///< any operand, i1 result
};

LogicalResult inferReduceResult(Value input, llvm::ArrayRef<int64_t> dims,
                                bool keepdim, ReduceKind kind,
                                EmitErrorFn emitError,
                                llvm::SmallVectorImpl<Type> &types);

/// The shape after reducing `dims` (with or without keepdim).
llvm::SmallVector<int64_t> reducedShape(llvm::ArrayRef<int64_t> shape,
                                        llvm::ArrayRef<int64_t> dims,
                                        bool keepdim);

/// Output size of a sliding window (convolution / pooling) along one
/// dimension; dynamic in gives dynamic out. Returns nullopt when the window
/// does not fit (non-positive output).
std::optional<int64_t> windowOutputSize(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t padding,
                                        int64_t dilation, bool ceilMode);

/// Length of x[start:end:step] along a dimension of `size` with Python's
/// rules (negative bounds count from the end, then clamp to [0, size]);
/// `normStart` receives the normalised start.
int64_t sliceLength(int64_t size, int64_t start, int64_t end, int64_t step,
                    int64_t *normStart = nullptr);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_TYPERULES_H
