//===- Invocation.cpp - What a tool run is, for the no-start check --------===//
#include "cache/Invocation.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#else
#include <sys/auxv.h>
#endif

extern char **environ;

namespace cuvil::cache {

namespace {

// Changes when what an invocation digest covers changes.
constexpr const char *kInvocationFormat = "cuvil-invocation 1";

/// A small file's bytes ("" when unreadable).
std::string readSmallFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return "";
  std::string out;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0 || out.size() > (1 << 20))
      break;
    out.append(buffer, size_t(n));
  }
  ::close(fd);
  return out;
}

void addLength(std::string &out, const std::string &s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
  out += '\n';
}

#if defined(__x86_64__)
void addCpuid(std::string &out, unsigned leaf, unsigned sub, bool withEbx = true) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid_count(leaf, sub, a, b, c, d);
  char text[96];
  // Leaf 1's EBX holds the APIC id of the core this runs on: left out.
  std::snprintf(text, sizeof text, "cpuid %x.%x %x %x %x %x\n", leaf, sub, a, withEbx ? b : 0, c, d);
  out += text;
}
#endif

} // namespace

std::string hostFingerprint() {
  std::string out;
#if defined(__x86_64__)
  unsigned maxLeaf = __get_cpuid_max(0, nullptr);
  unsigned maxExtended = __get_cpuid_max(0x80000000, nullptr);
  addCpuid(out, 0, 0);
  if (maxLeaf >= 1)
    addCpuid(out, 1, 0, /*withEbx=*/false);
  if (maxLeaf >= 7) {
    addCpuid(out, 7, 0);
    addCpuid(out, 7, 1);
  }
  if (maxLeaf >= 0xd)
    addCpuid(out, 0xd, 1);
  if (maxLeaf >= 0x19)
    addCpuid(out, 0x19, 0);
  for (unsigned leaf = 0x80000001; leaf <= std::min(maxExtended, 0x80000004u); ++leaf)
    addCpuid(out, leaf, 0);
  unsigned b = 0, c = 0, d = 0, a = 0;
  __cpuid(1, a, b, c, d);
  if (c & bit_OSXSAVE) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    out += "xcr0 " + std::to_string((uint64_t(hi) << 32) | lo) + "\n";
  }
#else
  out += "hwcap " + std::to_string(getauxval(AT_HWCAP)) + " " + std::to_string(getauxval(AT_HWCAP2)) + "\n";
  // Without the lines that vary from read to read.
  std::string info = readSmallFile("/proc/cpuinfo");
  size_t at = 0;
  while (at < info.size()) {
    size_t end = info.find('\n', at);
    if (end == std::string::npos)
      end = info.size();
    std::string line = info.substr(at, end - at);
    if (line.rfind("cpu MHz", 0) != 0 && line.rfind("BogoMIPS", 0) != 0 && line.rfind("bogomips", 0) != 0)
      out += line + "\n";
    at = end + 1;
  }
#endif
  for (int i = 0; i < 16; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level = readSmallFile(dir + "level");
    if (level.empty())
      break;
    out += "cache " + level + readSmallFile(dir + "type") + readSmallFile(dir + "size") +
           readSmallFile(dir + "shared_cpu_list");
  }
  return out;
}

std::string invocationDigest(const std::vector<std::string> &args) {
  std::string text;
  addLength(text, kInvocationFormat);
  for (const std::string &a : args)
    addLength(text, "arg " + a);
  char cwd[4096];
  addLength(text, std::string("cwd ") + (::getcwd(cwd, sizeof cwd) ? cwd : "?"));
  std::vector<std::string> env;
  for (char **e = environ; e && *e; ++e) {
    std::string v = *e;
    if (v.rfind("CUVIL_", 0) == 0 || v.rfind("CUDA_PATH=", 0) == 0 || v.rfind("PATH=", 0) == 0 ||
        v.rfind("LD_LIBRARY_PATH=", 0) == 0)
      env.push_back(v);
  }
  std::sort(env.begin(), env.end());
  for (const std::string &v : env)
    addLength(text, "env " + v);
  addLength(text, "host " + hostFingerprint());
  return digest(text);
}

std::string fileStateText(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

std::string watchValue(const std::string &path) {
  std::string state = fileStateText(path);
  return (state.empty() ? "-" : state) + " " + path;
}

bool parseWatchValue(const std::string &value, std::string &path, std::string &state) {
  size_t space = value.find(' ');
  if (space == std::string::npos || space == 0 || space + 1 == value.size())
    return false;
  state = value.substr(0, space);
  path = value.substr(space + 1);
  return true;
}

bool watchedFilesUnchanged(const KeyMaterial &record) {
  for (const std::string &p : record.parts) {
    if (p.rfind("watch=", 0) != 0)
      continue;
    std::string path, state;
    if (!parseWatchValue(p.substr(6), path, state))
      return false;
    std::string now = fileStateText(path);
    if ((now.empty() ? "-" : now) != state)
      return false;
  }
  return true;
}

bool isBuildRecordPart(const std::string &part) {
  for (const char *name : {"code=", "weights=", "model-file=", "output-file=", "invocation=", "watch="})
    if (part.rfind(name, 0) == 0)
      return true;
  return false;
}

KeyMaterial keyOfRecord(const KeyMaterial &record) {
  KeyMaterial key;
  for (const std::string &p : record.parts)
    if (!isBuildRecordPart(p))
      key.parts.push_back(p);
  return key;
}

std::string partValue(const KeyMaterial &m, const std::string &name) {
  for (const std::string &p : m.parts)
    if (p.size() > name.size() && p[name.size()] == '=' && p.compare(0, name.size(), name) == 0)
      return p.substr(name.size() + 1);
  return "";
}

} // namespace cuvil::cache
