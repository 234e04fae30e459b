//===- Passes.td - CPU code generation passes --------------*- tablegen -*-===//
#ifndef CUVIL_TARGETS_CPU_PASSES_TD
#define CUVIL_TARGETS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def AllocsToArenaPass : Pass<"cuvil-allocs-to-arena", "::mlir::ModuleOp"> {
  let summary = "Places every buffer of a bufferized function in one arena argument.";
  let description = [{
    After bufferization, each `memref.alloc` of a static shape is an
    intermediate. Their live ranges (through view-like ops: subview,
    collapse/expand_shape, cast, reinterpret_cast, view) are packed into
    one 64-byte-aligned arena, largest first at the lowest free offset, and
    every alloc becomes a `memref.view` of a new trailing function argument
    `memref<Nxi8>` (N: the arena size): the compiled code never calls malloc, and the runtime
    owns the memory (one arena per model instance). The arena size is
    recorded as `cuvil.arena_bytes` on the function. Allocations of dynamic
    size are an error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

#endif // CUVIL_TARGETS_CPU_PASSES_TD
