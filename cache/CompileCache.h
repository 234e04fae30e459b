//===- CompileCache.h - Cuvil's compile cache: a directory and a server -*- C++ -*-===//
//
// Two levels of entries (Entry.h): whole outputs (`lib`: a library or
// another --emit stage, keyed by the model file's bytes and every option)
// and code objects (`code`: keyed by the code they were compiled from, with
// the weights left out), so that a redeploy with new weights relinks cached
// code. Entries live in a local directory and, optionally, on a Redis server
// shared by a build farm (RedisClient.h); a local miss asks the server, and
// what the server gives is checked as strictly as a local entry.
//
// Rules (RELIABILITY.md §2 G): the directory is created 0700, and one writable
// by group or others, or an entry not owned by the user or writable by
// others, is refused; entries are written to unique temporary files and
// renamed (no fsync: a torn entry fails its digest and is a miss that the
// next build replaces); a hit refreshes the entry's time, and the least
// recently used entries go once the directory is over its size limit; any
// trouble with the directory or the server is one warning and the build goes
// on uncached. Never an error.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CACHE_COMPILECACHE_H
#define CUVIL_CACHE_COMPILECACHE_H

#include "cache/Entry.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace cuvil::cache {

class RedisClient;

struct CacheOptions {
  std::string dir;    ///< "" = no local cache
  std::string remote; ///< "" or redis://HOST:PORT
  uint64_t maxBytes = uint64_t(5) << 30;
};

/// "5G", "512M", "100K", "1000" (bytes); nothing when malformed.
std::optional<uint64_t> parseSize(const std::string &text);
std::string formatBytes(uint64_t bytes);

/// Counters of one level.
struct LevelCounters {
  int64_t hits = 0, remoteHits = 0, misses = 0, corrupt = 0, refused = 0, stores = 0;
  int64_t bytesRead = 0, bytesWritten = 0;
};

/// An entry found: its payload, inside `owner` (the entry mapped, or the
/// server's reply).
struct CacheHit {
  std::unique_ptr<llvm::MemoryBuffer> owner;
  llvm::StringRef payload;
};

/// Checks a payload before it is used: "" when it is what the entry claims
/// to be, else why not.
using PayloadCheck = std::function<std::string(llvm::StringRef payload)>;

class CompileCache {
public:
  explicit CompileCache(CacheOptions options);
  ~CompileCache();
  CompileCache(const CompileCache &) = delete;
  CompileCache &operator=(const CompileCache &) = delete;

  bool enabled() const { return localUsable_ || remoteUsable_; }

  /// The verified payload of the entry of `material`, or nothing (a miss).
  std::optional<CacheHit> lookup(EntryKind kind, const KeyMaterial &material,
                                const PayloadCheck &check = {});
  /// Stores an entry (locally and on the server); failures are a warning.
  void store(EntryKind kind, const KeyMaterial &material, llvm::StringRef payload);

  /// What the last build of `output` was made of (--cache-explain), and
  /// recording this one.
  std::optional<KeyMaterial> lastBuild(const std::string &output) const;
  void recordBuild(const std::string &output, const KeyMaterial &material);
  /// Counts a whole-output hit served without reading the entry (the output
  /// in place is already the one the last build of it wrote).
  void countUpToDate(EntryKind kind);

  const LevelCounters &counters(EntryKind kind) const { return counters_[int(kind)]; }
  /// Adds this process's counters to the directory's (cuvil-cache stats),
  /// once.
  void flushStats();

private:
  std::optional<CacheHit> lookupLocal(EntryKind kind, const std::string &key,
                                      const PayloadCheck &check, LevelCounters &c);
  std::optional<CacheHit> lookupRemote(EntryKind kind, const std::string &key,
                                       const PayloadCheck &check, LevelCounters &c);
  bool storeLocal(EntryKind kind, const std::string &key, llvm::StringRef header,
                  llvm::StringRef payload);
  void evict();
  void disableLocal(const std::string &why);
  void disableRemote(const std::string &why);
  RedisClient *remote();
  std::string entryPath(EntryKind kind, const std::string &key) const;

  CacheOptions options_;
  bool localUsable_ = false, remoteUsable_ = false, flushed_ = false;
  std::unique_ptr<RedisClient> redis_;
  LevelCounters counters_[kEntryKinds];
};

// Management (cuvil-cache).

struct DirectoryStats {
  std::map<std::string, int64_t> counters; ///< "lib.hits", ... accumulated
  int64_t entries[kEntryKinds] = {}, bytes[kEntryKinds] = {};
};
/// The directory's entries and accumulated counters.
DirectoryStats directoryStats(const std::string &dir);
struct EntryInfo {
  std::string path, kind, key;
  int64_t bytes = 0;
  int64_t mtime = 0; ///< seconds since the epoch
  KeyMaterial material;
};
std::vector<EntryInfo> listEntries(const std::string &dir);
/// Removes least recently used entries until at most `maxBytes` remain;
/// the number removed.
int64_t trimDirectory(const std::string &dir, uint64_t maxBytes);
/// Removes every entry, record and counter (the directory stays).
int64_t clearDirectory(const std::string &dir);

} // namespace cuvil::cache

#endif // CUVIL_CACHE_COMPILECACHE_H
