//===- LoweringRules.cpp - The CPU's lowering rules as data ---------------===//
#include "targets/CPU/LoweringRules.h"

#include "targets/CPU/KernelConfig.h"

#include "runtime/include/cuvil/kernel_abi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace mlir::cuvil::cpu {

bool isConstantF32(Value v) { return isStaticF32(v) && v.getDefiningOp<ConstantOp>(); }

bool allEqual(ArrayRef<int64_t> values, int64_t to) {
  return llvm::all_of(values, [&](int64_t v) { return v == to; });
}

std::string notFor(StringRef kernel, Operation *op) {
  return ("kernel '" + kernel + "' does not run " + op->getName().getStringRef()).str();
}

namespace {

constexpr int64_t kMR = CUVIL_MR;
/// The most bytes of patches pixel rows keep in the workspace.
constexpr int64_t kMaxPixelRowsPatchBytes = 16 << 20;

using Check = std::function<std::string(RuleSubject &)>;

std::string unless(bool holds, StringRef why) { return holds ? "" : why.str(); }

//===----------------------------------------------------------------------===//
// Conditions shared by several rules
//===----------------------------------------------------------------------===//

/// The product's site (siteOf: alone, or with the epilogue of the group
/// it anchors; a second product of a group runs alone), found once.
const KernelSite &siteIn(RuleSubject &s) {
  if (!s.site)
    s.site = siteOf(s.op);
  return *s.site;
}

/// A banded pair's own site: outside groups, or anchoring one whose
/// epilogue the kernels apply.
LoweringCondition pairAnchor() {
  return {"pair-anchor", "the convolution is alone or anchors a group with an epilogue the kernel applies",
          [](RuleSubject &s) {
            s.site = siteOf(s.op);
            if (s.site && siteIn(s).root == s.op && s.op->getParentOfType<FusedGroupOp>())
              s.site.reset();
            return unless(s.site.has_value(), "its fusion group's epilogue is not one the kernel applies");
          }};
}

LoweringCondition convStatic() {
  return {"static-f32", "operands and result are static f32 tensors (a run-time batch aside)",
          [](RuleSubject &s) {
            return unless(siteIn(s).isStatic() || siteIn(s).isStaticButBatch(),
                          "its operands are not static f32 tensors (a run-time batch aside)");
          }};
}

bool depthwiseForm(const KernelSite &site) {
  ArrayRef<int64_t> in = shapeOf(site.operands[0]), w = shapeOf(site.operands[1]);
  return w[1] == 1 && static_cast<int64_t>(site.conv().getGroups()) == in[1];
}

//===----------------------------------------------------------------------===//
// The int8 kernels
//===----------------------------------------------------------------------===//

RankedTensorType typeAt(Value v) { return llvm::dyn_cast<RankedTensorType>(v.getType()); }

struct QuantParts {
  QuantParamsAttr px, pw, py;
};
QuantParts quantParts(Operation *op) {
  if (auto c = llvm::dyn_cast<QuantConv2DOp>(op))
    return {c.getInputParams(), c.getWeightParams(), c.getOutputParamsAttr()};
  auto l = llvm::cast<QuantLinearOp>(op);
  return {l.getInputParams(), l.getWeightParams(), l.getOutputParamsAttr()};
}

/// The reduction length the int8 kernels see (a convolution's channels
/// padded to quads).
int64_t quantReduction(Operation *op) {
  auto w = typeAt(op->getOperand(1));
  int64_t k = w.getNumElements() / std::max<int64_t>(w.getDimSize(0), 1);
  if (llvm::isa<QuantConv2DOp>(op) && w.getRank() == 4)
    k = (w.getDimSize(1) + 3) / 4 * 4 * w.getDimSize(2) * w.getDimSize(3);
  return k;
}

/// (The verifiers guarantee the rest: NCHW convolutions, matrix linears,
/// activations quantized per tensor.)
std::vector<LoweringCondition> quantConditions() {
  std::vector<LoweringCondition> c = {
      {"static-shapes", "static shapes", [](RuleSubject &s) {
         auto x = typeAt(s.op->getOperand(0)), w = typeAt(s.op->getOperand(1)), y = typeAt(s.op->getResult(0));
         return unless(x && w && y && x.hasStaticShape() && w.hasStaticShape() && y.hasStaticShape(),
                       "its shapes are not static");
       }},
      {"u8-activations", "ui8 activations in, ui8 or f32 out", [](RuleSubject &s) {
         auto x = typeAt(s.op->getOperand(0)), y = typeAt(s.op->getResult(0));
         return unless(x.getElementType().isUnsignedInteger(8) &&
                           (y.getElementType().isUnsignedInteger(8) || y.getElementType().isF32()),
                       "the int8 kernels take ui8 activations in, and give ui8 or f32 out");
       }},
      {"constant-i8-weights", "constant i8 weights", [](RuleSubject &s) {
         return unless(typeAt(s.op->getOperand(1)).getElementType().isSignlessInteger(8) &&
                           s.op->getOperand(1).getDefiningOp<ConstantOp>(),
                       "the int8 kernels take constant i8 weights");
       }},
      {"constant-bias", "no bias, or a constant f32 one", [](RuleSubject &s) {
         return unless(s.op->getNumOperands() <= 2 || isConstantF32(s.op->getOperand(2)),
                       "its bias is not a constant f32 tensor");
       }},
      {"symmetric-weights", "weights with zero point 0", [](RuleSubject &s) {
         return unless(llvm::none_of(quantParts(s.op).pw.getZeroPoint().asArrayRef(),
                                     [](int64_t z) { return z != 0; }),
                       "its weights have a nonzero zero point (the int8 kernels take symmetric weights)");
       }},
      {"reduction-fits", "a reduction within the kernels' scratch (CUVIL_QCONV_MAX_KP)", [](RuleSubject &s) {
         int64_t k = quantReduction(s.op);
         if (cuvil_qk_padded(k) <= CUVIL_QCONV_MAX_KP)
           return std::string();
         return llvm::formatv("its reduction ({0}) is longer than the int8 kernels' {1}", k, CUVIL_QCONV_MAX_KP).str();
       }},
  };
  return c;
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

std::vector<LoweringRule> makeRules() {
  StringRef conv2d = Conv2DOp::getOperationName();
  std::vector<LoweringCondition> convCommon = {
      convStatic(),
      {"not-depthwise", "not depthwise (one input channel per group)", [](RuleSubject &s) {
         return unless(!depthwiseForm(siteIn(s)), "depthwise convolutions run on kernel 'depthwise_conv2d'");
       }},
      {"constant-weights", "constant f32 weights", [](RuleSubject &s) {
         return unless(isConstantF32(siteIn(s).operands[1]),
                       "its weights are not constant (only depthwise_conv2d takes run-time weights)");
       }}};
  std::vector<LoweringCondition> winograd = convCommon;
  winograd.push_back({"winograd-geometry", "a 3x3 stride-1 convolution without groups or dilation",
                      [](RuleSubject &s) {
                        Conv2DOp conv = siteIn(s).conv();
                        ArrayRef<int64_t> w = shapeOf(siteIn(s).operands[1]);
                        return unless(conv.getGroups() == 1 && w[2] == 3 && w[3] == 3 &&
                                          allEqual(conv.getStride(), 1) && allEqual(conv.getDilation(), 1),
                                      "Winograd needs a 3x3 stride-1 convolution without groups or dilation");
                      }});
  winograd.push_back({"winograd-channels", "at least CUVIL_MR (8) input and output channels", [](RuleSubject &s) {
                        ArrayRef<int64_t> w = shapeOf(siteIn(s).operands[1]);
                        return unless(w[0] >= kMR && w[1] >= kMR,
                                      llvm::formatv("Winograd needs at least {0} input and output channels", kMR).str());
                      }});

  std::vector<LoweringCondition> pointwiseBand = {
      pairAnchor(), convStatic(),
      {"pointwise-geometry", "a 1x1 stride-1 convolution without groups", [](RuleSubject &s) {
         return unless(siteIn(s).conv().getGroups() == 1 && siteIn(s).hasGeometry(1, 1, 0),
                       "it is not a 1x1 stride-1 convolution without groups");
       }},
      {"constant-weights", "constant f32 weights", [](RuleSubject &s) {
         return unless(isConstantF32(siteIn(s).operands[1]), "its weights are not constant");
       }},
      {"depthwise-producer", "its input is a depthwise convolution used only here", [](RuleSubject &s) {
         Value mid = siteIn(s).operands[0];
         s.producer = convSite(mid.getDefiningOp());
         return unless(s.producer && mid.hasOneUse(), "its input is not a depthwise convolution used only here");
       }},
      {"producer-3x3", "the producer is a static 3x3 stride-1 padding-1 depthwise convolution without residual",
       [](RuleSubject &s) {
         const KernelSite &dw = *s.producer;
         return unless(dw.isStatic() && !dw.epilogue.residual && dw.hasGeometry(3, 1, 1) && dw.isDepthwise(),
                       "its producer is not a 3x3 stride-1 padding-1 depthwise convolution without residual");
       }},
      {"band-fits", "at most 64 channels, at least 16 columns, C x W at most 65536", [](RuleSubject &s) {
         ArrayRef<int64_t> in = shapeOf(siteIn(s).operands[0]);
         int64_t c = in[1], w = in[3];
         if (c <= 64 && w >= 16 && c * w <= 65536)
           return std::string();
         return llvm::formatv("the band needs at most 64 channels, at least 16 columns and C x W at most 65536 "
                              "(here {0} channels, {1} columns)",
                              c, w)
             .str();
       }}};

  std::vector<LoweringCondition> depthwiseBand = {
      pairAnchor(), convStatic(),
      {"depthwise-geometry", "a 3x3 padding-1 depthwise convolution of stride 1 or 2 without residual",
       [](RuleSubject &s) {
         int64_t stride = siteIn(s).conv().getStride()[0];
         return unless(!siteIn(s).epilogue.residual && (stride == 1 || stride == 2) &&
                           siteIn(s).hasGeometry(3, stride, 1) && siteIn(s).isDepthwise(),
                       "it is not a 3x3 padding-1 depthwise convolution of stride 1 or 2 without residual");
       }},
      {"pointwise-producer", "its input is a 1x1 convolution used only here", [](RuleSubject &s) {
         Value mid = siteIn(s).operands[0];
         s.producer = convSite(mid.getDefiningOp());
         return unless(s.producer && mid.hasOneUse(), "its input is not a 1x1 convolution used only here");
       }},
      {"producer-1x1", "the producer is a static 1x1 stride-1 convolution with constant weights, no groups, no residual",
       [](RuleSubject &s) {
         const KernelSite &pw = *s.producer;
         return unless(pw.isStatic() && !pw.epilogue.residual && pw.conv().getGroups() == 1 &&
                           pw.hasGeometry(1, 1, 0) && isConstantF32(pw.operands[1]),
                       "its producer is not a 1x1 stride-1 convolution with constant weights, no groups, no "
                       "residual");
       }},
      {"band-fits", "16 or more output columns, an even width at stride 2, C x W at most 32768", [](RuleSubject &s) {
         ArrayRef<int64_t> in = shapeOf(siteIn(s).operands[0]);
         int64_t c = in[1], w = in[3], stride = siteIn(s).conv().getStride()[0];
         if (shapeOf(siteIn(s).result())[3] >= 16 && !(stride == 2 && w % 2 != 0) && c * w <= 32768)
           return std::string();
         return llvm::formatv("the band needs 16 or more output columns, an even width at stride 2 and C x W at "
                              "most 32768 (here {0} x {1})",
                              c, w)
             .str();
       }}};

  // Rows may be a run-time size (the kernel takes M as it runs); the
  // features, K and N, are the weights'.
  auto rowsOnlyDynamic = [](Value v) {
    auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
    return t && t.getElementType().isF32() && t.getRank() >= 1 && !t.isDynamicDim(t.getRank() - 1);
  };
  std::vector<LoweringCondition> linear = {
      {"f32-static-features", "f32 operands whose last dimension is static (rows may be run-time sizes)",
       [rowsOnlyDynamic](RuleSubject &s) {
         Value bias = siteIn(s).bias();
         return unless(rowsOnlyDynamic(siteIn(s).operands[0]) && rowsOnlyDynamic(siteIn(s).result()) &&
                           (!bias || isStaticF32(bias)) &&
                           (!siteIn(s).epilogue.residual || rowsOnlyDynamic(siteIn(s).epilogue.residual)),
                       "its operands are not f32 tensors with a static last dimension");
       }},
      {"constant-weight-matrix", "constant f32 weights, a matrix", [](RuleSubject &s) {
         Value w = siteIn(s).operands[1];
         return unless(isConstantF32(w) && shapeOf(w).size() == 2, "its weights are not a constant matrix");
       }},
      {"matching-features", "the input's last dimension is the weights' (and not 0)", [](RuleSubject &s) {
         ArrayRef<int64_t> in = shapeOf(siteIn(s).operands[0]);
         int64_t k = shapeOf(siteIn(s).operands[1])[1];
         return unless(!in.empty() && k != 0 && in.back() == k,
                       "its input's last dimension is not the weights' (or is 0)");
       }}};

  auto rankedF32 = [](Value v) {
    auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
    return t && t.getElementType().isF32();
  };
  std::vector<LoweringCondition> matmul = {
      {"f32-operands", "f32 operands (sizes may be run-time ones)", [rankedF32](RuleSubject &s) {
         return unless(rankedF32(siteIn(s).operands[0]) && rankedF32(siteIn(s).operands[1]) &&
                           rankedF32(siteIn(s).result()),
                       "its operands are not f32 tensors");
       }},
      {"matrices", "matrices (rank 2 or more), the result of the left operand's rank", [](RuleSubject &s) {
         size_t ra = shapeOf(siteIn(s).operands[0]).size(), rb = shapeOf(siteIn(s).operands[1]).size();
         return unless(ra >= 2 && rb >= 2 && shapeOf(siteIn(s).result()).size() == ra,
                       "the kernel takes matrices (rank 2 or more) only");
       }},
      {"product-shapes", "a matrix product's shapes, the right operand not transposed", [](RuleSubject &s) {
         ArrayRef<int64_t> a = shapeOf(siteIn(s).operands[0]), w = shapeOf(siteIn(s).operands[1]),
                           out = shapeOf(siteIn(s).result());
         size_t ra = a.size(), rb = w.size();
         return unless(w[rb - 2] == a[ra - 1] && out[ra - 2] == a[ra - 2] && out[ra - 1] == w[rb - 1],
                       "its shapes are not a matrix product's");
       }},
      {"same-batch", "a right operand of rank 2, or the same batch dimensions as the left's", [](RuleSubject &s) {
         ArrayRef<int64_t> a = shapeOf(siteIn(s).operands[0]), w = shapeOf(siteIn(s).operands[1]);
         return unless(w.size() == 2 || a.drop_back(2) == w.drop_back(2),
                       "its batch dimensions differ (broadcasting stays with linalg)");
       }}};

  std::vector<LoweringCondition> maxPool = {
      {"static-f32-or-8-bit", "static f32, ui8 or i8 input and result (a run-time batch aside)",
       [](RuleSubject &s) {
         auto pool = llvm::cast<MaxPool2DOp>(s.op);
         return unless(isStaticButBatch(pool.getInput(), /*allow8Bit=*/true) &&
                           isStaticButBatch(pool.getResult(), /*allow8Bit=*/true),
                       "its operands are not static f32, ui8 or i8 tensors (a run-time batch aside)");
       }},
      {"windows-inside", "no window past the padded input (no ceil_mode windows)", [](RuleSubject &s) {
         auto pool = llvm::cast<MaxPool2DOp>(s.op);
         ArrayRef<int64_t> in = shapeOf(pool.getInput()), out = shapeOf(pool.getResult());
         for (int64_t i = 0; i < 2; ++i)
           if ((out[2 + i] - 1) * pool.getStride()[i] + (pool.getKernelSize()[i] - 1) * pool.getDilation()[i] + 1 >
               in[2 + i] + 2 * pool.getPadding()[i])
             return std::string("a window hangs past the padded input (ceil_mode)");
         return std::string();
       }}};

  std::vector<LoweringCondition> qconvRows = quantConditions();
  qconvRows.push_back({"one-group", "a convolution of one group", [](RuleSubject &s) {
                         return unless(llvm::cast<QuantConv2DOp>(s.op).getGroups() == 1,
                                       "pixel rows take convolutions of one group");
                       }});
  qconvRows.push_back({"patches-fit", "every pixel's patch within 16 MiB of workspace", [](RuleSubject &s) {
                         auto y = typeAt(s.op->getResult(0));
                         int64_t bytes = y.getDimSize(0) * y.getDimSize(2) * y.getDimSize(3) *
                                         cuvil_qk_padded(quantReduction(s.op));
                         if (bytes <= kMaxPixelRowsPatchBytes)
                           return std::string();
                         return llvm::formatv("its patches ({0} bytes) exceed pixel rows' {1}", bytes,
                                              kMaxPixelRowsPatchBytes)
                             .str();
                       }});

  StringRef linalg = "linalg (the general lowering)";
  return {
      {conv2d, kernel::Conv2d, {variant::Im2col, variant::PixelRows}, convCommon, linalg},
      {conv2d, kernel::Conv2d, {variant::WinogradF4, variant::WinogradF2}, winograd, "conv2d im2col"},
      {conv2d,
       kernel::Depthwise,
       {variant::Direct},
       {convStatic(),
        {"depthwise", "depthwise (one input channel per group)",
         [](RuleSubject &s) { return unless(depthwiseForm(siteIn(s)), "it is not depthwise (one input channel per group)"); }}},
       linalg},
      {conv2d, kernel::DepthwisePointwise, {variant::Banded}, pointwiseBand, "each convolution on its own kernel"},
      {conv2d, kernel::PointwiseDepthwise, {variant::Banded}, depthwiseBand, "each convolution on its own kernel"},
      {LinearOp::getOperationName(), kernel::Linear, {variant::WeightRows, variant::InputRows}, linear, linalg},
      {MatmulOp::getOperationName(), kernel::Matmul, {variant::Packed}, matmul, linalg},
      {BatchMatmulOp::getOperationName(), kernel::Matmul, {variant::Packed}, matmul, linalg},
      {MaxPool2DOp::getOperationName(), kernel::MaxPool2d, {variant::Direct}, maxPool, linalg},
      {QuantConv2DOp::getOperationName(), kernel::QConv2d, {variant::U8S8}, quantConditions(), linalg},
      {QuantConv2DOp::getOperationName(), kernel::QConv2d, {variant::U8S8PixelRows}, qconvRows, "qconv2d u8s8"},
      {QuantLinearOp::getOperationName(), kernel::QLinear, {variant::U8S8}, quantConditions(), linalg},
  };
}

std::string evaluate(const LoweringRule &rule, RuleSubject &subject, llvm::raw_ostream *explain = nullptr) {
  for (const LoweringCondition &c : rule.conditions) {
    std::string why = c.check(subject);
    if (explain)
      *explain << "    " << c.id << ": " << (why.empty() ? "holds" : "fails (" + why + ")") << "\n";
    if (!why.empty())
      return why;
  }
  return "";
}

} // namespace

const std::vector<LoweringRule> &loweringRules() {
  static const std::vector<LoweringRule> rules = makeRules();
  return rules;
}

std::string checkLoweringRule(Operation *op, StringRef kernel, StringRef variant, KernelSite *producer) {
  StringRef name = op->getName().getStringRef();
  std::vector<StringRef> variants;
  for (const LoweringRule &rule : loweringRules()) {
    if (rule.op != name || rule.kernel != kernel)
      continue;
    if (!llvm::is_contained(rule.variants, variant)) {
      llvm::append_range(variants, rule.variants);
      continue;
    }
    RuleSubject subject{op, std::nullopt, std::nullopt};
    std::string why = evaluate(rule, subject);
    if (why.empty() && producer && subject.producer)
      *producer = *subject.producer;
    return why;
  }
  if (variants.empty())
    return notFor(kernel, op);
  return ("kernel '" + kernel + "' has no variant '" + variant + "' (it has: " + llvm::join(variants, ", ") + ")")
      .str();
}

void printLoweringTable(llvm::raw_ostream &os) {
  os << "lowering rules (targets x86_64, aarch64; runtime kernels of targets/CPU/KernelConfig.h):\n";
  for (const LoweringRule &rule : loweringRules()) {
    os << "  " << rule.op << " -> " << rule.kernel << " " << llvm::join(rule.variants, "|") << "\n";
    for (const LoweringCondition &c : rule.conditions)
      os << llvm::format("      %-26s", c.id.str().c_str()) << " " << c.requirement << "\n";
    os << "    otherwise: " << rule.fallback << "\n";
  }
}

void explainLowering(Operation *op, llvm::raw_ostream &os) {
  StringRef name = op->getName().getStringRef();
  bool any = false;
  for (const LoweringRule &rule : loweringRules()) {
    if (rule.op != name)
      continue;
    any = true;
    os << "  " << rule.kernel << " " << llvm::join(rule.variants, "|") << ":\n";
    RuleSubject subject{op, std::nullopt, std::nullopt};
    std::string why = evaluate(rule, subject, &os);
    os << "    => " << (why.empty() ? "runs on " + rule.kernel.str() : "otherwise: " + rule.fallback.str()) << "\n";
  }
  if (!any)
    os << "  no rule: the general lowering (linalg)\n";
}

} // namespace mlir::cuvil::cpu
