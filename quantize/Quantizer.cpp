//===- Quantizer.cpp - cuvil-quantize's workflow --------------------------===//
#include "quantize/Quantizer.h"

#include "cache/Entry.h"
#include "cuvil-run/LibraryRunner.h"
#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "dialects/Cuvil/IR/CuvilOps.h"
#include "dialects/Cuvil/IR/ModuleWriter.h"
#include "dialects/Cuvil/IR/QuantArithmetic.h"
#include "dialects/Cuvil/Reference/Evaluator.h"
#include "driver/CompileDriver.h"
#include "frontend/loader/ModelLoader.h"
#include "passes/GraphPipeline.h"
#include "passes/InitAll.h"
#include "quantize/CalibrationData.h"
#include "quantize/CalibrationTableIO.h"
#include "quantize/QuantizeLayers.h"
#include "quantize/QuantizeReport.h"
#include "support/AtomicFile.h"
#include "support/Staging.h"
#include "support/Tool/ToolSupport.h"
#include "targets/Targets.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <unistd.h>

namespace cuvil::quant {
namespace {

namespace mc = mlir::cuvil;
using mlir::Operation;
using mlir::Value;

constexpr double kHalfMax = 65504.0;

// --- The layers of the float graph ------------------------------------------

struct Layer {
  Operation *op;
  Value input, result, post; ///< post: the relu/hardtanh result, or result
  Value weight;              ///< null for an add
  Value rhs;                 ///< an add's second operand
};

bool isF32Tensor(Value v) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  return t && t.getElementType().isF32() && t.hasStaticShape();
}

Value postOf(Value y) {
  if (y.hasOneUse()) {
    Operation *user = *y.getUsers().begin();
    if (llvm::isa<mc::ReluOp, mc::HardtanhOp>(user))
      return user->getResult(0);
  }
  return y;
}

/// Whether `op` runs once per inference, at the function's top level:
/// layers inside data-dependent control flow (a loop's body, a branch)
/// stay in float (calibration observes values the function can return).
bool atTopLevel(Operation *op) { return llvm::isa_and_present<mlir::func::FuncOp>(op->getParentOp()); }

bool isProductLayer(Operation *op) {
  if (!llvm::isa<mc::Conv2DOp, mc::LinearOp>(op) || !atTopLevel(op))
    return false;
  Value x = op->getOperand(0), w = op->getOperand(1), y = op->getResult(0);
  if (!isF32Tensor(x) || !isF32Tensor(y) || !w.getDefiningOp<mc::ConstantOp>())
    return false;
  return op->getNumOperands() <= 2 || op->getOperand(2).getDefiningOp<mc::ConstantOp>();
}

/// The adds worth quantizing: two computed f32 tensors of the result's
/// shape (residual connections) whose sum (after a relu, through max
/// pooling or reshapes) a conv2d/linear layer or another such add reads, so
/// that the values stay in 8 bits from layer to layer.
llvm::DenseSet<Operation *> quantizableAdds(mlir::func::FuncOp f) {
  llvm::SmallVector<Operation *> ops;
  f.walk([&](Operation *op) { ops.push_back(op); });
  llvm::DenseSet<Operation *> adds;
  auto readByLayer = [&](Value v, auto &&self) -> bool {
    for (mlir::OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if ((isProductLayer(user) && use.getOperandNumber() == 0) || adds.contains(user))
        return true;
      if (mc::commutesWithDequantize(user) && self(user->getResult(0), self))
        return true;
    }
    return false;
  };
  for (Operation *op : llvm::reverse(ops)) { // readers before the adds they read
    auto add = llvm::dyn_cast<mc::AddOp>(op);
    if (!add || !atTopLevel(op) || !isF32Tensor(add.getResult()) || add.getLhs().getType() != add.getType() ||
        add.getRhs().getType() != add.getType() || add.getLhs().getDefiningOp<mc::ConstantOp>() ||
        add.getRhs().getDefiningOp<mc::ConstantOp>())
      continue;
    if (readByLayer(postOf(add.getResult()), readByLayer))
      adds.insert(op);
  }
  return adds;
}

/// The conv2d/linear ops and residual adds cuvil-quantize can quantize, in
/// graph order.
std::vector<Layer> collectLayers(mlir::func::FuncOp f) {
  std::vector<Layer> layers;
  llvm::DenseSet<Operation *> adds = quantizableAdds(f);
  f.walk([&](Operation *op) {
    if (adds.contains(op)) {
      Value y = op->getResult(0);
      layers.push_back({op, op->getOperand(0), y, postOf(y), Value(), op->getOperand(1)});
      return;
    }
    if (!isProductLayer(op))
      return;
    Value y = op->getResult(0);
    layers.push_back({op, op->getOperand(0), y, postOf(y), op->getOperand(1), Value()});
  });
  return layers;
}

/// The module path of the layer whose weights are `w` ("layer1.0.conv2"
/// for "layer1.0.conv2.weight"), or "".
std::string weightOwner(Value w) {
  if (auto c = w ? w.getDefiningOp<mc::ConstantOp>() : nullptr)
    if (auto r = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(c.getValue())) {
      std::string key = r.getRawHandle().getKey().str();
      size_t at = key.find(".weight");
      return at != std::string::npos && at > 0 ? key.substr(0, at) : key;
    }
  return "";
}

std::string layerName(const Layer &l, size_t index) {
  if (!l.weight) {
    // An add: after the block of the layer that computes its first operand
    // ("layer1.0.conv2" -> "layer1.0.add").
    for (Value v : {l.input, l.rhs}) {
      Operation *def = v.getDefiningOp();
      while (def && llvm::isa<mc::ReluOp, mc::HardtanhOp>(def))
        def = def->getOperand(0).getDefiningOp();
      if (!def || !llvm::isa<mc::Conv2DOp, mc::LinearOp>(def))
        continue;
      std::string owner = weightOwner(def->getOperand(1));
      if (owner.empty())
        continue;
      size_t dot = owner.rfind('.');
      return dot == std::string::npos ? "add" : owner.substr(0, dot) + ".add";
    }
    return "add";
  }
  if (auto c = l.weight.getDefiningOp<mc::ConstantOp>())
    if (auto r = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(c.getValue())) {
      std::string key = r.getRawHandle().getKey().str();
      size_t at = key.find(".weight");
      if (at != std::string::npos && at > 0)
        return key.substr(0, at);
      return key;
    }
  return (llvm::isa<mc::Conv2DOp>(l.op) ? "conv2d_" : "linear_") + std::to_string(index);
}

/// The entry of a module known to have one (the float graph's copies).
mlir::func::FuncOp entryOf(mlir::ModuleOp m) { return *mc::entryFunction(m); }

/// The graph's structure: op names, attributes (weights by resource name,
/// not value), types and the use-def edges. Locations are left out.
std::string structuralHash(mlir::func::FuncOp f) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DenseMap<Value, unsigned> ids;
  auto id = [&](Value v) {
    auto [it, inserted] = ids.try_emplace(v, ids.size());
    return it->second;
  };
  os << f.getFunctionType() << "\n";
  for (Value a : f.getArguments())
    id(a);
  f.walk([&](Operation *op) {
    os << op->getName() << "(";
    for (Value v : op->getOperands())
      os << "%" << id(v) << ",";
    os << ")" << op->getAttrDictionary() << ":";
    for (Value r : op->getResults())
      os << "%" << id(r) << "=" << r.getType() << ",";
    os << "\n";
  });
  os.flush();
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(text)), /*LowerCase=*/true);
}

// --- Progress ---------------------------------------------------------------

class Progress {
public:
  Progress(bool enabled, std::string label, size_t total)
      : enabled_(enabled && isatty(2)), label_(std::move(label)), total_(total) {
    draw();
  }
  ~Progress() { finish(); }
  void step() {
    ++done_;
    draw();
  }
  void finish() {
    if (enabled_ && !finished_)
      std::fprintf(stderr, "\n");
    finished_ = true;
  }

private:
  void draw() {
    if (!enabled_)
      return;
    int width = 30, filled = total_ ? int(width * done_ / total_) : width;
    std::fprintf(stderr, "\r%s [%s%s] %zu/%zu", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done_, total_);
    std::fflush(stderr);
  }
  bool enabled_;
  std::string label_;
  size_t total_, done_ = 0;
  bool finished_ = false;
};

// --- Samples and libraries --------------------------------------------------

struct Sample {
  std::string path;
  std::vector<Tensor> inputs;
};

Result<std::vector<Sample>> loadSamples(const std::string &dir, size_t limit, const char *what) {
  Result<std::vector<std::string>> paths = listSamples(dir);
  if (!paths)
    return paths.error();
  if (limit && paths->size() < limit)
    return inputError("'" + dir + "' holds " + std::to_string(paths->size()) + " " + what +
                      " sample(s), fewer than the " + std::to_string(limit) + " asked for (--samples)");
  if (limit)
    paths->resize(limit);
  std::vector<Sample> samples;
  for (const std::string &p : *paths) {
    Result<std::vector<Tensor>> t = loadSample(p);
    if (!t)
      return t.error();
    samples.push_back({p, std::move(*t)});
  }
  return samples;
}

/// Compiles `module` (a copy; the driver lowers what it is given) for this
/// machine into `dir` and loads it.
Result<LibraryRunner> compileAndLoad(mlir::ModuleOp module, const std::string &dir,
                                     const std::string &name, int threads) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
  if (std::getenv("CUVIL_QUANTIZE_KEEP_WORK_DIR")) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir + "/" + name + ".mlir", ec);
    if (!ec)
      module.print(os);
  }
  mc::CompileOptions options;
  options.model = name + ".mlir";
  options.modelName = name;
  options.target = "x86_64";
  std::string path = dir + "/lib" + name + ".so";
  auto start = std::chrono::steady_clock::now();
  Result<mc::CompileResult> r = mc::compileModule(*copy, options, path);
  if (!r)
    return Error{"compiling the " + name + " library: " + r.error().message, r.error().code};
  if (std::error_code ec = llvm::sys::fs::rename(r->libraryTempPath, path))
    return ioError("cannot move the " + name + " library into '" + dir + "': " + ec.message());
  llvm::sys::DontRemoveFileOnSignal(r->libraryTempPath);
  // Interrupted, the run leaves no libraries behind (the work directory
  // itself is removed when the run ends).
  llvm::sys::RemoveFileOnSignal(path);
  spdlog::info("compiled the {} library in {:.1f} s", name,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return LibraryRunner::load(path, threads);
}

Status runSample(LibraryRunner &lib, const Sample &s, const std::vector<Tensor> &extra,
                 std::vector<Tensor> &outputs) {
  if (s.inputs.size() + extra.size() != lib.numInputs())
    return inputError("sample '" + s.path + "' has " + std::to_string(s.inputs.size()) +
                      " input(s); the model takes " + std::to_string(lib.numInputs() - extra.size()));
  Status st;
  if (extra.empty()) {
    st = lib.run(s.inputs, outputs);
  } else {
    std::vector<Tensor> all = s.inputs;
    all.insert(all.end(), extra.begin(), extra.end());
    st = lib.run(all, outputs);
  }
  if (!st) {
    // The library's own message starts with its (temporary) path.
    std::string message = st.error().message, prefix = "'" + lib.path() + "': ";
    if (llvm::StringRef(message).starts_with(prefix))
      message = message.substr(prefix.size());
    return inputError("sample '" + s.path + "': " + message);
  }
  return Status();
}

/// Compares outputs with the float model's, over a set of samples.
class Comparer {
public:
  explicit Comparer(size_t outputs) : per_(outputs) {}
  void add(const std::vector<Tensor> &ref, const std::vector<Tensor> &cand) {
    for (size_t i = 0; i < per_.size() && i < ref.size() && i < cand.size(); ++i) {
      if (ref[i].dtype() != DType::Float32 || cand[i].dtype() != DType::Float32)
        continue;
      size_t n = ref[i].numElements();
      size_t last = ref[i].rank() ? ref[i].shape().back() : 1;
      auto *r = reinterpret_cast<const float *>(ref[i].data());
      auto *c = reinterpret_cast<const float *>(cand[i].data());
      all_.add(r, c, n, last);
      per_[i].add(r, c, n, last);
    }
  }
  Comparison result() const {
    Comparison c;
    c.relativeL2 = all_.relativeL2();
    c.cosine = all_.cosine();
    c.kl = all_.meanKL();
    c.nonFinite = all_.nonFinite();
    for (const OutputComparison &p : per_)
      c.perOutputKL.push_back(p.meanKL());
    return c;
  }

private:
  OutputComparison all_;
  std::vector<OutputComparison> per_;
};

bool passes(const Comparison &c, double maxL2) {
  return !c.nonFinite && std::isfinite(c.relativeL2) && c.relativeL2 <= maxL2;
}

// --- The quantizer ----------------------------------------------------------

QuantGrid activationGrid() { return {0, 255, false}; }

QuantGrid weightGrid(const std::string &backend) {
  // x86: weights symmetric around zero, -128 unused (a negated weight
  // stays representable); qnnpack and onednn use the whole i8 range.
  return backend == "x86" ? QuantGrid{-127, 127, true} : QuantGrid{-128, 127, true};
}

class Quantizer {
public:
  Quantizer(const QuantizeOptions &o) : opt(o) {}
  Status run();

private:
  Status loadFloatGraph();
  Status calibrate();
  Status useTable(const CalibrationTable &table);
  CalibrationTable buildTable() const;
  Status writeTable();
  Status floatReferences();
  Status buildSimulation();
  Result<Value> simulatedWeights(size_t i, Value weight, mlir::OpBuilder &b);
  Result<Comparison> simulate(const std::vector<double> &masks, size_t sampleCount);
  Status sensitivity();
  mlir::OwningOpRef<mlir::ModuleOp> quantizedModule();
  Result<Comparison> realGate(const std::string &name);
  std::string fallbackPrecision(size_t layer, std::string &why) const;
  Status assignPrecisions();
  Status writeOutputs();
  mlir::cuvil::QuantParamsAttr activationAttr(int tensor) const;

  const QuantizeOptions &opt;
  std::unique_ptr<mlir::MLIRContext> ctx;
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> floatModule, finalModule;
  std::vector<Layer> layers;
  std::vector<TensorObserver> observers;
  std::vector<Sample> calibration, validation;
  bool validationIsCalibration = true;
  std::vector<std::vector<Tensor>> references; ///< float outputs per validation sample
  size_t numOutputs = 0;
  std::string workDir;
  std::optional<LibraryRunner> simulation;
  /// The calibration library (float outputs first): it also gives the
  /// validation samples' float references, without a compile of its own.
  std::optional<LibraryRunner> calibrationLibrary;
  std::vector<mlir::cuvil::QuantParamsAttr> weightParams;
  QuantizeReportData report;
};

Status Quantizer::loadFloatGraph() {
  mlir::DialectRegistry registry;
  mc::registerAllDialects(registry);
  mc::registerTargetDialects(registry);
  ctx = std::make_unique<mlir::MLIRContext>(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  ctx->printOpOnDiagnostic(false);
  sourceMgr = std::make_unique<llvm::SourceMgr>();
  diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(*sourceMgr, ctx.get(), llvm::errs());

  LoadOptions load;
  load.inputShapes = opt.inputShapes;
  // A .pt model without --input-shape takes the first sample's shapes
  // (float samples as f32: the dtype itself is checked when samples run).
  if (load.inputShapes.empty() && llvm::StringRef(opt.model).ends_with(".pt")) {
    const std::vector<Tensor> &first = calibration.front().inputs;
    for (size_t i = 0; i < first.size(); ++i) {
      std::string spec = std::to_string(i) + "=";
      for (int64_t d : first[i].shape())
        spec += std::to_string(d) + "x";
      spec += isFloat(first[i].dtype()) ? std::string("f32") : std::string(dtypeName(first[i].dtype()));
      load.inputShapes.push_back(spec);
    }
    spdlog::info("input shapes from '{}': {}", calibration.front().path,
                 llvm::join(load.inputShapes, " "));
  }
  Result<mlir::OwningOpRef<mlir::ModuleOp>> m = loadModel(*ctx, opt.model, load);
  if (!m && opt.inputShapes.empty() && !load.inputShapes.empty())
    return Error{m.error().message + " (the shapes were taken from the " +
                     std::to_string(load.inputShapes.size()) + " array(s) of sample '" +
                     calibration.front().path + "': each sample needs one per model input)",
                 m.error().code};
  if (!m)
    return m.error();
  floatModule = std::move(*m);
  if (floatModule.get()->hasAttr(mc::kCompileStageAttrName))
    return inputError("'" + opt.model + "' is past the graph pipeline (cuvil-export --emit mlir); "
                      "give cuvil-quantize the model or its cuvil-import output");
  // Batch norm folded and shapes known, but no fusion: the quantizer sees
  // the conv2d/linear ops themselves.
  mlir::PassManager pm(ctx.get());
  mc::GraphPipelineOptions graph;
  graph.disabled = {"fusion", "memory-planning", "lifetime-check"};
  mc::buildGraphPipeline(pm, graph);
  if (mlir::failed(pm.run(*floatModule)))
    return inputError("the graph pipeline failed on '" + opt.model + "' (see the diagnostics above)");
  mlir::FailureOr<mlir::func::FuncOp> entry = mc::entryFunction(*floatModule);
  if (mlir::failed(entry))
    return inputError("'" + opt.model + "' must have one public function (or one named 'forward')");
  mlir::func::FuncOp f = *entry;
  numOutputs = f.getNumResults();
  auto isF32 = [](mlir::Type t) {
    auto r = llvm::dyn_cast<mlir::RankedTensorType>(t);
    return r && r.getElementType().isF32();
  };
  if (llvm::none_of(f.getResultTypes(), isF32))
    return inputError("'" + opt.model + "' has no float32 output: the accuracy gate compares the "
                      "quantized model's float outputs with the float model's");
  report.graphHash = structuralHash(f);

  layers = collectLayers(f);
  // RELIABILITY F6: layers in data-dependent control flow run a number of
  // times calibration cannot bound (or never); they stay float, said once.
  unsigned inControlFlow = 0;
  f.walk([&](Operation *op) {
    if (llvm::isa<mc::Conv2DOp, mc::LinearOp>(op) && !atTopLevel(op)) {
      if (inControlFlow++ == 0)
        mlir::emitWarning(op->getLoc())
            << "this '" << op->getName()
            << "' is inside data-dependent control flow (a loop's body or a branch): it stays float"
            << " (with any others there)";
    }
  });
  if (layers.empty())
    return inputError("'" + opt.model + "' has no convolution or linear layer with float32 "
                      "activations and constant weights: there is nothing to quantize");
  llvm::DenseMap<Value, int> tensorIndex;
  std::set<std::string> names;
  auto tensorOf = [&](Value v, const std::string &name) {
    // Through ops that move values without changing them (max pooling,
    // reshapes) to a tensor quantized already: the same parameters, as
    // PyTorch's quantized max pooling keeps them, so the values stay in
    // u8 across the op (cuvil-quantize-layers runs it on the storage).
    for (Value s = v; Operation *def = s.getDefiningOp();) {
      if (!mc::commutesWithDequantize(def))
        break;
      s = def->getOperand(0);
      if (auto it = tensorIndex.find(s); it != tensorIndex.end())
        return it->second;
    }
    auto [it, inserted] = tensorIndex.try_emplace(v, report.tensors.size());
    if (inserted) {
      TensorReport t;
      t.name = name;
      report.tensors.push_back(t);
    }
    return it->second;
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerReport l;
    l.name = layerName(layers[i], i);
    for (int n = 2; !names.insert(l.name).second; ++n)
      l.name = layerName(layers[i], i) + "#" + std::to_string(n);
    l.kind = llvm::isa<mc::Conv2DOp>(layers[i].op) ? "conv2d"
             : llvm::isa<mc::LinearOp>(layers[i].op) ? "linear"
                                                     : "add";
    l.input = tensorOf(layers[i].input, l.name + (layers[i].rhs ? ":lhs" : ":input"));
    if (layers[i].rhs)
      l.rhs = tensorOf(layers[i].rhs, l.name + ":rhs");
    l.output = tensorOf(layers[i].post, l.name + ":output");
    if (!layers[i].weight) {
      weightParams.push_back(nullptr);
      report.layers.push_back(l);
      continue;
    }
    mlir::FailureOr<Tensor> w = mc::reference::tensorFromAttr(
        layers[i].weight.getDefiningOp<mc::ConstantOp>().getValue(), layers[i].op->getLoc());
    if (mlir::failed(w))
      return inputError("cannot read the weights of layer '" + l.name + "'");
    for (int64_t k = 0; k < w->numElements(); ++k)
      l.weightAbsMax = std::max(l.weightAbsMax, std::fabs(w->getDouble(k)));
    weightParams.push_back(mc::weightQuantParams(ctx.get(), *w, weightGrid(opt.backend), opt.perChannel));
    report.layers.push_back(l);
  }
  // A layer whose output no int8 layer reads keeps its sums in f32.
  std::set<int> read;
  for (const LayerReport &l : report.layers) {
    read.insert(l.input);
    read.insert(l.rhs);
  }
  for (LayerReport &l : report.layers)
    l.floatOutput = l.kind != "add" && !read.count(l.output); // an int8 add's sum is 8-bit
  spdlog::info("{} layer(s) to quantize, {} activation tensor(s)", layers.size(), report.tensors.size());
  return Status();
}

/// Every observed tensor's value in a clone of the float module (collected
/// the same way, so indices agree).
std::vector<Value> valuesIn(mlir::func::FuncOp f, const std::vector<LayerReport> &reports) {
  std::vector<Layer> ls = collectLayers(f);
  std::vector<Value> values;
  for (size_t i = 0; i < ls.size(); ++i) {
    // The first value registered for a tensor: a layer input aliased to
    // its producer's output (through max pooling, say) keeps the output.
    auto set = [&](int idx, Value v) {
      if (idx >= int(values.size()))
        values.resize(idx + 1);
      if (!values[idx])
        values[idx] = v;
    };
    set(reports[i].input, ls[i].input);
    if (ls[i].rhs)
      set(reports[i].rhs, ls[i].rhs);
    set(reports[i].output, ls[i].post);
  }
  return values;
}

Status Quantizer::calibrate() {
  mlir::OwningOpRef<mlir::ModuleOp> module = floatModule->clone();
  mlir::func::FuncOp f = entryOf(*module);
  std::vector<Value> values = valuesIn(f, report.layers);
  auto ret = llvm::cast<mlir::func::ReturnOp>(f.getBody().front().getTerminator());
  for (Value v : values) {
    f.insertResult(f.getNumResults(), v.getType(), mlir::DictionaryAttr());
    ret->insertOperands(ret->getNumOperands(), v);
  }
  Result<LibraryRunner> compiled = compileAndLoad(*module, workDir, "calibration", opt.threads);
  if (!compiled)
    return compiled.error();
  calibrationLibrary.emplace(std::move(*compiled));
  LibraryRunner *lib = &*calibrationLibrary;

  Method method = opt.method;
  bool histograms = method != Method::MinMax;
  observers.assign(values.size(), TensorObserver());
  std::vector<Tensor> outputs;
  for (int pass = 0; pass < (histograms ? 2 : 1); ++pass) {
    if (pass == 1)
      for (TensorObserver &o : observers)
        o.startHistograms();
    Progress progress(opt.progress, pass == 0 ? "calibrating: ranges    " : "calibrating: histograms",
                      calibration.size());
    for (const Sample &s : calibration) {
      if (Status st = runSample(*lib, s, {}, outputs); !st)
        return st;
      if (pass == 0 && validationIsCalibration)
        references.emplace_back(outputs.begin(), outputs.begin() + numOutputs);
      for (size_t t = 0; t < values.size(); ++t) {
        const Tensor &x = outputs[numOutputs + t];
        auto *data = reinterpret_cast<const float *>(x.data());
        if (pass == 0)
          observers[t].observeRange(data, x.numElements());
        else
          observers[t].observeHistograms(data, x.numElements());
      }
      progress.step();
    }
  }
  for (size_t t = 0; t < observers.size(); ++t) {
    if (observers[t].nonFinite())
      return inputError("the float model computes " + std::to_string(observers[t].nonFinite()) +
                        " NaN/Inf value(s) in '" + report.tensors[t].name +
                        "' on the calibration samples; it cannot be calibrated");
    TensorReport &r = report.tensors[t];
    r.observedMin = observers[t].min();
    r.observedMax = observers[t].max();
    r.count = observers[t].count();
    r.range = chooseRange(method, observers[t], activationGrid(), opt.percentile);
    r.params = chooseParams(r.range, activationGrid());
    if (histograms) {
      const Histogram &h = observers[t].histogram();
      r.histLo = h.lo;
      r.histHi = h.hi;
      size_t bins = 64, per = std::max<size_t>(1, h.size() / bins);
      for (size_t b = 0; b < h.size(); b += per) {
        double sum = 0;
        for (size_t k = b; k < std::min(h.size(), b + per); ++k)
          sum += h.counts[k];
        r.histogram.push_back(sum);
      }
    }
  }
  report.tableSource = "calibrated";
  return Status();
}

Status Quantizer::useTable(const CalibrationTable &table) {
  if (table.graph_hash() != report.graphHash)
    return inputError("calibration table '" + opt.calibrationTable + "' was made for another graph "
                      "(graph hash " + table.graph_hash().substr(0, 16) + "..., this model's is " +
                      report.graphHash.substr(0, 16) + "...); delete it or give another path to calibrate again");
  std::map<std::string, const TensorCalibration *> byName;
  for (const TensorCalibration &c : table.tensors())
    byName[c.name()] = &c;
  for (TensorReport &r : report.tensors) {
    auto it = byName.find(r.name);
    if (it == byName.end())
      return inputError("calibration table '" + opt.calibrationTable + "' has no entry for tensor '" +
                        r.name + "'");
    const TensorCalibration &c = *it->second;
    r.observedMin = c.observed_min();
    r.observedMax = c.observed_max();
    r.count = c.count();
    r.range = {c.range_lo(), c.range_hi()};
    r.params = {c.scale(), c.zero_point()};
  }
  if (!table.calibration_digest().empty() && table.calibration_digest() != report.calibrationDigest)
    spdlog::warn("the calibration table '{}' was made from other calibration samples than '{}'; "
                 "its ranges are used (delete it to calibrate on these)",
                 opt.calibrationTable, opt.calibrationData);
  if (table.method() != methodName(opt.method))
    spdlog::warn("the calibration table '{}' was made with --method {}; its ranges are used",
                 opt.calibrationTable, table.method());
  report.method = table.method();
  report.tableSource = opt.calibrationTable;
  return Status();
}

Status Quantizer::writeTable() { return writeCalibrationTable(opt.calibrationTable, buildTable()); }

CalibrationTable Quantizer::buildTable() const {
  CalibrationTable table;
  table.set_version(kCalibrationTableVersion);
  table.set_graph_hash(report.graphHash);
  table.set_calibration_digest(report.calibrationDigest);
  table.set_samples(calibration.size());
  table.set_method(methodName(opt.method));
  table.set_percentile(opt.percentile);
  table.set_backend(opt.backend);
  table.set_producer("cuvil-quantize " + versionText());
  for (size_t t = 0; t < report.tensors.size(); ++t) {
    const TensorReport &r = report.tensors[t];
    TensorCalibration *c = table.add_tensors();
    c->set_name(r.name);
    c->set_observed_min(r.observedMin);
    c->set_observed_max(r.observedMax);
    c->set_count(r.count);
    c->set_range_lo(r.range.lo);
    c->set_range_hi(r.range.hi);
    c->set_scale(r.params.scale);
    c->set_zero_point(r.params.zeroPoint);
    if (t < observers.size() && observers[t].histogram().size()) {
      const Histogram &h = observers[t].histogram();
      HistogramSummary *s = c->mutable_histogram();
      s->set_lo(h.lo);
      s->set_hi(h.hi);
      s->set_bins(h.size());
      for (double q : {0.0001, 0.01, 0.5, 0.99, 0.9999})
        s->add_quantiles(h.quantile(q));
    }
  }
  return table;
}

Status Quantizer::floatReferences() {
  if (!references.empty())
    return Status();
  LibraryRunner *lib = calibrationLibrary ? &*calibrationLibrary : nullptr;
  std::optional<LibraryRunner> floatLibrary;
  if (!lib) { // calibration came from a table
    Result<LibraryRunner> compiled = compileAndLoad(*floatModule, workDir, "float", opt.threads);
    if (!compiled)
      return compiled.error();
    floatLibrary.emplace(std::move(*compiled));
    lib = &*floatLibrary;
  }
  std::vector<Tensor> outputs;
  Progress progress(opt.progress, "float reference      ", validation.size());
  for (const Sample &s : validation) {
    if (Status st = runSample(*lib, s, {}, outputs); !st)
      return st;
    references.emplace_back(outputs.begin(), outputs.begin() + numOutputs);
    progress.step();
  }
  calibrationLibrary.reset();
  return Status();
}

mlir::cuvil::QuantParamsAttr Quantizer::activationAttr(int tensor) const {
  const AffineParams &p = report.tensors[tensor].params;
  return mc::QuantParamsAttr::get(ctx.get(), mlir::DenseF64ArrayAttr::get(ctx.get(), {p.scale}),
                                  mlir::DenseI64ArrayAttr::get(ctx.get(), {p.zeroPoint}), -1);
}

/// One library for every sensitivity question: each layer computes both its
/// float result and an int8 simulation (fake-quantized input, weights and
/// output: the same rounding and clamping as the int8 kernels, in float),
/// and a 0-d mask input per layer picks one: y + m * (y_int8 - y).
Status Quantizer::buildSimulation() {
  mlir::OwningOpRef<mlir::ModuleOp> module = floatModule->clone();
  mlir::func::FuncOp f = entryOf(*module);
  std::vector<Layer> ls = collectLayers(f);
  mlir::OpBuilder b(ctx.get());
  auto f32 = b.getF32Type();
  auto scalar = mlir::RankedTensorType::get({}, f32);
  auto withElement = [](mlir::Type t, mlir::Type e) {
    auto r = llvm::cast<mlir::RankedTensorType>(t);
    return mlir::RankedTensorType::get(r.getShape(), e);
  };
  mlir::Type ui8 = mlir::IntegerType::get(ctx.get(), 8, mlir::IntegerType::Unsigned);
  for (size_t i = 0; i < ls.size(); ++i) {
    const LayerReport &lr = report.layers[i];
    unsigned argIndex = f.getNumArguments();
    f.insertArgument(argIndex, scalar, mlir::DictionaryAttr(), ls[i].op->getLoc());
    Value mask = f.getArgument(argIndex);
    Operation *op = ls[i].op;
    mlir::Location loc = op->getLoc();
    b.setInsertionPointAfter(op);
    auto fakeQuant = [&](Value v, mc::QuantParamsAttr p) -> Value {
      Value q = b.create<mc::QuantizeOp>(loc, withElement(v.getType(), ui8), v, p);
      return b.create<mc::DequantizeOp>(loc, v.getType(), q, p);
    };
    // The op's operands now (an earlier layer's masked result where it
    // reads one directly), not the values collected.
    Value xq = fakeQuant(op->getOperand(0), activationAttr(lr.input));
    Operation *q;
    if (ls[i].rhs) { // an add: both operands and the sum fake-quantized
      Value rq = fakeQuant(op->getOperand(1), activationAttr(lr.rhs));
      q = b.clone(*op);
      q->setOperand(0, xq);
      q->setOperand(1, rq);
    } else {
      Result<Value> wv = simulatedWeights(i, ls[i].weight, b);
      if (!wv)
        return wv.status();
      q = b.clone(*op);
      q->setOperand(0, xq);
      q->setOperand(1, *wv);
    }
    Value yq = lr.floatOutput ? q->getResult(0) : fakeQuant(q->getResult(0), activationAttr(lr.output));
    Value y = ls[i].result;
    auto diff = b.create<mc::SubOp>(loc, y.getType(), yq, y);
    auto scaled = b.create<mc::MulOp>(loc, y.getType(), mask, diff);
    auto picked = b.create<mc::AddOp>(loc, y.getType(), y, scaled);
    y.replaceAllUsesExcept(picked, llvm::SmallPtrSet<Operation *, 2>{diff, picked});
  }
  Result<LibraryRunner> lib = compileAndLoad(*module, workDir, "simulation", opt.threads);
  if (!lib)
    return lib.error();
  simulation.emplace(std::move(*lib));
  return Status();
}

/// Layer i's weights as the int8 kernels see them (quantized, then
/// dequantized), a constant at b.
Result<Value> Quantizer::simulatedWeights(size_t i, Value weight, mlir::OpBuilder &b) {
  auto wc = weight.getDefiningOp<mc::ConstantOp>();
  mlir::FailureOr<Tensor> w = mc::reference::tensorFromAttr(wc.getValue(), wc.getLoc());
  if (mlir::failed(w))
    return inputError("cannot read the weights of layer '" + report.layers[i].name + "'");
  Tensor wq = mc::quantizeWeightTensor(*w, weightParams[i]);
  Tensor wfq(DType::Float32, w->shape());
  mc::QuantParamsAttr wp = weightParams[i];
  int64_t per = w->numElements() / std::max<int64_t>(int64_t(wp.getScale().size()), 1);
  for (int64_t k = 0; k < w->numElements(); ++k)
    wfq.setDouble(k, mc::quant::dequantizeValue(wq.getInt(k), wp.scaleAt(k / per), wp.zeroPointAt(k / per),
                                                !wp.isPerTensor()));
  auto wType = llvm::cast<mlir::RankedTensorType>(weight.getType());
  return Value(b.create<mc::ConstantOp>(
      wc.getLoc(), wType, mc::reference::elementsAttrFromTensor(wfq, wType, "simulation.weight." + std::to_string(i))));
}

Result<Comparison> Quantizer::simulate(const std::vector<double> &masks, size_t sampleCount) {
  std::vector<Tensor> extra;
  for (double m : masks) {
    Tensor t(DType::Float32, {});
    t.setDouble(0, m);
    extra.push_back(std::move(t));
  }
  Comparer cmp(numOutputs);
  std::vector<Tensor> outputs;
  for (size_t s = 0; s < std::min(sampleCount, validation.size()); ++s) {
    if (Status st = runSample(*simulation, validation[s], extra, outputs); !st)
      return st.error();
    cmp.add(references[s], outputs);
  }
  return cmp.result();
}

Status Quantizer::sensitivity() {
  size_t n = std::min(opt.sensitivitySamples ? opt.sensitivitySamples : validation.size(),
                      validation.size());
  report.sensitivitySamples = n;
  Progress progress(opt.progress, "sensitivity          ", 2 * layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    std::vector<double> alone(layers.size(), 0.0), allBut(layers.size(), 1.0);
    alone[i] = 1;
    allBut[i] = 0;
    Result<Comparison> a = simulate(alone, n);
    if (!a)
      return a.status();
    progress.step();
    Result<Comparison> b = simulate(allBut, n);
    if (!b)
      return b.status();
    progress.step();
    report.layers[i].aloneInt8 = *a;
    report.layers[i].aloneFloat = *b;
  }
  // The priority table: the largest error alone in int8 first (a layer
  // whose simulation is not finite before everything).
  report.priority.resize(layers.size());
  for (size_t i = 0; i < layers.size(); ++i)
    report.priority[i] = i;
  auto key = [&](size_t i) {
    const Comparison &c = report.layers[i].aloneInt8;
    return c.nonFinite || !std::isfinite(c.relativeL2) ? INFINITY : c.relativeL2;
  };
  std::stable_sort(report.priority.begin(), report.priority.end(),
                   [&](size_t a, size_t b) { return key(a) > key(b); });
  for (size_t p = 0; p < report.priority.size(); ++p)
    report.layers[report.priority[p]].priority = int(p + 1);
  return Status();
}

mlir::OwningOpRef<mlir::ModuleOp> Quantizer::quantizedModule() {
  mlir::OwningOpRef<mlir::ModuleOp> module = floatModule->clone();
  mlir::func::FuncOp f = entryOf(*module);
  std::vector<Layer> ls = collectLayers(f);
  mlir::Builder b(ctx.get());
  for (size_t i = 0; i < ls.size(); ++i) {
    const LayerReport &lr = report.layers[i];
    ls[i].op->setAttr(mc::kPrecisionAttrName, b.getStringAttr(lr.precision));
    if (lr.precision == "int8") {
      ls[i].op->setAttr(mc::kQuantInputAttrName, activationAttr(lr.input));
      if (lr.rhs >= 0)
        ls[i].op->setAttr(mc::kQuantRhsAttrName, activationAttr(lr.rhs));
      if (!lr.floatOutput)
        ls[i].op->setAttr(mc::kQuantOutputAttrName, activationAttr(lr.output));
      if (weightParams[i])
        ls[i].op->setAttr(mc::kQuantWeightAttrName, weightParams[i]);
    }
  }
  mlir::PassManager pm(ctx.get());
  pm.nest<mlir::func::FuncOp>().addPass(mc::createCuvilQuantizeLayersPass());
  if (mlir::failed(pm.run(*module)))
    return nullptr;
  return module;
}

Result<Comparison> Quantizer::realGate(const std::string &name) {
  mlir::OwningOpRef<mlir::ModuleOp> module = quantizedModule();
  if (!module)
    return inputError("quantizing the layers failed (see the diagnostics above)");
  Result<LibraryRunner> lib = compileAndLoad(*module, workDir, name, opt.threads);
  if (!lib)
    return lib.error();
  Comparer cmp(numOutputs);
  std::vector<Tensor> outputs;
  for (size_t s = 0; s < validation.size(); ++s) {
    if (Status st = runSample(*lib, validation[s], {}, outputs); !st)
      return st.error();
    cmp.add(references[s], outputs);
  }
  finalModule = std::move(module);
  return cmp.result();
}

std::string Quantizer::fallbackPrecision(size_t i, std::string &why) const {
  const LayerReport &l = report.layers[i];
  if (l.aloneInt8.nonFinite && opt.fallback != "fp32") {
    why += "; fp32: Inf/NaN appeared";
    return "fp32";
  }
  if (l.kind == "add") // a sum has nothing to gain from fp16/bf16 storage
    return "fp32";
  if (opt.fallback != "fp16")
    return opt.fallback;
  double reach = l.weightAbsMax;
  for (int t : {l.input, l.output})
    reach = std::max({reach, std::fabs(report.tensors[t].observedMin),
                      std::fabs(report.tensors[t].observedMax)});
  if (reach > kHalfMax) {
    why += "; fp32, not fp16: values reach " + std::to_string(reach) + ", beyond fp16's 65504";
    return "fp32";
  }
  return "fp16";
}

Status Quantizer::assignPrecisions() {
  auto fmt = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::string(buf);
  };
  Result<Comparison> before = realGate("int8");
  if (!before)
    return before.status();
  report.before = *before;
  report.steps.push_back({"", "int8", false, *before});
  spdlog::info("all layers int8: relative L2 {:.5f}, cosine {:.6f}", before->relativeL2, before->cosine);
  if (passes(*before, opt.maxL2)) {
    report.after = *before;
    report.passed = true;
    return Status();
  }
  auto fallBack = [&](size_t i, std::string why) {
    LayerReport &l = report.layers[i];
    l.precision = fallbackPrecision(i, why);
    l.reason = why;
    return l.name + "->" + l.precision;
  };
  // First every layer whose output distribution moves too much alone.
  std::string taken;
  for (size_t i : report.priority) {
    const Comparison &c = report.layers[i].aloneInt8;
    if (c.nonFinite || c.kl > opt.klThreshold)
      taken += (taken.empty() ? "" : ", ") +
               fallBack(i, c.nonFinite ? "Inf/NaN alone in int8"
                                       : "output KL alone in int8 " + fmt(c.kl) + " > --kl-threshold " +
                                             fmt(opt.klThreshold));
  }
  auto masks = [&] {
    std::vector<double> m;
    for (const LayerReport &l : report.layers)
      m.push_back(l.precision == "int8" ? 1.0 : 0.0);
    return m;
  };
  auto nextInt8 = [&]() -> std::optional<size_t> {
    for (size_t i : report.priority)
      if (report.layers[i].precision == "int8")
        return i;
    return std::nullopt;
  };
  auto priorityReason = [&](size_t i) {
    return "priority " + std::to_string(report.layers[i].priority) + ": relative L2 alone in int8 " +
           fmt(report.layers[i].aloneInt8.relativeL2) + "; gate not met";
  };
  // Predicted on the simulation library (no compile per step)...
  for (;;) {
    Result<Comparison> sim = simulate(masks(), validation.size());
    if (!sim)
      return sim.status();
    report.steps.push_back({taken, "", true, *sim});
    taken.clear();
    if (passes(*sim, opt.maxL2))
      break;
    std::optional<size_t> next = nextInt8();
    if (!next)
      break;
    taken = fallBack(*next, priorityReason(*next));
  }
  // ...then checked on the real model, falling back further if needed
  // (in growing steps: each check is a compile).
  for (size_t batch = 1, round = 1;; batch *= 2, ++round) {
    Result<Comparison> real = realGate("mixed" + std::to_string(round));
    if (!real)
      return real.status();
    report.steps.push_back({taken, "", false, *real});
    report.after = *real;
    if (passes(*real, opt.maxL2)) {
      report.passed = true;
      return Status();
    }
    taken.clear();
    for (size_t k = 0; k < batch; ++k)
      if (std::optional<size_t> next = nextInt8())
        taken += (taken.empty() ? "" : ", ") + fallBack(*next, priorityReason(*next));
    if (taken.empty())
      break;
  }
  report.failure = "the accuracy gate cannot be met: with every layer out of int8 (--fallback " +
                   opt.fallback + ") the relative L2 error is " + fmt(report.after.relativeL2) +
                   " > --max-l2 " + fmt(opt.maxL2);
  return Status();
}

Status Quantizer::writeOutputs() {
  if (!opt.report.empty())
    if (Status s = writeFileAtomically(opt.report, renderJson(report)); !s)
      return s;
  if (!opt.html.empty())
    if (Status s = writeFileAtomically(opt.html, renderHtml(report)); !s)
      return s;
  if (!report.passed)
    return inputError(report.failure + (opt.report.empty() ? "" : " (report: '" + opt.report + "')"));
  // The library's manifest names the calibration table it was built with.
  (*finalModule)->setAttr(mlir::cuvil::kCalibrationTableAttrName,
                          mlir::StringAttr::get(finalModule->getContext(), report.tableDigest));
  bool bytecode = llvm::StringRef(opt.output).ends_with(".mlirbc");
  std::string bytes;
  {
    llvm::raw_string_ostream os(bytes);
    if (mlir::failed(mc::writeModule(*finalModule, os, bytecode)))
      return ioError("cannot serialize the quantized model");
  }
  return writeFileAtomically(opt.output, bytes);
}

Status Quantizer::run() {
  auto start = std::chrono::steady_clock::now();
  report.model = opt.model;
  report.output = opt.output;
  report.method = methodName(opt.method);
  report.backend = opt.backend;
  report.fallback = opt.fallback;
  report.perChannel = opt.perChannel;
  report.percentile = opt.percentile;
  report.maxL2 = opt.maxL2;
  report.klThreshold = opt.klThreshold;

  Result<std::vector<Sample>> cal = loadSamples(opt.calibrationData, opt.samples, "calibration");
  if (!cal)
    return cal.status();
  calibration = std::move(*cal);
  SampleDigest digest;
  for (const Sample &s : calibration)
    digest.add(s.inputs);
  report.calibrationDigest = digest.hex();
  report.calibrationSamples = calibration.size();
  if (!opt.validationData.empty()) {
    Result<std::vector<Sample>> val = loadSamples(opt.validationData, 0, "validation");
    if (!val)
      return val.status();
    validation = std::move(*val);
    validationIsCalibration = false;
  } else {
    validation = calibration;
  }
  report.validationSamples = validation.size();

  if (Status s = loadFloatGraph(); !s)
    return s;

  // In $TMPDIR, else (missing, full, unwritable) next to the output.
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("cuvil-quantize", dir)) {
    llvm::SmallString<256> nextTo(opt.output);
    llvm::sys::fs::make_absolute(nextTo);
    llvm::sys::path::remove_filename(nextTo);
    llvm::sys::path::append(nextTo, ".cuvil-quantize");
    if (std::error_code ec2 = llvm::sys::fs::createUniqueDirectory(nextTo, dir))
      return ioError("cannot create a temporary directory in $TMPDIR (" + ec.message() + ") or next to '" +
                     opt.output + "' (" + ec2.message() + ")");
  }
  workDir = std::string(dir);
  // On SIGINT/SIGTERM LLVM removes the libraries registered with
  // RemoveFileOnSignal, then calls this: the (then empty) directory goes
  // too, and the exit says why. Only async-signal-safe calls.
  static char interruptedDir[4096];
  if (workDir.size() < sizeof interruptedDir) {
    std::memcpy(interruptedDir, workDir.c_str(), workDir.size() + 1);
    llvm::sys::SetInterruptFunction([] {
      rmdir(interruptedDir);
      ::cuvil::removeStagingDirectories();
      const char msg[] = "cuvil-quantize: interrupted; no output written\n";
      ssize_t ignored = write(2, msg, sizeof msg - 1);
      (void)ignored;
      _exit(130);
    });
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      llvm::sys::SetInterruptFunction(nullptr);
      if (std::getenv("CUVIL_QUANTIZE_KEEP_WORK_DIR")) // debugging: keep the libraries
        spdlog::warn("libraries kept in '{}'", dir);
      else
        llvm::sys::fs::remove_directories(dir);
    }
  } cleanup{workDir};

  bool haveTable = !opt.calibrationTable.empty() && llvm::sys::fs::exists(opt.calibrationTable);
  if (haveTable) {
    Result<CalibrationTable> table = readCalibrationTable(opt.calibrationTable);
    if (!table)
      return table.status();
    if (Status s = useTable(*table); !s)
      return s;
    report.tableDigest = ::cuvil::cache::digest(canonicalTableBytes(*table));
    spdlog::info("calibration from the table '{}' (calibration skipped)", opt.calibrationTable);
    validationIsCalibration = false; // no float outputs were computed
  } else {
    if (Status s = calibrate(); !s)
      return s;
    report.tableDigest = ::cuvil::cache::digest(canonicalTableBytes(buildTable()));
    if (!opt.calibrationTable.empty())
      if (Status s = writeTable(); !s)
        return s;
  }
  if (Status s = floatReferences(); !s)
    return s;
  if (Status s = buildSimulation(); !s)
    return s;
  if (Status s = sensitivity(); !s)
    return s;
  if (Status s = assignPrecisions(); !s)
    return s;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report.passed) {
    size_t fallen = 0;
    for (const LayerReport &l : report.layers)
      fallen += l.precision != "int8";
    spdlog::info("gate met: relative L2 {:.5f} <= {} with {} of {} layer(s) int8", report.after.relativeL2,
                 opt.maxL2, layers.size() - fallen, layers.size());
  }
  return writeOutputs();
}

} // namespace

Status quantizeModel(const QuantizeOptions &options) {
  for (const std::string &out : {options.output, options.report, options.html})
    if (!out.empty())
      if (Status s = checkOutputPath(out); !s)
        return s;
  if (!options.calibrationTable.empty() && !llvm::sys::fs::exists(options.calibrationTable))
    if (Status s = checkOutputPath(options.calibrationTable); !s)
      return s;
  if (sameFile(options.model, options.output))
    return usageError("the output '" + options.output + "' is the input model");
  Quantizer q(options);
  return q.run();
}

} // namespace cuvil::quant
