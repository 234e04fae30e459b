//===- LargeStack.cpp - Run a tool's work on a thread with a large stack --===//
#include "support/LargeStack.h"

#include <pthread.h>

namespace cuvil {

namespace {

struct Job {
  const std::function<int()> *work;
  int result = 0;
};

void *runJob(void *arg) {
  Job *job = static_cast<Job *>(arg);
  job->result = (*job->work)();
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
