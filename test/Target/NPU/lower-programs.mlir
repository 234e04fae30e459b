// A scheduled program becomes its binary command stream (npu_isa.h: the
// header starts with the magic "CPN1" and ISA version 2, then the machine)
// in a constant, and a call of the runtime's NPU backend with one buffer
// per input and output: bytes, viewed with their types around the call.
// RUN: cuvil-opt %s --cuvil-npu-partition --cuvil-npu-schedule --cuvil-npu-lower-programs | FileCheck %s

#x = #cuvil.quant<scale = [0.05], zero_point = [3]>
#w = #cuvil.quant<scale = [0.01], zero_point = [0]>
#y = #cuvil.quant<scale = [0.04], zero_point = [0]>

// CHECK: func.func private @cuvil_rt_npu_segment_3(memref<1xi64>, memref<1xi8>, memref<1xi8>, memref<1xi8>, memref<1xi8>, memref<1xi8>)
// CHECK-LABEL: func.func @two_outputs
// CHECK-NOT: cuvil_npu.
// CHECK: %[[PARAMS:.*]] = arith.constant dense<[1, [[BYTES:[0-9]+]], 3]> : tensor<3xi64>
// CHECK: arith.constant dense_resource<npu_segment_0.npu> : tensor<[[BYTES]]xi8>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64xi8>
// CHECK: builtin.unrealized_conversion_cast %arg0 : tensor<1x4x8x8xui8> to tensor<1x4x8x8xi8>
// CHECK: %[[Y:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK: %[[YV:.*]] = memref.view %[[Y]][%{{.*}}][] : memref<512xi8> to memref<1x8x8x8xi8>
// CHECK: %[[F:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1024xi8>
// CHECK: %[[FV:.*]] = memref.view %[[F]][%{{.*}}][] : memref<1024xi8> to memref<1x4x8x8xf32>
// CHECK: call @cuvil_rt_npu_segment_3(
// CHECK: bufferization.to_tensor %[[YV]] restrict writable : memref<1x8x8x8xi8>
// CHECK: bufferization.to_tensor %[[FV]] restrict writable : memref<1x4x8x8xf32>
// CHECK-NEXT: cuvil.shape.permute
// CHECK: npu_segment_0.npu: "0x4000000043504E3102000000
func.func @two_outputs(%arg0: tensor<1x4x8x8xui8>) -> (tensor<1x8x8x8xui8>, tensor<1x8x8x4xf32>) {
  %w = cuvil.constant dense<1> : tensor<8x4x3x3xi8>
  %b = cuvil.constant dense<0.5> : tensor<8xf32>
  %c = cuvil.quant.conv2d %arg0, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>, tensor<8xf32>) -> tensor<1x8x8x8xui8>
  // An f32 result: the sums dequantized by the requantize epilogue.
  %w2 = cuvil.constant dense<-2> : tensor<4x8x1x1xi8>
  %d = cuvil.quant.conv2d %c, %w2 stride [1, 1] padding [0, 0] dilation [1, 1] {input_params = #y, weight_params = #w} : (tensor<1x8x8x8xui8>, tensor<4x8x1x1xi8>) -> tensor<1x4x8x8xf32>
  %t = cuvil.shape.permute %d {dims = array<i64: 0, 2, 3, 1>} : tensor<1x4x8x8xf32> -> tensor<1x8x8x4xf32>
  return %c, %t : tensor<1x8x8x8xui8>, tensor<1x8x8x4xf32>
}
