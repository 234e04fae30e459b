//===- RewriteObserver.cpp ------------------------------------------------===//
#include "dialects/Cuvil/Transforms/RewriteObserver.h"

namespace mlir::cuvil {

namespace {
thread_local RewriteObserver *currentObserver = nullptr;
} // namespace

RewriteObserver *RewriteObserver::current() { return currentObserver; }

RewriteObserver::Scope::Scope(RewriteObserver *observer) : previous(currentObserver) {
  currentObserver = observer;
}

RewriteObserver::Scope::~Scope() { currentObserver = previous; }

std::string patternName(const Pattern &pattern) {
  std::string name = pattern.getDebugName().str();
  if (name.empty())
    return "pattern on " +
           (pattern.getRootKind() ? pattern.getRootKind()->getStringRef().str() : "any op");
  for (StringRef prefix : {"(anonymous namespace)::", "mlir::cuvil::", "mlir::"})
    for (size_t at; (at = name.find(prefix.str())) != std::string::npos;)
      name.erase(at, prefix.size());
  return name;
}

} // namespace mlir::cuvil
