//===- Commands.h - cuvil_npu ops as npu_isa.h commands ---------*- C++ -*-===//
//
// One encoding of the command ops, shared by their verifiers, the
// scheduler's dependency tracking and the serializer: what a command op is
// in the binary format (cuvil_npu_command), which unit runs it and which
// bytes it reads and writes.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_NPU_IR_COMMANDS_H
#define CUVIL_TARGETS_NPU_IR_COMMANDS_H

#include "cuvil/npu_isa.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::cuvil::npu {

/// A range of bytes a command touches: in an SRAM (space WBUF/ABUF/ACC) or
/// in DRAM region `region` (space DRAM), [lo, hi).
struct Access {
  int space = CUVIL_NPU_DRAM;
  int region = 0;
  int64_t lo = 0, hi = 0;
  bool write = false;
};

/// The command op `op` encoded (its wait and layer included).
cuvil_npu_command encodeCommand(Operation *op);

/// The unit that runs `opcode`; -1 for a barrier.
int unitOf(int32_t opcode);
const char *opcodeName(int32_t opcode);
const char *spaceName(int space);

/// The bytes `c` reads and writes (strided DMA: the range from its first
/// to its last byte).
llvm::SmallVector<Access, 4> accessesOf(const cuvil_npu_command &c);

/// The SRAM size of `space` in `config` (0 for DRAM).
int64_t spaceBytes(const cuvil_npu_config &config, int space);

/// "" when `c` is within `config` (sizes positive, SRAM accesses inside
/// their SRAM and aligned where the ISA requires it), else what is wrong.
std::string checkCommand(const cuvil_npu_command &c, const cuvil_npu_config &config);

/// The configuration of a program op's `config` words.
cuvil_npu_config configFromWords(llvm::ArrayRef<int32_t> words);
llvm::SmallVector<int32_t> wordsOfConfig(const cuvil_npu_config &config);

} // namespace mlir::cuvil::npu

#endif // CUVIL_TARGETS_NPU_IR_COMMANDS_H
