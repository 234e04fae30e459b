//===- SmtEncoding.cpp - cuvil ops as Z3 terms ----------------------------===//
#include "verify/SmtEncoding.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/Reference/Evaluator.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace mlir;
using namespace mlir::cuvil;

namespace cuvil::verify {

const char *arithmeticName(Arithmetic a) {
  return a == Arithmetic::IEEE ? "IEEE floating point" : "real arithmetic";
}

int64_t SymTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

namespace {

using Index = std::vector<z3::expr>;
using ElementFn = std::function<z3::expr(ArrayRef<z3::expr>)>;

bool isFloat(Type t) { return llvm::isa<FloatType>(t); }
bool isBool(Type t) { return t.isInteger(1); }

std::string str(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// The linear offset of `idx` in `shape`.
z3::expr linearize(z3::context &c, ArrayRef<z3::expr> idx, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  z3::expr lin = c.int_val(0);
  for (size_t k = 0; k < idx.size(); ++k)
    if (shape[k] != 1)
      lin = lin + idx[k] * c.int_val(strides[k]);
  return lin.simplify();
}

/// The index of linear offset `lin` in `shape`.
Index delinearize(z3::context &c, const z3::expr &lin, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides = stridesOf(shape);
  Index idx;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) {
      idx.push_back(c.int_val(0));
      continue;
    }
    z3::expr q = strides[k] == 1 ? lin : z3::expr(c, Z3_mk_div(c, lin, c.int_val(strides[k])));
    idx.push_back(k == 0 ? q : z3::expr(c, Z3_mk_mod(c, q, c.int_val(shape[k]))));
  }
  return idx;
}

/// Every index of `shape` (row-major), as constants.
std::vector<Index> allIndices(z3::context &c, ArrayRef<int64_t> shape) {
  std::vector<Index> out{Index{}};
  for (int64_t d : shape) {
    std::vector<Index> next;
    for (const Index &prefix : out)
      for (int64_t i = 0; i < d; ++i) {
        Index x = prefix;
        x.push_back(c.int_val(i));
        next.push_back(std::move(x));
      }
    out = std::move(next);
  }
  return out;
}

/// Element reads of a tensor held by the function `f` of its index. A
/// dimension of size 1 is read at 0 whatever the term says, so two reads of
/// one element are one term.
ElementFn readFunction(const z3::func_decl &f, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims(shape);
  return [f, dims](ArrayRef<z3::expr> idx) {
    z3::expr_vector args(f.ctx());
    for (size_t d = 0; d < idx.size(); ++d)
      args.push_back(dims[d] == 1 ? f.ctx().int_val(0) : idx[d]);
    return f(args);
  };
}

/// An exact rational numeral for a finite double.
z3::expr realOf(z3::context &c, double v) {
  if (v == 0)
    return c.real_val(0);
  int exp = 0;
  double m = std::frexp(std::fabs(v), &exp);
  auto mant = static_cast<uint64_t>(std::ldexp(m, 53));
  int e = exp - 53;
  unsigned bits = 64 + static_cast<unsigned>(std::abs(e)) + 2;
  llvm::APInt num(bits, mant), den(bits, 1);
  if (e >= 0)
    num <<= e;
  else
    den <<= -e;
  std::string text = (v < 0 ? "-" : "") + llvm::toString(num, 10, false) + "/" +
                     llvm::toString(den, 10, false);
  return c.real_val(text.c_str());
}

} // namespace

/// Scalar semantics of one element, in the encoder's arithmetic.
struct ScalarOps {
  Encoder &e;
  z3::context &c;
  explicit ScalarOps(Encoder &enc) : e(enc), c(enc.ctx_) {}

  bool real() const { return e.arithmetic_ == Arithmetic::Real; }

  z3::func_decl function(const std::string &name, const std::vector<z3::sort> &domain,
                         const z3::sort &range) {
    std::string key = name + "|" + range.to_string();
    for (const z3::sort &s : domain)
      key += "|" + s.to_string();
    auto it = e.functions_.find(key);
    if (it != e.functions_.end())
      return it->second;
    z3::sort_vector dom(c);
    for (const z3::sort &s : domain)
      dom.push_back(s);
    z3::func_decl f = c.function(name.c_str(), dom, range);
    e.functions_.emplace(key, f);
    return f;
  }

  /// An uninterpreted unary function `name` of x's sort.
  z3::expr apply(const std::string &name, const z3::expr &x) {
    return function(name, {x.get_sort()}, x.get_sort())(x);
  }

  z3::expr numeral(double v, const z3::sort &s) {
    if (s.is_fpa()) {
      if (std::isnan(v))
        return z3::expr(c, Z3_mk_fpa_nan(c, s));
      if (std::isinf(v))
        return z3::expr(c, Z3_mk_fpa_inf(c, s, v < 0));
      if (v == 0)
        return z3::expr(c, Z3_mk_fpa_zero(c, s, std::signbit(v)));
      return z3::expr(c, Z3_mk_fpa_numeral_double(c, v, s));
    }
    if (s.is_real())
      return realOf(c, v);
    if (s.is_bool())
      return c.bool_val(v != 0);
    return c.bv_val(static_cast<int64_t>(v), s.bv_size());
  }
  z3::expr zero(const z3::sort &s) { return numeral(0, s); }
  z3::expr one(const z3::sort &s) { return numeral(1, s); }

  z3::expr isNan(const z3::expr &x) {
    return x.is_fpa() ? z3::expr(c, Z3_mk_fpa_is_nan(c, x)) : c.bool_val(false);
  }
  /// x != 0, as PyTorch tests truth (NaN is true).
  z3::expr truth(const z3::expr &x) {
    if (x.is_bool())
      return x;
    if (x.is_fpa())
      return !z3::expr(c, Z3_mk_fpa_is_zero(c, x));
    return x != zero(x.get_sort());
  }
  z3::expr lt(const z3::expr &a, const z3::expr &b) {
    if (a.is_bool())
      return !a && b;
    return a < b; // fp.lt, <, bvslt
  }
  z3::expr eq(const z3::expr &a, const z3::expr &b) {
    if (a.is_fpa())
      return z3::expr(c, Z3_mk_fpa_eq(c, a, b));
    return a == b;
  }
  /// std::max(a, b) = a < b ? b : a.
  z3::expr stdMax(const z3::expr &a, const z3::expr &b) { return z3::ite(lt(a, b), b, a); }
  /// std::min(a, b) = b < a ? b : a.
  z3::expr stdMin(const z3::expr &a, const z3::expr &b) { return z3::ite(lt(b, a), b, a); }
  /// NaN-propagating maximum/minimum (torch.maximum, reductions).
  z3::expr nanMax(const z3::expr &a, const z3::expr &b) {
    if (!a.is_fpa())
      return stdMax(a, b);
    return z3::ite(isNan(a) || isNan(b), numeral(NAN, a.get_sort()), stdMax(a, b));
  }
  z3::expr nanMin(const z3::expr &a, const z3::expr &b) {
    if (!a.is_fpa())
      return stdMin(a, b);
    return z3::ite(isNan(a) || isNan(b), numeral(NAN, a.get_sort()), stdMin(a, b));
  }
  z3::expr add(const z3::expr &a, const z3::expr &b) { return a.is_bool() ? (a || b) : a + b; }
  /// a / b. In real arithmetic a * (1 / b): Z3 leaves x / 0 a free function
  /// of x, so without one reciprocal term d / s and d * (1 / s) would differ
  /// where s = 0; an algebraic identity makes no claim there.
  z3::expr div(const z3::expr &a, const z3::expr &b) {
    if (a.is_real())
      return a * (one(b.get_sort()) / b);
    return a / b;
  }
  z3::expr mul(const z3::expr &a, const z3::expr &b) { return a.is_bool() ? (a && b) : a * b; }

  /// v[0] f v[1] f ... from the left (the evaluator's order).
  z3::expr fold(const std::vector<z3::expr> &v,
                z3::expr (ScalarOps::*f)(const z3::expr &, const z3::expr &)) {
    z3::expr r = v[0];
    for (size_t i = 1; i < v.size(); ++i)
      r = (this->*f)(r, v[i]);
    return r;
  }
  /// y * w[at] + b[at], either optional (a norm's affine part).
  z3::expr affine(z3::expr y, const SymTensor *w, const SymTensor *b, ArrayRef<z3::expr> at) {
    if (w)
      y = y * w->at(at);
    if (b)
      y = y + b->at(at);
    return y;
  }
  z3::expr mean(const std::vector<z3::expr> &v, const z3::sort &s) {
    return div(fold(v, &ScalarOps::add), numeral(static_cast<double>(v.size()), s));
  }
  /// sum((x - mean)^2) / (n - correction).
  z3::expr variance(const std::vector<z3::expr> &v, const z3::expr &mean, int64_t correction,
                    const z3::sort &s) {
    std::vector<z3::expr> sq;
    for (const z3::expr &x : v)
      sq.push_back((x - mean) * (x - mean));
    return div(fold(sq, &ScalarOps::add),
               numeral(static_cast<double>(static_cast<int64_t>(v.size()) - correction), s));
  }

  z3::expr exp(const z3::expr &x) {
    if (!real())
      return apply("exp", x);
    // exp(a - b) = exp(a) / exp(b), the identity the shift of a stable
    // softmax rests on, applied as the term is built; exp is positive.
    if (x.is_app() && x.decl().decl_kind() == Z3_OP_SUB && x.num_args() == 2)
      return div(exp(x.arg(0)), exp(x.arg(1)));
    z3::expr r = apply("exp", x);
    e.axioms_.push_back(r > 0);
    return r;
  }
  z3::expr sqrt(const z3::expr &x) {
    if (x.is_fpa())
      return z3::expr(c, Z3_mk_fpa_sqrt(c, c.fpa_rounding_mode(), x));
    z3::expr r = apply("sqrt", x);
    e.axioms_.push_back(r >= 0);
    return r;
  }

  /// Converts an element between element types as a tensor cast does.
  z3::expr convert(const z3::expr &x, Type from, Type to) {
    if (from == to)
      return x;
    std::optional<z3::sort> ts = e.sortOf(to);
    z3::sort s = *ts;
    if (isBool(to))
      return truth(x);
    if (isBool(from))
      return z3::ite(x, one(s), zero(s));
    if (isFloat(to)) {
      if (isFloat(from)) {
        if (x.is_fpa())
          return z3::expr(c, Z3_mk_fpa_to_fp_float(c, c.fpa_rounding_mode(), x, s));
        return x; // reals
      }
      if (s.is_fpa())
        return z3::expr(c, Z3_mk_fpa_to_fp_signed(c, c.fpa_rounding_mode(), x, s));
      return z3::expr(c, Z3_mk_int2real(c, z3::expr(c, Z3_mk_bv2int(c, x, true))));
    }
    // to an integer
    unsigned w = s.bv_size();
    if (isFloat(from)) {
      if (x.is_fpa()) // truncation toward zero (out of range: unspecified)
        return z3::expr(c, Z3_mk_fpa_to_sbv(c, z3::expr(c, Z3_mk_fpa_rtz(c)), x, w));
      return function("real_to_i" + std::to_string(w), {x.get_sort()}, s)(x);
    }
    unsigned fw = x.get_sort().bv_size();
    if (fw == w)
      return x;
    return fw > w ? x.extract(w - 1, 0) : z3::sext(x, w - fw);
  }
};

Encoder::Encoder(z3::context &ctx, Arithmetic arithmetic)
    : ctx_(ctx), arithmetic_(arithmetic), expandable_([](Operation *) { return true; }) {}

std::optional<z3::sort> Encoder::sortOf(Type t) {
  if (auto f = llvm::dyn_cast<FloatType>(t)) {
    if (arithmetic_ == Arithmetic::Real)
      return ctx_.real_sort();
    if (f.isF16())
      return ctx_.fpa_sort(5, 11);
    if (f.isBF16())
      return ctx_.fpa_sort(8, 8);
    if (f.isF32())
      return ctx_.fpa_sort(8, 24);
    if (f.isF64())
      return ctx_.fpa_sort(11, 53);
    return std::nullopt;
  }
  if (t.isInteger(1))
    return ctx_.bool_sort();
  if (auto i = llvm::dyn_cast<IntegerType>(t))
    return ctx_.bv_sort(i.getWidth());
  if (t.isIndex())
    return ctx_.bv_sort(64);
  return std::nullopt;
}

z3::expr Encoder::same(const z3::expr &a, const z3::expr &b) { return a == b; }

const SymTensor *Encoder::makeTensor(Type type, const std::string &key,
                                     std::function<z3::expr(ArrayRef<z3::expr>)> at) {
  SymTensor *s = make(type, key);
  s->at = std::move(at);
  return s;
}

z3::expr Encoder::divide(const z3::expr &x, const z3::expr &y) { return ScalarOps(*this).div(x, y); }
z3::expr Encoder::squareRoot(const z3::expr &x) { return ScalarOps(*this).sqrt(x); }
z3::expr Encoder::numeral(double value, const z3::sort &sort) {
  return ScalarOps(*this).numeral(value, sort);
}

const SymTensor *Encoder::fail(const llvm::Twine &why) {
  if (reason_.empty())
    reason_ = why.str();
  return nullptr;
}

unsigned Encoder::intern(const std::string &key) {
  auto [it, inserted] = keys_.try_emplace(key, nextId_);
  if (inserted)
    ++nextId_;
  return it->second;
}

SymTensor *Encoder::make(Type type, const std::string &key) {
  auto t = llvm::cast<RankedTensorType>(type);
  tensors_.emplace_back();
  SymTensor &s = tensors_.back();
  s.shape.assign(t.getShape().begin(), t.getShape().end());
  s.elementType = t.getElementType();
  s.id = intern(key);
  return &s;
}

const SymTensor *Encoder::freeTensor(Value v, const std::string &name) {
  auto type = llvm::dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return fail("'" + name + "' has a dynamic shape");
  std::optional<z3::sort> sort = sortOf(type.getElementType());
  if (!sort)
    return fail("'" + name + "' has element type " + str(type.getElementType()) +
                ", which has no solver sort");
  // Distinct values must never share a function.
  std::string unique = name;
  for (const FreeTensor &f : free_)
    if (f.name == unique)
      unique = name + "#" + std::to_string(free_.size());
  SymTensor *s = make(type, "free " + unique);
  std::vector<z3::sort> domain(type.getRank(), ctx_.int_sort());
  z3::func_decl f = ScalarOps(*this).function(unique, domain, *sort);
  s->at = readFunction(f, s->shape);
  free_.push_back({unique, s, v});
  return s;
}

const SymTensor *Encoder::encode(Value v) {
  auto it = memo_.find(v);
  if (it != memo_.end())
    return it->second;
  const SymTensor *s = nullptr;
  if (auto r = llvm::dyn_cast<OpResult>(v); r && (expandable_(r.getOwner()) ||
                                                  llvm::isa<ConstantOp>(r.getOwner()))) {
    s = encodeOp(r.getOwner(), r.getResultNumber());
  } else {
    std::string name;
    if (auto a = llvm::dyn_cast<BlockArgument>(v))
      name = "%arg" + std::to_string(a.getArgNumber());
    else
      name = "%" + llvm::cast<OpResult>(v).getOwner()->getName().getStringRef().str();
    s = freeTensor(v, name);
  }
  if (s)
    memo_[v] = s;
  return s;
}

/// The op, its attributes (constants: their uniqued attribute), its result
/// and its operands' ids.
static std::string structuralKey(Operation *op, unsigned resultIndex,
                                 ArrayRef<const SymTensor *> operands) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op->getName() << "#" << resultIndex << " -> " << op->getResult(resultIndex).getType();
  if (auto c = llvm::dyn_cast<ConstantOp>(op))
    os << " @" << c.getValue().getAsOpaquePointer();
  else
    os << " " << op->getAttrDictionary();
  os << " (";
  for (const SymTensor *o : operands)
    os << o->id << ",";
  os << ")";
  return os.str();
}

const SymTensor *Encoder::uninterpreted(Operation *op, unsigned resultIndex,
                                        ArrayRef<const SymTensor *> operands) {
  Type type = op->getResult(resultIndex).getType();
  auto rt = llvm::dyn_cast<RankedTensorType>(type);
  if (!rt || !rt.hasStaticShape())
    return fail("'" + op->getName().getStringRef() + "' has a dynamic result shape");
  std::optional<z3::sort> sort = sortOf(rt.getElementType());
  if (!sort)
    return fail("'" + op->getName().getStringRef() + "' produces " + str(rt.getElementType()) +
                ", which has no solver sort");
  // Same op, attributes, type and operand encodings: the same function.
  std::string key = structuralKey(op, resultIndex, operands);
  SymTensor *s = make(type, key);
  std::vector<z3::sort> domain(rt.getRank(), ctx_.int_sort());
  auto it = functions_.find(key);
  if (it == functions_.end()) {
    z3::sort_vector dom(ctx_);
    for (const z3::sort &d : domain)
      dom.push_back(d);
    std::string name = op->getName().getStringRef().str() + "_" + std::to_string(functions_.size());
    it = functions_.emplace(key, ctx_.function(name.c_str(), dom, *sort)).first;
  }
  z3::func_decl f = it->second;
  s->at = readFunction(f, s->shape);
  return s;
}

const SymTensor *Encoder::encodeLoop(Operation *op, unsigned resultIndex) {
  auto loop = llvm::cast<scf::WhileOp>(op);
  // A rewrite that rebuilds a loop moves its regions into the new one
  // before replacing it: the old loop is then an empty shell.
  if (loop.getBefore().empty() || loop.getAfter().empty())
    return fail("control flow: the loop's body has moved into its replacement");
  Block *before = loop.getBeforeBody(), *after = loop.getAfterBody();
  scf::ConditionOp condition = loop.getConditionOp();
  SmallVector<const SymTensor *> carried;
  for (Value init : loop.getInits()) {
    const SymTensor *t = encode(init);
    if (!t)
      return nullptr;
    carried.push_back(t);
  }
  auto saved = expandable_;
  expandable_ = [saved, op](Operation *inner) { return op->isProperAncestor(inner) || saved(inner); };
  auto restore = llvm::make_scope_exit([&] { expandable_ = saved; });
  // The encodings of the trip before, inside the loop, are forgotten.
  auto forget = [&] {
    SmallVector<Value> inside;
    for (auto &[v, t] : memo_) {
      Operation *parent = v.getParentRegion()->getParentOp();
      if (parent == op || op->isProperAncestor(parent))
        inside.push_back(v);
    }
    for (Value v : inside)
      memo_.erase(v);
  };
  auto encodeAll = [&](ValueRange values, SmallVector<const SymTensor *> &out) {
    out.clear();
    for (Value v : values) {
      const SymTensor *t = encode(v);
      if (!t)
        return false;
      out.push_back(t);
    }
    return true;
  };
  for (int64_t trip = 0; trip <= kMaxTrips; ++trip) {
    forget();
    for (auto [arg, t] : llvm::zip(before->getArguments(), carried))
      memo_[arg] = t;
    auto extract = condition.getCondition().getDefiningOp<tensor::ExtractOp>();
    if (!extract || !extract.getIndices().empty())
      return fail("control flow: a loop whose condition is not read from a 0-d tensor");
    const SymTensor *c = encode(extract.getTensor());
    if (!c)
      return nullptr;
    z3::expr go = c->at({}).simplify();
    if (!go.is_true() && !go.is_false())
      return fail("control flow: a loop whose trip count the constants do not decide");
    SmallVector<const SymTensor *> forwarded;
    if (!encodeAll(condition.getArgs(), forwarded))
      return nullptr;
    if (go.is_false())
      return resultIndex < forwarded.size() ? forwarded[resultIndex] : fail("control flow: a malformed loop");
    for (auto [arg, t] : llvm::zip(after->getArguments(), forwarded))
      memo_[arg] = t;
    if (!encodeAll(loop.getYieldOp().getOperands(), carried))
      return nullptr;
  }
  return fail("control flow: a loop of more than " + llvm::Twine(kMaxTrips) + " trips");
}

const SymTensor *Encoder::encodeOp(Operation *op, unsigned resultIndex) {
  z3::context &c = ctx_;
  ScalarOps sc(*this);
  Value result = op->getResult(resultIndex);
  auto rt = llvm::dyn_cast<RankedTensorType>(result.getType());
  if (!rt)
    return fail("'" + op->getName().getStringRef() + "' does not produce a tensor");
  if (!rt.hasStaticShape())
    return fail("'" + op->getName().getStringRef() + "' has a dynamic result shape");
  std::optional<z3::sort> rsortOpt = sortOf(rt.getElementType());
  if (!rsortOpt)
    return fail("'" + op->getName().getStringRef() + "' produces " + str(rt.getElementType()) +
                ", which has no solver sort");
  z3::sort rsort = *rsortOpt;
  Type rtype = rt.getElementType();
  SmallVector<int64_t> outShape(rt.getShape());

  // Constants: splats and small tensors element by element (through the
  // reference evaluator's reader, so resources too); others by identity.
  if (auto cst = llvm::dyn_cast<ConstantOp>(op)) {
    SymTensor *s = make(rt, structuralKey(op, resultIndex, {}));
    auto dense = llvm::dyn_cast<DenseElementsAttr>(cst.getValue());
    bool splat = dense && dense.isSplat();
    if (!splat && rt.getNumElements() > kMaxConstant)
      return uninterpreted(op, resultIndex, {});
    auto elements = llvm::dyn_cast<ElementsAttr>(cst.getValue());
    if (!elements)
      return uninterpreted(op, resultIndex, {});
    ScopedDiagnosticHandler silence(op->getContext(), [](Diagnostic &) { return success(); });
    FailureOr<::cuvil::Tensor> t = reference::tensorFromAttr(elements, op->getLoc());
    if (failed(t))
      return uninterpreted(op, resultIndex, {});
    std::vector<z3::expr> values;
    for (int64_t i = 0, n = splat ? 1 : t->numElements(); i < n; ++i) {
      if (isFloat(rtype)) {
        double d = t->getDouble(i);
        if (arithmetic_ == Arithmetic::Real && !std::isfinite(d))
          return fail("a non-finite constant has no value in real arithmetic");
        values.push_back(sc.numeral(d, rsort));
      } else if (rsort.is_bool()) {
        values.push_back(c.bool_val(t->getInt(i) != 0));
      } else {
        values.push_back(c.bv_val(t->getInt(i), rsort.bv_size()));
      }
    }
    if (values.size() == 1) {
      z3::expr value = values[0];
      s->at = [value](ArrayRef<z3::expr>) { return value; };
      return s;
    }
    s->at = [values, outShape, &c](ArrayRef<z3::expr> idx) {
      z3::expr lin = linearize(c, idx, outShape);
      z3::expr r = values.back();
      for (int64_t k = static_cast<int64_t>(values.size()) - 2; k >= 0; --k)
        r = z3::ite(lin == c.int_val(k), values[k], r);
      return r;
    };
    return s;
  }

  // Fused groups: their body, with the block arguments bound to the operands.
  if (auto group = llvm::dyn_cast<FusedGroupOp>(op)) {
    Block &body = group.getBody().front();
    for (auto [arg, in] : llvm::zip(body.getArguments(), group->getOperands())) {
      const SymTensor *t = encode(in);
      if (!t)
        return nullptr;
      memo_[arg] = t;
    }
    auto saved = expandable_;
    expandable_ = [saved, &body](Operation *inner) {
      return inner->getBlock() == &body || saved(inner);
    };
    const SymTensor *r = encode(body.getTerminator()->getOperand(0));
    expandable_ = saved;
    return r;
  }

  // Loops: unrolled when the constants decide their trip count (a counter
  // against a size); otherwise their results are free, as an input's are.
  if (llvm::isa<scf::WhileOp>(op)) {
    std::string previous = reason_;
    if (const SymTensor *r = encodeLoop(op, resultIndex))
      return r;
    freeLoops_[op] = reason_;
    reason_ = previous;
    return freeTensor(result, "%scf.while");
  }

  // Sizes: a static dimension is a number; iota counts; a run-time expand
  // to a static shape broadcasts (a size that disagrees fails the run).
  if (auto dim = llvm::dyn_cast<DimOp>(op)) {
    auto in = llvm::cast<RankedTensorType>(dim.getInput().getType());
    int64_t d = dim.getDim() < 0 ? dim.getDim() + in.getRank() : dim.getDim();
    if (d < 0 || d >= in.getRank() || in.isDynamicDim(d) || !rsort.is_bv())
      return uninterpreted(op, resultIndex, {});
    SymTensor *s = make(rt, structuralKey(op, resultIndex, {}) + " static " +
                                std::to_string(in.getDimSize(d)));
    z3::expr value = c.bv_val(in.getDimSize(d), rsort.bv_size());
    s->at = [value](ArrayRef<z3::expr>) { return value; };
    return s;
  }
  if (llvm::isa<IotaOp>(op)) {
    SymTensor *s = make(rt, "iota " + str(rt));
    std::shared_ptr<ScalarOps> ops = std::make_shared<ScalarOps>(*this);
    Type i64 = IntegerType::get(op->getContext(), 64);
    s->at = [ops, rtype, i64, &c](ArrayRef<z3::expr> idx) {
      return ops->convert(z3::expr(c, Z3_mk_int2bv(c, 64, idx[0])), i64, rtype);
    };
    return s;
  }
  if (auto ex = llvm::dyn_cast<ExpandDynamicOp>(op)) {
    const SymTensor *x = encode(ex.getInput());
    if (!x)
      return nullptr;
    SymTensor *s = make(rt, structuralKey(op, resultIndex, {x}));
    SmallVector<int64_t> from = x->shape;
    size_t rank = outShape.size();
    Type from_t = x->elementType;
    std::shared_ptr<ScalarOps> ops = std::make_shared<ScalarOps>(*this);
    s->at = [x, from, rank, from_t, rtype, ops, &c](ArrayRef<z3::expr> idx) {
      Index j;
      for (size_t d = 0; d < from.size(); ++d)
        j.push_back(from[d] == 1 ? c.int_val(0) : idx[rank - from.size() + d]);
      return ops->convert(x->at(j), from_t, rtype);
    };
    return s;
  }

  // Operands (all of them tensors from here on).
  SmallVector<const SymTensor *> in;
  for (Value o : op->getOperands()) {
    if (!llvm::isa<RankedTensorType>(o.getType()))
      return fail("'" + op->getName().getStringRef() + "' has a non-tensor operand");
    const SymTensor *t = encode(o);
    if (!t)
      return nullptr;
    in.push_back(t);
  }
  if (op->getNumRegions() > 0)
    return freeTensor(result, "%" + op->getName().getStringRef().str());

  SymTensor *s = make(rt, structuralKey(op, resultIndex, in));
  std::shared_ptr<ScalarOps> ops = std::make_shared<ScalarOps>(*this);
  bool real = arithmetic_ == Arithmetic::Real;
  /// Operand `k` read at an output index, broadcast and converted to `to`.
  auto operandAt = [&](unsigned k, Type to) {
    const SymTensor *t = in[k];
    size_t rank = outShape.size(), r = t->shape.size();
    SmallVector<int64_t> tshape = t->shape;
    Type from = t->elementType;
    return ElementFn([t, tshape, rank, r, from, to, ops, &c](ArrayRef<z3::expr> idx) {
      Index j;
      for (size_t d = 0; d < r; ++d)
        j.push_back(tshape[d] == 1 ? c.int_val(0) : idx[rank - r + d]);
      return ops->convert(t->at(j), from, to);
    });
  };
  auto unaryMap = [&](std::function<z3::expr(const z3::expr &)> f) -> const SymTensor * {
    ElementFn x = operandAt(0, rtype);
    s->at = [x, f](ArrayRef<z3::expr> idx) { return f(x(idx)); };
    return s;
  };
  auto binaryMap = [&](Type compute,
                       std::function<z3::expr(const z3::expr &, const z3::expr &)> f)
      -> const SymTensor * {
    ElementFn a = operandAt(0, compute), b = operandAt(1, compute);
    s->at = [a, b, f](ArrayRef<z3::expr> idx) { return f(a(idx), b(idx)); };
    return s;
  };
  /// The type two operands are compared or combined in.
  auto commonType = [&]() -> Type {
    Type a = in[0]->elementType, b = in.size() > 1 ? in[1]->elementType : a;
    if (isFloat(a) != isFloat(b))
      return isFloat(a) ? a : b;
    return a.getIntOrFloatBitWidth() >= b.getIntOrFloatBitWidth() ? a : b;
  };
  auto opaque = [&]() { return uninterpreted(op, resultIndex, in); };

  // Views: the output index names an input element.
  auto remap = [&](std::function<Index(ArrayRef<z3::expr>)> f) -> const SymTensor * {
    const SymTensor *x = in[0];
    s->at = [x, f](ArrayRef<z3::expr> idx) { return x->at(f(idx)); };
    return s;
  };
  auto reshapeLike = [&]() -> const SymTensor * {
    SmallVector<int64_t> from = in[0]->shape;
    if (from == outShape)
      return remap([](ArrayRef<z3::expr> idx) { return Index(idx.begin(), idx.end()); });
    return remap([from, outShape, &c](ArrayRef<z3::expr> idx) {
      return delinearize(c, linearize(c, idx, outShape), from);
    });
  };

  /// Reduction over `dims` (keepdim or not): `fold` combines the input
  /// elements of one output element, in row-major order.
  auto reduce = [&](ArrayRef<int64_t> dims, bool keepdim,
                    std::function<z3::expr(std::vector<z3::expr> &)> fold)
      -> const SymTensor * {
    const SymTensor *x = in[0];
    SmallVector<int64_t> inShape = x->shape;
    llvm::SmallDenseSet<int64_t> reduced;
    SmallVector<int64_t> reducedShape;
    for (int64_t d : dims) {
      int64_t n = d < 0 ? d + static_cast<int64_t>(inShape.size()) : d;
      reduced.insert(n);
    }
    if (dims.empty()) // an empty list reduces nothing
      return remap([](ArrayRef<z3::expr> idx) { return Index(idx.begin(), idx.end()); });
    for (int64_t d = 0; d < static_cast<int64_t>(inShape.size()); ++d)
      if (reduced.contains(d))
        reducedShape.push_back(inShape[d]);
    int64_t count = 1;
    for (int64_t d : reducedShape)
      count *= d;
    if (count > kMaxReduction)
      return fail("'" + op->getName().getStringRef() + "' reduces " + llvm::Twine(count) +
                  " elements, more than the " + llvm::Twine(kMaxReduction) +
                  " the encoding unrolls");
    std::vector<Index> inner = allIndices(c, reducedShape);
    s->at = [x, inShape, reduced, keepdim, inner, fold](ArrayRef<z3::expr> idx) {
      std::vector<z3::expr> elems;
      for (const Index &r : inner) {
        Index j;
        size_t o = 0, k = 0;
        for (int64_t d = 0; d < static_cast<int64_t>(inShape.size()); ++d) {
          if (reduced.contains(d)) {
            j.push_back(r[k++]);
            if (keepdim)
              ++o;
          } else {
            j.push_back(idx[o++]);
          }
        }
        elems.push_back(x->at(j));
      }
      return fold(elems);
    };
    return s;
  };

  return llvm::TypeSwitch<Operation *, const SymTensor *>(op)
      // Element-wise arithmetic.
      .Case([&](AddOp) { return binaryMap(rtype, [ops](auto a, auto b) { return ops->add(a, b); }); })
      .Case([&](SubOp) { return binaryMap(rtype, [](auto a, auto b) { return a - b; }); })
      .Case([&](MulOp) { return binaryMap(rtype, [ops](auto a, auto b) { return ops->mul(a, b); }); })
      .Case([&](DivOp d) -> const SymTensor * {
        if (d.getRoundingMode() != RoundingMode::None || !isFloat(rtype))
          return opaque();
        return binaryMap(rtype, [ops](auto a, auto b) { return ops->div(a, b); });
      })
      .Case([&](MaximumOp) { return binaryMap(rtype, [ops](auto a, auto b) { return ops->nanMax(a, b); }); })
      .Case([&](MinimumOp) { return binaryMap(rtype, [ops](auto a, auto b) { return ops->nanMin(a, b); }); })
      .Case([&](PowOp p) -> const SymTensor * {
        // x ^ 2 is x * x: in real arithmetic (layer norm written with pow),
        // and rounded, as the evaluator's pow (the exact square in double,
        // rounded once to the element type) and PyTorch's kernel for a
        // scalar exponent 2 (x * x) compute it. Other exponents: opaque.
        auto cst = p.getRhs().getDefiningOp<ConstantOp>();
        auto dense = cst ? llvm::dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
        if (!real && dense && dense.isSplat() && isFloat(rtype) &&
            p.getLhs().getType() == p.getType()) {
          Attribute a = dense.getSplatValue<Attribute>();
          if ((llvm::isa<FloatAttr>(a) && llvm::cast<FloatAttr>(a).getValueAsDouble() == 2) ||
              (llvm::isa<IntegerAttr>(a) && llvm::cast<IntegerAttr>(a).getValue() == 2))
            return unaryMap([ops](const z3::expr &x) { return ops->mul(x, x); });
        }
        if (real && dense && dense.isSplat() && isFloat(rtype)) {
          Attribute a = dense.getSplatValue<Attribute>();
          double v = llvm::isa<FloatAttr>(a) ? llvm::cast<FloatAttr>(a).getValueAsDouble()
                     : llvm::isa<IntegerAttr>(a)
                         ? static_cast<double>(llvm::cast<IntegerAttr>(a).getInt())
                         : 0;
          if (v == 2)
            return unaryMap([](const z3::expr &x) { return x * x; });
        }
        return opaque();
      })
      .Case([&](NegOp) { return unaryMap([](const z3::expr &x) { return -x; }); })
      .Case([&](AbsOp) {
        return unaryMap([ops](const z3::expr &x) {
          if (x.is_fpa())
            return z3::expr(x.ctx(), Z3_mk_fpa_abs(x.ctx(), x));
          return z3::ite(ops->lt(x, ops->zero(x.get_sort())), -x, x);
        });
      })
      .Case([&](ReciprocalOp) -> const SymTensor * {
        if (!isFloat(rtype))
          return opaque();
        return unaryMap([ops](const z3::expr &x) { return ops->div(ops->one(x.get_sort()), x); });
      })
      .Case([&](SqrtOp) -> const SymTensor * {
        if (!isFloat(rtype))
          return opaque();
        return unaryMap([ops](const z3::expr &x) { return ops->sqrt(x); });
      })
      .Case([&](RsqrtOp) -> const SymTensor * {
        // 1 / sqrt(x) is rounded twice in IEEE; only Real knows it exactly.
        if (!real)
          return opaque();
        return unaryMap([ops](const z3::expr &x) { return ops->div(ops->one(x.get_sort()), ops->sqrt(x)); });
      })
      .Case([&](ExpOp) -> const SymTensor * {
        if (!isFloat(rtype))
          return opaque();
        return unaryMap([ops](const z3::expr &x) { return ops->exp(x); });
      })
      .Case([&](ReluOp) {
        return unaryMap([ops](const z3::expr &x) {
          z3::expr z = ops->zero(x.get_sort());
          return z3::ite(ops->isNan(x), x, ops->stdMax(x, z));
        });
      })
      .Case([&](HardtanhOp h) -> const SymTensor * {
        if (!isFloat(rtype))
          return opaque();
        double lo = h.getMinVal().convertToDouble(), hi = h.getMaxVal().convertToDouble();
        return unaryMap([ops, lo, hi](const z3::expr &x) {
          z3::sort s = x.get_sort();
          return z3::ite(ops->isNan(x), x,
                         ops->stdMin(ops->stdMax(x, ops->numeral(lo, s)), ops->numeral(hi, s)));
        });
      })
      .Case([&](ClampOp cl) -> const SymTensor * {
        if (!isFloat(rtype))
          return opaque();
        std::optional<double> lo, hi;
        if (cl.getMin())
          lo = cl.getMin()->convertToDouble();
        if (cl.getMax())
          hi = cl.getMax()->convertToDouble();
        return unaryMap([ops, lo, hi](const z3::expr &x) {
          z3::sort s = x.get_sort();
          z3::expr r = x;
          if (lo)
            r = ops->stdMax(r, ops->numeral(*lo, s));
          if (hi)
            r = ops->stdMin(r, ops->numeral(*hi, s));
          return z3::ite(ops->isNan(x), x, r);
        });
      })
      .Case([&](LeakyReluOp l) -> const SymTensor * {
        double slope = l.getNegativeSlope().convertToDouble();
        return unaryMap([ops, slope](const z3::expr &x) {
          z3::sort s = x.get_sort();
          return z3::ite(ops->lt(ops->zero(s), x), x, x * ops->numeral(slope, s));
        });
      })
      // Comparisons and logic.
      .Case([&](EqOp) { return binaryMap(commonType(), [ops](auto a, auto b) { return ops->eq(a, b); }); })
      .Case([&](NeOp) { return binaryMap(commonType(), [ops](auto a, auto b) { return !ops->eq(a, b); }); })
      .Case([&](LtOp) { return binaryMap(commonType(), [ops](auto a, auto b) { return ops->lt(a, b); }); })
      .Case([&](GtOp) { return binaryMap(commonType(), [ops](auto a, auto b) { return ops->lt(b, a); }); })
      .Case([&](LeOp) {
        return binaryMap(commonType(), [ops](auto a, auto b) { return ops->lt(a, b) || ops->eq(a, b); });
      })
      .Case([&](GeOp) {
        return binaryMap(commonType(), [ops](auto a, auto b) { return ops->lt(b, a) || ops->eq(a, b); });
      })
      .Case([&](LogicalAndOp) { return binaryMap(rtype, [](auto a, auto b) { return a && b; }); })
      .Case([&](LogicalOrOp) { return binaryMap(rtype, [](auto a, auto b) { return a || b; }); })
      .Case([&](LogicalXorOp) { return binaryMap(rtype, [](auto a, auto b) { return a != b; }); })
      .Case([&](LogicalNotOp) { return unaryMap([](const z3::expr &x) { return !x; }); })
      .Case([&](WhereOp) -> const SymTensor * {
        ElementFn cnd = operandAt(0, IntegerType::get(op->getContext(), 1));
        ElementFn t = operandAt(1, rtype), f = operandAt(2, rtype);
        s->at = [cnd, t, f](ArrayRef<z3::expr> idx) { return z3::ite(cnd(idx), t(idx), f(idx)); };
        return s;
      })
      .Case([&](CastOp) { return unaryMap([](const z3::expr &x) { return x; }); })
      // Views.
      .Case<ReshapeOp, ReshapeDynamicOp, FlattenOp, SqueezeOp, UnsqueezeOp>(
          [&](Operation *) { return reshapeLike(); })
      .Case([&](PermuteOp p) {
        SmallVector<int64_t> dims(p.getDims());
        size_t rank = dims.size();
        return remap([dims, rank](ArrayRef<z3::expr> idx) {
          Index j(rank, idx[0]);
          for (size_t k = 0; k < rank; ++k)
            j[dims[k] < 0 ? dims[k] + rank : dims[k]] = idx[k];
          return j;
        });
      })
      .Case([&](TransposeOp t) {
        int64_t rank = static_cast<int64_t>(outShape.size());
        int64_t a = t.getDim0() < 0 ? t.getDim0() + rank : t.getDim0();
        int64_t b = t.getDim1() < 0 ? t.getDim1() + rank : t.getDim1();
        return remap([a, b](ArrayRef<z3::expr> idx) {
          Index j(idx.begin(), idx.end());
          std::swap(j[a], j[b]);
          return j;
        });
      })
      .Case([&](ExpandOp) {
        SmallVector<int64_t> from = in[0]->shape;
        size_t rank = outShape.size();
        return remap([from, rank, &c](ArrayRef<z3::expr> idx) {
          Index j;
          for (size_t d = 0; d < from.size(); ++d)
            j.push_back(from[d] == 1 ? c.int_val(0) : idx[rank - from.size() + d]);
          return j;
        });
      })
      .Case([&](SliceOp sl) {
        int64_t rank = static_cast<int64_t>(outShape.size());
        int64_t dim = sl.getDim() < 0 ? sl.getDim() + rank : sl.getDim();
        int64_t size = in[0]->shape[dim];
        int64_t start = sl.getStart() < 0 ? std::max<int64_t>(sl.getStart() + size, 0)
                                          : std::min<int64_t>(sl.getStart(), size);
        int64_t step = sl.getStep();
        return remap([dim, start, step, &c](ArrayRef<z3::expr> idx) {
          Index j(idx.begin(), idx.end());
          j[dim] = (c.int_val(start) + idx[dim] * c.int_val(step)).simplify();
          return j;
        });
      })
      .Case([&](ConcatOp cat) {
        int64_t rank = static_cast<int64_t>(outShape.size());
        int64_t dim = cat.getDim() < 0 ? cat.getDim() + rank : cat.getDim();
        std::vector<std::pair<int64_t, ElementFn>> parts; // offset, reader
        int64_t offset = 0;
        for (unsigned k = 0; k < in.size(); ++k) {
          const SymTensor *t = in[k];
          Type from = t->elementType;
          int64_t off = offset;
          parts.push_back({off, [t, dim, off, from, rtype, ops, &c](ArrayRef<z3::expr> idx) {
                             Index j(idx.begin(), idx.end());
                             j[dim] = (idx[dim] - c.int_val(off)).simplify();
                             return ops->convert(t->at(j), from, rtype);
                           }});
          offset += t->shape[dim];
        }
        s->at = [parts, dim, &c](ArrayRef<z3::expr> idx) {
          z3::expr r = parts.back().second(idx);
          for (int64_t k = static_cast<int64_t>(parts.size()) - 2; k >= 0; --k)
            r = z3::ite(idx[dim] < c.int_val(parts[k + 1].first), parts[k].second(idx), r);
          return r;
        };
        return s;
      })
      // Reductions.
      .Case([&](SumOp r) -> const SymTensor * {
        if (in[0]->elementType != rtype)
          return opaque();
        return reduce(r.getDims(), r.getKeepdim(),
                      [ops](std::vector<z3::expr> &v) { return ops->fold(v, &ScalarOps::add); });
      })
      .Case([&](MeanOp r) -> const SymTensor * {
        if (in[0]->elementType != rtype || !isFloat(rtype))
          return opaque();
        return reduce(r.getDims(), r.getKeepdim(),
                      [ops, rsort](std::vector<z3::expr> &v) { return ops->mean(v, rsort); });
      })
      .Case([&](MaxOp r) {
        return reduce(r.getDims(), r.getKeepdim(), [ops](std::vector<z3::expr> &v) {
          return ops->fold(v, &ScalarOps::nanMax);
        });
      })
      .Case([&](MinOp r) {
        return reduce(r.getDims(), r.getKeepdim(), [ops](std::vector<z3::expr> &v) {
          return ops->fold(v, &ScalarOps::nanMin);
        });
      })
      .Case([&](VarOp r) -> const SymTensor * {
        if (!real)
          return opaque();
        int64_t correction = r.getCorrection();
        return reduce(r.getDims(), r.getKeepdim(), [ops, rsort, correction](std::vector<z3::expr> &v) {
          return ops->variance(v, ops->mean(v, rsort), correction, rsort);
        });
      })
      // Composites, exactly only in real arithmetic.
      .Case([&](SoftmaxOp sm) -> const SymTensor * {
        if (!real)
          return opaque();
        int64_t rank = static_cast<int64_t>(outShape.size());
        int64_t dim = sm.getDim() < 0 ? sm.getDim() + rank : sm.getDim();
        int64_t n = outShape[dim];
        if (n > kMaxReduction)
          return fail("softmax over " + llvm::Twine(n) + " elements is not unrolled");
        const SymTensor *x = in[0];
        s->at = [x, dim, n, ops, &c](ArrayRef<z3::expr> idx) {
          std::vector<z3::expr> row;
          for (int64_t k = 0; k < n; ++k) {
            Index j(idx.begin(), idx.end());
            j[dim] = c.int_val(k);
            row.push_back(x->at(j));
          }
          z3::expr m = ops->fold(row, &ScalarOps::nanMax);
          z3::expr sum = ops->exp(row[0] - m);
          for (int64_t k = 1; k < n; ++k)
            sum = sum + ops->exp(row[k] - m);
          return ops->div(ops->exp(x->at(idx) - m), sum);
        };
        return s;
      })
      .Case([&](LayerNormOp ln) -> const SymTensor * {
        if (!real)
          return opaque();
        int64_t rank = static_cast<int64_t>(outShape.size());
        int64_t count = static_cast<int64_t>(ln.getNormalizedShape().size());
        SmallVector<int64_t> normShape(outShape.end() - count, outShape.end());
        int64_t n = 1;
        for (int64_t d : normShape)
          n *= d;
        if (n > kMaxReduction)
          return fail("layer norm over " + llvm::Twine(n) + " elements is not unrolled");
        const SymTensor *x = in[0];
        const SymTensor *w = ln.getWeight() ? encode(ln.getWeight()) : nullptr;
        const SymTensor *b = ln.getBias() ? encode(ln.getBias()) : nullptr;
        if ((ln.getWeight() && !w) || (ln.getBias() && !b))
          return nullptr;
        z3::expr eps = sc.numeral(ln.getEps().convertToDouble(), rsort);
        std::vector<Index> inner = allIndices(c, normShape);
        s->at = [x, w, b, eps, inner, rank, count, ops, rsort](ArrayRef<z3::expr> idx) {
          std::vector<z3::expr> v;
          for (const Index &r : inner) {
            Index j(idx.begin(), idx.end() - count);
            j.insert(j.end(), r.begin(), r.end());
            v.push_back(x->at(j));
          }
          z3::expr mean = ops->mean(v, rsort);
          z3::expr var = ops->variance(v, mean, 0, rsort);
          z3::expr y = ops->div(x->at(idx) - mean, ops->sqrt(var + eps));
          return ops->affine(y, w, b, Index(idx.begin() + (rank - count), idx.end()));
        };
        return s;
      })
      .Case([&](BatchNormOp bn) -> const SymTensor * {
        if (!real)
          return opaque();
        const SymTensor *x = in[0];
        const SymTensor *mean = encode(bn.getMean()), *var = encode(bn.getVar());
        const SymTensor *w = bn.getWeight() ? encode(bn.getWeight()) : nullptr;
        const SymTensor *b = bn.getBias() ? encode(bn.getBias()) : nullptr;
        if (!mean || !var || (bn.getWeight() && !w) || (bn.getBias() && !b))
          return nullptr;
        z3::expr eps = sc.numeral(bn.getEps().convertToDouble(), rsort);
        s->at = [x, mean, var, w, b, eps, ops](ArrayRef<z3::expr> idx) {
          Index ch{idx[1]};
          z3::expr y = ops->div(x->at(idx) - mean->at(ch), ops->sqrt(var->at(ch) + eps));
          return ops->affine(y, w, b, ch);
        };
        return s;
      })
      // Convolutions and linear layers, as sums, in real arithmetic (their
      // floating-point summation order is the kernel's choice).
      .Case<Conv1DOp, Conv2DOp>([&](Operation *conv) -> const SymTensor * {
        if (!real || in[0]->shape.size() != outShape.size())
          return opaque();
        auto stride = conv->getAttrOfType<DenseI64ArrayAttr>("stride").asArrayRef().vec();
        auto padding = conv->getAttrOfType<DenseI64ArrayAttr>("padding").asArrayRef().vec();
        auto dilation = conv->getAttrOfType<DenseI64ArrayAttr>("dilation").asArrayRef().vec();
        int64_t groups = conv->getAttrOfType<IntegerAttr>("groups").getInt();
        const SymTensor *x = in[0], *w = in[1];
        const SymTensor *b = in.size() > 2 ? in[2] : nullptr;
        SmallVector<int64_t> kshape(w->shape.begin() + 1, w->shape.end()); // [C_in/g, k...]
        int64_t count = 1;
        for (int64_t d : kshape)
          count *= d;
        if (count > kMaxReduction)
          return fail("a convolution summing " + llvm::Twine(count) +
                      " products per output is not unrolled");
        int64_t outPerGroup = w->shape[0] / groups, inPerGroup = w->shape[1];
        SmallVector<int64_t> inShape = x->shape;
        std::vector<Index> taps = allIndices(c, kshape);
        s->at = [=, &c](ArrayRef<z3::expr> idx) {
          size_t spatial = inShape.size() - 2;
          z3::expr group = z3::expr(c, Z3_mk_div(c, idx[1], c.int_val(outPerGroup)));
          z3::expr acc = b ? b->at({idx[1]}) : ops->zero(rsort);
          for (const Index &t : taps) {
            Index xi{idx[0], (group * c.int_val(inPerGroup) + t[0]).simplify()};
            z3::expr inside = c.bool_val(true);
            for (size_t r = 0; r < spatial; ++r) {
              z3::expr pos = (idx[2 + r] * c.int_val(stride[r]) - c.int_val(padding[r]) +
                              t[1 + r] * c.int_val(dilation[r])).simplify();
              inside = inside && pos >= 0 && pos < c.int_val(inShape[2 + r]);
              xi.push_back(pos);
            }
            Index wi{idx[1]};
            wi.insert(wi.end(), t.begin(), t.end());
            acc = acc + z3::ite(inside.simplify(), x->at(xi), ops->zero(rsort)) * w->at(wi);
          }
          return acc;
        };
        return s;
      })
      .Case([&](LinearOp) -> const SymTensor * {
        if (!real)
          return opaque();
        const SymTensor *x = in[0], *w = in[1];
        const SymTensor *b = in.size() > 2 ? in[2] : nullptr;
        int64_t features = w->shape[1];
        if (features > kMaxReduction)
          return fail("a linear layer of " + llvm::Twine(features) +
                      " input features is not unrolled");
        s->at = [=, &c](ArrayRef<z3::expr> idx) {
          z3::expr o = idx.back();
          z3::expr acc = b ? b->at({o}) : ops->zero(rsort);
          for (int64_t i = 0; i < features; ++i) {
            Index xi(idx.begin(), idx.end());
            xi.back() = c.int_val(i);
            acc = acc + x->at(xi) * w->at({o, c.int_val(i)});
          }
          return acc;
        };
        return s;
      })
      .Default([&](Operation *) { return opaque(); });
}

std::string formatValue(const z3::expr &v) {
  z3::context &c = v.ctx();
  if (v.is_bool())
    return v.is_true() ? "true" : v.is_false() ? "false" : v.to_string();
  if (v.is_bv() && v.is_numeral()) {
    unsigned w = v.get_sort().bv_size();
    llvm::APInt bits(w, v.get_decimal_string(0), 10);
    return llvm::toString(bits, 10, /*Signed=*/true);
  }
  if (v.is_fpa()) {
    if (Z3_fpa_is_numeral_nan(c, v))
      return "nan";
    if (Z3_fpa_is_numeral_inf(c, v))
      return Z3_fpa_is_numeral_positive(c, v) ? "inf" : "-inf";
    if (Z3_fpa_is_numeral_zero(c, v))
      return Z3_fpa_is_numeral_negative(c, v) ? "-0.0" : "0.0";
    // Exactly as a double (every supported format widens exactly).
    z3::expr wide(c, Z3_mk_fpa_to_fp_float(c, z3::expr(c, Z3_mk_fpa_rne(c)), v,
                                           Z3_mk_fpa_sort_double(c)));
    z3::expr bits = z3::expr(c, Z3_mk_fpa_to_ieee_bv(c, wide)).simplify();
    uint64_t raw = 0;
    if (bits.is_numeral() && Z3_get_numeral_uint64(c, bits, &raw)) {
      double d;
      std::memcpy(&d, &raw, sizeof d);
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", d);
      return buf;
    }
  }
  if (v.is_real() && v.is_numeral())
    return v.get_decimal_string(9);
  return v.to_string();
}

} // namespace cuvil::verify
