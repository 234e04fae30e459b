func.func @forward(%x: tensor<?x8xf32> {cuvil.name = "x", cuvil.dim_symbols = ["a", ""], cuvil.dim_bounds = array<i64: 1, 32, 8, 8>},
                   %y: tensor<?x8xf32> {cuvil.name = "y", cuvil.dim_symbols = ["b", ""], cuvil.dim_bounds = array<i64: 1, 32, 8, 8>}) -> tensor<?x8xf32> {
  %0 = cuvil.math.add %x, %y : tensor<?x8xf32>, tensor<?x8xf32> -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
