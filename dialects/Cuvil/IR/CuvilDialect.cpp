//===- CuvilDialect.cpp - The cuvil dialect -------------------------------===//
#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/WeightDerivations.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::cuvil;

#include "dialects/Cuvil/IR/CuvilDialect.cpp.inc"
#include "dialects/Cuvil/IR/CuvilEnums.cpp.inc"

void mlir::cuvil::printExactDoubles(AsmPrinter &printer, DenseF64ArrayAttr values) {
  printer << '[';
  llvm::interleaveComma(values.asArrayRef(), printer, [&](double v) {
    char text[40];
    for (int digits = 9; digits <= 17; ++digits) {
      std::snprintf(text, sizeof text, "%.*g", digits, v);
      if (std::strtod(text, nullptr) == v)
        break;
    }
    // MLIR's float literals need a decimal point ("5.0e-05", "1.0").
    std::string s = text;
    if (s.find('.') == std::string::npos) {
      size_t e = s.find_first_of("eE");
      s.insert(e == std::string::npos ? s.size() : e, ".0");
    }
    printer << s;
  });
  printer << ']';
}

FailureOr<DenseF64ArrayAttr> mlir::cuvil::parseExactDoubles(AsmParser &parser) {
  SmallVector<double> values;
  if (failed(parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&]() -> ParseResult {
        double v;
        if (failed(parser.parseFloat(v)))
          return failure();
        values.push_back(v);
        return success();
      })))
    return failure();
  return DenseF64ArrayAttr::get(parser.getContext(), values);
}

#define GET_ATTRDEF_CLASSES
#include "dialects/Cuvil/IR/CuvilAttrs.cpp.inc"

std::string mlir::cuvil::resourceKey(llvm::StringRef name) {
  std::string key;
  for (char c : name)
    key += (llvm::isAlnum(c) || c == '_' || c == '.') ? c : '_';
  if (key.empty() || llvm::isDigit(key[0]) || key[0] == '.')
    key.insert(key.begin(), '_');
  return key;
}

LogicalResult KernelConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                       StringRef kernel, StringRef variant, StringRef source,
                                       StringRef reason, StringRef schedule) {
  auto isName = [](StringRef s) {
    return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_' || c == '-'; });
  };
  if (kernel.empty() || !isName(kernel))
    return emitError() << "#cuvil.kernel: 'kernel' must be a name such as conv2d, linear or "
                          "linalg, got '"
                       << kernel << "'";
  if (!isName(variant) || !isName(source) || !isName(schedule))
    return emitError() << "#cuvil.kernel: 'variant', 'source' and 'schedule' must be names (letters, "
                          "digits, '_', '-')";
  return success();
}

LogicalResult QuantParamsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                      DenseF64ArrayAttr scale, DenseI64ArrayAttr zeroPoint,
                                      int64_t axis) {
  if (!scale || !zeroPoint || scale.empty())
    return emitError() << "#cuvil.quant needs at least one scale";
  if (scale.size() != zeroPoint.size())
    return emitError() << "#cuvil.quant has " << scale.size() << " scale(s) but "
                       << zeroPoint.size() << " zero point(s)";
  if (axis < -1)
    return emitError() << "#cuvil.quant axis must be -1 (per tensor) or a dimension, got " << axis;
  if (axis == -1 && scale.size() != 1)
    return emitError() << "#cuvil.quant per tensor (axis -1) takes one scale, got "
                       << scale.size();
  for (double s : scale.asArrayRef())
    if (!(s > 0) || !std::isfinite(s))
      return emitError() << "#cuvil.quant scales must be positive and finite, got " << s;
  return success();
}

LogicalResult CuvilDialect::verifyOperationAttribute(Operation *op, NamedAttribute attr) {
  if (attr.getName() == kKernelConfigAttrName && !llvm::isa<KernelConfigAttr>(attr.getValue()))
    return op->emitOpError() << "'" << kKernelConfigAttrName
                             << "' must be a #cuvil.kernel<kernel = ..., variant = ...>";
  if (attr.getName() == kCompileStageAttrName &&
      (!llvm::isa<ModuleOp>(op) || !llvm::isa<StringAttr>(attr.getValue())))
    return op->emitOpError() << "'" << kCompileStageAttrName << "' must be a string on a module";
  if (attr.getName() == kPrecisionAttrName) {
    auto s = llvm::dyn_cast<StringAttr>(attr.getValue());
    if (!s || !llvm::is_contained({"int8", "fp16", "bf16", "fp32"}, s.getValue()))
      return op->emitOpError() << "'" << kPrecisionAttrName
                               << "' must be \"int8\", \"fp16\", \"bf16\" or \"fp32\"";
  }
  if ((attr.getName() == kQuantInputAttrName || attr.getName() == kQuantOutputAttrName ||
       attr.getName() == kQuantWeightAttrName) &&
      !llvm::isa<QuantParamsAttr>(attr.getValue()))
    return op->emitOpError() << "'" << attr.getName().getValue()
                             << "' must be a #cuvil.quant<scale = ..., zero_point = ...>";
  return success();
}

void CuvilDialect::initialize() {
  derivations_ = std::make_shared<WeightDerivations>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Cuvil/IR/CuvilAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/ActivationOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/MathOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/LogicOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/GemmOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/ConvOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/NormOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/PoolOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/ReduceOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/ShapeOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/TensorOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/EffectOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/FusedOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Cuvil/IR/QuantOps.cpp.inc"
      >();
}

Operation *CuvilDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
