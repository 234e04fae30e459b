//===- Staging.cpp - Outputs staged next to their place, published together ===//
#include "support/Staging.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace cuvil {
namespace {

constexpr const char kStagingPrefix[] = ".cuvil-staging.";
constexpr const char kLockName[] = "lock";

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// One staging directory of this run. Fixed storage: the signal handlers
/// read it; a slot is reused once its directory is gone.
struct StagingDir {
  std::atomic<bool> live{false};
  char path[4096];
  int dirFd;
  int lockFd;
};

constexpr int kMaxDirs = 64;
StagingDir gDirs[kMaxDirs];
std::atomic<pid_t> gOwner{0};
/// addInterruptCleanup's functions, and the process that registered them.
using CleanupFn = void (*)() noexcept;
std::atomic<CleanupFn> gCleanups[4];
std::atomic<pid_t> gCleanupOwner{0};
std::string gParents[kMaxDirs]; // the directory each one is in (guarded by gMutex)
std::mutex gMutex;
std::atomic<uint64_t> gCounter{0};

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction gPrevious[sizeof kSignals / sizeof kSignals[0]];

/// Unlinks every entry of the directory open as `fd`, directories `depth`
/// levels down too, then the directory at `path`. Async-signal-safe.
void removeOpenTree(int fd, const char *path, int depth) noexcept {
  struct Dirent64 {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  alignas(8) char buf[4096];
  ::lseek(fd, 0, SEEK_SET);
  for (;;) {
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0)
      break;
    for (long off = 0; off < n;) {
      auto *e = reinterpret_cast<Dirent64 *>(buf + off);
      off += e->reclen;
      if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0)
        continue;
      if (e->type == DT_DIR && depth > 0) {
        char sub[4096];
        size_t a = std::strlen(path), b = std::strlen(e->name);
        if (a + b + 2 > sizeof sub)
          continue;
        std::memcpy(sub, path, a);
        sub[a] = '/';
        std::memcpy(sub + a + 1, e->name, b + 1);
        removeTree(sub, depth - 1);
      } else {
        ::unlinkat(fd, e->name, 0);
      }
    }
  }
  ::rmdir(path);
}

/// One level: staging directories hold files only.
void removeDirectory(int fd, const char *path) noexcept { removeOpenTree(fd, path, 0); }

void onSignal(int sig) {
  removeStagingDirectories();
  // Then whatever handled the signal before (LLVM's removal of its own
  // temporaries, or the default: death by the signal, exit 128+N).
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
    if (kSignals[i] == sig)
      ::sigaction(sig, &gPrevious[i], nullptr);
  ::raise(sig);
}

/// Puts onSignal in front of whatever handles the signals now (LLVM's, a
/// test framework's), again whenever something replaced it since.
void installHandlers() {
  static bool atExit = false;
  if (!atExit) {
    atExit = true;
    std::atexit([] { removeStagingDirectories(); });
  }
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    struct sigaction current;
    if (::sigaction(kSignals[i], nullptr, &current) != 0)
      continue;
    if (current.sa_handler == SIG_IGN || current.sa_handler == onSignal) // nohup: stays ignored
      continue;
    struct sigaction now;
    std::memset(&now, 0, sizeof now);
    now.sa_handler = onSignal;
    sigemptyset(&now.sa_mask);
    ::sigaction(kSignals[i], &now, &gPrevious[i]);
  }
}

/// This run's staging directory in `dir`, created on first use.
Result<std::string> stagingDirIn(const std::string &dir, const std::string &forPath) {
  std::lock_guard<std::mutex> lock(gMutex);
  int free = -1;
  for (int i = 0; i < kMaxDirs; ++i) {
    if (gDirs[i].live.load() && gParents[i] == dir)
      return std::string(gDirs[i].path);
    if (!gDirs[i].live.load() && free < 0)
      free = i;
  }
  if (free < 0)
    return ioError("cannot write '" + forPath + "': outputs in more than " + std::to_string(kMaxDirs) +
                   " directories at once");
  removeStaleStaging(dir);
  std::string tmpl = dir + "/" + kStagingPrefix + std::to_string(::getpid()) + ".XXXXXX";
  if (tmpl.size() >= sizeof(gDirs[0].path))
    return ioError("cannot write '" + forPath + "': its directory's path is too long");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    return ioError("cannot write '" + forPath + "': cannot create a staging directory in '" + dir +
                   "': " + std::strerror(errno));
  std::string path(buf.data());
  int dirFd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int lockFd = dirFd < 0 ? -1 : ::openat(dirFd, kLockName, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lockFd < 0 || ::flock(lockFd, LOCK_EX) != 0) {
    int err = errno;
    if (lockFd >= 0)
      ::close(lockFd);
    if (dirFd >= 0) {
      removeDirectory(dirFd, path.c_str());
      ::close(dirFd);
    }
    return ioError("cannot write '" + forPath + "': cannot lock the staging directory '" + path +
                   "': " + std::strerror(err));
  }
  StagingDir &d = gDirs[free];
  std::memcpy(d.path, path.c_str(), path.size() + 1);
  d.dirFd = dirFd;
  d.lockFd = lockFd;
  gParents[free] = dir;
  gOwner.store(::getpid());
  d.live.store(true);
  installHandlers();
  return path;
}

bool isOurStagingDir(const std::string &dir) {
  std::lock_guard<std::mutex> lock(gMutex);
  for (int i = 0; i < kMaxDirs; ++i)
    if (gDirs[i].live.load() && dir == gDirs[i].path)
      return true;
  return false;
}

Status writeAll(int fd, std::string_view bytes, const std::string &what) {
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return ioError("cannot write '" + what + "': " + std::strerror(errno));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return Status::ok();
}

} // namespace

std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

Result<std::string> resolveOutputPath(const std::string &path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      break;
    std::vector<char> target(size_t(st.st_size > 0 ? st.st_size : 4096) + 1);
    ssize_t n = ::readlink(p.c_str(), target.data(), target.size() - 1);
    if (n < 0)
      return ioError("cannot write '" + path + "': cannot read the symbolic link '" + p + "': " +
                     std::strerror(errno));
    std::string to(target.data(), size_t(n));
    p = !to.empty() && to[0] == '/' ? to : parentDirectory(p) + "/" + to;
    if (hops == 39)
      return ioError("cannot write '" + path + "': too many levels of symbolic links");
  }
  if (p != path) {
    struct stat st;
    std::string dir = parentDirectory(p);
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return ioError("cannot write '" + path + "': it is a symbolic link to '" + p +
                     "', whose directory '" + dir + "' does not exist");
  }
  return p;
}

Result<std::string> stagingPathFor(const std::string &finalPath, const std::string &suffix) {
  std::string dir = parentDirectory(finalPath);
  std::string staging;
  if (isOurStagingDir(dir)) {
    staging = dir; // a temporary of a staged file
  } else {
    Result<std::string> d = stagingDirIn(dir, finalPath);
    if (!d)
      return d.error();
    staging = *d;
  }
  return staging + "/" + std::to_string(gCounter.fetch_add(1)) + "." + baseName(finalPath) + suffix;
}

/// Removes the staging directory holding `staged` once it holds nothing but
/// its lock: a long-running process leaves none behind between outputs.
void releaseStaged(const std::string &staged) {
  std::string dir = parentDirectory(staged);
  std::lock_guard<std::mutex> lock(gMutex);
  for (int i = 0; i < kMaxDirs; ++i) {
    StagingDir &d = gDirs[i];
    if (!d.live.load() || dir != d.path)
      continue;
    DIR *listing = ::opendir(d.path);
    if (!listing)
      return;
    bool empty = true;
    while (struct dirent *e = ::readdir(listing))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..") && std::strcmp(e->d_name, kLockName))
        empty = false;
    ::closedir(listing);
    if (!empty)
      return;
    d.live.store(false);
    removeDirectory(d.dirFd, d.path);
    ::close(d.dirFd);
    ::close(d.lockFd);
    return;
  }
}

void removeTree(const char *path, int depth) noexcept {
  int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    ::unlink(path);
    return;
  }
  removeOpenTree(fd, path, depth);
  ::close(fd);
}

void addInterruptCleanup(void (*fn)() noexcept) {
  std::lock_guard<std::mutex> lock(gMutex);
  gCleanupOwner.store(::getpid());
  for (std::atomic<CleanupFn> &slot : gCleanups) {
    CleanupFn expected = nullptr;
    if (slot.compare_exchange_strong(expected, fn))
      break;
  }
  installHandlers();
}

void removeStagingDirectories() noexcept {
  // Each cleanup once; not in a child that inherited them.
  if (gCleanupOwner.load() == ::getpid())
    for (std::atomic<CleanupFn> &slot : gCleanups)
      if (CleanupFn fn = slot.exchange(nullptr))
        fn();
  // Not in a child that inherited the registry (fork without exec).
  if (gOwner.load() != ::getpid())
    return;
  for (StagingDir &d : gDirs) {
    if (!d.live.exchange(false))
      continue;
    removeDirectory(d.dirFd, d.path);
    ::close(d.dirFd);
    ::close(d.lockFd);
  }
}

void removeStaleStaging(const std::string &dir) {
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return;
  std::vector<std::string> stale;
  while (struct dirent *e = ::readdir(d)) {
    if (std::strncmp(e->d_name, kStagingPrefix, sizeof kStagingPrefix - 1) != 0)
      continue;
    std::string path = dir + "/" + e->d_name;
    int dirFd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dirFd < 0)
      continue;
    struct stat st;
    // Only our user's: never remove another user's files.
    if (::fstat(dirFd, &st) != 0 || st.st_uid != ::geteuid()) {
      ::close(dirFd);
      continue;
    }
    int lockFd = ::openat(dirFd, kLockName, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    bool dead;
    if (lockFd >= 0) {
      // A live owner holds the lock for as long as it runs.
      dead = ::flock(lockFd, LOCK_EX | LOCK_NB) == 0;
    } else {
      // Killed between creating the directory and its lock: give a
      // starting run a minute.
      dead = errno == ENOENT && std::time(nullptr) - st.st_mtime > 60;
    }
    if (dead)
      removeDirectory(dirFd, path.c_str());
    if (lockFd >= 0)
      ::close(lockFd);
    ::close(dirFd);
  }
  ::closedir(d);
}

OutputSet::~OutputSet() {
  for (const Staged &s : staged_) {
    ::unlink(s.staged.c_str());
    releaseStaged(s.staged);
  }
}

Status OutputSet::claim(const std::string &path, std::string &resolved) {
  Result<std::string> r = resolveOutputPath(path);
  if (!r)
    return r.error();
  resolved = *r;
  for (const Staged &s : staged_) {
    struct stat a, b;
    bool same = s.finalPath == resolved ||
                (::stat(s.finalPath.c_str(), &a) == 0 && ::stat(resolved.c_str(), &b) == 0 &&
                 a.st_dev == b.st_dev && a.st_ino == b.st_ino);
    if (same)
      return usageError("'" + path + "' is given as two outputs of one run");
  }
  return Status::ok();
}

Status OutputSet::add(const std::string &path, std::string_view bytes, unsigned mode) {
  std::string resolved;
  if (Status s = claim(path, resolved); !s)
    return s;
  Result<std::string> staged = stagingPathFor(resolved);
  if (!staged)
    return staged.error();
  int fd = ::open(staged->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0)
    return ioError("cannot write '" + path + "': " + std::strerror(errno));
  staged_.push_back({resolved, *staged});
  Status s = writeAll(fd, bytes, path);
  if (s && ::fsync(fd) != 0)
    s = ioError("cannot write '" + path + "': " + std::strerror(errno));
  if (::close(fd) != 0 && s)
    s = ioError("cannot write '" + path + "': " + std::strerror(errno));
  return s;
}

Status OutputSet::adopt(const std::string &path, const std::string &staged) {
  std::string resolved;
  if (Status s = claim(path, resolved); !s) {
    ::unlink(staged.c_str());
    releaseStaged(staged);
    return s;
  }
  staged_.push_back({resolved, staged});
  return Status::ok();
}

Status OutputSet::commit() {
  std::vector<std::string> dirs;
  for (size_t i = 0; i < staged_.size(); ++i) {
    const Staged &s = staged_[i];
    if (::rename(s.staged.c_str(), s.finalPath.c_str()) != 0) {
      int err = errno;
      for (size_t j = 0; j < i; ++j)
        releaseStaged(staged_[j].staged);
      staged_.erase(staged_.begin(), staged_.begin() + i);
      return ioError("cannot write '" + s.finalPath + "': " + std::strerror(err));
    }
    std::string dir = parentDirectory(s.finalPath);
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end())
      dirs.push_back(dir);
  }
  for (const Staged &s : staged_)
    releaseStaged(s.staged);
  staged_.clear();
  // The renames made durable; a failure here does not undo them.
  for (const std::string &dir : dirs) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      ::fsync(fd);
      ::close(fd);
    }
  }
  return Status::ok();
}

} // namespace cuvil
