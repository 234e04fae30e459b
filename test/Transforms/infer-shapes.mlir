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
  // CHECK: cuvil.tensor.resize {{.*}} -> tensor<2x3x9xf32>
  %15 = cuvil.tensor.resize %x linear size [9] : tensor<2x3x4xf32> -> tensor<?x?x?xf32>
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

// -----

// Tests inference through the remaining element-wise ops: each takes the
// refined operand type.
// CHECK-LABEL: func.func @unary_chain
//  CHECK-SAME: -> tensor<2x3xf32>
func.func @unary_chain(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %d = cuvil.shape.reshape %x {shape = array<i64: 2, 3>} : tensor<2x3xf32> -> tensor<?x?xf32>
  // CHECK: cuvil.act.elu{{.*}} : tensor<2x3xf32>
  %u0 = cuvil.act.elu %d : tensor<?x?xf32>
  // CHECK: cuvil.act.gelu{{.*}} : tensor<2x3xf32>
  %u1 = cuvil.act.gelu %u0 : tensor<?x?xf32>
  // CHECK: cuvil.act.hardsigmoid{{.*}} : tensor<2x3xf32>
  %u2 = cuvil.act.hardsigmoid %u1 : tensor<?x?xf32>
  // CHECK: cuvil.act.hardswish{{.*}} : tensor<2x3xf32>
  %u3 = cuvil.act.hardswish %u2 : tensor<?x?xf32>
  // CHECK: cuvil.act.hardtanh{{.*}} : tensor<2x3xf32>
  %u4 = cuvil.act.hardtanh %u3 : tensor<?x?xf32>
  // CHECK: cuvil.act.leaky_relu{{.*}} : tensor<2x3xf32>
  %u5 = cuvil.act.leaky_relu %u4 : tensor<?x?xf32>
  // CHECK: cuvil.act.log_softmax{{.*}} : tensor<2x3xf32>
  %u6 = cuvil.act.log_softmax %u5 {dim = 1 : i64} : tensor<?x?xf32>
  // CHECK: cuvil.act.mish{{.*}} : tensor<2x3xf32>
  %u7 = cuvil.act.mish %u6 : tensor<?x?xf32>
  // CHECK: cuvil.act.sigmoid{{.*}} : tensor<2x3xf32>
  %u8 = cuvil.act.sigmoid %u7 : tensor<?x?xf32>
  // CHECK: cuvil.act.silu{{.*}} : tensor<2x3xf32>
  %u9 = cuvil.act.silu %u8 : tensor<?x?xf32>
  // CHECK: cuvil.act.softplus{{.*}} : tensor<2x3xf32>
  %u10 = cuvil.act.softplus %u9 : tensor<?x?xf32>
  // CHECK: cuvil.act.tanh{{.*}} : tensor<2x3xf32>
  %u11 = cuvil.act.tanh %u10 : tensor<?x?xf32>
  // CHECK: cuvil.math.abs{{.*}} : tensor<2x3xf32>
  %u12 = cuvil.math.abs %u11 : tensor<?x?xf32>
  // CHECK: cuvil.math.ceil{{.*}} : tensor<2x3xf32>
  %u13 = cuvil.math.ceil %u12 : tensor<?x?xf32>
  // CHECK: cuvil.math.cos{{.*}} : tensor<2x3xf32>
  %u14 = cuvil.math.cos %u13 : tensor<?x?xf32>
  // CHECK: cuvil.math.erf{{.*}} : tensor<2x3xf32>
  %u15 = cuvil.math.erf %u14 : tensor<?x?xf32>
  // CHECK: cuvil.math.exp{{.*}} : tensor<2x3xf32>
  %u16 = cuvil.math.exp %u15 : tensor<?x?xf32>
  // CHECK: cuvil.math.expm1{{.*}} : tensor<2x3xf32>
  %u17 = cuvil.math.expm1 %u16 : tensor<?x?xf32>
  // CHECK: cuvil.math.floor{{.*}} : tensor<2x3xf32>
  %u18 = cuvil.math.floor %u17 : tensor<?x?xf32>
  // CHECK: cuvil.math.log{{.*}} : tensor<2x3xf32>
  %u19 = cuvil.math.log %u18 : tensor<?x?xf32>
  // CHECK: cuvil.math.log1p{{.*}} : tensor<2x3xf32>
  %u20 = cuvil.math.log1p %u19 : tensor<?x?xf32>
  // CHECK: cuvil.math.neg{{.*}} : tensor<2x3xf32>
  %u21 = cuvil.math.neg %u20 : tensor<?x?xf32>
  // CHECK: cuvil.math.reciprocal{{.*}} : tensor<2x3xf32>
  %u22 = cuvil.math.reciprocal %u21 : tensor<?x?xf32>
  // CHECK: cuvil.math.round{{.*}} : tensor<2x3xf32>
  %u23 = cuvil.math.round %u22 : tensor<?x?xf32>
  // CHECK: cuvil.math.rsqrt{{.*}} : tensor<2x3xf32>
  %u24 = cuvil.math.rsqrt %u23 : tensor<?x?xf32>
  // CHECK: cuvil.math.sign{{.*}} : tensor<2x3xf32>
  %u25 = cuvil.math.sign %u24 : tensor<?x?xf32>
  // CHECK: cuvil.math.sin{{.*}} : tensor<2x3xf32>
  %u26 = cuvil.math.sin %u25 : tensor<?x?xf32>
  // CHECK: cuvil.math.sqrt{{.*}} : tensor<2x3xf32>
  %u27 = cuvil.math.sqrt %u26 : tensor<?x?xf32>
  return %u27 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @binary_and_reductions
func.func @binary_and_reductions(%x: tensor<2x3xf32>, %i: tensor<3xi64>, %b: tensor<2x1xi1>) {
  %d = cuvil.shape.reshape %x {shape = array<i64: 2, 3>} : tensor<2x3xf32> -> tensor<?x?xf32>
  %n = cuvil.constant dense<[1, 2, 3]> : tensor<3xi64>
  // CHECK: cuvil.math.sub {{.*}} -> tensor<2x3xf32>
  %b0 = cuvil.math.sub %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.math.mul {{.*}} -> tensor<2x3xf32>
  %b1 = cuvil.math.mul %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.math.div {{.*}} -> tensor<2x3xf32>
  %b2 = cuvil.math.div %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.math.pow {{.*}} -> tensor<2x3xf32>
  %b3 = cuvil.math.pow %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.math.maximum {{.*}} -> tensor<2x3xf32>
  %b4 = cuvil.math.maximum %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.math.minimum {{.*}} -> tensor<2x3xf32>
  %b5 = cuvil.math.minimum %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.math.remainder {{.*}} -> tensor<2x3xf32>
  %b6 = cuvil.math.remainder %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xf32>
  // CHECK: cuvil.logic.eq {{.*}} -> tensor<2x3xi1>
  %b7 = cuvil.logic.eq %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.ne {{.*}} -> tensor<2x3xi1>
  %b8 = cuvil.logic.ne %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.le {{.*}} -> tensor<2x3xi1>
  %b9 = cuvil.logic.le %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.gt {{.*}} -> tensor<2x3xi1>
  %b10 = cuvil.logic.gt %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.ge {{.*}} -> tensor<2x3xi1>
  %b11 = cuvil.logic.ge %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.logical_and {{.*}} -> tensor<2x3xi1>
  %b12 = cuvil.logic.logical_and %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.logical_or {{.*}} -> tensor<2x3xi1>
  %b13 = cuvil.logic.logical_or %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.logical_xor {{.*}} -> tensor<2x3xi1>
  %b14 = cuvil.logic.logical_xor %d, %i : tensor<?x?xf32>, tensor<3xi64> -> tensor<?x?xi1>
  // CHECK: cuvil.logic.logical_not {{.*}} -> tensor<2x3xi1>
  %not = cuvil.logic.logical_not %d : tensor<?x?xf32> -> tensor<?x?xi1>
  // CHECK: cuvil.math.bitwise_not {{.*}} : tensor<3xi64>
  %bn = cuvil.math.bitwise_not %n : tensor<3xi64>
  // CHECK: cuvil.reduce.sum {{.*}} -> tensor<2xf32>
  %r15 = cuvil.reduce.sum %d dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: cuvil.reduce.prod {{.*}} -> tensor<2xf32>
  %r16 = cuvil.reduce.prod %d dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: cuvil.reduce.max {{.*}} -> tensor<2xf32>
  %r17 = cuvil.reduce.max %d dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: cuvil.reduce.min {{.*}} -> tensor<2xf32>
  %r18 = cuvil.reduce.min %d dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: cuvil.reduce.any {{.*}} -> tensor<2xi1>
  %r19 = cuvil.reduce.any %d dims [1] : tensor<?x?xf32> -> tensor<?xi1>
  // CHECK: cuvil.reduce.all {{.*}} -> tensor<2xi1>
  %r20 = cuvil.reduce.all %d dims [1] : tensor<?x?xf32> -> tensor<?xi1>
  // CHECK: cuvil.reduce.var {{.*}} -> tensor<2xf32>
  %r21 = cuvil.reduce.var %d dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: cuvil.reduce.std {{.*}} -> tensor<2xf32>
  %r22 = cuvil.reduce.std %d dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  // CHECK: cuvil.reduce.argmin {{.*}} -> tensor<1x3xi64>
  %am = cuvil.reduce.argmin %d dim 0 keepdim : tensor<?x?xf32> -> tensor<?x?xi64>
  return
}

// -----

// CHECK-LABEL: func.func @one_dim_spatial
func.func @one_dim_spatial(%x: tensor<2x4x16xf32>, %w: tensor<8x4x3xf32>, %wt: tensor<4x2x4xf32>, %img: tensor<1x2x8x8xf32>) {
  // CHECK: cuvil.conv.conv1d {{.*}} -> tensor<2x8x8xf32>
  %0 = cuvil.conv.conv1d %x, %w stride [2] padding [1] dilation [1] : (tensor<2x4x16xf32>, tensor<8x4x3xf32>) -> tensor<?x?x?xf32>
  // CHECK: cuvil.conv.conv_transpose1d {{.*}} -> tensor<2x2x34xf32>
  %1 = cuvil.conv.conv_transpose1d %x, %wt stride [2] padding [0] dilation [1] output_padding [0] : (tensor<2x4x16xf32>, tensor<4x2x4xf32>) -> tensor<?x?x?xf32>
  // CHECK: cuvil.pool.max_pool1d {{.*}} -> tensor<2x4x8xf32>
  %2 = cuvil.pool.max_pool1d %x kernel [2] stride [2] padding [0] dilation [1] : tensor<2x4x16xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.pool.adaptive_avg_pool1d {{.*}} -> tensor<2x4x5xf32>
  %3 = cuvil.pool.adaptive_avg_pool1d %x output_size [5] : tensor<2x4x16xf32> -> tensor<?x?x?xf32>
  // CHECK: cuvil.pool.avg_pool2d {{.*}} -> tensor<1x2x4x4xf32>
  %4 = cuvil.pool.avg_pool2d %img kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x2x8x8xf32> -> tensor<?x?x?x?xf32>
  // CHECK: cuvil.constant dense<1.000000e+00> : tensor<2xf32>
  %5 = cuvil.constant dense<1.0> : tensor<2xf32>
  return
}

// -----

// A run-time reshape whose sizes are constants and static dimensions
// becomes a static reshape; with a dynamic batch, x.view(x.size(0), -1)
// gets its flattened size and the one size left unknown becomes the -1 of
// a static reshape (what the element count leaves of the others).
// CHECK-LABEL: func @reshape_dynamic
func.func @reshape_dynamic(%x: tensor<2x4x8xf32>, %d: tensor<?x4x8xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %minus1 = cuvil.constant dense<[-1]> : tensor<1xi64>
  %n = cuvil.shape.dim %x {dim = 0 : i64} : tensor<2x4x8xf32> -> tensor<i64>
  %n1 = cuvil.shape.reshape %n {shape = array<i64: 1>} : tensor<i64> -> tensor<1xi64>
  %s = cuvil.tensor.concat %n1, %minus1 {dim = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // CHECK: cuvil.shape.reshape %arg0 {shape = array<i64: 2, -1>} : tensor<2x4x8xf32> -> tensor<2x32xf32>
  %y = cuvil.shape.reshape_dynamic %x, %s : tensor<2x4x8xf32>, tensor<2xi64> -> tensor<?x?xf32>
  %m = cuvil.shape.dim %d {dim = 0 : i64} : tensor<?x4x8xf32> -> tensor<i64>
  %m1 = cuvil.shape.reshape %m {shape = array<i64: 1>} : tensor<i64> -> tensor<1xi64>
  %t = cuvil.tensor.concat %m1, %minus1 {dim = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // CHECK: cuvil.shape.reshape %arg1 {shape = array<i64: -1, 32>} : tensor<?x4x8xf32> -> tensor<?x32xf32>
  %z = cuvil.shape.reshape_dynamic %d, %t : tensor<?x4x8xf32>, tensor<2xi64> -> tensor<?x?xf32>
  return %y, %z : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Attention's q.view(B, S, H, D) with S = x.size(1) a run-time sequence
// length (the size of another tensor): one unknown size, a static -1.
// Two unknown sizes stay a run-time reshape.
// CHECK-LABEL: func @view_with_run_time_size
// CHECK: cuvil.shape.reshape %arg1 {shape = array<i64: 2, -1, 4, 16>} : tensor<2x?x64xf32> -> tensor<2x?x4x16xf32>
// CHECK: cuvil.shape.reshape_dynamic
func.func @view_with_run_time_size(%x: tensor<2x?x64xf32>, %q: tensor<2x?x64xf32>, %r: tensor<?x?x64xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %b = cuvil.constant dense<[2]> : tensor<1xi64>
  %hd = cuvil.constant dense<[4, 16]> : tensor<2xi64>
  %s = cuvil.shape.dim %x {dim = 1 : i64} : tensor<2x?x64xf32> -> tensor<i64>
  %s1 = cuvil.shape.reshape %s {shape = array<i64: 1>} : tensor<i64> -> tensor<1xi64>
  %shape = cuvil.tensor.concat %b, %s1, %hd {dim = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  %y = cuvil.shape.reshape_dynamic %q, %shape : tensor<2x?x64xf32>, tensor<4xi64> -> tensor<?x?x?x?xf32>
  %n = cuvil.shape.dim %r {dim = 0 : i64} : tensor<?x?x64xf32> -> tensor<i64>
  %n1 = cuvil.shape.reshape %n {shape = array<i64: 1>} : tensor<i64> -> tensor<1xi64>
  %e = cuvil.constant dense<[64]> : tensor<1xi64>
  %two = cuvil.tensor.concat %n1, %s1, %e {dim = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %z = cuvil.shape.reshape_dynamic %r, %two : tensor<?x?x64xf32>, tensor<3xi64> -> tensor<?x?x?xf32>
  return %y, %z : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}
