// The classifier with one bias perturbed (0.1 -> 0.6): logits = relu(x W1^T + b1) W2^T + b2, and the
// predicted class (an integer output, compared exactly).
func.func @forward(%x: tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4xi64>) {
  %w1 = cuvil.constant dense<[[0.5, -0.25, 0.125, 1.0, -1.0, 0.75], [0.25, 0.5, -0.5, 0.0, 1.5, -0.125], [-1.0, 0.25, 0.5, 0.5, 0.25, 1.0], [0.75, -0.75, 0.25, -0.5, 0.5, 0.25], [0.0, 1.0, -0.25, 0.25, -0.5, 0.5]]> : tensor<5x6xf32>
  %b1 = cuvil.constant dense<[0.1, -0.2, 0.3, 0.0, 0.05]> : tensor<5xf32>
  %w2 = cuvil.constant dense<[[1.0, -0.5, 0.25, 0.5, -1.0], [0.5, 1.0, -0.75, 0.25, 0.5], [-0.25, 0.5, 1.0, -1.0, 0.25]]> : tensor<3x5xf32>
  %b2 = cuvil.constant dense<[0.0, 0.6, -0.1]> : tensor<3xf32>
  %h = cuvil.gemm.linear %x, %w1, %b1 : (tensor<4x6xf32>, tensor<5x6xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %r = cuvil.act.relu %h : tensor<4x5xf32>
  %y = cuvil.gemm.linear %r, %w2, %b2 : (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %c = cuvil.reduce.argmax %y dim 1 : tensor<4x3xf32> -> tensor<4xi64>
  return %y, %c : tensor<4x3xf32>, tensor<4xi64>
}
