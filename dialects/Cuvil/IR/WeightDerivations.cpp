//===- WeightDerivations.cpp - Constants made from weights, as data ------===//
#include "dialects/Cuvil/IR/WeightDerivations.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include <map>

namespace mlir::cuvil {

void WeightDerivations::record(StringRef resourceKey, WeightDerivation how) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_[resourceKey] = std::move(how);
}

std::optional<WeightDerivation> WeightDerivations::lookup(StringRef resourceKey) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = records_.find(resourceKey);
  if (it == records_.end())
    return std::nullopt;
  return it->second;
}

void WeightDerivations::markValueDependent(std::string why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (valueDependence_.empty())
    valueDependence_ = std::move(why);
}

std::string WeightDerivations::valueDependence() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return valueDependence_;
}

void WeightDerivations::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.clear();
  valueDependence_.clear();
}

WeightDerivations *weightDerivations(MLIRContext *ctx) {
  auto *dialect = ctx->getLoadedDialect<CuvilDialect>();
  return dialect ? &dialect->weightDerivations() : nullptr;
}

void recordWeightDerivation(Attribute result, WeightDerivation how) {
  auto resource = llvm::dyn_cast_or_null<DenseResourceElementsAttr>(result);
  if (!resource)
    return;
  if (WeightDerivations *log = weightDerivations(resource.getContext()))
    log->record(resource.getRawHandle().getKey(), std::move(how));
}

namespace {
struct Transforms {
  std::mutex mutex;
  std::map<std::string, std::pair<WeightTransform, bool>, std::less<>> byName;
};
Transforms &transforms() {
  static Transforms t;
  return t;
}
} // namespace

bool registerWeightTransform(llvm::StringRef name, WeightTransform fn, bool concurrent) {
  Transforms &t = transforms();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.byName.emplace(name.str(), std::make_pair(std::move(fn), concurrent));
  return true;
}

const WeightTransform *lookupWeightTransform(llvm::StringRef name, bool *concurrent) {
  Transforms &t = transforms();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.byName.find(name);
  if (it == t.byName.end())
    return nullptr;
  if (concurrent)
    *concurrent = it->second.second;
  return &it->second.first; // map nodes are stable
}

} // namespace mlir::cuvil
