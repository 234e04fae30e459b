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

#include "mlir/IR/OpDefinition.h"

#include <memory>

namespace mlir::cuvil {
class WeightDerivations;
}

#include "dialects/Cuvil/IR/CuvilDialect.h.inc"
#include "dialects/Cuvil/IR/CuvilEnums.h.inc"

namespace mlir::cuvil {
/// `[d, d, ...]` with each double in the fewest digits that parse back to
/// it exactly (#cuvil.quant scales), and its parser.
void printExactDoubles(AsmPrinter &printer, DenseF64ArrayAttr values);
FailureOr<DenseF64ArrayAttr> parseExactDoubles(AsmParser &parser);
} // namespace mlir::cuvil

#define GET_ATTRDEF_CLASSES
#include "dialects/Cuvil/IR/CuvilAttrs.h.inc"

namespace mlir::cuvil {
/// Marks element-wise ops (Cuvil_Elementwise in ODS): each result element
/// depends only on the operand elements at the same broadcast position.
template <typename ConcreteType>
class CuvilElementwise : public OpTrait::TraitBase<ConcreteType, CuvilElementwise> {};

/// A dense_resource key made of letters, digits, '_' and '.' only: MLIR
/// prints resource keys as they are and parses them as identifiers, so a
/// weight named "block1-0.conv" would not read back.
std::string resourceKey(llvm::StringRef name);

/// On a model function's argument or result: its f32 (f64) tensor of shape
/// S x 2 is a complex tensor of shape S, (real, imaginary) pairs, the C
/// API's c64 (c128). Complex numbers exist only at the model's boundary:
/// inside, ops work on the pairs.
inline constexpr llvm::StringLiteral kComplexAttrName = "cuvil.complex";

/// On a model function's argument with dynamic dimensions (--input-shape
/// 0=1xseq:1..512xf32): per dimension its symbol ("" for a static one;
/// inputs sharing a symbol have equal sizes in every run) and its bounds,
/// [min0, max0, min1, max1, ...] (a static dimension's are its size). The
/// code generator plans the arena at the maxima; the library's entry checks
/// every run's sizes against both.
inline constexpr llvm::StringLiteral kDimSymbolsAttrName = "cuvil.dim_symbols";
inline constexpr llvm::StringLiteral kDimBoundsAttrName = "cuvil.dim_bounds";

/// On a kernel op: its KernelConfigAttr (the choose pass writes it, the
/// target's code generation reads it).
inline constexpr llvm::StringLiteral kKernelConfigAttrName = "cuvil.kernel";

/// On a function: the device its code runs on ("cuda"): a copy of the model
/// function that a device target made, whose loops become the device's
/// kernels; the CPU passes that add host calls (branch counters, profiling)
/// leave it alone.
inline constexpr llvm::StringLiteral kDeviceFunctionAttrName = "cuvil.device";

/// On a module: the compile stage its IR has reached ("kernels": after the
/// graph pipeline and the kernel choice, as `cuvil-export --emit mlir`
/// writes it). The compile driver resumes from there instead of running the
/// graph pipeline again.
inline constexpr llvm::StringLiteral kCompileStageAttrName = "cuvil.compile_stage";
/// The precision cuvil-quantize chose for a layer: "int8", "fp16", "bf16"
/// or "fp32" (a string on the layer's op).
inline constexpr llvm::StringLiteral kPrecisionAttrName = "cuvil.precision";
/// A layer's activation parameters (#cuvil.quant) before cuvil-quantize-layers
/// rewrites it: its input's and output's; optionally its weights'; an
/// element-wise add's second operand's.
inline constexpr llvm::StringLiteral kQuantInputAttrName = "cuvil.quant.input";
inline constexpr llvm::StringLiteral kQuantRhsAttrName = "cuvil.quant.rhs";
inline constexpr llvm::StringLiteral kQuantOutputAttrName = "cuvil.quant.output";
inline constexpr llvm::StringLiteral kQuantWeightAttrName = "cuvil.quant.weight";
/// On a module cuvil-quantize wrote: the digest of the calibration table its
/// scales come from; the compiled library's manifest carries it.
inline constexpr llvm::StringLiteral kCalibrationTableAttrName = "cuvil.calibration_table";
} // namespace mlir::cuvil

#endif // CUVIL_DIALECT_CUVIL_IR_CUVILDIALECT_H
