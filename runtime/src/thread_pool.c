/*===- runtime/src/thread_pool.c - One instance's threads -----------------===*
 *
 * A fixed set of workers per instance, started at create and joined at
 * destroy (so nothing of the library runs after cuvil_model_destroy and the
 * library can be dlclose'd). cuvil_rt_parallel_for splits [0, n) into equal
 * contiguous blocks, one per thread; the calling thread runs the first block
 * itself and then waits for the others. Only one parallel_for runs on a
 * pool at a time: the instance's busy guard makes sure of that.
 *
 *===----------------------------------------------------------------------===*/
#include "internal.h"

#include <errno.h>
#include <pthread.h>
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
  /* Everything below is guarded by `mutex`. */
  uint64_t generation; /* bumped for each posted job */
  bool stopping;
  parallel_body_fn body;
  void *closure;
  int64_t n;
  int32_t num_blocks;
  int32_t blocks_pending; /* worker blocks not finished yet */
};

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
  pthread_mutex_lock(&pool->mutex);
  for (;;) {
    while (pool->generation == seen_generation && !pool->stopping)
      pthread_cond_wait(&pool->work_posted, &pool->mutex);
    if (pool->stopping)
      break;
    seen_generation = pool->generation;
    if (self->index >= pool->num_blocks)
      continue; /* fewer blocks than threads: nothing for this one */
    parallel_body_fn body = pool->body;
    void *closure = pool->closure;
    int64_t begin, end;
    block_range(pool->n, pool->num_blocks, self->index, &begin, &end);
    pthread_mutex_unlock(&pool->mutex);
    body(closure, begin, end);
    pthread_mutex_lock(&pool->mutex);
    if (--pool->blocks_pending == 0)
      pthread_cond_signal(&pool->work_finished);
  }
  pthread_mutex_unlock(&pool->mutex);
  return NULL;
}

static void stop_workers(cuvil_thread_pool *pool) {
  pthread_mutex_lock(&pool->mutex);
  pool->stopping = true;
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
    if (!pool->workers) {
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
  return pool ? pool->num_threads : 1;
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

  pthread_mutex_lock(&pool->mutex);
  pool->body = body;
  pool->closure = closure;
  pool->n = n;
  pool->num_blocks = num_blocks;
  pool->blocks_pending = num_blocks - 1;
  ++pool->generation;
  pthread_cond_broadcast(&pool->work_posted);
  pthread_mutex_unlock(&pool->mutex);

  int64_t begin, end;
  block_range(n, num_blocks, 0, &begin, &end);
  inside_parallel_region = true;
  body(closure, begin, end);
  inside_parallel_region = false;

  pthread_mutex_lock(&pool->mutex);
  while (pool->blocks_pending > 0)
    pthread_cond_wait(&pool->work_finished, &pool->mutex);
  pthread_mutex_unlock(&pool->mutex);
}
