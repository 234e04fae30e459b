//===- Target.cpp - The registry of code generators -----------------------===//
#include "targets/Target.h"

#include <algorithm>
#include <mutex>

namespace mlir::cuvil {

TargetBackend::~TargetBackend() = default;

std::string TargetBackend::deviceKey() const { return name() + "/" + cpu(); }

::cuvil::Status TargetBackend::checkModel(func::FuncOp) const { return ::cuvil::Status(); }

void TargetBackend::buildKernelChoicePipeline(OpPassManager &) const {}

llvm::json::Array TargetBackend::kernelReport(ModuleOp) const { return {}; }

uint64_t WeightsTable::totalBytes() const {
  uint64_t n = 0;
  for (const Symbol &s : symbols)
    n += s.bytes.size();
  return n;
}

bool TargetBackend::hasWeightsTable() const { return false; }

::cuvil::Status TargetBackend::extractWeights(ModuleOp, WeightsTable &) const {
  return ::cuvil::Status();
}

::cuvil::Status TargetBackend::placeWeights(llvm::StringRef, const WeightsTable &, const std::string &) const {
  return ::cuvil::inputError("target '" + name() + "' cannot place weights in a linked library");
}

::cuvil::Result<std::string> TargetBackend::emitWeights(const WeightsTable &table) const {
  if (!table.symbols.empty())
    return ::cuvil::inputError("target '" + name() + "' cannot link weights separately");
  return std::string();
}

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::unique_ptr<TargetInfo>> targets;
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

void registerTarget(TargetInfo info) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto &t : r.targets)
    if (t->name == info.name)
      return;
  r.targets.push_back(std::make_unique<TargetInfo>(std::move(info)));
}

const TargetInfo *lookupTarget(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto &t : r.targets)
    if (t->name == name)
      return t.get();
  return nullptr;
}

std::vector<const TargetInfo *> registeredTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<const TargetInfo *> out;
  for (const auto &t : r.targets)
    out.push_back(t.get());
  std::sort(out.begin(), out.end(),
            [](const TargetInfo *a, const TargetInfo *b) { return a->name < b->name; });
  return out;
}

std::string targetNameList() {
  std::string s;
  for (const TargetInfo *t : registeredTargets())
    s += (s.empty() ? "" : ", ") + t->name;
  return s.empty() ? "none registered" : s;
}

::cuvil::Result<std::unique_ptr<TargetBackend>> createTargetBackend(const std::string &name,
                                                                    const TargetOptions &options) {
  if (size_t comma = name.find(','); comma != std::string::npos) {
    std::string a = name.substr(0, comma), b = name.substr(comma + 1);
    const TargetInfo *first = lookupTarget(a), *second = lookupTarget(b);
    for (const std::string &part : {a, b})
      if (!lookupTarget(part))
        return ::cuvil::usageError("unknown target '" + part + "' in '" + name + "' (registered: " +
                                   targetNameList() + "; see --list-targets)");
    const TargetInfo *device = first->createWithHost ? first : second->createWithHost ? second : nullptr;
    const TargetInfo *host = device == first ? second : first;
    if (!device || host->createWithHost)
      return ::cuvil::usageError("--target '" + name + "': one library holds a device target and the CPU target "
                                 "that runs where the device is missing (e.g. x86_64,cuda)");
    return device->createWithHost(options, host->name);
  }
  const TargetInfo *info = lookupTarget(name);
  if (!info)
    return ::cuvil::usageError("unknown target '" + name + "' (registered: " + targetNameList() +
                               "; see --list-targets)");
  return info->create(options);
}

} // namespace mlir::cuvil
