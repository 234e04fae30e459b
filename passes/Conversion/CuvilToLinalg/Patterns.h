//===- Patterns.h - The cuvil-to-linalg lowering patterns -------*- C++ -*-===//
#ifndef CUVIL_PASSES_CONVERSION_CUVILTOLINALG_PATTERNS_H
#define CUVIL_PASSES_CONVERSION_CUVILTOLINALG_PATTERNS_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil::lowering {

/// cuvil.act.* (element-wise), cuvil.math.*, cuvil.logic.*, cuvil.tensor.cast.
void populateElementwiseLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.gemm.*.
void populateGemmLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.conv.*, cuvil.pool.*.
void populateConvPoolLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.reduce.*, softmax / log_softmax, cuvil.norm.*.
void populateReductionLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.tensor.{index_select,gather,embedding,pad,resize}.
void populateIndexingLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.effect.*: assertions become run-time checks; prints are dropped
/// with a warning (a library does not write to stdout).
void populateEffectLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// Ops the runtime library computes (cuvil.tensor.sort): kernel calls.
void populateRuntimeCallLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.quant.quantize / dequantize / requantize (PyTorch's arithmetic).
void populateQuantLowering(const TypeConverter &tc, RewritePatternSet &patterns);
/// cuvil.constant, cuvil.shape.*, cuvil.tensor.* (data movement).
void populateShapeLowering(const TypeConverter &tc, RewritePatternSet &patterns);

} // namespace mlir::cuvil::lowering

#endif // CUVIL_PASSES_CONVERSION_CUVILTOLINALG_PATTERNS_H
