#!/usr/bin/env python3
"""Checks Cuvil's reference evaluator against PyTorch, op by op.

Every case is one cuvil op in a one-op model. The script writes the model
and its .npy inputs, runs `cuvil-run` on them, and compares the outputs with
what PyTorch computes on the same inputs. The result type written into the
model is the one PyTorch produces, so a disagreement in shape rules or type
promotion fails the case too (cuvil-run rejects an op whose inferred type
differs from the written one).

Tolerance: float32 outputs must agree within 1e-5 of the output's scale
(max(1, max|reference|)); float64 within 1e-12; integers and bools exactly;
NaNs in the same places.

Run: /usr/bin/python3 torch_parity.py --cuvil-run build/bin/cuvil-run [--family act]
"""
import argparse
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIPPED: PyTorch/NumPy not importable ({e}); run with /usr/bin/python3")
    sys.exit(77)

RNG = np.random.default_rng(1234)

MLIR_TYPES = {
    np.dtype("float16"): "f16", np.dtype("float32"): "f32", np.dtype("float64"): "f64",
    np.dtype("int8"): "i8", np.dtype("uint8"): "ui8", np.dtype("int16"): "i16",
    np.dtype("int32"): "i32", np.dtype("int64"): "i64", np.dtype("bool"): "i1",
}


def ttype(shape, dtype):
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{MLIR_TYPES[np.dtype(dtype)]}>"


def randn(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def randint(lo, hi, *shape, dtype=np.int64):
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def positive(*shape, dtype=np.float32):
    return (RNG.random(shape) * 4 + 0.05).astype(dtype)


class Case:
    def __init__(self, family, name, op, inputs, ref, results=1, result=0):
        self.family, self.name, self.op = family, name, op
        self.inputs, self.ref = inputs, ref
        # An op with several results: the model returns result `result`.
        self.results, self.result = results, result


CASES = []


def case(family, name, op, inputs, ref, results=1, result=0):
    CASES.append(Case(family, name, op, inputs, ref, results, result))


def torch_of(a):
    return torch.from_numpy(np.array(a, copy=True))  # keeps 0-d arrays 0-d


def model_text(c, outputs):
    args = ", ".join(f"%a{i}: {ttype(a.shape, a.dtype)}" for i, a in enumerate(c.inputs))
    subst = {f"a{i}": f"%a{i}" for i in range(len(c.inputs))}
    subst.update({f"T{i}": ttype(a.shape, a.dtype) for i, a in enumerate(c.inputs)})
    subst["R"] = ttype(outputs[0].shape, outputs[0].dtype)
    subst["Ts"] = ", ".join(ttype(a.shape, a.dtype) for a in c.inputs)
    body = c.op.format(**subst)
    rtype = subst["R"]
    if c.results > 1:
        return (f"func.func @forward({args}) -> {rtype} {{\n"
                f"  %r:{c.results} = {body}\n"
                f"  return %r#{c.result} : {rtype}\n}}\n")
    return (f"func.func @forward({args}) -> {rtype} {{\n"
            f"  %r = {body}\n"
            f"  return %r : {rtype}\n}}\n")


def compare(name, got, want):
    if got.shape != want.shape:
        return f"shape {got.shape} != expected {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} != expected {want.dtype}"
    if want.size == 0:
        return None
    if want.dtype.kind in "biu":
        bad = np.nonzero(got != want)[0] if want.ndim == 1 else np.argwhere(got != want)
        if len(bad):
            return f"{len(bad)} element(s) differ, first at {bad[0]}: {got.flat[0]} vs {want.flat[0]}"
        return None
    nan_got, nan_want = np.isnan(got), np.isnan(want)
    if (nan_got != nan_want).any():
        return "NaN positions differ"
    finite = ~nan_want
    g, w = got[finite].astype(np.float64), want[finite].astype(np.float64)
    inf_mismatch = (np.isinf(w) | np.isinf(g)) & (g != w)
    if inf_mismatch.any():
        return "infinities differ"
    fin = ~np.isinf(w)
    if not fin.any():
        return None
    err = np.abs(g[fin] - w[fin]).max()
    scale = max(1.0, np.abs(w[fin]).max())
    tol = {np.dtype("float32"): 1e-5, np.dtype("float64"): 1e-12,
           np.dtype("float16"): 2e-3}[want.dtype]
    if err > tol * scale:
        return f"max abs error {err:.3g} > {tol:g} x scale {scale:.3g}"
    return None


def run_case(c, cuvil_run, work):
    outputs = c.ref(*[torch_of(a) for a in c.inputs])
    if not isinstance(outputs, (tuple, list)):
        outputs = [outputs]
    outputs = [o.detach().numpy() if isinstance(o, torch.Tensor) else np.asarray(o)
               for o in outputs]
    d = os.path.join(work, c.name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "model.mlir")
    with open(model, "w") as f:
        f.write(model_text(c, outputs))
    cmd = [cuvil_run, model, "--quiet", "--output-dir", d]
    for i, a in enumerate(c.inputs):
        p = os.path.join(d, f"input{i}.npy")
        np.save(p, a)
        cmd += ["--input", p]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return f"cuvil-run exited {proc.returncode}: {proc.stderr.strip()}"
    for i, want in enumerate(outputs):
        got = np.load(os.path.join(d, f"output{i}.npy"))
        msg = compare(c.name, got, want)
        if msg:
            return f"output {i}: {msg}"
    return None


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

def with_specials(a):
    a = a.copy()
    flat = a.reshape(-1)
    flat[:4] = [np.nan, np.inf, -np.inf, 0.0][: min(4, flat.size)]
    return a


def unary(family, name, opname, ref, inputs, attrs=""):
    attrs = attrs.replace("{", "{{").replace("}", "}}")
    op = f"{opname} {{a0}} {attrs} : {{T0}}".replace("  ", " ")
    case(family, name, op, inputs, ref)


def define_act():
    x = randn(2, 3, 4, scale=3)
    unary("act", "relu", "cuvil.act.relu", torch.relu, [with_specials(x)])
    unary("act", "relu_i64", "cuvil.act.relu", torch.relu, [randint(-5, 5, 7)])
    unary("act", "relu_empty", "cuvil.act.relu", torch.relu, [randn(0, 5)])
    unary("act", "relu6", "cuvil.act.hardtanh", F.relu6, [with_specials(x)],
          "{min_val = 0.0 : f64, max_val = 6.0 : f64}")
    unary("act", "hardtanh_default", "cuvil.act.hardtanh", F.hardtanh, [x])
    unary("act", "leaky_relu", "cuvil.act.leaky_relu",
          lambda t: F.leaky_relu(t, 0.2), [x], "{negative_slope = 0.2 : f64}")
    unary("act", "elu", "cuvil.act.elu", lambda t: F.elu(t, 0.7), [x],
          "{alpha = 0.7 : f64}")
    unary("act", "gelu", "cuvil.act.gelu", F.gelu, [x])
    unary("act", "gelu_tanh", "cuvil.act.gelu", lambda t: F.gelu(t, approximate="tanh"),
          [x], "{approximate = #cuvil<gelu_approximation tanh>}")
    unary("act", "gelu_f64", "cuvil.act.gelu", F.gelu, [randn(5, dtype=np.float64)])
    unary("act", "silu", "cuvil.act.silu", F.silu, [x])
    unary("act", "sigmoid", "cuvil.act.sigmoid", torch.sigmoid, [x])
    unary("act", "tanh", "cuvil.act.tanh", torch.tanh, [x])
    unary("act", "hardswish", "cuvil.act.hardswish", F.hardswish, [x])
    unary("act", "hardsigmoid", "cuvil.act.hardsigmoid", F.hardsigmoid, [x])
    unary("act", "softplus", "cuvil.act.softplus", lambda t: F.softplus(t, 2.0, 1.5), [x],
          "{beta = 2.0 : f64, threshold = 1.5 : f64}")
    unary("act", "mish", "cuvil.act.mish", F.mish, [x])
    for dim in (0, 1, 2):
        unary("act", f"softmax_dim{dim}", "cuvil.act.softmax",
              lambda t, d=dim: torch.softmax(t, d), [x], f"{{dim = {dim} : i64}}")
    unary("act", "softmax_size1", "cuvil.act.softmax", lambda t: torch.softmax(t, 1),
          [randn(3, 1)], "{dim = 1 : i64}")
    unary("act", "softmax_empty", "cuvil.act.softmax", lambda t: torch.softmax(t, 1),
          [randn(0, 4)], "{dim = 1 : i64}")
    unary("act", "softmax_0d", "cuvil.act.softmax", lambda t: torch.softmax(t, 0),
          [np.array(2.5, dtype=np.float32)], "{dim = 0 : i64}")
    unary("act", "softmax_large", "cuvil.act.softmax", lambda t: torch.softmax(t, 1),
          [randn(2, 8, scale=100)], "{dim = 1 : i64}")
    unary("act", "log_softmax", "cuvil.act.log_softmax",
          lambda t: torch.log_softmax(t, 2), [x], "{dim = 2 : i64}")


def define_math():
    x = randn(3, 4, scale=2)
    # The runtime's special functions, float64 and float32.
    SP = "cuvil.math.special {{a0}} {{{{function = \"{f}\"}}}} : {{T0}}"
    pos = positive(3, 4)
    for f, fn, gen in [("digamma", torch.special.digamma, x), ("erfinv", torch.special.erfinv, np.tanh(x)),
                       ("i0e", torch.special.i0e, x), ("ndtri", torch.special.ndtri, np.abs(np.tanh(x))),
                       ("bessel_j0", torch.special.bessel_j0, x), ("bessel_y1", torch.special.bessel_y1, pos),
                       ("modified_bessel_k0", torch.special.modified_bessel_k0, pos),
                       ("airy_ai", torch.special.airy_ai, x), ("erfcx", torch.special.erfcx, x)]:
        for dt in (np.float64, np.float32):
            case("math", f"special_{f}_{np.dtype(dt).name}", SP.format(f=f), [gen.astype(dt)], fn)
    SP2 = "cuvil.math.special2 {{a0}}, {{a1}} {{{{function = \"{f}\"}}}} : {{T0}}, {{T1}} -> {{R}}"
    for f, fn, a, b in [("zeta", torch.special.zeta, pos + 1, pos),
                        ("igamma", torch.igamma, pos, pos * 2),
                        ("chebyshev_polynomial_t", torch.special.chebyshev_polynomial_t, np.tanh(x),
                         np.floor(pos * 3)),
                        ("laguerre_polynomial_l", torch.special.laguerre_polynomial_l, x, np.floor(pos * 3))]:
        case("math", f"special2_{f}", SP2.format(f=f), [a.astype(np.float64), b.astype(np.float64)], fn)
    for name, fn in [("neg", torch.neg), ("abs", torch.abs), ("sign", torch.sign)]:
        unary("math", name, f"cuvil.math.{name}", fn, [with_specials(x)])
        unary("math", f"{name}_i32", f"cuvil.math.{name}", fn,
              [randint(-9, 9, 6, dtype=np.int32)])
    for name, fn, gen in [("exp", torch.exp, x), ("expm1", torch.expm1, x),
                          ("log", torch.log, positive(3, 4)),
                          ("log1p", torch.log1p, positive(3, 4)),
                          ("sqrt", torch.sqrt, positive(3, 4)),
                          ("rsqrt", torch.rsqrt, positive(3, 4)),
                          ("reciprocal", torch.reciprocal, positive(3, 4)),
                          ("sin", torch.sin, x), ("cos", torch.cos, x),
                          ("erf", torch.erf, x), ("floor", torch.floor, x),
                          ("ceil", torch.ceil, x)]:
        unary("math", name, f"cuvil.math.{name}", fn, [gen])
    unit = (RNG.random((3, 4)) * 1.8 - 0.9).astype(np.float32)  # inside (-1, 1)
    for name, fn, gen in [("tan", torch.tan, x), ("asin", torch.asin, with_specials(unit)),
                          ("acos", torch.acos, unit), ("atan", torch.atan, with_specials(x)),
                          ("sinh", torch.sinh, x), ("cosh", torch.cosh, x),
                          ("asinh", torch.asinh, x), ("acosh", torch.acosh, positive(3, 4) + 1),
                          ("atanh", torch.atanh, unit), ("log2", torch.log2, positive(3, 4)),
                          ("log10", torch.log10, positive(3, 4)), ("exp2", torch.exp2, x),
                          ("erfc", torch.erfc, with_specials(x)),
                          ("lgamma", torch.lgamma, positive(3, 4)),
                          ("trunc", torch.trunc, with_specials(x))]:
        unary("math", name, f"cuvil.math.{name}", fn, [gen])
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -3.2], dtype=np.float32)
    unary("math", "round_half_even", "cuvil.math.round", torch.round, [halves])
    unary("math", "log_special", "cuvil.math.log", torch.log,
          [np.array([0.0, -1.0, np.inf, np.nan], dtype=np.float32)])
    unary("math", "bitwise_not_i64", "cuvil.math.bitwise_not", torch.bitwise_not,
          [randint(-100, 100, 5)])
    unary("math", "bitwise_not_bool", "cuvil.math.bitwise_not", torch.bitwise_not,
          [np.array([True, False, True])])
    unary("math", "clamp", "cuvil.math.clamp", lambda t: torch.clamp(t, -0.5, 0.75),
          [with_specials(x)], "{min = -0.5 : f64, max = 0.75 : f64}")
    unary("math", "clamp_min", "cuvil.math.clamp", lambda t: torch.clamp(t, min=0.1),
          [x], "{min = 0.1 : f64}")
    unary("math", "clamp_max_i64", "cuvil.math.clamp", lambda t: torch.clamp(t, max=3),
          [randint(-9, 9, 8)], "{max = 3.0 : f64}")

    BIN = "cuvil.math.{n} {{a0}}, {{a1}} {attrs}: {{T0}}, {{T1}} -> {{R}}"

    def binary(name, opname, ref, inputs, attrs=""):
        attrs = attrs.replace("{", "{{").replace("}", "}}")
        op = BIN.format(n=opname, attrs=(attrs + " ") if attrs else "")
        case("math", name, op, inputs, ref)

    binary("add", "add", torch.add, [randn(2, 3), randn(2, 3)])
    binary("add_broadcast", "add", torch.add, [randn(4, 1, 3), randn(2, 1)])
    binary("add_0d_f64", "add", torch.add, [randn(3), np.array(0.1, dtype=np.float64)])
    binary("add_int_0d_float", "add", torch.add, [randint(0, 9, 3), np.array(1.5)])
    binary("add_i32_i64", "add", torch.add, [randint(0, 9, 3, dtype=np.int32),
                                             randint(0, 9, 3)])
    binary("add_u8_i8", "add", torch.add, [randint(0, 255, 4, dtype=np.uint8),
                                           randint(-128, 127, 4, dtype=np.int8)])
    binary("add_u8_wrap", "add", torch.add, [np.array([200, 250], dtype=np.uint8),
                                             np.array([100, 10], dtype=np.uint8)])
    binary("add_bool", "add", torch.add, [np.array([True, False, False]),
                                          np.array([True, True, False])])
    binary("add_empty", "add", torch.add, [randn(0, 3), randn(1, 3)])
    binary("add_f16", "add", torch.add, [randn(5, dtype=np.float16), randn(5, dtype=np.float16)])
    binary("sub", "sub", torch.sub, [randn(2, 3), randn(3)])
    binary("sub_int_float", "sub", torch.sub, [randint(0, 5, 2), randn(2)])
    binary("pow_bool_int", "pow", torch.pow, [np.array([True, False]), randint(0, 5, 2)])
    binary("mul", "mul", torch.mul, [randn(2, 3), randn(2, 1)])
    binary("mul_i64_wrap", "mul", torch.mul, [np.array([2**62, -3], dtype=np.int64),
                                              np.array([4, 2**61], dtype=np.int64)])
    binary("div", "div", torch.div, [randn(2, 3), randn(3)])
    binary("div_int_true", "div", torch.div, [randint(-9, 9, 6), randint(1, 5, 6)])
    binary("div_by_zero_float", "div", torch.div,
           [np.array([1.0, -1.0, 0.0], dtype=np.float32), np.zeros(3, dtype=np.float32)])
    binary("div_trunc", "div", lambda a, b: torch.div(a, b, rounding_mode="trunc"),
           [randint(-20, 20, 8), randint(1, 6, 8) * np.array([1, -1] * 4)],
           "{rounding_mode = #cuvil<rounding_mode trunc>}")
    binary("div_floor", "div", lambda a, b: torch.div(a, b, rounding_mode="floor"),
           [randint(-20, 20, 8), randint(1, 6, 8) * np.array([1, -1] * 4)],
           "{rounding_mode = #cuvil<rounding_mode floor>}")
    binary("div_floor_float", "div", lambda a, b: torch.div(a, b, rounding_mode="floor"),
           [randn(8, scale=5), randn(8)], "{rounding_mode = #cuvil<rounding_mode floor>}")
    binary("pow", "pow", torch.pow, [positive(3, 2), randn(2)])
    binary("pow_0d", "pow", torch.pow, [randn(4), np.array(2.0, dtype=np.float32)])
    binary("pow_int", "pow", torch.pow, [randint(-3, 4, 8), np.array([0, 1, 2, 3, -1, -2, 5, 2])])
    binary("maximum", "maximum", torch.maximum, [with_specials(randn(6)), randn(6)])
    binary("minimum", "minimum", torch.minimum, [randn(6), with_specials(randn(6))])
    binary("maximum_i32", "maximum", torch.maximum, [randint(-5, 5, 6, dtype=np.int32),
                                                     randint(-5, 5, 6, dtype=np.int32)])
    binary("remainder", "remainder", torch.remainder, [randn(8, scale=5),
                                                       randn(8) * 2])
    binary("remainder_int", "remainder", torch.remainder,
           [randint(-20, 20, 8), randint(1, 6, 8) * np.array([1, -1] * 4)])
    binary("fmod", "fmod", torch.fmod, [randn(8, scale=5), randn(8) * 2])
    binary("fmod_int", "fmod", torch.fmod,
           [randint(-20, 20, 8), randint(1, 6, 8) * np.array([1, -1] * 4)])
    binary("atan2", "atan2", torch.atan2, [with_specials(randn(3, 4)), randn(4)])
    binary("hypot", "hypot", torch.hypot, [randn(6, scale=1e20), randn(6)])
    binary("copysign", "copysign", torch.copysign,
           [randn(6), np.array([1.0, -1.0, 0.0, -0.0, np.nan, -2.0], dtype=np.float32)])
    binary("nextafter", "nextafter", torch.nextafter,
           [np.array([1.0, 0.0, -1.0, 1e30], dtype=np.float32),
            np.array([2.0, -1.0, -2.0, np.inf], dtype=np.float32)])
    binary("fmax", "fmax", torch.fmax, [with_specials(randn(6)), np.full(6, np.nan, np.float32)])
    binary("fmin", "fmin", torch.fmin, [randn(6), with_specials(randn(6))])
    binary("bitwise_and", "bitwise_and", torch.bitwise_and, [randint(-99, 99, 6), randint(-99, 99, 6)])
    binary("bitwise_or_u8", "bitwise_or", torch.bitwise_or,
           [randint(0, 255, 6, dtype=np.uint8), randint(0, 255, 6, dtype=np.uint8)])
    binary("bitwise_xor_bool", "bitwise_xor", torch.bitwise_xor,
           [np.array([True, False, True]), np.array([True, True, False])])
    # Within [0, width): PyTorch's result outside it depends on its CPU path.
    shifts = np.array([0, 1, 7, 31, 30, 2, 3, 16], dtype=np.int32)
    binary("shift_left_i32", "shift_left", torch.bitwise_left_shift,
           [randint(-99, 99, 8, dtype=np.int32), shifts])
    binary("shift_right_i32", "shift_right", torch.bitwise_right_shift,
           [randint(-99, 99, 8, dtype=np.int32), shifts])
    binary("shift_right_u8", "shift_right", torch.bitwise_right_shift,
           [randint(0, 255, 4, dtype=np.uint8), np.array([1, 7, 0, 3], dtype=np.uint8)])


def define_logic():
    CMP = "cuvil.logic.{n} {{a0}}, {{a1}} : {{T0}}, {{T1}} -> {{R}}"
    a, b = randint(-3, 3, 3, 4).astype(np.float32), randint(-3, 3, 4).astype(np.float32)
    for n, fn in [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le),
                  ("gt", torch.gt), ("ge", torch.ge)]:
        case("logic", n, CMP.format(n=n), [a, b], fn)
    case("logic", "lt_int_float", CMP.format(n="lt"), [randint(-3, 3, 5), randn(5)], torch.lt)
    case("logic", "eq_nan", CMP.format(n="eq"),
         [np.array([np.nan, 1.0], dtype=np.float32), np.array([np.nan, 1.0], dtype=np.float32)],
         torch.eq)
    case("logic", "ne_nan", CMP.format(n="ne"),
         [np.array([np.nan, 1.0], dtype=np.float32), np.array([np.nan, 1.0], dtype=np.float32)],
         torch.ne)
    for n, fn in [("logical_and", torch.logical_and), ("logical_or", torch.logical_or),
                  ("logical_xor", torch.logical_xor)]:
        case("logic", n, CMP.format(n=n),
             [np.array([True, False, True, False]), np.array([0.0, 0.0, 2.5, np.nan], dtype=np.float32)],
             fn)
    case("logic", "logical_not", "cuvil.logic.logical_not {a0} : {T0} -> {R}",
         [np.array([0.0, 1.5, np.nan, -0.0], dtype=np.float32)], torch.logical_not)
    case("logic", "where", "cuvil.logic.where {a0}, {a1}, {a2} : {T0}, {T1}, {T2} -> {R}",
         [randn(2, 3) > 0, randn(2, 1), np.array(7.0, dtype=np.float64)], torch.where)
    case("logic", "where_int_promote",
         "cuvil.logic.where {a0}, {a1}, {a2} : {T0}, {T1}, {T2} -> {R}",
         [randn(4) > 0, randint(0, 9, 4, dtype=np.int32), randint(0, 9, 4)], torch.where)


def define_gemm():
    LIN = "cuvil.gemm.linear {a0}, {a1}, {a2} : ({Ts}) -> {R}"
    LIN2 = "cuvil.gemm.linear {a0}, {a1} : ({Ts}) -> {R}"
    case("gemm", "linear", LIN, [randn(4, 8), randn(5, 8), randn(5)], F.linear)
    case("gemm", "linear_3d", LIN, [randn(2, 3, 8), randn(5, 8), randn(5)], F.linear)
    case("gemm", "linear_1d", LIN, [randn(8), randn(5, 8), randn(5)], F.linear)
    case("gemm", "linear_nobias", LIN2, [randn(4, 8), randn(5, 8)], F.linear)
    case("gemm", "linear_empty_batch", LIN, [randn(0, 8), randn(5, 8), randn(5)], F.linear)
    case("gemm", "linear_k0", LIN, [randn(3, 0), randn(5, 0), randn(5)], F.linear)
    MM = "cuvil.gemm.matmul {a0}, {a1} : {T0}, {T1} -> {R}"
    case("gemm", "matmul_dot", MM, [randn(7), randn(7)], torch.matmul)
    case("gemm", "matmul_mv", MM, [randn(3, 7), randn(7)], torch.matmul)
    case("gemm", "matmul_vm", MM, [randn(7), randn(7, 4)], torch.matmul)
    case("gemm", "matmul_mm", MM, [randn(3, 7), randn(7, 4)], torch.matmul)
    case("gemm", "matmul_batch_broadcast", MM, [randn(2, 1, 3, 7), randn(5, 7, 4)], torch.matmul)
    case("gemm", "matmul_batched_vec", MM, [randn(2, 3, 7), randn(7)], torch.matmul)
    case("gemm", "matmul_k0", MM, [randn(3, 0), randn(0, 4)], torch.matmul)
    case("gemm", "matmul_i64", MM, [randint(-5, 5, 3, 4), randint(-5, 5, 4, 2)], torch.matmul)
    case("gemm", "batch_matmul", "cuvil.gemm.batch_matmul {a0}, {a1} : {T0}, {T1} -> {R}",
         [randn(3, 4, 5), randn(3, 5, 6)], torch.bmm)
    ADDMM = "cuvil.gemm.addmm {a0}, {a1}, {a2} {attrs}: ({Ts}) -> {R}"
    case("gemm", "addmm", ADDMM.format(a0="{a0}", a1="{a1}", a2="{a2}", attrs="", Ts="{Ts}", R="{R}"),
         [randn(6), randn(4, 5), randn(5, 6)], torch.addmm)
    case("gemm", "addmm_scaled",
         ADDMM.format(a0="{a0}", a1="{a1}", a2="{a2}",
                      attrs="{{beta = 0.5 : f64, alpha = 2.0 : f64}} ", Ts="{Ts}", R="{R}"),
         [randn(4, 1), randn(4, 5), randn(5, 6)],
         lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=2.0))
    case("gemm", "addmm_beta0_nan",
         ADDMM.format(a0="{a0}", a1="{a1}", a2="{a2}",
                      attrs="{{beta = 0.0 : f64}} ", Ts="{Ts}", R="{R}"),
         [np.full((4, 6), np.nan, dtype=np.float32), randn(4, 5), randn(5, 6)],
         lambda i, a, b: torch.addmm(i, a, b, beta=0.0))


def conv_op(name, stride, padding, dilation, groups=1, bias=True, extra=""):
    operands = "{a0}, {a1}, {a2}" if bias else "{a0}, {a1}"
    g = f" groups {groups}" if groups != 1 else ""
    return (f"cuvil.conv.{name} {operands} stride {list(stride)} padding {list(padding)} "
            f"dilation {list(dilation)}{extra}{g} : ({{Ts}}) -> {{R}}")


def define_conv():
    case("conv", "conv2d_stem", conv_op("conv2d", [2, 2], [3, 3], [1, 1]),
         [randn(1, 3, 20, 20), randn(8, 3, 7, 7), randn(8)],
         lambda x, w, b: F.conv2d(x, w, b, 2, 3))
    case("conv", "conv2d_3x3", conv_op("conv2d", [1, 1], [1, 1], [1, 1], bias=False),
         [randn(2, 4, 9, 7), randn(6, 4, 3, 3)], lambda x, w: F.conv2d(x, w, None, 1, 1))
    case("conv", "conv2d_depthwise", conv_op("conv2d", [2, 2], [1, 1], [1, 1], groups=6),
         [randn(1, 6, 11, 11), randn(6, 1, 3, 3), randn(6)],
         lambda x, w, b: F.conv2d(x, w, b, 2, 1, 1, 6))
    case("conv", "conv2d_grouped_dilated",
         conv_op("conv2d", [1, 2], [2, 0], [2, 1], groups=2),
         [randn(1, 4, 10, 9), randn(6, 2, 3, 2), randn(6)],
         lambda x, w, b: F.conv2d(x, w, b, (1, 2), (2, 0), (2, 1), 2))
    case("conv", "conv2d_1x1", conv_op("conv2d", [1, 1], [0, 0], [1, 1]),
         [randn(1, 16, 5, 5), randn(8, 16, 1, 1), randn(8)], F.conv2d)
    case("conv", "conv2d_empty_batch", conv_op("conv2d", [1, 1], [1, 1], [1, 1]),
         [randn(0, 3, 5, 5), randn(4, 3, 3, 3), randn(4)],
         lambda x, w, b: F.conv2d(x, w, b, 1, 1))
    case("conv", "conv1d", conv_op("conv1d", [2], [1], [1]),
         [randn(2, 3, 17), randn(5, 3, 4), randn(5)],
         lambda x, w, b: F.conv1d(x, w, b, 2, 1))
    case("conv", "conv1d_dilated_grouped", conv_op("conv1d", [1], [3], [3], groups=3, bias=False),
         [randn(1, 6, 12), randn(9, 2, 3)], lambda x, w: F.conv1d(x, w, None, 1, 3, 3, 3))
    case("conv", "conv_transpose2d",
         conv_op("conv_transpose2d", [2, 2], [1, 1], [1, 1], extra=" output_padding [1, 1]"),
         [randn(1, 4, 5, 5), randn(4, 3, 3, 3), randn(3)],
         lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1))
    case("conv", "conv_transpose2d_grouped_dilated",
         conv_op("conv_transpose2d", [1, 2], [0, 1], [2, 1], groups=2,
                 extra=" output_padding [0, 1]"),
         [randn(2, 4, 4, 3), randn(4, 2, 2, 3), randn(4)],
         lambda x, w, b: F.conv_transpose2d(x, w, b, (1, 2), (0, 1), (0, 1), 2, (2, 1)))
    case("conv", "conv_transpose1d",
         conv_op("conv_transpose1d", [3], [2], [1], bias=False, extra=" output_padding [2]"),
         [randn(1, 2, 6), randn(2, 3, 5)],
         lambda x, w: F.conv_transpose1d(x, w, None, 3, 2, 2))


def define_norm():
    BN = "cuvil.norm.batch_norm {a0}, {a1}, {a2} weight {a3} bias {a4} {{eps = 1.0e-03 : f64}} : ({Ts}) -> {R}"
    var = lambda c: positive(c)
    case("norm", "batch_norm", BN, [randn(2, 5, 4, 3), randn(5), var(5), randn(5), randn(5)],
         lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-3))
    case("norm", "batch_norm_1d_noaffine",
         "cuvil.norm.batch_norm {a0}, {a1}, {a2} : ({Ts}) -> {R}",
         [randn(4, 6), randn(6), var(6)],
         lambda x, m, v: F.batch_norm(x, m, v, None, None, False))
    LN = "cuvil.norm.layer_norm {a0} weight {a1} bias {a2} {{normalized_shape = array<i64: {ns}>, eps = 1.0e-05 : f64}} : ({Ts}) -> {R}"
    case("norm", "layer_norm", LN.replace("{ns}", "8"),
         [randn(2, 3, 8, scale=3) + 1, randn(8), randn(8)],
         lambda x, w, b: F.layer_norm(x, [8], w, b))
    case("norm", "layer_norm_2d", LN.replace("{ns}", "3, 4"),
         [randn(2, 3, 4), randn(3, 4), randn(3, 4)],
         lambda x, w, b: F.layer_norm(x, [3, 4], w, b))
    case("norm", "layer_norm_noaffine",
         "cuvil.norm.layer_norm {a0} {{normalized_shape = array<i64: 5>}} : ({Ts}) -> {R}",
         [randn(4, 5)], lambda x: F.layer_norm(x, [5]))
    GN = "cuvil.norm.group_norm {a0} weight {a1} bias {a2} {{num_groups = {g} : i64}} : ({Ts}) -> {R}"
    for g in (1, 3, 6):
        case("norm", f"group_norm_g{g}", GN.replace("{g}", str(g)),
             [randn(2, 6, 4, 5), randn(6), randn(6)],
             lambda x, w, b, g=g: F.group_norm(x, g, w, b))


def define_pool():
    def mp(name, k, s, p, d, ceil=False):
        c = " ceil_mode" if ceil else ""
        return (f"cuvil.pool.{name} {{a0}} kernel {k} stride {s} padding {p} dilation {d}{c}"
                " : {T0} -> {R}")
    case("pool", "max_pool2d", mp("max_pool2d", [3, 3], [2, 2], [1, 1], [1, 1]),
         [randn(1, 3, 12, 11)], lambda x: F.max_pool2d(x, 3, 2, 1))
    case("pool", "max_pool2d_ceil", mp("max_pool2d", [2, 2], [2, 2], [0, 0], [1, 1], True),
         [randn(2, 2, 7, 5)], lambda x: F.max_pool2d(x, 2, 2, 0, 1, True))
    case("pool", "max_pool2d_dilated", mp("max_pool2d", [3, 2], [1, 2], [1, 1], [2, 1]),
         [randn(1, 2, 9, 8)], lambda x: F.max_pool2d(x, (3, 2), (1, 2), 1, (2, 1)))
    case("pool", "max_pool2d_nan", mp("max_pool2d", [2, 2], [2, 2], [0, 0], [1, 1]),
         [with_specials(randn(1, 1, 4, 4))], lambda x: F.max_pool2d(x, 2, 2))
    case("pool", "max_pool1d", mp("max_pool1d", [3], [2], [1], [1], True),
         [randn(2, 3, 10)], lambda x: F.max_pool1d(x, 3, 2, 1, 1, True))

    def ap(name, k, s, p, ceil=False, include=True, div=None):
        flags = (" ceil_mode" if ceil else "") + (" count_include_pad" if include else "")
        flags += f" divisor {div}" if div else ""
        return f"cuvil.pool.{name} {{a0}} kernel {k} stride {s} padding {p}{flags} : {{T0}} -> {{R}}"
    case("pool", "avg_pool2d", ap("avg_pool2d", [2, 2], [2, 2], [0, 0]),
         [randn(1, 3, 8, 8)], lambda x: F.avg_pool2d(x, 2))
    case("pool", "avg_pool2d_pad_exclude", ap("avg_pool2d", [3, 3], [2, 2], [1, 1], include=False),
         [randn(1, 2, 7, 6)], lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False))
    case("pool", "avg_pool2d_pad_include_ceil", ap("avg_pool2d", [3, 3], [2, 2], [1, 1], ceil=True),
         [randn(1, 2, 8, 6)], lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True))
    case("pool", "avg_pool2d_divisor", ap("avg_pool2d", [2, 2], [1, 1], [1, 1], div=3),
         [randn(1, 1, 4, 4)], lambda x: F.avg_pool2d(x, 2, 1, 1, divisor_override=3))
    case("pool", "avg_pool1d", ap("avg_pool1d", [4], [3], [2], ceil=True, include=False),
         [randn(2, 3, 11)], lambda x: F.avg_pool1d(x, 4, 3, 2, True, False))
    AD = "cuvil.pool.{n} {{a0}} output_size {o} : {{T0}} -> {{R}}"
    case("pool", "adaptive_avg_pool2d_1x1", AD.format(n="adaptive_avg_pool2d", o=[1, 1]),
         [randn(2, 8, 7, 7)], lambda x: F.adaptive_avg_pool2d(x, 1))
    case("pool", "adaptive_avg_pool2d_uneven", AD.format(n="adaptive_avg_pool2d", o=[3, 5]),
         [randn(1, 2, 7, 3)], lambda x: F.adaptive_avg_pool2d(x, (3, 5)))
    case("pool", "adaptive_avg_pool1d", AD.format(n="adaptive_avg_pool1d", o=[4]),
         [randn(2, 3, 10)], lambda x: F.adaptive_avg_pool1d(x, 4))


def define_reduce():
    def red(n, dims, keep=False):
        k = " keepdim" if keep else ""
        return f"cuvil.reduce.{n} {{a0}} dims {list(dims)}{k} : {{T0}} -> {{R}}"
    x = randn(3, 4, 5)
    case("reduce", "sum", red("sum", [1]), [x], lambda t: t.sum(1))
    case("reduce", "sum_keepdim", red("sum", [0, 2], True), [x], lambda t: t.sum((0, 2), keepdim=True))
    case("reduce", "sum_all", red("sum", [0, 1, 2]), [x], lambda t: t.sum())
    case("reduce", "sum_i32_to_i64", red("sum", [0]), [randint(-9, 9, 4, 3, dtype=np.int32)],
         lambda t: t.sum(0))
    case("reduce", "sum_bool", red("sum", [1]), [randn(3, 4) > 0], lambda t: t.sum(1))
    case("reduce", "sum_empty", red("sum", [0]), [randn(0, 3)], lambda t: t.sum(0))
    case("reduce", "prod", red("prod", [2]), [x], lambda t: t.prod(2))
    case("reduce", "mean_empty", red("mean", [1]), [randn(2, 0)], lambda t: t.mean(1))
    case("reduce", "mean", red("mean", [1, 2], True), [x], lambda t: t.mean((1, 2), keepdim=True))
    case("reduce", "max", red("max", [1]), [with_specials(x)], lambda t: t.amax(1))
    case("reduce", "min_i64", red("min", [0]), [randint(-9, 9, 5, 2)], lambda t: t.amin(0))
    case("reduce", "any", red("any", [1]), [np.array([[0, 0], [0, 3]], dtype=np.int64)],
         lambda t: t.any(1))
    case("reduce", "all", red("all", [0]), [np.array([[1.0, 0.0], [2.0, 5.0]], dtype=np.float32)],
         lambda t: t.all(0))
    case("reduce", "var", "cuvil.reduce.var {a0} dims [2] : {T0} -> {R}", [x],
         lambda t: t.var(2))
    case("reduce", "var_biased",
         "cuvil.reduce.var {a0} dims [0, 1] keepdim {{correction = 0 : i64}} : {T0} -> {R}",
         [x], lambda t: torch.var(t, (0, 1), unbiased=False, keepdim=True))
    case("reduce", "std", "cuvil.reduce.std {a0} dims [1] : {T0} -> {R}", [x], lambda t: t.std(1))
    ties = np.array([[1, 5, 5, 2], [7, 7, 0, 7]], dtype=np.float32)
    CUM = "cuvil.reduce.{n} {{a0}} {{{{dim = {d} : i64, kind = #cuvil<scan_kind {k}>}}}} : {{T0}} -> {{R}}"
    wavy = np.array([[1.0, 3.0, 3.0, np.nan, 2.0, 5.0], [-1.0, -1.0, 0.0, -2.0, 7.0, 7.0]], np.float32)
    case("reduce", "cumsum", CUM.format(n="cumulative", d=1, k="sum"), [x], lambda t: torch.cumsum(t, 1))
    case("reduce", "cumsum_i64", CUM.format(n="cumulative", d=0, k="sum"), [randint(-9, 9, 4, 3)],
         lambda t: torch.cumsum(t, 0))
    case("reduce", "cumprod", CUM.format(n="cumulative", d=2, k="prod"), [x], lambda t: torch.cumprod(t, 2))
    case("reduce", "cummax", CUM.format(n="cumulative", d=1, k="max"), [wavy], lambda t: torch.cummax(t, 1)[0])
    case("reduce", "cummax_index", CUM.format(n="cumulative_index", d=1, k="max"), [wavy],
         lambda t: torch.cummax(t, 1)[1])
    case("reduce", "cummin_index_i32", CUM.format(n="cumulative_index", d=0, k="min"),
         [randint(-3, 3, 6, 2, dtype=np.int32)], lambda t: torch.cummin(t, 0)[1])
    case("reduce", "logcumsumexp", CUM.format(n="cumulative", d=1, k="logsumexp"),
         [np.array([[-np.inf, -np.inf, 0.0, 30.0, np.inf], [1.0, 2.0, -3.0, 4.0, -5.0]], np.float32)],
         lambda t: torch.logcumsumexp(t, 1))
    case("reduce", "argmax_ties", "cuvil.reduce.argmax {a0} dim 1 : {T0} -> {R}", [ties],
         lambda t: t.argmax(1))
    case("reduce", "argmin_keepdim", "cuvil.reduce.argmin {a0} dim 0 keepdim : {T0} -> {R}",
         [x], lambda t: t.argmin(0, keepdim=True))
    case("reduce", "argmax_flat", "cuvil.reduce.argmax {a0} : {T0} -> {R}", [x],
         lambda t: t.argmax())
    case("reduce", "argmax_nan", "cuvil.reduce.argmax {a0} dim 0 : {T0} -> {R}",
         [np.array([1.0, np.nan, 3.0], dtype=np.float32)], lambda t: t.argmax(0))


def define_shape():
    x = randn(2, 3, 4)
    SH = "cuvil.shape.{n} {{a0}} {attrs} : {{T0}} -> {{R}}"
    case("shape", "reshape", SH.format(n="reshape", attrs="{{shape = array<i64: 4, -1>}}"),
         [x], lambda t: t.reshape(4, -1))
    case("shape", "reshape_empty", SH.format(n="reshape", attrs="{{shape = array<i64: 3, 0, 2>}}"),
         [randn(0, 6)], lambda t: t.reshape(3, 0, 2))
    case("shape", "reshape_i1", SH.format(n="reshape", attrs="{{shape = array<i64: 6>}}"),
         [randn(2, 3) > 0], lambda t: t.reshape(6))
    case("shape", "flatten", SH.format(n="flatten", attrs="{{start_dim = 1 : i64, end_dim = 2 : i64}}"),
         [x], lambda t: t.flatten(1))
    case("shape", "squeeze", SH.format(n="squeeze", attrs="{{dims = array<i64: 0, 2>}}"),
         [randn(1, 3, 1, 2)], lambda t: t.squeeze(2).squeeze(0))
    case("shape", "unsqueeze", SH.format(n="unsqueeze", attrs="{{dim = 3 : i64}}"),
         [x], lambda t: t.unsqueeze(3))
    case("shape", "permute", SH.format(n="permute", attrs="{{dims = array<i64: 2, 0, 1>}}"),
         [x], lambda t: t.permute(2, 0, 1).contiguous())
    case("shape", "transpose", SH.format(n="transpose", attrs="{{dim0 = 0 : i64, dim1 = 2 : i64}}"),
         [randint(0, 9, 2, 3, 4)], lambda t: t.transpose(0, 2).contiguous())
    case("shape", "expand", SH.format(n="expand", attrs="{{shape = array<i64: 2, -1, 4>}}"),
         [randn(3, 1)], lambda t: t.expand(2, -1, 4).contiguous())
    case("shape", "expand_0d", SH.format(n="expand", attrs="{{shape = array<i64: 3>}}"),
         [np.array(5, dtype=np.int64)], lambda t: t.expand(3).contiguous())


def define_tensor():
    CAST = "cuvil.tensor.cast {a0} : {T0} -> {R}"
    specials = np.array([-2.7, -0.5, 0.0, 0.5, 2.9, 100.2], dtype=np.float32)
    case("tensor", "cast_f32_i32", CAST, [specials], lambda t: t.to(torch.int32))
    case("tensor", "cast_f32_bool", CAST, [specials], lambda t: t.to(torch.bool))
    case("tensor", "cast_i64_f32", CAST, [randint(-1000, 1000, 5)], lambda t: t.to(torch.float32))
    case("tensor", "cast_i64_u8", CAST, [np.array([-1, 256, 300, 5])], lambda t: t.to(torch.uint8))
    case("tensor", "cast_bool_f64", CAST, [np.array([True, False])], lambda t: t.to(torch.float64))
    case("tensor", "cast_f32_f16", CAST, [randn(6, scale=1000)], lambda t: t.to(torch.float16))
    CAT = "cuvil.tensor.concat {a0}, {a1}, {a2} {{dim = 1 : i64}} : ({Ts}) -> {R}"
    case("tensor", "concat", CAT, [randn(2, 1, 3), randn(2, 4, 3), randn(2, 2, 3)],
         lambda *t: torch.cat(t, 1))
    case("tensor", "concat_empty", CAT, [randn(2, 0, 3), randn(2, 2, 3), randn(2, 0, 3)],
         lambda *t: torch.cat(t, 1))
    SL = "cuvil.tensor.slice {{a0}} {{{{dim = {d} : i64, start = {s} : i64, end = {e} : i64, step = {st} : i64}}}} : {{T0}} -> {{R}}"
    x = randn(4, 11)
    case("tensor", "slice_step", SL.format(d=1, s=1, e=-1, st=3), [x], lambda t: t[:, 1:-1:3])
    case("tensor", "slice_negative_start", SL.format(d=1, s=-4, e=2**63 - 1, st=1), [x],
         lambda t: t[:, -4:])
    case("tensor", "slice_clamped", SL.format(d=0, s=-100, e=100, st=2), [x], lambda t: t[-100:100:2])
    case("tensor", "slice_empty", SL.format(d=1, s=7, e=3, st=1), [x], lambda t: t[:, 7:3])
    case("tensor", "select_negative",
         "cuvil.tensor.select {a0} {{dim = 1 : i64, index = -2 : i64}} : {T0} -> {R}",
         [x], lambda t: t.select(1, -2))
    case("tensor", "index_select",
         "cuvil.tensor.index_select {a0}, {a1} {{dim = 0 : i64}} : {T0}, {T1} -> {R}",
         [randn(5, 3), np.array([4, 0, -1, 2, 2])], lambda t, i: t[i])
    case("tensor", "gather",
         "cuvil.tensor.gather {a0}, {a1} {{dim = 1 : i64}} : {T0}, {T1} -> {R}",
         [randn(3, 5), randint(0, 5, 3, 2)], lambda t, i: torch.gather(t, 1, i))
    SC = "cuvil.tensor.scatter {{a0}}, {{a1}}, {{a2}} {{{{dim = {d} : i64{m}}}}} : {{T0}}, {{T1}}, {{T2}} -> {{R}}"
    # A permutation of each column's rows: no repeated targets for "none".
    perm = np.stack([RNG.permutation(5)[:2] for _ in range(3)], axis=1)
    case("tensor", "scatter", SC.format(d=0, m=""), [randn(5, 3), perm, randn(2, 3)],
         lambda t, i, s: t.scatter(0, i, s))
    rep = np.array([[0, 1, 0], [0, 4, 4], [2, 1, 0]])
    for red in ["sum", "prod", "mean", "amax", "amin"]:
        for self_ in [True, False]:
            case("tensor", f"scatter_{red}{'' if self_ else '_noself'}",
                 SC.format(d=0, m=f", reduce = #cuvil<scatter_reduce {red}>" + ("" if self_ else ", include_self = false")),
                 [randn(5, 3), rep, randn(3, 3)],
                 lambda t, i, s, red=red, self_=self_: t.scatter_reduce(0, i, s, red, include_self=self_))
    case("tensor", "scatter_mean_int", SC.format(d=1, m=", reduce = #cuvil<scatter_reduce mean>"),
         [randint(-9, 9, 2, 4), np.array([[0, 0, 3], [1, 1, 1]]), randint(-9, 9, 2, 3)],
         lambda t, i, s: t.scatter_reduce(1, i, s, "mean"))
    # sort: stable (torch.sort(stable=True)), NaN last ascending and first
    # descending; every dtype the kernel reads.
    SO = "cuvil.tensor.sort {{a0}} {{{{dim = {d} : i64{m}}}}} : {{T0}} -> {V}, {I}"
    def sort_case(name, x, d, desc):
        shape = "x".join(str(n) for n in x.shape)
        v = ttype(x.shape, x.dtype)
        i = ttype(x.shape, np.int64)
        m = ", descending" if desc else ""
        for out in (0, 1):
            case("tensor", f"{name}_{'values' if out == 0 else 'indices'}",
                 SO.format(d=d, m=m, V=v, I=i), [x],
                 lambda t, d=d, desc=desc, out=out: torch.sort(t, dim=d, descending=desc, stable=True)[out],
                 results=2, result=out)
    ties = randint(-3, 3, 4, 9)
    sort_case("sort_f32_nan", np.array([[2.0, np.nan, -1.0, 2.0, -np.inf, np.inf, 0.0, -0.0]], np.float32), 1, False)
    sort_case("sort_f32_nan_desc", np.array([[2.0, np.nan, -1.0, 2.0, -np.inf, np.inf, 0.0, np.nan]], np.float32), 1, True)
    sort_case("sort_f64_dim0", randn(7, 3).astype(np.float64), 0, False)
    sort_case("sort_i64_ties", ties, 1, False)
    sort_case("sort_i32_ties_desc", ties.astype(np.int32), 0, True)
    sort_case("sort_i8", randint(-100, 100, 3, 5).astype(np.int8), 1, True)
    sort_case("sort_u8", randint(0, 255, 3, 5).astype(np.uint8), 1, False)
    sort_case("sort_bool", RNG.random((2, 7)) > 0.5, 1, False)
    sort_case("sort_f16", randn(3, 6).astype(np.float16), 1, False)
    sort_case("sort_0d", np.array(1.5, np.float32), 0, False)
    PAD = "cuvil.tensor.pad {{a0}} {{{{pad = array<i64: {p}>{m}}}}} : {{T0}} -> {{R}}"
    y = randn(1, 2, 5, 6)
    case("tensor", "pad_constant", PAD.format(p="1, 2, 0, 3", m=", value = 1.5 : f64"), [y],
         lambda t: F.pad(t, (1, 2, 0, 3), value=1.5))
    case("tensor", "pad_negative", PAD.format(p="-1, 2, -2, 0", m=""), [y],
         lambda t: F.pad(t, (-1, 2, -2, 0)))
    case("tensor", "pad_reflect", PAD.format(p="2, 1, 3, 4", m=", mode = #cuvil<pad_mode reflect>"),
         [y], lambda t: F.pad(t, (2, 1, 3, 4), mode="reflect"))
    case("tensor", "pad_replicate",
         PAD.format(p="3, 0, 1, 2", m=", mode = #cuvil<pad_mode replicate>"),
         [y], lambda t: F.pad(t, (3, 0, 1, 2), mode="replicate"))
    case("tensor", "pad_circular", PAD.format(p="2, 3, 5, 1", m=", mode = #cuvil<pad_mode circular>"),
         [y], lambda t: F.pad(t, (2, 3, 5, 1), mode="circular"))
    case("tensor", "pad_reflect_1d", PAD.format(p="3, 3", m=", mode = #cuvil<pad_mode reflect>"),
         [randn(2, 3, 5)], lambda t: F.pad(t, (3, 3), mode="reflect"))
    # Resize: non-integer ratios and scale factors are where index rounding
    # (f32 in PyTorch) must match exactly.
    RS = "cuvil.tensor.resize {{a0}} {m} size {s}{x} : {{T0}} -> {{R}}"
    img = randn(2, 3, 7, 10)
    for name, m, size, extra, ref in [
        ("nearest_up", "nearest", [14, 20], "", dict(size=(14, 20), mode="nearest")),
        ("nearest_down_uneven", "nearest", [3, 4], "", dict(size=(3, 4), mode="nearest")),
        ("nearest_scale", "nearest", [11, 17], " scales [1.7, 1.7]",
         dict(scale_factor=1.7, mode="nearest")),
        ("nearest_exact", "nearest_exact", [5, 13], "", dict(size=(5, 13), mode="nearest-exact")),
        ("nearest_exact_scale", "nearest_exact", [4, 6], " scales [0.6, 0.6]",
         dict(scale_factor=0.6, mode="nearest-exact")),
        ("bilinear", "linear", [9, 23], "", dict(size=(9, 23), mode="bilinear", align_corners=False)),
        ("bilinear_down", "linear", [3, 4], "", dict(size=(3, 4), mode="bilinear", align_corners=False)),
        ("bilinear_align", "linear", [9, 23], " align_corners",
         dict(size=(9, 23), mode="bilinear", align_corners=True)),
        ("bilinear_align_to_1", "linear", [1, 5], " align_corners",
         dict(size=(1, 5), mode="bilinear", align_corners=True)),
        ("bilinear_scale", "linear", [17, 25], " scales [2.5, 2.5]",
         dict(scale_factor=2.5, mode="bilinear", align_corners=False)),
        ("bilinear_same_rows", "linear", [7, 15], "", dict(size=(7, 15), mode="bilinear")),
    ]:
        case("tensor", "resize_" + name, RS.format(m=m, s=size, x=extra), [img],
             lambda t, ref=ref: F.interpolate(t, **ref))
    case("tensor", "resize_linear_1d", RS.format(m="linear", s=[11], x=""), [randn(2, 3, 4)],
         lambda t: F.interpolate(t, size=11, mode="linear"))
    case("tensor", "resize_nearest_1d_scale", RS.format(m="nearest", s=[9], x=" scales [2.3]"),
         [randn(2, 3, 4)], lambda t: F.interpolate(t, scale_factor=2.3, mode="nearest"))
    case("tensor", "resize_trilinear", RS.format(m="linear", s=[3, 5, 4], x=" align_corners"),
         [randn(1, 2, 2, 3, 5)],
         lambda t: F.interpolate(t, size=(3, 5, 4), mode="trilinear", align_corners=True))
    case("tensor", "resize_nearest_3d", RS.format(m="nearest", s=[4, 2, 7], x=""),
         [randn(1, 2, 2, 3, 5)], lambda t: F.interpolate(t, size=(4, 2, 7), mode="nearest"))
    case("tensor", "resize_nearest_u8", RS.format(m="nearest", s=[5, 9], x=""),
         [randint(0, 255, 1, 2, 4, 6, dtype=np.uint8)],
         lambda t: F.interpolate(t, size=(5, 9), mode="nearest"))
    case("tensor", "resize_bilinear_f64", RS.format(m="linear", s=[6, 11], x=""),
         [randn(1, 2, 4, 7, dtype=np.float64)],
         lambda t: F.interpolate(t, size=(6, 11), mode="bilinear"))
    case("tensor", "constant", "cuvil.constant dense<[[1.5, -2.0], [0.0, 3.25]]> : {R}", [],
         lambda: torch.tensor([[1.5, -2.0], [0.0, 3.25]]))
    case("tensor", "constant_i1", "cuvil.constant dense<[true, false, true]> : {R}", [],
         lambda: torch.tensor([True, False, True]))
    case("tensor", "embedding",
         "cuvil.tensor.embedding {a0}, {a1} : {T0}, {T1} -> {R}",
         [randn(10, 4), randint(0, 10, 2, 3)], lambda w, i: F.embedding(i, w))


FAMILIES = {
    "act": define_act, "math": define_math, "logic": define_logic, "gemm": define_gemm,
    "conv": define_conv, "norm": define_norm, "pool": define_pool, "reduce": define_reduce,
    "shape": define_shape, "tensor": define_tensor,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuvil-run", required=True, help="path to the cuvil-run binary")
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES),
                    help="only these op families (default: all)")
    ap.add_argument("--work-dir", help="keep models and arrays here (default: a temp dir)")
    ap.add_argument("-k", dest="pattern", help="only cases whose name contains this")
    args = ap.parse_args()
    for fam in args.family or sorted(FAMILIES):
        FAMILIES[fam]()
    cases = [c for c in CASES if not args.pattern or args.pattern in c.name]
    work = args.work_dir or tempfile.mkdtemp(prefix="cuvil-parity-")
    failures = 0
    for c in cases:
        msg = run_case(c, args.cuvil_run, os.path.join(work, c.family))
        status = "ok" if msg is None else "FAIL"
        print(f"{status:4} {c.family}.{c.name}" + ("" if msg is None else f": {msg}"))
        failures += msg is not None
    print(f"{len(cases) - failures}/{len(cases)} cases agree with PyTorch "
          f"{torch.__version__} (work dir {work})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
