//===- ControlDependencies.h - Checking control-flow flattening -*- C++ -*-===//
//
// Flattening control flow (an scf.if turned into a select or folded to one
// branch, a loop unrolled or rewritten) must keep every data dependency of
// each result. Before the rewrite, ControlDependencies derives from the op
// itself which values defined outside it each result depends on; after it,
// the check walks back from the replacements through whatever the rewrite
// made and requires every one of those values to be reached.
//
// The derivation is precise where a rewrite may legitimately drop an edge:
// constants are never dependencies, a constant condition contributes only
// the branch it takes, a condition whose branches yield the same value is
// not a dependency, and a loop value passed through unchanged depends only
// on its initial value. Ops nested inside count every value they read.
//
// An unrolled loop is checked iteration by iteration: iteration k + 1's
// values must depend on iteration k's as one trip through the body does.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_ANALYSIS_CONTROLDEPENDENCIES_H
#define CUVIL_DIALECT_CUVIL_ANALYSIS_CONTROLDEPENDENCIES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::cuvil {

using ValueSet = llvm::SetVector<Value>;

class ControlDependencies {
public:
  /// The dependencies of `op`'s results, for scf.if, scf.for and scf.while;
  /// nullopt for any other op.
  static std::optional<ControlDependencies> of(Operation *op);

  /// `op` was replaced by `replacements` (one per result): every result must
  /// still reach each of its dependencies. Emits an error at the op's
  /// location for each lost one, naming the rewrite, the result and the
  /// value; failure if any was lost.
  LogicalResult checkReplacement(ValueRange replacements, StringRef rewrite) const;

  /// A loop (scf.while) was unrolled: `iterations[0]` are its initial
  /// values, `iterations[k]` the values it carries after k trips, and
  /// `results` replace its results (what the condition forwards after the
  /// last trip). Each trip must depend on the one before as the loop's
  /// condition and body do, and the results on the last trip as the
  /// condition's forwarding does.
  LogicalResult checkUnrolled(ArrayRef<SmallVector<Value>> iterations, ValueRange results,
                              StringRef rewrite) const;

  /// Another op that the same rewrite replaced: its results, where they are
  /// dependencies, are now `replacements`.
  void noteReplaced(Operation *op, ValueRange replacements);

  /// Dependencies of result `i`, for tests and reports.
  const ValueSet &dependenciesOf(unsigned i) const { return results[i]; }
  StringRef opName() const { return name; }

private:
  ControlDependencies(Operation *op) : name(op->getName().getStringRef().str()), loc(op->getLoc()) {}

  std::string name;
  Location loc;
  SmallVector<ValueSet> results;
  // scf.while only: its initial values; for each carried value, the
  // before-block arguments and outside values one trip through the loop
  // (condition, then body) makes it depend on; for each result, those the
  // condition's forwarding makes it depend on.
  SmallVector<Value> inits;
  SmallVector<Value> loopArgs;
  SmallVector<ValueSet> perTrip;
  SmallVector<ValueSet> atExit;
};

/// Every value `roots` depend on, themselves included: through the
/// operands of their defining ops and the values those ops' regions read
/// from outside.
llvm::DenseSet<Value> backwardClosure(ValueRange roots);

/// "the function's input #0", "the result of cuvil.logic.gt at m.py:12", ...
std::string describeValue(Value v);

/// Counts of the flattening rewrites checked on this thread, when a log is
/// installed (cuvil-opt --cuvil-verify-flattening reports them).
struct FlatteningLog {
  std::map<std::string, int64_t> checked;  ///< rewrite name -> count
  std::vector<std::string> violations;

  static FlatteningLog *current();
  void record(StringRef rewrite, bool ok, StringRef what);

  class Scope {
  public:
    explicit Scope(FlatteningLog *log);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    FlatteningLog *previous;
  };
};

} // namespace mlir::cuvil

#endif
