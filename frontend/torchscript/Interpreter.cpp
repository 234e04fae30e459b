//===- Interpreter.cpp - Partial evaluation of TorchScript code -----------===//
#include "frontend/torchscript/Interpreter.h"

#include "dialects/Cuvil/IR/RunTimeSizes.h"
#include "support/Crash/CrashRecovery.h"

#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/ElementTypes.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/Support/FormatVariadic.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>

namespace cir = mlir::cuvil;

namespace cuvil::torchscript {

IValue callRawBuiltin(Interpreter &in, const std::string &name,
                      std::vector<IValue> &args,
                      std::vector<std::pair<std::string, IValue>> &kwargs,
                      bool &handled);

//===----------------------------------------------------------------------===//
// IValue printing
//===----------------------------------------------------------------------===//

std::string IValue::typeName() const {
  switch (kind) {
  case Kind::None: return "None";
  case Kind::Bool: return "bool";
  case Kind::Int: return "int";
  case Kind::Float: return "float";
  case Kind::Str: return "str";
  case Kind::Device: return "Device";
  case Kind::Tensor: return "Tensor";
  case Kind::List: return list->empty() ? "List" : "List[" + list->front().typeName() + "]";
  case Kind::Tuple: {
    std::string s = "Tuple[";
    for (size_t k = 0; k < list->size(); ++k)
      s += (k ? ", " : "") + (*list)[k].typeName();
    return s + "]";
  }
  case Kind::Dict: return "Dict";
  case Kind::Object: return object->className;
  case Kind::Function: return "function";
  case Kind::Method: return "method";
  case Kind::Builtin: return "builtin";
  case Kind::Namespace: return "namespace";
  case Kind::Type: return "type";
  case Kind::Uninitialized: return "uninitialized";
  case Kind::Poison: return "<unsupported>";
  }
  return "?";
}

std::string IValue::repr() const {
  std::ostringstream os;
  switch (kind) {
  case Kind::None: return "None";
  case Kind::Bool: return b ? "True" : "False";
  case Kind::Int: return std::to_string(i);
  case Kind::Float: {
    os.precision(17);
    os << f;
    return os.str();
  }
  case Kind::Str: return s;
  case Kind::Device: return s;
  case Kind::List:
  case Kind::Tuple: {
    os << (kind == Kind::List ? "[" : "(");
    for (size_t k = 0; k < list->size(); ++k)
      os << (k ? ", " : "") << (*list)[k].repr();
    if (kind == Kind::Tuple && list->size() == 1)
      os << ",";
    os << (kind == Kind::List ? "]" : ")");
    return os.str();
  }
  default:
    return "<" + typeName() + ">";
  }
}

//===----------------------------------------------------------------------===//
// Bound arguments
//===----------------------------------------------------------------------===//

const IValue &BoundArgs::get(const std::string &name) const {
  for (size_t k = 0; k < schema->args.size(); ++k)
    if (schema->args[k].name == name)
      return values[k];
  static const IValue none;
  return none;
}

bool BoundArgs::has(const std::string &name) const {
  for (const SchemaArg &a : schema->args)
    if (a.name == name)
      return true;
  return false;
}

std::map<std::string, OpHandler> &runTimeSizeHandlers() {
  static std::map<std::string, OpHandler> table = [] {
    std::map<std::string, OpHandler> t;
    registerRunTimeSizeHandlers(t);
    return t;
  }();
  return table;
}

std::map<std::string, OpHandler> &opHandlers() {
  static std::map<std::string, OpHandler> table = [] {
    std::map<std::string, OpHandler> t;
    registerBuiltinHandlers(t);
    registerTensorHandlers(t);
    registerCompositeHandlers(t);
    registerRecurrentHandlers(t);
    registerMathHandlers(t);
    registerIndexHandlers(t);
    registerTensorOpHandlers(t);
    registerSortHandlers(t);
    registerLossHandlers(t);
    registerLinalgOpHandlers(t);
    registerFormulaOpHandlers(t);
    registerPoolWindowOpHandlers(t);
    registerSignalHandlers(t);
    registerQuantizedHandlers(t);
    return t;
  }();
  return table;
}

std::optional<DType> dtypeFromScalarType(int64_t code) {
  switch (code) {
  case 0: return DType::UInt8;
  case 1: return DType::Int8;
  case 2: return DType::Int16;
  case 3: return DType::Int32;
  case 4: return DType::Int64;
  case 5: return DType::Float16;
  case 6: return DType::Float32;
  case 7: return DType::Float64;
  case 11: return DType::Bool;
  case 15: return DType::BFloat16;
  default: return std::nullopt;
  }
}

int64_t scalarTypeFromDType(DType d) {
  switch (d) {
  case DType::UInt8: return 0;
  case DType::Int8: return 1;
  case DType::Int16: return 2;
  case DType::Int32: return 3;
  case DType::Int64: return 4;
  case DType::Float16: return 5;
  case DType::Float32: return 6;
  case DType::Float64: return 7;
  case DType::Bool: return 11;
  case DType::BFloat16: return 15;
  case DType::Complex64: return 9;
  case DType::Complex128: return 10;
  }
  return 6;
}

//===----------------------------------------------------------------------===//
// Construction, errors, locations
//===----------------------------------------------------------------------===//

Interpreter::Interpreter(TorchScriptArchive &archive, mlir::MLIRContext &ctx,
                         mlir::func::FuncOp func)
    : archive_(archive), ctx_(&ctx), func_(func), builder_(&ctx), constants_(&ctx) {
  mlir::Block &entry = func.getBody().front();
  builder_.setInsertionPointToEnd(&entry);
  constants_.setInsertionPointToStart(&entry);
  frames_.emplace_back(); // the import's own frame (no site)
}

std::string Interpreter::siteDescription() {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (!it->site || !it->file)
      continue;
    auto [line, col] = it->file->lineCol(it->site->range.start);
    std::string s = it->file->name + ":" + std::to_string(line) + ":" + std::to_string(col);
    // The outermost frame with an original location is the user's code.
    std::string user;
    for (const Frame &f : frames_)
      if (f.site && f.file)
        if (auto orig = archive_.originalLocation(*f.file, f.site->range.start)) {
          user = orig->file + ":" + std::to_string(orig->line);
          break;
        }
    std::string inner;
    if (auto orig = archive_.originalLocation(*it->file, it->site->range.start))
      inner = orig->file + ":" + std::to_string(orig->line);
    if (!inner.empty() && inner != user)
      s += " (" + inner + (user.empty() ? "" : ", called from " + user) + ")";
    else if (!user.empty())
      s += " (" + user + ")";
    return s;
  }
  return "the model";
}

void Interpreter::fail(const std::string &code, const std::string &msg) {
  throw ImportError(siteDescription() + ": " + code + ": " + msg);
}

void Interpreter::warn(const std::string &msg) {
  warnings_.push_back(siteDescription() + ": " + msg);
}

IValue Interpreter::unsupported(const std::string &what) {
  // The user's own line: the outermost frame with an original location.
  std::string where;
  for (const Frame &f : frames_)
    if (f.site && f.file)
      if (auto orig = archive_.originalLocation(*f.file, f.site->range.start)) {
        where = orig->file + ":" + std::to_string(orig->line);
        break;
      }
  if (where.empty())
    where = siteDescription();
  for (UnsupportedItem &item : unsupported_)
    if (item.what == what) {
      item.locations.push_back(where);
      return IValue::poison();
    }
  unsupported_.push_back({what, {where}});
  return IValue::poison();
}

mlir::Location Interpreter::locationOf(const Frame &f) {
  auto [line, col] = f.file->lineCol(f.site->range.start);
  if (auto orig = archive_.originalLocation(*f.file, f.site->range.start))
    return mlir::FileLineColLoc::get(ctx_, orig->file, orig->line, 0);
  return mlir::FileLineColLoc::get(ctx_, f.file->name, line, col);
}

mlir::Location Interpreter::location() {
  std::optional<mlir::Location> loc;
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    if (!it->site || !it->file)
      continue;
    mlir::Location here = locationOf(*it);
    loc = loc ? mlir::Location(mlir::CallSiteLoc::get(*loc, here)) : here;
  }
  return loc ? *loc : mlir::UnknownLoc::get(ctx_);
}

mlir::Value Interpreter::finishBuild(mlir::Operation *op) {
  std::string diag;
  {
    mlir::ScopedDiagnosticHandler capture(ctx_, [&](mlir::Diagnostic &d) {
      if (!diag.empty())
        diag += "; ";
      diag += d.str();
      return mlir::success();
    });
    bool ok = true;
    if (auto infer = llvm::dyn_cast<mlir::InferTypeOpInterface>(op)) {
      llvm::SmallVector<mlir::Type> types;
      ok = mlir::succeeded(infer.inferReturnTypes(
          ctx_, op->getLoc(), op->getOperands(), op->getAttrDictionary(),
          op->getPropertiesStorage(), op->getRegions(), types));
      if (ok)
        for (auto [r, t] : llvm::zip(op->getResults(), types))
          r.setType(t);
    }
    if (ok)
      ok = mlir::succeeded(mlir::verify(op, /*verifyRecursively=*/false));
    if (ok)
      return op->getResult(0);
  }
  std::string name = op->getName().getStringRef().str();
  op->erase();
  fail("CUVIL-E-IMPORT-OP", "cannot build '" + name + "': " +
                                (diag.empty() ? std::string("invalid operands") : diag));
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

using mlir::cuvil::elementTypeOf;

IValue Interpreter::weight(const PValue &t, bool fromConstants, const std::string &name) {
  auto it = weights_.find(&t);
  if (it != weights_.end())
    return it->second;
  if (t.qscheme != PValue::QScheme::None) {
    // The integers as a constant of their storage type; the parameters,
    // checked, as the #cuvil.quant the quantized ops take.
    PValue plain = t;
    plain.qscheme = PValue::QScheme::None;
    IValue storage = weight(plain, fromConstants, name);
    weights_.erase(&plain);
    std::vector<double> scales;
    std::vector<int64_t> zeros;
    int64_t axis = -1;
    if (t.qscheme == PValue::QScheme::PerTensorAffine) {
      scales.push_back(t.qscale);
      zeros.push_back(t.qzeroPoint);
    } else {
      scales = tensorValues(*t.qscales, fromConstants, name + " scales");
      for (double z : tensorValues(*t.qzeroPoints, fromConstants, name + " zero points"))
        zeros.push_back(static_cast<int64_t>(z));
      axis = t.qaxis;
    }
    int64_t qmin = t.dtype == DType::UInt8 ? 0 : t.dtype == DType::Int8 ? -128 : INT32_MIN;
    int64_t qmax = t.dtype == DType::UInt8 ? 255 : t.dtype == DType::Int8 ? 127 : INT32_MAX;
    for (size_t k = 0; k < scales.size(); ++k) {
      if (!(scales[k] > 0) || !std::isfinite(scales[k]))
        fail("CUVIL-E-IMPORT-QPARAMS", "quantized tensor '" + name + "': scale " +
                                           llvm::formatv("{0}", scales[k]).str() + " of channel " +
                                           std::to_string(k) + " is not a positive finite number");
      if (zeros[k] < qmin || zeros[k] > qmax)
        fail("CUVIL-E-IMPORT-QPARAMS", "quantized tensor '" + name + "': zero point " +
                                           std::to_string(zeros[k]) + " of channel " +
                                           std::to_string(k) + " is outside [" +
                                           std::to_string(qmin) + ", " + std::to_string(qmax) + "]");
    }
    auto params = cir::QuantParamsAttr::get(ctx_, mlir::DenseF64ArrayAttr::get(ctx_, scales),
                                            mlir::DenseI64ArrayAttr::get(ctx_, zeros), axis);
    // The dequantized weights dominate every use, as the constants do.
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointAfterValue(storage.tensor->value);
    IValue result = makeQuantized(*this, storage.tensor->value, params);
    weights_[&t] = result;
    return result;
  }
  Result<TensorData> data = archive_.tensorData(t, fromConstants);
  if (!data)
    throw ImportError(data.error().message);
  auto type = mlir::RankedTensorType::get(data->shape, elementTypeOf(ctx_, data->dtype));
  mlir::ElementsAttr attr;
  if (data->size == 0) {
    attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<mlir::Attribute>{});
  } else {
    std::shared_ptr<char> keep = data->bytes;
    mlir::AsmResourceBlob blob(
        llvm::ArrayRef<char>(keep.get(), data->size), /*alignment=*/64,
        [keep](void *, size_t, size_t) mutable { keep.reset(); },
        /*dataIsMutable=*/false);
    attr = mlir::DenseResourceElementsAttr::get(type, cir::resourceKey(name), std::move(blob));
  }
  // Weights go at the top of the function, in the order first used, so
  // that a first use inside a data-dependent branch or loop still sees
  // them defined before it.
  if (lastWeight_)
    constants_.setInsertionPointAfter(lastWeight_);
  else
    constants_.setInsertionPointToStart(&func_.getBody().front());
  mlir::Value v = constants_.create<cir::ConstantOp>(
      mlir::NameLoc::get(mlir::StringAttr::get(ctx_, name)), type, attr);
  lastWeight_ = v.getDefiningOp();
  IValue result = IValue::ofTensor(v);
  weights_[&t] = result;
  return result;
}

IValue Interpreter::packedParamsFor(const PValue *obj, const std::string &path) {
  if (auto it = weights_.find(obj); it != weights_.end())
    return it->second;
  std::string kind = obj->str.substr(obj->str.rfind('.') + 1);
  auto bad = [&](const std::string &msg) {
    fail("CUVIL-E-IMPORT-PACKED", "packed weights '" + path + "' (" + kind + "): " + msg);
  };
  const PValue *st = obj->state;
  if (!st || !st->is(PValue::Kind::Tuple))
    bad("the state is not a tuple");
  const std::vector<PValue *> &items = st->items;
  auto isQTensor = [](const PValue *v) {
    return v->is(PValue::Kind::Tensor) && v->qscheme != PValue::QScheme::None;
  };
  auto isBias = [](const PValue *v) {
    return v->is(PValue::Kind::None) ||
           (v->is(PValue::Kind::Tensor) && v->qscheme == PValue::QScheme::None && isFloat(v->dtype));
  };
  auto ints = [](const std::vector<int64_t> &v) {
    IValueList out;
    for (int64_t x : v)
      out.push_back(IValue::integer(x));
    return IValue::makeList(std::move(out));
  };
  IValue result;
  if (kind == "LinearPackedParamsBase") {
    // (weight, bias)
    if (items.size() != 2)
      bad("the state holds " + std::to_string(items.size()) + " items, not (weight, bias)");
    if (!isQTensor(items[0]))
      bad("the weight is not a quantized tensor");
    if (!isBias(items[1]))
      bad("the bias is neither None nor a float tensor");
    result = callOperator("quantized::linear_prepack",
                          {fromPickle(items[0], path + ".weight", 1), fromPickle(items[1], path + ".bias", 1)}, {});
  } else if (kind == "Conv2dPackedParamsBase") {
    // Version 2: ("2", [config (int16), weight], [bias]); version 3:
    // (3, [config ints], [weight, bias]). The configuration is spatial
    // dims, stride, padding, dilation, output padding (two each), groups,
    // flags (bit 0: transposed).
    if (items.size() != 3 || !items[1]->is(PValue::Kind::List) || !items[2]->is(PValue::Kind::List))
      bad("the state is not a (version, [...], [...]) tuple");
    std::vector<int64_t> config;
    const PValue *w = nullptr, *bias = nullptr;
    bool v2 = items[0]->is(PValue::Kind::String) && items[0]->str == "2";
    bool v3 = items[0]->is(PValue::Kind::Int) && items[0]->i == 3;
    if (v2) {
      if (items[1]->items.size() != 2 || !items[1]->items[0]->is(PValue::Kind::Tensor) ||
          items[1]->items[0]->qscheme != PValue::QScheme::None || !isIntegral(items[1]->items[0]->dtype))
        bad("version 2 state does not hold [configuration tensor, weight]");
      for (double x : tensorValues(*items[1]->items[0], path.rfind("constants.", 0) == 0, path))
        config.push_back(static_cast<int64_t>(x));
      w = items[1]->items[1];
      if (items[2]->items.size() != 1)
        bad("version 2 state does not hold [bias]");
      bias = items[2]->items[0];
    } else if (v3) {
      for (const PValue *x : items[1]->items) {
        if (!x->is(PValue::Kind::Int))
          bad("version 3 configuration holds a " + std::string(x->kindName()));
        config.push_back(x->i);
      }
      if (items[2]->items.size() != 2)
        bad("version 3 state does not hold [weight, bias]");
      w = items[2]->items[0];
      bias = items[2]->items[1];
    } else {
      bad("unknown serialization version (Cuvil reads versions 2 and 3)");
    }
    if (config.size() != 11 || config[0] != 2)
      bad("the configuration holds " + std::to_string(config.size()) +
          " values; a 2-D convolution's has 11 (spatial dims 2, stride, padding, dilation, output "
          "padding, groups, flags)");
    if (!isQTensor(w))
      bad("the weight is not a quantized tensor");
    if (!isBias(bias))
      bad("the bias is neither None nor a float tensor");
    std::vector<int64_t> stride(config.begin() + 1, config.begin() + 3),
        padding(config.begin() + 3, config.begin() + 5), dilation(config.begin() + 5, config.begin() + 7),
        outputPadding(config.begin() + 7, config.begin() + 9);
    for (int64_t x : stride)
      if (x < 1) bad("stride " + std::to_string(x) + " is not positive");
    for (int64_t x : dilation)
      if (x < 1) bad("dilation " + std::to_string(x) + " is not positive");
    for (int64_t x : padding)
      if (x < 0) bad("padding " + std::to_string(x) + " is negative");
    bool transposed = config[10] & 1;
    IValue wv = fromPickle(w, path + ".weight", 1), bv = fromPickle(bias, path + ".bias", 1);
    if (transposed)
      result = callOperator("quantized::conv_transpose2d_prepack",
                            {wv, bv, ints(stride), ints(padding), ints(outputPadding), ints(dilation),
                             IValue::integer(config[9])}, {});
    else
      result = callOperator("quantized::conv2d_prepack",
                            {wv, bv, ints(stride), ints(padding), ints(dilation), IValue::integer(config[9])}, {});
  } else {
    fail("CUVIL-E-IMPORT-PACKED", "packed weights '" + path + "' are a torch.classes.quantized." + kind +
                                      ", which Cuvil does not read (it reads Conv2dPackedParamsBase and "
                                      "LinearPackedParamsBase)");
  }
  if (result.is(IValue::Kind::Object))
    result.object->path = path;
  weights_[obj] = result;
  return result;
}

/// torch.classes.rnn.CellParamsBase: the weights of one (layer, direction)
/// of a dynamically quantized LSTM/GRU, pickled as ("quantized_dynamic",
/// [b_ih, b_hh], [], [reduce_range], [packed_ih, packed_hh]). The other
/// kinds (static "quantized", "quantized_fp16") are reported unsupported.
IValue Interpreter::cellParamsFor(const PValue *obj, const std::string &path) {
  if (auto it = weights_.find(obj); it != weights_.end())
    return it->second;
  auto bad = [&](const std::string &msg) {
    fail("CUVIL-E-IMPORT-PACKED", "recurrent cell weights '" + path + "' (CellParamsBase): " + msg);
  };
  const PValue *st = obj->state;
  if (!st || !st->is(PValue::Kind::Tuple) || st->items.size() != 5)
    bad("the state is not a (kind, tensors, doubles, ints, packed weights) tuple");
  const std::vector<PValue *> &items = st->items;
  if (!items[0]->is(PValue::Kind::String))
    bad("the state's kind is not a string");
  for (size_t i = 1; i < 5; ++i)
    if (!items[i]->is(PValue::Kind::List))
      bad("the state's item " + std::to_string(i) + " is not a list");
  if (items[0]->str != "quantized_dynamic")
    return unsupported("a recurrent layer with '" + items[0]->str +
                       "' cell weights (Cuvil reads int8 dynamic quantization, 'quantized_dynamic')");
  const std::vector<PValue *> &ints = items[3]->items, &packed = items[4]->items;
  if (packed.size() != 2)
    bad("it holds " + std::to_string(packed.size()) + " packed weights, not (weight_ih, weight_hh)");
  if (ints.size() > 1 || (ints.size() == 1 && !ints[0]->is(PValue::Kind::Int) && !ints[0]->is(PValue::Kind::Bool)))
    bad("its integer list is not [reduce_range]");
  bool reduceRange = !ints.empty() && (ints[0]->is(PValue::Kind::Bool) ? ints[0]->b : ints[0]->i != 0);
  IValue ih, hh;
  for (size_t i = 0; i < 2; ++i) {
    if (!packed[i]->is(PValue::Kind::Object) ||
        packed[i]->str != "__torch__.torch.classes.quantized.LinearPackedParamsBase")
      bad("its packed weights are not torch.classes.quantized.LinearPackedParamsBase");
    (i ? hh : ih) = packedParamsFor(packed[i], path + (i ? ".weight_hh" : ".weight_ih"));
  }
  IValue result = makeDynamicCellParams(*this, ih, hh, reduceRange);
  result.object->path = path;
  weights_[obj] = result;
  return result;
}

std::vector<double> Interpreter::tensorValues(const PValue &t, bool fromConstants,
                                              const std::string &what) {
  Result<TensorData> data = archive_.tensorData(t, fromConstants);
  if (!data)
    throw ImportError(data.error().message);
  Tensor host(data->dtype, data->shape);
  if (data->size)
    std::memcpy(host.data(), data->bytes.get(), data->size);
  std::vector<double> out = host.toDoubles();
  (void)what;
  return out;
}

std::optional<Tensor> Interpreter::foldToConstant(mlir::Value v) {
  // Small sizes and a bounded walk: this is for shape arithmetic.
  constexpr int64_t kMaxElements = 64;
  int budget = 256;
  std::map<mlir::Operation *, llvm::SmallVector<Tensor>> done;
  std::function<std::optional<Tensor>(mlir::Value)> fold = [&](mlir::Value x) -> std::optional<Tensor> {
    auto type = llvm::dyn_cast<mlir::RankedTensorType>(x.getType());
    mlir::Operation *def = x.getDefiningOp();
    if (!type || !type.hasStaticShape() || type.getNumElements() > kMaxElements || !def ||
        def->getNumRegions() != 0 || --budget < 0)
      return std::nullopt;
    unsigned index = llvm::cast<mlir::OpResult>(x).getResultNumber();
    if (auto it = done.find(def); it != done.end())
      return it->second[index];
    llvm::SmallVector<Tensor> results;
    if (auto c = llvm::dyn_cast<cir::ConstantOp>(def)) {
      mlir::FailureOr<Tensor> t = mlir::cuvil::reference::tensorFromAttr(c.getValue(), c.getLoc());
      if (mlir::failed(t))
        return std::nullopt;
      results.push_back(std::move(*t));
    } else {
      if (!llvm::isa<cir::CuvilDialect>(def->getDialect()) || !mlir::cuvil::reference::canEvaluate(def) ||
          !mlir::isMemoryEffectFree(def))
        return std::nullopt;
      llvm::SmallVector<Tensor> operands;
      for (mlir::Value operand : def->getOperands()) {
        std::optional<Tensor> t = fold(operand);
        if (!t)
          return std::nullopt;
        operands.push_back(std::move(*t));
      }
      // A failing evaluation (say, a division by zero) just does not fold.
      mlir::ScopedDiagnosticHandler quiet(ctx_, [](mlir::Diagnostic &) { return mlir::success(); });
      mlir::FailureOr<llvm::SmallVector<Tensor>> r = mlir::cuvil::reference::evaluateOp(def, operands);
      if (mlir::failed(r))
        return std::nullopt;
      results = std::move(*r);
    }
    Tensor out = results[index];
    done[def] = std::move(results);
    return out;
  };
  return fold(v);
}

mlir::Value Interpreter::scalarConstant(const IValue &v, DType dtype) {
  auto type = mlir::RankedTensorType::get({}, elementTypeOf(ctx_, dtype));
  mlir::Attribute value;
  if (isFloat(dtype)) {
    double x = v.is(IValue::Kind::Float) ? v.f : v.is(IValue::Kind::Bool) ? double(v.b) : double(v.i);
    auto ft = llvm::cast<mlir::FloatType>(type.getElementType());
    bool lossy;
    llvm::APFloat ap(x);
    ap.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lossy);
    value = mlir::FloatAttr::get(ft, ap);
  } else if (dtype == DType::Bool) { // a number as a bool is "!= 0" (NaN too)
    bool x = v.is(IValue::Kind::Float) ? v.f != 0.0 : v.is(IValue::Kind::Bool) ? v.b : v.i != 0;
    value = mlir::BoolAttr::get(ctx_, x);
  } else {
    int64_t x = v.is(IValue::Kind::Float) ? static_cast<int64_t>(v.f)
                : v.is(IValue::Kind::Bool) ? int64_t(v.b) : v.i;
    auto it = llvm::cast<mlir::IntegerType>(type.getElementType());
    llvm::APInt wide(64, static_cast<uint64_t>(x), /*isSigned=*/true);
    value = mlir::IntegerAttr::get(it, it.getWidth() < 64 ? wide.trunc(it.getWidth()) : wide);
  }
  auto attr = mlir::DenseElementsAttr::get(type, value);
  return builder_.create<cir::ConstantOp>(location(), type, attr);
}

//===----------------------------------------------------------------------===//
// Module objects and pickled values
//===----------------------------------------------------------------------===//

IValue Interpreter::rootModule() { return objectFor(archive_.root(), ""); }

IValue Interpreter::objectFor(const PValue *obj, const std::string &path) {
  if (obj->str.rfind("__torch__.torch.classes.quantized.", 0) == 0)
    return packedParamsFor(obj, path);
  if (obj->str == "__torch__.torch.classes.rnn.CellParamsBase")
    return cellParamsFor(obj, path);
  // Other C++ classes of PyTorch's have no code to run.
  if (obj->str.rfind("__torch__.torch.classes.", 0) == 0)
    return unsupported("the PyTorch C++ class " + obj->str.substr(10));
  auto it = objects_.find(obj);
  if (it == objects_.end()) {
    auto inst = std::make_shared<ObjectInst>();
    inst->className = obj->str;
    size_t dot = obj->str.rfind('.');
    std::string module = dot == std::string::npos ? obj->str : obj->str.substr(0, dot);
    std::string cls = dot == std::string::npos ? obj->str : obj->str.substr(dot + 1);
    Result<const SourceFile *> file = archive_.codeFile(module);
    if (!file)
      throw ImportError(file.error().message);
    if (*file)
      inst->cls = (*file)->findClass(cls);
    if (!inst->cls)
      fail("CUVIL-E-IMPORT-CLASS", "class '" + obj->str + "' has no code in the archive");
    inst->file = *file;
    inst->path = path;
    if (obj->state && !obj->state->is(PValue::Kind::Dict)) {
      // A class with its own __setstate__ (quantized modules pickle a tuple
      // of their fields): the method runs once, here, with the object's
      // attributes writable while it does.
      const FuncDef *setstate = inst->cls->method("__setstate__");
      if (!setstate)
        fail("CUVIL-E-IMPORT-CLASS", "object of class '" + obj->str +
                                         "' has a state that is not a dict and no __setstate__");
      it = objects_.emplace(obj, inst).first;
      IValue self;
      self.kind = IValue::Kind::Object;
      self.object = inst;
      inst->local = true;
      IValue state = fromPickle(obj->state, path, 1);
      callFunction(setstate, inst->file, &self, {state}, {});
      inst->local = false;
    } else {
      inst->state = obj->state;
      it = objects_.emplace(obj, inst).first;
    }
  }
  IValue v;
  v.kind = IValue::Kind::Object;
  v.object = it->second;
  return v;
}

IValue Interpreter::fromPickle(const PValue *v, const std::string &path, int depth) {
  if (depth > kMaxPickleDepth)
    fail("CUVIL-E-IMPORT-DEPTH", "module state nests too deeply (or is cyclic) at " + path);
  switch (v->kind) {
  case PValue::Kind::None: return IValue::none();
  case PValue::Kind::Bool: return IValue::boolean(v->b);
  case PValue::Kind::Int: return IValue::integer(v->i);
  case PValue::Kind::Float: return IValue::floating(v->f);
  case PValue::Kind::String: return IValue::string(v->str);
  case PValue::Kind::Tensor: {
    bool fromConstants = path.rfind("constants.", 0) == 0;
    return weight(*v, fromConstants, path);
  }
  case PValue::Kind::Tuple:
  case PValue::Kind::List: {
    IValueList items;
    for (size_t k = 0; k < v->items.size(); ++k)
      items.push_back(fromPickle(v->items[k], path + "." + std::to_string(k), depth + 1));
    return v->kind == PValue::Kind::Tuple ? IValue::makeTuple(std::move(items))
                                          : IValue::makeList(std::move(items));
  }
  case PValue::Kind::Dict: {
    IValue d;
    d.kind = IValue::Kind::Dict;
    d.dict = std::make_shared<IValueDict>();
    for (auto &[k, val] : v->dict) {
      IValue key = fromPickle(k, path, depth + 1);
      d.dict->emplace_back(key, fromPickle(val, path + "." + key.repr(), depth + 1));
    }
    return d;
  }
  case PValue::Kind::Object: {
    IValue o = objectFor(v, path);
    if (!o.is(IValue::Kind::Object)) // unsupported: poison
      return o;
    if (o.object->path.empty())
      o.object->path = path;
    return o;
  }
  default:
    fail("CUVIL-E-IMPORT-STATE",
         std::string("module state '") + path + "' holds a " + v->kindName() +
             ", which a model cannot use");
  }
}

IValue Interpreter::resolveQualified(const std::string &path) {
  size_t dot = path.rfind('.');
  if (dot != std::string::npos) {
    std::string module = path.substr(0, dot), name = path.substr(dot + 1);
    Result<const SourceFile *> file = archive_.codeFile(module);
    if (!file)
      throw ImportError(file.error().message);
    if (*file) {
      if (const FuncDef *fn = (*file)->findFunction(name)) {
        IValue f;
        f.kind = IValue::Kind::Function;
        f.func = fn;
        f.file = *file;
        return f;
      }
      if ((*file)->findClass(name)) {
        IValue t;
        t.kind = IValue::Kind::Type;
        t.s = path;
        return t;
      }
    }
  }
  return IValue::ns(path);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

IValue Interpreter::newObject(const IValue &type) {
  if (!type.is(IValue::Kind::Type))
    fail("CUVIL-E-IMPORT-TYPE", "__new__ expects a class, got " + type.typeName());
  size_t dot = type.s.rfind('.');
  const ClassDef *cls = nullptr;
  const SourceFile *file = nullptr;
  if (dot != std::string::npos)
    if (Result<const SourceFile *> f = archive_.codeFile(type.s.substr(0, dot)); f && *f) {
      file = *f;
      cls = file->findClass(type.s.substr(dot + 1));
    }
  if (!cls)
    fail("CUVIL-E-IMPORT-UNSUPPORTED", "class '" + type.s + "' is not defined in the archive's code");
  auto obj = std::make_shared<ObjectInst>();
  obj->className = type.s;
  obj->cls = cls;
  obj->file = file;
  obj->local = true;
  IValue v;
  v.kind = IValue::Kind::Object;
  v.object = obj;
  return v;
}

IValue Interpreter::getAttr(const IValue &base, const std::string &name) {
  switch (base.kind) {
  case IValue::Kind::Poison:
    return base;
  case IValue::Kind::Object: {
    ObjectInst &obj = *base.object;
    auto it = obj.attrs.find(name);
    if (it != obj.attrs.end())
      return it->second;
    if (obj.native) {
      // The packed-parameter classes' one method: unpack() -> (w, b).
      if (name == "unpack") {
        IValue m = IValue::builtin(obj.attrs.count("transposed") ? "quantized::conv2d_unpack"
                                                                 : "quantized::linear_unpack");
        m.list = std::make_shared<IValueList>(IValueList{base});
        return m;
      }
      fail("CUVIL-E-IMPORT-ATTR", "'" + obj.className + "' has no attribute '" + name + "'");
    }
    if (obj.state)
      if (const PValue *v = obj.state->get(name)) {
        // Weights and submodules are named after their attribute path
        // ("layer1.0.conv1.weight") for readable IR.
        IValue value = fromPickle(v, obj.path.empty() ? name : obj.path + "." + name, 0);
        obj.attrs[name] = value;
        return value;
      }
    if (const FuncDef *m = obj.cls->method(name)) {
      IValue f;
      f.kind = IValue::Kind::Method;
      f.func = m;
      f.file = obj.file;
      f.object = base.object;
      return f;
    }
    if (const ClassAttr *a = obj.cls->attr(name)) {
      if (a->value) {
        frames_.emplace_back();
        frames_.back().file = obj.file;
        IValue v;
        try {
          v = eval(a->value);
        } catch (...) {
          frames_.pop_back();
          throw;
        }
        frames_.pop_back();
        obj.attrs[name] = v;
        return v;
      }
      fail("CUVIL-E-IMPORT-ATTR", "attribute '" + name + "' of '" + obj.className +
                                      "' is declared but has no value in the archive");
    }
    fail("CUVIL-E-IMPORT-ATTR", "'" + obj.className + "' has no attribute '" + name + "'");
  }
  case IValue::Kind::Namespace: {
    const std::string &p = base.s;
    if (p == "torch") {
      static const char *const subs[] = {"_C", "_nn", "nn", "functional", "jit", "linalg",
                                         "special", "fft", "_VF", "_jit_internal", "autograd"};
      for (const char *s : subs)
        if (name == s)
          return IValue::ns("torch." + name);
      return IValue::builtin("aten::" + name);
    }
    if (p == "torch.linalg")
      return IValue::builtin("aten::linalg_" + name);
    if (p == "torch.special")
      return IValue::builtin("aten::special_" + name);
    if (p == "torch.fft")
      return IValue::builtin("aten::fft_" + name);
    if (p.rfind("torch.", 0) == 0)
      return IValue::builtin("aten::" + name);
    if (p == "ops")
      return IValue::ns("ops." + name);
    if (p.rfind("ops.", 0) == 0)
      return IValue::builtin(p.substr(4) + "::" + name);
    if (p == "math")
      return IValue::builtin("aten::" + name);
    if (p == "CONSTANTS") {
      if (name.size() < 2 || name[0] != 'c')
        fail("CUVIL-E-IMPORT-ATTR", "unknown constant CONSTANTS." + name);
      char *end = nullptr;
      long long idx = std::strtoll(name.c_str() + 1, &end, 10);
      const PValue *c = *end == '\0' && idx >= 0 ? archive_.constant(static_cast<size_t>(idx)) : nullptr;
      if (!c)
        fail("CUVIL-E-IMPORT-ATTR", "CONSTANTS." + name + " is not in constants.pkl (" +
                                        std::to_string(archive_.numConstants()) + " constants)");
      return fromPickle(c, "constants." + name, 0);
    }
    return resolveQualified(p + "." + name);
  }
  case IValue::Kind::Tensor: {
    if (name == "shape")
      return callOperator("aten::size", {base}, {});
    if (name == "dtype")
      return callOperator("prim::dtype", {base}, {});
    if (name == "real" || name == "imag")
      return callOperator("aten::" + name, {base}, {});
    if (name == "device")
      return IValue::device("cpu");
    if (name == "ndim")
      return callOperator("aten::dim", {base}, {});
    if (name == "is_cuda" || name == "is_nested" || name == "is_quantized" ||
        name == "is_sparse" || name == "requires_grad" || name == "is_mkldnn")
      return IValue::boolean(false);
    if (name == "T")
      return callOperator("aten::numpy_T", {base}, {});
    if (SchemaTable::get().overloads("aten::" + name).empty())
      fail("CUVIL-E-IMPORT-ATTR", "a Tensor has no attribute '" + name + "'");
    IValue bound = IValue::builtin("aten::" + name);
    bound.list = std::make_shared<IValueList>(IValueList{base});
    return bound;
  }
  case IValue::Kind::Type:
    if (name == "__new__") { // Cls.__new__(Cls): an object with no attributes yet
      IValue f = IValue::builtin("builtin::__new__");
      return f;
    }
    break;
  case IValue::Kind::Device:
    if (name == "type")
      return IValue::string(base.s.substr(0, base.s.find(':')));
    if (name == "index")
      return IValue::none();
    break;
  case IValue::Kind::Tuple:
    if (base.fields) { // a NamedTuple's field
      auto it = std::find(base.fields->begin(), base.fields->end(), name);
      if (it != base.fields->end())
        return (*base.list)[it - base.fields->begin()];
    }
    break;
  case IValue::Kind::List:
  case IValue::Kind::Str:
  case IValue::Kind::Dict: {
    if (SchemaTable::get().overloads("aten::" + name).empty())
      break;
    IValue bound = IValue::builtin("aten::" + name);
    bound.list = std::make_shared<IValueList>(IValueList{base});
    return bound;
  }
  default:
    break;
  }
  fail("CUVIL-E-IMPORT-ATTR", "a " + base.typeName() + " has no attribute '" + name + "'");
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

namespace {

bool matchesBase(SchemaType::Base base, const IValue &v) {
  using B = SchemaType::Base;
  using K = IValue::Kind;
  switch (base) {
  case B::Tensor: return v.isTensor();
  case B::Int: return v.is(K::Int);
  case B::Float: return v.is(K::Float) || v.is(K::Int);
  case B::Bool: return v.is(K::Bool);
  case B::Str: return v.is(K::Str);
  case B::Scalar: return v.isScalar();
  case B::Generic:
  case B::Any: return true;
  case B::Device: return v.is(K::Device) || v.is(K::Str);
  case B::ScalarType:
  case B::Layout:
  case B::MemoryFormat: return v.is(K::Int);
  case B::Generator: return false;
  case B::Complex: return false;
  case B::Dict: return v.is(K::Dict);
  case B::Tuple: return v.is(K::Tuple);
  case B::Other: return v.is(K::Object); // a class (torch.classes.*)
  }
  return false;
}

/// Whether `v` can be passed as `t`, and the value as the callee sees it.
bool matchArg(const SchemaType &t, const IValue &v, IValue &out) {
  out = v;
  if (v.isNone())
    return t.optional || (!t.list && (t.base == SchemaType::Base::Any ||
                                      t.base == SchemaType::Base::Generic));
  if (t.list) {
    if (v.isSequence()) {
      for (const IValue &item : *v.list)
        if (!(item.isNone() && t.elemOptional) && !matchesBase(t.base, item))
          return false;
      if (v.is(IValue::Kind::Tuple)) // tuples pass as lists
        out = IValue::makeList(*v.list);
      if (t.base == SchemaType::Base::Float)
        for (IValue &item : *out.list)
          if (item.is(IValue::Kind::Int))
            item = IValue::floating(double(item.i));
      return true;
    }
    // int[2] takes a single int and repeats it.
    if (t.fixedSize > 0 && matchesBase(t.base, v) && !v.isSequence()) {
      out = IValue::makeList(IValueList(static_cast<size_t>(t.fixedSize), v));
      return true;
    }
    return false;
  }
  if (!matchesBase(t.base, v))
    return false;
  if (t.base == SchemaType::Base::Float && v.is(IValue::Kind::Int))
    out = IValue::floating(double(v.i));
  return true;
}

IValue fromLiteral(const SchemaLiteral &lit) {
  switch (lit.kind) {
  case SchemaLiteral::Kind::None: return IValue::none();
  case SchemaLiteral::Kind::Bool: return IValue::boolean(lit.b);
  case SchemaLiteral::Kind::Int: return IValue::integer(lit.i);
  case SchemaLiteral::Kind::Float: return IValue::floating(lit.f);
  case SchemaLiteral::Kind::Str: return IValue::string(lit.s);
  case SchemaLiteral::Kind::List: {
    IValueList items;
    for (const SchemaLiteral &x : lit.items)
      items.push_back(fromLiteral(x));
    return IValue::makeList(std::move(items));
  }
  }
  return IValue::none();
}

bool bindArgs(const Schema &s, const std::vector<IValue> &args,
          const std::vector<std::pair<std::string, IValue>> &kwargs, BoundArgs &out) {
  out.schema = &s;
  out.values.assign(s.args.size(), IValue());
  std::vector<bool> filled(s.args.size(), false);
  size_t positional = 0;
  for (const IValue &a : args) {
    if (positional >= s.args.size() || s.args[positional].kwOnly) {
      if (!s.varargs)
        return false;
      out.values.push_back(a);
      continue;
    }
    if (!matchArg(s.args[positional].type, a, out.values[positional]))
      return false;
    filled[positional++] = true;
  }
  for (auto &[name, v] : kwargs) {
    size_t k = 0;
    while (k < s.args.size() && s.args[k].name != name)
      ++k;
    if (k == s.args.size() || filled[k])
      return false;
    if (!matchArg(s.args[k].type, v, out.values[k]))
      return false;
    filled[k] = true;
  }
  for (size_t k = 0; k < s.args.size(); ++k) {
    if (filled[k])
      continue;
    if (!s.args[k].hasDefault)
      return false;
    IValue d = fromLiteral(s.args[k].defaultValue);
    IValue converted;
    if (!d.isNone() && matchArg(s.args[k].type, d, converted))
      d = converted;
    out.values[k] = d;
  }
  return true;
}

} // namespace

namespace {
/// Whether a value or any item inside it is poison. Visits each container
/// once: code can build cyclic lists (l.append(l)).
bool containsPoison(const IValue &v, std::set<const void *> &seen, int depth = 0) {
  if (v.is(IValue::Kind::Poison))
    return true;
  if (depth > 256) // only adversarial code nests containers this deep
    return false;
  if (v.isSequence() && seen.insert(v.list.get()).second)
    for (const IValue &x : *v.list)
      if (containsPoison(x, seen, depth + 1))
        return true;
  if (v.is(IValue::Kind::Dict) && seen.insert(v.dict.get()).second)
    for (auto &kv : *v.dict)
      if (containsPoison(kv.second, seen, depth + 1))
        return true;
  return false;
}
bool containsPoison(const IValue &v) {
  if (!v.isSequence() && !v.is(IValue::Kind::Dict))
    return v.is(IValue::Kind::Poison);
  std::set<const void *> seen;
  return containsPoison(v, seen);
}
} // namespace

bool bindOperatorArgs(const std::string &name, const std::vector<IValue> &args,
                      const std::vector<std::pair<std::string, IValue>> &kwargs, BoundArgs &out) {
  for (const Schema *s : SchemaTable::get().overloads(name))
    if (bindArgs(*s, args, kwargs, out))
      return true;
  return false;
}

IValue Interpreter::callOperator(const std::string &name, std::vector<IValue> args,
                                 std::vector<std::pair<std::string, IValue>> kwargs) {
  // An unsupported result poisons what is computed from it. Container
  // mutators store it (the container is then poisoned) so that later uses
  // are not computed from a list that silently lacks an item.
  static const std::set<std::string> storesItems = {"aten::append", "aten::insert",
                                                    "aten::_set_item", "aten::extend"};
  if (!storesItems.count(name)) {
    for (const IValue &a : args)
      if (containsPoison(a))
        return IValue::poison();
    for (auto &kv : kwargs)
      if (containsPoison(kv.second))
        return IValue::poison();
  }
  // A run-time Python float next to integer or bool tensors only: the
  // default float, as PyTorch's wrapped numbers (a 0-d f64 tensor would
  // make the result f64).
  {
    bool floatTensor = false, otherTensor = false, symbolicFloat = false;
    auto scan = [&](const IValue &v) {
      if (!v.isTensor())
        return;
      if (v.tensor->symbolicFloat) {
        symbolicFloat = true;
        return;
      }
      if (v.tensor->symbolicInt)
        return;
      otherTensor = true;
      floatTensor |= llvm::isa<mlir::FloatType>(
          llvm::cast<mlir::RankedTensorType>(v.tensor->value.getType()).getElementType());
    };
    for (const IValue &a : args)
      scan(a);
    for (auto &kv : kwargs)
      scan(kv.second);
    if (symbolicFloat && otherTensor && !floatTensor) {
      auto f32 = mlir::RankedTensorType::get({}, builder().getF32Type());
      auto demote = [&](IValue &v) {
        if (v.isTensor() && v.tensor->symbolicFloat)
          v = IValue::ofTensor(builder().create<mlir::cuvil::CastOp>(location(), f32, v.tensor->value));
      };
      for (IValue &a : args)
        demote(a);
      for (auto &kv : kwargs)
        demote(kv.second);
    }
  }
  // Complex tensors: their dtype; their sizes are those of a part; no
  // other builtin of the interpreter knows them (the schema path does).
  bool complexArg = false;
  for (const IValue &a : args)
    complexArg |= a.isTensor() && a.tensor->complex;
  for (auto &kv : kwargs)
    complexArg |= kv.second.isTensor() && kv.second.tensor->complex;
  bool rawBuiltins = true;
  if (complexArg) {
    if ((name == "prim::dtype" || name == "aten::dtype") && args.size() == 1)
      return IValue::integer(
          llvm::cast<mlir::RankedTensorType>(args[0].tensor->value.getType()).getElementType().isF64() ? 10 : 9);
    static const std::set<std::string> sizeQueries = {"aten::size", "aten::dim", "aten::numel", "aten::len",
                                                      "aten::__len__", "prim::shape"};
    static const std::set<std::string> dataReads = {
        "builtin::int", "aten::Int", "aten::item", "builtin::float", "aten::Float", "aten::ScalarImplicit",
        "builtin::bool", "aten::Bool", "aten::view", "aten::reshape"};
    if (name == "aten::is_floating_point")
      return IValue::boolean(false);
    if (sizeQueries.count(name)) {
      for (IValue &a : args)
        if (a.isTensor() && a.tensor->complex)
          a = callOperator("aten::real", {a}, {});
    } else if (dataReads.count(name)) {
      rawBuiltins = false;
    }
  }
  bool handled = false;
  IValue onQuantized = lowerOnQuantized(*this, name, args, kwargs, handled);
  if (handled)
    return onQuantized;
  IValue raw = rawBuiltins ? callRawBuiltin(*this, name, args, kwargs, handled) : IValue();
  if (handled)
    return raw;
  std::vector<const Schema *> candidates = SchemaTable::get().overloads(name);
  if (candidates.empty())
    return unsupported(name);
  BoundArgs bound;
  const Schema *match = nullptr;
  for (const Schema *s : candidates)
    if (bindArgs(*s, args, kwargs, bound)) {
      match = s;
      break;
    }
  if (!match) {
    // Traced models pass 0-d tensors where numbers are meant (sizes turned
    // into tensors by prim::NumToTensor): those known at import time are
    // taken as the numbers they hold.
    auto asNumber = [&](IValue &v) {
      if (!v.isTensor() || v.tensor->symbolicInt || v.tensor->symbolicFloat ||
          llvm::cast<mlir::RankedTensorType>(v.tensor->value.getType()).getRank() != 0)
        return false;
      std::optional<Tensor> c = foldToConstant(v.tensor->value);
      if (!c)
        return false;
      v = isFloat(c->dtype()) ? IValue::floating(c->getDouble(0))
          : c->dtype() == DType::Bool ? IValue::boolean(c->getInt(0) != 0)
                                      : IValue::integer(c->getInt(0));
      return true;
    };
    std::vector<IValue> numArgs = args;
    std::vector<std::pair<std::string, IValue>> numKwargs = kwargs;
    bool converted = false;
    for (IValue &v : numArgs)
      converted |= asNumber(v);
    for (auto &kv : numKwargs)
      converted |= asNumber(kv.second);
    if (converted)
      for (const Schema *s : candidates)
        if (bindArgs(*s, numArgs, numKwargs, bound)) {
          match = s;
          break;
        }
  }
  if (!match) {
    // Traced models pass sizes as 0-d tensors (prim::NumToTensor of
    // x.size(1)): where no schema takes one, an integer computed from
    // dimensions only is a run-time int.
    auto asRunTimeInt = [](IValue &v) {
      if (!v.isTensor() || v.tensor->symbolicInt || v.tensor->symbolicFloat || v.tensor->complex)
        return;
      auto t = llvm::cast<mlir::RankedTensorType>(v.tensor->value.getType());
      if (t.getRank() != 0 || !t.getElementType().isSignlessInteger() || t.getElementType().isInteger(1) ||
          !mlir::cuvil::isComputedFromShapes(v.tensor->value) || v.tensor->value.getDefiningOp<mlir::cuvil::ConstantOp>())
        return;
      auto box = std::make_shared<TensorBox>();
      box->value = v.tensor->value;
      box->symbolicInt = true;
      v = IValue::ofTensor(box);
    };
    for (IValue &v : args)
      asRunTimeInt(v);
    for (auto &kv : kwargs)
      asRunTimeInt(kv.second);
    auto symbolic = [](const IValue &v) {
      if (v.isTensor())
        return v.tensor->symbolicInt || v.tensor->symbolicFloat;
      if (v.isSequence())
        for (const IValue &x : *v.list)
          if (x.isTensor() && (x.tensor->symbolicInt || x.tensor->symbolicFloat))
            return true;
      return false;
    };
    bool anySymbolic = llvm::any_of(args, symbolic);
    for (auto &kv : kwargs)
      anySymbolic |= symbolic(kv.second);
    auto &sized = runTimeSizeHandlers();
    if (auto handler = sized.find(name); anySymbolic && handler != sized.end()) {
      // Bound with each run-time number standing in as 1 (a list's items
      // too), then the arguments that held one are given back.
      auto standIn = [&](const IValue &v) {
        auto one = [](const IValue &x) {
          if (x.isTensor() && x.tensor->symbolicInt)
            return IValue::integer(1);
          if (x.isTensor() && x.tensor->symbolicFloat)
            return IValue::floating(1.0);
          return x;
        };
        if (!v.isSequence())
          return one(v);
        IValueList items;
        for (const IValue &x : *v.list)
          items.push_back(one(x));
        return IValue::makeList(std::move(items));
      };
      std::vector<IValue> standInArgs;
      std::vector<std::pair<std::string, IValue>> standInKwargs;
      for (const IValue &v : args)
        standInArgs.push_back(standIn(v));
      for (auto &[k, v] : kwargs)
        standInKwargs.emplace_back(k, standIn(v));
      for (const Schema *s : candidates) {
        if (!bindArgs(*s, standInArgs, standInKwargs, bound))
          continue;
        auto giveBack = [&](size_t k, const IValue &v) {
          if (k < bound.values.size() && symbolic(v))
            bound.values[k] = v.isSequence() ? IValue::makeList(*v.list) : v;
        };
        for (size_t k = 0; k < args.size() && k < s->args.size(); ++k)
          giveBack(k, args[k]);
        for (auto &[key, v] : kwargs)
          for (size_t k = 0; k < s->args.size(); ++k)
            if (s->args[k].name == key)
              giveBack(k, v);
        return handler->second(*this, bound);
      }
    }
    if (anySymbolic)
      return unsupported(name + " with a number known only at run time (computed from tensor "
                                "data or a '?' dimension)");
    std::string got;
    for (const IValue &a : args)
      got += (got.empty() ? "" : ", ") + a.typeName();
    for (auto &[k, v] : kwargs)
      got += (got.empty() ? "" : ", ") + k + "=" + v.typeName();
    std::string options;
    for (const Schema *s : candidates)
      options += "\n  " + s->signature();
    fail("CUVIL-E-IMPORT-SCHEMA",
         "no overload of " + name + " takes (" + got + "); candidates:" + options);
  }
  if (needsComplexLowering(name, bound))
    return lowerComplexOperator(*this, name, bound);
  auto &table = opHandlers();
  auto it = table.find(name);
  if (it == table.end())
    return unsupported(name);
  // Named in the internal-error report should the translation crash.
  std::pair<Interpreter *, const std::string *> site{this, &name};
  cuvil::CrashFrame frame(
      [](const void *cookie, llvm::raw_ostream &os) {
        auto *s = static_cast<const std::pair<Interpreter *, const std::string *> *>(cookie);
        os << "importing " << *s->second << " at " << s->first->siteDescription();
      },
      &site);
  cuvil::crashPoint("import", name);
  return it->second(*this, bound);
}

IValue Interpreter::call(const IValue &callee, std::vector<IValue> args,
                         std::vector<std::pair<std::string, IValue>> kwargs) {
  switch (callee.kind) {
  case IValue::Kind::Poison:
    return callee;
  case IValue::Kind::Function:
    return callFunction(callee.func, callee.file, nullptr, std::move(args), std::move(kwargs));
  case IValue::Kind::Method: {
    IValue self;
    self.kind = IValue::Kind::Object;
    self.object = callee.object;
    return callFunction(callee.func, callee.file, &self, std::move(args), std::move(kwargs));
  }
  case IValue::Kind::Object:
    return call(getAttr(callee, "forward"), std::move(args), std::move(kwargs));
  case IValue::Kind::Builtin: {
    if (callee.list) // a bound method of a tensor, list or string
      args.insert(args.begin(), callee.list->begin(), callee.list->end());
    return callOperator(callee.s, std::move(args), std::move(kwargs));
  }
  case IValue::Kind::Type: {
    // A NamedTuple class (torchvision's GoogLeNetOutputs, ...): a tuple of
    // its fields in declaration order, by position or keyword; fields not
    // given take their default, else None (Optional fields).
    size_t dot = callee.s.rfind('.');
    const ClassDef *cls = nullptr;
    const SourceFile *file = nullptr;
    if (dot != std::string::npos)
      if (Result<const SourceFile *> f = archive_.codeFile(callee.s.substr(0, dot)); f && *f) {
        file = *f;
        cls = file->findClass(callee.s.substr(dot + 1));
      }
    bool namedTuple = cls && cls->base && cls->base->kind == Expr::Kind::Name &&
                      (cls->base->name == "NamedTuple" || cls->base->name == "typing.NamedTuple");
    if (!namedTuple)
      fail("CUVIL-E-IMPORT-UNSUPPORTED",
           "constructing objects of class '" + callee.s + "' is not supported");
    auto names = std::make_shared<std::vector<std::string>>();
    for (const ClassAttr &a : cls->attrs)
      names->push_back(a.name);
    if (args.size() > names->size())
      fail("CUVIL-E-IMPORT-CALL", callee.s + " takes " + std::to_string(names->size()) +
                                      " fields, got " + std::to_string(args.size()));
    IValueList items(names->size(), IValue::none());
    std::vector<bool> given(names->size(), false);
    for (size_t i = 0; i < args.size(); ++i) {
      items[i] = args[i];
      given[i] = true;
    }
    for (auto &[k, v] : kwargs) {
      auto it = std::find(names->begin(), names->end(), k);
      if (it == names->end())
        fail("CUVIL-E-IMPORT-CALL", callee.s + " has no field '" + k + "'");
      items[it - names->begin()] = v;
      given[it - names->begin()] = true;
    }
    for (size_t i = 0; i < items.size(); ++i)
      if (!given[i] && cls->attrs[i].value) {
        frames_.emplace_back();
        frames_.back().file = file;
        items[i] = eval(cls->attrs[i].value);
        frames_.pop_back();
      }
    IValue t = IValue::makeTuple(std::move(items));
    t.fields = names;
    return t;
  }
  default:
    fail("CUVIL-E-IMPORT-CALL", "a " + callee.typeName() + " is not callable");
  }
}

/// Pushes a frame for the duration of a call.
class FrameScope {
public:
  FrameScope(Interpreter &in, const SourceFile *file) : in_(in) {
    if (in.frames_.size() > 200)
      in.fail("CUVIL-E-IMPORT-RECURSION",
              "calls nest more than 200 deep (recursive functions are not supported)");
    in.frames_.emplace_back();
    in.frames_.back().file = file;
  }
  ~FrameScope() { in_.frames_.pop_back(); }

private:
  Interpreter &in_;
};

IValue Interpreter::callFunction(const FuncDef *fn, const SourceFile *file,
                                 const IValue *self, std::vector<IValue> args,
                                 std::vector<std::pair<std::string, IValue>> kwargs) {
  if (self)
    args.insert(args.begin(), *self);
  std::map<std::string, IValue> locals;
  std::vector<bool> filled(fn->params.size(), false);
  if (args.size() > fn->params.size())
    fail("CUVIL-E-IMPORT-CALL", "'" + fn->name + "' takes " +
                                    std::to_string(fn->params.size()) + " arguments, got " +
                                    std::to_string(args.size()));
  for (size_t k = 0; k < args.size(); ++k) {
    locals[fn->params[k].name] = args[k];
    filled[k] = true;
  }
  for (auto &[name, v] : kwargs) {
    size_t k = 0;
    while (k < fn->params.size() && fn->params[k].name != name)
      ++k;
    if (k == fn->params.size())
      fail("CUVIL-E-IMPORT-CALL", "'" + fn->name + "' has no parameter '" + name + "'");
    locals[name] = v;
    filled[k] = true;
  }
  FrameScope scope(*this, file);
  for (size_t k = 0; k < fn->params.size(); ++k) {
    if (filled[k])
      continue;
    if (!fn->params[k].defaultValue)
      fail("CUVIL-E-IMPORT-CALL", "'" + fn->name + "' is missing argument '" +
                                      fn->params[k].name + "'");
    locals[fn->params[k].name] = eval(fn->params[k].defaultValue);
  }
  frames_.back().locals = std::move(locals);
  IValue ret;
  exec(fn->body, ret);
  return ret;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

Interpreter::Flow Interpreter::exec(const std::vector<Stmt *> &body, IValue &ret) {
  for (const Stmt *s : body) {
    Flow f = execStmt(s, ret);
    if (f != Flow::Normal)
      return f;
  }
  return Flow::Normal;
}

bool Interpreter::truthy(const IValue &v) {
  switch (v.kind) {
  case IValue::Kind::Bool: return v.b;
  case IValue::Kind::Int: return v.i != 0;
  case IValue::Kind::Float: return v.f != 0.0;
  case IValue::Kind::None: return false;
  case IValue::Kind::Str: return !v.s.empty();
  case IValue::Kind::List:
  case IValue::Kind::Tuple: return !v.list->empty();
  case IValue::Kind::Dict: return !v.dict->empty();
  case IValue::Kind::Object:
  case IValue::Kind::Device: return true;
  case IValue::Kind::Tensor:
    unsupported("control flow that depends on tensor values (a condition computed from tensor data)");
    throw StopImport();
  case IValue::Kind::Poison:
    // A condition computed from an unsupported op: nothing more can be
    // learned on this path; report what was found.
    throw StopImport();
  default:
    fail("CUVIL-E-IMPORT-TYPE", "a " + v.typeName() + " has no truth value");
  }
}

std::vector<IValue> Interpreter::iterate(const IValue &v) {
  switch (v.kind) {
  case IValue::Kind::List:
  case IValue::Kind::Tuple:
    return *v.list;
  case IValue::Kind::Dict: {
    std::vector<IValue> keys;
    for (auto &kv : *v.dict)
      keys.push_back(kv.first);
    return keys;
  }
  case IValue::Kind::Str: {
    std::vector<IValue> chars;
    for (char c : v.s)
      chars.push_back(IValue::string(std::string(1, c)));
    return chars;
  }
  case IValue::Kind::Poison:
    throw StopImport();
  case IValue::Kind::Tensor:
    unsupported("iterating over a tensor");
    throw StopImport();
  default:
    fail("CUVIL-E-IMPORT-TYPE", "a " + v.typeName() + " is not iterable");
  }
}

Interpreter::Flow Interpreter::execStmt(const Stmt *s, IValue &ret) {
  Frame &frame = frames_.back();
  switch (s->kind) {
  case Stmt::Kind::Expr:
    eval(s->value);
    return Flow::Normal;
  case Stmt::Kind::Assign: {
    IValue v = eval(s->value);
    for (const Expr *t : s->targets)
      assign(t, v);
    return Flow::Normal;
  }
  case Stmt::Kind::AnnAssign:
    if (s->value)
      assign(s->targets[0], eval(s->value));
    return Flow::Normal;
  case Stmt::Kind::AugAssign: {
    IValue cur = eval(s->targets[0]);
    IValue rhs = eval(s->value);
    frame.site = s->value;
    if (cur.is(IValue::Kind::List) && s->op == "+") { // in place, as Python
      for (const IValue &x : iterate(rhs))
        cur.list->push_back(x);
      return Flow::Normal;
    }
    assign(s->targets[0], binaryOp(s->op, cur, rhs));
    return Flow::Normal;
  }
  case Stmt::Kind::If: {
    frame.site = s->cond;
    IValue c = eval(s->cond);
    if (c.isTensor())
      return execTensorIf(s, c, ret);
    return exec(truthy(c) ? s->body : s->orelse, ret);
  }
  case Stmt::Kind::For: {
    // range() of a count known only at run time: a run-time loop.
    const Expr *it = s->value;
    IValue iterable;
    if (it->kind == Expr::Kind::Call && it->base && it->base->kind == Expr::Kind::Name &&
        it->base->name == "range" && it->kwargs.empty() && !it->args.empty() && it->args.size() <= 3 &&
        s->targets.size() == 1) {
      frame.site = it;
      std::vector<IValue> bounds;
      for (const Expr *a : it->args)
        bounds.push_back(eval(a));
      bool runTime = llvm::any_of(bounds, [](const IValue &v) { return v.isTensor(); });
      if (runTime) {
        RunTimeRange r;
        r.start = bounds.size() >= 2 ? bounds[0] : IValue::integer(0);
        r.stop = bounds.size() >= 2 ? bounds[1] : bounds[0];
        if (bounds.size() == 3) {
          if (!bounds[2].is(IValue::Kind::Int) || bounds[2].i == 0) {
            unsupported("range() with a step known only at run time, or a zero step");
            throw StopImport();
          }
          r.step = bounds[2].i;
        }
        for (const IValue &b : {r.start, r.stop})
          if (!(b.is(IValue::Kind::Int) || (b.isTensor() && b.tensor->symbolicInt)))
            fail("CUVIL-E-IMPORT-TYPE", "range() expects ints, got " + b.typeName());
        return execTensorWhile(s, ret, &r);
      }
      iterable = call(eval(it->base), bounds, {});
    } else {
      iterable = eval(s->value);
    }
    std::vector<IValue> items = iterate(iterable);
    for (const IValue &item : items) {
      if (--loopBudget_ < 0)
        fail("CUVIL-E-IMPORT-LOOP", "loops run more than 10 million iterations at import time");
      assign(s->targets[0], item);
      Flow f = exec(s->body, ret);
      if (f == Flow::Break)
        return Flow::Normal;
      if (f == Flow::Return)
        return f;
    }
    return exec(s->orelse, ret);
  }
  case Stmt::Kind::While: {
    while (true) {
      frames_.back().site = s->cond;
      IValue c = eval(s->cond);
      // A condition on tensor data (possibly only from some iteration on:
      // those before ran at import time): the rest is a run-time loop.
      if (c.isTensor())
        return execTensorWhile(s, ret);
      if (!truthy(c))
        break;
      if (--loopBudget_ < 0)
        fail("CUVIL-E-IMPORT-LOOP", "loops run more than 10 million iterations at import time");
      Flow f = exec(s->body, ret);
      if (f == Flow::Break)
        return Flow::Normal;
      if (f == Flow::Return)
        return f;
    }
    return exec(s->orelse, ret);
  }
  case Stmt::Kind::Return:
    if (tensorIfDepth_ > 0 && frames_.size() == ifFrameDepth_) {
      unsupported("return inside a branch that depends on tensor data");
      throw StopImport();
    }
    ret = s->value ? eval(s->value) : IValue::none();
    return Flow::Return;
  case Stmt::Kind::Pass:
    return Flow::Normal;
  case Stmt::Kind::Break:
    return Flow::Break;
  case Stmt::Kind::Continue:
    return Flow::Continue;
  case Stmt::Kind::Raise: {
    IValue msg = s->value ? eval(s->value) : IValue::string("exception");
    frame.site = s->value;
    if (tensorIfDepth_ > 0) {
      unsupported("raise under a condition that depends on tensor data (a run-time assertion)");
      throw StopImport();
    }
    fail("CUVIL-E-IMPORT-RAISE", "the model raises an exception for these inputs: " + msg.repr());
  }
  case Stmt::Kind::Assert: {
    frame.site = s->cond;
    if (!truthy(eval(s->cond))) {
      IValue msg = s->value ? eval(s->value) : IValue::string("assertion failed");
      fail("CUVIL-E-IMPORT-RAISE", "the model's assertion fails for these inputs: " + msg.repr());
    }
    return Flow::Normal;
  }
  case Stmt::Kind::Del:
    return Flow::Normal;
  case Stmt::Kind::With: {
    // A TorchScript class with __enter__ / __exit__ (torch.no_grad() in
    // inlined library code): entered, the body run, then left, also when
    // the body returns.
    frame.site = s->value;
    IValue manager = eval(s->value);
    if (!manager.is(IValue::Kind::Object))
      fail("CUVIL-E-IMPORT-UNSUPPORTED", "a 'with' statement needs a TorchScript class object, got " +
                                             manager.typeName());
    IValue entered = call(getAttr(manager, "__enter__"), {}, {});
    if (!s->targets.empty())
      assign(s->targets[0], entered);
    Flow f = exec(s->body, ret);
    call(getAttr(manager, "__exit__"), {IValue::none(), IValue::none(), IValue::none()}, {});
    return f;
  }
  case Stmt::Kind::FuncDef:
  case Stmt::Kind::ClassDef:
    fail("CUVIL-E-IMPORT-UNSUPPORTED", "nested definitions are not supported");
  }
  return Flow::Normal;
}

mlir::Value Interpreter::conditionFlag(mlir::Value c) {
  using mlir::RankedTensorType;
  auto ct = llvm::cast<RankedTensorType>(c.getType());
  if (ct.hasStaticShape() && ct.getNumElements() != 1)
    fail("CUVIL-E-IMPORT-RAISE", "Boolean value of Tensor with more than one value is ambiguous");
  if (ct.getRank() > 0)
    c = build<cir::ReshapeOp>(c, builder_.getDenseI64ArrayAttr({}));
  mlir::Type e = llvm::cast<RankedTensorType>(c.getType()).getElementType();
  if (!e.isInteger(1)) {
    DType dt = mlir::cuvil::dtypeOfElementType(e).value_or(DType::Int64);
    c = build<cir::NeOp>(c, scalarConstant(IValue::integer(0), dt));
  }
  return builder_.create<mlir::tensor::ExtractOp>(location(), c, mlir::ValueRange{});
}

IValue Interpreter::asRunTimeScalar(const IValue &v) {
  if (v.isTensor())
    return v;
  if (v.is(IValue::Kind::Bool))
    return IValue::ofTensor(scalarConstant(v, DType::Bool));
  if (v.is(IValue::Kind::Int)) {
    IValue r = IValue::ofTensor(scalarConstant(v, DType::Int64));
    r.tensor->symbolicInt = true;
    return r;
  }
  if (v.is(IValue::Kind::Float)) {
    IValue r = IValue::ofTensor(scalarConstant(v, DType::Float64));
    r.tensor->symbolicFloat = true;
    return r;
  }
  fail("CUVIL-E-IMPORT-TYPE", "a " + v.typeName() + " is not a number");
}

namespace {
std::string typeString(mlir::Type t) {
  std::string out;
  llvm::raw_string_ostream os(out);
  t.print(os);
  return out;
}

/// The names a block of statements may bind (Python's assignment targets),
/// nested blocks included.
void collectAssignedNames(const std::vector<Stmt *> &body, std::set<std::string> &names) {
  std::function<void(const Expr *)> target = [&](const Expr *t) {
    if (!t)
      return;
    if (t->kind == Expr::Kind::Name)
      names.insert(t->name);
    else if (t->kind == Expr::Kind::Tuple || t->kind == Expr::Kind::List)
      for (const Expr *a : t->args)
        target(a);
  };
  for (const Stmt *s : body) {
    switch (s->kind) {
    case Stmt::Kind::Assign:
    case Stmt::Kind::AugAssign:
    case Stmt::Kind::AnnAssign:
    case Stmt::Kind::For:
    case Stmt::Kind::With:
      for (const Expr *t : s->targets)
        target(t);
      break;
    default:
      break;
    }
    collectAssignedNames(s->body, names);
    collectAssignedNames(s->orelse, names);
  }
}
} // namespace

Interpreter::Flow Interpreter::execTensorWhile(const Stmt *s, IValue &ret, const RunTimeRange *range) {
  using mlir::RankedTensorType;
  Frame &frame = frames_.back();
  std::set<std::string> assigned;
  collectAssignedNames(s->body, assigned);
  // A counted loop's counter: a variable no Python name can spell.
  const std::string counter = "\x01range-counter";
  if (range) {
    assigned.insert(counter);
    frame.locals[counter] = asRunTimeScalar(range->start);
  }

  // What the loop carries: the variables of this frame the body binds
  // (defined before the loop; Python numbers become run-time ones), then
  // every tensor a live frame can reach (in-place ops).
  struct Slot {
    std::string name; ///< a variable, or empty for a tensor reached in place
    std::shared_ptr<TensorBox> box;
    bool symbolicInt = false, symbolicFloat = false;
  };
  std::vector<Slot> slots;
  llvm::SmallVector<mlir::Value> inits;
  std::map<std::string, IValue> before = frame.locals;
  for (const std::string &name : assigned) {
    auto it = frame.locals.find(name);
    if (it == frame.locals.end() || it->second.is(IValue::Kind::Uninitialized))
      continue;
    IValue v = it->second;
    if (v.is(IValue::Kind::Poison))
      throw StopImport();
    if (v.isScalar())
      v = asRunTimeScalar(v);
    if (!v.isTensor())
      continue; // checked unchanged after the body
    if (v.tensor->complex || v.tensor->qstorage) {
      unsupported("a complex or quantized tensor ('" + name + "') carried by a data-dependent loop");
      throw StopImport();
    }
    slots.push_back({name, nullptr, v.tensor->symbolicInt, v.tensor->symbolicFloat});
    inits.push_back(v.tensor->value);
  }
  std::set<TensorBox *> seen;
  auto addBox = [&](const IValue &v) {
    if (v.isTensor() && seen.insert(v.tensor.get()).second && !v.tensor->complex && !v.tensor->qstorage) {
      slots.push_back({"", v.tensor, v.tensor->symbolicInt, v.tensor->symbolicFloat});
      inits.push_back(v.tensor->value);
    }
  };
  for (const Frame &f : frames_)
    for (auto &[name, v] : f.locals) {
      addBox(v);
      if (v.isSequence())
        for (const IValue &x : *v.list)
          addBox(x);
    }
  // Lists may not change under a data-dependent loop (their length would).
  std::vector<std::pair<std::shared_ptr<IValueList>, IValueList>> lists;
  for (const Frame &f : frames_)
    for (auto &[name, v] : f.locals)
      if (v.is(IValue::Kind::List))
        lists.emplace_back(v.list, *v.list);

  llvm::SmallVector<mlir::Type> types;
  for (mlir::Value v : inits)
    types.push_back(v.getType());
  llvm::SmallVector<mlir::Location> locs(types.size(), location());
  mlir::OpBuilder::InsertPoint outside = builder_.saveInsertionPoint();
  auto loop = builder_.create<mlir::scf::WhileOp>(location(), types, inits);
  mlir::Block *beforeBlock = builder_.createBlock(&loop.getBefore(), {}, types, locs);
  mlir::Block *afterBlock = builder_.createBlock(&loop.getAfter(), {}, types, locs);

  // Binds the carried values to `args` (a region's arguments or the
  // loop's results).
  auto bind = [&](mlir::ValueRange args) {
    frame.locals = before;
    for (size_t k = 0; k < slots.size(); ++k) {
      if (slots[k].box) {
        slots[k].box->value = args[k];
        continue;
      }
      IValue v = IValue::ofTensor(args[k]);
      v.tensor->symbolicInt = slots[k].symbolicInt;
      v.tensor->symbolicFloat = slots[k].symbolicFloat;
      frame.locals[slots[k].name] = v;
    }
  };
  ++tensorIfDepth_;
  size_t savedDepth = ifFrameDepth_;
  ifFrameDepth_ = frames_.size();
  auto leave = [&] {
    --tensorIfDepth_;
    ifFrameDepth_ = savedDepth;
    builder_.restoreInsertionPoint(outside);
  };
  try {
    // Before: the condition, from the carried values.
    builder_.setInsertionPointToStart(beforeBlock);
    bind(beforeBlock->getArguments());
    IValue c;
    if (range) {
      frame.site = s->value;
      c = callOperator(range->step > 0 ? "aten::lt" : "aten::gt",
                       {frame.locals[counter], asRunTimeScalar(range->stop)}, {});
    } else {
      frame.site = s->cond;
      c = eval(s->cond);
    }
    mlir::Value flag = conditionFlag(c.isTensor() ? c.tensor->value
                                                  : scalarConstant(IValue::boolean(truthy(c)), DType::Bool));
    builder_.create<mlir::scf::ConditionOp>(location(), flag, beforeBlock->getArguments());

    // After: the body once, symbolically; what it leaves is yielded.
    builder_.setInsertionPointToStart(afterBlock);
    bind(afterBlock->getArguments());
    IValue bodyRet;
    if (range)
      assign(s->targets[0], frame.locals[counter]);
    Flow f = exec(s->body, bodyRet);
    if (range && f == Flow::Normal) {
      frame.site = s->value;
      frame.locals[counter] = binaryOp("+", frame.locals[counter], IValue::integer(range->step));
    }
    if (f != Flow::Normal) {
      unsupported(f == Flow::Return ? "return inside a loop that depends on tensor data"
                                    : "break or continue inside a loop that depends on tensor data");
      throw StopImport();
    }
    llvm::SmallVector<mlir::Value> yields;
    for (size_t k = 0; k < slots.size(); ++k) {
      mlir::Value v;
      if (slots[k].box) {
        v = slots[k].box->value;
      } else {
        IValue now = frame.locals[slots[k].name];
        if (now.is(IValue::Kind::Poison))
          throw StopImport();
        if (now.isScalar())
          now = asRunTimeScalar(IValue(now));
        if (!now.isTensor()) {
          unsupported("variable '" + slots[k].name + "' becomes a " + now.typeName() +
                      " inside a loop that depends on tensor data");
          throw StopImport();
        }
        v = now.tensor->value;
        // A Python number of another kind than the variable had (int 0
        // becoming a float): the variable's kind, as at the start.
        if (v.getType() != types[k] && llvm::cast<RankedTensorType>(v.getType()).getRank() == 0 &&
            llvm::cast<RankedTensorType>(types[k]).getRank() == 0)
          v = builder_.create<cir::CastOp>(location(), types[k], v);
      }
      if (v.getType() != types[k]) {
        unsupported("variable '" + (slots[k].name.empty() ? std::string("(a tensor changed in place)")
                                                          : slots[k].name) +
                    "' changes its type inside a loop that depends on tensor data (" +
                    typeString(types[k]) + " before, " + typeString(v.getType()) +
                    " after an iteration): give it one shape or use a run-time dimension");
        throw StopImport();
      }
      yields.push_back(v);
    }
    for (const std::string &name : assigned) {
      auto b = before.find(name);
      if (b == before.end() || b->second.is(IValue::Kind::Uninitialized) || b->second.isTensor() ||
          b->second.isScalar())
        continue;
      IValue now = frame.locals[name];
      if (now.kind != b->second.kind || !compareOp("==", now, b->second).b) {
        unsupported("a non-tensor value ('" + name + "') that changes inside a loop that depends on tensor data");
        throw StopImport();
      }
    }
    for (auto &[list, items] : lists) {
      if (list->size() != items.size()) {
        unsupported("a list that grows or shrinks inside a loop that depends on tensor data (its "
                    "length would be known only at run time)");
        throw StopImport();
      }
      // An item replaced in the body would be a value of one iteration.
      if (!compareOp("==", IValue::makeList(*list), IValue::makeList(items)).b) {
        unsupported("a list whose items are replaced inside a loop that depends on tensor data");
        throw StopImport();
      }
    }
    builder_.create<mlir::scf::YieldOp>(location(), yields);
  } catch (...) {
    leave();
    throw;
  }
  leave();

  // Values the body leaves as they were are not carried: their uses read
  // the value from before the loop, and the loop is rebuilt without them.
  auto condition = llvm::cast<mlir::scf::ConditionOp>(beforeBlock->getTerminator());
  auto yield = llvm::cast<mlir::scf::YieldOp>(afterBlock->getTerminator());
  llvm::SmallVector<bool> invariant(slots.size());
  for (size_t k = slots.size(); k-- > 0;) {
    invariant[k] = yield.getOperand(k) == afterBlock->getArgument(k);
    if (!invariant[k])
      continue;
    beforeBlock->getArgument(k).replaceAllUsesWith(inits[k]);
    afterBlock->getArgument(k).replaceAllUsesWith(inits[k]);
    condition.getArgsMutable().erase(k);
    yield.getResultsMutable().erase(k);
    beforeBlock->eraseArgument(k);
    afterBlock->eraseArgument(k);
  }
  llvm::SmallVector<mlir::Value> keptInits;
  for (size_t k = 0; k < slots.size(); ++k)
    if (!invariant[k])
      keptInits.push_back(inits[k]);
  builder_.setInsertionPoint(loop);
  auto kept = builder_.create<mlir::scf::WhileOp>(loop.getLoc(), mlir::ValueRange(keptInits).getTypes(),
                                                  keptInits);
  kept.getBefore().takeBody(loop.getBefore());
  kept.getAfter().takeBody(loop.getAfter());
  loop->erase();
  builder_.restoreInsertionPoint(outside);

  llvm::SmallVector<mlir::Value> outs;
  for (size_t k = 0, r = 0; k < slots.size(); ++k)
    outs.push_back(invariant[k] ? inits[k] : kept.getResult(r++));
  bind(outs);
  for (size_t k = 0; k < slots.size(); ++k)
    if (invariant[k] && !slots[k].box)
      frame.locals[slots[k].name] = before[slots[k].name]; // as it was, aliases kept
  if (range)
    frame.locals.erase(counter);
  // Names the body bound first exist after the loop only if it ran: as
  // TorchScript requires, later code does not read them.
  for (const std::string &name : assigned)
    if (!before.count(name)) {
      IValue u;
      u.kind = IValue::Kind::Uninitialized;
      frame.locals[name] = u;
    }
  return exec(s->orelse, ret);
}

Interpreter::Flow Interpreter::execTensorIf(const Stmt *s, const IValue &condValue, IValue &ret) {
  mlir::Value flag = conditionFlag(condValue.tensor->value);
  mlir::Value c = flag.getDefiningOp<mlir::tensor::ExtractOp>().getTensor();

  // What a branch may change: the current frame's variables, and tensors
  // that any live frame can reach (in-place ops).
  Frame &frame = frames_.back();
  std::map<std::string, IValue> before = frame.locals;
  std::vector<std::shared_ptr<TensorBox>> boxes;
  for (const Frame &f : frames_)
    for (auto &[name, v] : f.locals) {
      if (v.isTensor())
        boxes.push_back(v.tensor);
      if (v.isSequence())
        for (const IValue &x : *v.list)
          if (x.isTensor())
            boxes.push_back(x.tensor);
    }
  std::vector<mlir::Value> boxValues;
  for (auto &b : boxes)
    boxValues.push_back(b->value);

  auto ifOp = builder_.create<mlir::scf::IfOp>(location(), mlir::TypeRange{}, flag, /*withElse=*/true);
  mlir::OpBuilder::InsertionGuard guard(builder_);
  struct BranchState {
    std::map<std::string, IValue> locals;
    std::vector<mlir::Value> boxValues;
    std::optional<std::string> raises; ///< the branch certainly raises this
  };
  auto trace = [&](mlir::Block &block, const std::vector<Stmt *> &body) {
    builder_.setInsertionPoint(block.getTerminator());
    frame.locals = before;
    for (size_t k = 0; k < boxes.size(); ++k)
      boxes[k]->value = boxValues[k];
    ++tensorIfDepth_;
    size_t savedDepth = ifFrameDepth_;
    ifFrameDepth_ = frames_.size();
    IValue branchRet;
    Flow f;
    try {
      f = exec(body, branchRet);
    } catch (const BranchRaises &r) {
      --tensorIfDepth_;
      ifFrameDepth_ = savedDepth;
      BranchState st;
      st.raises = r.message;
      return st;
    } catch (...) {
      --tensorIfDepth_;
      ifFrameDepth_ = savedDepth;
      throw;
    }
    --tensorIfDepth_;
    ifFrameDepth_ = savedDepth;
    if (f != Flow::Normal) {
      unsupported("break or continue inside a branch that depends on tensor data");
      throw StopImport();
    }
    BranchState st{frame.locals, {}, std::nullopt};
    for (auto &b : boxes)
      st.boxValues.push_back(b->value);
    return st;
  };
  BranchState thenState = trace(ifOp.getThenRegion().front(), s->body);
  BranchState elseState = trace(ifOp.getElseRegion().front(), s->orelse);

  // `assert cond` / `if bad: raise`: one branch always raises. The run must
  // fail exactly when that branch is taken, so the if becomes an assertion
  // on the condition, followed by the other branch as straight-line code.
  if (thenState.raises && elseState.raises)
    fail("CUVIL-E-IMPORT-RAISE", "the model raises " + *thenState.raises +
                                     " whichever way a data-dependent condition goes");
  if (thenState.raises || elseState.raises) {
    builder_.setInsertionPointAfter(ifOp);
    mlir::Value ok = thenState.raises ? build<cir::LogicalNotOp>(c) : c;
    builder_.create<cir::AssertOp>(location(), ok,
                                   builder_.getStringAttr(thenState.raises ? *thenState.raises
                                                                           : *elseState.raises));
    ifOp->erase();
    if (flag.use_empty()) // the scalar condition only the if used
      flag.getDefiningOp()->erase();
    frame.locals = before;
    for (size_t k = 0; k < boxes.size(); ++k)
      boxes[k]->value = boxValues[k];
    return exec(thenState.raises ? s->orelse : s->body, ret);
  }

  // Merge: values equal on both sides pass through; tensors that differ are
  // yielded; anything else cannot depend on tensor data.
  std::vector<mlir::Value> thenYield, elseYield;
  std::vector<std::pair<std::string, size_t>> varResults, scalarResults;
  std::vector<std::pair<size_t, size_t>> boxResults;
  std::map<std::string, IValue> merged;
  std::set<std::string> names;
  for (auto &kv : thenState.locals)
    names.insert(kv.first);
  for (auto &kv : elseState.locals)
    names.insert(kv.first);
  for (const std::string &name : names) {
    auto t = thenState.locals.find(name), e = elseState.locals.find(name);
    if (t == thenState.locals.end() || e == elseState.locals.end()) {
      IValue u;
      u.kind = IValue::Kind::Uninitialized;
      merged[name] = u; // defined on one path only
      continue;
    }
    const IValue &tv = t->second, &ev = e->second;
    if (tv.isTensor() && ev.isTensor()) {
      if (tv.tensor->value == ev.tensor->value) {
        merged[name] = tv;
        continue;
      }
      if (tv.tensor->value.getType() != ev.tensor->value.getType())
        fail("CUVIL-E-IMPORT-UNSUPPORTED",
             "variable '" + name + "' has different tensor types on the two sides of a "
             "data-dependent if");
      varResults.emplace_back(name, thenYield.size());
      thenYield.push_back(tv.tensor->value);
      elseYield.push_back(ev.tensor->value);
      continue;
    }
    if (tv.is(IValue::Kind::Poison) || ev.is(IValue::Kind::Poison)) {
      merged[name] = IValue::poison();
      continue;
    }
    if (tv.is(IValue::Kind::Uninitialized) || ev.is(IValue::Kind::Uninitialized)) {
      merged[name] = tv.is(IValue::Kind::Uninitialized) ? tv : ev;
      continue;
    }
    if (tv.isTensor() == ev.isTensor() && compareOp("==", tv, ev).b) {
      merged[name] = tv;
      continue;
    }
    // A Python bool, int or float that differs between the branches (`_2 =
    // True` / `_2 = False` of `a and b`, a counter): a run-time scalar, a 0-d
    // tensor yielded like the others.
    auto scalarLike = [](const IValue &v) {
      return v.isScalar() ||
             (v.isTensor() && llvm::cast<mlir::RankedTensorType>(v.tensor->value.getType()).getRank() == 0);
    };
    if (!scalarLike(tv) || !scalarLike(ev)) {
      unsupported("a non-tensor value ('" + name + "') that depends on tensor data");
      throw StopImport();
    }
    auto inBranch = [&](mlir::Region &region, const IValue &v, const IValue &other) {
      mlir::OpBuilder::InsertionGuard g(builder_);
      builder_.setInsertionPoint(region.front().getTerminator());
      if (v.isTensor())
        return v;
      if (other.isTensor()) { // the other side's type, and what it stands for
        IValue r = IValue::ofTensor(scalarConstant(
            v, mlir::cuvil::dtypeOfElementType(
                   llvm::cast<mlir::RankedTensorType>(other.tensor->value.getType()).getElementType())
                   .value_or(DType::Int64)));
        r.tensor->symbolicInt = other.tensor->symbolicInt;
        r.tensor->symbolicFloat = other.tensor->symbolicFloat;
        return r;
      }
      IValue widened = v;
      if (other.is(IValue::Kind::Float) && !v.is(IValue::Kind::Float))
        widened = IValue::floating(v.is(IValue::Kind::Bool) ? double(v.b) : double(v.i));
      else if (other.is(IValue::Kind::Int) && v.is(IValue::Kind::Bool))
        widened = IValue::integer(v.b);
      return asRunTimeScalar(widened);
    };
    IValue tt = inBranch(ifOp.getThenRegion(), tv, ev), et = inBranch(ifOp.getElseRegion(), ev, tv);
    if (tt.tensor->value.getType() != et.tensor->value.getType()) {
      unsupported("a value ('" + name + "') of different types on the two sides of a data-dependent if");
      throw StopImport();
    }
    IValue result = tt;
    merged[name] = result;
    scalarResults.emplace_back(name, thenYield.size());
    thenYield.push_back(tt.tensor->value);
    elseYield.push_back(et.tensor->value);
  }
  for (size_t k = 0; k < boxes.size(); ++k) {
    if (thenState.boxValues[k] == elseState.boxValues[k]) {
      boxes[k]->value = thenState.boxValues[k];
      continue;
    }
    boxResults.emplace_back(k, thenYield.size());
    thenYield.push_back(thenState.boxValues[k]);
    elseYield.push_back(elseState.boxValues[k]);
  }

  // Rebuild the if with result types and move the traced regions into it.
  builder_.setInsertionPoint(ifOp);
  llvm::SmallVector<mlir::Type> types;
  for (mlir::Value v : thenYield)
    types.push_back(v.getType());
  auto result = builder_.create<mlir::scf::IfOp>(ifOp.getLoc(), types, flag, /*withElse=*/true);
  auto move = [&](mlir::Region &from, mlir::Region &to, const std::vector<mlir::Value> &yield) {
    to.takeBody(from);
    mlir::Block &block = to.front();
    mlir::Operation *oldTerm = block.getTerminator();
    builder_.setInsertionPoint(oldTerm);
    builder_.create<mlir::scf::YieldOp>(oldTerm->getLoc(), yield);
    oldTerm->erase();
  };
  move(ifOp.getThenRegion(), result.getThenRegion(), thenYield);
  move(ifOp.getElseRegion(), result.getElseRegion(), elseYield);
  ifOp->erase();

  frame.locals = merged;
  for (auto &[name, k] : varResults) {
    IValue v = IValue::ofTensor(result.getResult(k));
    const IValue &t = thenState.locals[name];
    v.tensor->symbolicInt = t.tensor->symbolicInt;
    v.tensor->symbolicFloat = t.tensor->symbolicFloat;
    frame.locals[name] = v;
  }
  for (auto &[name, k] : scalarResults) {
    IValue v = IValue::ofTensor(result.getResult(k));
    v.tensor->symbolicInt = merged[name].tensor->symbolicInt;
    v.tensor->symbolicFloat = merged[name].tensor->symbolicFloat;
    frame.locals[name] = v;
  }
  for (auto &[box, k] : boxResults)
    boxes[box]->value = result.getResult(k);
  (void)ret;
  return Flow::Normal;
}

void Interpreter::assign(const Expr *target, const IValue &v) {
  switch (target->kind) {
  case Expr::Kind::Name:
    frames_.back().locals[target->name] = v;
    return;
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    if (v.is(IValue::Kind::Poison)) {
      for (const Expr *t : target->args)
        assign(t, v);
      return;
    }
    std::vector<IValue> items = iterate(v);
    if (items.size() != target->args.size())
      fail("CUVIL-E-IMPORT-UNPACK", "cannot unpack " + std::to_string(items.size()) +
                                        " values into " + std::to_string(target->args.size()));
    for (size_t k = 0; k < items.size(); ++k)
      assign(target->args[k], items[k]);
    return;
  }
  case Expr::Kind::Subscript: {
    IValue base = eval(target->base);
    if (base.is(IValue::Kind::List) && target->args.size() == 1) {
      IValue idx = eval(target->args[0]);
      if (idx.is(IValue::Kind::Int)) {
        int64_t n = static_cast<int64_t>(base.list->size()), i = idx.i < 0 ? idx.i + n : idx.i;
        if (i < 0 || i >= n)
          fail("CUVIL-E-IMPORT-INDEX", "list assignment index out of range");
        (*base.list)[i] = v;
        return;
      }
    }
    if (base.is(IValue::Kind::Dict) && target->args.size() == 1) {
      IValue key = eval(target->args[0]);
      for (auto &kv : *base.dict)
        if (compareOp("==", kv.first, key).b) {
          kv.second = v;
          return;
        }
      base.dict->emplace_back(key, v);
      return;
    }
    if (base.isTensor() || base.is(IValue::Kind::Poison)) {
      unsupported("assignment into a tensor (x[...] = v)");
      return;
    }
    fail("CUVIL-E-IMPORT-ASSIGN", "cannot assign into a " + base.typeName());
  }
  case Expr::Kind::Attribute: {
    IValue base = eval(target->base);
    if (base.is(IValue::Kind::Object) && base.object->local) {
      base.object->attrs[target->name] = v;
      return;
    }
    if (base.is(IValue::Kind::Object)) {
      unsupported("writes to module state (self." + target->name + " = ...)");
      return;
    }
    fail("CUVIL-E-IMPORT-ASSIGN", "cannot assign an attribute of a " + base.typeName());
  }
  default:
    fail("CUVIL-E-IMPORT-ASSIGN", "invalid assignment target");
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

IValue Interpreter::lookup(const std::string &name) {
  Frame &frame = frames_.back();
  auto it = frame.locals.find(name);
  if (it != frame.locals.end())
    return it->second;
  if (frame.file) {
    if (const FuncDef *fn = frame.file->findFunction(name)) {
      IValue f;
      f.kind = IValue::Kind::Function;
      f.func = fn;
      f.file = frame.file;
      return f;
    }
  }
  static const char *const namespaces[] = {"torch", "ops", "__torch__", "math", "CONSTANTS"};
  for (const char *n : namespaces)
    if (name == n)
      return IValue::ns(name);
  static const char *const types[] = {"Tensor", "List", "Optional", "Tuple", "Dict",
                                      "NoneType", "Final", "Any", "Union", "number",
                                      "Device", "Future", "Module", "Object", "NamedTuple"};
  for (const char *t : types)
    if (name == t) {
      IValue v;
      v.kind = IValue::Kind::Type;
      v.s = name;
      return v;
    }
  if (name == "inf")
    return IValue::floating(INFINITY);
  if (name == "nan")
    return IValue::floating(NAN);
  return IValue::builtin("builtin::" + name);
}

IValue Interpreter::eval(const Expr *e) {
  switch (e->kind) {
  case Expr::Kind::Name:
    return lookup(e->name);
  case Expr::Kind::Int: return IValue::integer(e->ival);
  case Expr::Kind::Float: return IValue::floating(e->fval);
  case Expr::Kind::Str: return IValue::string(e->name);
  case Expr::Kind::Bool: return IValue::boolean(e->bval);
  case Expr::Kind::None: return IValue::none();
  case Expr::Kind::Ellipsis: {
    IValue v;
    v.kind = IValue::Kind::Type;
    v.s = "...";
    return v;
  }
  case Expr::Kind::Attribute:
    return getAttr(eval(e->base), e->name);
  case Expr::Kind::Subscript: {
    IValue base = eval(e->base);
    if (base.is(IValue::Kind::Type)) {
      IValue t = base;
      t.typeExpr = e;
      return t;
    }
    return subscript(base, e);
  }
  case Expr::Kind::Call: {
    IValue callee = eval(e->base);
    std::vector<IValue> args;
    for (const Expr *a : e->args)
      args.push_back(eval(a));
    std::vector<std::pair<std::string, IValue>> kwargs;
    for (auto &[k, a] : e->kwargs)
      kwargs.emplace_back(k, eval(a));
    // annotate(T, v) and isinstance(v, T) look at the type expression.
    if (callee.is(IValue::Kind::Builtin) && callee.s == "builtin::isinstance" && args.size() == 2) {
      frames_.back().site = e;
      return IValue::boolean(isInstance(args[0], e->args[1]));
    }
    frames_.back().site = e;
    return call(callee, std::move(args), std::move(kwargs));
  }
  case Expr::Kind::BinOp: {
    IValue a = eval(e->args[0]), b = eval(e->args[1]);
    frames_.back().site = e;
    return binaryOp(e->name, a, b);
  }
  case Expr::Kind::UnaryOp: {
    IValue a = eval(e->args[0]);
    frames_.back().site = e;
    if (e->name == "not")
      return IValue::boolean(!truthy(a));
    if (e->name == "+")
      return a;
    if (a.is(IValue::Kind::Int))
      return IValue::integer(e->name == "-" ? -a.i : ~a.i);
    if (a.is(IValue::Kind::Float) && e->name == "-")
      return IValue::floating(-a.f);
    if (a.is(IValue::Kind::Bool) && e->name == "-")
      return IValue::integer(-int64_t(a.b));
    if (a.isTensor() || a.is(IValue::Kind::Poison))
      return callOperator(e->name == "-" ? "aten::neg" : "aten::bitwise_not", {a}, {});
    fail("CUVIL-E-IMPORT-TYPE", "bad operand type for unary " + e->name + ": " + a.typeName());
  }
  case Expr::Kind::Compare: {
    IValue lhs = eval(e->args[0]);
    IValue result = IValue::boolean(true);
    for (size_t k = 0; k < e->ops.size(); ++k) {
      IValue rhs = eval(e->args[k + 1]);
      frames_.back().site = e;
      result = compareOp(e->ops[k], lhs, rhs);
      if (result.is(IValue::Kind::Bool) && !result.b)
        return result;
      lhs = rhs;
    }
    return result;
  }
  case Expr::Kind::BoolOp: {
    IValue v = eval(e->args[0]);
    for (size_t k = 1; k < e->args.size(); ++k) {
      bool t = truthy(v);
      if ((e->name == "and" && !t) || (e->name == "or" && t))
        return v;
      v = eval(e->args[k]);
    }
    return v;
  }
  case Expr::Kind::Tuple:
  case Expr::Kind::List: {
    IValueList items;
    for (const Expr *a : e->args)
      items.push_back(eval(a));
    return e->kind == Expr::Kind::Tuple ? IValue::makeTuple(std::move(items))
                                        : IValue::makeList(std::move(items));
  }
  case Expr::Kind::Dict: {
    IValue d;
    d.kind = IValue::Kind::Dict;
    d.dict = std::make_shared<IValueDict>();
    for (size_t k = 0; k + 1 < e->args.size(); k += 2)
      d.dict->emplace_back(eval(e->args[k]), eval(e->args[k + 1]));
    return d;
  }
  case Expr::Kind::IfExp:
    return truthy(eval(e->args[1])) ? eval(e->args[0]) : eval(e->args[2]);
  case Expr::Kind::Slice:
    fail("CUVIL-E-IMPORT-SYNTAX", "a slice outside of a subscript");
  }
  fail("CUVIL-E-IMPORT-SYNTAX", "unknown expression");
}

IValue Interpreter::subscript(const IValue &base, const Expr *e) {
  if (base.is(IValue::Kind::Poison))
    return base;
  if (base.isTensor()) {
    // x[i], x[a:b:c], x[:, i], x[None] ... one index per dimension.
    IValue t = base;
    int64_t dim = 0;
    for (const Expr *idx : e->args) {
      if (idx->kind == Expr::Kind::Slice) {
        IValue lo = idx->args[0] ? eval(idx->args[0]) : IValue::none();
        IValue hi = idx->args[1] ? eval(idx->args[1]) : IValue::none();
        IValue st = idx->args[2] ? eval(idx->args[2]) : IValue::integer(1);
        t = callOperator("aten::slice", {t, IValue::integer(dim), lo, hi, st}, {});
        ++dim;
        continue;
      }
      IValue i = eval(idx);
      if (i.isNone()) {
        t = callOperator("aten::unsqueeze", {t, IValue::integer(dim)}, {});
        ++dim;
      } else if (i.is(IValue::Kind::Int)) {
        t = callOperator("aten::select", {t, IValue::integer(dim), i}, {});
      } else {
        return unsupported("advanced tensor indexing (x[tensor])");
      }
    }
    return t;
  }
  if (e->args.size() != 1)
    fail("CUVIL-E-IMPORT-INDEX", "a " + base.typeName() + " takes a single index");
  const Expr *idx = e->args[0];
  if (idx->kind == Expr::Kind::Slice && (base.isSequence() || base.is(IValue::Kind::Str))) {
    int64_t n = base.is(IValue::Kind::Str) ? static_cast<int64_t>(base.s.size())
                                           : static_cast<int64_t>(base.list->size());
    auto bound = [&](const Expr *x, int64_t dflt) {
      if (!x)
        return dflt;
      IValue v = eval(x);
      if (v.isNone())
        return dflt;
      if (!v.is(IValue::Kind::Int))
        fail("CUVIL-E-IMPORT-INDEX", "slice bounds must be ints");
      int64_t b = v.i < 0 ? std::max<int64_t>(v.i + n, 0) : std::min(v.i, n);
      return b;
    };
    int64_t step = 1;
    if (idx->args[2]) {
      IValue s = eval(idx->args[2]);
      if (!s.is(IValue::Kind::Int) || s.i < 1)
        fail("CUVIL-E-IMPORT-INDEX", "only positive slice steps are supported");
      step = s.i;
    }
    int64_t lo = bound(idx->args[0], 0), hi = bound(idx->args[1], n);
    if (base.is(IValue::Kind::Str)) {
      std::string out;
      for (int64_t k = lo; k < hi; k += step)
        out += base.s[k];
      return IValue::string(out);
    }
    IValueList items;
    for (int64_t k = lo; k < hi; k += step)
      items.push_back((*base.list)[k]);
    return base.is(IValue::Kind::Tuple) ? IValue::makeTuple(items) : IValue::makeList(items);
  }
  IValue i = eval(idx);
  if (base.isSequence() || base.is(IValue::Kind::Str)) {
    if (!i.is(IValue::Kind::Int))
      fail("CUVIL-E-IMPORT-INDEX", base.typeName() + " indices must be ints, not " + i.typeName());
    int64_t n = base.is(IValue::Kind::Str) ? static_cast<int64_t>(base.s.size())
                                           : static_cast<int64_t>(base.list->size());
    int64_t k = i.i < 0 ? i.i + n : i.i;
    if (k < 0 || k >= n)
      fail("CUVIL-E-IMPORT-INDEX", "index " + std::to_string(i.i) + " is out of range for a " +
                                       base.typeName() + " of length " + std::to_string(n));
    if (base.is(IValue::Kind::Str))
      return IValue::string(std::string(1, base.s[k]));
    return (*base.list)[k];
  }
  if (base.is(IValue::Kind::Dict)) {
    for (auto &kv : *base.dict)
      if (compareOp("==", kv.first, i).b)
        return kv.second;
    fail("CUVIL-E-IMPORT-KEY", "key " + i.repr() + " is not in the dict");
  }
  fail("CUVIL-E-IMPORT-INDEX", "a " + base.typeName() + " cannot be indexed");
}

bool Interpreter::isInstance(const IValue &v, const Expr *type) {
  // Tuples of types: any matches.
  if (type->kind == Expr::Kind::Tuple) {
    for (const Expr *t : type->args)
      if (isInstance(v, t))
        return true;
    return false;
  }
  std::string name;
  const Expr *head = type->kind == Expr::Kind::Subscript ? type->base : type;
  if (head->kind == Expr::Kind::Name)
    name = head->name;
  else if (head->kind == Expr::Kind::Attribute)
    name = head->name;
  using K = IValue::Kind;
  if (name == "Tensor") return v.isTensor();
  if (name == "int") return v.is(K::Int);
  if (name == "float") return v.is(K::Float);
  if (name == "bool") return v.is(K::Bool);
  if (name == "str") return v.is(K::Str);
  if (name == "NoneType") return v.isNone();
  if (name == "Device") return v.is(K::Device);
  if (name == "List" || name == "Tuple" || name == "Dict") {
    K want = name == "List" ? K::List : name == "Tuple" ? K::Tuple : K::Dict;
    if (!v.is(want))
      return false;
    if (type->kind == Expr::Kind::Subscript && want == K::List && !v.list->empty() &&
        type->args.size() == 1)
      return isInstance(v.list->front(), type->args[0]);
    return true;
  }
  if (name == "Optional") {
    return v.isNone() || (type->kind == Expr::Kind::Subscript && type->args.size() == 1 &&
                          isInstance(v, type->args[0]));
  }
  if (name == "Union") {
    for (const Expr *t : type->args)
      if (isInstance(v, t))
        return true;
    return false;
  }
  if (name == "Any")
    return true;
  if (v.is(K::Object)) {
    std::string full;
    for (const Expr *x = type; x; x = x->kind == Expr::Kind::Attribute ? x->base : nullptr)
      full = x->kind == Expr::Kind::Attribute ? "." + x->name + full
                                              : (x->kind == Expr::Kind::Name ? x->name + full : full);
    return v.object->className == full;
  }
  return false;
}

} // namespace cuvil::torchscript
