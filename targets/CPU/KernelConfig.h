//===- KernelConfig.h - The CPU's kernel configurations --------*- C++ -*-===//
//
// Kernel choices as data. Every convolution, linear layer, matrix product
// and 2-D max pooling gets a #cuvil.kernel attribute (cuvil.kernel) from a
// configuration provider: the built-in heuristics here, a device profile or
// a tuning database later. The apply pass (cuvil-select-cpu-kernels) builds
// exactly what the attribute names, after checking that the kernel can run
// the op (checkKernelChoice), so a configuration edited by hand either
// gives a library with the same numerics or a precise error.
//
// The CPU's kernels and variants (the names the attribute takes):
//   conv2d               im2col | pixel_rows | winograd_f4x4 | winograd_f2x2
//   depthwise_conv2d     direct
//   depthwise_pointwise  banded  (on a 1x1 conv: runs with its 3x3
//                                 depthwise producer in bands of rows)
//   pointwise_depthwise  banded  (on a 3x3 depthwise conv: with its 1x1
//                                 producer)
//   linear               weight_rows | input_rows
//   matmul               packed
//   max_pool2d           direct
//   qconv2d              u8s8 | u8s8_pixel_rows (cuvil.quant.conv2d: u8 x s8,
//                                 int32 sums; pixels in the vector lanes, or
//                                 as GEMM rows for layers with few pixels)
//   qlinear              u8s8    (cuvil.quant.linear)
//   linalg               (no kernel: the generic lowering through linalg)
//
// Schedules (the attribute's `schedule`; empty: the runtime plans): the
// GEMM's work split, on conv2d im2col / pixel_rows and linear
// weight_rows / input_rows: fine | whole, and stream where A is packed
// once (pixel_rows, input_rows). A tuning database chooses them.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_KERNELCONFIG_H
#define CUVIL_TARGETS_CPU_KERNELCONFIG_H

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <string>
#include <vector>

namespace cuvil::tuning {
class TuningDatabase;
}

namespace mlir::cuvil::cpu {

namespace kernel {
inline constexpr llvm::StringLiteral Conv2d = "conv2d";
inline constexpr llvm::StringLiteral Depthwise = "depthwise_conv2d";
inline constexpr llvm::StringLiteral DepthwisePointwise = "depthwise_pointwise";
inline constexpr llvm::StringLiteral PointwiseDepthwise = "pointwise_depthwise";
inline constexpr llvm::StringLiteral Linear = "linear";
inline constexpr llvm::StringLiteral Matmul = "matmul";
inline constexpr llvm::StringLiteral MaxPool2d = "max_pool2d";
inline constexpr llvm::StringLiteral QConv2d = "qconv2d";
inline constexpr llvm::StringLiteral QLinear = "qlinear";
inline constexpr llvm::StringLiteral Linalg = "linalg";
} // namespace kernel

namespace variant {
inline constexpr llvm::StringLiteral Im2col = "im2col";
inline constexpr llvm::StringLiteral PixelRows = "pixel_rows";
inline constexpr llvm::StringLiteral WinogradF4 = "winograd_f4x4";
inline constexpr llvm::StringLiteral WinogradF2 = "winograd_f2x2";
inline constexpr llvm::StringLiteral Direct = "direct";
inline constexpr llvm::StringLiteral Banded = "banded";
inline constexpr llvm::StringLiteral WeightRows = "weight_rows";
inline constexpr llvm::StringLiteral InputRows = "input_rows";
inline constexpr llvm::StringLiteral Packed = "packed";
inline constexpr llvm::StringLiteral U8S8 = "u8s8";
inline constexpr llvm::StringLiteral U8S8PixelRows = "u8s8_pixel_rows";
} // namespace variant

/// The GEMM kernels' schedules: the work split (kernel_abi.h's
/// CUVIL_SPLIT_*); "" leaves it to the runtime's planner.
namespace schedule {
inline constexpr llvm::StringLiteral Fine = "fine";     // at least eight work items per thread
inline constexpr llvm::StringLiteral Whole = "whole";   // the planned blocks, not rounded to the threads
inline constexpr llvm::StringLiteral Stream = "stream"; // B streamed per K-block, not A packed whole
} // namespace schedule

/// One choice: a kernel, its variant, why, and its schedule.
struct KernelChoice {
  std::string kernel, variant, reason;
  std::string schedule = {};
};

/// The ops that take a configuration.
bool isKernelOp(Operation *op);
/// Every such op of `module`, in order.
SmallVector<Operation *> kernelOps(ModuleOp module);

/// The op's configuration, or null.
KernelConfigAttr kernelConfigOf(Operation *op);
void setKernelConfig(Operation *op, const KernelChoice &choice, StringRef source);

/// Empty when `kernel`/`variant` can run `op` (a kernel op), else why not.
/// `kernel::Linalg` can run anything.
std::string checkKernelChoice(Operation *op, StringRef kernel, StringRef variant);
struct KernelSite;
/// For the consumer of a banded pair (`kind`: kernel::DepthwisePointwise on
/// the 1x1 conv, kernel::PointwiseDepthwise on the 3x3 depthwise one):
/// empty when it can run with its producer (then written to `producer`),
/// else why not.
std::string checkBandedPair(Conv2DOp consumer, StringRef kind, KernelSite *producer);

/// Empty when `kernel`/`variant` takes `schedule` ("" always), else why not.
std::string checkSchedule(StringRef kernel, StringRef variant, StringRef schedule);
/// The schedules `kernel`/`variant` takes besides the runtime's own ("").
std::vector<std::string> schedulesOf(StringRef kernel, StringRef variant);
/// The FLAGS bits of a checked schedule (CUVIL_SPLIT_* << CUVIL_FLAG_SPLIT_SHIFT).
int64_t scheduleFlags(StringRef schedule);

/// The choices `op` can take ("conv2d/im2col", ...), for messages.
std::vector<std::string> validKernelChoices(Operation *op);

/// A source of configurations. Providers run in order; each configures the
/// kernel ops that still have none and that it knows about.
class KernelConfigProvider {
public:
  virtual ~KernelConfigProvider();
  /// The name the attributes' `source` records ("heuristics").
  virtual std::string name() const = 0;
  /// Writes a configuration on the kernel ops of `module` it chooses for.
  virtual void configure(ModuleOp module) = 0;
};

/// The built-in heuristics' knobs (cuvil-choose-cpu-kernels' options).
struct HeuristicOptions {
  bool winograd = true;
  bool winograd2x2 = true;
  int64_t winogradMinTiles = 16;
  int64_t fuseDepthwiseMinBytes = 1 << 20;
};

/// Today's heuristics: the default provider, which configures every kernel
/// op (kernel::Linalg where no kernel applies).
std::unique_ptr<KernelConfigProvider> createHeuristicProvider(const HeuristicOptions &options);

/// The kernel's signature, the tuning database's key: the op, its operand
/// and result types (weights marked as constants, their values left out),
/// its attributes but the configuration (quantization parameters as their
/// kind), the fused epilogue, and for a convolution that can run in bands
/// with its producer, the producer's signature. Equal signatures run the
/// same code at the same speed, whatever model they are in.
std::string kernelSignature(Operation *op);

/// The layer an op belongs to, for people: its module path
/// ("layer1.0.conv1") or its source line ("model.py:17").
std::string kernelLayerName(Operation *op);

/// The configurations the tuner tries on `op`: validKernelChoices without
/// the generic lowering (its time is not one call's).
std::vector<KernelChoice> tunableChoices(Operation *op);

/// Configurations from a tuning database, for the records of `device` and
/// this compiler (tuning/TuningDatabase.h); the kernels it has no record
/// for are left to the next provider (a remark lists them), records for
/// another device or compiler version that match a kernel are ignored with
/// a warning naming them.
std::unique_ptr<KernelConfigProvider>
createTuningDbProvider(std::shared_ptr<const ::cuvil::tuning::TuningDatabase> db, std::string dbName,
                       std::string device);

/// The kernel report: one entry per kernel op, in order (op, location,
/// shapes, kernel, variant, source, reason, epilogue).
llvm::json::Array kernelReport(ModuleOp module);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGETS_CPU_KERNELCONFIG_H
