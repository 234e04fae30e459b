//===- SelectKernels.cpp - Kernel ops to calls of the runtime's kernels ---===//
//
// The apply half of kernel selection: every convolution, linear layer,
// matrix product and max pooling whose #cuvil.kernel names a kernel
// (KernelConfig.h; written by cuvil-choose-cpu-kernels or by hand) becomes
// a call of that runtime kernel (runtime/cpu/gemm.c and friends), with its
// fusion group's epilogue (a residual add, then relu / hardtanh / clamp)
// when the group anchors on it. Weights are packed here, at compile time,
// into the layout the variant reads: [ceil(rows/8)][K][8] per group
// (im2col, weight_rows), B panels of 32 (pixel_rows, input_rows), the
// Winograd F(4x4, 3x3) or F(2x2, 3x3) domain. Matrix products of two
// run-time operands pack both sides as they run. Nothing here chooses:
// a configuration the kernel cannot run is an error.
//
// The call works on buffers in the middle of a tensor program, so it is
// written in bufferized form: inputs through bufferization.to_memref, the
// output a fresh memref.alloc (placed in the arena later) returned through
// a restrict/writable bufferization.to_tensor. Arguments are memref<1xT>
// views of each buffer's start, which the bare-pointer calling convention
// turns into the pointers the C functions take.
//
//===----------------------------------------------------------------------===//
#include "targets/CPU/Passes.h"

#include "targets/CPU/KernelConfig.h"
#include "targets/CPU/KernelSites.h"

#include "runtime/include/cuvil/kernel_abi.h"
#include "support/HugePages.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/IR/WeightDerivations.h"
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringExtras.h"

#include <cstring>
#include <limits>

namespace mlir::cuvil {
#define GEN_PASS_DEF_SELECTCPUKERNELSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;
using namespace mlir::cuvil::cpu;

namespace {

/// The tensor type a runtime kernel's call sees: 8-bit integers (ui8, i8)
/// as signless bytes, as the lowering to linalg turns them (the casts on
/// either side of the call fold away there); f32 as it is.
RankedTensorType asCallType(Type t) {
  auto r = llvm::cast<RankedTensorType>(t);
  return r.getElementType().isF32() ? r
                                    : RankedTensorType::get(r.getShape(), IntegerType::get(t.getContext(), 8));
}

// The parameter layouts, flags and packing constants the runtime's kernels
// read: runtime/include/cuvil/kernel_abi.h, one header for both sides.
constexpr int64_t kMR = CUVIL_MR;
constexpr int64_t kParamsVersion = CUVIL_KERNEL_PARAMS_VERSION;
enum : int64_t {
  kFlagBias = CUVIL_FLAG_BIAS,
  kFlagResidual = CUVIL_FLAG_RESIDUAL,
  kFlagClamp = CUVIL_FLAG_CLAMP,
  kFlagWinograd = CUVIL_FLAG_WINOGRAD,
  kFlagPixelRows = CUVIL_FLAG_PIXEL_ROWS,
  kFlagWinograd2 = CUVIL_FLAG_WINOGRAD2 // with kFlagWinograd: F(2x2, 3x3)
};
/// Columns per compile-time B panel: also the widest micro-kernel's NR
/// (AVX-512), which the layout choice is tuned for.
constexpr int64_t kBPanel = CUVIL_B_PANEL;
/// Winograd F(4x4, 3x3) or F(2x2, 3x3) (the side of an output tile), or
/// none (0).
enum class Winograd : int64_t { None = 0, F2 = 2, F4 = 4 };
/// Input channels per block of the Winograd products.
constexpr int64_t kWinogradKC = CUVIL_WINO_KC;

int64_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// Rows [g*rows, (g+1)*rows) of a [groups*rows][k] matrix, per group, in
/// panels of `width` rows interleaved along k: [ceil(rows/width)][k][width],
/// zero-padded. width kMR: the kernels' A operand (weights as GEMM rows);
/// width kBPanel: their B operand (row r of the matrix = column r of B).
/// The number of floats packPanels writes.
int64_t panelsSize(int64_t groups, int64_t rows, int64_t k, int64_t width) {
  return groups * ((rows + width - 1) / width) * k * width;
}
/// Into `packed` (panelsSize floats, zeroed: the padding stays 0).
void packPanels(const float *w, int64_t groups, int64_t rows, int64_t k, int64_t width, float *packed) {
  int64_t panels = (rows + width - 1) / width;
  // Panel by panel in the order it is written (its rows read as `width`
  // sequential streams): each cache line is written whole, once.
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t p = 0; p < panels; ++p) {
      int64_t r0 = p * width, r1 = std::min(rows, r0 + width);
      const float *src = w + (g * rows + r0) * k;
      float *dst = packed + (g * panels + p) * k * width;
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t r = r0; r < r1; ++r)
          dst[kk * width + (r - r0)] = src[(r - r0) * k + kk];
    }
}

/// 3x3 filters [cout][cin][3][3] in the Winograd domain of F(m x m, 3x3),
/// U = G g G^T (Lavin & Gray's G; F(4x4): points 0, +-1, +-2, inf, 6 x 6
/// positions; F(2x2): 0, +-1, inf, 4 x 4), packed in the order the
/// runtime's products read them (runtime/cpu/winograd.c): by blocks of
/// kWinogradKC input channels, [ceil(cin/KC)][positions][ceil(cout/8)]
/// [kc][8], so U streams in one sequential run. In double: the transform's
/// error stays below float rounding.
int64_t winogradSize(int64_t cout, int64_t cin, Winograd kind) {
  int64_t side = kind == Winograd::F4 ? 6 : 4;
  return side * side * ((cout + kMR - 1) / kMR) * cin * kMR;
}
/// Into `packed` (winogradSize floats, zeroed).
void winogradWeights(const float *w, int64_t cout, int64_t cin, Winograd kind, float *packed) {
  static const double g4[6][3] = {{1.0 / 4, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  static const double g2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  const int64_t side = kind == Winograd::F4 ? 6 : 4;
  const double(*g)[3] = kind == Winograd::F4 ? g4 : g2;
  int64_t panels = (cout + kMR - 1) / kMR;
  const int64_t positions = side * side;
  // kMR output channels at a time, as vector lanes: each cache line of a
  // panel (kMR channels of one position and input channel) is written
  // whole, and each lane computes what it would alone (the same bytes).
  for (int64_t cb = 0; cb < cout; cb += kMR) {
    const int64_t n = std::min(kMR, cout - cb);
    for (int64_t ci = 0; ci < cin; ++ci) {
      double f[9][kMR] = {};
      for (int64_t j = 0; j < n; ++j)
        for (int64_t t = 0; t < 9; ++t)
          f[t][j] = w[((cb + j) * cin + ci) * 9 + t];
      double gf[6][3][kMR]; // G g
      for (int64_t a = 0; a < side; ++a)
        for (int64_t l = 0; l < 3; ++l)
          for (int64_t j = 0; j < kMR; ++j)
            gf[a][l][j] = g[a][0] * f[l][j] + g[a][1] * f[3 + l][j] + g[a][2] * f[6 + l][j];
      int64_t c0 = ci / kWinogradKC * kWinogradKC;
      int64_t kc = std::min(kWinogradKC, cin - c0);
      for (int64_t a = 0; a < side; ++a)
        for (int64_t c = 0; c < side; ++c) {
          int64_t xi = a * side + c;
          float *dst = packed + c0 * positions * panels * kMR + ((xi * panels + cb / kMR) * kc + ci - c0) * kMR;
          float u[kMR];
          for (int64_t j = 0; j < kMR; ++j)
            u[j] = static_cast<float>(gf[a][0][j] * g[c][0] + gf[a][1][j] * g[c][1] + gf[a][2][j] * g[c][2]);
          // Lanes past cout stay as zeroed (a product of a zero lane may
          // be -0).
          std::memcpy(dst, u, static_cast<size_t>(n) * sizeof(float));
        }
    }
  }
}

/// A zeroed, mutable blob of `size` bytes (64-byte aligned); megabytes of
/// packed weights on huge pages (support/HugePages.h).
AsmResourceBlob zeroedBlob(size_t size) {
  if (size >= (size_t(1) << 20))
    if (char *p = ::cuvil::mapHugePages(size))
      return AsmResourceBlob(ArrayRef<char>(p, size), 64,
                             [](void *data, size_t bytes, size_t) {
                               ::cuvil::unmapHugePages(static_cast<char *>(data), bytes);
                             },
                             /*dataIsMutable=*/true);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocate(size, 64);
  std::memset(blob.getMutableData().data(), 0, size);
  return blob;
}

/// The packers as weight transforms (WeightDerivations.h): a redeploy
/// with new weights packs them again without this pass.
/// cpu.pack_panels: params groups, rows, k, width; cpu.winograd: cout, cin, kind (4 or 2).
LogicalResult replayPacking(const WeightDerivation &how, ArrayRef<WeightBytes> inputs, RankedTensorType result,
                            MutableArrayRef<char> out, bool winograd) {
  if (inputs.size() != 1 || !inputs[0].type || !inputs[0].type.getElementType().isF32() ||
      how.params.size() != (winograd ? 3u : 4u) || !result.getElementType().isF32() || !result.hasStaticShape())
    return failure();
  const std::vector<int64_t> &p = how.params;
  int64_t in = winograd ? p[0] * p[1] * 9 : p[0] * p[1] * p[2];
  Winograd kind = winograd && p[2] == 2 ? Winograd::F2 : Winograd::F4;
  int64_t count = winograd ? winogradSize(p[0], p[1], kind) : panelsSize(p[0], p[1], p[2], p[3]);
  if (inputs[0].bytes.size() != static_cast<size_t>(in) * sizeof(float) || result.getNumElements() != count ||
      out.size() != static_cast<size_t>(count) * sizeof(float) || (winograd && p[2] != 2 && p[2] != 4) ||
      reinterpret_cast<uintptr_t>(inputs[0].bytes.data()) % alignof(float) != 0 ||
      reinterpret_cast<uintptr_t>(out.data()) % alignof(float) != 0)
    return failure();
  const float *w = reinterpret_cast<const float *>(inputs[0].bytes.data());
  float *dst = reinterpret_cast<float *>(out.data());
  if (winograd)
    winogradWeights(w, p[0], p[1], kind, dst);
  else
    packPanels(w, p[0], p[1], p[2], p[3], dst);
  return success();
}
[[maybe_unused]] const bool kPackingTransforms =
    registerWeightTransform("cpu.pack_panels",
                            [](const WeightDerivation &how, ArrayRef<WeightBytes> inputs, RankedTensorType result,
                               MutableArrayRef<char> out, MLIRContext *) {
                              return replayPacking(how, inputs, result, out, false);
                            }) &&
    registerWeightTransform("cpu.winograd", [](const WeightDerivation &how, ArrayRef<WeightBytes> inputs,
                                               RankedTensorType result, MutableArrayRef<char> out, MLIRContext *) {
      return replayPacking(how, inputs, result, out, true);
    });

/// The value of the constant `v` (an ElementsAttr), or null.
Attribute constantAttr(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  return c ? Attribute(c.getValue()) : Attribute();
}

class KernelCallBuilder {
public:
  KernelCallBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// The buffer of tensor `t`, read only, as a memref<1xT> view of its
  /// start: one function type per kernel whatever the shapes, lowered to a
  /// bare pointer, and still a use of the buffer (so the arena keeps it
  /// alive until the call).
  Value bufferOf(Value t) {
    auto type = llvm::cast<RankedTensorType>(t.getType());
    Value m = b.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(type.getShape(), type.getElementType()), t, /*read_only=*/true);
    return pointerView(m);
  }
  Value pointerView(Value m) {
    auto type = llvm::cast<MemRefType>(m.getType());
    auto view = MemRefType::get({1}, type.getElementType());
    return b.create<memref::ReinterpretCastOp>(loc, view, m, /*offset=*/0,
                                               /*sizes=*/ArrayRef<int64_t>{1},
                                               /*strides=*/ArrayRef<int64_t>{1});
  }
  Value constant(ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
    return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values));
  }
  Value constant(ArrayRef<float> values, StringRef name) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getF32Type());
    if (values.size() <= 16)
      return b.create<arith::ConstantOp>(loc, DenseElementsAttr::get(type, values));
    return resource(values, b.getF32Type(), name);
  }

  /// A 1-D f32 resource of `count` elements that `fill` writes (into zeroed
  /// memory): weights packed in place, not through a copy.
  /// `how` says what it is made of (recorded: WeightDerivations.h).
  Value packed(int64_t count, StringRef name, WeightDerivation how, llvm::function_ref<void(float *)> fill) {
    auto type = RankedTensorType::get({count}, b.getF32Type());
    AsmResourceBlob blob = zeroedBlob(static_cast<size_t>(count) * sizeof(float));
    MutableArrayRef<char> bytes = blob.getMutableData();
    fill(reinterpret_cast<float *>(bytes.data()));
    auto attr = DenseResourceElementsAttr::get(type, resourceKey(name), std::move(blob));
    if (llvm::all_of(how.inputs, [](Attribute a) { return static_cast<bool>(a); }))
      recordWeightDerivation(attr, std::move(how));
    return b.create<arith::ConstantOp>(loc, attr);
  }

  /// `values` as a 1-D resource constant of `element` (its C type T).
  template <typename T> Value resource(ArrayRef<T> values, Type element, StringRef name) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, element);
    ArrayRef<char> raw(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
    return b.create<arith::ConstantOp>(
        loc, DenseResourceElementsAttr::get(type, resourceKey(name),
                                            HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64)));
  }

  /// Calls `callee(params, operands..., [workspace,] output)` and returns
  /// the output; a workspace of `workspaceBytes` (> 0) is a buffer of its
  /// own, placed in the arena like the output and live for the call only.
  Value call(ModuleOp module, StringRef callee, ArrayRef<int64_t> params,
             ArrayRef<Value> operands, RankedTensorType resultType, int64_t workspaceBytes = 0) {
    return call(module, callee, constant(params), operands, resultType, {}, workspaceBytes);
  }

  /// The parameter array `params` with the run-time values `dynamic`
  /// (position, i64 value) in place of their entries.
  Value params(ArrayRef<int64_t> params, ArrayRef<std::pair<int64_t, Value>> dynamic) {
    if (dynamic.empty())
      return constant(params);
    SmallVector<Value> elements;
    for (int64_t p : params)
      elements.push_back(b.create<arith::ConstantIntOp>(loc, p, 64));
    for (auto [at, v] : dynamic)
      elements[at] = v;
    return b.create<tensor::FromElementsOp>(loc, elements);
  }

  /// The size of `t`'s dimension `d` as an i64 value.
  Value dimOf(Value t, int64_t d) {
    auto type = llvm::cast<RankedTensorType>(t.getType());
    if (!type.isDynamicDim(d))
      return b.create<arith::ConstantIntOp>(loc, type.getDimSize(d), 64);
    Value size = b.create<tensor::DimOp>(loc, t, d);
    return b.create<arith::IndexCastOp>(loc, b.getI64Type(), size);
  }

  /// The call with a parameter tensor; `resultSizes`: the result's dynamic
  /// sizes (index values), in order.
  Value call(ModuleOp module, StringRef callee, Value paramTensor, ArrayRef<Value> operands,
             RankedTensorType resultType, ValueRange resultSizes, int64_t workspaceBytes = 0) {
    SmallVector<Value> args{bufferOf(paramTensor)};
    for (Value v : operands)
      args.push_back(bufferOf(v));
    if (workspaceBytes > 0) {
      auto type = MemRefType::get({workspaceBytes}, b.getIntegerType(8));
      args.push_back(pointerView(b.create<memref::AllocOp>(loc, type, b.getI64IntegerAttr(64))));
    }
    auto outType = MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value out = b.create<memref::AllocOp>(loc, outType, resultSizes, b.getI64IntegerAttr(64));
    args.push_back(pointerView(out));
    declare(module, callee, ValueRange(args).getTypes());
    b.create<func::CallOp>(loc, callee, TypeRange{}, args);
    return b.create<bufferization::ToTensorOp>(loc, resultType, out, /*restrict=*/true,
                                               /*writable=*/true);
  }

private:
  void declare(ModuleOp module, StringRef name, TypeRange args) {
    if (module.lookupSymbol(name))
      return;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto f = b.create<func::FuncOp>(loc, name, b.getFunctionType(args, {}));
    f.setPrivate();
  }

  OpBuilder &b;
  Location loc;
};

/// An absent operand still needs a buffer in a kernel call's fixed
/// signature: one one-float constant per call that the kernel never reads
/// (the params' flags say which operands are present).
class UnreadOperand {
public:
  explicit UnreadOperand(KernelCallBuilder &k) : k(k) {}
  Value orIt(Value v) {
    if (v)
      return v;
    if (!unread)
      unread = k.constant(ArrayRef<float>{0.0f}, "unread");
    return unread;
  }

private:
  KernelCallBuilder &k;
  Value unread;
};

/// The call of `op`'s kernel, located by the module path of the layer its
/// weights belong to ("layer1.0.conv1" for "layer1.0.conv1.weight"): what
/// an instrumented library's profile names it (cuvil-instrument-kernels).
Location layerLocation(Operation *op) {
  Location found = op->getLoc();
  // cuvil-autotune's builds tag each kernel op: the tag names the site.
  if (auto n = llvm::dyn_cast<NameLoc>(found); n && n.getName().getValue().starts_with("cuvil.tune."))
    return found;
  // The op's operands, and those of the ops in a fused group's body.
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (auto c = v.getDefiningOp<ConstantOp>())
        if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue())) {
          StringRef key = r.getRawHandle().getKey();
          size_t at = key.find(".weight");
          if (at != StringRef::npos && at > 0) {
            found = NameLoc::get(StringAttr::get(op->getContext(), key.take_front(at)), op->getLoc());
            return WalkResult::interrupt();
          }
        }
    return WalkResult::advance();
  });
  return found;
}

std::string resourceName(Value weight, StringRef suffix) {
  if (auto c = weight.getDefiningOp<ConstantOp>())
    if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue()))
      return (r.getRawHandle().getKey() + "." + suffix).str();
  return ("weight." + suffix).str();
}

int64_t flagsOf(const Epilogue &e, bool bias) {
  return (bias ? kFlagBias : 0) | (e.residual ? kFlagResidual : 0) | (e.clamp ? kFlagClamp : 0);
}

/// A convolution-family parameter array (kernel_abi.h's CUVIL_CONV_*).
SmallVector<int64_t> convLayout(ArrayRef<int64_t> in, int64_t cout, int64_t oh, int64_t ow,
                                int64_t kh, int64_t kw, ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                                int64_t groups, int64_t flags, int64_t lo, int64_t hi) {
  SmallVector<int64_t> p(CUVIL_CONV_NUM_PARAMS);
  p[CUVIL_CONV_VERSION] = kParamsVersion;
  p[CUVIL_CONV_N] = ShapedType::isDynamic(in[0]) ? 0 : in[0]; // a run-time batch: replaced
  p[CUVIL_CONV_C] = in[1];
  p[CUVIL_CONV_H] = in[2];
  p[CUVIL_CONV_W] = in[3];
  p[CUVIL_CONV_COUT] = cout;
  p[CUVIL_CONV_OH] = oh;
  p[CUVIL_CONV_OW] = ow;
  p[CUVIL_CONV_KH] = kh;
  p[CUVIL_CONV_KW] = kw;
  p[CUVIL_CONV_SH] = stride[0];
  p[CUVIL_CONV_SW] = stride[1];
  p[CUVIL_CONV_PH] = padding[0];
  p[CUVIL_CONV_PW] = padding[1];
  p[CUVIL_CONV_DH] = dilation[0];
  p[CUVIL_CONV_DW] = dilation[1];
  p[CUVIL_CONV_GROUPS] = groups;
  p[CUVIL_CONV_FLAGS] = flags;
  p[CUVIL_CONV_LO] = lo;
  p[CUVIL_CONV_HI] = hi;
  p[CUVIL_CONV_MR] = kMR;
  return p;
}

SmallVector<int64_t> convParams(const KernelSite &s, int64_t flags) {
  Conv2DOp conv = s.conv();
  ArrayRef<int64_t> in = shapeOf(s.operands[0]), w = shapeOf(s.operands[1]),
                    out = shapeOf(s.result());
  return convLayout(in, w[0], out[2], out[3], w[2], w[3], conv.getStride(), conv.getPadding(),
                    conv.getDilation(), static_cast<int64_t>(conv.getGroups()), flags,
                    floatBits(s.epilogue.lo), floatBits(s.epilogue.hi));
}

/// The bias and residual operands (a one-float stand-in for an absent one).
void optionalOperands(KernelCallBuilder &k, Value bias, const Epilogue &e,
                      SmallVectorImpl<Value> &out) {
  UnreadOperand unread(k);
  out.push_back(unread.orIt(bias));
  out.push_back(unread.orIt(e.residual));
}

/// A pointwise convolution's constant weights packed as the A operand.
Value packedPointwise(KernelCallBuilder &k, const KernelSite &pw, const F32Weights &wt) {
  ArrayRef<int64_t> w = shapeOf(pw.operands[1]);
  return k.packed(panelsSize(1, w[0], w[1], kMR), resourceName(pw.operands[1], "packed"),
                  {"cpu.pack_panels", {1, w[0], w[1], kMR}, "", {constantAttr(pw.operands[1])}},
                  [&](float *dst) { packPanels(wt.data, 1, w[0], w[1], kMR, dst); });
}

struct SelectCpuKernelsPass final
    : mlir::cuvil::impl::SelectCpuKernelsPassBase<SelectCpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Every configuration is checked first: one edited by hand that its
    // kernel cannot run is an error naming the op and what it can take.
    bool bad = false;
    for (Operation *op : kernelOps(module)) {
      KernelConfigAttr c = kernelConfigOf(op);
      if (!c)
        continue;
      if (std::string why = checkKernelChoice(op, c.getKernel(), c.getVariant()); !why.empty()) {
        op->emitError() << "kernel configuration '" << configText(c) << "' cannot run this op: " << why
                        << " (it can take: " << llvm::join(validKernelChoices(op), ", ") << ")";
        bad = true;
      } else if (std::string why = checkSchedule(c.getKernel(), c.getVariant(), c.getSchedule()); !why.empty()) {
        op->emitError() << "kernel configuration '" << configText(c) << "': " << why;
        bad = true;
      }
    }
    if (bad)
      return signalPassFailure();

    if (failed(fusePairs(module)))
      return signalPassFailure();
    // Whole groups (their epilogue goes into the kernel), then what is
    // left: groups whose body the kernels cannot apply are opened up so
    // that their anchor can still use a kernel.
    SmallVector<FusedGroupOp> groups;
    module.walk([&](FusedGroupOp g) { groups.push_back(g); });
    for (FusedGroupOp g : groups) {
      Operation *anchor = groupAnchor(g);
      KernelConfigAttr c = anchor ? kernelConfigOf(anchor) : KernelConfigAttr();
      if (c && c.getKernel() != kernel::Linalg) {
        std::optional<KernelSite> site = siteOf(anchor);
        if (site && site->root == g.getOperation()) {
          OpBuilder b(g);
          Value r = build(b, module, *site, c.getVariant(), scheduleFlags(c.getSchedule()));
          g.getResult().replaceAllUsesWith(r);
          g.erase();
          continue;
        }
      }
      g.inlineBody();
    }
    // Every group around a kernel op is gone by now: what is left is
    // outside groups.
    SmallVector<Operation *> plain;
    module.walk([&](Operation *op) {
      if (isKernelOp(op) && !op->getParentOfType<FusedGroupOp>())
        plain.push_back(op);
    });
    for (Operation *op : plain) {
      KernelConfigAttr c = kernelConfigOf(op);
      if (!c || c.getKernel() == kernel::Linalg)
        continue;
      OpBuilder b(op);
      KernelSite site{op, op, SmallVector<Value>(op->getOperands()), Epilogue{}};
      Value r = llvm::isa<MaxPool2DOp>(op) ? buildMaxPool(b, module, llvm::cast<MaxPool2DOp>(op))
                : llvm::isa<QuantConv2DOp, QuantLinearOp>(op)
                    ? buildQuant(b, module, op, c.getVariant() == variant::U8S8PixelRows)
                                                              : build(b, module, site, c.getVariant(), scheduleFlags(c.getSchedule()));
      op->getResult(0).replaceAllUsesWith(r);
      op->erase();
    }
  }

  static std::string configText(KernelConfigAttr c) {
    std::string t = c.getVariant().empty() ? c.getKernel().str() : (c.getKernel() + "/" + c.getVariant()).str();
    return c.getSchedule().empty() ? t : t + " (schedule " + c.getSchedule().str() + ")";
  }

  /// The banded pairs, in the order the choose pass decided them. A pair
  /// whose partner already runs in an earlier pair is an error.
  LogicalResult fusePairs(ModuleOp module) {
    for (StringRef kind : {kernel::DepthwisePointwise, kernel::PointwiseDepthwise})
      for (Operation *op : convCandidates(module)) {
        std::optional<KernelSite> consumer = convSite(op);
        if (!consumer)
          continue;
        KernelConfigAttr c = kernelConfigOf(consumer->op);
        if (!c || c.getKernel() != kind)
          continue;
        KernelSite producer;
        std::string why = checkBandedPair(consumer->conv(), kind, &producer);
        if (!why.empty())
          return consumer->op->emitError()
                 << "kernel configuration '" << configText(c) << "' cannot run this op: " << why
                 << " (its producer may run in another banded pair already)";
        OpBuilder b(consumer->root);
        KernelCallBuilder k(b, layerLocation(consumer->op));
        UnreadOperand unread(k);
        // The 1x1 convolution's weights, packed.
        KernelSite &pw = kind == kernel::DepthwisePointwise ? *consumer : producer;
        std::optional<F32Weights> wt = f32Weights(pw.operands[1]);
        SmallVector<Value> args;
        if (kind == kernel::DepthwisePointwise)
          args = {producer.operands[0], producer.operands[1], unread.orIt(producer.bias()),
                  packedPointwise(k, pw, *wt), unread.orIt(consumer->bias()),
                  unread.orIt(consumer->epilogue.residual)};
        else
          args = {producer.operands[0], packedPointwise(k, pw, *wt), unread.orIt(producer.bias()),
                  consumer->operands[1], unread.orIt(consumer->bias())};
        // Both sites' params, the producer's first (2 x 21).
        SmallVector<int64_t> params;
        for (KernelSite *s : {&producer, &*consumer}) {
          SmallVector<int64_t> p = convParams(*s, flagsOf(s->epilogue, bool(s->bias())));
          params.append(p.begin(), p.end());
        }
        StringRef fn = kind == kernel::DepthwisePointwise ? "cuvil_rt_depthwise_pointwise_f32"
                                                          : "cuvil_rt_pointwise_depthwise_f32";
        Value r = k.call(module, fn, params, args,
                         llvm::cast<RankedTensorType>(consumer->result().getType()));
        consumer->root->getResult(0).replaceAllUsesWith(r);
        consumer->root->erase();
        producer.root->erase();
      }
    return success();
  }

  /// The kernel call for a checked site.
  /// `split`: the schedule's FLAGS bits (scheduleFlags).
  Value build(OpBuilder &b, ModuleOp module, const KernelSite &site, StringRef variant, int64_t split = 0) {
    if (site.conv())
      return buildConv(b, module, site, variant, split);
    if (llvm::isa<LinearOp>(site.op))
      return buildLinear(b, module, site, variant, split);
    return buildMatmul(b, module, site);
  }

  /// An int8 convolution or linear layer (kernel_abi.h's CUVIL_QCONV_* /
  /// CUVIL_QLINEAR_*): weights packed with K padded to CUVIL_QK, and per
  /// output channel the multiplier and the offset that folds the quantized
  /// bias and the input's zero point into the int32 sums, computed here
  /// with QuantArithmetic.h's formulas (the reference evaluator's).
  Value buildQuant(OpBuilder &b, ModuleOp module, Operation *op, bool pixelRows) {
    bool isConv = llvm::isa<QuantConv2DOp>(op);
    QuantParamsAttr px, pw, py;
    if (auto c = llvm::dyn_cast<QuantConv2DOp>(op)) {
      px = c.getInputParams();
      pw = c.getWeightParams();
      py = c.getOutputParamsAttr();
    } else {
      auto l = llvm::cast<QuantLinearOp>(op);
      px = l.getInputParams();
      pw = l.getWeightParams();
      py = l.getOutputParamsAttr();
    }
    auto wc = op->getOperand(1).getDefiningOp<ConstantOp>();
    FailureOr<::cuvil::Tensor> w = reference::tensorFromAttr(wc.getValue(), wc.getLoc());
    std::optional<::cuvil::Tensor> bias;
    if (op->getNumOperands() > 2)
      bias = constantF32(op->getOperand(2));
    int64_t cout = w->dim(0), kSize = w->numElements() / cout, kp = cuvil_qk_padded(kSize);
    int64_t zx = px.zeroPointAt(0);
    auto arithmetic = op->getAttrOfType<StringAttr>("arithmetic");
    bool onednn = arithmetic && arithmetic.getValue() == "onednn";
    SmallVector<int32_t> offset(cout);
    // oneDNN's epilogue: the multipliers, then the biases scaled into the
    // sums' domain (kernel_abi.h's Y_ONEDNN, QuantArithmetic.h).
    SmallVector<float> multiplier(onednn ? 2 * cout : cout);
    for (int64_t c = 0; c < cout; ++c) {
      if (onednn) {
        quant::OnednnEpilogue one = quant::onednnEpilogue(
            px.scaleAt(0), pw.scaleAt(c), bias ? static_cast<float>(bias->getDouble(c)) : 0.0f,
            py ? py.scaleAt(0) : 1.0, !py);
        multiplier[c] = one.multiplier;
        multiplier[cout + c] = one.bias;
      } else {
        // No output parameters: an f32 result, the sums dequantized.
        multiplier[c] = py ? quant::requantizeMultiplier(px.scaleAt(0), pw.scaleAt(c), py.scaleAt(0))
                           : quant::dequantizeScale(px.scaleAt(0), pw.scaleAt(c));
      }
      float biasInverse = 1.0f / static_cast<float>(px.scaleAt(0) * pw.scaleAt(c));
      int64_t bq = bias && !onednn
                       ? quant::roundToStorage(static_cast<float>(bias->getDouble(c)), biasInverse, 0,
                                               std::numeric_limits<int32_t>::min(),
                                               std::numeric_limits<int32_t>::max())
                       : 0;
      uint32_t sum = 0;
      for (int64_t k = 0; k < kSize; ++k)
        sum += static_cast<uint32_t>(w->getInt(c * kSize + k));
      offset[c] = static_cast<int32_t>(static_cast<uint32_t>(bq) - static_cast<uint32_t>(zx) * sum);
    }
    // Conv: [Cout][Kp] rows (pixel rows: panels), K ordered (kh, kw,
    // channel) with the group's channels padded to quads (the workspace's
    // order); linear: panels [ceil(N/QN)][Kp/4][QN][4].
    std::vector<int8_t> packed;
    int64_t panels = (cout + CUVIL_QN - 1) / CUVIL_QN;
    if (isConv) {
      ArrayRef<int64_t> ws = shapeOf(op->getOperand(1));
      int64_t cg = ws[1], kh = ws[2], kw = ws[3], quads = (cg + 3) / 4;
      kp = kh * kw * 4 * quads;
      packed.assign(pixelRows ? panels * CUVIL_QN * kp : cout * kp, 0);
      for (int64_t c = 0; c < cout; ++c)
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t y = 0; y < kh; ++y)
            for (int64_t x = 0; x < kw; ++x) {
              int64_t k = (y * kw + x) * 4 * quads + ci;
              packed[pixelRows ? cuvil_qpanel_index(c, k, kp) : c * kp + k] =
                  static_cast<int8_t>(w->getInt(((c * cg + ci) * kh + y) * kw + x));
            }
    } else {
      packed.assign(panels * kp * CUVIL_QN, 0);
      for (int64_t n = 0; n < cout; ++n)
        for (int64_t k = 0; k < kSize; ++k)
          packed[cuvil_qpanel_index(n, k, kp)] = static_cast<int8_t>(w->getInt(n * kSize + k));
    }
    auto out = llvm::cast<RankedTensorType>(op->getResult(0).getType());
    ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
    SmallVector<int64_t> params;
    StringRef callee;
    if (auto conv = llvm::dyn_cast<QuantConv2DOp>(op)) {
      ArrayRef<int64_t> ws = shapeOf(op->getOperand(1));
      params.assign(CUVIL_QCONV_NUM_PARAMS, 0);
      params[CUVIL_QCONV_VERSION] = kParamsVersion;
      params[CUVIL_QCONV_N] = in[0];
      params[CUVIL_QCONV_C] = in[1];
      params[CUVIL_QCONV_H] = in[2];
      params[CUVIL_QCONV_W] = in[3];
      params[CUVIL_QCONV_COUT] = cout;
      params[CUVIL_QCONV_OH] = out.getDimSize(2);
      params[CUVIL_QCONV_OW] = out.getDimSize(3);
      params[CUVIL_QCONV_KH] = ws[2];
      params[CUVIL_QCONV_KW] = ws[3];
      params[CUVIL_QCONV_SH] = conv.getStride()[0];
      params[CUVIL_QCONV_SW] = conv.getStride()[1];
      params[CUVIL_QCONV_PH] = conv.getPadding()[0];
      params[CUVIL_QCONV_PW] = conv.getPadding()[1];
      params[CUVIL_QCONV_DH] = conv.getDilation()[0];
      params[CUVIL_QCONV_DW] = conv.getDilation()[1];
      params[CUVIL_QCONV_GROUPS] = conv.getGroups();
      params[CUVIL_QCONV_X_ZERO] = zx;
      params[CUVIL_QCONV_Y_ZERO] = py ? py.zeroPointAt(0) : 0;
      params[CUVIL_QCONV_Y_FLOAT] = py ? 0 : 1;
      params[CUVIL_QCONV_Y_ONEDNN] = onednn ? 1 : 0;
      params[CUVIL_QCONV_Y_MIN] = 0;
      params[CUVIL_QCONV_Y_MAX] = 255;
      callee = pixelRows ? (py ? "cuvil_rt_qconv2d_u8s8_rows" : "cuvil_rt_qconv2d_u8s8_rows_f32")
                         : (py ? "cuvil_rt_qconv2d_u8s8" : "cuvil_rt_qconv2d_u8s8_f32");
    } else {
      params.assign(CUVIL_QLINEAR_NUM_PARAMS, 0);
      params[CUVIL_QLINEAR_VERSION] = kParamsVersion;
      params[CUVIL_QLINEAR_M] = in[0];
      params[CUVIL_QLINEAR_K] = kSize;
      params[CUVIL_QLINEAR_N] = cout;
      params[CUVIL_QLINEAR_X_ZERO] = zx;
      params[CUVIL_QLINEAR_Y_ZERO] = py ? py.zeroPointAt(0) : 0;
      params[CUVIL_QLINEAR_Y_FLOAT] = py ? 0 : 1;
      params[CUVIL_QLINEAR_Y_ONEDNN] = onednn ? 1 : 0;
      params[CUVIL_QLINEAR_Y_MIN] = 0;
      params[CUVIL_QLINEAR_Y_MAX] = 255;
      callee = py ? "cuvil_rt_qlinear_u8s8" : "cuvil_rt_qlinear_u8s8_f32";
    }
    KernelCallBuilder k(b, layerLocation(op));
    Value weights = k.resource(ArrayRef<int8_t>(packed), b.getIntegerType(8),
                               resourceName(op->getOperand(1), isConv && !pixelRows ? "qrows" : "qpanels"));
    Value offsets = k.resource(ArrayRef<int32_t>(offset), b.getI32Type(),
                               resourceName(op->getOperand(1), "qoffset"));
    Value multipliers = k.resource(ArrayRef<float>(multiplier), b.getF32Type(),
                                   resourceName(op->getOperand(1), "qmultiplier"));
    Value x = b.create<UnrealizedConversionCastOp>(op->getLoc(), asCallType(op->getOperand(0).getType()),
                                                   op->getOperand(0))
                  .getResult(0);
    Value y = k.call(module, callee, params, {x, weights, offsets, multipliers}, asCallType(out),
                     !isConv     ? 0
                     : pixelRows ? cuvil_qconv_rows_workspace_bytes(params.data())
                                 : cuvil_qconv_workspace_bytes(params.data()));
    if (out.getElementType().isF32())
      return y;
    return b.create<UnrealizedConversionCastOp>(op->getLoc(), out, y).getResult(0);
  }

  /// 2-D max pooling (the depthwise kernels' grid, with max).
  /// The call with a run-time batch when `input` has one: the
  /// parameters' N and the result's dimension 0 are the input's.
  static Value callWithBatch(KernelCallBuilder &k, OpBuilder &b, ModuleOp module, StringRef callee,
                             ArrayRef<int64_t> params, ArrayRef<Value> args, Value input,
                             RankedTensorType resultType) {
    auto in = llvm::cast<RankedTensorType>(input.getType());
    if (!in.isDynamicDim(0) && resultType.hasStaticShape())
      return k.call(module, callee, params, args, resultType);
    Value n = k.dimOf(input, 0);
    SmallVector<Value> sizes;
    if (resultType.isDynamicDim(0))
      sizes.push_back(b.create<tensor::DimOp>(input.getLoc(), input, 0));
    return k.call(module, callee, k.params(params, {{CUVIL_CONV_N, n}}), args, resultType, sizes);
  }

  Value buildMaxPool(OpBuilder &b, ModuleOp module, MaxPool2DOp pool) {
    ArrayRef<int64_t> in = shapeOf(pool.getInput());
    auto out = llvm::cast<RankedTensorType>(pool.getResult().getType());
    ArrayRef<int64_t> kernel = pool.getKernelSize();
    SmallVector<int64_t> params =
        convLayout(in, in[1], out.getDimSize(2), out.getDimSize(3), kernel[0], kernel[1],
                   pool.getStride(), pool.getPadding(), pool.getDilation(), in[1], 0, 0, 0);
    KernelCallBuilder k(b, pool.getLoc());
    // Quantized tensors pool in their integers; i8 and signless bytes are
    // signed, ui8 unsigned.
    Type element = out.getElementType();
    if (element.isF32())
      return callWithBatch(k, b, module, "cuvil_rt_max_pool2d_f32", params, {pool.getInput()},
                           pool.getInput(), out);
    Value x = b.create<UnrealizedConversionCastOp>(pool.getLoc(), asCallType(pool.getInput().getType()),
                                                   pool.getInput())
                  .getResult(0);
    Value y = callWithBatch(k, b, module,
                            element.isUnsignedInteger() ? "cuvil_rt_max_pool2d_u8"
                                                        : "cuvil_rt_max_pool2d_s8",
                            params, {x}, x, asCallType(out));
    return b.create<UnrealizedConversionCastOp>(pool.getLoc(), out, y).getResult(0);
  }

  /// A product of two run-time matrices, batched over the leading
  /// dimensions (equal on both sides, or a rank-2 right operand shared by
  /// every batch item).
  Value buildMatmul(OpBuilder &b, ModuleOp module, const KernelSite &site) {
    Value lhs = site.operands[0], rhs = site.operands[1];
    ArrayRef<int64_t> a = shapeOf(lhs), w = shapeOf(rhs);
    int64_t ra = a.size(), rb = w.size();
    // Run-time sizes count 0 here: their entries are replaced below.
    auto size = [](int64_t d) { return ShapedType::isDynamic(d) ? int64_t(0) : d; };
    int64_t m = size(a[ra - 2]), k = size(a[ra - 1]), n = size(w[rb - 1]);
    int64_t batch = 1;
    for (int64_t d : a.drop_back(2))
      batch *= size(d);
    SmallVector<int64_t> params(CUVIL_MATMUL_NUM_PARAMS);
    params[CUVIL_MATMUL_VERSION] = kParamsVersion;
    params[CUVIL_MATMUL_BATCH] = batch;
    params[CUVIL_MATMUL_M] = m;
    params[CUVIL_MATMUL_K] = k;
    params[CUVIL_MATMUL_N] = n;
    params[CUVIL_MATMUL_A_BATCH_STRIDE] = m * k;
    params[CUVIL_MATMUL_B_BATCH_STRIDE] = rb == 2 ? 0 : k * n;
    params[CUVIL_MATMUL_MR] = kMR;
    KernelCallBuilder kb(b, site.op->getLoc());
    auto resultType = llvm::cast<RankedTensorType>(site.result().getType());
    if (resultType.hasStaticShape() && llvm::cast<RankedTensorType>(lhs.getType()).hasStaticShape() &&
        llvm::cast<RankedTensorType>(rhs.getType()).hasStaticShape())
      return kb.call(module, "cuvil_rt_matmul_f32", params, {lhs, rhs}, resultType);
    // Run-time sizes: every size parameter computed as the call runs.
    Location loc = site.op->getLoc();
    Value batchValue = b.create<arith::ConstantIntOp>(loc, 1, 64);
    for (int64_t d = 0; d + 2 < ra; ++d)
      batchValue = b.create<arith::MulIOp>(loc, batchValue, kb.dimOf(lhs, d));
    Value mv = kb.dimOf(lhs, ra - 2), kv = kb.dimOf(lhs, ra - 1), nv = kb.dimOf(rhs, rb - 1);
    Value aStride = b.create<arith::MulIOp>(loc, mv, kv);
    Value bStride = rb == 2 ? b.create<arith::ConstantIntOp>(loc, 0, 64).getResult()
                            : b.create<arith::MulIOp>(loc, kv, nv).getResult();
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < resultType.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        sizes.push_back(d == ra - 1 ? b.create<tensor::DimOp>(loc, rhs, rb - 1).getResult()
                                    : b.create<tensor::DimOp>(loc, lhs, d).getResult());
    Value p = kb.params(params, {{CUVIL_MATMUL_BATCH, batchValue},
                                 {CUVIL_MATMUL_M, mv},
                                 {CUVIL_MATMUL_K, kv},
                                 {CUVIL_MATMUL_N, nv},
                                 {CUVIL_MATMUL_A_BATCH_STRIDE, aStride},
                                 {CUVIL_MATMUL_B_BATCH_STRIDE, bStride}});
    return kb.call(module, "cuvil_rt_matmul_f32", p, {lhs, rhs}, resultType, sizes);
  }

  Value buildConv(OpBuilder &b, ModuleOp module, const KernelSite &site, StringRef variant, int64_t split) {
    Conv2DOp conv = site.conv();
    Value input = site.operands[0], weight = site.operands[1], bias = site.bias();
    const Epilogue &e = site.epilogue;
    ArrayRef<int64_t> w = shapeOf(weight);
    auto out = llvm::cast<RankedTensorType>(conv.getResult().getType());
    int64_t groups = conv.getGroups();
    Winograd wino = variant == variant::WinogradF4   ? Winograd::F4
                    : variant == variant::WinogradF2 ? Winograd::F2
                                                     : Winograd::None;
    bool pixelRows = variant == variant::PixelRows;
    int64_t flags = flagsOf(e, static_cast<bool>(bias)) |
                    (wino != Winograd::None ? kFlagWinograd : 0) |
                    (wino == Winograd::F2 ? kFlagWinograd2 : 0) | (pixelRows ? kFlagPixelRows : 0) | split;
    SmallVector<int64_t> params = convParams(site, flags);
    KernelCallBuilder k(b, layerLocation(conv));
    SmallVector<Value> args{input};
    if (variant == variant::Direct) {
      // Depthwise: a direct kernel on the weights as they are.
      args.push_back(weight);
      optionalOperands(k, bias, e, args);
      return callWithBatch(k, b, module, "cuvil_rt_depthwise_conv2d_f32", params, args, input, out);
    }
    std::optional<F32Weights> wt = f32Weights(weight);
    const float *data = wt->data;
    int64_t kSize = w[1] * w[2] * w[3];
    if (wino != Winograd::None) {
      args.push_back(k.packed(winogradSize(w[0], w[1], wino), resourceName(weight, "winograd"),
                              {"cpu.winograd", {w[0], w[1], static_cast<int64_t>(wino)}, "", {constantAttr(weight)}},
                              [&](float *dst) { winogradWeights(data, w[0], w[1], wino, dst); }));
    } else {
      int64_t width = pixelRows ? kBPanel : kMR;
      args.push_back(k.packed(panelsSize(groups, w[0] / groups, kSize, width),
                              resourceName(weight, pixelRows ? "panels" : "packed"),
                              {"cpu.pack_panels", {groups, w[0] / groups, kSize, width}, "", {constantAttr(weight)}},
                              [&](float *dst) { packPanels(data, groups, w[0] / groups, kSize, width, dst); }));
    }
    optionalOperands(k, bias, e, args);
    return callWithBatch(k, b, module, "cuvil_rt_conv2d_f32", params, args, input, out);
  }

  Value buildLinear(OpBuilder &b, ModuleOp module, const KernelSite &site, StringRef variant, int64_t split) {
    Value input = site.operands[0], weight = site.operands[1], bias = site.bias();
    const Epilogue &e = site.epilogue;
    std::optional<F32Weights> wt = f32Weights(weight);
    ArrayRef<int64_t> wShape = shapeOf(weight);
    int64_t n = wShape[0], kSize = wShape[1];
    auto inputType = llvm::cast<RankedTensorType>(input.getType());
    bool dynamicRows = !inputType.hasStaticShape();
    int64_t m = dynamicRows ? 0 : inputType.getNumElements() / kSize;
    bool rows = variant == variant::InputRows;
    SmallVector<int64_t> params(CUVIL_LINEAR_NUM_PARAMS);
    params[CUVIL_LINEAR_VERSION] = kParamsVersion;
    params[CUVIL_LINEAR_M] = m;
    params[CUVIL_LINEAR_K] = kSize;
    params[CUVIL_LINEAR_N] = n;
    params[CUVIL_LINEAR_FLAGS] = flagsOf(e, static_cast<bool>(bias)) | (rows ? kFlagPixelRows : 0) | split;
    params[CUVIL_LINEAR_LO] = floatBits(e.lo);
    params[CUVIL_LINEAR_HI] = floatBits(e.hi);
    params[CUVIL_LINEAR_MR] = kMR;
    KernelCallBuilder k(b, layerLocation(site.op));
    int64_t width = rows ? kBPanel : kMR;
    SmallVector<Value> args{input, k.packed(panelsSize(1, n, kSize, width), resourceName(weight, rows ? "panels" : "packed"),
                                            {"cpu.pack_panels", {1, n, kSize, width}, "", {constantAttr(weight)}},
                                            [&](float *dst) { packPanels(wt->data, 1, n, kSize, width, dst); })};
    optionalOperands(k, bias, e, args);
    auto resultType = llvm::cast<RankedTensorType>(site.result().getType());
    if (!dynamicRows)
      return k.call(module, "cuvil_rt_linear_f32", params, args, resultType);
    // Run-time rows: M is the product of the input's leading sizes, the
    // result's dynamic sizes are the input's.
    Value rowsValue = b.create<arith::ConstantIntOp>(site.op->getLoc(), 1, 64);
    SmallVector<Value> sizes;
    for (int64_t d = 0; d + 1 < inputType.getRank(); ++d) {
      rowsValue = b.create<arith::MulIOp>(site.op->getLoc(), rowsValue, k.dimOf(input, d));
      if (resultType.isDynamicDim(d))
        sizes.push_back(b.create<tensor::DimOp>(site.op->getLoc(), input, d));
    }
    return k.call(module, "cuvil_rt_linear_f32", k.params(params, {{CUVIL_LINEAR_M, rowsValue}}),
                  args, resultType, sizes);
  }
};

} // namespace
