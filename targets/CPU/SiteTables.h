//===- SiteTables.h - Named sites the runtime counts -------------*- C++ -*-===//
//
// The instrumentation passes (InstrumentKernels: kernel calls it times;
// CountBranches: arms of the model's branches it counts) number their sites
// and hand the runtime their names: a constant of the names, NUL-separated,
// passed at the entry's start to a `cuvil_rt_*_sites(table, count)` call.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_SITETABLES_H
#define CUVIL_TARGETS_CPU_SITETABLES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::cuvil::cpu {

/// Declares the runtime function `name(args) -> ()` once in `module`.
void declareRuntimeFunction(ModuleOp module, StringRef name, TypeRange args);

/// `names` as the constant `global` of `module`, passed at the start of `f`
/// to `registrar(table, count)` (declared here too).
void registerSiteTable(ModuleOp module, func::FuncOp f, StringRef global, StringRef registrar,
                       const std::vector<std::string> &names);

} // namespace mlir::cuvil::cpu

#endif
