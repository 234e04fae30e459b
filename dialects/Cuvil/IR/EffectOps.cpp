//===- EffectOps.cpp - cuvil.effect.* -------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/EffectOps.cpp.inc"

LogicalResult AssertOp::verify() {
  if (llvm::cast<RankedTensorType>(getCondition().getType()).getRank() != 0)
    return emitOpError() << "condition must be a 0-d tensor<i1>, got "
                         << getCondition().getType();
  return success();
}

LogicalResult PrintOp::splitFormat(StringRef format, SmallVectorImpl<std::string> &pieces) {
  pieces.assign(1, std::string());
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    char next = i + 1 < format.size() ? format[i + 1] : '\0';
    if (c == '{' && next == '}') {
      pieces.emplace_back();
      ++i;
    } else if ((c == '{' && next == '{') || (c == '}' && next == '}')) {
      pieces.back() += c;
      ++i;
    } else if (c == '{' || c == '}') {
      return failure();
    } else {
      pieces.back() += c;
    }
  }
  return success();
}

LogicalResult PrintOp::verify() {
  SmallVector<std::string> pieces;
  if (failed(splitFormat(getFormat(), pieces)))
    return emitOpError() << "format has a lone brace (write {{ or }} for a literal brace)";
  if (pieces.size() - 1 != getValues().size())
    return emitOpError() << "format has " << pieces.size() - 1
                         << " '{}' placeholder(s) for " << getValues().size() << " value(s)";
  return success();
}
