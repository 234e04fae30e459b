// The verifiers of cuvil_npu: every command within the machine of its
// program (SRAM bounds, alignment, static positive sizes), its DRAM accesses
// within their regions, its waits on earlier commands only.
// RUN: cuvil-opt %s -split-input-file -verify-diagnostics

func.func @sram_bounds(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{writes ABUF [1024, 1088), outside its 1024 bytes}}
    cuvil_npu.load {dram_offset = 0 : i32, dram_strides = array<i32: 0, 0>, layer = -1 : i32, region = 0 : i32, shape = array<i32: 1, 1, 64>, space = "abuf", sram_addr = 1024 : i32, sram_strides = array<i32: 0, 0>, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @alignment(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{the SRAM address 8 is not a multiple of 64}}
    cuvil_npu.load {dram_offset = 0 : i32, dram_strides = array<i32: 0, 0>, layer = -1 : i32, region = 0 : i32, shape = array<i32: 1, 1, 64>, space = "abuf", sram_addr = 8 : i32, sram_strides = array<i32: 0, 0>, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @dram_bounds(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{reads DRAM region 0 at [0, 128), outside its 64 bytes}}
    cuvil_npu.load {dram_offset = 0 : i32, dram_strides = array<i32: 0, 0>, layer = -1 : i32, region = 0 : i32, shape = array<i32: 1, 1, 128>, space = "abuf", sram_addr = 0 : i32, sram_strides = array<i32: 0, 0>, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @wait_on_later(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{waits for 1 commands of unit 1 but only 0 come before it in the stream}}
    cuvil_npu.load {dram_offset = 0 : i32, dram_strides = array<i32: 0, 0>, layer = -1 : i32, region = 0 : i32, shape = array<i32: 1, 1, 64>, space = "abuf", sram_addr = 0 : i32, sram_strides = array<i32: 0, 0>, wait = array<i32: 0, 1, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @matmul_mode(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{unknown matmul mode (conv, depthwise or gemm)}}
    cuvil_npu.matmul {acc_addr = 0 : i32, dilation = array<i32: 1, 1>, in_addr = 0 : i32, in_shape = array<i32: 4, 4, 4>, kernel = array<i32: 1, 1>, layer = -1 : i32, mode = "winograd", out_shape = array<i32: 4, 4, 4>, pad = array<i32: 0, 0>, pad_value = 0 : i32, stride = array<i32: 1, 1>, w_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @gemm_shape(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{a gemm tile is in_shape [k, m, 1], out_shape [n, m, 1], a 1x1 window}}
    cuvil_npu.matmul {acc_addr = 0 : i32, dilation = array<i32: 1, 1>, in_addr = 0 : i32, in_shape = array<i32: 4, 4, 4>, kernel = array<i32: 1, 1>, layer = -1 : i32, mode = "gemm", out_shape = array<i32: 4, 4, 4>, pad = array<i32: 0, 0>, pad_value = 0 : i32, stride = array<i32: 1, 1>, w_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @dynamic_size(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{shapes, window, strides and dilations must be positive (static shapes only)}}
    cuvil_npu.pool {dilation = array<i32: 1, 1>, in_addr = 0 : i32, in_shape = array<i32: 1, -1, 8>, kernel = array<i32: 2, 2>, layer = -1 : i32, mode = "max", out_addr = 512 : i32, out_shape = array<i32: 4, 4>, pad = array<i32: 0, 0>, ratio = 1.0 : f32, stride = array<i32: 2, 2>, wait = array<i32: 0, 0, 0, 0>, x_zero = 0 : i32, y_max = 255 : i32, y_min = 0 : i32, y_zero = 0 : i32}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @wait_size(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{wait must have one count per unit (load, store, mac, vec)}}
    cuvil_npu.barrier {layer = -1 : i32, wait = array<i32: 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @segment_dynamic(%a: tensor<?xui8>) -> tensor<?xui8> {
  // expected-error @below {{input 0 ('tensor<?xui8>') has no static shape: the NPU runs static shapes only}}
  %r = cuvil_npu.segment "s"(%a) : (tensor<?xui8>) -> tensor<?xui8> {
  ^bb0(%x: tensor<?xui8>):
    cuvil_npu.yield %x : tensor<?xui8>
  }
  return %r : tensor<?xui8>
}

// -----

func.func @not_a_command(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{is not an NPU command}}
    %c = arith.constant 0 : i32
  }
  return %r : tensor<64xui8>
}

// -----

// FP16: the padding value is a binary16's bits (31744, +inf, is one and
// is not a u8; 70000 is not).
func.func @fp16_pad(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    cuvil_npu.matmul {acc_addr = 0 : i32, dilation = array<i32: 1, 1>, fp16, in_addr = 0 : i32, in_shape = array<i32: 4, 8, 8>, kernel = array<i32: 1, 1>, layer = -1 : i32, mode = "conv", out_shape = array<i32: 4, 1, 1>, pad = array<i32: 0, 0>, pad_value = 31744 : i32, stride = array<i32: 1, 1>, w_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>}
    // expected-error @below {{the padding value is not a binary16}}
    cuvil_npu.matmul {acc_addr = 0 : i32, dilation = array<i32: 1, 1>, fp16, in_addr = 0 : i32, in_shape = array<i32: 4, 8, 8>, kernel = array<i32: 1, 1>, layer = -1 : i32, mode = "conv", out_shape = array<i32: 4, 1, 1>, pad = array<i32: 0, 0>, pad_value = 70000 : i32, stride = array<i32: 1, 1>, w_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

// FP16 operands are two bytes: a 4 x 16 x 16 input (1024 elements) is
// 2048 bytes of ABUF.
func.func @fp16_bounds(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    // expected-error @below {{reads ABUF [0, 2048), outside its 1024 bytes}}
    cuvil_npu.matmul {acc_addr = 0 : i32, dilation = array<i32: 1, 1>, fp16, in_addr = 0 : i32, in_shape = array<i32: 4, 16, 16>, kernel = array<i32: 1, 1>, layer = -1 : i32, mode = "conv", out_shape = array<i32: 4, 1, 1>, pad = array<i32: 0, 0>, pad_value = 0 : i32, stride = array<i32: 1, 1>, w_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>}
  }
  return %r : tensor<64xui8>
}

// -----

func.func @float_epilogue_flags(%a: tensor<64xui8>) -> tensor<64xui8> {
  %r = cuvil_npu.program "p"(%a) attributes {config = array<i32: 32, 32, 1024, 1024, 1024, 1, 1, 1, 32, 10, 32, 64, 1000, 64, 0, 0>, constants = dense<0> : tensor<64xi8>, layer_kinds = [], layer_macs = array<i64>, layers = [], scratch_bytes = 0 : i64} : (tensor<64xui8>) -> tensor<64xui8> {
    cuvil_npu.requant {acc_addr = 0 : i32, channels = 4 : i32, layer = -1 : i32, layout = "planes", mode = "float", out_addr = 0 : i32, out_f16, out_plane = 4 : i32, pixels = 4 : i32, relu, table_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>, y_max = 0 : i32, y_min = 0 : i32, y_zero = 0 : i32}
    // expected-error @below {{relu and out_f16 belong to the float mode}}
    cuvil_npu.requant {acc_addr = 0 : i32, channels = 4 : i32, layer = -1 : i32, layout = "planes", mode = "f32", out_addr = 0 : i32, out_plane = 4 : i32, pixels = 4 : i32, relu, table_addr = 0 : i32, wait = array<i32: 0, 0, 0, 0>, y_max = 0 : i32, y_min = 0 : i32, y_zero = 0 : i32}
  }
  return %r : tensor<64xui8>
}
