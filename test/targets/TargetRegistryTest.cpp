//===- TargetRegistryTest.cpp - A second user of the target interface -----===//
//
// A test-only target, registered here, exports a model end to end through
// the compile driver: the driver reaches it by name, calls its hooks in
// order (check, lowering, code, link), and the library it links runs and
// computes the right answer. The target delegates its work to the x86_64
// backend, so what is proven is the interface and the registry, not a new
// code generator. Also: the built-in targets are registered by name, and an
// unknown name is a usage error that lists them.
//
//===----------------------------------------------------------------------===//
#include "cuvil-run/LibraryRunner.h"
#include "passes/InitAll.h"
#include "driver/CompileDriver.h"
#include "targets/Target.h"
#include "targets/Targets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::cuvil;

namespace {

std::vector<std::string> &hookLog() {
  static std::vector<std::string> log;
  return log;
}

/// Delegates to x86_64, recording each hook the driver calls.
class RecordingBackend final : public TargetBackend {
public:
  explicit RecordingBackend(std::unique_ptr<TargetBackend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return "test_cpu"; }
  std::string cpu() const override { return inner_->cpu(); }
  std::vector<std::string> requiredFeatures() const override { return inner_->requiredFeatures(); }
  std::vector<std::string> cacheKeyParts() const override { return inner_->cacheKeyParts(); }
  std::vector<std::string> cacheKeyFiles() const override { return inner_->cacheKeyFiles(); }
  ::cuvil::Status checkModel(func::FuncOp entry) const override {
    hookLog().push_back("check:" + entry.getSymName().str());
    return inner_->checkModel(entry);
  }
  void buildKernelChoicePipeline(OpPassManager &pm) const override {
    hookLog().push_back("choose");
    inner_->buildKernelChoicePipeline(pm);
  }
  llvm::json::Array kernelReport(ModuleOp module) const override {
    hookLog().push_back("report");
    return inner_->kernelReport(module);
  }
  void buildLoweringPipeline(OpPassManager &pm) const override {
    hookLog().push_back("lower");
    inner_->buildLoweringPipeline(pm);
  }
  ::cuvil::Result<std::string> emitCode(llvm::Module &module, CodeKind kind) const override {
    hookLog().push_back(kind == CodeKind::Object ? "emit:object" : "emit:assembly");
    return inner_->emitCode(module, kind);
  }
  ::cuvil::Status extractWeights(ModuleOp module, WeightsTable &table) const override {
    hookLog().push_back("weights");
    return inner_->extractWeights(module, table);
  }
  ::cuvil::Result<std::string> emitWeights(const WeightsTable &table) const override {
    return inner_->emitWeights(table);
  }
  ::cuvil::Result<std::string> combineObjects(const std::vector<std::string> &objects,
                                              const std::string &nextTo) const override {
    return inner_->combineObjects(objects, nextTo);
  }
  ::cuvil::Status link(const std::vector<std::string> &objects, const std::string &path,
                       const LinkOptions &options) const override {
    hookLog().push_back("link");
    return inner_->link(objects, path, options);
  }

private:
  std::unique_ptr<TargetBackend> inner_;
};

void registerTestTarget() {
  registerAllTargets();
  TargetInfo info;
  info.name = "test_cpu";
  info.description = "a test target (x86_64 underneath)";
  info.registerDialects = lookupTarget("x86_64")->registerDialects;
  info.create = [](const TargetOptions &options) -> ::cuvil::Result<std::unique_ptr<TargetBackend>> {
    auto inner = createTargetBackend("x86_64", options);
    if (!inner)
      return inner.error();
    return std::unique_ptr<TargetBackend>(std::make_unique<RecordingBackend>(std::move(*inner)));
  };
  registerTarget(std::move(info));
}

const char *kModel = R"mlir(
func.func @forward(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = cuvil.math.add %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %1 = cuvil.act.relu %0 : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
)mlir";

} // namespace

TEST_CASE("the built-in targets are registered by name", "[targets]") {
  registerAllTargets();
  REQUIRE(lookupTarget("x86_64"));
  REQUIRE(lookupTarget("aarch64"));
  REQUIRE(lookupTarget("npu"));
  CHECK_FALSE(lookupTarget("riscv"));
  auto unknown = createTargetBackend("riscv", {});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ::cuvil::kExitUsageError);
  CHECK(unknown.error().message.find("aarch64, cuda, npu, x86_64") != std::string::npos);
  auto badCpu = createTargetBackend("x86_64", TargetOptions{"pentium9000"});
  REQUIRE_FALSE(badCpu);
  CHECK(badCpu.error().code == ::cuvil::kExitUsageError);
  // The NPU's configurations are its --cpu names; its host is this machine.
  auto npu = createTargetBackend("npu", TargetOptions{"npu-64x64"});
  REQUIRE(npu);
  CHECK((*npu)->name() == "npu");
  CHECK((*npu)->cpu() == "npu-64x64");
  // A device target with a CPU target's code as its fallback: named by both.
  REQUIRE(lookupTarget("cuda"));
  auto cuda = createTargetBackend("cuda", {});
  REQUIRE(cuda);
  CHECK((*cuda)->name() == "cuda");
  CHECK((*cuda)->cpu() == "sm_80,sm_90");
  TargetOptions archs;
  archs.cudaArch = "sm_90,sm_86,sm_90";
  auto both = createTargetBackend("x86_64,cuda", archs);
  REQUIRE(both);
  CHECK((*both)->name() == "x86_64,cuda");
  CHECK((*both)->cpu() == "sm_86,sm_90");
  for (const char *bad : {"aarch64,cuda", "x86_64,aarch64", "cuda,riscv"}) {
    auto refused = createTargetBackend(bad, {});
    REQUIRE_FALSE(refused);
    CHECK(refused.error().code == ::cuvil::kExitUsageError);
  }
  auto badNpu = createTargetBackend("npu", TargetOptions{"npu-7x7"});
  REQUIRE_FALSE(badNpu);
  CHECK(badNpu.error().message.find("npu-32x32, npu-16x16") != std::string::npos);
}

TEST_CASE("a test-only target exports a model end to end through the driver", "[targets]") {
  registerTestTarget();
  REQUIRE(lookupTarget("test_cpu"));
  DialectRegistry registry;
  registerAllDialects(registry);
  registerTargetDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModel, &context);
  REQUIRE(module);

  llvm::SmallString<128> dir;
  REQUIRE_FALSE(llvm::sys::fs::createUniqueDirectory("cuvil-target-test", dir));
  std::string path = std::string(dir) + "/libtest.so";
  CompileOptions options;
  options.target = "test_cpu";
  hookLog().clear();
  auto result = compileModule(*module, options, path);
  REQUIRE(result);
  REQUIRE_FALSE(llvm::sys::fs::rename(result->libraryTempPath, path));
  // One object per code unit (the model function, each kernel, the data).
  std::vector<std::string> hooks = hookLog();
  hooks.erase(std::unique(hooks.begin(), hooks.end()), hooks.end());
  CHECK(hooks == std::vector<std::string>{"check:forward", "choose", "report", "lower", "weights",
                                         "emit:object", "link"});
  CHECK(std::count(hookLog().begin(), hookLog().end(), "emit:object") >= 3);

  auto runner = ::cuvil::LibraryRunner::load(path, 1);
  REQUIRE(runner);
  ::cuvil::Tensor x = ::cuvil::Tensor::fromDoubles(::cuvil::DType::Float32, {2, 3}, {1, -2, 3, -4, 5, -6});
  ::cuvil::Tensor y = ::cuvil::Tensor::fromDoubles(::cuvil::DType::Float32, {3}, {0.5, 1, -1});
  std::vector<::cuvil::Tensor> outputs;
  REQUIRE(runner->run({x, y}, outputs));
  REQUIRE(outputs.size() == 1);
  std::vector<double> want{1.5, 0, 2, 0, 6, 0};
  CHECK(outputs[0].toDoubles() == want);
  llvm::sys::fs::remove_directories(dir);
}

// The LLVM back ends under Cuvil's targets are linked and register
// themselves; the others' initialisers are cmake/UnusedLLVMTargets.cpp's
// empty ones, which register nothing.
extern "C" {
void LLVMInitializeX86TargetInfo();
void LLVMInitializeX86Target();
void LLVMInitializeAArch64TargetInfo();
void LLVMInitializeAArch64Target();
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeRISCVTargetInfo();
void LLVMInitializeRISCVTarget();
}

TEST_CASE("the LLVM back ends of Cuvil's targets are linked, the others are not", "[targets]") {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeAArch64TargetInfo();
  LLVMInitializeAArch64Target();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeRISCVTargetInfo();
  LLVMInitializeRISCVTarget();
  for (const char *triple : {"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu", "nvptx64-nvidia-cuda"}) {
    std::string error;
    CHECK(llvm::TargetRegistry::lookupTarget(triple, error));
  }
  std::string error;
  CHECK_FALSE(llvm::TargetRegistry::lookupTarget("riscv64-unknown-linux-gnu", error));
}
