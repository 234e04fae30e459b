//===- CompileCache.h - cuvil-export's compile cache ------------*- C++ -*-===//
//
// `--cache-dir DIR` (or CUVIL_CACHE_DIR): an export whose inputs were seen
// before is copied from DIR instead of compiled. The key hashes everything
// that changes the output: the model file's bytes, target, resolved CPU and
// features, emit kind, strategy, disabled optimizations, input shapes, the
// model name, the compiler's version and the identity (size, mtime) of the
// cuvil-export executable and the runtime archive it links. Entries are
// written atomically (safe under `make -j`); each carries the SHA-256 of its
// bytes, and one whose bytes do not match is a miss. The cache never makes
// an export fail: problems with DIR are warnings.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_COMPILECACHE_H
#define CUVIL_DRIVER_COMPILECACHE_H

#include <optional>
#include <string>
#include <vector>

namespace mlir::cuvil {

class CompileCache {
public:
  /// `dir` empty: disabled.
  explicit CompileCache(std::string dir) : dir_(std::move(dir)) {}
  bool enabled() const { return !dir_.empty(); }

  /// The key of one export, from `parts` (already-resolved option values)
  /// and the contents of `modelPath` and identities of `files`. Nothing when
  /// the model cannot be read (the export then reports that itself).
  static std::optional<std::string> key(const std::string &modelPath,
                                        const std::vector<std::string> &parts,
                                        const std::vector<std::string> &files);

  /// The entry's bytes when present and intact.
  std::optional<std::string> lookup(const std::string &key) const;
  /// Stores `bytes` under `key` (a warning on failure).
  void store(const std::string &key, const std::string &bytes) const;

private:
  std::string entryPath(const std::string &key) const;
  std::string dir_;
};

} // namespace mlir::cuvil

#endif // CUVIL_DRIVER_COMPILECACHE_H
