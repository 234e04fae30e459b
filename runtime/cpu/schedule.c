/*===- runtime/cpu/schedule.c - Work items over the threads ---------------===*/
#include "schedule.h"

#include <stdatomic.h>
#include <stdlib.h>

enum { SMALL_WORK = CUVIL_SMALL_WORK };

typedef struct dynamic_items {
  void (*body)(void *closure, int64_t begin, int64_t end);
  void *closure;
  int64_t items, chunk;
  _Atomic int64_t next;
} dynamic_items;

static void dynamic_items_body(void *closure, int64_t begin, int64_t end) {
  (void)begin;
  (void)end;
  dynamic_items *d = closure;
  for (;;) {
    int64_t i = atomic_fetch_add_explicit(&d->next, d->chunk, memory_order_relaxed);
    if (i >= d->items)
      return;
    d->body(d->closure, i, i + d->chunk < d->items ? i + d->chunk : d->items);
  }
}

void cuvil_run_items(void *exec, int64_t items, int64_t work,
                     void (*body)(void *closure, int64_t begin, int64_t end), void *closure,
                     float **scratch) {
  if (!exec) {
    /* No pool (a direct call): this thread, with scratch of its own. */
    *scratch = aligned_alloc(64, CUVIL_THREAD_SCRATCH_BYTES);
    if (!*scratch)
      return;
    body(closure, 0, items);
    free(*scratch);
    *scratch = NULL;
    return;
  }
  if (items == 1 || work < SMALL_WORK) {
    /* Too little to be worth waking the other threads. */
    *scratch = cuvil_thread_pool_scratch(exec);
    body(closure, 0, items);
    return;
  }
  int64_t threads = cuvil_thread_pool_size(exec);
  if (items <= 1 || threads <= 1) {
    cuvil_rt_parallel_for(exec, items, body, closure);
    return;
  }
  /* One parallel_for block per thread; each takes chunks (about eight per
   * thread) from the counter until none is left. */
  dynamic_items d = {.body = body, .closure = closure, .items = items,
                     .chunk = items / (8 * threads) > 1 ? items / (8 * threads) : 1};
  atomic_init(&d.next, 0);
  cuvil_rt_parallel_for(exec, threads < items ? threads : items, dynamic_items_body, &d);
}
