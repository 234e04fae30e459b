func.func @forward(%a: tensor<5x4xf64>, %b: tensor<4x8xf64>, %x: tensor<4x6xf32>, %w: tensor<3x6xf32>) -> (tensor<5x8xf64>, tensor<4x3xf32>) {
  %0 = cuvil.gemm.matmul %a, %b : tensor<5x4xf64>, tensor<4x8xf64> -> tensor<5x8xf64>
  %1 = cuvil.gemm.linear %x, %w : (tensor<4x6xf32>, tensor<3x6xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<5x8xf64>, tensor<4x3xf32>
}
