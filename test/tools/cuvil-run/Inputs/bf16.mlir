func.func @forward() -> tensor<2xbf16> {
  %c = cuvil.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  return %c : tensor<2xbf16>
}
