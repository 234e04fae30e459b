//===- TypeRules.cpp - Shape and element-type rules of cuvil ops ----------===//
#include "dialects/Cuvil/IR/TypeRules.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil {

InFlightDiagnostic emitOptionalOpError(std::optional<Location> loc,
                                       llvm::StringRef opName) {
  if (!loc)
    return InFlightDiagnostic();
  InFlightDiagnostic diag = mlir::emitError(*loc);
  diag << "'" << opName << "' op ";
  return diag;
}

bool areCompatibleShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  if (a.size() != b.size())
    return false;
  for (auto [x, y] : llvm::zip(a, b))
    if (x != y && !ShapedType::isDynamic(x) && !ShapedType::isDynamic(y))
      return false;
  return true;
}

bool areCompatibleResultTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, actual)) {
    if (a == b)
      continue;
    auto ta = llvm::dyn_cast<RankedTensorType>(a);
    auto tb = llvm::dyn_cast<RankedTensorType>(b);
    if (!ta || !tb || ta.getElementType() != tb.getElementType() ||
        !areCompatibleShapes(ta.getShape(), tb.getShape()))
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

bool isBoolElement(Type t) { return t.isInteger(1); }
bool isIntegerElement(Type t) {
  auto i = llvm::dyn_cast<IntegerType>(t);
  return i && i.getWidth() > 1;
}
bool isFloatElement(Type t) { return llvm::isa<FloatType>(t); }

bool satisfiesKind(Type t, ElementKind kind) {
  switch (kind) {
  case ElementKind::Any:
    return true;
  case ElementKind::Numeric:
    return !isBoolElement(t);
  case ElementKind::Float:
    return isFloatElement(t);
  case ElementKind::IntegerOrBool:
    return isBoolElement(t) || isIntegerElement(t);
  }
  return false;
}

llvm::StringRef describeKind(ElementKind kind) {
  switch (kind) {
  case ElementKind::Any:
    return "any element type";
  case ElementKind::Numeric:
    return "a numeric (non-i1) element type";
  case ElementKind::Float:
    return "a floating-point element type (cast integer tensors with "
           "cuvil.tensor.cast)";
  case ElementKind::IntegerOrBool:
    return "an integer or i1 element type";
  }
  return "";
}

LogicalResult checkElementKind(Type tensorType, ElementKind kind,
                               llvm::StringRef what, EmitErrorFn emitError) {
  Type elt = llvm::cast<ShapedType>(tensorType).getElementType();
  if (satisfiesKind(elt, kind))
    return success();
  return emitError() << what << " must have " << describeKind(kind)
                     << ", got " << tensorType;
}

namespace {
/// Position in the integer ladder; unsigned 8-bit sits beside i8.
unsigned intWidth(Type t) { return llvm::cast<IntegerType>(t).getWidth(); }
} // namespace

Type promoteElementTypes(Type a, Type b) {
  if (a == b)
    return a;
  if (isBoolElement(a))
    return b;
  if (isBoolElement(b))
    return a;
  MLIRContext *ctx = a.getContext();
  bool fa = isFloatElement(a), fb = isFloatElement(b);
  if (fa && fb) {
    auto wa = a.getIntOrFloatBitWidth(), wb = b.getIntOrFloatBitWidth();
    if (wa == wb) // f16 with bf16
      return Float32Type::get(ctx);
    return wa > wb ? a : b;
  }
  if (fa)
    return a;
  if (fb)
    return b;
  // Both integers of different types.
  bool ua = a.isUnsignedInteger(), ub = b.isUnsignedInteger();
  if (ua != ub) {
    // ui8 with a signed type: the signed type if wider, else i16.
    Type s = ua ? b : a;
    return intWidth(s) > 8 ? s : IntegerType::get(ctx, 16);
  }
  return intWidth(a) > intWidth(b) ? a : b;
}

Type resultElementType(TypeRange tensorTypes) {
  Type dimResult, zeroResult;
  for (Type t : tensorTypes) {
    auto shaped = llvm::cast<ShapedType>(t);
    Type &slot = shaped.getRank() == 0 ? zeroResult : dimResult;
    slot = slot ? promoteElementTypes(slot, shaped.getElementType())
                : shaped.getElementType();
  }
  if (!dimResult)
    return zeroResult;
  if (!zeroResult || isFloatElement(dimResult))
    return dimResult;
  // c10's combine_categories: a lower-priority operand only matters when it
  // is of a higher category.
  if (isBoolElement(dimResult) || isFloatElement(zeroResult))
    return promoteElementTypes(dimResult, zeroResult);
  return dimResult;
}

Type defaultFloatType(MLIRContext *ctx) { return Float32Type::get(ctx); }

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

LogicalResult broadcastShapes(llvm::ArrayRef<int64_t> a,
                              llvm::ArrayRef<int64_t> b,
                              llvm::SmallVectorImpl<int64_t> &result) {
  size_t rank = std::max(a.size(), b.size());
  result.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x == y || y == 1) {
      result[i] = x;
    } else if (x == 1) {
      result[i] = y;
    } else if (ShapedType::isDynamic(x)) {
      result[i] = y; // a dynamic size must equal y (or be 1) at run time
    } else if (ShapedType::isDynamic(y)) {
      result[i] = x;
    } else {
      return failure();
    }
  }
  return success();
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return os.str();
}

LogicalResult checkDim(int64_t dim, int64_t rank, llvm::StringRef name,
                       EmitErrorFn emitError) {
  int64_t limit = std::max<int64_t>(rank, 1);
  if (dim >= 0 && dim < limit)
    return success();
  return emitError() << name << " " << dim << " is out of range for rank "
                     << rank << " (expected 0 <= " << name << " < " << limit
                     << "; negative dims are normalised by the importer)";
}

LogicalResult checkDimList(llvm::ArrayRef<int64_t> dims, int64_t rank,
                           llvm::StringRef name, EmitErrorFn emitError) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (failed(checkDim(dims[i], rank, name, emitError)))
      return failure();
    if (i > 0 && dims[i] <= dims[i - 1])
      return emitError() << name << " must be sorted and distinct, got ["
                         << dims << "]";
  }
  return success();
}

LogicalResult checkSpatialAttr(llvm::ArrayRef<int64_t> values,
                               int64_t spatialRank, int64_t minValue,
                               llvm::StringRef name, EmitErrorFn emitError) {
  if (static_cast<int64_t>(values.size()) != spatialRank)
    return emitError() << name << " needs " << spatialRank
                       << " entries (one per spatial dimension), got "
                       << values.size();
  for (int64_t v : values)
    if (v < minValue)
      return emitError() << name << " entries must be >= " << minValue
                         << ", got [" << values << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// Result rules
//===----------------------------------------------------------------------===//

LogicalResult inferUnaryResult(Value input, ElementKind kind,
                               EmitErrorFn emitError,
                               llvm::SmallVectorImpl<Type> &types) {
  if (failed(checkElementKind(input.getType(), kind, "operand", emitError)))
    return failure();
  types.push_back(input.getType());
  return success();
}

LogicalResult inferBinaryResult(Value lhs, Value rhs, ElementKind kind,
                                BinaryResultRule rule, EmitErrorFn emitError,
                                llvm::SmallVectorImpl<Type> &types) {
  auto lt = llvm::cast<RankedTensorType>(lhs.getType());
  auto rt = llvm::cast<RankedTensorType>(rhs.getType());
  llvm::SmallVector<int64_t> shape;
  if (failed(broadcastShapes(lt.getShape(), rt.getShape(), shape)))
    return emitError() << "operand shapes " << formatShape(lt.getShape())
                       << " and " << formatShape(rt.getShape())
                       << " do not broadcast";
  // Each operand must satisfy the kind (PyTorch rejects `bool - int`, not
  // just `bool - bool`).
  if (failed(checkElementKind(lt, kind, "lhs", emitError)) ||
      failed(checkElementKind(rt, kind, "rhs", emitError)))
    return failure();
  Type promoted = resultElementType({lt, rt});
  Type elt = promoted;
  MLIRContext *ctx = lhs.getContext();
  switch (rule) {
  case BinaryResultRule::Promote:
    break;
  case BinaryResultRule::Compare:
  case BinaryResultRule::Logical:
    elt = IntegerType::get(ctx, 1);
    break;
  }
  types.push_back(RankedTensorType::get(shape, elt));
  return success();
}

llvm::SmallVector<int64_t> reducedShape(llvm::ArrayRef<int64_t> shape,
                                        llvm::ArrayRef<int64_t> dims,
                                        bool keepdim) {
  llvm::SmallVector<int64_t> out;
  for (int64_t i = 0, e = shape.size(); i < e; ++i) {
    if (llvm::is_contained(dims, i)) {
      if (keepdim)
        out.push_back(1);
    } else {
      out.push_back(shape[i]);
    }
  }
  return out;
}

LogicalResult inferReduceResult(Value input, llvm::ArrayRef<int64_t> dims,
                                bool keepdim, ReduceKind kind,
                                EmitErrorFn emitError,
                                llvm::SmallVectorImpl<Type> &types) {
  auto it = llvm::cast<RankedTensorType>(input.getType());
  if (failed(checkDimList(dims, it.getRank(), "dims", emitError)))
    return failure();
  Type elt = it.getElementType();
  MLIRContext *ctx = input.getContext();
  switch (kind) {
  case ReduceKind::Sum:
    if (!isFloatElement(elt))
      elt = IntegerType::get(ctx, 64);
    break;
  case ReduceKind::FloatOnly:
    if (failed(checkElementKind(it, ElementKind::Float, "operand", emitError)))
      return failure();
    break;
  case ReduceKind::SameType:
    break;
  case ReduceKind::Bool:
    elt = IntegerType::get(ctx, 1);
    break;
  }
  types.push_back(
      RankedTensorType::get(reducedShape(it.getShape(), dims, keepdim), elt));
  return success();
}

std::optional<int64_t> windowOutputSize(int64_t in, int64_t kernel,
                                        int64_t stride, int64_t padding,
                                        int64_t dilation, bool ceilMode) {
  if (ShapedType::isDynamic(in))
    return ShapedType::kDynamic;
  int64_t span = in + 2 * padding - dilation * (kernel - 1) - 1;
  if (span < 0)
    return std::nullopt;
  int64_t numer = span + (ceilMode ? stride - 1 : 0);
  int64_t out = numer / stride + 1; // numer >= 0: division rounds down
  // With ceil_mode the last window must start inside the input or the left
  // padding (PyTorch's pooling_output_shape).
  if (ceilMode && (out - 1) * stride >= in + padding)
    --out;
  return out;
}

int64_t sliceLength(int64_t size, int64_t start, int64_t end, int64_t step,
                    int64_t *normStart) {
  auto normalise = [size](int64_t v) {
    if (v < 0)
      v = v < -size ? 0 : v + size;
    return std::min(v, size);
  };
  int64_t s = normalise(start), e = normalise(end);
  if (normStart)
    *normStart = s;
  return e > s ? (e - s - 1) / step + 1 : 0;
}

} // namespace mlir::cuvil
