#!/usr/bin/env python3
"""Writes linalg_reference.inc: inputs and PyTorch's (LAPACK's) outputs for
the runtime's dense linear-algebra kernels (runtime/cpu/linalg.c), which
LinalgTest.cpp checks against.

Every case is float64. The inputs are random (fixed seeds) or small integer
matrices where the case needs exact arithmetic (ties between pivots, exactly
zero pivots). Unused triangles hold garbage, so the kernels are seen to read
only the triangle LAPACK reads.

Run: /usr/bin/python3 test/runtime/gen_linalg_reference.py
(writes test/runtime/linalg_reference.inc next to this script)
"""
import os
import sys

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"PyTorch not importable ({e}); run with /usr/bin/python3")
    sys.exit(1)

torch.manual_seed(20240601)
F64 = torch.float64


def randn(*shape):
    return torch.randn(*shape, dtype=F64)


def number(x):
    r = repr(float(x))
    assert r not in ("nan", "inf", "-inf"), r
    return r


def array(t, integer=False):
    flat = t.reshape(-1).tolist()
    items = [str(int(x)) for x in flat] if integer else [number(x) for x in flat]
    lines, line = [], ""
    for item in items:
        if len(line) + len(item) + 2 > 92:
            lines.append(line)
            line = ""
        line += item + ", "
    lines.append(line)
    return "{" + "\n     ".join(l.rstrip() for l in lines).rstrip(", ").rstrip(",") + "}"


def emit(out, type_name, var, cases):
    out.append(f"const std::vector<{type_name}> {var} = {{")
    for case in cases:
        fields, scalars = [], []
        for f in case:
            if isinstance(f, (str, bool, int)):  # the name and sizes: one line
                scalars.append(f'"{f}"' if isinstance(f, str) else str(int(f)))
                continue
            if scalars:
                fields.append(", ".join(scalars))
                scalars = []
            if isinstance(f, tuple):  # (tensor, integer)
                fields.append(array(f[0], f[1]))
            else:
                fields.append(array(f))
        out.append("    {" + ",\n     ".join(fields) + "},")
    out.append("};\n")


def garbage_outside(a, keep):
    """a with the entries outside `keep` (a boolean mask) replaced by noise."""
    return torch.where(keep, a, 100 + randn(*a.shape))


# --- LU (getrf) ------------------------------------------------------------
def lu_cases():
    cases = []

    def add(name, a):
        batch = a.shape[0]
        lu, piv, info = torch.linalg.lu_factor_ex(a)
        cases.append((name, batch, a.shape[1], a.shape[2], a, lu,
                      (piv.to(torch.int32), True), (info.reshape(batch).to(torch.int32), True)))

    add("square 4x4", randn(1, 4, 4))
    add("tall 5x3", randn(1, 5, 3))
    add("wide 3x5", randn(1, 3, 5))
    add("1x1", torch.tensor([[[-2.5]]], dtype=F64))
    add("larger 12x9", randn(1, 12, 9))
    # Exact arithmetic from here on: ties and exactly-zero pivots.
    add("ties pick the first row", torch.tensor([[[1, 2, 0], [-1, 3, 1], [1, -4, 2]]], dtype=F64))
    add("zero first column (info 1, continues)",
        torch.tensor([[[0, 2, 1], [0, 4, 3], [0, 1, 5]]], dtype=F64))
    add("singular, last pivot zero (info 3)",
        torch.tensor([[[1, 2, 3], [2, 4, 6], [1, 1, 1]]], dtype=F64))
    add("zero middle pivot (info 2)",
        torch.tensor([[[2, 1, 1, 0], [4, 2, 3, 1], [2, 1, 5, 2], [-2, -1, 1, 4]]], dtype=F64))
    batch = torch.stack([randn(4, 4),
                         torch.tensor([[1, 2, 3, 4], [2, 4, 6, 8], [0, 1, 1, 0], [1, 0, 0, 1]],
                                      dtype=F64),
                         randn(4, 4)])
    add("batch of 3, one singular", batch)
    return cases


# --- Cholesky (potrf) ------------------------------------------------------
def spd(n):
    m = randn(n, n)
    return m @ m.T + n * torch.eye(n, dtype=F64)


def cholesky_cases():
    cases = []

    def add(name, a, upper):
        n = a.shape[-1]
        tri = torch.ones(n, n, dtype=torch.bool)
        keep = torch.triu(tri) if upper else torch.tril(tri)
        noisy = torch.stack([garbage_outside(m, keep) for m in a])
        out, info = torch.linalg.cholesky_ex(noisy, upper=upper)
        cases.append((name, a.shape[0], n, upper, noisy, out,
                      (info.reshape(a.shape[0]).to(torch.int32), True)))

    add("lower 4x4", spd(4)[None], False)
    add("upper 4x4", spd(4)[None], True)
    add("1x1", torch.tensor([[[2.25]]], dtype=F64), False)
    add("lower 9x9", spd(9)[None], False)
    not_pd = torch.tensor([[4, 2, 1, 3], [2, 5, 1, 2], [1, 1, -3, 1], [3, 2, 1, 6]], dtype=F64)
    add("not positive definite at 3 (partial result)", not_pd[None], False)
    add("upper, not positive definite at 3", not_pd[None], True)
    add("batch of 3 upper, the second not positive definite",
        torch.stack([spd(5), spd(5) - 20 * torch.eye(5, dtype=F64), spd(5)]), True)
    add("batch of 2 lower, negative 1x1 minor",
        torch.stack([spd(3), torch.tensor([[-1.0, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=F64)]),
        False)
    return cases


# --- Triangular solve (trsm) -----------------------------------------------
def triangular_cases():
    cases = []

    def add(name, batch, n, k, upper, left, unit):
        a = randn(batch, n, n)
        a = a + torch.diag_embed(torch.sign(torch.diagonal(a, dim1=-2, dim2=-1)) * 2.0)
        b = randn(batch, n, k) if left else randn(batch, k, n)
        x = torch.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
        # The solve must not read the other triangle (nor the diagonal when
        # unitriangular): check that by the same x for a noisy a.
        tri = torch.ones(n, n, dtype=torch.bool)
        keep = torch.triu(tri, 1 if unit else 0) if upper else torch.tril(tri, -1 if unit else 0)
        noisy = torch.stack([garbage_outside(m, keep) for m in a])
        x2 = torch.linalg.solve_triangular(noisy, b, upper=upper, left=left, unitriangular=unit)
        assert torch.equal(x, x2)
        cases.append((name, batch, n, k, upper, left, unit, noisy, b, x))

    add("left lower 4x4, k 3", 1, 4, 3, False, True, False)
    add("left upper 5x5, k 2", 1, 5, 2, True, True, False)
    add("right lower 4x4, k 3", 1, 4, 3, False, False, False)
    add("right upper 5x5, k 1", 1, 5, 1, True, False, False)
    add("left lower unitriangular", 1, 4, 2, False, True, True)
    add("left upper unitriangular", 1, 4, 3, True, True, True)
    add("right lower unitriangular", 1, 3, 4, False, False, True)
    add("right upper unitriangular", 1, 5, 2, True, False, True)
    add("1x1", 1, 1, 1, True, True, False)
    add("batch of 2 left upper 6x6, k 6", 2, 6, 6, True, True, False)
    add("batch of 3 right lower 3x3, k 2", 3, 3, 2, False, False, False)
    return cases


# --- QR: geqrf, householder_product (orgqr), ormqr, linalg.qr ---------------
def geqrf_cases():
    cases = []

    def add(name, a):
        qr, tau = torch.geqrf(a)
        cases.append((name, a.shape[0], a.shape[1], a.shape[2], a, qr, tau))

    add("square 4x4", randn(1, 4, 4))
    add("tall 6x3", randn(1, 6, 3))
    add("wide 3x5", randn(1, 3, 5))
    add("1x1 negative", torch.tensor([[[-3.0]]], dtype=F64))
    add("1x3", randn(1, 1, 3))
    add("4x1", randn(1, 4, 1))
    add("upper triangular (columns already reduced: tau 0)",
        torch.triu(randn(1, 4, 4)) - 2 * torch.eye(4, dtype=F64))
    add("a zero column", torch.tensor([[[1.0, 0, 2], [2, 0, 1], [0, 0, 3], [1, 0, -1]]],
                                      dtype=F64))
    add("batch of 2 tall 7x5", randn(2, 7, 5))
    return cases


def householder_cases():
    cases = []

    def add(name, a, k, cols=None):
        qr, tau = torch.geqrf(a)
        tau = tau[..., :k].contiguous()
        v = qr if cols is None else torch.cat(
            [qr, randn(qr.shape[0], qr.shape[1], cols - qr.shape[2])], dim=-1)
        q = torch.linalg.householder_product(v, tau)
        cases.append((name, v.shape[0], v.shape[1], v.shape[2], k, v, tau, q))

    add("square 4x4, k 4", randn(1, 4, 4), 4)
    add("tall 6x4, k 4", randn(1, 6, 4), 4)
    add("tall 6x4, k 2", randn(1, 6, 4), 2)
    add("1x1", torch.tensor([[[-3.0]]], dtype=F64), 1)
    add("complete Q 5x5 from a 5x3 factorisation, k 3", randn(1, 5, 3), 3, cols=5)
    add("k 0 (identity columns)", randn(1, 3, 2), 0)
    add("batch of 2 tall 7x3", randn(2, 7, 3), 3)
    return cases


def ormqr_cases():
    cases = []

    def add(name, batch, nq, vcols, k, other_rows, left, transpose):
        qr, tau = torch.geqrf(randn(batch, nq, vcols))
        tau = tau[..., :k].contiguous()
        c = randn(batch, nq, other_rows) if left else randn(batch, other_rows, nq)
        out = torch.ormqr(qr, tau, c, left=left, transpose=transpose)
        m, n = c.shape[1], c.shape[2]
        cases.append((name, batch, m, n, k, vcols, left, transpose, qr, tau, c, out))

    add("left Q C", 1, 5, 3, 3, 4, True, False)
    add("left Q^T C", 1, 5, 3, 3, 4, True, True)
    add("right C Q", 1, 5, 3, 3, 4, False, False)
    add("right C Q^T", 1, 5, 3, 3, 2, False, True)
    add("left, 2 of 3 reflectors", 1, 6, 3, 2, 3, True, False)
    add("right, square v, Q^T", 1, 4, 4, 4, 3, False, True)
    add("batch of 2 left Q^T C", 2, 5, 4, 4, 5, True, True)
    return cases


def qr_cases():
    cases = []

    def add(name, a, mode):
        q, r = torch.linalg.qr(a, mode=mode)
        cases.append((name, a.shape[0], a.shape[1], a.shape[2], 1 if mode == "complete" else 0,
                      a, q, r))

    add("reduced 5x3", randn(1, 5, 3), "reduced")
    add("reduced 3x5", randn(1, 3, 5), "reduced")
    add("complete 5x3", randn(1, 5, 3), "complete")
    add("reduced square 4x4, batch of 2", randn(2, 4, 4), "reduced")
    return cases


# --- Symmetric eigenvalues (syevd) -----------------------------------------
def eigh_cases():
    cases = []

    def add(name, a, upper, vectors, distinct=True):
        n = a.shape[-1]
        tri = torch.ones(n, n, dtype=torch.bool)
        keep = torch.triu(tri) if upper else torch.tril(tri)
        noisy = torch.stack([garbage_outside(m, keep) for m in a])
        w, v = torch.linalg.eigh(noisy, UPLO="U" if upper else "L")
        cases.append((name, a.shape[0], n, upper, vectors, distinct, noisy, w, v))

    def sym(batch, n):
        m = randn(batch, n, n)
        return m + m.transpose(-1, -2)

    add("lower 5x5", sym(1, 5), False, True)
    add("upper 5x5", sym(1, 5), True, True)
    add("1x1", torch.tensor([[[-1.5]]], dtype=F64), False, True)
    add("2x2", sym(1, 2), False, True)
    add("lower 12x12", sym(1, 12), False, True)
    add("positive definite 6x6", spd(6)[None], True, True)
    add("values only 6x6", sym(1, 6), False, False)
    add("batch of 3 lower 4x4", sym(3, 4), False, True)
    add("repeated eigenvalues (vectors not unique)",
        torch.tensor([[[2.0, 0, 0], [0, 1, 0], [0, 0, 2]]], dtype=F64), False, True, False)
    add("zero matrix", torch.zeros(1, 3, 3, dtype=F64), False, True, False)
    return cases


# --- SVD (gesdd) -----------------------------------------------------------
def svd_cases():
    cases = []

    def add(name, a, full, uv=True):
        u, s, vh = torch.linalg.svd(a, full_matrices=full)
        cases.append((name, a.shape[0], a.shape[1], a.shape[2], full, uv, a, u, s, vh))

    add("square 4x4", randn(1, 4, 4), False)
    add("tall 6x3 reduced", randn(1, 6, 3), False)
    add("tall 6x3 full", randn(1, 6, 3), True)
    add("wide 3x5 reduced", randn(1, 3, 5), False)
    add("wide 3x5 full", randn(1, 3, 5), True)
    add("1x1", torch.tensor([[[-2.0]]], dtype=F64), False)
    add("1x4 full", randn(1, 1, 4), True)
    add("4x1 full", randn(1, 4, 1), True)
    add("larger 10x8", randn(1, 10, 8), False)
    add("rank 2 5x4 full", randn(1, 5, 2) @ randn(1, 2, 4), True)
    add("rank 2 4x5 reduced", randn(1, 4, 2) @ randn(1, 2, 5), False)
    add("zero 3x2 full", torch.zeros(1, 3, 2, dtype=F64), True)
    add("values only 5x4", randn(1, 5, 4), False, False)
    add("batch of 2 3x3", randn(2, 3, 3), False)
    return cases


def main():
    out = ["// Generated by gen_linalg_reference.py from PyTorch " + torch.__version__ +
           " (LAPACK); do not edit.\n// Regenerate: /usr/bin/python3 "
           "test/runtime/gen_linalg_reference.py\n"]
    emit(out, "LuCase", "kLuCases", lu_cases())
    emit(out, "CholeskyCase", "kCholeskyCases", cholesky_cases())
    emit(out, "TriangularCase", "kTriangularCases", triangular_cases())
    emit(out, "GeqrfCase", "kGeqrfCases", geqrf_cases())
    emit(out, "HouseholderCase", "kHouseholderCases", householder_cases())
    emit(out, "OrmqrCase", "kOrmqrCases", ormqr_cases())
    emit(out, "QrCase", "kQrCases", qr_cases())
    emit(out, "EighCase", "kEighCases", eigh_cases())
    emit(out, "SvdCase", "kSvdCases", svd_cases())
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg_reference.inc")
    with open(path, "w") as f:
        f.write("\n".join(out))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
