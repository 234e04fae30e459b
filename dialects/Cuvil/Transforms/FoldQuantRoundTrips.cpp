//===- FoldQuantRoundTrips.cpp - Float ops between quantized layers -----===//
//
// Quantized graphs (from cuvil-quantize, or imported from PyTorch-quantized
// models) keep every op that is not a quantized layer in float, between a
// dequantize and a quantize. The ops that select or move elements run on
// the storage instead, activations that clip nothing go, and the round
// trips that are left change nothing and fold.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Transforms/Passes.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"

#include "llvm/ADT/DenseMap.h"

#include <limits>
#include <tuple>

namespace mlir::cuvil {
#define GEN_PASS_DEF_CUVILFOLDQUANTROUNDTRIPSPASS
#include "dialects/Cuvil/Transforms/Passes.h.inc"

namespace {

/// transparent(dequantize(q, P)) -> dequantize(transparent(q), P): the op
/// runs on the storage, and a quantize(..., P) after it then folds.
bool sinkDequantizations(func::FuncOp f) {
  bool changed = false;
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) {
    if (commutesWithDequantize(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto d = op->getOperand(0).getDefiningOp<DequantizeOp>();
    if (!d || d.getParams().getAxis() >= 0)
      continue;
    OpBuilder b(op);
    auto storage = llvm::cast<RankedTensorType>(d.getInput().getType()).getElementType();
    auto resultType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
    Operation *onStorage = b.clone(*op);
    onStorage->setOperand(0, d.getInput());
    onStorage->getResult(0).setType(RankedTensorType::get(resultType.getShape(), storage));
    Value back = b.create<DequantizeOp>(op->getLoc(), resultType, onStorage->getResult(0), d.getParams());
    op->getResult(0).replaceAllUsesWith(back);
    op->erase();
    changed = true;
  }
  return changed;
}

/// quantize(dequantize(q, P), P) -> q; relu / hardtanh(dequantize(q, P))
/// -> the dequantized value when every value P represents is within the
/// activation's bounds (a relu: the zero point at the storage's minimum).
/// relu / hardtanh of a dequantized tensor whose every representable value
/// already lies within the activation's bounds: the identity. Returns
/// whether something folded.
bool foldActivations(func::FuncOp f) {
  bool changed = false;
  f.walk([&](Operation *op) {
    if (!llvm::isa<ReluOp, HardtanhOp>(op))
      return;
    auto d = op->getOperand(0).getDefiningOp<DequantizeOp>();
    if (!d || d.getParams().getAxis() >= 0)
      return;
    double lo = 0, hi = std::numeric_limits<double>::infinity();
    if (auto h = llvm::dyn_cast<HardtanhOp>(op)) {
      lo = h.getMinVal().convertToDouble();
      hi = h.getMaxVal().convertToDouble();
    }
    auto storage = llvm::cast<IntegerType>(
        llvm::cast<RankedTensorType>(d.getInput().getType()).getElementType());
    unsigned width = storage.getWidth();
    int64_t qmin = storage.isUnsigned() ? 0 : -(int64_t(1) << (width - 1));
    int64_t qmax = storage.isUnsigned() ? (int64_t(1) << width) - 1 : (int64_t(1) << (width - 1)) - 1;
    double scale = d.getParams().getScale()[0];
    int64_t zp = d.getParams().getZeroPoint()[0];
    // As the dequantization computes them (per tensor, in float).
    double least = quant::dequantizeValue(qmin, scale, zp, false);
    double most = quant::dequantizeValue(qmax, scale, zp, false);
    if (least >= lo && most <= hi) {
      op->getResult(0).replaceAllUsesWith(d.getResult());
      op->erase();
      changed = true;
    }
  });
  return changed;
}

} // namespace

void foldQuantRoundTrips(func::FuncOp f) {
  // Activations, then the ops that commute with dequantization (which may
  // bring further activations next to one), until nothing changes.
  for (;;) {
    bool folded = foldActivations(f);
    bool sunk = sinkDequantizations(f);
    if (!folded && !sunk)
      break;
  }
  f.walk([](QuantizeOp q) {
    auto d = q.getInput().getDefiningOp<DequantizeOp>();
    if (d && d.getParams() == q.getParams() && d.getInput().getType() == q.getResult().getType()) {
      q.getResult().replaceAllUsesWith(d.getInput());
      q->erase();
    }
  });
  // One quantization per value and parameters (a residual's input is
  // quantized for the layer and for the add that reads it).
  llvm::DenseMap<std::tuple<Value, Attribute, Type>, QuantizeOp> first;
  f.walk([&](QuantizeOp q) {
    auto [it, inserted] = first.try_emplace({q.getInput(), q.getParams(), q.getType()}, q);
    if (!inserted && it->second->getBlock() == q->getBlock()) {
      q.getResult().replaceAllUsesWith(it->second.getResult());
      q->erase();
    }
  });
  // Dequantizations left without users.
  f.walk([](DequantizeOp d) {
    if (d->use_empty())
      d->erase();
  });
}


// Max pooling: the dequantization is monotone, and every window holds a
// real element, so the storage's minimum as padding never wins, as -inf
// does not in float.
bool commutesWithDequantize(Operation *op) {
  return llvm::isa<MaxPool2DOp, ReshapeOp, FlattenOp>(op) && op->getNumOperands() == 1;
}


namespace {
struct CuvilFoldQuantRoundTripsPass final
    : impl::CuvilFoldQuantRoundTripsPassBase<CuvilFoldQuantRoundTripsPass> {
  using Base::Base;
  void runOnOperation() override { foldQuantRoundTrips(getOperation()); }
};
} // namespace

} // namespace mlir::cuvil
