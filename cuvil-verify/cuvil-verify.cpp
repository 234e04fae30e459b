//===- cuvil-verify.cpp - Check a deployment package against its reference ===//
//
// cuvil-verify LIB.so --reference MODEL --data DIR [--kl-threshold 0.02]
//              [--max-l2 0.01] [--manifest [--calibration-table FILE]]
//              [--json FILE] [--html FILE]
//
// Runs the library (through its C API, as an application would) and the
// reference over every sample of DIR and reports, per output, the mean KL
// divergence of softmax over the last dimension, the relative L2 error and
// the largest absolute error; exit 1 when a threshold fails. The reference
// is the model evaluated by Cuvil's reference evaluator (.pt imported with
// the library's input shapes, or .mlir/.mlirbc), or, for a sample directory
// that holds them, the expected outputs stored beside its inputs
// (output0.npy, ...), e.g. PyTorch's own.
//
// For a model with control flow it also reports the branch coverage of the
// samples: the share of the arms (each branch of an if, each loop's body)
// they take in the reference and in the library (which counts its arms in
// every build), over the arms both have; a difference of 0.5% or more fails.
//
// --manifest prints what the library says it is the build of (its
// .cuvil.identity section: model digest, compiler version, target, CPU and
// features, strategy and options, the digest of the calibration table a
// quantized model's scales come from) and checks it: the reference model
// must be the file the library was compiled from, and a calibration table
// given must be the one it was built with.
//
//===----------------------------------------------------------------------===//
#include "cache/Entry.h"
#include "cuvil-run/LibraryRunner.h"
#include "dialects/Cuvil/Reference/ModelRunner.h"
#include "frontend/loader/ModelLoader.h"
#include "quantize/Calibration.h"
#include "quantize/CalibrationData.h"
#include "quantize/CalibrationTableIO.h"
#include "support/AtomicFile.h"
#include "support/Crash/CrashRecovery.h"
#include "support/LargeStack.h"
#include "support/Npy.h"
#include "support/Tool/ToolSupport.h"

#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <map>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-verify";

struct Options {
  std::string library, reference, data, json, html, calibrationTable;
  std::vector<std::string> inputShapes;
  double klThreshold = 0.02, maxL2 = 0.01;
  bool manifest = false;
  int threads = 1;
  LogOptions log;
};

/// The manifest: the .cuvil.identity section's "name=value" lines.
Result<std::vector<std::pair<std::string, std::string>>> readManifest(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return ioError("cannot read '" + path + "': " + buffer.getError().message());
  auto object = llvm::object::ObjectFile::createObjectFile((*buffer)->getMemBufferRef());
  if (!object) {
    llvm::consumeError(object.takeError());
    return inputError("'" + path + "' is not an ELF shared object");
  }
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    auto name = section.getName();
    if (!name || *name != ".cuvil.identity") {
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      return inputError("'" + path + "': its manifest cannot be read");
    }
    std::vector<std::pair<std::string, std::string>> fields;
    llvm::SmallVector<llvm::StringRef> lines;
    contents->split(lines, '\n', -1, false);
    for (llvm::StringRef line : lines) {
      auto [key, value] = line.split('=');
      if (line.contains('='))
        fields.emplace_back(key.str(), value.str());
    }
    return fields;
  }
  return inputError("'" + path + "' has no manifest (.cuvil.identity): not a library made by "
                    "cuvil-export");
}

std::string field(const std::vector<std::pair<std::string, std::string>> &m, const std::string &k) {
  for (const auto &[key, value] : m)
    if (key == k)
      return value;
  return "";
}

/// The reference as something that runs: the evaluator on the model (a .pt
/// is imported with the library's input shapes into a temporary .mlirbc).
Result<mlir::cuvil::reference::ModelRunner> loadReference(const Options &opt,
                                                          const LibraryRunner &lib) {
  llvm::StringRef ext = llvm::sys::path::extension(opt.reference);
  if (ext == ".mlir" || ext == ".mlirbc")
    return mlir::cuvil::reference::ModelRunner::load(opt.reference);
  LoadOptions load;
  load.inputShapes = opt.inputShapes;
  if (load.inputShapes.empty())
    for (size_t i = 0; i < lib.numInputs(); ++i) {
      NpyExpectation e = lib.inputExpectation(i);
      std::string spec = std::to_string(i) + "=";
      for (int64_t d : e.shape) {
        if (d < 0)
          return usageError("input " + std::to_string(i) + " of '" + opt.library +
                            "' has a run-time dimension: give the reference's shapes with "
                            "--input-shape");
        spec += std::to_string(d) + "x";
      }
      std::string dtype(dtypeName(e.dtype));
      spec += dtype;
      load.inputShapes.push_back(spec);
    }
  mlir::MLIRContext context;
  Result<mlir::OwningOpRef<mlir::ModuleOp>> module = loadModel(context, opt.reference, load);
  if (!module)
    return module.error();
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (mlir::failed(mlir::writeBytecodeToFile(module->get().getOperation(), os)))
    return inputError("cannot serialize the imported reference");
  llvm::SmallString<128> temp;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("cuvil-verify", "mlirbc", temp))
    return ioError("cannot create a temporary file: " + ec.message());
  // Removed on every path, a failed write included.
  Status written = writeFileAtomically(temp.str().str(), os.str());
  std::optional<Result<mlir::cuvil::reference::ModelRunner>> runner;
  if (written)
    runner.emplace(mlir::cuvil::reference::ModelRunner::load(temp.str().str()));
  llvm::sys::fs::remove(temp);
  if (!written)
    return written.error();
  return std::move(*runner);
}

/// Expected outputs stored with a sample directory (output0.npy, ... beside
/// its inputs), if any.
Result<std::vector<Tensor>> storedOutputs(const std::string &sample) {
  std::vector<Tensor> outputs;
  if (llvm::sys::fs::is_directory(sample)) {
    for (int i = 0;; ++i) {
      std::string path = sample + "/output" + std::to_string(i) + ".npy";
      if (!llvm::sys::fs::exists(path))
        break;
      Result<Tensor> t = readNpy(path);
      if (!t)
        return t.error();
      outputs.push_back(std::move(*t));
    }
  }
  return outputs;
}

struct OutputFigures {
  quant::OutputComparison metrics;
  double maxAbsError = 0;
  int64_t mismatches = 0; ///< integer/bool outputs: elements that differ
  bool isFloat = true;
  std::string type;
  bool passed = true;
  std::vector<std::string> failures;
};

std::vector<float> asFloats(const Tensor &t) {
  std::vector<float> v(t.numElements());
  for (int64_t i = 0; i < t.numElements(); ++i)
    v[i] = static_cast<float>(t.getDouble(i));
  return v;
}

std::string typeOf(const Tensor &t) {
  std::string s;
  for (int64_t d : t.shape())
    s += std::to_string(d) + "x";
  return s + std::string(dtypeName(t.dtype()));
}

/// A figure as people write it ("0.02", "1.3e-05").
std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string htmlEscape(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

/// Which arms of the model's control flow the samples took, in the
/// reference and in the library, compared over the arms both have (those
/// the compiler flattened into straight-line code are listed apart).
struct BranchCoverage {
  bool present = false;          ///< the model has control flow
  bool haveReference = false;    ///< the reference ran on every sample
  bool haveLibrary = false;      ///< the library counts its arms
  std::vector<std::string> arms; ///< compared: in both (or in the one that ran)
  std::vector<std::string> flattened, differing;
  int64_t referenceTaken = 0, libraryTaken = 0;
  double difference = 0; ///< percentage points
  bool passed = true;

  static double percent(int64_t n, size_t of) { return of ? 100.0 * double(n) / double(of) : 100.0; }
  double reference() const { return percent(referenceTaken, arms.size()); }
  double library() const { return percent(libraryTaken, arms.size()); }
};

constexpr double kMaxCoverageDifference = 0.5; // percentage points

BranchCoverage compareCoverage(const std::optional<std::map<std::string, int64_t>> &ref,
                               const std::optional<std::map<std::string, int64_t>> &lib) {
  BranchCoverage c;
  c.haveReference = ref.has_value();
  c.haveLibrary = lib.has_value();
  c.present = (ref && !ref->empty()) || (lib && !lib->empty());
  if (!c.present)
    return c;
  if (ref && lib) {
    for (const auto &[arm, n] : *ref) {
      auto it = lib->find(arm);
      if (it == lib->end()) {
        c.flattened.push_back(arm);
        continue;
      }
      c.arms.push_back(arm);
      c.referenceTaken += n > 0;
      c.libraryTaken += it->second > 0;
      if ((n > 0) != (it->second > 0))
        c.differing.push_back(arm + (n > 0 ? " (taken by the reference only)" : " (taken by the library only)"));
    }
    c.difference = std::fabs(c.reference() - c.library());
    c.passed = c.difference < kMaxCoverageDifference;
    return c;
  }
  for (const auto &[arm, n] : ref ? *ref : *lib) {
    c.arms.push_back(arm);
    (ref ? c.referenceTaken : c.libraryTaken) += n > 0;
  }
  return c;
}

int run(const Options &opt) {
  Result<LibraryRunner> lib = LibraryRunner::load(opt.library, opt.threads);
  if (!lib)
    return reportError(kTool, lib.error());

  // The manifest: printed, and the reference must be the model it names.
  std::vector<std::pair<std::string, std::string>> manifest;
  bool manifestOk = true;
  std::string manifestProblem;
  if (opt.manifest) {
    auto m = readManifest(opt.library);
    if (!m)
      return reportError(kTool, m.error());
    manifest = *m;
    llvm::outs() << "manifest of " << opt.library << ":\n";
    for (const auto &[key, value] : manifest)
      llvm::outs() << "  " << key << ": " << (value.size() > 120 ? value.substr(0, 117) + "..." : value)
                   << "\n";
    if (!opt.reference.empty()) {
      Result<std::string> bytes = readFile(opt.reference);
      if (!bytes)
        return reportError(kTool, bytes.error());
      std::string digest = cache::digest(*bytes);
      if (digest != field(manifest, "model")) {
        manifestOk = false;
        manifestProblem = "the library was compiled from another model: its manifest names " +
                          field(manifest, "model") + ", '" + opt.reference + "' is " + digest;
      } else {
        llvm::outs() << "  model digest matches " << opt.reference << "\n";
      }
    }
    if (!opt.calibrationTable.empty()) {
      Result<quant::CalibrationTable> table = quant::readCalibrationTable(opt.calibrationTable);
      if (!table)
        return reportError(kTool, table.error());
      std::string digest = cache::digest(quant::canonicalTableBytes(*table));
      std::string built = field(manifest, "calibration-table");
      if (built != digest) {
        manifestOk = false;
        std::string problem =
            built.empty() || built == "none"
                ? "the library was not built from a model cuvil-quantize calibrated (its manifest names no "
                  "calibration table), '" + opt.calibrationTable + "' is " + digest
                : "the library was built with another calibration table: its manifest names " + built +
                      ", '" + opt.calibrationTable + "' is " + digest;
        manifestProblem += (manifestProblem.empty() ? "" : "; ") + problem;
      } else {
        llvm::outs() << "  calibration table digest matches " << opt.calibrationTable << "\n";
      }
    }
    if (field(manifest, "version") != versionText())
      spdlog::warn("the library was compiled by '{}', this is '{}'", field(manifest, "version"),
                   versionText());
    if (opt.data.empty()) {
      llvm::outs().flush(); // the manifest before the verdict
      if (!manifestOk)
        return reportError(kTool, inputError(manifestProblem));
      return kExitSuccess;
    }
  }

  Result<std::vector<std::string>> samples = quant::listSamples(opt.data);
  if (!samples)
    return reportError(kTool, samples.error());
  std::optional<mlir::cuvil::reference::ModelRunner> reference;
  std::vector<OutputFigures> figures;
  int64_t fromModel = 0, fromStored = 0;
  for (const std::string &sample : *samples) {
    Result<std::vector<Tensor>> inputs = quant::loadSample(sample);
    if (!inputs)
      return reportError(kTool, inputs.error());
    std::vector<Tensor> got;
    if (Status s = lib->run(*inputs, got); !s)
      return reportError(kTool, Error{sample + ": " + s.error().message, s.error().code});
    Result<std::vector<Tensor>> want = storedOutputs(sample);
    if (!want)
      return reportError(kTool, want.error());
    if (want->empty()) {
      if (!reference) {
        auto r = loadReference(opt, *lib);
        if (!r)
          return reportError(kTool, r.error());
        reference.emplace(std::move(*r));
      }
      auto w = reference->run(*inputs);
      if (!w)
        return reportError(kTool, Error{sample + ": the reference: " + w.error().message,
                                        w.error().code});
      want = std::move(*w);
      ++fromModel;
    } else {
      ++fromStored;
    }
    if (want->size() != got.size())
      return reportError(kTool, inputError(sample + ": the library has " +
                                           std::to_string(got.size()) + " outputs, the reference " +
                                           std::to_string(want->size())));
    figures.resize(got.size());
    for (size_t o = 0; o < got.size(); ++o) {
      const Tensor &g = got[o], &w = (*want)[o];
      if (g.shape() != w.shape())
        return reportError(kTool, inputError(sample + ": output " + std::to_string(o) +
                                             " is " + typeOf(g) + ", the reference's " + typeOf(w)));
      OutputFigures &f = figures[o];
      f.type = typeOf(g);
      f.isFloat = isFloat(w.dtype()) || isComplex(w.dtype());
      if (!f.isFloat) {
        for (int64_t i = 0; i < g.numElements(); ++i)
          f.mismatches += g.getInt(i) != w.getInt(i);
        continue;
      }
      std::vector<float> a = asFloats(w), b = asFloats(g);
      size_t last = g.shape().empty() ? 1 : static_cast<size_t>(g.shape().back());
      if (!a.empty())
        f.metrics.add(a.data(), b.data(), a.size(), std::max<size_t>(last, 1));
      for (size_t i = 0; i < a.size(); ++i) {
        double e = std::fabs(double(a[i]) - double(b[i]));
        if (std::isnan(e) && std::isnan(a[i]) && std::isnan(b[i]))
          e = 0;
        f.maxAbsError = std::isnan(e) ? INFINITY : std::max(f.maxAbsError, e);
      }
    }
  }

  // Branch coverage: the reference's when it ran on every sample.
  std::optional<std::map<std::string, int64_t>> referenceArms;
  if (reference && fromModel == int64_t(samples->size()))
    referenceArms = reference->branchCounts();
  BranchCoverage coverage = compareCoverage(referenceArms, lib->branchCounts());

  // Verdicts per output.
  bool passed = manifestOk && coverage.passed;
  for (OutputFigures &f : figures) {
    if (!f.isFloat) {
      if (f.mismatches)
        f.failures.push_back(std::to_string(f.mismatches) + " elements differ");
    } else {
      if (f.metrics.nonFinite())
        f.failures.push_back("non-finite values where the reference has none, or the reverse");
      if (!(f.metrics.meanKL() < opt.klThreshold))
        f.failures.push_back("KL " + number(f.metrics.meanKL()) + " >= " +
                             number(opt.klThreshold));
      if (!(f.metrics.relativeL2() <= opt.maxL2))
        f.failures.push_back("relative L2 " + number(f.metrics.relativeL2()) + " > " +
                             number(opt.maxL2));
    }
    f.passed = f.failures.empty();
    passed = passed && f.passed;
  }

  std::string source = fromStored && fromModel ? "stored outputs and the reference model"
                       : fromStored            ? "the outputs stored with the samples"
                                               : "the reference model on the evaluator";
  llvm::outs() << opt.library << " against " << source << ", " << samples->size()
               << " sample(s):\n";
  llvm::outs() << llvm::format("  %-8s %-22s %12s %12s %12s  %s\n", (const char *)"output",
                               (const char *)"type", (const char *)"KL", (const char *)"rel. L2",
                               (const char *)"max |err|", (const char *)"verdict");
  for (size_t o = 0; o < figures.size(); ++o) {
    const OutputFigures &f = figures[o];
    std::string name = "output" + std::to_string(o);
    if (f.isFloat)
      llvm::outs() << llvm::format("  %-8s %-22s %12.3g %12.3g %12.3g  ", name.c_str(),
                                   f.type.c_str(), f.metrics.meanKL(), f.metrics.relativeL2(),
                                   f.maxAbsError);
    else
      llvm::outs() << llvm::format("  %-8s %-22s %12s %12s %12lld  ", name.c_str(), f.type.c_str(),
                                   (const char *)"-", (const char *)"-",
                                   static_cast<long long>(f.mismatches));
    llvm::outs() << (f.passed ? "pass" : "FAIL");
    for (const std::string &why : f.failures)
      llvm::outs() << "; " << why;
    llvm::outs() << "\n";
  }
  if (coverage.present) {
    size_t n = coverage.arms.size();
    if (coverage.haveReference && coverage.haveLibrary) {
      llvm::outs() << llvm::format("  branch coverage: reference %.1f%% (%lld of %zu arms), library %.1f%% "
                                   "(%lld of %zu), difference %.1f%% (limit %.1f%%)  ",
                                   coverage.reference(), (long long)coverage.referenceTaken, n, coverage.library(),
                                   (long long)coverage.libraryTaken, n, coverage.difference, kMaxCoverageDifference)
                   << (coverage.passed ? "pass" : "FAIL") << "\n";
      for (const std::string &arm : coverage.differing)
        llvm::outs() << "    differs: " << arm << "\n";
      if (!coverage.flattened.empty())
        llvm::outs() << "    " << coverage.flattened.size()
                     << " arm(s) flattened by the compiler into straight-line code, not compared\n";
    } else if (coverage.haveReference) {
      llvm::outs() << llvm::format("  branch coverage: reference %.1f%% (%lld of %zu arms); the library does "
                                   "not count its branches (built before the counters)\n",
                                   coverage.reference(), (long long)coverage.referenceTaken, n);
    } else {
      llvm::outs() << llvm::format("  branch coverage: library %.1f%% (%lld of %zu arms); give --reference to "
                                   "compare with the reference's\n",
                                   coverage.library(), (long long)coverage.libraryTaken, n);
    }
  }
  if (!manifestOk)
    llvm::outs() << "  manifest: FAIL; " << manifestProblem << "\n";
  llvm::outs() << (passed ? "verified" : "NOT verified") << " (KL < " << number(opt.klThreshold)
               << ", relative L2 <= " << number(opt.maxL2) << ")\n";

  // Reports, written either way.
  llvm::json::Array outs;
  for (size_t o = 0; o < figures.size(); ++o) {
    const OutputFigures &f = figures[o];
    llvm::json::Object j{{"output", int64_t(o)}, {"type", f.type}, {"passed", f.passed},
                         {"failures", llvm::json::Array(f.failures)}};
    if (f.isFloat) {
      j["kl"] = f.metrics.meanKL();
      j["relative_l2"] = f.metrics.relativeL2();
      j["cosine"] = f.metrics.cosine();
      j["max_abs_error"] = f.maxAbsError;
    } else {
      j["mismatches"] = f.mismatches;
    }
    outs.push_back(std::move(j));
  }
  llvm::json::Object manifestJson;
  for (const auto &[key, value] : manifest)
    manifestJson[key] = value;
  llvm::json::Object root{{"schema", "cuvil-verify/1"},
                          {"library", opt.library},
                          {"reference", opt.reference},
                          {"reference_outputs", source},
                          {"samples", int64_t(samples->size())},
                          {"kl_threshold", opt.klThreshold},
                          {"max_l2", opt.maxL2},
                          {"passed", passed},
                          {"outputs", std::move(outs)}};
  if (coverage.present) {
    llvm::json::Object c{{"arms", int64_t(coverage.arms.size())},
                         {"flattened", llvm::json::Array(coverage.flattened)},
                         {"differing", llvm::json::Array(coverage.differing)},
                         {"passed", coverage.passed}};
    if (coverage.haveReference)
      c["reference"] = coverage.reference();
    if (coverage.haveLibrary)
      c["library"] = coverage.library();
    if (coverage.haveReference && coverage.haveLibrary) {
      c["difference"] = coverage.difference;
      c["limit"] = kMaxCoverageDifference;
    }
    root["branch_coverage"] = std::move(c);
  }
  if (opt.manifest) {
    root["manifest"] = std::move(manifestJson);
    root["manifest_passed"] = manifestOk;
    if (!manifestOk)
      root["manifest_problem"] = manifestProblem;
  }
  if (!opt.json.empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
    if (Status s = writeFileAtomically(opt.json, os.str()); !s)
      return reportError(kTool, s.error());
  }
  if (!opt.html.empty()) {
    std::string h = "<!doctype html><html><head><meta charset=\"utf-8\"><title>cuvil-verify: " +
                    htmlEscape(opt.library) +
                    "</title><style>body{font:14px system-ui,sans-serif;margin:2em}"
                    "table{border-collapse:collapse}td,th{padding:4px 10px;border-bottom:1px solid "
                    "#ddd;text-align:right}th{background:#f4f4f4}.pass{color:#070}.fail{color:#b00;"
                    "font-weight:bold}td.l{text-align:left}</style></head><body>";
    h += "<h1>" + std::string(passed ? "Verified" : "Not verified") + "</h1><p>" +
         htmlEscape(opt.library) + " against " + htmlEscape(source) + " (" +
         htmlEscape(opt.reference) + "), " + std::to_string(samples->size()) +
         " sample(s); thresholds: KL &lt; " + number(opt.klThreshold) +
         ", relative L2 &le; " + number(opt.maxL2) + ".</p>";
    h += "<table><tr><th>output</th><th>type</th><th>KL</th><th>relative L2</th><th>max "
         "|error|</th><th>verdict</th></tr>";
    for (size_t o = 0; o < figures.size(); ++o) {
      const OutputFigures &f = figures[o];
      char kl[32] = "-", l2[32] = "-", mx[32] = "-";
      if (f.isFloat) {
        std::snprintf(kl, sizeof kl, "%.3g", f.metrics.meanKL());
        std::snprintf(l2, sizeof l2, "%.3g", f.metrics.relativeL2());
        std::snprintf(mx, sizeof mx, "%.3g", f.maxAbsError);
      }
      std::string why;
      for (const std::string &w : f.failures)
        why += "; " + htmlEscape(w);
      h += "<tr><td class=l>output" + std::to_string(o) + "</td><td class=l>" + f.type +
           "</td><td>" + kl + "</td><td>" + l2 + "</td><td>" + mx + "</td><td class=\"l " +
           (f.passed ? "pass\">pass" : "fail\">FAIL") + why + "</td></tr>";
    }
    h += "</table>";
    if (coverage.present) {
      char text[256];
      h += "<h2>Branch coverage</h2><table><tr><th>arms</th><th>reference</th><th>library</th>"
           "<th>difference</th><th>verdict</th></tr><tr><td>" + std::to_string(coverage.arms.size()) + "</td>";
      std::snprintf(text, sizeof text, "<td>%.1f%%</td>", coverage.reference());
      h += coverage.haveReference ? text : "<td>-</td>";
      std::snprintf(text, sizeof text, "<td>%.1f%%</td>", coverage.library());
      h += coverage.haveLibrary ? text : "<td>-</td>";
      std::snprintf(text, sizeof text, "<td>%.1f%% (limit %.1f%%)</td>", coverage.difference, kMaxCoverageDifference);
      h += coverage.haveReference && coverage.haveLibrary ? text : "<td>-</td>";
      h += std::string("<td class=\"l ") + (coverage.passed ? "pass\">pass" : "fail\">FAIL") + "</td></tr></table>";
      for (const std::string &arm : coverage.differing)
        h += "<p class=fail>differs: " + htmlEscape(arm) + "</p>";
      if (!coverage.flattened.empty())
        h += "<p>" + std::to_string(coverage.flattened.size()) +
             " arm(s) flattened by the compiler into straight-line code, not compared.</p>";
    }
    if (opt.manifest) {
      h += "<h2>Manifest</h2><table>";
      for (const auto &[key, value] : manifest)
        h += "<tr><td class=l>" + htmlEscape(key) + "</td><td class=l>" + htmlEscape(value) +
             "</td></tr>";
      h += "</table>";
      if (!manifestOk)
        h += "<p class=fail>" + htmlEscape(manifestProblem) + "</p>";
    }
    // A browser says it laid the page out: every table row with a height,
    // every cell inside the page's width (test/tools/cuvil-verify/browser.py).
    h += "<p id=\"render-check\">not rendered</p><script>(function(){var rows=document.querySelectorAll('tr'),"
         "w=document.documentElement.scrollWidth,ok=rows.length>0;rows.forEach(function(r){var b=r.getBoundingClientRect();"
         "if(!(b.height>0&&b.right<=w+1))ok=false;});document.getElementById('render-check').textContent="
         "ok?'rendered '+rows.length+' rows':'layout failed';})();</script>";
    h += "</body></html>\n";
    if (Status s = writeFileAtomically(opt.html, h); !s)
      return reportError(kTool, s.error());
  }
  return passed ? kExitSuccess : kExitInputError;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"Checks a compiled library against its reference before it ships: runs both over "
               "the samples of --data and reports, per output, the mean KL divergence of softmax "
               "over the last dimension, the relative L2 error and the largest absolute error.\n\n"
               "The reference is the model (--reference: .pt, imported with the library's input "
               "shapes, or .mlir/.mlirbc) evaluated by Cuvil's reference evaluator, or the "
               "expected outputs a sample stores beside its inputs (output0.npy, ...). "
               "--manifest prints what the library is the build of and checks that the reference "
               "is the model it was compiled from (and, with --calibration-table, that the library "
               "was built with that table). Exit status: 0 verified, 1 a threshold or the "
               "manifest check failed (or an input is invalid), 2 usage error, 3 I/O error.",
               kTool};
  app.add_option("library", opt.library, "Library compiled by cuvil-export (.so)")->required();
  app.add_option("--reference", opt.reference,
                 "The model the library was compiled from (.pt, .mlir, .mlirbc)");
  app.add_option("--data", opt.data,
                 "Samples: a directory of .npz files or of sub-directories holding input0.npy, "
                 "... (and, optionally, output0.npy, ...)");
  app.add_option("--kl-threshold", opt.klThreshold,
                 "Largest mean KL divergence allowed (exclusive; default 0.02)")
      ->check(nonNegativeNumber());
  app.add_option("--max-l2", opt.maxL2, "Largest relative L2 error allowed (default 0.01)")
      ->check(nonNegativeNumber());
  app.add_option("--input-shape", opt.inputShapes,
                 "Input shapes for a .pt reference (as cuvil-import; default: the library's)");
  app.add_flag("--manifest", opt.manifest,
               "Print the library's manifest and check the reference against it");
  app.add_option("--calibration-table", opt.calibrationTable,
                 "With --manifest: the calibration table (cuvil-quantize --calibration-table) the "
                 "library must have been built with");
  app.add_option("--json", opt.json, "Write the results as JSON (atomically, pass or fail)");
  app.add_option("--html", opt.html, "Write the results as a self-contained HTML page");
  app.add_option("--threads", opt.threads, "Threads of the library's instance (default 1)")
      ->check(positiveNumber());
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  if (!opt.calibrationTable.empty() && !opt.manifest) {
    llvm::errs() << kTool << ": error: --calibration-table is checked against the manifest: give "
                             "--manifest too\n";
    return kExitUsageError;
  }
  if (opt.data.empty() && !opt.manifest) {
    llvm::errs() << kTool << ": error: nothing to check: give --data (with --reference or samples "
                             "that store their outputs) or --manifest\n";
    return kExitUsageError;
  }
  if (!opt.data.empty() && opt.reference.empty())
    spdlog::info("no --reference: every sample must store its expected outputs");
  cuvil::installResourceHandlers(kTool);
  setupLogging(kTool, opt.log);
  return cuvil::runOnLargeStack([&] { return run(opt); });
}
