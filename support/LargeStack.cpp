//===- LargeStack.cpp - Run a tool's work on a thread with a large stack --===//
#include "support/LargeStack.h"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>

namespace cuvil {

namespace {

struct Job {
  const std::function<int()> *work;
  int result = 0;
};

/// The crash handlers run on an alternate signal stack, which is per
/// thread: without one of its own, a stack overflow here could not be
/// reported (the kernel kills the process, no message).
constexpr size_t kSignalStackBytes = size_t(1) << 20;

void *runJob(void *arg) {
  Job *job = static_cast<Job *>(arg);
  stack_t altStack{};
  altStack.ss_sp = std::malloc(kSignalStackBytes);
  altStack.ss_size = kSignalStackBytes;
  bool installed = altStack.ss_sp && sigaltstack(&altStack, nullptr) == 0;
  job->result = (*job->work)();
  if (installed) {
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
  }
  std::free(altStack.ss_sp);
  return nullptr;
}

} // namespace

int runOnLargeStack(const std::function<int()> &work, size_t stackBytes) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0)
    return work();
  Job job{&work};
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, stackBytes) == 0 &&
                 pthread_create(&thread, &attr, runJob, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started)
    return work();
  pthread_join(thread, nullptr);
  return job.result;
}

} // namespace cuvil
