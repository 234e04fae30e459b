//===- ModuleWriter.h - Write modules with large weights --------*- C++ -*-===//
//
// Writes a module as MLIR text or bytecode without materialising the weights
// twice: MLIR's text printer builds each resource's hex string in memory
// (2x the blob); here the ops are printed with resources elided and the
// dialect_resources section is streamed blob by blob in small chunks.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_MODULEWRITER_H
#define CUVIL_DIALECT_CUVIL_IR_MODULEWRITER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil {

/// Writes `module` to `os` as text (with debug locations) or bytecode.
LogicalResult writeModule(ModuleOp module, llvm::raw_ostream &os, bool bytecode);

} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_MODULEWRITER_H
