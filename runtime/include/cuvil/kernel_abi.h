/*===- cuvil/kernel_abi.h - Parameters of the runtime's kernel calls ------===*
 *
 * The compiled code passes each kernel a params array of int64s; the
 * positions are named here, in one header the compiler (which writes the
 * arrays) and the runtime (which reads them) both include, so that the two
 * cannot drift apart. Not part of the public C API.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_KERNEL_ABI_H
#define CUVIL_KERNEL_ABI_H

/* cuvil_rt_sort(params, input, values, indices, scratch): lines of `len`
 * elements, `inner` apart, `outer` * `inner` of them; scratch holds 2 * len
 * int64s. dtype is a cuvil_dtype. */
enum {
  CUVIL_SORT_DTYPE = 0,
  CUVIL_SORT_OUTER = 1,
  CUVIL_SORT_LEN = 2,
  CUVIL_SORT_INNER = 3,
  CUVIL_SORT_DESCENDING = 4,
  CUVIL_SORT_PARAMS = 5
};

/* Dense linear algebra (runtime/cpu/linalg.h, which gives the buffers'
 * shapes and the scratch sizes), each as cuvil_rt_<kernel>_{f32,f64}.
 * cuvil_rt_lu(params, a, lu, pivots, info, scratch): getrf. */
enum {
  CUVIL_LU_BATCH = 0,
  CUVIL_LU_M = 1,
  CUVIL_LU_N = 2,
  CUVIL_LU_PARAMS = 3
};

/* cuvil_rt_cholesky(params, a, out, info, scratch): potrf. */
enum {
  CUVIL_CHOLESKY_BATCH = 0,
  CUVIL_CHOLESKY_N = 1,
  CUVIL_CHOLESKY_UPPER = 2,
  CUVIL_CHOLESKY_PARAMS = 3
};

/* cuvil_rt_triangular_solve(params, a, b, x, scratch): A X = B (left) or
 * X A = B, A n x n, X n x k (left) or k x n. */
enum {
  CUVIL_TRIANGULAR_SOLVE_BATCH = 0,
  CUVIL_TRIANGULAR_SOLVE_N = 1,
  CUVIL_TRIANGULAR_SOLVE_K = 2,
  CUVIL_TRIANGULAR_SOLVE_UPPER = 3,
  CUVIL_TRIANGULAR_SOLVE_LEFT = 4,
  CUVIL_TRIANGULAR_SOLVE_UNITRIANGULAR = 5,
  CUVIL_TRIANGULAR_SOLVE_PARAMS = 6
};

/* cuvil_rt_geqrf(params, a, qr, tau, scratch). */
enum {
  CUVIL_GEQRF_BATCH = 0,
  CUVIL_GEQRF_M = 1,
  CUVIL_GEQRF_N = 2,
  CUVIL_GEQRF_PARAMS = 3
};

/* cuvil_rt_householder_product(params, v, tau, q, scratch): orgqr, m x n
 * from k reflectors. */
enum {
  CUVIL_HOUSEHOLDER_PRODUCT_BATCH = 0,
  CUVIL_HOUSEHOLDER_PRODUCT_M = 1,
  CUVIL_HOUSEHOLDER_PRODUCT_N = 2,
  CUVIL_HOUSEHOLDER_PRODUCT_K = 3,
  CUVIL_HOUSEHOLDER_PRODUCT_PARAMS = 4
};

/* cuvil_rt_ormqr(params, v, tau, c, out, scratch): C m x n; v has v_cols
 * columns of which the first k are the reflectors. */
enum {
  CUVIL_ORMQR_BATCH = 0,
  CUVIL_ORMQR_M = 1,
  CUVIL_ORMQR_N = 2,
  CUVIL_ORMQR_K = 3,
  CUVIL_ORMQR_LEFT = 4,
  CUVIL_ORMQR_TRANSPOSE = 5,
  CUVIL_ORMQR_V_COLS = 6,
  CUVIL_ORMQR_PARAMS = 7
};

/* cuvil_rt_eigh(params, a, w, v, scratch). */
enum {
  CUVIL_EIGH_BATCH = 0,
  CUVIL_EIGH_N = 1,
  CUVIL_EIGH_UPPER = 2,
  CUVIL_EIGH_VECTORS = 3,
  CUVIL_EIGH_PARAMS = 4
};

/* cuvil_rt_svd(params, a, u, s, vh, scratch). */
enum {
  CUVIL_SVD_BATCH = 0,
  CUVIL_SVD_M = 1,
  CUVIL_SVD_N = 2,
  CUVIL_SVD_FULL_MATRICES = 3,
  CUVIL_SVD_COMPUTE_UV = 4,
  CUVIL_SVD_PARAMS = 5
};

/*--- The GEMM family (runtime/cpu/): convolution, linear, matmul ------------
 * The compiler (targets/CPU/SelectKernels.cpp) packs weights and writes
 * these parameter arrays; the runtime reads them. Every array starts with
 * CUVIL_KERNEL_PARAMS_VERSION and ends with the A-panel height it was
 * packed for (CUVIL_MR), so that it records what it was made for
 * (test/runtime/KernelAbiTest.cpp runs the kernels on arrays built by these
 * names). */
#define CUVIL_KERNEL_PARAMS_VERSION 1
/* Rows of A per packed panel: A is stored [ceil(M/MR)][K][MR], zero-padded. */
#define CUVIL_MR 8
/* Columns per panel of a B operand packed at compile time: [ceil(N/BP)][K]
 * [BP]. Every micro-kernel's NR divides it, so a tile reads its columns in
 * place (rows BP floats apart). */
#define CUVIL_B_PANEL 32
/* Input channels per block of a Winograd convolution's products: the
 * transformed weights U are packed at compile time in the order the blocks
 * read them, [ceil(C/KC)][36][ceil(Cout/MR)][kc][MR] (kc = KC but for the
 * last block; 16 positions for F(2x2, 3x3)), so that U streams from memory
 * as one sequential run. */
#define CUVIL_WINO_KC 128

/* cuvil_rt_conv2d, depthwise, pooling and the fused pairs. LO/HI: the
 * clamp's bounds as float bits. */
enum {
  CUVIL_CONV_VERSION, CUVIL_CONV_N, CUVIL_CONV_C, CUVIL_CONV_H, CUVIL_CONV_W, CUVIL_CONV_COUT,
  CUVIL_CONV_OH, CUVIL_CONV_OW, CUVIL_CONV_KH, CUVIL_CONV_KW, CUVIL_CONV_SH, CUVIL_CONV_SW,
  CUVIL_CONV_PH, CUVIL_CONV_PW, CUVIL_CONV_DH, CUVIL_CONV_DW, CUVIL_CONV_GROUPS, CUVIL_CONV_FLAGS,
  CUVIL_CONV_LO, CUVIL_CONV_HI, CUVIL_CONV_MR, CUVIL_CONV_NUM_PARAMS
};
/* cuvil_rt_linear: y[m][n] = x[m][k] . W^T. */
enum {
  CUVIL_LINEAR_VERSION, CUVIL_LINEAR_M, CUVIL_LINEAR_K, CUVIL_LINEAR_N, CUVIL_LINEAR_FLAGS,
  CUVIL_LINEAR_LO, CUVIL_LINEAR_HI, CUVIL_LINEAR_MR, CUVIL_LINEAR_NUM_PARAMS
};
/* cuvil_rt_matmul: batch products of two run-time operands (B's batch
 * stride 0: one B shared by the batch). */
enum {
  CUVIL_MATMUL_VERSION, CUVIL_MATMUL_BATCH, CUVIL_MATMUL_M, CUVIL_MATMUL_K, CUVIL_MATMUL_N,
  CUVIL_MATMUL_A_BATCH_STRIDE, CUVIL_MATMUL_B_BATCH_STRIDE, CUVIL_MATMUL_MR,
  CUVIL_MATMUL_NUM_PARAMS
};
/* The FLAGS entry. PIXEL_ROWS: convolutions with the image's pixels as the
 * GEMM's rows, linear layers with x's rows as the GEMM's rows; the weights
 * are then B panels (CUVIL_B_PANEL). WINOGRAD2 (with WINOGRAD): F(2x2, 3x3)
 * rather than F(4x4, 3x3). */
enum {
  CUVIL_FLAG_BIAS = 1,
  CUVIL_FLAG_RESIDUAL = 2,
  CUVIL_FLAG_CLAMP = 4,
  CUVIL_FLAG_WINOGRAD = 8,
  CUVIL_FLAG_PIXEL_ROWS = 16,
  CUVIL_FLAG_WINOGRAD2 = 32
};
/* The GEMM's work split (a tuned schedule; the runtime's own plan without
 * one), in the FLAGS entry at CUVIL_FLAG_SPLIT_SHIFT: FINE, at least eight
 * work items per thread; WHOLE, the blocks as planned, not rounded to a
 * multiple of the threads; STREAM, B streamed per K-block rather than A's
 * panels packed whole tile by tile. FINE and WHOLE give the same bits as
 * the plan; STREAM sums K in blocks (last-bit differences). */
enum {
  CUVIL_SPLIT_AUTO = 0,
  CUVIL_SPLIT_FINE = 1,
  CUVIL_SPLIT_WHOLE = 2,
  CUVIL_SPLIT_STREAM = 3,
  CUVIL_FLAG_SPLIT_SHIFT = 8,
  CUVIL_FLAG_SPLIT_MASK = 3 << 8
};
#define CUVIL_SPLIT_OF(flags) ((int)(((flags) & CUVIL_FLAG_SPLIT_MASK) >> CUVIL_FLAG_SPLIT_SHIFT))

/* cuvil_rt_dft(params, x, out, scratch): a complex DFT along rows (fft.h). */
enum {
  CUVIL_DFT_BATCH = 0,
  CUVIL_DFT_N = 1,
  CUVIL_DFT_INVERSE = 2,
  CUVIL_DFT_PARAMS = 3
};

/* Scratch sizes, in doubles, of the linear-algebra kernels (linalg.h):
 * the compiler allocates them, the kernels rely on them. */
#include <stdint.h>
#define CUVIL_LINALG_MIN(a, b) ((int64_t)(a) < (int64_t)(b) ? (int64_t)(a) : (int64_t)(b))
#define CUVIL_LINALG_MAX(a, b) ((int64_t)(a) > (int64_t)(b) ? (int64_t)(a) : (int64_t)(b))
#define CUVIL_LU_SCRATCH(m, n) ((int64_t)(m) * (int64_t)(n))
#define CUVIL_CHOLESKY_SCRATCH(n) ((int64_t)(n) * (int64_t)(n))
#define CUVIL_TRIANGULAR_SOLVE_SCRATCH(n, k)                                                    \
  ((int64_t)(n) * (int64_t)(n) + (int64_t)(n) * (int64_t)(k))
#define CUVIL_GEQRF_SCRATCH(m, n)                                                               \
  ((int64_t)(m) * (int64_t)(n) + (int64_t)(n) + CUVIL_LINALG_MIN(m, n))
#define CUVIL_HOUSEHOLDER_PRODUCT_SCRATCH(m, n) ((int64_t)(m) * (int64_t)(n) + (int64_t)(n))
#define CUVIL_ORMQR_SCRATCH(m, n, k, left)                                                      \
  ((int64_t)(m) * (int64_t)(n) + ((left) ? (int64_t)(m) : (int64_t)(n)) * (int64_t)(k) +      \
   CUVIL_LINALG_MAX(m, n))
#define CUVIL_EIGH_SCRATCH(n) (2 * (int64_t)(n) * (int64_t)(n) + (int64_t)(n))
#define CUVIL_SVD_SCRATCH(m, n, full_matrices)                                                  \
  (CUVIL_LINALG_MIN(m, n) * (CUVIL_LINALG_MAX(m, n) + CUVIL_LINALG_MIN(m, n) + 2) +             \
   ((full_matrices) ? CUVIL_LINALG_MAX(m, n) : CUVIL_LINALG_MIN(m, n)) *                        \
       (CUVIL_LINALG_MAX(m, n) + 1) +                                                           \
   CUVIL_LINALG_MAX(m, n))

/*--- int8 products (runtime/cpu/qgemm.c) -------------------------------------
 * u8 activations x s8 weights (zero point 0), int32 accumulation, and the
 * requantize epilogue of dialects/Cuvil/IR/QuantArithmetic.h per output
 * channel c: y = clamp(y_zero + nearbyint(float(acc + offset[c]) *
 * multiplier[c]), y_min, y_max), where offset[c] = bias_q[c] - x_zero *
 * sum_k w[c][k] (int32, wrapping) folds the input's zero point and the
 * quantized bias in at compile time. K is padded to CUVIL_QK (zero
 * weights). With Y_FLOAT (1) the output is f32 instead, the sums
 * dequantized: y = float(acc + offset[c]) * multiplier[c], the multiplier
 * being float(sx) * float(sw[c]). With Y_ONEDNN (1) the epilogue is
 * oneDNN's (QuantArithmetic.h's onednnRequantize): offset[c] = -x_zero *
 * sum_k w[c][k] only, and the multiplier array continues with the bias
 * scaled into the sums' domain, bias[c] (Cout floats): y = clamp(nearbyint(
 * (float(acc + offset[c]) + bias[c]) * multiplier[c] + y_zero)), each step
 * rounded to float (f32: (float(acc + offset[c]) + bias[c]) * multiplier[c]). */
#define CUVIL_QK 4
/* Output channels per packed weight panel of cuvil_rt_qlinear_u8s8:
 * [ceil(N/QN)][Kp/4][QN][4]. */
#define CUVIL_QN 16
/* The largest padded K the int8 kernels take (a tile of patches lives in
 * a thread's scratch); larger layers use the generic lowering. */
#define CUVIL_QCONV_MAX_KP 40960
/* cuvil_rt_qconv2d_u8s8(params, input u8 NCHW, weights s8 [Cout][Kp],
 * offset i32[Cout], multiplier f32[Cout], workspace, output u8 NCHW). The
 * workspace (cuvil_qconv_workspace_bytes) receives the input with its zero
 * point around it and 4 channels interleaved, [N][groups][quads][H + 2PH]
 * [W + 2PW][4]; K is ordered (kh, kw, channel) with each group's channels
 * padded to quads (zero weights): Kp = KH * KW * 4 * quads. */
enum {
  CUVIL_QCONV_VERSION, CUVIL_QCONV_N, CUVIL_QCONV_C, CUVIL_QCONV_H, CUVIL_QCONV_W,
  CUVIL_QCONV_COUT, CUVIL_QCONV_OH, CUVIL_QCONV_OW, CUVIL_QCONV_KH, CUVIL_QCONV_KW,
  CUVIL_QCONV_SH, CUVIL_QCONV_SW, CUVIL_QCONV_PH, CUVIL_QCONV_PW, CUVIL_QCONV_DH, CUVIL_QCONV_DW,
  CUVIL_QCONV_GROUPS, CUVIL_QCONV_X_ZERO, CUVIL_QCONV_Y_ZERO, CUVIL_QCONV_Y_MIN, CUVIL_QCONV_Y_MAX,
  CUVIL_QCONV_Y_FLOAT, CUVIL_QCONV_Y_ONEDNN, CUVIL_QCONV_NUM_PARAMS
};
/* cuvil_rt_qlinear_u8s8(params, x u8 [M][K], weights s8 panels, offset
 * i32[N], multiplier f32[N], y u8 [M][N]). */
enum {
  CUVIL_QLINEAR_VERSION, CUVIL_QLINEAR_M, CUVIL_QLINEAR_K, CUVIL_QLINEAR_N, CUVIL_QLINEAR_X_ZERO,
  CUVIL_QLINEAR_Y_ZERO, CUVIL_QLINEAR_Y_MIN, CUVIL_QLINEAR_Y_MAX, CUVIL_QLINEAR_Y_FLOAT,
  CUVIL_QLINEAR_Y_ONEDNN, CUVIL_QLINEAR_NUM_PARAMS
};
/* Padded K of the int8 kernels. */
static inline int64_t cuvil_qk_padded(int64_t k) { return (k + CUVIL_QK - 1) / CUVIL_QK * CUVIL_QK; }
/* Groups of 4 input channels per convolution group. */
static inline int64_t cuvil_qconv_quads(const int64_t *q) {
  return (q[CUVIL_QCONV_C] / q[CUVIL_QCONV_GROUPS] + 3) / 4;
}
static inline int64_t cuvil_qconv_kp(const int64_t *q) {
  return q[CUVIL_QCONV_KH] * q[CUVIL_QCONV_KW] * 4 * cuvil_qconv_quads(q);
}
/* Convolutions with few input channels (a network's stem: 3 channels,
 * 7x7 / 2) fill the 4 bytes of each K word with channels poorly (3 of 4,
 * and a 1-channel layer 1 of 4). Such layers (groups 1, stride S of 1, 2
 * or 4 along both axes, no column dilation, rows of 16 pixels or more) may
 * instead take 4 adjacent input columns of one channel as a word: a row of
 * KW taps is ceil(KW / 4) words, K is (channel, kh, word). The number of
 * such words a kernel row, where that makes K shorter; else 0. The
 * kernels then expand each padded input row into these words at every
 * S-th column (cuvil_qconv_column_bytes) and repack the weights. */
static inline int64_t cuvil_qconv_column_quads(const int64_t *q) {
  const int64_t S = q[CUVIL_QCONV_SH], nq = (q[CUVIL_QCONV_KW] + 3) / 4;
  if (q[CUVIL_QCONV_GROUPS] != 1 || q[CUVIL_QCONV_DW] != 1 || q[CUVIL_QCONV_SW] != S ||
      (S != 1 && S != 2 && S != 4) || q[CUVIL_QCONV_OW] < 16 || q[CUVIL_QCONV_KW] < 2)
    return 0;
  return q[CUVIL_QCONV_C] * nq < q[CUVIL_QCONV_KW] * cuvil_qconv_quads(q) ? nq : 0;
}
/* That form's padded rows (rounded up to S, for its S row phases) and
 * words a row (OW + (words - 1) 4 / S: the last output's last word). */
static inline int64_t cuvil_qconv_column_rows(const int64_t *q) {
  const int64_t S = q[CUVIL_QCONV_SH];
  return (q[CUVIL_QCONV_H] + 2 * q[CUVIL_QCONV_PH] + S - 1) / S * S;
}
static inline int64_t cuvil_qconv_column_row_words(const int64_t *q) {
  return q[CUVIL_QCONV_OW] + (cuvil_qconv_column_quads(q) - 1) * 4 / q[CUVIL_QCONV_SH];
}
/* Its workspace: for each image and channel the row phases, a tile of
 * words after the last (which the last tiles read), then the repacked
 * weights from the next 64-byte boundary. */
static inline int64_t cuvil_qconv_column_planes_bytes(const int64_t *q) {
  return (q[CUVIL_QCONV_N] * q[CUVIL_QCONV_C] * cuvil_qconv_column_rows(q) *
              cuvil_qconv_column_row_words(q) +
          64) *
         4;
}
static inline int64_t cuvil_qconv_column_bytes(const int64_t *q) {
  const int64_t nq = cuvil_qconv_column_quads(q);
  if (!nq)
    return 0;
  return cuvil_qconv_column_planes_bytes(q) +
         q[CUVIL_QCONV_COUT] * q[CUVIL_QCONV_C] * q[CUVIL_QCONV_KH] * nq * 4 + 64;
}
/* (+ a tile of words: a 1x1 convolution's tiles read its last plane's
 * rows past their end) */
static inline int64_t cuvil_qconv_workspace_bytes(const int64_t *q) {
  const int64_t quads = q[CUVIL_QCONV_N] * q[CUVIL_QCONV_GROUPS] * cuvil_qconv_quads(q) *
                            (q[CUVIL_QCONV_H] + 2 * q[CUVIL_QCONV_PH]) *
                            (q[CUVIL_QCONV_W] + 2 * q[CUVIL_QCONV_PW]) * 4 +
                        48 * 4;
  const int64_t columns = cuvil_qconv_column_bytes(q);
  return quads > columns ? quads : columns;
}

/* Byte of weight (n, k) (output feature or channel n, K index k) in panels
 * [ceil(N/QN)][Kp/4][QN][4]: cuvil_rt_qlinear_u8s8's weights, and
 * cuvil_rt_qconv2d_u8s8_rows' with K ordered as the convolution's. */
static inline int64_t cuvil_qpanel_index(int64_t n, int64_t k, int64_t kp) {
  return (((n / CUVIL_QN) * (kp / 4) + k / 4) * CUVIL_QN + n % CUVIL_QN) * 4 + k % 4;
}
/* cuvil_rt_qconv2d_u8s8_rows (groups 1): the convolution as a GEMM whose
 * rows are output pixels (for layers with few pixels, which the pixel
 * tiles of cuvil_rt_qconv2d_u8s8 would leave partly empty): weights in
 * panels (cuvil_qpanel_index), the workspace holding the interleaved input
 * (as cuvil_rt_qconv2d_u8s8's), then each pixel's patch [N * OH * OW][Kp],
 * then the output pixel-major before it is transposed to NCHW. */
static inline int64_t cuvil_qconv_rows_workspace_bytes(const int64_t *q) {
  int64_t pixels = q[CUVIL_QCONV_N] * q[CUVIL_QCONV_OH] * q[CUVIL_QCONV_OW];
  return cuvil_qconv_workspace_bytes(q) + pixels * cuvil_qconv_kp(q) +
         pixels * q[CUVIL_QCONV_COUT] * (q[CUVIL_QCONV_Y_FLOAT] ? 4 : 1);
}

/* The power of two at least n (n >= 1) that the DFT works on. */
static inline int64_t cuvil_dft_pow2(int64_t n) {
  int64_t m = 1;
  while (m < n)
    m <<= 1;
  return m;
}
/* Scratch of cuvil_rt_dft, in doubles: a row and twiddles for a power of
 * two; two work rows, twiddles and the chirp (Bluestein) otherwise. */
static inline int64_t cuvil_dft_scratch(int64_t n) {
  if (n <= 1)
    return 1;
  if (cuvil_dft_pow2(n) == n)
    return 2 * n + n;
  int64_t m = cuvil_dft_pow2(2 * n - 1);
  return 4 * m + m + 2 * n;
}

#endif /* CUVIL_KERNEL_ABI_H */
