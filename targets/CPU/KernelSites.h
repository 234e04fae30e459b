//===- KernelSites.h - Where the CPU's kernels can run ----------*- C++ -*-===//
//
// The analysis both halves of kernel selection share: the choose pass
// (ChooseKernels.cpp, which writes a #cuvil.kernel on each op) and the apply
// pass (SelectKernels.cpp, which builds the calls). A site is one product
// op with the operands the kernel would take (outside any fusion group) and
// the epilogue its group asks for.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TARGETS_CPU_KERNELSITES_H
#define CUVIL_TARGETS_CPU_KERNELSITES_H

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "support/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <limits>
#include <optional>

namespace mlir::cuvil::cpu {

/// What the kernels apply after the product: + residual, then clamp.
struct Epilogue {
  Value residual;
  bool clamp = false;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  bool empty() const { return !residual && !clamp; }
};

bool isStaticF32(Value v);
/// An f32 tensor whose dimensions but the first are static.
bool isStaticButBatchF32(Value v);
/// The same, or with 8-bit integer elements (signed, unsigned or signless)
/// where `allow8Bit`.
bool isStaticButBatch(Value v, bool allow8Bit);
ArrayRef<int64_t> shapeOf(Value v);
/// The value of a constant static f32 tensor.
std::optional<::cuvil::Tensor> constantF32(Value v);

/// A static f32 constant's elements, read in place where its bytes are a
/// resource (a model's weights: no copy of a hundred megabytes), else from
/// a copy it holds.
struct F32Weights {
  std::optional<::cuvil::Tensor> copy;
  const float *data = nullptr;
};
std::optional<F32Weights> f32Weights(Value v);

/// The body of `group` after `anchor` as an epilogue, or nothing. Values
/// are the group's own inputs (outside the region).
std::optional<Epilogue> matchEpilogue(FusedGroupOp group, Operation *anchor);
/// The op a group's kernel call is built around: its first product.
Operation *groupAnchor(FusedGroupOp g);
/// The fusion group `op` is the anchor of, or null.
FusedGroupOp anchoredGroup(Operation *op);

/// A product (convolution, linear, matmul) as the kernels take it: alone,
/// or the anchor of a group whose epilogue they apply (operands: the
/// product's, outside the group).
struct KernelSite {
  Operation *root = nullptr; ///< the product, or its group
  Operation *op = nullptr;   ///< the product
  SmallVector<Value> operands;
  Epilogue epilogue;

  Conv2DOp conv() const { return llvm::dyn_cast<Conv2DOp>(op); }
  Value result() const { return op->getResult(0); }
  Value bias() const { return operands.size() > 2 ? operands[2] : Value(); }
  /// Static f32 operands and result.
  bool isStatic() const;
  /// Static f32 operands and result but for a run-time batch (dimension 0)
  /// of the input, the result and a residual: the kernels read N from
  /// their parameters as they run.
  bool isStaticButBatch() const;
  /// Convolutions: one filter per input channel (channel multiplier 1).
  bool isDepthwise() const;
  /// Convolutions: a square `k` x `k` filter, this stride and padding
  /// everywhere, dilation 1.
  bool hasGeometry(int64_t k, int64_t stride, int64_t pad) const;
};
using ConvSite = KernelSite;

/// The site of `op`: a conv outside groups, or a group around a conv whose
/// epilogue the kernels apply.
std::optional<KernelSite> convSite(Operation *op);
/// The site of a product op itself: its group's when it anchors one whose
/// epilogue the kernels apply, else the product alone (its group is opened
/// up then).
std::optional<KernelSite> siteOf(Operation *product);

/// The convolutions a pair fusion may start from: plain ones and fusion
/// groups around one.
SmallVector<Operation *> convCandidates(ModuleOp module);

} // namespace mlir::cuvil::cpu

#endif // CUVIL_TARGETS_CPU_KERNELSITES_H
