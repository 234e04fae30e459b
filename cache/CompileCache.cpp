//===- CompileCache.cpp - Cuvil's compile cache: a directory and a server -===//
#include "cache/CompileCache.h"

#include "cache/RedisClient.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cuvil::cache {

namespace {

constexpr const char *kLevels[] = {"lib", "code", "plan"};
static_assert(sizeof kLevels / sizeof kLevels[0] == kEntryKinds);
constexpr uint64_t kMaxEntryBytes = uint64_t(8) << 30;

std::string errnoText(int e) { return std::strerror(e); }

/// Refused unless ours and writable by nobody else: a shared directory is
/// a way to run someone else's code (RELIABILITY.md G7).
std::string untrusted(const struct stat &st) {
  if (st.st_uid != ::geteuid())
    return "owned by another user (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return "writable by group or others (mode " + std::to_string((st.st_mode >> 6) & 7) +
           std::to_string((st.st_mode >> 3) & 7) + std::to_string(st.st_mode & 7) + ")";
  return "";
}

bool readAll(int fd, std::string &out, uint64_t size) {
  out.resize(size);
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, out.data() + done, size - done, done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += n;
  }
  return true;
}

bool writeAll(int fd, llvm::StringRef data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += n;
  }
  return true;
}

/// mkdir -p, the last component 0700.
bool makeDirectories(const std::string &dir, std::string &error) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0)
    return S_ISDIR(st.st_mode) || (error = "'" + dir + "' is not a directory", false);
  size_t pos = 0;
  while ((pos = dir.find('/', pos + 1)) != std::string::npos) {
    std::string partial = dir.substr(0, pos);
    if (::stat(partial.c_str(), &st) != 0 && ::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
      return error = "cannot create '" + partial + "': " + errnoText(errno), false;
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return error = "cannot create '" + dir + "': " + errnoText(errno), false;
  return true;
}

/// Writes `data` to `path` through a unique temporary file and a rename
/// (mode 0600).
bool publish(const std::string &path, llvm::StringRef data, std::string &error,
             llvm::StringRef more = {}) {
  std::string tmpl = path.substr(0, path.find_last_of('/') + 1) + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0)
    return error = "cannot create a file in '" + tmpl.substr(0, tmpl.size() - 11) + "': " +
                   errnoText(errno),
           false;
  bool ok = writeAll(fd, data) && writeAll(fd, more);
  int writeErrno = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(buf.data(), path.c_str()) == 0)
    return true;
  error = "cannot write '" + path + "': " + errnoText(ok ? errno : writeErrno);
  ::unlink(buf.data());
  return false;
}

/// Runs `f` holding the directory's lock (stats and eviction); `wait`
/// false: skips `f` when another process holds it.
template <typename F>
void withLock(const std::string &dir, bool wait, F f) {
  int fd = ::open((dir + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  if (::flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0)
    f();
  ::close(fd); // releases the lock
}

struct FileInfo {
  std::string path;
  int64_t bytes, mtime;
  bool temporary;
};

/// Every entry file (and leftover temporary) under DIR/v2.
std::vector<FileInfo> scan(const std::string &dir) {
  std::vector<FileInfo> files;
  for (const char *level : kLevels) {
    std::string levelDir = dir + "/v2/" + level;
    DIR *d = ::opendir(levelDir.c_str());
    if (!d)
      continue;
    std::vector<std::string> subdirs;
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        subdirs.push_back(levelDir + "/" + e->d_name);
    ::closedir(d);
    for (const std::string &sub : subdirs) {
      DIR *s = ::opendir(sub.c_str());
      if (!s)
        continue;
      while (dirent *e = ::readdir(s)) {
        std::string name = e->d_name;
        if (name == "." || name == "..")
          continue;
        std::string p = sub + "/" + name;
        struct stat st;
        if (::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode))
          files.push_back({p, int64_t(st.st_size), int64_t(st.st_mtime), name[0] == '.'});
      }
      ::closedir(s);
    }
  }
  std::sort(files.begin(), files.end(), [](const FileInfo &a, const FileInfo &b) {
    return a.mtime != b.mtime ? a.mtime < b.mtime : a.path < b.path;
  });
  return files;
}

int64_t trimTo(const std::string &dir, uint64_t maxBytes) {
  std::vector<FileInfo> files = scan(dir);
  int64_t total = 0, removed = 0, now = std::time(nullptr);
  for (const FileInfo &f : files)
    total += f.bytes;
  for (const FileInfo &f : files) {
    // Temporaries of killed builds go after a while; live ones are young.
    bool stale = f.temporary && now - f.mtime > 600;
    if (!stale && (f.temporary || uint64_t(total) <= maxBytes))
      continue;
    if (::unlink(f.path.c_str()) == 0) {
      total -= f.bytes;
      removed += !f.temporary;
    }
  }
  return removed;
}

std::map<std::string, int64_t> readCounters(const std::string &dir) {
  std::map<std::string, int64_t> counters;
  FILE *f = std::fopen((dir + "/stats").c_str(), "r");
  if (!f)
    return counters;
  char name[64];
  long long value;
  while (std::fscanf(f, "%63s %lld", name, &value) == 2)
    counters[name] = value;
  std::fclose(f);
  return counters;
}

void forEachCounter(const LevelCounters &c, const std::function<void(const char *, int64_t)> &f) {
  f("hits", c.hits);
  f("remote_hits", c.remoteHits);
  f("misses", c.misses);
  f("corrupt", c.corrupt);
  f("refused", c.refused);
  f("stores", c.stores);
  f("bytes_read", c.bytesRead);
  f("bytes_written", c.bytesWritten);
}

} // namespace

std::optional<uint64_t> parseSize(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno || end == text.c_str() || value < 0)
    return std::nullopt;
  std::string unit = end;
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b'))
    unit.pop_back();
  if (!unit.empty() && (unit.back() == 'i'))
    unit.pop_back();
  double scale = unit.empty() ? 1 : unit == "K" || unit == "k" ? 1024.0
                                  : unit == "M" || unit == "m" ? 1024.0 * 1024
                                  : unit == "G" || unit == "g" ? 1024.0 * 1024 * 1024
                                  : unit == "T" || unit == "t" ? 1024.0 * 1024 * 1024 * 1024
                                                                : -1;
  if (scale < 0)
    return std::nullopt;
  return uint64_t(value * scale);
}

std::string formatBytes(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(uint64_t(1) << 30));
  else if (bytes >= (uint64_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  else if (bytes >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else
    std::snprintf(buf, sizeof buf, "%llu B", (unsigned long long)bytes);
  return buf;
}

CompileCache::CompileCache(CacheOptions options) : options_(std::move(options)) {
  while (options_.dir.size() > 1 && options_.dir.back() == '/')
    options_.dir.pop_back();
  if (!options_.dir.empty()) {
    std::string error;
    struct stat st;
    if (!makeDirectories(options_.dir, error)) {
      disableLocal(error);
    } else if (::stat(options_.dir.c_str(), &st) != 0) {
      disableLocal("cannot read '" + options_.dir + "': " + errnoText(errno));
    } else if (std::string why = untrusted(st); !why.empty()) {
      disableLocal("'" + options_.dir + "' is " + why + "; its entries could be anyone's code "
                   "(chmod 700 it, or use a directory of your own)");
    } else {
      localUsable_ = true;
    }
  }
  if (!options_.remote.empty()) {
    std::string error;
    if (parseRedisUrl(options_.remote, error))
      remoteUsable_ = true; // connected on first use
    else
      disableRemote(error);
  }
}

CompileCache::~CompileCache() = default;

void CompileCache::disableLocal(const std::string &why) {
  spdlog::warn("compile cache: {}; continuing without the cache directory", why);
  localUsable_ = false;
}

void CompileCache::disableRemote(const std::string &why) {
  spdlog::warn("compile cache: remote cache {}: {}; continuing without it", options_.remote, why);
  remoteUsable_ = false;
  redis_.reset();
}

RedisClient *CompileCache::remote() {
  if (!remoteUsable_)
    return nullptr;
  if (!redis_) {
    std::string error;
    std::optional<RedisEndpoint> endpoint = parseRedisUrl(options_.remote, error);
    redis_ = endpoint ? RedisClient::connect(*endpoint, std::chrono::milliseconds(1000), error) : nullptr;
    if (!redis_) {
      disableRemote(error);
      return nullptr;
    }
    redis_->setMaxValueBytes(kMaxEntryBytes);
  }
  return redis_.get();
}

std::string CompileCache::entryPath(EntryKind kind, const std::string &key) const {
  return options_.dir + "/v2/" + entryKindName(kind) + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<CacheHit> CompileCache::lookup(EntryKind kind, const KeyMaterial &material,
                                             const PayloadCheck &check) {
  LevelCounters &c = counters_[int(kind)];
  std::string key = material.key();
  if (localUsable_)
    if (std::optional<CacheHit> hit = lookupLocal(kind, key, check, c)) {
      ++c.hits;
      c.bytesRead += hit->payload.size();
      return hit;
    }
  if (remoteUsable_)
    if (std::optional<CacheHit> hit = lookupRemote(kind, key, check, c)) {
      ++c.remoteHits;
      c.bytesRead += hit->payload.size();
      if (localUsable_)
        storeLocal(kind, key, hit->owner->getBuffer(), {});
      return hit;
    }
  ++c.misses;
  return std::nullopt;
}

namespace {

/// The entry's payload when `bytes` is the entry asked for and passes
/// `check`; else counts and says why not.
std::optional<llvm::StringRef> acceptEntry(llvm::StringRef bytes, EntryKind kind, const std::string &key,
                                           const PayloadCheck &check, LevelCounters &c,
                                           const std::string &where) {
  DecodedEntry d = decodeEntry(bytes, kind, key);
  if (d.problem == EntryProblem::None && check)
    if (std::string bad = check(d.payload); !bad.empty()) {
      d.problem = EntryProblem::OtherKey;
      d.detail = bad;
    }
  if (d.problem == EntryProblem::None)
    return d.payload;
  ++(d.problem == EntryProblem::Corrupt ? c.corrupt : c.refused);
  spdlog::warn("compile cache: ignoring the {} entry {} ({}); compiling it again",
               d.problem == EntryProblem::Corrupt ? "corrupt" : "mismatched", where, d.detail);
  return std::nullopt;
}

} // namespace

std::optional<CacheHit> CompileCache::lookupLocal(EntryKind kind, const std::string &key,
                                                  const PayloadCheck &check, LevelCounters &c) {
  std::string path = entryPath(kind, key);
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  std::string why = regular ? untrusted(st) : "not a regular file";
  if (!why.empty()) {
    ::close(fd);
    ++c.refused;
    spdlog::warn("compile cache: refusing the entry '{}': it is {}", path, why);
    return std::nullopt;
  }
  // Mapped, not copied: entries are replaced by renames, never rewritten in
  // place, and an evicted one stays readable through this mapping.
  auto buffer = llvm::MemoryBuffer::getOpenFile(fd, path, st.st_size, /*RequiresNullTerminator=*/false);
  if (buffer)
    ::futimens(fd, nullptr); // most recently used
  ::close(fd);
  if (!buffer || uint64_t(st.st_size) > kMaxEntryBytes) {
    ++c.corrupt;
    spdlog::warn("compile cache: cannot read the entry '{}'; compiling instead", path);
    return std::nullopt;
  }
  std::optional<llvm::StringRef> payload =
      acceptEntry((*buffer)->getBuffer(), kind, key, check, c, "'" + path + "'");
  if (!payload)
    return std::nullopt;
  return CacheHit{std::move(*buffer), *payload};
}

std::optional<CacheHit> CompileCache::lookupRemote(EntryKind kind, const std::string &key,
                                                   const PayloadCheck &check, LevelCounters &c) {
  RedisClient *r = remote();
  if (!r)
    return std::nullopt;
  std::optional<std::string> value;
  std::string error;
  // Bounded: a slow server costs at most this once, then is left alone.
  r->setCommandTimeout(std::chrono::milliseconds(5000));
  if (!r->get(std::string("cuvil-cache:2:") + entryKindName(kind) + ":" + key, value, error)) {
    disableRemote(error);
    return std::nullopt;
  }
  if (!value)
    return std::nullopt;
  std::unique_ptr<llvm::MemoryBuffer> owner = llvm::MemoryBuffer::getMemBufferCopy(*value, key);
  std::optional<llvm::StringRef> payload = acceptEntry(owner->getBuffer(), kind, key, check, c,
                                                       key + " from " + options_.remote);
  if (!payload)
    return std::nullopt;
  return CacheHit{std::move(owner), *payload};
}

bool CompileCache::storeLocal(EntryKind kind, const std::string &key, llvm::StringRef header,
                              llvm::StringRef payload) {
  std::string path = entryPath(kind, key), error;
  std::string parent = path.substr(0, path.find_last_of('/'));
  if (!makeDirectories(parent, error) || !publish(path, header, error, payload)) {
    disableLocal(error);
    return false;
  }
  counters_[int(kind)].bytesWritten += header.size() + payload.size();
  return true;
}

void CompileCache::store(EntryKind kind, const KeyMaterial &material, llvm::StringRef payload) {
  if (!enabled())
    return;
  std::string key = material.key();
  std::string header = encodeEntryHeader(kind, material, payload);
  ++counters_[int(kind)].stores;
  if (localUsable_ && storeLocal(kind, key, header, payload))
    evict();
  if (RedisClient *r = remote()) {
    std::string error;
    r->setCommandTimeout(std::chrono::milliseconds(5000 + int64_t(payload.size() >> 25) * 1000));
    if (!r->set(std::string("cuvil-cache:2:") + entryKindName(kind) + ":" + key,
                header + payload.str(), error))
      disableRemote(error);
  }
}

void CompileCache::evict() {
  // Cheap check first: only a directory over its limit takes the lock.
  int64_t total = 0;
  std::vector<FileInfo> files = scan(options_.dir);
  for (const FileInfo &f : files)
    total += f.bytes;
  if (uint64_t(total) <= options_.maxBytes)
    return;
  withLock(options_.dir, /*wait=*/false, [&] {
    int64_t removed = trimTo(options_.dir, options_.maxBytes * 9 / 10);
    spdlog::info("compile cache: removed {} least recently used entries (limit {})", removed,
                 formatBytes(options_.maxBytes));
  });
}

std::optional<KeyMaterial> CompileCache::lastBuild(const std::string &output) const {
  if (!localUsable_)
    return std::nullopt;
  std::string path = options_.dir + "/builds/" + digest(output);
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st;
  std::string text;
  bool ok = ::fstat(fd, &st) == 0 && untrusted(st).empty() && st.st_size < (1 << 20) &&
            readAll(fd, text, st.st_size);
  ::close(fd);
  if (!ok)
    return std::nullopt;
  return KeyMaterial::parse(text);
}

void CompileCache::recordBuild(const std::string &output, const KeyMaterial &material) {
  if (!localUsable_)
    return;
  std::string dir = options_.dir + "/builds", error;
  if (!makeDirectories(dir, error) || !publish(dir + "/" + digest(output), material.text(), error))
    disableLocal(error);
}

void CompileCache::countUpToDate(EntryKind kind) { ++counters_[int(kind)].hits; }

void CompileCache::flushStats() {
  if (!localUsable_ || flushed_)
    return;
  flushed_ = true;
  bool any = false;
  for (const LevelCounters &c : counters_)
    forEachCounter(c, [&](const char *, int64_t v) { any |= v != 0; });
  if (!any)
    return;
  withLock(options_.dir, /*wait=*/true, [&] {
    std::map<std::string, int64_t> counters = readCounters(options_.dir);
    for (int level = 0; level < kEntryKinds; ++level)
      forEachCounter(counters_[level], [&](const char *name, int64_t v) {
        counters[std::string(kLevels[level]) + "." + name] += v;
      });
    std::string text, error;
    for (const auto &[name, value] : counters)
      text += name + " " + std::to_string(value) + "\n";
    if (!publish(options_.dir + "/stats", text, error))
      spdlog::warn("compile cache: {}", error);
  });
}

DirectoryStats directoryStats(const std::string &dir) {
  DirectoryStats s;
  s.counters = readCounters(dir);
  for (const FileInfo &f : scan(dir)) {
    if (f.temporary)
      continue;
    int level = 0;
    for (int k = 0; k < kEntryKinds; ++k)
      if (f.path.find(std::string("/v2/") + kLevels[k] + "/") != std::string::npos)
        level = k;
    ++s.entries[level];
    s.bytes[level] += f.bytes;
  }
  return s;
}

std::vector<EntryInfo> listEntries(const std::string &dir) {
  std::vector<EntryInfo> out;
  for (const FileInfo &f : scan(dir)) {
    if (f.temporary)
      continue;
    EntryInfo e;
    e.path = f.path;
    e.bytes = f.bytes;
    e.mtime = f.mtime;
    int fd = ::open(f.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      std::string head;
      head.resize(64 * 1024);
      ssize_t n = ::pread(fd, head.data(), head.size(), 0);
      ::close(fd);
      head.resize(n > 0 ? n : 0);
      if (auto peeked = peekEntry(head, &e.key)) {
        e.kind = peeked->first;
        e.material = std::move(peeked->second);
      }
    }
    if (e.kind.empty())
      e.kind = "corrupt";
    out.push_back(std::move(e));
  }
  return out;
}

int64_t trimDirectory(const std::string &dir, uint64_t maxBytes) {
  int64_t removed = 0;
  withLock(dir, /*wait=*/true, [&] { removed = trimTo(dir, maxBytes); });
  return removed;
}

int64_t clearDirectory(const std::string &dir) {
  int64_t removed = 0;
  withLock(dir, /*wait=*/true, [&] {
    removed = trimTo(dir, 0);
    ::unlink((dir + "/stats").c_str());
    DIR *d = ::opendir((dir + "/builds").c_str());
    if (d) {
      while (dirent *e = ::readdir(d))
        if (e->d_name[0] != '.')
          ::unlink((dir + "/builds/" + e->d_name).c_str());
      ::closedir(d);
    }
  });
  return removed;
}

} // namespace cuvil::cache
