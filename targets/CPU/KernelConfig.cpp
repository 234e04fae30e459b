//===- KernelConfig.cpp - The CPU's kernel configurations -----------------===//
#include "targets/CPU/KernelConfig.h"

#include "targets/CPU/KernelSites.h"
#include "targets/CPU/LoweringRules.h"

#include "runtime/include/cuvil/kernel_abi.h"
#include "tuning/TuningDatabase.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace mlir::cuvil::cpu {

namespace {

constexpr int64_t kMR = CUVIL_MR;
constexpr int64_t kBPanel = CUVIL_B_PANEL;

std::string shapeText(Type t) {
  auto r = llvm::dyn_cast<RankedTensorType>(t);
  if (!r)
    return "?";
  std::string s;
  for (int64_t d : r.getShape())
    s += (d == ShapedType::kDynamic ? std::string("?") : std::to_string(d)) + "x";
  llvm::raw_string_ostream os(s);
  r.getElementType().print(os);
  return s;
}

/// Multiply-adds per cycle of the int8 pixel tiles (8 channels x up to 3
/// vectors of 16 pixels, one vector of patches and one weight broadcast
/// per row loaded each step, 2 loads and 2 vpdpbusd a cycle) over an
/// output plane of `pixels`, per 16-lane vector of useful work.
double pixelTileRate(int64_t pixels) {
  auto cycles = [](int64_t nv) { return std::max(nv * 8 / 2.0, (nv + 8) / 2.0); };
  int64_t full = pixels / 48, rest = pixels % 48;
  double spent = full * cycles(3) + (rest ? cycles((rest + 15) / 16) : 0);
  return pixels * 8.0 / 16.0 / spent;
}

/// The same for pixel rows (the VNNI tile: 8 pixels x 48 channels, FMA
/// bound), the last block of rows and of channels partly empty.
double pixelRowsRate(int64_t pixels, int64_t channels) {
  double rows = double(pixels) / double((pixels + 7) / 8 * 8);
  double cols = double(channels) / double((channels + 47) / 48 * 48);
  return 2.0 * rows * cols;
}

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/// Whether a convolution's GEMM wastes fewer lanes with the image's pixels
/// as rows (MR = 8 at a time) and the output channels as the vector
/// columns (32) than the other way round: small images (7x7: 49 pixels
/// fill 56 rows but 64 columns). A pointwise convolution's usual form reads
/// its input in place and stores tiles straight from registers, which the
/// pixel-rows form (packing the input) does not: it switches only when more
/// than a tenth of the lanes would be wasted (measured: 7x7 and 14x14 gain,
/// the latter 2-5% since C is stored transposed from registers).
bool pixelRowsPay(int64_t pixels, int64_t channels, bool pointwise) {
  if (pixels <= 0 || channels <= 0)
    return false;
  double useful = double(pixels) * channels;
  double asColumns = double(roundUp(pixels, kBPanel)) * roundUp(channels, kMR);
  double asRows = double(roundUp(pixels, kMR)) * roundUp(channels, kBPanel);
  return asRows < 0.95 * asColumns && (!pointwise || asColumns > 1.1 * useful);
}

/// Whether a linear layer y = x W^T runs with x's m rows as the GEMM's rows
/// (weights as B panels; tiles stored from registers, nothing packed but
/// x's panels) rather than as y^T = W x^T (weights as A, x^T packed per
/// block). A row or a few (m < 8) stay with the latter: matrix-vector
/// products, which its narrow kernels serve.
bool linearRowsPay(int64_t m, int64_t n) {
  if (m < kMR)
    return false;
  double transposed = double(roundUp(m, kBPanel)) * roundUp(n, kMR);
  double rows = double(roundUp(m, kMR)) * roundUp(n, kBPanel);
  return rows <= transposed;
}

int64_t bytesOf(Value v) {
  int64_t n = static_cast<int64_t>(sizeof(float));
  for (int64_t d : shapeOf(v))
    n *= d;
  return n;
}

class HeuristicProvider final : public KernelConfigProvider {
public:
  explicit HeuristicProvider(const HeuristicOptions &options) : options(options) {}
  std::string name() const override { return "heuristics"; }

  void configure(ModuleOp module) override {
    // Pairs first (their producers are claimed), in the order the apply
    // pass fuses them: depthwise -> pointwise, then pointwise -> depthwise.
    llvm::DenseSet<Operation *> claimed;
    for (StringRef kind : {kernel::DepthwisePointwise, kernel::PointwiseDepthwise})
      for (Operation *op : convCandidates(module)) {
        std::optional<KernelSite> consumer = convSite(op);
        if (!consumer || !free(consumer->op, claimed))
          continue;
        KernelSite producer;
        if (!checkBandedPair(consumer->conv(), kind, &producer).empty() ||
            !free(producer.op, claimed))
          continue;
        // The band pays where the middle tensor would leave the cache and
        // the 1x1 convolution is not better off with its pixels as rows.
        Value mid = consumer->operands[0];
        ArrayRef<int64_t> in = shapeOf(mid);
        int64_t pointwiseChannels =
            kind == kernel::DepthwisePointwise ? shapeOf(consumer->operands[1])[0] : in[1];
        if (bytesOf(mid) < options.fuseDepthwiseMinBytes ||
            pixelRowsPay(in[2] * in[3], pointwiseChannels, true))
          continue;
        pair(consumer->op, producer.op, kind, mid, claimed);
      }
    for (Operation *op : kernelOps(module))
      if (!kernelConfigOf(op))
        setKernelConfig(op, choose(op), name());
  }

private:
  static bool free(Operation *op, const llvm::DenseSet<Operation *> &claimed) {
    return !claimed.contains(op) && !kernelConfigOf(op);
  }

  void pair(Operation *consumer, Operation *producer, StringRef kind, Value mid,
            llvm::DenseSet<Operation *> &claimed) {
    std::string why = llvm::formatv("with its producer in bands of rows: the {0} middle tensor "
                                    "({1} bytes) would not stay in cache",
                                    shapeText(mid.getType()), bytesOf(mid));
    setKernelConfig(consumer, {kind.str(), variant::Banded.str(), why}, name());
    KernelChoice own = choose(producer);
    own.reason = ("runs inside its consumer's " + kind + " call").str();
    setKernelConfig(producer, own, name());
    claimed.insert(consumer);
    claimed.insert(producer);
  }

  /// The choice for one op on its own; kernel::Linalg (with the reason)
  /// where no kernel applies.
  KernelChoice choose(Operation *op) {
    auto orLinalg = [&](StringRef k, StringRef v, std::string reason) {
      if (std::string why = checkKernelChoice(op, k, v); !why.empty())
        return KernelChoice{kernel::Linalg.str(), "", "no kernel: " + why};
      return KernelChoice{k.str(), v.str(), std::move(reason)};
    };
    if (auto conv = llvm::dyn_cast<Conv2DOp>(op)) {
      if (checkKernelChoice(op, kernel::Depthwise, variant::Direct).empty())
        return {kernel::Depthwise.str(), variant::Direct.str(), "one filter per channel"};
      std::string basic = checkKernelChoice(op, kernel::Conv2d, variant::Im2col);
      if (!basic.empty())
        return {kernel::Linalg.str(), "", "no kernel: " + basic};
      std::optional<KernelSite> s = siteOf(conv);
      ArrayRef<int64_t> in = shapeOf(s->operands[0]), w = shapeOf(s->operands[1]),
                        out = shapeOf(s->result());
      if (KernelChoice wino; chooseWinograd(conv, in, w, out, wino))
        return wino;
      int64_t pixels = out[2] * out[3];
      bool pointwise = w[2] == 1 && w[3] == 1 && allEqual(conv.getStride(), 1) &&
                       allEqual(conv.getPadding(), 0);
      if (pixelRowsPay(pixels, w[0] / conv.getGroups(), pointwise))
        return {kernel::Conv2d.str(), variant::PixelRows.str(),
                llvm::formatv("{0} pixels x {1} channels waste fewer vector lanes with the pixels "
                              "as GEMM rows",
                              pixels, w[0] / conv.getGroups())};
      return {kernel::Conv2d.str(), variant::Im2col.str(), "weights as GEMM rows, input as im2col panels"};
    }
    if (auto linear = llvm::dyn_cast<LinearOp>(op)) {
      std::string basic = checkKernelChoice(op, kernel::Linear, variant::WeightRows);
      if (!basic.empty())
        return {kernel::Linalg.str(), "", "no kernel: " + basic};
      std::optional<KernelSite> s = siteOf(linear);
      int64_t n = shapeOf(s->operands[1])[0], k = shapeOf(s->operands[1])[1];
      int64_t m = 1;
      for (int64_t d : shapeOf(s->operands[0]))
        m *= d;
      m /= std::max<int64_t>(k, 1);
      if (!llvm::cast<RankedTensorType>(s->operands[0].getType()).hasStaticShape())
        return {kernel::Linear.str(), variant::InputRows.str(),
                "rows known at run time: the input's rows as GEMM rows, weights as B panels"};
      if (linearRowsPay(m, n))
        return {kernel::Linear.str(), variant::InputRows.str(),
                llvm::formatv("{0} rows: the input's rows as GEMM rows, weights as B panels", m)};
      return {kernel::Linear.str(), variant::WeightRows.str(),
              llvm::formatv("{0} row(s): y^T = W x^T, weights as GEMM rows", m)};
    }
    if (llvm::isa<MatmulOp, BatchMatmulOp>(op))
      return orLinalg(kernel::Matmul, variant::Packed, "both operands packed at run time");
    if (llvm::isa<MaxPool2DOp>(op))
      return orLinalg(kernel::MaxPool2d, variant::Direct, "the depthwise kernels' grid with max");
    if (auto q = llvm::dyn_cast<QuantConv2DOp>(op)) {
      auto y = llvm::cast<RankedTensorType>(q.getType());
      int64_t pixels = y.hasStaticShape() ? y.getDimSize(2) * y.getDimSize(3) : 0;
      double tiles = pixels ? pixelTileRate(pixels) : 0, rows = pixels ? pixelRowsRate(pixels, y.getDimSize(1)) : 0;
      // Pixel rows where the pixel tiles would leave many lanes empty.
      if (rows > 1.1 * tiles && checkKernelChoice(op, kernel::QConv2d, variant::U8S8PixelRows).empty())
        return {kernel::QConv2d.str(), variant::U8S8PixelRows.str(),
                llvm::formatv("{0} pixels: as GEMM rows (modelled {1:F2} against {2:F2} useful "
                              "vpdpbusd a cycle in pixel tiles)",
                              pixels, rows, tiles)};
      return orLinalg(kernel::QConv2d, variant::U8S8,
                      "u8 x s8 products of packed patches, int32 sums, requantized in registers");
    }
    if (llvm::isa<QuantLinearOp>(op))
      return orLinalg(kernel::QLinear, variant::U8S8,
                      "u8 x s8 products on weight panels, int32 sums, requantized in registers");
    return {kernel::Linalg.str(), "", ""};
  }

  /// Winograd pays where there are enough tiles to amortise the transforms
  /// and the larger weights (read once per NR tiles): F(4x4, 3x3) with
  /// enough 4x4 tiles; else, with many channels (at least 64 in and out:
  /// measured on resnet18's 512-channel 7x7 layers; smaller layers keep the
  /// kernels they were tuned on), F(2x2, 3x3) with enough 2x2 tiles (7x7
  /// images: 4 tiles of 4x4, 16 of 2x2; 1.7x fewer multiply-adds than the
  /// direct form for 1.8x the weights).
  bool chooseWinograd(Conv2DOp conv, ArrayRef<int64_t> in, ArrayRef<int64_t> w,
                      ArrayRef<int64_t> out, KernelChoice &choice) {
    constexpr int64_t kWinograd2MinChannels = 64;
    if (!options.winograd || !checkKernelChoice(conv, kernel::Conv2d, variant::WinogradF4).empty())
      return false;
    auto tiles = [&](int64_t side) {
      return in[0] * ((out[2] + side - 1) / side) * ((out[3] + side - 1) / side);
    };
    if (tiles(4) >= options.winogradMinTiles) {
      choice = {kernel::Conv2d.str(), variant::WinogradF4.str(),
                llvm::formatv("{0} 4x4 output tiles (>= {1})", tiles(4), options.winogradMinTiles)};
      return true;
    }
    if (options.winograd2x2 && tiles(2) >= options.winogradMinTiles &&
        w[0] >= kWinograd2MinChannels && w[1] >= kWinograd2MinChannels) {
      choice = {kernel::Conv2d.str(), variant::WinogradF2.str(),
                llvm::formatv("{0} 2x2 output tiles (>= {1}), {2} channels", tiles(2),
                              options.winogradMinTiles, w[0])};
      return true;
    }
    return false;
  }

  HeuristicOptions options;
};

/// "file:line:col" of `loc`: for an inlined call, the model's own line
/// (the outermost caller's).
std::string locationText(Location loc) {
  while (auto call = llvm::dyn_cast<CallSiteLoc>(loc))
    loc = call.getCaller();
  std::string text;
  loc->walk([&](Location l) {
    if (auto f = llvm::dyn_cast<FileLineColLoc>(l)) {
      text = llvm::formatv("{0}:{1}:{2}", f.getFilename().getValue(), f.getLine(), f.getColumn());
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

std::string numberText(float f) {
  std::ostringstream os;
  os << f;
  return os.str();
}

std::string epilogueText(Operation *op) {
  std::optional<KernelSite> s = siteOf(op);
  if (!s || s->epilogue.empty())
    return "";
  std::string t;
  if (s->epilogue.residual)
    t = "+residual";
  if (s->epilogue.clamp)
    t += (t.empty() ? "" : " ") + ("clamp[" + numberText(s->epilogue.lo) + ", " +
                                   numberText(s->epilogue.hi) + "]");
  return t;
}

} // namespace

KernelConfigProvider::~KernelConfigProvider() = default;

bool isKernelOp(Operation *op) {
  return llvm::isa<Conv2DOp, LinearOp, MatmulOp, BatchMatmulOp, MaxPool2DOp, QuantConv2DOp,
                   QuantLinearOp>(op);
}

SmallVector<Operation *> kernelOps(ModuleOp module) {
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isKernelOp(op))
      ops.push_back(op);
  });
  return ops;
}

KernelConfigAttr kernelConfigOf(Operation *op) {
  return op->getAttrOfType<KernelConfigAttr>(kKernelConfigAttrName);
}

void setKernelConfig(Operation *op, const KernelChoice &choice, StringRef source) {
  op->setAttr(kKernelConfigAttrName, KernelConfigAttr::get(op->getContext(), choice.kernel, choice.variant,
                                                           source, choice.reason, choice.schedule));
}

std::vector<std::string> schedulesOf(StringRef k, StringRef v) {
  // The blocked GEMM's split: convolutions on im2col panels or pixel rows,
  // linear layers. Tile-major (A packed whole) only serves the forms that
  // pack A once: pixel rows and input rows.
  if ((k == kernel::Conv2d && v == variant::Im2col) || (k == kernel::Linear && v == variant::WeightRows))
    return {schedule::Fine.str(), schedule::Whole.str()};
  if ((k == kernel::Conv2d && v == variant::PixelRows) || (k == kernel::Linear && v == variant::InputRows))
    return {schedule::Fine.str(), schedule::Whole.str(), schedule::Stream.str()};
  return {};
}

std::string checkSchedule(StringRef k, StringRef v, StringRef s) {
  if (s.empty())
    return "";
  std::vector<std::string> valid = schedulesOf(k, v);
  if (llvm::is_contained(valid, s.str()))
    return "";
  std::string name = v.empty() ? k.str() : (k + "/" + v).str();
  if (valid.empty())
    return "kernel '" + name + "' takes no schedule (it has '" + s.str() + "')";
  return "kernel '" + name + "' has no schedule '" + s.str() + "' (it has: " + llvm::join(valid, ", ") + ")";
}

int64_t scheduleFlags(StringRef s) {
  int split = s == schedule::Fine    ? CUVIL_SPLIT_FINE
              : s == schedule::Whole ? CUVIL_SPLIT_WHOLE
              : s == schedule::Stream ? CUVIL_SPLIT_STREAM
                                      : CUVIL_SPLIT_AUTO;
  return int64_t(split) << CUVIL_FLAG_SPLIT_SHIFT;
}

std::string checkKernelChoice(Operation *op, StringRef k, StringRef v) {
  if (k == kernel::Linalg)
    return v.empty() ? "" : "kernel 'linalg' has no variants";
  return checkLoweringRule(op, k, v); // the rules as data (LoweringRules.cpp)
}

std::string checkBandedPair(Conv2DOp consumer, StringRef kind, KernelSite *producer) {
  if (kind != kernel::DepthwisePointwise && kind != kernel::PointwiseDepthwise)
    return ("'" + kind + "' is not a banded pair").str();
  return checkLoweringRule(consumer, kind, variant::Banded, producer);
}

std::vector<std::string> validKernelChoices(Operation *op) {
  static const std::pair<StringRef, StringRef> all[] = {
      {kernel::Conv2d, variant::Im2col},
      {kernel::Conv2d, variant::PixelRows},
      {kernel::Conv2d, variant::WinogradF4},
      {kernel::Conv2d, variant::WinogradF2},
      {kernel::Depthwise, variant::Direct},
      {kernel::DepthwisePointwise, variant::Banded},
      {kernel::PointwiseDepthwise, variant::Banded},
      {kernel::Linear, variant::WeightRows},
      {kernel::Linear, variant::InputRows},
      {kernel::Matmul, variant::Packed},
      {kernel::MaxPool2d, variant::Direct},
      {kernel::QConv2d, variant::U8S8},
      {kernel::QConv2d, variant::U8S8PixelRows},
      {kernel::QLinear, variant::U8S8}};
  std::vector<std::string> out;
  for (auto [k, v] : all)
    if (checkKernelChoice(op, k, v).empty())
      out.push_back((k + "/" + v).str());
  out.push_back(kernel::Linalg.str());
  return out;
}

std::unique_ptr<KernelConfigProvider> createHeuristicProvider(const HeuristicOptions &options) {
  return std::make_unique<HeuristicProvider>(options);
}

llvm::json::Array kernelReport(ModuleOp module) {
  llvm::json::Array report;
  for (Operation *op : kernelOps(module)) {
    llvm::json::Array inputs;
    for (Value v : op->getOperands())
      inputs.push_back(shapeText(v.getType()));
    llvm::json::Object entry{{"op", op->getName().getStringRef()},
                             {"location", locationText(op->getLoc())},
                             {"inputs", std::move(inputs)},
                             {"output", shapeText(op->getResult(0).getType())},
                             {"epilogue", epilogueText(op)}};
    if (KernelConfigAttr c = kernelConfigOf(op)) {
      entry["kernel"] = c.getKernel();
      entry["variant"] = c.getVariant();
      entry["source"] = c.getSource();
      entry["reason"] = c.getReason();
      entry["schedule"] = c.getSchedule();
    } else {
      entry["kernel"] = kernel::Linalg;
      entry["variant"] = "";
      entry["source"] = "";
      entry["reason"] = "no configuration";
    }
    report.push_back(std::move(entry));
  }
  return report;
}

namespace {

std::string attrText(Attribute a) {
  if (auto q = llvm::dyn_cast<QuantParamsAttr>(a))
    return q.isPerTensor() ? "per_tensor" : "per_channel(" + std::to_string(q.getAxis()) + ")";
  std::string t;
  llvm::raw_string_ostream os(t);
  a.print(os);
  // Long attributes (tables of values) by digest: the signature stays short.
  if (t.size() > 160)
    t = llvm::formatv("#{0:x16}", llvm::hash_value(t)).str();
  return t;
}

std::string ownSignature(Operation *op) {
  std::string s = op->getName().getStringRef().str() + "(";
  // Inside a fusion group, the operands the group takes from outside.
  std::optional<KernelSite> site = siteOf(op);
  SmallVector<Value> operands = site ? site->operands : SmallVector<Value>(op->getOperands());
  for (auto [i, v] : llvm::enumerate(operands)) {
    s += (i ? ", " : "") + shapeText(v.getType());
    if (v.getDefiningOp<ConstantOp>())
      s += " const";
  }
  s += ") -> ";
  for (auto [i, t] : llvm::enumerate(op->getResultTypes()))
    s += (i ? ", " : "") + shapeText(t);
  std::vector<std::pair<std::string, std::string>> attrs;
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != kKernelConfigAttrName)
      attrs.emplace_back(a.getName().str(), attrText(a.getValue()));
  std::sort(attrs.begin(), attrs.end());
  if (!attrs.empty()) {
    s += " {";
    for (auto [i, a] : llvm::enumerate(attrs))
      s += (i ? ", " : "") + a.first + " = " + a.second;
    s += "}";
  }
  if (std::string e = epilogueText(op); !e.empty())
    s += " epilogue " + e;
  return s;
}

bool isBandedKernel(StringRef k) { return k == kernel::DepthwisePointwise || k == kernel::PointwiseDepthwise; }

class TuningDbProvider final : public KernelConfigProvider {
public:
  TuningDbProvider(std::shared_ptr<const ::cuvil::tuning::TuningDatabase> db, std::string dbName,
                   std::string device)
      : db(std::move(db)), dbName(std::move(dbName)), device(std::move(device)) {}
  std::string name() const override { return "tuning-db"; }

  void configure(ModuleOp module) override {
    ::cuvil::tuning::RecordIndex index = ::cuvil::tuning::indexRecords(*db, device);
    std::map<std::string, std::vector<const ::cuvil::tuning::TuningRecord *>> elsewhere;
    for (const auto *r : index.otherDevice)
      elsewhere[r->signature()].push_back(r);
    for (const auto *r : index.otherVersion)
      elsewhere[r->signature()].push_back(r);
    std::vector<std::string> missing, ignored, rejected;
    std::set<std::string> tunedFor;
    // Banded pairs first, as the heuristics do: their producers are claimed.
    SmallVector<Operation *> ops = kernelOps(module);
    std::stable_partition(ops.begin(), ops.end(), [&](Operation *op) {
      auto it = index.bySignature.find(kernelSignature(op));
      return it != index.bySignature.end() && isBandedKernel(it->second->kernel());
    });
    for (Operation *op : ops) {
      if (kernelConfigOf(op))
        continue;
      std::string sig = kernelSignature(op);
      auto it = index.bySignature.find(sig);
      if (it == index.bySignature.end()) {
        if (auto e = elsewhere.find(sig); e != elsewhere.end()) {
          ignored.push_back(kernelLayerName(op));
          for (const auto *r : e->second)
            tunedFor.insert(r->device() + " with " + r->compiler_version());
        }
        else if (tunableChoices(op).size() > 1)
          missing.push_back(kernelLayerName(op));
        continue;
      }
      const ::cuvil::tuning::TuningRecord &r = *it->second;
      std::string why;
      KernelSite producer;
      auto conv = llvm::dyn_cast<Conv2DOp>(op);
      if (isBandedKernel(r.kernel()))
        why = !conv ? "it is not a convolution" : checkBandedPair(conv, r.kernel(), &producer);
      else
        why = checkKernelChoice(op, r.kernel(), r.variant());
      if (why.empty())
        why = checkSchedule(r.kernel(), r.variant(), r.schedule());
      if (!why.empty() || (isBandedKernel(r.kernel()) && kernelConfigOf(producer.op)))
      {
        rejected.push_back(kernelLayerName(op) + ": " + r.kernel() + "/" + r.variant() + " " +
                           (why.empty() ? "its producer is configured already" : why));
        continue;
      }
      bool same = r.kernel() == r.baseline_kernel() && r.variant() == r.baseline_variant();
      std::string reason =
          r.method() != "measured"
              ? llvm::formatv("ranked first of {0} by the cost model of profile '{1}' (not measured)",
                              r.trials(), r.profile())
                    .str()
          : same ? llvm::formatv("tuned: the heuristics' choice, the fastest of {0} measured ({1:F4} ms a "
                                 "call, {2} thread(s))",
                                 r.trials(), r.best_ms(), r.threads())
                       .str()
                 : llvm::formatv("tuned: {0:F4} ms a call against the heuristics' {1}/{2} at {3:F4} ms "
                                 "({4:F2}x; {5} measured, {6} thread(s))",
                                 r.best_ms(), r.baseline_kernel(), r.baseline_variant(), r.baseline_ms(),
                                 r.best_ms() > 0 ? r.baseline_ms() / r.best_ms() : 0.0, r.trials(), r.threads())
                       .str();
      setKernelConfig(op, {r.kernel(), r.variant(), reason, r.schedule()}, name());
    }
    auto list = [](std::vector<std::string> names) {
      std::vector<std::string> seen;
      for (std::string &n : names)
        if (std::find(seen.begin(), seen.end(), n) == seen.end())
          seen.push_back(std::move(n));
      names = std::move(seen);
      std::string t;
      for (size_t i = 0; i < names.size() && i < 12; ++i)
        t += (i ? ", " : "") + names[i];
      if (names.size() > 12)
        t += llvm::formatv(", and {0} more", names.size() - 12).str();
      return t;
    };
    if (!ignored.empty())
      module.emitWarning() << "tuning database '" << dbName << "': the records of " << ignored.size()
                           << " kernel(s) are for another device or compiler version ("
                           << list(std::vector<std::string>(tunedFor.begin(), tunedFor.end()))
                           << ") and are ignored; this build is " << device << " with "
                           << ::cuvil::tuning::compilerVersion() << " (tune for it, or give the "
                           << "--device-profile it was tuned for): " << list(ignored);
    if (!rejected.empty())
      module.emitWarning() << "tuning database '" << dbName << "': " << rejected.size()
                           << " record(s) cannot apply and take the heuristics instead: " << list(rejected);
    if (!missing.empty())
      module.emitRemark() << "tuning database '" << dbName << "' has no record for " << missing.size()
                          << " kernel(s); they take the heuristics' configurations (run cuvil-autotune "
                             "tune on this model): "
                          << list(missing);
  }

private:
  std::shared_ptr<const ::cuvil::tuning::TuningDatabase> db;
  std::string dbName, device;
};

} // namespace

std::string kernelLayerName(Operation *op) {
  // A module path: the op's name location, else its weights' names
  // ("layer1.0.conv1.weight": what scripted models' ops lack).
  std::string name, line;
  std::optional<KernelSite> site = siteOf(op);
  for (Value v : site ? site->operands : SmallVector<Value>(op->getOperands()))
    if (auto c = v.getDefiningOp<ConstantOp>())
      if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue())) {
        StringRef key = r.getRawHandle().getKey();
        size_t at = key.find(".weight");
        if (at != StringRef::npos && at > 0 && name.empty())
          name = key.take_front(at).str();
      }
  if (auto n = llvm::dyn_cast<NameLoc>(op->getLoc()))
    name = n.getName().str();
  op->getLoc()->walk([&](Location l) {
    if (auto n = llvm::dyn_cast<NameLoc>(l); n && name.empty())
      name = n.getName().str();
    if (auto f = llvm::dyn_cast<FileLineColLoc>(l); f && line.empty())
      line = llvm::sys::path::filename(f.getFilename().getValue()).str() + ":" + std::to_string(f.getLine());
    return WalkResult::advance();
  });
  return !name.empty() ? name : !line.empty() ? line : "?";
}

std::string kernelSignature(Operation *op) {
  std::string s = ownSignature(op);
  if (auto conv = llvm::dyn_cast<Conv2DOp>(op))
    for (StringRef kind : {kernel::DepthwisePointwise, kernel::PointwiseDepthwise}) {
      KernelSite producer;
      if (checkBandedPair(conv, kind, &producer).empty() && producer.op)
        s += " | banded with " + ownSignature(producer.op);
    }
  return s;
}

std::vector<KernelChoice> tunableChoices(Operation *op) {
  std::vector<KernelChoice> out;
  for (const std::string &c : validKernelChoices(op)) {
    size_t slash = c.find('/');
    if (slash == std::string::npos)
      continue; // linalg
    KernelChoice choice{c.substr(0, slash), c.substr(slash + 1), "tuning trial"};
    out.push_back(choice);
    for (const std::string &s : schedulesOf(choice.kernel, choice.variant)) {
      choice.schedule = s;
      out.push_back(choice);
    }
  }
  return out;
}

std::unique_ptr<KernelConfigProvider>
createTuningDbProvider(std::shared_ptr<const ::cuvil::tuning::TuningDatabase> db, std::string dbName,
                       std::string device) {
  return std::make_unique<TuningDbProvider>(std::move(db), std::move(dbName), std::move(device));
}

} // namespace mlir::cuvil::cpu
