#!/usr/bin/python3
"""Writes special_reference.inc, the expected values of SpecialTest.cpp.

Each of runtime/cpu/special.c's functions is evaluated by PyTorch (CPU,
float64) at typical points across its domain, at large and small
magnitudes, negative values, near poles and branch points, and at NaN and
the infinities. Each function's points are evaluated as one tensor, as a
model would. Where PyTorch raises instead of returning (polygamma with
n < 0 or not an integer, mvlgamma with p < 1 or not an integer), the expected
value is NaN, what special.c returns there.

Run with the interpreter that has PyTorch 1.13:
    /usr/bin/python3 test/runtime/gen_special_reference.py
"""
import math
import os
import sys

import torch

INF, NAN = math.inf, math.nan
S = torch.special


def literal(v):
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    return repr(float(v))


def grid(xs, ys):
    return [(x, y) for x in xs for y in ys]


UNARY = {
    "digamma": (S.digamma, [
        0.0, -0.0, 1.0, 2.0, 0.5, 1.4616321449683622, 1e-10, 1e-300, 3.7, 9.999, 10.0, 10.5,
        100.0, 1e6, 1e17, 1e20, 1e300, -0.5, -1.0, -2.0, -1.5, -2.999, -10.1, -100.5, -1e-10,
        -1e10 + 0.5, INF, -INF, NAN]),
    "erfinv": (S.erfinv, [
        -1.0, 1.0, 0.0, -0.0, 0.5, -0.5, 0.7, 0.7000001, 0.9, -0.999, 1 - 1e-10, 1e-300, 1e-10,
        -0.99999, 1.0000001, -2.0, INF, -INF, NAN]),
    "erfcx": (S.erfcx, [
        0.0, -0.0, 1e-20, 0.5, 1.0, 5.0, 10.0, 49.9, 50.0, 50.1, 1e3, 5e7, 1e8, 1e10, 1e300, INF,
        -1e-5, -1.0, -6.0, -6.1, -6.2, -10.0, -26.0, -26.7, -26.8, -INF, NAN]),
    "ndtr": (S.ndtr, [
        0.0, 1.0, -1.0, 2.0, -2.5, -5.0, -8.0, -8.3, -9.0, -37.5, 5.0, 9.0, 40.0, 1e-10, INF,
        -INF, NAN]),
    "ndtri": (S.ndtri, [
        0.0, 1.0, 0.5, 0.025, 0.975, 0.135, 0.1353352832366127, 0.8646647167633873, 0.9, 1e-5,
        1e-14, 1.3e-14, 1e-20, 1e-100, 1e-300, 5e-324, 1 - 1e-16, -0.1, 1.5, INF, -INF, NAN]),
    "log_ndtr": (S.log_ndtr, [
        0.0, -1.0, -1.0000001, -0.9999, 1.0, 3.0, 10.0, 40.0, -3.0, -10.0, -40.0, -1e3, -1e10,
        -1e200, INF, -INF, NAN]),
    "entr": (S.entr, [
        0.0, -0.0, 1.0, 0.5, 1e-300, 5e-324, 2.0, 10.0, 1e300, INF, -1.0, -1e-300, -INF, NAN]),
}

I_POINTS = [0.0, -0.0, 1e-10, 0.5, 1.0, -1.0, 4.0, 7.999, 8.0, 8.001, -8.5, 20.0, 100.0, -300.0,
            700.0, 713.0, 800.0, -800.0, 1e5, 1e300, INF, -INF, NAN]
for name, f in [("i0", S.i0), ("i0e", S.i0e), ("i1", S.i1), ("i1e", S.i1e),
                ("modified_bessel_i0", S.modified_bessel_i0),
                ("modified_bessel_i1", S.modified_bessel_i1)]:
    UNARY[name] = (f, I_POINTS)
K_POINTS = [0.0, -0.0, 1e-300, 1e-10, 0.5, 1.0, 2.0, 2.0000001, 3.0, 10.0, 100.0, 700.0, 750.0,
            1e5, -1.0, INF, -INF, NAN]
for name, f in [("modified_bessel_k0", S.modified_bessel_k0),
                ("modified_bessel_k1", S.modified_bessel_k1),
                ("scaled_modified_bessel_k0", S.scaled_modified_bessel_k0),
                ("scaled_modified_bessel_k1", S.scaled_modified_bessel_k1)]:
    UNARY[name] = (f, K_POINTS)
JY_POINTS = [0.0, -0.0, 1e-300, 1e-6, 1e-5, 0.5, 1.0, 2.0, 3.0, 5.0, 5.0000001, 7.0, 10.0, 30.0,
             100.0, 1e4, 1e10, -1.0, -5.0, -10.0, INF, -INF, NAN]
for name, f in [("bessel_j0", S.bessel_j0), ("bessel_j1", S.bessel_j1),
                ("bessel_y0", S.bessel_y0), ("bessel_y1", S.bessel_y1)]:
    UNARY[name] = (f, JY_POINTS)
UNARY["airy_ai"] = (S.airy_ai, [
    0.0, 1.0, -1.0, 2.0899, 2.09, -2.09, -2.0901, 5.0, 8.3203353, 8.4, 20.0, 103.892, 104.0,
    -5.0, -10.0, -100.0, -1e4, INF, -INF, NAN])
UNARY["spherical_bessel_j0"] = (S.spherical_bessel_j0, [
    0.0, 1e-300, 0.1, -0.4999, 0.5, 1.0, math.pi, 10.0, -10.0, 1e10, 1e300, INF, -INF, NAN])


def polygamma(ns, xs):
    out = []
    for n, x in zip(ns, xs):
        if n < 0 or n != int(n):
            out.append(NAN)  # PyTorch: an error
        else:
            out.append(torch.polygamma(int(n), torch.tensor([x], dtype=torch.float64)).item())
    return out


def mvlgamma(xs, ps):
    out = []
    for x, p in zip(xs, ps):
        if p != int(p):
            out.append(NAN)  # p is an int argument in PyTorch
            continue
        try:
            out.append(torch.mvlgamma(torch.tensor([x], dtype=torch.float64), int(p)).item())
        except RuntimeError:  # p < 1
            out.append(NAN)
    return out


BINARY = {
    "polygamma": (None, grid([0, 1, 2, 3, 5, 10],
                             [0.5, 1.0, 2.5, 10.0, 100.0, 1e5, -0.5, -1.5, -2.0, 0.0, 1e-5,
                              INF, -INF, NAN]) + [(-1, 1.0), (1.5, 1.0)]),
    "zeta": (S.zeta, grid([1.0, 0.5, 1.5, 2.0, 3.0, 4.5, 10.0, 30.0, INF, NAN],
                          [1.0, 0.5, 2.0, 10.0, 1e8, 0.0, -1.0, -1.5, INF, NAN])),
    "mvlgamma": (None, grid([0.6, 1.0, 2.5, 10.0, 1e3, 1e300, INF], [1, 2, 3, 5, 10]) +
                 [(0.5, 2), (1.5, 4), (0.0, 1), (-1.0, 1), (-0.5, 1), (0.4, 2), (-2.5, 2), (NAN, 1),
                  (2.0, 0), (2.0, -1), (2.0, 1.5)]),
}
IGAMMA_POINTS = (
    [(0.0, 1.0), (0.0, 0.0), (1.0, 0.0), (INF, 1.0), (INF, INF), (1.0, INF), (-1.0, 1.0),
     (1.0, -1.0), (NAN, 1.0), (1.0, NAN)] +
    # series, 1 - Q, continued fraction, DLMF 8.7.3 for small x
    [(0.5, 0.3), (3.0, 1.0), (3.0, 5.0), (1e-3, 1e-3), (2.0, 0.7), (0.9, 0.7), (5.0, 0.4),
     (0.1, 0.4), (100.0, 10.0), (10.0, 100.0), (0.5, 1e-10), (1e-10, 0.5), (1.0, 1.0),
     (2.5, 1.1), (1.2, 1.1), (0.6, 0.55), (3.0, 0.55), (50.0, 1.0), (1e4, 1.0)] +
    # Temme's uniform asymptotic expansion near a = x
    [(30.0, 28.0), (25.0, 30.0), (150.0, 160.0), (199.0, 150.0), (500.0, 510.0),
     (1e4, 1.01e4), (1e4, 9.9e3), (1e6, 1e6), (201.0, 201.0)] +
    # far tails
    [(1e3, 10.0), (10.0, 1e3), (1816.0, 913.0), (1e-300, 1.0), (1e300, 1e300)])
BINARY["igamma"] = (torch.igamma, IGAMMA_POINTS)
BINARY["igammac"] = (torch.igammac, IGAMMA_POINTS)

CHEB_POINTS = grid([-1.0, 1.0, 0.0, 0.3, -0.7, 1.5, NAN], [-1, 0, 1, 3, 7, 9, 30]) + [
    (0.5, INF), (0.5, NAN), (0.5, 2.9), (INF, 3), (-INF, 4), (0.999999, 12), (-2.0, 1e19)]
SHIFTED_POINTS = grid([0.0, 1.0, 0.5, 0.15, 0.85, -0.25, 1.5, NAN], [-1, 0, 1, 3, 5, 7, 30]) + [
    (0.3, INF), (0.3, NAN), (0.3, 2.9), (INF, 3)]
HERMITE_POINTS = grid([0.0, 0.5, -1.3, 3.0, -10.0, NAN], [-1, 0, 1, 2, 5, 10, 30, 100, 600]) + [
    (3.0, INF), (3.0, NAN), (INF, 3), (-INF, 4), (1e200, 2)]
LAGUERRE_POINTS = grid([0.0, -0.0, 0.5, 2.0, 10.0, -3.0, NAN], [-1, 0, 1, 2, 5, 10, 50, 200]) + [
    (0.5, INF), (0.5, NAN), (INF, 3), (-INF, 3)]
LEGENDRE_POINTS = grid([-1.0, 1.0, 0.0, 0.3, -0.9, 2.0, NAN], [-1, 0, 1, 2, 5, 10, 50, 500]) + [
    (0.5, INF), (0.5, NAN), (INF, 3), (-INF, 4), (0.99999999, 1000)]
for name in ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w"]:
    BINARY[name] = (getattr(S, name), CHEB_POINTS)
for name in ["shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
             "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w"]:
    BINARY[name] = (getattr(S, name), SHIFTED_POINTS)
# From n = 2^62 on, PyTorch's H_n loop bound n + n wraps: see special.c. (Its He_n
# loop would run for n iterations there; special.c stops at NaN.)
BINARY["hermite_polynomial_h"] = (S.hermite_polynomial_h, HERMITE_POINTS + [(0.5, 5e18)])
BINARY["hermite_polynomial_he"] = (S.hermite_polynomial_he, HERMITE_POINTS)
BINARY["laguerre_polynomial_l"] = (S.laguerre_polynomial_l, LAGUERRE_POINTS)
BINARY["legendre_polynomial_p"] = (S.legendre_polynomial_p, LEGENDRE_POINTS)


def main():
    t = lambda v: torch.tensor([float(e) for e in v], dtype=torch.float64)
    rows = []
    for name, (f, xs) in UNARY.items():
        for x, y in zip(xs, f(t(xs)).tolist()):
            rows.append((name, x, 0.0, y))
    for name, (f, pairs) in BINARY.items():
        a = [p[0] for p in pairs]
        b = [p[1] for p in pairs]
        if name == "polygamma":
            ys = polygamma(a, b)
        elif name == "mvlgamma":
            ys = mvlgamma(a, b)
        else:
            ys = f(t(a), t(b)).tolist()
        for (x, y), e in zip(pairs, ys):
            rows.append((name, float(x), float(y), e))

    lines = ["// Generated by gen_special_reference.py from PyTorch %s (CPU, float64)."
             % torch.__version__,
             "// Do not edit. Rows: { function, x, y, expected }: y is the second argument",
             "// (0 for unary functions), in the order of the cuvil_special_ signature."]
    for name, x, y, e in rows:
        lines.append('{"%s", %s, %s, %s},' % (name, literal(x), literal(y), literal(e)))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "special_reference.inc")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("wrote %d rows to %s" % (len(rows), out), file=sys.stderr)


if __name__ == "__main__":
    main()
