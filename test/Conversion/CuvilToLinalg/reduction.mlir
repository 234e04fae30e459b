// RUN: cuvil-opt %s --convert-cuvil-to-linalg | FileCheck %s

// Softmax along the last dimension: a max, then the exponentials' sum, as
// reductions over that dimension. The sum's additions are reassociable
// (fastmath<reassoc>), so that the code generator may add in vector lanes;
// the max keeps arith.maximumf (NaN wins).
// CHECK-LABEL: func.func @softmax_rows
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       CHECK:     arith.maximumf
//       CHECK:   linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
//       CHECK:     arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @softmax_rows(%x: tensor<4x128xf32>) -> tensor<4x128xf32> {
  %0 = cuvil.act.softmax %x {dim = 1 : i64} : tensor<4x128xf32>
  return %0 : tensor<4x128xf32>
}
