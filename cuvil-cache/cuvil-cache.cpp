//===- cuvil-cache.cpp - Look after a compile cache directory -------------===//
//
// cuvil-cache stats|show|trim|clear [--cache-dir DIR]
//
// What cuvil-export's --cache-dir holds (entries per level, their sizes, the
// hits and misses of every export into it), and its upkeep: trim to a size
// (least recently used entries first) or clear. A thin main over cache/.
//
//===----------------------------------------------------------------------===//
#include "cache/CompileCache.h"
#include "support/Crash/CrashRecovery.h"
#include "support/Tool/ToolSupport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <sys/stat.h>

using namespace cuvil;

namespace {

const char *kTool = "cuvil-cache";

std::string valueOf(const cache::KeyMaterial &m, const std::string &name) {
  for (const std::string &p : m.parts)
    if (p.rfind(name + "=", 0) == 0)
      return p.substr(name.size() + 1);
  return "";
}

std::string age(int64_t mtime) {
  int64_t s = std::time(nullptr) - mtime;
  char buf[32];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%lldm", (long long)s / 60);
  else if (s < 172800)
    std::snprintf(buf, sizeof buf, "%lldh", (long long)s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%lldd", (long long)s / 86400);
  return buf;
}

int stats(const std::string &dir) {
  cache::DirectoryStats s = cache::directoryStats(dir);
  std::printf("compile cache '%s'\n", dir.c_str());
  std::printf("%-6s %8s %12s %8s %8s %8s %8s %8s\n", "level", "entries", "size", "hits", "remote",
              "misses", "corrupt", "refused");
  const char *levels[] = {"lib", "code", "plan"};
  for (int i = 0; i < cache::kEntryKinds; ++i) {
    auto c = [&](const char *name) { return (long long)s.counters[std::string(levels[i]) + "." + name]; };
    std::printf("%-6s %8lld %12s %8lld %8lld %8lld %8lld %8lld\n", levels[i], (long long)s.entries[i],
                cache::formatBytes(s.bytes[i]).c_str(), c("hits"), c("remote_hits"), c("misses"),
                c("corrupt"), c("refused"));
  }
  long long lookups = 0, served = 0;
  for (const char *l : levels) {
    std::string level = l;
    served += s.counters[level + ".hits"] + s.counters[level + ".remote_hits"];
    lookups += s.counters[level + ".hits"] + s.counters[level + ".remote_hits"] + s.counters[level + ".misses"];
  }
  if (lookups)
    std::printf("%lld of %lld lookups served (%.1f%%)\n", served, lookups, 100.0 * served / lookups);
  return kExitSuccess;
}

int show(const std::string &dir) {
  std::vector<cache::EntryInfo> entries = cache::listEntries(dir);
  std::printf("%-5s %-16s %12s %6s  %s\n", "level", "key", "size", "used", "what");
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) { // most recent first
    const cache::EntryInfo &e = *it;
    std::string what;
    if (e.kind == "lib")
      what = valueOf(e.material, "name") + " (" + valueOf(e.material, "emit") + ", " +
             valueOf(e.material, "target-name") + ", " + valueOf(e.material, "cpu") + ", model " +
             valueOf(e.material, "model").substr(0, 12) + ")";
    else if (e.kind == "code")
      what = "code object for " + valueOf(e.material, "cpu") + " (IR " + valueOf(e.material, "ir").substr(0, 12) + ")";
    else if (e.kind == "plan") { // keyed by the model's structure (any model name)
      std::string structure = valueOf(e.material, "model");
      if (structure.rfind("structure-", 0) == 0)
        structure = structure.substr(std::strlen("structure-"));
      what = "weights plan (" + valueOf(e.material, "target-name") + ", " +
             valueOf(e.material, "cpu") + ", structure " + structure.substr(0, 12) + ")";
    } else
      what = "not an entry (a miss when looked up; trim or clear removes it)";
    std::printf("%-5s %-16s %12s %6s  %s\n", e.kind.c_str(), e.key.substr(0, 16).c_str(),
                cache::formatBytes(e.bytes).c_str(), age(e.mtime).c_str(), what.c_str());
  }
  std::printf("%zu entries\n", entries.size());
  return kExitSuccess;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Shows and looks after a Cuvil compile cache directory (cuvil-export --cache-dir).\n\n"
               "Exit status: 0 success, 2 usage error, 3 I/O error.",
               kTool};
  std::string dir, maxSize;
  LogOptions log;
  app.add_option("--cache-dir", dir, "The cache directory (default: $CUVIL_CACHE_DIR)");
  app.require_subcommand(1);
  app.fallthrough(); // --cache-dir after the subcommand too
  CLI::App *statsCmd = app.add_subcommand("stats", "Entries and bytes per level; hits, misses, corrupt "
                                                   "and refused entries of every export so far");
  CLI::App *showCmd = app.add_subcommand("show", "Every entry: level, key, size, when last used, what it is");
  CLI::App *trimCmd = app.add_subcommand("trim", "Remove least recently used entries down to a size");
  trimCmd->add_option("--max-size", maxSize, "What may remain, e.g. 2G, 500M")->required();
  CLI::App *clearCmd = app.add_subcommand("clear", "Remove every entry, build record and counter");
  addCommonOptions(app, log);
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  cuvil::installResourceHandlers(kTool);
  setupLogging(kTool, log);
  if (dir.empty())
    if (const char *env = std::getenv("CUVIL_CACHE_DIR"))
      dir = env;
  if (dir.empty())
    return reportError(kTool, usageError("no cache directory: pass --cache-dir DIR or set CUVIL_CACHE_DIR"));
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return reportError(kTool, ioError("'" + dir + "' is not a cache directory"));
  if (statsCmd->parsed())
    return stats(dir);
  if (showCmd->parsed())
    return show(dir);
  if (trimCmd->parsed()) {
    std::optional<uint64_t> n = cache::parseSize(maxSize);
    if (!n)
      return reportError(kTool, usageError("--max-size: '" + maxSize + "' is not a size (e.g. 2G, 500M)"));
    int64_t removed = cache::trimDirectory(dir, *n);
    std::printf("removed %lld entries; %s remain\n", (long long)removed,
                cache::formatBytes(cache::directoryStats(dir).bytes[0] + cache::directoryStats(dir).bytes[1]).c_str());
    return kExitSuccess;
  }
  if (clearCmd->parsed()) {
    std::printf("removed %lld entries\n", (long long)cache::clearDirectory(dir));
    return kExitSuccess;
  }
  return kExitSuccess;
}
