// f32 and f64 through bf16 and f16 and back: LLVM lowers the truncations to
// compiler-rt calls (__truncsfbf2 on every x86 CPU, the f16 ones without
// F16C), which the runtime provides (runtime/core/float_conversions.c).
func.func @forward(%x: tensor<4x1000xf32>) -> (tensor<4x1000xf32>, tensor<4x1000xf64>, tensor<4x1000xf32>, tensor<4x1000xf64>) {
  %b = cuvil.tensor.cast %x : tensor<4x1000xf32> -> tensor<4x1000xbf16>
  %b32 = cuvil.tensor.cast %b : tensor<4x1000xbf16> -> tensor<4x1000xf32>
  %d = cuvil.tensor.cast %x : tensor<4x1000xf32> -> tensor<4x1000xf64>
  %db = cuvil.tensor.cast %d : tensor<4x1000xf64> -> tensor<4x1000xbf16>
  %db64 = cuvil.tensor.cast %db : tensor<4x1000xbf16> -> tensor<4x1000xf64>
  %h = cuvil.tensor.cast %x : tensor<4x1000xf32> -> tensor<4x1000xf16>
  %h32 = cuvil.tensor.cast %h : tensor<4x1000xf16> -> tensor<4x1000xf32>
  %dh = cuvil.tensor.cast %d : tensor<4x1000xf64> -> tensor<4x1000xf16>
  %dh64 = cuvil.tensor.cast %dh : tensor<4x1000xf16> -> tensor<4x1000xf64>
  return %b32, %db64, %h32, %dh64 : tensor<4x1000xf32>, tensor<4x1000xf64>, tensor<4x1000xf32>, tensor<4x1000xf64>
}
