// RUN: cuvil-opt %s -split-input-file -verify-diagnostics

// Tests that each op's verifier states the broken rule precisely.

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

func.func @silu_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'cuvil.act.silu' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<4xi32>'}}
  %0 = cuvil.act.silu %x : tensor<4xi32>
  return
}

// -----

func.func @relu_bool(%x: tensor<4xi1>) {
  // expected-error @+1 {{'cuvil.act.relu' op operand must have a numeric (non-i1) element type}}
  %0 = cuvil.act.relu %x : tensor<4xi1>
  return
}

// -----

func.func @unranked(%x: tensor<*xf32>) {
  // expected-error @+1 {{'cuvil.act.tanh' op operand #0 must be ranked tensor of i1/ui8/i8/i16/i32/i64/f16/bf16/f32/f64}}
  %0 = "cuvil.act.tanh"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}

// -----

func.func @complex(%x: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'cuvil.math.neg' op operand #0 must be ranked tensor of i1/ui8/i8/i16/i32/i64/f16/bf16/f32/f64}}
  %0 = cuvil.math.neg %x : tensor<4xcomplex<f32>>
  return
}

// -----

func.func @unary_result_differs(%x: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.act.relu' op result type 'tensor<4xf64>' must be 'tensor<4xf32>'}}
  %0 = "cuvil.act.relu"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

// -----

func.func @hardtanh_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.act.hardtanh' op min_val (2.000000e+00) must not exceed max_val (1.000000e+00)}}
  %0 = cuvil.act.hardtanh %x {min_val = 2.0 : f64, max_val = 1.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @softmax_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.act.softmax' op dim 2 is out of range for rank 2 (expected 0 <= dim < 2; negative dims are normalised by the importer)}}
  %0 = cuvil.act.softmax %x {dim = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @log_softmax_negative_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.act.log_softmax' op dim -1 is out of range for rank 2}}
  %0 = cuvil.act.log_softmax %x {dim = -1 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @softplus_beta(%x: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.act.softplus' op beta must be non-zero}}
  %0 = cuvil.act.softplus %x {beta = 0.0 : f64} : tensor<2xf32>
  return
}

//===----------------------------------------------------------------------===//
// Math and logic
//===----------------------------------------------------------------------===//

// -----

func.func @clamp_no_bounds(%x: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.math.clamp' op needs at least one of 'min' and 'max'}}
  %0 = cuvil.math.clamp %x : tensor<2xf32>
  return
}

// -----

func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.math.add' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = cuvil.math.add %x, %y : tensor<2x3xf32>, tensor<2xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @add_wrong_result_type(%x: tensor<3xi64>, %y: tensor<f64>) {
  // expected-error @+1 {{'cuvil.math.add' op result type 'tensor<3xi64>' does not match the type its operands imply, 'tensor<3xf64>'}}
  %0 = cuvil.math.add %x, %y : tensor<3xi64>, tensor<f64> -> tensor<3xi64>
  return
}

// -----

func.func @add_wrong_result_shape(%x: tensor<2x3xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.math.add' op result type 'tensor<3xf32>' does not match the type its operands imply, 'tensor<2x3xf32>'}}
  %0 = cuvil.math.add %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @sub_bool(%x: tensor<3xi1>, %y: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.sub' op lhs must have a numeric (non-i1) element type, got 'tensor<3xi1>'}}
  %0 = cuvil.math.sub %x, %y : tensor<3xi1>, tensor<3xi64> -> tensor<3xi64>
  return
}

// -----

func.func @div_int_result(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.div' op result type 'tensor<3xi64>' does not match the type its operands imply, 'tensor<3xf32>'}}
  %0 = cuvil.math.div %x, %x : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return
}

// -----

func.func @div_floor_bool(%x: tensor<3xi1>) {
  // expected-error @+1 {{'cuvil.math.div' op rounding division of two i1 tensors is not supported}}
  %0 = cuvil.math.div %x, %x {rounding_mode = #cuvil<rounding_mode floor>} : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  return
}

// -----

func.func @bitwise_not_float(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.math.bitwise_not' op operand must have an integer or i1 element type, got 'tensor<3xf32>'}}
  %0 = cuvil.math.bitwise_not %x : tensor<3xf32>
  return
}

// -----

func.func @compare_result(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.logic.lt' op result #0 must be ranked tensor of i1/ui8/i8/i16/i32/i64/f16/bf16/f32/f64, but got 'tensor<3xcomplex<f32>>'}}
  %0 = "cuvil.logic.lt"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
  return
}

// -----

func.func @compare_not_bool(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.logic.lt' op result type 'tensor<3xf32>' does not match the type its operands imply, 'tensor<3xi1>'}}
  %0 = cuvil.logic.lt %x, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @where_condition(%c: tensor<3xf32>, %x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.logic.where' op operand #0 must be ranked tensor of i1}}
  %0 = cuvil.logic.where %c, %x, %x : tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @where_broadcast(%c: tensor<4xi1>, %x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.logic.where' op operand shapes 4, 3 and 3 do not broadcast}}
  %0 = cuvil.logic.where %c, %x, %x : tensor<4xi1>, tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

// -----

func.func @linear_features(%x: tensor<2x8xf32>, %w: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.gemm.linear' op input features (8) do not match weight in_features (6)}}
  %0 = cuvil.gemm.linear %x, %w : (tensor<2x8xf32>, tensor<4x6xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<4x8x1xf32>) {
  // expected-error @+1 {{'cuvil.gemm.linear' op weight must be [out_features, in_features], got 'tensor<4x8x1xf32>'}}
  %0 = cuvil.gemm.linear %x, %w : (tensor<2x8xf32>, tensor<4x8x1xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'cuvil.gemm.linear' op bias must be [4], got 'tensor<5xf32>'}}
  %0 = cuvil.gemm.linear %x, %w, %b : (tensor<2x8xf32>, tensor<4x8xf32>, tensor<5xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @linear_mixed_types(%x: tensor<2x8xf32>, %w: tensor<4x8xf16>) {
  // expected-error @+1 {{'cuvil.gemm.linear' op weight element type 'f16' differs from input element type 'f32' (insert cuvil.tensor.cast)}}
  %0 = cuvil.gemm.linear %x, %w : (tensor<2x8xf32>, tensor<4x8xf16>) -> tensor<2x4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm.matmul' op contraction sizes differ: lhs 2x3 has 3, rhs 4x5 has 4}}
  %0 = cuvil.gemm.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm.matmul' op batch dimensions 2 and 3 do not broadcast}}
  %0 = cuvil.gemm.matmul %a, %b : tensor<2x3x4xf32>, tensor<3x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.gemm.matmul' op operands must have rank >= 1}}
  %0 = cuvil.gemm.matmul %a, %b : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @bmm_rank(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm.batch_matmul' op operands must be rank 3}}
  %0 = cuvil.gemm.batch_matmul %a, %b : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  return
}

// -----

func.func @bmm_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm.batch_matmul' op batch sizes differ: 2 vs 3}}
  %0 = cuvil.gemm.batch_matmul %a, %b : tensor<2x3x4xf32>, tensor<3x4x5xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @addmm_input(%i: tensor<3xf32>, %a: tensor<2x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'cuvil.gemm.addmm' op input of shape 3 does not broadcast to the product's shape 2x5}}
  %0 = cuvil.gemm.addmm %i, %a, %b : (tensor<3xf32>, tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

// -----

func.func @conv_rank(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op input must be rank 4 ([N, C, spatial...]), got 'tensor<3x8x8xf32>'}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_stride_arity(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op stride needs 2 entries (one per spatial dimension), got 1}}
  %0 = cuvil.conv.conv2d %x, %w stride [1] padding [0, 0] dilation [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_stride_zero(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op stride entries must be >= 1, got [1, 0]}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 0] padding [0, 0] dilation [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op padding entries must be >= 0, got [-1, 0]}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [-1, 0] dilation [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op input channels (6) are not divisible by groups (4)}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 4 : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_out_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<5x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op output channels (5) are not divisible by groups (2)}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 : (tensor<1x6x8x8xf32>, tensor<5x3x3x3xf32>) -> tensor<1x5x6x6xf32>
  return
}

// -----

func.func @conv_kernel_too_big(%x: tensor<1x3x4x4xf32>, %w: tensor<4x3x5x5xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op spatial dimension 0: input size 4 (padded by 0 on each side) is smaller than the dilated kernel (5)}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x3x4x4xf32>, tensor<4x3x5x5xf32>) -> tensor<1x4x1x1xf32>
  return
}

// -----

func.func @conv_bias_size(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op bias has 3 entries, expected 4 (output channels)}}
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_output_shape(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv2d' op result type 'tensor<1x4x6x6xf32>' does not match the type its operands imply, 'tensor<1x4x3x3xf32>'}}
  %0 = cuvil.conv.conv2d %x, %w stride [2, 2] padding [0, 0] dilation [1, 1] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x4x5x5xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv_transpose2d' op output_padding (2) must be smaller than stride (2) or dilation (1)}}
  %0 = cuvil.conv.conv_transpose2d %x, %w stride [2, 2] padding [1, 1] dilation [1, 1] output_padding [2, 0] : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x11x9xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x4x5x5xf32>, %w: tensor<3x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv_transpose2d' op weight expects 3 input channels ([C_in, C_out / groups, k...]), input has 4}}
  %0 = cuvil.conv.conv_transpose2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] output_padding [0, 0] : (tensor<1x4x5x5xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x7x7xf32>
  return
}

//===----------------------------------------------------------------------===//
// Norm
//===----------------------------------------------------------------------===//

// -----

func.func @batch_norm_channels(%x: tensor<1x4x2x2xf32>, %m: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.norm.batch_norm' op mean must have shape 4, got 3}}
  %0 = cuvil.norm.batch_norm %x, %m, %m : (tensor<1x4x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.norm.batch_norm' op input must have rank >= 2 ([N, C, ...]), got 'tensor<4xf32>'}}
  %0 = cuvil.norm.batch_norm %x, %m, %m : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_eps(%x: tensor<1x4xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.norm.batch_norm' op eps must be a number, got NaN}}
  %0 = cuvil.norm.batch_norm %x, %m, %m {eps = 0x7FF8000000000000 : f64} : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @layer_norm_shape(%x: tensor<2x5x16xf32>) {
  // expected-error @+1 {{'cuvil.norm.layer_norm' op the trailing dimensions of input 2x5x16 must equal normalized_shape [8]}}
  %0 = cuvil.norm.layer_norm %x {normalized_shape = array<i64: 8>} : (tensor<2x5x16xf32>) -> tensor<2x5x16xf32>
  return
}

// -----

func.func @layer_norm_weight(%x: tensor<2x5x16xf32>, %w: tensor<5x16xf32>) {
  // expected-error @+1 {{'cuvil.norm.layer_norm' op weight must have shape 16, got 5x16}}
  %0 = cuvil.norm.layer_norm %x weight %w {normalized_shape = array<i64: 16>} : (tensor<2x5x16xf32>, tensor<5x16xf32>) -> tensor<2x5x16xf32>
  return
}

// -----

func.func @group_norm_groups(%x: tensor<2x6x4xf32>) {
  // expected-error @+1 {{'cuvil.norm.group_norm' op channels (6) are not divisible by num_groups (4)}}
  %0 = cuvil.norm.group_norm %x {num_groups = 4 : i64} : (tensor<2x6x4xf32>) -> tensor<2x6x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Pool
//===----------------------------------------------------------------------===//

// -----

func.func @max_pool_padding(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.pool.max_pool2d' op padding (2) must be at most half the effective kernel size (3)}}
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [1, 1] padding [2, 2] dilation [1, 1] : tensor<1x1x8x8xf32> -> tensor<1x1x10x10xf32>
  return
}

// -----

func.func @max_pool_too_small(%x: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{'cuvil.pool.max_pool2d' op spatial dimension 0: input size 2 is too small for the pooling window (3 with padding 0)}}
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [1, 1] padding [0, 0] dilation [1, 1] : tensor<1x1x2x8xf32> -> tensor<1x1x1x6xf32>
  return
}

// -----

func.func @max_pool_kernel_arity(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.pool.max_pool2d' op kernel_size needs 2 entries (one per spatial dimension), got 3}}
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3, 3] stride [1, 1] padding [0, 0] dilation [1, 1] : tensor<1x1x8x8xf32> -> tensor<1x1x6x6xf32>
  return
}

// -----

func.func @max_pool_ceil_shape(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+1 {{'cuvil.pool.max_pool2d' op result type 'tensor<1x1x2x2xf32>' does not match the type its operands imply, 'tensor<1x1x3x3xf32>'}}
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] ceil_mode : tensor<1x1x5x5xf32> -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @avg_pool_int(%x: tensor<1x1x4x4xi32>) {
  // expected-error @+1 {{'cuvil.pool.avg_pool2d' op operand #0 must be ranked floating-point tensor (cast integer tensors with cuvil.tensor.cast)}}
  %0 = cuvil.pool.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x1x4x4xi32> -> tensor<1x1x2x2xi32>
  return
}

// -----

func.func @avg_pool_divisor(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.pool.avg_pool2d' op divisor_override must not be zero}}
  %0 = cuvil.pool.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] divisor 0 : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @adaptive_output(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.pool.adaptive_avg_pool2d' op output_size entries must be >= 1, got [0, 1]}}
  %0 = cuvil.pool.adaptive_avg_pool2d %x output_size [0, 1] : tensor<1x1x4x4xf32> -> tensor<1x1x0x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_dims_order(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'cuvil.reduce.sum' op dims must be sorted and distinct, got [2, 1]}}
  %0 = cuvil.reduce.sum %x dims [2, 1] : tensor<2x3x4xf32> -> tensor<2xf32>
  return
}

// -----

func.func @reduce_dims_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.max' op dims 2 is out of range for rank 2}}
  %0 = cuvil.reduce.max %x dims [2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @sum_int_result(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'cuvil.reduce.sum' op result type 'tensor<2xi32>' does not match the type its operands imply, 'tensor<2xi64>'}}
  %0 = cuvil.reduce.sum %x dims [1] : tensor<2x3xi32> -> tensor<2xi32>
  return
}

// -----

func.func @mean_int(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'cuvil.reduce.mean' op operand must have a floating-point element type}}
  %0 = cuvil.reduce.mean %x dims [1] : tensor<2x3xi32> -> tensor<2xi32>
  return
}

// -----

func.func @argmax_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.argmax' op result type 'tensor<2xi32>' does not match the type its operands imply, 'tensor<2xi64>'}}
  %0 = cuvil.reduce.argmax %x dim 1 : tensor<2x3xf32> -> tensor<2xi32>
  return
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.shape.reshape' op shape [4, 2] has 8 elements, input 2x3 has 6}}
  %0 = cuvil.shape.reshape %x {shape = array<i64: 4, 2>} : tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_two_inferred(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.shape.reshape' op shape [-1, -1] has more than one -1}}
  %0 = cuvil.shape.reshape %x {shape = array<i64: -1, -1>} : tensor<2x3xf32> -> tensor<6x1xf32>
  return
}

// -----

func.func @reshape_indivisible(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.shape.reshape' op cannot infer the -1 in [4, -1] for 6 elements}}
  %0 = cuvil.shape.reshape %x {shape = array<i64: 4, -1>} : tensor<2x3xf32> -> tensor<4x1xf32>
  return
}

// -----

func.func @flatten_order(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'cuvil.shape.flatten' op start_dim (2) must not exceed end_dim (1)}}
  %0 = cuvil.shape.flatten %x {start_dim = 2 : i64, end_dim = 1 : i64} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return
}

// -----

func.func @squeeze_non_one(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.shape.squeeze' op dimension 0 has size 2; only size-1 dimensions can be squeezed}}
  %0 = cuvil.shape.squeeze %x {dims = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @unsqueeze_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.shape.unsqueeze' op dim 3 is out of range for rank 2 (expected 0 <= dim <= 2)}}
  %0 = cuvil.shape.unsqueeze %x {dim = 3 : i64} : tensor<2x3xf32> -> tensor<2x3x1xf32>
  return
}

// -----

func.func @permute_not_permutation(%x: tensor<2x3x4xf32>) {
  // expected-error @+1 {{'cuvil.shape.permute' op dims [0, 0, 1] is not a permutation of the 3 input dimensions}}
  %0 = cuvil.shape.permute %x {dims = array<i64: 0, 0, 1>} : tensor<2x3x4xf32> -> tensor<2x2x3xf32>
  return
}

// -----

func.func @transpose_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.shape.transpose' op dim1 5 is out of range for rank 2}}
  %0 = cuvil.shape.transpose %x {dim0 = 0 : i64, dim1 = 5 : i64} : tensor<2x3xf32> -> tensor<3x2xf32>
  return
}

// -----

func.func @expand_non_one(%x: tensor<3x2xf32>) {
  // expected-error @+1 {{'cuvil.shape.expand' op input dimension 1 of size 2 cannot expand to 4 (only size-1 dimensions expand)}}
  %0 = cuvil.shape.expand %x {shape = array<i64: 3, 4>} : tensor<3x2xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @expand_new_dim(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.shape.expand' op new leading dimension 0 needs an explicit size, got -1}}
  %0 = cuvil.shape.expand %x {shape = array<i64: -1, 3>} : tensor<3xf32> -> tensor<1x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

// -----

func.func @constant_dynamic() {
  // expected-error @+1 {{'cuvil.constant' op result type 'tensor<3xf32>' does not match the type its operands imply, 'tensor<2xf32>'}}
  %0 = "cuvil.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  return
}

// -----

func.func @cast_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.tensor.cast' op changes the shape from 2x3 to 3x2; a cast only converts elements}}
  %0 = cuvil.tensor.cast %x : tensor<2x3xf32> -> tensor<3x2xi32>
  return
}

// -----

func.func @concat_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+1 {{'cuvil.tensor.concat' op operand 1 has element type 'f16', operand 0 has 'f32' (insert casts)}}
  %0 = cuvil.tensor.concat %a, %b {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_sizes(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.concat' op operand 1 has size 4 in dimension 1, expected 3}}
  %0 = cuvil.tensor.concat %a, %b {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_scalars(%a: tensor<f32>) {
  // expected-error @+1 {{'cuvil.tensor.concat' op cannot concatenate 0-d tensors (unsqueeze them first)}}
  %0 = cuvil.tensor.concat %a, %a {dim = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return
}

// -----

func.func @slice_step(%x: tensor<8xf32>) {
  // expected-error @+1 {{'cuvil.tensor.slice' op step must be >= 1, got 0}}
  %0 = cuvil.tensor.slice %x {dim = 0 : i64, start = 0 : i64, end = 4 : i64, step = 0 : i64} : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @slice_shape(%x: tensor<8xf32>) {
  // expected-error @+1 {{'cuvil.tensor.slice' op result type 'tensor<4xf32>' does not match the type its operands imply, 'tensor<3xf32>'}}
  %0 = cuvil.tensor.slice %x {dim = 0 : i64, start = -3 : i64, end = 100 : i64} : tensor<8xf32> -> tensor<4xf32>
  return
}

// -----

func.func @select_index(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'cuvil.tensor.select' op index -5 is out of range for dimension 0 of size 4}}
  %0 = cuvil.tensor.select %x {dim = 0 : i64, index = -5 : i64} : tensor<4x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @index_select_rank(%x: tensor<4x8xf32>, %i: tensor<2x2xi64>) {
  // expected-error @+1 {{'cuvil.tensor.index_select' op index must be 0-d or 1-D, got 'tensor<2x2xi64>'}}
  %0 = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<4x8xf32>, tensor<2x2xi64> -> tensor<4x8xf32>
  return
}

// -----

func.func @index_float(%x: tensor<4x8xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.tensor.index_select' op operand #1 must be ranked tensor of i32 or i64 indices}}
  %0 = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<4x8xf32>, tensor<2xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @gather_size(%x: tensor<3x5xf32>, %i: tensor<4x2xi64>) {
  // expected-error @+1 {{'cuvil.tensor.gather' op index size 4 exceeds input size 3 in dimension 0}}
  %0 = cuvil.tensor.gather %x, %i {dim = 1 : i64} : tensor<3x5xf32>, tensor<4x2xi64> -> tensor<4x2xf32>
  return
}

// -----

func.func @pad_odd(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.pad' op pad must hold (before, after) pairs, got 3 entries}}
  %0 = cuvil.tensor.pad %x {pad = array<i64: 1, 1, 1>} : tensor<4x6xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @pad_reflect_large(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.pad' op reflect padding (6, 0) must be smaller than dimension 1 (size 6)}}
  %0 = cuvil.tensor.pad %x {pad = array<i64: 6, 0>, mode = #cuvil<pad_mode reflect>} : tensor<4x6xf32> -> tensor<4x12xf32>
  return
}

// -----

func.func @pad_negative_reflect(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.pad' op negative padding is only supported in constant mode}}
  %0 = cuvil.tensor.pad %x {pad = array<i64: -1, 0>, mode = #cuvil<pad_mode replicate>} : tensor<4x6xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @pad_crop_too_much(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.pad' op padding makes dimension 1 negative (-1)}}
  %0 = cuvil.tensor.pad %x {pad = array<i64: -4, -3>} : tensor<4x6xf32> -> tensor<4x0xf32>
  return
}

// -----

func.func @embedding_weight(%w: tensor<10xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.tensor.embedding' op weight must be [num_embeddings, embedding_dim], got 'tensor<10xf32>'}}
  %0 = cuvil.tensor.embedding %w, %i : tensor<10xf32>, tensor<3xi64> -> tensor<3xf32>
  return
}

//===----------------------------------------------------------------------===//
// One case for every remaining op
//===----------------------------------------------------------------------===//

// -----

func.func @act_elu_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.elu' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.elu %x : tensor<3xi64>
  return
}

// -----

func.func @act_gelu_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.gelu' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.gelu %x : tensor<3xi64>
  return
}

// -----

func.func @act_hardsigmoid_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.hardsigmoid' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.hardsigmoid %x : tensor<3xi64>
  return
}

// -----

func.func @act_hardswish_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.hardswish' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.hardswish %x : tensor<3xi64>
  return
}

// -----

func.func @act_leaky_relu_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.leaky_relu' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.leaky_relu %x : tensor<3xi64>
  return
}

// -----

func.func @act_mish_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.mish' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.mish %x : tensor<3xi64>
  return
}

// -----

func.func @act_sigmoid_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.act.sigmoid' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.act.sigmoid %x : tensor<3xi64>
  return
}

// -----

func.func @math_exp_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.exp' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.exp %x : tensor<3xi64>
  return
}

// -----

func.func @math_expm1_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.expm1' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.expm1 %x : tensor<3xi64>
  return
}

// -----

func.func @math_log_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.log' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.log %x : tensor<3xi64>
  return
}

// -----

func.func @math_log1p_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.log1p' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.log1p %x : tensor<3xi64>
  return
}

// -----

func.func @math_sqrt_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.sqrt' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.sqrt %x : tensor<3xi64>
  return
}

// -----

func.func @math_rsqrt_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.rsqrt' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.rsqrt %x : tensor<3xi64>
  return
}

// -----

func.func @math_reciprocal_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.reciprocal' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.reciprocal %x : tensor<3xi64>
  return
}

// -----

func.func @math_sin_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.sin' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.sin %x : tensor<3xi64>
  return
}

// -----

func.func @math_cos_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.cos' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.cos %x : tensor<3xi64>
  return
}

// -----

func.func @math_erf_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.erf' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.erf %x : tensor<3xi64>
  return
}

// -----

func.func @math_floor_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.floor' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.floor %x : tensor<3xi64>
  return
}

// -----

func.func @math_ceil_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.ceil' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.ceil %x : tensor<3xi64>
  return
}

// -----

func.func @math_round_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.round' op operand must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.round %x : tensor<3xi64>
  return
}

// -----

func.func @math_abs_bool(%x: tensor<3xi1>) {
  // expected-error @+1 {{'cuvil.math.abs' op operand must have a numeric (non-i1) element type, got 'tensor<3xi1>'}}
  %0 = cuvil.math.abs %x : tensor<3xi1>
  return
}

// -----

func.func @math_sign_bool(%x: tensor<3xi1>) {
  // expected-error @+1 {{'cuvil.math.sign' op operand must have a numeric (non-i1) element type, got 'tensor<3xi1>'}}
  %0 = cuvil.math.sign %x : tensor<3xi1>
  return
}

// -----

func.func @math_mul_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.math.mul' op operand shapes 2x3 and 4 do not broadcast}}
  %0 = cuvil.math.mul %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @math_pow_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.math.pow' op operand shapes 2x3 and 4 do not broadcast}}
  %0 = cuvil.math.pow %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @math_maximum_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.math.maximum' op operand shapes 2x3 and 4 do not broadcast}}
  %0 = cuvil.math.maximum %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @math_minimum_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.math.minimum' op operand shapes 2x3 and 4 do not broadcast}}
  %0 = cuvil.math.minimum %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @math_remainder_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.math.remainder' op operand shapes 2x3 and 4 do not broadcast}}
  %0 = cuvil.math.remainder %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @logic_eq_broadcast(%x: tensor<2x3xf32>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.logic.eq' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = cuvil.logic.eq %x, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xi1>
  return
}

// -----

func.func @logic_ne_broadcast(%x: tensor<2x3xf32>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.logic.ne' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = cuvil.logic.ne %x, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xi1>
  return
}

// -----

func.func @logic_le_broadcast(%x: tensor<2x3xf32>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.logic.le' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = cuvil.logic.le %x, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xi1>
  return
}

// -----

func.func @logic_gt_broadcast(%x: tensor<2x3xf32>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.logic.gt' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = cuvil.logic.gt %x, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xi1>
  return
}

// -----

func.func @logic_ge_broadcast(%x: tensor<2x3xf32>, %y: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.logic.ge' op operand shapes 2x3 and 2 do not broadcast}}
  %0 = cuvil.logic.ge %x, %y : tensor<2x3xf32>, tensor<2xi64> -> tensor<2x3xi1>
  return
}

// -----

func.func @logic_logical_and_result(%x: tensor<3xf32>, %y: tensor<3xi1>) {
  // expected-error @+1 {{'cuvil.logic.logical_and' op result type 'tensor<3xf32>' does not match the type its operands imply, 'tensor<3xi1>'}}
  %0 = cuvil.logic.logical_and %x, %y : tensor<3xf32>, tensor<3xi1> -> tensor<3xf32>
  return
}

// -----

func.func @logic_logical_or_result(%x: tensor<3xf32>, %y: tensor<3xi1>) {
  // expected-error @+1 {{'cuvil.logic.logical_or' op result type 'tensor<3xf32>' does not match the type its operands imply, 'tensor<3xi1>'}}
  %0 = cuvil.logic.logical_or %x, %y : tensor<3xf32>, tensor<3xi1> -> tensor<3xf32>
  return
}

// -----

func.func @logic_logical_xor_result(%x: tensor<3xf32>, %y: tensor<3xi1>) {
  // expected-error @+1 {{'cuvil.logic.logical_xor' op result type 'tensor<3xf32>' does not match the type its operands imply, 'tensor<3xi1>'}}
  %0 = cuvil.logic.logical_xor %x, %y : tensor<3xf32>, tensor<3xi1> -> tensor<3xf32>
  return
}

// -----

func.func @logical_not_result(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.logic.logical_not' op result #0 must be ranked tensor of i1, but got 'tensor<3xf32>'}}
  %0 = cuvil.logic.logical_not %x : tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @conv1d_weight_rank(%x: tensor<1x3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv1d' op weight must be rank 3, got 'tensor<4x3x3x3xf32>'}}
  %0 = cuvil.conv.conv1d %x, %w stride [1] padding [0] dilation [1] : (tensor<1x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6xf32>
  return
}

// -----

func.func @conv_transpose1d_output_padding(%x: tensor<1x4x5xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+1 {{'cuvil.conv.conv_transpose1d' op output_padding needs 1 entries (one per spatial dimension), got 2}}
  %0 = cuvil.conv.conv_transpose1d %x, %w stride [2] padding [1] dilation [1] output_padding [1, 1] : (tensor<1x4x5xf32>, tensor<4x3x3xf32>) -> tensor<1x3x10xf32>
  return
}

// -----

func.func @max_pool1d_rank(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+1 {{'cuvil.pool.max_pool1d' op input must be rank 3 ([N, C, spatial...]), got 'tensor<1x1x8x8xf32>'}}
  %0 = cuvil.pool.max_pool1d %x kernel [2] stride [2] padding [0] dilation [1] : tensor<1x1x8x8xf32> -> tensor<1x1x4xf32>
  return
}

// -----

func.func @avg_pool1d_padding(%x: tensor<1x1x8xf32>) {
  // expected-error @+1 {{'cuvil.pool.avg_pool1d' op padding (2) must be at most half the effective kernel size (2)}}
  %0 = cuvil.pool.avg_pool1d %x kernel [2] stride [2] padding [2] : tensor<1x1x8xf32> -> tensor<1x1x6xf32>
  return
}

// -----

func.func @adaptive_avg_pool1d_arity(%x: tensor<1x1x8xf32>) {
  // expected-error @+1 {{'cuvil.pool.adaptive_avg_pool1d' op output_size needs 1 entries (one per spatial dimension), got 2}}
  %0 = cuvil.pool.adaptive_avg_pool1d %x output_size [2, 2] : tensor<1x1x8xf32> -> tensor<1x1x2x2xf32>
  return
}

// -----

func.func @prod_int_result(%x: tensor<2x3xi8>) {
  // expected-error @+1 {{'cuvil.reduce.prod' op result type 'tensor<2xi8>' does not match the type its operands imply, 'tensor<2xi64>'}}
  %0 = cuvil.reduce.prod %x dims [1] : tensor<2x3xi8> -> tensor<2xi8>
  return
}

// -----

func.func @min_dims_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.min' op dims -1 is out of range for rank 2}}
  %0 = cuvil.reduce.min %x dims [-1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @any_result(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.any' op result type 'tensor<2xf32>' does not match the type its operands imply, 'tensor<2xi1>'}}
  %0 = cuvil.reduce.any %x dims [1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @all_keepdim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.all' op result type 'tensor<2xi1>' does not match the type its operands imply, 'tensor<2x1xi1>'}}
  %0 = cuvil.reduce.all %x dims [1] keepdim : tensor<2x3xf32> -> tensor<2xi1>
  return
}

// -----

func.func @var_int(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{'cuvil.reduce.var' op operand must have a floating-point element type}}
  %0 = cuvil.reduce.var %x dims [1] : tensor<2x3xi32> -> tensor<2xi32>
  return
}

// -----

func.func @std_dims_duplicate(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.std' op dims must be sorted and distinct, got [1, 1]}}
  %0 = cuvil.reduce.std %x dims [1, 1] : tensor<2x3xf32> -> tensor<2xf32>
  return
}

// -----

func.func @argmin_dim(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.argmin' op dim 2 is out of range for rank 2}}
  %0 = cuvil.reduce.argmin %x dim 2 : tensor<2x3xf32> -> tensor<2xi64>
  return
}

// -----

func.func @argmin_bool(%x: tensor<2x3xi1>) {
  // expected-error @+1 {{'cuvil.reduce.argmin' op operand must have a numeric (non-i1) element type}}
  %0 = cuvil.reduce.argmin %x dim 1 : tensor<2x3xi1> -> tensor<2xi64>
  return
}

// -----

func.func @resize_rank(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op input must be [N, C, spatial...] with 1 to 3 spatial dimensions, got 'tensor<3x4xf32>'}}
  %0 = cuvil.tensor.resize %x nearest size [] : tensor<3x4xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @resize_linear_int(%x: tensor<1x1x4x4xi32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op input must have a floating-point element type}}
  %0 = cuvil.tensor.resize %x linear size [8, 8] : tensor<1x1x4x4xi32> -> tensor<1x1x8x8xi32>
  return
}

// -----

func.func @resize_size_count(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op size needs 2 entries (one per spatial dimension), got 1}}
  %0 = cuvil.tensor.resize %x nearest size [8] : tensor<1x1x4x4xf32> -> tensor<1x1x8xf32>
  return
}

// -----

func.func @resize_size_zero(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op size entries must be >= 1, got [0, 8]}}
  %0 = cuvil.tensor.resize %x nearest size [0, 8] : tensor<1x1x4x4xf32> -> tensor<1x1x0x8xf32>
  return
}

// -----

func.func @resize_scales_count(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op scales needs 2 entries (one per spatial dimension), got 1}}
  %0 = cuvil.tensor.resize %x nearest size [8, 8] scales [2.0] : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @resize_scales_negative(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op scales must be finite and >= 0 (0: derive the step from the sizes), got -2}}
  %0 = cuvil.tensor.resize %x nearest size [8, 8] scales [2.0, -2.0] : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @resize_align_nearest(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op align_corners only applies to linear resizing}}
  %0 = cuvil.tensor.resize %x nearest size [8, 8] align_corners : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @resize_empty(%x: tensor<1x1x0x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op spatial dimension 0 of the input is empty}}
  %0 = cuvil.tensor.resize %x nearest size [8, 8] : tensor<1x1x0x4xf32> -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @resize_result(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{'cuvil.tensor.resize' op result type 'tensor<1x1x8x9xf32>' does not match the type its operands imply, 'tensor<1x1x8x8xf32>'}}
  %0 = cuvil.tensor.resize %x nearest size [8, 8] : tensor<1x1x4x4xf32> -> tensor<1x1x8x9xf32>
  return
}

// -----

func.func @resize_mode(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{expected a resize mode (nearest, nearest_exact or linear), got 'cubic'}}
  %0 = cuvil.tensor.resize %x cubic size [8, 8] : tensor<1x1x4x4xf32> -> tensor<1x1x8x8xf32>
  return
}

// -----

func.func @assert_not_scalar(%c: tensor<2xi1>) {
  // expected-error @+1 {{'cuvil.effect.assert' op condition must be a 0-d tensor<i1>, got 'tensor<2xi1>'}}
  cuvil.effect.assert %c, "bad" : tensor<2xi1>
  return
}

// -----

func.func @assert_not_bool(%c: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of i1}}
  cuvil.effect.assert %c, "bad" : tensor<f32>
  return
}

// -----

func.func @print_count(%x: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.effect.print' op format has 2 '{}' placeholder(s) for 1 value(s)}}
  cuvil.effect.print "{} and {}" %x : tensor<2xf32>
  return
}

// -----

func.func @print_brace(%x: tensor<2xf32>) {
  // expected-error @+1 {{'cuvil.effect.print' op format has a lone brace (write {{ or }} for a literal brace)}}
  cuvil.effect.print "{} {oops" %x : tensor<2xf32>
  return
}

// -----

func.func @fused_anchor(%v: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'cuvil.fused.group' op gemm group must start with cuvil.gemm.linear, matmul, batch_matmul or addmm, not 'cuvil.act.sigmoid'}}
  %0 = cuvil.fused.group gemm (%v) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %s = cuvil.act.sigmoid %a : tensor<2x3xf32>
    cuvil.fused.yield %s : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

func.func @fused_not_elementwise(%v: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'cuvil.fused.group' op may only hold element-wise ops after its anchor; 'cuvil.act.softmax' is not}}
  %0 = cuvil.fused.group elementwise (%v) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    %s = cuvil.act.softmax %a {dim = 1 : i64} : tensor<2x3xf32>
    cuvil.fused.yield %s : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

func.func @fused_epilogue_type(%x: tensor<8x16xf32>, %w: tensor<4x16xf32>) -> tensor<8x4xi1> {
  // expected-error @+1 {{'cuvil.fused.group' op epilogue op 'cuvil.logic.gt' changes the anchor's type 'tensor<8x4xf32>' to 'tensor<8x4xi1>'}}
  %0 = cuvil.fused.group gemm (%x, %w) : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xi1> {
  ^bb0(%a: tensor<8x16xf32>, %b: tensor<4x16xf32>):
    %l = cuvil.gemm.linear %a, %b : (tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<8x4xf32>
    %g = cuvil.logic.gt %l, %l : tensor<8x4xf32>, tensor<8x4xf32> -> tensor<8x4xi1>
    cuvil.fused.yield %g : tensor<8x4xi1>
  }
  return %0 : tensor<8x4xi1>
}

// -----

func.func @fused_isolated(%v: tensor<2x3xf32>, %o: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = cuvil.fused.group elementwise (%v) : (tensor<2x3xf32>) -> tensor<2x3xf32> {
  ^bb0(%a: tensor<2x3xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %s = cuvil.math.add %a, %o : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    cuvil.fused.yield %s : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf32>
}

// -----

func.func @fused_yield_type(%v: tensor<2x3xf32>) -> tensor<2x3xf64> {
  // expected-error @+1 {{'cuvil.fused.group' op yields 'tensor<2x3xf32>' for a result of type 'tensor<2x3xf64>'}}
  %0 = cuvil.fused.group elementwise (%v) : (tensor<2x3xf32>) -> tensor<2x3xf64> {
  ^bb0(%a: tensor<2x3xf32>):
    %s = cuvil.act.sigmoid %a : tensor<2x3xf32>
    cuvil.fused.yield %s : tensor<2x3xf32>
  }
  return %0 : tensor<2x3xf64>
}

// -----

func.func @reshape_dynamic_shape_rank(%x: tensor<8xf32>, %s: tensor<2x1xi64>) {
  // expected-error @+1 {{'cuvil.shape.reshape_dynamic' op shape must be a 1-D tensor of static length, got 'tensor<2x1xi64>'}}
  %0 = cuvil.shape.reshape_dynamic %x, %s : tensor<8xf32>, tensor<2x1xi64> -> tensor<?x?xf32>
  return
}

// -----

func.func @reshape_dynamic_rank(%x: tensor<8xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{'cuvil.shape.reshape_dynamic' op result type 'tensor<?xf32>' does not match the type its operands imply, 'tensor<?x?xf32>'}}
  %0 = cuvil.shape.reshape_dynamic %x, %s : tensor<8xf32>, tensor<2xi64> -> tensor<?xf32>
  return
}

// -----

func.func @dim_range(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'cuvil.shape.dim' op dim 2 is out of range for rank 2}}
  %0 = cuvil.shape.dim %x {dim = 2 : i64} : tensor<?x4xf32> -> tensor<i64>
  return
}

// -----

func.func @atan2_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.math.atan2' op lhs must have a floating-point element type (cast integer tensors with cuvil.tensor.cast), got 'tensor<3xi64>'}}
  %0 = cuvil.math.atan2 %x, %x : tensor<3xi64>, tensor<3xi64> -> tensor<3xi64>
  return
}

// -----

func.func @shift_float(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.math.shift_left' op lhs must have an integer or i1 element type, got 'tensor<3xf32>'}}
  %0 = cuvil.math.shift_left %x, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @scatter_rank(%x: tensor<4x6xf32>, %i: tensor<2xi64>, %s: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.scatter' op index and src must have the input's rank 2, got 1 and 2}}
  %0 = cuvil.tensor.scatter %x, %i, %s {dim = 0 : i64} : tensor<4x6xf32>, tensor<2xi64>, tensor<4x6xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @scatter_larger_index(%x: tensor<4x6xf32>, %i: tensor<2x7xi64>, %s: tensor<4x7xf32>) {
  // expected-error @+1 {{'cuvil.tensor.scatter' op index size 7 exceeds input size 6 in dimension 1}}
  %0 = cuvil.tensor.scatter %x, %i, %s {dim = 0 : i64} : tensor<4x6xf32>, tensor<2x7xi64>, tensor<4x7xf32> -> tensor<4x6xf32>
  return
}

// -----

func.func @logcumsumexp_int(%x: tensor<3xi64>) {
  // expected-error @+1 {{'cuvil.reduce.cumulative' op operand must have a floating-point element type}}
  %0 = cuvil.reduce.cumulative %x {dim = 0 : i64, kind = #cuvil<scan_kind logsumexp>} : tensor<3xi64> -> tensor<3xi64>
  return
}

// -----

func.func @cumulative_index_sum(%x: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.reduce.cumulative_index' op kind must be max or min}}
  %0 = cuvil.reduce.cumulative_index %x {dim = 0 : i64, kind = #cuvil<scan_kind sum>} : tensor<3xf32> -> tensor<3xi64>
  return
}

// -----

func.func @sort_dim(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.sort' op dim 2 is out of range for rank 2}}
  %0:2 = cuvil.tensor.sort %x {dim = 2 : i64} : tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4x6xi64>
  return
}

// -----

func.func @sort_index_type(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'cuvil.tensor.sort' op result type 'tensor<4x6xf32>', 'tensor<4x6xi32>' does not match the type its operands imply, 'tensor<4x6xf32>', 'tensor<4x6xi64>'}}
  %0:2 = cuvil.tensor.sort %x {dim = 0 : i64} : tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4x6xi32>
  return
}

// -----

func.func @linalg_unknown(%a: tensor<3x3xf32>) {
  // expected-error @+1 {{'cuvil.linalg.kernel' op unknown kernel 'qz'}}
  %0 = cuvil.linalg.kernel "qz" (%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @linalg_not_square(%a: tensor<3x4xf32>) {
  // expected-error @+1 {{'cuvil.linalg.kernel' op kernel 'cholesky' needs square matrices, got 'tensor<3x4xf32>'}}
  %0:2 = cuvil.linalg.kernel "cholesky" (%a) {flags = array<i64: 0>} : (tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<i32>)
  return
}

// -----

func.func @linalg_batch(%a: tensor<2x3x3xf32>, %b: tensor<3x3x4xf32>) {
  // expected-error @+1 {{'cuvil.linalg.kernel' op b must have the batch dimensions of the first input}}
  %0 = cuvil.linalg.kernel "triangular_solve" (%a, %b) {flags = array<i64: 0, 1, 0>} : (tensor<2x3x3xf32>, tensor<3x3x4xf32>) -> tensor<3x3x4xf32>
  return
}

// -----

func.func @linalg_dft_pairs(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'cuvil.linalg.kernel' op kernel 'dft' needs (real, imaginary) pairs [.., n, 2], got 'tensor<4x3xf32>'}}
  %0 = cuvil.linalg.kernel "dft" (%a) {flags = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @linalg_flags(%a: tensor<3x3xf32>) {
  // expected-error @+1 {{'cuvil.linalg.kernel' op kernel 'eigh' takes 1 input(s) and 1 flag(s), got 1 and 0}}
  %0:2 = cuvil.linalg.kernel "eigh" (%a) : (tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>)
  return
}

// -----

func.func @special_unknown(%x: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.math.special' op 'gamma' is not a one-argument special function}}
  %0 = cuvil.math.special %x {function = "gamma"} : tensor<4xf32>
  return
}

// -----

func.func @special_int(%x: tensor<4xi32>) {
  // expected-error @+1 {{'cuvil.math.special' op operand}}
  %0 = cuvil.math.special %x {function = "digamma"} : tensor<4xi32>
  return
}

// -----

func.func @quant_zero_point_range(%x: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.quant.quantize' op params zero point 300 is outside 'ui8''s range [0, 255]}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.1], zero_point = [300]>} : tensor<4xf32> -> tensor<4xui8>
  return
}

// -----

func.func @quant_channels(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.quant.quantize' op params has 2 scale(s) for the 3 channel(s) of dimension 1}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.1, 0.2], zero_point = [0, 0], axis = 1>} : tensor<2x3xf32> -> tensor<2x3xi8>
  return
}

// -----

func.func @quant_axis(%x: tensor<2x3xi8>) {
  // expected-error @+1 {{'cuvil.quant.dequantize' op params axis 2 is not a dimension of a rank-2 tensor}}
  %0 = cuvil.quant.dequantize %x {params = #cuvil.quant<scale = [0.1, 0.2], zero_point = [0, 0], axis = 2>} : tensor<2x3xi8> -> tensor<2x3xf32>
  return
}

// -----

func.func @quant_shape(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'cuvil.quant.quantize' op changes the shape; (de)quantizing converts elements only}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<2x3xf32> -> tensor<3x2xi8>
  return
}

// -----

func.func @quant_storage(%x: tensor<4xf32>) {
  // expected-error @+1 {{'cuvil.quant.quantize' op result #0 must be ranked tensor of i8, ui8 or i32 (quantized storage)}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<4xf32> -> tensor<4xi16>
  return
}

// -----

func.func @quant_scale(%x: tensor<4xf32>) {
  // expected-error @+1 {{#cuvil.quant scales must be positive and finite, got -1}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [-1.0], zero_point = [0]>} : tensor<4xf32> -> tensor<4xi8>
  return
}

// -----

func.func @quant_counts(%x: tensor<4xf32>) {
  // expected-error @+1 {{#cuvil.quant has 2 scale(s) but 1 zero point(s)}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [1.0, 2.0], zero_point = [0], axis = 0>} : tensor<4xf32> -> tensor<4xi8>
  return
}

// -----

func.func @quant_per_tensor(%x: tensor<4xf32>) {
  // expected-error @+1 {{#cuvil.quant per tensor (axis -1) takes one scale, got 2}}
  %0 = cuvil.quant.quantize %x {params = #cuvil.quant<scale = [1.0, 2.0], zero_point = [0, 0]>} : tensor<4xf32> -> tensor<4xi8>
  return
}

// -----

func.func @quant_linear_features(%x: tensor<5x36xui8>, %w: tensor<2x37xi8>) {
  // expected-error @+1 {{'cuvil.quant.linear' op input has 36 features, weights 37}}
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x36xui8>, tensor<2x37xi8>) -> tensor<5x2xui8>
  return
}

// -----

func.func @quant_linear_axis(%x: tensor<5x37xui8>, %w: tensor<2x37xi8>) {
  // expected-error @+1 {{'cuvil.quant.linear' op weights are quantized per tensor or per output channel (axis 0)}}
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0], axis = 1>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x37xui8>, tensor<2x37xi8>) -> tensor<5x2xui8>
  return
}

// -----

func.func @quant_linear_bias(%x: tensor<5x37xui8>, %w: tensor<2x37xi8>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'cuvil.quant.linear' op bias must be f32 [2]}}
  %0 = cuvil.quant.linear %x, %w, %b {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x37xui8>, tensor<2x37xi8>, tensor<3xf32>) -> tensor<5x2xui8>
  return
}

// -----

func.func @quant_conv_size(%x: tensor<1x4x8x8xui8>, %w: tensor<6x4x3x3xi8>) {
  // expected-error @+1 {{'cuvil.quant.conv2d' op result must be 8 along dimension 2}}
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<1x4x8x8xui8>, tensor<6x4x3x3xi8>) -> tensor<1x6x6x8xui8>
  return
}

// -----

func.func @quant_conv_groups(%x: tensor<1x4x8x8xui8>, %w: tensor<6x4x3x3xi8>) {
  // expected-error @+1 {{'cuvil.quant.conv2d' op groups 2 do not divide 4 input and 6 output channels into weights of 4 input channels}}
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<1x4x8x8xui8>, tensor<6x4x3x3xi8>) -> tensor<1x6x8x8xui8>
  return
}

// -----

func.func @quant_linear_f32_with_output_params(%x: tensor<5x37xui8>, %w: tensor<2x37xi8>) {
  // expected-error @+1 {{'cuvil.quant.linear' op has an f32 result (the sums dequantized) and output_params}}
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<5x37xui8>, tensor<2x37xi8>) -> tensor<5x2xf32>
  return
}

// -----

func.func @quant_conv_no_output_params(%x: tensor<1x4x8x8xui8>, %w: tensor<6x4x3x3xi8>) {
  // expected-error @+1 {{'cuvil.quant.conv2d' op has an 8-bit result but no output_params}}
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<1x4x8x8xui8>, tensor<6x4x3x3xi8>) -> tensor<1x6x8x8xui8>
  return
}

// -----

func.func @quant_add_shapes(%a: tensor<4xui8>, %b: tensor<1xui8>) {
  // expected-error @+1 {{'cuvil.quant.add' op operands and result must have one shape (no broadcasting)}}
  %0 = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<4xui8>, tensor<1xui8>) -> tensor<4xui8>
  return
}

// -----

func.func @quant_add_per_channel(%a: tensor<2x2xui8>, %b: tensor<2x2xui8>) {
  // expected-error @+1 {{'cuvil.quant.add' op rhs_params must be per tensor}}
  %0 = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1, 0.2], zero_point = [0, 0], axis = 0>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<2x2xui8>, tensor<2x2xui8>) -> tensor<2x2xui8>
  return
}

// -----

func.func @quant_add_storage(%a: tensor<2xi32>, %b: tensor<2xui8>) {
  // expected-error @+1 {{'cuvil.quant.add' op takes and returns 8-bit storage}}
  %0 = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<2xi32>, tensor<2xui8>) -> tensor<2xui8>
  return
}

// -----

func.func @quant_add_zero_point(%a: tensor<2xui8>, %b: tensor<2xui8>) {
  // expected-error @+1 {{'cuvil.quant.add' op output_params zero point -1 is outside 'ui8''s range [0, 255]}}
  %0 = cuvil.quant.add %a, %b {lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [-1]>} : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  return
}

// -----

func.func @quant_avg_pool_size(%x: tensor<1x4x6x6xui8>) -> tensor<1x4x5x5xui8> {
  // expected-error @+1 {{result size 5 of spatial dimension 0 does not follow from 6}}
  %p = cuvil.quant.avg_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1] {input_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<1x4x6x6xui8> -> tensor<1x4x5x5xui8>
  return %p : tensor<1x4x5x5xui8>
}

// -----

func.func @quant_engine(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{arithmetic 'fbgemm' is not one of qnnpack, onednn}}
  %s = cuvil.quant.add %x, %x {arithmetic = "fbgemm", lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %s : tensor<4xui8>
}

// -----

func.func @quant_avg_pool_qnnpack_signed(%x: tensor<1x4x6x6xi8>) -> tensor<1x4x3x3xi8> {
  // expected-error @+1 {{QNNPACK's arithmetic pools ui8 tensors over whole windows (count_include_pad)}}
  %p = cuvil.quant.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] {arithmetic = "qnnpack", count_include_pad, input_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<1x4x6x6xi8> -> tensor<1x4x3x3xi8>
  return %p : tensor<1x4x3x3xi8>
}

// -----

func.func @quant_avg_pool_qnnpack_uncounted(%x: tensor<1x4x6x6xui8>) -> tensor<1x4x6x6xui8> {
  // expected-error @+1 {{QNNPACK's arithmetic pools ui8 tensors over whole windows (count_include_pad)}}
  %p = cuvil.quant.avg_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1] {arithmetic = "qnnpack", input_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<1x4x6x6xui8> -> tensor<1x4x6x6xui8>
  return %p : tensor<1x4x6x6xui8>
}

// -----

func.func @quant_avg_pool_onednn(%x: tensor<1x4x6x6xui8>) -> tensor<1x4x3x3xui8> {
  // expected-error @+1 {{has no oneDNN arithmetic (PyTorch's own kernels pool for that engine)}}
  %p = cuvil.quant.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] {arithmetic = "onednn", input_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<1x4x6x6xui8> -> tensor<1x4x3x3xui8>
  return %p : tensor<1x4x3x3xui8>
}

// -----

func.func @quant_linear_dynamic_engine(%x: tensor<3x5xf32>, %w: tensor<4x5xi8>) -> tensor<3x4xf32> {
  // expected-error @+1 {{arithmetic 'fbgemm' is not one of qnnpack, onednn}}
  %y = cuvil.quant.linear_dynamic %x, %w {arithmetic = "fbgemm", weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<3x5xf32>, tensor<4x5xi8>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @quant_linear_dynamic_features(%x: tensor<3x6xf32>, %w: tensor<4x5xi8>) -> tensor<3x4xf32> {
  // expected-error @+1 {{input has 6 features, weights 5}}
  %y = cuvil.quant.linear_dynamic %x, %w {arithmetic = "qnnpack", weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<3x6xf32>, tensor<4x5xi8>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @quant_linear_dynamic_axis(%x: tensor<3x5xf32>, %w: tensor<4x5xi8>) -> tensor<3x4xf32> {
  // expected-error @+1 {{weights are quantized per tensor or per output channel (axis 0)}}
  %y = cuvil.quant.linear_dynamic %x, %w {arithmetic = "qnnpack", weight_params = #cuvil.quant<scale = [0.01, 0.02, 0.01, 0.01, 0.02], zero_point = [0, 0, 0, 0, 0], axis = 1>} : (tensor<3x5xf32>, tensor<4x5xi8>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @quant_linear_dynamic_unsigned(%x: tensor<3x5xf32>, %w: tensor<4x5xui8>) -> tensor<3x4xf32> {
  // expected-error @+1 {{weights are i8 storage}}
  %y = cuvil.quant.linear_dynamic %x, %w {arithmetic = "qnnpack", weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<3x5xf32>, tensor<4x5xui8>) -> tensor<3x4xf32>
  return %y : tensor<3x4xf32>
}

// -----

func.func @quant_mul_broadcast(%a: tensor<1x8x2x1xui8>, %b: tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xui8> {
  // expected-error @+1 {{operands do not broadcast}}
  %y = cuvil.quant.mul %a, %b {lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<1x8x2x1xui8>, tensor<1x8x4x4xui8>) -> tensor<1x8x4x4xui8>
  return %y : tensor<1x8x4x4xui8>
}

// -----

func.func @quant_mul_types(%a: tensor<4xui8>, %b: tensor<4xi8>) -> tensor<4xui8> {
  // expected-error @+1 {{takes and returns 8-bit storage of one type}}
  %y = cuvil.quant.mul %a, %b {lhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, rhs_params = #cuvil.quant<scale = [0.1], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<4xui8>, tensor<4xi8>) -> tensor<4xui8>
  return %y : tensor<4xui8>
}

// -----

func.func @dequantize_fused_per_channel(%q: tensor<2x3xi8>) -> tensor<2x3xf32> {
  // expected-error @+1 {{a fused dequantization is per tensor}}
  %x = cuvil.quant.dequantize %q {fused, params = #cuvil.quant<scale = [0.1, 0.2], zero_point = [0, 0], axis = 0>} : tensor<2x3xi8> -> tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

// -----

func.func @expand_dynamic_mismatch(%x: tensor<3x2xf32>) {
  %four = cuvil.constant dense<4> : tensor<i64>
  %two = cuvil.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'cuvil.shape.expand_dynamic' op input dimension 0 of size 3 cannot expand to 4 (only size-1 dimensions expand)}}
  %0 = cuvil.shape.expand_dynamic %x, [%four, %two] : tensor<3x2xf32>, [tensor<i64>, tensor<i64>] -> tensor<?x2xf32>
  return
}

// -----

func.func @expand_dynamic_rank(%x: tensor<3x2xf32>) {
  %two = cuvil.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'cuvil.shape.expand_dynamic' op 1 sizes for an input of rank 2 (expanding may only add leading dimensions)}}
  %0 = cuvil.shape.expand_dynamic %x, [%two] : tensor<3x2xf32>, [tensor<i64>] -> tensor<?xf32>
  return
}

// -----

func.func @expand_dynamic_negative(%v: tensor<f32>) {
  %n = cuvil.constant dense<-2> : tensor<i64>
  // expected-error @+1 {{'cuvil.shape.expand_dynamic' op size 0 is negative (-2)}}
  %0 = cuvil.shape.expand_dynamic %v, [%n] : tensor<f32>, [tensor<i64>] -> tensor<?xf32>
  return
}

// -----

func.func @iota_negative() {
  %n = cuvil.constant dense<-1> : tensor<i64>
  // expected-error @+1 {{'cuvil.tensor.iota' op the count is negative (-1)}}
  %0 = cuvil.tensor.iota %n : tensor<i64> -> tensor<?xi64>
  return
}

// -----

func.func @iota_type(%x: tensor<5x8xf32>) {
  %n = cuvil.shape.dim %x {dim = 0 : i64} : tensor<5x8xf32> -> tensor<i64>
  // expected-error @+1 {{'cuvil.tensor.iota' op result type 'tensor<4xi64>' does not match the type its operands imply, 'tensor<5xi64>'}}
  %0 = cuvil.tensor.iota %n : tensor<i64> -> tensor<4xi64>
  return
}
