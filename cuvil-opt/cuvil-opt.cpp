//===- cuvil-opt.cpp - The Cuvil pass driver ------------------------------===//
//
// mlir-opt for Cuvil: every standard MlirOptMain flag (--pass-pipeline,
// --split-input-file, --verify-diagnostics, --mlir-print-ir-after-all,
// --mlir-timing, crash reproducers) with the Cuvil dialects and passes
// registered. This is the driver the lit tests run.
//
//===----------------------------------------------------------------------===//
#include "passes/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::cuvil::registerAllDialects(registry);
  mlir::cuvil::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Cuvil optimizer driver: runs Cuvil and MLIR passes\n",
      registry));
}
