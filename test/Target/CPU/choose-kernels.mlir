// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels | FileCheck %s
// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels="winograd=false fuse-depthwise-min-bytes=0" | FileCheck %s --check-prefix=KNOBS
// RUN: not cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels="provider=oracle" 2>&1 | FileCheck %s --check-prefix=PROVIDER

// Every kernel op gets a #cuvil.kernel from the heuristics; where no kernel
// applies, kernel "linalg" with the reason.
// CHECK-LABEL: func.func @choices
//      CHECK:   cuvil.conv.conv2d {{.*}}#cuvil.kernel<kernel = "conv2d", variant = "winograd_f4x4", source = "heuristics", reason = "16 4x4 output tiles (>= 16)">
//      CHECK:   cuvil.conv.conv2d {{.*}}#cuvil.kernel<kernel = "depthwise_conv2d", variant = "direct", source = "heuristics", reason = "one filter per channel">
//      CHECK:   cuvil.gemm.linear {{.*}}#cuvil.kernel<kernel = "linear", variant = "weight_rows", source = "heuristics", reason = "16 row(s): y^T = W x^T, weights as GEMM rows">
//      CHECK:   cuvil.gemm.matmul {{.*}}#cuvil.kernel<kernel = "matmul", variant = "packed"
//      CHECK:   cuvil.gemm.linear {{.*}}#cuvil.kernel<kernel = "linalg", source = "heuristics", reason = "no kernel: its weights are not a constant matrix">
// KNOBS-LABEL: func.func @choices
//      KNOBS:   #cuvil.kernel<kernel = "conv2d", variant = "im2col"
// PROVIDER: error: cuvil-choose-cpu-kernels: unknown configuration provider 'oracle' (available: heuristics)
func.func @choices(%x: tensor<1x8x16x16xf32>, %a: tensor<16x4xf32>, %b: tensor<4x8xf32>, %w: tensor<3x4xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<16x3xf32>, tensor<16x8xf32>, tensor<16x3xf32>) {
  %w3 = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w3 stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  %wd = cuvil.constant dense<0.5> : tensor<8x1x3x3xf32>
  %1 = cuvil.conv.conv2d %x, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 8 : (tensor<1x8x16x16xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x16x16xf32>
  %wl = cuvil.constant dense<0.5> : tensor<3x4xf32>
  %2 = cuvil.gemm.linear %a, %wl : (tensor<16x4xf32>, tensor<3x4xf32>) -> tensor<16x3xf32>
  %3 = cuvil.gemm.matmul %a, %b : tensor<16x4xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  %4 = cuvil.gemm.linear %a, %w : (tensor<16x4xf32>, tensor<3x4xf32>) -> tensor<16x3xf32>
  return %0, %1, %2, %3, %4 : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<16x3xf32>, tensor<16x8xf32>, tensor<16x3xf32>
}

// -----

// A configuration already present (written by hand) is kept (source
// "user", the default, is not printed).
// CHECK-LABEL: func.func @kept
//      CHECK:   #cuvil.kernel<kernel = "conv2d", variant = "pixel_rows">
func.func @kept(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w3 = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %w3 stride [1, 1] padding [1, 1] dilation [1, 1] {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "pixel_rows", source = "user">} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// A depthwise 3x3 convolution feeding a 1x1 one: with the tensor between
// them past the threshold (here 0 bytes), the 1x1 convolution runs with
// its producer in bands; the producer's own entry says so.
// KNOBS-LABEL: func.func @banded
//      KNOBS:   cuvil.conv.conv2d {{.*}}#cuvil.kernel<kernel = "depthwise_conv2d", variant = "direct", source = "heuristics", reason = "runs inside its consumer's depthwise_pointwise call">
//      KNOBS:   cuvil.conv.conv2d {{.*}}#cuvil.kernel<kernel = "depthwise_pointwise", variant = "banded", source = "heuristics", reason = "with its producer in bands of rows: the 1x16x16x32xf32 middle tensor (32768 bytes) would not stay in cache">
func.func @banded(%x: tensor<1x16x16x32xf32>) -> tensor<1x32x16x32xf32> {
  %wd = cuvil.constant dense<0.5> : tensor<16x1x3x3xf32>
  %0 = cuvil.conv.conv2d %x, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 16 : (tensor<1x16x16x32xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x16x32xf32>
  %wp = cuvil.constant dense<0.25> : tensor<32x16x1x1xf32>
  %1 = cuvil.conv.conv2d %0, %wp stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x16x32xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x16x32xf32>
  return %1 : tensor<1x32x16x32xf32>
}

