//===- LowerPrograms.cpp - NPU programs to runtime calls ------------------===//
//
// cuvil-npu-lower-programs: each cuvil_npu.program is serialized as
// npu_isa.h lays it out (Serialize.h) into a constant, which the weights
// object then holds, and replaced by a call of the runtime's NPU backend,
// cuvil_rt_npu_segment_N(params, program, scratch, buffers...). The call's
// buffers are built as the CPU's kernel calls build them: tensors turned
// into memrefs whose start the call receives as a bare pointer.
//
//===----------------------------------------------------------------------===//
#include "targets/NPU/Passes.h"

#include "targets/NPU/Serialize.h"
#include "targets/NPU/Support.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::cuvil::npu {

#define GEN_PASS_DEF_NPULOWERPROGRAMSPASS
#include "targets/NPU/Passes.h.inc"

namespace {

class NpuLowerProgramsPass : public impl::NpuLowerProgramsPassBase<NpuLowerProgramsPass> {
public:
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ProgramOp> programs;
    module.walk([&](ProgramOp p) { programs.push_back(p); });
    for (ProgramOp p : programs)
      if (failed(lower(module, p)))
        return signalPassFailure();
  }

private:
  LogicalResult lower(ModuleOp module, ProgramOp program) {
    FailureOr<std::vector<uint8_t>> blob = serializeProgram(program);
    if (failed(blob))
      return failure();
    int64_t buffers = program.getInputs().size() + program.getNumResults();
    // The partitioner splits segments to this limit.
    if (buffers > CUVIL_NPU_MAX_SEGMENT_BUFFERS)
      return program.emitError() << "an NPU segment with " << buffers << " inputs and outputs; the runtime takes "
                                 << CUVIL_NPU_MAX_SEGMENT_BUFFERS;
    OpBuilder b(program);
    Location loc = program.getLoc();
    Type i8 = b.getIntegerType(8);

    // The byte view of a tensor, as the CPU lowering sees 8-bit tensors.
    auto signless = [&](Type t) -> RankedTensorType {
      auto r = llvm::cast<RankedTensorType>(t);
      return r.getElementType().isUnsignedInteger(8) ? RankedTensorType::get(r.getShape(), i8) : r;
    };
    auto pointerView = [&](Value m) -> Value {
      auto type = llvm::cast<MemRefType>(m.getType());
      return b.create<memref::ReinterpretCastOp>(loc, MemRefType::get({1}, type.getElementType()), m, 0,
                                                 ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1});
    };
    auto bufferOf = [&](Value t, bool asBytes) -> Value {
      if (signless(t.getType()) != t.getType())
        t = b.create<UnrealizedConversionCastOp>(loc, signless(t.getType()), t).getResult(0);
      auto type = llvm::cast<RankedTensorType>(t.getType());
      Value m = b.create<bufferization::ToMemrefOp>(loc, MemRefType::get(type.getShape(), type.getElementType()), t,
                                                    /*read_only=*/true);
      if (!asBytes || type.getElementType() == i8)
        return pointerView(m);
      // Other elements (f16) reach the call as bytes too, so that one
      // declaration serves every segment of a buffer count: a copy into a
      // byte buffer (the DMA reads it once; the copy is small beside that).
      Value bytes = b.create<memref::AllocOp>(loc, MemRefType::get({tensorBytes(type)}, i8), b.getI64IntegerAttr(64));
      Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
      Value typed = b.create<memref::ViewOp>(loc, MemRefType::get(type.getShape(), type.getElementType()), bytes, zero,
                                             ValueRange{});
      b.create<memref::CopyOp>(loc, m, typed);
      return pointerView(bytes);
    };

    int64_t params[] = {CUVIL_NPU_SEGMENT_PARAMS_VERSION, static_cast<int64_t>(blob->size()), buffers};
    auto paramsType = RankedTensorType::get({3}, b.getI64Type());
    Value paramTensor = b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(paramsType, ArrayRef<int64_t>(params)));
    auto blobType = RankedTensorType::get({static_cast<int64_t>(blob->size())}, i8);
    ArrayRef<char> raw(reinterpret_cast<const char *>(blob->data()), blob->size());
    Value blobTensor = b.create<arith::ConstantOp>(
        loc, DenseResourceElementsAttr::get(blobType, resourceKey((program.getSymName() + ".npu").str()),
                                            HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64)));
    SmallVector<Value> args{bufferOf(paramTensor, false), bufferOf(blobTensor, false)};
    int64_t scratch = std::max<int64_t>(program.getScratchBytes(), 64);
    args.push_back(pointerView(b.create<memref::AllocOp>(loc, MemRefType::get({scratch}, i8), b.getI64IntegerAttr(64))));
    for (Value in : program.getInputs())
      args.push_back(bufferOf(in, true));
    SmallVector<Value> outs;
    // Outputs are bytes to the call (one signature per buffer count),
    // viewed with their type by the code around it.
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    for (Type t : program.getResultTypes()) {
      RankedTensorType s = signless(t);
      Value bytes = b.create<memref::AllocOp>(loc, MemRefType::get({tensorBytes(s)}, i8), b.getI64IntegerAttr(64));
      outs.push_back(b.create<memref::ViewOp>(loc, MemRefType::get(s.getShape(), s.getElementType()), bytes, zero,
                                              ValueRange{}));
      args.push_back(pointerView(bytes));
    }
    std::string callee = "cuvil_rt_npu_segment_" + std::to_string(buffers);
    if (!module.lookupSymbol(callee)) {
      OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
      auto f = mb.create<func::FuncOp>(loc, callee, mb.getFunctionType(ValueRange(args).getTypes(), {}));
      f.setPrivate();
    }
    b.create<func::CallOp>(loc, callee, TypeRange{}, args);
    SmallVector<Value> results;
    for (auto [m, t] : llvm::zip(outs, program.getResultTypes())) {
      RankedTensorType s = signless(t);
      Value r = b.create<bufferization::ToTensorOp>(loc, s, m, /*restrict=*/true, /*writable=*/true);
      if (s != t)
        r = b.create<UnrealizedConversionCastOp>(loc, t, r).getResult(0);
      results.push_back(r);
    }
    program.replaceAllUsesWith(results);
    program.erase();
    return success();
  }
};

} // namespace

} // namespace mlir::cuvil::npu
