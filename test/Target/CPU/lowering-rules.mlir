// RUN: cuvil-opt %s --cuvil-explain-lowering -o /dev/null 2>&1 | FileCheck %s
// RUN: cuvil-opt %s --cuvil-print-lowering-table -o /dev/null 2>&1 | FileCheck %s --check-prefix=TABLE
// RUN: cuvil-opt %s --cuvil-choose-cpu-kernels=remarks=1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: cuvil-export --model %S/Inputs/general-lowering.mlir --target x86_64 -o %t.so --lowering-remarks 2>&1 | FileCheck %s --check-prefix=EXPORT

// The CPU's lowering rules as data (targets/CPU/LoweringRules.cpp): every
// condition of the table on both sides, the first function of each group
// with all of them holding, then one function per condition that fails it.

// TABLE:      lowering rules (targets x86_64, aarch64
// TABLE:      cuvil.conv.conv2d -> conv2d im2col|pixel_rows
// TABLE-NEXT:   static-f32
// TABLE-NEXT:   not-depthwise
// TABLE-NEXT:   constant-weights
// TABLE-NEXT: otherwise: linalg (the general lowering)
// TABLE:      cuvil.conv.conv2d -> conv2d winograd_f4x4|winograd_f2x2
// TABLE:        winograd-channels           at least CUVIL_MR (8) input and output channels
// TABLE-NEXT: otherwise: conv2d im2col
// TABLE:      cuvil.gemm.linear -> linear weight_rows|input_rows
// TABLE:      cuvil.quant.conv2d -> qconv2d u8s8_pixel_rows
// TABLE:        patches-fit
// TABLE-NEXT: otherwise: qconv2d u8s8
// TABLE:      cuvil.quant.linear -> qlinear u8s8

// A remark for an op that takes the general lowering, naming its rules'
// failing conditions.
// REMARK: remark: cuvil.gemm.matmul takes the general lowering (linalg): matmul packed: its operands are not f32 tensors
// EXPORT: general-lowering.mlir:2:8: remark: cuvil.gemm.matmul takes the general lowering (linalg): matmul packed: its operands are not f32 tensors
// EXPORT: general-lowering.mlir:3:8: remark: cuvil.gemm.linear takes the general lowering (linalg): linear weight_rows: its weights are not a constant matrix

//===----------------------------------------------------------------------===//
// conv2d: im2col/pixel_rows, Winograd, depthwise
//===----------------------------------------------------------------------===//

// CHECK-LABEL: cuvil.conv.conv2d in @conv_all
//       CHECK:   conv2d im2col|pixel_rows:
//  CHECK-NEXT:     static-f32: holds
//  CHECK-NEXT:     not-depthwise: holds
//  CHECK-NEXT:     constant-weights: holds
//  CHECK-NEXT:     => runs on conv2d
//       CHECK:   conv2d winograd_f4x4|winograd_f2x2:
//       CHECK:     winograd-geometry: holds
//  CHECK-NEXT:     winograd-channels: holds
//  CHECK-NEXT:     => runs on conv2d
//       CHECK:   depthwise_conv2d direct:
//       CHECK:     depthwise: fails (it is not depthwise (one input channel per group))
//       CHECK:   depthwise_pointwise banded:
//       CHECK:     pointwise-geometry: fails (it is not a 1x1 stride-1 convolution without groups)
//       CHECK:   pointwise_depthwise banded:
//       CHECK:     depthwise-geometry: fails (it is not a 3x3 padding-1 depthwise convolution of stride 1 or 2 without residual)
func.func @conv_all(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// A run-time batch is allowed (the kernels read N as they run).
// CHECK-LABEL: cuvil.conv.conv2d in @conv_batch
//       CHECK:     static-f32: holds
// CHECK-LABEL: cuvil.conv.conv2d in @conv_dynamic
//       CHECK:   conv2d im2col|pixel_rows:
//  CHECK-NEXT:     static-f32: fails (its operands are not static f32 tensors (a run-time batch aside))
//  CHECK-NEXT:     => otherwise: linalg (the general lowering)
func.func @conv_batch(%x: tensor<?x8x16x16xf32>) -> tensor<?x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<?x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<?x8x16x16xf32>
  return %0 : tensor<?x8x16x16xf32>
}
func.func @conv_dynamic(%x: tensor<1x8x?x16xf32>) -> tensor<1x8x?x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x?x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x?x16xf32>
  return %0 : tensor<1x8x?x16xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @depthwise_all
//       CHECK:   conv2d im2col|pixel_rows:
//  CHECK-NEXT:     static-f32: holds
//  CHECK-NEXT:     not-depthwise: fails (depthwise convolutions run on kernel 'depthwise_conv2d')
//       CHECK:   depthwise_conv2d direct:
//  CHECK-NEXT:     static-f32: holds
//  CHECK-NEXT:     depthwise: holds
//  CHECK-NEXT:     => runs on depthwise_conv2d
//       CHECK:   pointwise_depthwise banded:
//       CHECK:     depthwise-geometry: holds
//  CHECK-NEXT:     pointwise-producer: fails (its input is not a 1x1 convolution used only here)
func.func @depthwise_all(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x1x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 8 : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @conv_runtime_weights
//       CHECK:   conv2d im2col|pixel_rows:
//       CHECK:     constant-weights: fails (its weights are not constant (only depthwise_conv2d takes run-time weights))
func.func @conv_runtime_weights(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @winograd_5x5
//       CHECK:   conv2d winograd_f4x4|winograd_f2x2:
//       CHECK:     winograd-geometry: fails (Winograd needs a 3x3 stride-1 convolution without groups or dilation)
//  CHECK-NEXT:     => otherwise: conv2d im2col
func.func @winograd_5x5(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x5x5xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [2, 2] dilation [1, 1] : (tensor<1x8x16x16xf32>, tensor<8x8x5x5xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @winograd_4_channels
//       CHECK:   conv2d winograd_f4x4|winograd_f2x2:
//       CHECK:     winograd-geometry: holds
//  CHECK-NEXT:     winograd-channels: fails (Winograd needs at least 8 input and output channels)
func.func @winograd_4_channels(%x: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<4x4x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x4x16x16xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x16x16xf32>
  return %0 : tensor<1x4x16x16xf32>
}

//===----------------------------------------------------------------------===//
// The banded pairs
//===----------------------------------------------------------------------===//

// Pointwise 1x1, depthwise 3x3, pointwise 1x1: the depthwise convolution
// runs with its producer, the last 1x1 with its (depthwise) producer.
// CHECK-LABEL: cuvil.conv.conv2d in @pairs_all
//       CHECK: cuvil.conv.conv2d in @pairs_all
//       CHECK:   pointwise_depthwise banded:
//  CHECK-NEXT:     pair-anchor: holds
//  CHECK-NEXT:     static-f32: holds
//  CHECK-NEXT:     depthwise-geometry: holds
//  CHECK-NEXT:     pointwise-producer: holds
//  CHECK-NEXT:     producer-1x1: holds
//  CHECK-NEXT:     band-fits: holds
//  CHECK-NEXT:     => runs on pointwise_depthwise
//       CHECK: cuvil.conv.conv2d in @pairs_all
//       CHECK:   depthwise_pointwise banded:
//  CHECK-NEXT:     pair-anchor: holds
//  CHECK-NEXT:     static-f32: holds
//  CHECK-NEXT:     pointwise-geometry: holds
//  CHECK-NEXT:     constant-weights: holds
//  CHECK-NEXT:     depthwise-producer: holds
//  CHECK-NEXT:     producer-3x3: holds
//  CHECK-NEXT:     band-fits: holds
//  CHECK-NEXT:     => runs on depthwise_pointwise
func.func @pairs_all(%x: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32>
  %wd = cuvil.constant dense<0.5> : tensor<16x1x3x3xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 16 : (tensor<1x16x16x32xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x16x32xf32>
  %wq = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %2 = cuvil.conv.conv2d %1, %wq stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32>
  return %2 : tensor<1x16x16x32xf32>
}

// A convolution anchoring a group whose epilogue (sigmoid) no kernel applies.
// CHECK-LABEL: cuvil.conv.conv2d in @pair_group
//       CHECK:   depthwise_pointwise banded:
//  CHECK-NEXT:     pair-anchor: fails (its fusion group's epilogue is not one the kernel applies)
func.func @pair_group(%x: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %0 = cuvil.fused.group conv(%x, %wp) : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32> {
  ^bb0(%a0: tensor<1x16x16x32xf32>, %a1: tensor<16x16x1x1xf32>):
    %1 = cuvil.conv.conv2d %a0, %a1 stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32>
    %2 = cuvil.act.sigmoid %1 : tensor<1x16x16x32xf32>
    cuvil.fused.yield %2 : tensor<1x16x16x32xf32>
  }
  return %0 : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pair_dynamic
//       CHECK:   depthwise_pointwise banded:
//  CHECK-NEXT:     pair-anchor: holds
//  CHECK-NEXT:     static-f32: fails
func.func @pair_dynamic(%x: tensor<1x16x?x32xf32>) -> tensor<1x16x?x32xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x?x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x?x32xf32>
  return %0 : tensor<1x16x?x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pair_runtime_weights
// CHECK-LABEL: cuvil.conv.conv2d in @pair_runtime_weights
//       CHECK:   depthwise_pointwise banded:
//       CHECK:     pointwise-geometry: holds
//  CHECK-NEXT:     constant-weights: fails (its weights are not constant)
func.func @pair_runtime_weights(%x: tensor<1x16x16x32xf32>, %wp: tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32> {
  %wd = cuvil.constant dense<0.5> : tensor<16x1x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 16 : (tensor<1x16x16x32xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x16x32xf32>
  %1 = cuvil.conv.conv2d %0, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32>
  return %1 : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pointwise_alone
//       CHECK:   depthwise_pointwise banded:
//       CHECK:     constant-weights: holds
//  CHECK-NEXT:     depthwise-producer: fails (its input is not a depthwise convolution used only here)
func.func @pointwise_alone(%x: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32>
  return %0 : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pair_5x5_producer
// CHECK-LABEL: cuvil.conv.conv2d in @pair_5x5_producer
//       CHECK:   depthwise_pointwise banded:
//       CHECK:     depthwise-producer: holds
//  CHECK-NEXT:     producer-3x3: fails (its producer is not a 3x3 stride-1 padding-1 depthwise convolution without residual)
func.func @pair_5x5_producer(%x: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %wd = cuvil.constant dense<0.5> : tensor<16x1x5x5xf32>
  %0 = cuvil.conv.conv2d %x, %wd stride [1, 1] padding [2, 2] dilation [1, 1] groups 16 : (tensor<1x16x16x32xf32>, tensor<16x1x5x5xf32>) -> tensor<1x16x16x32xf32>
  %wp = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %1 = cuvil.conv.conv2d %0, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x32xf32>
  return %1 : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pair_96_channels
// CHECK-LABEL: cuvil.conv.conv2d in @pair_96_channels
//       CHECK:   depthwise_pointwise banded:
//       CHECK:     producer-3x3: holds
//  CHECK-NEXT:     band-fits: fails (the band needs at most 64 channels, at least 16 columns and C x W at most 65536 (here 96 channels, 32 columns))
func.func @pair_96_channels(%x: tensor<1x96x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %wd = cuvil.constant dense<0.5> : tensor<96x1x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 96 : (tensor<1x96x16x32xf32>, tensor<96x1x3x3xf32>) -> tensor<1x96x16x32xf32>
  %wp = cuvil.constant dense<0.25> : tensor<16x96x1x1xf32>
  %1 = cuvil.conv.conv2d %0, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x96x16x32xf32>, tensor<16x96x1x1xf32>) -> tensor<1x16x16x32xf32>
  return %1 : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pair_3x3_producer
// CHECK-LABEL: cuvil.conv.conv2d in @pair_3x3_producer
//       CHECK:   pointwise_depthwise banded:
//       CHECK:     pointwise-producer: holds
//  CHECK-NEXT:     producer-1x1: fails (its producer is not a 1x1 stride-1 convolution with constant weights, no groups, no residual)
func.func @pair_3x3_producer(%x: tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32> {
  %w = cuvil.constant dense<0.25> : tensor<16x16x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x32xf32>
  %wd = cuvil.constant dense<0.5> : tensor<16x1x3x3xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 16 : (tensor<1x16x16x32xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x16x32xf32>
  return %1 : tensor<1x16x16x32xf32>
}

// CHECK-LABEL: cuvil.conv.conv2d in @pair_narrow
// CHECK-LABEL: cuvil.conv.conv2d in @pair_narrow
//       CHECK:   pointwise_depthwise banded:
//       CHECK:     producer-1x1: holds
//  CHECK-NEXT:     band-fits: fails (the band needs 16 or more output columns, an even width at stride 2 and C x W at most 32768 (here 16 x 8))
func.func @pair_narrow(%x: tensor<1x16x16x8xf32>) -> tensor<1x16x16x8xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<16x16x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x16x8xf32>
  %wd = cuvil.constant dense<0.5> : tensor<16x1x3x3xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 16 : (tensor<1x16x16x8xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x16x8xf32>
  return %1 : tensor<1x16x16x8xf32>
}

//===----------------------------------------------------------------------===//
// linear, matmul, max pooling
//===----------------------------------------------------------------------===//

// CHECK-LABEL: cuvil.gemm.linear in @linear_all
//  CHECK-NEXT:   linear weight_rows|input_rows:
//  CHECK-NEXT:     f32-static-features: holds
//  CHECK-NEXT:     constant-weight-matrix: holds
//  CHECK-NEXT:     matching-features: holds
//  CHECK-NEXT:     => runs on linear
// CHECK-LABEL: cuvil.gemm.linear in @linear_dynamic_features
//  CHECK-NEXT:   linear weight_rows|input_rows:
//  CHECK-NEXT:     f32-static-features: fails (its operands are not f32 tensors with a static last dimension)
// CHECK-LABEL: cuvil.gemm.linear in @linear_runtime_weights
//       CHECK:     constant-weight-matrix: fails (its weights are not a constant matrix)
// CHECK-LABEL: cuvil.gemm.linear in @linear_empty
//       CHECK:     matching-features: fails (its input's last dimension is not the weights' (or is 0))
func.func @linear_all(%x: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %w = cuvil.constant dense<0.5> : tensor<3x6xf32>
  %0 = cuvil.gemm.linear %x, %w : (tensor<?x6xf32>, tensor<3x6xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
func.func @linear_dynamic_features(%x: tensor<4x?xf32>) -> tensor<4x3xf32> {
  %w = cuvil.constant dense<0.5> : tensor<3x6xf32>
  %0 = cuvil.gemm.linear %x, %w : (tensor<4x?xf32>, tensor<3x6xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @linear_runtime_weights(%x: tensor<4x6xf32>, %w: tensor<3x6xf32>) -> tensor<4x3xf32> {
  %0 = cuvil.gemm.linear %x, %w : (tensor<4x6xf32>, tensor<3x6xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @linear_empty(%x: tensor<4x0xf32>) -> tensor<4x3xf32> {
  %w = cuvil.constant dense<0.5> : tensor<3x0xf32>
  %0 = cuvil.gemm.linear %x, %w : (tensor<4x0xf32>, tensor<3x0xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: cuvil.gemm.matmul in @matmul_all
//  CHECK-NEXT:   matmul packed:
//  CHECK-NEXT:     f32-operands: holds
//  CHECK-NEXT:     matrices: holds
//  CHECK-NEXT:     product-shapes: holds
//  CHECK-NEXT:     same-batch: holds
//  CHECK-NEXT:     => runs on matmul
// CHECK-LABEL: cuvil.gemm.matmul in @matmul_f64
//  CHECK-NEXT:   matmul packed:
//  CHECK-NEXT:     f32-operands: fails (its operands are not f32 tensors)
// CHECK-LABEL: cuvil.gemm.matmul in @matmul_vector
//       CHECK:     matrices: fails (the kernel takes matrices (rank 2 or more) only)
// CHECK-LABEL: cuvil.gemm.matmul in @matmul_mixed_sizes
//       CHECK:     product-shapes: fails (its shapes are not a matrix product's)
// CHECK-LABEL: cuvil.gemm.matmul in @matmul_broadcast
//       CHECK:     product-shapes: holds
//  CHECK-NEXT:     same-batch: fails (its batch dimensions differ (broadcasting stays with linalg))
func.func @matmul_all(%a: tensor<2x5x4xf32>, %b: tensor<2x4x6xf32>) -> tensor<2x5x6xf32> {
  %0 = cuvil.gemm.matmul %a, %b : tensor<2x5x4xf32>, tensor<2x4x6xf32> -> tensor<2x5x6xf32>
  return %0 : tensor<2x5x6xf32>
}
func.func @matmul_f64(%a: tensor<5x4xf64>, %b: tensor<4x8xf64>) -> tensor<5x8xf64> {
  %0 = cuvil.gemm.matmul %a, %b : tensor<5x4xf64>, tensor<4x8xf64> -> tensor<5x8xf64>
  return %0 : tensor<5x8xf64>
}
func.func @matmul_vector(%a: tensor<5x4xf32>, %b: tensor<4xf32>) -> tensor<5xf32> {
  %0 = cuvil.gemm.matmul %a, %b : tensor<5x4xf32>, tensor<4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @matmul_mixed_sizes(%a: tensor<?x4xf32>, %b: tensor<4x8xf32>) -> tensor<5x8xf32> {
  %0 = cuvil.gemm.matmul %a, %b : tensor<?x4xf32>, tensor<4x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}
func.func @matmul_broadcast(%a: tensor<1x5x4xf32>, %b: tensor<3x4x6xf32>) -> tensor<3x5x6xf32> {
  %0 = cuvil.gemm.matmul %a, %b : tensor<1x5x4xf32>, tensor<3x4x6xf32> -> tensor<3x5x6xf32>
  return %0 : tensor<3x5x6xf32>
}

// CHECK-LABEL: cuvil.pool.max_pool2d in @pool_all
//  CHECK-NEXT:   max_pool2d direct:
//  CHECK-NEXT:     static-f32-or-8-bit: holds
//  CHECK-NEXT:     windows-inside: holds
//  CHECK-NEXT:     => runs on max_pool2d
// CHECK-LABEL: cuvil.pool.max_pool2d in @pool_dynamic
//  CHECK-NEXT:   max_pool2d direct:
//  CHECK-NEXT:     static-f32-or-8-bit: fails (its operands are not static f32, ui8 or i8 tensors (a run-time batch aside))
// CHECK-LABEL: cuvil.pool.max_pool2d in @pool_ui8
//  CHECK-NEXT:   max_pool2d direct:
//  CHECK-NEXT:     static-f32-or-8-bit: holds
//  CHECK-NEXT:     windows-inside: holds
//  CHECK-NEXT:     => runs on max_pool2d
// CHECK-LABEL: cuvil.pool.max_pool2d in @pool_i32
//  CHECK-NEXT:   max_pool2d direct:
//  CHECK-NEXT:     static-f32-or-8-bit: fails
// CHECK-LABEL: cuvil.pool.max_pool2d in @pool_ceil
//       CHECK:     windows-inside: fails (a window hangs past the padded input (ceil_mode))
func.func @pool_all(%x: tensor<?x2x6x6xf32>) -> tensor<?x2x3x3xf32> {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<?x2x6x6xf32> -> tensor<?x2x3x3xf32>
  return %0 : tensor<?x2x3x3xf32>
}
func.func @pool_dynamic(%x: tensor<1x2x?x6xf32>) -> tensor<1x2x?x3xf32> {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x2x?x6xf32> -> tensor<1x2x?x3xf32>
  return %0 : tensor<1x2x?x3xf32>
}
func.func @pool_ui8(%x: tensor<1x2x6x6xui8>) -> tensor<1x2x3x3xui8> {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x2x6x6xui8> -> tensor<1x2x3x3xui8>
  return %0 : tensor<1x2x3x3xui8>
}
func.func @pool_i32(%x: tensor<1x2x6x6xi32>) -> tensor<1x2x3x3xi32> {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] : tensor<1x2x6x6xi32> -> tensor<1x2x3x3xi32>
  return %0 : tensor<1x2x3x3xi32>
}
func.func @pool_ceil(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] ceil_mode : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

//===----------------------------------------------------------------------===//
// The int8 kernels
//===----------------------------------------------------------------------===//

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_all
//  CHECK-NEXT:   qconv2d u8s8:
//  CHECK-NEXT:     static-shapes: holds
//  CHECK-NEXT:     u8-activations: holds
//  CHECK-NEXT:     constant-i8-weights: holds
//  CHECK-NEXT:     constant-bias: holds
//  CHECK-NEXT:     symmetric-weights: holds
//  CHECK-NEXT:     reduction-fits: holds
//  CHECK-NEXT:     => runs on qconv2d
//  CHECK-NEXT:   qconv2d u8s8_pixel_rows:
//       CHECK:     one-group: holds
//  CHECK-NEXT:     patches-fit: holds
//  CHECK-NEXT:     => runs on qconv2d
func.func @qconv_all(%x: tensor<1x8x7x7xui8>) -> tensor<1x8x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<8x8x3x3xi8>
  %b = cuvil.constant dense<0.5> : tensor<8xf32>
  %0 = cuvil.quant.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x8x7x7xui8>, tensor<8x8x3x3xi8>, tensor<8xf32>) -> tensor<1x8x7x7xui8>
  return %0 : tensor<1x8x7x7xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_dynamic
//  CHECK-NEXT:   qconv2d u8s8:
//  CHECK-NEXT:     static-shapes: fails (its shapes are not static)
func.func @qconv_dynamic(%x: tensor<?x8x7x7xui8>) -> tensor<?x8x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<8x8x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<?x8x7x7xui8>, tensor<8x8x3x3xi8>) -> tensor<?x8x7x7xui8>
  return %0 : tensor<?x8x7x7xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_signed_input
//       CHECK:     u8-activations: fails (the int8 kernels take ui8 activations in, and give ui8 or f32 out)
func.func @qconv_signed_input(%x: tensor<1x8x7x7xi8>) -> tensor<1x8x7x7xi8> {
  %w = cuvil.constant dense<3> : tensor<8x8x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [0]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x8x7x7xi8>, tensor<8x8x3x3xi8>) -> tensor<1x8x7x7xi8>
  return %0 : tensor<1x8x7x7xi8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_runtime_weights
//       CHECK:     constant-i8-weights: fails (the int8 kernels take constant i8 weights)
func.func @qconv_runtime_weights(%x: tensor<1x8x7x7xui8>, %w: tensor<8x8x3x3xi8>) -> tensor<1x8x7x7xui8> {
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x8x7x7xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x7x7xui8>
  return %0 : tensor<1x8x7x7xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_runtime_bias
//       CHECK:     constant-bias: fails (its bias is not a constant f32 tensor)
func.func @qconv_runtime_bias(%x: tensor<1x8x7x7xui8>, %b: tensor<8xf32>) -> tensor<1x8x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<8x8x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x8x7x7xui8>, tensor<8x8x3x3xi8>, tensor<8xf32>) -> tensor<1x8x7x7xui8>
  return %0 : tensor<1x8x7x7xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_asymmetric_weights
//       CHECK:     symmetric-weights: fails (its weights have a nonzero zero point (the int8 kernels take symmetric weights))
func.func @qconv_asymmetric_weights(%x: tensor<1x8x7x7xui8>) -> tensor<1x8x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<8x8x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [2]>} : (tensor<1x8x7x7xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x7x7xui8>
  return %0 : tensor<1x8x7x7xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_long_reduction
//       CHECK:     reduction-fits: fails (its reduction (41472) is longer than the int8 kernels' 40960)
func.func @qconv_long_reduction(%x: tensor<1x4608x3x3xui8>) -> tensor<1x4x3x3xui8> {
  %w = cuvil.constant dense<3> : tensor<4x4608x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x4608x3x3xui8>, tensor<4x4608x3x3xi8>) -> tensor<1x4x3x3xui8>
  return %0 : tensor<1x4x3x3xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_groups
//       CHECK:   qconv2d u8s8:
//       CHECK:     => runs on qconv2d
//       CHECK:   qconv2d u8s8_pixel_rows:
//       CHECK:     one-group: fails (pixel rows take convolutions of one group)
func.func @qconv_groups(%x: tensor<1x8x7x7xui8>) -> tensor<1x8x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<8x4x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] groups 2 {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x8x7x7xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x7x7xui8>
  return %0 : tensor<1x8x7x7xui8>
}

// CHECK-LABEL: cuvil.quant.conv2d in @qconv_large_image
//       CHECK:   qconv2d u8s8_pixel_rows:
//       CHECK:     patches-fit: fails (its patches ({{[0-9]+}} bytes) exceed pixel rows' 16777216)
func.func @qconv_large_image(%x: tensor<1x8x1024x1024xui8>) -> tensor<1x8x1024x1024xui8> {
  %w = cuvil.constant dense<3> : tensor<8x8x3x3xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #cuvil.quant<scale = [0.02], zero_point = [128]>, output_params = #cuvil.quant<scale = [0.01], zero_point = [0]>, weight_params = #cuvil.quant<scale = [0.01], zero_point = [0]>} : (tensor<1x8x1024x1024xui8>, tensor<8x8x3x3xi8>) -> tensor<1x8x1024x1024xui8>
  return %0 : tensor<1x8x1024x1024xui8>
}

// The same conditions for the linear layer's kernel (static shapes failing
// on a run-time batch here).
// CHECK-LABEL: cuvil.quant.linear in @qlinear_all
//  CHECK-NEXT:   qlinear u8s8:
//       CHECK:     reduction-fits: holds
//  CHECK-NEXT:     => runs on qlinear
// CHECK-LABEL: cuvil.quant.linear in @qlinear_dynamic
//  CHECK-NEXT:   qlinear u8s8:
//  CHECK-NEXT:     static-shapes: fails (its shapes are not static)
func.func @qlinear_all(%x: tensor<3x5xui8>) -> tensor<3x2xf32> {
  %w = cuvil.constant dense<3> : tensor<2x5xi8>
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<3x5xui8>, tensor<2x5xi8>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @qlinear_dynamic(%x: tensor<?x5xui8>) -> tensor<?x2xf32> {
  %w = cuvil.constant dense<3> : tensor<2x5xi8>
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<?x5xui8>, tensor<2x5xi8>) -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
