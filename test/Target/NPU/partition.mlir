// The partitioner gives the NPU each run of int8 ops it supports (a
// convolution, a depthwise one, the sum and the pooling after them, a view,
// a linear layer) as one segment and leaves the rest on the host, saying why.
// RUN: cuvil-opt %s --cuvil-npu-partition='report=%t.json remarks' -verify-diagnostics | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: not cuvil-opt %s --cuvil-npu-partition='config=npu-1x1' 2>&1 | FileCheck %s --check-prefix=BADCONFIG

#x = #cuvil.quant<scale = [0.05], zero_point = [3]>
#w = #cuvil.quant<scale = [0.01], zero_point = [0]>
#y = #cuvil.quant<scale = [0.04], zero_point = [0]>

// CHECK-LABEL: func.func @forward
// CHECK: %[[Q:.*]] = cuvil.quant.quantize
// CHECK: %[[S:.*]]:2 = cuvil_npu.segment "npu_segment_0"(%[[Q]]) : (tensor<1x4x8x8xui8>) -> (tensor<1x8x8x8xui8>, tensor<1x8xui8>)
// CHECK-NEXT: ^bb0(%[[ARG:.*]]: tensor<1x4x8x8xui8>):
// CHECK: cuvil.constant
// CHECK: cuvil.quant.conv2d %[[ARG]]
// CHECK: cuvil.quant.conv2d
// CHECK-SAME: groups 8
// CHECK: cuvil.quant.add
// CHECK: cuvil.quant.avg_pool2d
// CHECK: cuvil.shape.flatten
// CHECK: cuvil.quant.linear
// CHECK: cuvil_npu.yield
// CHECK: cuvil.quant.dequantize %[[S]]#1
// CHECK: cuvil.quant.mul %[[S]]#0, %[[S]]#0
func.func @forward(%arg0: tensor<1x4x8x8xf32>) -> (tensor<1x8xf32>, tensor<1x8x8x8xui8>) {
  %w = cuvil.constant dense<1> : tensor<8x4x3x3xi8>
  %b = cuvil.constant dense<0.5> : tensor<8xf32>
  %dw = cuvil.constant dense<2> : tensor<8x1x3x3xi8>
  %fw = cuvil.constant dense<-1> : tensor<8x8xi8>
  // expected-remark @below {{runs on the host CPU: converts between float and int8}}
  %q = cuvil.quant.quantize %arg0 {params = #x} : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xui8>
  %c = cuvil.quant.conv2d %q, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x8x8xui8>, tensor<8x4x3x3xi8>, tensor<8xf32>) -> tensor<1x8x8x8xui8>
  %d = cuvil.quant.conv2d %c, %dw stride [1, 1] padding [1, 1] dilation [1, 1] groups 8 {input_params = #y, weight_params = #w, output_params = #y} : (tensor<1x8x8x8xui8>, tensor<8x1x3x3xi8>) -> tensor<1x8x8x8xui8>
  %s = cuvil.quant.add %d, %c {lhs_params = #y, rhs_params = #y, output_params = #y, relu} : (tensor<1x8x8x8xui8>, tensor<1x8x8x8xui8>) -> tensor<1x8x8x8xui8>
  %p = cuvil.quant.avg_pool2d %s kernel [8, 8] stride [8, 8] padding [0, 0] {input_params = #y, output_params = #y, count_include_pad} : tensor<1x8x8x8xui8> -> tensor<1x8x1x1xui8>
  %f = cuvil.shape.flatten %p {start_dim = 1 : i64, end_dim = 3 : i64} : tensor<1x8x1x1xui8> -> tensor<1x8xui8>
  %l = cuvil.quant.linear %f, %fw {input_params = #y, weight_params = #w, output_params = #y} : (tensor<1x8xui8>, tensor<8x8xi8>) -> tensor<1x8xui8>
  // expected-remark @below {{runs on the host CPU: converts between float and int8}}
  %o = cuvil.quant.dequantize %l {params = #y} : tensor<1x8xui8> -> tensor<1x8xf32>
  // expected-remark @below {{runs on the host CPU: a quantized product of two tensors: not in the NPU's vector unit}}
  %m = cuvil.quant.mul %s, %s {lhs_params = #y, rhs_params = #y, output_params = #y} : (tensor<1x8x8x8xui8>, tensor<1x8x8x8xui8>) -> tensor<1x8x8x8xui8>
  return %o, %m : tensor<1x8xf32>, tensor<1x8x8x8xui8>
}

// REPORT: "config": "npu-32x32"
// REPORT: "op": "cuvil.quant.quantize"
// REPORT-NEXT: "placement": "cpu"
// REPORT-NEXT: "reason": "converts between float and int8
// REPORT: "op": "cuvil.quant.conv2d"
// REPORT-NEXT: "placement": "npu"
// REPORT-NEXT: "segment": "npu_segment_0"
// REPORT: "op": "cuvil.quant.mul"
// REPORT-NEXT: "placement": "cpu"
// REPORT-NEXT: "reason": "a quantized product of two tensors
// REPORT: "ops_on_cpu": 3
// REPORT: "ops_on_npu": 6
// REPORT: "segments": 1

// BADCONFIG: unknown NPU configuration 'npu-1x1'
