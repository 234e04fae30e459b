func.func @forward() -> tensor<1xf32> {
  %x = cuvil.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i = cuvil.constant dense<[7]> : tensor<1xi64>
  %0 = cuvil.tensor.index_select %x, %i {dim = 0 : i64} : tensor<2xf32>, tensor<1xi64> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
