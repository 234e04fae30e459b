/*===- runtime/core/thread_pool.c - One instance's threads -----------------===*
 *
 * A fixed set of workers per instance, started at create and joined at
 * destroy (so nothing of the library runs after cuvil_model_destroy and the
 * library can be dlclose'd). cuvil_rt_parallel_for splits [0, n) into equal
 * contiguous blocks, one per thread; the calling thread runs the first block
 * itself, then every block no worker has claimed yet (a worker the machine
 * has not scheduled in time, e.g. a virtual CPU taken away for a while,
 * does not hold the call up), then waits for the workers that did. Only one
 * parallel_for runs on a pool at a time: the instance's busy guard makes
 * sure of that.
 *
 * A model posts many short jobs in a row (a kernel per layer), and waking a
 * sleeping thread costs tens of microseconds: workers and the caller first
 * spin for a while on atomics, and only then sleep on the condition
 * variables.
 *
 *===----------------------------------------------------------------------===*/
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdlib.h>

typedef void (*parallel_body_fn)(void *closure, int64_t begin, int64_t end);

typedef struct worker {
  cuvil_thread_pool *pool;
  int32_t index; /* 1 .. num_threads - 1; block 0 belongs to the caller */
  pthread_t thread;
} worker;

struct cuvil_thread_pool {
  int32_t num_threads;
  /* CUVIL_THREAD_SCRATCH_BYTES per thread for the kernels' packed blocks,
   * allocated with the pool so a run never allocates. */
  unsigned char *scratch;
  int32_t num_started; /* workers actually running (for a partial start) */
  worker *workers;

  pthread_mutex_t mutex;
  pthread_cond_t work_posted;
  pthread_cond_t work_finished;
  /* Bumped (under `mutex`, release) for each posted job; the job's fields
   * below are written before and read after it (acquire). */
  _Atomic uint64_t generation;
  _Atomic bool stopping;
  parallel_body_fn body;
  void *closure;
  int64_t n;
  int32_t num_blocks;
  /* claimed[i] (1 <= i < num_threads): block i of the current job is taken,
   * by worker i or by the caller, whichever comes first (compare-exchange
   * 0 -> 1); reset by the caller for each job after its fields are written
   * (release), so a worker that claims (acquire) reads that job's fields. */
  _Atomic int32_t *claimed;
  /* Workers between waking for a job and being done with it: the caller
   * waits for none to be left. Incremented before a claim, so the caller
   * cannot miss a worker that claims a block. */
  _Atomic int32_t active;
};

/* Iterations of the spin before sleeping (~50-100 us). */
enum { SPIN_ITERATIONS = 4000 };

static inline void cpu_relax(void) {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#endif
}

/* Set on workers, and on the caller while it runs its block: a nested
 * parallel_for from inside a body runs inline instead of deadlocking on the
 * pool it is already part of. */
static _Thread_local bool inside_parallel_region;
/* This thread's index in the pool running it: 0 for the caller. */
static _Thread_local int32_t thread_slot;

static void block_range(int64_t n, int32_t num_blocks, int32_t block, int64_t *begin,
                        int64_t *end) {
  int64_t base = n / num_blocks, extra = n % num_blocks;
  /* The first `extra` blocks take one more element. */
  *begin = block * base + (block < extra ? block : extra);
  *end = *begin + base + (block < extra ? 1 : 0);
}

static void *worker_main(void *argument) {
  worker *self = argument;
  cuvil_thread_pool *pool = self->pool;
  inside_parallel_region = true;
  thread_slot = self->index;
  /* Jobs are numbered from 1; this worker may start after the first job
   * was posted and must still take its block. */
  uint64_t seen_generation = 0;
  for (;;) {
    uint64_t generation = atomic_load_explicit(&pool->generation, memory_order_acquire);
    for (int spin = 0; spin < SPIN_ITERATIONS && generation == seen_generation &&
                       !atomic_load_explicit(&pool->stopping, memory_order_relaxed);
         ++spin) {
      cpu_relax();
      generation = atomic_load_explicit(&pool->generation, memory_order_acquire);
    }
    if (generation == seen_generation) {
      pthread_mutex_lock(&pool->mutex);
      while (atomic_load_explicit(&pool->generation, memory_order_acquire) == seen_generation &&
             !atomic_load_explicit(&pool->stopping, memory_order_relaxed))
        pthread_cond_wait(&pool->work_posted, &pool->mutex);
      pthread_mutex_unlock(&pool->mutex);
      generation = atomic_load_explicit(&pool->generation, memory_order_acquire);
    }
    if (atomic_load_explicit(&pool->stopping, memory_order_acquire))
      break;
    /* The job's fields are read only after this worker's block is claimed:
     * one woken late finds it taken by the caller (or, the caller being on
     * to the next job, claims that job's block, whose fields are then
     * written). */
    seen_generation = generation;
    atomic_fetch_add_explicit(&pool->active, 1, memory_order_seq_cst);
    int32_t unclaimed = 0;
    if (atomic_compare_exchange_strong_explicit(&pool->claimed[self->index], &unclaimed, 1,
                                                memory_order_seq_cst, memory_order_relaxed)) {
      int64_t begin, end;
      block_range(pool->n, pool->num_blocks, self->index, &begin, &end);
      pool->body(pool->closure, begin, end);
    }
    if (atomic_fetch_sub_explicit(&pool->active, 1, memory_order_acq_rel) == 1) {
      /* The last one: wake the caller if it went to sleep. */
      pthread_mutex_lock(&pool->mutex);
      pthread_cond_signal(&pool->work_finished);
      pthread_mutex_unlock(&pool->mutex);
    }
  }
  return NULL;
}

static void stop_workers(cuvil_thread_pool *pool) {
  pthread_mutex_lock(&pool->mutex);
  atomic_store_explicit(&pool->stopping, true, memory_order_release);
  pthread_cond_broadcast(&pool->work_posted);
  pthread_mutex_unlock(&pool->mutex);
  for (int32_t i = 0; i < pool->num_started; ++i)
    pthread_join(pool->workers[i].thread, NULL);
}

cuvil_thread_pool *cuvil_thread_pool_create(int32_t num_threads, int *error_number) {
  *error_number = 0;
  if (num_threads < 1)
    num_threads = 1;
  cuvil_thread_pool *pool = calloc(1, sizeof(*pool));
  if (!pool) {
    *error_number = ENOMEM;
    return NULL;
  }
  pool->num_threads = num_threads;
  pool->scratch = aligned_alloc(64, (size_t)num_threads * CUVIL_THREAD_SCRATCH_BYTES);
  if (!pool->scratch) {
    free(pool);
    *error_number = ENOMEM;
    return NULL;
  }
  if (num_threads > 1) {
    pool->workers = calloc((size_t)(num_threads - 1), sizeof(worker));
    pool->claimed = calloc((size_t)num_threads, sizeof(*pool->claimed));
    if (!pool->workers || !pool->claimed) {
      free(pool->workers);
      free(pool->claimed);
      free(pool->scratch);
      free(pool);
      *error_number = ENOMEM;
      return NULL;
    }
  }
  pthread_mutex_init(&pool->mutex, NULL);
  pthread_cond_init(&pool->work_posted, NULL);
  pthread_cond_init(&pool->work_finished, NULL);

  /* Workers start with every signal blocked, so the application's signal
   * handlers keep running on the application's own threads. */
  sigset_t all_signals, previous_mask;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &previous_mask);
  for (int32_t i = 0; i < num_threads - 1; ++i) {
    worker *w = &pool->workers[i];
    w->pool = pool;
    w->index = i + 1;
    int result = pthread_create(&w->thread, NULL, worker_main, w);
    if (result != 0) {
      *error_number = result;
      break;
    }
    pthread_setname_np(w->thread, "cuvil-worker");
    ++pool->num_started;
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask, NULL);

  if (*error_number != 0) {
    cuvil_thread_pool_destroy(pool);
    return NULL;
  }
  return pool;
}

void cuvil_thread_pool_destroy(cuvil_thread_pool *pool) {
  if (!pool)
    return;
  stop_workers(pool);
  pthread_cond_destroy(&pool->work_finished);
  pthread_cond_destroy(&pool->work_posted);
  pthread_mutex_destroy(&pool->mutex);
  free(pool->workers);
  free((void *)pool->claimed);
  free(pool->scratch);
  free(pool);
}

void *cuvil_thread_pool_scratch(cuvil_thread_pool *pool) {
  if (!pool)
    return NULL;
  int32_t slot = thread_slot < pool->num_threads ? thread_slot : 0;
  return pool->scratch + (size_t)slot * CUVIL_THREAD_SCRATCH_BYTES;
}

int32_t cuvil_thread_pool_size(const cuvil_thread_pool *pool) {
  /* Inside a body, work runs on this thread alone (a nested parallel_for
   * is inline): kernels planning their blocks should plan for one. */
  return pool && !inside_parallel_region ? pool->num_threads : 1;
}

void cuvil_rt_parallel_for(void *exec, int64_t n,
                           void (*body)(void *closure, int64_t begin, int64_t end),
                           void *closure) {
  if (n <= 0 || !body)
    return;
  cuvil_thread_pool *pool = exec;
  if (!pool || pool->num_threads <= 1 || n == 1 || inside_parallel_region) {
    body(closure, 0, n);
    return;
  }
  int32_t num_blocks = n < pool->num_threads ? (int32_t)n : pool->num_threads;

  pool->body = body;
  pool->closure = closure;
  pool->n = n;
  pool->num_blocks = num_blocks;
  for (int32_t i = 1; i < pool->num_threads; ++i)
    atomic_store_explicit(&pool->claimed[i], i < num_blocks ? 0 : 1, memory_order_release);
  pthread_mutex_lock(&pool->mutex);
  atomic_fetch_add_explicit(&pool->generation, 1, memory_order_release);
  pthread_cond_broadcast(&pool->work_posted);
  pthread_mutex_unlock(&pool->mutex);

  int64_t begin, end;
  block_range(n, num_blocks, 0, &begin, &end);
  inside_parallel_region = true;
  body(closure, begin, end);
  /* The blocks of workers not running yet. */
  for (int32_t i = 1; i < num_blocks; ++i) {
    int32_t unclaimed = 0;
    if (atomic_compare_exchange_strong_explicit(&pool->claimed[i], &unclaimed, 1,
                                                memory_order_seq_cst, memory_order_relaxed)) {
      block_range(n, num_blocks, i, &begin, &end);
      body(closure, begin, end);
    }
  }
  inside_parallel_region = false;

  for (int spin = 0; spin < SPIN_ITERATIONS &&
                     atomic_load_explicit(&pool->active, memory_order_acquire) > 0;
       ++spin)
    cpu_relax();
  if (atomic_load_explicit(&pool->active, memory_order_acquire) > 0) {
    pthread_mutex_lock(&pool->mutex);
    while (atomic_load_explicit(&pool->active, memory_order_acquire) > 0)
      pthread_cond_wait(&pool->work_finished, &pool->mutex);
    pthread_mutex_unlock(&pool->mutex);
  }
}

/*--- The model call in progress on this thread ----------------------------*/

_Thread_local void *cuvil_rt_current_exec;

void cuvil_rt_parallel_for_current(int64_t n,
                                   void (*body)(void *closure, int64_t begin, int64_t end),
                                   void *closure) {
  cuvil_rt_parallel_for(cuvil_rt_current_exec, n, body, closure);
}
