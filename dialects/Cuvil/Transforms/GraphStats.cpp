//===- GraphStats.cpp - Op counts before and after the pipeline -----------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILGRAPHSTATSPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

constexpr llvm::StringLiteral kStatsAttr = "cuvil.graph_stats";

/// "conv2d+add+relu": the ops of a group, family prefixes dropped.
std::string groupPattern(FusedGroupOp group) {
  std::string s;
  for (Operation &op : group.getBody().front().without_terminator()) {
    StringRef name = op.getName().getStringRef();
    s += (s.empty() ? "" : "+") + name.substr(name.rfind('.') + 1).str();
  }
  return s;
}

struct Counts {
  std::map<std::string, int64_t> ops;      ///< top-level ops by name
  std::map<std::string, int64_t> patterns; ///< fused groups by pattern
  int64_t total = 0;
};

Counts count(func::FuncOp func) {
  Counts c;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation() || llvm::isa<func::ReturnOp>(op))
      return WalkResult::advance();
    std::string name = op->getName().getStringRef().str();
    if (auto group = llvm::dyn_cast<FusedGroupOp>(op)) {
      name += std::string(" ") + stringifyFusionKind(group.getKind()).str();
      ++c.patterns[groupPattern(group)];
      ++c.ops[name];
      ++c.total;
      return WalkResult::skip(); // the group is one kernel
    }
    if (!llvm::isa<ConstantOp>(op)) {
      ++c.ops[name];
      ++c.total;
    }
    return WalkResult::advance();
  });
  return c;
}

struct CuvilGraphStatsPass final
    : mlir::cuvil::impl::CuvilGraphStatsPassBase<CuvilGraphStatsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    Counts now = count(func);
    Builder b(&getContext());
    if (record) {
      SmallVector<NamedAttribute> entries;
      for (auto &[name, n] : now.ops)
        entries.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(n)));
      func->setAttr(kStatsAttr, b.getDictionaryAttr(entries));
      markAllAnalysesPreserved();
      return;
    }
    std::map<std::string, int64_t> before;
    bool haveBefore = false;
    if (auto d = func->getAttrOfType<DictionaryAttr>(kStatsAttr)) {
      haveBefore = true;
      for (NamedAttribute e : d)
        if (auto n = llvm::dyn_cast<IntegerAttr>(e.getValue()))
          before[e.getName().str()] = n.getInt();
      func->removeAttr(kStatsAttr);
    }
    std::map<std::string, int64_t> names = now.ops;
    for (auto &[n, k] : before)
      names.emplace(n, 0);
    int64_t totalBefore = 0;
    for (auto &[n, k] : before)
      totalBefore += k;
    llvm::raw_ostream &os = llvm::errs();
    os << "cuvil-graph-stats: @" << func.getSymName()
       << " (ops outside fusion groups, constants not counted)\n";
    os << llvm::format("  %-36s", static_cast<const char *>("op")) << (haveBefore ? "  before" : "") << "   after\n";
    for (auto &[name, unused] : names) {
      os << llvm::format("  %-36s", name.c_str());
      if (haveBefore)
        os << llvm::format("  %6lld", static_cast<long long>(before[name]));
      os << llvm::format("  %6lld", static_cast<long long>(now.ops[name])) << "\n";
    }
    os << llvm::format("  %-36s", static_cast<const char *>("total"));
    if (haveBefore)
      os << llvm::format("  %6lld", static_cast<long long>(totalBefore));
    os << llvm::format("  %6lld", static_cast<long long>(now.total)) << "\n";
    if (!now.patterns.empty()) {
      os << "  fused groups by pattern:\n";
      for (auto &[pattern, n] : now.patterns)
        os << llvm::format("    %-34s  %6lld", pattern.c_str(), static_cast<long long>(n)) << "\n";
    }
    markAllAnalysesPreserved();
  }
};

} // namespace
