// RUN: cuvil-opt %s | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --mlir-print-op-generic | cuvil-opt | FileCheck %s
// RUN: cuvil-opt %s --verify-roundtrip > /dev/null

// Tests that every cuvil op parses, prints and parses back to the same IR,
// in both the custom and the generic form, and through bytecode.

// CHECK-LABEL: func.func @activations
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[I:.*]]: tensor<4xi64>)
func.func @activations(%x: tensor<2x3xf32>, %i: tensor<4xi64>) {
  // CHECK: cuvil.act.relu %[[X]] : tensor<2x3xf32>
  %0 = cuvil.act.relu %x : tensor<2x3xf32>
  // CHECK: cuvil.act.relu %[[I]] : tensor<4xi64>
  %1 = cuvil.act.relu %i : tensor<4xi64>
  // CHECK: cuvil.act.hardtanh %[[X]] {max_val = 6.000000e+00 : f64, min_val = 0.000000e+00 : f64} : tensor<2x3xf32>
  %2 = cuvil.act.hardtanh %x {min_val = 0.0 : f64, max_val = 6.0 : f64} : tensor<2x3xf32>
  // CHECK: cuvil.act.leaky_relu %[[X]] {negative_slope = 2.000000e-01 : f64} : tensor<2x3xf32>
  %3 = cuvil.act.leaky_relu %x {negative_slope = 0.2 : f64} : tensor<2x3xf32>
  // CHECK: cuvil.act.elu %[[X]] {alpha = 5.000000e-01 : f64} : tensor<2x3xf32>
  %4 = cuvil.act.elu %x {alpha = 0.5 : f64} : tensor<2x3xf32>
  // CHECK: cuvil.act.gelu %[[X]] : tensor<2x3xf32>
  %5 = cuvil.act.gelu %x : tensor<2x3xf32>
  // CHECK: cuvil.act.gelu %[[X]] {approximate = #cuvil<gelu_approximation tanh>} : tensor<2x3xf32>
  %6 = cuvil.act.gelu %x {approximate = #cuvil<gelu_approximation tanh>} : tensor<2x3xf32>
  // CHECK: cuvil.act.silu %[[X]] : tensor<2x3xf32>
  %7 = cuvil.act.silu %x : tensor<2x3xf32>
  // CHECK: cuvil.act.sigmoid %[[X]] : tensor<2x3xf32>
  %8 = cuvil.act.sigmoid %x : tensor<2x3xf32>
  // CHECK: cuvil.act.tanh %[[X]] : tensor<2x3xf32>
  %9 = cuvil.act.tanh %x : tensor<2x3xf32>
  // CHECK: cuvil.act.hardswish %[[X]] : tensor<2x3xf32>
  %10 = cuvil.act.hardswish %x : tensor<2x3xf32>
  // CHECK: cuvil.act.hardsigmoid %[[X]] : tensor<2x3xf32>
  %11 = cuvil.act.hardsigmoid %x : tensor<2x3xf32>
  // CHECK: cuvil.act.softplus %[[X]] {beta = 2.000000e+00 : f64} : tensor<2x3xf32>
  %12 = cuvil.act.softplus %x {beta = 2.0 : f64} : tensor<2x3xf32>
  // CHECK: cuvil.act.mish %[[X]] : tensor<2x3xf32>
  %13 = cuvil.act.mish %x : tensor<2x3xf32>
  // CHECK: cuvil.act.softmax %[[X]] {dim = 1 : i64} : tensor<2x3xf32>
  %14 = cuvil.act.softmax %x {dim = 1 : i64} : tensor<2x3xf32>
  // CHECK: cuvil.act.log_softmax %[[X]] {dim = 0 : i64} : tensor<2x3xf32>
  %15 = cuvil.act.log_softmax %x {dim = 0 : i64} : tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @math
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<3xi64>, %[[S:.*]]: tensor<f64>, %[[B:.*]]: tensor<3xi1>)
func.func @math(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<3xi64>, %s: tensor<f64>, %b: tensor<3xi1>) {
  // CHECK: cuvil.math.neg %[[X]] : tensor<2x3xf32>
  %0 = cuvil.math.neg %x : tensor<2x3xf32>
  // CHECK: cuvil.math.abs %[[I]] : tensor<3xi64>
  %1 = cuvil.math.abs %i : tensor<3xi64>
  // CHECK: cuvil.math.sign %[[X]] : tensor<2x3xf32>
  %2 = cuvil.math.sign %x : tensor<2x3xf32>
  // CHECK: cuvil.math.exp %[[X]] : tensor<2x3xf32>
  %3 = cuvil.math.exp %x : tensor<2x3xf32>
  // CHECK: cuvil.math.expm1 %[[X]] : tensor<2x3xf32>
  %4 = cuvil.math.expm1 %x : tensor<2x3xf32>
  // CHECK: cuvil.math.log %[[X]] : tensor<2x3xf32>
  %5 = cuvil.math.log %x : tensor<2x3xf32>
  // CHECK: cuvil.math.log1p %[[X]] : tensor<2x3xf32>
  %6 = cuvil.math.log1p %x : tensor<2x3xf32>
  // CHECK: cuvil.math.sqrt %[[X]] : tensor<2x3xf32>
  %7 = cuvil.math.sqrt %x : tensor<2x3xf32>
  // CHECK: cuvil.math.rsqrt %[[X]] : tensor<2x3xf32>
  %8 = cuvil.math.rsqrt %x : tensor<2x3xf32>
  // CHECK: cuvil.math.reciprocal %[[X]] : tensor<2x3xf32>
  %9 = cuvil.math.reciprocal %x : tensor<2x3xf32>
  // CHECK: cuvil.math.sin %[[X]] : tensor<2x3xf32>
  %10 = cuvil.math.sin %x : tensor<2x3xf32>
  // CHECK: cuvil.math.cos %[[X]] : tensor<2x3xf32>
  %11 = cuvil.math.cos %x : tensor<2x3xf32>
  // CHECK: cuvil.math.erf %[[X]] : tensor<2x3xf32>
  %12 = cuvil.math.erf %x : tensor<2x3xf32>
  // CHECK: cuvil.math.floor %[[X]] : tensor<2x3xf32>
  %13 = cuvil.math.floor %x : tensor<2x3xf32>
  // CHECK: cuvil.math.ceil %[[X]] : tensor<2x3xf32>
  %14 = cuvil.math.ceil %x : tensor<2x3xf32>
  // CHECK: cuvil.math.round %[[X]] : tensor<2x3xf32>
  %15 = cuvil.math.round %x : tensor<2x3xf32>
  // CHECK: cuvil.math.bitwise_not %[[B]] : tensor<3xi1>
  %16 = cuvil.math.bitwise_not %b : tensor<3xi1>
  // CHECK: cuvil.math.clamp %[[X]] {max = 1.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x3xf32>
  %17 = cuvil.math.clamp %x {min = 0.0 : f64, max = 1.0 : f64} : tensor<2x3xf32>
  // CHECK: cuvil.math.add %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %18 = cuvil.math.add %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.sub %[[I]], %[[S]] : tensor<3xi64>, tensor<f64> -> tensor<3xf64>
  %19 = cuvil.math.sub %i, %s : tensor<3xi64>, tensor<f64> -> tensor<3xf64>
  // CHECK: cuvil.math.mul %[[X]], %[[S]] : tensor<2x3xf32>, tensor<f64> -> tensor<2x3xf32>
  %20 = cuvil.math.mul %x, %s : tensor<2x3xf32>, tensor<f64> -> tensor<2x3xf32>
  // CHECK: cuvil.math.div %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xf32>
  %21 = cuvil.math.div %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xf32>
  // CHECK: cuvil.math.div %[[I]], %[[I]] {rounding_mode = #cuvil<rounding_mode floor>} : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %22 = cuvil.math.div %i, %i {rounding_mode = #cuvil<rounding_mode floor>} : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  // CHECK: cuvil.math.pow %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %23 = cuvil.math.pow %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.maximum %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %24 = cuvil.math.maximum %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.minimum %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %25 = cuvil.math.minimum %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.remainder %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %26 = cuvil.math.remainder %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  // CHECK: cuvil.math.tan %[[X]] : tensor<2x3xf32>
  %27 = cuvil.math.tan %x : tensor<2x3xf32>
  // CHECK: cuvil.math.asin %[[X]] : tensor<2x3xf32>
  %28 = cuvil.math.asin %x : tensor<2x3xf32>
  // CHECK: cuvil.math.acos %[[X]] : tensor<2x3xf32>
  %29 = cuvil.math.acos %x : tensor<2x3xf32>
  // CHECK: cuvil.math.atan %[[X]] : tensor<2x3xf32>
  %30 = cuvil.math.atan %x : tensor<2x3xf32>
  // CHECK: cuvil.math.sinh %[[X]] : tensor<2x3xf32>
  %31 = cuvil.math.sinh %x : tensor<2x3xf32>
  // CHECK: cuvil.math.cosh %[[X]] : tensor<2x3xf32>
  %32 = cuvil.math.cosh %x : tensor<2x3xf32>
  // CHECK: cuvil.math.asinh %[[X]] : tensor<2x3xf32>
  %33 = cuvil.math.asinh %x : tensor<2x3xf32>
  // CHECK: cuvil.math.acosh %[[X]] : tensor<2x3xf32>
  %34 = cuvil.math.acosh %x : tensor<2x3xf32>
  // CHECK: cuvil.math.atanh %[[X]] : tensor<2x3xf32>
  %35 = cuvil.math.atanh %x : tensor<2x3xf32>
  // CHECK: cuvil.math.log2 %[[X]] : tensor<2x3xf32>
  %36 = cuvil.math.log2 %x : tensor<2x3xf32>
  // CHECK: cuvil.math.log10 %[[X]] : tensor<2x3xf32>
  %37 = cuvil.math.log10 %x : tensor<2x3xf32>
  // CHECK: cuvil.math.exp2 %[[X]] : tensor<2x3xf32>
  %38 = cuvil.math.exp2 %x : tensor<2x3xf32>
  // CHECK: cuvil.math.erfc %[[X]] : tensor<2x3xf32>
  %39 = cuvil.math.erfc %x : tensor<2x3xf32>
  // CHECK: cuvil.math.lgamma %[[X]] : tensor<2x3xf32>
  %40 = cuvil.math.lgamma %x : tensor<2x3xf32>
  // CHECK: cuvil.math.trunc %[[X]] : tensor<2x3xf32>
  %41 = cuvil.math.trunc %x : tensor<2x3xf32>
  // CHECK: cuvil.math.fmod %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %42 = cuvil.math.fmod %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.atan2 %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %43 = cuvil.math.atan2 %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.hypot %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %44 = cuvil.math.hypot %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.copysign %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %45 = cuvil.math.copysign %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.nextafter %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %46 = cuvil.math.nextafter %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.fmax %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %47 = cuvil.math.fmax %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.fmin %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %48 = cuvil.math.fmin %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: cuvil.math.bitwise_and %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %49 = cuvil.math.bitwise_and %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  // CHECK: cuvil.math.bitwise_or %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %50 = cuvil.math.bitwise_or %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  // CHECK: cuvil.math.bitwise_xor %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %51 = cuvil.math.bitwise_xor %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  // CHECK: cuvil.math.shift_left %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %52 = cuvil.math.shift_left %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  // CHECK: cuvil.math.shift_right %[[I]], %[[I]] : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  %53 = cuvil.math.shift_right %i, %i : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return
}

// CHECK-LABEL: func.func @logic
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xi64>, %[[C:.*]]: tensor<2x3xi1>)
func.func @logic(%x: tensor<2x3xf32>, %y: tensor<3xi64>, %c: tensor<2x3xi1>) {
  // CHECK: cuvil.logic.eq %[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  %0 = cuvil.logic.eq %x, %y : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.ne
  %1 = cuvil.logic.ne %x, %y : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.lt
  %2 = cuvil.logic.lt %x, %y : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.le
  %3 = cuvil.logic.le %x, %y : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.gt
  %4 = cuvil.logic.gt %x, %y : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.ge
  %5 = cuvil.logic.ge %x, %y : tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.logical_and %[[C]], %[[X]] : tensor<2x3xi1>, tensor<2x3xf32> -> tensor<2x3xi1>
  %6 = cuvil.logic.logical_and %c, %x : tensor<2x3xi1>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.logical_or
  %7 = cuvil.logic.logical_or %c, %x : tensor<2x3xi1>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.logical_xor
  %8 = cuvil.logic.logical_xor %c, %x : tensor<2x3xi1>, tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.logical_not %[[X]] : tensor<2x3xf32> -> tensor<2x3xi1>
  %9 = cuvil.logic.logical_not %x : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: cuvil.logic.where %[[C]], %[[X]], %[[Y]] : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xf32>
  %10 = cuvil.logic.where %c, %x, %y : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xi64> -> tensor<2x3xf32>
  return
}

// CHECK-LABEL: func.func @gemm
//  CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<4x16xf32>, %[[B:.*]]: tensor<4xf32>, %[[A3:.*]]: tensor<2x8x16xf32>, %[[B3:.*]]: tensor<2x16x4xf32>)
func.func @gemm(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4xf32>, %a3: tensor<2x8x16xf32>, %b3: tensor<2x16x4xf32>) {
  // CHECK: cuvil.gemm.linear %[[X]], %[[W]], %[[B]] : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %0 = cuvil.gemm.linear %x, %w, %b : (tensor<8x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  // CHECK: cuvil.gemm.linear %[[X]], %[[W]] : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  %1 = cuvil.gemm.linear %x, %w : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
  // CHECK: cuvil.gemm.matmul %[[A3]], %[[B3]] : tensor<2x8x16xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  %2 = cuvil.gemm.matmul %a3, %b3 : tensor<2x8x16xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  // CHECK: cuvil.gemm.batch_matmul %[[A3]], %[[B3]] : tensor<2x8x16xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  %3 = cuvil.gemm.batch_matmul %a3, %b3 : tensor<2x8x16xf32>, tensor<2x16x4xf32> -> tensor<2x8x4xf32>
  %wt = cuvil.shape.transpose %w {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<4x16xf32> -> tensor<16x4xf32>
  // CHECK: cuvil.gemm.addmm %[[B]], %[[X]], %{{.*}} {alpha = 2.000000e+00 : f64} : (tensor<4xf32>, tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %4 = cuvil.gemm.addmm %b, %x, %wt {alpha = 2.0 : f64} : (tensor<4xf32>, tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  return
}

// CHECK-LABEL: func.func @conv
//  CHECK-SAME: (%[[X:.*]]: tensor<1x3x224x224xf32>, %[[W:.*]]: tensor<64x3x7x7xf32>, %[[B:.*]]: tensor<64xf32>, %[[X1:.*]]: tensor<2x4x16xf32>, %[[W1:.*]]: tensor<8x2x3xf32>, %[[WT:.*]]: tensor<16x8x3x3xf32>, %[[XT:.*]]: tensor<1x16x8x8xf32>)
func.func @conv(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>, %b: tensor<64xf32>, %x1: tensor<2x4x16xf32>, %w1: tensor<8x2x3xf32>, %wt: tensor<16x8x3x3xf32>, %xt: tensor<1x16x8x8xf32>) {
  // CHECK: cuvil.conv.conv2d %[[X]], %[[W]], %[[B]] stride [2, 2] padding [3, 3] dilation [1, 1] : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [2, 2] padding [3, 3] dilation [1, 1] : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // CHECK: cuvil.conv.conv1d %[[X1]], %[[W1]] stride [1] padding [1] dilation [1] groups 2 : (tensor<2x4x16xf32>, tensor<8x2x3xf32>) -> tensor<2x8x16xf32>
  %1 = cuvil.conv.conv1d %x1, %w1 stride [1] padding [1] dilation [1] groups 2 : (tensor<2x4x16xf32>, tensor<8x2x3xf32>) -> tensor<2x8x16xf32>
  // CHECK: cuvil.conv.conv_transpose2d %[[XT]], %[[WT]] stride [2, 2] padding [1, 1] dilation [1, 1] output_padding [1, 1] : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %2 = cuvil.conv.conv_transpose2d %xt, %wt stride [2, 2] padding [1, 1] dilation [1, 1] output_padding [1, 1] : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %w1t = cuvil.tensor.slice %w1 {dim = 0 : i64, start = 0 : i64, end = 4 : i64} : tensor<8x2x3xf32> -> tensor<4x2x3xf32>
  // CHECK: cuvil.conv.conv_transpose1d %[[X1]], %{{.*}} stride [2] padding [0] dilation [1] output_padding [1] : (tensor<2x4x16xf32>, tensor<4x2x3xf32>) -> tensor<2x2x34xf32>
  %3 = cuvil.conv.conv_transpose1d %x1, %w1t stride [2] padding [0] dilation [1] output_padding [1] : (tensor<2x4x16xf32>, tensor<4x2x3xf32>) -> tensor<2x2x34xf32>
  return
}

// CHECK-LABEL: func.func @norm
//  CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x4xf32>, %[[C:.*]]: tensor<8xf32>, %[[T:.*]]: tensor<2x5x16xf32>, %[[N:.*]]: tensor<16xf32>)
func.func @norm(%x: tensor<2x8x4x4xf32>, %c: tensor<8xf32>, %t: tensor<2x5x16xf32>, %n: tensor<16xf32>) {
  // CHECK: cuvil.norm.batch_norm %[[X]], %[[C]], %[[C]] weight %[[C]] bias %[[C]] {eps = 1.000000e-03 : f64} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %0 = cuvil.norm.batch_norm %x, %c, %c weight %c bias %c {eps = 1.0e-03 : f64} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  // CHECK: cuvil.norm.batch_norm %[[X]], %[[C]], %[[C]] bias %[[C]] : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %1 = cuvil.norm.batch_norm %x, %c, %c bias %c : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  // CHECK: cuvil.norm.layer_norm %[[T]] weight %[[N]] bias %[[N]] {normalized_shape = array<i64: 16>} : (tensor<2x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  %2 = cuvil.norm.layer_norm %t weight %n bias %n {normalized_shape = array<i64: 16>} : (tensor<2x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
  // CHECK: cuvil.norm.group_norm %[[X]] weight %[[C]] {num_groups = 4 : i64} : (tensor<2x8x4x4xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %3 = cuvil.norm.group_norm %x weight %c {num_groups = 4 : i64} : (tensor<2x8x4x4xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  return
}

// CHECK-LABEL: func.func @pool
//  CHECK-SAME: (%[[X:.*]]: tensor<1x64x112x112xf32>, %[[Y:.*]]: tensor<2x3x10xf32>)
func.func @pool(%x: tensor<1x64x112x112xf32>, %y: tensor<2x3x10xf32>) {
  // CHECK: cuvil.pool.max_pool2d %[[X]] kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  // CHECK: cuvil.pool.max_pool1d %[[Y]] kernel [3] stride [2] padding [0] dilation [1] ceil_mode : tensor<2x3x10xf32> -> tensor<2x3x5xf32>
  %1 = cuvil.pool.max_pool1d %y kernel [3] stride [2] padding [0] dilation [1] ceil_mode : tensor<2x3x10xf32> -> tensor<2x3x5xf32>
  // CHECK: cuvil.pool.avg_pool2d %[[X]] kernel [2, 2] stride [2, 2] padding [0, 0] count_include_pad divisor 3 : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  %2 = cuvil.pool.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] count_include_pad divisor 3 : tensor<1x64x112x112xf32> -> tensor<1x64x56x56xf32>
  // CHECK: cuvil.pool.avg_pool1d %[[Y]] kernel [4] stride [3] padding [2] ceil_mode : tensor<2x3x10xf32> -> tensor<2x3x4xf32>
  %3 = cuvil.pool.avg_pool1d %y kernel [4] stride [3] padding [2] ceil_mode : tensor<2x3x10xf32> -> tensor<2x3x4xf32>
  // CHECK: cuvil.pool.adaptive_avg_pool2d %[[X]] output_size [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x1x1xf32>
  %4 = cuvil.pool.adaptive_avg_pool2d %x output_size [1, 1] : tensor<1x64x112x112xf32> -> tensor<1x64x1x1xf32>
  // CHECK: cuvil.pool.adaptive_avg_pool1d %[[Y]] output_size [4] : tensor<2x3x10xf32> -> tensor<2x3x4xf32>
  %5 = cuvil.pool.adaptive_avg_pool1d %y output_size [4] : tensor<2x3x10xf32> -> tensor<2x3x4xf32>
  return
}

// CHECK-LABEL: func.func @reduce
//  CHECK-SAME: (%[[X:.*]]: tensor<3x4x5xf32>, %[[I:.*]]: tensor<3x4xi32>)
func.func @reduce(%x: tensor<3x4x5xf32>, %i: tensor<3x4xi32>) {
  // CHECK: cuvil.reduce.sum %[[X]] dims [1] : tensor<3x4x5xf32> -> tensor<3x5xf32>
  %0 = cuvil.reduce.sum %x dims [1] : tensor<3x4x5xf32> -> tensor<3x5xf32>
  // CHECK: cuvil.reduce.sum %[[I]] dims [0, 1] keepdim : tensor<3x4xi32> -> tensor<1x1xi64>
  %1 = cuvil.reduce.sum %i dims [0, 1] keepdim : tensor<3x4xi32> -> tensor<1x1xi64>
  // CHECK: cuvil.reduce.prod %[[X]] dims [2] : tensor<3x4x5xf32> -> tensor<3x4xf32>
  %2 = cuvil.reduce.prod %x dims [2] : tensor<3x4x5xf32> -> tensor<3x4xf32>
  // CHECK: cuvil.reduce.mean %[[X]] dims [1, 2] keepdim : tensor<3x4x5xf32> -> tensor<3x1x1xf32>
  %3 = cuvil.reduce.mean %x dims [1, 2] keepdim : tensor<3x4x5xf32> -> tensor<3x1x1xf32>
  // CHECK: cuvil.reduce.max %[[I]] dims [1] : tensor<3x4xi32> -> tensor<3xi32>
  %4 = cuvil.reduce.max %i dims [1] : tensor<3x4xi32> -> tensor<3xi32>
  // CHECK: cuvil.reduce.min %[[X]] dims [0] : tensor<3x4x5xf32> -> tensor<4x5xf32>
  %5 = cuvil.reduce.min %x dims [0] : tensor<3x4x5xf32> -> tensor<4x5xf32>
  // CHECK: cuvil.reduce.any %[[X]] dims [0] : tensor<3x4x5xf32> -> tensor<4x5xi1>
  %6 = cuvil.reduce.any %x dims [0] : tensor<3x4x5xf32> -> tensor<4x5xi1>
  // CHECK: cuvil.reduce.all %[[I]] dims [1] : tensor<3x4xi32> -> tensor<3xi1>
  %7 = cuvil.reduce.all %i dims [1] : tensor<3x4xi32> -> tensor<3xi1>
  // CHECK: cuvil.reduce.var %[[X]] dims [2] {correction = 0 : i64} : tensor<3x4x5xf32> -> tensor<3x4xf32>
  %8 = cuvil.reduce.var %x dims [2] {correction = 0 : i64} : tensor<3x4x5xf32> -> tensor<3x4xf32>
  // CHECK: cuvil.reduce.std %[[X]] dims [2] : tensor<3x4x5xf32> -> tensor<3x4xf32>
  %9 = cuvil.reduce.std %x dims [2] : tensor<3x4x5xf32> -> tensor<3x4xf32>
  // CHECK: cuvil.reduce.argmax %[[X]] dim 2 keepdim : tensor<3x4x5xf32> -> tensor<3x4x1xi64>
  %10 = cuvil.reduce.argmax %x dim 2 keepdim : tensor<3x4x5xf32> -> tensor<3x4x1xi64>
  // CHECK: cuvil.reduce.cumulative %[[X]] {dim = 1 : i64, kind = #cuvil<scan_kind sum>} : tensor<3x4x5xf32> -> tensor<3x4x5xf32>
  %c0 = cuvil.reduce.cumulative %x {dim = 1 : i64, kind = #cuvil<scan_kind sum>} : tensor<3x4x5xf32> -> tensor<3x4x5xf32>
  // CHECK: cuvil.reduce.cumulative_index %[[X]] {dim = 2 : i64, kind = #cuvil<scan_kind max>} : tensor<3x4x5xf32> -> tensor<3x4x5xi64>
  %c1 = cuvil.reduce.cumulative_index %x {dim = 2 : i64, kind = #cuvil<scan_kind max>} : tensor<3x4x5xf32> -> tensor<3x4x5xi64>
  // CHECK: cuvil.reduce.argmin %[[X]] : tensor<3x4x5xf32> -> tensor<i64>
  %11 = cuvil.reduce.argmin %x : tensor<3x4x5xf32> -> tensor<i64>
  return
}

// CHECK-LABEL: func.func @shape
//  CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[O:.*]]: tensor<1x3x1xf32>)
func.func @shape(%x: tensor<2x3x4xf32>, %o: tensor<1x3x1xf32>) {
  // CHECK: cuvil.shape.reshape %[[X]] {shape = array<i64: 6, -1>} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %0 = cuvil.shape.reshape %x {shape = array<i64: 6, -1>} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // CHECK: cuvil.shape.flatten %[[X]] {end_dim = 2 : i64, start_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %1 = cuvil.shape.flatten %x {start_dim = 1 : i64, end_dim = 2 : i64} : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK: cuvil.shape.squeeze %[[O]] {dims = array<i64: 0, 2>} : tensor<1x3x1xf32> -> tensor<3xf32>
  %2 = cuvil.shape.squeeze %o {dims = array<i64: 0, 2>} : tensor<1x3x1xf32> -> tensor<3xf32>
  // CHECK: cuvil.shape.unsqueeze %[[X]] {dim = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4x1xf32>
  %3 = cuvil.shape.unsqueeze %x {dim = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4x1xf32>
  // CHECK: cuvil.shape.permute %[[X]] {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %4 = cuvil.shape.permute %x {dims = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  // CHECK: cuvil.shape.transpose %[[X]] {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %5 = cuvil.shape.transpose %x {dim0 = 0 : i64, dim1 = 2 : i64} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  // CHECK: cuvil.shape.expand %[[O]] {shape = array<i64: 5, 2, -1, 7>} : tensor<1x3x1xf32> -> tensor<5x2x3x7xf32>
  %6 = cuvil.shape.expand %o {shape = array<i64: 5, 2, -1, 7>} : tensor<1x3x1xf32> -> tensor<5x2x3x7xf32>
  return
}

// CHECK-LABEL: func.func @tensor
//  CHECK-SAME: (%[[X:.*]]: tensor<4x6xf32>, %[[I:.*]]: tensor<3xi64>, %[[G:.*]]: tensor<4x2xi32>, %[[D:.*]]: tensor<?x6xf32>)
func.func @tensor(%x: tensor<4x6xf32>, %i: tensor<3xi64>, %g: tensor<4x2xi32>, %d: tensor<?x6xf32>) {
  // CHECK: cuvil.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %c = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: cuvil.constant dense_resource<blob1> : tensor<2xi32>
  %r = cuvil.constant dense_resource<blob1> : tensor<2xi32>
  // CHECK: cuvil.tensor.cast %[[X]] : tensor<4x6xf32> -> tensor<4x6xi64>
  %0 = cuvil.tensor.cast %x : tensor<4x6xf32> -> tensor<4x6xi64>
  // CHECK: cuvil.tensor.concat %[[X]], %[[D]] {dim = 0 : i64} : (tensor<4x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  %1 = cuvil.tensor.concat %x, %d {dim = 0 : i64} : (tensor<4x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32>
  // CHECK: cuvil.tensor.slice %[[X]] {dim = 1 : i64, end = -1 : i64, start = 1 : i64, step = 2 : i64} : tensor<4x6xf32> -> tensor<4x2xf32>
  %2 = cuvil.tensor.slice %x {dim = 1 : i64, start = 1 : i64, end = -1 : i64, step = 2 : i64} : tensor<4x6xf32> -> tensor<4x2xf32>
  // CHECK: cuvil.tensor.select %[[X]] {dim = 0 : i64, index = -1 : i64} : tensor<4x6xf32> -> tensor<6xf32>
  %3 = cuvil.tensor.select %x {dim = 0 : i64, index = -1 : i64} : tensor<4x6xf32> -> tensor<6xf32>
  // CHECK: cuvil.tensor.index_select %[[X]], %[[I]] {dim = 1 : i64} : tensor<4x6xf32>, tensor<3xi64> -> tensor<4x3xf32>
  %4 = cuvil.tensor.index_select %x, %i {dim = 1 : i64} : tensor<4x6xf32>, tensor<3xi64> -> tensor<4x3xf32>
  // CHECK: cuvil.tensor.gather %[[X]], %[[G]] {dim = 1 : i64} : tensor<4x6xf32>, tensor<4x2xi32> -> tensor<4x2xf32>
  %5 = cuvil.tensor.gather %x, %g {dim = 1 : i64} : tensor<4x6xf32>, tensor<4x2xi32> -> tensor<4x2xf32>
  // CHECK: cuvil.tensor.pad %[[X]] {mode = #cuvil<pad_mode reflect>, pad = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x9xf32>
  %6 = cuvil.tensor.pad %x {pad = array<i64: 1, 2>, mode = #cuvil<pad_mode reflect>} : tensor<4x6xf32> -> tensor<4x9xf32>
  // CHECK: cuvil.tensor.pad %[[X]] {pad = array<i64: -1, 0, 1, 1>, value = 5.000000e-01 : f64} : tensor<4x6xf32> -> tensor<6x5xf32>
  %7 = cuvil.tensor.pad %x {pad = array<i64: -1, 0, 1, 1>, value = 0.5 : f64} : tensor<4x6xf32> -> tensor<6x5xf32>
  // CHECK: cuvil.tensor.embedding %[[X]], %[[G]] {padding_idx = 0 : i64} : tensor<4x6xf32>, tensor<4x2xi32> -> tensor<4x2x6xf32>
  %8 = cuvil.tensor.embedding %x, %g {padding_idx = 0 : i64} : tensor<4x6xf32>, tensor<4x2xi32> -> tensor<4x2x6xf32>
  // CHECK: cuvil.tensor.scatter %[[X]], %[[G]], %[[X]] {dim = 1 : i64} : tensor<4x6xf32>, tensor<4x2xi32>, tensor<4x6xf32> -> tensor<4x6xf32>
  %9 = cuvil.tensor.scatter %x, %g, %x {dim = 1 : i64} : tensor<4x6xf32>, tensor<4x2xi32>, tensor<4x6xf32> -> tensor<4x6xf32>
  // CHECK: cuvil.tensor.scatter %[[X]], %[[G]], %[[X]] {dim = 0 : i64, include_self = false, reduce = #cuvil<scatter_reduce amax>}
  %10 = cuvil.tensor.scatter %x, %g, %x {dim = 0 : i64, reduce = #cuvil<scatter_reduce amax>, include_self = false} : tensor<4x6xf32>, tensor<4x2xi32>, tensor<4x6xf32> -> tensor<4x6xf32>
  // CHECK: cuvil.tensor.sort %[[X]] {descending, dim = 1 : i64} : tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4x6xi64>
  %11:2 = cuvil.tensor.sort %x {dim = 1 : i64, descending} : tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4x6xi64>
  return
}

// CHECK-LABEL: func @resize
func.func @resize(%x: tensor<1x3x8x8xf32>, %u: tensor<2x4x5xui8>, %d: tensor<?x3x?x8x8xf16>) {
  // CHECK: cuvil.tensor.resize %{{.*}} linear size [16, 12] align_corners : tensor<1x3x8x8xf32> -> tensor<1x3x16x12xf32>
  %0 = cuvil.tensor.resize %x linear size [16, 12] align_corners : tensor<1x3x8x8xf32> -> tensor<1x3x16x12xf32>
  // CHECK: cuvil.tensor.resize %{{.*}} nearest size [3] scales [6.000000e-01] : tensor<2x4x5xui8> -> tensor<2x4x3xui8>
  %1 = cuvil.tensor.resize %u nearest size [3] scales [0.6] : tensor<2x4x5xui8> -> tensor<2x4x3xui8>
  // CHECK: cuvil.tensor.resize %{{.*}} nearest_exact size [2, 4, 4] scales [0.000000e+00, 5.000000e-01, 5.000000e-01] : tensor<?x3x?x8x8xf16> -> tensor<?x3x2x4x4xf16>
  %2 = cuvil.tensor.resize %d nearest_exact size [2, 4, 4] scales [0.0, 0.5, 0.5] : tensor<?x3x?x8x8xf16> -> tensor<?x3x2x4x4xf16>
  return
}

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000100000002000000"
    }
  }
#-}

// CHECK-LABEL: func @effects
func.func @effects(%x: tensor<2xf32>, %c: tensor<i1>) {
  // CHECK: cuvil.effect.assert %{{.*}}, "AssertionError: x must be positive" : tensor<i1>
  cuvil.effect.assert %c, "AssertionError: x must be positive" : tensor<i1>
  // CHECK: cuvil.effect.print "x = {} and {{.*}}" %{{.*}} : tensor<2xf32>
  cuvil.effect.print "x = {} and {{braces}}" %x : tensor<2xf32>
  // CHECK: cuvil.effect.print "no values"
  cuvil.effect.print "no values"
  return
}

// CHECK-LABEL: func @fused
func.func @fused(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %skip: tensor<1x4x8x8xf32>, %v: tensor<2x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<2x3xf32>) {
  // CHECK: cuvil.fused.group conv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<1x4x8x8xf32>, %[[WT:.*]]: tensor<4x4x3x3xf32>, %[[BI:.*]]: tensor<4xf32>, %[[R:.*]]: tensor<1x4x8x8xf32>):
  // CHECK-NEXT: %[[C:.*]] = cuvil.conv.conv2d %[[A]], %[[WT]], %[[BI]]
  // CHECK-NEXT: %[[S:.*]] = cuvil.math.add %[[C]], %[[R]]
  // CHECK-NEXT: %[[Y:.*]] = cuvil.act.relu %[[S]]
  // CHECK-NEXT: cuvil.fused.yield %[[Y]] : tensor<1x4x8x8xf32>
  %0 = cuvil.fused.group conv (%x, %w, %b, %skip) : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  ^bb0(%a: tensor<1x4x8x8xf32>, %wt: tensor<4x4x3x3xf32>, %bias: tensor<4xf32>, %res: tensor<1x4x8x8xf32>):
    %c = cuvil.conv.conv2d %a, %wt, %bias stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    %s = cuvil.math.add %c, %res : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
    %y = cuvil.act.relu %s : tensor<1x4x8x8xf32>
    cuvil.fused.yield %y : tensor<1x4x8x8xf32>
  }
  // CHECK: cuvil.fused.group elementwise(%{{.*}})
  %1 = cuvil.fused.group elementwise (%v) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %s = cuvil.act.sigmoid %a : tensor<2x3xf32>
    %m = cuvil.math.mul %a, %s : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    cuvil.fused.yield %m : tensor<2x3xf32>
  }
  return %0, %1 : tensor<1x4x8x8xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func @runtime_shapes
func.func @runtime_shapes(%x: tensor<?x4x8xf32>, %s: tensor<2xi64>) -> (tensor<i64>, tensor<?x?xf32>) {
  // CHECK: cuvil.shape.dim %{{.*}} {dim = 0 : i64} : tensor<?x4x8xf32> -> tensor<i64>
  %n = cuvil.shape.dim %x {dim = 0 : i64} : tensor<?x4x8xf32> -> tensor<i64>
  // CHECK: cuvil.shape.reshape_dynamic %{{.*}}, %{{.*}} : tensor<?x4x8xf32>, tensor<2xi64> -> tensor<?x?xf32>
  %y = cuvil.shape.reshape_dynamic %x, %s : tensor<?x4x8xf32>, tensor<2xi64> -> tensor<?x?xf32>
  return %n, %y : tensor<i64>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @linalg_kernels
func.func @linalg_kernels(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>, %w: tensor<5x3xf64>, %p: tensor<2x3x2xf32>) {
  // CHECK: cuvil.linalg.kernel "lu"(%{{.*}}) : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
  %lu:3 = cuvil.linalg.kernel "lu" (%a) : (tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
  // CHECK: cuvil.linalg.kernel "triangular_solve"(%{{.*}}, %{{.*}}) {flags = array<i64: 1, 1, 0>}
  %x = cuvil.linalg.kernel "triangular_solve" (%a, %b) {flags = array<i64: 1, 1, 0>} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: cuvil.linalg.kernel "svd"(%{{.*}}) {flags = array<i64: 0>} : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>, tensor<3x3xf64>)
  %s:3 = cuvil.linalg.kernel "svd" (%w) {flags = array<i64: 0>} : (tensor<5x3xf64>) -> (tensor<5x3xf64>, tensor<3xf64>, tensor<3x3xf64>)
  // CHECK: cuvil.linalg.kernel "eigh"(%{{.*}}) {flags = array<i64: 0>} : (tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3x3xf32>)
  %e:2 = cuvil.linalg.kernel "eigh" (%a) {flags = array<i64: 0>} : (tensor<2x3x3xf32>) -> (tensor<2x3xf32>, tensor<2x3x3xf32>)
  // CHECK: cuvil.linalg.kernel "dft"(%{{.*}}) {flags = array<i64: 1>} : (tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %f = cuvil.linalg.kernel "dft" (%p) {flags = array<i64: 1>} : (tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return
}

// CHECK-LABEL: func.func @special_functions
func.func @special_functions(%x: tensor<4xf32>, %n: tensor<f32>) {
  // CHECK: cuvil.math.special %{{.*}} {function = "bessel_j0"} : tensor<4xf32>
  %0 = cuvil.math.special %x {function = "bessel_j0"} : tensor<4xf32>
  // CHECK: cuvil.math.special2 %{{.*}}, %{{.*}} {function = "polygamma"} : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %1 = cuvil.math.special2 %n, %x {function = "polygamma"} : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// A pooling of run-time spatial sizes keeps them run-time sizes.
// CHECK-LABEL: func.func @pool_dynamic
//       CHECK:   cuvil.pool.max_pool2d %{{.*}} kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x2x?x6xf32> -> tensor<1x2x?x3xf32>
//       CHECK:   cuvil.pool.avg_pool2d %{{.*}} kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x2x?x6xf32> -> tensor<1x2x?x3xf32>
func.func @pool_dynamic(%x: tensor<1x2x?x6xf32>) {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x2x?x6xf32> -> tensor<1x2x?x3xf32>
  %1 = cuvil.pool.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x2x?x6xf32> -> tensor<1x2x?x3xf32>
  return
}

// Tensors of run-time sizes: a fill value or a tensor broadcast to sizes,
// and 0..n-1.
// CHECK-LABEL: func.func @run_time_sizes
//       CHECK:   cuvil.shape.expand_dynamic %{{.*}}, [%{{.*}}, %{{.*}}] : tensor<f32>, [tensor<i64>, tensor<i64>] -> tensor<?x4xf32>
//       CHECK:   cuvil.tensor.iota %{{.*}} : tensor<i64> -> tensor<?xi64>
func.func @run_time_sizes(%x: tensor<?x8xf32>, %v: tensor<f32>) {
  %n = cuvil.shape.dim %x {dim = 0 : i64} : tensor<?x8xf32> -> tensor<i64>
  %four = cuvil.constant dense<4> : tensor<i64>
  %0 = cuvil.shape.expand_dynamic %v, [%n, %four] : tensor<f32>, [tensor<i64>, tensor<i64>] -> tensor<?x4xf32>
  %1 = cuvil.tensor.iota %n : tensor<i64> -> tensor<?xi64>
  return
}
