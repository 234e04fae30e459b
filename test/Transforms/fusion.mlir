// RUN: cuvil-opt %s --split-input-file --cuvil-fuse='remarks=1' --verify-diagnostics | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-fuse --cuvil-fusion-remarks --verify-diagnostics -o /dev/null

// A conv with its bias, residual add and relu becomes one group.
// CHECK-LABEL: func @conv_epilogue
func.func @conv_epilogue(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %skip: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: %[[G:.*]] = cuvil.fused.group conv(%arg0, %arg1, %arg2, %arg3)
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: cuvil.conv.conv2d
  // CHECK-NEXT: cuvil.math.add
  // CHECK-NEXT: cuvil.act.relu
  // CHECK-NEXT: cuvil.fused.yield
  // CHECK: return %[[G]]
  %c = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %s = cuvil.math.add %c, %skip : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf32>
  %y = cuvil.act.relu %s : tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// An element-wise chain (silu written out, then a scale) is one group; a
// lone element-wise op is left alone.
// CHECK-LABEL: func @elementwise_chain
func.func @elementwise_chain(%x: tensor<2x8xf32>, %k: tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: cuvil.fused.group elementwise(%arg0, %arg1)
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: cuvil.act.sigmoid
  // CHECK-NEXT: cuvil.math.mul
  // CHECK-NEXT: cuvil.math.mul
  // CHECK-NEXT: cuvil.fused.yield
  %s = cuvil.act.sigmoid %x : tensor<2x8xf32>
  %m = cuvil.math.mul %s, %x : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %y = cuvil.math.mul %m, %k : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  // CHECK: cuvil.math.exp %arg0
  %e = cuvil.math.exp %x : tensor<2x8xf32>
  return %y, %e : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Rule: the intermediate must have no other user.
// CHECK-LABEL: func @other_users
func.func @other_users(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK-NOT: cuvil.fused.group
  %l = cuvil.gemm.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{'cuvil.act.relu' not fused into the gemm group of 'cuvil.gemm.linear': the intermediate it consumes has 2 users, so it must be stored}}
  %r = cuvil.act.relu %l : tensor<4x8xf32>
  return %r, %l : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Rule: no fusion across a control-flow boundary.
// CHECK-LABEL: func @control_flow
func.func @control_flow(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %flag: i1, %other: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // CHECK-NOT: cuvil.fused.group
  %l = cuvil.gemm.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %r = scf.if %flag -> tensor<4x8xf32> {
    // expected-remark @+1 {{'cuvil.act.relu' not fused into the gemm group of 'cuvil.gemm.linear': it is on the other side of a control-flow boundary}}
    %a = cuvil.act.relu %l : tensor<4x8xf32>
    scf.yield %a : tensor<4x8xf32>
  } else {
    scf.yield %other : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}

// -----

// Rule: the epilogue keeps the element type.
// CHECK-LABEL: func @dtype_change
func.func @dtype_change(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>) -> tensor<4x8xf16> {
  // CHECK-NOT: cuvil.fused.group
  %l = cuvil.gemm.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{'cuvil.tensor.cast' not fused into the gemm group of 'cuvil.gemm.linear': it changes the element type (dtype mismatch: f32 -> f16)}}
  %h = cuvil.tensor.cast %l : tensor<4x8xf32> -> tensor<4x8xf16>
  return %h : tensor<4x8xf16>
}

// -----

// Rule: the epilogue keeps the shape (no broadcast to a larger one).
// CHECK-LABEL: func @broadcast
func.func @broadcast(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %big: tensor<3x4x8xf32>) -> tensor<3x4x8xf32> {
  // CHECK-NOT: cuvil.fused.group
  %l = cuvil.gemm.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{'cuvil.math.add' not fused into the gemm group of 'cuvil.gemm.linear': it broadcasts the intermediate to a larger shape}}
  %a = cuvil.math.add %l, %big : tensor<4x8xf32>, tensor<3x4x8xf32> -> tensor<3x4x8xf32>
  return %a : tensor<3x4x8xf32>
}

// -----

// Rule: no operand that is a strided view; a contiguous view is fine.
// CHECK-LABEL: func @views
func.func @views(%x: tensor<4x16xf32>, %w: tensor<8x16xf32>, %t: tensor<8x4xf32>, %r: tensor<32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %l = cuvil.gemm.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %tt = cuvil.shape.transpose %t {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<8x4xf32> -> tensor<4x8xf32>
  // expected-remark @+1 {{'cuvil.math.add' not fused into the gemm group of 'cuvil.gemm.linear': its operand is a non-contiguous view ('cuvil.shape.transpose'), which the kernel would have to gather}}
  %a = cuvil.math.add %l, %tt : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  // CHECK: cuvil.fused.group gemm
  // CHECK: cuvil.math.add
  %l2 = cuvil.gemm.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  %rr = cuvil.shape.reshape %r {shape = array<i64: 4, 8>} : tensor<32xf32> -> tensor<4x8xf32>
  %b = cuvil.math.add %l2, %rr : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// Rule: in a conv/GEMM group, no operand may share storage with the
// anchor's input (the result may be written over it while the anchor
// still reads it).
// CHECK-LABEL: func @aliasing
func.func @aliasing(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // CHECK-NOT: cuvil.fused.group
  %l = cuvil.gemm.linear %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %v = cuvil.shape.reshape %x {shape = array<i64: 8, 8>} : tensor<8x8xf32> -> tensor<8x8xf32>
  // expected-remark @+1 {{'cuvil.math.add' not fused into the gemm group of 'cuvil.gemm.linear': its operand shares storage with the anchor's input}}
  %a = cuvil.math.add %l, %v : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %a : tensor<8x8xf32>
}
