//===- AtomicFile.cpp - Complete-or-absent output files -------------------===//
#include "support/AtomicFile.h"

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

std::string parentDir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

Status writeAll(int fd, std::string_view bytes, const std::string &what) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return ioError("cannot write '" + what + "': " + errnoText(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::ok();
}

} // namespace

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

Status checkOutputPath(const std::string &path) {
  if (path.empty())
    return usageError("output path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return ioError("cannot write '" + path + "': it is a directory");
  std::string dir = parentDir(path);
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
  std::string dir = parentDir(path);
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = dir + "/." + base + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0)
    return ioError("cannot create a temporary file next to '" + path +
                   "': " + errnoText(errno));
  std::string tmp(buf.data());
  auto fail = [&](Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  if (Status s = writeAll(fd, bytes, path); !s)
    return fail(s);
  if (::fsync(fd) != 0)
    return fail(ioError("cannot flush '" + path + "': " + errnoText(errno)));
  // mkstemp creates 0600; outputs get the usual 0666 & ~umask.
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ioError("cannot close '" + path + "': " + errnoText(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ioError("cannot rename temporary file to '" + path +
                   "': " + errnoText(err));
  }
  // Make the rename durable; failure here does not invalidate the file.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

Result<AtomicOutput> AtomicOutput::create(const std::string &path) {
  if (Status s = checkOutputPath(path); !s)
    return s.error();
  size_t slash = path.find_last_of('/');
  std::string dir = parentDir(path);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = dir + "/." + base + ".tmp.XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkstemp(buf.data());
  if (fd < 0)
    return ioError("cannot create a temporary file next to '" + path + "': " + errnoText(errno));
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  AtomicOutput out;
  out.path_ = path;
  out.tmp_ = buf.data();
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
  if (!committed_ && !tmp_.empty())
    ::unlink(tmp_.c_str());
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
  int dfd = ::open(parentDir(path_).c_str(), O_RDONLY | O_DIRECTORY);
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
