// RUN: cuvil-opt %s --cuvil-quantize-layers --split-input-file --verify-diagnostics

func.func @no_input_params(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<2x2xf32>
  // expected-error @+1 {{is marked int8 but has no 'cuvil.quant.input' parameters}}
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "int8", cuvil.quant.output = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @weights_not_constant(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{cannot be quantized: its weight is not a constant}}
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.1], zero_point = [0]>, cuvil.quant.output = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @activation_per_channel(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<2x2xf32>
  // expected-error @+1 {{'cuvil.quant.input' must be per tensor (one scale)}}
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.1, 0.2], zero_point = [0, 0], axis = 1>, cuvil.quant.output = #cuvil.quant<scale = [0.1], zero_point = [0]>} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @bad_precision(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<2x2xf32>
  // expected-error @+1 {{'cuvil.precision' must be "int8", "fp16", "bf16" or "fp32"}}
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "int4"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @bad_params_attr(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = cuvil.constant dense<1.0> : tensor<2x2xf32>
  // expected-error @+1 {{'cuvil.quant.input' must be a #cuvil.quant<scale = ..., zero_point = ...>}}
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "int8", cuvil.quant.input = 0.5} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @fp16_overflow(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = cuvil.constant dense<[[1.0, 70000.0], [0.5, 2.0]]> : tensor<2x2xf32>
  // expected-error @+1 {{cannot run in fp16: weight 7.000000e+04 is beyond its range (use fp32)}}
  %0 = cuvil.gemm.linear %x, %w {cuvil.precision = "fp16"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @add_without_rhs_params(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{is marked int8 but has no 'cuvil.quant.rhs' parameters}}
  %0 = cuvil.math.add %a, %b {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.1], zero_point = [0]>, cuvil.quant.output = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_broadcast(%a: tensor<4xf32>, %b: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{cannot be quantized: its operands are broadcast}}
  %0 = cuvil.math.add %a, %b {cuvil.precision = "int8", cuvil.quant.input = #cuvil.quant<scale = [0.1], zero_point = [0]>, cuvil.quant.rhs = #cuvil.quant<scale = [0.1], zero_point = [0]>, cuvil.quant.output = #cuvil.quant<scale = [0.1], zero_point = [0]>} : tensor<4xf32>, tensor<1xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
