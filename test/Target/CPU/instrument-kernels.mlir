// RUN: cuvil-opt %s --cuvil-instrument-kernels | FileCheck %s

// Every runtime call of the public function is bracketed by begin/end with
// its site number; the names (the layer's module path from a NameLoc, else
// the source line, with the kernel) go into one NUL-separated constant that
// the function hands to the runtime first. Private functions and the
// non-runtime calls are left alone.
// CHECK: memref.global "private" constant @__cuvil_profile_sites_forward : memref<{{[0-9]+}}xi8> = dense<
// CHECK-LABEL: func.func @forward
//       CHECK:   %[[T:.*]] = memref.get_global @__cuvil_profile_sites_forward
//       CHECK:   %[[N:.*]] = arith.constant 2 : i64
//       CHECK:   call @cuvil_rt_profile_sites(%[[T]], %[[N]])
//       CHECK:   %[[S0:.*]] = arith.constant 0 : i64
//       CHECK:   call @cuvil_rt_profile_begin(%[[S0]])
//  CHECK-NEXT:   call @cuvil_rt_qconv2d_u8s8(%arg0)
//  CHECK-NEXT:   call @cuvil_rt_profile_end(%[[S0]])
//       CHECK:   call @helper()
//   CHECK-NOT:   cuvil_rt_profile_begin
//       CHECK:   %[[S1:.*]] = arith.constant 1 : i64
//       CHECK:   call @cuvil_rt_profile_begin(%[[S1]])
//  CHECK-NEXT:   call @cuvil_rt_parallel_for_current(%arg0)
//  CHECK-NEXT:   call @cuvil_rt_profile_end(%[[S1]])
// CHECK-LABEL: func.func private @body
//   CHECK-NOT:   cuvil_rt_profile
func.func private @cuvil_rt_qconv2d_u8s8(memref<4xi8>)
func.func private @cuvil_rt_parallel_for_current(memref<4xi8>)
func.func private @helper()
func.func @forward(%x: memref<4xi8>) {
  call @cuvil_rt_qconv2d_u8s8(%x) : (memref<4xi8>) -> () loc("layer1.0.conv1"("model.py":3:0))
  call @helper() : () -> ()
  call @cuvil_rt_parallel_for_current(%x) : (memref<4xi8>) -> () loc("model.py":7:0)
  return
}
func.func private @body(%x: memref<4xi8>) {
  call @cuvil_rt_qconv2d_u8s8(%x) : (memref<4xi8>) -> ()
  return
}
