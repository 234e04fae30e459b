//===- Partition.cpp - Which ops run on the NPU ---------------------------===//
//
// cuvil-npu-partition: the ops of each function, in order, in runs of ops
// the NPU supports; each run becomes a cuvil_npu.segment. A run is a
// contiguous stretch of the function (constants aside), so a segment never
// needs a value computed after it: it is convex by construction.
//
//===----------------------------------------------------------------------===//
#include "targets/NPU/Passes.h"

#include "targets/NPU/NpuConfig.h"
#include "targets/NPU/Support.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "support/AtomicFile.h"
#include "support/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::cuvil::npu {

#define GEN_PASS_DEF_NPUPARTITIONPASS
#include "targets/NPU/Passes.h.inc"

namespace {

struct Verdict {
  enum Kind { Npu, View, Host } kind;
  std::string reason; ///< why it stays on the host
};

Verdict host(std::string reason) { return {Verdict::Host, std::move(reason)}; }

bool isU8(Type t) {
  auto r = llvm::dyn_cast<RankedTensorType>(t);
  return r && r.getElementType().isUnsignedInteger(8);
}

bool isStatic(Operation *op) {
  auto isStaticTensor = [](Type t) {
    auto r = llvm::dyn_cast<RankedTensorType>(t);
    return r && r.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStaticTensor) && llvm::all_of(op->getResultTypes(), isStaticTensor);
}

bool hasElement(Type t, bool (Type::*is)() const) {
  auto r = llvm::dyn_cast<RankedTensorType>(t);
  return r && (r.getElementType().*is)();
}
bool isF16(Type t) { return hasElement(t, &Type::isF16); }
bool isF32(Type t) { return hasElement(t, &Type::isF32); }

bool isFloatProduct(Operation *op) { return llvm::isa<Conv2DOp, LinearOp>(op); }

/// FP16 layers as cuvil-quantize writes them (--fallback fp16): an f32
/// convolution or linear layer whose input is an f16 tensor widened to f32
/// and whose weights are f16 values. Before classifying, make each such
/// product's ops adjacent, so a segment takes them whole:
///  - fusion groups that hold f16 work are inlined (the NPU does the
///    fusion itself, in its epilogue);
///  - each product gets a widening cast of its own, right before it;
///  - its relu and its rounding to f16 (single uses) move right after it.
/// Every move keeps each op after its operands and before its users.
void prepareFp16(func::FuncOp f) {
  auto touchesF16 = [](FusedGroupOp g) {
    bool any = false;
    g.getBody().walk([&](Operation *op) { any |= isWidening(op) || isNarrowing(op); });
    return any;
  };
  for (auto g : llvm::make_early_inc_range(f.getBody().front().getOps<FusedGroupOp>())) {
    Operation *anchorInput = g.getInputs().empty() ? nullptr : g.getInputs().front().getDefiningOp();
    if (!touchesF16(g) && !isWidening(anchorInput))
      continue;
    Block &body = g.getBody().front();
    IRMapping map;
    for (auto [arg, input] : llvm::zip(body.getArguments(), g.getInputs()))
      map.map(arg, input);
    OpBuilder b(g);
    for (Operation &op : body.without_terminator())
      b.clone(op, map);
    g.getResult().replaceAllUsesWith(map.lookup(llvm::cast<FusedYieldOp>(body.getTerminator()).getValue()));
    g.erase();
  }
  SmallVector<Operation *> products;
  f.walk([&](Operation *op) {
    if (isFloatProduct(op) && op->getBlock() == &f.getBody().front() && isWidening(op->getOperand(0).getDefiningOp()))
      products.push_back(op);
  });
  for (Operation *p : products) {
    auto cast = llvm::cast<CastOp>(p->getOperand(0).getDefiningOp());
    if (!cast->hasOneUse()) {
      OpBuilder b(p);
      p->setOperand(0, b.clone(*cast)->getResult(0));
    } else {
      cast->moveBefore(p);
    }
    Operation *last = p;
    if (Operation *u = soleUser(last); u && llvm::isa<ReluOp>(u) && u->getBlock() == p->getBlock()) {
      u->moveAfter(last);
      last = u;
    }
    if (Operation *u = soleUser(last); u && isNarrowing(u) && u->getBlock() == p->getBlock())
      u->moveAfter(last);
  }
}

/// Whether every value of the constant `v` is an f16 value.
bool halfExact(Value v, llvm::DenseMap<Operation *, bool> &cache) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return false;
  auto [it, inserted] = cache.try_emplace(c, false);
  if (!inserted)
    return it->second;
  if (isF16(c.getType()))
    return it->second = true;
  if (!isF32(c.getType()))
    return false;
  FailureOr<::cuvil::Tensor> t = reference::tensorFromAttr(c.getValue(), c.getLoc());
  if (failed(t))
    return false;
  for (int64_t i = 0; i < t->numElements(); ++i) {
    float x = static_cast<float>(t->getDouble(i));
    float h = ::cuvil::halfToFloat(::cuvil::floatToHalf(x));
    if (!(h == x || (std::isnan(h) && std::isnan(x))))
      return false;
  }
  return it->second = true;
}

/// The checks an int8 product (conv2d, linear) shares.
std::optional<Verdict> checkProduct(Operation *op, QuantParamsAttr px, QuantParamsAttr pw,
                                    QuantParamsAttr py) {
  Type x = op->getOperand(0).getType(), y = op->getResult(0).getType();
  if (!isU8(x))
    return host("its input is not u8 (the MAC array takes u8 activations and s8 weights)");
  auto w = op->getOperand(1).getDefiningOp<ConstantOp>();
  if (!w || !llvm::cast<RankedTensorType>(w.getType()).getElementType().isSignlessInteger(8))
    return host("its weights are not s8 constants (the NPU's weights are compiled into the program)");
  if (op->getNumOperands() > 2 && !op->getOperand(2).getDefiningOp<ConstantOp>())
    return host("its bias is not a constant");
  if (!px.isPerTensor() || (py && !py.isPerTensor()))
    return host("its input or output is quantized per channel");
  for (int64_t z : pw.getZeroPoint().asArrayRef())
    if (z != 0)
      return host("its weights have a non-zero zero point (the NPU's weights are symmetric)");
  auto yt = llvm::cast<RankedTensorType>(y);
  if (!(py && isU8(y)) && !(!py && yt.getElementType().isF32()))
    return host("its result is neither u8 nor an f32 of dequantized sums");
  return std::nullopt;
}

class Classifier {
public:
  explicit Classifier(const cuvil_npu_config &config) : config(config) {}

  Verdict classify(Operation *op) {
    if (llvm::isa<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>(op))
      return (isU8(op->getResult(0).getType()) || isF16(op->getResult(0).getType())) && isStatic(op)
                 ? Verdict{Verdict::View, ""}
                 : host("a view of a tensor that is neither a static u8 nor a static f16 tensor");
    bool quant = llvm::isa<QuantConv2DOp, QuantLinearOp, QuantAddOp, QuantAvgPool2DOp>(op) ||
                 (llvm::isa<MaxPool2DOp>(op) && isU8(op->getOperand(0).getType()));
    // Activations come from the host or other NPU ops, not from constants
    // (a constant activation would need a copy in the program's constants).
    unsigned activations = llvm::isa<QuantAddOp>(op) ? 2 : 1;
    if (quant)
      for (unsigned i = 0; i < activations && i < op->getNumOperands(); ++i)
        if (op->getOperand(i).getDefiningOp<ConstantOp>())
          return host("its input is a constant tensor (the NPU reads activations from the host or its own ops)");
    if (std::optional<Verdict> v = classifyFp16(op))
      return *v;
    if (llvm::isa<FusedGroupOp>(op))
      return host("a host kernel the graph pipeline fused (no int8 or FP16 layer in it)");
    if (!quant) {
      if (llvm::isa<QuantizeOp, DequantizeOp, RequantizeOp>(op))
        return host("converts between float and int8 (or between scales): the host does it at the "
                    "segment's boundary");
      if (llvm::isa<QuantMulOp>(op))
        return host("a quantized product of two tensors: not in the NPU's vector unit");
      if (llvm::isa<QuantLinearDynamicOp>(op))
        return host("a dynamically quantized layer quantizes its input at run time: not on the NPU");
      return host("not an NPU operation (the NPU runs int8 and FP16 convolutions and linear layers, int8 sums "
                  "and pooling)");
    }
    if (!isStatic(op))
      return host("a dynamic shape (the NPU runs static shapes only)");
    if (auto conv = llvm::dyn_cast<QuantConv2DOp>(op)) {
      if (auto v = checkProduct(op, conv.getInputParams(), conv.getWeightParams(), conv.getOutputParamsAttr()))
        return *v;
      ConvGeometry g = convGeometry(conv);
      if (g.groups != 1 && !g.depthwise)
        return host("a grouped convolution that is not depthwise (groups " + std::to_string(g.groups) + ")");
      if (!convFits(g, config))
        return host("one output row of it does not fit the SRAM (" + std::to_string(g.cin) + " channels x " +
                    std::to_string(g.w) + " columns)");
      return {Verdict::Npu, ""};
    }
    if (auto linear = llvm::dyn_cast<QuantLinearOp>(op)) {
      if (auto v = checkProduct(op, linear.getInputParams(), linear.getWeightParams(), linear.getOutputParamsAttr()))
        return *v;
      if (llvm::cast<RankedTensorType>(linear.getInput().getType()).getRank() != 2)
        return host("a linear layer on a tensor of rank other than 2");
      ConvGeometry g = linearGeometry(linear);
      if (!convFits(g, config))
        return host("one row of it does not fit the SRAM (" + std::to_string(g.cin) + " features)");
      return {Verdict::Npu, ""};
    }
    if (auto add = llvm::dyn_cast<QuantAddOp>(op)) {
      if (!isU8(add.getLhs().getType()) || !isU8(add.getRhs().getType()) || !isU8(add.getType()))
        return host("a sum of tensors that are not u8");
      if (add.getLhs().getType() != add.getRhs().getType())
        return host("a broadcasting sum (the vector unit adds tensors of one shape)");
      if (!add.getLhsParams().isPerTensor() || !add.getRhsParams().isPerTensor())
        return host("a sum of tensors quantized per channel");
      if (add.getArithmetic() && *add.getArithmetic() == "qnnpack") {
        quant::QnnpackAddParams p = quant::qnnpackAddParams(
            add.getLhsParams().scaleAt(0), add.getLhsParams().zeroPointAt(0), add.getRhsParams().scaleAt(0),
            add.getRhsParams().zeroPointAt(0), add.getOutputParams().scaleAt(0));
        // Shifts past 31 (scale ratios below 2^-10) are beyond 32-bit
        // arithmetic: QNNPACK asserts, the NPU's vector unit refuses them.
        if (!p.valid || p.shift > 31)
          return host("its scales are outside QNNPACK's fixed-point range");
      }
      return {Verdict::Npu, ""};
    }
    // Pooling: whole channel planes in a quarter of the activation buffer.
    auto in = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
    auto out = llvm::cast<RankedTensorType>(op->getResult(0).getType());
    if (in.getRank() != 4 || !isU8(out))
      return host("pooling of a tensor that is not a u8 NCHW tensor");
    if (in.getDimSize(2) * in.getDimSize(3) > config.abuf_bytes / 4 ||
        out.getDimSize(2) * out.getDimSize(3) > config.abuf_bytes / 4)
      return host("one channel plane does not fit a quarter of the activation buffer");
    if (auto avg = llvm::dyn_cast<QuantAvgPool2DOp>(op))
      if (!avg.getInputParams().isPerTensor())
        return host("pooling of a tensor quantized per channel");
    return {Verdict::Npu, ""};
  }

  /// Whether `op` is an FP16 product, or part of one, that the NPU runs.
  bool onNpu(Operation *op) { return op && classify(op).kind == Verdict::Npu; }

  /// The FP16 mode's ops; nullopt for the others.
  std::optional<Verdict> classifyFp16(Operation *op) {
    if (isFloatProduct(op)) {
      if (!isWidening(op->getOperand(0).getDefiningOp()))
        return host(isF32(op->getResult(0).getType())
                        ? "an FP32 product (the NPU runs int8 and FP16 layers: cuvil-quantize, --fallback fp16)"
                        : "a product of neither int8 nor FP16 layers");
      if (!isStatic(op))
        return host("a dynamic shape (the NPU runs static shapes only)");
      if (!halfExact(op->getOperand(1), halfConstants))
        return host("its weights are not constant f16 values (an FP16 layer's weights are rounded to f16)");
      if (op->getNumOperands() > 2 && !op->getOperand(2).getDefiningOp<ConstantOp>())
        return host("its bias is not a constant");
      if (!isF32(op->getResult(0).getType()))
        return host("an FP16 product whose result is not f32");
      ConvGeometry g;
      if (auto conv = llvm::dyn_cast<Conv2DOp>(op)) {
        g = convGeometry(conv, 4);
        if (g.groups != 1 && !g.depthwise)
          return host("a grouped convolution that is not depthwise (groups " + std::to_string(g.groups) + ")");
      } else {
        auto linear = llvm::cast<LinearOp>(op);
        if (llvm::cast<RankedTensorType>(linear.getInput().getType()).getRank() != 2)
          return host("a linear layer on a tensor of rank other than 2");
        g = linearGeometry(linear, 4);
      }
      if (!convFits(g, config))
        return host("one output row of it does not fit the SRAM (FP16, " + std::to_string(g.cin) + " channels x " +
                    std::to_string(g.w) + " columns)");
      return Verdict{Verdict::Npu, ""};
    }
    if (isWidening(op)) {
      Operation *user = soleUser(op);
      if (user && isFloatProduct(user) && user->getOperand(0) == op->getResult(0) && onNpu(user))
        return Verdict{Verdict::Npu, ""};
      return host("converts f16 to f32 for a host op");
    }
    // The epilogue of an FP16 product on the NPU: its relu, its rounding.
    auto fusedAfterProduct = [&](Operation *producer) {
      return producer && producer->getNextNode() == op && producer->hasOneUse() &&
             ((isFloatProduct(producer) && onNpu(producer)) ||
              (llvm::isa<ReluOp>(producer) && onNpu(producer)));
    };
    if (llvm::isa<ReluOp>(op) && isF32(op->getResult(0).getType())) {
      Operation *producer = op->getOperand(0).getDefiningOp();
      if (producer && isFloatProduct(producer) && fusedAfterProduct(producer))
        return Verdict{Verdict::Npu, ""};
      return std::nullopt;
    }
    if (isNarrowing(op)) {
      if (fusedAfterProduct(op->getOperand(0).getDefiningOp()))
        return Verdict{Verdict::Npu, ""};
      return host("converts f32 to f16: the host does it at the segment's boundary");
    }
    return std::nullopt;
  }

private:
  const cuvil_npu_config &config;
  llvm::DenseMap<Operation *, bool> halfConstants;
};

/// Whether `op` belongs with the op before it in a segment (an FP16
/// product's epilogue) or `before` with `op` (its widening cast).
bool attached(Operation *before, Operation *op) {
  return (isWidening(before) && isFloatProduct(op)) || llvm::isa<ReluOp>(op) || isNarrowing(op);
}

struct Placement {
  Operation *op; ///< valid while the op is not outlined (host ops always)
  Verdict verdict;
  int segment = -1;
  std::string name, location;
  Placement(Operation *op, Verdict verdict)
      : op(op), verdict(std::move(verdict)), name(op->getName().getStringRef().str()),
        location(locationString(op->getLoc())) {}
};

class NpuPartitionPass : public impl::NpuPartitionPassBase<NpuPartitionPass> {
public:
  using NpuPartitionPassBase::NpuPartitionPassBase;

  void runOnOperation() override {
    std::optional<cuvil_npu_config> cfg = lookupConfig(config);
    if (!cfg) {
      getOperation().emitError() << "cuvil-npu-partition: unknown NPU configuration '" << config << "'";
      return signalPassFailure();
    }
    Classifier classifier(*cfg);
    std::vector<Placement> placements;
    int segments = 0;
    for (auto f : llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>())) {
      if (f.isExternal())
        continue;
      prepareFp16(f);
      // Runs of supported ops (views join a run, never start one).
      std::vector<std::vector<Operation *>> runs(1);
      size_t firstPlacement = placements.size(); // this function's: earlier ones' ops may be gone
      for (Operation &op : f.getBody().front()) {
        if (llvm::isa<ConstantOp>(op))
          continue;
        if (op.hasTrait<OpTrait::IsTerminator>())
          break;
        Verdict v = classifier.classify(&op);
        if (v.kind == Verdict::View && runs.back().empty())
          v = host("a view outside an NPU segment stays with the host");
        if (v.kind == Verdict::Host) {
          if (!runs.back().empty())
            runs.emplace_back();
        } else {
          runs.back().push_back(&op);
        }
        placements.emplace_back(&op, v);
        if (op.getNumRegions() > 0) {
          std::string why = llvm::isa<FusedGroupOp>(op)
                                ? "fused into one host kernel with the ops around it (a cuvil.fused.group)"
                                : "inside control flow (the NPU runs straight-line segments)";
          op.walk([&](Operation *inner) {
            if (inner != &op && !llvm::isa<ConstantOp>(inner) && !inner->hasTrait<OpTrait::IsTerminator>())
              placements.emplace_back(inner, host(why));
          });
        }
      }
      std::vector<std::vector<Operation *>> limited;
      for (std::vector<Operation *> &run : runs)
        splitToCallLimit(std::move(run), limited);
      runs = std::move(limited);
      // A view the host reads stays with the host (a segment computes, it
      // does not copy): the run is cut there.
      for (size_t r = 0; r < runs.size(); ++r) {
        llvm::SmallPtrSet<Operation *, 32> inRun(runs[r].begin(), runs[r].end());
        for (size_t i = 0; i < runs[r].size(); ++i) {
          Operation *op = runs[r][i];
          if (classifier.classify(op).kind != Verdict::View ||
              llvm::all_of(op->getUsers(), [&](Operation *u) { return inRun.contains(u); }))
            continue;
          std::vector<Operation *> rest(runs[r].begin() + i + 1, runs[r].end());
          runs[r].resize(i);
          runs.insert(runs.begin() + r + 1, std::move(rest));
          for (Placement &p : llvm::make_range(placements.begin() + firstPlacement, placements.end()))
            if (p.op == op)
              p.verdict = host("a view the host reads stays with the host");
          break;
        }
      }
      for (std::vector<Operation *> &run : runs) {
        while (!run.empty() && classifier.classify(run.back()).kind == Verdict::View)
          run.pop_back(); // trailing views stay with whoever reads them
        bool any = llvm::any_of(run, [&](Operation *op) { return classifier.classify(op).kind == Verdict::Npu; });
        if (!any)
          continue;
        int index = segments++;
        for (Placement &p : llvm::make_range(placements.begin() + firstPlacement, placements.end()))
          if (llvm::is_contained(run, p.op))
            p.segment = index;
        outline(run, "npu_segment_" + std::to_string(index));
      }
      for (Placement &p : llvm::make_range(placements.begin() + firstPlacement, placements.end()))
        if (p.verdict.kind != Verdict::Host && p.segment < 0)
          p.verdict = host("a view outside an NPU segment stays with the host");
    }
    if (remarks)
      for (const Placement &p : placements)
        if (p.segment < 0)
          p.op->emitRemark() << "'" << p.op->getName() << "' runs on the host CPU: " << p.verdict.reason;
    if (!report.empty() && failed(writeReport(placements, segments)))
      return signalPassFailure();
  }

private:
  /// `run`'s ops (contiguous, in order) as one segment after its last op.
  /// What `run` reads from outside it (constants aside: a segment takes
  /// its own copy) and what is read outside it of what it computes.
  static void boundary(ArrayRef<Operation *> run, SmallVectorImpl<Value> &inputs, SmallVectorImpl<Value> &outputs) {
    llvm::SmallPtrSet<Operation *, 32> inRun(run.begin(), run.end());
    for (Operation *op : run)
      for (Value v : op->getOperands()) {
        Operation *def = v.getDefiningOp();
        if ((def && (inRun.contains(def) || llvm::isa<ConstantOp>(def))) || llvm::is_contained(inputs, v))
          continue;
        inputs.push_back(v);
      }
    for (Operation *op : run)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inRun.contains(u); }))
          outputs.push_back(r);
  }

  /// `run` in runs whose segments pass at most CUVIL_NPU_MAX_SEGMENT_BUFFERS
  /// buffers (the runtime's calls take that many), halved until they do.
  static void splitToCallLimit(std::vector<Operation *> run, std::vector<std::vector<Operation *>> &out) {
    SmallVector<Value> inputs, outputs;
    boundary(run, inputs, outputs);
    if (run.size() < 2 || inputs.size() + outputs.size() <= CUVIL_NPU_MAX_SEGMENT_BUFFERS) {
      out.push_back(std::move(run));
      return;
    }
    // Not between an FP16 product and its own casts and relu: the nearest
    // cut that is not.
    size_t half = run.size() / 2;
    for (size_t d = 0; d < run.size(); ++d) {
      if (half + d < run.size() && !attached(run[half + d - 1], run[half + d])) {
        half += d;
        break;
      }
      if (d < half && !attached(run[half - d - 1], run[half - d])) {
        half -= d;
        break;
      }
    }
    if (attached(run[half - 1], run[half])) {
      out.push_back(std::move(run)); // one product and its casts: nothing to cut
      return;
    }
    splitToCallLimit(std::vector<Operation *>(run.begin(), run.begin() + half), out);
    splitToCallLimit(std::vector<Operation *>(run.begin() + half, run.end()), out);
  }

  void outline(ArrayRef<Operation *> run, const std::string &name) {
    SmallVector<Value> inputs, outputs;
    boundary(run, inputs, outputs);
    OpBuilder b(run.back());
    b.setInsertionPointAfter(run.back());
    auto segment = b.create<SegmentOp>(run.front()->getLoc(), ValueRange(outputs).getTypes(), inputs,
                                       b.getStringAttr(name));
    Block *block = new Block();
    segment.getBody().push_back(block);
    IRMapping map;
    for (Value v : inputs)
      map.map(v, block->addArgument(v.getType(), v.getLoc()));
    OpBuilder in = OpBuilder::atBlockEnd(block);
    for (Operation *op : run) {
      for (Value v : op->getOperands())
        if (auto c = v.getDefiningOp<ConstantOp>(); c && !map.contains(v))
          in.clone(*c, map);
      in.clone(*op, map);
    }
    SmallVector<Value> yielded;
    for (Value v : outputs)
      yielded.push_back(map.lookup(v));
    in.create<YieldOp>(segment.getLoc(), yielded);
    for (auto [v, r] : llvm::zip(outputs, segment.getResults()))
      v.replaceAllUsesWith(r);
    for (Operation *op : llvm::reverse(run))
      op->erase();
    // Weights the segment took a copy of and nothing else reads.
    for (Operation &op : llvm::make_early_inc_range(*segment->getBlock()))
      if (llvm::isa<ConstantOp>(op) && op.use_empty())
        op.erase();
  }

  LogicalResult writeReport(const std::vector<Placement> &placements, int segments) {
    llvm::json::Array ops;
    int onNpu = 0;
    for (const Placement &p : placements) {
      llvm::json::Object o{{"op", p.name},
                           {"location", p.location},
                           {"placement", p.segment >= 0 ? "npu" : "cpu"}};
      if (p.segment >= 0) {
        o["segment"] = "npu_segment_" + std::to_string(p.segment);
        ++onNpu;
      } else {
        o["reason"] = p.verdict.reason;
      }
      ops.push_back(std::move(o));
    }
    llvm::json::Object root{{"config", config},
                            {"segments", segments},
                            {"ops_on_npu", onNpu},
                            {"ops_on_cpu", static_cast<int64_t>(placements.size()) - onNpu},
                            {"ops", std::move(ops)}};
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    if (::cuvil::Status s = ::cuvil::writeFileAtomically(report, text); !s) {
      getOperation().emitError() << "cuvil-npu-partition: " << s.error().message;
      return failure();
    }
    return success();
  }
};

} // namespace

} // namespace mlir::cuvil::npu
