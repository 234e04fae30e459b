func.func @first() -> tensor<1xf32> {
  %c = cuvil.constant dense<[1.0]> : tensor<1xf32>
  return %c : tensor<1xf32>
}
func.func @second() -> tensor<1xf32> {
  %c = cuvil.constant dense<[2.0]> : tensor<1xf32>
  %n = cuvil.math.neg %c : tensor<1xf32>
  return %n : tensor<1xf32>
}
