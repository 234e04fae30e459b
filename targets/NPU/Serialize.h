//===- Serialize.h - NPU programs as bytes ----------------------*- C++ -*-===//
#ifndef CUVIL_TARGETS_NPU_SERIALIZE_H
#define CUVIL_TARGETS_NPU_SERIALIZE_H

#include "targets/NPU/IR/NpuDialect.h"

#include <cstdint>
#include <vector>

namespace mlir::cuvil::npu {

/// `program` in runtime/include/cuvil/npu_isa.h's binary format: header,
/// commands, regions, layers, constants, strings. Fails (with an error at
/// the op) when a size does not fit the format's 32-bit fields.
FailureOr<std::vector<uint8_t>> serializeProgram(ProgramOp program);

} // namespace mlir::cuvil::npu

#endif // CUVIL_TARGETS_NPU_SERIALIZE_H
