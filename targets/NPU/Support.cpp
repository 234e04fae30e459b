//===- Support.cpp - What the NPU passes share ----------------------------===//
#include "targets/NPU/Support.h"

#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace mlir::cuvil::npu {

namespace {
ArrayRef<int64_t> shapeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()).getShape(); }
int64_t elementBytes(Type t) {
  return (llvm::cast<RankedTensorType>(t).getElementType().getIntOrFloatBitWidth() + 7) / 8;
}
} // namespace

namespace {
template <typename ConvT> ConvGeometry convGeometryOf(ConvT op) {
  ConvGeometry g;
  ArrayRef<int64_t> in = shapeOf(op.getInput()), w = shapeOf(op.getWeight()), out = shapeOf(op.getResult());
  g.n = in[0], g.cin = in[1], g.h = in[2], g.w = in[3];
  g.cout = out[1], g.oh = out[2], g.ow = out[3];
  g.kh = w[2], g.kw = w[3];
  g.sh = op.getStride()[0], g.sw = op.getStride()[1];
  g.ph = op.getPadding()[0], g.pw = op.getPadding()[1];
  g.dh = op.getDilation()[0], g.dw = op.getDilation()[1];
  g.groups = op.getGroups();
  g.depthwise = g.groups > 1 && g.groups == g.cin && g.cout == g.cin;
  g.outBytes = elementBytes(op.getResult().getType());
  return g;
}

template <typename LinearT> ConvGeometry linearGeometryOf(LinearT op) {
  ConvGeometry g;
  ArrayRef<int64_t> in = shapeOf(op.getInput()), out = shapeOf(op.getResult());
  g.gemm = true;
  g.cin = in[1], g.h = in[0], g.w = 1;
  g.cout = out[1], g.oh = in[0], g.ow = 1;
  g.outBytes = elementBytes(op.getResult().getType());
  return g;
}

ConvGeometry asFp16(ConvGeometry g, int64_t outBytes) {
  g.fp16 = true;
  g.inBytes = 2;
  g.outBytes = outBytes;
  return g;
}
} // namespace

ConvGeometry convGeometry(QuantConv2DOp op) { return convGeometryOf(op); }
ConvGeometry linearGeometry(QuantLinearOp op) { return linearGeometryOf(op); }
ConvGeometry convGeometry(Conv2DOp op, int64_t outBytes) { return asFp16(convGeometryOf(op), outBytes); }
ConvGeometry linearGeometry(LinearOp op, int64_t outBytes) { return asFp16(linearGeometryOf(op), outBytes); }

std::optional<ConvTiling> planConv(const ConvGeometry &g, const cuvil_npu_config &c, bool residual) {
  const int64_t align = std::max(c.alignment, 1);
  const int64_t wHalf = c.wbuf_bytes / 2, aQuarter = c.abuf_bytes / 4, accHalf = c.acc_bytes / 2;
  const int64_t columnBytes = g.reduction() * g.inBytes; // one output channel's weights
  auto weightBytes = [&](int64_t co) {
    return roundUp(columnBytes * co, align) + roundUp(co * 12, align);
  };
  // Output channels per tile: as many as half the weight buffer holds, in
  // multiples of the array's width, then evened out over the tiles.
  int64_t coMax = std::min(g.cout, (wHalf / (columnBytes + 12)) / c.array_n * c.array_n);
  if (coMax <= 0)
    coMax = std::min<int64_t>(g.cout, wHalf / (columnBytes + 12));
  while (coMax > 0 && weightBytes(coMax) > wHalf)
    --coMax;
  if (coMax <= 0)
    return std::nullopt;
  int64_t tiles = ceilDiv(g.cout, coMax);
  int64_t co = std::min(coMax, roundUp(ceilDiv(g.cout, tiles), c.array_n));
  co = std::min(co, g.cout);
  // Output rows per band.
  int64_t bandChannels = g.depthwise ? co : g.cin;
  auto inRows = [&](int64_t rows) {
    return g.gemm ? rows : std::min(g.h, (rows - 1) * g.sh + (g.kh - 1) * g.dh + 1);
  };
  auto fits = [&](int64_t rows) {
    return bandChannels * inRows(rows) * g.w * g.inBytes <= aQuarter && rows * g.ow * co * 4 <= accHalf &&
           co * rows * g.ow * g.outBytes <= (residual ? aQuarter / 2 : aQuarter);
  };
  if (!fits(1))
    return std::nullopt;
  int64_t lo = 1, hi = g.oh;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  int64_t bands = ceilDiv(g.oh, lo);
  ConvTiling t;
  t.coTile = co;
  t.rows = ceilDiv(g.oh, bands);
  t.inRows = inRows(t.rows);
  // Loop order: fetch again whichever operand costs fewer DMA bytes.
  int64_t coTiles = ceilDiv(g.cout, co);
  int64_t inputBytes = bands * bandChannels * t.inRows * g.w * g.inBytes;
  int64_t weightsTotal = columnBytes * g.cout;
  // A depthwise tile reads its own channels: nothing is fetched twice.
  t.weightsOuter = g.depthwise || weightsTotal + coTiles * inputBytes <= inputBytes + bands * weightsTotal;
  return t;
}

namespace {
bool hasElement(Type t, bool (Type::*is)() const) {
  auto r = llvm::dyn_cast<RankedTensorType>(t);
  return r && (r.getElementType().*is)();
}
} // namespace

bool isWidening(Operation *op) {
  return llvm::isa_and_nonnull<CastOp>(op) && hasElement(op->getOperand(0).getType(), &Type::isF16) &&
         hasElement(op->getResult(0).getType(), &Type::isF32);
}
bool isNarrowing(Operation *op) {
  return llvm::isa_and_nonnull<CastOp>(op) && hasElement(op->getOperand(0).getType(), &Type::isF32) &&
         hasElement(op->getResult(0).getType(), &Type::isF16);
}
Operation *soleUser(Operation *op) {
  Value v = op->getResult(0);
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

int64_t tensorBytes(Type type) {
  auto t = llvm::dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return -1;
  return t.getNumElements() * ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

std::string locationString(Location loc) {
  if (auto f = llvm::dyn_cast<FileLineColLoc>(loc))
    return (f.getFilename().getValue() + ":" + llvm::Twine(f.getLine())).str();
  if (auto n = llvm::dyn_cast<NameLoc>(loc)) {
    std::string inner = locationString(n.getChildLoc());
    return inner.empty() ? n.getName().getValue().str() : n.getName().getValue().str() + " (" + inner + ")";
  }
  if (auto c = llvm::dyn_cast<CallSiteLoc>(loc))
    return locationString(c.getCallee());
  if (auto f = llvm::dyn_cast<FusedLoc>(loc))
    for (Location l : f.getLocations())
      if (std::string s = locationString(l); !s.empty())
        return s;
  return "";
}

std::string layerName(Operation *op) {
  for (Value v : op->getOperands())
    if (auto c = v.getDefiningOp<ConstantOp>())
      if (auto r = llvm::dyn_cast<DenseResourceElementsAttr>(c.getValue())) {
        StringRef key = r.getRawHandle().getKey();
        size_t at = key.find(".weight");
        if (at != StringRef::npos && at > 0)
          return key.take_front(at).str();
      }
  std::string where = locationString(op->getLoc());
  return where.empty() ? op->getName().getStringRef().str() : where;
}

} // namespace mlir::cuvil::npu
