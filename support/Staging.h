//===- Staging.h - Outputs staged next to their place, published together -*- C++ -*-===//
//
// Every file a Cuvil tool writes is first written into this run's staging
// directory next to its final path (`.cuvil-staging.PID.XXXXXX/`, same file
// system, so a rename publishes it atomically) and renamed into place only
// when complete (RELIABILITY.md H1-H3):
//   - a failed or interrupted run leaves the old outputs as they were;
//   - the outputs of one run (a library, its header, its depfile) are
//     published together, after all of them were written (OutputSet);
//   - the staging directories are removed at exit, on SIGINT, SIGTERM,
//     SIGHUP and SIGQUIT, and by the crash and out-of-memory handlers; one
//     left by a run killed with SIGKILL is removed by the next run that
//     stages into the same directory (its lock file, flock'ed by its live
//     owner, says whether the owner is gone).
// Output paths that are symbolic links are written through: the file the
// link names is replaced, the link kept (resolveOutputPath).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_SUPPORT_STAGING_H
#define CUVIL_SUPPORT_STAGING_H

#include "support/Status.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cuvil {

/// The directory part of `path` ("." for a bare name, "/" at the root).
std::string parentDirectory(const std::string &path);

/// The file `path` names once its symbolic links are followed (a link's
/// relative target is taken from the link's directory); `path` itself when
/// it is no link. A link into a directory that does not exist is an error.
Result<std::string> resolveOutputPath(const std::string &path);

/// A new, unique path for a temporary of `finalPath` (a resolved output
/// path) in this run's staging directory next to it; `suffix` ends the name.
/// Nothing is created at the path itself.
Result<std::string> stagingPathFor(const std::string &finalPath, const std::string &suffix = "");

/// To be called once a file at a stagingPathFor path is renamed away or
/// removed: the staging directory goes when nothing else is staged in it,
/// so a long-running process leaves none behind between outputs.
void releaseStaged(const std::string &staged);

/// Removes this process's staging directories and what they hold.
/// Async-signal-safe: the signal, crash and out-of-memory handlers call it.
void removeStagingDirectories() noexcept;

/// Removes `path` (a file, or a directory with what it holds, directories
/// `depth` levels down included; links are not followed). Async-signal-safe.
void removeTree(const char *path, int depth) noexcept;

/// Registers `fn` (async-signal-safe; at most 4) to run with the staging
/// cleanup: at SIGINT/SIGTERM/SIGHUP/SIGQUIT (before the signal takes its
/// course), in the crash and out-of-memory handlers, and at exit. For what
/// a tool makes outside the staging area (a work directory, a child
/// process).
void addInterruptCleanup(void (*fn)() noexcept);

/// Removes the staging directories that runs killed earlier left in `dir`
/// (done by stagingPathFor for each directory it first stages into).
void removeStaleStaging(const std::string &dir);

/// Files published together: each one written completely into the staging
/// area first (every write, fsync and close checked), then all renamed into
/// place by commit(). What is not committed is removed.
class OutputSet {
public:
  OutputSet() = default;
  OutputSet(const OutputSet &) = delete;
  OutputSet &operator=(const OutputSet &) = delete;
  ~OutputSet();

  /// Stages `bytes` as the next content of `path`, created with `mode`
  /// less the umask.
  Status add(const std::string &path, std::string_view bytes, unsigned mode = 0666);
  /// Takes over `staged`, a file already written at a stagingPathFor path,
  /// as the next content of `path` (mode and content as they are).
  Status adopt(const std::string &path, const std::string &staged);
  /// Publishes every staged file, in the order added. Two outputs that are
  /// the same file are refused by add/adopt, before anything is written.
  Status commit();
  bool empty() const { return staged_.empty(); }

private:
  struct Staged {
    std::string finalPath, staged;
  };
  Status claim(const std::string &path, std::string &resolved);
  std::vector<Staged> staged_;
};

} // namespace cuvil

#endif // CUVIL_SUPPORT_STAGING_H
