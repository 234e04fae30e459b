//===- HostedBackend.h - A device target over a CPU host's backend -*- C++ -*-===//
//
// The npu and cuda targets compile the host's side of a model (the calls
// that drive the device, whatever stays on the CPU) with a CPU target's
// backend and add their own passes. This base forwards everything else to
// that host backend.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_HOSTEDBACKEND_H
#define CUVIL_TARGETS_HOSTEDBACKEND_H

#include "targets/Target.h"

namespace mlir::cuvil {

class HostedBackend : public TargetBackend {
public:
  explicit HostedBackend(std::unique_ptr<TargetBackend> host) : host_(std::move(host)) {}

  std::vector<std::string> requiredFeatures() const override { return host_->requiredFeatures(); }
  std::vector<std::string> cacheKeyFiles() const override { return host_->cacheKeyFiles(); }
  ::cuvil::Status checkModel(func::FuncOp entry) const override { return host_->checkModel(entry); }
  void buildKernelChoicePipeline(OpPassManager &pm) const override { host_->buildKernelChoicePipeline(pm); }
  llvm::json::Array kernelReport(ModuleOp module) const override { return host_->kernelReport(module); }
  bool hasWeightsTable() const override { return host_->hasWeightsTable(); }
  ::cuvil::Status extractWeights(ModuleOp module, WeightsTable &table) const override {
    return host_->extractWeights(module, table);
  }
  ::cuvil::Result<std::string> emitWeights(const WeightsTable &table) const override {
    return host_->emitWeights(table);
  }
  ::cuvil::Result<std::string> emitCode(llvm::Module &module, CodeKind kind) const override {
    return host_->emitCode(module, kind);
  }
  ::cuvil::Result<std::string> combineObjects(const std::vector<std::string> &objects,
                                              const std::string &nextTo) const override {
    return host_->combineObjects(objects, nextTo);
  }
  ::cuvil::Status link(const std::vector<std::string> &objects, const std::string &path,
                       const LinkOptions &options) const override {
    return host_->link(objects, path, options);
  }
  ::cuvil::Status placeWeights(llvm::StringRef image, const WeightsTable &table,
                               const std::string &path) const override {
    return host_->placeWeights(image, table, path);
  }

protected:
  const TargetBackend &host() const { return *host_; }

private:
  std::unique_ptr<TargetBackend> host_;
};

} // namespace mlir::cuvil

#endif // CUVIL_TARGETS_HOSTEDBACKEND_H
