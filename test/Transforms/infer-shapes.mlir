// RUN: cuvil-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(cuvil-infer-shapes))' | FileCheck %s

// Tests that every op infers its result type: results written with dynamic
// dimensions become static, and function results follow.

// CHECK-LABEL: func.func @elementwise
//  CHECK-SAME: -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf64>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>)
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf64>, %b: tensor<2x1xi1>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf64>, tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32>) {
  // CHECK: cuvil.shape.reshape {{.*}} -> tensor<2x3xf32>
  %d = cuvil.shape.reshape %x {shape = array<i64: 2, 3>} : tensor<2x3xf32> -> tensor<?x?xf32>
  // CHECK: cuvil.act.relu {{.*}} : tensor<2x3xf32>
  %0 = cuvil.act.relu %d : tensor<?x?xf32>
  // CHECK: cuvil.act.softmax {{.*}} : tensor<2x3xf32>
  %1 = cuvil.act.softmax %0 {dim = 1 : i64} : tensor<?x?xf32>
  // CHECK: cuvil.math.add {{.*}} -> tensor<2x3xf64>
  %2 = cuvil.math.add %d, %y : tensor<?x?xf32>, tensor<3xf64> -> tensor<?x?xf64>
  // CHECK: cuvil.logic.lt {{.*}} -> tensor<2x3xi1>
  %3 = cuvil.logic.lt %d, %y : tensor<?x?xf32>, tensor<3xf64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.where {{.*}} -> tensor<2x3xf32>
  %4 = cuvil.logic.where %b, %d, %x : tensor<2x1xi1>, tensor<?x?xf32>, tensor<2x3xf32> -> tensor<?x?xf32>
  // CHECK: cuvil.math.clamp {{.*}} : tensor<2x3xf32>
  %5 = cuvil.math.clamp %d {min = 0.0 : f64} : tensor<?x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf64>, tensor<?x?xi1>, tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @gemm_conv
func.func @gemm_conv(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %a: tensor<2x1x8x16xf32>, %b3: tensor<3x16x5xf32>,
                     %img: tensor<1x3x32x32xf32>, %k: tensor<8x3x3x3xf32>, %kt: tensor<8x4x2x2xf32>, %m1: tensor<8x16xf32>, %m2: tensor<16x4xf32>, %bias: tensor<4xf32>) {
  // CHECK: cuvil.gemm.linear {{.*}} -> tensor<8x4xf32>
  %0 = cuvil.gemm.linear %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<?x?xf32>
  // CHECK: cuvil.gemm.matmul {{.*}} -> tensor<2x3x8x5xf32>
  %1 = cuvil.gemm.matmul %a, %b3 : tensor<2x1x8x16xf32>, tensor<3x16x5xf32> -> tensor<?x?x?x?xf32>
  %b3t = cuvil.tensor.slice %b3 {dim = 1 : i64, start = 0 : i64, end = 5 : i64} : tensor<3x16x5xf32> -> tensor<3x5x5xf32>
  // CHECK: cuvil.gemm.batch_matmul {{.*}} -> tensor<3x16x5xf32>
  %sq = cuvil.gemm.batch_matmul %b3, %b3t : tensor<3x16x5xf32>, tensor<3x5x5xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.gemm.addmm {{.*}} -> tensor<8x4xf32>
  %2 = cuvil.gemm.addmm %bias, %m1, %m2 {beta = 0.0 : f64} : (tensor<4xf32>, tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<?x?xf32>
  // CHECK: cuvil.conv.conv2d {{.*}} -> tensor<1x8x16x16xf32>
  %3 = cuvil.conv.conv2d %img, %k stride [2, 2] padding [1, 1] dilation [1, 1] : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.conv.conv_transpose2d {{.*}} -> tensor<1x4x32x32xf32>
  %4 = cuvil.conv.conv_transpose2d %3, %kt stride [2, 2] padding [0, 0] dilation [1, 1] output_padding [0, 0] : (tensor<?x?x?x?xf32>, tensor<8x4x2x2xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

// CHECK-LABEL: func.func @norm_pool_reduce
func.func @norm_pool_reduce(%x: tensor<2x8x9x9xf32>, %c: tensor<8xf32>, %t: tensor<2x5x9xf32>) {
  // CHECK: cuvil.norm.batch_norm {{.*}} -> tensor<2x8x9x9xf32>
  %0 = cuvil.norm.batch_norm %x, %c, %c : (tensor<2x8x9x9xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.norm.layer_norm {{.*}} -> tensor<2x5x9xf32>
  %1 = cuvil.norm.layer_norm %t {normalized_shape = array<i64: 9>} : (tensor<2x5x9xf32>) -> tensor<?x?x?xf32>
  // CHECK: cuvil.norm.group_norm {{.*}} -> tensor<2x8x9x9xf32>
  %2 = cuvil.norm.group_norm %x {num_groups = 2 : i64} : (tensor<2x8x9x9xf32>) -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.pool.max_pool2d {{.*}} -> tensor<2x8x5x5xf32>
  %3 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<2x8x9x9xf32> -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.pool.avg_pool1d {{.*}} -> tensor<2x5x5xf32>
  %4 = cuvil.pool.avg_pool1d %t kernel [2] stride [2] padding [0] ceil_mode : tensor<2x5x9xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.pool.adaptive_avg_pool2d {{.*}} -> tensor<2x8x1x1xf32>
  %5 = cuvil.pool.adaptive_avg_pool2d %x output_size [1, 1] : tensor<2x8x9x9xf32> -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.reduce.mean {{.*}} -> tensor<2x1x1x9xf32>
  %6 = cuvil.reduce.mean %x dims [1, 2] keepdim : tensor<2x8x9x9xf32> -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.reduce.argmax {{.*}} -> tensor<2x9x9xi64>
  %7 = cuvil.reduce.argmax %x dim 1 : tensor<2x8x9x9xf32> -> tensor<?x?x?xi64>
  return
}

// -----

// CHECK-LABEL: func.func @shapes_and_data
func.func @shapes_and_data(%x: tensor<2x3x4xf32>, %i: tensor<5xi64>, %g: tensor<2x3x2xi64>) {
  // CHECK: cuvil.shape.reshape {{.*}} -> tensor<6x4xf32>
  %0 = cuvil.shape.reshape %x {shape = array<i64: -1, 4>} : tensor<2x3x4xf32> -> tensor<?x?xf32>
  // CHECK: cuvil.shape.flatten {{.*}} -> tensor<24xf32>
  %1 = cuvil.shape.flatten %x {start_dim = 0 : i64, end_dim = 2 : i64} : tensor<2x3x4xf32> -> tensor<?xf32>
  // CHECK: cuvil.shape.unsqueeze {{.*}} -> tensor<2x1x3x4xf32>
  %2 = cuvil.shape.unsqueeze %x {dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.shape.squeeze {{.*}} -> tensor<2x3x4xf32>
  %3 = cuvil.shape.squeeze %2 {dims = array<i64: 1>} : tensor<?x?x?x?xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.shape.permute {{.*}} -> tensor<4x2x3xf32>
  %4 = cuvil.shape.permute %x {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.shape.transpose {{.*}} -> tensor<2x4x3xf32>
  %5 = cuvil.shape.transpose %x {dim0 = 1 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.shape.expand {{.*}} -> tensor<7x2x3x4xf32>
  %6 = cuvil.shape.expand %x {shape = array<i64: 7, -1, -1, -1>} : tensor<2x3x4xf32> -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.tensor.cast {{.*}} -> tensor<2x3x4xi32>
  %7 = cuvil.tensor.cast %3 : tensor<?x?x?xf32> -> tensor<?x?x?xi32>
  // CHECK: cuvil.tensor.concat {{.*}} -> tensor<2x6x4xf32>
  %8 = cuvil.tensor.concat %x, %3 {dim = 1 : i64} : (tensor<2x3x4xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  // CHECK: cuvil.tensor.slice {{.*}} -> tensor<2x3x2xf32>
  %9 = cuvil.tensor.slice %x {dim = 2 : i64, start = 1 : i64, end = -1 : i64} : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.tensor.select {{.*}} -> tensor<2x4xf32>
  %10 = cuvil.tensor.select %x {dim = 1 : i64, index = 0 : i64} : tensor<2x3x4xf32> -> tensor<?x?xf32>
  // CHECK: cuvil.tensor.index_select {{.*}} -> tensor<2x3x5xf32>
  %11 = cuvil.tensor.index_select %x, %i {dim = 2 : i64} : tensor<2x3x4xf32>, tensor<5xi64> -> tensor<?x?x?xf32>
  // CHECK: cuvil.tensor.gather {{.*}} -> tensor<2x3x2xf32>
  %12 = cuvil.tensor.gather %x, %g {dim = 2 : i64} : tensor<2x3x4xf32>, tensor<2x3x2xi64> -> tensor<?x?x?xf32>
  // CHECK: cuvil.tensor.pad {{.*}} -> tensor<2x3x7xf32>
  %13 = cuvil.tensor.pad %x {pad = array<i64: 1, 2>} : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.tensor.embedding {{.*}} -> tensor<5x4xf32>
  %14 = cuvil.tensor.embedding %0, %i : tensor<?x?xf32>, tensor<5xi64> -> tensor<?x?xf32>
  return
}

// -----

// Tests that static sizes written in the IR are kept, that a dimension the
// rule cannot compute stays dynamic, and that other dialects' users keep the
// old type through a tensor.cast.
// CHECK-LABEL: func.func @partial
//  CHECK-SAME: (%[[D:.*]]: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x2xf32>)
//       CHECK:   %[[R:.*]] = cuvil.act.relu %[[D]] : tensor<?x4xf32>
//       CHECK:   %[[S:.*]] = cuvil.tensor.slice %[[R]] {{.*}} : tensor<?x4xf32> -> tensor<?x2xf32>
//       CHECK:   %[[C:.*]] = tensor.cast %[[S]] : tensor<?x2xf32> to tensor<?x?xf32>
//       CHECK:   tensor.dim %[[C]]
//       CHECK:   return %[[R]], %[[S]]
func.func @partial(%d: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x?xf32>) {
  %0 = cuvil.act.relu %d : tensor<?x4xf32>
  %1 = cuvil.tensor.slice %0 {dim = 1 : i64, start = 0 : i64, end = 2 : i64} : tensor<?x4xf32> -> tensor<?x?xf32>
  %c1 = arith.constant 1 : index
  %dim = tensor.dim %1, %c1 : tensor<?x?xf32>
  return %0, %1 : tensor<?x4xf32>, tensor<?x?xf32>
}
