//===- Patterns.h - The cuvil-to-linalg lowering patterns -------*- C++ -*-===//
#ifndef CUVIL_PASSES_CONVERSION_CUVILTOLINALG_PATTERNS_H
#define CUVIL_PASSES_CONVERSION_CUVILTOLINALG_PATTERNS_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil::lowering {

/// cuvil.act.* (element-wise), cuvil.math.*, cuvil.logic.*, cuvil.tensor.cast.
void populateElementwiseLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.gemm.*.
void populateGemmLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.reduce.*, softmax / log_softmax, cuvil.norm.*.
void populateReductionLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.constant, cuvil.shape.*, cuvil.tensor.* (data movement).
void populateShapeLowering(const TypeConverter &tc, RewritePatternSet &patterns);

} // namespace mlir::cuvil::lowering

#endif // CUVIL_PASSES_CONVERSION_CUVILTOLINALG_PATTERNS_H
