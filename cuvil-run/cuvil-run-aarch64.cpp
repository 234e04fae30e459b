//===- cuvil-run-aarch64.cpp - cuvil-run for aarch64 libraries ------------===//
//
// The aarch64 build of cuvil-run (made with the cross compiler, run under
// qemu-aarch64): runs compiled libraries only, with cuvil-run's flags for
// that (-i/--input, -o/--output-dir, --benchmark, --threads, -q/--quiet).
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
    "usage: cuvil-run LIBRARY.so -i X.npy [-i Y.npy...] [-o DIR] [--benchmark N] "
    "[--threads T] [-q]\n"
    "Runs a library compiled by cuvil-export (aarch64 build of cuvil-run).\n";

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
  Result<std::vector<Tensor>> in = readInputs(inputs);
  if (!in)
    return fail(in.error());
  Result<LibraryRunner> lib = LibraryRunner::load(library, threads);
  if (!lib)
    return fail(lib.error());
  if (in->size() != lib->numInputs())
    return fail(inputError("'" + library + "' takes " + std::to_string(lib->numInputs()) +
                           " input(s) (" + lib->signature() + "), got " +
                           std::to_string(in->size())));
  Status s = runAndWrite(
      [&](const std::vector<Tensor> &x, std::vector<Tensor> &out) { return lib->run(x, out); },
      *in, settings);
  return s ? kExitSuccess : fail(s.error());
}
