// cuvil-verify-lifetimes: two arena buffers may share bytes only when their
// live ranges (through aliases, and over whole loops) do not overlap.
// RUN: cuvil-opt %s -split-input-file --cuvil-verify-lifetimes -verify-diagnostics

// One after the other: the bytes are reused, nothing is overwritten.
func.func @reuse(%in: memref<16xf32>, %out: memref<16xf32>, %arena: memref<64xi8>) attributes {cuvil.arena_bytes = 64 : i64} {
  %c0 = arith.constant 0 : index
  %a = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  memref.copy %a, %out : memref<16xf32> to memref<16xf32>
  %b = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
  memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  memref.copy %b, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// %a is read after %b is placed over it.
func.func @overwritten(%in: memref<16xf32>, %out: memref<16xf32>, %arena: memref<128xi8>) attributes {cuvil.arena_bytes = 128 : i64} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  // expected-note @below {{the earlier buffer}}
  %a = memref.view %arena[%c0][] : memref<128xi8> to memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  // expected-error @below {{arena bytes [32, 64) hold two buffers live at once}}
  %b = memref.view %arena[%c32][] : memref<128xi8> to memref<16xf32>
  memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  // expected-note @below {{its last use}}
  memref.copy %a, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// Read through a reshape of it: the alias keeps %a alive.
func.func @alias(%in: memref<4x4xf32>, %out: memref<16xf32>, %arena: memref<64xi8>) attributes {cuvil.arena_bytes = 64 : i64} {
  %c0 = arith.constant 0 : index
  // expected-note @below {{the earlier buffer}}
  %a = memref.view %arena[%c0][] : memref<64xi8> to memref<4x4xf32>
  memref.copy %in, %a : memref<4x4xf32> to memref<4x4xf32>
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x4xf32> into memref<16xf32>
  // expected-error @below {{hold two buffers live at once}}
  %b = memref.view %arena[%c0][] : memref<64xi8> to memref<4x4xf32>
  memref.copy %in, %b : memref<4x4xf32> to memref<4x4xf32>
  // expected-note @below {{its last use}}
  memref.copy %flat, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// A buffer a loop reads lives through every iteration: a buffer the loop
// body writes may not take its bytes, even after the read in the text.
func.func @loop(%in: memref<16xf32>, %out: memref<16xf32>, %arena: memref<64xi8>) attributes {cuvil.arena_bytes = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-note @below {{the earlier buffer}}
  %a = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    // expected-note @below {{its last use}}
    memref.copy %a, %out : memref<16xf32> to memref<16xf32>
    // expected-error @below {{hold two buffers live at once}}
    %b = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
    memref.copy %in, %b : memref<16xf32> to memref<16xf32>
  }
  return
}

// -----

// Inside one iteration, one after the other: fine.
func.func @in_loop(%in: memref<16xf32>, %out: memref<16xf32>, %arena: memref<64xi8>) attributes {cuvil.arena_bytes = 64 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
    memref.copy %in, %a : memref<16xf32> to memref<16xf32>
    memref.copy %a, %out : memref<16xf32> to memref<16xf32>
    %b = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
    memref.copy %in, %b : memref<16xf32> to memref<16xf32>
    memref.copy %b, %out : memref<16xf32> to memref<16xf32>
  }
  return
}
