// A small int8 CNN for --target npu: quantize (host), a convolution, a
// depthwise convolution and a residual sum with relu, max pooling, average
// pooling, a linear layer (NPU), dequantize and a quantized product of two
// tensors (host: the NPU has no such op).
#x = #cuvil.quant<scale = [0.02], zero_point = [128]>
#w = #cuvil.quant<scale = [0.01, 0.012, 0.008, 0.011, 0.009, 0.013, 0.01, 0.007], zero_point = [0, 0, 0, 0, 0, 0, 0, 0], axis = 0>
#wd = #cuvil.quant<scale = [0.02], zero_point = [0]>
#y = #cuvil.quant<scale = [0.05], zero_point = [0]>
#z = #cuvil.quant<scale = [0.06], zero_point = [10]>
#o = #cuvil.quant<scale = [0.4], zero_point = [128]>
#p = #cuvil.quant<scale = [0.6], zero_point = [0]>
func.func @forward(%arg0: tensor<2x4x12x12xf32>) -> (tensor<2x10xf32>, tensor<2x8x6x6xf32>) {
  %w = cuvil.constant dense<[[[[-45, 115, -89], [-26, 39, -115], [-109, 83, 10]], [[-103, -34, 22], [-113, 105, 2], [-73, -118, -105]], [[-16, -20, -110], [-66, -104, 14], [-19, -112, 84]], [[17, -96, 115], [-70, 34, 33], [22, 115, -112]]], [[[20, 22, -26], [-115, 122, -71], [-116, 15, 92]], [[-93, -53, -20], [-91, 11, -97], [19, -49, 16]], [[81, 47, -81], [-101, 21, 19], [36, -79, -32]], [[-103, 13, 55], [-111, 17, -112], [31, -75, 0]]], [[[47, 9, -18], [71, -47, -8], [22, 109, -11]], [[-35, -51, -64], [76, -81, 51], [72, -65, -107]], [[20, -51, 7], [-1, 97, -40], [59, -13, -54]], [[28, 123, -109], [-97, 4, -20], [-85, 66, -40]]], [[[-89, 111, -2], [-20, -117, 119], [44, -108, 68]], [[15, 19, 75], [97, 82, -47], [-40, 50, -38]], [[25, 0, 21], [77, -11, -110], [88, -104, 114]], [[-58, -6, 51], [43, -111, -112], [60, 52, -48]]], [[[38, 20, 127], [47, 83, -13], [-55, 56, -29]], [[100, 44, -39], [-122, 113, -9], [-37, -84, 29]], [[-98, -1, -112], [-72, 69, -54], [-94, 62, -64]], [[-26, -27, 107], [96, 0, -107], [-85, -13, -25]]], [[[13, -56, 99], [-92, 82, -17], [94, 13, -56]], [[53, -21, 125], [-36, 47, 99], [-30, 118, -68]], [[-89, -106, -82], [-89, -68, 41], [-68, -124, -3]], [[85, 23, -81], [-60, -55, -126], [-90, -20, 9]]], [[[-33, 29, 17], [-46, 116, -95], [49, 92, 4]], [[116, 31, 40], [46, 62, -114], [-11, 103, 95]], [[72, 116, 96], [47, 77, 16], [-27, -26, -25]], [[-27, -101, -4], [35, -25, -112], [-79, -110, 125]]], [[[-74, -15, -86], [-99, -40, 26], [-114, -101, -127]], [[18, -89, 10], [-102, 115, -34], [30, -121, -109]], [[96, -74, 30], [-31, -89, 35], [-63, 117, -39]], [[27, -34, -6], [-96, -98, 90], [-3, 127, 123]]]]> : tensor<8x4x3x3xi8>
  %b = cuvil.constant dense<[-0.0680, -0.0323, -0.8282, -0.7956, -0.3147, -0.4705, 0.6577, -0.6771]> : tensor<8xf32>
  %dw = cuvil.constant dense<[[[[-122, -75, 116], [116, 8, -35], [-90, 49, 12]]], [[[107, -121, 67], [8, -51, 123], [37, 94, -104]]], [[[51, 89, -61], [5, -34, 105], [-85, -36, 70]]], [[[-70, 9, 11], [72, 1, -43], [35, -70, 29]]], [[[80, 74, 125], [67, 91, -78], [79, -66, 82]]], [[[-25, 62, 78], [-69, -76, 5], [-1, -36, 60]]], [[[-120, 126, -120], [75, -56, -7], [-61, -78, 50]]], [[[27, 117, -39], [-13, 79, 112], [58, 125, -38]]]]> : tensor<8x1x3x3xi8>
  %fw = cuvil.constant dense<[[117, 122, -34, -107, -71, -101, -69, -7], [-77, -41, -75, -4, 32, 125, 103, 29], [88, -127, -5, 105, 40, -39, 77, 37], [-106, 86, 42, -97, 105, -28, 73, 55], [65, -76, -5, 100, -82, -16, 75, 35], [-42, -105, 78, 115, 121, 57, -26, -9], [-25, 63, 115, -106, 58, -87, -84, 127], [-95, -120, -89, 24, 104, -8, 79, 40], [-90, 29, 84, 25, 123, -6, 41, 112], [-38, -88, 13, 13, -94, -122, -124, 77]]> : tensor<10x8xi8>
  %fb = cuvil.constant dense<[0.9418, 0.2993, 0.0532, 0.8672, -0.1324, 0.7435, 0.6523, -0.5779, -0.4963, -0.4141]> : tensor<10xf32>
  %q = cuvil.quant.quantize %arg0 {params = #x} : tensor<2x4x12x12xf32> -> tensor<2x4x12x12xui8>
  %c = cuvil.quant.conv2d %q, %w, %b stride [1, 1] padding [1, 1] dilation [1, 1] {input_params = #x, weight_params = #w, output_params = #y} : (tensor<2x4x12x12xui8>, tensor<8x4x3x3xi8>, tensor<8xf32>) -> tensor<2x8x12x12xui8>
  %d = cuvil.quant.conv2d %c, %dw stride [1, 1] padding [1, 1] dilation [1, 1] groups 8 {input_params = #y, weight_params = #wd, output_params = #z} : (tensor<2x8x12x12xui8>, tensor<8x1x3x3xi8>) -> tensor<2x8x12x12xui8>
  %s = cuvil.quant.add %d, %c {lhs_params = #z, rhs_params = #y, output_params = #y, relu} : (tensor<2x8x12x12xui8>, tensor<2x8x12x12xui8>) -> tensor<2x8x12x12xui8>
  %m = cuvil.pool.max_pool2d %s kernel [3, 3] stride [2, 2] padding [1, 1] dilation [1, 1] : tensor<2x8x12x12xui8> -> tensor<2x8x6x6xui8>
  %p = cuvil.quant.avg_pool2d %m kernel [6, 6] stride [6, 6] padding [0, 0] {input_params = #y, output_params = #y, count_include_pad} : tensor<2x8x6x6xui8> -> tensor<2x8x1x1xui8>
  %f = cuvil.shape.flatten %p {start_dim = 1 : i64, end_dim = 3 : i64} : tensor<2x8x1x1xui8> -> tensor<2x8xui8>
  %l = cuvil.quant.linear %f, %fw, %fb {input_params = #y, weight_params = #wd, output_params = #o} : (tensor<2x8xui8>, tensor<10x8xi8>, tensor<10xf32>) -> tensor<2x10xui8>
  %o = cuvil.quant.dequantize %l {params = #o} : tensor<2x10xui8> -> tensor<2x10xf32>
  %sq = cuvil.quant.mul %m, %m {lhs_params = #y, rhs_params = #y, output_params = #p} : (tensor<2x8x6x6xui8>, tensor<2x8x6x6xui8>) -> tensor<2x8x6x6xui8>
  %so = cuvil.quant.dequantize %sq {params = #p} : tensor<2x8x6x6xui8> -> tensor<2x8x6x6xf32>
  return %o, %so : tensor<2x10xf32>, tensor<2x8x6x6xf32>
}
