/*===- runtime/cpu/gemm.c - Blocked GEMM driver and packing ----------------===*
 *
 * The driver splits C into work items (a column tile of NR, or of all N
 * when N is narrow, times a chunk of MR-row panels), spreads them over the
 * model's threads, packs B per K-block into a buffer that stays in L1,
 * accumulates each tile in a small buffer, and applies the epilogue (bias,
 * residual, clamp) once, while the tile is still in cache.
 *
 *===----------------------------------------------------------------------===*/
#include "gemm.h"
#include "schedule.h"

#include <string.h>

/* Blocking (floats): a K-block of B for one column tile (KC x NR = 32 KiB at
 * NR = 32) stays in L1 while the row panels of A's K-block stream from L2
 * (MC x KC = 256 KiB; packed here too when A is not a constant); an item
 * packs B for up to NC columns at once, so A's block is read from memory
 * once for all of them (thin outputs with large
 * weights, like resnet's last stage, would otherwise re-read the weights
 * for every tile). */
enum { KC = CUVIL_GEMM_KC, MC = CUVIL_GEMM_MC, NC = CUVIL_GEMM_NC };
_Static_assert((size_t)(KC * NC + MC * NC + MC * KC) * sizeof(float) <=
                   CUVIL_THREAD_SCRATCH_BYTES,
               "the blocks must fit in a thread's scratch");

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
  job.tile_major = p->split != CUVIL_SPLIT_STREAM && p->a_pack_once && p->b_panels && !job.narrow &&
                   job.n_blocks == 1 && p->k > 0 &&
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
  /* A tuned split: more, smaller items (the threads balance better, each
   * packs more), or the blocks as planned. */
  if (p->split == CUVIL_SPLIT_FINE && exec && threads > 1) {
    if (p->a_pack_once)
      while (job.m_blocks < job.m_panels && job.m_blocks * job.n_blocks < 8 * threads)
        ++job.m_blocks;
    else
      while (job.n_blocks < n_tiles && job.m_blocks * job.n_blocks < 8 * threads)
        ++job.n_blocks;
  }
  if (exec && threads > 1 && p->split != CUVIL_SPLIT_WHOLE) {
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

void cuvil_gemm_run_here(const cuvil_gemm_problem *p, const cuvil_microkernels *mk,
                         float *scratch) {
  if (p->m <= 0 || p->n <= 0)
    return;
  gemm_job job = {.p = p, .mk = mk, .exec = NULL};
  gemm_plan(&job);
  job.scratch = scratch;
  gemm_items(&job, 0, job.m_blocks * job.n_blocks);
}

/*--- Packing row-major operands --------------------------------------------*/

/* A(i, k) = m[i][k] into [kc][MR] (rows past `rows` zero). */
void cuvil_gemm_pack_a_rows(const void *context, int64_t i0, int64_t rows, int64_t k0, int64_t kc,
                     float *dst) {
  const cuvil_gemm_matrix *ctx = context;
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
void cuvil_gemm_pack_b_rows(const void *context, int64_t k0, int64_t kc, int64_t j0, int64_t n,
                      int64_t nr_stride, float *dst) {
  const cuvil_gemm_matrix *ctx = context;
  for (int64_t k = 0; k < kc; ++k) {
    float *row = dst + k * nr_stride;
    memcpy(row, ctx->m + (k0 + k) * ctx->ld + j0, (size_t)n * sizeof(float));
    for (int64_t j = n; j < nr_stride; ++j)
      row[j] = 0.0f;
  }
}
