//===- GemmOps.cpp - cuvil.gemm.* -----------------------------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/LinalgKernels.h"

using namespace mlir;
using namespace mlir::cuvil;

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/GemmOps.cpp.inc"

namespace {

RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

/// Sizes must agree unless one is dynamic.
bool sizesMatch(int64_t a, int64_t b) {
  return a == b || ShapedType::isDynamic(a) || ShapedType::isDynamic(b);
}

/// All operands have the element type of the first one.
LogicalResult checkSameElementType(ArrayRef<std::pair<StringRef, Value>> named,
                                   EmitErrorFn emitError) {
  Type first = tensorType(named.front().second).getElementType();
  for (auto [name, v] : named.drop_front())
    if (v && tensorType(v).getElementType() != first)
      return emitError() << name << " element type "
                         << tensorType(v).getElementType() << " differs from "
                         << named.front().first << " element type " << first
                         << " (insert cuvil.tensor.cast)";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType w = tensorType(adaptor.getWeight());
  if (in.getRank() < 1)
    return emitError() << "input must have rank >= 1, got " << in;
  if (w.getRank() != 2)
    return emitError() << "weight must be [out_features, in_features], got "
                       << w;
  if (!sizesMatch(in.getShape().back(), w.getDimSize(1)))
    return emitError() << "input features (" << in.getShape().back()
                       << ") do not match weight in_features ("
                       << w.getDimSize(1) << ")";
  if (Value bias = adaptor.getBias()) {
    RankedTensorType b = tensorType(bias);
    if (b.getRank() != 1 || !sizesMatch(b.getDimSize(0), w.getDimSize(0)))
      return emitError() << "bias must be [" << w.getDimSize(0) << "], got "
                         << b;
  }
  if (failed(checkSameElementType({{"input", adaptor.getInput()},
                                   {"weight", adaptor.getWeight()},
                                   {"bias", adaptor.getBias()}},
                                  emitError)))
    return failure();
  SmallVector<int64_t> shape(in.getShape().drop_back());
  shape.push_back(w.getDimSize(0));
  types.push_back(RankedTensorType::get(shape, in.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType a = tensorType(adaptor.getLhs());
  RankedTensorType b = tensorType(adaptor.getRhs());
  if (a.getRank() < 1 || b.getRank() < 1)
    return emitError() << "operands must have rank >= 1, got " << a << " and "
                       << b;
  if (failed(checkSameElementType({{"lhs", adaptor.getLhs()},
                                   {"rhs", adaptor.getRhs()}},
                                  emitError)) ||
      failed(checkElementKind(a, ElementKind::Numeric, "lhs", emitError)))
    return failure();
  // Promote 1-D operands to matrices, remembering which dims to drop.
  SmallVector<int64_t> as(a.getShape()), bs(b.getShape());
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  int64_t k1 = as.back(), k2 = bs[bs.size() - 2];
  if (!sizesMatch(k1, k2))
    return emitError() << "contraction sizes differ: lhs " << formatShape(a.getShape())
                       << " has " << k1 << ", rhs " << formatShape(b.getShape())
                       << " has " << k2;
  SmallVector<int64_t> batch;
  ArrayRef<int64_t> ab = ArrayRef<int64_t>(as).drop_back(2);
  ArrayRef<int64_t> bb = ArrayRef<int64_t>(bs).drop_back(2);
  if (failed(broadcastShapes(ab, bb, batch)))
    return emitError() << "batch dimensions " << formatShape(ab) << " and "
                       << formatShape(bb) << " do not broadcast";
  SmallVector<int64_t> shape(batch);
  if (!aVec)
    shape.push_back(as[as.size() - 2]);
  if (!bVec)
    shape.push_back(bs.back());
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// BatchMatmulOp
//===----------------------------------------------------------------------===//

LogicalResult BatchMatmulOp::inferResultTypes(Adaptor adaptor,
                                              EmitErrorFn emitError,
                                              SmallVectorImpl<Type> &types) {
  RankedTensorType a = tensorType(adaptor.getLhs());
  RankedTensorType b = tensorType(adaptor.getRhs());
  if (a.getRank() != 3 || b.getRank() != 3)
    return emitError() << "operands must be rank 3 ([batch, m, k] and "
                          "[batch, k, n]), got "
                       << a << " and " << b;
  if (failed(checkSameElementType({{"lhs", adaptor.getLhs()},
                                   {"rhs", adaptor.getRhs()}},
                                  emitError)) ||
      failed(checkElementKind(a, ElementKind::Numeric, "lhs", emitError)))
    return failure();
  if (!sizesMatch(a.getDimSize(0), b.getDimSize(0)))
    return emitError() << "batch sizes differ: " << a.getDimSize(0) << " vs "
                       << b.getDimSize(0);
  if (!sizesMatch(a.getDimSize(2), b.getDimSize(1)))
    return emitError() << "contraction sizes differ: " << a.getDimSize(2)
                       << " vs " << b.getDimSize(1);
  int64_t batch = ShapedType::isDynamic(a.getDimSize(0)) ? b.getDimSize(0)
                                                        : a.getDimSize(0);
  types.push_back(RankedTensorType::get(
      {batch, a.getDimSize(1), b.getDimSize(2)}, a.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// AddmmOp
//===----------------------------------------------------------------------===//

LogicalResult AddmmOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType m1 = tensorType(adaptor.getMat1());
  RankedTensorType m2 = tensorType(adaptor.getMat2());
  if (m1.getRank() != 2 || m2.getRank() != 2)
    return emitError() << "mat1 and mat2 must be matrices, got " << m1
                       << " and " << m2;
  if (failed(checkSameElementType({{"mat1", adaptor.getMat1()},
                                   {"mat2", adaptor.getMat2()},
                                   {"input", adaptor.getInput()}},
                                  emitError)) ||
      failed(checkElementKind(m1, ElementKind::Numeric, "mat1", emitError)))
    return failure();
  if (!sizesMatch(m1.getDimSize(1), m2.getDimSize(0)))
    return emitError() << "contraction sizes differ: mat1 has "
                       << m1.getDimSize(1) << " columns, mat2 has "
                       << m2.getDimSize(0) << " rows";
  SmallVector<int64_t> mn = {m1.getDimSize(0), m2.getDimSize(1)};
  SmallVector<int64_t> bshape;
  if (in.getRank() > 2 ||
      failed(broadcastShapes(in.getShape(), mn, bshape)) ||
      !areCompatibleShapes(bshape, mn))
    return emitError() << "input of shape " << formatShape(in.getShape())
                       << " does not broadcast to the product's shape "
                       << formatShape(mn);
  types.push_back(RankedTensorType::get(mn, m1.getElementType()));
  return success();
}

LogicalResult LinalgKernelOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                               SmallVectorImpl<Type> &types) {
  return inferLinalgKernelTypes(adaptor.getKernel(), adaptor.getFlags(),
                                adaptor.getInputs().getTypes(), emitError, types);
}
