//===- Support.h - What the NPU passes share --------------------*- C++ -*-===//
//
// The geometry of the NPU's products (convolutions and linear layers seen
// alike), the tiling that fits them to the SRAM (the partitioner asks
// whether one exists, the scheduler uses it), and names for reports.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_NPU_SUPPORT_H
#define CUVIL_TARGETS_NPU_SUPPORT_H

#include "cuvil/npu_isa.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include <optional>
#include <string>

namespace mlir::cuvil::npu {

/// A convolution, depthwise convolution or linear layer (gemm: rows m =
/// h = oh, features k = cin, w = ow = 1, a 1x1 window).
struct ConvGeometry {
  bool depthwise = false, gemm = false;
  int64_t n = 1, cin = 0, h = 0, w = 0, cout = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  bool fp16 = false;    ///< the array's FP16 mode: f16 activations and weights, f32 sums
  int64_t inBytes = 1;  ///< bytes per input and weight element (1: u8/s8, 2: f16)
  int64_t outBytes = 1; ///< bytes per output element (1: u8, 2: f16, 4: f32)
  /// The reduction length of one output (ci * kh * kw; taps when depthwise).
  int64_t reduction() const { return depthwise ? kh * kw : cin * kh * kw; }
  int64_t macs() const { return n * cout * oh * ow * reduction(); }
};

ConvGeometry convGeometry(QuantConv2DOp op);
ConvGeometry linearGeometry(QuantLinearOp op);
/// An FP16 product (a float convolution or linear layer whose input and
/// weights are f16 values): its input is read as f16, `outBytes` is the
/// epilogue's (4: f32, 2: rounded to f16).
ConvGeometry convGeometry(Conv2DOp op, int64_t outBytes);
ConvGeometry linearGeometry(LinearOp op, int64_t outBytes);

/// How a product is cut into tiles: `coTile` output channels (features) at
/// a time, `rows` output rows (gemm: rows of x) at a time.
struct ConvTiling {
  int64_t coTile = 0, rows = 0;
  int64_t inRows = 0; ///< input rows one band reads (halo included)
  bool weightsOuter = true; ///< weights resident, input bands streamed (else the reverse)
};

/// The SRAM each tile may use: half the weight buffer (weights and table),
/// a quarter of the activation buffer for the input band and one for the
/// output band, half the accumulator buffer (double buffering).
/// `residual`: the output band shares its quarter with a residual band
/// (a sum fused into the epilogue), so each gets half of it.
std::optional<ConvTiling> planConv(const ConvGeometry &g, const cuvil_npu_config &config, bool residual = false);
inline bool convFits(const ConvGeometry &g, const cuvil_npu_config &config) {
  return planConv(g, config).has_value();
}

/// The casts around an FP16 product: f16 to f32 (its input) and f32 to f16
/// (its epilogue's rounding); false for anything else, null included.
bool isWidening(Operation *op);
bool isNarrowing(Operation *op);
/// The only user of `op`'s first result, if it has exactly one.
Operation *soleUser(Operation *op);

/// Bytes of a static tensor.
int64_t tensorBytes(Type type);

/// "file:line" or the name of `loc`.
std::string locationString(Location loc);
/// The module path of the layer whose weights `op` reads ("layer1.0.conv1")
/// or its location.
std::string layerName(Operation *op);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

} // namespace mlir::cuvil::npu

#endif // CUVIL_TARGETS_NPU_SUPPORT_H
