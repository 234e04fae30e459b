// RUN: cuvil-opt %s --split-input-file --cuvil-allocs-to-arena | FileCheck %s

// Two buffers alive at once get distinct offsets; a third, allocated after
// the first died, reuses its bytes. The arena becomes the last argument.
// CHECK-LABEL: func @reuse
// CHECK-SAME: %[[ARENA:[a-z0-9]+]]: memref<8192xi8>
// CHECK-SAME: attributes {cuvil.arena_bytes = 8192 : i64}
// CHECK: arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%c0{{[_0-9]*}}][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: arith.constant 4096 : index
// CHECK-NEXT: memref.view %[[ARENA]][%c4096{{[_0-9]*}}][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: arith.constant 0 : index
// CHECK-NEXT: memref.view %[[ARENA]][%c0{{[_0-9]*}}][] : memref<8192xi8> to memref<32x32xf32>
// CHECK-NOT: memref.alloc
func.func @reuse(%x: memref<32x32xf32>, %out: memref<32x32xf32>) {
  %a = memref.alloc() : memref<32x32xf32>
  memref.copy %x, %a : memref<32x32xf32> to memref<32x32xf32>
  %b = memref.alloc() : memref<32x32xf32>
  memref.copy %a, %b : memref<32x32xf32> to memref<32x32xf32>
  %c = memref.alloc() : memref<32x32xf32>
  memref.copy %b, %c : memref<32x32xf32> to memref<32x32xf32>
  memref.copy %c, %out : memref<32x32xf32> to memref<32x32xf32>
  return
}

// -----

// A buffer yielded out of an scf.if lives on as the if's result: it must
// not be reused while the result is read.
// CHECK-LABEL: func @through_if
// CHECK-SAME: memref<8192xi8>
// CHECK: scf.if
// CHECK: memref.view %{{.*}}[%c0{{[_0-9]*}}]
// CHECK: memref.view %{{.*}}[%c4096{{[_0-9]*}}]
func.func @through_if(%x: memref<32x32xf32>, %flag: i1, %out: memref<32x32xf32>) {
  %r = scf.if %flag -> memref<32x32xf32> {
    %a = memref.alloc() : memref<32x32xf32>
    memref.copy %x, %a : memref<32x32xf32> to memref<32x32xf32>
    scf.yield %a : memref<32x32xf32>
  } else {
    scf.yield %x : memref<32x32xf32>
  }
  %b = memref.alloc() : memref<32x32xf32>
  memref.copy %r, %b : memref<32x32xf32> to memref<32x32xf32>
  memref.copy %r, %out : memref<32x32xf32> to memref<32x32xf32>
  memref.copy %b, %out : memref<32x32xf32> to memref<32x32xf32>
  return
}

// -----

// A buffer of run-time size is planned at its bound: the argument's
// cuvil.dim_bounds (batch at most 64), through the dims and arithmetic that
// size it; the view takes the run's size.
// CHECK-LABEL: func @bounded
// CHECK-SAME: memref<16384xi8>
// CHECK-SAME: attributes {cuvil.arena_bytes = 16384 : i64}
// CHECK: %[[N:.*]] = memref.dim %arg0
// CHECK: %[[TWICE:.*]] = arith.muli %[[N]]
// CHECK: memref.view %{{.*}}[%c0{{[_0-9]*}}][%[[TWICE]]] : memref<16384xi8> to memref<?x32xf32>
func.func @bounded(%x: memref<?x32xf32> {cuvil.dim_bounds = array<i64: 1, 64, 32, 32>, cuvil.dim_symbols = ["batch", ""]}) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %x, %c0 : memref<?x32xf32>
  %twice = arith.muli %n, %c2 : index
  %a = memref.alloc(%twice) : memref<?x32xf32>
  %f = arith.constant 1.0 : f32
  memref.store %f, %a[%c0, %c0] : memref<?x32xf32>
  return
}


// -----

// The arith.select a two-buffer scf.if canonicalizes to: both buffers live
// as long as its result (here read after a third buffer is written, which
// therefore gets bytes of its own).
// CHECK-LABEL: func @through_select
// CHECK-SAME: attributes {cuvil.arena_bytes = 12288 : i64}
// CHECK: memref.view %{{.*}}[%c{{[0-9]+}}{{[_0-9]*}}]
// CHECK: memref.view %{{.*}}[%c{{[0-9]+}}{{[_0-9]*}}]
// CHECK: arith.select
// CHECK: memref.view %{{.*}}[%c{{[0-9]+}}{{[_0-9]*}}]
func.func @through_select(%x: memref<32x32xf32>, %flag: i1, %out: memref<32x32xf32>) {
  %a = memref.alloc() : memref<32x32xf32>
  memref.copy %x, %a : memref<32x32xf32> to memref<32x32xf32>
  %b = memref.alloc() : memref<32x32xf32>
  memref.copy %x, %b : memref<32x32xf32> to memref<32x32xf32>
  %r = arith.select %flag, %a, %b : memref<32x32xf32>
  %c = memref.alloc() : memref<32x32xf32>
  memref.copy %x, %c : memref<32x32xf32> to memref<32x32xf32>
  memref.copy %r, %out : memref<32x32xf32> to memref<32x32xf32>
  memref.copy %c, %out : memref<32x32xf32> to memref<32x32xf32>
  return
}

// -----

// A data-dependent loop: the buffer an iteration computes is copied at the
// end of the after region into a carry buffer of its own, which is what the
// next iteration reads (the computed one would be rewritten while read);
// a swapped argument (a, b = b, f) goes through a fresh buffer first. The
// loop's results outlive it: nothing after the loop takes their bytes.
// CHECK-LABEL: func @carried
// CHECK: scf.while
// CHECK: } do {
// CHECK: ^bb0(%[[A:.*]]: memref<8x8xf32>, %[[B:.*]]: memref<8x8xf32>):
// CHECK: %[[NEW:.*]] = memref.view
// CHECK: linalg.copy ins(%[[A]] : memref<8x8xf32>) outs(%[[NEW]] : memref<8x8xf32>)
// CHECK: %[[TEMP:.*]] = memref.view
// CHECK-NEXT: linalg.copy ins(%[[B]] : memref<8x8xf32>) outs(%[[TEMP]] : memref<8x8xf32>)
// CHECK: %[[CARRY0:.*]] = memref.view
// CHECK-NEXT: linalg.copy ins(%[[TEMP]] : memref<8x8xf32>) outs(%[[CARRY0]] : memref<8x8xf32>)
// CHECK: %[[CARRY1:.*]] = memref.view
// CHECK-NEXT: linalg.copy ins(%[[NEW]] : memref<8x8xf32>) outs(%[[CARRY1]] : memref<8x8xf32>)
// CHECK-NEXT: scf.yield %[[CARRY0]], %[[CARRY1]]
// CHECK: memref.view %{{.*}}[%c0{{[_0-9]*}}][]
// CHECK-NEXT: linalg.copy ins(%arg0
func.func @carried(%x: memref<8x8xf32>, %n: index, %out: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %r:2 = scf.while (%a = %x, %b = %x) : (memref<8x8xf32>, memref<8x8xf32>) -> (memref<8x8xf32>, memref<8x8xf32>) {
    %v = memref.load %a[%c0, %c0] : memref<8x8xf32>
    %zero = arith.constant 0.0 : f32
    %go = arith.cmpf ogt, %v, %zero : f32
    scf.condition(%go) %a, %b : memref<8x8xf32>, memref<8x8xf32>
  } do {
  ^bb0(%a: memref<8x8xf32>, %b: memref<8x8xf32>):
    %new = memref.alloc() : memref<8x8xf32>
    linalg.copy ins(%a : memref<8x8xf32>) outs(%new : memref<8x8xf32>)
    scf.yield %b, %new : memref<8x8xf32>, memref<8x8xf32>
  }
  %after = memref.alloc() : memref<8x8xf32>
  linalg.copy ins(%x : memref<8x8xf32>) outs(%after : memref<8x8xf32>)
  linalg.copy ins(%r#1 : memref<8x8xf32>) outs(%out : memref<8x8xf32>)
  linalg.copy ins(%after : memref<8x8xf32>) outs(%out : memref<8x8xf32>)
  return
}

// -----

// The two branches of an scf.if never both run: a temporary of the else
// branch takes the bytes of one of the then branch, while the buffers
// either branch yields (both may be the if's result) keep their own.
// CHECK-LABEL: func @branches_share
// CHECK-SAME: attributes {cuvil.arena_bytes = 12288 : i64}
// CHECK: scf.if
// CHECK: memref.view %{{.*}}[%c0{{[_0-9]*}}]
// CHECK: memref.view %{{.*}}[%c4096{{[_0-9]*}}]
// CHECK: } else {
// CHECK: memref.view %{{.*}}[%c0{{[_0-9]*}}]
// CHECK: memref.view %{{.*}}[%c8192{{[_0-9]*}}]
func.func @branches_share(%x: memref<32x32xf32>, %flag: i1, %out: memref<32x32xf32>) {
  %r = scf.if %flag -> memref<32x32xf32> {
    %a = memref.alloc() : memref<32x32xf32>
    memref.copy %x, %a : memref<32x32xf32> to memref<32x32xf32>
    %b = memref.alloc() : memref<32x32xf32>
    memref.copy %a, %b : memref<32x32xf32> to memref<32x32xf32>
    scf.yield %b : memref<32x32xf32>
  } else {
    %c = memref.alloc() : memref<32x32xf32>
    memref.copy %x, %c : memref<32x32xf32> to memref<32x32xf32>
    %d = memref.alloc() : memref<32x32xf32>
    memref.copy %c, %d : memref<32x32xf32> to memref<32x32xf32>
    scf.yield %d : memref<32x32xf32>
  }
  memref.copy %r, %out : memref<32x32xf32> to memref<32x32xf32>
  return
}
