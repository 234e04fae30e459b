//===- RewriteValidator.h - Translation validation of graph rewrites ------===//
//
// Installed as the thread's RewriteObserver, it checks each rewrite the graph
// passes make at the moment the rewritten op is replaced: the op's results
// and their replacements are encoded over the same free inputs (the values a
// few ops above the rewrite) and Z3 is asked for an index and inputs where
// they differ. Unsatisfiable: proved. A model: refuted, with the
// counterexample. Otherwise (a timeout, an encoding limit): unknown, with the
// reason.
//
// What each rewrite claims is said per rewrite: bit-exact in IEEE arithmetic
// (the default), or an algebraic identity checked in real arithmetic
// (recognized softmax and layer norm: their floating-point results differ by
// rounding, and a softmax written as exp(x) / sum(exp(x)) overflows where the
// recognized one does not).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_VERIFY_REWRITEVALIDATOR_H
#define CUVIL_VERIFY_REWRITEVALIDATOR_H

#include "dialects/Cuvil/Transforms/RewriteObserver.h"
#include "verify/SmtEncoding.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace cuvil::verify {

enum class Verdict { Proved, Refuted, Unknown };

const char *verdictName(Verdict v);

/// What a rewrite claims, and so how it is checked.
enum class Claim {
  Exact,     ///< the same bits (IEEE arithmetic)
  Algebraic, ///< the same real number (real arithmetic)
  Numeric,   ///< new weights computed numerically: their formulas are replayed in real arithmetic
};

/// The claim of a rewrite by its name (unknown names: Exact).
Claim claimOf(llvm::StringRef rewriteName);

struct Outcome {
  Verdict verdict = Verdict::Proved;
  Arithmetic arithmetic = Arithmetic::IEEE;
  std::string detail; ///< counterexample or reason
};

/// The outcomes of one rewrite (a pattern, a fold) over a run.
struct RewriteTally {
  int64_t proved = 0, refuted = 0, unknown = 0;
  Arithmetic arithmetic = Arithmetic::IEEE;
  std::string firstRefutation, firstUnknown;
  Verdict verdict() const {
    return refuted ? Verdict::Refuted : unknown ? Verdict::Unknown : Verdict::Proved;
  }
};

class RewriteValidator final : public mlir::cuvil::RewriteObserver {
public:
  /// Largest result checked index by index when the symbolic check gives up.
  static constexpr int64_t kMaxEnumerated = 4096;
  /// Time for that, in multiples of the per-check limit.
  static constexpr unsigned kEnumerationBudget = 10;

  struct Options {
    unsigned timeoutMs = 500; ///< per solver check
    unsigned depth = 6;       ///< ops above a rewrite encoded before inputs become free
  };

  explicit RewriteValidator(Options options);

  void beginRewrite(mlir::Operation *op, llvm::StringRef name) override;
  void notifyOperationInserted(mlir::Operation *op, mlir::OpBuilder::InsertPoint previous) override;
  void notifyOperationReplaced(mlir::Operation *op, mlir::ValueRange replacement) override;

  const std::map<std::string, RewriteTally> &tallies() const { return tallies_; }
  int64_t count(Verdict v) const;

  /// One line per rewrite, the names of `expected` rewrites never applied,
  /// and the summary line "N proved, M refuted, K unknown".
  void print(llvm::raw_ostream &os, llvm::ArrayRef<std::string> expected) const;

  /// Checks that `replacement` computes what `op` computed, now.
  Outcome validate(mlir::Operation *op, mlir::ValueRange replacement, Claim claim);

private:
  Outcome check(mlir::Operation *op, mlir::ValueRange replacement, Arithmetic arithmetic);

  Options options_;
  z3::context ctx_;
  z3::solver solver_;     ///< incremental SMT core (indices, functions, reals)
  z3::solver bitBlaster_; ///< floating point and bit-vectors only
  std::string current_;
  llvm::SetVector<mlir::Operation *> inserted_;
  std::map<std::string, RewriteTally> tallies_;
};

} // namespace cuvil::verify

#endif
