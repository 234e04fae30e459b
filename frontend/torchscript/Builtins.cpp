//===- Builtins.cpp - Non-tensor operations of the evaluator --------------===//
//
// Everything TorchScript computes on ints, floats, bools, strings, lists,
// dicts and Optional, plus the tensor metadata queries (size, dim, dtype)
// that are known at import time. These run during import and emit no IR.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Interpreter.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

namespace cuvil::torchscript {

using K = IValue::Kind;

namespace {

bool isNum(const IValue &v) { return v.is(K::Int) || v.is(K::Float) || v.is(K::Bool); }
double num(const IValue &v) {
  return v.is(K::Float) ? v.f : v.is(K::Bool) ? double(v.b) : double(v.i);
}
int64_t asInt(const IValue &v) { return v.is(K::Bool) ? int64_t(v.b) : v.i; }

/// Python's floor division and modulo on ints.
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t pyMod(int64_t a, int64_t b) {
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

bool equalValues(const IValue &a, const IValue &b) {
  if (isNum(a) && isNum(b)) {
    if (a.is(K::Float) || b.is(K::Float))
      return num(a) == num(b);
    return asInt(a) == asInt(b);
  }
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case K::None: return true;
  case K::Str:
  case K::Device: return a.s == b.s;
  case K::List:
  case K::Tuple:
    if (a.list->size() != b.list->size())
      return false;
    for (size_t k = 0; k < a.list->size(); ++k)
      if (!equalValues((*a.list)[k], (*b.list)[k]))
        return false;
    return true;
  case K::Tensor: return a.tensor == b.tensor;
  case K::Object: return a.object == b.object;
  default: return false;
  }
}

std::vector<int64_t> staticShape(Interpreter &in, const IValue &t) {
  auto type = llvm::cast<mlir::RankedTensorType>(t.tensor->value.getType());
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

DType tensorDType(const IValue &t) {
  mlir::Type e = llvm::cast<mlir::RankedTensorType>(t.tensor->value.getType()).getElementType();
  if (e.isF16()) return DType::Float16;
  if (e.isBF16()) return DType::BFloat16;
  if (e.isF32()) return DType::Float32;
  if (e.isF64()) return DType::Float64;
  if (e.isInteger(1)) return DType::Bool;
  if (e.isUnsignedInteger(8)) return DType::UInt8;
  switch (e.getIntOrFloatBitWidth()) {
  case 8: return DType::Int8;
  case 16: return DType::Int16;
  case 32: return DType::Int32;
  default: return DType::Int64;
  }
}

/// Python's str.format with positional {} fields (what torch.format does).
std::string format(Interpreter &in, const std::string &fmt, const std::vector<IValue> &args) {
  std::string out;
  size_t next = 0;
  for (size_t k = 0; k < fmt.size(); ++k) {
    if (fmt[k] == '{' && k + 1 < fmt.size() && fmt[k + 1] == '{') {
      out += '{';
      ++k;
    } else if (fmt[k] == '}' && k + 1 < fmt.size() && fmt[k + 1] == '}') {
      out += '}';
      ++k;
    } else if (fmt[k] == '{') {
      size_t close = fmt.find('}', k);
      if (close == std::string::npos)
        in.fail("CUVIL-E-IMPORT-FORMAT", "unterminated '{' in format string");
      out += next < args.size() ? args[next].repr() : "{}";
      ++next;
      k = close;
    } else {
      out += fmt[k];
    }
  }
  return out;
}

/// A run-time Python int: `v` is a 0-d i64 tensor.
IValue symbolicInt(mlir::Value v) {
  IValue r = IValue::ofTensor(v);
  r.tensor->symbolicInt = true;
  return r;
}
bool isSymbolicInt(const IValue &v) { return v.isTensor() && v.tensor->symbolicInt; }
/// A run-time Python float: `v` is a 0-d f64 tensor.
IValue symbolicFloat(mlir::Value v) {
  IValue r = IValue::ofTensor(v);
  r.tensor->symbolicFloat = true;
  return r;
}
bool isSymbolicFloat(const IValue &v) { return v.isTensor() && v.tensor->symbolicFloat; }
bool isSymbolicNumber(const IValue &v) { return isSymbolicInt(v) || isSymbolicFloat(v); }

bool holdsFloats(const IValue &v) {
  return v.isTensor() &&
         llvm::isa<mlir::FloatType>(llvm::cast<mlir::RankedTensorType>(v.tensor->value.getType()).getElementType());
}

/// A one-element tensor as the 0-d tensor of `element` a run-time Python
/// number is (cast toward zero for ints, as int() does).
mlir::Value runtimeNumber(Interpreter &in, mlir::Value t, mlir::Type element) {
  auto type = llvm::cast<mlir::RankedTensorType>(t.getType());
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    in.fail("CUVIL-E-IMPORT-RAISE", "only a tensor with one element can be converted to a Python number");
  if (type.getRank() > 0)
    t = in.build<mlir::cuvil::ReshapeOp>(t, in.builder().getDenseI64ArrayAttr({}));
  auto scalar = mlir::RankedTensorType::get({}, element);
  if (llvm::cast<mlir::RankedTensorType>(t.getType()) != scalar)
    t = in.builder().create<mlir::cuvil::CastOp>(in.location(), scalar, t);
  return t;
}

bool anyTensorOrPoison(const std::vector<IValue> &args,
                       const std::vector<std::pair<std::string, IValue>> &kwargs) {
  for (const IValue &a : args)
    if (a.isTensor() || a.is(K::Poison))
      return true;
  for (auto &kv : kwargs)
    if (kv.second.isTensor() || kv.second.is(K::Poison))
      return true;
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// Python operators on concrete values
//===----------------------------------------------------------------------===//

IValue Interpreter::binaryOp(const std::string &op, const IValue &a, const IValue &b) {
  if (a.is(K::Poison) || b.is(K::Poison))
    return IValue::poison();
  if (a.isTensor() || b.isTensor()) {
    static const std::map<std::string, std::string> tensorOps = {
        {"+", "aten::add"}, {"-", "aten::sub"}, {"*", "aten::mul"}, {"/", "aten::div"},
        {"//", "aten::floor_divide"}, {"%", "aten::remainder"}, {"**", "aten::pow"},
        {"&", "aten::bitwise_and"}, {"|", "aten::bitwise_or"}, {"^", "aten::bitwise_xor"},
        {"@", "aten::matmul"}};
    auto it = tensorOps.find(op);
    if (it == tensorOps.end())
      fail("CUVIL-E-IMPORT-TYPE", "unsupported operator " + op + " on tensors");
    IValue r;
    bool numberOperands = (isSymbolicNumber(a) || isNum(a)) && (isSymbolicNumber(b) || isNum(b));
    bool floatOperands = numberOperands && (isSymbolicFloat(a) || isSymbolicFloat(b) ||
                                            a.is(K::Float) || b.is(K::Float) || op == "/");
    if (floatOperands) {
      // Python float arithmetic is double precision: both operands as f64.
      auto f64 = mlir::RankedTensorType::get({}, builder().getF64Type());
      auto asF64 = [&](const IValue &v) {
        mlir::Value t = v.isTensor() ? v.tensor->value : scalarConstant(v, DType::Float64);
        if (t.getType() != f64)
          t = builder().create<mlir::cuvil::CastOp>(location(), f64, t);
        return IValue::ofTensor(t);
      };
      r = op == "//" || op == "%" || op == "**" || op == "/" || op == "-" || op == "+" || op == "*"
              ? callOperator(op == "**"   ? "aten::pow"
                             : op == "//" ? "aten::floor_divide"
                             : op == "%"  ? "aten::remainder"
                             : op == "/"  ? "aten::div"
                             : op == "-"  ? "aten::sub"
                             : op == "+"  ? "aten::add"
                                          : "aten::mul",
                             {asF64(a), asF64(b)}, {})
              : IValue::poison();
      if (r.is(K::Poison))
        fail("CUVIL-E-IMPORT-TYPE", "unsupported operator " + op + " on Python floats");
      if (r.isTensor())
        r.tensor->symbolicFloat = true;
      return r;
    }
    // The operands as plain tensors: a run-time int's flag would route the
    // call back here (Python arithmetic written as calls, Builtins.cpp).
    auto plain = [](const IValue &v) { return v.isTensor() ? IValue::ofTensor(v.tensor->value) : v; };
    if (!a.isTensor()) { // scalar op tensor: reverse where it matters
      if (op == "+" || op == "*")
        r = callOperator(it->second, {plain(b), a}, {});
      else if (op == "-")
        r = callOperator("aten::rsub", {plain(b), a}, {});
      else
        r = callOperator(it->second, {callOperator("aten::full_like", {plain(b), a}, {}), plain(b)}, {});
    } else {
      r = callOperator(it->second, {plain(a), plain(b)}, {});
    }
    // Integer arithmetic on run-time ints stays a run-time int.
    bool intOperands = (isSymbolicInt(a) || a.is(K::Int)) && (isSymbolicInt(b) || b.is(K::Int));
    if (intOperands && r.isTensor() && op != "/" && op != "**" && op != "@") {
      auto t = llvm::cast<mlir::RankedTensorType>(r.tensor->value.getType());
      if (t.getRank() == 0 && t.getElementType().isInteger(64))
        r.tensor->symbolicInt = true;
    }
    return r;
  }
  if (isNum(a) && isNum(b)) {
    bool isFloat = a.is(K::Float) || b.is(K::Float);
    if (op == "/") {
      if (num(b) == 0)
        fail("CUVIL-E-IMPORT-RAISE", "the model divides by zero at import time");
      return IValue::floating(num(a) / num(b));
    }
    if (op == "**") {
      if (!isFloat && asInt(b) >= 0) {
        int64_t r = 1, base = asInt(a);
        for (int64_t k = 0; k < asInt(b) && k < 64; ++k)
          r *= base;
        return IValue::integer(r);
      }
      return IValue::floating(std::pow(num(a), num(b)));
    }
    if (isFloat) {
      double x = num(a), y = num(b);
      if (op == "+") return IValue::floating(x + y);
      if (op == "-") return IValue::floating(x - y);
      if (op == "*") return IValue::floating(x * y);
      if (op == "//") return IValue::floating(std::floor(x / y));
      if (op == "%") return IValue::floating(x - std::floor(x / y) * y);
    } else {
      int64_t x = asInt(a), y = asInt(b);
      if ((op == "//" || op == "%") && y == 0)
        fail("CUVIL-E-IMPORT-RAISE", "the model divides by zero at import time");
      if (op == "+") return IValue::integer(x + y);
      if (op == "-") return IValue::integer(x - y);
      if (op == "*") return IValue::integer(x * y);
      if (op == "//") return IValue::integer(floorDiv(x, y));
      if (op == "%") return IValue::integer(pyMod(x, y));
      if (op == "&") return a.is(K::Bool) && b.is(K::Bool) ? IValue::boolean(x & y) : IValue::integer(x & y);
      if (op == "|") return a.is(K::Bool) && b.is(K::Bool) ? IValue::boolean(x | y) : IValue::integer(x | y);
      if (op == "^") return a.is(K::Bool) && b.is(K::Bool) ? IValue::boolean(x ^ y) : IValue::integer(x ^ y);
      if (op == "<<") return IValue::integer(x << y);
      if (op == ">>") return IValue::integer(x >> y);
    }
  }
  if (op == "+" && a.is(K::Str) && b.is(K::Str))
    return IValue::string(a.s + b.s);
  if (op == "+" && a.isSequence() && b.isSequence()) {
    IValueList items = *a.list;
    items.insert(items.end(), b.list->begin(), b.list->end());
    return a.is(K::Tuple) ? IValue::makeTuple(items) : IValue::makeList(items);
  }
  if (op == "*" && a.isSequence() && b.is(K::Int)) {
    IValueList items;
    for (int64_t k = 0; k < b.i; ++k)
      items.insert(items.end(), a.list->begin(), a.list->end());
    return a.is(K::Tuple) ? IValue::makeTuple(items) : IValue::makeList(items);
  }
  fail("CUVIL-E-IMPORT-TYPE", "unsupported operand types for " + op + ": " + a.typeName() +
                                  " and " + b.typeName());
}

IValue Interpreter::compareOp(const std::string &op, const IValue &a, const IValue &b) {
  if (a.is(K::Poison) || b.is(K::Poison))
    return IValue::poison();
  if (op == "is" || op == "is not") {
    bool same = (a.isNone() && b.isNone()) ||
                (!a.isNone() && !b.isNone() && equalValues(a, b) && a.kind == b.kind);
    return IValue::boolean(op == "is" ? same : !same);
  }
  if (op == "in" || op == "not in") {
    bool found = false;
    if (b.is(K::Str) && a.is(K::Str))
      found = b.s.find(a.s) != std::string::npos;
    else if (b.is(K::Dict))
      for (auto &kv : *b.dict)
        found |= equalValues(kv.first, a);
    else
      for (const IValue &x : iterate(b))
        found |= equalValues(x, a);
    return IValue::boolean(op == "in" ? found : !found);
  }
  if (a.isTensor() || b.isTensor()) {
    static const std::map<std::string, std::string> ops = {
        {"==", "aten::eq"}, {"!=", "aten::ne"}, {"<", "aten::lt"},
        {"<=", "aten::le"}, {">", "aten::gt"}, {">=", "aten::ge"}};
    const IValue &t = a.isTensor() ? a : b;
    const IValue &o = a.isTensor() ? b : a;
    std::string name = ops.at(op);
    if (!a.isTensor()) { // flip the comparison
      static const std::map<std::string, std::string> flip = {
          {"aten::lt", "aten::gt"}, {"aten::gt", "aten::lt"}, {"aten::le", "aten::ge"},
          {"aten::ge", "aten::le"}, {"aten::eq", "aten::eq"}, {"aten::ne", "aten::ne"}};
      name = flip.at(name);
    }
    return callOperator(name, {t, o}, {});
  }
  if (op == "==")
    return IValue::boolean(equalValues(a, b));
  if (op == "!=")
    return IValue::boolean(!equalValues(a, b));
  if (isNum(a) && isNum(b)) {
    double x = num(a), y = num(b);
    if (!a.is(K::Float) && !b.is(K::Float)) {
      int64_t p = asInt(a), q = asInt(b);
      return IValue::boolean(op == "<" ? p < q : op == "<=" ? p <= q : op == ">" ? p > q : p >= q);
    }
    return IValue::boolean(op == "<" ? x < y : op == "<=" ? x <= y : op == ">" ? x > y : x >= y);
  }
  if (a.is(K::Str) && b.is(K::Str))
    return IValue::boolean(op == "<" ? a.s < b.s : op == "<=" ? a.s <= b.s : op == ">" ? a.s > b.s : a.s >= b.s);
  fail("CUVIL-E-IMPORT-TYPE", "cannot compare " + a.typeName() + " " + op + " " + b.typeName());
}

//===----------------------------------------------------------------------===//
// Builtins that bypass schema matching
//===----------------------------------------------------------------------===//

IValue callRawBuiltin(Interpreter &in, const std::string &name, std::vector<IValue> &args,
                      std::vector<std::pair<std::string, IValue>> &kwargs, bool &handled) {
  handled = true;
  size_t n = args.size();
  auto arg = [&](size_t k) -> const IValue & {
    if (k >= args.size())
      in.fail("CUVIL-E-IMPORT-CALL", name + " expects at least " + std::to_string(k + 1) + " arguments");
    return args[k];
  };
  auto requireInt = [&](const IValue &v) {
    if (!v.is(K::Int) && !v.is(K::Bool))
      in.fail("CUVIL-E-IMPORT-TYPE", name + " expects an int, got " + v.typeName());
    return asInt(v);
  };
  auto requireTensor = [&](const IValue &v) {
    if (!v.isTensor())
      in.fail("CUVIL-E-IMPORT-TYPE", name + " expects a tensor, got " + v.typeName());
  };

  // Python builtins --------------------------------------------------------
  if (name == "builtin::range" || name == "aten::range_list") {
    int64_t start = 0, stop, step = 1;
    if (n == 1) {
      stop = requireInt(arg(0));
    } else {
      start = requireInt(arg(0));
      stop = requireInt(arg(1));
      if (n > 2)
        step = requireInt(arg(2));
    }
    if (step == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "range() step must not be zero");
    IValueList items;
    for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) {
      if (items.size() > 10'000'000)
        in.fail("CUVIL-E-IMPORT-LOOP", "range() with more than 10 million items");
      items.push_back(IValue::integer(k));
    }
    return IValue::makeList(std::move(items));
  }
  if (name == "builtin::annotate" || name == "builtin::unchecked_cast" ||
      name == "prim::unchecked_cast" || name == "aten::_unwrap_optional" ||
      name == "prim::unchecked_unwrap_optional")
    return args.empty() ? IValue::none() : args.back();
  if (name == "builtin::uninitialized" || name == "prim::Uninitialized") {
    IValue u;
    u.kind = K::Uninitialized;
    return u;
  }
  if (name == "builtin::print" || name == "prim::Print") {
    // Known values go into the format text; tensors are printed at run time.
    std::string format;
    std::vector<mlir::Value> values;
    for (const IValue &a : args) {
      if (a.is(K::Poison))
        return IValue::none();
      if (!format.empty())
        format += ' ';
      if (a.isTensor()) {
        format += "{}";
        values.push_back(a.tensor->value);
        continue;
      }
      for (char c : a.is(K::Str) ? a.s : a.repr()) {
        format += c;
        if (c == '{' || c == '}')
          format += c; // a literal brace
      }
    }
    in.builder().create<mlir::cuvil::PrintOp>(in.location(), in.builder().getStringAttr(format), values);
    return IValue::none();
  }
  if (name == "prim::RaiseException" || name == "builtin::RaiseException") {
    // RaiseException(message[, class]); asserts serialize as one argument
    // that already starts with "AssertionError: ".
    std::string msg = n > 0 ? (arg(0).is(K::Str) ? arg(0).s : arg(0).repr()) : "exception";
    std::string cls = n > 1 ? (arg(1).is(K::Str) ? arg(1).s : arg(1).repr()) : "";
    if (cls.rfind("builtins.", 0) == 0)
      cls = cls.substr(9);
    std::string what = cls.empty() ? msg : cls + ": " + msg;
    if (in.inTensorBranch())
      throw BranchRaises{what};
    in.fail("CUVIL-E-IMPORT-RAISE", "the model raises for these inputs: " + what);
  }
  if (name == "aten::warn") {
    in.warn("the model warns: " + (n ? arg(0).repr() : std::string()));
    return IValue::none();
  }
  if (name == "aten::format") {
    if (n == 0 || !arg(0).is(K::Str))
      in.fail("CUVIL-E-IMPORT-TYPE", "format expects a string");
    return IValue::string(format(in, arg(0).s, std::vector<IValue>(args.begin() + 1, args.end())));
  }
  if (name == "aten::__is__" || name == "aten::__isnot__") {
    IValue r = in.compareOp(name == "aten::__is__" ? "is" : "is not", arg(0), arg(1));
    return r;
  }
  if (name == "aten::__not__" || name == "builtin::not")
    return IValue::boolean(!in.truthy(arg(0)));
  if (name == "aten::is_grad_enabled")
    return IValue::boolean(true); // the ordinary (non fast-path) code is taken
  if (name == "aten::is_autocast_enabled" || name == "aten::is_autocast_cpu_enabled" ||
      name == "aten::_has_torch_function" || name == "aten::has_torch_function" ||
      name == "aten::is_scripting")
    return IValue::boolean(name == "aten::is_scripting");
  if (name == "builtin::__new__" && n == 1)
    return in.newObject(arg(0));
  if (name == "aten::set_grad_enabled")
    return IValue::none(); // inference only: nothing records gradients
  if (name == "builtin::isinstance")
    return IValue::boolean(false); // handled in eval with the type expression
  if (name == "builtin::hasattr") {
    const IValue &o = arg(0);
    if (!o.is(K::Object) || !arg(1).is(K::Str))
      return IValue::boolean(false);
    bool has = o.object->attrs.count(arg(1).s) || (o.object->state && o.object->state->get(arg(1).s)) ||
               o.object->cls->method(arg(1).s) || o.object->cls->attr(arg(1).s);
    return IValue::boolean(has);
  }
  if (name == "builtin::getattr") {
    if (!arg(1).is(K::Str))
      in.fail("CUVIL-E-IMPORT-TYPE", "getattr needs a string name");
    return in.getAttr(arg(0), arg(1).s);
  }

  // Tensor metadata known at import time -----------------------------------
  if (name == "aten::dim" || (name == "aten::len" && n == 1 && arg(0).isTensor())) {
    requireTensor(arg(0));
    std::vector<int64_t> shape = staticShape(in, arg(0));
    if (name == "aten::dim")
      return IValue::integer(static_cast<int64_t>(shape.size()));
    if (shape.empty())
      in.fail("CUVIL-E-IMPORT-TYPE", "len() of a 0-d tensor");
    if (shape[0] < 0)
      return in.unsupported("a dynamic dimension used as a value (len of a '?' dimension)");
    return IValue::integer(shape[0]);
  }
  if (name == "aten::size" && n >= 1 && arg(0).isTensor()) {
    std::vector<int64_t> shape = staticShape(in, arg(0));
    IValue dimArg = n > 1 ? arg(1) : IValue::none();
    for (auto &kv : kwargs)
      if (kv.first == "dim")
        dimArg = kv.second;
    if (dimArg.isNone()) {
      IValueList dims;
      for (size_t k = 0; k < shape.size(); ++k)
        dims.push_back(shape[k] >= 0 ? IValue::integer(shape[k])
                                     : symbolicInt(in.build<mlir::cuvil::DimOp>(
                                           arg(0).tensor->value,
                                           in.builder().getI64IntegerAttr(static_cast<int64_t>(k)))));
      return IValue::makeList(std::move(dims));
    }
    int64_t d = requireInt(dimArg), rank = static_cast<int64_t>(shape.size());
    if (d < -rank || d >= rank)
      in.fail("CUVIL-E-IMPORT-RAISE", "dimension " + std::to_string(d) +
                                          " is out of range for a tensor of rank " + std::to_string(rank));
    int64_t size = shape[d < 0 ? d + rank : d];
    if (size < 0) // known at run time only
      return symbolicInt(in.build<mlir::cuvil::DimOp>(arg(0).tensor->value,
                                                      in.builder().getI64IntegerAttr(d < 0 ? d + rank : d)));
    return IValue::integer(size);
  }
  if (name == "aten::numel" && n == 1 && arg(0).isTensor()) {
    int64_t total = 1;
    for (int64_t d : staticShape(in, arg(0))) {
      if (d < 0)
        return in.unsupported("a dynamic dimension used as a value (numel)");
      total *= d;
    }
    return IValue::integer(total);
  }
  if (name == "prim::dtype" || (name == "aten::dtype" && n == 1)) {
    requireTensor(arg(0));
    return IValue::integer(scalarTypeFromDType(tensorDType(arg(0))));
  }
  if (name == "prim::device" || name == "aten::device") {
    if (n == 1 && arg(0).isTensor())
      return IValue::device("cpu");
    if (n >= 1 && arg(0).is(K::Str))
      return IValue::device(arg(0).s);
  }
  if (name == "aten::is_floating_point" && n == 1 && arg(0).isTensor())
    return IValue::boolean(isFloat(tensorDType(arg(0))));
  if ((name == "prim::is_cuda" || name == "prim::is_nested" || name == "prim::is_quantized" ||
       name == "prim::is_mkldnn" || name == "prim::is_sparse" || name == "prim::requires_grad" ||
       name == "aten::is_nested" || name == "prim::is_meta" || name == "prim::is_xpu") && n == 1)
    return IValue::boolean(false);
  if (name == "prim::layout" || name == "aten::layout")
    return IValue::integer(0); // strided
  if (name == "prim::data" && n == 1 && arg(0).isTensor())
    return arg(0);

  // `a and b` / `a or b` of a Python bool and a condition on tensor data
  // (TorchScript's desugared `break`, conditions merged by a data-dependent
  // if): the condition stays a tensor.
  if ((name == "aten::__and__" || name == "aten::__or__" || name == "aten::__xor__") && n == 2 &&
      (arg(0).isTensor() || arg(1).isTensor()) && (arg(0).is(K::Bool) || arg(1).is(K::Bool))) {
    const IValue &flag = arg(0).is(K::Bool) ? arg(0) : arg(1), &t = arg(0).is(K::Bool) ? arg(1) : arg(0);
    if (name == "aten::__and__")
      return flag.b ? t : IValue::boolean(false);
    if (name == "aten::__or__")
      return flag.b ? IValue::boolean(true) : t;
    return flag.b ? in.callOperator("aten::logical_not", {t}, {}) : t;
  }
  if (name == "aten::__not__" && n == 1 && arg(0).isTensor())
    return in.callOperator("aten::logical_not", {arg(0)}, {});
  // bool(tensor) stays a tensor: a condition on tensor data, which an `if`
  // turns into scf.if.
  if ((name == "builtin::bool" || name == "aten::Bool") && n == 1 && arg(0).isTensor())
    return arg(0);
  // A number as a 0-d tensor (traced models turn sizes into tensors to do
  // arithmetic on them): int64, float64 (double) or bool. A run-time int is
  // its tensor already.
  if (name == "prim::NumToTensor" && n == 1) {
    const IValue &v = arg(0);
    if (isSymbolicInt(v)) {
      auto box = std::make_shared<TensorBox>();
      box->value = v.tensor->value;
      return IValue::ofTensor(box);
    }
    if (v.is(K::Int))
      return IValue::ofTensor(in.scalarConstant(v, DType::Int64));
    if (v.is(K::Float))
      return IValue::ofTensor(in.scalarConstant(v, DType::Float64));
    if (v.is(K::Bool))
      return IValue::ofTensor(in.scalarConstant(v, DType::Bool));
  }
  // int(t), float(t), t.item() of a tensor computed from constants only
  // (sizes, in traced models): the number itself.
  if ((name == "builtin::int" || name == "aten::Int" || name == "aten::item" || name == "builtin::float" ||
       name == "aten::Float" || name == "aten::ScalarImplicit") &&
      n == 1 && arg(0).isTensor() && !isSymbolicInt(arg(0)))
    if (std::optional<Tensor> c = in.foldToConstant(arg(0).tensor->value); c && c->numElements() == 1) {
      bool wantsFloat = name == "builtin::float" || name == "aten::Float" ||
                        ((name == "aten::item" || name == "aten::ScalarImplicit") && isFloat(c->dtype()));
      if (wantsFloat)
        return IValue::floating(c->getDouble(0));
      if (c->dtype() == DType::Bool && name != "builtin::int" && name != "aten::Int")
        return IValue::boolean(c->getInt(0) != 0);
      return IValue::integer(isFloat(c->dtype()) ? static_cast<int64_t>(c->getDouble(0)) : c->getInt(0));
    }
  // int(t) / t.item() of an integer tensor: a run-time int (sizes may use it).
  if ((name == "builtin::int" || name == "aten::Int" || name == "aten::item") && n == 1 &&
      arg(0).isTensor() && (name != "aten::item" || !holdsFloats(arg(0)))) {
    if (isSymbolicInt(arg(0)))
      return arg(0);
    mlir::Type e = llvm::cast<mlir::RankedTensorType>(arg(0).tensor->value.getType()).getElementType();
    if (name == "aten::item" && e.isInteger(1))
      return in.unsupported("a Python bool read from tensor data (t.item())");
    return symbolicInt(runtimeNumber(in, arg(0).tensor->value, in.builder().getI64Type()));
  }
  // float(t) / t.item() of a float tensor: a run-time Python float, kept
  // dynamic (a 0-d f64 tensor) for the tensor ops that use it.
  if ((name == "builtin::float" || name == "aten::Float" ||
       ((name == "aten::item" || name == "aten::ScalarImplicit") && holdsFloats(arg(0)))) &&
      n == 1 && arg(0).isTensor()) {
    if (isSymbolicFloat(arg(0)))
      return arg(0);
    return symbolicFloat(runtimeNumber(in, arg(0).tensor->value, in.builder().getF64Type()));
  }
  // math.floor/ceil of a run-time float: a run-time int.
  if ((name == "aten::floor" || name == "aten::ceil") && n == 1 && isSymbolicFloat(arg(0))) {
    mlir::Value r = in.callOperator(name, {IValue::ofTensor(arg(0).tensor->value)}, {}).tensor->value;
    auto i64 = mlir::RankedTensorType::get({}, in.builder().getI64Type());
    return symbolicInt(in.builder().create<mlir::cuvil::CastOp>(in.location(), i64, r));
  }
  // Arithmetic on run-time numbers written as calls (scripted code says
  // torch.sub(torch.size(x, 1), 1) for x.size(1) - 1): Python's operators,
  // so a run-time int stays one (and sizes may use it).
  if (n == 2 && kwargs.empty() && (isSymbolicNumber(arg(0)) || isSymbolicNumber(arg(1))) &&
      (isSymbolicNumber(arg(0)) || isNum(arg(0))) && (isSymbolicNumber(arg(1)) || isNum(arg(1)))) {
    static const std::map<std::string, std::string> pythonOps = {
        {"aten::add", "+"},       {"aten::sub", "-"},       {"aten::mul", "*"},
        {"aten::floordiv", "//"}, {"aten::floor_divide", "//"}, {"aten::remainder", "%"},
        {"aten::div", "/"},       {"aten::pow", "**"}};
    if (auto op = pythonOps.find(name); op != pythonOps.end())
      return in.binaryOp(op->second, arg(0), arg(1));
  }
  // min(a, b) / max(a, b) of run-time ints: a run-time int.
  if ((name == "prim::min" || name == "prim::max" || name == "builtin::min" || name == "builtin::max") &&
      kwargs.empty()) {
    std::vector<IValue> items = n == 1 && arg(0).isSequence() ? *arg(0).list : args;
    bool anyRunTime = llvm::any_of(items, isSymbolicInt);
    bool allInts = llvm::all_of(items, [](const IValue &v) { return isSymbolicInt(v) || v.is(K::Int); });
    if (anyRunTime && allInts) {
      bool isMin = name.find("min") != std::string::npos;
      IValue best = items[0];
      for (size_t k = 1; k < items.size(); ++k) {
        auto asTensor = [&](const IValue &v) {
          return IValue::ofTensor(v.isTensor() ? v.tensor->value : in.scalarConstant(v, DType::Int64));
        };
        best = in.callOperator(isMin ? "aten::minimum" : "aten::maximum", {asTensor(best), asTensor(items[k])}, {});
        best.tensor->symbolicInt = true;
      }
      return best;
    }
  }

  // math functions of a run-time number: a run-time float.
  if (n == 1 && isSymbolicNumber(arg(0)) &&
      (name == "aten::sqrt" || name == "aten::exp" || name == "aten::log" || name == "aten::sin" ||
       name == "aten::cos" || name == "aten::tanh" || name == "aten::log10" || name == "aten::log1p" ||
       name == "aten::abs" || name == "aten::neg")) {
    IValue x = arg(0);
    if (isSymbolicInt(x) && name != "aten::abs" && name != "aten::neg") {
      auto f64 = mlir::RankedTensorType::get({}, in.builder().getF64Type());
      x = IValue::ofTensor(in.builder().create<mlir::cuvil::CastOp>(in.location(), f64, x.tensor->value));
    }
    IValue r = in.callOperator(name, {IValue::ofTensor(x.tensor->value)}, {});
    if (r.isTensor()) {
      r.tensor->symbolicFloat = !isSymbolicInt(x);
      r.tensor->symbolicInt = isSymbolicInt(x);
    }
    return r;
  }

  // x[..., :n] with n known only at run time (n = y.size(d): a causal
  // mask cut to the sequence length).
  if (name == "aten::slice" && n >= 4 && arg(0).isTensor() && isSymbolicInt(arg(3)) &&
      (arg(2).isNone() || (arg(2).is(K::Int) && asInt(arg(2)) == 0)) &&
      (n < 5 || (arg(4).is(K::Int) && asInt(arg(4)) == 1)) && arg(1).is(K::Int) && kwargs.empty()) {
    int64_t rank = static_cast<int64_t>(staticShape(in, arg(0)).size()), dim = asInt(arg(1));
    if (dim < -rank || dim >= rank)
      in.fail("CUVIL-E-IMPORT-RAISE", "dimension " + std::to_string(dim) +
                                          " is out of range for a tensor of rank " + std::to_string(rank));
    mlir::Value r = in.build<mlir::cuvil::SliceToOp>(arg(0).tensor->value, arg(3).tensor->value,
                                                     in.builder().getI64IntegerAttr(dim < 0 ? dim + rank : dim));
    return viewOf(arg(0), r);
  }

  // view/reshape with sizes known only at run time.
  if ((name == "aten::view" || name == "aten::reshape") && n == 2 && arg(0).isTensor() &&
      arg(1).isSequence() && llvm::any_of(*arg(1).list, isSymbolicInt)) {
    auto i64 = in.builder().getI64Type();
    std::vector<mlir::Value> parts;
    for (const IValue &d : *arg(1).list) {
      mlir::Value part;
      if (isSymbolicInt(d))
        part = d.tensor->value;
      else if (d.is(K::Int))
        part = in.scalarConstant(d, DType::Int64);
      else
        in.fail("CUVIL-E-IMPORT-TYPE", name + " sizes must be ints");
      parts.push_back(in.build<mlir::cuvil::ReshapeOp>(part, in.builder().getDenseI64ArrayAttr({1})));
    }
    (void)i64;
    mlir::Value shape = parts.size() == 1
                            ? parts[0]
                            : in.build<mlir::cuvil::ConcatOp>(mlir::ValueRange(parts),
                                                              in.builder().getI64IntegerAttr(0));
    mlir::Value r = in.build<mlir::cuvil::ReshapeDynamicOp>(arg(0).tensor->value, shape);
    return viewOf(arg(0), r);
  }

  // Lists, tuples, dicts, strings (their items may be tensors) -------------
  if ((name == "aten::len" || name == "builtin::len") && n == 1) {
    const IValue &v = arg(0);
    if (v.isSequence()) return IValue::integer(static_cast<int64_t>(v.list->size()));
    if (v.is(K::Str)) return IValue::integer(static_cast<int64_t>(v.s.size()));
    if (v.is(K::Dict)) return IValue::integer(static_cast<int64_t>(v.dict->size()));
    in.fail("CUVIL-E-IMPORT-TYPE", "len() of a " + v.typeName());
  }
  if (name == "aten::append" && n == 2 && arg(0).is(K::List)) {
    args[0].list->push_back(arg(1));
    return args[0];
  }
  if (name == "aten::extend" && n == 2 && arg(0).is(K::List) && arg(1).isSequence()) {
    for (const IValue &x : *arg(1).list)
      args[0].list->push_back(x);
    return IValue::none();
  }
  if (name == "aten::insert" && n == 3 && arg(0).is(K::List)) {
    int64_t size = static_cast<int64_t>(arg(0).list->size());
    int64_t at = std::clamp<int64_t>(requireInt(arg(1)) < 0 ? requireInt(arg(1)) + size : requireInt(arg(1)), 0, size);
    args[0].list->insert(args[0].list->begin() + at, arg(2));
    return IValue::none();
  }
  if (name == "aten::pop" && n >= 1 && arg(0).is(K::List)) {
    if (arg(0).list->empty())
      in.fail("CUVIL-E-IMPORT-RAISE", "pop from an empty list");
    int64_t size = static_cast<int64_t>(arg(0).list->size());
    int64_t at = n > 1 ? requireInt(arg(1)) : -1;
    at = at < 0 ? at + size : at;
    if (at < 0 || at >= size)
      in.fail("CUVIL-E-IMPORT-RAISE", "pop index out of range");
    IValue v = (*arg(0).list)[at];
    args[0].list->erase(args[0].list->begin() + at);
    return v;
  }
  if ((name == "aten::list" || name == "builtin::list") && n == 1) {
    if (arg(0).is(K::Str)) {
      IValueList chars;
      for (char c : arg(0).s)
        chars.push_back(IValue::string(std::string(1, c)));
      return IValue::makeList(chars);
    }
    if (arg(0).isSequence())
      return IValue::makeList(*arg(0).list);
  }
  // Python slicing of a list or string: seq[start:end:step]. (Tensor slices
  // go through the aten::slice schema, whose first argument is the dim.)
  if (name == "aten::slice" && n >= 1 && (arg(0).isSequence() || arg(0).is(K::Str))) {
    const IValue &seq = arg(0);
    int64_t size = seq.is(K::Str) ? static_cast<int64_t>(seq.s.size())
                                  : static_cast<int64_t>(seq.list->size());
    auto optInt = [&](size_t k, const char *kw) -> std::optional<int64_t> {
      const IValue *v = k < n ? &args[k] : nullptr;
      for (auto &[key, val] : kwargs)
        if (key == kw)
          v = &val;
      if (!v || v->isNone())
        return std::nullopt;
      return requireInt(*v);
    };
    int64_t step = optInt(3, "step").value_or(1);
    if (step == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "slice step cannot be zero");
    // CPython's PySlice_AdjustIndices.
    auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
      if (!v)
        return dflt;
      int64_t x = *v < 0 ? *v + size : *v;
      if (step > 0)
        return std::clamp<int64_t>(x, 0, size);
      return std::clamp<int64_t>(x, -1, size - 1);
    };
    int64_t start = adjust(optInt(1, "start"), step > 0 ? 0 : size - 1);
    int64_t end = adjust(optInt(2, "end"), step > 0 ? size : -1);
    if (seq.is(K::Str)) {
      std::string out;
      for (int64_t k = start; step > 0 ? k < end : k > end; k += step)
        out.push_back(seq.s[k]);
      return IValue::string(std::move(out));
    }
    IValueList out;
    for (int64_t k = start; step > 0 ? k < end : k > end; k += step)
      out.push_back((*seq.list)[k]);
    return seq.is(K::Tuple) ? IValue::makeTuple(std::move(out)) : IValue::makeList(std::move(out));
  }
  // dict(), dict(other) and dict(list of pairs).
  if ((name == "aten::dict" || name == "builtin::dict") && n <= 1 && kwargs.empty()) {
    IValue d;
    d.kind = K::Dict;
    d.dict = std::make_shared<IValueDict>();
    if (n == 0)
      return d;
    if (arg(0).is(K::Dict)) {
      *d.dict = *arg(0).dict;
      return d;
    }
    if (arg(0).isSequence()) {
      for (const IValue &item : *arg(0).list) {
        if (!item.isSequence() || item.list->size() != 2)
          in.fail("CUVIL-E-IMPORT-TYPE", "dict() expects a sequence of (key, value) pairs");
        bool replaced = false;
        for (auto &kv : *d.dict)
          if (equalValues(kv.first, (*item.list)[0])) {
            kv.second = (*item.list)[1];
            replaced = true;
          }
        if (!replaced)
          d.dict->emplace_back((*item.list)[0], (*item.list)[1]);
      }
      return d;
    }
  }
  if (name == "aten::copy" && n == 1 && arg(0).is(K::List))
    return IValue::makeList(*arg(0).list);
  if (name == "builtin::tuple" && n == 1 && arg(0).isSequence())
    return IValue::makeTuple(*arg(0).list);
  if (name == "aten::__getitem__" && n == 2) {
    const IValue &c = arg(0), &k = arg(1);
    if (c.isSequence() && k.is(K::Int)) {
      int64_t size = static_cast<int64_t>(c.list->size()), i = k.i < 0 ? k.i + size : k.i;
      if (i < 0 || i >= size)
        in.fail("CUVIL-E-IMPORT-INDEX", "list index " + std::to_string(k.i) + " out of range");
      return (*c.list)[i];
    }
    if (c.is(K::Dict)) {
      for (auto &kv : *c.dict)
        if (equalValues(kv.first, k))
          return kv.second;
      in.fail("CUVIL-E-IMPORT-KEY", "key " + k.repr() + " is not in the dict");
    }
  }
  if (name == "aten::_set_item" && n == 3) {
    if (arg(0).is(K::List) && arg(1).is(K::Int)) {
      int64_t size = static_cast<int64_t>(arg(0).list->size()), i = arg(1).i < 0 ? arg(1).i + size : arg(1).i;
      if (i < 0 || i >= size)
        in.fail("CUVIL-E-IMPORT-INDEX", "list assignment index out of range");
      (*args[0].list)[i] = arg(2);
      return IValue::none();
    }
    if (arg(0).is(K::Dict)) {
      for (auto &kv : *args[0].dict)
        if (equalValues(kv.first, arg(1))) {
          kv.second = arg(2);
          return IValue::none();
        }
      args[0].dict->emplace_back(arg(1), arg(2));
      return IValue::none();
    }
  }
  if (name == "aten::__contains__" && n == 2 && !anyTensorOrPoison(args, kwargs))
    return in.compareOp("in", arg(1), arg(0));
  if (name == "aten::keys" && n == 1 && arg(0).is(K::Dict)) {
    IValueList keys;
    for (auto &kv : *arg(0).dict)
      keys.push_back(kv.first);
    return IValue::makeList(keys);
  }
  if (name == "aten::values" && n == 1 && arg(0).is(K::Dict)) {
    IValueList vals;
    for (auto &kv : *arg(0).dict)
      vals.push_back(kv.second);
    return IValue::makeList(vals);
  }
  if (name == "aten::items" && n == 1 && arg(0).is(K::Dict)) {
    IValueList items;
    for (auto &kv : *arg(0).dict)
      items.push_back(IValue::makeTuple({kv.first, kv.second}));
    return IValue::makeList(items);
  }
  if (name == "aten::get" && n >= 2 && arg(0).is(K::Dict)) {
    for (auto &kv : *arg(0).dict)
      if (equalValues(kv.first, arg(1)))
        return kv.second;
    return n > 2 ? arg(2) : IValue::none();
  }
  if ((name == "aten::startswith" || name == "aten::endswith") && n >= 2 && arg(0).is(K::Str) && arg(1).is(K::Str)) {
    const std::string &s = arg(0).s, &p = arg(1).s;
    bool r = name == "aten::startswith" ? s.rfind(p, 0) == 0
                                        : s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
    return IValue::boolean(r);
  }
  if (name == "aten::lower" && n == 1 && arg(0).is(K::Str)) {
    std::string s = arg(0).s;
    for (char &c : s)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return IValue::string(s);
  }
  if (name == "builtin::enumerate" && n >= 1 && arg(0).isSequence()) {
    IValueList items;
    int64_t k = n > 1 ? requireInt(arg(1)) : 0;
    for (const IValue &x : *arg(0).list)
      items.push_back(IValue::makeTuple({IValue::integer(k++), x}));
    return IValue::makeList(items);
  }
  if (name == "builtin::zip") {
    IValueList items;
    size_t len = SIZE_MAX;
    for (const IValue &a : args) {
      if (!a.isSequence())
        in.fail("CUVIL-E-IMPORT-TYPE", "zip() of a " + a.typeName());
      len = std::min(len, a.list->size());
    }
    for (size_t k = 0; k < len && !args.empty(); ++k) {
      IValueList row;
      for (const IValue &a : args)
        row.push_back((*a.list)[k]);
      items.push_back(IValue::makeTuple(row));
    }
    return IValue::makeList(items);
  }
  if ((name == "builtin::all" || name == "builtin::any" || name == "aten::all" ||
       name == "aten::any") && n == 1 && arg(0).isSequence()) {
    bool all = name.find("all") != std::string::npos, r = all;
    for (const IValue &x : *arg(0).list)
      r = all ? (r && in.truthy(x)) : (r || in.truthy(x));
    return IValue::boolean(r);
  }
  if (name == "aten::find" && n >= 2 && arg(0).is(K::Str) && arg(1).is(K::Str)) {
    const std::string &str = arg(0).s;
    int64_t size = static_cast<int64_t>(str.size());
    int64_t lo = n > 2 ? std::clamp<int64_t>(requireInt(arg(2)), 0, size) : 0;
    int64_t hi = n > 3 ? std::clamp<int64_t>(requireInt(arg(3)), 0, size) : size;
    size_t at = str.substr(0, hi).find(arg(1).s, lo);
    return IValue::integer(at == std::string::npos ? -1 : static_cast<int64_t>(at));
  }
  if ((name == "builtin::sum" || name == "aten::sum") && n >= 1 && arg(0).isSequence()) {
    IValue acc = n > 1 ? arg(1) : IValue::integer(0);
    for (const IValue &x : *arg(0).list)
      acc = in.binaryOp("+", acc, x);
    return acc;
  }
  if (name == "builtin::divmod" && n == 2)
    return IValue::makeTuple({in.binaryOp("//", arg(0), arg(1)), in.binaryOp("%", arg(0), arg(1))});
  // A range over run-time ints (its length is a run-time loop's count):
  // the same arithmetic on 0-d tensors; the step must be known.
  if (name == "aten::__range_length" && n == 3 && (isSymbolicInt(arg(0)) || isSymbolicInt(arg(1)))) {
    int64_t step = requireInt(arg(2));
    if (step == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "range step is zero");
    IValue span = step > 0 ? in.binaryOp("-", arg(1), arg(0)) : in.binaryOp("-", arg(0), arg(1));
    int64_t magnitude = step > 0 ? step : -step;
    IValue len = in.binaryOp("//", in.binaryOp("+", span, IValue::integer(magnitude - 1)),
                             IValue::integer(magnitude));
    IValue clamped = in.callOperator("aten::clamp", {len, IValue::integer(0), IValue::none()}, {});
    if (clamped.isTensor())
      clamped.tensor->symbolicInt = true;
    return clamped;
  }
  if (name == "aten::__derive_index" && n == 3 && (isSymbolicInt(arg(0)) || isSymbolicInt(arg(1))))
    return in.binaryOp("+", arg(1), in.binaryOp("*", arg(0), arg(2)));
  if (name == "aten::__range_length" && n == 3) {
    int64_t lo = requireInt(arg(0)), hi = requireInt(arg(1)), step = requireInt(arg(2));
    if (step == 0)
      in.fail("CUVIL-E-IMPORT-RAISE", "range step is zero");
    int64_t len = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0)
                           : (lo > hi ? (lo - hi - step - 1) / -step : 0);
    return IValue::integer(len);
  }
  if (name == "aten::__derive_index" && n == 3)
    return IValue::integer(requireInt(arg(1)) + requireInt(arg(0)) * requireInt(arg(2)));
  if (name == "prim::TupleIndex" && n == 2 && arg(0).isSequence()) {
    int64_t size = static_cast<int64_t>(arg(0).list->size()), i = requireInt(arg(1));
    i = i < 0 ? i + size : i;
    if (i < 0 || i >= size)
      in.fail("CUVIL-E-IMPORT-INDEX", "tuple index " + std::to_string(requireInt(arg(1))) + " out of range");
    return (*arg(0).list)[i];
  }

  // Everything below works on concrete values only.
  if (anyTensorOrPoison(args, kwargs)) {
    handled = false;
    return IValue();
  }

  // Arithmetic and comparisons on numbers ------------------------------------
  static const std::map<std::string, std::string> binops = {
      {"aten::add", "+"}, {"aten::sub", "-"}, {"aten::mul", "*"}, {"aten::div", "/"},
      {"aten::floordiv", "//"}, {"aten::remainder", "%"}, {"aten::pow", "**"},
      {"aten::__and__", "&"}, {"aten::__or__", "|"}, {"aten::__xor__", "^"},
      {"aten::__lshift__", "<<"}, {"aten::__rshift__", ">>"}, {"aten::mod", "%"}};
  auto bin = binops.find(name);
  if (bin != binops.end() && n == 2)
    return in.binaryOp(bin->second, arg(0), arg(1));
  static const std::map<std::string, std::string> cmps = {
      {"aten::eq", "=="}, {"aten::ne", "!="}, {"aten::lt", "<"},
      {"aten::le", "<="}, {"aten::gt", ">"}, {"aten::ge", ">="}};
  auto cmp = cmps.find(name);
  if (cmp != cmps.end() && n == 2)
    return in.compareOp(cmp->second, arg(0), arg(1));
  if (name == "aten::neg" && n == 1 && isNum(arg(0)))
    return arg(0).is(K::Float) ? IValue::floating(-arg(0).f) : IValue::integer(-asInt(arg(0)));
  if ((name == "aten::abs" || name == "builtin::abs") && n == 1 && isNum(arg(0)))
    return arg(0).is(K::Float) ? IValue::floating(std::fabs(arg(0).f)) : IValue::integer(std::llabs(asInt(arg(0))));
  static const std::map<std::string, double (*)(double)> floatFns = {
      {"aten::sqrt", [](double x) { return std::sqrt(x); }},
      {"aten::exp", [](double x) { return std::exp(x); }},
      {"aten::log", [](double x) { return std::log(x); }},
      {"aten::log10", [](double x) { return std::log10(x); }},
      {"aten::sin", [](double x) { return std::sin(x); }},
      {"aten::cos", [](double x) { return std::cos(x); }},
      {"aten::tanh", [](double x) { return std::tanh(x); }},
      {"aten::erf", [](double x) { return std::erf(x); }}};
  auto fn = floatFns.find(name);
  if (fn != floatFns.end() && n == 1 && isNum(arg(0)))
    return IValue::floating(fn->second(num(arg(0))));
  if ((name == "aten::floor" || name == "aten::ceil" || name == "aten::round" ||
       name == "builtin::round") && n == 1 && isNum(arg(0))) {
    double x = num(arg(0));
    double r = name == "aten::floor" ? std::floor(x) : name == "aten::ceil" ? std::ceil(x) : std::nearbyint(x);
    return IValue::integer(static_cast<int64_t>(r));
  }
  if (name == "builtin::int" || name == "aten::Int") {
    const IValue &v = arg(0);
    if (v.is(K::Float))
      return IValue::integer(static_cast<int64_t>(v.f));
    if (v.is(K::Str)) {
      char *end = nullptr;
      long long x = std::strtoll(v.s.c_str(), &end, 10);
      if (v.s.empty() || *end)
        in.fail("CUVIL-E-IMPORT-RAISE", "invalid literal for int(): '" + v.s + "'");
      return IValue::integer(x);
    }
    return IValue::integer(asInt(v));
  }
  if (name == "builtin::float" || name == "aten::Float") {
    const IValue &v = arg(0);
    if (v.is(K::Str)) {
      if (v.s == "inf") return IValue::floating(INFINITY);
      if (v.s == "-inf") return IValue::floating(-INFINITY);
      if (v.s == "nan") return IValue::floating(NAN);
      char *end = nullptr;
      double x = std::strtod(v.s.c_str(), &end);
      if (v.s.empty() || *end)
        in.fail("CUVIL-E-IMPORT-RAISE", "could not convert string to float: '" + v.s + "'");
      return IValue::floating(x);
    }
    return IValue::floating(num(v));
  }
  if (name == "builtin::bool" || name == "aten::Bool")
    return IValue::boolean(in.truthy(arg(0)));
  if (name == "builtin::str" || name == "aten::str")
    return IValue::string(arg(0).repr());
  if ((name == "builtin::min" || name == "builtin::max" || name == "prim::min" ||
       name == "prim::max" || name == "aten::min" || name == "aten::max") && n >= 1) {
    bool isMin = name.find("min") != std::string::npos;
    std::vector<IValue> items = n == 1 && arg(0).isSequence() ? *arg(0).list : args;
    if (items.empty())
      in.fail("CUVIL-E-IMPORT-RAISE", "min()/max() of an empty sequence");
    IValue best = items[0];
    for (const IValue &x : items)
      if (in.compareOp(isMin ? "<" : ">", x, best).b)
        best = x;
    return best;
  }

  if (name.rfind("builtin::", 0) == 0)
    in.fail("CUVIL-E-IMPORT-NAME", "'" + name.substr(9) + "' is not defined");
  handled = false;
  return IValue();
}

void registerBuiltinHandlers(std::map<std::string, OpHandler> &) {}

} // namespace cuvil::torchscript
