// A run of 18 convolutions of one input, each read by the host: one segment
// would pass 19 buffers, more than the runtime's segment calls take (16), so
// the partitioner halves it; the library still equals the reference evaluator.
// RUN: cuvil-opt %s --cuvil-npu-partition | FileCheck %s
// RUN: rm -rf %t && mkdir -p %t
// RUN: cuvil-export --model %s --target npu -o %t/npu.so
// RUN: cuvil-run %s --input 0=1x4x6x6xf32:random -o %t/ref -q
// RUN: cuvil-run %t/npu.so --input 0=1x4x6x6xf32:random -q --rtol 0 --atol 0 --expected-output %t/ref/output0.npy --expected-output %t/ref/output1.npy --expected-output %t/ref/output2.npy --expected-output %t/ref/output3.npy --expected-output %t/ref/output4.npy --expected-output %t/ref/output5.npy --expected-output %t/ref/output6.npy --expected-output %t/ref/output7.npy --expected-output %t/ref/output8.npy --expected-output %t/ref/output9.npy --expected-output %t/ref/output10.npy --expected-output %t/ref/output11.npy --expected-output %t/ref/output12.npy --expected-output %t/ref/output13.npy --expected-output %t/ref/output14.npy --expected-output %t/ref/output15.npy --expected-output %t/ref/output16.npy --expected-output %t/ref/output17.npy

// CHECK: cuvil_npu.segment "npu_segment_0"(%{{.*}}) : (tensor<1x4x6x6xui8>) -> (tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>)
// CHECK: cuvil_npu.segment "npu_segment_1"(%{{.*}}) : (tensor<1x4x6x6xui8>) -> (tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>, tensor<1x8x6x6xui8>)
// CHECK-NOT: npu_segment_2
#x = #cuvil.quant<scale = [0.05], zero_point = [3]>
#w = #cuvil.quant<scale = [0.01], zero_point = [0]>
#y = #cuvil.quant<scale = [0.04], zero_point = [0]>
func.func @forward(%arg0: tensor<1x4x6x6xf32>) -> (tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>) {
  %q = cuvil.quant.quantize %arg0 {params = #x} : tensor<1x4x6x6xf32> -> tensor<1x4x6x6xui8>
  %w0 = cuvil.constant dense<-3> : tensor<8x4x3x3xi8>
  %c0 = cuvil.quant.conv2d %q, %w0 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w1 = cuvil.constant dense<-2> : tensor<8x4x3x3xi8>
  %c1 = cuvil.quant.conv2d %q, %w1 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w2 = cuvil.constant dense<-1> : tensor<8x4x3x3xi8>
  %c2 = cuvil.quant.conv2d %q, %w2 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w3 = cuvil.constant dense<0> : tensor<8x4x3x3xi8>
  %c3 = cuvil.quant.conv2d %q, %w3 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w4 = cuvil.constant dense<1> : tensor<8x4x3x3xi8>
  %c4 = cuvil.quant.conv2d %q, %w4 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w5 = cuvil.constant dense<2> : tensor<8x4x3x3xi8>
  %c5 = cuvil.quant.conv2d %q, %w5 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w6 = cuvil.constant dense<3> : tensor<8x4x3x3xi8>
  %c6 = cuvil.quant.conv2d %q, %w6 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w7 = cuvil.constant dense<-3> : tensor<8x4x3x3xi8>
  %c7 = cuvil.quant.conv2d %q, %w7 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w8 = cuvil.constant dense<-2> : tensor<8x4x3x3xi8>
  %c8 = cuvil.quant.conv2d %q, %w8 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w9 = cuvil.constant dense<-1> : tensor<8x4x3x3xi8>
  %c9 = cuvil.quant.conv2d %q, %w9 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w10 = cuvil.constant dense<0> : tensor<8x4x3x3xi8>
  %c10 = cuvil.quant.conv2d %q, %w10 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w11 = cuvil.constant dense<1> : tensor<8x4x3x3xi8>
  %c11 = cuvil.quant.conv2d %q, %w11 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w12 = cuvil.constant dense<2> : tensor<8x4x3x3xi8>
  %c12 = cuvil.quant.conv2d %q, %w12 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w13 = cuvil.constant dense<3> : tensor<8x4x3x3xi8>
  %c13 = cuvil.quant.conv2d %q, %w13 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w14 = cuvil.constant dense<-3> : tensor<8x4x3x3xi8>
  %c14 = cuvil.quant.conv2d %q, %w14 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w15 = cuvil.constant dense<-2> : tensor<8x4x3x3xi8>
  %c15 = cuvil.quant.conv2d %q, %w15 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w16 = cuvil.constant dense<-1> : tensor<8x4x3x3xi8>
  %c16 = cuvil.quant.conv2d %q, %w16 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %w17 = cuvil.constant dense<0> : tensor<8x4x3x3xi8>
  %c17 = cuvil.quant.conv2d %q, %w17 stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x6x6xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x6x6xui8>
  %o0 = cuvil.quant.dequantize %c0 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o1 = cuvil.quant.dequantize %c1 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o2 = cuvil.quant.dequantize %c2 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o3 = cuvil.quant.dequantize %c3 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o4 = cuvil.quant.dequantize %c4 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o5 = cuvil.quant.dequantize %c5 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o6 = cuvil.quant.dequantize %c6 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o7 = cuvil.quant.dequantize %c7 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o8 = cuvil.quant.dequantize %c8 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o9 = cuvil.quant.dequantize %c9 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o10 = cuvil.quant.dequantize %c10 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o11 = cuvil.quant.dequantize %c11 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o12 = cuvil.quant.dequantize %c12 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o13 = cuvil.quant.dequantize %c13 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o14 = cuvil.quant.dequantize %c14 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o15 = cuvil.quant.dequantize %c15 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o16 = cuvil.quant.dequantize %c16 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  %o17 = cuvil.quant.dequantize %c17 {params = #y} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>
  return %o0, %o1, %o2, %o3, %o4, %o5, %o6, %o7, %o8, %o9, %o10, %o11, %o12, %o13, %o14, %o15, %o16, %o17 : tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>, tensor<1x8x6x6xf32>
}
