// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg | FileCheck %s

// sort calls the runtime's stable merge sort: parameters (kernel_abi.h:
// dtype, outer, len, inner, descending), the input as a read-only buffer,
// the values, indices and 2*len scratch as fresh buffers, every one passed
// as a memref<1xT> view of its start.
//       CHECK: func.func private @cuvil_rt_sort_f32(memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xi64>, memref<1xi64>)
// CHECK-LABEL: func.func @sort_middle_dim
//       CHECK: %[[P:.*]] = arith.constant dense<[0, 2, 5, 3, 1]> : tensor<5xi64>
//       CHECK: %[[PM:.*]] = bufferization.to_memref %[[P]] read_only
//       CHECK: bufferization.to_memref %arg0 read_only : memref<2x5x3xf32>
//       CHECK: %[[V:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x5x3xf32>
//       CHECK: %[[I:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x5x3xi64>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<10xi64>
//       CHECK: call @cuvil_rt_sort_f32({{.*}}) : (memref<1xi64>, memref<1xf32>, memref<1xf32>, memref<1xi64>, memref<1xi64>) -> ()
//       CHECK: bufferization.to_tensor %[[V]] restrict writable
//       CHECK: bufferization.to_tensor %[[I]] restrict writable
func.func @sort_middle_dim(%x: tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x3xi64>) {
  %v, %i = cuvil.tensor.sort %x {dim = 1 : i64, descending} : tensor<2x5x3xf32> -> tensor<2x5x3xf32>, tensor<2x5x3xi64>
  return %v, %i : tensor<2x5x3xf32>, tensor<2x5x3xi64>
}

// -----

// ui8 runs on the signless i8 kernel; the dtype parameter (5, U8) tells it
// to compare unsigned.
// CHECK-LABEL: func.func @sort_u8
//       CHECK: arith.constant dense<[5, 1, 4, 1, 0]> : tensor<5xi64>
//       CHECK: call @cuvil_rt_sort_i8
func.func @sort_u8(%x: tensor<4xui8>) -> tensor<4xui8> {
  %v, %i = cuvil.tensor.sort %x {dim = 0 : i64} : tensor<4xui8> -> tensor<4xui8>, tensor<4xi64>
  return %v : tensor<4xui8>
}

// -----

// A 0-d input is a line of one.
// CHECK-LABEL: func.func @sort_0d
//       CHECK: arith.constant dense<[9, 1, 1, 1, 0]> : tensor<5xi64>
//       CHECK: call @cuvil_rt_sort_i1
func.func @sort_0d(%x: tensor<i1>) -> tensor<i64> {
  %v, %i = cuvil.tensor.sort %x {dim = 0 : i64} : tensor<i1> -> tensor<i1>, tensor<i64>
  return %i : tensor<i64>
}

// -----

// A factorisation calls its runtime kernel with every result as a buffer
// and the scratch doubles CUVIL_LU_SCRATCH(m, n) = m * n.
// CHECK-LABEL: func.func @lu
//       CHECK: arith.constant dense<[2, 3, 4]> : tensor<3xi64>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x3x4xf64>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<2x3xi32>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<2xi32>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<12xf64>
//       CHECK: call @cuvil_rt_lu_f64({{.*}}) : (memref<1xi64>, memref<1xf64>, memref<1xf64>, memref<1xi32>, memref<1xi32>, memref<1xf64>) -> ()
func.func @lu(%a: tensor<2x3x4xf64>) -> tensor<2xi32> {
  %lu:3 = cuvil.linalg.kernel "lu" (%a) : (tensor<2x3x4xf64>) -> (tensor<2x3x4xf64>, tensor<2x3xi32>, tensor<2xi32>)
  return %lu#2 : tensor<2xi32>
}

// -----

// The DFT: parameters {batch, n, inverse}; the scratch is a row and its
// twiddles for a power of two (3n doubles), and Bluestein's work rows,
// twiddles and chirp otherwise (n = 12: m = 32, 4m + m + 2n = 184).
// CHECK-LABEL: func.func @dft
//       CHECK: arith.constant dense<[3, 8, 0]> : tensor<3xi64>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<24xf64>
//       CHECK: call @cuvil_rt_dft_f32
//       CHECK: arith.constant dense<[3, 12, 1]> : tensor<3xi64>
//       CHECK: memref.alloc() {alignment = 64 : i64} : memref<184xf64>
//       CHECK: call @cuvil_rt_dft_f64
func.func @dft(%a: tensor<3x8x2xf32>, %b: tensor<3x12x2xf64>) -> (tensor<3x8x2xf32>, tensor<3x12x2xf64>) {
  %0 = cuvil.linalg.kernel "dft" (%a) {flags = array<i64: 0>} : (tensor<3x8x2xf32>) -> tensor<3x8x2xf32>
  %1 = cuvil.linalg.kernel "dft" (%b) {flags = array<i64: 1>} : (tensor<3x12x2xf64>) -> tensor<3x12x2xf64>
  return %0, %1 : tensor<3x8x2xf32>, tensor<3x12x2xf64>
}
