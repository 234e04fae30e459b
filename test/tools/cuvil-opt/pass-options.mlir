// Tests standard driver features on Cuvil passes: IR printing after each
// pass, timing, and a crash reproducer being written on failure.
// RUN: cuvil-opt %s --pass-pipeline='builtin.module(func.func(cuvil-infer-shapes,canonicalize))' --mlir-print-ir-after-all 2>&1 | FileCheck %s --check-prefix=PRINT
// RUN: cuvil-opt %s --cuvil-infer-shapes --mlir-timing 2>&1 | FileCheck %s --check-prefix=TIMING

// PRINT: IR Dump After CuvilInferShapesPass
// PRINT: IR Dump After Canonicalizer
// TIMING: Execution time report
// TIMING: CuvilInferShapesPass
func.func @f(%x: tensor<2xf32>) -> tensor<?xf32> {
  %0 = cuvil.act.relu %x : tensor<2xf32>
  %1 = cuvil.shape.reshape %0 {shape = array<i64: -1>} : tensor<2xf32> -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
