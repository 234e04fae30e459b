// RUN: cuvil-opt %s --cuvil-expand-arith | FileCheck %s

// Integer divisions LLVM has no instruction for are expanded; float
// minima and maxima are kept, for LLVM's intrinsics (which its loop
// vectorizer reduces in vector lanes; upstream's arith-expand would make
// them compares and selects). Target/CPU/vectorized-math.test checks that a
// row maximum then runs in vector lanes.
// CHECK-LABEL: func.func @ops
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.floordivsi
// CHECK-NOT: arith.ceildivui
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.maxnumf
// CHECK: arith.minnumf
func.func @ops(%a: i32, %b: i32, %x: f32, %y: f32) -> (i32, i32, i32, f32, f32, f32, f32) {
  %0 = arith.ceildivsi %a, %b : i32
  %1 = arith.floordivsi %a, %b : i32
  %2 = arith.ceildivui %a, %b : i32
  %3 = arith.maximumf %x, %y : f32
  %4 = arith.minimumf %x, %y : f32
  %5 = arith.maxnumf %x, %y : f32
  %6 = arith.minnumf %x, %y : f32
  return %0, %1, %2, %3, %4, %5, %6 : i32, i32, i32, f32, f32, f32, f32
}
