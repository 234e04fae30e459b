//===- Launcher.cpp - bin/cuvil-export: answers unchanged builds ----------===//
//
// The compiler (libexec/cuvil-export-compiler, cuvil-export.cpp) starts in about
// 60 ms: relocating and initialising LLVM and MLIR. A build in which
// nothing changed, the common case of `make` and of build farms, should not
// pay that. This launcher starts in a few milliseconds, answers such a
// build from the record the compiler left for the output in the cache
// directory (cache/Invocation.h: the same command line, working directory,
// environment and host CPU; every file it read or wrote as it was; the
// output as it was written), and otherwise runs the compiler in its place
// (exec: the same process, arguments, exit status and signals).
//
//===----------------------------------------------------------------------===//
#include "cache/CompileCache.h"
#include "cache/Invocation.h"
#include "support/Tool/ToolSupport.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include <spdlog/spdlog.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

const char *kTool = "cuvil-export";

/// What the launcher needs of the command line: where the output and the
/// cache are, how much to say. A misreading is harmless: the record it
/// finds must have been made by this very command line.
struct Scan {
  std::string output, cacheDir;
  cuvil::LogOptions log;
};

Scan scan(const std::vector<std::string> &args) {
  Scan s;
  auto value = [&](size_t &i, const std::string &a, const char *name, std::string &out) {
    std::string n = name;
    if (a == n && i + 1 < args.size()) {
      out = args[++i];
      return true;
    }
    if (a.size() > n.size() + 1 && a.compare(0, n.size() + 1, n + "=") == 0) {
      out = a.substr(n.size() + 1);
      return true;
    }
    return false;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--")
      break;
    if (value(i, a, "--output", s.output) || value(i, a, "-o", s.output) ||
        value(i, a, "--cache-dir", s.cacheDir) || value(i, a, "--log-level", s.log.level))
      continue;
    if (a == "--verbose")
      ++s.log.verbosity;
    else if (a.size() >= 2 && a[0] == '-' && a.find_first_not_of('v', 1) == std::string::npos)
      s.log.verbosity += int(a.size() - 1);
    else if (a.size() > 2 && a.compare(0, 2, "-o") == 0 && a[2] != '=')
      s.output = a.substr(2);
  }
  return s;
}

/// True when the last build of the output, recorded in the cache, was this
/// very invocation and nothing it read or wrote has changed since: said
/// (-v), counted in the cache's statistics, and nothing else to do.
bool upToDate(const std::vector<std::string> &args) {
  Scan s = scan(args);
  if (s.cacheDir.empty())
    if (const char *env = std::getenv("CUVIL_CACHE_DIR"))
      s.cacheDir = env;
  if (s.output.empty() || s.output == "-" || s.cacheDir.empty())
    return false;
  // Quiet until it is a hit: the compiler reports whatever is wrong.
  cuvil::setupLogging(kTool, s.log);
  spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::off);
  cuvil::cache::CacheOptions options;
  options.dir = s.cacheDir;
  cuvil::cache::CompileCache cache(options);
  llvm::SmallString<256> output(s.output);
  if (llvm::sys::fs::make_absolute(output))
    return false;
  std::optional<cuvil::cache::KeyMaterial> record = cache.lastBuild(std::string(output));
  if (!record)
    return false;
  std::string invocation = cuvil::cache::partValue(*record, "invocation");
  std::string written = cuvil::cache::partValue(*record, "output-file");
  if (invocation.empty() || written.empty() || written != cuvil::cache::fileStateText(s.output) ||
      !cuvil::cache::watchedFilesUnchanged(*record) || invocation != cuvil::cache::invocationDigest(args))
    return false;
  spdlog::set_level(level);
  spdlog::info("'{}' is up to date: the last build of it was this command, and what it read and wrote "
               "is unchanged (entry {}; the compiler was not started)",
               s.output, cuvil::cache::keyOfRecord(*record).key());
  cache.countUpToDate(cuvil::cache::EntryKind::Library);
  cache.flushStats();
  return true;
}

/// libexec/cuvil-export-compiler beside this bin/ directory.
std::string compilerPath() {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return "";
  std::string path(self, size_t(n));
  std::string bin = path.substr(0, path.find_last_of('/'));
  return bin.substr(0, bin.find_last_of('/')) + "/libexec/cuvil-export-compiler";
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (upToDate(args)) {
    spdlog::shutdown();
    return 0;
  }
  spdlog::shutdown();
  std::string compiler = compilerPath();
  ::execv(compiler.c_str(), argv);
  std::fprintf(stderr,
               "%s: error: cannot run the compiler '%s': %s (bin/cuvil-export runs "
               "libexec/cuvil-export-compiler of the same installation: reinstall Cuvil)\n",
               kTool, compiler.c_str(), std::strerror(errno));
  return 3;
}
