//===- TensorOps.cpp - cuvil.constant and cuvil.tensor.* ------------------===//
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/RunTimeSizes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::cuvil;

// `cuvil.tensor.resize %x linear ...`: the mode as a bare keyword.
static ParseResult parseResizeMode(OpAsmParser &parser, ResizeModeAttr &mode) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ResizeMode> m = symbolizeResizeMode(keyword);
  if (!m)
    return parser.emitError(loc) << "expected a resize mode (nearest, "
                                    "nearest_exact or linear), got '"
                                 << keyword << "'";
  mode = ResizeModeAttr::get(parser.getContext(), *m);
  return success();
}
static void printResizeMode(OpAsmPrinter &printer, Operation *, ResizeModeAttr mode) {
  printer << stringifyResizeMode(mode.getValue());
}

#define GET_OP_CLASSES
#include "dialects/Cuvil/IR/TensorOps.cpp.inc"

namespace {
RankedTensorType tensorType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}
bool isStatic(int64_t d) { return !ShapedType::isDynamic(d); }
} // namespace

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                           SmallVectorImpl<Type> &types) {
  auto value = adaptor.getValue();
  if (!value)
    return emitError() << "needs a 'value' attribute";
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return emitError() << "value must be a statically shaped tensor, got "
                       << value.getType();
  types.push_back(type);
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto in = tensorType(getInput());
  if (!areCompatibleShapes(in.getShape(), getType().getShape()))
    return emitOpError() << "changes the shape from "
                         << formatShape(in.getShape()) << " to "
                         << formatShape(getType().getShape())
                         << "; a cast only converts elements";
  return success();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitError() << "needs at least one operand";
  RankedTensorType first = tensorType(inputs.front());
  int64_t rank = first.getRank(), dim = adaptor.getDim();
  if (rank == 0)
    return emitError() << "cannot concatenate 0-d tensors (unsqueeze them "
                          "first)";
  if (failed(checkDim(dim, rank, "dim", emitError)))
    return failure();
  SmallVector<int64_t> out(first.getShape());
  for (auto [i, v] : llvm::enumerate(inputs.drop_front())) {
    RankedTensorType t = tensorType(v);
    if (t.getElementType() != first.getElementType())
      return emitError() << "operand " << i + 1 << " has element type "
                         << t.getElementType() << ", operand 0 has "
                         << first.getElementType() << " (insert casts)";
    if (t.getRank() != rank)
      return emitError() << "operand " << i + 1 << " has rank " << t.getRank()
                         << ", operand 0 has rank " << rank;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t a = out[d], b = t.getDimSize(d);
      if (d == dim) {
        out[d] = isStatic(a) && isStatic(b) ? a + b : ShapedType::kDynamic;
      } else if (isStatic(a) && isStatic(b) && a != b) {
        return emitError() << "operand " << i + 1 << " has size " << b
                           << " in dimension " << d << ", expected " << a;
      } else if (!isStatic(a)) {
        out[d] = b;
      }
    }
  }
  types.push_back(RankedTensorType::get(out, first.getElementType()));
  return success();
}

OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

//===----------------------------------------------------------------------===//
// SliceOp / SelectOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                        SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  int64_t dim = adaptor.getDim();
  if (in.getRank() == 0)
    return emitError() << "cannot slice a 0-d tensor";
  if (failed(checkDim(dim, in.getRank(), "dim", emitError)))
    return failure();
  if (adaptor.getStep() < 1)
    return emitError() << "step must be >= 1, got " << adaptor.getStep();
  SmallVector<int64_t> out(in.getShape());
  if (isStatic(out[dim]))
    out[dim] = sliceLength(out[dim], adaptor.getStart(), adaptor.getEnd(),
                           adaptor.getStep(), nullptr);
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

LogicalResult SliceToOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType size = tensorType(adaptor.getSize());
  int64_t dim = adaptor.getDim();
  if (in.getRank() == 0)
    return emitError() << "cannot slice a 0-d tensor";
  if (failed(checkDim(dim, in.getRank(), "dim", emitError)))
    return failure();
  if (size.getRank() != 0)
    return emitError() << "the run-time end must be a 0-d integer tensor, got " << size;
  SmallVector<int64_t> out(in.getShape());
  out[dim] = ShapedType::kDynamic;
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

LogicalResult IotaOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                       SmallVectorImpl<Type> &types) {
  std::optional<int64_t> n = constantSize(adaptor.getCount());
  if (n && *n < 0)
    return emitError() << "the count is negative (" << *n << ")";
  types.push_back(RankedTensorType::get({n ? *n : ShapedType::kDynamic},
                                        IntegerType::get(adaptor.getCount().getContext(), 64)));
  return success();
}

OpFoldResult IotaOp::fold(FoldAdaptor) {
  // A count that became constant (static shapes, --specialize): the values.
  constexpr int64_t kMaxFolded = int64_t(1) << 20;
  std::optional<int64_t> n = constantSize(getCount());
  if (!n || *n > kMaxFolded || getType().getDimSize(0) != *n)
    return {};
  SmallVector<int64_t> values(*n);
  for (int64_t k = 0; k < *n; ++k)
    values[k] = k;
  return DenseIntElementsAttr::get(getType(), llvm::ArrayRef<int64_t>(values));
}

OpFoldResult SliceOp::fold(FoldAdaptor) {
  int64_t size = getInput().getType().getDimSize(getDim()), start = 0;
  if (!isStatic(size) || getStep() != 1)
    return {};
  if (sliceLength(size, getStart(), getEnd(), 1, &start) == size && start == 0 &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult SelectOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  int64_t dim = adaptor.getDim(), index = adaptor.getIndex();
  if (in.getRank() == 0)
    return emitError() << "cannot select from a 0-d tensor";
  if (failed(checkDim(dim, in.getRank(), "dim", emitError)))
    return failure();
  int64_t size = in.getDimSize(dim);
  if (isStatic(size) && (index < -size || index >= size))
    return emitError() << "index " << index << " is out of range for "
                       << "dimension " << dim << " of size " << size;
  types.push_back(RankedTensorType::get(
      reducedShape(in.getShape(), {dim}, false), in.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// IndexSelectOp / GatherOp / EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult IndexSelectOp::inferResultTypes(Adaptor adaptor,
                                              EmitErrorFn emitError,
                                              SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType idx = tensorType(adaptor.getIndex());
  int64_t dim = adaptor.getDim();
  if (in.getRank() == 0)
    return emitError() << "input must have rank >= 1";
  if (failed(checkDim(dim, in.getRank(), "dim", emitError)))
    return failure();
  if (idx.getRank() > 1)
    return emitError() << "index must be 0-d or 1-D, got " << idx;
  SmallVector<int64_t> out(in.getShape());
  out[dim] = idx.getRank() == 0 ? 1 : idx.getDimSize(0);
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

LogicalResult GatherOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType idx = tensorType(adaptor.getIndex());
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(dim, in.getRank(), "dim", emitError)))
    return failure();
  if (idx.getRank() != in.getRank())
    return emitError() << "index rank " << idx.getRank()
                       << " differs from input rank " << in.getRank();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t a = in.getDimSize(d), b = idx.getDimSize(d);
    if (d != dim && isStatic(a) && isStatic(b) && b > a)
      return emitError() << "index size " << b << " exceeds input size " << a
                         << " in dimension " << d;
  }
  types.push_back(RankedTensorType::get(idx.getShape(), in.getElementType()));
  return success();
}

LogicalResult ScatterOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                          SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  RankedTensorType idx = tensorType(adaptor.getIndex());
  RankedTensorType src = tensorType(adaptor.getSrc());
  int64_t dim = adaptor.getDim();
  if (failed(checkDim(dim, std::max<int64_t>(in.getRank(), 1), "dim", emitError)))
    return failure();
  if (idx.getRank() != in.getRank() || src.getRank() != in.getRank())
    return emitError() << "index and src must have the input's rank " << in.getRank() << ", got "
                       << idx.getRank() << " and " << src.getRank();
  if (src.getElementType() != in.getElementType())
    return emitError() << "src element type " << src.getElementType()
                       << " differs from input element type " << in.getElementType();
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t i = idx.getDimSize(d), s = src.getDimSize(d), n = in.getDimSize(d);
    if (isStatic(i) && isStatic(s) && i > s)
      return emitError() << "index size " << i << " exceeds src size " << s << " in dimension " << d;
    if (d != dim && isStatic(i) && isStatic(n) && i > n)
      return emitError() << "index size " << i << " exceeds input size " << n << " in dimension " << d;
  }
  types.push_back(in);
  return success();
}

LogicalResult SortOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                       SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  if (failed(checkDim(adaptor.getDim(), std::max<int64_t>(in.getRank(), 1), "dim", emitError)))
    return failure();
  types.push_back(in);
  types.push_back(in.clone(IntegerType::get(in.getContext(), 64)));
  return success();
}

LogicalResult EmbeddingOp::inferResultTypes(Adaptor adaptor,
                                            EmitErrorFn emitError,
                                            SmallVectorImpl<Type> &types) {
  RankedTensorType w = tensorType(adaptor.getWeight());
  RankedTensorType idx = tensorType(adaptor.getIndices());
  if (w.getRank() != 2)
    return emitError() << "weight must be [num_embeddings, embedding_dim], got "
                       << w;
  if (std::optional<int64_t> p = adaptor.getPaddingIdx()) {
    int64_t n = w.getDimSize(0);
    if (isStatic(n) && (*p < -n || *p >= n))
      return emitError() << "padding_idx " << *p << " is out of range for "
                         << n << " embeddings";
  }
  SmallVector<int64_t> out(idx.getShape());
  out.push_back(w.getDimSize(1));
  types.push_back(RankedTensorType::get(out, w.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// PadOp
//===----------------------------------------------------------------------===//

LogicalResult PadOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                      SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ArrayRef<int64_t> pad = adaptor.getPad();
  PadMode mode = adaptor.getMode();
  if (pad.size() % 2 != 0)
    return emitError() << "pad must hold (before, after) pairs, got "
                       << pad.size() << " entries";
  if (static_cast<int64_t>(pad.size() / 2) > in.getRank())
    return emitError() << "pad covers " << pad.size() / 2
                       << " dimensions, input has rank " << in.getRank();
  if (mode != PadMode::Constant && adaptor.getValue().convertToDouble() != 0.0)
    return emitError() << "value is only meaningful in constant mode";
  SmallVector<int64_t> out(in.getShape());
  for (size_t p = 0; p < pad.size() / 2; ++p) {
    int64_t d = in.getRank() - 1 - p;
    int64_t before = pad[2 * p], after = pad[2 * p + 1], size = out[d];
    if (mode != PadMode::Constant && (before < 0 || after < 0))
      return emitError() << "negative padding is only supported in constant "
                            "mode";
    if (isStatic(size)) {
      if (mode == PadMode::Reflect && (before >= size || after >= size))
        return emitError() << "reflect padding (" << before << ", " << after
                           << ") must be smaller than dimension " << d
                           << " (size " << size << ")";
      if (mode == PadMode::Replicate && size == 0)
        return emitError() << "replicate padding of empty dimension " << d;
      if (mode == PadMode::Circular && (before > size || after > size))
        return emitError() << "circular padding (" << before << ", " << after
                           << ") may not exceed dimension " << d << " (size "
                           << size << ")";
      out[d] = size + before + after;
      if (out[d] < 0)
        return emitError() << "padding makes dimension " << d << " negative ("
                           << out[d] << ")";
    }
  }
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ResizeOp
//===----------------------------------------------------------------------===//

LogicalResult ResizeOp::inferResultTypes(Adaptor adaptor, EmitErrorFn emitError,
                                         SmallVectorImpl<Type> &types) {
  RankedTensorType in = tensorType(adaptor.getInput());
  ResizeMode mode = adaptor.getMode();
  int64_t spatialRank = in.getRank() - 2;
  if (spatialRank < 1 || spatialRank > 3)
    return emitError() << "input must be [N, C, spatial...] with 1 to 3 spatial "
                          "dimensions, got "
                       << in;
  if (failed(checkElementKind(in,
                              mode == ResizeMode::Linear ? ElementKind::Float
                                                         : ElementKind::Numeric,
                              "input", emitError)))
    return failure();
  ArrayRef<int64_t> size = adaptor.getSize();
  if (failed(checkSpatialAttr(size, spatialRank, 1, "size", emitError)))
    return failure();
  if (std::optional<ArrayRef<double>> scales = adaptor.getScales()) {
    if (static_cast<int64_t>(scales->size()) != spatialRank)
      return emitError() << "scales needs " << spatialRank
                         << " entries (one per spatial dimension), got "
                         << scales->size();
    for (double s : *scales)
      if (!(s >= 0) || !std::isfinite(s))
        return emitError() << "scales must be finite and >= 0 (0: derive the "
                              "step from the sizes), got "
                           << s;
  }
  if (adaptor.getAlignCorners() && mode != ResizeMode::Linear)
    return emitError() << "align_corners only applies to linear resizing";
  for (int64_t d = 0; d < spatialRank; ++d)
    if (in.getDimSize(2 + d) == 0)
      return emitError() << "spatial dimension " << d << " of the input is empty";
  SmallVector<int64_t> out(in.getShape().take_front(2));
  out.append(size.begin(), size.end());
  types.push_back(RankedTensorType::get(out, in.getElementType()));
  return success();
}
