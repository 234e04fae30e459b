// RUN: cuvil-opt %s --split-input-file --cuvil-choose-cpu-kernels --cuvil-select-cpu-kernels --verify-diagnostics -o /dev/null

// The apply pass refuses a configuration its kernel cannot run.
func.func @refused(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x5x5xf32>
  // expected-error @+1 {{kernel configuration 'conv2d/winograd_f2x2' cannot run this op: Winograd needs a 3x3 stride-1 convolution without groups or dilation (it can take: conv2d/im2col, conv2d/pixel_rows, linalg)}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [2, 2] dilation [1, 1] {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "winograd_f2x2">} : (tensor<1x8x16x16xf32>, tensor<8x8x5x5xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// The attribute's own verifier.
func.func @malformed(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  // expected-error @+1 {{'cuvil.kernel' must be a #cuvil.kernel<kernel = ..., variant = ...>}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {cuvil.kernel = "winograd"} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// Pixel rows take one group.
func.func @qconv_rows_groups(%x: tensor<1x4x7x7xui8>) -> tensor<1x4x7x7xui8> {
  %w = cuvil.constant dense<3> : tensor<4x2x1x1xi8>
  // expected-error @+1 {{kernel configuration 'qconv2d/u8s8_pixel_rows' cannot run this op: pixel rows take convolutions of one group (it can take: qconv2d/u8s8, linalg)}}
  %0 = cuvil.quant.conv2d %x, %w stride [1, 1] padding [0, 0] dilation [1, 1] groups 2 {cuvil.kernel = #cuvil.kernel<kernel = "qconv2d", variant = "u8s8_pixel_rows">, input_params = #cuvil.quant<scale = [2.000000e-02], zero_point = [128]>, output_params = #cuvil.quant<scale = [1.000000e-02], zero_point = [0]>, weight_params = #cuvil.quant<scale = [1.000000e-02], zero_point = [0]>} : (tensor<1x4x7x7xui8>, tensor<4x2x1x1xi8>) -> tensor<1x4x7x7xui8>
  return %0 : tensor<1x4x7x7xui8>
}

// -----

// A schedule the kernel does not take.
func.func @bad_schedule(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  // expected-error @+1 {{kernel configuration 'conv2d/im2col (schedule stream)': kernel 'conv2d/im2col' has no schedule 'stream' (it has: fine, whole)}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "im2col", schedule = "stream">} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

func.func @no_schedule(%x: tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32> {
  %w = cuvil.constant dense<0.5> : tensor<8x8x3x3xf32>
  // expected-error @+1 {{kernel configuration 'conv2d/winograd_f4x4 (schedule fine)': kernel 'conv2d/winograd_f4x4' takes no schedule (it has 'fine')}}
  %0 = cuvil.conv.conv2d %x, %w stride [1, 1] padding [1, 1] dilation [1, 1] {cuvil.kernel = #cuvil.kernel<kernel = "conv2d", variant = "winograd_f4x4", schedule = "fine">} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}
