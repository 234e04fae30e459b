// RUN: cuvil-opt %s --cuvil-quantize-layers --split-input-file | FileCheck %s
// RUN: cuvil-opt %s --cuvil-quantize-layers --split-input-file | cuvil-opt --verify-roundtrip > /dev/null

// An int8 conv -> relu -> int8 conv chain: the weights become i8 constants
// (per output channel, symmetric), the relu after a dequantization whose
// zero point is 0 vanishes, and the dequantize -> quantize pair between the
// layers with equal parameters folds away: the chain stays in ui8.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x4xf32>
// CHECK: %[[W1:.*]] = cuvil.constant dense<{{\[\[\[\[}}50]], {{\[\[}}-127]]], {{.*}}> : tensor<3x2x1x1xi8>
// CHECK: %[[XQ:.*]] = cuvil.quant.quantize %[[X]] {params = #cuvil.quant<scale = [0.02], zero_point = [128]>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xui8>
// CHECK: %[[Y1:.*]] = cuvil.quant.conv2d %[[XQ]], %[[W1]], %{{.*}} stride [1, 1] padding [0, 0] dilation [1, 1]
// CHECK-SAME: cuvil.precision = "int8"
// CHECK-SAME: weight_params = #cuvil.quant<scale = [{{.*}}], zero_point = [0, 0, 0], axis = 0>
// CHECK-SAME: -> tensor<1x3x4x4xui8>
// CHECK-NOT: cuvil.act.relu
// CHECK-NOT: cuvil.quant.quantize
// CHECK: %[[W2:.*]] = cuvil.constant dense<{{.*}}> : tensor<2x3x1x1xi8>
// CHECK: %[[Y2:.*]] = cuvil.quant.conv2d %[[Y1]], %[[W2]]
// CHECK: %[[R:.*]] = cuvil.quant.dequantize %[[Y2]] {params = #cuvil.quant<scale = [0.05], zero_point = [10]>}
// CHECK: return %[[R]]
func.func @chain(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w1 = cuvil.constant dense<[[[[0.5]], [[-1.27]]], [[[0.25]], [[0.1]]], [[[-0.3]], [[0.6]]]]> : tensor<3x2x1x1xf32>
  %b1 = cuvil.constant dense<[0.1, -0.2, 0.0]> : tensor<3xf32>
  %w2 = cuvil.constant dense<[[[[1.0]], [[0.5]], [[-0.5]]], [[[0.2]], [[0.4]], [[0.8]]]]> : tensor<2x3x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %w1, %b1 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.02], zero_point = [128]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.01], zero_point = [0]>}
      : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %1 = cuvil.act.relu %0 : tensor<1x3x4x4xf32>
  %2 = cuvil.conv.conv2d %1, %w2 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.01], zero_point = [0]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.05], zero_point = [10]>}
      : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %2 : tensor<1x2x4x4xf32>
}

// -----

// A linear layer on a 3-D input goes through [M, K]; the weights' scales
// are max|w| / 127 per output channel.
// CHECK-LABEL: func.func @linear3d
// CHECK: %[[W:.*]] = cuvil.constant dense<{{\[\[}}127, -64], [-127, 127]]> : tensor<2x2xi8>
// CHECK: %[[X2:.*]] = cuvil.shape.reshape %{{.*}} {shape = array<i64: 6, 2>} : tensor<2x3x2xf32> -> tensor<6x2xf32>
// CHECK: %[[XQ:.*]] = cuvil.quant.quantize %[[X2]]
// CHECK: cuvil.quant.linear %[[XQ]], %[[W]] {cuvil.precision = "int8", input_params = {{.*}}, output_params = {{.*}}, weight_params = #cuvil.quant<scale = [0.015748031496062992, 0.00314960634614539], zero_point = [0, 0], axis = 0>} : (tensor<6x2xui8>, tensor<2x2xi8>) -> tensor<6x2xui8>
// The reshape back runs on the storage (it commutes with dequantizing).
// CHECK: cuvil.shape.reshape %{{.*}} {shape = array<i64: 2, 3, 2>} : tensor<6x2xui8> -> tensor<2x3x2xui8>
// CHECK: cuvil.quant.dequantize
func.func @linear3d(%x: tensor<2x3x2xf32>) -> tensor<2x3x2xf32> {
  %w = cuvil.constant dense<[[2.0, -1.0], [-0.4, 0.4]]> : tensor<2x2xf32>
  %0 = cuvil.gemm.linear %x, %w
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.1], zero_point = [100]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.2], zero_point = [90]>}
      : (tensor<2x3x2xf32>, tensor<2x2xf32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

// fp16: the input rounds through f16, the weights are stored rounded
// (0.1 -> 0.0999755859); fp32: nothing changes but the record.
// CHECK-LABEL: func.func @fallbacks
// CHECK: %[[H:.*]] = cuvil.tensor.cast %arg0 : tensor<4x2xf32> -> tensor<4x2xf16>
// CHECK: %[[F:.*]] = cuvil.tensor.cast %[[H]] : tensor<4x2xf16> -> tensor<4x2xf32>
// CHECK: %[[W:.*]] = cuvil.constant dense<{{\[\[}}0.0999755859, 1.000000e+00]]> : tensor<1x2xf32>
// CHECK: cuvil.gemm.linear %[[F]], %[[W]] {cuvil.precision = "fp16"}
// CHECK: %[[B:.*]] = cuvil.tensor.cast %arg0 : tensor<4x2xf32> -> tensor<4x2xbf16>
// CHECK: cuvil.gemm.linear %{{.*}}, %{{.*}} {cuvil.precision = "bf16"}
// CHECK: cuvil.gemm.linear %arg0, %{{.*}} {cuvil.precision = "fp32"}
func.func @fallbacks(%x: tensor<4x2xf32>) -> (tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %w = cuvil.constant dense<[[0.1, 1.0]]> : tensor<1x2xf32>
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "fp16", cuvil.quant.input = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x1xf32>
  %1 = cuvil.gemm.linear %x, %w {cuvil.precision = "bf16"} : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x1xf32>
  %2 = cuvil.gemm.linear %x, %w {cuvil.precision = "fp32"} : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<4x1xf32>
  return %0, %1, %2 : tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// -----

// hardtanh(0, 6) after an int8 conv whose output grid lies within [0, 6]
// (255 x 0.0235 = 5.99) is the identity and folds, and the chain stays in
// ui8; with a grid reaching past 6 (255 x 0.03 = 7.65) it stays.
// CHECK-LABEL: func.func @relu6
// CHECK: %[[Y1:.*]] = cuvil.quant.conv2d
// CHECK-NOT: cuvil.act.hardtanh
// CHECK-NOT: cuvil.quant.quantize
// CHECK: cuvil.quant.conv2d %[[Y1]]
// CHECK: cuvil.quant.dequantize
// CHECK-NEXT: cuvil.act.hardtanh
// CHECK-NEXT: return
func.func @relu6(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w1 = cuvil.constant dense<[[[[0.5]], [[-1.27]]], [[[0.25]], [[0.1]]]]> : tensor<2x2x1x1xf32>
  %w2 = cuvil.constant dense<[[[[1.0]], [[0.5]]], [[[0.2]], [[0.4]]]]> : tensor<2x2x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %w1 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.02], zero_point = [128]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.0235], zero_point = [0]>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = cuvil.act.hardtanh %0 {max_val = 6.0 : f64, min_val = 0.0 : f64} : tensor<1x2x4x4xf32>
  %2 = cuvil.conv.conv2d %1, %w2 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.0235], zero_point = [0]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.03], zero_point = [0]>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %3 = cuvil.act.hardtanh %2 {max_val = 6.0 : f64, min_val = 0.0 : f64} : tensor<1x2x4x4xf32>
  return %3 : tensor<1x2x4x4xf32>
}

// -----

// Max pooling and reshapes between int8 layers run on the storage (they
// commute with a per-tensor dequantization): with equal parameters on both
// sides the chain stays in ui8; the float user still gets exact values.
// CHECK-LABEL: func.func @pool
// CHECK: %[[Y1:.*]] = cuvil.quant.conv2d
// CHECK: %[[P:.*]] = cuvil.pool.max_pool2d %[[Y1]] {{.*}} -> tensor<1x2x2x2xui8>
// CHECK-NOT: cuvil.quant.quantize
// CHECK: %[[F:.*]] = cuvil.quant.dequantize %[[P]]
// CHECK-NOT: cuvil.quant.quantize
// CHECK: cuvil.quant.conv2d %[[P]]
// CHECK: cuvil.math.add %{{.*}}, %[[F]]
func.func @pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w1 = cuvil.constant dense<[[[[0.5]], [[-1.27]]], [[[0.25]], [[0.1]]]]> : tensor<2x2x1x1xf32>
  %w2 = cuvil.constant dense<[[[[1.0]], [[0.5]]], [[[0.2]], [[0.4]]]]> : tensor<2x2x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %w1 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.02], zero_point = [128]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.01], zero_point = [0]>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = cuvil.act.relu %0 : tensor<1x2x4x4xf32>
  %2 = cuvil.pool.max_pool2d %1 kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1]
      : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %3 = cuvil.conv.conv2d %2, %w2 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.01], zero_point = [0]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.03], zero_point = [100]>}
      : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %4 = cuvil.math.add %3, %2 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  return %4 : tensor<1x2x2x2xf32>
}

// -----

// Without cuvil.quant.output the int8 layer's sums are dequantized straight
// to f32 (what cuvil-quantize gives a layer no int8 layer reads from).
// CHECK-LABEL: func.func @float_output
// CHECK: %[[Y:.*]] = cuvil.quant.conv2d {{.*}} -> tensor<1x2x4x4xf32>
// CHECK-NOT: cuvil.quant.dequantize
// CHECK: return %[[Y]]
func.func @float_output(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = cuvil.constant dense<[[[[0.5]], [[-1.27]]], [[[0.25]], [[0.1]]]]> : tensor<2x2x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.02], zero_point = [128]>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A residual block: conv -> + x -> relu -> conv. The sum becomes a
// quant.add of the conv's ui8 output and x's quantization, with the relu
// folded in; the next conv reads its ui8 result (no float in between).
// CHECK-LABEL: func.func @residual
// CHECK-SAME: %[[X:.*]]: tensor<1x2x4x4xf32>
// CHECK: %[[XQ:.*]] = cuvil.quant.quantize %[[X]] {params = #cuvil.quant<scale = [0.02], zero_point = [128]>}
// CHECK: %[[Y1:.*]] = cuvil.quant.conv2d %[[XQ]], {{.*}} -> tensor<1x2x4x4xui8>
// CHECK-NOT: cuvil.quant.dequantize
// CHECK: %[[S:.*]] = cuvil.quant.add %[[Y1]], %[[XQ]] {cuvil.precision = "int8",
// CHECK-SAME: lhs_params = #cuvil.quant<scale = [0.03], zero_point = [120]>
// CHECK-SAME: output_params = #cuvil.quant<scale = [0.04], zero_point = [0]>, relu
// CHECK-SAME: rhs_params = #cuvil.quant<scale = [0.02], zero_point = [128]>}
// CHECK-SAME: : (tensor<1x2x4x4xui8>, tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8>
// CHECK-NOT: cuvil.act.relu
// CHECK-NOT: cuvil.math.add
// CHECK: cuvil.quant.conv2d %[[S]]
func.func @residual(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w1 = cuvil.constant dense<[[[[0.5]], [[-1.0]]], [[[0.25]], [[0.1]]]]> : tensor<2x2x1x1xf32>
  %w2 = cuvil.constant dense<[[[[1.0]], [[0.5]]], [[[0.2]], [[0.4]]]]> : tensor<2x2x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %w1 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.02], zero_point = [128]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.03], zero_point = [120]>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %1 = cuvil.math.add %0, %x
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.03], zero_point = [120]>,
       cuvil.quant.rhs = #cuvil.quant<scale = [0.02], zero_point = [128]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.04], zero_point = [0]>}
      : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %2 = cuvil.act.relu %1 : tensor<1x2x4x4xf32>
  %3 = cuvil.conv.conv2d %2, %w2 stride [1, 1] padding [0, 0] dilation [1, 1]
      {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.04], zero_point = [0]>,
       cuvil.quant.output = #cuvil.quant<scale = [0.05], zero_point = [10]>}
      : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %3 : tensor<1x2x4x4xf32>
}

// -----

// An add that fell back keeps its float form, annotations removed.
// CHECK-LABEL: func.func @add_fp32
// CHECK: %[[S:.*]] = cuvil.math.add %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CHECK-NOT: cuvil.quant
func.func @add_fp32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cuvil.math.add %a, %b {cuvil.precision = "fp32", cuvil.quant.input = #cuvil.quant<scale = [0.03], zero_point = [120]>,
       cuvil.quant.rhs = #cuvil.quant<scale = [0.02], zero_point = [128]>}
      : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
