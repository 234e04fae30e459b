//===- TargetTestSupport.h - Helpers of the target tests --------*- C++ -*-===//
#ifndef CUVIL_TEST_TARGETS_TARGETTESTSUPPORT_H
#define CUVIL_TEST_TARGETS_TARGETTESTSUPPORT_H

#include "passes/InitAll.h"
#include "targets/Targets.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>

namespace cuvil::test {

/// The bytes of the file at `path` (the test fails when it cannot be read).
inline std::string fileContents(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  REQUIRE(buffer);
  return (*buffer)->getBuffer().str();
}

/// A context with every dialect the compile driver needs, the targets
/// registered.
inline std::unique_ptr<mlir::MLIRContext> compilerContext() {
  mlir::cuvil::registerAllTargets();
  mlir::DialectRegistry registry;
  mlir::cuvil::registerAllDialects(registry);
  mlir::cuvil::registerTargetDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  return context;
}

} // namespace cuvil::test

#endif // CUVIL_TEST_TARGETS_TARGETTESTSUPPORT_H
