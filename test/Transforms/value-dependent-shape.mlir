// RUN: cuvil-opt %s --cuvil-infer-shapes --verify-diagnostics | FileCheck %s

// A size computed from tensor data: a remark at the reshape, and the known
// sizes (the constant 8) still refine its type.
// CHECK-LABEL: func @from_data
func.func @from_data(%x: tensor<2x4x8xf32>, %n: tensor<3xi64>) -> tensor<?x?x?xf32> {
  %sum = cuvil.reduce.sum %n dims [0] : tensor<3xi64> -> tensor<i64>
  %k = cuvil.shape.reshape %sum {shape = array<i64: 1>} : tensor<i64> -> tensor<1xi64>
  %rest = cuvil.constant dense<[-1, 8]> : tensor<2xi64>
  %s = cuvil.tensor.concat %k, %rest {dim = 0 : i64} : (tensor<1xi64>, tensor<2xi64>) -> tensor<3xi64>
  // CHECK: cuvil.shape.reshape_dynamic {{.*}} -> tensor<?x?x8xf32>
  // expected-remark @+1 {{the shape of this reshape depends on tensor values: its unknown sizes stay dynamic (later optimizations still apply)}}
  %y = cuvil.shape.reshape_dynamic %x, %s : tensor<2x4x8xf32>, tensor<3xi64> -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}
