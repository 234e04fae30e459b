//===- Measurement.cpp - Timed runs in child processes, and their statistics ===//
#include "cuvil-autotune/Measurement.h"

#include "support/Staging.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace cuvil::tuning {
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// What an interrupted tune (SIGINT, SIGTERM, ...) leaves: nothing. The run
// in progress is killed with its process group and the work directory
// removed, from the staging cleanup (support/Staging.h: async-signal-safe
// calls only).
char gWorkDir[4096];
std::atomic<pid_t> gChild{0};
/// Set by the cleanup: the thread doing the work starts no run after it.
std::atomic<bool> gInterrupted{false};

void onInterrupt() noexcept {
  gInterrupted.store(true);
  // The run first, and gone before its files are (it may be writing them).
  if (pid_t child = gChild.load()) {
    ::kill(-child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  // Libraries; outputs' subdirectories; a killed cuvil-run's staging
  // directory in them. The thread doing the work may still be writing a
  // library for a moment: again until the directory is gone (half a second
  // at most).
  for (int attempt = 0; gWorkDir[0] && attempt < 50; ++attempt) {
    ::cuvil::removeTree(gWorkDir, 3);
    if (::access(gWorkDir, F_OK) != 0)
      break;
    struct timespec pause = {0, 10 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
  }
}

double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  double pos = q * double(v.size() - 1);
  size_t lo = size_t(std::floor(pos)), hi = size_t(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - double(lo));
}

/// Samples without the outliers (beyond 1.5 interquartile ranges), from 5 on.
std::vector<double> withoutOutliers(const std::vector<double> &v) {
  if (v.size() < 5)
    return v;
  double q1 = quantile(v, 0.25), q3 = quantile(v, 0.75), iqr = q3 - q1;
  std::vector<double> kept;
  for (double x : v)
    if (x >= q1 - 1.5 * iqr && x <= q3 + 1.5 * iqr)
      kept.push_back(x);
  return kept;
}

} // namespace

std::string ChildResult::failure() const {
  if (timedOut)
    return "timed out";
  if (signal)
    return "crashed: signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  // A shell (a --runner's) reports its command's death by signal N as
  // status 128 + N.
  if (exitCode > 128 && exitCode < 128 + 65)
    return "crashed: signal " + std::to_string(exitCode - 128) + " (" + strsignal(exitCode - 128) + ")";
  if (exitCode != 0)
    return "exited with status " + std::to_string(exitCode);
  return "";
}

std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

ChildResult runChild(const std::vector<std::string> &argv, double timeout) {
  ChildResult r;
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC) != 0) {
    r.output = "cannot create a pipe";
    return r;
  }
  if (gInterrupted.load()) {
    r.output = "interrupted";
    return r;
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(pipeFds[0]);
    close(pipeFds[1]);
    r.output = "cannot fork";
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(pipeFds[1], 1);
    dup2(pipeFds[1], 2);
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run '%s': %s\n", args[0], strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);
  gChild.store(pid);
  if (gInterrupted.load()) // the cleanup ran meanwhile: this run too
    ::kill(-pid, SIGKILL);
  close(pipeFds[1]);
  auto start = Clock::now();
  char buf[4096];
  for (;;) {
    double left = timeout - secondsSince(start);
    if (left <= 0) {
      r.timedOut = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{pipeFds[0], POLLIN, 0};
    int n = poll(&p, 1, int(std::min(left, 1.0) * 1000) + 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n > 0) {
      ssize_t got = read(pipeFds[0], buf, sizeof buf);
      if (got <= 0)
        break;
      if (r.output.size() < (8u << 20))
        r.output.append(buf, size_t(got));
    }
  }
  close(pipeFds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  gChild.store(0);
  if (!r.timedOut) {
    if (WIFEXITED(status))
      r.exitCode = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      r.signal = WTERMSIG(status);
  }
  return r;
}

void guardWorkDirectory(const std::string &dir) {
  if (dir.size() >= sizeof gWorkDir)
    return;
  std::memcpy(gWorkDir, dir.c_str(), dir.size() + 1);
  static bool registered = false;
  if (!registered) {
    registered = true;
    ::cuvil::addInterruptCleanup(onInterrupt);
  }
}

void releaseWorkDirectory() { gWorkDir[0] = 0; }

bool interrupted() { return gInterrupted.load(); }

double median(const std::vector<double> &v) { return quantile(withoutOutliers(v), 0.5); }
double spread(const std::vector<double> &v) {
  std::vector<double> k = withoutOutliers(v);
  double m = quantile(k, 0.5);
  return k.size() < 2 || !(m > 0) ? 0 : (quantile(k, 0.75) - quantile(k, 0.25)) / m;
}

Result<std::map<std::string, std::pair<double, double>>> parseProfile(const std::string &out) {
  std::map<std::string, std::pair<double, double>> sites;
  size_t at = out.find("profile over ");
  if (at == std::string::npos)
    return inputError("the run printed no profile");
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(out).substr(at).split(lines, '\n');
  for (size_t i = 2; i < lines.size(); ++i) {
    llvm::StringRef l = lines[i].trim();
    if (l.empty())
      break;
    llvm::StringRef ms, calls, share, name;
    std::tie(ms, l) = l.split(' ');
    l = l.ltrim();
    std::tie(calls, l) = l.split(' ');
    l = l.ltrim();
    std::tie(share, name) = l.split(' ');
    double msValue = 0, callsValue = 0;
    if (ms.getAsDouble(msValue) || calls.getAsDouble(callsValue) || !share.ends_with("%") || name.trim().empty())
      return inputError("the run's profile line '" + lines[i].trim().str() + "' is not 'ms calls share% name'");
    sites[name.trim().str()] = {msValue, callsValue};
  }
  return sites;
}

} // namespace cuvil::tuning
