/*===- runtime/cpu/special.h - PyTorch-compatible special functions --------===*
 *
 * Scalar versions of torch.special.* (and torch.i0, torch.igamma(c),
 * torch.polygamma, torch.mvlgamma) for the compiled model's elementwise
 * loops: one call per element, in double precision (float32 tensors are
 * widened, and the result rounded back). They follow the algorithms PyTorch
 * 1.13 runs on the CPU, so that results agree with PyTorch's float64 ones
 * to a few ulps and special values (NaN, infinities, poles, domain edges)
 * are the same. Pure functions of their arguments: no allocation, no
 * mutable state, safe to call from any thread.
 *
 * Arguments PyTorch takes as integers are passed as doubles: the degree n
 * of the orthogonal polynomials is a tensor in PyTorch too (converted to
 * int64 there, and here the same way); polygamma's n and mvlgamma's p are
 * integer attributes, which PyTorch checks - invalid ones give NaN here.
 *
 *===----------------------------------------------------------------------===*/
#ifndef CUVIL_RUNTIME_SPECIAL_H
#define CUVIL_RUNTIME_SPECIAL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Gamma family. polygamma(n, x): n = 0 digamma, 1 trigamma; n must be a
 * non-negative integer. zeta(x, q): Hurwitz zeta. igamma / igammac: the
 * regularized lower / upper incomplete gamma functions P(a, x), Q(a, x).
 * mvlgamma(x, p): multivariate log-gamma, p >= 1 an integer (defined for
 * x > (p-1)/2; PyTorch 1.13 evaluates its formula outside too). */
double cuvil_special_digamma(double x);
double cuvil_special_polygamma(double n, double x);
double cuvil_special_zeta(double x, double q);
double cuvil_special_igamma(double a, double x);
double cuvil_special_igammac(double a, double x);
double cuvil_special_mvlgamma(double x, double p);

/* Error function and the normal distribution. */
double cuvil_special_erfinv(double x);
double cuvil_special_erfcx(double x);
double cuvil_special_ndtr(double x);
double cuvil_special_ndtri(double x);
double cuvil_special_log_ndtr(double x);
double cuvil_special_entr(double x);

/* Bessel functions. i0 / i0e / i1 / i1e are torch.special.i0 ... (the "e"
 * ones scaled by exp(-|x|)); modified_bessel_i0 / i1 are the same functions
 * by PyTorch's other kernels, scaled_modified_bessel_k0 / k1 are
 * exp(x) K0(x), exp(x) K1(x). */
double cuvil_special_i0(double x);
double cuvil_special_i0e(double x);
double cuvil_special_i1(double x);
double cuvil_special_i1e(double x);
double cuvil_special_bessel_j0(double x);
double cuvil_special_bessel_j1(double x);
double cuvil_special_bessel_y0(double x);
double cuvil_special_bessel_y1(double x);
double cuvil_special_modified_bessel_i0(double x);
double cuvil_special_modified_bessel_i1(double x);
double cuvil_special_modified_bessel_k0(double x);
double cuvil_special_modified_bessel_k1(double x);
double cuvil_special_scaled_modified_bessel_k0(double x);
double cuvil_special_scaled_modified_bessel_k1(double x);
double cuvil_special_spherical_bessel_j0(double x);
double cuvil_special_airy_ai(double x);

/* Orthogonal polynomials of degree n at x, argument order as torch.special.
 * n is truncated to int64 like PyTorch does; n < 0 gives 0. */
double cuvil_special_chebyshev_polynomial_t(double x, double n);
double cuvil_special_chebyshev_polynomial_u(double x, double n);
double cuvil_special_chebyshev_polynomial_v(double x, double n);
double cuvil_special_chebyshev_polynomial_w(double x, double n);
double cuvil_special_shifted_chebyshev_polynomial_t(double x, double n);
double cuvil_special_shifted_chebyshev_polynomial_u(double x, double n);
double cuvil_special_shifted_chebyshev_polynomial_v(double x, double n);
double cuvil_special_shifted_chebyshev_polynomial_w(double x, double n);
double cuvil_special_hermite_polynomial_h(double x, double n);
double cuvil_special_hermite_polynomial_he(double x, double n);
double cuvil_special_laguerre_polynomial_l(double x, double n);
double cuvil_special_legendre_polynomial_p(double x, double n);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_RUNTIME_SPECIAL_H */
