func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = cuvil.constant dense<4.0> : tensor<f32>
  %y = cuvil.math.div %x, %c : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
