//===- NpuDialect.cpp - The cuvil_npu dialect and its verifiers -----------===//
#include "targets/NPU/IR/NpuDialect.h"

#include "targets/NPU/IR/Commands.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::cuvil::npu;

#include "targets/NPU/IR/NpuDialect.cpp.inc"

void NpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "targets/NPU/IR/NpuOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "targets/NPU/IR/NpuOps.cpp.inc"

namespace {

/// Bytes of a static tensor; -1 when its shape is not static.
int64_t tensorBytes(Type type) {
  auto t = llvm::dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return -1;
  int64_t bits = t.getElementType().getIntOrFloatBitWidth();
  return t.getNumElements() * ((bits + 7) / 8);
}

LogicalResult staticTensors(Operation *op, TypeRange types, StringRef what) {
  for (auto [i, t] : llvm::enumerate(types))
    if (tensorBytes(t) < 0)
      return op->emitOpError() << what << " " << i << " (" << t
                               << ") has no static shape: the NPU runs static shapes only";
  return success();
}

} // namespace

LogicalResult SegmentOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "takes " << getInputs().size() << " inputs but its block has "
                         << body.getNumArguments() << " arguments";
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getInputs(), body.getArguments())))
    if (std::get<0>(pair).getType() != std::get<1>(pair).getType())
      return emitOpError() << "input " << i << " is " << std::get<0>(pair).getType()
                           << " but its block argument is " << std::get<1>(pair).getType();
  auto yield = llvm::cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values whose types differ from its results";
  if (failed(staticTensors(*this, getInputs().getTypes(), "input")) ||
      failed(staticTensors(*this, getResultTypes(), "result")))
    return failure();
  return success();
}

LogicalResult ProgramOp::verify() {
  if (getConfig().size() != sizeof(cuvil_npu_config) / sizeof(int32_t))
    return emitOpError() << "config has " << getConfig().size() << " words, expected "
                         << sizeof(cuvil_npu_config) / sizeof(int32_t);
  cuvil_npu_config config = configFromWords(getConfig());
  if (config.array_k <= 0 || config.array_n <= 0 || config.wbuf_bytes <= 0 || config.abuf_bytes <= 0 ||
      config.acc_bytes <= 0 || config.dram_bytes_per_cycle <= 0 || config.vector_lanes <= 0)
    return emitOpError() << "config: the array, SRAM sizes, bandwidth and vector lanes must be positive";
  if (failed(staticTensors(*this, getInputs().getTypes(), "input")) ||
      failed(staticTensors(*this, getResultTypes(), "result")))
    return failure();
  if (getLayers().size() != getLayerKinds().size() || getLayers().size() != getLayerMacs().size())
    return emitOpError() << "layers, layer_kinds and layer_macs differ in length";
  if (getScratchBytes() < 0)
    return emitOpError() << "scratch_bytes is negative";
  // DRAM regions: inputs, results, constants, scratch.
  SmallVector<int64_t> regionBytes;
  for (Type t : getInputs().getTypes())
    regionBytes.push_back(tensorBytes(t));
  for (Type t : getResultTypes())
    regionBytes.push_back(tensorBytes(t));
  auto constants = llvm::dyn_cast<ShapedType>(getConstants().getType());
  regionBytes.push_back(constants ? constants.getNumElements() : 0);
  regionBytes.push_back(getScratchBytes());

  // Commands: each within the machine, its DRAM accesses within their
  // region, its waits on earlier commands only (the in-order dispatcher
  // would otherwise wait forever).
  int32_t issued[CUVIL_NPU_NUM_UNITS] = {0, 0, 0, 0};
  for (Operation &op : getBody().front()) {
    if (op.getDialect() != getOperation()->getDialect() || llvm::isa<SegmentOp, ProgramOp, YieldOp>(op))
      return op.emitOpError() << "is not an NPU command";
    cuvil_npu_command c = encodeCommand(&op);
    for (int u = 0; u < CUVIL_NPU_NUM_UNITS; ++u)
      if (c.wait[u] > issued[u])
        return op.emitOpError() << "waits for " << c.wait[u] << " commands of unit " << u << " but only "
                                << issued[u] << " come before it in the stream";
    if (c.layer < -1 || c.layer >= static_cast<int64_t>(getLayers().size()))
      return op.emitOpError() << "names layer " << c.layer << " of " << getLayers().size();
    for (const Access &a : accessesOf(c)) {
      if (a.space != CUVIL_NPU_DRAM)
        continue;
      if (a.region < 0 || a.region >= static_cast<int64_t>(regionBytes.size()))
        return op.emitOpError() << "names DRAM region " << a.region << " of " << regionBytes.size();
      if (a.lo < 0 || a.hi > regionBytes[a.region])
        return op.emitOpError() << (a.write ? "writes" : "reads") << " DRAM region " << a.region << " at ["
                                << a.lo << ", " << a.hi << "), outside its " << regionBytes[a.region]
                                << " bytes";
    }
    if (int u = unitOf(c.opcode); u >= 0)
      ++issued[u];
  }
  return success();
}

namespace {

LogicalResult verifyCommand(Operation *op) {
  auto program = op->getParentOfType<ProgramOp>();
  if (!program)
    return op->emitOpError() << "must be inside a cuvil_npu.program";
  auto wait = op->getAttrOfType<DenseI32ArrayAttr>("wait");
  if (!wait || wait.size() != CUVIL_NPU_NUM_UNITS)
    return op->emitOpError() << "wait must have one count per unit (load, store, mac, vec)";
  if (program.getConfig().size() != sizeof(cuvil_npu_config) / sizeof(int32_t))
    return success(); // the program's verifier says so
  std::string problem = checkCommand(encodeCommand(op), configFromWords(program.getConfig()));
  if (!problem.empty())
    return op->emitOpError() << problem;
  return success();
}

} // namespace

LogicalResult LoadOp::verify() { return verifyCommand(*this); }
LogicalResult StoreOp::verify() { return verifyCommand(*this); }
LogicalResult MatmulOp::verify() { return verifyCommand(*this); }
LogicalResult RequantOp::verify() { return verifyCommand(*this); }
LogicalResult AddOp::verify() { return verifyCommand(*this); }
LogicalResult PoolOp::verify() { return verifyCommand(*this); }
LogicalResult BarrierOp::verify() { return verifyCommand(*this); }
