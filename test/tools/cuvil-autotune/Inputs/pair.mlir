// A 1x1 convolution into a 3x3 depthwise one with a 768 KiB tensor between
// them (48 x 64 x 64 floats): banded where half the L2 is smaller.
func.func @forward(%x: tensor<1x16x64x64xf32>) -> tensor<1x48x64x64xf32> {
  %w1 = cuvil.constant dense<0.05> : tensor<48x16x1x1xf32>
  %0 = cuvil.conv.conv2d %x, %w1 stride [1, 1] padding [0, 0] dilation [1, 1] : (tensor<1x16x64x64xf32>, tensor<48x16x1x1xf32>) -> tensor<1x48x64x64xf32>
  %wd = cuvil.constant dense<0.1> : tensor<48x1x3x3xf32>
  %1 = cuvil.conv.conv2d %0, %wd stride [1, 1] padding [1, 1] dilation [1, 1] groups 48 : (tensor<1x48x64x64xf32>, tensor<48x1x3x3xf32>) -> tensor<1x48x64x64xf32>
  return %1 : tensor<1x48x64x64xf32>
}
