//===- ConstantValues.cpp - Reading and naming constants in graph passes --===//
#include "dialects/Cuvil/Transforms/ConstantValues.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::cuvil {

std::optional<reference::Tensor> constantValue(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  ScopedDiagnosticHandler silence(v.getContext(), [](Diagnostic &) { return success(); });
  FailureOr<reference::Tensor> t = reference::tensorFromAttr(c.getValue(), c.getLoc());
  if (failed(t))
    return std::nullopt;
  return std::move(*t);
}

std::string derivedResourceName(Value from, StringRef suffix, StringRef fallback) {
  if (auto c = from.getDefiningOp<ConstantOp>())
    if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue()))
      return (r.getRawHandle().getKey() + "." + suffix).str();
  return (fallback + "." + suffix).str();
}

} // namespace mlir::cuvil
