/*===- runtime/cpu/schedule.h - Work items over the threads ----------------===*
 *
 * How the CPU kernels spread independent work items over the threads of
 * the model call in progress, each with its thread's scratch.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_CPU_SCHEDULE_H
#define CUVIL_RUNTIME_CPU_SCHEDULE_H

#include "../core/internal.h"

#pragma GCC visibility push(hidden)

#ifdef __cplusplus
extern "C" {
#endif

/* How every kernel runs its work items [0, items): without a pool (exec
 * NULL: a direct call, as the runtime's tests make) on this thread with
 * scratch allocated here (nothing runs if that fails); with one item or
 * too little `work` (multiply-adds: waking a thread costs microseconds) on
 * this thread with its pool scratch; else over the pool's threads, which
 * take chunks of items from a shared counter as they finish (a thread the
 * machine slows takes fewer). Items must be independent (any thread, any
 * order). *scratch is the job's slot its body reads: set for the runs on
 * this thread, NULL (each thread's pool scratch) otherwise. */
/* Multiply-adds below which a kernel runs on the calling thread alone:
 * handing work to another thread costs a few microseconds. */
#define CUVIL_SMALL_WORK (1 << 17)

void cuvil_run_items(void *exec, int64_t items, int64_t work,
                     void (*body)(void *closure, int64_t begin, int64_t end), void *closure,
                     float **scratch);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif /* CUVIL_RUNTIME_CPU_SCHEDULE_H */
