//===- cuvil-run-aarch64.cpp - cuvil-run for aarch64 libraries ------------===//
//
// The aarch64 build of cuvil-run (made with the cross compiler, run under
// qemu-aarch64): runs compiled libraries only, with cuvil-run's flags for
// that (-i/--input, -o/--output-dir, --benchmark, --warmup, --duration,
// --expected-output, --rtol, --atol, --symbol-prefix, --threads, -q/--quiet;
// not --json).
// The host cuvil-run also runs .mlir models on the reference evaluator,
// which needs LLVM and MLIR; those are not available for aarch64 here.
//
//===----------------------------------------------------------------------===//
#include "cuvil-run/LibraryRunner.h"
#include "cuvil-run/RunLoop.h"
#include "support/AtomicFile.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace cuvil;

namespace {

int fail(const Error &e) {
  std::fprintf(stderr, "cuvil-run: error: %s\n", e.message.c_str());
  return e.code;
}

const char *kUsage =
    "usage: cuvil-run LIBRARY.so -i X.npy [-i Y.npy...] [-o DIR] [--benchmark N] [--warmup N]\n"
    "       [--duration S] [--expected-output Y.npy...] [--rtol R] [--atol A] [--threads T]\n"
    "       [--symbol-prefix NAME] [-q]\n"
    "Runs a library compiled by cuvil-export (aarch64 build of cuvil-run).\n";

bool parseDouble(const char *s, double lo, double hi, double &out) {
  char *end = nullptr;
  double v = std::strtod(s, &end);
  if (!*s || *end || !(v >= lo && v <= hi))
    return false;
  out = v;
  return true;
}

bool parseInt(const char *s, int lo, int hi, int &out) {
  char *end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (!*s || *end || v < lo || v > hi)
    return false;
  out = static_cast<int>(v);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string library;
  std::vector<std::string> inputs;
  RunSettings settings;
  int threads = 0;
  std::string prefix = "cuvil";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cuvil-run: error: %s needs a value\n%s", flag, kUsage);
        std::exit(kExitUsageError);
      }
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return kExitSuccess;
    } else if (a == "-i" || a == "--input") {
      inputs.push_back(value("--input"));
    } else if (a == "-o" || a == "--output-dir") {
      settings.outputDir = value("--output-dir");
    } else if (a == "--benchmark") {
      if (!parseInt(value("--benchmark"), 0, 1000000, settings.benchmark))
        return fail(usageError("--benchmark takes a number of runs (0 to 1000000)"));
    } else if (a == "--warmup") {
      if (!parseInt(value("--warmup"), 0, 1000000, settings.warmup))
        return fail(usageError("--warmup takes a number of runs (0 to 1000000)"));
    } else if (a == "--duration") {
      if (!parseDouble(value("--duration"), 0, 86400, settings.duration))
        return fail(usageError("--duration takes seconds (0 to 86400)"));
    } else if (a == "--expected-output") {
      settings.expected.push_back(value("--expected-output"));
    } else if (a == "--rtol" || a == "--atol") {
      if (!parseDouble(value(a.c_str()), 0, 1e300, a == "--rtol" ? settings.rtol : settings.atol))
        return fail(usageError(a + " takes a tolerance >= 0"));
    } else if (a == "--symbol-prefix") {
      prefix = value("--symbol-prefix");
    } else if (a == "--version") {
      std::printf("cuvil-run (aarch64 build)\n");
      return kExitSuccess;
    } else if (a == "--threads") {
      if (!parseInt(value("--threads"), 0, 4096, threads))
        return fail(usageError("--threads takes a number of threads (0 to 4096)"));
    } else if (a == "-q" || a == "--quiet") {
      settings.quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      return fail(usageError("unknown option '" + a + "'"));
    } else if (library.empty()) {
      library = a;
    } else {
      return fail(usageError("more than one model given ('" + library + "', '" + a + "')"));
    }
  }
  if (library.empty())
    return fail(usageError("no library given"));
  if (Status s = prepareOutputDir(settings.outputDir); !s)
    return fail(s.error());
  Result<std::vector<Tensor>> in = readInputs(inputs, 0);
  if (!in)
    return fail(in.error());
  Result<LibraryRunner> lib = LibraryRunner::load(library, threads, prefix);
  if (!lib)
    return fail(lib.error());
  if (in->size() != lib->numInputs())
    return fail(inputError("'" + library + "' takes " + std::to_string(lib->numInputs()) +
                           " input(s) (" + lib->signature() + "), got " +
                           std::to_string(in->size())));
  Result<RunReport> report = runAndWrite(
      [&](const std::vector<Tensor> &x, std::vector<Tensor> &out) { return lib->run(x, out); },
      *in, settings);
  if (!report)
    return fail(report.error());
  return report->checksPassed() ? kExitSuccess : fail(checkFailure(report->checks, settings));
}
