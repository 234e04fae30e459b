//===- SelectKernels.cpp - Convolutions, linear layers, pooling to kernels ===//
//
// Replaces cuvil.conv.conv2d and cuvil.gemm.linear (alone or as the anchor
// of a fusion group whose epilogue the kernels apply: a residual add, then
// relu / hardtanh / clamp) by calls of the runtime's blocked GEMM kernels
// (runtime/src/gemm.c). Weights are packed here, at compile time, into the
// kernels' layout: [ceil(rows/8)][K][8] per group. Matrix products of two
// run-time operands (matmul / batch_matmul, attention's) use the same
// kernels, packing both sides as they run. Layouts chosen here per layer:
// Winograd F(4x4, 3x3) weights, weights as B panels where the pixels (or
// x's rows) make better GEMM rows. 2-D max pooling uses the depthwise
// kernels' grid.
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

#include "runtime/include/cuvil/kernel_abi.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <cstring>
#include <limits>

namespace mlir::cuvil {
#define GEN_PASS_DEF_SELECTCPUKERNELSPASS
#include "targets/CPU/Passes.h.inc"
} // namespace mlir::cuvil

using namespace mlir;
using namespace mlir::cuvil;

namespace {

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
/// F(2x2, 3x3) only for convolutions with at least this many input and
/// output channels, where the products dwarf the transforms (measured on
/// resnet18's 512-channel 7x7 layers; smaller layers keep the kernels they
/// were tuned on).
constexpr int64_t kWinograd2MinChannels = 64;
/// Input channels per block of the Winograd products.
constexpr int64_t kWinogradKC = CUVIL_WINO_KC;

/// What the kernels apply after the product: + residual, then clamp.
struct Epilogue {
  Value residual;
  bool clamp = false;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};

int64_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

bool isStaticF32(Value v) {
  auto t = llvm::dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getElementType().isF32();
}

/// The body of `group` after `anchor` as an epilogue, or nothing. Values
/// are the group's own inputs (outside the region).
std::optional<Epilogue> matchEpilogue(FusedGroupOp group, Operation *anchor) {
  Epilogue e;
  Value current = anchor->getResult(0);
  Block &body = group.getBody().front();
  for (Operation *op = anchor->getNextNode(); op && op != body.getTerminator();
       op = op->getNextNode()) {
    if (!current.hasOneUse() || *current.getUsers().begin() != op)
      return std::nullopt;
    if (auto add = llvm::dyn_cast<AddOp>(op)) {
      if (e.residual || e.clamp)
        return std::nullopt;
      Value other = add.getOperand(0) == current ? add.getOperand(1) : add.getOperand(0);
      auto arg = llvm::dyn_cast<BlockArgument>(other);
      if (!arg || arg.getOwner() != &body || other.getType() != current.getType() ||
          add.getResult().getType() != current.getType())
        return std::nullopt;
      e.residual = group.getInputs()[arg.getArgNumber()];
    } else if (llvm::isa<ReluOp>(op)) {
      if (e.clamp)
        return std::nullopt;
      e.clamp = true;
      e.lo = 0.0f;
    } else if (auto ht = llvm::dyn_cast<HardtanhOp>(op)) {
      if (e.clamp)
        return std::nullopt;
      e.clamp = true;
      e.lo = static_cast<float>(ht.getMinVal().convertToDouble());
      e.hi = static_cast<float>(ht.getMaxVal().convertToDouble());
    } else if (auto clamp = llvm::dyn_cast<ClampOp>(op)) {
      if (e.clamp)
        return std::nullopt;
      e.clamp = true;
      if (auto min = clamp.getMin())
        e.lo = static_cast<float>(min->convertToDouble());
      if (auto max = clamp.getMax())
        e.hi = static_cast<float>(max->convertToDouble());
    } else {
      return std::nullopt;
    }
    if (op->getNumResults() != 1 || op->getResult(0).getType() != current.getType())
      return std::nullopt;
    current = op->getResult(0);
  }
  if (current != group.getYielded())
    return std::nullopt;
  return e;
}

/// Rows [g*rows, (g+1)*rows) of a [groups*rows][k] matrix, per group, in
/// panels of `width` rows interleaved along k: [ceil(rows/width)][k][width],
/// zero-padded. width kMR: the kernels' A operand (weights as GEMM rows);
/// width kBPanel: their B operand (row r of the matrix = column r of B).
std::vector<float> packPanels(const float *w, int64_t groups, int64_t rows, int64_t k,
                              int64_t width) {
  int64_t panels = (rows + width - 1) / width;
  std::vector<float> packed(static_cast<size_t>(groups * panels * k * width), 0.0f);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t r = 0; r < rows; ++r) {
      const float *src = w + (g * rows + r) * k;
      float *dst = packed.data() + ((g * panels + r / width) * k) * width + r % width;
      for (int64_t kk = 0; kk < k; ++kk)
        dst[kk * width] = src[kk];
    }
  return packed;
}

/// 3x3 filters [cout][cin][3][3] in the Winograd domain of F(m x m, 3x3),
/// U = G g G^T (Lavin & Gray's G; F(4x4): points 0, +-1, +-2, inf, 6 x 6
/// positions; F(2x2): 0, +-1, inf, 4 x 4), packed in the order the
/// runtime's products read them (runtime/src/winograd.c): by blocks of
/// kWinogradKC input channels, [ceil(cin/KC)][positions][ceil(cout/8)]
/// [kc][8], so U streams in one sequential run. In double: the transform's
/// error stays below float rounding.
std::vector<float> winogradWeights(const float *w, int64_t cout, int64_t cin, Winograd kind) {
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
  std::vector<float> packed(static_cast<size_t>(positions * panels * cin * kMR), 0.0f);
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t ci = 0; ci < cin; ++ci) {
      const float *f = w + (co * cin + ci) * 9;
      double gf[6][3]; // G g
      for (int64_t a = 0; a < side; ++a)
        for (int64_t l = 0; l < 3; ++l)
          gf[a][l] = g[a][0] * f[l] + g[a][1] * f[3 + l] + g[a][2] * f[6 + l];
      for (int64_t a = 0; a < side; ++a)
        for (int64_t c = 0; c < side; ++c) {
          double u = gf[a][0] * g[c][0] + gf[a][1] * g[c][1] + gf[a][2] * g[c][2];
          int64_t xi = a * side + c;
          int64_t c0 = ci / kWinogradKC * kWinogradKC;
          int64_t kc = std::min(kWinogradKC, cin - c0);
          packed[static_cast<size_t>(c0 * positions * panels * kMR +
                                     ((xi * panels + co / kMR) * kc + ci - c0) * kMR +
                                     co % kMR)] = static_cast<float>(u);
        }
    }
  return packed;
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
    ArrayRef<char> raw(reinterpret_cast<const char *>(values.data()),
                       values.size() * sizeof(float));
    return b.create<arith::ConstantOp>(
        loc, DenseResourceElementsAttr::get(
                 type, resourceKey(name), HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64)));
  }

  /// Calls `callee(params, operands..., output)` and returns the output.
  Value call(ModuleOp module, StringRef callee, ArrayRef<int64_t> params,
             ArrayRef<Value> operands, RankedTensorType resultType) {
    SmallVector<Value> args{bufferOf(constant(params))};
    for (Value v : operands)
      args.push_back(bufferOf(v));
    auto outType = MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value out = b.create<memref::AllocOp>(loc, outType, b.getI64IntegerAttr(64));
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

std::string resourceName(Value weight, StringRef suffix) {
  if (auto c = weight.getDefiningOp<ConstantOp>())
    if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue()))
      return (r.getRawHandle().getKey() + "." + suffix).str();
  return ("weight." + suffix).str();
}

std::optional<::cuvil::Tensor> constantF32(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c || !isStaticF32(v))
    return std::nullopt;
  FailureOr<::cuvil::Tensor> t = reference::tensorFromAttr(c.getValue(), c.getLoc());
  if (failed(t))
    return std::nullopt;
  return std::move(*t);
}

struct SelectCpuKernelsPass final
    : mlir::cuvil::impl::SelectCpuKernelsPassBase<SelectCpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    fuseDepthwisePointwise(module);
    fusePointwiseDepthwise(module);
    // Whole groups first (their epilogue goes into the kernel), then what
    // is left: groups whose body the kernels cannot apply are opened up so
    // that their anchor still uses a kernel.
    SmallVector<FusedGroupOp> groups;
    module.walk([&](FusedGroupOp g) { groups.push_back(g); });
    for (FusedGroupOp g : groups) {
      Operation *anchor = groupAnchor(g);
      if (!anchor)
        continue;
      std::optional<Epilogue> e = matchEpilogue(g, anchor);
      if (e) {
        IRMapping map;
        for (auto [arg, input] : llvm::zip(g.getBody().front().getArguments(), g.getInputs()))
          map.map(arg, input);
        OpBuilder b(g);
        SmallVector<Value> operands;
        for (Value v : anchor->getOperands())
          operands.push_back(map.lookup(v));
        if (Value r = rewrite(b, module, anchor, operands, *e)) {
          g.getResult().replaceAllUsesWith(r);
          g.erase();
          continue;
        }
      }
      g.inlineBody();
    }
    // Every group around one of these ops is gone by now: what is left is
    // outside groups.
    SmallVector<Operation *> plain;
    module.walk([&](Operation *op) {
      if (llvm::isa<Conv2DOp, LinearOp, MatmulOp, BatchMatmulOp>(op))
        plain.push_back(op);
    });
    for (Operation *op : plain) {
      OpBuilder b(op);
      SmallVector<Value> operands(op->getOperands());
      if (Value r = rewrite(b, module, op, operands, Epilogue{})) {
        op->getResult(0).replaceAllUsesWith(r);
        op->erase();
      }
    }
    // Max pooling outside groups (inside one, the group's loops compute it).
    SmallVector<MaxPool2DOp> pools;
    module.walk([&](MaxPool2DOp p) {
      if (!p->getParentOfType<FusedGroupOp>())
        pools.push_back(p);
    });
    for (MaxPool2DOp p : pools) {
      OpBuilder b(p);
      if (Value r = rewriteMaxPool(b, module, p)) {
        p.getResult().replaceAllUsesWith(r);
        p.erase();
      }
    }
  }

  /// 2-D max pooling on f32 (the depthwise kernels' grid, with max), when
  /// every window lies inside the padded input: ceil_mode windows that hang
  /// past it stay with the linalg lowering.
  Value rewriteMaxPool(OpBuilder &b, ModuleOp module, MaxPool2DOp pool) {
    Value input = pool.getInput();
    if (!isStaticF32(input) || !isStaticF32(pool.getResult()))
      return nullptr;
    auto in = llvm::cast<RankedTensorType>(input.getType()).getShape();
    auto out = llvm::cast<RankedTensorType>(pool.getResult().getType());
    ArrayRef<int64_t> kernel = pool.getKernelSize(), stride = pool.getStride(),
                      padding = pool.getPadding(), dilation = pool.getDilation();
    if (in.size() != 4 || kernel.size() != 2 || stride.size() != 2 || padding.size() != 2 ||
        dilation.size() != 2)
      return nullptr;
    for (int64_t i = 0; i < 2; ++i)
      if ((out.getDimSize(2 + i) - 1) * stride[i] + (kernel[i] - 1) * dilation[i] + 1 >
          in[2 + i] + 2 * padding[i])
        return nullptr;
    SmallVector<int64_t> params = convLayout(in, in[1], out.getDimSize(2), out.getDimSize(3), kernel[0],
                                             kernel[1], stride, padding, dilation, in[1], 0, 0, 0);
    KernelCallBuilder k(b, pool.getLoc());
    return k.call(module, "cuvil_rt_max_pool2d_f32", params, {input}, out);
  }

  /// The kernel call for `op` (operands already outside any group), or null
  /// when no kernel applies (the op is then lowered through linalg).
  Value rewrite(OpBuilder &b, ModuleOp module, Operation *op, ArrayRef<Value> operands,
                const Epilogue &e) {
    if (auto conv = llvm::dyn_cast<Conv2DOp>(op))
      return rewriteConv(b, module, conv, operands, e);
    if (auto linear = llvm::dyn_cast<LinearOp>(op))
      return rewriteLinear(b, module, linear, operands, e);
    if (llvm::isa<MatmulOp, BatchMatmulOp>(op) && !e.residual && !e.clamp)
      return rewriteMatmul(b, module, op, operands);
    return nullptr;
  }

  /// A product of two run-time matrices, batched over the leading
  /// dimensions: both operands of rank >= 2 with equal batch dimensions, or
  /// a rank-2 right operand shared by every batch item. Other forms of
  /// torch.matmul (vectors, broadcasting of size-1 batch dimensions) stay
  /// with the linalg lowering.
  Value rewriteMatmul(OpBuilder &b, ModuleOp module, Operation *op, ArrayRef<Value> operands) {
    Value lhs = operands[0], rhs = operands[1], result = op->getResult(0);
    if (!isStaticF32(lhs) || !isStaticF32(rhs) || !isStaticF32(result))
      return nullptr;
    auto a = llvm::cast<RankedTensorType>(lhs.getType());
    auto w = llvm::cast<RankedTensorType>(rhs.getType());
    auto out = llvm::cast<RankedTensorType>(result.getType());
    int64_t ra = a.getRank(), rb = w.getRank();
    if (ra < 2 || rb < 2 || out.getRank() != ra)
      return nullptr;
    int64_t m = a.getDimSize(ra - 2), k = a.getDimSize(ra - 1), n = w.getDimSize(rb - 1);
    if (w.getDimSize(rb - 2) != k || out.getDimSize(ra - 2) != m || out.getDimSize(ra - 1) != n)
      return nullptr;
    ArrayRef<int64_t> batchA = a.getShape().drop_back(2), batchB = w.getShape().drop_back(2);
    if (rb != 2 && batchA != batchB)
      return nullptr;
    int64_t batch = 1;
    for (int64_t d : batchA)
      batch *= d;
    SmallVector<int64_t> params(CUVIL_MATMUL_NUM_PARAMS);
    params[CUVIL_MATMUL_VERSION] = kParamsVersion;
    params[CUVIL_MATMUL_BATCH] = batch;
    params[CUVIL_MATMUL_M] = m;
    params[CUVIL_MATMUL_K] = k;
    params[CUVIL_MATMUL_N] = n;
    params[CUVIL_MATMUL_A_BATCH_STRIDE] = m * k;
    params[CUVIL_MATMUL_B_BATCH_STRIDE] = rb == 2 ? 0 : k * n;
    params[CUVIL_MATMUL_MR] = kMR;
    KernelCallBuilder kb(b, op->getLoc());
    return kb.call(module, "cuvil_rt_matmul_f32", params, {lhs, rhs}, out);
  }

  /// The op a group's kernel call is built around: its first product.
  static Operation *groupAnchor(FusedGroupOp g) {
    for (Operation &op : g.getBody().front())
      if (llvm::isa<Conv2DOp, LinearOp, MatmulOp, BatchMatmulOp>(op))
        return &op;
    return nullptr;
  }

  /// A convolution as the kernels take it: alone, or the anchor of a group
  /// whose epilogue they apply (operands: the conv's, outside the group).
  struct ConvSite {
    Operation *root = nullptr;
    Conv2DOp conv;
    SmallVector<Value> operands;
    Epilogue epilogue;
  };

  static std::optional<ConvSite> convSite(Operation *op) {
    if (auto conv = llvm::dyn_cast_or_null<Conv2DOp>(op)) {
      if (conv->getParentOfType<FusedGroupOp>())
        return std::nullopt;
      return ConvSite{op, conv, SmallVector<Value>(op->getOperands()), Epilogue{}};
    }
    auto g = llvm::dyn_cast_or_null<FusedGroupOp>(op);
    if (!g)
      return std::nullopt;
    auto conv = llvm::dyn_cast_or_null<Conv2DOp>(groupAnchor(g));
    if (!conv)
      return std::nullopt;
    std::optional<Epilogue> e = matchEpilogue(g, conv);
    if (!e)
      return std::nullopt;
    IRMapping map;
    for (auto [arg, input] : llvm::zip(g.getBody().front().getArguments(), g.getInputs()))
      map.map(arg, input);
    ConvSite site{op, conv, {}, *e};
    for (Value v : conv->getOperands()) {
      Value outside = map.lookupOrNull(v);
      if (!outside)
        return std::nullopt;
      site.operands.push_back(outside);
    }
    return site;
  }

  static bool isStatic(ConvSite &s) {
    return llvm::all_of(s.operands, isStaticF32) && isStaticF32(s.conv.getResult());
  }

  static bool hasAttrs(Conv2DOp conv, int64_t k, int64_t stride, int64_t pad) {
    return llvm::all_of(conv.getStride(), [&](int64_t v) { return v == stride; }) &&
           llvm::all_of(conv.getPadding(), [&](int64_t v) { return v == pad; }) &&
           llvm::all_of(conv.getDilation(), [](int64_t v) { return v == 1; }) &&
           conv.getStride().size() == 2 && conv.getPadding().size() == 2 &&
           llvm::cast<RankedTensorType>(conv->getOperand(1).getType()).getDimSize(2) == k &&
           llvm::cast<RankedTensorType>(conv->getOperand(1).getType()).getDimSize(3) == k;
  }

  /// The convolutions a fusion may start from (kernel selection's
  /// candidates: plain ones and fusion groups around one).
  static SmallVector<Operation *> convCandidates(ModuleOp module) {
    SmallVector<Operation *> candidates;
    module.walk([&](Operation *op) {
      if (llvm::isa<FusedGroupOp, Conv2DOp>(op))
        candidates.push_back(op);
    });
    return candidates;
  }

  static ArrayRef<int64_t> shapeOf(Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getShape();
  }

  static Value biasOf(const ConvSite &s) {
    return s.operands.size() > 2 ? s.operands[2] : Value();
  }

  /// One filter per input channel (channel multiplier 1).
  static bool isDepthwise(ConvSite &s) {
    int64_t c = shapeOf(s.operands[0])[1];
    ArrayRef<int64_t> w = shapeOf(s.operands[1]);
    return static_cast<int64_t>(s.conv.getGroups()) == c && w[0] == c && w[1] == 1;
  }

  /// A pointwise convolution's constant weights packed as the A operand.
  static Value packedPointwise(KernelCallBuilder &k, const ConvSite &pw,
                               const ::cuvil::Tensor &wt) {
    ArrayRef<int64_t> w = shapeOf(pw.operands[1]);
    return k.constant(packPanels(reinterpret_cast<const float *>(wt.data()), 1, w[0], w[1], kMR),
                      resourceName(pw.operands[1], "packed"));
  }

  /// Replaces `second`, whose input only `first` produces, and `first` by
  /// one call of `fn` with both sites' params (first's, then second's: 42).
  static void replacePair(ModuleOp module, KernelCallBuilder &k, ConvSite &first,
                          ConvSite &second, StringRef fn, ArrayRef<Value> args) {
    SmallVector<int64_t> params;
    for (ConvSite *s : {&first, &second}) {
      SmallVector<int64_t> p =
          convParams(s->conv, shapeOf(s->operands[0]), shapeOf(s->operands[1]),
                     s->conv.getResult().getType(), flagsOf(s->epilogue, bool(biasOf(*s))),
                     s->epilogue);
      params.append(p.begin(), p.end());
    }
    auto out = llvm::cast<RankedTensorType>(second.conv.getResult().getType());
    Value r = k.call(module, fn, params, args, out);
    second.root->getResult(0).replaceAllUsesWith(r);
    second.root->erase();
    first.root->erase();
  }

  /// Depthwise 3x3 stride 1 -> pointwise pairs whose middle tensor would not
  /// stay in cache: one call that runs them in bands of rows (runtime:
  /// cuvil_rt_depthwise_pointwise_f32, which needs a row of every channel,
  /// C x W floats, to fit well within its band: at most 64 channels, at
  /// least 16 columns for the depthwise rows' vectors).
  void fuseDepthwisePointwise(ModuleOp module) {
    for (Operation *op : convCandidates(module)) {
      std::optional<ConvSite> pw = convSite(op);
      if (!pw || !isStatic(*pw) || pw->conv.getGroups() != 1 || !hasAttrs(pw->conv, 1, 1, 0))
        continue;
      Value mid = pw->operands[0];
      std::optional<ConvSite> dw = convSite(mid.getDefiningOp());
      if (!dw || !mid.hasOneUse() || !isStatic(*dw) || dw->epilogue.residual ||
          !hasAttrs(dw->conv, 3, 1, 1) || !isDepthwise(*dw))
        continue;
      ArrayRef<int64_t> in = shapeOf(mid);
      int64_t c = in[1], h = in[2], w = in[3];
      int64_t bytes = in[0] * c * h * w * static_cast<int64_t>(sizeof(float));
      // A row of every channel (C x W floats) must fit the runtime's band
      // buffer (64 Ki floats) many times over.
      if (c > 64 || w < 16 || c * w > 65536 || bytes < fuseDepthwiseMinBytes ||
          pixelRowsPay(h * w, shapeOf(pw->operands[1])[0], true))
        continue;
      std::optional<::cuvil::Tensor> wt = constantF32(pw->operands[1]);
      if (!wt)
        continue;
      OpBuilder b(pw->root);
      KernelCallBuilder k(b, pw->conv.getLoc());
      UnreadOperand unread(k);
      replacePair(module, k, *dw, *pw, "cuvil_rt_depthwise_pointwise_f32",
                  {dw->operands[0], dw->operands[1], unread.orIt(biasOf(*dw)),
                   packedPointwise(k, *pw, *wt), unread.orIt(biasOf(*pw)),
                   unread.orIt(pw->epilogue.residual)});
    }
  }

  /// Pointwise -> depthwise 3x3 (stride 1 or 2, padding 1) pairs, an
  /// inverted residual block's expansion, whose middle tensor would not stay
  /// in cache: one call that runs them in bands of rows (runtime:
  /// cuvil_rt_pointwise_depthwise_f32, whose band holds at least three rows
  /// of every channel: C x W at most 32768; the depthwise rows want 16 or
  /// more output columns, and at stride 2 an even width).
  void fusePointwiseDepthwise(ModuleOp module) {
    for (Operation *op : convCandidates(module)) {
      std::optional<ConvSite> dw = convSite(op);
      if (!dw || !isStatic(*dw) || dw->epilogue.residual || dw->conv.getStride().size() != 2)
        continue;
      int64_t stride = dw->conv.getStride()[0];
      if ((stride != 1 && stride != 2) || !hasAttrs(dw->conv, 3, stride, 1) || !isDepthwise(*dw))
        continue;
      Value mid = dw->operands[0];
      std::optional<ConvSite> pw = convSite(mid.getDefiningOp());
      if (!pw || !mid.hasOneUse() || !isStatic(*pw) || pw->epilogue.residual ||
          pw->conv.getGroups() != 1 || !hasAttrs(pw->conv, 1, 1, 0))
        continue;
      ArrayRef<int64_t> in = shapeOf(mid);
      int64_t c = in[1], h = in[2], w = in[3];
      int64_t bytes = in[0] * c * h * w * static_cast<int64_t>(sizeof(float));
      if (shapeOf(dw->conv.getResult())[3] < 16 || (stride == 2 && w % 2 != 0) ||
          c * w > 32768 || bytes < fuseDepthwiseMinBytes || pixelRowsPay(h * w, c, true))
        continue;
      std::optional<::cuvil::Tensor> wt = constantF32(pw->operands[1]);
      if (!wt)
        continue;
      OpBuilder b(dw->root);
      KernelCallBuilder k(b, dw->conv.getLoc());
      UnreadOperand unread(k);
      replacePair(module, k, *pw, *dw, "cuvil_rt_pointwise_depthwise_f32",
                  {pw->operands[0], packedPointwise(k, *pw, *wt), unread.orIt(biasOf(*pw)),
                   dw->operands[1], unread.orIt(biasOf(*dw))});
    }
  }

  static SmallVector<int64_t> convParams(Conv2DOp conv, ArrayRef<int64_t> in, ArrayRef<int64_t> w,
                                         Type outType, int64_t flags, const Epilogue &e) {
    auto out = llvm::cast<RankedTensorType>(outType);
    ArrayRef<int64_t> stride = conv.getStride(), padding = conv.getPadding(),
                      dilation = conv.getDilation();
    return convLayout(in, w[0], out.getDimSize(2), out.getDimSize(3), w[2], w[3], stride, padding, dilation,
                      static_cast<int64_t>(conv.getGroups()), flags, floatBits(e.lo), floatBits(e.hi));
  }

  /// A convolution-family parameter array (kernel_abi.h's CUVIL_CONV_*).
  static SmallVector<int64_t> convLayout(ArrayRef<int64_t> in, int64_t cout, int64_t oh, int64_t ow, int64_t kh,
                                         int64_t kw, ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                                         ArrayRef<int64_t> dilation, int64_t groups, int64_t flags, int64_t lo,
                                         int64_t hi) {
    SmallVector<int64_t> p(CUVIL_CONV_NUM_PARAMS);
    p[CUVIL_CONV_VERSION] = kParamsVersion;
    p[CUVIL_CONV_N] = in[0];
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

  static int64_t flagsOf(const Epilogue &e, bool bias) {
    return (bias ? kFlagBias : 0) | (e.residual ? kFlagResidual : 0) | (e.clamp ? kFlagClamp : 0);
  }

  /// The bias and residual operands. An absent one still needs a buffer in
  /// the call's fixed signature: a one-float constant that the kernel never
  /// reads (the params' flags say which operands are present).
  static void optionalOperands(KernelCallBuilder &k, Value bias, const Epilogue &e,
                               SmallVectorImpl<Value> &out) {
    UnreadOperand unread(k);
    out.push_back(unread.orIt(bias));
    out.push_back(unread.orIt(e.residual));
  }

  Value rewriteConv(OpBuilder &b, ModuleOp module, Conv2DOp conv, ArrayRef<Value> operands,
                    const Epilogue &e) {
    Value input = operands[0], weight = operands[1];
    Value bias = operands.size() > 2 ? operands[2] : Value();
    if (!isStaticF32(input) || !isStaticF32(weight) || !isStaticF32(conv.getResult()) ||
        (bias && !isStaticF32(bias)))
      return nullptr;
    auto in = llvm::cast<RankedTensorType>(input.getType()).getShape();
    auto w = llvm::cast<RankedTensorType>(weight.getType()).getShape();
    auto out = llvm::cast<RankedTensorType>(conv.getResult().getType());
    int64_t groups = conv.getGroups();
    ArrayRef<int64_t> stride = conv.getStride(), padding = conv.getPadding(),
                      dilation = conv.getDilation();
    if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2)
      return nullptr;
    int64_t cinG = w[1];
    bool depthwise = cinG == 1 && groups == in[1];
    Winograd winoKind = depthwise ? Winograd::None : chooseWinograd(conv, in, w, out);
    bool wino = winoKind != Winograd::None;
    bool pixelRows = !depthwise && !wino &&
                     pixelRowsPay(out.getDimSize(2) * out.getDimSize(3), w[0] / groups,
                                  w[2] == 1 && w[3] == 1 && stride[0] == 1 && stride[1] == 1 &&
                                      padding[0] == 0 && padding[1] == 0);
    int64_t flags = flagsOf(e, static_cast<bool>(bias)) | (wino ? kFlagWinograd : 0) |
                    (winoKind == Winograd::F2 ? kFlagWinograd2 : 0) |
                    (pixelRows ? kFlagPixelRows : 0);
    SmallVector<int64_t> params = convParams(conv, in, w, out, flags, e);
    KernelCallBuilder k(b, conv.getLoc());
    SmallVector<Value> args{input};
    if (depthwise) {
      // Depthwise: a direct kernel on the weights as they are.
      args.push_back(weight);
      optionalOperands(k, bias, e, args);
      return k.call(module, "cuvil_rt_depthwise_conv2d_f32", params, args, out);
    }
    std::optional<::cuvil::Tensor> wt = constantF32(weight);
    if (!wt)
      return nullptr;
    if (wino) {
      std::vector<float> u =
          winogradWeights(reinterpret_cast<const float *>(wt->data()), w[0], w[1], winoKind);
      args.push_back(k.constant(u, resourceName(weight, "winograd")));
      optionalOperands(k, bias, e, args);
      return k.call(module, "cuvil_rt_conv2d_f32", params, args, out);
    }
    int64_t kSize = cinG * w[2] * w[3];
    if (pixelRows) {
      std::vector<float> panels = packPanels(reinterpret_cast<const float *>(wt->data()), groups,
                                             w[0] / groups, kSize, kBPanel);
      args.push_back(k.constant(panels, resourceName(weight, "panels")));
      optionalOperands(k, bias, e, args);
      return k.call(module, "cuvil_rt_conv2d_f32", params, args, out);
    }
    std::vector<float> packed = packPanels(reinterpret_cast<const float *>(wt->data()), groups,
                                           w[0] / groups, kSize, kMR);
    args.push_back(k.constant(packed, resourceName(weight, "packed")));
    optionalOperands(k, bias, e, args);
    return k.call(module, "cuvil_rt_conv2d_f32", params, args, out);
  }

  /// Winograd pays where there are enough tiles to amortise the transforms
  /// and the larger weights (read once per NR tiles): F(4x4, 3x3) with
  /// enough 4x4 tiles; else, with many channels, F(2x2, 3x3) with enough
  /// 2x2 tiles (7x7 images: 4 tiles of 4x4, 16 of 2x2; 1.7x fewer
  /// multiply-adds than the direct form for 1.8x the weights).
  Winograd chooseWinograd(Conv2DOp conv, ArrayRef<int64_t> in, ArrayRef<int64_t> w,
                          RankedTensorType out) {
    if (!winograd || conv.getGroups() != 1 || w[2] != 3 || w[3] != 3 ||
        llvm::any_of(conv.getStride(), [](int64_t s) { return s != 1; }) ||
        llvm::any_of(conv.getDilation(), [](int64_t d) { return d != 1; }) || w[0] < kMR ||
        w[1] < kMR)
      return Winograd::None;
    auto tiles = [&](int64_t side) {
      return in[0] * ((out.getDimSize(2) + side - 1) / side) *
             ((out.getDimSize(3) + side - 1) / side);
    };
    if (tiles(4) >= winogradMinTiles)
      return Winograd::F4;
    if (winograd2x2 && tiles(2) >= winogradMinTiles && w[0] >= kWinograd2MinChannels &&
        w[1] >= kWinograd2MinChannels)
      return Winograd::F2;
    return Winograd::None;
  }

  Value rewriteLinear(OpBuilder &b, ModuleOp module, LinearOp linear, ArrayRef<Value> operands,
                      const Epilogue &e) {
    Value input = operands[0], weight = operands[1];
    Value bias = operands.size() > 2 ? operands[2] : Value();
    if (!isStaticF32(input) || !isStaticF32(linear.getResult()) || (bias && !isStaticF32(bias)))
      return nullptr;
    auto in = llvm::cast<RankedTensorType>(input.getType());
    auto out = llvm::cast<RankedTensorType>(linear.getResult().getType());
    std::optional<::cuvil::Tensor> wt = constantF32(weight);
    if (!wt || wt->rank() != 2 || in.getRank() < 1)
      return nullptr;
    int64_t n = wt->dim(0), kSize = wt->dim(1);
    int64_t m = in.getNumElements() / std::max<int64_t>(kSize, 1);
    if (kSize == 0 || in.getDimSize(in.getRank() - 1) != kSize)
      return nullptr;
    bool rows = linearRowsPay(m, n);
    SmallVector<int64_t> params(CUVIL_LINEAR_NUM_PARAMS);
    params[CUVIL_LINEAR_VERSION] = kParamsVersion;
    params[CUVIL_LINEAR_M] = m;
    params[CUVIL_LINEAR_K] = kSize;
    params[CUVIL_LINEAR_N] = n;
    params[CUVIL_LINEAR_FLAGS] = flagsOf(e, static_cast<bool>(bias)) | (rows ? kFlagPixelRows : 0);
    params[CUVIL_LINEAR_LO] = floatBits(e.lo);
    params[CUVIL_LINEAR_HI] = floatBits(e.hi);
    params[CUVIL_LINEAR_MR] = kMR;
    KernelCallBuilder k(b, linear.getLoc());
    const float *w = reinterpret_cast<const float *>(wt->data());
    if (rows) {
      SmallVector<Value> args{input,
                              k.constant(packPanels(w, 1, n, kSize, kBPanel), resourceName(weight, "panels"))};
      optionalOperands(k, bias, e, args);
      return k.call(module, "cuvil_rt_linear_f32", params, args, out);
    }
    std::vector<float> packed = packPanels(w, 1, n, kSize, kMR);
    SmallVector<Value> args{input, k.constant(packed, resourceName(weight, "packed"))};
    optionalOperands(k, bias, e, args);
    return k.call(module, "cuvil_rt_linear_f32", params, args, out);
  }
};

} // namespace
