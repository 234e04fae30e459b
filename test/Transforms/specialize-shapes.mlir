// RUN: cuvil-opt %s --split-input-file --cuvil-specialize-shapes="sizes=seq=128,256" --verify-diagnostics | FileCheck %s

// Two sizes of seq: two static copies in nested scf.ifs on the input's
// run-time size, the generic graph last; the weights stay above the
// dispatch, shared by every copy; each copy's shapes are refined (its
// linear is 1x128x8) and its results cast back to the entry's types.
// CHECK-LABEL: func.func @forward
// CHECK: %[[W:.*]] = cuvil.constant dense<1.000000e+00> : tensor<8x16xf32>
// CHECK: %[[N:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[IS256:.*]] = arith.cmpi eq, %[[N]], %c256
// CHECK: scf.if %[[IS256]] -> (tensor<1x?x8xf32>) {
// CHECK:   %[[S:.*]] = tensor.cast %arg0 : tensor<1x?x16xf32> to tensor<1x256x16xf32>
// CHECK:   cuvil.gemm.linear %[[S]], %[[W]] : (tensor<1x256x16xf32>, tensor<8x16xf32>) -> tensor<1x256x8xf32>
// CHECK:   tensor.cast %{{.*}} : tensor<1x256x8xf32> to tensor<1x?x8xf32>
// CHECK: } else {
// CHECK:   arith.cmpi eq, %{{.*}}, %c128
// CHECK:   scf.if
// CHECK:     tensor.cast %arg0 : tensor<1x?x16xf32> to tensor<1x128x16xf32>
// CHECK:     cuvil.gemm.linear %{{.*}}, %[[W]] : (tensor<1x128x16xf32>, tensor<8x16xf32>) -> tensor<1x128x8xf32>
// CHECK:   } else {
// CHECK:     cuvil.gemm.linear %arg0, %[[W]] : (tensor<1x?x16xf32>, tensor<8x16xf32>) -> tensor<1x?x8xf32>
// CHECK-NOT: cuvil.constant
func.func @forward(%x: tensor<1x?x16xf32> {cuvil.dim_symbols = ["", "seq", ""], cuvil.dim_bounds = array<i64: 1, 1, 1, 512, 16, 16>}) -> tensor<1x?x8xf32> {
  %w = cuvil.constant dense<1.0> : tensor<8x16xf32>
  %y = cuvil.gemm.linear %x, %w : (tensor<1x?x16xf32>, tensor<8x16xf32>) -> tensor<1x?x8xf32>
  %r = cuvil.act.relu %y : tensor<1x?x8xf32>
  return %r : tensor<1x?x8xf32>
}

// -----

// A symbol no input has.
// expected-error @+1 {{--specialize: no input has a run-time dimension named 'seq' (its symbols: 'batch')}}
func.func @forward(%x: tensor<?x16xf32> {cuvil.dim_symbols = ["batch", ""], cuvil.dim_bounds = array<i64: 1, 64, 16, 16>}) -> tensor<?x16xf32> {
  return %x : tensor<?x16xf32>
}

// -----

// A size outside the symbol's bounds.
// expected-error @+1 {{--specialize: seq=256 is outside the bounds 1..200 given in --input-shape}}
func.func @forward(%x: tensor<?x16xf32> {cuvil.dim_symbols = ["seq", ""], cuvil.dim_bounds = array<i64: 1, 200, 16, 16>}) -> tensor<?x16xf32> {
  return %x : tensor<?x16xf32>
}
