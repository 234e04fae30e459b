//===- LowerComplex.cpp - Complex tensors, torch.fft and torch.stft --------===//
//
// Cuvil's IR has no complex element type: a complex tensor of shape S is a
// float tensor of shape S x 2, (real, imaginary) pairs, the bytes of
// torch.view_as_real; its TensorBox says `complex`. This file is every op
// that makes, reads or computes on such a box:
//  - the Fourier transforms (torch.fft.*, stft, istft), built around one
//    kernel, an unnormalised complex DFT along a row (cuvil.linalg.kernel
//    "dft", runtime/cpu/fft.c), by resizing, Hermitian extension, conj and
//    scaling with ordinary ops;
//  - complex arithmetic (add, sub, mul, div, abs, angle, conj, exp, ...)
//    written on the real and imaginary parts;
//  - the ops that are linear in one complex operand (shape and data
//    movement, reductions, products with a real operand): run on the two
//    parts separately and paired again.
// Any other op on a complex tensor is reported unsupported by name. Ops are
// built by calling the importer's own ATen handlers on the parts, so the
// parts follow PyTorch's rules (dims, broadcasting, promotion) exactly.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Interpreter.h"
#include "frontend/torchscript/LowerHelpers.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include <cmath>
#include <set>

namespace cir = mlir::cuvil;

namespace cuvil::torchscript {

using namespace lower;
using mlir::RankedTensorType;
using mlir::Value;
using K = IValue::Kind;

namespace {

/// Raised when an op this file builds on is itself unsupported: the
/// dispatcher returns poison (the unsupported item is recorded already).
struct Poisoned {};

bool isComplexBox(const IValue &v) { return v.isTensor() && v.tensor->complex; }

/// torch.fft's transforms (not its shifts and frequency tables, which are
/// real ops).
bool isFourierTransform(const std::string &name) {
  return name.rfind("aten::fft_", 0) == 0 && name != "aten::fft_fftshift" && name != "aten::fft_ifftshift" &&
         name != "aten::fft_fftfreq" && name != "aten::fft_rfftfreq";
}
bool holdsComplex(const IValue &v) {
  if (isComplexBox(v))
    return true;
  if (v.isSequence())
    for (const IValue &x : *v.list)
      if (isComplexBox(x))
        return true;
  return false;
}

IValue I(int64_t v) { return IValue::integer(v); }
IValue F(double v) { return IValue::floating(v); }
IValue T(Value v) { return IValue::ofTensor(v); }
IValue ints(const std::vector<int64_t> &v) {
  IValueList items;
  for (int64_t x : v)
    items.push_back(I(x));
  return IValue::makeList(items);
}

/// The real and imaginary parts: real tensors of the complex shape.
struct Cx {
  Value re, im;
};

class ComplexLowering {
public:
  explicit ComplexLowering(Interpreter &in) : in(in) {}

  IValue call(const std::string &name, std::vector<IValue> args,
              std::vector<std::pair<std::string, IValue>> kwargs = {}) {
    IValue r = in.callOperator(name, std::move(args), std::move(kwargs));
    if (r.is(K::Poison))
      throw Poisoned{};
    return r;
  }
  Value op(const std::string &name, std::vector<IValue> args,
           std::vector<std::pair<std::string, IValue>> kwargs = {}) {
    IValue r = call(name, std::move(args), std::move(kwargs));
    if (!r.isTensor())
      in.fail("CUVIL-E-IMPORT-INTERNAL", name + " did not give a tensor");
    return r.tensor->value;
  }

  Cx parts(const IValue &c) {
    Value v = c.tensor->value;
    return {op("aten::select", {T(v), I(-1), I(0)}), op("aten::select", {T(v), I(-1), I(1)})};
  }
  /// A complex value from parts: broadcast, one float type.
  Value pair(Cx x) {
    DType a = dtypeOf(x.re), b = dtypeOf(x.im);
    DType d = (a == DType::Float64 || b == DType::Float64) ? DType::Float64 : DType::Float32;
    x.re = cast(in, x.re, d);
    x.im = cast(in, x.im, d);
    if (typeOf(x.re).getShape() != typeOf(x.im).getShape()) {
      IValue both = call("aten::broadcast_tensors", {IValue::makeList({T(x.re), T(x.im)})});
      x.re = (*both.list)[0].tensor->value;
      x.im = (*both.list)[1].tensor->value;
    }
    return op("aten::stack", {IValue::makeList({T(x.re), T(x.im)}), I(-1)});
  }
  IValue box(Cx x) { return boxed(pair(x)); }
  static IValue boxed(Value pairs) {
    IValue r = IValue::ofTensor(pairs);
    r.tensor->complex = true;
    return r;
  }
  /// A view of complex `base` (in-place writes to it go through to the base
  /// where the view ops allow, else are reported).
  static IValue complexView(const IValue &base, Value pairs) {
    IValue r = viewOf(base, pairs);
    r.tensor->complex = true;
    return r;
  }

  /// Any tensor as parts (a real one with a zero imaginary part, floats).
  Cx asCx(const IValue &v) {
    if (isComplexBox(v))
      return parts(v);
    if (!v.isTensor())
      in.fail("CUVIL-E-IMPORT-TYPE", "expected a tensor, got " + v.typeName());
    Value re = floatOperand(in, v.tensor->value);
    return {re, op("aten::zeros_like", {T(re)})};
  }
  Value scale(Value v, double s) { return s == 1.0 ? v : op("aten::mul", {T(v), F(s)}); }
  Cx scale(Cx x, double s) { return {scale(x.re, s), scale(x.im, s)}; }
  Cx conj(Cx x) { return {x.re, op("aten::neg", {T(x.im)})}; }
  Cx mul(Cx a, Cx b) {
    return {op("aten::sub", {T(op("aten::mul", {T(a.re), T(b.re)})), T(op("aten::mul", {T(a.im), T(b.im)}))}),
            op("aten::add", {T(op("aten::mul", {T(a.re), T(b.im)})), T(op("aten::mul", {T(a.im), T(b.re)}))})};
  }
  Cx div(Cx a, Cx b) {
    Value den = op("aten::add", {T(op("aten::mul", {T(b.re), T(b.re)})), T(op("aten::mul", {T(b.im), T(b.im)}))});
    Cx n = mul(a, conj(b));
    return {op("aten::div", {T(n.re), T(den)}), op("aten::div", {T(n.im), T(den)})};
  }

  int64_t rank(Value v) { return typeOf(v).getRank(); }
  int64_t size(Value v, int64_t dim) {
    RankedTensorType t = typeOf(v);
    int64_t d = t.getDimSize(dim);
    if (mlir::ShapedType::isDynamic(d)) {
      in.unsupported("a Fourier transform along a dimension known only at run time");
      throw Poisoned{};
    }
    return d;
  }

  /// x resized along `dim` to n: cut, or zero-padded at the end (torch.fft's
  /// rule for the signal size).
  Value resize(Value x, int64_t dim, int64_t n) {
    int64_t have = size(x, dim);
    if (have > n)
      return op("aten::narrow", {T(x), I(dim), I(0), I(n)});
    if (have < n) {
      std::vector<int64_t> pad(2 * (rank(x) - dim), 0);
      pad[pad.size() - 1] = n - have; // pads list the last dim first
      return op("aten::constant_pad_nd", {T(x), ints(pad), F(0.0)});
    }
    return x;
  }
  Cx resize(Cx x, int64_t dim, int64_t n) { return {resize(x.re, dim, n), resize(x.im, dim, n)}; }

  /// The unnormalised DFT of x along `dim` (x already of the signal size).
  Cx dft(Cx x, int64_t dim, bool inverse) {
    int64_t r = rank(x.re);
    Value re = x.re, im = x.im;
    if (dim != r - 1) {
      re = op("aten::movedim", {T(re), I(dim), I(-1)});
      im = op("aten::movedim", {T(im), I(dim), I(-1)});
    }
    if (size(re, r - 1) == 0)
      return x;
    Value pairs = pair({re, im});
    auto t = typeOf(pairs);
    if (!t.hasStaticShape()) {
      in.unsupported("a Fourier transform of a tensor whose shape is known only at run time");
      throw Poisoned{};
    }
    auto kernel = in.builder().create<cir::LinalgKernelOp>(
        in.location(), mlir::TypeRange{t}, mlir::ValueRange{pairs}, in.builder().getStringAttr("dft"),
        in.builder().getDenseI64ArrayAttr({inverse ? 1 : 0}));
    Cx out = parts(T(kernel.getResult(0)));
    if (dim != r - 1) {
      out.re = op("aten::movedim", {T(out.re), I(-1), I(dim)});
      out.im = op("aten::movedim", {T(out.im), I(-1), I(dim)});
    }
    return out;
  }

  /// The scale torch.fft applies for `norm` to a transform of `n` points in
  /// direction `forward`.
  double normScale(const IValue &norm, int64_t n, bool forward) {
    std::string mode = norm.isNone() ? "backward" : norm.s;
    if (mode != "backward" && mode != "forward" && mode != "ortho")
      in.fail("CUVIL-E-IMPORT-RAISE", "Invalid normalization mode: \"" + mode + "\"");
    if (n == 0)
      return 1.0;
    if (mode == "ortho")
      return 1.0 / std::sqrt(static_cast<double>(n));
    return (mode == "forward") == forward ? 1.0 / static_cast<double>(n) : 1.0;
  }
  static IValue swapNorm(const IValue &norm) {
    std::string mode = norm.isNone() ? "backward" : norm.s;
    return IValue::string(mode == "backward" ? "forward" : mode == "forward" ? "backward" : mode);
  }

  /// The dims and signal sizes of an n-dimensional transform (torch.fft's
  /// canonicalisation: s without dim means the last len(s) dims; neither
  /// means every dim). `c2r`: the last size is the real output's, by
  /// default 2 (m - 1).
  void dimsAndSizes(const char *what, Value x, const IValue &s, const IValue &dim, bool c2r,
                    std::vector<int64_t> &dims, std::vector<int64_t> &sizes) {
    int64_t r = rank(x);
    dims.clear();
    sizes.clear();
    if (!dim.isNone()) {
      for (const IValue &d : *dim.list)
        dims.push_back(wrapDim(in, d.i, r));
      std::set<int64_t> seen(dims.begin(), dims.end());
      if (seen.size() != dims.size())
        in.fail("CUVIL-E-IMPORT-RAISE", std::string(what) + ": dims must be unique");
    } else if (!s.isNone()) {
      int64_t k = static_cast<int64_t>(s.list->size());
      if (k > r)
        in.fail("CUVIL-E-IMPORT-RAISE", std::string(what) + ": got shape with " + std::to_string(k) +
                                            " values but input tensor only has " + std::to_string(r) +
                                            " dimensions.");
      for (int64_t d = r - k; d < r; ++d)
        dims.push_back(d);
    } else {
      for (int64_t d = 0; d < r; ++d)
        dims.push_back(d);
    }
    if (!s.isNone()) {
      if (s.list->size() != dims.size())
        in.fail("CUVIL-E-IMPORT-RAISE", std::string(what) + ": when given, dim and shape arguments must have "
                                                            "the same length");
      for (const IValue &v : *s.list)
        sizes.push_back(v.i);
    }
    for (size_t k = 0; k < dims.size(); ++k) {
      if (k < sizes.size() && sizes[k] != -1)
        continue;
      int64_t have = size(x, dims[k]);
      int64_t n = c2r && k + 1 == dims.size() ? 2 * (have - 1) : have;
      if (k < sizes.size())
        sizes[k] = n;
      else
        sizes.push_back(n);
    }
    for (int64_t n : sizes)
      if (n < 1)
        in.fail("CUVIL-E-IMPORT-RAISE", std::string(what) + ": invalid number of data points (" +
                                            std::to_string(n) + ") specified");
  }

  /// Complex-to-complex over `dims` (each resized first).
  Cx c2c(Cx x, const std::vector<int64_t> &dims, const std::vector<int64_t> &sizes, bool inverse) {
    for (size_t k = 0; k < dims.size(); ++k)
      x = dft(resize(x, dims[k], sizes[k]), dims[k], inverse);
    return x;
  }
  /// The one-sided spectrum of real x along `dim` (n points).
  Cx r2c(Value x, int64_t dim, int64_t n) {
    Cx full = dft(asCx(T(resize(floatOperand(in, x), dim, n))), dim, false);
    return {op("aten::narrow", {T(full.re), I(dim), I(0), I(n / 2 + 1)}),
            op("aten::narrow", {T(full.im), I(dim), I(0), I(n / 2 + 1)})};
  }
  /// The real signal of n points whose one-sided spectrum along `dim` is x
  /// (unnormalised inverse). The Hermitian extension takes X[0] and, for
  /// even n, X[n/2] as real, as PyTorch's c2r does.
  Value c2r(Cx x, int64_t dim, int64_t n) {
    int64_t h = n / 2;
    x = resize(x, dim, h + 1);
    Cx full = x;
    int64_t tail = n - h - 1;
    if (tail > 0) {
      Cx mirrored = {op("aten::narrow", {T(x.re), I(dim), I(1), I(tail)}),
                     op("aten::narrow", {T(x.im), I(dim), I(1), I(tail)})};
      mirrored = conj({op("aten::flip", {T(mirrored.re), ints({dim})}),
                       op("aten::flip", {T(mirrored.im), ints({dim})})});
      full = {op("aten::cat", {IValue::makeList({T(x.re), T(mirrored.re)}), I(dim)}),
              op("aten::cat", {IValue::makeList({T(x.im), T(mirrored.im)}), I(dim)})};
    } else if (h + 1 > n) { // n == 1: X[0] alone
      full = {op("aten::narrow", {T(x.re), I(dim), I(0), I(n)}), op("aten::narrow", {T(x.im), I(dim), I(0), I(n)})};
    }
    // The imaginary parts of X[0] (and X[n/2]) must not reach the result:
    // with this extension they only add an imaginary part, dropped here.
    return dft(full, dim, true).re;
  }

  static int64_t product(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t x : v)
      p *= x;
    return p;
  }

  IValue fourier(const std::string &name, const Args &a);
  IValue stft(const Args &a);
  IValue istft(const Args &a);
  IValue dispatch(const std::string &name, const BoundArgs &b);

private:
  IValue linearInParts(const std::string &name, const BoundArgs &b);
  IValue splitParts(const std::string &name, const BoundArgs &b, bool listData);
  Interpreter &in;
};

IValue ComplexLowering::fourier(const std::string &name, const Args &a) {
  std::string op = name.substr(std::string("aten::fft_").size());
  const IValue &self = a["self"];
  const IValue &norm = a["norm"];
  bool nd = op.back() == '2' || op.back() == 'n';
  std::string base = nd ? op.substr(0, op.size() - 1) : op; // fft ifft rfft irfft hfft ihfft
  // Dims count in the complex (logical) shape.
  Value x0 = isComplexBox(self) ? parts(self).re : self.tensor->value;
  std::vector<int64_t> dims, sizes;
  bool c2rKind = base == "irfft" || base == "hfft";
  if (nd) {
    dimsAndSizes(name.c_str(), x0, a["s"], a["dim"], c2rKind, dims, sizes);
  } else {
    int64_t r = rank(x0);
    if (r == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", name + " expects a tensor with at least one dimension");
    int64_t dim = wrapDim(in, a.i("dim"), r);
    dims = {dim};
    IValue n = a["n"];
    int64_t have = size(x0, dim);
    sizes = {n.isNone() ? (c2rKind ? 2 * (have - 1) : have) : n.i};
    if (sizes[0] < 1)
      in.fail("CUVIL-E-IMPORT-RAISE", "Invalid number of data points (" + std::to_string(sizes[0]) +
                                          ") specified");
  }
  int64_t points = product(sizes);
  if (base == "fft" || base == "ifft") {
    bool inverse = base == "ifft";
    return box(scale(c2c(asCx(self), dims, sizes, inverse), normScale(norm, points, !inverse)));
  }
  if (base == "rfft" || base == "ihfft") {
    if (isComplexBox(self))
      in.fail("CUVIL-E-IMPORT-RAISE", name + " expects a real input tensor, but got complex");
    // The last dim one-sided, then the others complex-to-complex.
    Cx y = r2c(x0, dims.back(), sizes.back());
    std::vector<int64_t> restDims(dims.begin(), dims.end() - 1), restSizes(sizes.begin(), sizes.end() - 1);
    if (base == "rfft")
      return box(scale(c2c(y, restDims, restSizes, false), normScale(norm, points, true)));
    // ihfft: conj of the forward transform, scaled as an inverse.
    y = c2c(y, restDims, restSizes, false);
    return box(scale(conj(y), normScale(norm, points, false)));
  }
  // irfft / hfft: the others complex-to-complex (inverse), then the last
  // dim complex-to-real. hfft is irfft of the conjugate with the forward
  // direction's scaling.
  Cx x = asCx(self);
  bool hermitianForward = base == "hfft";
  if (hermitianForward)
    x = conj(x);
  std::vector<int64_t> restDims(dims.begin(), dims.end() - 1), restSizes(sizes.begin(), sizes.end() - 1);
  x = c2c(x, restDims, restSizes, true);
  Value out = c2r(x, dims.back(), sizes.back());
  return T(scale(out, normScale(norm, points, hermitianForward)));
}

IValue ComplexLowering::stft(const Args &a) {
  Value x = a.t("self");
  bool complexIn = isComplexBox(a["self"]);
  int64_t logicalRank = rank(x) - (complexIn ? 1 : 0);
  if (logicalRank != 1 && logicalRank != 2)
    in.fail("CUVIL-E-IMPORT-RAISE", "stft: expected a 1D or 2D tensor");
  int64_t nFft = a.i("n_fft");
  int64_t hop = a["hop_length"].isNone() ? nFft / 4 : a.i("hop_length");
  int64_t win = a["win_length"].isNone() ? nFft : a.i("win_length");
  bool center = a.a.has("center") && a.b("center");
  IValue window = a["window"];
  bool complexWindow = isComplexBox(window);
  // Left out, a real input gives real pairs (PyTorch 1.13 warns).
  IValue rc = a["return_complex"];
  bool returnComplex = rc.isNone() ? (complexIn || complexWindow) : rc.b;
  bool onesided = a["onesided"].isNone() ? !(complexIn || complexWindow) : a.b("onesided");
  if (nFft <= 0 || hop <= 0 || win <= 0 || win > nFft)
    in.fail("CUVIL-E-IMPORT-RAISE", "stft: expected 0 < n_fft, 0 < hop_length and 0 < win_length <= n_fft");
  Cx sig = asCx(a["self"]);
  bool batched = logicalRank == 2;
  auto pad = [&](Value v) {
    Value v3 = op("aten::unsqueeze", {T(v), I(batched ? 1 : 0)});
    if (!batched)
      v3 = op("aten::unsqueeze", {T(v3), I(0)});
    std::string mode = a.s("pad_mode");
    Value p = op("aten::pad", {T(v3), ints({nFft / 2, nFft / 2}), IValue::string(mode), IValue::none()});
    p = op("aten::squeeze", {T(p), I(1)});
    return batched ? p : op("aten::squeeze", {T(p), I(0)});
  };
  if (center) {
    sig.re = pad(sig.re);
    sig.im = pad(sig.im);
  }
  int64_t length = size(sig.re, rank(sig.re) - 1);
  if (length < nFft)
    in.fail("CUVIL-E-IMPORT-RAISE", "stft: expected 0 < n_fft <= " + std::to_string(length) +
                                        ", but got n_fft=" + std::to_string(nFft));
  // Frames [.., F, n_fft], windowed.
  Cx frames = {op("aten::unfold", {T(sig.re), I(-1), I(nFft), I(hop)}),
               op("aten::unfold", {T(sig.im), I(-1), I(nFft), I(hop)})};
  if (!window.isNone()) {
    Cx w = asCx(window);
    int64_t left = (nFft - win) / 2;
    if (size(w.re, 0) != win)
      in.fail("CUVIL-E-IMPORT-RAISE", "stft: expected a 1D window tensor of size equal to win_length=" +
                                          std::to_string(win));
    if (win < nFft) {
      auto padw = [&](Value v) {
        return op("aten::constant_pad_nd", {T(v), ints({left, nFft - win - left}), F(0.0)});
      };
      w = {padw(w.re), padw(w.im)};
    }
    frames = complexWindow ? mul(frames, w)
                           : Cx{op("aten::mul", {T(frames.re), T(w.re)}), op("aten::mul", {T(frames.im), T(w.re)})};
  } else if (win < nFft) {
    int64_t left = (nFft - win) / 2;
    Value ones = op("aten::ones", {ints({win})}, {{"dtype", I(dtypeOf(frames.re) == DType::Float64 ? 7 : 6)}});
    Value w = op("aten::constant_pad_nd", {T(ones), ints({left, nFft - win - left}), F(0.0)});
    frames = {op("aten::mul", {T(frames.re), T(w)}), op("aten::mul", {T(frames.im), T(w)})};
  }
  int64_t last = rank(frames.re) - 1;
  Cx spec = dft(frames, last, false);
  if (onesided)
    spec = {op("aten::narrow", {T(spec.re), I(last), I(0), I(nFft / 2 + 1)}),
            op("aten::narrow", {T(spec.im), I(last), I(0), I(nFft / 2 + 1)})};
  if (a.b("normalized"))
    spec = scale(spec, 1.0 / std::sqrt(static_cast<double>(nFft)));
  spec = {op("aten::transpose", {T(spec.re), I(-1), I(-2)}), op("aten::transpose", {T(spec.im), I(-1), I(-2)})};
  Value pairs = pair(spec);
  return returnComplex ? boxed(pairs) : T(pairs);
}

IValue ComplexLowering::istft(const Args &a) {
  // A real input is the older form: (real, imaginary) pairs in its last dim.
  IValue input = a["self"];
  if (!isComplexBox(input)) {
    RankedTensorType t = typeOf(input.tensor->value);
    if (!isFloat(dtypeOf(input.tensor->value)) || t.getRank() == 0 || t.getShape().back() != 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "istft requires a complex-valued input tensor");
    input = boxed(input.tensor->value);
  }
  Cx spec = parts(input);
  int64_t r = rank(spec.re);
  if (r != 2 && r != 3)
    in.fail("CUVIL-E-IMPORT-RAISE", "istft: expected a tensor with 2 or 3 dimensions of complex");
  bool batched = r == 3;
  int64_t nFft = a.i("n_fft");
  int64_t hop = a["hop_length"].isNone() ? nFft / 4 : a.i("hop_length");
  int64_t win = a["win_length"].isNone() ? nFft : a.i("win_length");
  bool center = a.b("center");
  int64_t freq = size(spec.re, r - 2), frames = size(spec.re, r - 1);
  bool onesided = a["onesided"].isNone() ? freq != nFft : a.b("onesided");
  if (onesided ? freq != nFft / 2 + 1 : freq != nFft)
    in.fail("CUVIL-E-IMPORT-RAISE", "istft: expected the frequency dimension (" + std::to_string(freq) +
                                        ") to equal " + std::to_string(onesided ? nFft / 2 + 1 : nFft));
  if (a.b("return_complex") && onesided)
    in.fail("CUVIL-E-IMPORT-RAISE", "istft: cannot have onesided output if window or input is complex");
  bool returnComplex = a.b("return_complex");
  if (isComplexBox(a["window"]))
    return in.unsupported("torch.istft with a complex window");
  // [.., F, freq] frames of n_fft samples: by_n, or by_root_n when
  // normalized, as PyTorch's inverse transforms. A real result reads only
  // the one-sided half of a two-sided input (its c2r).
  spec = {op("aten::transpose", {T(spec.re), I(-1), I(-2)}), op("aten::transpose", {T(spec.im), I(-1), I(-2)})};
  int64_t last = r - 1;
  double norm = a.b("normalized") ? 1.0 / std::sqrt(static_cast<double>(nFft)) : 1.0 / static_cast<double>(nFft);
  Cx frameValues{};
  if (returnComplex)
    frameValues = scale(dft(spec, last, true), norm);
  else
    frameValues.re = scale(c2r(spec, last, nFft), norm);
  Value y = frameValues.re;
  DType d = dtypeOf(y);
  Value w;
  if (!a["window"].isNone()) {
    w = floatOperand(in, a.t("window"));
  } else {
    w = op("aten::ones", {ints({win})}, {{"dtype", I(d == DType::Float64 ? 7 : 6)}});
  }
  if (size(w, 0) != win)
    in.fail("CUVIL-E-IMPORT-RAISE", "istft: expected a 1D window tensor of size equal to win_length=" +
                                        std::to_string(win));
  if (win < nFft) {
    int64_t left = (nFft - win) / 2;
    w = op("aten::constant_pad_nd", {T(w), ints({left, nFft - win - left}), F(0.0)});
  }
  // Overlap-add by col2im: [B, n_fft, F] -> [B, 1, 1, L].
  int64_t total = nFft + hop * (frames - 1);
  auto framesToCols = [&](Value f) {
    Value cols = op("aten::transpose", {T(op("aten::mul", {T(f), T(w)})), I(-1), I(-2)});
    return batched ? cols : op("aten::unsqueeze", {T(cols), I(0)});
  };
  Value cols = framesToCols(y);
  auto fold = [&](Value c) {
    Value out = op("aten::col2im", {T(c), ints({1, total}), ints({1, nFft}), ints({1, 1}), ints({0, 0}),
                                    ints({1, hop})});
    return op("aten::reshape", {T(out), ints({typeOf(c).getDimSize(0), total})});
  };
  Value signal = fold(cols);
  Value signalIm = returnComplex ? fold(framesToCols(frameValues.im)) : Value();
  Value w2 = op("aten::mul", {T(w), T(w)});
  Value w2cols = op("aten::expand", {T(op("aten::unsqueeze", {T(op("aten::unsqueeze", {T(w2), I(0)})), I(-1)})),
                                     ints({1, nFft, frames})});
  Value envelope = fold(w2cols);
  int64_t start = center ? nFft / 2 : 0;
  int64_t end = total;
  if (!a["length"].isNone())
    end = start + a.i("length");
  else if (center)
    end = total - nFft / 2;
  int64_t have = std::min(end, total) - start;
  envelope = op("aten::narrow", {T(envelope), I(1), I(start), I(std::max<int64_t>(have, 0))});
  std::optional<Tensor> env = in.foldToConstant(envelope);
  if (env)
    for (int64_t i = 0; i < env->numElements(); ++i)
      if (std::abs(env->getDouble(i)) < 1e-11)
        in.fail("CUVIL-E-IMPORT-RAISE", "istft: window overlap add min: " + std::to_string(env->getDouble(i)) +
                                            " (the window does not cover every output sample)");
  auto finish = [&](Value part) {
    part = op("aten::narrow", {T(part), I(1), I(start), I(std::max<int64_t>(have, 0))});
    part = op("aten::div", {T(part), T(envelope)});
    if (end > total)
      part = op("aten::constant_pad_nd", {T(part), ints({0, end - total}), F(0.0)});
    return batched ? part : op("aten::squeeze", {T(part), I(0)});
  };
  if (returnComplex)
    return box({finish(signal), finish(signalIm)});
  return T(finish(signal));
}

/// The ops linear in their one complex operand (everything else a
/// parameter): run on each part. `listData`: the items of a tensor list are
/// all data (cat, stack), real ones with a zero imaginary part.
const std::set<std::string> &linearOps() {
  static const std::set<std::string> ops = {
      "aten::reshape", "aten::view", "aten::flatten", "aten::unflatten", "aten::permute",
      "aten::transpose", "aten::t", "aten::movedim", "aten::moveaxis", "aten::squeeze",
      "aten::unsqueeze", "aten::contiguous", "aten::clone", "aten::detach", "aten::flip",
      "aten::fliplr", "aten::flipud", "aten::roll", "aten::narrow", "aten::slice", "aten::select",
      "aten::index_select", "aten::expand", "aten::expand_as", "aten::repeat", "aten::tile",
      "aten::unbind", "aten::split", "aten::chunk", "aten::split_with_sizes", "aten::tensor_split",
      "aten::diagonal", "aten::diag", "aten::diag_embed", "aten::tril", "aten::triu", "aten::gather",
      "aten::index", "aten::take", "aten::reshape_as", "aten::view_as", "aten::sum", "aten::mean",
      "aten::cumsum", "aten::trace", "aten::matmul", "aten::mm", "aten::bmm", "aten::mv",
      "aten::linear", "aten::rot90", "aten::swapaxes", "aten::swapdims", "aten::atleast_1d",
      "aten::atleast_2d", "aten::atleast_3d", "aten::ravel", "aten::numpy_T", "aten::mT",
      "aten::cat", "aten::stack", "aten::hstack", "aten::vstack", "aten::dstack",
      "aten::column_stack", "aten::row_stack", "aten::concat", "aten::concatenate",
      "aten::constant_pad_nd", "aten::pad", "aten::zeros_like", "aten::empty_like",
      "aten::new_zeros", "aten::new_empty", "aten::size", "aten::dim", "aten::numel", "aten::len",
      "aten::alias", "aten::lift_fresh", "aten::fft_fftshift", "aten::fft_ifftshift"};
  return ops;
}
const std::set<std::string> &viewOps() {
  static const std::set<std::string> ops = {
      "aten::reshape", "aten::view", "aten::flatten", "aten::unflatten", "aten::permute",
      "aten::transpose", "aten::t", "aten::movedim", "aten::moveaxis", "aten::squeeze",
      "aten::unsqueeze", "aten::narrow", "aten::slice", "aten::select", "aten::expand",
      "aten::expand_as", "aten::unbind", "aten::split", "aten::chunk", "aten::split_with_sizes",
      "aten::tensor_split", "aten::diagonal", "aten::swapaxes", "aten::swapdims", "aten::view_as",
      "aten::reshape_as", "aten::alias", "aten::mT", "aten::numpy_T"};
  return ops;
}
const std::set<std::string> &listDataOps() {
  static const std::set<std::string> ops = {"aten::cat", "aten::stack", "aten::hstack", "aten::vstack",
                                            "aten::dstack", "aten::column_stack", "aten::row_stack",
                                            "aten::concat", "aten::concatenate"};
  return ops;
}
/// Products: bilinear in two complex operands.
const std::set<std::string> &bilinearOps() {
  static const std::set<std::string> ops = {"aten::matmul", "aten::mm", "aten::bmm", "aten::mv",
                                            "aten::mul", "aten::multiply"};
  return ops;
}

IValue ComplexLowering::linearInParts(const std::string &name, const BoundArgs &b) {
  int complexArgs = 0;
  for (const IValue &v : b.values)
    complexArgs += isComplexBox(v) ? 1 : 0;
  bool listData = listDataOps().count(name) > 0;
  // The second operand of the *_as ops only lends its shape.
  static const std::set<std::string> shapeOfOther = {"aten::expand_as", "aten::view_as", "aten::reshape_as"};
  BoundArgs shaped = b;
  if (shapeOfOther.count(name) && b.values.size() > 1 && isComplexBox(b.values[1])) {
    shaped.values[1] = T(parts(b.values[1]).re);
    --complexArgs;
  }
  if (complexArgs > 1 && !listData)
    return in.unsupported(name + " with more than one complex operand");
  return splitParts(name, shaped, listData);
}

IValue ComplexLowering::splitParts(const std::string &name, const BoundArgs &b, bool listData) {
  const Schema &s = *b.schema;
  auto partArgs = [&](bool imag) {
    std::vector<std::pair<std::string, IValue>> kw;
    for (size_t k = 0; k < s.args.size() && k < b.values.size(); ++k) {
      const IValue &v = b.values[k];
      IValue x = v;
      if (isComplexBox(v)) {
        Cx c = parts(v);
        x = T(imag ? c.im : c.re);
      } else if (v.isSequence() && holdsComplex(v)) {
        IValueList items;
        for (const IValue &item : *v.list) {
          if (isComplexBox(item) || (listData && item.isTensor())) {
            Cx c = asCx(item);
            items.push_back(T(imag ? c.im : c.re));
          } else {
            items.push_back(item);
          }
        }
        x = v.is(K::Tuple) ? IValue::makeTuple(items) : IValue::makeList(items);
      }
      kw.emplace_back(s.args[k].name, x);
    }
    return kw;
  };
  IValue re = call(name, {}, partArgs(false));
  // Sizes and counts are the real part's.
  if (!re.isTensor() && !(re.isSequence() && !re.list->empty() && (*re.list)[0].isTensor()))
    return re;
  IValue im = call(name, {}, partArgs(true));
  const IValue *source = nullptr;
  for (const IValue &v : b.values)
    if (isComplexBox(v))
      source = &v;
  bool isView = viewOps().count(name) && source;
  auto combine = [&](const IValue &r, const IValue &i) {
    Value pairs = pair({r.tensor->value, i.tensor->value});
    return isView ? complexView(*source, pairs) : boxed(pairs);
  };
  if (re.isTensor())
    return combine(re, im);
  IValueList items;
  for (size_t k = 0; k < re.list->size(); ++k)
    items.push_back(combine((*re.list)[k], (*im.list)[k]));
  return re.is(K::Tuple) ? IValue::makeTuple(items) : IValue::makeList(items);
}

IValue ComplexLowering::dispatch(const std::string &name, const BoundArgs &b) {
  Args a{in, b};
  const Schema &s = *b.schema;
  auto first = [&]() -> const IValue & { return b.values.at(0); };
  if (isFourierTransform(name))
    return fourier(name, a);
  if (name == "aten::stft")
    return stft(a);
  if (name == "aten::istft")
    return istft(a);
  if (name == "aten::view_as_complex") {
    Value x = a.t("self");
    RankedTensorType t = typeOf(x);
    if (!isFloat(dtypeOf(x)) || dtypeOf(x) == DType::Float16 || dtypeOf(x) == DType::BFloat16)
      in.fail("CUVIL-E-IMPORT-RAISE", "view_as_complex is only supported for float and double tensors");
    if (t.getRank() == 0 || t.getShape().back() != 2)
      in.fail("CUVIL-E-IMPORT-RAISE", "Tensor must have a last dimension of size 2");
    return complexView(a["self"], x);
  }
  if (name == "aten::complex") {
    Value re = a.t("real"), im = a.t("imag");
    if (!isFloat(dtypeOf(re)) || dtypeOf(re) != dtypeOf(im))
      in.fail("CUVIL-E-IMPORT-RAISE", "complex: expected real and imag of one float dtype");
    return box({re, im});
  }
  if (name == "aten::polar") {
    Value r = a.t("abs"), th = a.t("angle");
    return box({op("aten::mul", {T(r), T(op("aten::cos", {T(th)}))}), op("aten::mul", {T(r), T(op("aten::sin", {T(th)}))})});
  }
  if (name == "aten::real" || name == "aten::imag") {
    if (!isComplexBox(first())) {
      if (name == "aten::imag") // PyTorch's own error
        in.fail("CUVIL-E-IMPORT-RAISE", "imag is not implemented for tensors with non-complex dtypes.");
      return first(); // real(x) of a real x is x
    }
    Value v = first().tensor->value;
    return viewOf(first(), op("aten::select", {T(v), I(-1), I(name == "aten::imag" ? 1 : 0)}));
  }
  if (name == "aten::view_as_real") {
    if (!isComplexBox(first()))
      in.fail("CUVIL-E-IMPORT-RAISE", "view_as_real is only supported for complex tensors");
    return viewOf(first(), first().tensor->value);
  }
  if (name == "aten::is_complex")
    return IValue::boolean(isComplexBox(first()));
  if (name == "prim::dtype" || name == "aten::dtype")
    return I(dtypeOf(first().tensor->value) == DType::Float64 ? 10 : 9);

  // In place: computed out of place, written into the tensor.
  bool inPlace = name.size() > 1 && name.back() == '_' && name.find("__") == std::string::npos;
  if (inPlace && name != "aten::copy_") {
    if (!isComplexBox(first()))
      return in.unsupported(name + " writing a complex value into a real tensor");
    std::string outOfPlace = name.substr(0, name.size() - 1);
    std::vector<std::pair<std::string, IValue>> kw;
    for (size_t k = 0; k < s.args.size() && k < b.values.size(); ++k)
      kw.emplace_back(s.args[k].name, b.values[k]);
    IValue r = call(outOfPlace, {}, kw);
    if (!isComplexBox(r))
      return in.unsupported(name + " on a complex tensor");
    return inplace(in, first(), r.tensor->value);
  }
  if (name == "aten::copy_") {
    if (!isComplexBox(first()))
      return in.unsupported("copying a complex tensor into a real one (the imaginary part would be lost)");
    Cx src = asCx(b.values.at(1));
    Value target = first().tensor->value;
    Value pairs = pair(src);
    pairs = op("aten::expand_as", {T(pairs), T(target)});
    return inplace(in, first(), cast(in, pairs, dtypeOf(target)));
  }

  // Element-wise arithmetic.
  auto operand = [&](const IValue &v) -> Cx {
    if (v.isTensor())
      return asCx(v);
    if (v.isScalar()) {
      Value re = in.scalarConstant(v, DType::Float32);
      return {re, in.scalarConstant(IValue::floating(0.0), DType::Float32)};
    }
    in.fail("CUVIL-E-IMPORT-TYPE", name + ": expected a tensor or a number, got " + v.typeName());
  };
  if (name == "aten::add" || name == "aten::sub" || name == "aten::rsub") {
    Cx x = operand(a["self"]), y = operand(a["other"]);
    if (b.has("alpha")) {
      const IValue &alpha = a["alpha"];
      if (!alpha.isScalar())
        return in.unsupported(name + " of complex tensors with a complex alpha");
      double al = alpha.is(K::Int) ? static_cast<double>(alpha.i) : alpha.is(K::Bool) ? alpha.b : alpha.f;
      y = scale(y, al);
    }
    if (name == "aten::rsub")
      std::swap(x, y);
    bool minus = name != "aten::add";
    return box({op(minus ? "aten::sub" : "aten::add", {T(x.re), T(y.re)}),
                op(minus ? "aten::sub" : "aten::add", {T(x.im), T(y.im)})});
  }
  if (name == "aten::mul" || name == "aten::multiply") {
    const IValue &x = a["self"], &y = a["other"];
    if (isComplexBox(x) && isComplexBox(y))
      return box(mul(parts(x), parts(y)));
    const IValue &c = isComplexBox(x) ? x : y, &r = isComplexBox(x) ? y : x;
    Cx p = parts(c);
    return box({op("aten::mul", {T(p.re), r}), op("aten::mul", {T(p.im), r})});
  }
  if (name == "aten::div" || name == "aten::true_divide" || name == "aten::divide") {
    if (b.has("rounding_mode") && !a["rounding_mode"].isNone())
      return in.unsupported(name + " of complex tensors with a rounding mode");
    const IValue &x = a["self"], &y = a["other"];
    if (!isComplexBox(y)) {
      Cx p = parts(x);
      return box({op("aten::div", {T(p.re), y}), op("aten::div", {T(p.im), y})});
    }
    return box(div(operand(x), parts(y)));
  }
  if (name == "aten::reciprocal") {
    Cx z = parts(first());
    return box(div({op("aten::ones_like", {T(z.re)}), op("aten::zeros_like", {T(z.re)})}, z));
  }
  if (name == "aten::square")
    return box(mul(parts(first()), parts(first())));
  if (name == "aten::neg" || name == "aten::negative") {
    Cx z = parts(first());
    return box({op("aten::neg", {T(z.re)}), op("aten::neg", {T(z.im)})});
  }
  if (name == "aten::positive" || name == "aten::resolve_conj" || name == "aten::resolve_neg")
    return first();
  if (name == "aten::conj" || name == "aten::conj_physical" || name == "aten::_conj" ||
      name == "aten::_conj_physical")
    return box(conj(parts(first())));
  if (name == "aten::abs" || name == "aten::absolute") {
    Cx z = parts(first());
    return T(op("aten::hypot", {T(z.re), T(z.im)}));
  }
  if (name == "aten::angle") {
    Cx z = parts(first());
    return T(op("aten::atan2", {T(z.im), T(z.re)}));
  }
  if (name == "aten::sgn") { // z / |z|, 0 at 0
    Cx z = parts(first());
    Value r = op("aten::hypot", {T(z.re), T(z.im)});
    Value zero = op("aten::eq", {T(r), F(0.0)});
    Value safe = op("aten::where", {T(zero), T(op("aten::ones_like", {T(r)})), T(r)});
    return box({op("aten::div", {T(z.re), T(safe)}), op("aten::div", {T(z.im), T(safe)})});
  }
  if (name == "aten::exp") {
    Cx z = parts(first());
    Value m = op("aten::exp", {T(z.re)});
    return box({op("aten::mul", {T(m), T(op("aten::cos", {T(z.im)}))}), op("aten::mul", {T(m), T(op("aten::sin", {T(z.im)}))})});
  }
  if (name == "aten::log") {
    Cx z = parts(first());
    return box({op("aten::log", {T(op("aten::hypot", {T(z.re), T(z.im)}))}), op("aten::atan2", {T(z.im), T(z.re)})});
  }
  // z^p for a real number p and sqrt: by the polar form |z|^p e^{i p arg z}
  // (the principal branch, as PyTorch's).
  if ((name == "aten::pow" && isComplexBox(first()) && b.values.size() > 1 && b.values[1].isScalar()) ||
      name == "aten::sqrt") {
    double p = 0.5;
    if (name == "aten::pow") {
      const IValue &e = b.values[1];
      p = e.is(K::Float) ? e.f : e.is(K::Bool) ? double(e.b) : double(e.i);
    }
    Cx z = parts(first());
    if (p == 1.0)
      return first();
    if (p == 2.0)
      return box(mul(z, z));
    Value r = op("aten::pow", {T(op("aten::hypot", {T(z.re), T(z.im)})), F(p)});
    Value th = op("aten::mul", {T(op("aten::atan2", {T(z.im), T(z.re)})), F(p)});
    return box({op("aten::mul", {T(r), T(op("aten::cos", {T(th)}))}), op("aten::mul", {T(r), T(op("aten::sin", {T(th)}))})});
  }
  if (name == "aten::isnan" || name == "aten::isinf" || name == "aten::isfinite") {
    Cx z = parts(first());
    Value r = op(name, {T(z.re)}), i = op(name, {T(z.im)});
    return T(op(name == "aten::isfinite" ? "aten::logical_and" : "aten::logical_or", {T(r), T(i)}));
  }
  if (name == "aten::eq" || name == "aten::ne") {
    Cx x = operand(a["self"]), y = operand(a["other"]);
    Value r = op("aten::eq", {T(x.re), T(y.re)}), i = op("aten::eq", {T(x.im), T(y.im)});
    Value same = op("aten::logical_and", {T(r), T(i)});
    return T(name == "aten::eq" ? same : op("aten::logical_not", {T(same)}));
  }
  if (name == "aten::to" || name == "aten::type_as") {
    // Device moves and complex targets keep the value; a real target drops
    // the imaginary part (PyTorch warns).
    std::optional<int64_t> code;
    for (size_t k = 0; k < s.args.size() && k < b.values.size(); ++k)
      if (s.args[k].name == "dtype" && b.values[k].is(K::Int))
        code = b.values[k].i;
    if (name == "aten::type_as")
      code = isComplexBox(b.values.at(1)) ? (dtypeOf(b.values.at(1).tensor->value) == DType::Float64 ? 10 : 9)
                                          : scalarTypeFromDType(dtypeOf(b.values.at(1).tensor->value));
    if (!code || *code == 9 || *code == 10) {
      if (!code)
        return first();
      Value v = first().tensor->value;
      return boxed(cast(in, v, *code == 10 ? DType::Float64 : DType::Float32));
    }
    std::optional<DType> d = dtypeFromScalarType(*code);
    if (!d)
      in.fail("CUVIL-E-IMPORT-DTYPE", "dtype code " + std::to_string(*code) + " is not supported");
    return T(cast(in, parts(first()).re, *d));
  }
  if (name == "aten::ones_like") {
    Cx z = parts(first());
    return box({op("aten::ones_like", {T(z.re)}), op("aten::zeros_like", {T(z.re)})});
  }
  if (name == "aten::where") {
    Cx x = operand(a["self"]), y = operand(a["other"]);
    Value c = a.t("condition");
    return box({op("aten::where", {T(c), T(x.re), T(y.re)}), op("aten::where", {T(c), T(x.im), T(y.im)})});
  }
  if (bilinearOps().count(name)) {
    int complexArgs = 0;
    for (const IValue &v : b.values)
      complexArgs += isComplexBox(v) ? 1 : 0;
    if (complexArgs == 2) {
      Cx x = parts(b.values[0]), y = parts(b.values[1]);
      auto p = [&](Value u, Value v) { return op(name, {T(u), T(v)}); };
      return box({op("aten::sub", {T(p(x.re, y.re)), T(p(x.im, y.im))}),
                  op("aten::add", {T(p(x.re, y.im)), T(p(x.im, y.re))})});
    }
  }
  if (name == "aten::constant_pad_nd" || name == "aten::pad")
    for (size_t k = 0; k < s.args.size() && k < b.values.size(); ++k)
      if (s.args[k].name == "value" && b.values[k].isScalar() &&
          (b.values[k].is(K::Float) ? b.values[k].f != 0.0 : b.values[k].i != 0 || b.values[k].b))
        return in.unsupported(name + " of a complex tensor with a non-zero fill value");
  if (linearOps().count(name))
    return linearInParts(name, b);
  return in.unsupported(name + " on a complex tensor");
}

/// torch's window functions (torch/functional windows, ATen's formulas):
/// constants of `length` points; periodic windows are the symmetric ones
/// of length + 1 without the last point.
IValue windowFunction(Interpreter &in, const std::string &name, const Args &a) {
  int64_t length = a.i("window_length");
  if (length < 0)
    in.fail("CUVIL-E-IMPORT-RAISE", name + " requires non-negative window_length, got window_length=" +
                                        std::to_string(length));
  bool periodic = a.a.has("periodic") ? a.b("periodic") : true;
  DType d = a.dtype("dtype").value_or(DType::Float32);
  if (!isFloat(d))
    in.fail("CUVIL-E-IMPORT-RAISE", name + " expects floating point dtypes");
  std::vector<double> w(static_cast<size_t>(length));
  if (length == 1) {
    w[0] = 1.0;
  } else if (length > 1) {
    int64_t n = periodic ? length + 1 : length;
    const double pi = 3.14159265358979323846;
    for (int64_t k = 0; k < length; ++k) {
      double x = static_cast<double>(k);
      double N = static_cast<double>(n - 1);
      if (name == "aten::hann_window") {
        w[k] = 0.5 - 0.5 * std::cos(2 * pi * x / N);
      } else if (name == "aten::hamming_window") {
        double alpha = a.a.has("alpha") ? a.f("alpha") : 0.54, beta = a.a.has("beta") ? a.f("beta") : 0.46;
        w[k] = alpha - beta * std::cos(2 * pi * x / N);
      } else if (name == "aten::blackman_window") {
        w[k] = 0.42 - 0.5 * std::cos(2 * pi * x / N) + 0.08 * std::cos(4 * pi * x / N);
      } else if (name == "aten::bartlett_window") {
        double t = 2.0 * x / N;
        w[k] = t <= 1.0 ? t : 2.0 - t;
      } else { // kaiser: I0(beta sqrt(1 - (2k/N - 1)^2)) / I0(beta)
        double beta = a.a.has("beta") ? a.f("beta") : 12.0;
        double r = 2.0 * x / N - 1.0;
        w[k] = std::cyl_bessel_i(0.0, beta * std::sqrt(std::max(0.0, 1.0 - r * r))) / std::cyl_bessel_i(0.0, beta);
      }
    }
  }
  return T(constantFrom(in, Tensor::fromDoubles(d, {length}, w)));
}

/// torch.fft.fftfreq / rfftfreq: the sample frequencies of an n-point
/// transform with spacing d.
IValue fftFrequencies(Interpreter &in, bool onesided, const Args &a) {
  int64_t n = a.i("n");
  double spacing = a.f("d");
  DType d = a.dtype("dtype").value_or(DType::Float32);
  if (n < 0)
    in.fail("CUVIL-E-IMPORT-RAISE", "fftfreq: n must be non-negative");
  int64_t count = onesided ? n / 2 + 1 : n;
  std::vector<double> f(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    int64_t j = onesided || k < (n + 1) / 2 ? k : k - n;
    f[k] = static_cast<double>(j) / (static_cast<double>(n) * spacing);
  }
  return T(constantFrom(in, Tensor::fromDoubles(d, {count}, f)));
}

} // namespace

void registerSignalHandlers(std::map<std::string, OpHandler> &table) {
  for (const char *name : {"aten::hann_window", "aten::hamming_window", "aten::blackman_window",
                           "aten::bartlett_window", "aten::kaiser_window"})
    table[name] = [n = std::string(name)](Interpreter &in, const BoundArgs &b) {
      return windowFunction(in, n, Args{in, b});
    };
  table["aten::fft_fftfreq"] = [](Interpreter &in, const BoundArgs &b) {
    return fftFrequencies(in, false, Args{in, b});
  };
  table["aten::fft_rfftfreq"] = [](Interpreter &in, const BoundArgs &b) {
    return fftFrequencies(in, true, Args{in, b});
  };
}

bool needsComplexLowering(const std::string &name, const BoundArgs &b) {
  static const std::set<std::string> makers = {"aten::stft", "aten::istft", "aten::view_as_complex",
                                               "aten::complex", "aten::polar", "aten::real",
                                               "aten::imag", "aten::view_as_real", "aten::is_complex"};
  if (makers.count(name))
    return true;
  if (isFourierTransform(name))
    return true;
  for (const IValue &v : b.values)
    if (holdsComplex(v))
      return true;
  return false;
}

IValue lowerComplexOperator(Interpreter &in, const std::string &name, const BoundArgs &b) {
  try {
    return ComplexLowering(in).dispatch(name, b);
  } catch (const Poisoned &) {
    return IValue::poison();
  }
}

} // namespace cuvil::torchscript
