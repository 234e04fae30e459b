// A model with a data-dependent branch whose two arms compute the same
// thing: only branch coverage can tell which one ran (branch-coverage.test).
#if = loc("branchy.py":12:0)
func.func @forward(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s = cuvil.reduce.sum %x dims [0, 1] : tensor<4x6xf32> -> tensor<f32>
  %t = cuvil.constant dense<0.0> : tensor<f32>
  %gt = cuvil.logic.gt %s, %t : tensor<f32>, tensor<f32> -> tensor<i1>
  %c = tensor.extract %gt[] : tensor<i1>
  %r = scf.if %c -> (tensor<4x6xf32>) {
    %a = cuvil.act.relu %x : tensor<4x6xf32>
    scf.yield %a : tensor<4x6xf32>
  } else {
    %b = cuvil.act.relu %x : tensor<4x6xf32>
    scf.yield %b : tensor<4x6xf32>
  } loc(#if)
  return %r : tensor<4x6xf32>
}
