//===- CuvilDialect.h - The cuvil dialect -----------------------*- C++ -*-===//
//
// The dialect class, its enums and attributes, and the rule helpers that the
// generated op code calls (TypeRules.h).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
#define CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/Cuvil/IR/CuvilDialect.h.inc"
#include "dialects/Cuvil/IR/CuvilEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Cuvil/IR/CuvilAttrs.h.inc"

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
