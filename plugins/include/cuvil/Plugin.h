//===- cuvil/Plugin.h - Cuvil pass plugins ------------------------*- C++ -*-===//
//
// A Cuvil pass plugin is a shared library that adds passes to the graph
// pipeline of cuvil-opt and cuvil-export (`--load-pass-plugin LIB.so`), each
// with a name, the phase it belongs to, a priority that places it among the
// built-in steps of that phase, and a constraint that says when it applies:
//
//   #include "cuvil/Plugin.h"
//
//   static void registerMyPasses() {
//     cuvil::plugin::PipelinePass r;
//     r.name = "my-lowering";
//     r.phase = cuvil::plugin::Phase::GraphOptimization;
//     r.priority = 85;
//     r.description = "lowers silu for my hardware";
//     r.constraint = cuvil::plugin::hasOp("cuvil.act.silu") && cuvil::plugin::dtypesIn({"f16", "f32"});
//     r.factory = [] { return std::make_unique<MyPass>(); };
//     cuvil::plugin::registerPass(r);
//   }
//   CUVIL_PLUGIN("my-plugin", "1.0", registerMyPasses)
//
// The pass runs on each func.func of the model (an OperationPass<func::FuncOp>
// or one for any op); where its constraint does not hold it is skipped with a
// remark naming the constraint. Plugins are built against the installed SDK
// (find_package(Cuvil) and cuvil_add_pass_plugin) and take their MLIR from the
// tool that loads them, so they must be built for its Cuvil and MLIR versions:
// the loader refuses any other before running plugin code.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PLUGIN_H
#define CUVIL_PLUGIN_H

#include "cuvil/PluginConfig.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

/// Bumped whenever a type below changes layout or meaning.
#define CUVIL_PLUGIN_API_VERSION 1

namespace cuvil::plugin {

/// The graph pipeline's phases, in order (`--cuvil-print-pipeline` lists them
/// with their built-in steps and priorities).
enum class Phase : int { Cleanup, ShapePropagation, GraphOptimization, Fusion, MemoryPlanning };

/// What a constraint is asked about: the function the pass is about to run
/// on and the target being compiled for ("x86_64", "aarch64"; empty in
/// cuvil-opt unless its pipeline is given `target=`).
struct ConstraintContext {
  mlir::Operation *function = nullptr;
  std::string target;
};

/// A named predicate. `holds` answers for a context; `description` says what
/// it requires, in the remark of a skipped pass.
struct Constraint {
  std::string description;
  std::function<bool(const ConstraintContext &)> holds;

  /// The description of the first part of this constraint that fails in
  /// `context`, or an empty string when it holds.
  std::string whyNot(const ConstraintContext &context) const {
    return holds(context) ? std::string() : description;
  }
};

/// Always true (a pass without a constraint).
inline Constraint always() {
  return {"always", [](const ConstraintContext &) { return true; }};
}

namespace detail {
/// Every ranked tensor type among `op`'s operands and results.
template <typename Fn> void forEachTensorType(mlir::Operation *function, Fn fn) {
  function->walk([&](mlir::Operation *op) {
    for (mlir::Type t : op->getOperandTypes())
      if (auto r = llvm::dyn_cast<mlir::RankedTensorType>(t))
        fn(r);
    for (mlir::Type t : op->getResultTypes())
      if (auto r = llvm::dyn_cast<mlir::RankedTensorType>(t))
        fn(r);
  });
}
/// "f32", "f16", "bf16", "i8", "ui8", ... as MLIR prints the element type.
inline std::string typeName(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return os.str();
}
} // namespace detail

/// Some tensor in the function has a dimension known only at run time.
inline Constraint hasDynamicShapes() {
  return {"has dynamic shapes", [](const ConstraintContext &c) {
            bool dynamic = false;
            detail::forEachTensorType(c.function, [&](mlir::RankedTensorType t) { dynamic |= !t.hasStaticShape(); });
            return dynamic;
          }};
}

/// The function holds an op named `name` ("cuvil.act.silu").
inline Constraint hasOp(std::string name) {
  return {"has an op " + name, [name](const ConstraintContext &c) {
            bool found = false;
            c.function->walk([&](mlir::Operation *op) {
              if (op->getName().getStringRef() == name) {
                found = true;
                return mlir::WalkResult::interrupt();
              }
              return mlir::WalkResult::advance();
            });
            return found;
          }};
}

/// Every floating-point tensor in the function has one of these element
/// types ({"f16", "f32"}).
inline Constraint dtypesIn(std::vector<std::string> dtypes) {
  std::string list;
  for (const std::string &d : dtypes)
    list += (list.empty() ? "" : ", ") + d;
  return {"float tensors only of " + list, [dtypes](const ConstraintContext &c) {
            bool ok = true;
            detail::forEachTensorType(c.function, [&](mlir::RankedTensorType t) {
              if (llvm::isa<mlir::FloatType>(t.getElementType()))
                ok &= std::find(dtypes.begin(), dtypes.end(), detail::typeName(t.getElementType())) != dtypes.end();
            });
            return ok;
          }};
}

/// The model is compiled for `name` ("x86_64", "aarch64").
inline Constraint target(std::string name) {
  return {"target " + name, [name](const ConstraintContext &c) { return c.target == name; }};
}

inline Constraint operator&&(Constraint a, Constraint b) {
  std::string d = "(" + a.description + ") and (" + b.description + ")";
  return {d, [a, b](const ConstraintContext &c) { return a.holds(c) && b.holds(c); }};
}
inline Constraint operator||(Constraint a, Constraint b) {
  std::string d = "(" + a.description + ") or (" + b.description + ")";
  return {d, [a, b](const ConstraintContext &c) { return a.holds(c) || b.holds(c); }};
}
inline Constraint operator!(Constraint a) {
  std::string d = "not (" + a.description + ")";
  return {d, [a](const ConstraintContext &c) { return !a.holds(c); }};
}

/// One pass of a plugin, as it joins the graph pipeline.
struct PipelinePass {
  /// The step's switch name (what --disable-optimization takes); unique
  /// among the built-in steps and every loaded plugin's.
  std::string name;
  Phase phase = Phase::GraphOptimization;
  /// Its place in the phase, 1..99, lowest first (a built-in step of the
  /// same priority runs before it).
  int priority = 50;
  /// One line for --cuvil-print-pipeline.
  std::string description;
  Constraint constraint = always();
  /// A new instance of the pass for each pipeline built.
  std::function<std::unique_ptr<mlir::Pass>()> factory;
};

/// What a plugin was built against, checked by the loader before it runs
/// any plugin code (CUVIL_PLUGIN defines it).
struct PluginAbi {
  int apiVersion;
  const char *llvmVersion;
  const char *cuvilVersion;
};

namespace detail {
/// Implemented by the tool that loads the plugin: adds the pass to the
/// pipeline or records why not (a clash of names, a bad phase or priority).
bool registerPassWithTool(const PipelinePass &registration, int apiVersion);
} // namespace detail

/// Adds a pass to the graph pipeline of the tool that loads this plugin;
/// call it from the plugin's registration function. False when the tool
/// refused it (it reports why and fails the load).
inline bool registerPass(const PipelinePass &registration) {
  return detail::registerPassWithTool(registration, CUVIL_PLUGIN_API_VERSION);
}

} // namespace cuvil::plugin

/// Defines the plugin's entry points: MLIR's (mlirGetPassPluginInfo, which
/// calls REGISTER, a `void()` function) and the versions it was built
/// against.
#define CUVIL_PLUGIN(NAME, VERSION, REGISTER)                                                           \
  extern "C" LLVM_ATTRIBUTE_VISIBILITY_DEFAULT const ::cuvil::plugin::PluginAbi cuvil_plugin_abi = {     \
      CUVIL_PLUGIN_API_VERSION, LLVM_VERSION_STRING, CUVIL_VERSION_STRING};                              \
  extern "C" LLVM_ATTRIBUTE_WEAK LLVM_ATTRIBUTE_VISIBILITY_DEFAULT ::mlir::PassPluginLibraryInfo           \
  mlirGetPassPluginInfo() {                                                                              \
    return {MLIR_PLUGIN_API_VERSION, NAME, VERSION, REGISTER};                                           \
  }

#endif // CUVIL_PLUGIN_H
