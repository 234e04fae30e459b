func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %two = cuvil.constant dense<2.0> : tensor<f32>
  %one = cuvil.constant dense<1.0> : tensor<f32>
  %0 = cuvil.math.mul %x, %two : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %1 = cuvil.math.add %0, %one : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
