//===- AtomicFile.cpp - Complete-or-absent output files -------------------===//
#include "support/AtomicFile.h"

#include "support/Staging.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cuvil {
namespace {

std::string errnoText(int err) { return std::strerror(err); }

} // namespace

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Status checkOutputPath(const std::string &given) {
  if (given.empty())
    return usageError("output path is empty");
  // Through symbolic links: the file a link names is what gets written.
  Result<std::string> resolved = resolveOutputPath(given);
  if (!resolved)
    return resolved.error();
  const std::string &path = *resolved;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return ioError("cannot write '" + path + "': it is a directory");
  std::string dir = parentDirectory(path);
  if (::stat(dir.c_str(), &st) != 0)
    return ioError("cannot write '" + path + "': directory '" + dir +
                   "' does not exist");
  if (!S_ISDIR(st.st_mode))
    return ioError("cannot write '" + path + "': '" + dir +
                   "' is not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return ioError("cannot write '" + path + "': directory '" + dir +
                   "' is not writable (" + errnoText(errno) + ")");
  return Status::ok();
}

Status prepareOutputDir(const std::string &dir) {
  if (dir.empty())
    return usageError("output directory is empty");
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      return ioError("output directory '" + dir + "' exists and is not a directory");
  } else {
    // Create missing components one at a time (mkdir -p).
    std::string partial;
    size_t pos = 0;
    while (pos != std::string::npos) {
      pos = dir.find('/', pos + 1);
      partial = dir.substr(0, pos);
      if (partial.empty() || ::stat(partial.c_str(), &st) == 0)
        continue;
      if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
        return ioError("cannot create output directory '" + partial +
                       "': " + errnoText(errno));
    }
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return ioError("output directory '" + dir + "' is not writable (" +
                   errnoText(errno) + ")");
  return Status::ok();
}

Status writeFileAtomically(const std::string &path, std::string_view bytes) {
  if (Status s = checkOutputPath(path); !s)
    return s;
  OutputSet out;
  if (Status s = out.add(path, bytes); !s)
    return s;
  return out.commit();
}

Result<AtomicOutput> AtomicOutput::create(const std::string &given) {
  if (Status s = checkOutputPath(given); !s)
    return s.error();
  Result<std::string> path = resolveOutputPath(given);
  if (!path)
    return path.error();
  Result<std::string> tmp = stagingPathFor(*path);
  if (!tmp)
    return tmp.error();
  int fd = ::open(tmp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return ioError("cannot write '" + given + "': " + errnoText(errno));
  AtomicOutput out;
  out.path_ = *path;
  out.tmp_ = *tmp;
  out.fd_ = fd;
  return out;
}

AtomicOutput::AtomicOutput(AtomicOutput &&o) noexcept
    : path_(std::move(o.path_)), tmp_(std::move(o.tmp_)), fd_(o.fd_),
      committed_(o.committed_) {
  o.fd_ = -1;
  o.tmp_.clear();
}

AtomicOutput::~AtomicOutput() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!committed_ && !tmp_.empty()) {
    ::unlink(tmp_.c_str());
    releaseStaged(tmp_);
  }
}

Status AtomicOutput::commit() {
  if (::fsync(fd_) != 0)
    return ioError("cannot flush '" + path_ + "': " + errnoText(errno));
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0)
    return ioError("cannot close '" + path_ + "': " + errnoText(errno));
  if (::rename(tmp_.c_str(), path_.c_str()) != 0)
    return ioError("cannot rename temporary file to '" + path_ + "': " + errnoText(errno));
  committed_ = true;
  releaseStaged(tmp_);
  int dfd = ::open(parentDirectory(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

Result<std::string> readFile(const std::string &path, uint64_t maxBytes) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return ioError("cannot open '" + path + "': " + errnoText(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return ioError("cannot stat '" + path + "': " + errnoText(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return ioError("cannot read '" + path + "': it is a directory");
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    ::close(fd);
    return inputError("'" + path + "' is too large (" +
                      std::to_string(st.st_size) + " bytes, limit " +
                      std::to_string(maxBytes) + ")");
  }
  std::string out;
  out.resize(static_cast<size_t>(st.st_size));
  size_t got = 0;
  // Read until EOF; the file may shrink (or grow) while we read.
  while (true) {
    if (got == out.size()) {
      if (out.size() >= maxBytes)
        break;
      out.resize(out.size() + 4096);
    }
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      ::close(fd);
      return ioError("cannot read '" + path + "': " + errnoText(err));
    }
    if (n == 0)
      break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

} // namespace cuvil
