//===- CuvilToLinalg.h - The cuvil-to-linalg lowering as patterns -*- C++ -*-===//
//
// The public face of convert-cuvil-to-linalg for targets and plugins that
// build their own lowering: the type converter, every pattern, and the
// legality the pass converts to. The pass itself adds what is not a
// pattern (fusion groups kept as one loop nest, run-time check numbering,
// the status result).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_PASSES_CONVERSION_CUVILTOLINALG_CUVILTOLINALG_H
#define CUVIL_PASSES_CONVERSION_CUVILTOLINALG_CUVILTOLINALG_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil {

/// Tensors of ui8 become i8 (arith works on signless integers; the patterns
/// keep treating them as unsigned); every other type is unchanged.
TypeConverter createCuvilToLinalgTypeConverter();

/// Every cuvil op's lowering to linalg, tensor, arith and math on tensors
/// (element-wise, GEMMs, convolutions and pooling, reductions and norms,
/// views, indexing, effects, runtime-kernel calls), plus the signature
/// conversions of func and scf.
void populateCuvilToLinalgPatterns(TypeConverter &converter, RewritePatternSet &patterns);

/// The pass's legality: the cuvil dialect illegal, linalg / tensor / arith /
/// math / bufferization legal, ops of other dialects kept, functions,
/// calls, returns and scf legal once their types are. Adds the scf
/// structural patterns that go with it.
void configureCuvilToLinalgTarget(ConversionTarget &target, TypeConverter &converter,
                                  RewritePatternSet &patterns);

} // namespace mlir::cuvil

#endif // CUVIL_PASSES_CONVERSION_CUVILTOLINALG_CUVILTOLINALG_H
