//===- PluginRegistry.cpp - Loaded pass plugins and their steps -----------===//
#include "plugins/PluginRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace cuvil::plugin {
namespace {

struct Registry {
  std::vector<PluginStep> steps;
  std::set<std::string> reserved;
  /// While a plugin's registration function runs: its file and the first
  /// problem with what it registered.
  const std::string *loadingPath = nullptr;
  std::string loadingName;
  std::string problem;
  size_t registeredByLoading = 0;
};

Registry &registry() {
  static Registry r;
  return r;
}

std::string baseName(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const char *phaseText(Phase p) {
  switch (p) {
  case Phase::Cleanup: return "cleanup";
  case Phase::ShapePropagation: return "shape-propagation";
  case Phase::GraphOptimization: return "graph-optimization";
  case Phase::Fusion: return "fusion";
  case Phase::MemoryPlanning: return "memory-planning";
  }
  return nullptr;
}

} // namespace

const std::vector<PluginStep> &pluginSteps() { return registry().steps; }

void setReservedStepNames(std::set<std::string> names) { registry().reserved = std::move(names); }

namespace detail {

bool registerPassWithTool(const PipelinePass &reg, int apiVersion) {
  Registry &r = registry();
  auto refuse = [&](const std::string &why) {
    if (r.problem.empty())
      r.problem = "pass '" + reg.name + "': " + why;
    return false;
  };
  if (!r.loadingPath)
    return refuse("registered outside a plugin's registration function");
  if (apiVersion != CUVIL_PLUGIN_API_VERSION)
    return refuse("built for plugin API " + std::to_string(apiVersion) + ", this tool has " +
                  std::to_string(CUVIL_PLUGIN_API_VERSION));
  if (reg.name.empty())
    return refuse("has no name");
  for (char c : reg.name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return refuse("the name may hold letters, digits, '-', '_' and '.' only");
  if (r.reserved.count(reg.name))
    return refuse("a built-in step of the graph pipeline has that name");
  for (const PluginStep &s : r.steps)
    if (s.registration.name == reg.name)
      return refuse("plugin '" + s.plugin + "' registered that name already");
  if (!phaseText(reg.phase))
    return refuse("phase " + std::to_string(static_cast<int>(reg.phase)) +
                  " does not exist (cleanup, shape-propagation, graph-optimization, fusion, "
                  "memory-planning)");
  if (reg.priority < 1 || reg.priority > 99)
    return refuse("priority " + std::to_string(reg.priority) + " is outside 1..99");
  if (!reg.factory)
    return refuse("has no factory");
  if (!reg.constraint.holds)
    return refuse("has a constraint without a predicate");
  std::unique_ptr<mlir::Pass> probe = reg.factory();
  if (!probe)
    return refuse("its factory returned no pass");
  if (std::optional<llvm::StringRef> on = probe->getOpName(); on && *on != "func.func")
    return refuse("runs on '" + on->str() + "'; graph pipeline passes run on func.func (or any op)");
  r.steps.push_back({reg, baseName(*r.loadingPath), *r.loadingPath});
  ++r.registeredByLoading;
  return true;
}

} // namespace detail

bool loadPlugin(const std::string &path, std::string &error, int &exitCode) {
  exitCode = 1;
  auto fail = [&](const std::string &why) {
    error = "pass plugin '" + path + "': " + why;
    return false;
  };
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    exitCode = 3;
    return fail(std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    exitCode = 3;
    return fail("not a regular file");
  }
  // Resolve every symbol now: a plugin built against another MLIR or Cuvil
  // names symbols this tool lacks, which must fail here, not mid-pipeline.
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = ::dlerror();
    std::string text = why ? why : "cannot be loaded";
    if (text.find("undefined symbol") != std::string::npos)
      text += " (built against another Cuvil or MLIR than this tool's, or using a part of MLIR the "
              "tool does not include)";
    return fail(text);
  }
  auto *abi = static_cast<const PluginAbi *>(::dlsym(handle, "cuvil_plugin_abi"));
  using InfoFn = mlir::PassPluginLibraryInfo (*)();
  auto info = reinterpret_cast<InfoFn>(::dlsym(handle, "mlirGetPassPluginInfo"));
  if (!abi || !info) {
    ::dlclose(handle);
    return fail("not a Cuvil pass plugin (it defines no " +
                std::string(!abi ? "cuvil_plugin_abi" : "mlirGetPassPluginInfo") +
                "; build it with CUVIL_PLUGIN from cuvil/Plugin.h)");
  }
  auto text = [](const char *s) { return std::string(s ? s : "?"); };
  if (abi->apiVersion != CUVIL_PLUGIN_API_VERSION)
    return fail("built for Cuvil plugin API " + std::to_string(abi->apiVersion) + "; this tool takes " +
                std::to_string(CUVIL_PLUGIN_API_VERSION));
  if (text(abi->llvmVersion) != LLVM_VERSION_STRING)
    return fail("built against LLVM/MLIR " + text(abi->llvmVersion) + "; this tool uses " LLVM_VERSION_STRING);
  if (text(abi->cuvilVersion) != CUVIL_VERSION_STRING)
    return fail("built against Cuvil " + text(abi->cuvilVersion) + "; this tool is Cuvil " CUVIL_VERSION_STRING);
  mlir::PassPluginLibraryInfo li = info();
  if (li.apiVersion != MLIR_PLUGIN_API_VERSION)
    return fail("MLIR plugin API " + std::to_string(li.apiVersion) + ", expected " +
                std::to_string(MLIR_PLUGIN_API_VERSION));
  if (!li.registerPassRegistryCallbacks)
    return fail("has no registration function");

  Registry &r = registry();
  size_t before = r.steps.size();
  r.loadingPath = &path;
  r.loadingName = text(li.pluginName);
  r.problem.clear();
  r.registeredByLoading = 0;
  li.registerPassRegistryCallbacks();
  r.loadingPath = nullptr;
  if (r.problem.empty() && r.registeredByLoading == 0)
    r.problem = "registered no pass (cuvil::plugin::registerPass)";
  if (!r.problem.empty()) {
    r.steps.resize(before); // nothing of a refused plugin stays
    return fail("plugin '" + r.loadingName + "': " + r.problem);
  }
  // The library stays loaded for the process's life: its passes run later.
  return true;
}

bool loadPluginsFromCommandLine(std::vector<char *> &args, std::string &error, int &exitCode) {
  static const std::string flag = "--load-pass-plugin", shortFlag = "-load-pass-plugin";
  std::vector<char *> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i] ? args[i] : "";
    std::string path;
    bool matched = false;
    for (const std::string &f : {flag, shortFlag}) {
      if (a == f) {
        if (i + 1 >= args.size()) {
          error = f + " needs a library path";
          exitCode = 2;
          return false;
        }
        path = args[++i];
        matched = true;
      } else if (a.rfind(f + "=", 0) == 0) {
        path = a.substr(f.size() + 1);
        matched = true;
      }
      if (matched)
        break;
    }
    if (!matched) {
      kept.push_back(args[i]);
      continue;
    }
    if (!loadPlugin(path, error, exitCode))
      return false;
  }
  args = std::move(kept);
  return true;
}

namespace {

/// Runs a plugin's pass on one function under its constraint.
class PluginStepPass : public mlir::PassWrapper<PluginStepPass, mlir::OperationPass<mlir::func::FuncOp>> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PluginStepPass)

  PluginStepPass(const PluginStep &step, std::string target)
      : step_(step), target_(std::move(target)), inner_(mlir::func::FuncOp::getOperationName()) {
    inner_.addPass(step_.registration.factory());
  }
  PluginStepPass(const PluginStepPass &other)
      : PassWrapper(other), step_(other.step_), target_(other.target_), inner_(other.inner_) {}

  llvm::StringRef getArgument() const override { return "cuvil-plugin-step"; }
  llvm::StringRef getName() const override { return step_.registration.name; }
  llvm::StringRef getDescription() const override { return step_.registration.description; }

  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    inner_.getDependentDialects(registry);
  }

  void runOnOperation() override {
    mlir::func::FuncOp fn = getOperation();
    const PipelinePass &reg = step_.registration;
    std::string who = "plugin pass '" + reg.name + "' (" + step_.plugin + ")";
    ConstraintContext context{fn, target_};
    std::string why = reg.constraint.whyNot(context);
    if (!why.empty()) {
      mlir::emitRemark(fn.getLoc()) << who << " skipped on @" << fn.getSymName() << ": its constraint '" << why
                                    << "' does not hold";
      return;
    }
    if (mlir::failed(runPipeline(inner_, fn))) {
      fn.emitError() << who << " failed on @" << fn.getSymName();
      return signalPassFailure();
    }
    if (mlir::failed(mlir::verify(fn))) {
      fn.emitError() << who << " left invalid IR in @" << fn.getSymName();
      return signalPassFailure();
    }
  }

private:
  const PluginStep &step_;
  std::string target_;
  mlir::OpPassManager inner_;
};

} // namespace

std::unique_ptr<mlir::Pass> createPluginStepPass(const PluginStep &step, std::string target) {
  return std::make_unique<PluginStepPass>(step, std::move(target));
}

} // namespace cuvil::plugin
