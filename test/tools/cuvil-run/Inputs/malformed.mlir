func.func @forward(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = cuvil.act.silu %x : tensor<2xi32>
  return %0 : tensor<2xi32>
}
