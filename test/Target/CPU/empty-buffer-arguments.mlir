// RUN: cuvil-opt %s --split-input-file --cuvil-empty-buffer-arguments | FileCheck %s

// A zero-element buffer of rank >= 2 is passed as memref<0xT>; the body
// reads a zero-size stack buffer of its own type instead.
// CHECK-LABEL: func @empty
// CHECK-SAME: (%[[X:.*]]: memref<0xf32>, %[[OUT:.*]]: memref<0xf32>, %{{.*}}: memref<64xi8>)
// CHECK-DAG: %[[SX:.*]] = memref.alloca() : memref<1x0x3xf32>
// CHECK-DAG: %[[SO:.*]] = memref.alloca() : memref<1x0x3xf32>
// CHECK: linalg.copy ins(%[[SX]] : memref<1x0x3xf32>) outs(%[[SO]] : memref<1x0x3xf32>)
func.func @empty(%x: memref<1x0x3xf32>, %out: memref<1x0x3xf32>, %arena: memref<64xi8>) {
  linalg.copy ins(%x : memref<1x0x3xf32>) outs(%out : memref<1x0x3xf32>)
  return
}

// -----

// Buffers with elements, and 1-d empty ones (which the calling convention
// takes), are left alone.
// CHECK-LABEL: func @kept
// CHECK-SAME: (%{{.*}}: memref<2x3xf32>, %{{.*}}: memref<0xf32>)
// CHECK-NOT: memref.alloca
func.func @kept(%x: memref<2x3xf32>, %y: memref<0xf32>) {
  return
}
