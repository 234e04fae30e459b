//===- AtomicFile.h - Complete-or-absent output files ----------*- C++ -*-===//
//
// Every Cuvil output is written to a unique temporary file in the target's
// directory, flushed, fsync'ed and renamed into place, so the final path holds
// either the old file or the complete new one — never a partial file, even if
// the process is killed (RELIABILITY.md H1, H3).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_ATOMICFILE_H
#define CUVIL_SUPPORT_ATOMICFILE_H

#include "support/Status.h"

#include <string>
#include <string_view>

namespace cuvil {

/// Checks before long work starts that `path` can be written: its directory
/// exists and is writable, and `path` is not a directory (RELIABILITY.md H4).
Status checkOutputPath(const std::string &path);

/// Checks that `dir` exists (creating it, and its parents, if needed) and is a
/// writable directory.
Status prepareOutputDir(const std::string &dir);

/// Writes `bytes` to `path` atomically (temp file + fsync + rename).
Status writeFileAtomically(const std::string &path, std::string_view bytes);

/// A file written through a file descriptor and published atomically:
/// created as a unique temporary next to `path`, renamed into place by
/// commit(); destroyed without commit, it leaves no trace. Lets large
/// outputs stream to disk instead of being built in memory first.
class AtomicOutput {
public:
  static Result<AtomicOutput> create(const std::string &path);
  AtomicOutput(AtomicOutput &&other) noexcept;
  AtomicOutput &operator=(AtomicOutput &&) = delete;
  ~AtomicOutput();

  int fd() const { return fd_; }
  /// Flushes, closes and renames the temporary file to the final path.
  Status commit();

private:
  AtomicOutput() = default;
  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Reads a whole file into memory, with a size cap. I/O failures map to
/// kExitIOError, an over-size file to kExitInputError.
Result<std::string> readFile(const std::string &path,
                             uint64_t maxBytes = uint64_t(1) << 34);

/// True when the two paths name the same existing file (same inode).
bool sameFile(const std::string &a, const std::string &b);

} // namespace cuvil

#endif // CUVIL_SUPPORT_ATOMICFILE_H
