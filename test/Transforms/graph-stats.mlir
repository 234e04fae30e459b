// RUN: cuvil-opt %s --cuvil-graph-optimize='graph-stats=1' -o /dev/null 2>&1 | FileCheck %s
// RUN: cuvil-opt %s --cuvil-graph-stats 2>&1 -o /dev/null | FileCheck %s --check-prefix=ONE

// conv + batch_norm + relu: the batch norm folds into the conv, then conv
// and relu form one group.
// CHECK: cuvil-graph-stats: @f
// CHECK-NEXT: op {{ *}}before{{ *}}after
// CHECK-NEXT: cuvil.act.relu {{ *}}1{{ *}}0
// CHECK-NEXT: cuvil.conv.conv2d {{ *}}1{{ *}}0
// CHECK-NEXT: cuvil.fused.group conv {{ *}}0{{ *}}1
// CHECK-NEXT: cuvil.norm.batch_norm {{ *}}1{{ *}}0
// CHECK-NEXT: total {{ *}}3{{ *}}1
// CHECK-NEXT: fused groups by pattern:
// CHECK-NEXT: conv2d+relu {{ *}}1

// Without a recorded "before", one column.
// ONE: op {{ *}}after
// ONE: total {{ *}}3
func.func @f(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = cuvil.constant dense<0.5> : tensor<2x2x1x1xf32>
  %mean = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = cuvil.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %c = cuvil.conv.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %n = cuvil.norm.batch_norm %c, %mean, %var : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %y = cuvil.act.relu %n : tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
