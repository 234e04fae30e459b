// RUN: cuvil-opt %s --cuvil-expand-exp | FileCheck %s

// f32 exp becomes arithmetic the loop vectorizer widens: the argument
// clamped, n = roundeven(x * log2 e), the reduced argument by two FMAs, the
// polynomial, two power-of-two scalings built from their bits, NaN kept.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: math.exp
// CHECK: %[[LO:.*]] = arith.maxnumf %arg0, %{{.*}} : f32
// CHECK: %[[C:.*]] = arith.minnumf %[[LO]], %{{.*}} : f32
// CHECK: math.roundeven
// CHECK-COUNT-7: math.fma
// CHECK: arith.fptosi {{.*}} : f32 to i32
// CHECK: arith.shrsi
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %arg0, %arg0 : f32
// CHECK: arith.select %[[NAN]], %arg0, %{{.*}} : f32
func.func @scalar(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// Vectors too, with splat constants.
// CHECK-LABEL: func.func @vector
// CHECK-NOT: math.exp
// CHECK: math.roundeven {{.*}} : vector<16xf32>
// CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
func.func @vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// Other types keep libm's exp.
// CHECK-LABEL: func.func @double
// CHECK: math.exp %arg0 : f64
func.func @double(%x: f64) -> f64 {
  %0 = math.exp %x : f64
  return %0 : f64
}
