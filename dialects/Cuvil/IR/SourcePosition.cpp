//===- SourcePosition.cpp - "file:line" of an op's location ----------------===//
#include "dialects/Cuvil/IR/SourcePosition.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Visitors.h"

namespace mlir::cuvil {

std::string sourcePosition(Location loc) {
  std::string out;
  loc->walk([&](Location l) {
    if (auto file = llvm::dyn_cast<FileLineColLoc>(l)) {
      out = (file.getFilename().strref() + ":" + llvm::Twine(file.getLine())).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return out;
}

std::string branchArmName(Operation *op, StringRef arm) {
  std::string out;
  op->getLoc()->walk([&](Location l) {
    if (auto file = llvm::dyn_cast<FileLineColLoc>(l); file && file.getLine() > 0) {
      out = (file.getFilename().strref() + ":" + llvm::Twine(file.getLine()) + " " + arm).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return out;
}

} // namespace mlir::cuvil
