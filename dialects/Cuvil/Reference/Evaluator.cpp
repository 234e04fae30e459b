//===- Evaluator.cpp - Reference semantics of the cuvil dialect -----------===//
//
// Dispatch, constants, function evaluation and the shared index helpers.
// The op implementations live in the Eval*.cpp files, one per op family.
//
//===----------------------------------------------------------------------===//
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "dialects/Cuvil/IR/SourcePosition.h"
#include "dialects/Cuvil/IR/ElementTypes.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/EvalHelpers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseMap.h"

#include <cstring>

namespace mlir::cuvil::reference {

//===----------------------------------------------------------------------===//
// Types and constants
//===----------------------------------------------------------------------===//

std::optional<DType> toDType(Type t) { return dtypeOfElementType(t); }

Type toElementType(MLIRContext *ctx, DType d) { return elementTypeOf(ctx, d); }

RankedTensorType tensorTypeOf(MLIRContext *ctx, const Tensor &t) {
  return RankedTensorType::get(t.shape(), toElementType(ctx, t.dtype()));
}

FailureOr<Tensor> tensorFromAttr(ElementsAttr attr, Location loc) {
  auto type = llvm::cast<ShapedType>(attr.getType());
  std::optional<DType> dtype = toDType(type.getElementType());
  if (!dtype)
    return emitError(loc) << "unsupported constant element type "
                          << type.getElementType();
  Shape shape(type.getShape().begin(), type.getShape().end());
  ::cuvil::Result<Tensor> created = Tensor::create(*dtype, shape);
  if (!created)
    return emitError(loc) << "constant: " << created.error().message;
  Tensor t = std::move(*created);
  size_t bytes = t.byteSize();

  if (auto resource = llvm::dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc) << "resource '" << resource.getRawHandle().getKey()
                            << "' has no data (was the file's resource "
                               "section dropped?)";
    ArrayRef<char> data = blob->getData();
    if (*dtype == DType::Bool) {
      if (data.size() != static_cast<size_t>(t.numElements()))
        return emitError(loc) << "resource '" << resource.getRawHandle().getKey()
                              << "' holds " << data.size() << " bytes, "
                              << t.numElements() << " expected";
      for (int64_t i = 0; i < t.numElements(); ++i)
        t.setInt(i, data[i] != 0);
      return t;
    }
    if (data.size() != bytes)
      return emitError(loc) << "resource '" << resource.getRawHandle().getKey()
                            << "' holds " << data.size() << " bytes, "
                            << bytes << " expected for " << type;
    if (bytes)
      std::memcpy(t.data(), data.data(), bytes);
    return t;
  }

  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return emitError(loc) << "unsupported constant attribute kind";
  if (*dtype == DType::Bool) {
    int64_t i = 0;
    for (bool b : dense.getValues<bool>())
      t.setInt(i++, b);
    return t;
  }
  ArrayRef<char> raw = dense.getRawData();
  size_t elt = ::cuvil::dtypeSize(*dtype);
  if (dense.isSplat()) {
    for (int64_t i = 0; i < t.numElements(); ++i)
      std::memcpy(t.data() + i * elt, raw.data(), elt);
  } else if (bytes) {
    std::memcpy(t.data(), raw.data(), bytes);
  }
  return t;
}

DenseElementsAttr attrFromTensor(const Tensor &t, RankedTensorType type) {
  if (t.dtype() == DType::Bool) {
    SmallVector<bool> values;
    values.reserve(t.numElements());
    for (int64_t i = 0; i < t.numElements(); ++i)
      values.push_back(t.getInt(i) != 0);
    return DenseElementsAttr::get(type, values);
  }
  ArrayRef<char> raw(reinterpret_cast<const char *>(t.data()), t.byteSize());
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

ElementsAttr elementsAttrFromTensor(const Tensor &t, RankedTensorType type, StringRef name) {
  // Small values stay readable in the IR; weights go to a blob, as the
  // importer writes them (64-byte aligned, outside the attribute uniquer).
  if (t.dtype() == DType::Bool || t.numElements() <= 16)
    return attrFromTensor(t, type);
  ArrayRef<char> raw(reinterpret_cast<const char *>(t.data()), t.byteSize());
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64);
  return DenseResourceElementsAttr::get(type, resourceKey(name), std::move(blob));
}

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

static const OpEvaluators &getOpEvaluators() {
  static const OpEvaluators evaluators = [] {
    OpEvaluators e;
    registerElementwiseEvaluators(e);
    registerLinalgEvaluators(e);
    registerNormPoolEvaluators(e);
    registerReduceEvaluators(e);
    registerShapeEvaluators(e);
    registerQuantEvaluators(e);
    return e;
  }();
  return evaluators;
}

bool canEvaluate(Operation *op) { return getOpEvaluators().lookup(op); }

FailureOr<SmallVector<Tensor>> evaluateOp(Operation *op,
                                          ArrayRef<Tensor> operands) {
  const OpEvaluators::Fn *fn = getOpEvaluators().lookup(op);
  if (!fn)
    return op->emitOpError()
           << "has no reference implementation (the evaluator supports the "
              "cuvil dialect and func.return)";
  for (Type t : op->getResultTypes())
    if (!llvm::isa<RankedTensorType>(t) ||
        !toDType(llvm::cast<RankedTensorType>(t).getElementType()))
      return op->emitOpError() << "has a result type the evaluator cannot "
                                  "represent: "
                               << t;
  return (*fn)(op, operands);
}

/// Checks a computed value against the declared type: the dtype must be the
/// same and every static dimension equal.
static LogicalResult checkAgainstType(Operation *op, const Tensor &t, Type type,
                                      StringRef what) {
  auto tt = llvm::cast<RankedTensorType>(type);
  bool ok = toDType(tt.getElementType()) == t.dtype() &&
            tt.getRank() == t.rank();
  for (int64_t i = 0; ok && i < t.rank(); ++i)
    ok = tt.isDynamicDim(i) || tt.getDimSize(i) == t.dim(i);
  if (ok)
    return success();
  return op->emitOpError() << what << " has runtime shape " << t.describe()
                           << ", which does not match its type " << type;
}

namespace {

/// Evaluates the ops of `block` in order; returns the terminator's operands
/// (func.return or scf.yield). Values are freed after their last use in
/// this block.
/// Iterations an scf.while may run before the evaluator calls it endless.
constexpr int64_t kMaxLoopIterations = 100'000'000;

FailureOr<SmallVector<Tensor>> evaluateBlock(Block &block,
                                             llvm::DenseMap<Value, Tensor> &values,
                                             const EvaluateOptions &options,
                                             int depth) {
  if (depth > 64)
    return block.getParentOp()->emitOpError() << "nests regions too deeply to evaluate";
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(block.getOperations()))
    position[&op] = i;
  // Last use of each value by an op of this block (uses inside nested
  // regions count as uses by their enclosing op).
  llvm::DenseMap<Value, unsigned> lastUse;
  for (Operation &op : block)
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        if (v.getParentBlock() == &block || values.count(v))
          lastUse[v] = position[&op];
    });

  for (Operation &op : block) {
    SmallVector<Tensor> operands;
    for (Value v : op.getOperands()) {
      auto it = values.find(v);
      if (it == values.end())
        return op.emitOpError() << "uses a value the evaluator has not computed";
      operands.push_back(it->second);
    }
    if (llvm::isa<func::ReturnOp, scf::YieldOp, scf::ConditionOp, FusedYieldOp>(op))
      return SmallVector<Tensor>(operands.begin(), operands.end());

    SmallVector<Tensor> results;
    if (auto ifOp = llvm::dyn_cast<scf::IfOp>(op)) {
      // The condition is an i1 scalar, held as a 0-d bool tensor.
      bool cond = operands[0].getInt(0) != 0;
      if (options.branchCounts)
        if (std::string arm = branchArmName(&op, cond ? "if then" : "if else"); !arm.empty())
          ++(*options.branchCounts)[arm];
      Region &region = cond ? ifOp.getThenRegion() : ifOp.getElseRegion();
      if (region.empty()) {
        if (ifOp.getNumResults())
          return op.emitOpError() << "has no else region to produce its results";
      } else {
        FailureOr<SmallVector<Tensor>> r =
            evaluateBlock(region.front(), values, options, depth + 1);
        if (failed(r))
          return failure();
        results = std::move(*r);
      }
    } else if (auto loop = llvm::dyn_cast<scf::WhileOp>(op)) {
      // Before computes the condition (and what goes on) from the carried
      // values, after the next ones; a loop that never ends is an error
      // here rather than a hang.
      SmallVector<Tensor> carried(operands.begin(), operands.end());
      for (int64_t iteration = 0;; ++iteration) {
        if (iteration >= kMaxLoopIterations)
          return op.emitOpError() << "ran " << kMaxLoopIterations
                                  << " iterations without its condition becoming false";
        for (auto [arg, tensor] : llvm::zip(loop.getBeforeArguments(), carried))
          values[arg] = tensor;
        FailureOr<SmallVector<Tensor>> before = evaluateBlock(loop.getBefore().front(), values, options, depth + 1);
        if (failed(before))
          return failure();
        SmallVector<Tensor> forwarded(before->begin() + 1, before->end());
        if ((*before)[0].getInt(0) == 0) {
          results = std::move(forwarded);
          break;
        }
        if (options.branchCounts)
          if (std::string arm = branchArmName(&op, "loop body"); !arm.empty())
            ++(*options.branchCounts)[arm];
        for (auto [arg, tensor] : llvm::zip(loop.getAfterArguments(), forwarded))
          values[arg] = tensor;
        FailureOr<SmallVector<Tensor>> after = evaluateBlock(loop.getAfter().front(), values, options, depth + 1);
        if (failed(after))
          return failure();
        carried = std::move(*after);
      }
    } else if (auto extract = llvm::dyn_cast<tensor::ExtractOp>(op)) {
      if (!extract.getIndices().empty())
        return op.emitOpError() << "with indices is not supported by the evaluator";
      results.push_back(operands[0].reshaped({}));
    } else if (llvm::isa<tensor::CastOp>(op)) {
      results.push_back(operands[0]);
    } else if (auto group = llvm::dyn_cast<FusedGroupOp>(op)) {
      // A fusion group computes exactly what its ops compute unfused.
      Block &body = group.getBody().front();
      llvm::DenseMap<Value, Tensor> inner;
      for (auto [arg, tensor] : llvm::zip(body.getArguments(), operands))
        inner[arg] = tensor;
      FailureOr<SmallVector<Tensor>> r = evaluateBlock(body, inner, options, depth + 1);
      if (failed(r))
        return failure();
      results = std::move(*r);
    } else if (auto check = llvm::dyn_cast<AssertOp>(op)) {
      if (operands[0].getInt(0) == 0)
        return op.emitError() << "model assertion failed: " << check.getMessage();
    } else if (auto print = llvm::dyn_cast<PrintOp>(op)) {
      // Python's print: the literal pieces with the values between them.
      SmallVector<std::string> pieces;
      if (failed(PrintOp::splitFormat(print.getFormat(), pieces)))
        return op.emitOpError() << "has a malformed format";
      std::string line = pieces[0];
      for (size_t k = 0; k + 1 < pieces.size() && k < operands.size(); ++k)
        line += operands[k].preview(8) + pieces[k + 1];
      llvm::raw_ostream &os = options.printStream ? *options.printStream : llvm::outs();
      os << line << "\n";
      os.flush();
    } else {
      FailureOr<SmallVector<Tensor>> r = evaluateOp(&op, operands);
      if (failed(r))
        return failure();
      results = std::move(*r);
    }
    for (auto [value, tensor] : llvm::zip(op.getResults(), results)) {
      if (options.checkResultTypes && llvm::isa<RankedTensorType>(value.getType()) &&
          failed(checkAgainstType(&op, tensor, value.getType(), "result")))
        return failure();
      values[value] = std::move(tensor);
    }
    for (Value v : op.getOperands()) {
      auto it = lastUse.find(v);
      if (it != lastUse.end() && it->second == position[&op] && v.getParentBlock() == &block)
        values.erase(v);
    }
  }
  return block.getParentOp()->emitOpError() << "block has no terminator";
}

} // namespace

FailureOr<SmallVector<Tensor>> evaluateFunction(func::FuncOp func,
                                                ArrayRef<Tensor> inputs,
                                                const EvaluateOptions &options) {
  if (func.isExternal())
    return func.emitOpError() << "has no body to evaluate";
  FunctionType fnType = func.getFunctionType();
  if (inputs.size() != fnType.getNumInputs())
    return func.emitError() << "function '" << func.getSymName() << "' takes "
                            << fnType.getNumInputs() << " input(s), got "
                            << inputs.size();
  for (auto [i, pair] : llvm::enumerate(llvm::zip(inputs, fnType.getInputs()))) {
    auto [tensor, type] = pair;
    auto tt = llvm::dyn_cast<RankedTensorType>(type);
    if (!tt)
      return func.emitError() << "input " << i << " has non-tensor type " << type;
    bool ok = toDType(tt.getElementType()) == tensor.dtype() &&
              tt.getRank() == tensor.rank();
    for (int64_t d = 0; ok && d < tensor.rank(); ++d)
      ok = tt.isDynamicDim(d) || tt.getDimSize(d) == tensor.dim(d);
    if (!ok)
      return func.emitError() << "input " << i << ": expected " << type
                              << ", got " << tensor.describe();
  }
  Region &body = func.getBody();
  if (!body.hasOneBlock())
    return func.emitOpError() << "must have a single block to be evaluated";
  llvm::DenseMap<Value, Tensor> values;
  for (auto [arg, tensor] : llvm::zip(body.front().getArguments(), inputs))
    values[arg] = tensor;
  return evaluateBlock(body.front(), values, options, 0);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

DType resultDType(Operation *op, unsigned i) {
  auto type = llvm::cast<RankedTensorType>(op->getResult(i).getType());
  return *toDType(type.getElementType());
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

FailureOr<Shape> broadcastRuntime(Operation *op, const Shape &a,
                                  const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return op->emitOpError() << "runtime shapes "
                               << ::cuvil::formatShape(a, resultDType(op))
                               << " and "
                               << ::cuvil::formatShape(b, resultDType(op))
                               << " do not broadcast";
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Shape stridesOf(const Shape &shape) { return ::cuvil::contiguousStrides(shape); }

std::vector<int64_t> broadcastIndexMap(const Shape &outShape,
                                       const Shape &inShape) {
  size_t rank = outShape.size(), offset = rank - inShape.size();
  Shape inStrides = stridesOf(inShape);
  // Stride of each output dim in the input: 0 where the input broadcasts.
  Shape strides(rank, 0);
  for (size_t i = offset; i < rank; ++i)
    strides[i] = inShape[i - offset] == 1 ? 0 : inStrides[i - offset];
  int64_t n = numElements(outShape);
  std::vector<int64_t> map(static_cast<size_t>(n));
  Shape idx(rank, 0);
  int64_t in = 0;
  for (int64_t flat = 0; flat < n; ++flat) {
    map[flat] = in;
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      in += strides[d];
      if (++idx[d] < outShape[d])
        break;
      in -= strides[d] * idx[d];
      idx[d] = 0;
    }
  }
  return map;
}

FailureOr<Tensor> allocate(Operation *op, DType dtype, Shape shape) {
  ::cuvil::Result<Tensor> t = Tensor::create(dtype, std::move(shape));
  if (!t)
    return op->emitOpError() << "result: " << t.error().message;
  return std::move(*t);
}

void forEachIndex(const Shape &shape,
                  const std::function<void(const Shape &, int64_t)> &fn) {
  int64_t n = numElements(shape);
  Shape idx(shape.size(), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    fn(idx, flat);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
}

} // namespace mlir::cuvil::reference
