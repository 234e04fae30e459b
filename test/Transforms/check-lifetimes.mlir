// RUN: cuvil-opt %s --split-input-file --cuvil-check-lifetimes --verify-diagnostics

// A plan that reuses %a's bytes for %b while %a is still read by the add.
func.func @use_after_reuse(%x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  // expected-note @+1 {{the tensor is defined here}}
  %a = cuvil.act.relu %x {cuvil.memory.offset = 0 : i64} : tensor<32x32xf32>
  // expected-error @+1 {{overwrites bytes [0, 4096) of a tensor that is still used}}
  %b = cuvil.act.sigmoid %x {cuvil.memory.offset = 2048 : i64} : tensor<32x32xf32>
  // expected-note @+1 {{and used here, after its storage was reused ('cuvil.math.add')}}
  %c = cuvil.math.add %a, %b : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  return %c : tensor<32x32xf32>
}

// -----

// Through a view: %a is still read through %v when %b takes its bytes.
func.func @through_view(%x: tensor<32x32xf32>) -> tensor<1024xf32> {
  // expected-note @+1 {{the tensor is defined here}}
  %a = cuvil.act.relu %x {cuvil.memory.offset = 0 : i64} : tensor<32x32xf32>
  %v = cuvil.shape.reshape %a {shape = array<i64: 1024>} : tensor<32x32xf32> -> tensor<1024xf32>
  // expected-error @+1 {{overwrites bytes [0, 4096) of a tensor that is still used}}
  %b = cuvil.act.sigmoid %x {cuvil.memory.offset = 0 : i64} : tensor<32x32xf32>
  %bv = cuvil.shape.reshape %b {shape = array<i64: 1024>} : tensor<32x32xf32> -> tensor<1024xf32>
  // expected-note @+1 {{and used here}}
  %c = cuvil.math.add %v, %bv : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %c : tensor<1024xf32>
}

// -----

// Legal: an element-wise op writing over its operand at the operand's last
// use; and disjoint lifetimes sharing bytes.
func.func @legal(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %a = cuvil.gemm.linear %x, %w {cuvil.memory.offset = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %b = cuvil.act.relu %a {cuvil.memory.offset = 0 : i64} : tensor<32x32xf32>
  %c = cuvil.gemm.linear %b, %w {cuvil.memory.offset = 4096 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = cuvil.gemm.linear %c, %w {cuvil.memory.offset = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %e = cuvil.gemm.linear %d, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %e : tensor<32x32xf32>
}

// -----

// A GEMM may not write over its own input (it reads every row for every
// output row).
func.func @gemm_in_place(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  // expected-note @+1 {{the tensor is defined here}}
  %a = cuvil.act.relu %x {cuvil.memory.offset = 0 : i64} : tensor<32x32xf32>
  // expected-error @+1 {{overwrites bytes [0, 4096) of a tensor that is still used}}
  %b = cuvil.gemm.linear %a, %w {cuvil.memory.offset = 0 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %c = cuvil.gemm.linear %b, %w : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  return %c : tensor<32x32xf32>
}
