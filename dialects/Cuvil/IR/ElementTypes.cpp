//===- ElementTypes.cpp - Cuvil's dtypes as MLIR element types ------------===//
#include "dialects/Cuvil/IR/ElementTypes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::cuvil {

using ::cuvil::DType;

Type elementTypeOf(MLIRContext *ctx, DType d) {
  switch (d) {
  case DType::Bool: return IntegerType::get(ctx, 1);
  case DType::UInt8: return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case DType::Int8: return IntegerType::get(ctx, 8);
  case DType::Int16: return IntegerType::get(ctx, 16);
  case DType::Int32: return IntegerType::get(ctx, 32);
  case DType::Int64: return IntegerType::get(ctx, 64);
  case DType::Float16: return Float16Type::get(ctx);
  case DType::BFloat16: return BFloat16Type::get(ctx);
  case DType::Float32: return Float32Type::get(ctx);
  case DType::Float64: return Float64Type::get(ctx);
  case DType::Complex64:
  case DType::Complex128:
    return {};
  }
  return {};
}

std::optional<DType> dtypeOfElementType(Type t) {
  if (auto i = llvm::dyn_cast<IntegerType>(t)) {
    if (i.getWidth() == 1)
      return DType::Bool;
    if (i.isUnsigned())
      return i.getWidth() == 8 ? std::optional<DType>(DType::UInt8) : std::nullopt;
    switch (i.getWidth()) {
    case 8: return DType::Int8;
    case 16: return DType::Int16;
    case 32: return DType::Int32;
    case 64: return DType::Int64;
    default: return std::nullopt;
    }
  }
  if (t.isF16()) return DType::Float16;
  if (t.isBF16()) return DType::BFloat16;
  if (t.isF32()) return DType::Float32;
  if (t.isF64()) return DType::Float64;
  return std::nullopt;
}

} // namespace mlir::cuvil
