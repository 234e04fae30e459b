// RUN: cuvil-opt %s --cuvil-extract-weights | FileCheck %s

// Resources and non-splat arrays of 64 bytes or more leave the code, in
// module order, as external hidden declarations the code still refers to;
// splats, small arrays, mutable globals and scalars stay.
// CHECK: module attributes {cuvil.weights = [{alignment = 64 : i64, bytes = 64 : i64, name = "cuvil_weight_0"}, {alignment = 16 : i64, bytes = 128 : i64, name = "cuvil_weight_1"}]}
// CHECK: llvm.mlir.global external hidden constant @cuvil_weight_0() {{.*}}alignment = 64 {{.*}}dso_local{{.*}} : !llvm.array<16 x f32>
// CHECK: llvm.mlir.global external hidden constant @cuvil_weight_1() {{.*}}alignment = 16 {{.*}}: !llvm.array<16 x i64>
// CHECK: llvm.mlir.global private constant @splat(dense<0.000000e+00> : tensor<64xf32>)
// CHECK: llvm.mlir.global private constant @small(dense<[1, 2, 3, 4]> : tensor<4xi64>)
// CHECK: llvm.mlir.global private @mutable(dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]> : tensor<16xi64>)
// CHECK: llvm.mlir.global private constant @scalar(1.250000e-01 : f32)
// CHECK-LABEL: llvm.func @use
// CHECK: llvm.mlir.addressof @cuvil_weight_0
// CHECK: llvm.mlir.addressof @cuvil_weight_1
// CHECK: llvm.mlir.addressof @splat
module {
  llvm.mlir.global private constant @w(dense_resource<blob> : tensor<16xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<16 x f32>
  llvm.mlir.global private constant @params(dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]> : tensor<16xi64>) {addr_space = 0 : i32, alignment = 16 : i64} : !llvm.array<16 x i64>
  llvm.mlir.global private constant @splat(dense<0.0> : tensor<64xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<64 x f32>
  llvm.mlir.global private constant @small(dense<[1, 2, 3, 4]> : tensor<4xi64>) {addr_space = 0 : i32} : !llvm.array<4 x i64>
  llvm.mlir.global private @mutable(dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]> : tensor<16xi64>) {addr_space = 0 : i32} : !llvm.array<16 x i64>
  llvm.mlir.global private constant @scalar(1.250000e-01 : f32) {addr_space = 0 : i32} : f32
  llvm.func @use() -> !llvm.ptr {
    %0 = llvm.mlir.addressof @w : !llvm.ptr
    %1 = llvm.mlir.addressof @params : !llvm.ptr
    %2 = llvm.mlir.addressof @splat : !llvm.ptr
    llvm.return %0 : !llvm.ptr
  }
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041000030410000404100005041000060410000704100008041"
    }
  }
#-}
