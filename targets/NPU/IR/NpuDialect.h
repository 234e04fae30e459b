//===- NpuDialect.h - The cuvil_npu dialect ---------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_NPU_IR_NPUDIALECT_H
#define CUVIL_TARGETS_NPU_IR_NPUDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "targets/NPU/IR/NpuDialect.h.inc"

#define GET_OP_CLASSES
#include "targets/NPU/IR/NpuOps.h.inc"

#endif // CUVIL_TARGETS_NPU_IR_NPUDIALECT_H
