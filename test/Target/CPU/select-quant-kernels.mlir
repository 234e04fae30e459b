// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels | FileCheck %s --check-prefix=CHOOSE
// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels --cuvil-select-cpu-kernels | FileCheck %s

// An int8 convolution with symmetric weights runs on the int8 kernel: the
// weights packed [Cout][Kp] with K ordered (kh, kw, channel) and channels
// padded to quads (2 channels -> 4: Kp = 1 x 1 x 4), the per-channel
// offsets (bias_q - zx * sum(w)) and multipliers as constants, a workspace
// buffer of N * groups * quads * (H + 2PH) * (W + 2PW) * 4 bytes (+ 192 of
// slack for 1x1 convolutions, whose tiles read the planes directly), and the
// ui8 tensors seen as signless i8 by the call.
// CHOOSE-LABEL: func.func @qconv
//       CHOOSE:   cuvil.quant.conv2d {{.*}}#cuvil.kernel<kernel = "qconv2d", variant = "u8s8", source = "heuristics"
// CHECK-LABEL: func.func @qconv
//   CHECK-DAG:   arith.constant dense_resource<{{.*}}qrows> : tensor<8xi8>
//   CHECK-DAG:   arith.constant dense_resource<{{.*}}qoffset> : tensor<2xi32>
//   CHECK-DAG:   arith.constant dense_resource<{{.*}}qmultiplier> : tensor<2xf32>
//       CHECK:   memref.alloc() {alignment = 64 : i64} : memref<256xi8>
//       CHECK:   call @cuvil_rt_qconv2d_u8s8({{.*}}) : (memref<1xi64>, memref<1xi8>, memref<1xi8>, memref<1xi32>, memref<1xf32>, memref<1xi8>, memref<1xi8>) -> ()
//   CHECK-NOT:   cuvil.quant.conv2d
func.func @qconv(%x: tensor<1x2x4x4xui8>) -> tensor<1x2x4x4xui8> {
  %w = cuvil.constant dense<[[[[50]], [[-127]]], [[[127]], [[51]]]]> : tensor<2x2x1x1xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] {input_params = #cuvil.quant<scale = [2.000000e-02], zero_point = [128]>, output_params = #cuvil.quant<scale = [1.000000e-02], zero_point = [0]>, weight_params = #cuvil.quant<scale = [1.000000e-02, 1.968504e-03], zero_point = [0, 0], axis = 0>} : (tensor<1x2x4x4xui8>, tensor<2x2x1x1xi8>) -> tensor<1x2x4x4xui8>
  return %0 : tensor<1x2x4x4xui8>
}

// -----

// An f32 result (the sums dequantized) calls the f32-output entry point.
// CHECK-LABEL: func.func @qlinear_f32
//       CHECK:   call @cuvil_rt_qlinear_u8s8_f32({{.*}}) : (memref<1xi64>, memref<1xi8>, memref<1xi8>, memref<1xi32>, memref<1xf32>, memref<1xf32>) -> ()
func.func @qlinear_f32(%x: tensor<3x5xui8>) -> tensor<3x2xf32> {
  %w = cuvil.constant dense<[[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5]]> : tensor<2x5xi8>
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [0]>} : (tensor<3x5xui8>, tensor<2x5xi8>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Weights with a nonzero zero point (PyTorch's qnnpack per-tensor affine
// weights, say) stay on the generic lowering, with the reason.
// CHOOSE-LABEL: func.func @affine_weights
//       CHOOSE:   #cuvil.kernel<kernel = "linalg", source = "heuristics", reason = "no kernel: its weights have a nonzero zero point (the int8 kernels take symmetric weights)">
// CHECK-LABEL: func.func @affine_weights
//       CHECK:   cuvil.quant.linear
func.func @affine_weights(%x: tensor<3x5xui8>) -> tensor<3x2xui8> {
  %w = cuvil.constant dense<[[1, 2, 3, 4, 5], [-1, -2, -3, -4, -5]]> : tensor<2x5xi8>
  %0 = cuvil.quant.linear %x, %w {input_params = #cuvil.quant<scale = [0.03], zero_point = [120]>, weight_params = #cuvil.quant<scale = [0.005], zero_point = [3]>, output_params = #cuvil.quant<scale = [0.08], zero_point = [100]>} : (tensor<3x5xui8>, tensor<2x5xi8>) -> tensor<3x2xui8>
  return %0 : tensor<3x2xui8>
}

// -----

// 49 pixels (7x7) would leave the pixel tiles' last vector nearly empty:
// pixels as GEMM rows instead, the weights in panels of 16 channels
// (48 x Kp 4), a workspace for the interleaved input (7 x 7 x 4 + 192 bytes),
// the patches (49 x 4) and the pixel-major output (49 x 48).
// CHOOSE-LABEL: func.func @qconv_rows
//       CHOOSE:   #cuvil.kernel<kernel = "qconv2d", variant = "u8s8_pixel_rows", source = "heuristics", reason = "49 pixels: as GEMM rows (modelled 1.75 against 1.48 useful vpdpbusd a cycle in pixel tiles)">
// CHECK-LABEL: func.func @qconv_rows
//   CHECK-DAG:   arith.constant dense_resource<{{.*}}qpanels> : tensor<192xi8>
//       CHECK:   memref.alloc() {alignment = 64 : i64} : memref<2936xi8>
//       CHECK:   call @cuvil_rt_qconv2d_u8s8_rows(
func.func @qconv_rows(%x: tensor<1x3x7x7xui8>) -> tensor<1x48x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<48x3x1x1xi8>
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] {input_params = #cuvil.quant<scale = [2.000000e-02], zero_point = [128]>, output_params = #cuvil.quant<scale = [1.000000e-02], zero_point = [0]>, weight_params = #cuvil.quant<scale = [1.000000e-02], zero_point = [0]>} : (tensor<1x3x7x7xui8>, tensor<48x3x1x1xi8>) -> tensor<1x48x7x7xui8>
  return %0 : tensor<1x48x7x7xui8>
}
