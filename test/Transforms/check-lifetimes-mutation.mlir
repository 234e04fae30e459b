// RUN: cuvil-opt %s --cuvil-plan-memory --cuvil-check-lifetimes | FileCheck %s --check-prefix=GOOD
// RUN: not cuvil-opt %s --cuvil-plan-memory=test-end-at-definition --cuvil-check-lifetimes -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLANTED

// Mutation test of the lifetime check: the planner with a planted bug (every
// buffer's life ends where it is defined, so its bytes are handed on while
// the tensor is still read, through a view too) must be caught, naming the
// overwriting op, the tensor it overwrites and the later use.
// GOOD: cuvil.memory.arena_bytes
// PLANTED: check-lifetimes-mutation.mlir:15:8: error: overwrites bytes [0, 1024) of a tensor that is still used
// PLANTED: check-lifetimes-mutation.mlir:13:8: note: the tensor is defined here
// PLANTED: check-lifetimes-mutation.mlir:17:8: note: and used here, after its storage was reused ('cuvil.shape.reshape')
func.func @chain(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = cuvil.gemm.linear %x, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v = cuvil.shape.reshape %a {shape = array<i64: 256>} : tensor<16x16xf32> -> tensor<256xf32>
  %b = cuvil.gemm.linear %x, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %c = cuvil.gemm.linear %b, %w : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %u = cuvil.shape.reshape %v {shape = array<i64: 16, 16>} : tensor<256xf32> -> tensor<16x16xf32>
  %d = cuvil.math.add %u, %c : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}
