// RUN: cuvil-opt %s --split-input-file --convert-cuvil-to-linalg | FileCheck %s

// A grouped, strided convolution: the input is zero-padded once, the group
// of an output channel picks its input channels (floordiv), and the bias is
// added per output channel after the contraction.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 3) * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[$W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[$BIAS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func @conv2d_groups
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[$BIAS]], {{.*}}]
func.func @conv2d_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %0 = cuvil.conv.conv2d %x, %w, %b stride [2, 2] padding [1, 1] dilation [1, 1] groups 2 : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  return %0 : tensor<1x6x4x4xf32>
}

// -----

// A transposed convolution is a stride-1 convolution of the input spread out
// by the stride (a strided insert into zeros), padded by dilation*(k-1)-pad
// (plus output_padding on the right), with the kernel flipped and its
// channel axes swapped.
// CHECK-DAG: #[[$FLIP:.*]] = affine_map<(d0, d1, d2) -> ((d0 floordiv 4) * 2 + d1, d0 mod 4, -d2 + 2)>
// CHECK-LABEL: func @conv_transpose1d
// CHECK: linalg.fill {{.*}} -> tensor<1x2x5xf32>
// CHECK: tensor.insert_slice %{{.*}}[0, 0, 0] [1, 2, 3] [1, 1, 2] : tensor<1x2x3xf32> into tensor<1x2x5xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0, 1] high[0, 0, 2]
// CHECK: linalg.generic {indexing_maps = [#[[$FLIP]], {{.*}}]
// CHECK-SAME: outs(%{{.*}} : tensor<4x2x3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x4x6xf32>)
func.func @conv_transpose1d(%x: tensor<1x2x3xf32>, %w: tensor<2x4x3xf32>) -> tensor<1x4x6xf32> {
  %0 = cuvil.conv.conv_transpose1d %x, %w stride [2] padding [1] dilation [1] output_padding [1] : (tensor<1x2x3xf32>, tensor<2x4x3xf32>) -> tensor<1x4x6xf32>
  return %0 : tensor<1x4x6xf32>
}

// -----

// Max pooling pads with -inf (padding never wins) and, in ceil mode, adds
// right padding so the last partial window exists. The window is a
// reduction dimension indexed through a shape-only operand.
// CHECK: #[[$WIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + d3)>
// CHECK: func @max_pool_ceil
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 1]
// CHECK: tensor.yield %[[NINF]]
// CHECK: linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.generic {indexing_maps = [#[[$WIN]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.maximumf
func.func @max_pool_ceil(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %0 = cuvil.pool.max_pool1d %x kernel [2] stride [2] padding [0] dilation [1] ceil_mode : tensor<1x1x5xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// Average pooling without count_include_pad divides each window by the
// number of real elements in it, a table computed at compile time.
// CHECK-LABEL: func @avg_pool_exclude_pad
// CHECK: tensor.pad %{{.*}} low[0, 0, 1] high[0, 0, 1]
// CHECK: arith.addf
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00, 1.000000e+00]> : tensor<3xf32>
// CHECK: arith.divf
func.func @avg_pool_exclude_pad(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
  %0 = cuvil.pool.avg_pool1d %x kernel [2] stride [2] padding [1] : tensor<1x1x4xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// With count_include_pad every window divides by the kernel size; a divisor
// override replaces it.
// CHECK-LABEL: func @avg_pool_include_pad
// CHECK: arith.constant dense<2.000000e+00> : tensor<3xf32>
// CHECK-LABEL: func @avg_pool_divisor
// CHECK: arith.constant dense<5.000000e+00> : tensor<3xf32>
func.func @avg_pool_include_pad(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
  %0 = cuvil.pool.avg_pool1d %x kernel [2] stride [2] padding [1] count_include_pad : tensor<1x1x4xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}
func.func @avg_pool_divisor(%x: tensor<1x1x4xf32>) -> tensor<1x1x3xf32> {
  %0 = cuvil.pool.avg_pool1d %x kernel [2] stride [2] padding [1] divisor 5 : tensor<1x1x4xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// Adaptive average pooling is a contraction with a constant averaging
// matrix: windows [floor(i*5/3), ceil((i+1)*5/3)) may overlap.
// CHECK-LABEL: func @adaptive_avg_pool
// CHECK: arith.constant dense<{{\[\[}}5.000000e-01, 5.000000e-01, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.333333343, 0.333333343, 0.333333343, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e-01, 5.000000e-01]]> : tensor<3x5xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @adaptive_avg_pool(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %0 = cuvil.pool.adaptive_avg_pool1d %x output_size [3] : tensor<1x1x5xf32> -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}
