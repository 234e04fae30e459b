//===- LoweringRules.h - The CPU's lowering rules as data -------*- C++ -*-===//
//
// Which runtime kernel an op may lower to, and under which conditions: one
// rule per (op, kernel, variants), each an ordered list of named conditions
// with what they require, and the path the op takes when one fails. The
// kernel checks (checkKernelChoice, which the heuristics, the tuner and a
// hand-written #cuvil.kernel all go through) evaluate these rules, so the
// table printed by --cuvil-print-lowering-table is the one that decides;
// --cuvil-explain-lowering shows each condition's verdict on a module.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_LOWERINGRULES_H
#define CUVIL_TARGETS_CPU_LOWERINGRULES_H

#include "targets/CPU/KernelSites.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::cuvil::cpu {

/// What a rule's conditions look at: the op, the kernel site the first
/// condition finds (later ones read it), and, for the banded pairs, the
/// producer's site.
struct RuleSubject {
  Operation *op = nullptr;
  std::optional<KernelSite> site, producer;
};

/// One named precondition: `requires` says what it needs (the table's
/// text); `check` answers "" when it holds, else why not (with the op's
/// numbers where they matter).
struct LoweringCondition {
  llvm::StringRef id;
  llvm::StringRef requirement;
  std::function<std::string(RuleSubject &)> check;
};

struct LoweringRule {
  llvm::StringRef op;     ///< "cuvil.conv.conv2d"
  llvm::StringRef kernel; ///< the runtime kernel (KernelConfig.h's names)
  llvm::SmallVector<llvm::StringRef, 2> variants;
  std::vector<LoweringCondition> conditions;
  llvm::StringRef fallback; ///< where the op goes when a condition fails
};

/// Every CPU lowering rule (x86_64 and aarch64 share them).
const std::vector<LoweringRule> &loweringRules();

/// Why `op` cannot run on `kernel`/`variant`: the first failing condition
/// of its rule, that the kernel does not run the op, or that the kernel has
/// no such variant for it; "" when every condition holds. For a banded
/// pair, `producer` receives the producer's site.
std::string checkLoweringRule(Operation *op, llvm::StringRef kernel, llvm::StringRef variant,
                              KernelSite *producer = nullptr);

/// The table: op, target, kernel and variants, conditions, fallback.
void printLoweringTable(llvm::raw_ostream &os);

/// Every rule of `op` with each condition's verdict, in order, up to the
/// first that fails.
void explainLowering(Operation *op, llvm::raw_ostream &os);

/// A weight the kernels pack at compile time: a static f32 constant.
bool isConstantF32(Value v);
bool allEqual(llvm::ArrayRef<int64_t> values, int64_t to);
/// "kernel 'K' does not run OP".
std::string notFor(llvm::StringRef kernel, Operation *op);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGETS_CPU_LOWERINGRULES_H
