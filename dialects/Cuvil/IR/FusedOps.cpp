//===- FusedOps.cpp - cuvil.fused.* ---------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::cuvil;

// `cuvil.fused.group conv (...)`: the kind as a bare keyword.
static ParseResult parseFusionKind(OpAsmParser &parser, FusionKindAttr &kind) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<FusionKind> k = symbolizeFusionKind(keyword);
  if (!k)
    return parser.emitError(loc) << "expected a fusion kind (elementwise, conv or gemm), got '"
                                 << keyword << "'";
  kind = FusionKindAttr::get(parser.getContext(), *k);
  return success();
}
static void printFusionKind(OpAsmPrinter &printer, Operation *, FusionKindAttr kind) {
  printer << stringifyFusionKind(kind.getValue());
}

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/FusedOps.cpp.inc"

namespace {
bool isConvAnchor(Operation *op) {
  return llvm::isa<Conv1DOp, Conv2DOp, ConvTranspose1DOp, ConvTranspose2DOp>(op);
}
bool isGemmAnchor(Operation *op) {
  return llvm::isa<LinearOp, MatmulOp, BatchMatmulOp, AddmmOp>(op);
}
} // namespace

Operation *FusedGroupOp::getAnchor() {
  if (getKind() == FusionKind::Elementwise)
    return nullptr;
  Block &body = getBody().front();
  return body.empty() ? nullptr : &body.front();
}

Value FusedGroupOp::getYielded() {
  return llvm::cast<FusedYieldOp>(getBody().front().getTerminator()).getValue();
}

void FusedGroupOp::inlineBody() {
  Block &body = getBody().front();
  IRMapping map;
  for (auto [arg, input] : llvm::zip(body.getArguments(), getInputs()))
    map.map(arg, input);
  OpBuilder b(getOperation());
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  getResult().replaceAllUsesWith(map.lookup(getYielded()));
  erase();
}

LogicalResult FusedGroupOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body takes " << body.getNumArguments() << " argument(s) for "
                         << getInputs().size() << " input(s)";
  for (auto [arg, input] : llvm::zip(body.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError() << "body argument #" << arg.getArgNumber() << " has type "
                           << arg.getType() << ", input has " << input.getType();
  auto yield = llvm::dyn_cast<FusedYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with cuvil.fused.yield";
  if (yield.getValue().getType() != getResult().getType())
    return emitOpError() << "yields " << yield.getValue().getType() << " for a result of type "
                         << getResult().getType();
  if (&body.front() == yield.getOperation())
    return emitOpError() << "body is empty";
  FusionKind kind = getKind();
  Operation *anchor = kind == FusionKind::Elementwise ? nullptr : &body.front();
  if (anchor && kind == FusionKind::Conv && !isConvAnchor(anchor))
    return emitOpError() << "conv group must start with a cuvil.conv op, not '"
                         << anchor->getName() << "'";
  if (anchor && kind == FusionKind::Gemm && !isGemmAnchor(anchor))
    return emitOpError() << "gemm group must start with cuvil.gemm.linear, matmul, "
                            "batch_matmul or addmm, not '"
                         << anchor->getName() << "'";
  for (Operation &op : body.without_terminator()) {
    if (&op == anchor)
      continue;
    if (!op.hasTrait<CuvilElementwise>())
      return emitOpError() << "may only hold element-wise ops after its anchor; '"
                           << op.getName() << "' is not";
    if (anchor && op.getResult(0).getType() != anchor->getResult(0).getType())
      return emitOpError() << "epilogue op '" << op.getName() << "' changes the anchor's type "
                           << anchor->getResult(0).getType() << " to "
                           << op.getResult(0).getType();
  }
  return success();
}

LogicalResult FusedYieldOp::verify() { return success(); }
