// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels --cuvil-select-cpu-kernels | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels="winograd=false" --cuvil-select-cpu-kernels | FileCheck %s --check-prefix=DIRECT
// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels="winograd-2x2=false" --cuvil-select-cpu-kernels | FileCheck %s --check-prefix=NO2X2
// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels="fuse-depthwise-min-bytes=0" --cuvil-select-cpu-kernels | FileCheck %s --check-prefix=FUSE

// A conv group with a residual add and relu is one kernel call: the
// epilogue (bias, residual, clamp to [0, inf)) is in the params' flags (7),
// lo/hi are float bits (0.0, +inf), the last entry is the packing's MR (8).
// Weights [2][2][2][2]: 2 rows of K = 8, packed into one 8-row panel of
// 8 x 8 floats, zero-padded. The output is a fresh buffer. (With a single
// input channel this would be the depthwise kernel's case.)
// CHECK-LABEL: func.func @conv_add_relu
//  CHECK-DAG:   %[[W:.*]] = arith.constant dense_resource<{{.*}}packed> : tensor<64xf32>
//  CHECK-DAG:   %[[P:.*]] = arith.constant dense<[1, 1, 2, 3, 3, 2, 2, 2, 2, 2, 1, 1, 0, 0, 1, 1, 1, 7, 0, 2139095040, 8]> : tensor<21xi64>
//      CHECK:   bufferization.to_memref %[[P]] read_only
//      CHECK:   bufferization.to_memref %arg0 read_only
//      CHECK:   bufferization.to_memref %[[W]] read_only
//      CHECK:   bufferization.to_memref %arg1 read_only
//      CHECK:   %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x2x2xf32>
//      CHECK:   %[[OUTV:.*]] = memref.reinterpret_cast %[[OUT]] to offset: [0], sizes: [1], strides: [1]
//      CHECK:   call @cuvil_rt_conv2d_f32({{.*}}, %[[OUTV]]) : (memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
//      CHECK:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
//  CHECK-NOT:   cuvil.fused.group
//      CHECK:   return %[[R]]
func.func @conv_add_relu(%x: tensor<1x2x3x3xf32>, %res: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = cuvil.constant dense<0.5> : tensor<2x2x2x2xf32>
  %b = cuvil.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %0 = cuvil.fused.group conv(%x, %w, %b, %res) : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  ^bb0(%a0: tensor<1x2x3x3xf32>, %a1: tensor<2x2x2x2xf32>, %a2: tensor<2xf32>, %a3: tensor<1x2x2x2xf32>):
    %1 = cuvil.conv.conv2d %a0, %a1, %a2 stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
    %2 = cuvil.math.add %a3, %1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
    %3 = cuvil.act.relu %2 : tensor<1x2x2x2xf32>
    cuvil.fused.yield %3 : tensor<1x2x2x2xf32>
  }
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// Depthwise (groups = channels, one input channel each) with relu6: the
// direct kernel, on the weights as they are (no packing, no constant
// needed); clamp to [0, 6] (6.0 = 0x40C00000 = 1086324736), no bias (flags 4).
// CHECK-LABEL: func.func @depthwise_relu6
//      CHECK:   arith.constant dense<[1, 1, 3, 4, 4, 3, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 3, 4, 0, 1086324736, 8]>
//      CHECK:   bufferization.to_memref %arg1 read_only
//      CHECK:   call @cuvil_rt_depthwise_conv2d_f32
//  CHECK-NOT:   cuvil.
func.func @depthwise_relu6(%x: tensor<1x3x4x4xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = cuvil.fused.group conv(%x, %w) : (tensor<1x3x4x4xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32> {
  ^bb0(%a0: tensor<1x3x4x4xf32>, %a1: tensor<3x1x3x3xf32>):
    %1 = cuvil.conv.conv2d %a0, %a1 stride [1, 1] padding [1, 1] dilation [1, 1] groups 3 : (tensor<1x3x4x4xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x4x4xf32>
    %2 = cuvil.act.hardtanh %1 {min_val = 0.0 : f64, max_val = 6.0 : f64} : tensor<1x3x4x4xf32>
    cuvil.fused.yield %2 : tensor<1x3x4x4xf32>
  }
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// A group whose epilogue the kernel cannot apply (sigmoid) is opened up:
// the convolution is a call, the sigmoid stays for the linalg lowering.
// CHECK-LABEL: func.func @conv_sigmoid
//      CHECK:   call @cuvil_rt_conv2d_f32
//      CHECK:   %[[C:.*]] = bufferization.to_tensor
//      CHECK:   cuvil.act.sigmoid %[[C]]
func.func @conv_sigmoid(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<1x2x2x2xf32>
  %0 = cuvil.fused.group conv(%x, %w) : (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32> {
  ^bb0(%a0: tensor<1x2x3x3xf32>, %a1: tensor<1x2x2x2xf32>):
    %1 = cuvil.conv.conv2d %a0, %a1 stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x2x3x3xf32>, tensor<1x2x2x2xf32>) -> tensor<1x1x2x2xf32>
    %2 = cuvil.act.sigmoid %1 : tensor<1x1x2x2xf32>
    cuvil.fused.yield %2 : tensor<1x1x2x2xf32>
  }
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Weights computed at run time cannot be packed at compile time: the
// convolution is left to the linalg lowering.
// CHECK-LABEL: func.func @runtime_weights
//      CHECK:   cuvil.conv.conv2d
//  CHECK-NOT:   call
func.func @runtime_weights(%x: tensor<1x2x3x3xf32>, %w: tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x2x3x3xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %0 : tensor<1x2x2x2xf32>
}

// -----

// linear on a [2, 3, 4] input: M = 6 rows, K = 4, N = 5, no bias (flags 0);
// a one-float constant the kernel never reads fills the bias and residual slots.
// CHECK-LABEL: func.func @linear_3d
//      CHECK:   arith.constant dense<[1, 6, 4, 5, 0, 4286578688, 2139095040, 8]> : tensor<8xi64>
//      CHECK:   call @cuvil_rt_linear_f32
//      CHECK:   bufferization.to_tensor {{.*}} : memref<2x3x5xf32>
func.func @linear_3d(%x: tensor<2x3x4xf32>) -> tensor<2x3x5xf32> {
  %w = cuvil.constant dense<0.25> : tensor<5x4xf32>
  %0 = cuvil.gemm.linear %x, %w : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Attention's products: both operands at run time, batched over [2, 4]
// (8 products of 16x64 by 64x16); params: 1, batch 8, M 16, K 64, N 16,
// batch strides 1024 and 1024, 8.
// CHECK-LABEL: func.func @attention_scores
//      CHECK:   arith.constant dense<[1, 8, 16, 64, 16, 1024, 1024, 8]> : tensor<8xi64>
//      CHECK:   call @cuvil_rt_matmul_f32({{.*}}) : (memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
func.func @attention_scores(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x64x16xf32>) -> tensor<2x4x16x16xf32> {
  %0 = cuvil.gemm.matmul %q, %k : tensor<2x4x16x64xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x16x16xf32>
  return %0 : tensor<2x4x16x16xf32>
}

// -----

// A shared rank-2 right operand: batch stride 0. A group around a matmul
// with an epilogue the kernel does not apply is opened up.
// CHECK-LABEL: func.func @shared_rhs_relu
//      CHECK:   arith.constant dense<[1, 3, 5, 4, 6, 20, 0, 8]> : tensor<8xi64>
//      CHECK:   call @cuvil_rt_matmul_f32
//      CHECK:   %[[P:.*]] = bufferization.to_tensor
//      CHECK:   cuvil.act.relu %[[P]]
func.func @shared_rhs_relu(%a: tensor<3x5x4xf32>, %b: tensor<4x6xf32>) -> tensor<3x5x6xf32> {
  %0 = cuvil.fused.group gemm(%a, %b) : (tensor<3x5x4xf32>, tensor<4x6xf32>) -> tensor<3x5x6xf32> {
  ^bb0(%x: tensor<3x5x4xf32>, %y: tensor<4x6xf32>):
    %1 = cuvil.gemm.matmul %x, %y : tensor<3x5x4xf32>, tensor<4x6xf32> -> tensor<3x5x6xf32>
    %2 = cuvil.act.relu %1 : tensor<3x5x6xf32>
    cuvil.fused.yield %2 : tensor<3x5x6xf32>
  }
  return %0 : tensor<3x5x6xf32>
}

// -----

// Broadcasting a size-1 batch dimension is left to the linalg lowering.
// CHECK-LABEL: func.func @broadcast_batch
//      CHECK:   cuvil.gemm.matmul
//  CHECK-NOT:   call
func.func @broadcast_batch(%a: tensor<1x5x4xf32>, %b: tensor<3x4x6xf32>) -> tensor<3x5x6xf32> {
  %0 = cuvil.gemm.matmul %a, %b : tensor<1x5x4xf32>, tensor<3x4x6xf32> -> tensor<3x5x6xf32>
  return %0 : tensor<3x5x6xf32>
}

// -----

// A 3x3 stride-1 convolution with 7 x 7 = 49 output tiles of 4 x 4 (at
// least winograd-min-tiles, 16): Winograd F(4x4, 3x3). Flags 9 = bias +
// Winograd; the weights are transformed: 36 positions x 1 panel x 8 input
// channels x 8 rows = 2304 floats. With winograd=false, or a smaller
// image (3 x 3 = 9 tiles), the direct kernel's packing: 1 panel x K = 72 x 8.
// CHECK-LABEL: func.func @conv3x3_winograd
//      CHECK:   arith.constant dense_resource<{{.*}}winograd> : tensor<2304xf32>
//      CHECK:   arith.constant dense<[1, 1, 8, 28, 28, 8, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 9, 4286578688, 2139095040, 8]>
//      CHECK:   call @cuvil_rt_conv2d_f32
// DIRECT-LABEL: func.func @conv3x3_winograd
//       DIRECT:   arith.constant dense_resource<{{.*}}packed> : tensor<576xf32>
//       DIRECT:   arith.constant dense<[1, 1, 8, 28, 28, 8, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4286578688, 2139095040, 8]>
func.func @conv3x3_winograd(%x: tensor<1x8x28x28xf32>) -> tensor<1x8x28x28xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %b = cuvil.constant dense<0.25> : tensor<8xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x28x28xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x28x28xf32>
  return %0 : tensor<1x8x28x28xf32>
}

// -----

// 7 x 7: 4 tiles of 4 x 4, 16 of 2 x 2, and 64 channels: Winograd
// F(2x2, 3x3), flags 41 = bias + Winograd + F(2x2); 16 positions x 8 panels
// x 64 input channels x 8 rows = 65536 floats. With winograd=false, the
// direct kernel's (pixels as rows, flags 17): 2 panels of 32 x K = 576.
// CHECK-LABEL: func.func @conv3x3_winograd_2x2
//      CHECK:   arith.constant dense_resource<{{.*}}winograd> : tensor<65536xf32>
//      CHECK:   arith.constant dense<[1, 1, 64, 7, 7, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 41, 4286578688, 2139095040, 8]>
//      CHECK:   call @cuvil_rt_conv2d_f32
// DIRECT-LABEL: func.func @conv3x3_winograd_2x2
//       DIRECT:   arith.constant dense_resource<{{.*}}panels> : tensor<36864xf32>
//       DIRECT:   arith.constant dense<[1, 1, 64, 7, 7, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 17, 4286578688, 2139095040, 8]>
// NO2X2-LABEL: func.func @conv3x3_winograd_2x2
//       NO2X2:   arith.constant dense_resource<{{.*}}panels> : tensor<36864xf32>
func.func @conv3x3_winograd_2x2(%x: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = cuvil.constant dense<0.5> : tensor<64x64x3x3xf32>
  %b = cuvil.constant dense<0.25> : tensor<64xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x64x7x7xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}

// -----

// 12 x 12 with 8 channels: 9 tiles of 4 x 4 (fewer than 16), and too few
// channels for F(2x2, 3x3): the direct kernel.
// CHECK-LABEL: func.func @conv3x3_few_tiles
//      CHECK:   arith.constant dense_resource<{{.*}}packed> : tensor<576xf32>
//      CHECK:   arith.constant dense<[1, 1, 8, 12, 12, 8, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4286578688, 2139095040, 8]>
func.func @conv3x3_few_tiles(%x: tensor<1x8x12x12xf32>) -> tensor<1x8x12x12xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %b = cuvil.constant dense<0.25> : tensor<8xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x12x12xf32>
  return %0 : tensor<1x8x12x12xf32>
}

// -----

// A 7x7 image: its 49 pixels would fill two 32-wide column tiles (64
// lanes) but only seven 8-pixel row panels (56), so the pixels become the
// GEMM's rows and the 64 output channels its columns (flags 17 = bias +
// pixel rows); the weights are B panels: 2 panels x K = 16 x 32 floats. So
// does a 14x14 pointwise convolution (196 pixels waste 12% of 224 lanes,
// 2% of 200 rows); a 28x28 one keeps the usual form (784 pixels waste 2%
// of 800 lanes).
// CHECK-LABEL: func.func @pointwise_7x7
//      CHECK:   arith.constant dense_resource<{{.*}}panels> : tensor<1024xf32>
//      CHECK:   arith.constant dense<[1, 1, 16, 7, 7, 64, 7, 7, 1, 1, 1, 1, 0, 0, 1, 1, 1, 17, 4286578688, 2139095040, 8]>
// CHECK-LABEL: func.func @pointwise_14x14
//      CHECK:   arith.constant dense_resource<{{.*}}panels{{[_0-9]*}}> : tensor<1024xf32>
//      CHECK:   arith.constant dense<[1, 1, 16, 14, 14, 64, 14, 14, 1, 1, 1, 1, 0, 0, 1, 1, 1, 17, 4286578688, 2139095040, 8]>
// CHECK-LABEL: func.func @pointwise_28x28
//      CHECK:   arith.constant dense_resource<{{.*}}packed{{[_0-9]*}}> : tensor<1024xf32>
//      CHECK:   arith.constant dense<[1, 1, 16, 28, 28, 64, 28, 28, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 4286578688, 2139095040, 8]>
func.func @pointwise_7x7(%x: tensor<1x16x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = cuvil.constant dense<0.5> : tensor<64x16x1x1xf32>
  %b = cuvil.constant dense<0.25> : tensor<64xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x7x7xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x7x7xf32>
  return %0 : tensor<1x64x7x7xf32>
}
func.func @pointwise_14x14(%x: tensor<1x16x14x14xf32>) -> tensor<1x64x14x14xf32> {
  %w = cuvil.constant dense<0.5> : tensor<64x16x1x1xf32>
  %b = cuvil.constant dense<0.25> : tensor<64xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x14x14xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x14x14xf32>
  return %0 : tensor<1x64x14x14xf32>
}
func.func @pointwise_28x28(%x: tensor<1x16x28x28xf32>) -> tensor<1x64x28x28xf32> {
  %w = cuvil.constant dense<0.5> : tensor<64x16x1x1xf32>
  %b = cuvil.constant dense<0.25> : tensor<64xf32>
  %0 = cuvil.conv.conv2d %x, %w, %b stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x28x28xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x28x28xf32>
  return %0 : tensor<1x64x28x28xf32>
}

// -----

// 16 rows of x (at least 8): x's rows are the GEMM's rows and the weights
// its B operand, in one 32-column panel of K = 4 (128 floats); flags 17 =
// bias + rows form. (With fewer rows, as in @linear_3d, the weights stay
// the A operand.)
// CHECK-LABEL: func.func @linear_rows
//      CHECK:   arith.constant dense_resource<{{.*}}panels> : tensor<128xf32>
//      CHECK:   arith.constant dense<[1, 16, 4, 32, 17, 4286578688, 2139095040, 8]>
//      CHECK:   call @cuvil_rt_linear_f32
func.func @linear_rows(%x: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w = cuvil.constant dense<0.5> : tensor<32x4xf32>
  %b = cuvil.constant dense<0.25> : tensor<32xf32>
  %0 = cuvil.gemm.linear %x, %w, %b : (tensor<16x4xf32>, tensor<32x4xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  return %0 : tensor<16x32xf32>
}

// -----

// Max pooling 3x3 / 2, padding 1 (resnet's): a kernel call with the conv
// params' layout (Cout = groups = C, flags 0). With ceil_mode and a window
// hanging past the padded input (5 -> 3 with 2x2 / 2: the last window
// reads column 5), it stays for the linalg lowering.
// CHECK-LABEL: func.func @max_pool
//      CHECK:   arith.constant dense<[1, 1, 4, 8, 8, 4, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4, 0, 0, 0, 8]>
//      CHECK:   call @cuvil_rt_max_pool2d_f32({{.*}}) : (memref<1xi64>, memref<1xf32>, memref<1xf32>) -> ()
// CHECK-LABEL: func.func @max_pool_ceil_overhang
//      CHECK:   cuvil.pool.max_pool2d
//  CHECK-NOT:   call @cuvil_rt_max_pool2d_f32
func.func @max_pool(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
func.func @max_pool_ceil_overhang(%x: tensor<1x4x5x5xf32>) -> tensor<1x4x3x3xf32> {
  %0 = cuvil.pool.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] dilation [1, 1] ceil_mode : tensor<1x4x5x5xf32> -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// Quantized tensors pool in their integers: ui8 with the unsigned kernel,
// i8 with the signed one, both seeing signless bytes through casts.
// CHECK-LABEL: func.func @max_pool_ui8
//      CHECK:   %[[X:.*]] = builtin.unrealized_conversion_cast %{{.*}} : tensor<1x4x8x8xui8> to tensor<1x4x8x8xi8>
//      CHECK:   call @cuvil_rt_max_pool2d_u8({{.*}}) : (memref<1xi64>, memref<1xi8>, memref<1xi8>) -> ()
//      CHECK:   builtin.unrealized_conversion_cast %{{.*}} : tensor<1x4x4x4xi8> to tensor<1x4x4x4xui8>
// CHECK-LABEL: func.func @max_pool_i8
//      CHECK:   call @cuvil_rt_max_pool2d_s8({{.*}}) : (memref<1xi64>, memref<1xi8>, memref<1xi8>) -> ()
func.func @max_pool_ui8(%x: tensor<1x4x8x8xui8>) -> tensor<1x4x4x4xui8> {
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<1x4x8x8xui8> -> tensor<1x4x4x4xui8>
  return %0 : tensor<1x4x4x4xui8>
}
func.func @max_pool_i8(%x: tensor<1x4x8x8xi8>) -> tensor<1x4x4x4xi8> {
  %0 = cuvil.pool.max_pool2d %x kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<1x4x8x8xi8> -> tensor<1x4x4x4xi8>
  return %0 : tensor<1x4x4x4xi8>
}

// -----

// A 3x3 stride-1 depthwise group (relu6) whose output only feeds a 1x1
// convolution: past fuse-depthwise-min-bytes (0 on the third RUN) one call runs both in
// bands, with both params (depthwise: clamp to [0, 6], flags 4; pointwise:
// bias, flags 1, no clamp: -inf, +inf), the depthwise weights as they are,
// an unread one-float bias for it, the pointwise weights packed (8 rows of
// K = 32: one panel). The default threshold (1 MiB) leaves this 32 KiB
// tensor to the two kernels; so does a depthwise output with another use.
// FUSE-LABEL: func.func @depthwise_pointwise
//  FUSE-DAG:   %[[W:.*]] = arith.constant dense_resource<{{.*}}packed> : tensor<256xf32>
//  FUSE-DAG:   %[[P:.*]] = arith.constant dense<[1, 1, 32, 16, 16, 32, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 32, 4, 0, 1086324736, 8, 1, 1, 32, 16, 16, 8, 16, 16, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 4286578688, 2139095040, 8]> : tensor<42xi64>
//      FUSE:   bufferization.to_memref %[[P]] read_only
//      FUSE:   bufferization.to_memref %arg0 read_only
//      FUSE:   bufferization.to_memref %arg1 read_only
//      FUSE:   bufferization.to_memref %[[W]] read_only
//      FUSE:   memref.alloc() {alignment = 64 : i64} : memref<1x8x16x16xf32>
//      FUSE:   call @cuvil_rt_depthwise_pointwise_f32({{.*}}) : (memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
//  FUSE-NOT:   call @cuvil_rt_depthwise_conv2d_f32
//  FUSE-NOT:   call @cuvil_rt_conv2d_f32
// FUSE-LABEL: func.func @depthwise_two_uses
//      FUSE:   call @cuvil_rt_depthwise_conv2d_f32
//      FUSE:   call @cuvil_rt_conv2d_f32
// CHECK-LABEL: func.func @depthwise_pointwise
//      CHECK:   call @cuvil_rt_depthwise_conv2d_f32
//      CHECK:   call @cuvil_rt_conv2d_f32
//  CHECK-NOT:   call @cuvil_rt_depthwise_pointwise_f32
func.func @depthwise_pointwise(%x: tensor<1x32x16x16xf32>, %wd: tensor<32x1x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<8x32x1x1xf32>
  %bp = cuvil.constant dense<0.5> : tensor<8xf32>
  %0 = cuvil.fused.group conv(%x, %wd) : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32> {
  ^bb0(%a0: tensor<1x32x16x16xf32>, %a1: tensor<32x1x3x3xf32>):
    %1 = cuvil.conv.conv2d %a0, %a1 stride [1, 1] padding [1, 1] dilation [1, 1] groups 32 : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
    %2 = cuvil.act.hardtanh %1 {min_val = 0.0 : f64, max_val = 6.0 : f64} : tensor<1x32x16x16xf32>
    cuvil.fused.yield %2 : tensor<1x32x16x16xf32>
  }
  %3 = cuvil.conv.conv2d %0, %wp, %bp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  return %3 : tensor<1x8x16x16xf32>
}
func.func @depthwise_two_uses(%x: tensor<1x32x16x16xf32>, %wd: tensor<32x1x3x3xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x32x16x16xf32>) {
  %wp = cuvil.constant dense<0.25> : tensor<8x32x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 32 : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  %1 = cuvil.conv.conv2d %0, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x32x16x16xf32>, tensor<8x32x1x1xf32>) -> tensor<1x8x16x16xf32>
  return %1, %0 : tensor<1x8x16x16xf32>, tensor<1x32x16x16xf32>
}

// -----

// A 1x1 convolution group (bias, relu6) whose output only feeds a 3x3
// depthwise one, stride 2 and stride 1, past fuse-depthwise-min-bytes (0 on
// the third RUN): one call runs both in bands, with both params (pointwise:
// bias and clamp to [0, 6], flags 5; depthwise: no bias, no clamp), the
// pointwise weights packed (32 rows of K = 4: four panels), the depthwise
// weights as they are and an unread one-float bias for them. Not fused: an
// output narrower than 16 columns (the band's depthwise rows are vectors),
// a middle tensor with another use, and (default threshold, 1 MiB) these
// 128 KiB tensors.
// FUSE-LABEL: func.func @pointwise_depthwise
//  FUSE-DAG:   %[[W:.*]] = arith.constant dense_resource<{{.*}}packed> : tensor<128xf32>
//  FUSE-DAG:   %[[P:.*]] = arith.constant dense<[1, 1, 4, 32, 32, 32, 32, 32, 1, 1, 1, 1, 0, 0, 1, 1, 1, 5, 0, 1086324736, 8, 1, 1, 32, 32, 32, 32, 16, 16, 3, 3, 2, 2, 1, 1, 1, 1, 32, 0, 4286578688, 2139095040, 8]> : tensor<42xi64>
//      FUSE:   bufferization.to_memref %[[P]] read_only
//      FUSE:   bufferization.to_memref %arg0 read_only
//      FUSE:   bufferization.to_memref %[[W]] read_only
//      FUSE:   bufferization.to_memref %arg1 read_only
//      FUSE:   memref.alloc() {alignment = 64 : i64} : memref<1x32x16x16xf32>
//      FUSE:   call @cuvil_rt_pointwise_depthwise_f32({{.*}}) : (memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
//  FUSE-NOT:   call @cuvil_rt_conv2d_f32
//  FUSE-NOT:   call @cuvil_rt_depthwise_conv2d_f32
// FUSE-LABEL: func.func @pointwise_depthwise_stride1
//      FUSE:   call @cuvil_rt_pointwise_depthwise_f32({{.*}}) : (memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>, memref<1xf32>) -> ()
// FUSE-LABEL: func.func @pointwise_depthwise_narrow
//      FUSE:   call @cuvil_rt_conv2d_f32
//      FUSE:   call @cuvil_rt_depthwise_conv2d_f32
// FUSE-LABEL: func.func @pointwise_two_uses
//      FUSE:   call @cuvil_rt_conv2d_f32
//      FUSE:   call @cuvil_rt_depthwise_conv2d_f32
// CHECK-LABEL: func.func @pointwise_depthwise
//      CHECK:   call @cuvil_rt_conv2d_f32
//      CHECK:   call @cuvil_rt_depthwise_conv2d_f32
//  CHECK-NOT:   call @cuvil_rt_pointwise_depthwise_f32
func.func @pointwise_depthwise(%x: tensor<1x4x32x32xf32>, %wd: tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<32x4x1x1xf32>
  %bp = cuvil.constant dense<0.5> : tensor<32xf32>
  %0 = cuvil.fused.group conv(%x, %wp, %bp) : (tensor<1x4x32x32xf32>, tensor<32x4x1x1xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32> {
  ^bb0(%a0: tensor<1x4x32x32xf32>, %a1: tensor<32x4x1x1xf32>, %a2: tensor<32xf32>):
    %1 = cuvil.conv.conv2d %a0, %a1, %a2 stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x4x32x32xf32>, tensor<32x4x1x1xf32>, tensor<32xf32>) -> tensor<1x32x32x32xf32>
    %2 = cuvil.act.hardtanh %1 {min_val = 0.0 : f64, max_val = 6.0 : f64} : tensor<1x32x32x32xf32>
    cuvil.fused.yield %2 : tensor<1x32x32x32xf32>
  }
  %3 = cuvil.conv.conv2d %0, %wd stride [2, 2] padding [1, 1] dilation [1, 1] groups 32 : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  return %3 : tensor<1x32x16x16xf32>
}
func.func @pointwise_depthwise_stride1(%x: tensor<1x4x32x32xf32>, %wd: tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<32x4x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x4x32x32xf32>, tensor<32x4x1x1xf32>) -> tensor<1x32x32x32xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 32 : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x32x32xf32>
  return %1 : tensor<1x32x32x32xf32>
}
func.func @pointwise_depthwise_narrow(%x: tensor<1x4x16x16xf32>, %wd: tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32> {
  %wp = cuvil.constant dense<0.25> : tensor<32x4x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x4x16x16xf32>, tensor<32x4x1x1xf32>) -> tensor<1x32x16x16xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [2, 2] padding [1, 1] dilation [1, 1] groups 32 : (tensor<1x32x16x16xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x8x8xf32>
  return %1 : tensor<1x32x8x8xf32>
}
func.func @pointwise_two_uses(%x: tensor<1x4x32x32xf32>, %wd: tensor<32x1x3x3xf32>) -> (tensor<1x32x16x16xf32>, tensor<1x32x32x32xf32>) {
  %wp = cuvil.constant dense<0.25> : tensor<32x4x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x4x32x32xf32>, tensor<32x4x1x1xf32>) -> tensor<1x32x32x32xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [2, 2] padding [1, 1] dilation [1, 1] groups 32 : (tensor<1x32x32x32xf32>, tensor<32x1x3x3xf32>) -> tensor<1x32x16x16xf32>
  return %1, %0 : tensor<1x32x16x16xf32>, tensor<1x32x32x32xf32>
}

// -----

// A tuned schedule is the FLAGS entry's split bits (kernel_abi.h
// CUVIL_SPLIT_*, at bit 8): fine (1 << 8) on im2col, whole (2 << 8) on a
// linear layer's weight rows.
// CHECK-LABEL: func.func @schedules
//      CHECK:   arith.constant dense<[1, 1, 8, 16, 16, 8, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 256, {{[0-9]+}}, {{[0-9]+}}, 8]> : tensor<21xi64>
//      CHECK:   arith.constant dense<[1, 4, 8, 3, 512, {{[0-9]+}}, {{[0-9]+}}, 8]> : tensor<8xi64>
func.func @schedules(%x: tensor<1x8x16x16xf32>, %a: tensor<4x8xf32>) -> (tensor<1x8x16x16xf32>, tensor<4x3xf32>) {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "im2col", schedule = "fine">} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %wl = cuvil.constant dense<0.5> : tensor<3x8xf32>
  %1 = cuvil.gemm.linear %a, %wl {cuvil.kernel = #cuvil.kernel<kernel = "linear", variant = "weight_rows", schedule = "whole">} : (tensor<4x8xf32>, tensor<3x8xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<1x8x16x16xf32>, tensor<4x3xf32>
}
