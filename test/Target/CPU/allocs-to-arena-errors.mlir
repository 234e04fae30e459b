// RUN: cuvil-opt %s --split-input-file --cuvil-allocs-to-arena --verify-diagnostics

// A size that nothing bounds cannot be planned: an error, not a guess.
func.func @unbounded(%n: index) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  // expected-error@+1 {{has a run-time size that cannot be bounded}}
  %a = memref.alloc(%n) : memref<?xf32>
  memref.store %f, %a[%c0] : memref<?xf32>
  return
}

// -----

// Bounds past 2^48 bytes are a mistake in them.
func.func @huge(%x: memref<?x1048576xf32> {cuvil.dim_bounds = array<i64: 1, 1099511627776, 1048576, 1048576>, cuvil.dim_symbols = ["n", ""]}) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  %n = memref.dim %x, %c0 : memref<?x1048576xf32>
  // expected-error@+1 {{would take more than 2^48 bytes}}
  %a = memref.alloc(%n) : memref<?x1048576xf32>
  memref.store %f, %a[%c0, %c0] : memref<?x1048576xf32>
  return
}
