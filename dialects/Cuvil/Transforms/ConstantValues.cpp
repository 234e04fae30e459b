//===- ConstantValues.cpp - Reading and naming constants in graph passes --===//
#include "dialects/Cuvil/Transforms/ConstantValues.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

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

bool holdsWeights(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto r = c ? llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue()) : nullptr;
  if (!r || !llvm::isa<FloatType>(r.getType().getElementType()))
    return false;
  AsmResourceBlob *blob = r.getRawHandle().getBlob();
  if (blob && blob->getData().size() >= 64)
    return true;
  WeightDerivations *log = weightDerivations(c->getContext());
  return log && log->lookup(r.getRawHandle().getKey()).has_value();
}

ElementsAttr weightAttrFromTensor(const reference::Tensor &t, RankedTensorType type, StringRef name) {
  if (t.dtype() == ::cuvil::DType::Bool)
    return reference::attrFromTensor(t, type);
  ArrayRef<char> raw(reinterpret_cast<const char *>(t.data()), t.byteSize());
  return DenseResourceElementsAttr::get(type, resourceKey(name), HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64));
}

FailureOr<reference::Tensor> tensorOfBytes(const WeightBytes &in) {
  std::optional<::cuvil::DType> dtype = in.type ? reference::toDType(in.type.getElementType()) : std::nullopt;
  if (!dtype || !in.type.hasStaticShape())
    return failure();
  reference::Tensor t(*dtype, std::vector<int64_t>(in.type.getShape().begin(), in.type.getShape().end()));
  if (t.byteSize() != in.bytes.size())
    return failure();
  std::memcpy(t.data(), in.bytes.data(), in.bytes.size());
  return t;
}

} // namespace mlir::cuvil
