//===- Schedule.cpp - Segments to command streams -------------------------===//
//
// cuvil-npu-schedule: each cuvil_npu.segment becomes a cuvil_npu.program.
// Every op is tiled to the SRAM (Support.h's planConv for products, channel
// planes for pooling, chunks for sums); tiles alternate between buffer
// halves; a dependency tracker gives each command exactly the waits its
// bytes need (read after write, write after read, write after write, over
// SRAM and DRAM ranges), so the stream has no races and overlaps whatever
// the halves let overlap.
//
//===----------------------------------------------------------------------===//
#include "targets/NPU/Passes.h"

#include "targets/NPU/IR/Commands.h"
#include "targets/NPU/NpuConfig.h"
#include "targets/NPU/Support.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

#include "support/Tensor.h"

#include <cstring>
#include <limits>

namespace mlir::cuvil::npu {

#define GEN_PASS_DEF_NPUSCHEDULEPASS
#include "targets/NPU/Passes.h.inc"

namespace {

int32_t floatBits(float f) {
  int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

/// Appends command ops to a program and gives each its waits.
class CommandStream {
public:
  CommandStream(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  DenseI32ArrayAttr noWait() { return b.getDenseI32ArrayAttr({0, 0, 0, 0}); }
  /// A command field; one past 32 bits marks the stream as overflowed.
  int32_t field(int64_t v) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
      overflowed = true;
    return static_cast<int32_t>(v);
  }
  IntegerAttr i32(int64_t v) { return b.getI32IntegerAttr(field(v)); }
  DenseI32ArrayAttr arr(std::initializer_list<int64_t> v) {
    SmallVector<int32_t> w;
    for (int64_t x : v)
      w.push_back(field(x));
    return b.getDenseI32ArrayAttr(w);
  }
  bool overflowed = false;

  void load(int64_t layer, int64_t region, int64_t offset, StringRef space, int64_t addr,
            std::initializer_list<int64_t> shape, std::initializer_list<int64_t> dramStrides,
            std::initializer_list<int64_t> sramStrides) {
    finish(b.create<LoadOp>(loc, noWait(), i32(layer), i32(region), i32(offset), b.getStringAttr(space), i32(addr),
                            arr(shape), arr(dramStrides), arr(sramStrides)));
  }
  void store(int64_t layer, int64_t region, int64_t offset, int64_t addr, std::initializer_list<int64_t> shape,
             std::initializer_list<int64_t> dramStrides, std::initializer_list<int64_t> sramStrides) {
    finish(b.create<StoreOp>(loc, noWait(), i32(layer), i32(region), i32(offset), b.getStringAttr("abuf"),
                             i32(addr), arr(shape), arr(dramStrides), arr(sramStrides)));
  }
  template <typename OpT, typename... Args> void emit(Args &&...args) {
    finish(b.create<OpT>(loc, noWait(), std::forward<Args>(args)...));
  }

private:
  struct Record {
    Access access;
    int unit;
    int32_t index; ///< within its unit
  };

  bool sameMemory(const Access &a, const Access &b) {
    return a.space == b.space && (a.space != CUVIL_NPU_DRAM || a.region == b.region);
  }

  /// Sets `op`'s waits from the records its accesses conflict with, then
  /// records its own accesses.
  void finish(Operation *op) {
    cuvil_npu_command c = encodeCommand(op);
    int unit = unitOf(c.opcode);
    int32_t wait[CUVIL_NPU_NUM_UNITS] = {0, 0, 0, 0};
    SmallVector<Access, 4> accesses = accessesOf(c);
    for (const Access &a : accesses)
      for (const Record &r : records)
        if (r.unit != unit && sameMemory(a, r.access) && a.lo < r.access.hi && r.access.lo < a.hi &&
            (a.write || r.access.write))
          wait[r.unit] = std::max(wait[r.unit], r.index + 1);
    op->setAttr("wait", b.getDenseI32ArrayAttr(wait));
    for (const Access &a : accesses) {
      // DRAM is written once at each place (the constants and inputs never,
      // scratch is not reused): a read of it orders nothing later.
      if (a.space == CUVIL_NPU_DRAM && !a.write)
        continue;
      // A write that covers an older record supersedes it: whoever waits
      // for this command has waited for that one.
      if (a.write)
        llvm::erase_if(records, [&](const Record &r) {
          return sameMemory(a, r.access) && a.lo <= r.access.lo && r.access.hi <= a.hi &&
                 (r.unit == unit || wait[r.unit] > r.index);
        });
      records.push_back({a, unit, issued[unit]});
    }
    ++issued[unit];
  }

  OpBuilder &b;
  Location loc;
  std::vector<Record> records;
  int32_t issued[CUVIL_NPU_NUM_UNITS] = {0, 0, 0, 0};
};

/// Where a tensor lives in DRAM.
struct DramLocation {
  int64_t region = -1, offset = 0;
};

class SegmentScheduler {
public:
  SegmentScheduler(SegmentOp segment, const cuvil_npu_config &config, bool doubleBuffering)
      : segment(segment), config(config), doubleBuffering(doubleBuffering) {}

  LogicalResult run() {
    Block &body = segment.getBody().front();
    auto yield = llvm::cast<YieldOp>(body.getTerminator());
    int64_t numInputs = segment.getInputs().size(), numOutputs = segment.getNumResults();
    constantsRegion = numInputs + numOutputs;
    scratchRegion = constantsRegion + 1;
    for (auto [i, arg] : llvm::enumerate(body.getArguments()))
      where[arg] = {static_cast<int64_t>(i), 0};
    for (auto [j, v] : llvm::enumerate(yield.getValues()))
      if (!where.count(v))
        where[v] = {numInputs + static_cast<int64_t>(j), 0};
    OpBuilder b(segment);
    auto program = b.create<ProgramOp>(
        segment.getLoc(), segment.getResultTypes(), segment.getInputs(), segment.getSymNameAttr(),
        b.getDenseI32ArrayAttr(wordsOfConfig(config)), /*constants=*/DenseElementsAttr::get(RankedTensorType::get({0}, b.getIntegerType(8)), ArrayRef<int8_t>{}),
        b.getI64IntegerAttr(0), b.getStrArrayAttr({}), b.getStrArrayAttr({}), b.getDenseI64ArrayAttr({}));
    Block *block = new Block();
    program.getBody().push_back(block);
    OpBuilder cb = OpBuilder::atBlockEnd(block);
    CommandStream stream(cb, segment.getLoc());
    this->stream = &stream;

    // First the plan: which sums the convolutions take into their
    // epilogues, each op's layer, each product's tiles and constants.
    for (Operation &op : body.without_terminator()) {
      if (llvm::isa<ConstantOp>(op) || isView(&op) || fused.contains(&op))
        continue;
      if (auto c = llvm::dyn_cast<QuantConv2DOp>(op)) {
        QuantAddOp sum = fusableSum(c);
        if (failed(prepare(c, convGeometry(c), sum)))
          return failure();
      } else if (auto l = llvm::dyn_cast<QuantLinearOp>(op)) {
        if (failed(prepare(l, linearGeometry(l), {})))
          return failure();
      } else if (llvm::isa<Conv2DOp, LinearOp>(op)) {
        if (failed(prepareFp16(&op)))
          return failure();
      } else if (llvm::isa<QuantAddOp, QuantAvgPool2DOp, MaxPool2DOp>(op)) {
        layerOf[&op] = addLayer(&op, llvm::isa<QuantAddOp>(op)       ? "add"
                                     : llvm::isa<MaxPool2DOp>(op) ? "max_pool2d"
                                                                   : "avg_pool2d",
                                0);
      } else {
        return op.emitError() << "cuvil-npu-schedule: '" << op.getName() << "' is not an NPU operation";
      }
    }
    // Then the commands, in the ops' order.
    for (Operation &op : body.without_terminator()) {
      if (llvm::isa<ConstantOp>(op) || fused.contains(&op))
        continue;
      if (isView(&op))
        continue; // located with its source, when something reads it (locate)
      if (auto it = products.find(&op); it != products.end()) {
        emitProduct(*it->second, nextProduct(&op));
        continue;
      }
      if (auto a = llvm::dyn_cast<QuantAddOp>(op))
        add(a);
      else
        pool(&op);
    }

    if (stream.overflowed || scratchBytes > std::numeric_limits<int32_t>::max() ||
        constants.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return segment.emitError() << "cuvil-npu-schedule: the segment's tensors or weights exceed the 2 GiB "
                                    "the NPU's 32-bit address fields reach; split the model or run it on the host";
    // The constants as one resource blob.
    MLIRContext *ctx = segment.getContext();
    auto type = RankedTensorType::get({static_cast<int64_t>(constants.size())}, IntegerType::get(ctx, 8));
    ArrayRef<char> raw(reinterpret_cast<const char *>(constants.data()), constants.size());
    program.setConstantsAttr(DenseResourceElementsAttr::get(
        type, resourceKey((segment.getSymName() + ".program").str()),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64)));
    program.setScratchBytes(scratchBytes);
    program.setLayersAttr(b.getStrArrayAttr(SmallVector<StringRef>(layerNames.begin(), layerNames.end())));
    program.setLayerKindsAttr(b.getStrArrayAttr(SmallVector<StringRef>(layerKinds.begin(), layerKinds.end())));
    program.setLayerMacsAttr(b.getDenseI64ArrayAttr(layerMacs));
    segment.replaceAllUsesWith(program.getResults());
    segment.erase();
    if (failed(verify(program)))
      return failure();
    return success();
  }

private:
  /// Ops that compute nothing here: views alias their source, and an FP16
  /// product's widening cast is its input read as f16.
  static bool isView(Operation *op) {
    return llvm::isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op) || isWidening(op);
  }

  /// The DRAM location of `v`, placing an intermediate in scratch.
  DramLocation locate(Value v) {
    auto it = where.find(v);
    if (it != where.end())
      return it->second;
    // Views alias their source (the partitioner leaves a view the host
    // reads outside the segment, so no view is yielded).
    if (Operation *def = v.getDefiningOp(); def && isView(def)) {
      DramLocation source = locate(def->getOperand(0));
      where[v] = source;
      return source;
    }
    DramLocation l{scratchRegion, scratchBytes};
    scratchBytes += roundUp(tensorBytes(v.getType()), 64);
    where[v] = l;
    return l;
  }

  int64_t addLayer(Operation *op, StringRef kind, int64_t macs) {
    layerNames.push_back(layerName(op));
    layerKinds.push_back(kind.str());
    layerMacs.push_back(macs);
    return static_cast<int64_t>(layerNames.size()) - 1;
  }

  /// Appends `bytes` to the constants, 64-byte aligned; returns its offset.
  int64_t addConstants(ArrayRef<uint8_t> bytes) {
    int64_t at = roundUp(static_cast<int64_t>(constants.size()), 64);
    constants.resize(at, 0);
    constants.insert(constants.end(), bytes.begin(), bytes.end());
    return at;
  }

  /// Which half (or quarter) of a buffer tile `i` uses.
  int64_t slot(int64_t i) const { return doubleBuffering ? i % 2 : 0; }

  /// The sum a convolution's epilogue can do (a residual connection):
  /// the convolution's only use, its other operand computed before it, so
  /// each output tile is summed on chip instead of stored, loaded again
  /// and summed by a pass of its own.
  QuantAddOp fusableSum(QuantConv2DOp conv) {
    Value y = conv.getResult();
    if (!y.hasOneUse() || !isU8Tensor(y.getType()))
      return {};
    auto add = llvm::dyn_cast<QuantAddOp>(*y.getUsers().begin());
    if (!add || add->getBlock() != conv->getBlock() || add.getLhs() == add.getRhs())
      return {};
    Value other = add.getLhs() == y ? add.getRhs() : add.getLhs();
    if (Operation *def = other.getDefiningOp(); def && !def->isBeforeInBlock(conv))
      return {};
    ConvGeometry g = convGeometry(conv);
    if (!planConv(g, config, /*residual=*/true))
      return {};
    fused.insert(add);
    return add;
  }

  static bool isU8Tensor(Type t) {
    auto r = llvm::dyn_cast<RankedTensorType>(t);
    return r && r.getElementType().isUnsignedInteger(8);
  }

  static bool isQnnpackSum(QuantAddOp op) { return op.getArithmetic() && *op.getArithmetic() == "qnnpack"; }

  /// A quantized sum's parameters (npu_isa.h's ADD fields from sa on).
  static SmallVector<int32_t> sumParams(QuantAddOp op) {
    QuantParamsAttr pa = op.getLhsParams(), pb = op.getRhsParams(), py = op.getOutputParams();
    bool qnnpack = isQnnpackSum(op);
    int64_t zy = py.zeroPointAt(0);
    SmallVector<int32_t> params(14, 0);
    params[0] = floatBits(static_cast<float>(pa.scaleAt(0)));
    params[1] = static_cast<int32_t>(pa.zeroPointAt(0));
    params[2] = floatBits(static_cast<float>(pb.scaleAt(0)));
    params[3] = static_cast<int32_t>(pb.zeroPointAt(0));
    params[4] = floatBits(1.0f / static_cast<float>(py.scaleAt(0)));
    params[5] = static_cast<int32_t>(zy);
    params[6] = qnnpack && op.getRelu() ? static_cast<int32_t>(zy) : 0;
    params[7] = 255;
    if (qnnpack) {
      quant::QnnpackAddParams q = quant::qnnpackAddParams(pa.scaleAt(0), pa.zeroPointAt(0), pb.scaleAt(0),
                                                          pb.zeroPointAt(0), py.scaleAt(0));
      params[8] = static_cast<int32_t>(q.aMultiplier);
      params[9] = static_cast<int32_t>(q.bMultiplier);
      params[10] = static_cast<int32_t>(q.shift);
      params[11] = q.zeroPointProduct;
      params[12] = q.remainderMask;
      params[13] = q.remainderThreshold;
    }
    return params;
  }

  /// A product's weights and epilogue table for one tile of output
  /// channels: where they are in the constants.
  struct TileConstants {
    int64_t co0, cot, weights, table, tableOffsetInSlot;
  };

  /// A convolution, depthwise convolution or linear layer, planned.
  struct Product {
    Operation *op;
    ConvGeometry g;
    ConvTiling tiling;
    QuantAddOp sum; ///< a residual sum done in its epilogue
    std::vector<TileConstants> tiles;
    int64_t layer = -1, kSize = 0, zx = 0;
    QuantParamsAttr py;
    const char *mode = "qnnpack";
    Operation *last = nullptr; ///< the op whose result the epilogue writes (FP16: its relu or rounding)
    bool relu = false;         ///< FP16: a relu in the epilogue
    int64_t prefetchedSlot = -1; ///< the weight slot its first tile was loaded into early
    /// Its input is already on chip, whole, in this ABUF quarter (the
    /// product before wrote it there), or -1.
    int64_t inputQuarter = -1;
  };

  /// The result `p` computes (its fused sum's when it has one).
  static Value resultOf(const Product &p) {
    return p.sum ? p.sum->getResult(0) : p.last ? p.last->getResult(0) : p.op->getResult(0);
  }

  /// The tensor `p` reads (an FP16 product's: the f16 one its cast widens).
  static Value inputOf(const Product &p) {
    Value in = p.op->getOperand(0);
    return isWidening(in.getDefiningOp()) ? in.getDefiningOp()->getOperand(0) : in;
  }

  /// Whether `p`'s output can stay on chip as `q`'s input: `q` comes right
  /// after it and reads it, both are single-image convolutions of one band
  /// (so each reads or writes its whole tensor at once, in the channel
  /// planes the input band has), and the tensor fits a quarter of ABUF.
  /// `p` then writes its tiles into the quarter its input does not use,
  /// and `q` reads it there: no store and load between them, and a store
  /// only where something else reads it too.
  bool canForward(const Product &p, const Product &q) {
    auto singleBand = [](const Product &x) { return ceilDiv(x.g.oh, x.tiling.rows) == 1; };
    // An input read once: one band, and one weight tile when weights are resident.
    auto readsInputOnce = [&](const Product &x) {
      return singleBand(x) && (x.tiles.size() == 1 || !x.tiling.weightsOuter);
    };
    return doubleBuffering && p.g.n == 1 && q.g.n == 1 && !p.g.gemm && !q.g.gemm && !q.g.depthwise &&
           p.g.outBytes == q.g.inBytes && p.g.fp16 == q.g.fp16 && readsInputOnce(p) && readsInputOnce(q) &&
           p.g.cout * p.g.oh * p.g.ow * p.g.outBytes <= config.abuf_bytes / 4 && inputOf(q) == resultOf(p) &&
           nextScheduled(p.op) == q.op;
  }

  /// The op scheduled after `op` (views and constants aside).
  Operation *nextScheduled(Operation *op) {
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
      if (!llvm::isa<ConstantOp>(next) && !isView(next) && !fused.contains(next) &&
          !next->hasTrait<OpTrait::IsTerminator>())
        return next;
    return nullptr;
  }

  /// The product scheduled after `op`, if any.
  Product *nextProduct(Operation *op) {
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
      if (auto it = products.find(next); it != products.end())
        return it->second.get();
    return nullptr;
  }

  /// A product's weights (operand 1) and bias (operand 2, if any), which
  /// the partitioner checked are constants.
  static LogicalResult productConstants(Operation *op, std::optional<::cuvil::Tensor> &weights,
                                        std::optional<::cuvil::Tensor> &bias) {
    for (unsigned i = 1; i < std::min(op->getNumOperands(), 3u); ++i) {
      auto c = op->getOperand(i).getDefiningOp<ConstantOp>();
      if (!c)
        return op->emitError() << "cuvil-npu-schedule: operand " << i << " of an NPU product is not a constant";
      FailureOr<::cuvil::Tensor> t = reference::tensorFromAttr(c.getValue(), c.getLoc());
      if (failed(t))
        return failure();
      (i == 1 ? weights : bias) = std::move(*t);
    }
    return success();
  }

  /// Plans `op`: its tiling, and its weights and epilogue table per tile
  /// of output channels (weights [K][cot] then {offset, multiplier, bias}
  /// per channel, as the CPU kernels compute them, QuantArithmetic.h).
  LogicalResult prepare(Operation *op, const ConvGeometry &g, QuantAddOp sum) {
    std::optional<ConvTiling> tiling = planConv(g, config, static_cast<bool>(sum));
    if (!tiling)
      return op->emitError() << "cuvil-npu-schedule: no tiling fits the SRAM";
    auto p = std::make_unique<Product>();
    p->op = op, p->g = g, p->tiling = *tiling, p->sum = sum;
    QuantParamsAttr px, pw, py;
    std::optional<StringRef> arithmetic;
    if (auto c = llvm::dyn_cast<QuantConv2DOp>(op)) {
      px = c.getInputParams(), pw = c.getWeightParams(), py = c.getOutputParamsAttr();
      arithmetic = c.getArithmetic();
    } else {
      auto l = llvm::cast<QuantLinearOp>(op);
      px = l.getInputParams(), pw = l.getWeightParams(), py = l.getOutputParamsAttr();
      arithmetic = l.getArithmetic();
    }
    bool onednn = arithmetic && *arithmetic == "onednn";
    std::optional<::cuvil::Tensor> w, bias;
    if (failed(productConstants(op, w, bias)))
      return failure();
    int64_t kSize = g.reduction(), zx = px.zeroPointAt(0);
    p->kSize = kSize, p->zx = zx, p->py = py;
    p->mode = py ? (onednn ? "onednn" : "qnnpack") : (onednn ? "f32_onednn" : "f32");
    for (int64_t co0 = 0; co0 < g.cout; co0 += tiling->coTile) {
      int64_t cot = std::min(tiling->coTile, g.cout - co0);
      std::vector<uint8_t> wb(kSize * cot);
      std::vector<uint8_t> table(cot * 12);
      for (int64_t c = 0; c < cot; ++c) {
        int64_t co = co0 + c;
        uint32_t total = 0;
        for (int64_t k = 0; k < kSize; ++k) {
          // The weight tensor is [cout][cin/groups][kh][kw] (linear:
          // [n][k]), i.e. row co holds this channel's reduction in order.
          int8_t v = static_cast<int8_t>(w->getInt(co * kSize + k));
          wb[k * cot + c] = static_cast<uint8_t>(v);
          total += static_cast<uint32_t>(static_cast<int32_t>(v));
        }
        float multiplier, epilogueBias = 0;
        if (onednn) {
          quant::OnednnEpilogue e = quant::onednnEpilogue(px.scaleAt(0), pw.scaleAt(co),
                                                          bias ? static_cast<float>(bias->getDouble(co)) : 0.0f,
                                                          py ? py.scaleAt(0) : 1.0, !py);
          multiplier = e.multiplier, epilogueBias = e.bias;
        } else {
          multiplier = py ? quant::requantizeMultiplier(px.scaleAt(0), pw.scaleAt(co), py.scaleAt(0))
                          : quant::dequantizeScale(px.scaleAt(0), pw.scaleAt(co));
        }
        float biasInverse = 1.0f / static_cast<float>(px.scaleAt(0) * pw.scaleAt(co));
        int64_t bq = bias && !onednn
                         ? quant::roundToStorage(static_cast<float>(bias->getDouble(co)), biasInverse, 0,
                                                 std::numeric_limits<int32_t>::min(),
                                                 std::numeric_limits<int32_t>::max())
                         : 0;
        int32_t offset = static_cast<int32_t>(static_cast<uint32_t>(bq) - static_cast<uint32_t>(zx) * total);
        std::memcpy(&table[c * 12], &offset, 4);
        std::memcpy(&table[c * 12 + 4], &multiplier, 4);
        std::memcpy(&table[c * 12 + 8], &epilogueBias, 4);
      }
      int64_t wOff = addConstants(wb), tOff = addConstants(table);
      p->tiles.push_back({co0, cot, wOff, tOff, roundUp(kSize * cot, config.alignment)});
    }
    StringRef kind = g.gemm ? "linear" : g.depthwise ? "depthwise" : sum ? "conv2d+add" : "conv2d";
    p->layer = addLayer(op, kind, g.macs());
    products[op] = std::move(p);
    return success();
  }

  /// Plans an FP16 product (the partitioner checked it: a widened f16
  /// input, f16 weights, constant bias): weights [K][cot] as binary16 and
  /// the table's bias per channel; its relu and its rounding to f16, when
  /// they follow it, go into its epilogue.
  LogicalResult prepareFp16(Operation *op) {
    Operation *last = op;
    bool relu = false, rounded = false;
    if (Operation *u = soleUser(last); u && llvm::isa<ReluOp>(u) && u->getBlock() == op->getBlock()) {
      fused.insert(u);
      last = u, relu = true;
    }
    if (Operation *u = soleUser(last); u && isNarrowing(u) && u->getBlock() == op->getBlock()) {
      fused.insert(u);
      last = u, rounded = true;
    }
    int64_t outBytes = rounded ? 2 : 4;
    ConvGeometry g = llvm::isa<Conv2DOp>(op) ? convGeometry(llvm::cast<Conv2DOp>(op), outBytes)
                                             : linearGeometry(llvm::cast<LinearOp>(op), outBytes);
    std::optional<ConvTiling> tiling = planConv(g, config);
    if (!tiling)
      return op->emitError() << "cuvil-npu-schedule: no tiling fits the SRAM";
    std::optional<::cuvil::Tensor> w, bias;
    if (failed(productConstants(op, w, bias)))
      return failure();
    auto p = std::make_unique<Product>();
    p->op = op, p->g = g, p->tiling = *tiling, p->last = last, p->relu = relu;
    p->kSize = g.reduction(), p->zx = 0; // padding reads +0.0
    p->mode = "float";
    for (int64_t co0 = 0; co0 < g.cout; co0 += tiling->coTile) {
      int64_t cot = std::min(tiling->coTile, g.cout - co0);
      std::vector<uint8_t> wb(p->kSize * cot * 2), table(cot * 12, 0);
      for (int64_t c = 0; c < cot; ++c) {
        int64_t co = co0 + c;
        for (int64_t k = 0; k < p->kSize; ++k) {
          uint16_t h = ::cuvil::floatToHalf(static_cast<float>(w->getDouble(co * p->kSize + k)));
          std::memcpy(&wb[(k * cot + c) * 2], &h, 2);
        }
        float one = 1.0f, b = bias ? static_cast<float>(bias->getDouble(co)) : 0.0f;
        std::memcpy(&table[c * 12 + 4], &one, 4);
        std::memcpy(&table[c * 12 + 8], &b, 4);
      }
      int64_t wOff = addConstants(wb), tOff = addConstants(table);
      p->tiles.push_back({co0, cot, wOff, tOff, roundUp(p->kSize * cot * 2, config.alignment)});
    }
    StringRef kind = g.gemm ? "linear fp16" : g.depthwise ? "depthwise fp16" : "conv2d fp16";
    p->layer = addLayer(op, kind, g.macs());
    products[op] = std::move(p);
    return success();
  }

  void loadWeights(const Product &p, const TileConstants &t, int64_t s) {
    const int64_t wHalf = config.wbuf_bytes / 2;
    stream->load(p.layer, constantsRegion, t.weights, "wbuf", s * wHalf, {1, 1, p.kSize * t.cot * p.g.inBytes},
                 {0, 0}, {0, 0});
    stream->load(p.layer, constantsRegion, t.table, "wbuf", s * wHalf + t.tableOffsetInSlot, {1, 1, t.cot * 12},
                 {0, 0}, {0, 0});
  }

  /// The weights of `p`'s first tile into the next weight slot, ahead of
  /// its turn, so that they load while the product before it computes: the
  /// caller issues it after that product's last weights (which it would
  /// otherwise overwrite) and last input band (which the in-order LOAD
  /// unit would otherwise hold back behind it).
  void prefetchWeights(Product &p, int64_t inUse) {
    // One weight buffer only: the product before still reads it.
    if (p.prefetchedSlot >= 0 || slot(weightSlot) == inUse)
      return;
    p.prefetchedSlot = slot(weightSlot++);
    loadWeights(p, p.tiles.front(), p.prefetchedSlot);
  }

  /// The weight slot of `p`'s tile `t`, loading it unless prefetched.
  int64_t weightsFor(Product &p, const TileConstants &t) {
    if (&t == &p.tiles.front() && p.prefetchedSlot >= 0) {
      int64_t s = p.prefetchedSlot;
      p.prefetchedSlot = -1; // a second image loads them again
      return s;
    }
    int64_t s = slot(weightSlot++);
    loadWeights(p, t, s);
    return s;
  }

  /// `p`'s commands; the first weights of `next` (the product after it)
  /// are loaded once `p` has loaded its last input band.
  void emitProduct(Product &p, Product *next) {
    const ConvGeometry &g = p.g;
    const ConvTiling &tiling = p.tiling;
    QuantAddOp sum = p.sum;
    Operation *op = p.op;
    int64_t layer = p.layer, zx = p.zx;
    QuantParamsAttr py = p.py;
    bool forward = next && canForward(p, *next);
    // In DRAM only what is loaded or stored there.
    bool stored = !forward || !resultOf(p).hasOneUse();
    DramLocation in = p.inputQuarter >= 0 ? DramLocation() : locate(op->getOperand(0));
    DramLocation out = stored ? locate(resultOf(p)) : DramLocation();
    DramLocation residual;
    bool residualIsLhs = false;
    SmallVector<int32_t> sumParameters;
    if (sum) {
      residualIsLhs = sum.getRhs() == op->getResult(0);
      residual = locate(residualIsLhs ? sum.getLhs() : sum.getRhs());
      sumParameters = sumParams(sum);
    }
    const int64_t wHalf = config.wbuf_bytes / 2, aQuarter = config.abuf_bytes / 4, accHalf = config.acc_bytes / 2;
    const int64_t e = g.outBytes, ie = g.inBytes; // bytes per output, input element
    int64_t bands = ceilDiv(g.oh, tiling.rows);

    // The input band of output rows [y0, y0 + rows): input rows [r0, r1).
    struct Band {
      int64_t y0, rows, r0, r1;
    };
    auto bandOf = [&](int64_t b) {
      Band band;
      band.y0 = b * tiling.rows;
      band.rows = std::min(tiling.rows, g.oh - band.y0);
      if (g.gemm) {
        band.r0 = band.y0, band.r1 = band.y0 + band.rows;
      } else {
        // A band of bottom padding only still loads a real row (its taps
        // then all fall below it, in the padding).
        band.r0 = std::min(std::max<int64_t>(0, band.y0 * g.sh - g.ph), g.h - 1);
        band.r1 = std::min(g.h, (band.y0 + band.rows - 1) * g.sh - g.ph + (g.kh - 1) * g.dh + 1);
        band.r1 = std::max(band.r1, band.r0 + 1);
      }
      return band;
    };
    int64_t lastWeights = -1; // the weight slot the tiles being emitted read
    int64_t bandsLeft = g.n * (tiling.weightsOuter ? static_cast<int64_t>(p.tiles.size()) * bands : bands);
    auto loadBand = [&](int64_t n, const Band &band, int64_t c0, int64_t cn, int64_t s) {
      int64_t rows = band.r1 - band.r0;
      if (g.gemm)
        stream->load(layer, in.region, in.offset + band.r0 * g.cin * ie, "abuf", s * aQuarter,
                     {1, 1, rows * g.cin * ie}, {0, 0}, {0, 0});
      else
        stream->load(layer, in.region, in.offset + ((n * g.cin + c0) * g.h + band.r0) * g.w * ie, "abuf",
                     s * aQuarter, {cn, 1, rows * g.w * ie}, {g.h * g.w * ie, 0}, {rows * g.w * ie, 0});
      // Weights resident: the last band comes after the last weights.
      if (--bandsLeft == 0 && next && tiling.weightsOuter)
        prefetchWeights(*next, lastWeights);
    };
    int64_t forwardQuarter = -1; // where the output goes on chip, when forwarded
    auto compute = [&](int64_t n, const Band &band, const TileConstants &t, int64_t ws, int64_t is, int64_t ts) {
      // A forwarded input is the whole tensor: the band is its rows from 0.
      int64_t rows = p.inputQuarter >= 0 ? g.h : band.r1 - band.r0;
      int64_t cin = g.depthwise ? t.cot : g.cin;
      // A forwarded input starts at the tensor's row 0.
      int64_t padTop = g.gemm ? 0 : (p.inputQuarter >= 0 ? 0 : band.r0) - band.y0 * g.sh + g.ph;
      auto &b = stream;
      b->emit<MatmulOp>(
          b->i32(layer), cb().getStringAttr(g.gemm ? "gemm" : g.depthwise ? "depthwise" : "conv"),
          b->i32(is * aQuarter), g.gemm ? b->arr({g.cin, rows, 1}) : b->arr({cin, rows, g.w}), b->i32(ws * wHalf),
          b->i32(ts * accHalf), b->arr({t.cot, band.rows, g.ow}), b->arr({g.kh, g.kw}), b->arr({g.sh, g.sw}),
          b->arr({g.dh, g.dw}), b->arr({padTop, g.gemm ? 0 : g.pw}), b->i32(zx), UnitAttr(),
          g.fp16 ? cb().getUnitAttr() : UnitAttr());
      int64_t pixels = band.rows * g.ow;
      int64_t outAddr = (2 + ts) * aQuarter;
      if (forward) {
        // Channel planes of the whole output, tile after tile, in the
        // quarter this product's input does not use.
        forwardQuarter = 1 - is;
        outAddr = forwardQuarter * aQuarter + t.co0 * pixels * e;
      }
      b->emit<RequantOp>(b->i32(layer), cb().getStringAttr(p.mode), b->i32(ts * accHalf), b->i32(pixels),
                         b->i32(t.cot), b->i32(ws * wHalf + t.tableOffsetInSlot), b->i32(outAddr),
                         cb().getStringAttr(g.gemm ? "rows" : "planes"), b->i32(pixels),
                         b->i32(py ? py.zeroPointAt(0) : 0), b->i32(0), b->i32(g.fp16 ? 0 : 255),
                         p.relu ? cb().getUnitAttr() : UnitAttr(),
                         g.fp16 && e == 2 ? cb().getUnitAttr() : UnitAttr());
      if (sum) {
        // The residual's tile beside the output's, summed in place; when
        // the output is forwarded, in the output quarters, which forwarding
        // leaves free (beside it, it could run into the input quarter).
        int64_t residualAddr = forward ? (2 + ts) * aQuarter : outAddr + aQuarter / 2;
        int64_t at = ((n * g.cout + t.co0) * g.oh + band.y0) * g.ow;
        b->load(layer, residual.region, residual.offset + at, "abuf", residualAddr, {t.cot, 1, pixels},
                {g.oh * g.ow, 0}, {pixels, 0});
        b->emit<AddOp>(b->i32(layer), cb().getStringAttr(isQnnpackSum(sum) ? "qnnpack" : "float"),
                       b->i32(residualIsLhs ? residualAddr : outAddr), b->i32(residualIsLhs ? outAddr : residualAddr),
                       b->i32(outAddr), b->i32(t.cot * pixels), sum.getRelu() ? cb().getUnitAttr() : UnitAttr(),
                       cb().getDenseI32ArrayAttr(sumParameters));
      }
      if (forward)
        return; // stored whole, once, after the last tile
      if (g.gemm)
        b->store(layer, out.region, out.offset + (band.y0 * g.cout + t.co0) * e, outAddr, {1, band.rows, t.cot * e},
                 {0, g.cout * e}, {0, t.cot * e});
      else
        b->store(layer, out.region, out.offset + ((n * g.cout + t.co0) * g.oh + band.y0) * g.ow * e, outAddr,
                 {t.cot, 1, pixels * e}, {g.oh * g.ow * e, 0}, {pixels * e, 0});
    };

    for (int64_t n = 0; n < g.n; ++n) {
      if (tiling.weightsOuter) {
        for (const TileConstants &t : p.tiles) {
          int64_t ws = lastWeights = weightsFor(p, t);
          for (int64_t bi = 0; bi < bands; ++bi) {
            Band band = bandOf(bi);
            int64_t s = slot(tile++);
            if (p.inputQuarter >= 0) {
              // No band to load: the next product's weights follow this one's.
              if (next && n == g.n - 1 && &t == &p.tiles.back() && bi == bands - 1)
                prefetchWeights(*next, ws);
              compute(n, band, t, ws, p.inputQuarter, s);
              continue;
            }
            loadBand(n, band, g.depthwise ? t.co0 : 0, g.depthwise ? t.cot : g.cin, s);
            compute(n, band, t, ws, s, s);
          }
        }
      } else {
        for (int64_t bi = 0; bi < bands; ++bi) {
          Band band = bandOf(bi);
          // The first weights before the band: they need nothing of the
          // layer before, whose last tiles they overlap.
          int64_t first = weightsFor(p, p.tiles.front());
          int64_t is = p.inputQuarter;
          if (is < 0) {
            is = slot(bandSlot++);
            loadBand(n, band, 0, g.cin, is);
          }
          for (const TileConstants &t : p.tiles) {
            int64_t ws = &t == &p.tiles.front() ? first : weightsFor(p, t);
            // Bands resident: the next product's weights after this one's last.
            if (next && n == g.n - 1 && bi == bands - 1 && &t == &p.tiles.back())
              prefetchWeights(*next, ws);
            compute(n, band, t, ws, is, slot(tile++));
          }
        }
      }
    }
    if (forward) {
      if (stored)
        stream->store(layer, out.region, out.offset, forwardQuarter * aQuarter, {1, 1, g.cout * g.oh * g.ow * e},
                      {0, 0}, {0, 0});
      next->inputQuarter = forwardQuarter;
    }
  }

  /// A quantized sum, in chunks of an eighth of the activation buffer.
  void add(QuantAddOp op) {
    bool qnnpack = isQnnpackSum(op);
    SmallVector<int32_t> params = sumParams(op);
    int64_t layer = layerOf[op];
    DramLocation a = locate(op.getLhs()), bl = locate(op.getRhs()), out = locate(op.getResult());
    int64_t count = tensorBytes(op.getType()), eighth = config.abuf_bytes / 8;
    for (int64_t at = 0; at < count; at += eighth, ++tile) {
      int64_t len = std::min(eighth, count - at), s = slot(tile);
      stream->load(layer, a.region, a.offset + at, "abuf", s * eighth, {1, 1, len}, {0, 0}, {0, 0});
      stream->load(layer, bl.region, bl.offset + at, "abuf", (2 + s) * eighth, {1, 1, len}, {0, 0}, {0, 0});
      stream->emit<AddOp>(stream->i32(layer), cb().getStringAttr(qnnpack ? "qnnpack" : "float"),
                          stream->i32(s * eighth), stream->i32((2 + s) * eighth), stream->i32((4 + s) * eighth),
                          stream->i32(len), op.getRelu() ? cb().getUnitAttr() : UnitAttr(),
                          cb().getDenseI32ArrayAttr(params));
      stream->store(layer, out.region, out.offset + at, (4 + s) * eighth, {1, 1, len}, {0, 0}, {0, 0});
    }
  }

  /// Max or average pooling: whole channel planes (N and C together).
  void pool(Operation *op) {
    auto in = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
    auto outType = llvm::cast<RankedTensorType>(op->getResult(0).getType());
    int64_t planes = in.getDimSize(0) * in.getDimSize(1), h = in.getDimSize(2), w = in.getDimSize(3);
    int64_t oh = outType.getDimSize(2), ow = outType.getDimSize(3);
    ArrayRef<int64_t> kernel, stride, padding;
    SmallVector<int64_t> dilation{1, 1};
    StringRef mode = "max";
    int64_t zx = 0, zy = 0;
    float ratio = 0;
    bool countIncludePad = false, roundFirst = false;
    if (auto m = llvm::dyn_cast<MaxPool2DOp>(op)) {
      kernel = m.getKernelSize(), stride = m.getStride(), padding = m.getPadding();
      dilation.assign(m.getDilation().begin(), m.getDilation().end());
    } else {
      auto a = llvm::cast<QuantAvgPool2DOp>(op);
      kernel = a.getKernelSize(), stride = a.getStride(), padding = a.getPadding();
      bool qnnpack = a.getArithmetic() && *a.getArithmetic() == "qnnpack";
      mode = qnnpack ? "avg_qnnpack" : "avg";
      double sx = a.getInputParams().scaleAt(0), sy = a.getOutputParams().scaleAt(0);
      ratio = qnnpack ? quant::qnnpackAverageMultiplier(sx, sy, kernel[0] * kernel[1])
                      : static_cast<float>(sx) / static_cast<float>(sy);
      zx = a.getInputParams().zeroPointAt(0), zy = a.getOutputParams().zeroPointAt(0);
      countIncludePad = a.getCountIncludePad();
      roundFirst = qnnpack || a.getRoundBeforeZeroPoint();
    }
    int64_t layer = layerOf[op];
    DramLocation src = locate(op->getOperand(0)), dst = locate(op->getResult(0));
    int64_t quarter = config.abuf_bytes / 4;
    // Tiles of at most 64 KiB: small enough that the first load, which
    // nothing hides, is short.
    int64_t per = std::max<int64_t>(
        1, std::min({quarter / (h * w), quarter / (oh * ow), std::max<int64_t>(1, 65536 / (h * w))}));
    for (int64_t p0 = 0; p0 < planes; p0 += per, ++tile) {
      int64_t pn = std::min(per, planes - p0), s = slot(tile);
      stream->load(layer, src.region, src.offset + p0 * h * w, "abuf", s * quarter, {1, 1, pn * h * w}, {0, 0},
                   {0, 0});
      auto &b = stream;
      b->emit<PoolOp>(b->i32(layer), cb().getStringAttr(mode), b->i32(s * quarter), b->arr({pn, h, w}),
                      b->i32((2 + s) * quarter), b->arr({oh, ow}), b->arr({kernel[0], kernel[1]}),
                      b->arr({stride[0], stride[1]}), b->arr({dilation[0], dilation[1]}),
                      b->arr({padding[0], padding[1]}), b->i32(zx), b->i32(zy), b->i32(0), b->i32(255),
                      cb().getF32FloatAttr(ratio), countIncludePad ? cb().getUnitAttr() : UnitAttr(),
                      roundFirst ? cb().getUnitAttr() : UnitAttr());
      stream->store(layer, dst.region, dst.offset + p0 * oh * ow, (2 + s) * quarter, {1, 1, pn * oh * ow}, {0, 0},
                    {0, 0});
    }
  }

  OpBuilder &cb() { return builder; }

  SegmentOp segment;
  const cuvil_npu_config &config;
  bool doubleBuffering;
  OpBuilder builder{segment.getContext()};
  CommandStream *stream = nullptr;
  /// Tiles, weight tiles and input bands so far: the halves alternate
  /// across layers too, so a layer's first loads overlap the last tiles of
  /// the layer before it.
  int64_t tile = 0, weightSlot = 0, bandSlot = 0;
  llvm::SmallPtrSet<Operation *, 8> fused; ///< sums done in a convolution's epilogue
  llvm::DenseMap<Operation *, std::unique_ptr<Product>> products;
  llvm::DenseMap<Operation *, int64_t> layerOf; ///< sums and pools
  int64_t constantsRegion = 0, scratchRegion = 0, scratchBytes = 0;
  llvm::DenseMap<Value, DramLocation> where;
  std::vector<uint8_t> constants;
  std::vector<std::string> layerNames, layerKinds;
  SmallVector<int64_t> layerMacs;
};

class NpuSchedulePass : public impl::NpuSchedulePassBase<NpuSchedulePass> {
public:
  using NpuSchedulePassBase::NpuSchedulePassBase;

  void runOnOperation() override {
    std::optional<cuvil_npu_config> cfg = lookupConfig(config);
    if (!cfg) {
      getOperation().emitError() << "cuvil-npu-schedule: unknown NPU configuration '" << config << "'";
      return signalPassFailure();
    }
    SmallVector<SegmentOp> segments;
    getOperation().walk([&](SegmentOp s) { segments.push_back(s); });
    for (SegmentOp s : segments)
      if (failed(SegmentScheduler(s, *cfg, doubleBuffering).run()))
        return signalPassFailure();
  }
};

} // namespace

} // namespace mlir::cuvil::npu
