//===- Tuner.cpp - cuvil-autotune tune: measured kernel configurations ----===//
#include "cuvil-autotune/Tuner.h"

#include "cuvil-autotune/CostModel.h"
#include "cuvil-autotune/Measurement.h"
#include "cuvil-autotune/TuneReport.h"
#include "driver/CompileDriver.h"
#include "frontend/loader/ModelLoader.h"
#include "passes/InitAll.h"
#include "support/AtomicFile.h"
#include "support/Staging.h"
#include "targets/CPU/KernelConfig.h"
#include "targets/CPU/KernelSites.h"
#include "targets/Targets.h"
#include "tuning/DeviceProfiles.h"
#include "tuning/TuningDatabase.h"

#include "dialects/Cuvil/IR/CuvilDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <atomic>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <limits>
#include <map>
#include <set>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mc = mlir::cuvil;

namespace cuvil::tuning {
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// The site-name prefix that tags a kernel op in the tuning builds.
constexpr const char *kSiteTag = "cuvil.tune.";




//===-- The model's kernels ------------------------------------------------===//

/// "conv2d/im2col", "conv2d/pixel_rows@fine" (with its schedule).
std::string choiceName(const mc::cpu::KernelChoice &c) {
  return c.kernel + "/" + c.variant + (c.schedule.empty() ? "" : "@" + c.schedule);
}

bool sameChoices(const std::vector<mc::cpu::KernelChoice> &a, const std::vector<mc::cpu::KernelChoice> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (choiceName(a[i]) != choiceName(b[i]))
      return false;
  return true;
}

bool isBanded(const std::string &kernel) {
  return kernel == mc::cpu::kernel::DepthwisePointwise || kernel == mc::cpu::kernel::PointwiseDepthwise;
}

/// The kernels of one signature: tuned together, measured as the mean of
/// their calls.
struct Unit {
  std::string signature, op, layer, shapes;
  std::vector<size_t> ops; ///< indices into the module's kernel ops
  mc::cpu::KernelChoice baseline;
  std::vector<mc::cpu::KernelChoice> candidates; ///< baseline first
  /// Per candidate: ms per call, one sample per repetition.
  std::vector<std::vector<double>> samples;
  std::vector<std::string> failures; ///< per candidate; "" = ran
  const TuningRecord *known = nullptr;
};

std::string typeText(mlir::Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  t.print(os);
  return s;
}

std::string shapesOf(mlir::Operation *op) {
  std::string s;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    s += (i ? ", " : "") + typeText(v.getType());
  s += " -> " + typeText(op->getResult(0).getType());
  return s;
}



//===-- The tuner ----------------------------------------------------------===//

class Tuner {
public:
  explicit Tuner(const TuneOptions &o) : opt(o) {}
  Result<TuneSummary> run();

private:
  Status setUp();
  Status findUnits();
  Result<std::string> buildRound(size_t round);
  std::vector<mc::cpu::KernelChoice> heuristicChoices(int64_t fuseDepthwiseMinBytes);
  static size_t candidateIndex(Unit &u, const mc::cpu::KernelChoice &c);
  Status measure();
  Status rankByCostModel();
  /// `check`: one run, its outputs compared with the heuristics' library's
  /// (round 0, which writes them), no samples kept.
  std::string measureRound(size_t round, int benchmarkRuns, bool check = false);
  std::vector<mc::cpu::KernelChoice> isolated(size_t round, size_t unit);
  void markFailed(size_t round, size_t unit, const std::string &why);
  Status writeOutputs();
  void progress(const std::string &what);

  const TuneOptions &opt;
  TuneSummary summary;
  Clock::time_point start = Clock::now();
  std::unique_ptr<mlir::MLIRContext> ctx;
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> kernels; ///< after the kernel choice (the heuristics')
  std::vector<mlir::Operation *> ops;        ///< its kernel ops
  std::vector<Unit> units;
  DeviceProfile profile;
  std::string device, workDir, cuvilRun;
  std::vector<std::string> inputSpecs;
  TuningDatabase db;
  int threads = 1;
  /// Per op: its unit (or npos) and, for a consumer that can run in bands,
  /// its producer's index (or npos).
  std::vector<size_t> unitOf, producerOf;
  /// The heuristics' configurations: as they are (round 0), with every pair
  /// that can run in bands banded, with none.
  std::vector<mc::cpu::KernelChoice> heuristics, allBanded, noneBanded;
  /// Per round: every op's configuration, and its library.
  std::vector<std::vector<mc::cpu::KernelChoice>> rounds;
  std::vector<std::string> libraries;
  std::vector<std::string> referenceOutputs; ///< the heuristics' library's, output0.npy ...
  bool progressShown = false;
};

void Tuner::progress(const std::string &what) {
  if (!isatty(2))
    return;
  std::fprintf(stderr, "\r\033[K%s", what.c_str());
  std::fflush(stderr);
  progressShown = true;
}

Status Tuner::setUp() {
  if (!opt.deviceProfile.empty()) {
    Result<DeviceProfile> p = loadDeviceProfile(opt.deviceProfile);
    if (!p)
      return p.error();
    profile = *p;
  } else if (!opt.device.empty() && opt.device != "host") {
    Result<DeviceProfile> p = builtinProfile(opt.device);
    if (!p)
      return p.error();
    profile = *p;
  } else {
    // This machine, by its nominal figures (no time spent on peaks here;
    // `cuvil-autotune profile` measures them).
    profile.set_version(kDeviceProfileVersion);
    profile.set_name("host");
    profile.set_target(opt.target);
  }
  if (!profile.target().empty() && profile.target() != opt.target)
    return usageError("the device profile '" + profile.name() + "' is of a " + profile.target() +
                      " device, not of --target " + opt.target);
  mc::CompileOptions compile;
  compile.target = opt.target;
  if (!opt.deviceProfile.empty())
    compile.deviceProfile = opt.deviceProfile;
  else if (!opt.device.empty() && opt.device != "host")
    compile.deviceProfile = opt.device;
  Result<std::unique_ptr<mc::TargetBackend>> backend =
      mc::createTargetBackend(opt.target, mc::targetOptionsOf(compile));
  if (!backend)
    return backend.error();
  device = (*backend)->deviceKey();
  if (profile.cpu().empty())
    profile.set_cpu((*backend)->cpu());

  // The database to extend: the output's records when it exists.
  if (!opt.fresh && llvm::sys::fs::exists(opt.output)) {
    LoadReport report;
    Result<TuningDatabase> existing = readTuningDatabase(opt.output, &report);
    if (!existing)
      return Error{existing.error().message + " (--fresh starts a new database instead)", existing.error().code};
    if (std::string w = report.summary(); !w.empty())
      spdlog::warn("tuning database '{}': {}; the rest is extended", opt.output, w);
    db = std::move(*existing);
  }
  db.set_version(kTuningDatabaseVersion);
  db.set_producer("cuvil-autotune (" + compilerVersion() + ")");

  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  threads = opt.threads > 0 ? opt.threads : int(std::max(cores, 1L));

  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  std::string binDir = llvm::sys::path::parent_path(exe).str();
  cuvilRun = binDir + (opt.target == "aarch64" ? "/aarch64/cuvil-run" : "/cuvil-run");
  return Status();
}

Status Tuner::findUnits() {
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
  Result<mlir::OwningOpRef<mlir::ModuleOp>> model = loadModel(*ctx, opt.model, load);
  if (!model)
    return model.error();
  // The IR after the graph pipeline and the heuristics' kernel choice: each
  // round edits its configurations and compiles it from there.
  mc::CompileOptions compile;
  compile.target = opt.target;
  if (!opt.deviceProfile.empty())
    compile.deviceProfile = opt.deviceProfile;
  else if (!opt.device.empty() && opt.device != "host")
    compile.deviceProfile = opt.device;
  Result<std::unique_ptr<mc::TargetBackend>> backend =
      mc::createTargetBackend(opt.target, mc::targetOptionsOf(compile));
  if (!backend)
    return backend.error();
  kernels = std::move(*model);
  mlir::PassManager pm(ctx.get());
  mc::buildCompilePipeline(pm, **backend, mc::GraphPipelineOptions{}, mc::CompileStage::Kernels);
  if (mlir::failed(pm.run(*kernels)))
    return inputError("compiling '" + opt.model + "' to its kernels failed (see the diagnostics above)");
  if (mlir::FailureOr<mlir::func::FuncOp> e = mc::entryFunction(*kernels); mlir::succeeded(e))
    if (Status s = (*backend)->checkModel(*e); !s)
      return s.error();
  for (mlir::Operation *op : mc::cpu::kernelOps(*kernels))
    ops.push_back(op);
  summary.kernelOps = int(ops.size());

  mlir::func::FuncOp entry;
  if (mlir::FailureOr<mlir::func::FuncOp> e = mc::entryFunction(*kernels); mlir::succeeded(e))
    entry = *e;
  else
    return inputError("the model has no entry function");
  for (auto [i, t] : llvm::enumerate(entry.getArgumentTypes())) {
    auto rt = llvm::dyn_cast<mlir::RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape())
      return inputError("input " + std::to_string(i) + " has no static shape: give --input-shape");
    std::string spec = std::to_string(i) + "=";
    for (int64_t d : rt.getShape())
      spec += std::to_string(d) + "x";
    spec += typeText(rt.getElementType());
    inputSpecs.push_back(spec + ":random");
  }

  // The heuristics' configurations with every possible pair banded and
  // with none: the rounds that measure the banded pairs against their two
  // kernels apart.
  heuristics = heuristicChoices(-1);
  allBanded = heuristicChoices(0);
  noneBanded = heuristicChoices(std::numeric_limits<int64_t>::max());
  std::map<mlir::Operation *, size_t> indexOf;
  for (auto [i, op] : llvm::enumerate(ops))
    indexOf[op] = i;
  producerOf.assign(ops.size(), std::string::npos);
  unitOf.assign(ops.size(), std::string::npos);

  RecordIndex index = indexRecords(db, device);
  std::map<std::string, size_t> bySignature;
  for (auto [i, op] : llvm::enumerate(ops)) {
    std::vector<mc::cpu::KernelChoice> choices = mc::cpu::tunableChoices(op);
    for (const mc::cpu::KernelChoice &c : choices)
      if (isBanded(c.kernel))
        if (auto conv = llvm::dyn_cast<mc::Conv2DOp>(op)) {
          mc::cpu::KernelSite producer;
          if (mc::cpu::checkBandedPair(conv, c.kernel, &producer).empty() && indexOf.count(producer.op))
            producerOf[i] = indexOf[producer.op];
        }
    if (choices.size() < 2)
      continue;
    std::string sig = mc::cpu::kernelSignature(op);
    if (shardOf(sig, opt.shardCount) != opt.shardIndex)
      continue;
    auto [it, added] = bySignature.try_emplace(sig, units.size());
    if (added) {
      Unit u;
      u.signature = sig;
      u.op = op->getName().getStringRef().str();
      u.layer = mc::cpu::kernelLayerName(op);
      u.shapes = shapesOf(op);
      u.baseline = heuristics[i];
      u.candidates.push_back(u.baseline);
      // The kernel's own configurations first (the heuristics' own choice
      // among them), then running in bands with its producer.
      candidateIndex(u, noneBanded[i]);
      for (mc::cpu::KernelChoice &ch : choices)
        if (!isBanded(ch.kernel))
          candidateIndex(u, ch);
      for (mc::cpu::KernelChoice &ch : choices)
        if (isBanded(ch.kernel))
          candidateIndex(u, ch);
      if (opt.trials > 0 && int(u.candidates.size()) > opt.trials)
        u.candidates.resize(size_t(std::max(opt.trials, 1)));
      u.samples.resize(u.candidates.size());
      u.failures.resize(u.candidates.size());
      if (auto k = index.bySignature.find(sig); k != index.bySignature.end())
        u.known = k->second;
      units.push_back(std::move(u));
    }
    units[it->second].ops.push_back(i);
    unitOf[i] = it->second;
  }
  summary.signatures = int(units.size());
  for (const Unit &u : units)
    summary.fromDatabase += u.known ? 1 : 0;
  return Status();
}

std::vector<mc::cpu::KernelChoice> Tuner::heuristicChoices(int64_t fuseDepthwiseMinBytes) {
  std::vector<mc::cpu::KernelChoice> out;
  mlir::OwningOpRef<mlir::ModuleOp> copy = kernels->clone();
  if (fuseDepthwiseMinBytes >= 0) {
    for (mlir::Operation *op : mc::cpu::kernelOps(*copy))
      op->removeAttr(mc::kKernelConfigAttrName);
    mc::cpu::HeuristicOptions h;
    h.fuseDepthwiseMinBytes = fuseDepthwiseMinBytes;
    mc::cpu::createHeuristicProvider(h)->configure(*copy);
  }
  for (mlir::Operation *op : mc::cpu::kernelOps(*copy)) {
    mc::KernelConfigAttr c = mc::cpu::kernelConfigOf(op);
    out.push_back(c ? mc::cpu::KernelChoice{c.getKernel().str(), c.getVariant().str(), c.getReason().str(),
                                            c.getSchedule().str()}
                    : mc::cpu::KernelChoice{mc::cpu::kernel::Linalg.str(), "", ""});
  }
  return out;
}

size_t Tuner::candidateIndex(Unit &u, const mc::cpu::KernelChoice &c) {
  for (size_t k = 0; k < u.candidates.size(); ++k)
    if (choiceName(u.candidates[k]) == choiceName(c))
      return k;
  u.candidates.push_back(c);
  u.samples.emplace_back();
  u.failures.emplace_back();
  return u.candidates.size() - 1;
}

Result<std::string> Tuner::buildRound(size_t round) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = kernels->clone();
  std::vector<mlir::Operation *> copyOps;
  for (mlir::Operation *op : mc::cpu::kernelOps(*copy))
    copyOps.push_back(op);
  if (copyOps.size() != ops.size())
    return inputError("the kernel ops changed when the module was copied");
  for (auto [i, op] : llvm::enumerate(copyOps)) {
    mc::cpu::setKernelConfig(op, rounds[round][i], "autotune-trial");
    // The site's name in the profile: the op (and its fusion group's, whose
    // location the call may take).
    auto tag = mlir::StringAttr::get(ctx.get(), kSiteTag + std::to_string(i));
    op->setLoc(mlir::NameLoc::get(tag, op->getLoc()));
    if (auto group = llvm::dyn_cast_or_null<mc::FusedGroupOp>(op->getParentOp()))
      group->setLoc(mlir::NameLoc::get(tag, group->getLoc()));
  }
  mc::CompileOptions compile;
  compile.model = "round" + std::to_string(round) + ".mlir";
  compile.modelName = "tune_round" + std::to_string(round);
  compile.target = opt.target;
  compile.instrument = true;
  if (!opt.deviceProfile.empty())
    compile.deviceProfile = opt.deviceProfile;
  else if (!opt.device.empty() && opt.device != "host")
    compile.deviceProfile = opt.device;
  std::string path = workDir + "/round" + std::to_string(round) + ".so";
  Result<mc::CompileResult> r = mc::compileModule(*copy, compile, path);
  if (!r)
    return r.error();
  if (std::error_code ec = llvm::sys::fs::rename(r->libraryTempPath, path))
    return ioError("cannot move a tuning library into '" + workDir + "': " + ec.message());
  ++summary.libraries;
  return path;
}

/// One run of round `round`'s library: a sample per (unit, candidate) it
/// holds; why it failed, or "".
std::string Tuner::measureRound(size_t round, int benchmarkRuns, bool check) {
  std::vector<std::string> args = {cuvilRun, libraries[round]};
  for (const std::string &s : inputSpecs) {
    args.push_back("--input");
    args.push_back(s);
  }
  // The same inputs every run (--seed): the outputs compare.
  std::string outDir = workDir + (round == 0 ? "/reference" : "/outputs");
  for (const std::string &a : {std::string("--seed"), std::string("1"), std::string("--warmup"),
                               std::string(check ? "0" : "2"), std::string("--benchmark"),
                               std::to_string(benchmarkRuns), std::string("--threads"), std::to_string(threads),
                               std::string("--profile"), std::string("--output-dir"), outDir})
    args.push_back(a);
  if (check)
    for (const std::string &ref : referenceOutputs) {
      args.push_back("--expected-output");
      args.push_back(ref);
    }
  if (check)
    for (const char *a : {"--rtol", "0.02", "--atol", "0.001"})
      args.push_back(a);
  std::vector<std::string> argv = args;
  if (!opt.runner.empty()) {
    std::string line = opt.runner;
    for (const std::string &a : args)
      line += " " + shellQuote(a);
    argv = {"/bin/sh", "-c", line};
  }
  ChildResult child = runChild(argv, opt.candidateTimeout);
  ++summary.measurements;
  // A failed run: the candidates this round tries that no other round
  // (the heuristics', round 0) has run.
  auto failAll = [&](const std::string &why) {
    for (auto [i, c] : llvm::enumerate(rounds[round])) {
      if (unitOf[i] == std::string::npos || round == 0)
        continue;
      Unit &u = units[unitOf[i]];
      size_t k = candidateIndex(u, c);
      if (choiceName(c) != choiceName(rounds[0][i]) && u.failures[k].empty()) {
        u.failures[k] = why;
        ++summary.failedCandidates;
      }
    }
  };
  if (check) {
    if (child.failure().empty())
      return "";
    size_t at = child.output.find("differs from");
    if (at != std::string::npos) {
      size_t end = child.output.find('\n', at);
      return "computes wrong results (outputs " + child.output.substr(at, end == std::string::npos ? 200 : end - at) +
             ", against the heuristics' library)";
    }
    return child.failure();
  }
  if (std::string f = child.failure(); !f.empty()) {
    std::string tail = child.output.size() > 400 ? child.output.substr(child.output.size() - 400) : child.output;
    spdlog::warn("round {} ({}) {}: {}", round, libraries[round], f, llvm::StringRef(tail).trim().str());
    failAll(f);
    return f;
  }
  Result<std::map<std::string, std::pair<double, double>>> sites = parseProfile(child.output);
  if (!sites) {
    spdlog::warn("round {}: {}", round, sites.error().message);
    failAll("its run printed garbage: " + sites.error().message);
    return "its run printed garbage: " + sites.error().message;
  }
  // Each op's time per call.
  std::vector<double> perOp(ops.size(), -1);
  for (const auto &[name, figures] : *sites) {
    if (name.rfind(kSiteTag, 0) != 0)
      continue;
    size_t i = 0;
    if (std::sscanf(name.c_str() + strlen(kSiteTag), "%zu", &i) != 1 || i >= ops.size() || figures.second <= 0)
      continue;
    perOp[i] = figures.first / figures.second;
  }
  // A sample per (unit, configuration): the mean of the unit's ops that
  // ran it. A consumer that could run in bands with its producer but runs
  // apart counts its producer's call too (what the band replaces); one
  // whose producer runs in other bands is no sample.
  std::map<std::pair<size_t, size_t>, std::pair<double, int>> sums;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (unitOf[i] == std::string::npos || perOp[i] < 0)
      continue;
    const mc::cpu::KernelChoice &c = rounds[round][i];
    double t = perOp[i];
    if (!isBanded(c.kernel) && producerOf[i] != std::string::npos) {
      size_t p = producerOf[i];
      if (perOp[p] < 0 || isBanded(rounds[round][p].kernel))
        continue;
      t += perOp[p];
    }
    Unit &u = units[unitOf[i]];
    auto &acc = sums[{unitOf[i], candidateIndex(u, c)}];
    acc.first += t;
    acc.second += 1;
  }
  for (auto &[key, acc] : sums) {
    Unit &u = units[key.first];
    if (u.failures[key.second].empty() && !u.known)
      u.samples[key.second].push_back(acc.first / acc.second);
  }
  return "";
}

/// Round 0 with only `unit`'s configurations of round `round`, and the
/// pairs that would clash with them apart.
std::vector<mc::cpu::KernelChoice> Tuner::isolated(size_t round, size_t unit) {
  std::vector<mc::cpu::KernelChoice> r = rounds[0];
  std::vector<bool> mine(ops.size(), false);
  for (size_t i : units[unit].ops) {
    r[i] = rounds[round][i];
    mine[i] = true;
  }
  for (size_t j = 0; j < ops.size(); ++j) {
    size_t p = producerOf[j];
    if (!isBanded(r[j].kernel) || p == std::string::npos)
      continue;
    // A band whose producer is the unit's (it must run on its own), or
    // whose producer runs in bands of its own.
    bool clash = (!mine[j] && mine[p]) || isBanded(r[p].kernel);
    for (size_t k = 0; k < ops.size() && !clash; ++k)
      clash = k != j && producerOf[k] == p && isBanded(r[k].kernel) && mine[k];
    if (clash && !mine[j])
      r[j] = noneBanded[j];
    else if (clash)
      r[p] = noneBanded[p];
  }
  return r;
}

void Tuner::markFailed(size_t round, size_t unit, const std::string &why) {
  Unit &u = units[unit];
  for (size_t i : u.ops) {
    size_t k = candidateIndex(u, rounds[round][i]);
    if (choiceName(rounds[round][i]) != choiceName(rounds[0][i]) && u.failures[k].empty()) {
      u.failures[k] = why;
      ++summary.failedCandidates;
    }
  }
}

Status Tuner::measure() {
  // Round 0 is the heuristics'; then every pair that can run in bands
  // banded, then none; then round k gives every unit its k-th own
  // configuration, on the kernels apart (a kernel's configuration changes
  // only its own call, so the units of one round do not disturb each
  // other's measurements).
  bool anyNew = std::any_of(units.begin(), units.end(), [](const Unit &u) { return !u.known; });
  if (!anyNew)
    return Status();
  rounds.push_back(heuristics);
  bool pairs = std::any_of(producerOf.begin(), producerOf.end(), [](size_t p) { return p != std::string::npos; });
  if (pairs) {
    for (const auto *r : {&allBanded, &noneBanded})
      if (std::none_of(rounds.begin(), rounds.end(), [&](const auto &round) { return sameChoices(round, *r); }))
        rounds.push_back(*r);
  }
  // Pairs the heuristics' order never bands (a kernel claimed by another
  // pair first): rounds of their own, each kernel in one pair at most.
  std::set<std::pair<size_t, std::string>> covered;
  for (const auto &round : rounds)
    for (auto [i, c] : llvm::enumerate(round))
      if (isBanded(c.kernel))
        covered.insert({i, c.kernel});
  for (;;) {
    std::vector<mc::cpu::KernelChoice> round = noneBanded;
    std::vector<bool> claimed(ops.size(), false);
    bool any = false;
    for (size_t i = 0; i < ops.size(); ++i) {
      size_t p = producerOf[i];
      if (unitOf[i] == std::string::npos || units[unitOf[i]].known || p == std::string::npos ||
          claimed[i] || claimed[p])
        continue;
      for (const mc::cpu::KernelChoice &c : units[unitOf[i]].candidates)
        if (isBanded(c.kernel) && !covered.count({i, c.kernel})) {
          round[i] = c;
          claimed[i] = claimed[p] = true;
          covered.insert({i, c.kernel});
          any = true;
          break;
        }
    }
    if (!any)
      break;
    rounds.push_back(std::move(round));
  }
  for (size_t k = 1;; ++k) {
    std::vector<mc::cpu::KernelChoice> round = noneBanded;
    bool any = false;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (unitOf[i] == std::string::npos || units[unitOf[i]].known)
        continue;
      // The unit's own configurations other than its heuristics-apart one.
      std::vector<const mc::cpu::KernelChoice *> own;
      for (const mc::cpu::KernelChoice &c : units[unitOf[i]].candidates)
        if (!isBanded(c.kernel) && choiceName(c) != choiceName(noneBanded[i]))
          own.push_back(&c);
      if (k <= own.size()) {
        round[i] = *own[k - 1];
        any = true;
      }
    }
    if (!any)
      break;
    rounds.push_back(std::move(round));
  }
  for (auto [r, round] : llvm::enumerate(rounds)) {
    int banded = 0, changed = 0;
    for (auto [i, c] : llvm::enumerate(round)) {
      banded += isBanded(c.kernel);
      changed += choiceName(c) != choiceName(rounds[0][i]);
    }
    spdlog::debug("candidate library {}: {} kernel(s) configured apart from the heuristics, {} in bands", r,
                  changed, banded);
  }
  for (size_t r = 0; r < rounds.size(); ++r) {
    progress(llvm::formatv("cuvil-autotune: building candidate library {0}/{1} ({2} kernels)", r + 1,
                           rounds.size(), summary.signatures - summary.fromDatabase));
    Result<std::string> lib = buildRound(r);
    if (!lib) {
      if (r == 0)
        return Error{"building the model with the heuristics' configurations: " + lib.error().message,
                     lib.error().code};
      // A round that does not compile: each of its candidates alone.
      spdlog::warn("candidate library {} does not build ({}); its candidates are recorded as failed", r,
                   lib.error().message);
      std::string why = "does not build: " + lib.error().message;
      for (auto [i, c] : llvm::enumerate(rounds[r]))
        if (unitOf[i] != std::string::npos && choiceName(c) != choiceName(rounds[0][i])) {
          Unit &u = units[unitOf[i]];
          size_t k = candidateIndex(u, c);
          if (u.failures[k].empty()) {
            u.failures[k] = why;
            ++summary.failedCandidates;
          }
        }
      libraries.push_back("");
      continue;
    }
    libraries.push_back(*lib);
  }
  // How many runs a measurement takes: a quarter of a second or more. The
  // heuristics' library writes the reference outputs.
  int runs = 5;
  {
    auto t = Clock::now();
    if (std::string f = measureRound(0, 3); !f.empty())
      return inputError("the model with the heuristics' configurations does not run here (" + f +
                        "): nothing can be tuned");
    double perRun = secondsSince(t) / 5;
    runs = int(std::clamp(0.25 / std::max(perRun, 1e-4), 3.0, 200.0));
    for (Unit &u : units)
      for (auto &s : u.samples)
        s.clear();
    for (int k = 0;; ++k) {
      std::string path = workDir + "/reference/output" + std::to_string(k) + ".npy";
      if (!llvm::sys::fs::exists(path))
        break;
      referenceOutputs.push_back(path);
    }
  }
  // Every candidate library runs once first, its outputs checked against
  // the heuristics'. One that crashes, hangs or computes wrong results is
  // split into one library per kernel it changes, so that only the
  // culprits are recorded as failed and the rest are measured.
  for (size_t r = 1; r < rounds.size(); ++r) {
    if (libraries[r].empty())
      continue;
    progress(llvm::formatv("cuvil-autotune: checking candidate library {0}/{1}", r + 1, rounds.size()));
    std::string f = measureRound(r, 1, /*check=*/true);
    if (f.empty())
      continue;
    spdlog::warn("candidate library {} {}; trying its kernels one by one", r, f);
    libraries[r].clear();
    std::set<size_t> changed;
    for (auto [i, c] : llvm::enumerate(rounds[r]))
      if (unitOf[i] != std::string::npos && choiceName(c) != choiceName(rounds[0][i]) && !units[unitOf[i]].known)
        changed.insert(unitOf[i]);
    for (size_t u : changed) {
      rounds.push_back(isolated(r, u));
      size_t alone = rounds.size() - 1;
      Result<std::string> lib = buildRound(alone);
      std::string why = !lib ? "does not build: " + lib.error().message : "";
      if (lib) {
        libraries.push_back(*lib);
        why = measureRound(alone, 1, /*check=*/true);
      } else {
        libraries.push_back("");
      }
      if (!why.empty()) {
        libraries.back().clear();
        markFailed(r, u, why);
        spdlog::warn("kernel '{}' ({}): {} {}", units[u].layer, units[u].op,
                     choiceName(rounds[r][units[u].ops.front()]), why);
      }
    }
  }
  // Repetitions, libraries in a rotating order (candidates and the baseline
  // interleaved), until every unit's medians settle.
  std::vector<std::vector<double>> last(units.size());
  for (auto [u, unit] : llvm::enumerate(units))
    last[u].assign(unit.candidates.size(), 0);
  size_t live = std::count_if(libraries.begin(), libraries.end(), [](const std::string &l) { return !l.empty(); });
  auto repsStart = Clock::now();
  int runsDone = 0;
  for (int rep = 0; rep < opt.maxRepetitions; ++rep) {
    for (size_t i = 0; i < libraries.size(); ++i) {
      size_t r = (i + size_t(rep)) % libraries.size();
      if (libraries[r].empty())
        continue;
      if (isatty(2)) {
        // Kernels faster than the heuristics' so far, and the time left at
        // most (every repetition run).
        int faster = 0, open = 0;
        for (const Unit &u : units) {
          if (u.known)
            continue;
          ++open;
          double base = median(u.samples[0]);
          for (size_t c = 1; c < u.samples.size(); ++c)
            if (base > 0 && median(u.samples[c]) < base * 0.99) {
              ++faster;
              break;
            }
        }
        int total = opt.maxRepetitions * int(live);
        double perRun = runsDone ? secondsSince(repsStart) / runsDone : 0;
        int bar = total ? 20 * runsDone / total : 0;
        progress(llvm::formatv("cuvil-autotune [{0}{1}] repetition {2}/{3}, library {4}/{5}: {6} of {7} kernel(s) "
                               "faster than the heuristics so far, {8:F0} s left at most",
                               std::string(size_t(bar), '#'), std::string(size_t(20 - bar), '.'), rep + 1,
                               opt.maxRepetitions, i + 1, libraries.size(), faster, open,
                               perRun * (total - runsDone)));
      }
      measureRound(r, runs);
      ++runsDone;
      if (interrupted())
        return ioError("interrupted");
    }
    bool settled = rep + 1 >= opt.minRepetitions;
    for (auto [u, unit] : llvm::enumerate(units))
      for (size_t c = 0; c < unit.samples.size(); ++c) {
        double m = median(unit.samples[c]);
        double &prev = last[u][c];
        if (!(std::fabs(m - prev) <= 0.02 * std::max(m, 1e-9)) && unit.failures[c].empty() && !unit.known)
          settled = false;
        prev = m;
      }
    if (settled)
      break;
    if (opt.timeBudget > 0 && secondsSince(start) > opt.timeBudget) {
      spdlog::warn("the time budget ({} s) is spent after {} repetition(s)", opt.timeBudget, rep + 1);
      break;
    }
  }
  return Status();
}

Status Tuner::rankByCostModel() {
  // The profile's cores (one for a built-in profile, which has none), not
  // this machine's: the same profile ranks the same everywhere.
  threads = opt.threads > 0 ? opt.threads : int(std::max(profile.cores(), 1u));
  for (Unit &u : units) {
    if (u.known)
      continue;
    // The model has nothing to say about work splits: the schedules are
    // left to measurement.
    for (size_t c = u.candidates.size(); c-- > 1;)
      if (!u.candidates[c].schedule.empty()) {
        u.candidates.erase(u.candidates.begin() + long(c));
        u.samples.erase(u.samples.begin() + long(c));
        u.failures.erase(u.failures.begin() + long(c));
      }
    size_t i = u.ops.front(), p = producerOf[i];
    for (size_t c = 0; c < u.candidates.size(); ++c) {
      const mc::cpu::KernelChoice &ch = u.candidates[c];
      double t;
      if (isBanded(ch.kernel) && p != std::string::npos) {
        // The two kernels, less the middle tensor's trip through memory.
        mlir::Value mid = ops[i]->getOperand(0);
        double bytes = 4.0 * double(llvm::cast<mlir::RankedTensorType>(mid.getType()).getNumElements());
        t = estimateSeconds(ops[i], noneBanded[i], profile, threads) +
            estimateSeconds(ops[p], noneBanded[p], profile, threads) -
            2 * bytes / (std::max(profile.bandwidth_gbs(), 1.0) * 1e9);
      } else {
        t = estimateSeconds(ops[i], ch, profile, threads) +
            (p != std::string::npos ? estimateSeconds(ops[p], noneBanded[p], profile, threads) : 0);
      }
      u.samples[c] = {1e3 * std::max(t, 1e-9)};
    }
  }
  return Status();
}

Result<TuneSummary> Tuner::run() {
  if (Status s = setUp(); !s)
    return s.error();
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("cuvil-autotune", dir))
    return ioError("cannot create a work directory: " + ec.message());
  workDir = dir.str().str();
  llvm::sys::fs::create_directories(workDir + "/outputs");
  bool keep = std::getenv("CUVIL_AUTOTUNE_KEEP_WORK_DIR") != nullptr;
  if (!keep)
    guardWorkDirectory(workDir);
  struct Cleanup {
    std::string dir;
    bool keep;
    ~Cleanup() {
      if (!keep)
        llvm::sys::fs::remove_directories(dir);
      releaseWorkDirectory();
    }
  } cleanup{workDir, keep};
  if (Status s = findUnits(); !s)
    return s.error();
  spdlog::info("{} kernel op(s), {} tunable signature(s) in shard {}/{}, {} in the database already",
               summary.kernelOps, summary.signatures, opt.shardIndex, opt.shardCount, summary.fromDatabase);
  bool anyNew = std::any_of(units.begin(), units.end(), [](const Unit &u) { return !u.known; });
  if (anyNew) {
    bool crossTarget = opt.runner.empty() && (opt.target != "x86_64" || (!opt.device.empty() && opt.device != "host") ||
                                              !opt.deviceProfile.empty());
    if (opt.costModel || crossTarget) {
      if (crossTarget && !opt.costModel)
        spdlog::warn("no --runner for device '{}': candidates are ranked by the cost model of its "
                     "profile, not measured",
                     profile.name());
      if (Status s = rankByCostModel(); !s)
        return s.error();
    } else if (Status s = measure(); !s) {
      return s.error();
    }
  }
  if (progressShown)
    std::fprintf(stderr, "\r\033[K");
  if (Status s = writeOutputs(); !s)
    return s.error();
  return summary;
}

Status Tuner::writeOutputs() {
  bool measured = !(opt.costModel || (opt.runner.empty() && (opt.target != "x86_64" ||
                                                              (!opt.device.empty() && opt.device != "host") ||
                                                              !opt.deviceProfile.empty())));
  TuneReportData report;
  report.model = opt.model;
  report.device = device + " (" + profile.name() + ")";
  report.target = opt.target;
  report.compilerVersion = compilerVersion();
  report.threads = threads;
  for (Unit &u : units) {
    KernelTuneResult k;
    k.layer = u.layer + (u.ops.size() > 1 ? llvm::formatv(" (+{0} alike)", u.ops.size() - 1).str() : "");
    k.op = u.op;
    k.signature = u.signature;
    k.shapes = u.shapes;
    k.baselineChoice = choiceName(u.baseline);
    if (u.known) {
      k.fromDatabase = true;
      k.bestChoice = u.known->kernel() + "/" + u.known->variant() +
                     (u.known->schedule().empty() ? "" : "@" + u.known->schedule());
      k.bestMs = u.known->best_ms();
      k.baselineMs = u.known->baseline_ms();
      k.trials = int(u.known->trials());
      k.note = "in the database";
      report.kernels.push_back(std::move(k));
      continue;
    }
    double baseMs = median(u.samples[0]);
    if (!(baseMs > 0) && measured) {
      spdlog::warn("kernel '{}' ({}) was not measured: no record", u.layer, u.op);
      continue;
    }
    TuningRecord rec;
    rec.set_signature(u.signature);
    rec.set_device(device);
    rec.set_compiler_version(compilerVersion());
    rec.set_baseline_kernel(u.baseline.kernel);
    rec.set_baseline_variant(u.baseline.variant);
    rec.set_baseline_ms(baseMs);
    rec.set_method(measured ? "measured" : "cost_model");
    rec.set_threads(unsigned(threads));
    rec.set_profile(profile.name());
    rec.set_op(u.op);
    rec.set_example_layer(u.layer);
    size_t best = 0;
    double bestMs = baseMs, bestSpread = spread(u.samples[0]);
    double bestSoFar = baseMs;
    k.bestSoFarMs.push_back(baseMs);
    unsigned trials = 0;
    for (size_t c = 0; c < u.candidates.size(); ++c) {
      double m = median(u.samples[c]);
      Candidate *cand = rec.add_candidates();
      cand->set_kernel(u.candidates[c].kernel);
      cand->set_variant(u.candidates[c].variant);
      cand->set_schedule(u.candidates[c].schedule);
      if (!u.failures[c].empty() || !(m > 0)) {
        cand->set_median_ms(-1);
        cand->set_failure(u.failures[c].empty() ? "not measured" : u.failures[c]);
        k.candidates.push_back({choiceName(u.candidates[c]), -1});
        if (!u.failures[c].empty())
          k.note += (k.note.empty() ? "" : "; ") + choiceName(u.candidates[c]) + " " + u.failures[c];
        continue;
      }
      ++trials;
      cand->set_median_ms(m);
      cand->set_spread(spread(u.samples[c]));
      k.candidates.push_back({choiceName(u.candidates[c]), m});
      // A candidate replaces the heuristics' only when it is faster by more
      // than the noise of the two (and by 1% at least).
      double noise = std::max(0.01, std::max(spread(u.samples[c]), spread(u.samples[0])) / 2);
      if (c > 0 && m < bestMs && m < baseMs * (1 - noise)) {
        best = c;
        bestMs = m;
        bestSpread = spread(u.samples[c]);
      }
      if (c > 0) {
        bestSoFar = std::min(bestSoFar, m);
        k.bestSoFarMs.push_back(bestSoFar);
      }
    }
    rec.set_kernel(u.candidates[best].kernel);
    rec.set_variant(u.candidates[best].variant);
    rec.set_schedule(u.candidates[best].schedule);
    rec.set_best_ms(bestMs);
    rec.set_best_spread(bestSpread);
    rec.set_trials(trials);
    addRecord(db, rec);
    ++summary.tuned;
    if (best != 0)
      ++summary.improved;
    k.bestChoice = choiceName(u.candidates[best]);
    k.baselineMs = baseMs;
    k.bestMs = bestMs;
    k.spreadPct = 100 * bestSpread;
    k.trials = int(trials);
    if (!measured)
      k.note += (k.note.empty() ? "" : "; ") + std::string("ranked by the cost model");
    report.kernels.push_back(std::move(k));
  }
  report.seconds = secondsSince(start);
  report.measurements = summary.measurements;
  // Interrupted, a tune publishes nothing (its measurements are cut short).
  if (interrupted())
    return ioError("interrupted");
  if (Status s = writeTuningDatabase(opt.output, db); !s)
    return s;
  if (!opt.report.empty())
    if (Status s = writeFileAtomically(opt.report, renderTuneReportHtml(report)); !s)
      return s;
  return Status();
}

} // namespace

Result<TuneSummary> tune(const TuneOptions &options) { return Tuner(options).run(); }

} // namespace cuvil::tuning
