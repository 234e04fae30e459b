//===- RuntimeChecks.cpp - Failures detected while the model runs ---------===//
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/RunTimeSizes.h"
#include "dialects/Cuvil/IR/SourcePosition.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace mlir::cuvil::lowering {
namespace {

/// Set on a cuvil op before the conversion: its check number (from 1).
constexpr llvm::StringLiteral kCheckIdAttr = "cuvil.check_id";
/// Set on the `arith.select failed, k, 0` a lowering creates for check k.
constexpr llvm::StringLiteral kCheckAttr = "cuvil.check";

/// Whether every element of a constant index operand is in [-size, size).
bool constantIndicesInRange(Value indices, int64_t size) {
  DenseIntElementsAttr values;
  if (!matchPattern(indices, m_Constant(&values)))
    return false;
  for (const APInt &v : values) {
    int64_t i = v.getSExtValue();
    if (i < -size || i >= size)
      return false;
  }
  return true;
}

/// A tensor of run-time sizes (x.expand(n, -1), torch.zeros(n, 4)): sizes
/// that may be negative, or may differ from a dimension that keeps its
/// own size (one that is not a static 1), are checked.
std::optional<std::string> expandCheck(ExpandDynamicOp op) {
  auto in = llvm::cast<RankedTensorType>(op.getInput().getType());
  int64_t offset = int64_t(op.getSizes().size()) - in.getRank();
  bool negative = false, mismatch = false;
  for (auto [i, size] : llvm::enumerate(op.getSizes())) {
    int64_t j = int64_t(i) - offset;
    if (j >= 0 && in.getDimSize(j) != 1)
      mismatch |= !isDimOf(size, op.getInput(), j);
    else
      negative |= !isNonNegativeSize(size);
  }
  if (mismatch)
    return std::string("torch.expand: a size known only at run time differs from the tensor's size "
                       "in a dimension that is not 1 (only size-1 dimensions expand), or is negative");
  if (negative)
    return std::string("negative dimension in a tensor factory or torch.expand (a size known only at "
                       "run time)");
  return std::nullopt;
}

/// The message of the check `op` needs, or nothing when it needs none.
std::optional<std::string> checkMessage(Operation *op) {
  auto indexCheck = [&](StringRef torchName, Value input, Value indices,
                        int64_t dim) -> std::optional<std::string> {
    auto type = llvm::cast<RankedTensorType>(input.getType());
    // A 0-d input is indexed as if it had one dimension of size 1.
    if (type.getRank() == 0)
      return constantIndicesInRange(indices, 1)
                 ? std::nullopt
                 : std::optional<std::string>("index out of range in " + torchName.str() +
                                              ": the input is 0-d (one element)");
    if (type.isDynamicDim(dim))
      return ("index out of range in " + torchName + ": dimension " + llvm::Twine(dim) +
              " has a size known only at run time")
          .str();
    if (constantIndicesInRange(indices, type.getDimSize(dim)))
      return std::nullopt;
    return ("index out of range in " + torchName + ": dimension " + llvm::Twine(dim) +
            " has size " + llvm::Twine(type.getDimSize(dim)))
        .str();
  };
  std::optional<std::string> message;
  if (auto a = llvm::dyn_cast<AssertOp>(op))
    message = a.getMessage().str();
  else if (auto s = llvm::dyn_cast<IndexSelectOp>(op))
    message = indexCheck("torch.index_select", s.getInput(), s.getIndex(), s.getDim());
  else if (auto g = llvm::dyn_cast<GatherOp>(op))
    message = indexCheck("torch.gather", g.getInput(), g.getIndex(), g.getDim());
  else if (auto sc = llvm::dyn_cast<ScatterOp>(op))
    message = indexCheck("torch.scatter", sc.getInput(), sc.getIndex(), sc.getDim());
  else if (auto e = llvm::dyn_cast<EmbeddingOp>(op))
    message = indexCheck("torch.nn.functional.embedding", e.getWeight(), e.getIndices(), 0);
  else if (auto x = llvm::dyn_cast<ExpandDynamicOp>(op))
    message = expandCheck(x);
  else if (auto i = llvm::dyn_cast<IotaOp>(op); i && !isNonNegativeSize(i.getCount()))
    message = "torch.arange: upper bound and larger bound inconsistent with step sign (a bound "
              "known only at run time)";
  if (message) {
    std::string where = sourcePosition(op->getLoc());
    if (!where.empty())
      *message += " (at " + where + ")";
  }
  return message;
}

} // namespace

void numberRuntimeChecks(func::FuncOp func) {
  SmallVector<Attribute> messages;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!llvm::isa<CuvilDialect>(op->getDialect()))
      return;
    if (std::optional<std::string> message = checkMessage(op)) {
      messages.push_back(StringAttr::get(func.getContext(), *message));
      op->setAttr(kCheckIdAttr, IntegerAttr::get(IntegerType::get(func.getContext(), 32),
                                                 messages.size()));
    }
  });
  if (!messages.empty())
    func->setAttr(kFailureMessagesAttr, ArrayAttr::get(func.getContext(), messages));
}

bool needsRuntimeCheck(Operation *cuvilOp) { return cuvilOp->hasAttr(kCheckIdAttr); }

void recordCheck(OpBuilder &b, Location loc, Operation *cuvilOp, Value failed) {
  auto id = cuvilOp->getAttrOfType<IntegerAttr>(kCheckIdAttr);
  if (!id)
    return; // proven unnecessary at compile time
  Value k = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(id.getInt()));
  Value zero = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
  auto select = b.create<arith::SelectOp>(loc, failed, k, zero);
  select->setAttr(kCheckAttr, id);
}

namespace {

/// A failure status produced in a block: a recorded check (its select) or
/// the status an scf.if / scf.while inside the block returns. `order` is
/// the lowest check number it may report (lower numbers win, as at the top).
struct StatusSource {
  int64_t order;
  Value failed; ///< i1: this source failed
  Value status; ///< i32: the number it reports then
};

/// Folds the sources of a block into one i32 status at `b`'s point: the
/// lowest-ordered failed source's number, or 0.
Value foldStatus(OpBuilder &b, Location loc, SmallVector<StatusSource> sources) {
  llvm::sort(sources, [](const StatusSource &x, const StatusSource &y) { return x.order > y.order; });
  Value status = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
  for (const StatusSource &src : sources)
    status = b.create<arith::SelectOp>(loc, src.failed, src.status, status);
  return status;
}

/// Checks inside data-dependent control flow: every scf.if and scf.while
/// holding checks returns one more value, the status of what it ran (a
/// loop carries it and stops at the first failure), which its parent folds
/// like a check of its own.
class StatusThreader {
public:
  explicit StatusThreader(func::FuncOp func) : func(func) {}

  /// The sources of `block`, its nested control flow threaded first.
  FailureOr<SmallVector<StatusSource>> sourcesOf(Block &block) {
    SmallVector<StatusSource> sources;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto select = llvm::dyn_cast<arith::SelectOp>(op)) {
        if (auto id = select->getAttrOfType<IntegerAttr>(kCheckAttr)) {
          sources.push_back({id.getInt(), select.getCondition(), select.getTrueValue()});
          select->removeAttr(kCheckAttr);
        }
        continue;
      }
      if (op.getNumRegions() == 0)
        continue;
      bool holdsChecks = false;
      op.walk([&](arith::SelectOp s) { holdsChecks |= s->hasAttr(kCheckAttr); });
      if (!holdsChecks)
        continue;
      FailureOr<StatusSource> nested = failure();
      if (auto branch = llvm::dyn_cast<scf::IfOp>(op))
        nested = threadIf(branch);
      else if (auto loop = llvm::dyn_cast<scf::WhileOp>(op))
        nested = threadWhile(loop);
      else
        return op.emitError() << "a run-time check inside '" << op.getName()
                              << "' is not supported by the CPU code generator yet";
      if (failed(nested))
        return failure();
      sources.push_back(*nested);
    }
    return sources;
  }

private:
  func::FuncOp func;

  static int64_t lowest(ArrayRef<StatusSource> sources) {
    int64_t order = std::numeric_limits<int64_t>::max();
    for (const StatusSource &s : sources)
      order = std::min(order, s.order);
    return order;
  }

  static StatusSource sourceOf(OpBuilder &b, Location loc, Value status, int64_t order) {
    Value zero = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
    Value failed = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, status, zero);
    return {order, failed, status};
  }

  /// `sources` with the status an earlier iteration left, which wins: the
  /// first failure is the one reported.
  static SmallVector<StatusSource> withCarried(OpBuilder &b, Location loc, ArrayRef<StatusSource> sources,
                                               Value carried) {
    SmallVector<StatusSource> all(sources);
    all.push_back(sourceOf(b, loc, carried, std::numeric_limits<int64_t>::min()));
    return all;
  }

  FailureOr<StatusSource> threadIf(scf::IfOp branch) {
    Location loc = branch.getLoc();
    OpBuilder b(branch);
    int64_t order = std::numeric_limits<int64_t>::max();
    SmallVector<Value> statuses;
    for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()}) {
      if (region->empty()) { // an if without else: give it one that yields
        OpBuilder eb(branch.getContext());
        Block *block = eb.createBlock(region);
        eb.setInsertionPointToEnd(block);
        eb.create<scf::YieldOp>(loc);
      }
      Block &block = region->front();
      FailureOr<SmallVector<StatusSource>> sources = sourcesOf(block);
      if (failed(sources))
        return failure();
      order = std::min(order, lowest(*sources));
      OpBuilder end(block.getTerminator());
      statuses.push_back(foldStatus(end, loc, *sources));
    }
    // The if again, with the status as its last result.
    SmallVector<Type> types(branch.getResultTypes());
    types.push_back(b.getI32Type());
    auto threaded = b.create<scf::IfOp>(loc, types, branch.getCondition(), /*withElse=*/true);
    for (auto [k, region] : llvm::enumerate(SmallVector<Region *>{&branch.getThenRegion(), &branch.getElseRegion()})) {
      Region &to = k == 0 ? threaded.getThenRegion() : threaded.getElseRegion();
      to.takeBody(*region);
      Operation *yield = to.front().getTerminator();
      SmallVector<Value> operands(yield->getOperands());
      operands.push_back(statuses[k]);
      OpBuilder yb(yield);
      yb.create<scf::YieldOp>(yield->getLoc(), operands);
      yield->erase();
    }
    branch.replaceAllUsesWith(threaded.getResults().drop_back());
    branch.erase();
    OpBuilder after(threaded->getBlock(), std::next(Block::iterator(threaded)));
    return sourceOf(after, loc, threaded.getResults().back(), order);
  }

  FailureOr<StatusSource> threadWhile(scf::WhileOp loop) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    Block &before = loop.getBefore().front(), &after = loop.getAfter().front();
    Type i32 = b.getI32Type();
    BlockArgument beforeStatus = before.addArgument(i32, loc);
    BlockArgument afterStatus = after.addArgument(i32, loc);

    // Before: the status so far, or this test's; the loop goes on only
    // while it is 0.
    FailureOr<SmallVector<StatusSource>> beforeSources = sourcesOf(before);
    if (failed(beforeSources))
      return failure();
    auto condition = loop.getConditionOp();
    OpBuilder cb(condition);
    Value status = foldStatus(cb, loc, withCarried(cb, loc, *beforeSources, beforeStatus));
    Value zero = cb.create<arith::ConstantOp>(loc, cb.getI32IntegerAttr(0));
    Value ok = cb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, status, zero);
    Value go = cb.create<arith::AndIOp>(loc, condition.getCondition(), ok);
    SmallVector<Value> forwarded(condition.getArgs());
    forwarded.push_back(status);
    cb.create<scf::ConditionOp>(condition.getLoc(), go, forwarded);
    condition.erase();

    // After: the status it was given, or the body's.
    FailureOr<SmallVector<StatusSource>> afterSources = sourcesOf(after);
    if (failed(afterSources))
      return failure();
    auto yield = loop.getYieldOp();
    OpBuilder yb(yield);
    SmallVector<Value> yielded(yield.getResults());
    yielded.push_back(foldStatus(yb, loc, withCarried(yb, loc, *afterSources, afterStatus)));
    yb.create<scf::YieldOp>(yield.getLoc(), yielded);
    yield.erase();

    // The loop again, carrying the status from 0.
    SmallVector<Value> inits(loop.getInits());
    inits.push_back(b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0)));
    SmallVector<Type> types(loop.getResultTypes());
    types.push_back(i32);
    auto threaded = b.create<scf::WhileOp>(loc, types, inits);
    threaded.getBefore().takeBody(loop.getBefore());
    threaded.getAfter().takeBody(loop.getAfter());
    loop.replaceAllUsesWith(threaded.getResults().drop_back());
    loop.erase();
    int64_t order = std::min(lowest(*beforeSources), lowest(*afterSources));
    OpBuilder afterLoop(threaded->getBlock(), std::next(Block::iterator(threaded)));
    return sourceOf(afterLoop, loc, threaded.getResults().back(), order);
  }
};

} // namespace

LogicalResult addStatusResult(func::FuncOp func) {
  bool any = false;
  func.walk([&](arith::SelectOp select) { any |= select->hasAttr(kCheckAttr); });
  if (!any) {
    func->removeAttr(kFailureMessagesAttr); // every check was folded away
    return success();
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "run-time checks in a function of several blocks are not supported";
  FailureOr<SmallVector<StatusSource>> sources = StatusThreader(func).sourcesOf(func.getBody().front());
  if (failed(sources))
    return failure();
  // The lowest-numbered failed check is the status.
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  Value status = foldStatus(b, func.getLoc(), *sources);
  unsigned index = func.getNumResults();
  func.insertResult(index, b.getI32Type(), DictionaryAttr::get(func.getContext()));
  ret->insertOperands(index, status);
  // The messages keep their numbering even when a check was proven
  // unnecessary: status k always names message k.
  return success();
}

Value anyIndexOutOfRange(OpBuilder &b, Location loc, Value indices, Value size) {
  MLIRContext *ctx = b.getContext();
  auto type = llvm::cast<RankedTensorType>(indices.getType());
  int64_t rank = type.getRank();
  auto flagType = RankedTensorType::get({}, b.getI1Type());
  Value hi, lo;
  if (std::optional<int64_t> n = getConstantIntValue(size)) {
    hi = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(*n));
    lo = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(-*n));
  } else {
    hi = b.create<arith::IndexCastOp>(loc, b.getI64Type(), size);
    lo = b.create<arith::SubIOp>(loc, b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0)), hi);
  }
  Value init = b.create<linalg::FillOp>(
                    loc, b.create<arith::ConstantOp>(loc, b.getBoolAttr(false)).getResult(),
                    b.create<tensor::EmptyOp>(loc, flagType.getShape(), b.getI1Type()).getResult())
                   .getResult(0);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, {}, ctx)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::reduction);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{flagType}, ValueRange{indices}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value i = args[0];
        if (i.getType() != nb.getI64Type())
          i = nb.create<arith::ExtSIOp>(nl, nb.getI64Type(), i);
        Value below = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i, lo);
        Value above = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, i, hi);
        Value bad = nb.create<arith::OrIOp>(nl, below, above);
        nb.create<linalg::YieldOp>(nl, nb.create<arith::OrIOp>(nl, args[1], bad).getResult());
      });
  return b.create<tensor::ExtractOp>(loc, generic.getResult(0), ValueRange{});
}

Value anyIndexOutOfRange(OpBuilder &b, Location loc, Value indices, int64_t size) {
  return anyIndexOutOfRange(b, loc, indices, b.create<arith::ConstantIndexOp>(loc, size).getResult());
}

Value wrapAndClampIndex(OpBuilder &b, Location loc, Value index, Value size) {
  Value i = index;
  if (i.getType() != b.getI64Type())
    i = b.create<arith::ExtSIOp>(loc, b.getI64Type(), i);
  Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  Value one = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(1));
  Value n, last;
  if (std::optional<int64_t> c = getConstantIntValue(size)) {
    n = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(*c));
    last = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(*c - 1));
  } else {
    n = b.create<arith::IndexCastOp>(loc, b.getI64Type(), size);
    last = b.create<arith::SubIOp>(loc, n, one);
  }
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i, zero);
  i = b.create<arith::SelectOp>(loc, negative, b.create<arith::AddIOp>(loc, i, n), i);
  i = b.create<arith::MaxSIOp>(loc, i, zero);
  i = b.create<arith::MinSIOp>(loc, i, last);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
}

Value wrapAndClampIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  return wrapAndClampIndex(b, loc, index, b.create<arith::ConstantIndexOp>(loc, size).getResult());
}

} // namespace mlir::cuvil::lowering

namespace mlir::cuvil::lowering {
namespace {

/// An assertion fails when any element of its condition is false.
struct AssertLowering final : OpConversionPattern<AssertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value cond = adaptor.getCondition();
    auto type = llvm::cast<RankedTensorType>(cond.getType());
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic assertion condition");
    MLIRContext *ctx = op.getContext();
    int64_t rank = type.getRank();
    auto flagType = RankedTensorType::get({}, rewriter.getI1Type());
    Value init = rewriter
                     .create<linalg::FillOp>(
                         loc, rewriter.create<arith::ConstantOp>(loc, rewriter.getBoolAttr(false)).getResult(),
                         rewriter.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{}, rewriter.getI1Type())
                             .getResult())
                     .getResult(0);
    SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                   AffineMap::get(rank, 0, {}, ctx)};
    auto anyFalse = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{flagType}, ValueRange{cond}, ValueRange{init}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::reduction),
        [&](OpBuilder &b, Location l, ValueRange a) {
          Value isFalse = b.create<arith::XOrIOp>(
              l, a[0], b.create<arith::ConstantOp>(l, b.getBoolAttr(true)));
          b.create<linalg::YieldOp>(l, b.create<arith::OrIOp>(l, a[1], isFalse).getResult());
        });
    recordCheck(rewriter, loc, op,
                rewriter.create<tensor::ExtractOp>(loc, anyFalse.getResult(0), ValueRange{}));
    rewriter.eraseOp(op);
    return success();
  }
};

struct PrintLowering final : OpConversionPattern<PrintOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(PrintOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    op.emitWarning() << "print(\"" << op.getFormat()
                     << "\") is left out of the compiled code: a library does not write to "
                        "standard output";
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateEffectLowering(const TypeConverter &tc, RewritePatternSet &patterns) {
  patterns.add<AssertLowering, PrintLowering>(tc, patterns.getContext());
}

} // namespace mlir::cuvil::lowering
