// A model with run-time checks: its own assertion, then a row lookup by
// indices that arrive as an input.
func.func @forward(%x: tensor<3xf32>, %w: tensor<4x2xf32>, %ids: tensor<2xi64>) -> tensor<2x2xf32> {
  %zero = cuvil.constant dense<0.0> : tensor<f32>
  %pos = cuvil.logic.gt %x, %zero : tensor<3xf32>, tensor<f32> -> tensor<3xi1>
  %all = cuvil.reduce.all %pos dims [0] : tensor<3xi1> -> tensor<i1>
  cuvil.effect.assert %all, "AssertionError: x must be positive" : tensor<i1>
  %rows = cuvil.tensor.embedding %w, %ids : tensor<4x2xf32>, tensor<2xi64> -> tensor<2x2xf32>
  return %rows : tensor<2x2xf32>
}
