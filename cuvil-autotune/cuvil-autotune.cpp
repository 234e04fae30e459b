//===- cuvil-autotune.cpp - Device profiles and measured kernel tuning ----===//
//
// cuvil-autotune profile --output DEVICE.textproto [--quick]
// cuvil-autotune profile --list | --show NAME
// cuvil-autotune tune --model MODEL [--device NAME | --device-profile FILE] --output tuning.db
//     [--input-shape SPEC]... [--target x86_64|aarch64] [--trials N] [--time-budget S]
//     [--shard I/N] [--runner CMD] [--threads T] [--report FILE.html] [--fresh] [--cost-model]
// cuvil-autotune merge A.db B.db... --output C.db
// cuvil-autotune show tuning.db
//
// A thin main over tuning/ (profiles, the database) and Tuner.h (tune).
//
//===----------------------------------------------------------------------===//
#include "cuvil-autotune/Tuner.h"
#include "support/LargeStack.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"
#include "targets/Targets.h"
#include "tuning/DeviceProfiles.h"
#include "tuning/TuningDatabase.h"

#include <google/protobuf/text_format.h>
#include <spdlog/spdlog.h>

#include <cstdio>

using namespace cuvil;
using namespace cuvil::tuning;

namespace {

const char *kTool = "cuvil-autotune";

struct Options {
  TuneOptions tune;
  std::string shard = "1/1", profileOutput, showProfile, crashReproducer;
  bool quick = false, listProfiles = false;
  std::vector<std::string> mergeInputs;
  std::string mergeOutput, showInput;
  LogOptions log;
};

int runProfile(const Options &opt) {
  if (opt.listProfiles) {
    for (const std::string &name : builtinProfileNames()) {
      Result<DeviceProfile> p = builtinProfile(name);
      std::printf("%-16s %-8s %s\n", name.c_str(), p->target().c_str(), p->description().c_str());
    }
    return kExitSuccess;
  }
  if (!opt.showProfile.empty()) {
    Result<DeviceProfile> p = loadDeviceProfile(opt.showProfile);
    if (!p)
      return reportError(kTool, p.error());
    std::string text;
    google::protobuf::TextFormat::PrintToString(*p, &text);
    std::fputs(text.c_str(), stdout);
    return kExitSuccess;
  }
  if (opt.profileOutput.empty())
    return reportError(kTool, usageError("profile: give --output DEVICE.textproto (or --list, --show NAME)"));
  spdlog::info("measuring this machine's peaks ({})", opt.quick ? "quick" : "about 4 s");
  Result<DeviceProfile> p = measureHostProfile(opt.quick);
  if (!p)
    return reportError(kTool, p.error());
  p->set_producer(versionText());
  if (Status s = writeDeviceProfile(opt.profileOutput, *p); !s)
    return reportError(kTool, s.error());
  std::printf("%s: %s, %u cores, fp32 %.1f GFLOP/s a core, int8 %.1f GOP/s a core, %.1f GB/s\n",
              opt.profileOutput.c_str(), p->cpu().c_str(), p->cores(), p->fp32_gflops_core(),
              p->int8_gops_core(), p->bandwidth_gbs());
  return kExitSuccess;
}

int runTune(Options &opt) {
  Result<std::pair<unsigned, unsigned>> shard = parseShard(opt.shard);
  if (!shard)
    return reportError(kTool, shard.error());
  opt.tune.shardIndex = shard->first;
  opt.tune.shardCount = shard->second;
  if (!opt.tune.device.empty() && !opt.tune.deviceProfile.empty())
    return reportError(kTool, usageError("--device and --device-profile both name the device: give one"));
  Result<TuneSummary> s = tune(opt.tune);
  if (!s)
    return reportError(kTool, s.error());
  std::printf("%s: %d kernel signature(s) of %d kernel op(s) in shard %u/%u: %d tuned now (%d faster than "
              "the heuristics), %d from the database; %d measurement(s), %d librar%s built, %d candidate(s) "
              "failed\n",
              opt.tune.output.c_str(), s->signatures, s->kernelOps, opt.tune.shardIndex, opt.tune.shardCount,
              s->tuned, s->improved, s->fromDatabase, s->measurements, s->libraries,
              s->libraries == 1 ? "y" : "ies", s->failedCandidates);
  return kExitSuccess;
}

int runMerge(const Options &opt) {
  TuningDatabase merged;
  size_t read = 0;
  for (const std::string &path : opt.mergeInputs) {
    LoadReport report;
    Result<TuningDatabase> db = readTuningDatabase(path, &report);
    if (!db)
      return reportError(kTool, db.error());
    if (std::string w = report.summary(); !w.empty())
      spdlog::warn("tuning database '{}': {}", path, w);
    for (const TuningRecord &r : db->records())
      addRecord(merged, r);
    read += size_t(db->records_size());
  }
  merged.set_producer("cuvil-autotune merge (" + compilerVersion() + ")");
  if (Status s = writeTuningDatabase(opt.mergeOutput, merged); !s)
    return reportError(kTool, s.error());
  std::printf("%s: %d record(s) from %zu record(s) of %zu database(s)\n", opt.mergeOutput.c_str(),
              merged.records_size(), read, opt.mergeInputs.size());
  return kExitSuccess;
}

int runShow(const Options &opt) {
  LoadReport report;
  Result<TuningDatabase> db = readTuningDatabase(opt.showInput, &report);
  if (!db)
    return reportError(kTool, db.error());
  if (std::string w = report.summary(); !w.empty())
    spdlog::warn("tuning database '{}': {}", opt.showInput, w);
  std::printf("# %s: %d record(s), version %u, made by %s\n", opt.showInput.c_str(), db->records_size(),
              db->version(), db->producer().c_str());
  std::fputs(tuningDatabaseText(*db).c_str(), stdout);
  return kExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  TuneOptions &t = opt.tune;
  CLI::App app{"Device profiles and measured kernel tuning: `tune` builds a model with each kernel "
               "configuration its convolutions, linear layers and int8 products can take, measures "
               "every kernel call on this machine (or through --runner on the device) and keeps the "
               "fastest per kernel signature in a tuning database, which `cuvil-export --strategy "
               "autotune --tuning-db` compiles with. Databases carry across models and merge.\n\n"
               "Exit status: 0 success, 1 bad input (model, database, profile), 2 usage error, "
               "3 I/O error. Outputs are written atomically.",
               kTool};
  app.require_subcommand(1);
  app.fallthrough(); // -v, --log-level and --crash-reproducer after the subcommand too

  CLI::App *profile = app.add_subcommand("profile", "Measure this machine into a device profile, or list and "
                                                    "print the built-in ones");
  profile->add_option("--output,-o", opt.profileOutput, "The profile (.textproto for text, else binary)");
  profile->add_flag("--quick", opt.quick, "Measure the peaks briefly (about 1.5 s instead of 4)");
  profile->add_flag("--list", opt.listProfiles, "List the built-in profiles");
  profile->add_option("--show", opt.showProfile, "Print a built-in profile or a profile file");

  CLI::App *tuneCmd = app.add_subcommand("tune", "Measure the kernel configurations of a model into a tuning "
                                                 "database (extended when it exists)");
  tuneCmd->add_option("--model", t.model, "The model: .pt, .mlir or .mlirbc")->required();
  tuneCmd->add_option("--output,-o", t.output, "The tuning database (an existing one is read and extended)")
      ->required();
  tuneCmd->add_option("--input-shape", t.inputShapes,
                      "Input shape INDEX_OR_NAME=DIMxDIM...xDTYPE for .pt models (each batch size is "
                      "its own kernels: tune each one the library will run)");
  tuneCmd->add_option("--target", t.target, "The target (x86_64, aarch64)")->capture_default_str();
  tuneCmd->add_option("--device", t.device,
                      "A built-in device profile (see `profile --list`); default: this machine");
  tuneCmd->add_option("--device-profile", t.deviceProfile, "A device profile file (cuvil-autotune profile)");
  tuneCmd->add_option("--trials", t.trials, "Candidates tried per kernel at most, the heuristics' first "
                                            "(default: every one)")
      ->check(nonNegativeNumber());
  tuneCmd->add_option("--time-budget", t.timeBudget,
                      "Seconds of measurement at most; the repetitions stop there (default: none)")
      ->check(nonNegativeNumber());
  tuneCmd->add_option("--shard", opt.shard,
                      "I/N: tune the I-th of N deterministic shares of the kernels (for make -j, a CI "
                      "matrix or a job array; `merge` joins the databases)")
      ->capture_default_str();
  tuneCmd->add_option("--runner", t.runner,
                      "A command each measured run goes through, as `CMD cuvil-run LIB ARGS...` under "
                      "/bin/sh (e.g. an ssh wrapper that copies LIB to the device, or `qemu-aarch64 -L "
                      "/usr/aarch64-linux-gnu`); it must print cuvil-run's output");
  tuneCmd->add_option("--threads", t.threads, "Threads of the measured runs (default: every core)")
      ->check(nonNegativeNumber());
  tuneCmd->add_option("--candidate-timeout", t.candidateTimeout, "Seconds a measured run may take")
      ->check(positiveNumber())
      ->take_last()
      ->capture_default_str();
  tuneCmd->add_option("--report", t.report, "Also write an HTML report: gains per layer, a chart per kernel");
  tuneCmd->add_flag("--fresh", t.fresh, "Start a new database even if --output exists");
  tuneCmd->add_flag("--cost-model", t.costModel,
                    "Rank the candidates by the device profile's cost model, measuring nothing (the "
                    "default for another device without --runner)");

  CLI::App *merge = app.add_subcommand("merge", "Join tuning databases, keeping the best record per kernel, "
                                                "device and compiler version");
  merge->add_option("inputs", opt.mergeInputs, "The databases")->required();
  merge->add_option("--output,-o", opt.mergeOutput, "The merged database")->required();

  CLI::App *show = app.add_subcommand("show", "Print a tuning database as text");
  show->add_option("database", opt.showInput, "The database")->required();

  app.add_option("--crash-reproducer", opt.crashReproducer,
                 "Should the compiler fail internally, write the failing IR and stack trace here");
  addCommonOptions(app, opt.log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  mlir::cuvil::registerAllTargets();
  cuvil::installCrashHandlers(kTool, opt.crashReproducer);
  setupLogging(kTool, opt.log);
  return cuvil::runOnLargeStack([&] {
    if (profile->parsed())
      return runProfile(opt);
    if (merge->parsed())
      return runMerge(opt);
    if (show->parsed())
      return runShow(opt);
    return runTune(opt);
  });
}
