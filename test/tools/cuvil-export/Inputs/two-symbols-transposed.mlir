func.func @forward(%x: tensor<?x8xf32> {cuvil.name = "x", cuvil.dim_symbols = ["a", ""], cuvil.dim_bounds = array<i64: 1, 32, 8, 8>},
                   %y: tensor<8x?xf32> {cuvil.name = "y", cuvil.dim_symbols = ["", "b"], cuvil.dim_bounds = array<i64: 8, 8, 1, 32>}) -> tensor<?x8xf32> {
  %t = cuvil.shape.transpose %y {dim0 = 0 : i64, dim1 = 1 : i64} : tensor<8x?xf32> -> tensor<?x8xf32>
  %0 = cuvil.math.add %x, %t : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
