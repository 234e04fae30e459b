//===- SizeBounds.cpp - Upper bounds of run-time sizes -------------------===//
#include "targets/CPU/SizeBounds.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::cuvil::cpu {
namespace {

using Bound = std::optional<int64_t>;

Bound mul(Bound a, Bound b) {
  int64_t r;
  if (!a || !b || __builtin_mul_overflow(*a, *b, &r))
    return std::nullopt;
  return r;
}
Bound add(Bound a, Bound b) {
  int64_t r;
  if (!a || !b || __builtin_add_overflow(*a, *b, &r))
    return std::nullopt;
  return r;
}

/// An affine expression's bound, its dims and symbols at their bounds:
/// sums, products by constants and divisions by positive constants are
/// monotone in operands >= 0; `mod c` is below c.
Bound exprBound(AffineExpr e, ArrayRef<Bound> dims, ArrayRef<Bound> symbols) {
  if (auto c = llvm::dyn_cast<AffineConstantExpr>(e))
    return c.getValue() >= 0 ? Bound(c.getValue()) : Bound(0); // a negative term only lowers it
  if (auto d = llvm::dyn_cast<AffineDimExpr>(e))
    return dims[d.getPosition()];
  if (auto s = llvm::dyn_cast<AffineSymbolExpr>(e))
    return symbols[s.getPosition()];
  auto bin = llvm::cast<AffineBinaryOpExpr>(e);
  auto rhsConstant = llvm::dyn_cast<AffineConstantExpr>(bin.getRHS());
  Bound lhs = exprBound(bin.getLHS(), dims, symbols);
  switch (e.getKind()) {
  case AffineExprKind::Add: {
    // x - c: x's bound (the constant term is negative).
    if (auto mulRhs = llvm::dyn_cast<AffineBinaryOpExpr>(bin.getRHS());
        mulRhs && mulRhs.getKind() == AffineExprKind::Mul)
      if (auto k = llvm::dyn_cast<AffineConstantExpr>(mulRhs.getRHS()); k && k.getValue() < 0)
        return lhs;
    return add(lhs, exprBound(bin.getRHS(), dims, symbols));
  }
  case AffineExprKind::Mul:
    if (rhsConstant && rhsConstant.getValue() < 0)
      return std::nullopt;
    return mul(lhs, exprBound(bin.getRHS(), dims, symbols));
  case AffineExprKind::FloorDiv:
    if (!rhsConstant || rhsConstant.getValue() <= 0 || !lhs)
      return std::nullopt;
    return *lhs / rhsConstant.getValue();
  case AffineExprKind::CeilDiv:
    if (!rhsConstant || rhsConstant.getValue() <= 0 || !lhs)
      return std::nullopt;
    return (*lhs + rhsConstant.getValue() - 1) / rhsConstant.getValue();
  case AffineExprKind::Mod:
    if (!rhsConstant || rhsConstant.getValue() <= 0)
      return std::nullopt;
    return rhsConstant.getValue() - 1;
  default:
    return std::nullopt;
  }
}

Bound mapBound(AffineMap map, ValueRange operands, bool takeMax) {
  SmallVector<Bound> dims, symbols;
  for (unsigned i = 0; i < map.getNumDims(); ++i)
    dims.push_back(upperBound(operands[i]));
  for (unsigned i = 0; i < map.getNumSymbols(); ++i)
    symbols.push_back(upperBound(operands[map.getNumDims() + i]));
  Bound best;
  for (AffineExpr e : map.getResults()) {
    Bound b = exprBound(e, dims, symbols);
    if (takeMax && !b)
      return std::nullopt; // max: every result must be bounded
    if (!b)
      continue; // min: a bounded result bounds it
    best = !best ? b : takeMax ? std::max(*best, *b) : std::min(*best, *b);
  }
  return best;
}

/// The bound of a mixed size (a constant or a value).
Bound foldResultBound(OpFoldResult r) {
  if (auto a = llvm::dyn_cast<Attribute>(r))
    return llvm::cast<IntegerAttr>(a).getInt();
  return upperBound(llvm::cast<Value>(r));
}

} // namespace

std::optional<int64_t> dimUpperBound(Value shaped, int64_t dim) {
  auto type = llvm::cast<ShapedType>(shaped.getType());
  if (dim < 0 || dim >= type.getRank())
    return std::nullopt;
  if (!type.isDynamicDim(dim))
    return type.getDimSize(dim);
  // A data-dependent loop carries run-time sizes unchanged (the hybrid
  // check of RunTimeSymbols.cpp): its before region's arguments have the
  // sizes it starts from, its results and after region's arguments those
  // its condition forwards.
  // A data-dependent if's result: the larger of its branches'.
  if (auto branch = llvm::dyn_cast_or_null<scf::IfOp>(shaped.getDefiningOp())) {
    unsigned k = llvm::cast<OpResult>(shaped).getResultNumber();
    if (branch.getElseRegion().empty())
      return std::nullopt;
    Bound a = dimUpperBound(branch.thenYield().getOperand(k), dim);
    Bound b = dimUpperBound(branch.elseYield().getOperand(k), dim);
    return a && b ? Bound(std::max(*a, *b)) : std::nullopt;
  }
  if (auto loop = llvm::dyn_cast_or_null<scf::WhileOp>(shaped.getDefiningOp()))
    return dimUpperBound(loop.getConditionOp().getArgs()[llvm::cast<OpResult>(shaped).getResultNumber()], dim);
  if (auto arg = llvm::dyn_cast<BlockArgument>(shaped))
    if (auto loop = llvm::dyn_cast<scf::WhileOp>(arg.getOwner()->getParentOp()))
      return arg.getOwner() == loop.getBeforeBody()
                 ? dimUpperBound(loop.getInits()[arg.getArgNumber()], dim)
                 : dimUpperBound(loop.getConditionOp().getArgs()[arg.getArgNumber()], dim);
  if (auto arg = llvm::dyn_cast<BlockArgument>(shaped)) {
    auto func = llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    if (!func || arg.getOwner() != &func.getBody().front())
      return std::nullopt;
    auto bounds = func.getArgAttrOfType<DenseI64ArrayAttr>(arg.getArgNumber(), kDimBoundsAttrName);
    if (!bounds || bounds.size() != 2 * type.getRank())
      return std::nullopt;
    return bounds[2 * dim + 1];
  }
  Operation *def = shaped.getDefiningOp();
  // The dim-th dynamic size operand of an allocation-like op.
  auto nthDynamic = [&](ValueRange sizes) -> Bound {
    int64_t k = 0;
    for (int64_t d = 0; d < dim; ++d)
      k += type.isDynamicDim(d);
    return k < int64_t(sizes.size()) ? upperBound(sizes[k]) : std::nullopt;
  };
  if (auto alloc = llvm::dyn_cast<memref::AllocOp>(def))
    return nthDynamic(alloc.getDynamicSizes());
  if (auto alloca = llvm::dyn_cast<memref::AllocaOp>(def))
    return nthDynamic(alloca.getDynamicSizes());
  if (auto view = llvm::dyn_cast<memref::ViewOp>(def))
    return nthDynamic(view.getSizes());
  if (auto empty = llvm::dyn_cast<tensor::EmptyOp>(def))
    return nthDynamic(empty.getDynamicSizes());
  if (auto sized = llvm::dyn_cast<OffsetSizeAndStrideOpInterface>(def))
    return foldResultBound(sized.getMixedSizes()[dim]);
  if (auto collapse = llvm::dyn_cast<memref::CollapseShapeOp>(def)) {
    Bound b = 1;
    for (int64_t d : collapse.getReassociationIndices()[dim])
      b = mul(b, dimUpperBound(collapse.getSrc(), d));
    return b;
  }
  if (auto collapse = llvm::dyn_cast<tensor::CollapseShapeOp>(def)) {
    Bound b = 1;
    for (int64_t d : collapse.getReassociationIndices()[dim])
      b = mul(b, dimUpperBound(collapse.getSrc(), d));
    return b;
  }
  if (auto expand = llvm::dyn_cast<memref::ExpandShapeOp>(def))
    return nthDynamic(expand.getOutputShape());
  if (auto expand = llvm::dyn_cast<tensor::ExpandShapeOp>(def))
    return nthDynamic(expand.getOutputShape());
  // Casts and conversions that keep the shape.
  if (llvm::isa<memref::CastOp, tensor::CastOp, bufferization::ToMemrefOp, bufferization::ToTensorOp>(def))
    return dimUpperBound(def->getOperand(0), dim);
  // An op whose result has its operand's shape (element-wise, destination
  // style): the bound of the init's, else of a same-shaped operand's.
  if (auto dps = llvm::dyn_cast<DestinationStyleOpInterface>(def))
    if (auto r = llvm::dyn_cast<OpResult>(shaped); r && r.getResultNumber() < dps.getNumDpsInits())
      return dimUpperBound(dps.getDpsInits()[r.getResultNumber()], dim);
  return std::nullopt;
}

std::optional<int64_t> upperBound(Value size) {
  APInt constant;
  if (matchPattern(size, m_ConstantInt(&constant)))
    return constant.getSExtValue() >= 0 ? Bound(constant.getSExtValue()) : Bound(0);
  Operation *def = size.getDefiningOp();
  if (!def)
    return std::nullopt;
  auto constantIndex = [](Value v) -> std::optional<int64_t> {
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return c.getSExtValue();
    return std::nullopt;
  };
  if (auto dim = llvm::dyn_cast<memref::DimOp>(def)) {
    std::optional<int64_t> d = constantIndex(dim.getIndex());
    return d ? dimUpperBound(dim.getSource(), *d) : std::nullopt;
  }
  if (auto dim = llvm::dyn_cast<tensor::DimOp>(def)) {
    std::optional<int64_t> d = constantIndex(dim.getIndex());
    return d ? dimUpperBound(dim.getSource(), *d) : std::nullopt;
  }
  if (llvm::isa<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtUIOp, arith::ExtSIOp>(def))
    return upperBound(def->getOperand(0));
  if (llvm::isa<arith::MulIOp>(def))
    return mul(upperBound(def->getOperand(0)), upperBound(def->getOperand(1)));
  if (llvm::isa<arith::AddIOp>(def))
    return add(upperBound(def->getOperand(0)), upperBound(def->getOperand(1)));
  if (llvm::isa<arith::SubIOp>(def)) // sizes are >= 0: a - b <= a
    return upperBound(def->getOperand(0));
  if (llvm::isa<arith::DivUIOp, arith::DivSIOp, arith::CeilDivSIOp, arith::CeilDivUIOp,
                arith::FloorDivSIOp>(def)) {
    std::optional<int64_t> divisor = constantIndex(def->getOperand(1));
    Bound a = upperBound(def->getOperand(0));
    if (!divisor || *divisor <= 0 || !a)
      return std::nullopt;
    bool ceil = llvm::isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(def);
    return ceil ? (*a + *divisor - 1) / *divisor : *a / *divisor;
  }
  if (llvm::isa<arith::MinSIOp, arith::MinUIOp>(def)) {
    Bound a = upperBound(def->getOperand(0)), b = upperBound(def->getOperand(1));
    if (a && b)
      return std::min(*a, *b);
    return a ? a : b;
  }
  if (llvm::isa<arith::MaxSIOp, arith::MaxUIOp>(def)) {
    Bound a = upperBound(def->getOperand(0)), b = upperBound(def->getOperand(1));
    return a && b ? Bound(std::max(*a, *b)) : std::nullopt;
  }
  if (auto select = llvm::dyn_cast<arith::SelectOp>(def)) {
    Bound a = upperBound(select.getTrueValue()), b = upperBound(select.getFalseValue());
    return a && b ? Bound(std::max(*a, *b)) : std::nullopt;
  }
  if (auto apply = llvm::dyn_cast<affine::AffineApplyOp>(def))
    return mapBound(apply.getAffineMap(), apply.getMapOperands(), /*takeMax=*/true);
  if (auto min = llvm::dyn_cast<affine::AffineMinOp>(def))
    return mapBound(min.getAffineMap(), min.getMapOperands(), /*takeMax=*/false);
  if (auto max = llvm::dyn_cast<affine::AffineMaxOp>(def))
    return mapBound(max.getAffineMap(), max.getMapOperands(), /*takeMax=*/true);
  return std::nullopt;
}

} // namespace mlir::cuvil::cpu
