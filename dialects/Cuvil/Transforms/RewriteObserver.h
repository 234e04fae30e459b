//===- RewriteObserver.h - Watching the graph passes rewrite --------------===//
//
// The graph passes announce each rewrite (a fold, a canonicalization
// pattern, a recognized composite, a fusion group) to the observer installed
// on the current thread, and make their changes through a rewriter that
// notifies it. Translation validation (verify/) installs one to check each
// rewrite as it happens; without an observer the passes run as before.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECTS_CUVIL_TRANSFORMS_REWRITEOBSERVER_H
#define CUVIL_DIALECTS_CUVIL_TRANSFORMS_REWRITEOBSERVER_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::cuvil {

class RewriteObserver : public RewriterBase::Listener {
public:
  /// The rewrite `name` ("fold cuvil.math.add", a pattern's name, ...) is
  /// about to change `op`; the notifications that follow belong to it.
  virtual void beginRewrite(Operation *op, StringRef name) = 0;

  /// The observer of this thread, or null.
  static RewriteObserver *current();

  /// Installs `observer` on this thread for the scope's lifetime.
  class Scope {
  public:
    explicit Scope(RewriteObserver *observer);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    RewriteObserver *previous;
  };
};

/// A pattern's readable name: its class without namespaces
/// ("CollapseReshapes", "ViewToReshape<FlattenOp>").
std::string patternName(const Pattern &pattern);

/// Announces a rewrite to the current observer, if any.
inline void announceRewrite(Operation *op, StringRef name) {
  if (RewriteObserver *o = RewriteObserver::current())
    o->beginRewrite(op, name);
}

} // namespace mlir::cuvil

#endif
