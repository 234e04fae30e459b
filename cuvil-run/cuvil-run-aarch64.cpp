//===- cuvil-run-aarch64.cpp - cuvil-run for aarch64 libraries ------------===//
//
// The aarch64 build of cuvil-run (made with the cross compiler, run under
// qemu-aarch64): runs compiled libraries only, with the host tool's command
// line for that (RunOptions.h; not --json, --output-npz or --function). The
// host cuvil-run also runs .mlir models on the reference evaluator, which
// needs LLVM and MLIR; those are not available for aarch64 here.
//
//===----------------------------------------------------------------------===//
#include "cuvil-run/LibraryRunner.h"
#include "cuvil-run/RunLoop.h"
#include "cuvil-run/RunOptions.h"
#include "support/AtomicFile.h"
#include "support/Staging.h"

#include <new>
#include <unistd.h>

#include <cstdio>

using namespace cuvil;

namespace {

/// Out of memory: the message, the staged outputs removed, exit 1.
[[noreturn]] void outOfMemory() {
  static const char msg[] = "cuvil-run: error: CUVIL-E-OOM: out of memory: free memory or raise the limit (ulimit -v)\n";
  removeStagingDirectories();
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(1);
}

int fail(const Error &e) {
  std::fprintf(stderr, "cuvil-run: error: %s: %s\n", errorId(e).c_str(), e.message.c_str());
  return e.code;
}

} // namespace

int main(int argc, char **argv) {
  std::set_new_handler(outOfMemory);
  RunOptions opt;
  CLI::App app{"Runs a library compiled by cuvil-export on NumPy .npy inputs and writes its "
               "outputs as output0.npy, output1.npy, ... (the aarch64 build of cuvil-run). "
               "Exit status: 0 success, 1 the model or an input is invalid, 2 usage error, 3 "
               "I/O error.",
               "cuvil-run"};
  addRunOptions(app, opt, "Library compiled by cuvil-export (.so)");
  app.set_version_flag("--version", "cuvil-run (aarch64 build)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kExitUsageError;
  }
  if (Status s = prepareOutputDir(opt.settings.outputDir); !s)
    return fail(s.error());
  // The library first: each input's header is checked against it.
  Result<LibraryRunner> lib = LibraryRunner::load(opt.model, opt.threads, opt.symbolPrefix, opt.device);
  if (!lib)
    return fail(lib.error());
  std::vector<NpyExpectation> expect;
  for (size_t i = 0; i < lib->numInputs(); ++i)
    expect.push_back(lib->inputExpectation(i));
  Result<std::vector<Tensor>> in = readInputs(opt.inputs, opt.seed, &expect);
  if (!in)
    return fail(in.error());
  if (in->size() != lib->numInputs())
    return fail(inputError("'" + opt.model + "' takes " + std::to_string(lib->numInputs()) +
                           " input(s) (" + lib->signature() + "), got " + std::to_string(in->size())));
  opt.settings.afterWarmup = [&] { lib->resetProfile(); };
  Result<RunReport> report = runAndWrite(
      [&](const std::vector<Tensor> &x, std::vector<Tensor> &out) { return lib->run(x, out); },
      *in, opt.settings);
  if (!report)
    return fail(report.error());
  if (opt.profile) {
    std::vector<ProfileRow> rows = lib->profile();
    if (rows.empty())
      return fail(inputError("'" + opt.model + "' has no profile: compile it with cuvil-export --instrument"));
    printProfile(rows, report->runs);
  }
  return report->checksPassed() ? kExitSuccess : fail(checkFailure(report->checks, opt.settings));
}
