//===- BadPlugins.cpp - Pass plugins that must be refused or reported -----===//
//
// Built once per case (test/plugins/CMakeLists.txt defines which): each
// plugin gets one thing wrong, and the tools must refuse it or report its
// pass by name, never crash.
//
//===----------------------------------------------------------------------===//
#include "cuvil/Plugin.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace {

using namespace mlir;

/// Fails, or (BREAK_IR) leaves a function whose return does not match its
/// type.
struct BadPass : PassWrapper<BadPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BadPass)
  StringRef getArgument() const override { return "test-bad-pass"; }
  void runOnOperation() override {
#if defined(CASE_FAILS)
    getOperation().emitError() << "the test pass refuses this function";
    signalPassFailure();
#elif defined(CASE_BREAKS_IR)
    getOperation().walk([](func::ReturnOp ret) { ret->setOperands({}); });
#endif
  }
};

struct ModulePass : PassWrapper<ModulePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ModulePass)
  StringRef getArgument() const override { return "test-module-pass"; }
  void runOnOperation() override {}
};

[[maybe_unused]] void registerBad() {
  cuvil::plugin::PipelinePass p;
  p.name = "test-bad";
  p.phase = cuvil::plugin::Phase::GraphOptimization;
  p.priority = 50;
  p.description = "a pass the tests expect to be refused or reported";
  p.factory = [] { return std::make_unique<BadPass>(); };
#if defined(CASE_NAME_CLASH)
  p.name = "fusion";
#elif defined(CASE_BAD_PHASE)
  p.phase = static_cast<cuvil::plugin::Phase>(7);
#elif defined(CASE_BAD_PRIORITY)
  p.priority = 150;
#elif defined(CASE_MODULE_PASS)
  p.factory = [] { return std::make_unique<ModulePass>(); };
#endif
#if !defined(CASE_NO_PASSES)
  cuvil::plugin::registerPass(p);
#endif
}

} // namespace

#if defined(CASE_OLD_API)
// What a plugin built for an earlier plugin API defines.
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT const ::cuvil::plugin::PluginAbi cuvil_plugin_abi = {
    0, LLVM_VERSION_STRING, CUVIL_VERSION_STRING};
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT ::mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "old", "0", registerBad};
}
#elif defined(CASE_OTHER_LLVM)
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT const ::cuvil::plugin::PluginAbi cuvil_plugin_abi = {
    CUVIL_PLUGIN_API_VERSION, "18.1.8", CUVIL_VERSION_STRING};
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT ::mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "other-llvm", "0", registerBad};
}
#elif defined(CASE_MLIR_ONLY)
// A plain MLIR pass plugin, not a Cuvil one.
extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT ::mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "mlir-only", "0", [] {}};
}
#else
CUVIL_PLUGIN("test-bad-plugin", "0", registerBad)
#endif
