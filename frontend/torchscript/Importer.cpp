//===- Importer.cpp - TorchScript archive to cuvil IR ---------------------===//
//
// Opens the archive, builds `func.func @forward` from the root module's
// forward signature and the --input-shape specs, runs the partial evaluator
// on it, returns the outputs, removes dead code and verifies the result.
//
//===----------------------------------------------------------------------===//
#include "frontend/torchscript/Importer.h"
#include "dialects/Cuvil/Transforms/Passes.h"
#include "dialects/Cuvil/IR/ElementTypes.h"

#include "frontend/torchscript/Interpreter.h"

#include "dialects/Cuvil/IR/CuvilOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <sstream>

namespace cir = mlir::cuvil;

namespace cuvil::torchscript {

void registerImporterDialects(mlir::MLIRContext &context) {
  mlir::DialectRegistry registry;
  registry.insert<cir::CuvilDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::tensor::TensorDialect, mlir::scf::SCFDialect>();
  context.appendDialectRegistry(registry);
  context.loadAllAvailableDialects();
}

Result<InputSpec> parseInputShape(const std::string &spec) {
  auto bad = [&](const std::string &why) {
    return usageError("--input-shape '" + spec + "': " + why +
                      " (expected INDEX_OR_NAME=DIMxDIM...xDTYPE, e.g. 0=1x3x224x224xf32)");
  };
  size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return bad("missing 'INDEX_OR_NAME='");
  InputSpec out;
  out.key = spec.substr(0, eq);
  std::string rest = spec.substr(eq + 1);
  // "complex64" holds an 'x' itself: take it off before splitting.
  std::optional<DType> complexType;
  for (DType c : {DType::Complex64, DType::Complex128}) {
    std::string tail(dtypeName(c));
    if (rest.size() >= tail.size() && rest.compare(rest.size() - tail.size(), tail.size(), tail) == 0) {
      complexType = c;
      rest = rest.substr(0, rest.size() - tail.size()) + "c";
    }
  }
  // Dimensions are separated by 'x'; a symbol with bounds ("seq:1..512")
  // ends at its bounds, so only a symbol without them must avoid 'x'.
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t x = rest.find('x', start);
    size_t colon = rest.find(':', start);
    // "seq:1..512", or "max_len:1..64" whose name holds an 'x'.
    bool boundedSymbol = false;
    if (colon != std::string::npos && !std::isdigit(static_cast<unsigned char>(rest[start]))) {
      boundedSymbol = x == std::string::npos || colon < x;
      if (!boundedSymbol) {
        boundedSymbol = true;
        for (size_t i = start; i < colon; ++i)
          boundedSymbol &= std::isalnum(static_cast<unsigned char>(rest[i])) || rest[i] == '_';
      }
    }
    if (boundedSymbol) {
      size_t end = colon + 1;
      while (end < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[end])) || rest[end] == '.'))
        ++end;
      x = end < rest.size() && rest[end] == 'x' ? end : std::string::npos;
      if (x == std::string::npos && end < rest.size())
        return bad("the bounds of '" + rest.substr(start) + "' are not MIN..MAX");
    }
    parts.push_back(rest.substr(start, x == std::string::npos ? std::string::npos : x - start));
    if (x == std::string::npos)
      break;
    start = x + 1;
  }
  std::optional<DType> dtype = complexType ? complexType : parseDType(parts.back());
  if (!dtype)
    return bad("unknown element type '" + parts.back() +
               "' (use f32 f64 f16 bf16 i1 i8 ui8 i16 i32 i64 complex64 complex128)");
  out.dtype = *dtype;
  parts.pop_back();
  // 2^40 per dimension, as for tensors of the archive.
  constexpr int64_t kMaxDim = int64_t(1) << 40;
  auto number = [&](const std::string &p, const std::string &what) -> Result<int64_t> {
    if (p.empty() || p.find_first_not_of("0123456789") != std::string::npos)
      return bad(what + " '" + p + "' is not a non-negative integer");
    if (p.size() > 13 || std::stoll(p) >= kMaxDim)
      return bad(what + " " + p + " is too large (at most " + std::to_string(kMaxDim - 1) + ")");
    return std::stoll(p);
  };
  auto isIdentifier = [](const std::string &p) {
    if (p.empty() || !(std::isalpha(static_cast<unsigned char>(p[0])) || p[0] == '_'))
      return false;
    for (char c : p)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
        return false;
    return true;
  };
  for (const std::string &p : parts) {
    size_t d = out.shape.size();
    if (p == "?" || isIdentifier(p)) {
      out.shape.push_back(-1);
      out.symbols.push_back(p == "?" ? out.key + "." + std::to_string(d) : p);
      out.minSize.push_back(1);
      out.maxSize.push_back(kDefaultDynamicMax);
      out.explicitBounds.push_back(false);
      continue;
    }
    if (size_t colon = p.find(':'); colon != std::string::npos) {
      std::string name = p.substr(0, colon), range = p.substr(colon + 1);
      size_t dots = range.find("..");
      if (!isIdentifier(name) || dots == std::string::npos)
        return bad("dimension '" + p + "' is not SYMBOL:MIN..MAX (e.g. seq:1..512)");
      Result<int64_t> lo = number(range.substr(0, dots), "the minimum of '" + name + "'");
      if (!lo)
        return lo.error();
      Result<int64_t> hi = number(range.substr(dots + 2), "the maximum of '" + name + "'");
      if (!hi)
        return hi.error();
      if (*lo > *hi)
        return bad("the bounds of '" + name + "' are empty (" + std::to_string(*lo) + " > " +
                   std::to_string(*hi) + ")");
      out.shape.push_back(-1);
      out.symbols.push_back(name);
      out.minSize.push_back(*lo);
      out.maxSize.push_back(*hi);
      out.explicitBounds.push_back(true);
      continue;
    }
    Result<int64_t> size = number(p, "dimension");
    if (!size && !p.empty() && p.find_first_not_of("0123456789") == std::string::npos)
      return size.error(); // digits, but too many
    if (!size)
      return bad("dimension '" + p + "' is not a non-negative integer, '?', a symbol (seq) or "
                 "a symbol with bounds (seq:1..512)");
    out.shape.push_back(*size);
    out.symbols.push_back("");
    out.minSize.push_back(*size);
    out.maxSize.push_back(*size);
    out.explicitBounds.push_back(true);
  }
  if (out.shape.size() > 16)
    return bad("rank above 16");
  int64_t elements = 1;
  for (int64_t d : out.maxSize)
    if (d > 0 && __builtin_mul_overflow(elements, d, &elements))
      return bad("the shape is too large (its element count overflows 64 bits)");
  return out;
}

Result<std::vector<InputSpec>> parseInputShapes(const std::vector<std::string> &specs) {
  std::vector<InputSpec> out;
  std::map<std::string, std::string> seen;
  for (const std::string &spec : specs) {
    Result<InputSpec> parsed = parseInputShape(spec);
    if (!parsed)
      return parsed.error();
    auto [it, inserted] = seen.emplace(parsed->key, spec);
    if (!inserted)
      return usageError("--input-shape: input '" + parsed->key + "' is given twice ('" + it->second +
                        "' and '" + spec + "'); give each input once");
    out.push_back(std::move(*parsed));
  }
  // A symbol shared by several inputs has one set of bounds: those given
  // (the same wherever they are given), else the default.
  struct Bounds {
    int64_t lo, hi;
    std::string where;
  };
  std::map<std::string, Bounds> given;
  for (const InputSpec &s : out)
    for (size_t d = 0; d < s.shape.size(); ++d)
      if (s.shape[d] < 0 && s.explicitBounds[d]) {
        auto [it, inserted] = given.emplace(s.symbols[d], Bounds{s.minSize[d], s.maxSize[d], s.key});
        if (!inserted && (it->second.lo != s.minSize[d] || it->second.hi != s.maxSize[d]))
          return usageError("--input-shape: symbol '" + s.symbols[d] + "' has bounds " +
                            std::to_string(it->second.lo) + ".." + std::to_string(it->second.hi) +
                            " in input '" + it->second.where + "' and " + std::to_string(s.minSize[d]) +
                            ".." + std::to_string(s.maxSize[d]) + " in input '" + s.key +
                            "'; give a shared symbol one set of bounds");
      }
  for (InputSpec &s : out)
    for (size_t d = 0; d < s.shape.size(); ++d)
      if (auto it = given.find(s.symbols[d]); s.shape[d] < 0 && it != given.end()) {
        s.minSize[d] = it->second.lo;
        s.maxSize[d] = it->second.hi;
      }
  return out;
}

std::vector<std::string> supportedOperators() {
  std::vector<std::string> names;
  for (auto &kv : opHandlers())
    names.push_back(kv.first);
  return names;
}

/// A string as JSON takes it: paths and names with bytes that are not
/// UTF-8 get U+FFFD in their place (the report stays valid JSON).
static llvm::json::Value jsonText(const std::string &s) {
  return llvm::json::isUTF8(s) ? llvm::json::Value(s) : llvm::json::Value(llvm::json::fixUTF8(s));
}

std::string unsupportedReportJson(const std::string &model,
                                  const std::vector<UnsupportedItem> &items) {
  llvm::json::Array unsupported;
  for (const UnsupportedItem &item : items) {
    llvm::json::Array locations;
    for (const std::string &l : item.locations)
      locations.push_back(jsonText(l));
    unsupported.push_back(llvm::json::Object{{"op", jsonText(item.what)},
                                             {"count", int64_t(item.locations.size())},
                                             {"locations", std::move(locations)}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"model", jsonText(model)}, {"unsupported", std::move(unsupported)}}))
     << "\n";
  return os.str();
}

namespace {


std::string typeText(const Expr *e) {
  if (!e)
    return "";
  const SourceFile *f = e->range.file;
  return f->text.substr(e->range.start, e->range.end - e->range.start);
}

/// Flattens a returned value into tensors: nested tuples and lists are
/// walked depth-first, dicts in insertion order; numbers become 0-d
/// constants; None inside a container is skipped. Outputs reached through
/// dict keys or NamedTuple fields are named after the path ("out",
/// "aux.logits"); the others stay unnamed (outputN).
void flattenOutputs(Interpreter &in, const IValue &v, std::vector<mlir::Value> &out,
                    std::vector<std::string> &names, std::vector<bool> &complex,
                    const std::string &name, int depth) {
  if (depth > 64)
    in.fail("CUVIL-E-IMPORT-OUTPUT", "the returned value nests too deeply");
  auto push = [&](mlir::Value x, bool isComplex = false) {
    out.push_back(x);
    names.push_back(name);
    complex.push_back(isComplex);
  };
  switch (v.kind) {
  case IValue::Kind::Tensor:
    push(v.tensor->value, v.tensor->complex);
    return;
  case IValue::Kind::Tuple:
  case IValue::Kind::List:
    for (size_t i = 0; i < v.list->size(); ++i) {
      const IValue &x = (*v.list)[i];
      // None inside a container (a NamedTuple's absent Optional field) is
      // no output: the C API has tensors only.
      if (x.isNone())
        continue;
      std::string field = v.fields ? (*v.fields)[i] : "";
      flattenOutputs(in, x, out, names, complex,
                     field.empty() ? name : name.empty() ? field : name + "." + field, depth + 1);
    }
    return;
  case IValue::Kind::Dict:
    for (auto &[key, value] : *v.dict) {
      std::string k = key.is(IValue::Kind::Str) ? key.s : key.repr();
      flattenOutputs(in, value, out, names, complex, name.empty() ? k : name + "." + k, depth + 1);
    }
    return;
  case IValue::Kind::Int:
    push(in.scalarConstant(v, DType::Int64));
    return;
  case IValue::Kind::Float:
    push(in.scalarConstant(v, DType::Float64));
    return;
  case IValue::Kind::Bool:
    push(in.scalarConstant(v, DType::Bool));
    return;
  default:
    in.fail("CUVIL-E-IMPORT-OUTPUT", "the model returns a " + v.typeName() +
                                         ", which cannot be an output (return tensors, "
                                         "tuples, lists or dicts of tensors)");
  }
}

/// Removes pure ops whose results are unused (weights read but not used,
/// values computed on discarded paths).
void removeDeadOps(mlir::func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    llvm::SmallVector<mlir::Operation *> dead;
    func.walk([&](mlir::Operation *op) {
      if (op != func.getOperation() && op->use_empty() && mlir::isPure(op) &&
          !op->hasTrait<mlir::OpTrait::IsTerminator>())
        dead.push_back(op);
    });
    for (mlir::Operation *op : dead) {
      op->erase();
      changed = true;
    }
  }
}

} // namespace

Result<ImportResult> importTorchScript(mlir::MLIRContext &context, const std::string &path,
                                       const ImportOptions &options) {
  Result<std::unique_ptr<TorchScriptArchive>> archiveOr = TorchScriptArchive::open(path);
  if (!archiveOr)
    return archiveOr.error();
  TorchScriptArchive &archive = **archiveOr;
  registerImporterDialects(context);

  // The root module's class and its entry method.
  const PValue *root = archive.root();
  size_t dot = root->str.rfind('.');
  Result<const SourceFile *> rootFile =
      archive.codeFile(dot == std::string::npos ? root->str : root->str.substr(0, dot));
  if (!rootFile)
    return rootFile.error();
  const ClassDef *cls = *rootFile ? (*rootFile)->findClass(root->str.substr(dot + 1)) : nullptr;
  if (!cls)
    return inputError(path + ": CUVIL-E-IMPORT-CLASS: the root module's class '" + root->str +
                      "' has no code in the archive");
  const FuncDef *method = cls->method(options.method);
  if (!method)
    return inputError(path + ": CUVIL-E-IMPORT-METHOD: the model has no method '" + options.method + "'");

  // Signature: every parameter after self needs a shape (tensors) or has a
  // default (other types).
  std::vector<const Param *> params;
  for (size_t k = 1; k < method->params.size(); ++k)
    params.push_back(&method->params[k]);
  for (const InputSpec &spec : options.inputs) {
    bool known = false;
    for (size_t k = 0; k < params.size(); ++k)
      known |= spec.key == std::to_string(k) || spec.key == params[k]->name;
    if (!known) {
      std::string names;
      for (size_t k = 0; k < params.size(); ++k)
        names += (k ? ", " : "") + std::to_string(k) + "=" + params[k]->name;
      return usageError("--input-shape names input '" + spec.key + "', but " + options.method +
                        " takes (" + names + ")");
    }
  }
  mlir::OpBuilder b(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(mlir::FileLineColLoc::get(&context, path, 0, 0));
  llvm::SmallVector<mlir::Type> argTypes;
  std::vector<size_t> complexArgs;
  std::vector<int> argOfParam(params.size(), -1);
  for (size_t k = 0; k < params.size(); ++k) {
    const InputSpec *spec = nullptr;
    for (const InputSpec &s : options.inputs)
      if (s.key == std::to_string(k) || s.key == params[k]->name)
        spec = &s;
    std::string type = typeText(params[k]->type);
    bool isTensor = type == "Tensor" || type == "Optional[Tensor]";
    if (!spec) {
      if (isTensor && !params[k]->defaultValue)
        return usageError("input '" + params[k]->name + "' (argument " + std::to_string(k) + " of " +
                          options.method + ") needs a shape: pass --input-shape " +
                          std::to_string(k) + "=DIMxDIM...xf32 (or " + params[k]->name + "=...)");
      if (!params[k]->defaultValue)
        return usageError("input '" + params[k]->name + "' of type " + type +
                          " has no default; only tensor inputs can be given at run time");
      continue;
    }
    if (!isTensor)
      return usageError("input '" + params[k]->name + "' has type " + type +
                        ", not Tensor; it cannot take --input-shape");
    llvm::SmallVector<int64_t> shape;
    for (int64_t d : spec->shape)
      shape.push_back(d < 0 ? mlir::ShapedType::kDynamic : d);
    argOfParam[k] = static_cast<int>(argTypes.size());
    if (isComplex(spec->dtype)) { // (real, imaginary) pairs inside
      shape.push_back(2);
      complexArgs.push_back(argTypes.size());
    }
    argTypes.push_back(mlir::RankedTensorType::get(shape, cir::elementTypeOf(&context, complexPart(spec->dtype))));
  }
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(mlir::FileLineColLoc::get(&context, path, 0, 0),
                                           options.method, b.getFunctionType(argTypes, {}));
  mlir::Block *entry = func.addEntryBlock();
  for (size_t k = 0; k < params.size(); ++k)
    if (argOfParam[k] >= 0)
      func.setArgAttr(argOfParam[k], "cuvil.name", b.getStringAttr(params[k]->name));
  for (size_t i : complexArgs)
    func.setArgAttr(i, cir::kComplexAttrName, b.getUnitAttr());
  for (size_t k = 0; k < params.size(); ++k) {
    if (argOfParam[k] < 0)
      continue;
    const InputSpec *spec = nullptr;
    for (const InputSpec &s : options.inputs)
      if (s.key == std::to_string(k) || s.key == params[k]->name)
        spec = &s;
    if (!llvm::is_contained(spec->shape, -1))
      continue;
    llvm::SmallVector<mlir::Attribute> symbols;
    llvm::SmallVector<int64_t> bounds;
    for (size_t d = 0; d < spec->shape.size(); ++d) {
      // An anonymous '?' is named by the parameter, not the index given.
      std::string symbol = spec->symbols[d];
      if (spec->shape[d] < 0 && symbol == spec->key + "." + std::to_string(d))
        symbol = params[k]->name + "." + std::to_string(d);
      symbols.push_back(b.getStringAttr(symbol));
      bounds.push_back(spec->minSize[d]);
      bounds.push_back(spec->maxSize[d]);
    }
    if (isComplex(spec->dtype)) { // the pair dimension
      symbols.push_back(b.getStringAttr(""));
      bounds.append({2, 2});
    }
    func.setArgAttr(argOfParam[k], cir::kDimSymbolsAttrName, b.getArrayAttr(symbols));
    func.setArgAttr(argOfParam[k], cir::kDimBoundsAttrName, b.getDenseI64ArrayAttr(bounds));
  }

  ImportResult result;
  Interpreter in(archive, context, func);
  in.setQuantizedEngine(options.quantizedEngine);
  try {
    std::vector<std::pair<std::string, IValue>> kwargs;
    for (size_t k = 0; k < params.size(); ++k)
      if (argOfParam[k] >= 0) {
        IValue arg = IValue::ofTensor(entry->getArgument(argOfParam[k]));
        arg.tensor->complex = llvm::is_contained(complexArgs, static_cast<size_t>(argOfParam[k]));
        kwargs.emplace_back(params[k]->name, arg);
      }
    IValue forward = in.getAttr(in.rootModule(), options.method);
    IValue out = in.call(forward, {}, kwargs);
    if (in.unsupportedItems().empty()) {
      std::vector<mlir::Value> outputs;
      std::vector<std::string> outputNames;
      std::vector<bool> complexOutputs;
      flattenOutputs(in, out, outputs, outputNames, complexOutputs, "", 0);
      if (outputs.empty())
        in.fail("CUVIL-E-IMPORT-OUTPUT", "the model returns no tensors");
      in.builder().create<mlir::func::ReturnOp>(func.getLoc(), outputs);
      llvm::SmallVector<mlir::Type> resultTypes;
      for (mlir::Value v : outputs)
        resultTypes.push_back(v.getType());
      func.setType(b.getFunctionType(argTypes, resultTypes));
      for (size_t k = 0; k < outputNames.size(); ++k) {
        if (!outputNames[k].empty())
          func.setResultAttr(k, "cuvil.name", b.getStringAttr(outputNames[k]));
        if (complexOutputs[k])
          func.setResultAttr(k, cir::kComplexAttrName, b.getUnitAttr());
      }
    }
  } catch (const ImportError &e) {
    return inputError(path + ": " + e.what());
  } catch (const StopImport &) {
    // The unsupported items explain why evaluation stopped.
  } catch (const std::bad_alloc &) {
    return inputError(path + ": CUVIL-E-IMPORT-MEMORY: out of memory while importing");
  } catch (const std::exception &e) {
    return inputError(path + ": CUVIL-E-IMPORT-INTERNAL: " + e.what());
  }
  result.warnings = in.warnings();
  result.unsupported = in.unsupportedItems();
  if (!result.unsupported.empty())
    return result;
  // A model PyTorch quantized: the float ops between its quantized layers
  // run on their storage where they can (the graph cuvil-quantize makes).
  if (func.walk([](cir::QuantizeOp) { return mlir::WalkResult::interrupt(); }).wasInterrupted())
    mlir::cuvil::foldQuantRoundTrips(func);
  if (options.eliminateDeadCode)
    removeDeadOps(func);
  std::string diag;
  {
    mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
      diag += (diag.empty() ? "" : "; ") + d.str();
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(*module)))
      return inputError(path + ": CUVIL-E-IMPORT-VERIFY: the imported IR does not verify "
                               "(an importer bug): " + diag);
  }
  result.module = std::move(module);
  return result;
}

std::string describeUnsupported(const std::string &model,
                                const std::vector<UnsupportedItem> &items) {
  size_t count = 0;
  for (const UnsupportedItem &item : items)
    count += item.locations.size();
  std::string s = "'" + model + "' uses " + std::to_string(items.size()) +
                  " unsupported operator(s) or construct(s) (" + std::to_string(count) + " use(s)):";
  for (const UnsupportedItem &item : items) {
    s += "\n  " + item.what + " (" + std::to_string(item.locations.size()) + " use" +
         (item.locations.size() == 1 ? "" : "s") + ")";
    for (const std::string &loc : item.locations)
      s += "\n    at " + loc;
  }
  return s;
}

} // namespace cuvil::torchscript
