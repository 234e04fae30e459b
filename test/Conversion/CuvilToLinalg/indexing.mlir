// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg | FileCheck %s

// An index that arrives at run time is checked once (any element out of
// [-size, size) sets a flag), and the lookup itself wraps negatives and clamps
// so that it never reads outside the tensor even when the check fails. The
// function gains an i32 status result: 0, or the number of the failed check
// whose message is in cuvil.failure_messages.
// CHECK-LABEL: func.func @gather
//  CHECK-SAME: -> (tensor<2x2xf32>, i32)
//  CHECK-SAME: cuvil.failure_messages = ["index out of range in torch.gather: dimension 1 has size 3
//       CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
//       CHECK:   arith.cmpi slt, %{{.*}}, %c-3_i64
//       CHECK:   arith.cmpi sge, %{{.*}}, %c3_i64
//       CHECK: %[[FAILED:.*]] = tensor.extract
//       CHECK: linalg.generic
//       CHECK:   arith.maxsi
//       CHECK:   arith.minsi %{{.*}}, %c2_i64
//       CHECK:   tensor.extract %arg0
//       CHECK: %[[STATUS:.*]] = arith.select %[[FAILED]], %c1_i32
//       CHECK: return %{{.*}}, %[[STATUS]] : tensor<2x2xf32>, i32
func.func @gather(%x: tensor<2x3xf32>, %i: tensor<2x2xi64>) -> tensor<2x2xf32> {
  %0 = cuvil.tensor.gather %x, %i {dim = 1 : i64} : tensor<2x3xf32>, tensor<2x2xi64> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// The model's own assertion and an embedding lookup are numbered in program
// order; the status is the first failed one (nested selects, first outermost).
// CHECK-LABEL: func.func @assert_then_embedding
//  CHECK-SAME: cuvil.failure_messages = ["AssertionError: positive{{.*}}", "index out of range in torch.nn.functional.embedding: dimension 0 has size 4
//       CHECK: %[[A:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
//       CHECK: %[[E:.*]] = tensor.extract %{{.*}}[] : tensor<i1>
//       CHECK: tensor.extract %arg1
//       CHECK: %[[S2:.*]] = arith.select %[[E]], %c2_i32
//       CHECK: %[[S1:.*]] = arith.select %[[A]], %c1_i32, %[[S2]]
//       CHECK: return %{{.*}}, %[[S1]]
func.func @assert_then_embedding(%c: tensor<i1>, %w: tensor<4x2xf32>, %ids: tensor<3xi64>) -> tensor<3x2xf32> {
  cuvil.effect.assert %c, "AssertionError: positive" : tensor<i1>
  %0 = cuvil.tensor.embedding %w, %ids : tensor<4x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Indices known at compile time need no check and no status result.
// CHECK-LABEL: func.func @constant_indices
//  CHECK-SAME: -> tensor<2xf32>
//   CHECK-NOT: cuvil.failure_messages
func.func @constant_indices(%x: tensor<4xf32>) -> tensor<2xf32> {
  %i = cuvil.constant dense<[3, 0]> : tensor<2xi64>
  %0 = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<4xf32>, tensor<2xi64> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Reflect padding mirrors about the edge without repeating it: i<0 -> -i,
// i>=n -> 2(n-1)-i.
// CHECK-LABEL: func.func @pad_reflect
//       CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x7xf32>)
//       CHECK:   %[[I:.*]] = arith.subi %{{.*}}, %c2 : index
//       CHECK:   %[[NEG:.*]] = arith.subi %c0{{.*}}, %[[I]]
//       CHECK:   %[[LO:.*]] = arith.select %{{.*}}, %[[NEG]], %[[I]]
//       CHECK:   %[[HI:.*]] = arith.subi %c6, %[[LO]]
//       CHECK:   %[[J:.*]] = arith.select %{{.*}}, %[[HI]], %[[LO]]
//       CHECK:   tensor.extract %arg0[%{{.*}}, %[[J]]]
func.func @pad_reflect(%x: tensor<1x4xf32>) -> tensor<1x7xf32> {
  %0 = cuvil.tensor.pad %x {pad = array<i64: 2, 1>, mode = #cuvil<pad_mode reflect>} : tensor<1x4xf32> -> tensor<1x7xf32>
  return %0 : tensor<1x7xf32>
}

// -----

// Constant padding with a negative amount crops; outside the input the
// fill value is selected, and the read is clamped so it stays in bounds.
// CHECK-LABEL: func.func @pad_negative
//       CHECK:   arith.subi %{{.*}}, %c-1 : index
//       CHECK:   arith.minsi %{{.*}}, %c3 : index
//       CHECK:   %[[V:.*]] = tensor.extract
//       CHECK:   arith.select %{{.*}}, %[[V]], %cst : f32
func.func @pad_negative(%x: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %0 = cuvil.tensor.pad %x {pad = array<i64: -1, 2>, value = 1.5 : f64} : tensor<1x4xf32> -> tensor<1x5xf32>
  return %0 : tensor<1x5xf32>
}

// -----

// argmax keeps the first index of the maximum and lets NaN win, as PyTorch;
// the first element always initialises the running value.
// CHECK-LABEL: func.func @argmax
//       CHECK: linalg.fill ins(%cst : f32) {{.*}} tensor<2x1xf32>
//       CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
//       CHECK:   arith.cmpf ogt
//       CHECK:   arith.cmpf uno
//       CHECK:   arith.cmpi eq, %{{.*}}, %c0_i64
//       CHECK: tensor.collapse_shape %{{.*}}#1 {{.*}} into tensor<2xi64>
func.func @argmax(%x: tensor<2x5xf32>) -> tensor<2xi64> {
  %0 = cuvil.reduce.argmax %x dim 1 : tensor<2x5xf32> -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Linear resizing with a static size: source indices and weights are
// computed at compile time with PyTorch's float32 arithmetic.
// CHECK-LABEL: func.func @resize
//   CHECK-DAG: arith.constant dense<[0, 0, 0, 1, 1, 2, 2, 3]> : tensor<8xi64>
//   CHECK-DAG: arith.constant dense<[1, 1, 1, 2, 2, 3, 3, 3]> : tensor<8xi64>
//   CHECK-DAG: arith.constant dense<[1.000000e+00, 7.500000e-01, 2.500000e-01, 7.500000e-01
//       CHECK: linalg.generic
//       CHECK:   arith.mulf
//       CHECK:   arith.mulf
//       CHECK:   arith.addf
func.func @resize(%x: tensor<1x1x4xf32>) -> tensor<1x1x8xf32> {
  %0 = cuvil.tensor.resize %x linear size [8] : tensor<1x1x4xf32> -> tensor<1x1x8xf32>
  return %0 : tensor<1x1x8xf32>
}

// -----

// Bilinear in two passes: every input row along the output's width first
// (gathering two columns), then each output row from two of those rows, read
// contiguously; the same products and sums as one pass.
// CHECK-LABEL: func.func @resize_bilinear
//       CHECK: %[[ROWS:.*]] = linalg.generic
//  CHECK-SAME:   outs(%{{.*}} : tensor<1x2x3x8xf32>)
//       CHECK:   tensor.extract %{{.*}} : tensor<1x2x3x4xf32>
//       CHECK:   tensor.extract %{{.*}} : tensor<1x2x3x4xf32>
//       CHECK:   arith.mulf
//       CHECK:   arith.mulf
//       CHECK:   arith.addf
//       CHECK: linalg.generic
//  CHECK-SAME:   outs(%{{.*}} : tensor<1x2x6x8xf32>)
//       CHECK:   tensor.extract %[[ROWS]]
//       CHECK:   tensor.extract %[[ROWS]]
//       CHECK:   arith.addf
func.func @resize_bilinear(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x6x8xf32> {
  %0 = cuvil.tensor.resize %x linear size [6, 8] : tensor<1x2x3x4xf32> -> tensor<1x2x6x8xf32>
  return %0 : tensor<1x2x6x8xf32>
}

// -----

// Shrinking the rows more than twice: one pass (the first would interpolate
// rows nobody reads).
// CHECK-LABEL: func.func @resize_bilinear_shrink
//       CHECK: linalg.generic
//   CHECK-NOT: linalg.generic
//       CHECK: return
func.func @resize_bilinear_shrink(%x: tensor<1x1x9x4xf32>) -> tensor<1x1x3x2xf32> {
  %0 = cuvil.tensor.resize %x linear size [3, 2] : tensor<1x1x9x4xf32> -> tensor<1x1x3x2xf32>
  return %0 : tensor<1x1x3x2xf32>
}

// -----

// group_norm splits the channels into groups, takes the mean and the biased
// variance over each group and normalises with 1/sqrt(var + eps).
// CHECK-LABEL: func.func @group_norm
//       CHECK: tensor.expand_shape {{.*}} into tensor<1x2x2x3xf32>
//       CHECK: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
//       CHECK: arith.divf %{{.*}}, %cst{{.*}} : f32
//       CHECK: math.sqrt
//       CHECK: tensor.expand_shape {{.*}} into tensor<1x4x3xf32>
func.func @group_norm(%x: tensor<1x4x3xf32>) -> tensor<1x4x3xf32> {
  %0 = cuvil.norm.group_norm %x {num_groups = 2 : i64} : (tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}

// -----

// A scatter is a loop nest over the index that carries the result and
// updates one element per position (the index checked once, then clamped);
// without include_self the targets are first set to the identity (here
// -inf for amax); mean also counts, and divides where something was added.
// CHECK-LABEL: func.func @scatter
//  CHECK-SAME: cuvil.failure_messages = ["index out of range in torch.scatter: dimension 0 has size 5
//       CHECK: scf.for
//       CHECK:   scf.for
//       CHECK:     tensor.insert %cst
//       CHECK: scf.for
//       CHECK:   scf.for
//       CHECK:     tensor.extract %arg2
//       CHECK:     arith.maximumf
//       CHECK:     tensor.insert
//       CHECK: scf.for
//       CHECK:   scf.for
//       CHECK:     arith.addf
//       CHECK:     arith.addi
//       CHECK: linalg.generic
//       CHECK:   arith.divf
func.func @scatter(%x: tensor<5x3xf32>, %i: tensor<2x3xi64>, %s: tensor<2x3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>) {
  %0 = cuvil.tensor.scatter %x, %i, %s {dim = 0 : i64, reduce = #cuvil<scatter_reduce amax>, include_self = false} : tensor<5x3xf32>, tensor<2x3xi64>, tensor<2x3xf32> -> tensor<5x3xf32>
  %1 = cuvil.tensor.scatter %x, %i, %s {dim = 0 : i64, reduce = #cuvil<scatter_reduce mean>} : tensor<5x3xf32>, tensor<2x3xi64>, tensor<2x3xf32> -> tensor<5x3xf32>
  return %0, %1 : tensor<5x3xf32>, tensor<5x3xf32>
}

// -----

// Checks inside data-dependent control flow reach the status: an scf.if
// returns one more i32 (its branch's status), an scf.while carries one from
// 0, folds each iteration's checks into it and goes on only while it is 0;
// the function's status folds both like checks of its own.
// CHECK-LABEL: func.func @checks_in_regions
//  CHECK-SAME: -> (tensor<3x2xf32>, i32)
//       CHECK: %[[IF:.*]]:2 = scf.if %{{.*}} -> (tensor<3x2xf32>, i32) {
//       CHECK:   arith.select %{{.*}}, %c1_i32
//       CHECK:   %[[THEN:.*]] = arith.select %{{.*}}, %c1_i32
//  CHECK-NEXT:   scf.yield %{{.*}}, %[[THEN]] : tensor<3x2xf32>, i32
//       CHECK: } else {
//       CHECK:   scf.yield %{{.*}}, %c0_i32{{.*}} : tensor<3x2xf32>, i32
//       CHECK: %[[IFFAILED:.*]] = arith.cmpi ne, %[[IF]]#1
//       CHECK: %[[LOOP:.*]]:2 = scf.while (%{{.*}} = %[[IF]]#0, %[[ST:.*]] = %c0_i32{{.*}}) : (tensor<3x2xf32>, i32) -> (tensor<3x2xf32>, i32) {
//       CHECK:   %[[EARLIER:.*]] = arith.cmpi ne, %[[ST]]
//       CHECK:   %[[SO_FAR:.*]] = arith.select %[[EARLIER]], %[[ST]]
//       CHECK:   %[[OK:.*]] = arith.cmpi eq, %[[SO_FAR]]
//       CHECK:   %[[GO:.*]] = arith.andi %{{.*}}, %[[OK]] : i1
//       CHECK:   scf.condition(%[[GO]]) %{{.*}}, %[[SO_FAR]] : tensor<3x2xf32>, i32
//       CHECK: } do {
//       CHECK:   arith.select %{{.*}}, %c2_i32
//       CHECK:   scf.yield %{{.*}}, %{{.*}} : tensor<3x2xf32>, i32
//       CHECK: %[[LOOPFAILED:.*]] = arith.cmpi ne, %[[LOOP]]#1
//       CHECK: %[[S2:.*]] = arith.select %[[LOOPFAILED]], %[[LOOP]]#1,
//       CHECK: %[[S1:.*]] = arith.select %[[IFFAILED]], %[[IF]]#1, %[[S2]]
//       CHECK: return %[[LOOP]]#0, %[[S1]] : tensor<3x2xf32>, i32
func.func @checks_in_regions(%c: i1, %w: tensor<4x2xf32>, %ids: tensor<3xi64>, %x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = scf.if %c -> (tensor<3x2xf32>) {
    %e = cuvil.tensor.embedding %w, %ids : tensor<4x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
    scf.yield %e : tensor<3x2xf32>
  } else {
    scf.yield %x : tensor<3x2xf32>
  }
  %1 = scf.while (%y = %0) : (tensor<3x2xf32>) -> tensor<3x2xf32> {
    %s = cuvil.reduce.sum %y dims [0, 1] : tensor<3x2xf32> -> tensor<f32>
    %one = cuvil.constant dense<1.0> : tensor<f32>
    %gt = cuvil.logic.gt %s, %one : tensor<f32>, tensor<f32> -> tensor<i1>
    %go = tensor.extract %gt[] : tensor<i1>
    scf.condition(%go) %y : tensor<3x2xf32>
  } do {
  ^bb0(%y: tensor<3x2xf32>):
    %e = cuvil.tensor.embedding %w, %ids : tensor<4x2xf32>, tensor<3xi64> -> tensor<3x2xf32>
    %half = cuvil.constant dense<0.5> : tensor<f32>
    %m = cuvil.math.mul %y, %half : tensor<3x2xf32>, tensor<f32> -> tensor<3x2xf32>
    %n = cuvil.math.add %m, %e : tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
    scf.yield %n : tensor<3x2xf32>
  }
  return %1 : tensor<3x2xf32>
}
