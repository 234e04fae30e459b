//===- FlatteningListener.h - The flattening check in rewrite drivers -*- C++ -*-===//
//
// A rewrite listener that checks each rewrite of control flow it hears of
// (ControlDependencies.h): told which rewrite is about to change which op
// (notifyPatternBegin from MLIR's greedy driver, watch() from cuvil's own
// sweep), it takes the op's dependencies when the op is scf.if, scf.for or
// scf.while, and checks them when the op is replaced. Every notification is
// forwarded to the next listener (translation validation), if any.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_TRANSFORMS_FLATTENINGLISTENER_H
#define CUVIL_DIALECT_CUVIL_TRANSFORMS_FLATTENINGLISTENER_H

#include "dialects/Cuvil/Analysis/ControlDependencies.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir::cuvil {

class FlatteningListener : public RewriterBase::Listener {
public:
  explicit FlatteningListener(RewriterBase::Listener *next = nullptr) : next(next) {}

  /// The rewrite `name` is about to change `op`: takes its dependencies.
  void watch(Operation *op, StringRef name);
  /// Another rewrite of the op watched (the next pattern tried on it, which
  /// the failed ones left as it was): the dependencies stand.
  void rename(StringRef name) { rewrite = name.str(); }
  /// Whether a checked rewrite lost a dependency (the error was emitted).
  bool lostDependency() const { return lost; }

  void notifyPatternBegin(const Pattern &pattern, Operation *op) override;
  void notifyPatternEnd(const Pattern &pattern, LogicalResult status) override;
  using RewriterBase::Listener::notifyOperationReplaced;
  void notifyOperationReplaced(Operation *op, ValueRange replacement) override;
  void notifyOperationErased(Operation *op) override;
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint previous) override;
  void notifyOperationModified(Operation *op) override;
  void notifyBlockInserted(Block *block, Region *previous, Region::iterator previousIt) override;
  void notifyBlockErased(Block *block) override;
  void notifyMatchFailure(Location loc, function_ref<void(Diagnostic &)> reasonCallback) override;

private:
  RewriterBase::Listener *next;
  Operation *watched = nullptr;
  std::optional<ControlDependencies> deps;
  std::string rewrite;
  bool lost = false;
};

/// Testing: a deliberately wrong if-conversion (an scf.if on a run-time
/// condition becomes its then-branch, the condition and the else-branch
/// forgotten) that the check must catch.
void populateWrongIfConversionForTests(RewritePatternSet &patterns);

} // namespace mlir::cuvil

#endif
