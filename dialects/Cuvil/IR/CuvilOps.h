//===- CuvilOps.h - All cuvil ops -------------------------------*- C++ -*-===//
//
// Include this to use any cuvil op. Each family's declarations come from its
// own generated header.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILOPS_H
#define CUVIL_DIALECT_CUVIL_IR_CUVILOPS_H

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/TypeRules.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ActivationOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/MathOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/LogicOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/GemmOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ConvOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/NormOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/PoolOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ReduceOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/ShapeOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/TensorOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/EffectOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/FusedOps.h.inc"
#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/QuantOps.h.inc"

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILOPS_H
