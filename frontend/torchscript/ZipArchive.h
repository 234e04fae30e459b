//===- ZipArchive.h - A strict reader of zip containers ---------*- C++ -*-===//
//
// TorchScript archives are zip files. This reader treats the file as
// untrusted (RELIABILITY.md §2 A): every size, offset and count is checked
// against the real file size before use, the central directory is the only
// source of truth and each local header must agree with it, entry names are
// validated and must be unique, and decompression is bounded by the declared
// size and checked with CRC-32. Entry data is read with pread, never mapped,
// so a file truncated while it is read gives an error, not SIGBUS.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_TORCHSCRIPT_ZIPARCHIVE_H
#define CUVIL_FRONTEND_TORCHSCRIPT_ZIPARCHIVE_H

#include "support/Status.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cuvil::torchscript {

/// Limits that bound the work an archive can cause.
struct ZipLimits {
  uint64_t maxEntries = 1 << 20;
  uint64_t maxEntrySize = uint64_t(1) << 36;   ///< 64 GiB uncompressed
  uint64_t maxTotalSize = uint64_t(1) << 38;   ///< 256 GiB uncompressed
  uint64_t maxCompressionRatio = 1000;          ///< zip bombs
  size_t maxNameLength = 4096;
};

struct ZipEntry {
  std::string name;
  uint16_t method = 0; ///< 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressedSize = 0;
  uint64_t uncompressedSize = 0;
  uint64_t localHeaderOffset = 0;
  uint64_t dataOffset = 0; ///< resolved from the local header
};

/// An open zip archive. Errors name the file and, where one exists, the
/// entry, with a stable code such as CUVIL-E-ZIP-TRUNCATED.
class ZipArchive {
public:
  ~ZipArchive();
  ZipArchive(ZipArchive &&) noexcept;
  ZipArchive &operator=(ZipArchive &&) noexcept;

  static Result<ZipArchive> open(const std::string &path,
                                 const ZipLimits &limits = {});

  const std::string &path() const { return path_; }
  uint64_t fileSize() const { return fileSize_; }
  const std::vector<ZipEntry> &entries() const { return entries_; }
  /// The entry called `name`, or null.
  const ZipEntry *find(const std::string &name) const;

  /// Reads (and if needed inflates) an entry, checking its CRC-32.
  Result<std::string> read(const ZipEntry &entry) const;
  /// Reads a stored entry into `dest` (which must hold uncompressedSize
  /// bytes), checking its CRC-32; inflates deflated entries.
  Status readInto(const ZipEntry &entry, char *dest) const;

private:
  ZipArchive() = default;
  Status parse(const ZipLimits &limits);
  Status preadExact(uint64_t offset, void *buf, size_t n,
                    const std::string &what) const;
  Error error(const std::string &code, const std::string &msg) const;

  std::string path_;
  int fd_ = -1;
  uint64_t fileSize_ = 0;
  std::vector<ZipEntry> entries_;
  std::map<std::string, size_t> byName_;
};

} // namespace cuvil::torchscript

#endif // CUVIL_FRONTEND_TORCHSCRIPT_ZIPARCHIVE_H
