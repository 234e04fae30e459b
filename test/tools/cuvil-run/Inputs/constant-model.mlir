// A model without inputs: its outputs are fixed.
func.func @forward() -> (tensor<2x2xf32>, tensor<3xi64>) {
  %a = cuvil.constant dense<[[1.0, -2.0], [3.0, -4.0]]> : tensor<2x2xf32>
  %r = cuvil.act.relu %a : tensor<2x2xf32>
  %i = cuvil.constant dense<[5, 6, 7]> : tensor<3xi64>
  %s = cuvil.tensor.slice %i {dim = 0 : i64, start = 0 : i64, end = 3 : i64, step = 1 : i64} : tensor<3xi64> -> tensor<3xi64>
  return %r, %s : tensor<2x2xf32>, tensor<3xi64>
}
