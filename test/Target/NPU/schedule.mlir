// The scheduler tiles a convolution to the SRAM of the configuration (here
// 64 KiB of sums: bands of 16 output rows), alternates its tiles between
// buffer halves so that band i+1 loads while band i computes, and gives
// each command the waits its bytes need, no more. With double-buffering=false
// every band reuses the same buffers and waits for the one before.
// RUN: cuvil-opt %s --cuvil-npu-partition='config=npu-32x32-small-sram' --cuvil-npu-schedule='config=npu-32x32-small-sram' | FileCheck %s
// RUN: cuvil-opt %s --cuvil-npu-partition='config=npu-32x32-small-sram' --cuvil-npu-schedule='config=npu-32x32-small-sram double-buffering=false' | FileCheck %s --check-prefix=SINGLE
// RUN: cuvil-opt %s --cuvil-npu-partition='config=npu-32x32-small-sram' --cuvil-npu-schedule='config=npu-32x32-small-sram' | grep -c cuvil_npu.matmul | FileCheck %s --check-prefix=COUNT

#x = #cuvil.quant<scale = [0.05], zero_point = [3]>
#w = #cuvil.quant<scale = [0.01], zero_point = [0]>
#y = #cuvil.quant<scale = [0.04], zero_point = [0]>

// CHECK-LABEL: func.func @conv
// CHECK: cuvil_npu.program "npu_segment_0"
// CHECK-SAME: config = array<i32: 32, 32, 131072, 262144, 65536,
// CHECK-SAME: layer_kinds = ["conv2d"]
// CHECK-SAME: layer_macs = array<i64: 1179648>
// CHECK-SAME: scratch_bytes = 0
// Weights and their epilogue table (8 channels x 12 bytes) into the first weight half.
// CHECK-NEXT: cuvil_npu.load {{{.*}}region = 2 : i32, shape = array<i32: 1, 1, 288>, space = "wbuf", sram_addr = 0 : i32{{.*}}wait = array<i32: 0, 0, 0, 0>}
// CHECK-NEXT: cuvil_npu.load {{{.*}}shape = array<i32: 1, 1, 96>, space = "wbuf", sram_addr = 320 : i32
// Band 0: input rows 0..16 (halo included) of 4 channels, into the first activation quarter.
// CHECK-NEXT: cuvil_npu.load {dram_offset = 0 : i32, dram_strides = array<i32: 4096, 0>, {{.*}}region = 0 : i32, shape = array<i32: 4, 1, 1088>, space = "abuf", sram_addr = 0 : i32, sram_strides = array<i32: 1088, 0>, wait = array<i32: 0, 0, 0, 0>}
// CHECK-NEXT: cuvil_npu.matmul {acc_addr = 0 : i32, {{.*}}in_addr = 0 : i32, in_shape = array<i32: 4, 17, 64>, {{.*}}mode = "conv", out_shape = array<i32: 8, 16, 64>, pad = array<i32: 1, 1>, pad_value = 3 : i32, {{.*}}wait = array<i32: 3, 0, 0, 0>}
// CHECK-NEXT: cuvil_npu.requant {acc_addr = 0 : i32, {{.*}}out_addr = 131072 : i32, {{.*}}wait = array<i32: 2, 0, 1, 0>
// CHECK-NEXT: cuvil_npu.store {{{.*}}region = 1 : i32, shape = array<i32: 8, 1, 1024>, {{.*}}sram_addr = 131072 : i32{{.*}}wait = array<i32: 0, 0, 0, 1>}
// Band 1 (rows 15..33) into the other quarter, the other half of the sums: it waits for nothing.
// CHECK-NEXT: cuvil_npu.load {dram_offset = 960 : i32, {{.*}}shape = array<i32: 4, 1, 1152>, space = "abuf", sram_addr = 65536 : i32, {{.*}}wait = array<i32: 0, 0, 0, 0>}
// CHECK-NEXT: cuvil_npu.matmul {acc_addr = 32768 : i32, {{.*}}in_addr = 65536 : i32, in_shape = array<i32: 4, 18, 64>, {{.*}}pad = array<i32: 0, 1>, {{.*}}wait = array<i32: 4, 0, 0, 0>}
// CHECK-NEXT: cuvil_npu.requant {acc_addr = 32768 : i32, {{.*}}out_addr = 196608 : i32
// CHECK-NEXT: cuvil_npu.store
// Band 2 reuses band 0's buffers: its load waits until band 0's matmul has read them.
// CHECK-NEXT: cuvil_npu.load {dram_offset = 1984 : i32, {{.*}}sram_addr = 0 : i32, {{.*}}wait = array<i32: 0, 0, 1, 0>}
// Four bands of 16 rows.
// COUNT: 4

// SINGLE: cuvil_npu.matmul {acc_addr = 0 : i32, {{.*}}in_addr = 0 : i32
// SINGLE: cuvil_npu.load {dram_offset = 960 : i32, {{.*}}sram_addr = 0 : i32, {{.*}}wait = array<i32: 0, 0, 1, 0>}
// SINGLE-NEXT: cuvil_npu.matmul {acc_addr = 0 : i32, {{.*}}in_addr = 0 : i32, {{.*}}wait = array<i32: 4, 0, 0, 1>}
func.func @conv(%arg0: tensor<1x4x64x64xui8>) -> tensor<1x8x64x64xui8> {
  %w = cuvil.constant dense<1> : tensor<8x4x3x3xi8>
  %b = cuvil.constant dense<0.5> : tensor<8xf32>
  %c = cuvil.quant.conv2d %arg0, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<1x4x64x64xui8>, tensor<8x4x3x3xi8>, tensor<8xf32>) -> tensor<1x8x64x64xui8>
  return %c : tensor<1x8x64x64xui8>
}
