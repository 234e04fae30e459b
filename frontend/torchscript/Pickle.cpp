//===- Pickle.cpp - An allowlisting reader of PyTorch's pickles -----------===//
#include "frontend/torchscript/Pickle.h"

#include <cmath>
#include <cstdio>
#include <climits>
#include <cstring>
#include <unordered_map>

namespace cuvil::torchscript {

const PValue *PValue::get(std::string_view key) const {
  for (auto &[k, v] : dict)
    if (k->kind == Kind::String && k->str == key)
      return v;
  return nullptr;
}

const char *PValue::kindName() const {
  switch (kind) {
  case Kind::None: return "None";
  case Kind::Bool: return "bool";
  case Kind::Int: return "int";
  case Kind::Float: return "float";
  case Kind::String: return "str";
  case Kind::Bytes: return "bytes";
  case Kind::Tuple: return "tuple";
  case Kind::List: return "list";
  case Kind::Dict: return "dict";
  case Kind::Global: return "global";
  case Kind::Object: return "object";
  case Kind::Storage: return "storage";
  case Kind::Tensor: return "tensor";
  }
  return "?";
}

PValue *Pickle::make(PValue::Kind k) {
  arena_.emplace_back();
  arena_.back().kind = k;
  return &arena_.back();
}

namespace {
/// Storage classes PyTorch pickles, and their element types.
bool storageDType(const std::string &name, DType &out) {
  static const std::pair<const char *, DType> table[] = {
      {"torch.FloatStorage", DType::Float32}, {"torch.DoubleStorage", DType::Float64},
      {"torch.HalfStorage", DType::Float16},  {"torch.BFloat16Storage", DType::BFloat16},
      {"torch.LongStorage", DType::Int64},    {"torch.IntStorage", DType::Int32},
      {"torch.ShortStorage", DType::Int16},   {"torch.CharStorage", DType::Int8},
      {"torch.ByteStorage", DType::UInt8},    {"torch.BoolStorage", DType::Bool},
      // Quantized storages: the integers, read as their storage type.
      {"torch.QInt8Storage", DType::Int8},    {"torch.QUInt8Storage", DType::UInt8},
      {"torch.QInt32Storage", DType::Int32},
  };
  for (auto &[n, d] : table)
    if (name == n) {
      out = d;
      return true;
    }
  return false;
}

/// Callables REDUCE may apply; everything else is rejected at GLOBAL.
const char *const kAllowedCallables[] = {
    "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
    "collections.OrderedDict",         "torch.jit._pickle.build_intlist",
    "torch.jit._pickle.build_doublelist", "torch.jit._pickle.build_boollist",
    "torch.jit._pickle.build_tensorlist", "torch.jit._pickle.build_genericlist",
    "torch.jit._pickle.restore_type_tag", "torch.device",
    "torch._utils._rebuild_qtensor",
};
/// Values (not callables) a GLOBAL may name: quantization schemes.
const char *const kAllowedValues[] = {"torch.per_tensor_affine", "torch.per_channel_affine",
                                      "torch.per_channel_affine_float_qparams"};
} // namespace

/// The pickle virtual machine.
class PickleMachine {
public:
  PickleMachine(Pickle &p, std::string_view bytes, const std::string &name)
      : p_(p), data_(bytes), name_(name) {}

  Status run();

private:
  Error fail(const std::string &code, const std::string &msg) const {
    return inputError(name_ + ": " + code + ": " + msg + " (pickle offset " +
                      std::to_string(opOffset_) + ")");
  }
  Error corrupt(const std::string &msg) const {
    return fail("CUVIL-E-PICKLE-CORRUPT", msg);
  }
  bool need(size_t n) const { return data_.size() - pos_ >= n; }
  uint64_t readLE(int n) {
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k)
      v = (v << 8) | static_cast<unsigned char>(data_[pos_ + k]);
    pos_ += n;
    return v;
  }
  Status push(PValue *v) {
    if (stack_.size() >= kMaxStack)
      return corrupt("stack grows beyond " + std::to_string(kMaxStack) + " items");
    stack_.push_back(v);
    return Status::ok();
  }
  Result<PValue *> pop() {
    if (stack_.size() <= markBase())
      return corrupt("stack underflow");
    PValue *v = stack_.back();
    stack_.pop_back();
    return v;
  }
  size_t markBase() const { return marks_.empty() ? 0 : marks_.back(); }
  /// Items pushed since the last MARK (removed, and the mark popped).
  Result<std::vector<PValue *>> popMark() {
    if (marks_.empty())
      return corrupt("no MARK to pop to");
    size_t base = marks_.back();
    marks_.pop_back();
    std::vector<PValue *> items(stack_.begin() + base, stack_.end());
    stack_.resize(base);
    return items;
  }
  Status addChild(PValue *parent, PValue *child) {
    parent->depth = std::max(parent->depth, child->depth + 1);
    if (parent->depth > kMaxPickleDepth)
      return fail("CUVIL-E-PICKLE-DEPTH", "containers nest deeper than " +
                                              std::to_string(kMaxPickleDepth) +
                                              " levels (or form a cycle)");
    return Status::ok();
  }
  Result<std::string> readString(uint64_t len) {
    if (!need(len))
      return corrupt("a string of " + std::to_string(len) + " bytes runs past the end");
    std::string s(data_.substr(pos_, len));
    pos_ += len;
    return s;
  }
  Status global(const std::string &module, const std::string &name);
  Status reduce();
  Status build();
  Status newobj();
  Status persistentLoad();
  Status rebuildTensor(PValue *fn, const std::vector<PValue *> &args, PValue *&out);
  Status rebuildQTensor(const std::vector<PValue *> &args, PValue *&out);

  static constexpr size_t kMaxStack = 1 << 20;
  Pickle &p_;
  std::string_view data_;
  std::string name_;
  size_t pos_ = 0, opOffset_ = 0;
  std::vector<PValue *> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, PValue *> memo_;
};

Status PickleMachine::global(const std::string &module, const std::string &name) {
  std::string full = module + "." + name;
  PValue *g = p_.make(PValue::Kind::Global);
  g->str = full;
  DType d;
  bool allowed = module == "__torch__" || module.rfind("__torch__.", 0) == 0 ||
                 storageDType(full, d);
  for (const char *c : kAllowedCallables)
    allowed |= full == c;
  for (const char *c : kAllowedValues)
    allowed |= full == c;
  if (!allowed)
    return fail("CUVIL-E-PICKLE-GLOBAL", "global '" + full +
                                             "' is not allowed (Cuvil only rebuilds tensors, "
                                             "storages, ordered dicts and TorchScript objects; "
                                             "nothing is executed)");
  return push(g);
}

Status PickleMachine::persistentLoad() {
  Result<PValue *> pidOr = pop();
  if (!pidOr)
    return pidOr.error();
  PValue *pid = *pidOr;
  // ('storage', storage_type, key, location, numel)
  if (!pid->is(PValue::Kind::Tuple) || pid->items.size() != 5 ||
      !pid->items[0]->is(PValue::Kind::String) || pid->items[0]->str != "storage")
    return fail("CUVIL-E-PICKLE-PERSID",
                "persistent id is not a ('storage', type, key, location, numel) tuple");
  PValue *type = pid->items[1], *key = pid->items[2], *loc = pid->items[3],
         *numel = pid->items[4];
  DType dtype;
  if (!type->is(PValue::Kind::Global) || !storageDType(type->str, dtype))
    return fail("CUVIL-E-PICKLE-PERSID",
                std::string("unknown storage type '") +
                    (type->is(PValue::Kind::Global) ? type->str : type->kindName()) + "'");
  if (!key->is(PValue::Kind::String) || key->str.empty() ||
      key->str.find('/') != std::string::npos || key->str.find("..") != std::string::npos)
    return fail("CUVIL-E-PICKLE-PERSID", "storage key is not a plain record name");
  if (!loc->is(PValue::Kind::String))
    return fail("CUVIL-E-PICKLE-PERSID", "storage location is not a string");
  const std::string &l = loc->str;
  // Everything is loaded to the host; devices that have no data are refused.
  if (!(l == "cpu" || l.rfind("cuda", 0) == 0 || l.rfind("mps", 0) == 0))
    return fail("CUVIL-E-PICKLE-DEVICE",
                "storage '" + key->str + "' lives on device '" + l +
                    "', which has no data Cuvil can read");
  if (!numel->is(PValue::Kind::Int) || numel->i < 0)
    return fail("CUVIL-E-PICKLE-PERSID", "storage '" + key->str + "' has a negative size");
  PValue *s = p_.make(PValue::Kind::Storage);
  s->storageKey = key->str;
  s->dtype = dtype;
  s->storageNumel = numel->i;
  return push(s);
}

Status PickleMachine::rebuildTensor(PValue *fn, const std::vector<PValue *> &args,
                                    PValue *&out) {
  if (args.size() != 6 && args.size() != 7)
    return fail("CUVIL-E-PICKLE-TENSOR",
                "_rebuild_tensor_v2 takes 6 or 7 arguments, got " + std::to_string(args.size()));
  PValue *storage = args[0], *offset = args[1], *size = args[2], *stride = args[3];
  if (!storage->is(PValue::Kind::Storage) || !offset->is(PValue::Kind::Int) ||
      !size->is(PValue::Kind::Tuple) || !stride->is(PValue::Kind::Tuple) ||
      !args[4]->is(PValue::Kind::Bool))
    return fail("CUVIL-E-PICKLE-TENSOR", "_rebuild_tensor_v2 arguments have wrong types");
  if (size->items.size() != stride->items.size())
    return fail("CUVIL-E-PICKLE-TENSOR", "tensor size and stride have different ranks");
  if (size->items.size() > 16)
    return fail("CUVIL-E-PICKLE-TENSOR", "tensor rank above 16");
  PValue *t = p_.make(PValue::Kind::Tensor);
  t->storage = storage;
  t->dtype = storage->dtype;
  t->storageOffset = offset->i;
  for (size_t k = 0; k < size->items.size(); ++k) {
    PValue *sz = size->items[k], *st = stride->items[k];
    if (!sz->is(PValue::Kind::Int) || !st->is(PValue::Kind::Int) || sz->i < 0 || st->i < 0)
      return fail("CUVIL-E-PICKLE-TENSOR", "tensor sizes and strides must be non-negative ints");
    t->sizes.push_back(sz->i);
    t->strides.push_back(st->i);
  }
  t->requiresGrad = args[4]->b;
  // The extent must lie inside the storage, with checked arithmetic (B4).
  bool empty = false;
  int64_t extent = 0;
  for (size_t k = 0; k < t->sizes.size(); ++k) {
    if (t->sizes[k] == 0)
      empty = true;
    int64_t span;
    if (__builtin_mul_overflow(t->sizes[k] - (t->sizes[k] > 0), t->strides[k], &span) ||
        __builtin_add_overflow(extent, span, &extent))
      return fail("CUVIL-E-PICKLE-TENSOR", "tensor extent overflows int64");
  }
  int64_t last;
  if (t->storageOffset < 0 || __builtin_add_overflow(t->storageOffset, extent, &last))
    return fail("CUVIL-E-PICKLE-TENSOR", "tensor storage offset is invalid");
  if (!empty && last >= storage->storageNumel)
    return fail("CUVIL-E-PICKLE-TENSOR",
                "tensor reaches element " + std::to_string(last) + " of storage '" +
                    storage->storageKey + "', which holds " +
                    std::to_string(storage->storageNumel));
  (void)fn;
  out = t;
  return Status::ok();
}

/// _rebuild_qtensor(storage, offset, size, stride, quantizer_params,
/// requires_grad, backward_hooks): a tensor of the storage's integers and
/// its quantizer, (per_tensor_affine, scale, zero_point) or
/// (per_channel_affine, scales, zero_points, axis).
Status PickleMachine::rebuildQTensor(const std::vector<PValue *> &args, PValue *&out) {
  if (args.size() != 7)
    return fail("CUVIL-E-PICKLE-QTENSOR",
                "_rebuild_qtensor takes 7 arguments, got " + std::to_string(args.size()));
  std::vector<PValue *> plain = {args[0], args[1], args[2], args[3], args[5], args[6]};
  if (!args[5]->is(PValue::Kind::Bool))
    return fail("CUVIL-E-PICKLE-QTENSOR", "_rebuild_qtensor arguments have wrong types");
  if (Status s = rebuildTensor(nullptr, plain, out); !s)
    return s;
  DType d = out->dtype;
  if (d != DType::Int8 && d != DType::UInt8 && d != DType::Int32)
    return fail("CUVIL-E-PICKLE-QTENSOR", "a quantized tensor's storage must be qint8, quint8 or "
                                          "qint32, not " + std::string(dtypeName(d)));
  PValue *q = args[4];
  if (!q->is(PValue::Kind::Tuple) || q->items.empty() || !q->items[0]->is(PValue::Kind::Global))
    return fail("CUVIL-E-PICKLE-QTENSOR", "quantizer parameters are not a (qscheme, ...) tuple");
  const std::string &scheme = q->items[0]->str;
  int64_t qmin = d == DType::UInt8 ? 0 : d == DType::Int8 ? -128 : INT32_MIN;
  int64_t qmax = d == DType::UInt8 ? 255 : d == DType::Int8 ? 127 : INT32_MAX;
  if (scheme == "torch.per_tensor_affine") {
    if (q->items.size() != 3 || !(q->items[1]->is(PValue::Kind::Float) || q->items[1]->is(PValue::Kind::Int)) ||
        !q->items[2]->is(PValue::Kind::Int))
      return fail("CUVIL-E-PICKLE-QTENSOR",
                  "per_tensor_affine parameters are not (qscheme, float scale, int zero_point)");
    double scale = q->items[1]->is(PValue::Kind::Int) ? double(q->items[1]->i) : q->items[1]->f;
    if (!(scale > 0) || !std::isfinite(scale))
    {
      char text[32];
      std::snprintf(text, sizeof text, "%.9g", scale);
      return fail("CUVIL-E-PICKLE-QTENSOR", std::string("quantized tensor scale ") + text +
                                                " is not a positive finite number");
    }
    if (q->items[2]->i < qmin || q->items[2]->i > qmax)
      return fail("CUVIL-E-PICKLE-QTENSOR",
                  "quantized tensor zero point " + std::to_string(q->items[2]->i) + " is outside " +
                      std::string(dtypeName(d)) + " [" + std::to_string(qmin) + ", " +
                      std::to_string(qmax) + "]");
    out->qscheme = PValue::QScheme::PerTensorAffine;
    out->qscale = scale;
    out->qzeroPoint = q->items[2]->i;
  } else if (scheme == "torch.per_channel_affine") {
    if (q->items.size() != 4 || !q->items[1]->is(PValue::Kind::Tensor) ||
        !q->items[2]->is(PValue::Kind::Tensor) || !q->items[3]->is(PValue::Kind::Int))
      return fail("CUVIL-E-PICKLE-QTENSOR", "per_channel_affine parameters are not (qscheme, "
                                            "scales tensor, zero_points tensor, int axis)");
    int64_t axis = q->items[3]->i;
    if (axis < 0 || axis >= static_cast<int64_t>(out->sizes.size()))
      return fail("CUVIL-E-PICKLE-QTENSOR", "per-channel axis " + std::to_string(axis) +
                                                " is out of range for a rank-" +
                                                std::to_string(out->sizes.size()) + " tensor");
    PValue *scales = q->items[1], *zeros = q->items[2];
    int64_t channels = out->sizes[axis];
    if (scales->sizes.size() != 1 || scales->sizes[0] != channels || zeros->sizes.size() != 1 ||
        zeros->sizes[0] != channels)
      return fail("CUVIL-E-PICKLE-QTENSOR", "per-channel scales and zero points must hold one "
                                            "value for each of the " + std::to_string(channels) +
                                                " channels of axis " + std::to_string(axis));
    if (!isFloat(scales->dtype) || !isIntegral(zeros->dtype))
      return fail("CUVIL-E-PICKLE-QTENSOR",
                  "per-channel scales must be floats and zero points integers");
    out->qscheme = PValue::QScheme::PerChannelAffine;
    out->qscales = scales;
    out->qzeroPoints = zeros;
    out->qaxis = axis;
  } else {
    return fail("CUVIL-E-PICKLE-QTENSOR", "quantization scheme '" + scheme +
                                              "' is not supported (per_tensor_affine and "
                                              "per_channel_affine are)");
  }
  return addChild(out, q);
}

Status PickleMachine::reduce() {
  Result<PValue *> argsOr = pop();
  if (!argsOr)
    return argsOr.error();
  Result<PValue *> fnOr = pop();
  if (!fnOr)
    return fnOr.error();
  PValue *args = *argsOr, *fn = *fnOr;
  if (!fn->is(PValue::Kind::Global) || fn->str.rfind("__torch__", 0) == 0)
    return fail("CUVIL-E-PICKLE-REDUCE",
                std::string("REDUCE applies a ") + fn->kindName() +
                    (fn->is(PValue::Kind::Global) ? " '" + fn->str + "'" : "") +
                    ", which is not an allowed callable");
  if (!args->is(PValue::Kind::Tuple))
    return fail("CUVIL-E-PICKLE-REDUCE", "REDUCE arguments are not a tuple");
  const std::vector<PValue *> &a = args->items;
  const std::string &f = fn->str;
  PValue *out = nullptr;
  if (f == "torch._utils._rebuild_tensor_v2") {
    if (Status s = rebuildTensor(fn, a, out); !s)
      return s;
  } else if (f == "torch._utils._rebuild_qtensor") {
    if (Status s = rebuildQTensor(a, out); !s)
      return s;
  } else if (f == "torch._utils._rebuild_parameter") {
    if (a.size() < 1 || !a[0]->is(PValue::Kind::Tensor))
      return fail("CUVIL-E-PICKLE-TENSOR", "_rebuild_parameter expects a tensor");
    out = a[0];
  } else if (f == "collections.OrderedDict") {
    if (!a.empty())
      return fail("CUVIL-E-PICKLE-REDUCE", "OrderedDict() with arguments");
    out = p_.make(PValue::Kind::Dict);
  } else if (f.rfind("torch.jit._pickle.build_", 0) == 0) {
    if (a.size() != 1 || !a[0]->is(PValue::Kind::List))
      return fail("CUVIL-E-PICKLE-REDUCE", f + " expects one list");
    out = a[0];
  } else if (f == "torch.jit._pickle.restore_type_tag") {
    if (a.size() != 2)
      return fail("CUVIL-E-PICKLE-REDUCE", f + " expects two arguments");
    out = a[0];
  } else if (f == "torch.device") {
    if (a.size() != 1 || !a[0]->is(PValue::Kind::String))
      return fail("CUVIL-E-PICKLE-REDUCE", "torch.device expects a string");
    out = a[0];
  } else {
    return fail("CUVIL-E-PICKLE-REDUCE", "'" + f + "' cannot be called");
  }
  return push(out);
}

Status PickleMachine::newobj() {
  Result<PValue *> argsOr = pop();
  if (!argsOr)
    return argsOr.error();
  Result<PValue *> clsOr = pop();
  if (!clsOr)
    return clsOr.error();
  PValue *cls = *clsOr;
  if (!cls->is(PValue::Kind::Global) || cls->str.rfind("__torch__", 0) != 0)
    return fail("CUVIL-E-PICKLE-NEWOBJ",
                std::string("NEWOBJ on ") +
                    (cls->is(PValue::Kind::Global) ? "'" + cls->str + "'" : cls->kindName()) +
                    ": only TorchScript (__torch__) classes may be instantiated");
  if (!(*argsOr)->is(PValue::Kind::Tuple) || !(*argsOr)->items.empty())
    return fail("CUVIL-E-PICKLE-NEWOBJ", "TorchScript objects are created without arguments");
  PValue *obj = p_.make(PValue::Kind::Object);
  obj->str = cls->str;
  return push(obj);
}

Status PickleMachine::build() {
  Result<PValue *> stateOr = pop();
  if (!stateOr)
    return stateOr.error();
  if (stack_.size() <= markBase())
    return corrupt("BUILD with nothing to build");
  PValue *obj = stack_.back();
  if (!obj->is(PValue::Kind::Object))
    return fail("CUVIL-E-PICKLE-BUILD",
                std::string("BUILD on a ") + obj->kindName() + " (only TorchScript objects take state)");
  if (obj->state)
    return fail("CUVIL-E-PICKLE-BUILD", "object '" + obj->str + "' is built twice");
  obj->state = *stateOr;
  return addChild(obj, *stateOr);
}

Status PickleMachine::run() {
  bool stopped = false;
  while (!stopped) {
    opOffset_ = pos_;
    if (pos_ >= data_.size())
      return corrupt("the pickle ends without a STOP opcode");
    unsigned char op = static_cast<unsigned char>(data_[pos_++]);
    Status st = Status::ok();
    switch (op) {
    case 0x80: { // PROTO
      if (!need(1))
        return corrupt("truncated PROTO");
      int proto = static_cast<unsigned char>(data_[pos_++]);
      if (proto < 2 || proto > 5)
        return fail("CUVIL-E-PICKLE-PROTOCOL",
                    "pickle protocol " + std::to_string(proto) + " (supported 2 to 5)");
      break;
    }
    case 0x95: // FRAME
      if (!need(8))
        return corrupt("truncated FRAME");
      pos_ += 8;
      break;
    case '.': // STOP
      stopped = true;
      break;
    case '(': // MARK
      if (marks_.size() >= kMaxPickleDepth)
        return fail("CUVIL-E-PICKLE-DEPTH", "MARKs nest deeper than " + std::to_string(kMaxPickleDepth));
      marks_.push_back(stack_.size());
      break;
    case '0': { // POP
      Result<PValue *> v = pop();
      if (!v)
        return v.error();
      break;
    }
    case '1': { // POP_MARK
      Result<std::vector<PValue *>> items = popMark();
      if (!items)
        return items.error();
      break;
    }
    case '2': // DUP
      if (stack_.size() <= markBase())
        return corrupt("DUP on an empty stack");
      st = push(stack_.back());
      break;
    case 'N': st = push(p_.make(PValue::Kind::None)); break;
    case 0x88:
    case 0x89: {
      PValue *v = p_.make(PValue::Kind::Bool);
      v->b = op == 0x88;
      st = push(v);
      break;
    }
    case 'J': case 'K': case 'M': case 0x8a: case 0x8b: { // integers
      int64_t value;
      if (op == 'J') {
        if (!need(4)) return corrupt("truncated BININT");
        value = static_cast<int32_t>(readLE(4));
      } else if (op == 'K') {
        if (!need(1)) return corrupt("truncated BININT1");
        value = static_cast<int64_t>(readLE(1));
      } else if (op == 'M') {
        if (!need(2)) return corrupt("truncated BININT2");
        value = static_cast<int64_t>(readLE(2));
      } else {
        uint64_t n;
        if (op == 0x8a) {
          if (!need(1)) return corrupt("truncated LONG1");
          n = readLE(1);
        } else {
          if (!need(4)) return corrupt("truncated LONG4");
          n = readLE(4);
        }
        if (n > 8)
          return fail("CUVIL-E-PICKLE-INT", "integer of " + std::to_string(n) + " bytes exceeds int64");
        if (!need(n))
          return corrupt("truncated LONG");
        uint64_t raw = n ? readLE(static_cast<int>(n)) : 0;
        if (n > 0 && n < 8 && (raw >> (8 * n - 1)) & 1) // sign-extend
          raw |= ~uint64_t(0) << (8 * n);
        value = static_cast<int64_t>(raw);
      }
      PValue *v = p_.make(PValue::Kind::Int);
      v->i = value;
      st = push(v);
      break;
    }
    case 'G': { // BINFLOAT, big-endian
      if (!need(8))
        return corrupt("truncated BINFLOAT");
      uint64_t bits = 0;
      for (int k = 0; k < 8; ++k)
        bits = (bits << 8) | static_cast<unsigned char>(data_[pos_ + k]);
      pos_ += 8;
      PValue *v = p_.make(PValue::Kind::Float);
      std::memcpy(&v->f, &bits, 8);
      st = push(v);
      break;
    }
    case 'X': case 0x8c: case 0x8d: case 'B': case 'C': case 0x8e: case 'T': case 'U': {
      int lenBytes = (op == 0x8c || op == 'C' || op == 'U') ? 1
                     : (op == 0x8d || op == 0x8e)           ? 8
                                                             : 4;
      if (!need(lenBytes))
        return corrupt("truncated string length");
      uint64_t len = readLE(lenBytes);
      Result<std::string> s = readString(len);
      if (!s)
        return s.error();
      bool isBytes = op == 'B' || op == 'C' || op == 0x8e;
      PValue *v = p_.make(isBytes ? PValue::Kind::Bytes : PValue::Kind::String);
      v->str = std::move(*s);
      st = push(v);
      break;
    }
    case ')': st = push(p_.make(PValue::Kind::Tuple)); break;
    case ']': st = push(p_.make(PValue::Kind::List)); break;
    case '}': st = push(p_.make(PValue::Kind::Dict)); break;
    case 't': case 'l': { // TUPLE, LIST from mark
      Result<std::vector<PValue *>> items = popMark();
      if (!items)
        return items.error();
      PValue *v = p_.make(op == 't' ? PValue::Kind::Tuple : PValue::Kind::List);
      for (PValue *x : *items)
        if (Status s = addChild(v, x); !s)
          return s;
      v->items = std::move(*items);
      st = push(v);
      break;
    }
    case 0x85: case 0x86: case 0x87: { // TUPLE1..3
      size_t n = op - 0x84;
      if (stack_.size() < markBase() + n)
        return corrupt("stack underflow in TUPLE" + std::to_string(n));
      PValue *v = p_.make(PValue::Kind::Tuple);
      v->items.assign(stack_.end() - n, stack_.end());
      stack_.resize(stack_.size() - n);
      for (PValue *x : v->items)
        if (Status s = addChild(v, x); !s)
          return s;
      st = push(v);
      break;
    }
    case 'd': { // DICT from mark
      Result<std::vector<PValue *>> items = popMark();
      if (!items)
        return items.error();
      if (items->size() % 2)
        return corrupt("DICT with an odd number of items");
      PValue *v = p_.make(PValue::Kind::Dict);
      for (size_t k = 0; k < items->size(); k += 2) {
        if (Status s = addChild(v, (*items)[k + 1]); !s)
          return s;
        v->dict.emplace_back((*items)[k], (*items)[k + 1]);
      }
      st = push(v);
      break;
    }
    case 'a': case 'e': { // APPEND, APPENDS
      std::vector<PValue *> items;
      if (op == 'a') {
        Result<PValue *> v = pop();
        if (!v)
          return v.error();
        items.push_back(*v);
      } else {
        Result<std::vector<PValue *>> m = popMark();
        if (!m)
          return m.error();
        items = std::move(*m);
      }
      if (stack_.size() <= markBase())
        return corrupt("APPEND without a list");
      PValue *list = stack_.back();
      if (!list->is(PValue::Kind::List))
        return corrupt(std::string("APPEND to a ") + list->kindName());
      for (PValue *x : items) {
        if (x == list)
          return fail("CUVIL-E-PICKLE-DEPTH", "a list contains itself");
        if (Status s = addChild(list, x); !s)
          return s;
        list->items.push_back(x);
      }
      break;
    }
    case 's': case 'u': { // SETITEM, SETITEMS
      std::vector<PValue *> items;
      if (op == 's') {
        if (stack_.size() < markBase() + 3)
          return corrupt("SETITEM needs a dict, a key and a value");
        items.assign(stack_.end() - 2, stack_.end());
        stack_.resize(stack_.size() - 2);
      } else {
        Result<std::vector<PValue *>> m = popMark();
        if (!m)
          return m.error();
        items = std::move(*m);
        if (items.size() % 2)
          return corrupt("SETITEMS with an odd number of items");
      }
      if (stack_.size() <= markBase())
        return corrupt("SETITEM without a dict");
      PValue *dict = stack_.back();
      if (!dict->is(PValue::Kind::Dict))
        return corrupt(std::string("SETITEM on a ") + dict->kindName());
      for (size_t k = 0; k < items.size(); k += 2) {
        if (items[k + 1] == dict)
          return fail("CUVIL-E-PICKLE-DEPTH", "a dict contains itself");
        if (Status s = addChild(dict, items[k + 1]); !s)
          return s;
        dict->dict.emplace_back(items[k], items[k + 1]);
      }
      break;
    }
    case 'q': case 'r': case 0x94: { // BINPUT, LONG_BINPUT, MEMOIZE
      uint64_t idx;
      if (op == 0x94) {
        idx = memo_.size();
      } else {
        int n = op == 'q' ? 1 : 4;
        if (!need(n))
          return corrupt("truncated PUT");
        idx = readLE(n);
      }
      if (stack_.size() <= markBase())
        return corrupt("PUT on an empty stack");
      memo_[idx] = stack_.back();
      break;
    }
    case 'h': case 'j': { // BINGET, LONG_BINGET
      int n = op == 'h' ? 1 : 4;
      if (!need(n))
        return corrupt("truncated GET");
      uint64_t idx = readLE(n);
      auto it = memo_.find(idx);
      if (it == memo_.end())
        return corrupt("GET of memo entry " + std::to_string(idx) + ", which was never set");
      st = push(it->second);
      break;
    }
    case 'c': { // GLOBAL "module\nname\n"
      size_t nl1 = data_.find('\n', pos_);
      size_t nl2 = nl1 == std::string_view::npos ? nl1 : data_.find('\n', nl1 + 1);
      if (nl2 == std::string_view::npos || nl2 - pos_ > 1024)
        return corrupt("malformed GLOBAL");
      std::string module(data_.substr(pos_, nl1 - pos_));
      std::string name(data_.substr(nl1 + 1, nl2 - nl1 - 1));
      pos_ = nl2 + 1;
      st = global(module, name);
      break;
    }
    case 0x93: { // STACK_GLOBAL
      Result<PValue *> name = pop();
      if (!name)
        return name.error();
      Result<PValue *> module = pop();
      if (!module)
        return module.error();
      if (!(*name)->is(PValue::Kind::String) || !(*module)->is(PValue::Kind::String))
        return corrupt("STACK_GLOBAL needs two strings");
      st = global((*module)->str, (*name)->str);
      break;
    }
    case 'R': st = reduce(); break;
    case 0x81: st = newobj(); break;
    case 'b': st = build(); break;
    case 'Q': st = persistentLoad(); break;
    default: {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02x", op);
      return fail("CUVIL-E-PICKLE-OPCODE",
                  std::string("unsupported pickle opcode ") + hex);
    }
    }
    if (!st)
      return st;
  }
  if (pos_ != data_.size())
    return corrupt("data follows the STOP opcode");
  if (!marks_.empty())
    return corrupt("unbalanced MARK at the end");
  if (stack_.size() != 1)
    return corrupt("the pickle leaves " + std::to_string(stack_.size()) +
                   " values instead of one");
  p_.root_ = stack_.back();
  return Status::ok();
}

Result<Pickle> Pickle::parse(std::string_view bytes, const std::string &name) {
  Pickle p;
  PickleMachine m(p, bytes, name);
  if (Status s = m.run(); !s)
    return s.error();
  return p;
}

} // namespace cuvil::torchscript
