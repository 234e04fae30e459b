// RUN: cuvil-opt %s --cuvil-specialize-shapes="sizes=seq=12x" --verify-diagnostics
// RUN: not cuvil-opt %s --cuvil-specialize-shapes="sizes=seq" 2>&1 | FileCheck %s --check-prefix=FORM
// RUN: not cuvil-opt %s --cuvil-specialize-shapes="sizes=seq=1,2,3,4,5;batch=1,2,3,4" 2>&1 | FileCheck %s --check-prefix=MANY

// FORM: is not SYMBOL=SIZE[,SIZE...]
// MANY: --specialize: 20 combinations of sizes, more than 16

// expected-error @+1 {{--specialize: '12x' (for 'seq') is not a size (a positive integer)}}
func.func @forward(%x: tensor<?x?xf32> {cuvil.dim_symbols = ["batch", "seq"], cuvil.dim_bounds = array<i64: 1, 64, 1, 64>}) -> tensor<?x?xf32> {
  return %x : tensor<?x?xf32>
}
