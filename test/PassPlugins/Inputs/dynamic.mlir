func.func @forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = cuvil.act.relu %x : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
