/*===- runtime/src/gemm.c - Blocked GEMM, convolutions, linear layers -----===*
 *
 * The driver splits C into work items (a column tile of NR, or of all N
 * when N is narrow, times a chunk of MR-row panels), spreads them over the
 * model's threads, packs B per K-block into a buffer that stays in L1,
 * accumulates each tile in a small buffer, and applies the epilogue (bias,
 * residual, clamp) once, while the tile is still in cache.
 *
 *===----------------------------------------------------------------------===*/
#include "kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

_Thread_local void *cuvil_rt_current_exec;

void cuvil_rt_parallel_for_current(int64_t n,
                                   void (*body)(void *closure, int64_t begin, int64_t end),
                                   void *closure) {
  cuvil_rt_parallel_for(cuvil_rt_current_exec, n, body, closure);
}

/* Blocking (floats): a K-block of B for one column tile (KC x NR = 32 KiB at
 * NR = 32) stays in L1 while the row panels of A's K-block stream from L2
 * (MC x KC = 256 KiB; packed here too when A is not a constant); an item
 * packs B for up to NC columns at once, so A's block is read from memory
 * once for all of them (thin outputs with large
 * weights, like resnet's last stage, would otherwise re-read the weights
 * for every tile). */
enum { KC = 256, MC = 256, NC = 128 };
/* Multiply-adds below which a kernel runs on the calling thread alone:
 * handing work to another thread costs a few microseconds. */
enum { SMALL_WORK = 1 << 17 };
_Static_assert((size_t)(KC * NC + MC * NC + MC * KC) * sizeof(float) <=
                   CUVIL_THREAD_SCRATCH_BYTES,
               "the blocks must fit in a thread's scratch");

/*--- Micro-kernel choice ---------------------------------------------------*/

static const cuvil_microkernels *best_kernels;
static pthread_once_t best_kernels_once = PTHREAD_ONCE_INIT;

static void choose_kernels(void) {
  const cuvil_microkernels *k = NULL;
  if (cuvil_cpu_detects_feature("avx512f"))
    k = cuvil_microkernels_avx512();
  if (!k && cuvil_cpu_detects_feature("avx2") && cuvil_cpu_detects_feature("fma"))
    k = cuvil_microkernels_avx2();
  best_kernels = k ? k : cuvil_microkernels_generic();
}

const cuvil_microkernels *cuvil_microkernels_best(void) {
  pthread_once(&best_kernels_once, choose_kernels);
  return best_kernels;
}

/*--- Running work items ----------------------------------------------------*/

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

/*--- The driver ------------------------------------------------------------*/

typedef struct gemm_job {
  const cuvil_gemm_problem *p;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch;           /* when running without a pool */
  cuvil_pack_b_fn pack_b;   /* the problem's, or a copy out of b_panels */
  const void *b_context;
  int64_t nr;               /* columns per tile (the kernel's NR, or N when narrow) */
  int64_t kc;               /* K-block: KC, or longer for a constant A times a few columns */
  int narrow;
  int64_t m_panels, panels_per_block, m_blocks;
  int64_t tiles_per_block, n_blocks, n_tiles;
  int transposed; /* C's columns contiguous, stored so by the kernels' full_store */
  int tile_major;  /* gemm_tile_major: A packed whole, each tile's K run through at once */
} gemm_job;

static inline float apply_epilogue(const cuvil_gemm_problem *p, float v, int64_t i, int64_t j) {
  if (p->bias)
    v += p->bias[p->column_bias ? j : i];
  if (p->residual)
    v += p->residual[i * p->c_row_stride + j * p->c_col_stride];
  if (p->clamp) {
    /* fmaxf/fminf would turn NaN into the bound; PyTorch keeps NaN. */
    v = v < p->lo ? p->lo : v;
    v = v > p->hi ? p->hi : v;
  }
  return v;
}

static void write_tile(const cuvil_gemm_problem *p, const float *tile, int64_t tile_stride,
                       int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  if (p->c_row_stride == 1 && p->c_col_stride != 1) {
    /* C stored transposed (linear layers: y = (W x^T)^T): a tile column is
     * contiguous in memory. */
    for (int64_t c = 0; c < cols; ++c) {
      float *dst = p->c + i0 + (j0 + c) * p->c_col_stride;
      if (p->column_bias) {
        /* Convolutions with pixels as rows: one channel per column. */
        const float *res = p->residual ? p->residual + i0 + (j0 + c) * p->c_col_stride : NULL;
        const float bias = p->bias ? p->bias[j0 + c] : 0.0f;
        for (int64_t r = 0; r < rows; ++r) {
          float v = tile[r * tile_stride + c] + bias;
          if (res)
            v += res[r];
          if (p->clamp) {
            v = v < p->lo ? p->lo : v;
            v = v > p->hi ? p->hi : v;
          }
          dst[r] = v;
        }
        continue;
      }
      for (int64_t r = 0; r < rows; ++r)
        dst[r] = apply_epilogue(p, tile[r * tile_stride + c], i0 + r, j0 + c);
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    int64_t i = i0 + r;
    const float *src = tile + r * tile_stride;
    if (p->c_col_stride == 1 && !p->column_bias) {
      float *restrict dst = p->c + i * p->c_row_stride + j0;
      const float *restrict res = p->residual ? p->residual + i * p->c_row_stride + j0 : NULL;
      const float bias = p->bias ? p->bias[i] : 0.0f, lo = p->lo, hi = p->hi;
      /* One loop per case, so each is a plain vectorisable loop. */
      if (res && p->clamp)
        for (int64_t c = 0; c < cols; ++c) {
          float v = src[c] + bias + res[c];
          v = v < lo ? lo : v;
          dst[c] = v > hi ? hi : v;
        }
      else if (res)
        for (int64_t c = 0; c < cols; ++c)
          dst[c] = src[c] + bias + res[c];
      else if (p->clamp)
        for (int64_t c = 0; c < cols; ++c) {
          float v = src[c] + bias;
          v = v < lo ? lo : v;
          dst[c] = v > hi ? hi : v;
        }
      else
        for (int64_t c = 0; c < cols; ++c)
          dst[c] = src[c] + bias;
    } else {
      for (int64_t c = 0; c < cols; ++c)
        p->c[i * p->c_row_stride + (j0 + c) * p->c_col_stride] =
            apply_epilogue(p, src[c], i, j0 + c);
    }
  }
}

/* Whether the tile of panel mp at column jt is finished by full_store in its
 * last K-block (full rows and columns, C's rows contiguous) rather than
 * through the tile buffer and write_tile. */
static inline int stores_direct(const gemm_job *job, int64_t mp, int64_t jt) {
  const cuvil_gemm_problem *p = job->p;
  return !job->narrow && p->k > 0 && (p->c_col_stride == 1 || job->transposed) &&
         p->n - jt >= job->nr && p->m - mp * CUVIL_MR >= CUVIL_MR;
}

/* Pixels-as-rows products with B panels (compile-time weights) and an A
 * (the image's pixels) small enough to pack whole: tile by tile, each
 * tile's K in blocks of KC_TILE whose B block (16 KiB) stays in L1 across
 * the item's panels (a KC block of B, 32 KiB, is the whole L1 of some
 * cores and was read from L2 once per panel); the partial sums, one tile
 * per panel, stay in L1 too. */
enum { KC_TILE = 128 };

/* One tile's product over [k0, k0 + kc): in its last K-block a full tile
 * is finished in registers and stored into C (epilogue applied), else the
 * sums go to the tile buffer c (fewer rows than MR: the remainder kernel). */
static inline void run_tile(const gemm_job *job, int64_t kc, const float *a, const float *b,
                            int64_t ldb, float *c, int64_t k0, int64_t mp, int64_t jt) {
  const cuvil_gemm_problem *p = job->p;
  if (k0 + kc == p->k && stores_direct(job, mp, jt)) {
    int64_t at = mp * CUVIL_MR * p->c_row_stride + jt * p->c_col_stride;
    cuvil_tile_epilogue e = {
        p->bias ? p->bias + (p->column_bias ? jt : mp * CUVIL_MR) : NULL,
        p->residual ? p->residual + at : NULL, p->column_bias, p->clamp, p->lo, p->hi,
        job->transposed};
    job->mk->full_store(kc, a, b, ldb, k0 > 0 ? c : NULL, p->c + at,
                        job->transposed ? p->c_col_stride : p->c_row_stride, &e);
  } else if (job->narrow)
    job->mk->narrow(kc, a, b, c, job->nr, k0 > 0);
  else if (p->m - mp * CUVIL_MR < CUVIL_MR)
    job->mk->rows(kc, a, b, ldb, c, k0 > 0, p->m - mp * CUVIL_MR);
  else
    job->mk->full(kc, a, b, ldb, c, k0 > 0);
}

static void gemm_tile_major(const gemm_job *job, int64_t mp0, int64_t mp1, int64_t j0,
                            int64_t j1, float *scratch) {
  const cuvil_gemm_problem *p = job->p;
  const int64_t nr = job->nr, panels = mp1 - mp0;
  float *c_part = scratch;                    /* [panel][MR][nr] */
  float *a_all = c_part + panels * CUVIL_MR * nr; /* [panel][K][MR] */
  for (int64_t mp = mp0; mp < mp1; ++mp) {
    int64_t i0 = mp * CUVIL_MR, rows = p->m - i0 < CUVIL_MR ? p->m - i0 : CUVIL_MR;
    for (int64_t k0 = 0; k0 < p->k; k0 += KC)
      p->pack_a(p->a_context, i0, rows, k0, p->k - k0 < KC ? p->k - k0 : KC,
                a_all + ((mp - mp0) * p->k + k0) * CUVIL_MR);
  }
  for (int64_t jt = j0; jt < j1; jt += nr) {
    const int64_t cols = p->n - jt < nr ? p->n - jt : nr;
    const float *b_tile = p->b_panels + (jt / CUVIL_B_PANEL) * p->k * CUVIL_B_PANEL +
                          jt % CUVIL_B_PANEL;
    for (int64_t k0 = 0; k0 < p->k; k0 += KC_TILE) {
      const int64_t kc = p->k - k0 < KC_TILE ? p->k - k0 : KC_TILE;
      for (int64_t mp = mp0; mp < mp1; ++mp)
        run_tile(job, kc, a_all + ((mp - mp0) * p->k + k0) * CUVIL_MR,
                 b_tile + k0 * CUVIL_B_PANEL, CUVIL_B_PANEL,
                 c_part + (mp - mp0) * CUVIL_MR * nr, k0, mp, jt);
    }
    for (int64_t mp = mp0; mp < mp1; ++mp) {
      int64_t i0 = mp * CUVIL_MR, rows = p->m - i0 < CUVIL_MR ? p->m - i0 : CUVIL_MR;
      if (!stores_direct(job, mp, jt))
        write_tile(p, c_part + (mp - mp0) * CUVIL_MR * nr, nr, i0, rows, jt, cols);
    }
  }
}

static void gemm_items(void *closure, int64_t begin, int64_t end) {
  const gemm_job *job = closure;
  const cuvil_gemm_problem *p = job->p;
  const int64_t nr = job->nr;
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  float *b_block = scratch;           /* [tile][KC][nr] */
  float *c_block = scratch + KC * NC; /* [panel][tile][MR][nr] */
  float *a_block = c_block + MC * NC; /* [panel][KC][MR], when A is packed here */
  /* Full-width tiles read B where it is (the narrow kernels want it packed);
   * B packed at compile time is read in place by every tile. */
  const int direct_b = p->b_direct != NULL && !job->narrow;
  const int panel_b = p->b_panels != NULL && !job->narrow;
  for (int64_t item = begin; item < end; ++item) {
    int64_t mb = item / job->n_blocks, nb = item % job->n_blocks;
    /* Row blocks share the panels and column blocks the tiles evenly (at
     * most panels_per_block and tiles_per_block each). */
    int64_t mp0 = mb * job->m_panels / job->m_blocks;
    int64_t mp1 = (mb + 1) * job->m_panels / job->m_blocks;
    int64_t t_begin = nb * job->n_tiles / job->n_blocks;
    int64_t j0 = t_begin * nr;
    int64_t tiles = (nb + 1) * job->n_tiles / job->n_blocks - t_begin;
    if (job->tile_major) {
      int64_t j1 = j0 + tiles * nr < p->n ? j0 + tiles * nr : p->n;
      gemm_tile_major(job, mp0, mp1, j0, j1, scratch);
      continue;
    }
    if (p->k == 0)
      memset(c_block, 0, (size_t)((mp1 - mp0) * tiles * CUVIL_MR * nr) * sizeof(float));
    for (int64_t k0 = 0; k0 < p->k; k0 += job->kc) {
      int64_t kc = p->k - k0 < job->kc ? p->k - k0 : job->kc;
      for (int64_t t = 0; t < tiles; ++t) {
        int64_t jt = j0 + t * nr;
        int64_t cols = p->n - jt < nr ? p->n - jt : nr;
        if (!panel_b && (!direct_b || cols < nr))
          job->pack_b(job->b_context, k0, kc, jt, cols, nr, b_block + t * job->kc * nr);
      }
      if (!p->a_packed)
        for (int64_t mp = mp0; mp < mp1; ++mp) {
          int64_t i0 = mp * CUVIL_MR;
          int64_t rows = p->m - i0 < CUVIL_MR ? p->m - i0 : CUVIL_MR;
          p->pack_a(p->a_context, i0, rows, k0, kc, a_block + (mp - mp0) * KC * CUVIL_MR);
        }
      /* Tiles x panels; panel by panel when K is one short block (C's
       * stores then run along 8 rows at a time, not all the block's). */
      const int64_t panels = mp1 - mp0, pairs = tiles * panels;
      const int panel_outer = p->k <= 64;
      for (int64_t pair = 0; pair < pairs; ++pair) {
        int64_t t = panel_outer ? pair % tiles : pair / panels;
        int64_t mp = mp0 + (panel_outer ? pair / tiles : pair % panels);
        int64_t jt = j0 + t * nr;
        int in_place = direct_b && p->n - jt >= nr;
        const float *b =
            in_place ? p->b_direct + k0 * p->b_direct_ld + jt : b_block + t * job->kc * nr;
        int64_t ldb = in_place ? p->b_direct_ld : nr;
        if (panel_b) {
          b = p->b_panels + ((jt / CUVIL_B_PANEL) * p->k + k0) * CUVIL_B_PANEL + jt % CUVIL_B_PANEL;
          ldb = CUVIL_B_PANEL;
        }
        {
          const float *a = p->a_packed ? p->a_packed + (mp * p->k + k0) * CUVIL_MR
                                       : a_block + (mp - mp0) * KC * CUVIL_MR;
          float *c = c_block + ((mp - mp0) * tiles + t) * CUVIL_MR * nr;
          /* The next panel's block starts elsewhere: fetch its start now. */
          if (p->a_packed && mp + 1 < mp1 && !panel_outer)
            for (int line = 0; line < 8; ++line)
              __builtin_prefetch(a + p->k * CUVIL_MR + line * 16);
          run_tile(job, kc, a, b, ldb, c, k0, mp, jt);
        }
      }
    }
    for (int64_t mp = mp0; mp < mp1; ++mp) {
      int64_t i0 = mp * CUVIL_MR;
      int64_t rows = p->m - i0 < CUVIL_MR ? p->m - i0 : CUVIL_MR;
      for (int64_t t = 0; t < tiles; ++t) {
        int64_t jt = j0 + t * nr;
        int64_t cols = p->n - jt < nr ? p->n - jt : nr;
        if (!stores_direct(job, mp, jt))
          write_tile(p, c_block + ((mp - mp0) * tiles + t) * CUVIL_MR * nr, nr, i0, rows, jt, cols);
      }
    }
  }
}

/* B(k, j) out of compile-time panels (context: the problem), for the narrow
 * kernels, which want B packed [kc][n]. */
static void pack_b_from_panels(const void *context, int64_t k0, int64_t kc, int64_t j0,
                               int64_t n, int64_t nr_stride, float *dst) {
  const cuvil_gemm_problem *p = context;
  for (int64_t k = 0; k < kc; ++k)
    for (int64_t j = 0; j < nr_stride; ++j) {
      int64_t col = j0 + j;
      dst[k * nr_stride + j] =
          j < n ? p->b_panels[((col / CUVIL_B_PANEL) * p->k + k0 + k) * CUVIL_B_PANEL +
                              col % CUVIL_B_PANEL]
                : 0.0f;
    }
}

/* Whether a tile-major item of `panels` row panels fits its thread's
 * scratch: A packed whole plus one tile's sums per panel (one panel to
 * spare for the uneven split of the rows). */
static inline int tile_major_fits(const gemm_job *job, int64_t panels) {
  return (panels + 1) * CUVIL_MR * (job->p->k + job->nr) <=
         (int64_t)(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float));
}

/* The row and column blocks of a tile-major problem. Every row block reads
 * all of its columns' B, every column block packs A for its rows again (a
 * gather: counted twice): with small images and many channels (7x7 and
 * 512 channels, B ten times A) the columns are the ones to split, so that
 * each weight comes from memory once. Estimated in cycles: the busiest
 * thread's multiply-adds (32 a cycle) and the floats streamed (2 a cycle,
 * the threads share the memory), over items whose A fits the scratch. */
static void plan_tile_major(gemm_job *job, int64_t threads) {
  const cuvil_gemm_problem *p = job->p;
  const double a_floats = (double)job->m_panels * CUVIL_MR * p->k;
  const double b_floats = (double)job->n_tiles * job->nr * p->k;
  const double pair_fmas = (double)CUVIL_MR * job->nr * p->k; /* a panel times a tile */
  double best = -1;
  for (int64_t mb = 1; mb <= job->m_panels; ++mb) {
    int64_t panels = (job->m_panels + mb - 1) / mb;
    if (!tile_major_fits(job, panels))
      continue;
    for (int64_t nb = 1; nb <= job->n_tiles && (nb == 1 || mb * nb <= 8 * threads); ++nb) {
      int64_t tiles = (job->n_tiles + nb - 1) / nb, rounds = (mb * nb + threads - 1) / threads;
      double cycles = rounds * panels * tiles * pair_fmas / 32 +
                      (mb * b_floats + 2 * nb * a_floats) / 2;
      if (best < 0 || cycles < best) {
        best = cycles;
        job->m_blocks = mb;
        job->n_blocks = nb;
      }
    }
  }
  job->tiles_per_block = (job->n_tiles + job->n_blocks - 1) / job->n_blocks;
  job->panels_per_block = (job->m_panels + job->m_blocks - 1) / job->m_blocks;
}

/* The blocking and the work items of a problem (job->p, mk, exec set). */
static void gemm_plan(gemm_job *job_out) {
  gemm_job job = *job_out;
  const cuvil_gemm_problem *p = job.p;
  const cuvil_microkernels *mk = job.mk;
  void *exec = job.exec;
  job.pack_b = p->pack_b;
  job.b_context = p->b_context;
  if (p->b_panels) {
    job.pack_b = pack_b_from_panels;
    job.b_context = p;
  }
  job.narrow = p->n <= CUVIL_NARROW_MAX;
  job.nr = job.narrow ? p->n : mk->nr;
  /* A matrix (the weights) times a few columns streams A once and gains
   * nothing from K-blocks: a panel's whole K at once reads A in one
   * sequential run, which the prefetchers follow best. */
  job.kc = KC;
  if (job.narrow && p->a_packed)
    job.kc = p->k < KC * NC / job.nr ? p->k : KC * NC / job.nr;
  /* Transposed C with a bias per column (convolutions with pixels as rows). */
  job.transposed = mk->stores_transposed && p->c_row_stride == 1 && p->c_col_stride != 1 &&
                   (p->column_bias || !p->bias);
  job.tiles_per_block = NC / job.nr;
  if (p->a_pack_once) {
    /* Packing A costs much (im2col) and B needs none: one block of every
     * column, so each row block packs A once. */
    job.tiles_per_block = (p->n + job.nr - 1) / job.nr;
  }
  int64_t n_tiles = job.n_tiles = (p->n + job.nr - 1) / job.nr;
  job.n_blocks = (n_tiles + job.tiles_per_block - 1) / job.tiles_per_block;
  job.m_panels = (p->m + CUVIL_MR - 1) / CUVIL_MR;
  /* Smaller blocks when there would be too few items to keep every thread
   * busy; each block of rows packs B again, each block of columns reads A
   * again. */
  int64_t threads = cuvil_thread_pool_size(exec);
  job.panels_per_block = MC / CUVIL_MR;
  while (job.panels_per_block > 1 &&
         (job.panels_per_block / 2 >= job.m_panels ||
          job.n_blocks * ((job.m_panels + job.panels_per_block - 1) / job.panels_per_block) <
              2 * threads))
    job.panels_per_block /= 2;
  /* An item's tiles must fit the tile buffer, which keeps every tile's sums
   * between K-blocks: a block of all the columns (A packed once) holds
   * fewer panels. */
  const int64_t tile_floats = CUVIL_MR * job.nr;
  if (job.tiles_per_block * tile_floats > MC * NC) {
    job.tiles_per_block = MC * NC / tile_floats;
    job.n_blocks = (n_tiles + job.tiles_per_block - 1) / job.tiles_per_block;
  }
  while (job.panels_per_block * job.tiles_per_block * tile_floats > MC * NC)
    job.panels_per_block /= 2;
  job.m_blocks = (job.m_panels + job.panels_per_block - 1) / job.panels_per_block;
  /* A packed once whole with B panels: tile by tile (gemm_tile_major) when
   * an item's panels fit the scratch whole. */
  job.tile_major = p->a_pack_once && p->b_panels && !job.narrow && job.n_blocks == 1 && p->k > 0 &&
                   tile_major_fits(&job, (job.m_panels + job.m_blocks - 1) / job.m_blocks);
  if (job.tile_major) {
    /* Its own blocking, by the bytes each split would stream. */
    plan_tile_major(&job, exec ? threads : 1);
    *job_out = job;
    return;
  }
  /* A few more (smaller) column blocks (row blocks when A is packed once
   * per row block) where that makes the items a multiple of the thread
   * count: 784 columns are 7 blocks of 4 tiles, 4 and 3 per thread on two. */
  if (exec && threads > 1) {
    if (p->a_pack_once)
      while (job.m_blocks < job.m_panels && (job.m_blocks * job.n_blocks) % threads != 0 &&
             job.m_blocks * job.n_blocks < 8 * threads)
        ++job.m_blocks;
    else
      while (job.n_blocks < n_tiles && (job.m_blocks * job.n_blocks) % threads != 0 &&
             job.m_blocks * job.n_blocks < 8 * threads)
        ++job.n_blocks;
  }
  *job_out = job;
}

void cuvil_gemm_run(const cuvil_gemm_problem *p, const cuvil_microkernels *mk, void *exec) {
  if (p->m <= 0 || p->n <= 0)
    return;
  gemm_job job = {.p = p, .mk = mk, .exec = exec};
  gemm_plan(&job);
  cuvil_run_items(exec, job.m_blocks * job.n_blocks, p->m * p->n * p->k,
                  gemm_items, &job, &job.scratch);
}

/* On this thread, in `scratch` (CUVIL_THREAD_SCRATCH_BYTES): a GEMM inside
 * another kernel's work item. */
static void gemm_run_here(const cuvil_gemm_problem *p, const cuvil_microkernels *mk,
                          float *scratch) {
  if (p->m <= 0 || p->n <= 0)
    return;
  gemm_job job = {.p = p, .mk = mk, .exec = NULL};
  gemm_plan(&job);
  job.scratch = scratch;
  gemm_items(&job, 0, job.m_blocks * job.n_blocks);
}

/*--- Convolution -----------------------------------------------------------*/


/* Row k of im2col is input channel ci's tap (ky, kx): worked out once per
 * K-block and stepped along from there (divisions per row are slow). */
typedef struct im2col_tap {
  int64_t ci, ky, kx;
} im2col_tap;

static inline im2col_tap im2col_tap_at(int64_t k, int64_t kh, int64_t kw) {
  return (im2col_tap){k / (kh * kw), k % (kh * kw) / kw, k % kw};
}

static inline void im2col_tap_next(im2col_tap *t, int64_t kh, int64_t kw) {
  if (++t->kx == kw) {
    t->kx = 0;
    if (++t->ky == kh) {
      t->ky = 0;
      ++t->ci;
    }
  }
}

typedef struct im2col_context {
  const float *input; /* this image's first channel of the group */
  const int64_t *prm;
  const cuvil_microkernels *mk; /* its stride-2 row helpers */
} im2col_context;

/* B(k, j) for k = (ci, ky, kx), j = an output pixel (oy, ox). */
static void pack_im2col(const void *context, int64_t k0, int64_t kc, int64_t j0, int64_t n,
                        int64_t nr_stride, float *dst) {
  const im2col_context *ctx = context;
  const int64_t *q = ctx->prm;
  int64_t h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W], kh = q[CUVIL_CONV_KH], kw = q[CUVIL_CONV_KW], ow = q[CUVIL_CONV_OW];
  int64_t sh = q[CUVIL_CONV_SH], sw = q[CUVIL_CONV_SW], ph = q[CUVIL_CONV_PH], pw = q[CUVIL_CONV_PW];
  int64_t dh = q[CUVIL_CONV_DH], dw = q[CUVIL_CONV_DW];
  if (kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0) {
    /* A pointwise convolution reads B straight from the input rows. */
    for (int64_t k = 0; k < kc; ++k) {
      float *row = dst + k * nr_stride;
      memcpy(row, ctx->input + (k0 + k) * h * w + j0, (size_t)n * sizeof(float));
      for (int64_t j = n; j < nr_stride; ++j)
        row[j] = 0.0f;
    }
    return;
  }
  /* The tile's columns as runs of consecutive pixels on one output row:
   * for each, a row of the input is read with stride sw, and only the ends
   * of a run can fall into the padding. */
  int64_t run_oy[CUVIL_MAX_NR], run_ox[CUVIL_MAX_NR], run_len[CUVIL_MAX_NR], runs = 0;
  for (int64_t j = 0; j < n;) {
    int64_t pixel = j0 + j, oy = pixel / ow, ox = pixel % ow;
    int64_t len = ow - ox < n - j ? ow - ox : n - j;
    run_oy[runs] = oy;
    run_ox[runs] = ox;
    run_len[runs++] = len;
    j += len;
  }
  /* 3-wide stride-2 rows with padding 1 on an even width (first layers):
   * the three columns from one pair of loads, split in registers. */
  const int s2k3 = sw == 2 && kw == 3 && dw == 1 && pw == 1 && w % 2 == 0 && ow == w / 2;
  im2col_tap tap = im2col_tap_at(k0, kh, kw);
  for (int64_t k = 0; k < kc; ++k, im2col_tap_next(&tap, kh, kw)) {
    int64_t dy = tap.ky * dh, dx = tap.kx * dw;
    const float *plane = ctx->input + tap.ci * h * w;
    float *row = dst + k * nr_stride;
    if (sw == 2 && dw == 1 && tap.kx == 0 && k + kw <= kc) {
      /* Stride 2: a tap row's kw columns in one call, where all of them
       * are in this K-block. */
      for (int64_t t = 0, j = 0; t < runs; j += run_len[t++]) {
        int64_t iy = run_oy[t] * sh - ph + dy;
        if (iy < 0 || iy >= h)
          for (int64_t r = 0; r < kw; ++r)
            memset(row + r * nr_stride + j, 0, (size_t)run_len[t] * sizeof(float));
        else if (s2k3)
          ctx->mk->im2col_s2_k3(plane + iy * w, run_ox[t], run_len[t], row + j,
                                row + nr_stride + j, row + 2 * nr_stride + j);
        else
          ctx->mk->im2col_s2(plane + iy * w, w, run_ox[t] * 2 - pw, run_len[t], kw, row + j,
                             nr_stride);
      }
      for (int64_t r = 0; r < kw; ++r)
        for (int64_t j = n; j < nr_stride; ++j)
          row[r * nr_stride + j] = 0.0f;
      k += kw - 1;
      for (int64_t r = 1; r < kw; ++r)
        im2col_tap_next(&tap, kh, kw);
      continue;
    }
    for (int64_t t = 0; t < runs; ++t) {
      int64_t iy = run_oy[t] * sh - ph + dy, len = run_len[t];
      if (iy < 0 || iy >= h) {
        memset(row, 0, (size_t)len * sizeof(float));
        row += len;
        continue;
      }
      const float *src = plane + iy * w;
      int64_t ix = run_ox[t] * sw - pw + dx;
      /* Columns [a, b) of the run read inside the row. */
      int64_t a = ix >= 0 ? 0 : sw == 2 ? (-ix + 1) >> 1 : (-ix + sw - 1) / sw;
      int64_t b = w - ix <= 0 ? 0 : sw == 2 ? (w - ix + 1) >> 1 : (w - ix + sw - 1) / sw;
      if (a > len)
        a = len;
      if (b > len)
        b = len;
      if (b < a)
        b = a;
      for (int64_t q = 0; q < a; ++q)
        row[q] = 0.0f;
      if (sw == 1)
        memcpy(row + a, src + ix + a, (size_t)(b - a) * sizeof(float));
      else if (sw == 2) {
        /* The micro-kernels' instruction set (this file is built for any
         * x86-64), over the columns whose pair lies inside the row. */
        const float *s0 = src + ix;
        int64_t pairs = (w - ix) / 2 < b ? (w - ix) / 2 : b, q = a;
        if (pairs > a) {
          ctx->mk->even_floats(row + a, s0 + 2 * a, pairs - a);
          q = pairs;
        }
        for (; q < b; ++q)
          row[q] = s0[2 * q];
      } else
        for (int64_t q = a; q < b; ++q)
          row[q] = src[ix + q * sw];
      for (int64_t q = b; q < len; ++q)
        row[q] = 0.0f;
      row += len;
    }
    for (int64_t j = n; j < nr_stride; ++j)
      dst[k * nr_stride + j] = 0.0f;
  }
}

/* A(i, k) for i = an output pixel, k = (ci, ky, kx): im2col transposed, an
 * MR-pixel panel of a K-block (pixels as rows, CUVIL_FLAG_PIXEL_ROWS). */
static void pack_im2col_rows(const void *context, int64_t i0, int64_t rows, int64_t k0,
                             int64_t kc, float *dst) {
  const im2col_context *ctx = context;
  const int64_t *q = ctx->prm;
  int64_t h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W], kh = q[CUVIL_CONV_KH], kw = q[CUVIL_CONV_KW], ow = q[CUVIL_CONV_OW];
  int64_t sh = q[CUVIL_CONV_SH], sw = q[CUVIL_CONV_SW], ph = q[CUVIL_CONV_PH], pw = q[CUVIL_CONV_PW];
  int64_t dh = q[CUVIL_CONV_DH], dw = q[CUVIL_CONV_DW];
  int pointwise = kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  /* Each row's input origin; rows past `rows` read nothing (-h: out). */
  int64_t oy[CUVIL_MR], ox[CUVIL_MR], iy0[CUVIL_MR], ix0[CUVIL_MR];
  for (int64_t r = 0; r < CUVIL_MR; ++r) {
    oy[r] = (i0 + r) / ow;
    ox[r] = (i0 + r) % ow;
    iy0[r] = r < rows ? oy[r] * sh - ph : -h - kh * dh;
    ix0[r] = ox[r] * sw - pw;
  }
  /* The panel's pixels on one output row: each k reads MR columns of one
   * input row, sw apart. */
  int one_row = rows == CUVIL_MR && oy[0] == oy[CUVIL_MR - 1];
  /* Otherwise (small images: a panel spans output rows) each tap's source
   * offset per pixel, -1 in the padding, worked out once per call: the K
   * rows (every channel reuses the taps) then gather without bounds tests. */
  enum { TABLE_TAPS = 64 };
  int64_t off[TABLE_TAPS][CUVIL_MR];
  const int table = !pointwise && !one_row && kh * kw <= TABLE_TAPS;
  if (table)
    for (int64_t t = 0; t < kh * kw; ++t)
      for (int64_t r = 0; r < CUVIL_MR; ++r) {
        int64_t iy = iy0[r] + t / kw * dh, ix = ix0[r] + t % kw * dw;
        off[t][r] = (uint64_t)iy < (uint64_t)h && (uint64_t)ix < (uint64_t)w ? iy * w + ix : -1;
      }
  im2col_tap tap = im2col_tap_at(k0, kh, kw);
  for (int64_t k = 0; k < kc; ++k, im2col_tap_next(&tap, kh, kw)) {
    int64_t dy = tap.ky * dh, dx = tap.kx * dw;
    const float *plane = ctx->input + tap.ci * h * w;
    float *d = dst + k * CUVIL_MR;
    if (pointwise && rows == CUVIL_MR) {
      memcpy(d, plane + i0, CUVIL_MR * sizeof(float)); /* pixel = input offset */
      continue;
    }
    if (table) {
      const int64_t *o = off[tap.ky * kw + tap.kx];
      for (int64_t r = 0; r < CUVIL_MR; ++r)
        d[r] = o[r] >= 0 ? plane[o[r]] : 0.0f;
      continue;
    }
    if (one_row) {
      int64_t iy = oy[0] * sh - ph + dy, ix = ox[0] * sw - pw + dx;
      if (iy >= 0 && iy < h && ix >= 0 && ix + (CUVIL_MR - 1) * sw < w) {
        const float *src = plane + iy * w + ix;
        for (int r = 0; r < CUVIL_MR; ++r)
          d[r] = src[r * sw];
        continue;
      }
    }
    for (int64_t r = 0; r < CUVIL_MR; ++r) {
      int64_t iy = iy0[r] + dy, ix = ix0[r] + dx;
      d[r] = (uint64_t)iy < (uint64_t)h && (uint64_t)ix < (uint64_t)w ? plane[iy * w + ix] : 0.0f;
    }
  }
}

/* Pixels as the GEMM's rows and output channels as its columns (the
 * vector lanes): for small images, where MR-pixel panels waste less than
 * NR-pixel tiles. Weights are B panels, [groups][ceil(Cout_g / B_PANEL)]
 * [K][B_PANEL]; C is the output transposed (one column per channel). */
static void conv2d_pixel_rows(const int64_t *q, const float *input, const float *weights,
                              const float *bias, const float *residual, float *output,
                              const cuvil_microkernels *mk) {
  int64_t groups = q[CUVIL_CONV_GROUPS];
  int64_t cin_g = q[CUVIL_CONV_C] / groups, cout_g = q[CUVIL_CONV_COUT] / groups;
  int64_t k = cin_g * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  int64_t pixels = q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW];
  int64_t panels = (cout_g + CUVIL_B_PANEL - 1) / CUVIL_B_PANEL;
  int64_t flags = q[CUVIL_CONV_FLAGS];
  for (int64_t image = 0; image < q[CUVIL_CONV_N]; ++image)
    for (int64_t g = 0; g < groups; ++g) {
      im2col_context ctx = {input + (image * q[CUVIL_CONV_C] + g * cin_g) * q[CUVIL_CONV_H] * q[CUVIL_CONV_W], q,
                             mk};
      int64_t out_offset = (image * q[CUVIL_CONV_COUT] + g * cout_g) * pixels;
      cuvil_gemm_problem p = {
          .m = pixels, .n = cout_g, .k = k,
          .pack_a = pack_im2col_rows, .a_context = &ctx,
          .b_panels = weights + g * panels * k * CUVIL_B_PANEL, .a_pack_once = 1,
          .c = output + out_offset, .c_row_stride = 1, .c_col_stride = pixels,
          .bias = (flags & CUVIL_FLAG_BIAS) ? bias + g * cout_g : NULL, .column_bias = 1,
          .residual = (flags & CUVIL_FLAG_RESIDUAL) ? residual + out_offset : NULL,
          .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
          .lo = cuvil_float_from_bits(q[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(q[CUVIL_CONV_HI])};
      cuvil_gemm_run(&p, mk, cuvil_rt_current_exec);
    }
}

void cuvil_rt_conv2d_f32(const int64_t *q, const float *input, const float *weights,
                         const float *bias, const float *residual, float *output) {
  const cuvil_microkernels *mk = cuvil_microkernels_best();
  int64_t groups = q[CUVIL_CONV_GROUPS];
  int64_t cin_g = q[CUVIL_CONV_C] / groups, cout_g = q[CUVIL_CONV_COUT] / groups;
  int64_t k = cin_g * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  int64_t pixels = q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW];
  int64_t panels = (cout_g + CUVIL_MR - 1) / CUVIL_MR;
  int64_t flags = q[CUVIL_CONV_FLAGS];
  if (flags & CUVIL_FLAG_WINOGRAD) {
    cuvil_conv2d_winograd(q, input, weights, bias, residual, output, mk, cuvil_rt_current_exec);
    return;
  }
  if (flags & CUVIL_FLAG_PIXEL_ROWS) {
    conv2d_pixel_rows(q, input, weights, bias, residual, output, mk);
    return;
  }
  for (int64_t image = 0; image < q[CUVIL_CONV_N]; ++image)
    for (int64_t g = 0; g < groups; ++g) {
      im2col_context ctx = {input + (image * q[CUVIL_CONV_C] + g * cin_g) * q[CUVIL_CONV_H] * q[CUVIL_CONV_W], q,
                             mk};
      /* A pointwise convolution's B is the input itself: rows of H x W. */
      int pointwise = q[CUVIL_CONV_KH] == 1 && q[CUVIL_CONV_KW] == 1 && q[CUVIL_CONV_SH] == 1 && q[CUVIL_CONV_SW] == 1 &&
                      q[CUVIL_CONV_PH] == 0 && q[CUVIL_CONV_PW] == 0;
      int64_t out_offset = (image * q[CUVIL_CONV_COUT] + g * cout_g) * pixels;
      cuvil_gemm_problem p = {
          .m = cout_g, .n = pixels, .k = k,
          .a_packed = weights + g * panels * k * CUVIL_MR,
          .pack_b = pack_im2col, .b_context = &ctx,
          .b_direct = pointwise ? ctx.input : NULL, .b_direct_ld = pixels,
          .c = output + out_offset, .c_row_stride = pixels, .c_col_stride = 1,
          .bias = (flags & CUVIL_FLAG_BIAS) ? bias + g * cout_g : NULL,
          .residual = (flags & CUVIL_FLAG_RESIDUAL) ? residual + out_offset : NULL,
          .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
          .lo = cuvil_float_from_bits(q[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(q[CUVIL_CONV_HI])};
      cuvil_gemm_run(&p, mk, cuvil_rt_current_exec);
    }
}

/*--- Depthwise convolution -------------------------------------------------*/

typedef struct depthwise_job {
  cuvil_depthwise_args args;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch;          /* when running without a pool */
  int lanes;               /* units are blocks of vl channels (depthwise_lanes) */
  int64_t blocks_per_image;
} depthwise_job;

/* Channels go a vector at a time (a lane each) where a plane's output rows
 * are shorter than a vector, so that the plane's own rows would waste
 * lanes (7x7 and 14x14 outputs; longer rows are computed a row of vectors
 * at a time, better), and its input is at most this many pixels (the
 * interleaved block stays in L2). */
enum { DW_LANES_MAX_PIXELS = 1024 };

static void depthwise_units(void *closure, int64_t begin, int64_t end) {
  const depthwise_job *job = closure;
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  const int64_t c = job->args.q[CUVIL_CONV_C];
  for (int64_t u = begin; u < end; ++u) {
    if (job->lanes)
      job->mk->depthwise_lanes(&job->args,
                               u / job->blocks_per_image * c +
                                   u % job->blocks_per_image * job->mk->vl,
                               scratch);
    else
      job->mk->depthwise(&job->args, u, scratch);
  }
}

void cuvil_rt_depthwise_conv2d_f32(const int64_t *q, const float *input, const float *weights,
                                   const float *bias, const float *residual, float *output) {
  depthwise_job job = {.args = {q, input, weights, bias, residual, output, 0},
                       .mk = cuvil_microkernels_best(), .exec = cuvil_rt_current_exec};
  const int64_t vl = job.mk->vl;
  const int64_t block_floats =
      ((q[CUVIL_CONV_H] + 2 * q[CUVIL_CONV_PH]) * (q[CUVIL_CONV_W] + 2 * q[CUVIL_CONV_PW]) + q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW]) * vl;
  job.lanes = q[CUVIL_CONV_COUT] == q[CUVIL_CONV_C] && q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW] <= 64 &&
              q[CUVIL_CONV_OW] < vl && q[CUVIL_CONV_H] * q[CUVIL_CONV_W] <= DW_LANES_MAX_PIXELS &&
              block_floats * (int64_t)sizeof(float) <= (int64_t)CUVIL_THREAD_SCRATCH_BYTES;
  job.blocks_per_image = (q[CUVIL_CONV_C] + vl - 1) / vl;
  int64_t units = q[CUVIL_CONV_N] * (job.lanes ? job.blocks_per_image : q[CUVIL_CONV_COUT]);
  int64_t work = q[CUVIL_CONV_N] * q[CUVIL_CONV_COUT] * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  cuvil_run_items(job.exec, units, work, depthwise_units, &job, &job.scratch);
}

/* Max pooling on the depthwise kernels' grid (args.max_pool), plane by
 * plane; the compiler sends only windows that lie inside the padded input
 * (no ceil_mode overhang). */
void cuvil_rt_max_pool2d_f32(const int64_t *q, const float *input, float *output) {
  depthwise_job job = {.args = {q, input, NULL, NULL, NULL, output, 1},
                       .mk = cuvil_microkernels_best(), .exec = cuvil_rt_current_exec};
  int64_t planes = q[CUVIL_CONV_N] * q[CUVIL_CONV_C];
  int64_t work = planes * q[CUVIL_CONV_OH] * q[CUVIL_CONV_OW] * q[CUVIL_CONV_KH] * q[CUVIL_CONV_KW];
  cuvil_run_items(job.exec, planes, work, depthwise_units, &job, &job.scratch);
}

/*--- Linear ----------------------------------------------------------------*/


typedef struct rows_context {
  const float *x; /* [rows][k] */
  int64_t k;
} rows_context;

/* B(k, j) = x[j][k]: the rows of x become columns. */
static void pack_transposed_rows(const void *context, int64_t k0, int64_t kc, int64_t j0,
                                 int64_t n, int64_t nr_stride, float *dst) {
  const rows_context *ctx = context;
  /* Row by row of x: contiguous reads, strided writes into the block. */
  for (int64_t j = 0; j < n; ++j) {
    const float *src = ctx->x + (j0 + j) * ctx->k + k0;
    for (int64_t kk = 0; kk < kc; ++kk)
      dst[kk * nr_stride + j] = src[kk];
  }
  for (int64_t kk = 0; kk < kc && n < nr_stride; ++kk)
    for (int64_t j = n; j < nr_stride; ++j)
      dst[kk * nr_stride + j] = 0.0f;
}

typedef struct matrix_context {
  const float *m; /* row-major, `ld` floats per row */
  int64_t ld;
} matrix_context;

static void pack_rows_panel(const void *context, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
                            float *dst);

/* y[m][n] = x[m][k] . W[n][k]^T (+ bias[n]) (+ residual[m][n]), clamped.
 * With CUVIL_FLAG_PIXEL_ROWS (several rows of x) the weights are B panels and x is
 * packed as A, once per work item (it is small next to the weights, which
 * then stream through once, in order), so y's tiles are stored straight
 * from registers; otherwise
 * (a row or a few: matrix-vector) y^T = W . x^T with the weights packed as
 * A. */
void cuvil_rt_linear_f32(const int64_t *q, const float *x, const float *weights,
                         const float *bias, const float *residual, float *y) {
  int64_t flags = q[CUVIL_LINEAR_FLAGS];
  if (flags & CUVIL_FLAG_PIXEL_ROWS) {
    matrix_context a = {x, q[CUVIL_LINEAR_K]};
    cuvil_gemm_problem p = {
        .m = q[CUVIL_LINEAR_M], .n = q[CUVIL_LINEAR_N], .k = q[CUVIL_LINEAR_K],
        .pack_a = pack_rows_panel, .a_context = &a,
        .b_panels = weights, .a_pack_once = 1,
        .c = y, .c_row_stride = q[CUVIL_LINEAR_N], .c_col_stride = 1,
        .bias = (flags & CUVIL_FLAG_BIAS) ? bias : NULL, .column_bias = 1,
        .residual = (flags & CUVIL_FLAG_RESIDUAL) ? residual : NULL,
        .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(q[CUVIL_LINEAR_LO]), .hi = cuvil_float_from_bits(q[CUVIL_LINEAR_HI])};
    cuvil_gemm_run(&p, cuvil_microkernels_best(), cuvil_rt_current_exec);
    return;
  }
  rows_context ctx = {x, q[CUVIL_LINEAR_K]};
  cuvil_gemm_problem p = {
      .m = q[CUVIL_LINEAR_N], .n = q[CUVIL_LINEAR_M], .k = q[CUVIL_LINEAR_K],
      .a_packed = weights,
      .pack_b = pack_transposed_rows, .b_context = &ctx,
      .c = y, .c_row_stride = 1, .c_col_stride = q[CUVIL_LINEAR_N],
      .bias = (flags & CUVIL_FLAG_BIAS) ? bias : NULL,
      .residual = (flags & CUVIL_FLAG_RESIDUAL) ? residual : NULL,
      .clamp = (flags & CUVIL_FLAG_CLAMP) != 0,
      .lo = cuvil_float_from_bits(q[CUVIL_LINEAR_LO]), .hi = cuvil_float_from_bits(q[CUVIL_LINEAR_HI])};
  cuvil_gemm_run(&p, cuvil_microkernels_best(), cuvil_rt_current_exec);
}

/*--- Matrix products of two run-time operands -------------------------------*/


/* A(i, k) = m[i][k] into [kc][MR] (rows past `rows` zero). */
static void pack_rows_panel(const void *context, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
                            float *dst) {
  const matrix_context *ctx = context;
  if (rows == CUVIL_MR) {
    /* A full panel: eight rows read side by side, the panel written in
     * order (the compiler turns this into an in-register transpose). */
    const float *src[CUVIL_MR];
    for (int r = 0; r < CUVIL_MR; ++r)
      src[r] = ctx->m + (i0 + r) * ctx->ld + k0;
    for (int64_t k = 0; k < kc; ++k)
      for (int r = 0; r < CUVIL_MR; ++r)
        dst[k * CUVIL_MR + r] = src[r][k];
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float *src = ctx->m + (i0 + r) * ctx->ld + k0;
    for (int64_t k = 0; k < kc; ++k)
      dst[k * CUVIL_MR + r] = src[k];
  }
  for (int64_t r = rows; r < CUVIL_MR; ++r)
    for (int64_t k = 0; k < kc; ++k)
      dst[k * CUVIL_MR + r] = 0.0f;
}

/* B(k, j) = m[k][j]: rows are contiguous already. */
static void pack_row_major_b(const void *context, int64_t k0, int64_t kc, int64_t j0, int64_t n,
                             int64_t nr_stride, float *dst) {
  const matrix_context *ctx = context;
  for (int64_t k = 0; k < kc; ++k) {
    float *row = dst + k * nr_stride;
    memcpy(row, ctx->m + (k0 + k) * ctx->ld + j0, (size_t)n * sizeof(float));
    for (int64_t j = n; j < nr_stride; ++j)
      row[j] = 0.0f;
  }
}

void cuvil_rt_matmul_f32(const int64_t *q, const float *a, const float *b, float *c) {
  const cuvil_microkernels *mk = cuvil_microkernels_best();
  int64_t m = q[CUVIL_MATMUL_M], k = q[CUVIL_MATMUL_K], n = q[CUVIL_MATMUL_N];
  for (int64_t i = 0; i < q[CUVIL_MATMUL_BATCH]; ++i) {
    matrix_context actx = {a + i * q[CUVIL_MATMUL_A_BATCH_STRIDE], k};
    matrix_context bctx = {b + i * q[CUVIL_MATMUL_B_BATCH_STRIDE], n};
    cuvil_gemm_problem p = {
        .m = m, .n = n, .k = k,
        .pack_a = pack_rows_panel, .a_context = &actx,
        .pack_b = pack_row_major_b, .b_context = &bctx,
        .b_direct = bctx.m, .b_direct_ld = n,
        .c = c + i * m * n, .c_row_stride = n, .c_col_stride = 1};
    cuvil_gemm_run(&p, mk, cuvil_rt_current_exec);
  }
}

/*--- Depthwise then pointwise, in bands of rows ----------------------------*/

/* A 3x3 stride-1 depthwise convolution whose output only feeds a pointwise
 * one, band by band: a band's depthwise output (every channel) stays in the
 * thread's scratch, in cache, for the pointwise GEMM, instead of a whole
 * tensor written out and read back (the first block of mobile networks:
 * 32 x 112 x 112 floats, 1.6 MB, past L2). */
enum { GEMM_SCRATCH_FLOATS = KC * NC + MC * NC + MC * KC };

/* Bands of at most `rows` of an image's `total` rows, as many per image as
 * make them a multiple of the threads when there is one image (every
 * thread a share); sets the rows per band and the bands per image. */
static void split_bands(int64_t total, int64_t rows, int64_t images, void *exec,
                        int64_t *band_rows, int64_t *bands) {
  int64_t threads = cuvil_thread_pool_size(exec), n = (total + rows - 1) / rows;
  if (images == 1 && threads > 1)
    n = (n + threads - 1) / threads * threads;
  *band_rows = (total + n - 1) / n;
  *bands = (total + *band_rows - 1) / *band_rows;
}

typedef struct dwpw_job {
  const int64_t *qd, *qp;
  const float *input, *dw_weights, *dw_bias, *pw_weights, *pw_bias, *residual;
  float *output;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch; /* when running without a pool */
  int64_t band_rows, bands; /* bands per image */
} dwpw_job;

static void dwpw_items(void *closure, int64_t begin, int64_t end) {
  const dwpw_job *job = closure;
  const int64_t *qd = job->qd, *qp = job->qp;
  const int64_t c = qd[CUVIL_CONV_C], h = qd[CUVIL_CONV_H], w = qd[CUVIL_CONV_W], cout = qp[CUVIL_CONV_COUT];
  const int64_t pixels = h * w;
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  float *band = scratch + GEMM_SCRATCH_FLOATS;   /* [c][rows * w] */
  float *pad = band + c * job->band_rows * w;     /* (rows + 2) x (w + 2) */
  const float lo_d = cuvil_float_from_bits(qd[CUVIL_CONV_LO]), hi_d = cuvil_float_from_bits(qd[CUVIL_CONV_HI]);
  const int64_t fd = qd[CUVIL_CONV_FLAGS], fp = qp[CUVIL_CONV_FLAGS];
  for (int64_t item = begin; item < end; ++item) {
    const int64_t image = item / job->bands, r0 = item % job->bands * job->band_rows;
    const int64_t rows = h - r0 < job->band_rows ? h - r0 : job->band_rows;
    for (int64_t ci = 0; ci < c; ++ci)
      job->mk->depthwise3x3_band(job->input + (image * c + ci) * pixels, 0, h, w, r0, rows, 1,
                                 job->dw_weights + ci * 9,
                                 (fd & CUVIL_FLAG_BIAS) ? job->dw_bias[ci] : 0.0f,
                                 (fd & CUVIL_FLAG_CLAMP) != 0, lo_d, hi_d, pad, band + ci * rows * w);
    matrix_context b = {band, rows * w};
    const int64_t out_offset = image * cout * pixels + r0 * w;
    cuvil_gemm_problem p = {
        .m = cout, .n = rows * w, .k = c,
        .a_packed = job->pw_weights,
        .pack_b = pack_row_major_b, .b_context = &b,
        .b_direct = band, .b_direct_ld = rows * w,
        .c = job->output + out_offset, .c_row_stride = pixels, .c_col_stride = 1,
        .bias = (fp & CUVIL_FLAG_BIAS) ? job->pw_bias : NULL,
        .residual = (fp & CUVIL_FLAG_RESIDUAL) ? job->residual + out_offset : NULL,
        .clamp = (fp & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(qp[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(qp[CUVIL_CONV_HI])};
    gemm_run_here(&p, job->mk, scratch);
  }
}

void cuvil_rt_depthwise_pointwise_f32(const int64_t *q, const float *input,
                                      const float *dw_weights, const float *dw_bias,
                                      const float *pw_weights, const float *pw_bias,
                                      const float *residual, float *output) {
  dwpw_job job = {.qd = q, .qp = q + CUVIL_CONV_NUM_PARAMS, .input = input,
                  .dw_weights = dw_weights, .dw_bias = dw_bias, .pw_weights = pw_weights,
                  .pw_bias = pw_bias, .residual = residual, .output = output,
                  .mk = cuvil_microkernels_best(), .exec = cuvil_rt_current_exec};
  const int64_t c = q[CUVIL_CONV_C], h = q[CUVIL_CONV_H], w = q[CUVIL_CONV_W];
  /* Bands of about 64 Ki floats of depthwise output (256 KiB: in L2 with
   * the GEMM's blocks); the scratch past the GEMM's holds a band and its
   * padded input rows. */
  const int64_t left = (int64_t)(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float)) - GEMM_SCRATCH_FLOATS;
  int64_t rows = 65536 / (c * w);
  while (rows > 1 && c * rows * w + (rows + 2) * (w + 2) > left)
    --rows;
  if (rows < 1)
    rows = 1;
  split_bands(h, rows, q[CUVIL_CONV_N], job.exec, &job.band_rows, &job.bands);
  int64_t work = q[CUVIL_CONV_N] * h * w * c * (9 + q[CUVIL_CONV_NUM_PARAMS + CUVIL_CONV_COUT]);
  cuvil_run_items(job.exec, q[CUVIL_CONV_N] * job.bands, work, dwpw_items, &job, &job.scratch);
}

/*--- Pointwise then depthwise, in bands of rows ----------------------------*/

/* A 1x1 convolution (an inverted residual block's expansion) whose output
 * only feeds a 3x3 depthwise one (stride 1 or 2, padding 1), band by band:
 * the band's expanded rows (every channel) go into the thread's scratch, in
 * cache, for the depthwise rows, instead of a whole tensor written out and
 * read back (mobilenet_v2's 96 x 112 x 112 floats, 4.8 MB). Consecutive
 * bands of one work range share input rows (2 at stride 1, 1 at stride 2):
 * those are moved to the front of the band, not computed again. */
typedef struct pwdw_job {
  const int64_t *qp, *qd;
  const float *input, *pw_weights, *pw_bias, *dw_weights, *dw_bias;
  float *output;
  const cuvil_microkernels *mk;
  void *exec;
  float *scratch;           /* when running without a pool */
  int64_t band_rows, bands; /* output rows per band, bands per image */
  int64_t slot;             /* floats per channel in the band buffer */
} pwdw_job;

static void pwdw_items(void *closure, int64_t begin, int64_t end) {
  const pwdw_job *job = closure;
  const int64_t *qp = job->qp, *qd = job->qd;
  const int64_t cin = qp[CUVIL_CONV_C], c = qp[CUVIL_CONV_COUT], h = qp[CUVIL_CONV_H], w = qp[CUVIL_CONV_W];
  const int64_t s = qd[CUVIL_CONV_SH], oh = qd[CUVIL_CONV_OH], ow = qd[CUVIL_CONV_OW];
  float *scratch = job->scratch ? job->scratch : cuvil_thread_pool_scratch(job->exec);
  float *band = scratch + GEMM_SCRATCH_FLOATS; /* [c][slot]: input rows [lo, hi) */
  float *pad = band + c * job->slot;
  const float lo_d = cuvil_float_from_bits(qd[CUVIL_CONV_LO]), hi_d = cuvil_float_from_bits(qd[CUVIL_CONV_HI]);
  const int64_t fp = qp[CUVIL_CONV_FLAGS], fd = qd[CUVIL_CONV_FLAGS];
  int64_t prev_lo = 0, prev_hi = 0; /* rows held from the item before (same image) */
  for (int64_t item = begin; item < end; ++item) {
    const int64_t image = item / job->bands, o0 = item % job->bands * job->band_rows;
    const int64_t rows = oh - o0 < job->band_rows ? oh - o0 : job->band_rows;
    /* Input rows the band's output rows read: [o0 s - 1, (o0 + rows - 1) s + 1]. */
    const int64_t lo = o0 * s - 1 < 0 ? 0 : o0 * s - 1;
    const int64_t hi = (o0 + rows - 1) * s + 2 > h ? h : (o0 + rows - 1) * s + 2;
    int64_t from = lo; /* first row to compute */
    if (item > begin && o0 > 0 && prev_hi > lo && prev_lo <= lo) {
      for (int64_t ci = 0; ci < c; ++ci)
        memmove(band + ci * job->slot, band + ci * job->slot + (lo - prev_lo) * w,
                (size_t)((prev_hi - lo) * w) * sizeof(float));
      from = prev_hi;
    }
    prev_lo = lo, prev_hi = hi;
    const float *src = job->input + image * cin * h * w + from * w;
    matrix_context b = {src, h * w};
    cuvil_gemm_problem p = {
        .m = c, .n = (hi - from) * w, .k = cin,
        .a_packed = job->pw_weights,
        .pack_b = pack_row_major_b, .b_context = &b,
        .b_direct = src, .b_direct_ld = h * w,
        .c = band + (from - lo) * w, .c_row_stride = job->slot, .c_col_stride = 1,
        .bias = (fp & CUVIL_FLAG_BIAS) ? job->pw_bias : NULL,
        .clamp = (fp & CUVIL_FLAG_CLAMP) != 0,
        .lo = cuvil_float_from_bits(qp[CUVIL_CONV_LO]), .hi = cuvil_float_from_bits(qp[CUVIL_CONV_HI])};
    gemm_run_here(&p, job->mk, scratch);
    for (int64_t ci = 0; ci < c; ++ci)
      job->mk->depthwise3x3_band(band + ci * job->slot, lo, h, w, o0, rows, (int)s,
                                 job->dw_weights + ci * 9,
                                 (fd & CUVIL_FLAG_BIAS) ? job->dw_bias[ci] : 0.0f,
                                 (fd & CUVIL_FLAG_CLAMP) != 0, lo_d, hi_d, pad,
                                 job->output + (image * c + ci) * oh * ow + o0 * ow);
  }
}

void cuvil_rt_pointwise_depthwise_f32(const int64_t *q, const float *input,
                                      const float *pw_weights, const float *pw_bias,
                                      const float *dw_weights, const float *dw_bias,
                                      float *output) {
  pwdw_job job = {.qp = q, .qd = q + CUVIL_CONV_NUM_PARAMS, .input = input,
                  .pw_weights = pw_weights, .pw_bias = pw_bias, .dw_weights = dw_weights,
                  .dw_bias = dw_bias, .output = output, .mk = cuvil_microkernels_best(),
                  .exec = cuvil_rt_current_exec};
  const int64_t c = q[CUVIL_CONV_COUT], w = q[CUVIL_CONV_W], s = job.qd[CUVIL_CONV_SH], oh = job.qd[CUVIL_CONV_OH];
  /* Bands of about 96 Ki floats of expanded rows (384 KiB: in L2 with the
   * GEMM's blocks), at least 3 rows; the scratch past the GEMM's holds the
   * band and the depthwise rows' padding. */
  const int64_t left = (int64_t)(CUVIL_THREAD_SCRATCH_BYTES / sizeof(float)) - GEMM_SCRATCH_FLOATS;
  int64_t in_rows = 98304 / (c * w);
  if (in_rows < 3)
    in_rows = 3;
  int64_t rows = (in_rows - 3) / s + 1; /* output rows whose input rows fit */
  split_bands(oh, rows, q[CUVIL_CONV_N], job.exec, &job.band_rows, &job.bands);
  job.slot = ((job.band_rows - 1) * s + 3) * w;
  if (c * job.slot + (job.band_rows + 2) * (w + 2) > left) {
    /* Past the ABI's C x W bound (the compiler never calls it so): NaN, not
     * a silent partial result. */
    for (int64_t i = 0; i < q[CUVIL_CONV_N] * c * oh * job.qd[CUVIL_CONV_OW]; ++i)
      output[i] = NAN;
    return;
  }
  int64_t work = q[CUVIL_CONV_N] * c * (q[CUVIL_CONV_H] * w * q[CUVIL_CONV_C] + oh * job.qd[CUVIL_CONV_OW] * 9);
  cuvil_run_items(job.exec, q[CUVIL_CONV_N] * job.bands, work, pwdw_items, &job, &job.scratch);
}
