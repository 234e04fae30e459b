//===- RuntimeChecks.cpp - Failures detected while the model runs ---------===//
#include "passes/Conversion/CuvilToLinalg/RuntimeChecks.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "passes/Conversion/CuvilToLinalg/LoweringUtils.h"
#include "passes/Conversion/CuvilToLinalg/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::cuvil::lowering {
namespace {

/// Set on a cuvil op before the conversion: its check number (from 1).
constexpr llvm::StringLiteral kCheckIdAttr = "cuvil.check_id";
/// Set on the `arith.select failed, k, 0` a lowering creates for check k.
constexpr llvm::StringLiteral kCheckAttr = "cuvil.check";

/// "file:line" of the first file location in `loc`, or "".
std::string sourcePosition(Location loc) {
  std::string out;
  loc->walk([&](Location l) {
    if (auto file = llvm::dyn_cast<FileLineColLoc>(l)) {
      out = (file.getFilename().strref() + ":" + llvm::Twine(file.getLine())).str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return out;
}

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
    if (type.isDynamicDim(dim) || constantIndicesInRange(indices, type.getDimSize(dim)))
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

LogicalResult addStatusResult(func::FuncOp func) {
  SmallVector<std::pair<int64_t, arith::SelectOp>> checks;
  WalkResult nested = func.walk([&](arith::SelectOp select) {
    auto id = select->getAttrOfType<IntegerAttr>(kCheckAttr);
    if (!id)
      return WalkResult::advance();
    if (select->getParentOp() != func.getOperation() || !func.getBody().hasOneBlock()) {
      select.emitError() << "a run-time check inside a region is not supported by the CPU "
                            "code generator yet";
      return WalkResult::interrupt();
    }
    checks.emplace_back(id.getInt(), select);
    return WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return failure();
  if (checks.empty()) {
    func->removeAttr(kFailureMessagesAttr); // every check was folded away
    return success();
  }
  // The lowest-numbered failed check is the status: fold from the last.
  llvm::sort(checks, [](auto &a, auto &b) { return a.first > b.first; });
  auto ret = llvm::cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder b(ret);
  Location loc = func.getLoc();
  Value status = b.create<arith::ConstantOp>(loc, b.getI32IntegerAttr(0));
  for (auto &[id, select] : checks) {
    status = b.create<arith::SelectOp>(loc, select.getCondition(), select.getTrueValue(), status);
    select->removeAttr(kCheckAttr);
  }
  unsigned index = func.getNumResults();
  func.insertResult(index, b.getI32Type(), DictionaryAttr::get(func.getContext()));
  ret->insertOperands(index, status);
  // The messages keep their numbering even when a check was proven
  // unnecessary: status k always names message k.
  return success();
}

Value anyIndexOutOfRange(OpBuilder &b, Location loc, Value indices, int64_t size) {
  MLIRContext *ctx = b.getContext();
  auto type = llvm::cast<RankedTensorType>(indices.getType());
  int64_t rank = type.getRank();
  auto flagType = RankedTensorType::get({}, b.getI1Type());
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
        Value lo = nb.create<arith::ConstantOp>(nl, nb.getI64IntegerAttr(-size));
        Value hi = nb.create<arith::ConstantOp>(nl, nb.getI64IntegerAttr(size));
        Value below = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::slt, i, lo);
        Value above = nb.create<arith::CmpIOp>(nl, arith::CmpIPredicate::sge, i, hi);
        Value bad = nb.create<arith::OrIOp>(nl, below, above);
        nb.create<linalg::YieldOp>(nl, nb.create<arith::OrIOp>(nl, args[1], bad).getResult());
      });
  return b.create<tensor::ExtractOp>(loc, generic.getResult(0), ValueRange{});
}

Value wrapAndClampIndex(OpBuilder &b, Location loc, Value index, int64_t size) {
  Value i = index;
  if (i.getType() != b.getI64Type())
    i = b.create<arith::ExtSIOp>(loc, b.getI64Type(), i);
  Value zero = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(0));
  Value n = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(size));
  Value last = b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(size - 1));
  Value negative = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, i, zero);
  i = b.create<arith::SelectOp>(loc, negative, b.create<arith::AddIOp>(loc, i, n), i);
  i = b.create<arith::MaxSIOp>(loc, i, zero);
  i = b.create<arith::MinSIOp>(loc, i, last);
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), i);
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
