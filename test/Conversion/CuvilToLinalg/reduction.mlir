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

// -----

// A running reduction is an scf.for along the dim carrying the result and
// the running slice, updated in place by a generic per step (1..n-1; the
// first slice is copied in before the loop).
// CHECK-LABEL: func @cumulative
// CHECK: tensor.extract_slice %arg0[0, %{{.*}}] [3, 1] [1, 1]
// CHECK: tensor.insert_slice
// CHECK: scf.for %{{.*}} = %c1 to %c5 step %c1{{.*}} iter_args
// CHECK:   tensor.extract_slice %arg0[0, %{{.*}}] [3, 1] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%{{.*}} : tensor<3x1xf32>) outs(%{{.*}} : tensor<3x1xf32>)
// CHECK:     arith.addf
// CHECK:   tensor.insert_slice
// CHECK:   scf.yield
func.func @cumulative(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = cuvil.reduce.cumulative %x {dim = 1 : i64, kind = #cuvil<scan_kind sum>} : tensor<3x5xf32> -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
