// FP16 layers (as cuvil-quantize --fallback fp16 writes them: an f32
// product whose input is an f16 tensor widened to f32 and whose weights are
// f16 values) run on the NPU's FP16 mode. The partitioner inlines the
// fusion groups that hold f16 work, moves each product's widening cast,
// relu and rounding next to it and takes them into one segment; the
// scheduler reads the f16 tensor (2 bytes an element), runs the array in
// FP16 and does bias, relu and the rounding to f16 in the epilogue.
// RUN: cuvil-opt %s --cuvil-npu-partition='report=%t.json' | FileCheck %s --check-prefix=PART
// RUN: FileCheck %s --check-prefix=REPORT < %t.json
// RUN: cuvil-opt %s --cuvil-npu-partition --cuvil-npu-schedule | FileCheck %s --check-prefix=SCHED
// RUN: cuvil-opt %s --cuvil-npu-partition --cuvil-npu-schedule --cuvil-npu-lower-programs | FileCheck %s --check-prefix=LOWER

// PART-LABEL: func.func @chain
// The first cast stays on the host: the segment's input is the f16 tensor.
// PART: %[[H:.*]] = cuvil.tensor.cast %arg0 : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf16>
// PART: cuvil_npu.segment "npu_segment_0"(%[[H]]) : (tensor<1x4x8x8xf16>) -> tensor<1x8x8x8xf32>
// PART-NEXT: ^bb0(%[[A:.*]]: tensor<1x4x8x8xf16>):
// PART: %[[W:.*]] = cuvil.tensor.cast %[[A]] : tensor<1x4x8x8xf16> -> tensor<1x4x8x8xf32>
// PART: %[[C:.*]] = cuvil.conv.conv2d %[[W]]
// PART-NEXT: %[[R:.*]] = cuvil.act.relu %[[C]]
// PART-NEXT: %[[N:.*]] = cuvil.tensor.cast %[[R]] : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf16>
// PART-NEXT: cuvil.tensor.cast %[[N]] : tensor<1x8x8x8xf16> -> tensor<1x8x8x8xf32>
// PART: cuvil.conv.conv2d
// PART: cuvil_npu.yield
// PART-NOT: cuvil.fused.group

// SCHED-LABEL: func.func @chain
// SCHED: cuvil_npu.program "npu_segment_0"
// SCHED-SAME: layer_kinds = ["conv2d fp16", "conv2d fp16"]
// Nothing is kept in scratch: the second convolution's input stays on chip.
// SCHED-SAME: scratch_bytes = 0
// Weights: 8 x 36 binary16 values (576 bytes), then the table.
// SCHED: cuvil_npu.load {{{.*}}shape = array<i32: 1, 1, 576>, space = "wbuf"
// The input band: 4 planes of 8 rows of 8 binary16 values.
// SCHED: cuvil_npu.load {{{.*}}region = 0 : i32, shape = array<i32: 4, 1, 128>, space = "abuf"
// SCHED: cuvil_npu.matmul {{{.*}}fp16, {{.*}}mode = "conv", {{.*}}pad_value = 0 : i32
// SCHED-NEXT: cuvil_npu.requant {{{.*}}mode = "float", out_addr = [[FWD:[0-9]+]] : i32, out_f16, {{.*}}relu
// Forwarded on chip: the second convolution reads the first's output where it is.
// SCHED-NEXT: cuvil_npu.matmul {{{.*}}fp16, in_addr = [[FWD]] : i32, {{.*}}mode = "conv"
// No relu, no rounding: f32 out.
// SCHED-NEXT: cuvil_npu.requant {{{.*}}mode = "float", out_addr = {{[0-9]+}} : i32, out_plane = 64 : i32, pixels = 64 : i32, table_addr
// 8 channels x 64 pixels of f32 out.
// SCHED-NEXT: cuvil_npu.store {{{.*}}region = 1 : i32, shape = array<i32: 8, 1, 256>
// The f16 input reaches the runtime's call as bytes, like every buffer
// (one declaration per buffer count).
// LOWER: func.func private @cuvil_rt_npu_segment_2(memref<1xi64>, memref<1xi8>, memref<1xi8>, memref<1xi8>, memref<1xi8>)
// LOWER-LABEL: func.func @chain
// LOWER: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// LOWER: %[[V:.*]] = memref.view %[[B]][%{{.*}}][] : memref<512xi8> to memref<1x4x8x8xf16>
// LOWER-NEXT: memref.copy %{{.*}}, %[[V]] : memref<1x4x8x8xf16> to memref<1x4x8x8xf16>
// LOWER: call @cuvil_rt_npu_segment_2(
func.func @chain(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %w1 = cuvil.constant dense<0.5> : tensor<8x4x3x3xf32>
  %b1 = cuvil.constant dense<0.25> : tensor<8xf32>
  %w2 = cuvil.constant dense<-1.5> : tensor<8x8x1x1xf32>
  %h = cuvil.tensor.cast %arg0 : tensor<1x4x8x8xf32> -> tensor<1x4x8x8xf16>
  %x = cuvil.tensor.cast %h : tensor<1x4x8x8xf16> -> tensor<1x4x8x8xf32>
  %g = cuvil.fused.group conv (%x, %w1, %b1) : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  ^bb0(%a: tensor<1x4x8x8xf32>, %wt: tensor<8x4x3x3xf32>, %bias: tensor<8xf32>):
    %c = cuvil.conv.conv2d %a, %wt, %bias stride [1, 1] padding [1, 1] dilation [1, 1] : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
    %r = cuvil.act.relu %c : tensor<1x8x8x8xf32>
    cuvil.fused.yield %r : tensor<1x8x8x8xf32>
  }
  %e = cuvil.fused.group elementwise (%g) : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  ^bb0(%a: tensor<1x8x8x8xf32>):
    %n = cuvil.tensor.cast %a : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf16>
    %m = cuvil.tensor.cast %n : tensor<1x8x8x8xf16> -> tensor<1x8x8x8xf32>
    cuvil.fused.yield %m : tensor<1x8x8x8xf32>
  }
  %y = cuvil.conv.conv2d %e, %w2 stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// Products the FP16 mode does not take stay on the host, with the reason.
// PART-LABEL: func.func @host
// PART-NOT: cuvil_npu.segment
// PART: return
// REPORT-DAG: "reason": "an FP32 product (the NPU runs int8 and FP16 layers: cuvil-quantize, --fallback fp16)"
// REPORT-DAG: "reason": "its weights are not constant f16 values (an FP16 layer's weights are rounded to f16)"
// REPORT-DAG: "reason": "converts f16 to f32 for a host op"
func.func @host(%arg0: tensor<2x16xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %exact = cuvil.constant dense<0.5> : tensor<4x16xf32>
  %inexact = cuvil.constant dense<0.1> : tensor<4x16xf32>
  %a = cuvil.gemm.linear %arg0, %exact : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
  %h = cuvil.tensor.cast %arg0 : tensor<2x16xf32> -> tensor<2x16xf16>
  %x = cuvil.tensor.cast %h : tensor<2x16xf16> -> tensor<2x16xf32>
  %b = cuvil.gemm.linear %x, %inexact : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32>
  return %a, %b : tensor<2x4xf32>, tensor<2x4xf32>
}
