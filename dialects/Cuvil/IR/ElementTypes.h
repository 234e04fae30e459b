//===- ElementTypes.h - Cuvil's dtypes as MLIR element types ----*- C++ -*-===//
//
// The one mapping between the dtypes tools, the evaluator and the runtime
// use (support/DType.h) and the element types of cuvil IR. Integers are
// signless except ui8, which is `ui8` so that the C API can tell it apart;
// complex dtypes have no element type (complex tensors are float pairs in
// the IR, see kComplexAttrName).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_ELEMENTTYPES_H
#define CUVIL_DIALECT_CUVIL_IR_ELEMENTTYPES_H

#include "support/DType.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::cuvil {

/// The element type of `dtype`; null for the complex dtypes.
Type elementTypeOf(MLIRContext *ctx, ::cuvil::DType dtype);
/// The dtype of an element type; nullopt when Cuvil has none (i4, f8, index...).
std::optional<::cuvil::DType> dtypeOfElementType(Type elementType);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_ELEMENTTYPES_H
