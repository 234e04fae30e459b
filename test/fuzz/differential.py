#!/usr/bin/env python3
r"""Grammar-based differential fuzzer: compiled libraries against the evaluator.

Every case is a random model in the `cuvil` dialect (textual .mlir), valid by
construction: a DAG of ops whose shapes, attributes and value ranges the
generator works out itself (convolutions with random channels, kernels,
strides, paddings, dilations and groups, constant weights printed exactly,
linear/matmul/addmm products, pooling, batch/layer/group norm, softmax,
reductions, scans, reshapes, permutes, slices, concats, pads, resizes,
element-wise math with broadcasting, and the chains the graph optimizer fuses
or recognises: conv + batch norm + bias + residual add + activation, softmax
and layer norm written out in elementary ops). Each model is

  1. evaluated by Cuvil's reference evaluator (`cuvil-run MODEL.mlir`),
  2. compiled by `cuvil-export --target x86_64` (CPU drawn from --cpus),
  3. run as a library (`cuvil-run lib.so`, thread count drawn per case),

on the same generated inputs (`--input I=SHAPExf32:random --seed S`), and the
outputs are compared with |got - expected| <= atol + rtol * |expected| (NaN
matches NaN, infinities must match exactly). Where that fails, the evaluator
also runs the model with every computed intermediate perturbed by 1e-6
relative (four ways), and 4x the largest change this causes in an element is
added to its tolerance: a different but correct float32 implementation may
differ that much where the model amplifies rounding (a layer norm over nearly
equal values, log_softmax of nearly equal logits). Ops that are discontinuous
(floor, comparisons, fmod, atan2, casts, integer arithmetic) only read values
both sides compute bit for bit: inputs, constants and data movement of them.

Findings: an output mismatch, a crash of any tool (negative exit status,
"internal error", "LLVM ERROR", "Stack dump"), a timeout, a non-zero exit of
cuvil-export or of the library run on a model the evaluator accepts. A model
the evaluator rejects is a generator mistake: it is counted as "invalid" and
saved under WORK/invalid/, not as a finding. Each finding is written to
WORK/findings/case-SEED.mlir with case-SEED.txt (reproduction commands, worst
element); with --reduce also case-SEED.min.mlir, the smallest model found by
cutting values into new inputs, dropping outputs and bypassing ops while the
finding persists.

Case i uses seed K+i for the model, the inputs, the CPU and the thread count,
so `--seed K+i --cases 1` replays case i alone.

Run (from the repository root):

  /usr/bin/python3 test/fuzz/differential.py --bin build/bin --work /tmp/diff \
      --cases 5 --seed 1
  /usr/bin/python3 test/fuzz/differential.py --bin build/bin --work /tmp/diff \
      --seconds 900 --seed 1000 --jobs 2 --reduce --json /tmp/diff/summary.json
  /usr/bin/python3 test/fuzz/differential.py --bin build/bin --work /tmp/diff \
      --check model.mlir --shapes 1x4x8x8,4      # one hand-written model

Exit status: 0 no findings, 1 findings, 2 usage error or tools missing.
Standard library and NumPy only.
"""
import argparse
import concurrent.futures
import copy
import json
import math
import os
import random
import re
import shutil
import string
import subprocess
import sys
import threading
import time
from collections import Counter

try:
    import numpy as np
except ImportError:  # pragma: no cover - depends on the machine
    print("differential: NumPy is required (run with /usr/bin/python3)", file=sys.stderr)
    sys.exit(2)

MAX_ELEMS = 16384  # largest tensor the generator builds
MAX_RANK = 5
MAX_REDUCE = 2048  # longest reduction (norms, softmax, sums): f32 accumulation error grows with it
CRASH_MARKERS = ("internal error", "LLVM ERROR", "Stack dump", "Assertion", "Segmentation fault",
                 "AddressSanitizer")


# ----------------------------------------------------------------------------
# Types and literals
# ----------------------------------------------------------------------------

def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def ttype(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def ff(v):
    """A float32 as text that parses back to the same float32 (9 digits)."""
    return "%.8e" % float(np.float32(v))


def fattr(v):
    return ff(v) + " : f64"


def dense_literal(arr):
    a = np.asarray(arr, dtype=np.float32)
    if a.ndim == 0:
        return f"dense<{ff(a)}>"

    def rec(x):
        if x.ndim == 1:
            return "[" + ", ".join(ff(e) for e in x) + "]"
        return "[" + ", ".join(rec(s) for s in x) + "]"
    return f"dense<{rec(a)}>"


def broadcast(*shapes):
    """NumPy broadcasting of shapes, or None."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = max(dims)
        if any(d != 1 and d != big for d in dims):
            return None
        out.append(big)
    return tuple(out)


def arr(xs):
    return ", ".join(str(int(x)) for x in xs)


# ----------------------------------------------------------------------------
# The model graph
# ----------------------------------------------------------------------------

class Value:
    """An SSA value. `mag` is a rough typical magnitude (to keep exp & co in
    range); `exact` says both implementations compute it bit for bit (inputs,
    constants and pure data movement of them), which the discontinuous ops
    (floor, comparisons, fmod, atan2...) require of their operands."""

    def __init__(self, vid, shape, dtype="f32", mag=1.0, exact=False, const=False, nocut=False):
        self.id, self.shape, self.dtype = vid, tuple(shape), dtype
        self.mag, self.exact, self.const = mag, exact, const
        # Moved into an op's domain (a denominator, a log's operand...): the
        # reducer must not replace it by an unconstrained input.
        self.nocut = nocut

    @property
    def type(self):
        return ttype(self.shape, self.dtype)


class Op:
    """One line of the model: `template` uses $o0.. for operands, $r0.. for
    results (string.Template, MLIR never uses '$')."""

    def __init__(self, kind, template, operands, results, pattern=None):
        self.kind, self.template = kind, template
        self.operands, self.results, self.pattern = list(operands), list(results), pattern


class Graph:
    def __init__(self):
        self.values = {}
        self.args = []
        self.ops = []
        self.outputs = []
        self.next_id = 0

    def copy(self):
        return copy.deepcopy(self)

    def new_value(self, shape, **kw):
        v = Value(self.next_id, shape, **kw)
        self.values[v.id] = v
        self.next_id += 1
        return v.id

    def add_arg(self, shape, mag=1.0):
        vid = self.new_value(shape, mag=mag, exact=True)
        self.args.append(vid)
        return vid

    def add_op(self, kind, template, operands, results, pattern=None):
        """results: list of dicts for new_value; returns the new ids."""
        ids = [self.new_value(**r) for r in results]
        self.ops.append(Op(kind, template, operands, ids, pattern))
        return ids

    def producer(self):
        return {r: op for op in self.ops for r in op.results}

    def uses(self):
        u = Counter()
        for op in self.ops:
            u.update(op.operands)
        u.update(self.outputs)
        return u

    def dce(self):
        """Drops ops no output needs and arguments no op uses."""
        live = set(self.outputs)
        keep = []
        for op in reversed(self.ops):
            if any(r in live for r in op.results):
                keep.append(op)
                live.update(op.operands)
        self.ops = list(reversed(keep))
        self.args = [a for a in self.args if a in live]

    def live_ops(self):
        return [op for op in self.ops if op.kind != "constant"]

    def replace_uses(self, old, new):
        for op in self.ops:
            op.operands = [new if o == old else o for o in op.operands]
        self.outputs = [new if o == old else o for o in self.outputs]

    def cut(self, vid):
        """Turns value `vid` into a new function argument (reduction step)."""
        v = self.values[vid]
        new = self.add_arg(v.shape)
        self.replace_uses(vid, new)
        self.dce()

    def render(self):
        names = {a: f"%arg{i}" for i, a in enumerate(self.args)}
        for op in self.ops:
            for r in op.results:
                names[r] = f"%v{r}"
        sig = ", ".join(f"{names[a]}: {self.values[a].type}" for a in self.args)
        rtypes = [self.values[o].type for o in self.outputs]
        lines = [f"func.func @forward({sig}) -> ({', '.join(rtypes)}) {{"]
        for op in self.ops:
            subst = {f"o{i}": names[o] for i, o in enumerate(op.operands)}
            subst.update({f"r{i}": names[r] for i, r in enumerate(op.results)})
            lines.append("  " + string.Template(op.template).substitute(subst))
        lines.append(f"  return {', '.join(names[o] for o in self.outputs)} : {', '.join(rtypes)}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def arg_shapes(self):
        return [self.values[a].shape for a in self.args]


def perturbed(graph, eps, freq):
    """The model with every computed f32 value r replaced by
    r * (1 + eps * sin(clamp(freq * r) + phase)): each intermediate off by about eps
    relative, differently per element, as a different but correct f32
    implementation (other summation order, other exp) would be. Inputs,
    constants and exact values (what comparisons and floor read) stay as
    they are. Only the evaluator runs it: its change of the outputs measures
    how much rounding inside the model those outputs amplify."""
    h = graph.copy()
    subst, ops = {}, []

    def mk(template, operands, shape):
        vid = h.new_value(shape)
        ops.append(Op("perturb", "$r0 = " + template, operands, [vid]))
        return vid

    def scalar(x):
        vid = h.new_value(())
        ops.append(Op("constant", f"$r0 = cuvil.constant {dense_literal(np.float32(x))} : tensor<f32>", [], [vid]))
        return vid
    cf, ce, c1 = scalar(freq), scalar(eps), scalar(1.0)
    nprng = np.random.default_rng(int(freq))
    phases = {}

    def phase(shape):
        """A position-dependent phase: a sum of one random vector per dimension,
        broadcast (so that equal values at different places move differently)."""
        if shape not in phases:
            p = None
            for k, d in enumerate(shape):
                vs = tuple(d if i == k else 1 for i in range(len(shape)))
                vid = h.new_value(vs)
                a = nprng.uniform(0, 2 * np.pi, size=vs).astype(np.float32)
                ops.append(Op("constant", f"$r0 = cuvil.constant {dense_literal(a)} : {ttype(vs)}", [], [vid]))
                if p is None:
                    p = vid
                else:
                    ps = broadcast(h.values[p].shape, vs)
                    p = mk(f"cuvil.math.add $o0, $o1 : {h.values[p].type}, {ttype(vs)} -> {ttype(ps)}", [p, vid], ps)
            phases[shape] = p
        return phases[shape]
    for op in graph.ops:
        op = copy.copy(op)
        op.operands = [subst.get(o, o) for o in op.operands]
        ops.append(op)
        for r in op.results:
            v = h.values[r]
            if v.dtype != "f32" or v.exact or v.const:
                continue
            t, S = v.type, "tensor<f32>"
            a = mk(f"cuvil.math.mul $o0, $o1 : {t}, {S} -> {t}", [r, cf], v.shape)
            a = mk(f"cuvil.math.clamp $o0 {{min = -1.0e+06 : f64, max = 1.0e+06 : f64}} : {t}", [a], v.shape)
            if v.shape:
                a = mk(f"cuvil.math.add $o0, $o1 : {t}, {t} -> {t}", [a, phase(v.shape)], v.shape)
            a = mk(f"cuvil.math.sin $o0 : {t}", [a], v.shape)
            a = mk(f"cuvil.math.mul $o0, $o1 : {t}, {S} -> {t}", [a, ce], v.shape)
            a = mk(f"cuvil.math.add $o0, $o1 : {t}, {S} -> {t}", [a, c1], v.shape)
            subst[r] = mk(f"cuvil.math.mul $o0, $o1 : {t}, {t} -> {t}", [r, a], v.shape)
    h.ops = ops
    h.outputs = [subst.get(o, o) for o in graph.outputs]
    return h


# ----------------------------------------------------------------------------
# The generator
# ----------------------------------------------------------------------------

# After a conv or linear layer; relu, hardtanh and clamp are what the CPU
# kernels take as epilogues, so they come up most.
ACTIVATIONS = ["act.relu"] * 4 + ["act.relu6"] * 2 + ["math.clamp"] * 2 + [
    "act.hardtanh", "act.silu", "act.sigmoid", "act.gelu", "act.hardswish", "act.leaky_relu",
    "act.tanh", "act.gelu_tanh", "act.elu", "act.mish"]


class ModelGen:
    """Builds one random model from a seed."""

    def __init__(self, seed, max_ops=16, nan_rate=0.0):
        self.rng = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.max_ops = max_ops
        self.nan_rate = nan_rate
        self.g = Graph()
        self.last = None
        self.side = []  # values that must be outputs too (a second use of a fusion candidate)
        # One case in eight is "big": channels, rows and reductions past the
        # kernels' blocking (MR 8, B panels 32, KC 128/256, MC 256, NC 128).
        self.big = self.rng.random() < 0.125
        self.max_elems = 65536 if self.big else MAX_ELEMS

    # --- helpers -----------------------------------------------------------

    def V(self, vid):
        return self.g.values[vid]

    def T(self, vid):
        return self.g.values[vid].type

    def op(self, kind, template, operands, shape, mag=1.0, exact=False, pattern=None, dtype="f32",
           nocut=False):
        """Adds a one-result op `cuvil.<kind>`; the template starts after '= '."""
        (r,) = self.g.add_op(kind, "$r0 = " + template, operands,
                             [dict(shape=shape, mag=min(mag, 1e30), exact=exact, dtype=dtype, nocut=nocut)],
                             pattern)
        return r

    def const(self, a, mag=None):
        a = np.asarray(a, dtype=np.float32)
        m = float(np.max(np.abs(a))) if a.size else 0.0
        (r,) = self.g.add_op("constant", f"$r0 = cuvil.constant {dense_literal(a)} : {ttype(a.shape)}",
                             [], [dict(shape=a.shape, mag=m if mag is None else mag, exact=True, const=True)])
        return r

    def uniform(self, shape, lo=-1.0, hi=1.0):
        return self.np.uniform(lo, hi, size=shape).astype(np.float32)

    def weight(self, shape, fan_in):
        """Variance 1/fan_in: activations keep their scale through layers."""
        return self.uniform(shape) * np.float32(math.sqrt(3.0 / max(fan_in, 1)))

    def const_or_arg(self, shape, make, p_const=0.8):
        """A weight-like operand: a constant (mostly), a constant expression
        (what fold-constants must evaluate before the weights are packed) or
        a function input."""
        if self.rng.random() < p_const:
            if self.rng.random() < 0.12 and shape:
                return self.const_expr(np.asarray(make(), dtype=np.float32))
            return self.const(make())
        return self.g.add_arg(shape, mag=1.0)

    def const_expr(self, a):
        """Ops on constants only that compute `a`: a transposed or reshaped
        constant, a scaled one, a sum of two, a negated one."""
        how = self.rng.choice(["transpose", "reshape", "scale", "sum", "neg"] if a.ndim >= 2 else ["scale", "sum", "neg"])
        t = ttype(a.shape)
        P = "const_expr"
        if how == "transpose":
            i, j = self.rng.sample(range(a.ndim), 2)
            c = self.const(np.swapaxes(a, i, j))
            return self.op("shape.transpose", f"cuvil.shape.transpose $o0 {{dim0 = {i} : i64, dim1 = {j} : i64}} : {self.T(c)} -> {t}",
                           [c], a.shape, exact=True, pattern=P)
        if how == "reshape":
            c = self.const(a.reshape(-1))
            return self.op("shape.reshape", f"cuvil.shape.reshape $o0 {{shape = array<i64: {arr(a.shape)}>}} : {self.T(c)} -> {t}",
                           [c], a.shape, exact=True, pattern=P)
        if how == "neg":
            c = self.const(-a)
            return self.op("math.neg", f"cuvil.math.neg $o0 : {t}", [c], a.shape, exact=True, pattern=P)
        if how == "scale":
            c, k = self.const(a * np.float32(0.5)), self.const(np.float32(2.0))
            return self.op("math.mul", f"cuvil.math.mul $o0, $o1 : {t}, tensor<f32> -> {t}", [c, k], a.shape, exact=True, pattern=P)
        half = self.uniform(a.shape, -0.1, 0.1)
        c1, c2 = self.const(a - half), self.const(half)
        return self.op("math.add", f"cuvil.math.add $o0, $o1 : {t}, {t} -> {t}", [c1, c2], a.shape, exact=True, pattern=P)

    def bshape(self, shape):
        """A random shape that broadcasts into `shape`."""
        s = list(shape)
        drop = self.rng.choice([0, 0, 0, 1, len(s)]) if s else 0
        s = s[min(drop, len(s)):]
        return tuple(1 if self.rng.random() < 0.5 else d for d in s)

    def candidates(self, pred=lambda v: True):
        return [v for v in self.g.values.values()
                if v.dtype == "f32" and not v.const and pred(v)]

    def pick(self, pred=lambda v: True):
        cands = self.candidates(pred)
        if not cands:
            return None
        uses = self.g.uses()
        weights = [1 + 3 * (uses[v.id] == 0) + 8 * (v.id == self.last) for v in cands]
        return self.rng.choices(cands, weights)[0].id

    def partner(self, vid, exact=False, allow_new=True):
        """A second operand broadcast-compatible with `vid`: an existing value,
        a new constant or a new input."""
        shape = self.V(vid).shape

        def ok(u):
            b = broadcast(shape, u.shape)
            return b is not None and prod(b) <= self.max_elems and len(b) <= MAX_RANK and \
                (u.exact or not exact)
        r = self.rng.random()
        if r < 0.5 or not allow_new:
            u = self.pick(ok)
            if u is not None:
                return u
        s = self.bshape(shape) if self.rng.random() < 0.7 else shape
        if r < 0.8 or exact and self.rng.random() < 0.5:
            return self.const(self.uniform(s))
        return self.g.add_arg(s)

    # --- element-wise ------------------------------------------------------

    def g_unary(self, x):
        v = self.V(x)
        m, t = v.mag, v.type
        table = ["act.relu", "act.sigmoid", "act.tanh", "act.gelu", "act.gelu_tanh", "act.silu",
                 "act.hardswish", "act.hardsigmoid", "act.mish", "act.leaky_relu", "act.elu",
                 "act.softplus", "act.hardtanh", "act.relu6", "math.clamp", "math.neg", "math.abs",
                 "math.sin", "math.cos", "math.atan", "math.erf", "math.asinh", "math.erfc"]
        if m <= 4:
            table += ["math.exp", "math.expm1", "math.sinh", "math.cosh", "math.exp2"]
        if v.exact:  # discontinuous: only where both sides see the same bits
            table += ["math.floor", "math.ceil", "math.round", "math.trunc", "math.sign"]
        k = self.rng.choice(table)
        rng = self.rng
        if k == "act.gelu_tanh":
            return self.op("act.gelu", f"cuvil.act.gelu $o0 {{approximate = #cuvil<gelu_approximation tanh>}} : {t}", [x], v.shape, m)
        if k == "act.leaky_relu":
            s = rng.choice([0.01, 0.1, 0.2])
            return self.op(k, f"cuvil.{k} $o0 {{negative_slope = {fattr(s)}}} : {t}", [x], v.shape, m)
        if k == "act.elu":
            a = rng.choice([1.0, 0.5, 1.5])
            return self.op(k, f"cuvil.{k} $o0 {{alpha = {fattr(a)}}} : {t}", [x], v.shape, max(m, a))
        if k == "act.softplus":
            # The linear branch above `threshold` jumps by about exp(-threshold):
            # keep it large so that rounding never decides a visible step.
            b, th = rng.choice([1.0, 2.0, 0.5]), rng.choice([20.0, 15.0])
            return self.op(k, f"cuvil.{k} $o0 {{beta = {fattr(b)}, threshold = {fattr(th)}}} : {t}", [x], v.shape, m + 1)
        if k in ("act.hardtanh", "act.relu6"):
            lo, hi = (0.0, 6.0) if k == "act.relu6" else (rng.choice([-1.0, -0.5, 0.0]), rng.choice([0.25, 1.0, 2.0]))
            return self.op("act.hardtanh", f"cuvil.act.hardtanh $o0 {{min_val = {fattr(lo)}, max_val = {fattr(hi)}}} : {t}", [x], v.shape, min(m, max(abs(lo), hi)))
        if k == "math.clamp":
            lo, hi = rng.choice([-0.5, -1.0, 0.0]), rng.choice([0.5, 1.0, 3.0])
            which = rng.choice(["both", "min", "max"])
            attrs = {"both": f"min = {fattr(lo)}, max = {fattr(hi)}", "min": f"min = {fattr(lo)}",
                     "max": f"max = {fattr(hi)}"}[which]
            return self.op(k, f"cuvil.{k} $o0 {{{attrs}}} : {t}", [x], v.shape, m if which != "both" else min(m, 3))
        em = min(m, 80.0)
        mags = {"act.sigmoid": 1, "act.tanh": 1, "act.hardsigmoid": 1, "math.sin": 1, "math.cos": 1,
                "math.atan": 1.6, "math.erf": 1, "math.erfc": 2, "math.asinh": math.log(2 * m + 1) + 0.1,
                "math.exp": math.exp(em), "math.expm1": math.exp(em), "math.sinh": math.exp(em),
                "math.cosh": math.exp(em), "math.exp2": 2 ** em}
        exact = v.exact and k in ("math.neg", "math.abs", "act.relu")
        return self.op(k, f"cuvil.{k} $o0 : {t}", [x], v.shape, mags.get(k, m), exact=exact)

    def positive(self, x, lo=None):
        """A strictly positive function of x (at least c): abs/square/sigmoid/exp + c."""
        v = self.V(x)
        c = lo if lo is not None else self.rng.choice([0.25, 0.5, 1.0, 1.5])
        how = self.rng.choice(["abs", "square", "sigmoid"] + (["exp"] if v.mag <= 3 else []))
        t = v.type
        if how == "exp":
            return self.op("math.exp", f"cuvil.math.exp $o0 : {t}", [x], v.shape, math.exp(v.mag), pattern="positive",
                           nocut=True)
        if how == "abs":
            a, am = self.op("math.abs", f"cuvil.math.abs $o0 : {t}", [x], v.shape, v.mag, pattern="positive"), v.mag
        elif how == "square":
            a, am = self.op("math.mul", f"cuvil.math.mul $o0, $o0 : {t}, {t} -> {t}", [x], v.shape, v.mag ** 2, pattern="positive"), v.mag ** 2
        else:
            a, am = self.op("act.sigmoid", f"cuvil.act.sigmoid $o0 : {t}", [x], v.shape, 1, pattern="positive"), 1
        cs = () if self.rng.random() < 0.7 else self.bshape(v.shape)
        cv = self.const(self.uniform(cs, c, c + 0.5))
        return self.op("math.add", f"cuvil.math.add $o0, $o1 : {t}, {self.T(cv)} -> {t}", [a, cv], v.shape, am + c + 0.5,
                       pattern="positive", nocut=True)

    def g_domain_unary(self, x):
        """Ops with a restricted domain on operands moved into it."""
        v = self.V(x)
        k = self.rng.choice(["math.log", "math.log2", "math.log10", "math.log1p", "math.sqrt", "math.rsqrt",
                             "math.reciprocal", "math.lgamma", "digamma", "math.asin", "math.acos",
                             "math.atanh", "erfinv", "i0e", "i1e", "ndtr"])
        t = v.type
        if k in ("math.asin", "math.acos", "math.atanh", "erfinv"):
            th = self.op("act.tanh", f"cuvil.act.tanh $o0 : {t}", [x], v.shape, 1, pattern="bounded")
            c = self.const(np.float32(0.9))
            y = self.op("math.mul", f"cuvil.math.mul $o0, $o1 : {t}, tensor<f32> -> {t}", [th, c], v.shape, 1, pattern="bounded",
                        nocut=True)
            if k == "erfinv":
                return self.op("math.special", f'cuvil.math.special $o0 {{function = "erfinv"}} : {t}', [y], v.shape, 1.2)
            return self.op(k, f"cuvil.{k} $o0 : {t}", [y], v.shape, 1.6)
        if k in ("i0e", "i1e", "ndtr"):
            return self.op("math.special", f'cuvil.math.special $o0 {{function = "{k}"}} : {t}', [x], v.shape, 1)
        p = self.positive(x, lo=0.5 if k in ("math.lgamma", "digamma") else None)
        pm = self.V(p).mag
        if k == "digamma":
            return self.op("math.special", f'cuvil.math.special $o0 {{function = "digamma"}} : {t}', [p], v.shape, 2 + math.log(pm + 1))
        mag = {"math.sqrt": math.sqrt(pm), "math.rsqrt": 2, "math.reciprocal": 4}.get(k, math.log(pm + 1) + 1.5)
        return self.op(k, f"cuvil.{k} $o0 : {t}", [p], v.shape, mag)

    def g_nan_source(self, x):
        """NaN (and infinities) at exactly known places: log/sqrt/rsqrt/reciprocal
        of an exact value of either sign (--nan-rate). What follows must
        propagate them as the dialect says (NaN stays NaN, max/min propagate,
        fmax/fmin ignore it)."""
        v = self.V(x)
        k = self.rng.choice(["math.log", "math.sqrt", "math.rsqrt", "math.log1p", "math.reciprocal"])
        return self.op(k, f"cuvil.{k} $o0 : {v.type}", [x], v.shape, 5, pattern="nan_source")

    def g_identity(self, x):
        """x + 0, x - 0, 0 - x, x * 1, x * -1, x / 1, neg(neg(x)), with the splat
        constant of the same, a smaller or a larger (broadcasting) shape: what
        the folders may simplify, but not when the result is larger than x."""
        v = self.V(x)
        rng = self.rng
        if rng.random() < 0.15:
            t = v.type
            y = self.op("math.neg", f"cuvil.math.neg $o0 : {t}", [x], v.shape, v.mag, exact=v.exact, pattern="identity")
            return self.op("math.neg", f"cuvil.math.neg $o0 : {t}", [y], v.shape, v.mag, exact=v.exact, pattern="identity")
        k, c = rng.choice([("math.add", 0.0), ("math.sub", 0.0), ("rsub", 0.0), ("math.mul", 1.0),
                           ("math.mul", -1.0), ("math.div", 1.0), ("math.mul", 0.0), ("math.maximum", -1e30)])
        r = rng.random()
        if r < 0.4:
            cs = v.shape
        elif r < 0.7:
            cs = self.bshape(v.shape)
        else:  # larger: new leading dims or size-1 dims grown
            cs = tuple(rng.randint(2, 3) if d == 1 and rng.random() < 0.6 else d for d in v.shape)
            if rng.random() < 0.5 and len(cs) < MAX_RANK:
                cs = (rng.randint(2, 3),) + cs
        shape = broadcast(v.shape, cs)
        if shape is None or prod(shape) > self.max_elems:
            return None
        cv = self.const(np.full(cs, c, dtype=np.float32))
        a, b = (cv, x) if k == "rsub" or (k in ("math.add", "math.mul") and rng.random() < 0.4) else (x, cv)
        k = "math.sub" if k == "rsub" else k
        return self.op(k, f"cuvil.{k} $o0, $o1 : {self.T(a)}, {self.T(b)} -> {ttype(shape)}", [a, b], shape, v.mag,
                       exact=v.exact and k != "math.div", pattern="identity")

    def g_view_chain(self, x):
        """Two to four view ops in a row (transpose of transpose, reshape of
        reshape, slice of slice, squeeze of unsqueeze...): the view-chain
        canonicalisations and the memory planner's views."""
        y = x
        for _ in range(self.rng.randint(2, 4)):
            v = self.V(y)
            fns = [self.g_reshape, self.g_slice, self.g_unsqueeze]
            if len(v.shape) >= 2:
                fns += [self.g_permute, self.g_permute, self.g_flatten]
            fn = self.rng.choice(fns)
            z = fn(y)
            if z is None:
                break
            self.g.ops[-1].pattern = "view_chain"
            y = z
        return y if y != x else None

    def g_split_concat(self, x):
        """Slices of x concatenated again: in order (x itself), reordered, or
        with a piece left out."""
        v = self.V(x)
        dims = [i for i, s in enumerate(v.shape) if s >= 2]
        if not dims:
            return None
        d = self.rng.choice(dims)
        size = v.shape[d]
        cuts = sorted(self.rng.sample(range(1, size), min(self.rng.randint(1, 2), size - 1)))
        bounds = [0] + cuts + [size]
        parts = []
        for a, b in zip(bounds, bounds[1:]):
            oshape = v.shape[:d] + (b - a,) + v.shape[d + 1:]
            parts.append(self.op("tensor.slice", f"cuvil.tensor.slice $o0 {{dim = {d} : i64, start = {a} : i64, end = {b} : i64, step = 1 : i64}} : {v.type} -> {ttype(oshape)}",
                                 [x], oshape, v.mag, exact=v.exact, pattern="split_concat"))
        how = self.rng.random()
        if how < 0.3:
            self.rng.shuffle(parts)
        elif how < 0.45 and len(parts) > 2:
            parts.pop(self.rng.randrange(len(parts)))
        elif how < 0.6:
            parts.append(parts[0])
        oshape = list(v.shape)
        oshape[d] = sum(self.V(p).shape[d] for p in parts)
        if len(parts) == 1:
            return parts[0]
        ops = ", ".join(f"$o{i}" for i in range(len(parts)))
        return self.op("tensor.concat", f"cuvil.tensor.concat {ops} {{dim = {d} : i64}} : ({', '.join(self.T(p) for p in parts)}) -> {ttype(oshape)}",
                       parts, oshape, v.mag, exact=v.exact, pattern="split_concat")

    def g_int_island(self, x):
        """Integer arithmetic on an exact value: x * s cast to i32/i64 (or an
        argmax), a few integer ops (floor/trunc division, remainder, fmod,
        bitwise, shifts, max, abs, relu, sums, scans) by non-zero constants,
        cast back to f32. Everything is exact, so the results must be equal."""
        v = self.V(x)
        rng = self.rng
        it = rng.choice(["i32", "i64"])
        P = "int_island"
        if rng.random() < 0.2 and v.shape:
            d = rng.randrange(len(v.shape))
            keep = rng.random() < 0.5
            shape = tuple(1 if i == d else s for i, s in enumerate(v.shape) if keep or i != d)
            k = rng.choice(["argmax", "argmin"])
            cur = self.op(f"reduce.{k}", f"cuvil.reduce.{k} $o0 dim {d}{' keepdim' if keep else ''} : {v.type} -> {ttype(shape, 'i64')}",
                          [x], shape, dtype="i64", pattern=P)
            it = "i64"
        else:
            sc = self.const(np.float32(rng.choice([4.0, 10.0, 7.5, 100.0])))
            y = self.op("math.mul", f"cuvil.math.mul $o0, $o1 : {v.type}, tensor<f32> -> {v.type}", [x, sc], v.shape, exact=True, pattern=P)
            shape = v.shape
            cur = self.op("tensor.cast", f"cuvil.tensor.cast $o0 : {v.type} -> {ttype(shape, it)}", [y], shape, dtype=it, pattern=P)

        def iconst(cs, lo, hi, nonzero=False):
            a = np.array([rng.randint(lo, hi) for _ in range(prod(cs))], dtype=np.int64)
            if nonzero:
                a[a == 0] = 1
            a = a.reshape(cs)
            text = str(int(a)) if a.ndim == 0 else str(a.tolist())
            (c,) = self.g.add_op("constant", f"$r0 = cuvil.constant dense<{text}> : {ttype(cs, it)}", [],
                                 [dict(shape=cs, dtype=it, exact=True, const=True)])
            return c
        for _ in range(rng.randint(1, 4)):
            t = ttype(shape, it)
            k = rng.choice(["div_floor", "div_trunc", "remainder", "fmod", "add", "sub", "mul", "bitwise_and",
                            "bitwise_or", "bitwise_xor", "shift_left", "shift_right", "maximum", "minimum",
                            "abs", "neg", "relu", "sign", "cumsum", "sum"])
            if k in ("abs", "neg", "sign", "relu"):
                name = "act.relu" if k == "relu" else f"math.{k}"
                cur = self.op(name, f"cuvil.{name} $o0 : {t}", [cur], shape, dtype=it, pattern=P)
                continue
            if k == "cumsum" and shape:
                d = rng.randrange(len(shape))
                cur = self.op("reduce.cumulative", f"cuvil.reduce.cumulative $o0 {{dim = {d} : i64, kind = #cuvil<scan_kind sum>}} : {t} -> {t}",
                              [cur], shape, dtype=it, pattern=P)
                continue
            if k == "sum" and shape:
                d = rng.randrange(len(shape))
                shape = tuple(s for i, s in enumerate(shape) if i != d)
                cur = self.op("reduce.sum", f"cuvil.reduce.sum $o0 dims [{d}] : {t} -> {ttype(shape, 'i64')}", [cur], shape, dtype="i64", pattern=P)
                it = "i64"
                continue
            if k in ("cumsum", "sum"):
                continue
            cs = self.bshape(shape)
            if k.startswith("shift"):
                c = iconst(cs, 0, 3)
            else:
                c = iconst(cs, -9, 9, nonzero=k in ("div_floor", "div_trunc", "remainder", "fmod", "mul"))
            a, b = (c, cur) if k in ("add", "mul", "maximum", "bitwise_or") and rng.random() < 0.4 else (cur, c)
            name, attr = f"math.{k}", ""
            if k.startswith("div"):
                name, attr = "math.div", f" {{rounding_mode = #cuvil<rounding_mode {k[4:]}>}}"
            nshape = broadcast(self.V(a).shape, self.V(b).shape)
            cur = self.op(name, f"cuvil.{name} $o0, $o1{attr} : {self.T(a)}, {self.T(b)} -> {ttype(nshape, it)}", [a, b], nshape, dtype=it, pattern=P)
            shape = nshape
        return self.op("tensor.cast", f"cuvil.tensor.cast $o0 : {ttype(shape, it)} -> {ttype(shape)}", [cur], shape, 100, exact=True, pattern=P)

    def g_binary(self, x):
        v = self.V(x)
        rng = self.rng
        table = [("math.add", 4), ("math.sub", 2), ("math.mul", 3), ("math.div", 2), ("math.maximum", 1),
                 ("math.minimum", 1), ("math.fmax", 0.5), ("math.fmin", 0.5), ("math.hypot", 0.5),
                 ("math.copysign", 0.5), ("math.pow", 1 if v.mag <= 3 else 0)]
        if v.exact:
            table += [("math.atan2", 0.7), ("math.fmod", 0.5), ("math.remainder", 0.5)]
        k = rng.choices([a for a, _ in table], [w for _, w in table])[0]
        if k in ("math.fmod", "math.remainder"):
            # Exact dividend, constant divisor away from zero.
            s = self.bshape(v.shape)
            d = self.uniform(s, 0.3, 1.5) * np.where(self.uniform(s) < 0, -1, 1).astype(np.float32)
            y = self.const(d)
        elif k in ("math.atan2", "math.copysign"):
            y = self.partner(x, exact=True)
        else:
            y = self.partner(x)
        a, b = x, y
        if k in ("math.sub", "math.maximum", "math.minimum", "math.hypot", "math.add", "math.mul") and rng.random() < 0.3:
            a, b = y, x
        if k == "math.div":
            if self.V(b).const and rng.random() < 0.5:
                # A constant denominator away from zero, of either sign.
                s = self.V(b).shape
                b = self.const(self.uniform(s, 0.5, 2.0) * np.where(self.uniform(s) < 0, -1, 1).astype(np.float32))
            else:
                b = self.positive(b)
        if k == "math.pow":
            a = self.positive(a, lo=0.5)
            if self.V(b).mag > 2:
                bt = self.V(b).type
                b = self.op("act.tanh", f"cuvil.act.tanh $o0 : {bt}", [b], self.V(b).shape, 1, pattern="bounded")
        va, vb = self.V(a), self.V(b)
        shape = broadcast(va.shape, vb.shape)
        if shape is None or prod(shape) > self.max_elems:
            return None
        if k == "math.mul" and va.mag * vb.mag > 1e4:
            return None
        mag = {"math.add": va.mag + vb.mag, "math.sub": va.mag + vb.mag, "math.mul": va.mag * vb.mag,
               "math.div": va.mag / 0.25, "math.pow": (va.mag + 1) ** 2, "math.atan2": 3.2,
               "math.hypot": va.mag + vb.mag}.get(k, max(va.mag, vb.mag))
        exact = va.exact and vb.exact and k in ("math.maximum", "math.minimum", "math.fmax", "math.fmin")
        return self.op(k, f"cuvil.{k} $o0, $o1 : {va.type}, {vb.type} -> {ttype(shape)}", [a, b], shape, mag, exact=exact)

    def g_where(self, x):
        """where(cmp(exact, exact), x, other): the condition sees equal bits."""
        c1 = self.pick(lambda u: u.exact and broadcast(u.shape, self.V(x).shape) is not None)
        if c1 is None:
            return None
        c2 = self.partner(c1, exact=True)
        s1, s2 = self.V(c1).shape, self.V(c2).shape
        cs = broadcast(s1, s2)
        if cs is None:
            return None
        k = self.rng.choice(["gt", "lt", "ge", "le", "eq", "ne"])
        cond = self.op(f"logic.{k}", f"cuvil.logic.{k} $o0, $o1 : {self.T(c1)}, {self.T(c2)} -> {ttype(cs, 'i1')}",
                       [c1, c2], cs, dtype="i1")
        if self.rng.random() < 0.3:  # combined with a second comparison, or negated
            ct = ttype(cs, "i1")
            if self.rng.random() < 0.3:
                cond = self.op("logic.logical_not", f"cuvil.logic.logical_not $o0 : {ct} -> {ct}", [cond], cs, dtype="i1")
            else:
                c3 = self.const(self.uniform(()))
                k2 = self.rng.choice(["gt", "lt"])
                cond2 = self.op(f"logic.{k2}", f"cuvil.logic.{k2} $o0, $o1 : {self.T(c1)}, tensor<f32> -> {ttype(s1, 'i1')}",
                                [c1, c3], s1, dtype="i1")
                cs2 = broadcast(cs, s1)
                lk = self.rng.choice(["logical_and", "logical_or", "logical_xor"])
                cond = self.op(f"logic.{lk}", f"cuvil.logic.{lk} $o0, $o1 : {ct}, {ttype(s1, 'i1')} -> {ttype(cs2, 'i1')}",
                               [cond, cond2], cs2, dtype="i1")
                cs = cs2
        other = self.partner(x)
        shape = broadcast(cs, self.V(x).shape, self.V(other).shape)
        if shape is None or prod(shape) > self.max_elems:
            return None
        a, b = (x, other) if self.rng.random() < 0.5 else (other, x)
        return self.op("logic.where", f"cuvil.logic.where $o0, $o1, $o2 : {ttype(cs, 'i1')}, {self.T(a)}, {self.T(b)} -> {ttype(shape)}",
                       [cond, a, b], shape, max(self.V(a).mag, self.V(b).mag))

    def activation(self, x, pattern):
        v = self.V(x)
        k = self.rng.choice(ACTIVATIONS)
        t = v.type
        if k == "act.relu6":
            return self.op("act.hardtanh", f"cuvil.act.hardtanh $o0 {{min_val = {fattr(0)}, max_val = {fattr(6)}}} : {t}", [x], v.shape, v.mag, pattern=pattern)
        if k == "act.gelu_tanh":
            return self.op("act.gelu", f"cuvil.act.gelu $o0 {{approximate = #cuvil<gelu_approximation tanh>}} : {t}", [x], v.shape, v.mag, pattern=pattern)
        if k == "act.leaky_relu":
            return self.op(k, f"cuvil.{k} $o0 {{negative_slope = {fattr(0.1)}}} : {t}", [x], v.shape, v.mag, pattern=pattern)
        if k == "math.clamp":
            lo, hi = self.rng.choice([-0.5, 0.0, 0.25]), self.rng.choice([0.5, 1.0, 6.0])
            attrs = self.rng.choice([f"min = {fattr(lo)}, max = {fattr(hi)}", f"min = {fattr(lo)}", f"max = {fattr(hi)}"])
            return self.op(k, f"cuvil.{k} $o0 {{{attrs}}} : {t}", [x], v.shape, v.mag, pattern=pattern)
        if k == "act.hardtanh":
            lo, hi = self.rng.choice([-1.0, -0.25, 0.0]), self.rng.choice([0.5, 1.0, 3.0])
            return self.op(k, f"cuvil.{k} $o0 {{min_val = {fattr(lo)}, max_val = {fattr(hi)}}} : {t}", [x], v.shape, v.mag, pattern=pattern)
        if k == "act.elu":
            return self.op(k, f"cuvil.{k} $o0 {{alpha = {fattr(1.0)}}} : {t}", [x], v.shape, v.mag, pattern=pattern)
        return self.op(k, f"cuvil.{k} $o0 : {t}", [x], v.shape, v.mag, pattern=pattern)

    # --- convolutions ------------------------------------------------------

    def conv2d(self, x, pattern=None):
        rng = self.rng
        n, c, h, w = self.V(x).shape
        for _ in range(20):
            groups = 1
            r = rng.random()
            if rng.random() < 0.4 and c >= 8 and min(h, w) >= 4:
                # Winograd territory: 3x3, stride 1, no groups or dilation, >= 8 channels.
                cout, kh, kw, st, pad, dil = rng.randint(8, 136 if self.big else 16), 3, 3, (1, 1), (1, 1), (1, 1)
                if rng.random() < 0.3:
                    pad = (0, 0)
            else:
                if r < 0.2 and c > 1:
                    groups, cout = c, c * rng.choice([1, 1, 2])  # depthwise
                elif r < 0.3 and c > 1:
                    groups = rng.choice([d for d in range(2, c + 1) if c % d == 0])
                    cout = groups * rng.randint(1, max(1, 16 // groups))
                else:
                    cout = rng.randint(1, 136 if self.big else 16)
                kh = rng.choice([1, 1, 2, 3, 3, 3, 4, 5])
                kw = kh if rng.random() < 0.85 else rng.randint(1, 5)
                s = rng.choice([1, 1, 1, 2])
                st = (s, s) if rng.random() < 0.85 else (rng.randint(1, 2), rng.randint(1, 2))
                p = rng.choice([0, 0, 1, 1, 2])
                pad = (p, p) if rng.random() < 0.85 else (rng.randint(0, 2), rng.randint(0, 2))
                dd = rng.choice([1, 1, 1, 1, 2])
                dil = (dd, dd)
            oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // st[0] + 1
            ow = (w + 2 * pad[1] - dil[1] * (kw - 1) - 1) // st[1] + 1
            if oh >= 1 and ow >= 1 and n * cout * oh * ow <= self.max_elems and cout <= (272 if self.big else 32):
                break
        else:
            return None
        cin_g = c // groups
        wshape = (cout, cin_g, kh, kw)
        wt = self.const_or_arg(wshape, lambda: self.weight(wshape, cin_g * kh * kw), 0.85)
        operands, types = [x, wt], [self.T(x), self.T(wt)]
        rb = rng.random()
        if rb < 0.65:
            b = self.const_or_arg((cout,), lambda: self.uniform((cout,), -0.5, 0.5), 0.85)
            operands.append(b)
            types.append(self.T(b))
        oshape = (n, cout, oh, ow)
        gtxt = f" groups {groups}" if groups != 1 or rng.random() < 0.1 else ""
        ops = ", ".join(f"$o{i}" for i in range(len(operands)))
        return self.op("conv.conv2d",
                       f"cuvil.conv.conv2d {ops} stride [{arr(st)}] padding [{arr(pad)}] dilation [{arr(dil)}]{gtxt} : ({', '.join(types)}) -> {ttype(oshape)}",
                       operands, oshape, self.V(x).mag + 0.5, pattern=pattern)

    def g_conv2d(self, x):
        return self.conv2d(x)

    def g_conv_block(self, x):
        """conv [+ batch norm] [+ residual add] [+ activation]: what fold-batch-norm
        and the conv epilogue fusion rewrite."""
        y = self.conv2d(x, pattern="conv_block")
        if y is None:
            return None
        if self.rng.random() < 0.4:
            if self.rng.random() < 0.2:
                self.side.append(y)  # the raw conv is read too: batch norm must not fold into it
            y = self.batch_norm(y, pattern="conv_block")
        if self.rng.random() < 0.15:
            self.side.append(y)  # the value before the epilogue is read too
        if self.rng.random() < 0.5:
            shape = self.V(y).shape
            res = self.pick(lambda u: u.shape == shape and u.id != y)
            if res is None and self.rng.random() < 0.5:
                res = self.g.add_arg(shape)
            if res is not None:
                a, b = (y, res) if self.rng.random() < 0.7 else (res, y)
                t = ttype(shape)
                y = self.op("math.add", f"cuvil.math.add $o0, $o1 : {t}, {t} -> {t}", [a, b], shape,
                            self.V(y).mag + self.V(res).mag, pattern="conv_block")
        if self.rng.random() < 0.15:
            self.side.append(y)
        if self.rng.random() < 0.8:
            y = self.activation(y, "conv_block")
        return y

    def g_conv1d(self, x):
        """conv1d or conv_transpose1d over [N, C, L]."""
        rng = self.rng
        n, c, length = self.V(x).shape
        transpose = rng.random() < 0.3
        for _ in range(20):
            groups = 1 if rng.random() < 0.75 or c == 1 else rng.choice([d for d in range(2, c + 1) if c % d == 0])
            cout = groups * rng.randint(1, max(1, 16 // groups))
            k, st, d = rng.choice([1, 2, 3, 5]), rng.choice([1, 1, 2]), rng.choice([1, 1, 2])
            p = rng.randint(0, 2)
            opad = 0
            if transpose:
                p = min(p, d * (k - 1))
                opad = rng.randint(0, max(st, d) - 1) if rng.random() < 0.3 else 0
                out = (length - 1) * st - 2 * p + d * (k - 1) + opad + 1
            else:
                out = (length + 2 * p - d * (k - 1) - 1) // st + 1
            if 1 <= out <= 64 and n * cout * out <= self.max_elems:
                break
        else:
            return None
        wshape = (c, cout // groups, k) if transpose else (cout, c // groups, k)
        fan = (c // groups) * k
        wt = self.const_or_arg(wshape, lambda: self.weight(wshape, fan / (st if transpose else 1)), 0.85)
        operands, types = [x, wt], [self.T(x), self.T(wt)]
        if rng.random() < 0.5:
            b = self.const(self.uniform((cout,), -0.5, 0.5))
            operands.append(b)
            types.append(self.T(b))
        oshape = (n, cout, out)
        gtxt = f" groups {groups}" if groups != 1 else ""
        ops = ", ".join(f"$o{i}" for i in range(len(operands)))
        name = "conv_transpose1d" if transpose else "conv1d"
        optxt = f" output_padding [{opad}]" if transpose else ""
        return self.op(f"conv.{name}", f"cuvil.conv.{name} {ops} stride [{st}] padding [{p}] dilation [{d}]{optxt}{gtxt} : ({', '.join(types)}) -> {ttype(oshape)}",
                       operands, oshape, self.V(x).mag + 0.5)

    def g_gather(self, x):
        """index_select, gather or embedding with constant in-range indices."""
        v = self.V(x)
        rng = self.rng
        r = len(v.shape)
        it = rng.choice(["i64", "i32"])

        def iconst(shape, size, allow_negative=True):
            a = np.array([rng.randrange(-size if allow_negative else 0, size) for _ in range(prod(shape))], dtype=np.int64).reshape(shape)
            text = str(int(a)) if a.ndim == 0 else str(a.tolist())
            (c,) = self.g.add_op("constant", f"$r0 = cuvil.constant dense<{text}> : {ttype(shape, it)}", [],
                                 [dict(shape=shape, dtype=it, exact=True, const=True)])
            return c
        k = rng.choice(["index_select", "gather", "embedding"] if r == 2 else ["index_select", "gather"])
        if k == "embedding":
            ishape = tuple(rng.randint(1, 6) for _ in range(rng.randint(1, 2)))
            idx = iconst(ishape, v.shape[0], allow_negative=False)
            oshape = ishape + (v.shape[1],)
            return self.op("tensor.embedding", f"cuvil.tensor.embedding $o0, $o1 : {v.type}, {self.T(idx)} -> {ttype(oshape)}",
                           [x, idx], oshape, v.mag, exact=v.exact, pattern="gather")
        d = rng.randrange(r)
        if k == "index_select":
            ishape = (rng.randint(1, 2 * v.shape[d] + 1),)
            idx = iconst(ishape, v.shape[d])
            oshape = v.shape[:d] + ishape + v.shape[d + 1:]
        else:
            ishape = tuple(rng.randint(1, 2 * s + 1) if i == d else rng.randint(1, s) for i, s in enumerate(v.shape))
            idx = iconst(ishape, v.shape[d])
            oshape = ishape
        if prod(oshape) > self.max_elems:
            return None
        return self.op(f"tensor.{k}", f"cuvil.tensor.{k} $o0, $o1 {{dim = {d} : i64}} : {v.type}, {self.T(idx)} -> {ttype(oshape)}",
                       [x, idx], oshape, v.mag, exact=v.exact, pattern="gather")

    def g_cast_roundtrip(self, x):
        """An exact value through f16, bf16 or f64 and back: rounding to nearest
        even is the same everywhere."""
        v = self.V(x)
        t = self.rng.choice(["f16", "bf16", "f64"])
        y = self.op("tensor.cast", f"cuvil.tensor.cast $o0 : {v.type} -> {ttype(v.shape, t)}", [x], v.shape, dtype=t, pattern="cast")
        return self.op("tensor.cast", f"cuvil.tensor.cast $o0 : {ttype(v.shape, t)} -> {v.type}", [y], v.shape, v.mag, exact=True, pattern="cast")

    def g_conv_transpose2d(self, x):
        rng = self.rng
        n, c, h, w = self.V(x).shape
        for _ in range(20):
            groups = 1 if rng.random() < 0.8 or c == 1 else rng.choice([d for d in range(2, c + 1) if c % d == 0])
            cout = groups * rng.randint(1, max(1, 12 // groups))
            k = rng.choice([1, 2, 3, 3, 4])
            s = rng.choice([1, 2, 2])
            d = rng.choice([1, 1, 1, 2])
            p = rng.randint(0, min(2, d * (k - 1)))
            opad = rng.randint(0, max(s, d) - 1) if rng.random() < 0.3 else 0
            oh = (h - 1) * s - 2 * p + d * (k - 1) + opad + 1
            ow = (w - 1) * s - 2 * p + d * (k - 1) + opad + 1
            if 1 <= oh <= 32 and 1 <= ow <= 32 and n * cout * oh * ow <= self.max_elems:
                break
        else:
            return None
        wshape = (c, cout // groups, k, k)
        wt = self.const_or_arg(wshape, lambda: self.weight(wshape, c // groups * k * k / (s * s)), 0.85)
        operands, types = [x, wt], [self.T(x), self.T(wt)]
        if rng.random() < 0.5:
            b = self.const(self.uniform((cout,), -0.5, 0.5))
            operands.append(b)
            types.append(self.T(b))
        oshape = (n, cout, oh, ow)
        gtxt = f" groups {groups}" if groups != 1 else ""
        ops = ", ".join(f"$o{i}" for i in range(len(operands)))
        return self.op("conv.conv_transpose2d",
                       f"cuvil.conv.conv_transpose2d {ops} stride [{s}, {s}] padding [{p}, {p}] dilation [{d}, {d}] output_padding [{opad}, {opad}]{gtxt} : ({', '.join(types)}) -> {ttype(oshape)}",
                       operands, oshape, self.V(x).mag + 0.5)

    # --- matrix products -----------------------------------------------------

    def g_linear(self, x, pattern=None):
        v = self.V(x)
        kdim = v.shape[-1]
        if kdim > 320:
            return None
        nout = self.rng.choice([1, 2, 3, 4, 8, 10, 16, 24, 32, self.rng.randint(1, 32)])
        if self.big:
            nout = self.rng.choice([nout, self.rng.randint(33, 160), 129, 257])
        oshape = v.shape[:-1] + (nout,)
        if prod(oshape) > self.max_elems:
            return None
        wt = self.const_or_arg((nout, kdim), lambda: self.weight((nout, kdim), kdim), 0.85)
        operands, types = [x, wt], [v.type, self.T(wt)]
        if self.rng.random() < 0.6:
            b = self.const_or_arg((nout,), lambda: self.uniform((nout,), -0.5, 0.5), 0.85)
            operands.append(b)
            types.append(self.T(b))
        ops = ", ".join(f"$o{i}" for i in range(len(operands)))
        return self.op("gemm.linear", f"cuvil.gemm.linear {ops} : ({', '.join(types)}) -> {ttype(oshape)}",
                       operands, oshape, v.mag + 0.5, pattern=pattern)

    def g_linear_block(self, x):
        y = self.g_linear(x, pattern="linear_block")
        if y is None:
            return None
        if self.rng.random() < 0.3 and len(self.V(y).shape) >= 2:
            # Batch norm's channel is dim 1: the linear layer's features only
            # for a matrix; a [N, T, F] result normalises T.
            if self.rng.random() < 0.2:
                self.side.append(y)
            y = self.batch_norm(y, pattern="linear_block")
        if self.rng.random() < 0.4:
            shape = self.V(y).shape
            res = self.pick(lambda u: u.shape == shape and u.id != y)
            if res is not None:
                t = ttype(shape)
                y = self.op("math.add", f"cuvil.math.add $o0, $o1 : {t}, {t} -> {t}", [y, res], shape,
                            self.V(y).mag + self.V(res).mag, pattern="linear_block")
        return self.activation(y, "linear_block")

    def g_matmul(self, x):
        v = self.V(x)
        if len(v.shape) < 2 and self.rng.random() < 0.7:
            return None
        kdim = v.shape[-1]
        n = self.rng.randint(1, 160 if self.big else 24)
        existing = self.pick(lambda u: len(u.shape) >= 2 and u.shape[-2] == kdim and u.id != x
                             and broadcast(v.shape[:-2], u.shape[:-2]) is not None)
        r = self.rng.random()
        if existing is not None and r < 0.4:
            b = existing
        elif r < 0.7 or len(v.shape) < 3:
            b = self.const_or_arg((kdim, n), lambda: self.weight((kdim, n), kdim), 0.6)
        else:
            bs = self.bshape(v.shape[:-2]) + (kdim, n)
            b = self.g.add_arg(bs)
        vb = self.V(b)
        if len(v.shape) == 1:
            oshape = vb.shape[:-2] + vb.shape[-1:]
        else:
            batch = broadcast(v.shape[:-2], vb.shape[:-2])
            oshape = batch + (v.shape[-2], vb.shape[-1])
        if prod(oshape) > self.max_elems:
            return None
        mag = v.mag * vb.mag * (1 if vb.const else math.sqrt(kdim))
        return self.op("gemm.matmul", f"cuvil.gemm.matmul $o0, $o1 : {v.type}, {vb.type} -> {ttype(oshape)}",
                       [x, b], oshape, mag)

    def g_batch_matmul(self, x):
        v = self.V(x)
        bsz, m, kdim = v.shape
        existing = self.pick(lambda u: len(u.shape) == 3 and u.shape[0] == bsz and u.shape[1] == kdim and u.id != x)
        if existing is not None and self.rng.random() < 0.5:
            b = existing
        else:
            n = self.rng.randint(1, 16)
            b = self.const_or_arg((bsz, kdim, n), lambda: self.weight((bsz, kdim, n), kdim), 0.5)
        vb = self.V(b)
        oshape = (bsz, m, vb.shape[2])
        return self.op("gemm.batch_matmul", f"cuvil.gemm.batch_matmul $o0, $o1 : {v.type}, {vb.type} -> {ttype(oshape)}",
                       [x, b], oshape, v.mag * vb.mag * (1 if vb.const else math.sqrt(kdim)))

    def g_addmm(self, x):
        v = self.V(x)
        m, kdim = v.shape
        n = self.rng.randint(1, 16)
        w = self.const_or_arg((kdim, n), lambda: self.weight((kdim, n), kdim), 0.7)
        bs = self.rng.choice([(n,), (m, n), (1, n), (m, 1), ()])
        b = self.const_or_arg(bs, lambda: self.uniform(bs, -0.5, 0.5), 0.7)
        alpha, beta = self.rng.choice([1.0, 0.5, 2.0]), self.rng.choice([1.0, 1.0, 0.5, 0.0])
        oshape = (m, n)
        return self.op("gemm.addmm", f"cuvil.gemm.addmm $o0, $o1, $o2 {{alpha = {fattr(alpha)}, beta = {fattr(beta)}}} : ({self.T(b)}, {v.type}, {self.T(w)}) -> {ttype(oshape)}",
                       [b, x, w], oshape, v.mag * 2 + 1)

    # --- pooling -------------------------------------------------------------

    @staticmethod
    def pool_out(size, k, s, p, d, ceil):
        num = size + 2 * p - d * (k - 1) - 1
        if num < 0:
            return 0
        out = (-(-num // s) if ceil else num // s) + 1
        if ceil and (out - 1) * s >= size + p:
            out -= 1
        return out

    def g_pool(self, x):
        v = self.V(x)
        rng = self.rng
        sp = v.shape[2:]
        nd = len(sp)
        kind = rng.choice(["max", "max", "avg", "avg", "adaptive"])
        name = {"max": "max_pool", "avg": "avg_pool", "adaptive": "adaptive_avg_pool"}[kind] + f"{nd}d"
        if kind == "adaptive":
            osz = [rng.choice([1, 1, rng.randint(1, s)]) for s in sp]
            oshape = v.shape[:2] + tuple(osz)
            return self.op(f"pool.{name}", f"cuvil.pool.{name} $o0 output_size [{arr(osz)}] : {v.type} -> {ttype(oshape)}",
                           [x], oshape, v.mag)
        for _ in range(20):
            k = [rng.randint(1, 3) for _ in sp]
            if rng.random() < 0.7:
                k = [k[0]] * nd
            s = [rng.choice([1, 2, 2, 3]) for _ in sp]
            if rng.random() < 0.7:
                s = [s[0]] * nd
            p = [rng.randint(0, kk // 2) for kk in k]
            d = [rng.choice([1, 1, 2]) for _ in sp] if kind == "max" else [1] * nd
            ceil = rng.random() < 0.25
            osz = [self.pool_out(sz, kk, ss, pp, dd, ceil) for sz, kk, ss, pp, dd in zip(sp, k, s, p, d)]
            if all(o >= 1 for o in osz):
                break
        else:
            return None
        oshape = v.shape[:2] + tuple(osz)
        ctxt = " ceil_mode" if ceil else ""
        if kind == "max":
            return self.op(f"pool.{name}", f"cuvil.pool.{name} $o0 kernel [{arr(k)}] stride [{arr(s)}] padding [{arr(p)}] dilation [{arr(d)}]{ctxt} : {v.type} -> {ttype(oshape)}",
                           [x], oshape, v.mag, exact=v.exact)
        if rng.random() < 0.4 and any(pp > 0 for pp in p):
            ctxt += " count_include_pad"
        if rng.random() < 0.1:
            ctxt += f" divisor {rng.randint(1, 9)}"
        return self.op(f"pool.{name}", f"cuvil.pool.{name} $o0 kernel [{arr(k)}] stride [{arr(s)}] padding [{arr(p)}]{ctxt} : {v.type} -> {ttype(oshape)}",
                       [x], oshape, v.mag)

    # --- normalisation ---------------------------------------------------------

    def batch_norm(self, x, pattern=None):
        v = self.V(x)
        c = v.shape[1]
        mean = self.const(self.uniform((c,), -0.5, 0.5))
        var = self.const(self.uniform((c,), 0.5, 2.0))
        operands, types, txt = [x, mean, var], [v.type, ttype((c,)), ttype((c,))], "$o0, $o1, $o2"
        for name in ("weight", "bias"):
            if self.rng.random() < 0.75:
                a = self.uniform((c,), 0.5, 1.5) * np.where(self.uniform((c,)) < -0.6, -1, 1).astype(np.float32) \
                    if name == "weight" else self.uniform((c,), -0.5, 0.5)
                operands.append(self.const(a))
                types.append(ttype((c,)))
                txt += f" {name} $o{len(operands) - 1}"
        eps = self.rng.choice([1e-5, 1e-3])
        return self.op("norm.batch_norm", f"cuvil.norm.batch_norm {txt} {{eps = {fattr(eps)}}} : ({', '.join(types)}) -> {v.type}",
                       operands, v.shape, v.mag * 2 + 1, pattern=pattern)

    def g_batch_norm(self, x):
        return self.batch_norm(x)

    def g_layer_norm(self, x):
        v = self.V(x)
        nd = 1 if len(v.shape) == 1 or self.rng.random() < 0.7 else 2
        ns = v.shape[-nd:]
        if not 2 <= prod(ns) <= MAX_REDUCE:
            return None
        operands, types, txt = [x], [v.type], "$o0"
        for name in ("weight", "bias"):
            if self.rng.random() < 0.7:
                a = self.uniform(ns, 0.5, 1.5) if name == "weight" else self.uniform(ns, -0.5, 0.5)
                operands.append(self.const_or_arg(ns, lambda: a, 0.9))
                types.append(ttype(ns))
                txt += f" {name} $o{len(operands) - 1}"
        eps = self.rng.choice([1e-5, 1e-3])
        return self.op("norm.layer_norm", f"cuvil.norm.layer_norm {txt} {{normalized_shape = array<i64: {arr(ns)}>, eps = {fattr(eps)}}} : ({', '.join(types)}) -> {v.type}",
                       operands, v.shape, 3)

    def g_group_norm(self, x):
        v = self.V(x)
        c = v.shape[1]
        groups = self.rng.choice([d for d in range(1, c + 1) if c % d == 0])
        if not 2 <= c // groups * prod(v.shape[2:]) <= MAX_REDUCE:
            return None
        operands, types, txt = [x], [v.type], "$o0"
        for name in ("weight", "bias"):
            if self.rng.random() < 0.7:
                a = self.uniform((c,), 0.5, 1.5) if name == "weight" else self.uniform((c,), -0.5, 0.5)
                operands.append(self.const(a))
                types.append(ttype((c,)))
                txt += f" {name} $o{len(operands) - 1}"
        return self.op("norm.group_norm", f"cuvil.norm.group_norm {txt} {{num_groups = {groups} : i64, eps = {fattr(1e-5)}}} : ({', '.join(types)}) -> {v.type}",
                       operands, v.shape, 3)

    def g_softmax(self, x):
        v = self.V(x)
        k = self.rng.choice(["act.softmax", "act.softmax", "act.log_softmax"])
        d = self.rng.randrange(len(v.shape))
        if v.shape[d] > MAX_REDUCE:
            return None
        return self.op(k, f"cuvil.{k} $o0 {{dim = {d} : i64}} : {v.type}", [x], v.shape,
                       1 if k == "act.softmax" else v.mag * 2 + math.log(v.shape[d] + 1))

    def g_softmax_written(self, x):
        """max / sub / exp / sum / div, as recognize-composites looks for; one
        time in three a near miss that is no softmax (the sum over another
        dimension, the max over another one, another numerator)."""
        v = self.V(x)
        r = len(v.shape)
        d = self.rng.randrange(r)
        if v.shape[d] > MAX_REDUCE:
            return None
        miss = self.rng.choice(["sum_dim", "max_dim", "numerator", "no_keepdim"]) \
            if self.rng.random() < 0.35 else None
        P = "softmax_written" if miss is None else "softmax_near_miss"
        t = v.type

        def kshape(dd):
            return tuple(1 if i == dd else s for i, s in enumerate(v.shape))
        z = x
        if self.rng.random() < 0.8 or v.mag > 4 or miss == "max_dim":
            dm = self.rng.randrange(r) if miss == "max_dim" else d
            ks = kshape(dm)
            m = self.op("reduce.max", f"cuvil.reduce.max $o0 dims [{dm}] keepdim : {t} -> {ttype(ks)}", [x], ks, v.mag, pattern=P)
            z = self.op("math.sub", f"cuvil.math.sub $o0, $o1 : {t}, {ttype(ks)} -> {t}", [x, m], v.shape, 2 * v.mag, pattern=P)
        e = self.op("math.exp", f"cuvil.math.exp $o0 : {t}", [z], v.shape, math.exp(min(2 * v.mag, 8)) if miss else 1, pattern=P)
        ds = self.rng.randrange(r) if miss == "sum_dim" else d
        if miss == "no_keepdim":
            ks = tuple(s for i, s in enumerate(v.shape) if i != ds)
            if broadcast(v.shape, ks) != v.shape:
                return None
            st = f"cuvil.reduce.sum $o0 dims [{ds}] : {t} -> {ttype(ks)}"
        else:
            ks = kshape(ds)
            st = f"cuvil.reduce.sum $o0 dims [{ds}] keepdim : {t} -> {ttype(ks)}"
        s = self.op("reduce.sum", st, [e], ks, v.shape[ds], pattern=P, nocut=True)
        num = e
        if miss == "numerator":
            num = self.op("math.exp", f"cuvil.math.exp $o0 : {t}", [x], v.shape, math.exp(min(v.mag, 8)), pattern=P) \
                if v.mag <= 4 else x
        return self.op("math.div", f"cuvil.math.div $o0, $o1 : {t}, {ttype(ks)} -> {t}", [num, s], v.shape,
                       1 if miss is None else self.V(num).mag, pattern=P)

    def g_layer_norm_written(self, x):
        """mean / sub / mul / mean / add eps / rsqrt / mul [/ mul w / add b]; one
        time in three a near miss that is no layer norm (unbiased variance,
        leading dimensions, the mean and the variance over different ones)."""
        v = self.V(x)
        rng = self.rng
        r = len(v.shape)
        nd = 1 if r == 1 or rng.random() < 0.7 else 2
        dims = list(range(r - nd, r))
        miss = rng.choice(["unbiased", "leading", "var_dims", "var_of_x"]) if rng.random() < 0.35 else None
        if miss == "leading" and r >= 2:
            dims = sorted(rng.sample(range(r - 1), min(nd, r - 1)))
        vdims = dims
        if miss == "var_dims" and r >= 2:
            vdims = sorted(rng.sample(range(r), rng.randint(1, r)))
        if not 2 <= prod(v.shape[i] for i in dims) <= MAX_REDUCE or not 2 <= prod(v.shape[i] for i in vdims) <= MAX_REDUCE:
            return None
        t = v.type
        ks = tuple(1 if i in dims else s for i, s in enumerate(v.shape))
        vks = tuple(1 if i in vdims else s for i, s in enumerate(v.shape))
        kt, vkt = ttype(ks), ttype(vks)
        P = "layer_norm_written" if miss is None else "layer_norm_near_miss"
        mean = self.op("reduce.mean", f"cuvil.reduce.mean $o0 dims [{arr(dims)}] keepdim : {t} -> {kt}", [x], ks, v.mag, pattern=P)
        dlt = self.op("math.sub", f"cuvil.math.sub $o0, $o1 : {t}, {kt} -> {t}", [x, mean], v.shape, 2 * v.mag, pattern=P)
        epsv = rng.choice([1e-5, 1e-3])
        if rng.random() < 0.25:  # eps as a 0-d f64 tensor: f32 + 0-d f64 stays f32
            (eps,) = self.g.add_op("constant", f"$r0 = cuvil.constant dense<{ff(epsv)}> : tensor<f64>", [],
                                   [dict(shape=(), dtype="f64", exact=True, const=True)])
        else:
            eps = self.const(np.float32(epsv))
        corr = 1 if miss == "unbiased" else 0
        if rng.random() < 0.5 and miss not in ("unbiased", "var_of_x"):
            src = dlt if vdims == dims else x
            sq = self.op("math.mul", f"cuvil.math.mul $o0, $o0 : {t}, {t} -> {t}", [src], v.shape, v.mag ** 2, pattern=P)
            var = self.op("reduce.mean", f"cuvil.reduce.mean $o0 dims [{arr(vdims)}] keepdim : {t} -> {vkt}", [sq], vks, v.mag ** 2, pattern=P)
        else:
            if corr and prod(v.shape[i] for i in vdims) < 2:
                return None
            var = self.op("reduce.var", f"cuvil.reduce.var $o0 dims [{arr(vdims)}] keepdim {{correction = {corr} : i64}} : {t} -> {vkt}", [x], vks, v.mag ** 2, pattern=P)
        ve = self.op("math.add", f"cuvil.math.add $o0, $o1 : {vkt}, {self.T(eps)} -> {vkt}", [var, eps], vks, v.mag ** 2, pattern=P,
                     nocut=True)
        if rng.random() < 0.5:
            rs = self.op("math.rsqrt", f"cuvil.math.rsqrt $o0 : {vkt}", [ve], vks, 10, pattern=P)
            y = self.op("math.mul", f"cuvil.math.mul $o0, $o1 : {t}, {vkt} -> {t}", [dlt, rs], v.shape, 3, pattern=P)
        else:
            sd = self.op("math.sqrt", f"cuvil.math.sqrt $o0 : {vkt}", [ve], vks, v.mag, pattern=P, nocut=True)
            y = self.op("math.div", f"cuvil.math.div $o0, $o1 : {t}, {vkt} -> {t}", [dlt, sd], v.shape, 3, pattern=P)
        if rng.random() < 0.6:
            ns = v.shape[-nd:]
            w = self.const(self.uniform(ns, 0.5, 1.5))
            b = self.const(self.uniform(ns, -0.5, 0.5))
            y = self.op("math.mul", f"cuvil.math.mul $o0, $o1 : {t}, {ttype(ns)} -> {t}", [y, w], v.shape, 4.5, pattern=P)
            y = self.op("math.add", f"cuvil.math.add $o0, $o1 : {t}, {ttype(ns)} -> {t}", [y, b], v.shape, 5, pattern=P)
        if rng.random() < 0.15:
            self.side.append(mean)  # an intermediate read elsewhere too
        return y

    # --- reductions --------------------------------------------------------------

    def g_reduce(self, x):
        v = self.V(x)
        r = len(v.shape)
        k = self.rng.choice(["sum", "sum", "mean", "mean", "max", "min", "var", "std", "prod"])
        nd = self.rng.choice([1, 1, 1, 2, r])
        dims = sorted(self.rng.sample(range(r), min(nd, r)))
        count = prod(v.shape[d] for d in dims)
        if count > MAX_REDUCE:
            return None
        if k == "prod" and (count > 8 or v.mag > 1.5):
            k = "sum"
        if k in ("var", "std") and count < 2:
            k = "mean"
        keep = self.rng.random() < 0.5
        oshape = tuple((1 if i in dims else s) for i, s in enumerate(v.shape) if keep or i not in dims)
        attrs = f" {{correction = {self.rng.choice([0, 1])} : i64}}" if k in ("var", "std") else ""
        mag = {"sum": v.mag * math.sqrt(count) * 1.5, "var": v.mag ** 2, "prod": min(v.mag, 1.5) ** min(count, 8)}.get(k, v.mag)
        return self.op(f"reduce.{k}", f"cuvil.reduce.{k} $o0 dims [{arr(dims)}]{' keepdim' if keep else ''}{attrs} : {v.type} -> {ttype(oshape)}",
                       [x], oshape, mag, exact=v.exact and k in ("max", "min"))

    def g_cumulative(self, x):
        v = self.V(x)
        d = self.rng.randrange(len(v.shape))
        k = self.rng.choice(["sum", "sum", "max", "min", "logsumexp", "prod"])
        if k == "prod" and (v.shape[d] > 8 or v.mag > 1.5):
            k = "max"
        mag = {"sum": v.mag * v.shape[d], "logsumexp": v.mag + math.log(v.shape[d] + 1)}.get(k, v.mag)
        return self.op("reduce.cumulative", f"cuvil.reduce.cumulative $o0 {{dim = {d} : i64, kind = #cuvil<scan_kind {k}>}} : {v.type} -> {v.type}",
                       [x], v.shape, mag)

    # --- shapes and data movement -------------------------------------------------

    def factor_shape(self, total):
        rank = self.rng.randint(1, 4)
        dims = []
        rest = total
        for _ in range(rank - 1):
            divs = [d for d in range(1, rest + 1) if rest % d == 0]
            d = self.rng.choice(divs)
            dims.append(d)
            rest //= d
        dims.append(rest)
        self.rng.shuffle(dims)
        return dims

    def g_reshape(self, x):
        v = self.V(x)
        dims = self.factor_shape(prod(v.shape))
        written = list(dims)
        if self.rng.random() < 0.4:
            written[self.rng.randrange(len(dims))] = -1
        return self.op("shape.reshape", f"cuvil.shape.reshape $o0 {{shape = array<i64: {', '.join(map(str, written))}>}} : {v.type} -> {ttype(dims)}",
                       [x], dims, v.mag, exact=v.exact)

    def g_flatten(self, x):
        v = self.V(x)
        r = len(v.shape)
        a = self.rng.randrange(r)
        b = self.rng.randrange(a, r)
        oshape = v.shape[:a] + (prod(v.shape[a:b + 1]),) + v.shape[b + 1:]
        return self.op("shape.flatten", f"cuvil.shape.flatten $o0 {{start_dim = {a} : i64, end_dim = {b} : i64}} : {v.type} -> {ttype(oshape)}",
                       [x], oshape, v.mag, exact=v.exact)

    def g_permute(self, x):
        v = self.V(x)
        r = len(v.shape)
        if self.rng.random() < 0.5:
            perm = list(range(r))
            self.rng.shuffle(perm)
            oshape = tuple(v.shape[p] for p in perm)
            return self.op("shape.permute", f"cuvil.shape.permute $o0 {{dims = array<i64: {arr(perm)}>}} : {v.type} -> {ttype(oshape)}",
                           [x], oshape, v.mag, exact=v.exact)
        a, b = self.rng.sample(range(r), 2)
        s = list(v.shape)
        s[a], s[b] = s[b], s[a]
        return self.op("shape.transpose", f"cuvil.shape.transpose $o0 {{dim0 = {a} : i64, dim1 = {b} : i64}} : {v.type} -> {ttype(s)}",
                       [x], s, v.mag, exact=v.exact)

    def g_unsqueeze(self, x):
        v = self.V(x)
        ones = [i for i, s in enumerate(v.shape) if s == 1]
        if ones and self.rng.random() < 0.6:
            dims = sorted(self.rng.sample(ones, self.rng.randint(1, len(ones))))
            oshape = tuple(s for i, s in enumerate(v.shape) if i not in dims)
            return self.op("shape.squeeze", f"cuvil.shape.squeeze $o0 {{dims = array<i64: {arr(dims)}>}} : {v.type} -> {ttype(oshape)}",
                           [x], oshape, v.mag, exact=v.exact)
        if ones and self.rng.random() < 0.6:
            shape = [-1] * len(v.shape)
            out = list(v.shape)
            for i in ones:
                if self.rng.random() < 0.7:
                    shape[i] = out[i] = self.rng.randint(2, 4)
            if self.rng.random() < 0.3 and len(out) < MAX_RANK:
                lead = self.rng.randint(2, 3)
                shape, out = [lead] + shape, [lead] + out
            if prod(out) > self.max_elems:
                return None
            return self.op("shape.expand", f"cuvil.shape.expand $o0 {{shape = array<i64: {', '.join(map(str, shape))}>}} : {v.type} -> {ttype(out)}",
                           [x], out, v.mag, exact=v.exact)
        if len(v.shape) >= MAX_RANK:
            return None
        d = self.rng.randint(0, len(v.shape))
        oshape = v.shape[:d] + (1,) + v.shape[d:]
        return self.op("shape.unsqueeze", f"cuvil.shape.unsqueeze $o0 {{dim = {d} : i64}} : {v.type} -> {ttype(oshape)}",
                       [x], oshape, v.mag, exact=v.exact)

    def g_slice(self, x):
        v = self.V(x)
        dims = [i for i, s in enumerate(v.shape) if s >= 2]
        if not dims:
            return None
        d = self.rng.choice(dims)
        size = v.shape[d]
        if len(v.shape) >= 2 and self.rng.random() < 0.25:
            idx = self.rng.randrange(-size, size)
            oshape = v.shape[:d] + v.shape[d + 1:]
            return self.op("tensor.select", f"cuvil.tensor.select $o0 {{dim = {d} : i64, index = {idx} : i64}} : {v.type} -> {ttype(oshape)}",
                           [x], oshape, v.mag, exact=v.exact)
        for _ in range(20):
            start = self.rng.randint(-size, size - 1)
            end = self.rng.choice([self.rng.randint(-size, size), 9223372036854775807])
            step = self.rng.choice([1, 1, 2, 3])
            s0 = min(max(start + size if start < 0 else start, 0), size)
            e0 = min(max(end + size if end < 0 else end, 0), size)
            n = max(0, -(-(e0 - s0) // step))
            if n >= 1:
                break
        else:
            return None
        oshape = v.shape[:d] + (n,) + v.shape[d + 1:]
        return self.op("tensor.slice", f"cuvil.tensor.slice $o0 {{dim = {d} : i64, start = {start} : i64, end = {end} : i64, step = {step} : i64}} : {v.type} -> {ttype(oshape)}",
                       [x], oshape, v.mag, exact=v.exact)

    def g_concat(self, x):
        v = self.V(x)
        r = len(v.shape)
        d = self.rng.randrange(r)

        def ok(u):
            return len(u.shape) == r and all(a == b for i, (a, b) in enumerate(zip(u.shape, v.shape)) if i != d)
        parts = [x]
        for _ in range(self.rng.choice([1, 1, 2])):
            u = self.pick(ok)
            if u is None or self.rng.random() < 0.2:
                s = list(v.shape)
                s[d] = self.rng.randint(1, 6)
                u = self.const(self.uniform(s)) if self.rng.random() < 0.5 else self.g.add_arg(s)
            parts.append(u)
        self.rng.shuffle(parts)
        oshape = list(v.shape)
        oshape[d] = sum(self.V(p).shape[d] for p in parts)
        if prod(oshape) > self.max_elems:
            return None
        ops = ", ".join(f"$o{i}" for i in range(len(parts)))
        return self.op("tensor.concat", f"cuvil.tensor.concat {ops} {{dim = {d} : i64}} : ({', '.join(self.T(p) for p in parts)}) -> {ttype(oshape)}",
                       parts, oshape, max(self.V(p).mag for p in parts), exact=all(self.V(p).exact for p in parts))

    def g_pad(self, x):
        v = self.V(x)
        r = len(v.shape)
        mode = self.rng.choice(["constant", "constant", "reflect", "replicate", "circular"])
        nd = self.rng.randint(1, min(r, 3))
        pads, out = [], list(v.shape)
        for i in range(nd):
            dim = r - 1 - i
            size = v.shape[dim]
            for _ in range(2):
                if mode == "constant":
                    p = self.rng.randint(-1 if size > 2 else 0, 2)
                elif mode == "reflect":
                    p = self.rng.randint(0, min(2, size - 1))
                elif mode == "circular":
                    p = self.rng.randint(0, min(2, size))
                else:
                    p = self.rng.randint(0, 2)
                pads.append(p)
            out[dim] = size + pads[-1] + pads[-2]
            if out[dim] < 1:
                return None
        if prod(out) > self.max_elems:
            return None
        attrs = f"pad = array<i64: {', '.join(map(str, pads))}>"
        if mode != "constant":
            attrs += f", mode = #cuvil<pad_mode {mode}>"
        elif self.rng.random() < 0.4:
            attrs += f", value = {fattr(self.rng.choice([0.5, -1.0, 2.0]))}"
        return self.op("tensor.pad", f"cuvil.tensor.pad $o0 {{{attrs}}} : {v.type} -> {ttype(out)}",
                       [x], out, max(v.mag, 2), exact=v.exact)

    def g_resize(self, x):
        v = self.V(x)
        sp = v.shape[2:]
        mode = self.rng.choice(["nearest", "nearest_exact", "linear", "linear"])
        size = [self.rng.choice([max(1, s // 2), s, 2 * s, self.rng.randint(1, 2 * s + 1)]) for s in sp]
        size = [min(sz, 24) for sz in size]
        oshape = v.shape[:2] + tuple(size)
        if prod(oshape) > self.max_elems:
            return None
        ac = " align_corners" if mode == "linear" and self.rng.random() < 0.4 else ""
        return self.op("tensor.resize", f"cuvil.tensor.resize $o0 {mode} size [{arr(size)}]{ac} : {v.type} -> {ttype(oshape)}",
                       [x], oshape, v.mag)

    def g_sort(self, x):
        v = self.V(x)
        d = self.rng.randrange(len(v.shape))
        desc = " descending" if self.rng.random() < 0.5 else ""
        vals, _ = self.g.add_op(
            "tensor.sort",
            f"$r0, $r1 = cuvil.tensor.sort $o0 {{dim = {d} : i64{', descending' if desc else ''}}} : {v.type} -> {v.type}, {ttype(v.shape, 'i64')}",
            [x], [dict(shape=v.shape, mag=v.mag, exact=v.exact), dict(shape=v.shape, dtype="i64")])
        return vals

    # --- the model -------------------------------------------------------------------

    def first_arg(self, family):
        rng = self.rng
        if family == "cnn" and self.big:
            h = rng.choice([7, 8, 12, 14, 16])
            return (rng.choice([1, 2]), rng.choice([24, 64, 72, 130, rng.randint(17, 160)]), h,
                    h if rng.random() < 0.8 else rng.randint(5, 16))
        if family in ("seq", "mat") and self.big:
            return (rng.randint(1, 300), rng.choice([129, 257, rng.randint(33, 300)]))
        if family == "cnn":
            n = rng.choice([1, 1, 2])
            c = rng.choice([1, 2, 3, 4, 8, 8, 16, 16, rng.randint(1, 16)])
            h = rng.choice([rng.randint(3, 12), rng.randint(6, 12), rng.randint(12, 16), 16])
            w = h if rng.random() < 0.7 else rng.randint(3, 16)
            return (n, c, h, w)
        if family == "seq":
            return (rng.randint(1, 2), rng.randint(1, 12), rng.choice([4, 8, 16, 32, rng.randint(1, 32)]))
        if family == "mat":
            return (rng.randint(1, 16), rng.choice([8, 16, 32, 64, rng.randint(1, 64)]))
        r = rng.randint(1, 4)
        return tuple(rng.randint(1, 8) for _ in range(r))

    def applicable(self, v, family):
        r = len(v.shape)
        cnn = family == "cnn"
        mlp = family in ("seq", "mat")
        table = [(self.g_unary, 4), (self.g_binary, 4), (self.g_domain_unary, 1.2), (self.g_where, 0.5)]
        if v.exact:
            table += [(self.g_int_island, 0.6), (self.g_cast_roundtrip, 0.3)]
        if v.exact and self.nan_rate > 0:
            table.append((self.g_nan_source, 20 * self.nan_rate))
        if r == 0:
            return table
        table += [(self.g_identity, 0.8), (self.g_view_chain, 0.8), (self.g_split_concat, 0.5), (self.g_gather, 0.5)]
        table += [(self.g_softmax, 1.2 + 2 * mlp), (self.g_softmax_written, 0.6), (self.g_reduce, 1.5),
                  (self.g_cumulative, 0.5), (self.g_reshape, 1), (self.g_slice, 1), (self.g_concat, 1),
                  (self.g_pad, 0.7), (self.g_sort, 0.3), (self.g_unsqueeze, 0.7),
                  (self.g_linear, 1.5 + 4 * mlp), (self.g_linear_block, 0.7 + 2 * mlp),
                  (self.g_layer_norm, 0.8 + 2 * mlp), (self.g_layer_norm_written, 0.4 + 1 * mlp)]
        if r >= 2:
            table += [(self.g_matmul, 1 + 2 * mlp), (self.g_permute, 1), (self.g_flatten, 0.5),
                      (self.g_batch_norm, 0.7)]
        if r == 2:
            table += [(self.g_addmm, 1)]
        if r == 3:
            table += [(self.g_batch_matmul, 1 + mlp), (self.g_pool, 0.7), (self.g_group_norm, 0.4), (self.g_conv1d, 1.5),
                      (self.g_resize, 0.3)]
        if r == 4:
            table += [(self.g_conv2d, 3 + 6 * cnn), (self.g_conv_block, 2 + 6 * cnn),
                      (self.g_conv_transpose2d, 0.5 + cnn), (self.g_pool, 1 + 3 * cnn),
                      (self.g_group_norm, 0.5), (self.g_resize, 0.5 + cnn), (self.g_batch_norm, 1 + cnn)]
        return table

    def generate(self):
        rng = self.rng
        family = rng.choice(["cnn", "cnn", "cnn", "seq", "mat", "mixed"])
        a0 = self.g.add_arg(self.first_arg(family))
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            s = self.V(a0).shape
            self.g.add_arg(rng.choice([s, self.bshape(s), self.first_arg(family)]))
        steps = rng.randint(2, self.max_ops)
        for _ in range(steps):
            v = self.pick(lambda u: prod(u.shape) >= 1)
            table = self.applicable(self.V(v), family)
            for _attempt in range(8):
                fn = rng.choices([f for f, _ in table], [w for _, w in table])[0]
                mark = (self.g.next_id, len(self.g.ops), len(self.g.args))
                res = fn(v)
                if res is not None:
                    self.last = res
                    break
                # Undo whatever the failed attempt added.
                self.g.ops = self.g.ops[:mark[1]]
                self.g.args = self.g.args[:mark[2]]
                for vid in range(mark[0], self.g.next_id):
                    self.g.values.pop(vid, None)
                self.g.next_id = mark[0]
        # Outputs: the last value and up to two other values nothing reads.
        uses = self.g.uses()
        prodmap = self.g.producer()
        sinks = [v.id for v in self.candidates(lambda u: u.id in prodmap and uses[u.id] == 0 and u.id != self.last)]
        rng.shuffle(sinks)
        outs = ([self.last] if self.last is not None else []) + sinks[:rng.choice([0, 1, 2])]
        for v in self.side:
            if v not in outs and len(outs) < 5:
                outs.append(v)
        # Edge cases of the output buffers: a value returned twice, an input
        # returned as it is, an intermediate value that is also read further.
        r = rng.random()
        if r < 0.04 and outs:
            outs.append(rng.choice(outs))
        elif r < 0.08:
            outs.append(rng.choice(self.g.args))
        elif r < 0.14:
            inner = [v.id for v in self.candidates(lambda u: u.id in prodmap and u.id not in outs)]
            if inner:
                outs.append(rng.choice(inner))
        self.g.outputs = outs
        self.g.dce()
        return self.g


# ----------------------------------------------------------------------------
# Running the tools
# ----------------------------------------------------------------------------

class Tools:
    def __init__(self, bindir, timeout):
        self.export = os.path.abspath(os.path.join(bindir, "cuvil-export"))
        self.run = os.path.abspath(os.path.join(bindir, "cuvil-run"))
        self.timeout = timeout

    def missing(self):
        return [p for p in (self.export, self.run) if not os.access(p, os.X_OK)]

    def call(self, cmd, timeout=None):
        """(status, output): status is the exit code, or 'timeout'."""
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout or self.timeout)
            return p.returncode, p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode("utf-8", "replace") if e.stdout else ""
            return "timeout", out
        except OSError as e:  # the tool vanished (a rebuild under way): no verdict
            return "unavailable", str(e)


def crashed(status, output):
    return status == "timeout" or (isinstance(status, int) and status < 0) or \
        any(m in output for m in CRASH_MARKERS)


def input_flags(shapes):
    flags = []
    for i, s in enumerate(shapes):
        dims = "".join(f"{d}x" for d in s)  # a 0-d input is just 'f32'
        flags += ["--input", f"{i}={dims}f32:random"]
    return flags


def commands(tools, model, lib, shapes, seed, cpu, threads, refdir, gotdir, disabled=()):
    exp = [tools.export, "--model", model, "--target", "x86_64", "-o", lib]
    if cpu != "native":
        exp += ["--cpu", cpu]
    if disabled:
        exp += ["--disable-optimization"] + list(disabled)
    ins = input_flags(shapes)
    ref = [tools.run, model] + ins + ["-o", refdir, "--seed", str(seed), "-q"]
    got = [tools.run, lib] + ins + ["-o", gotdir, "--seed", str(seed), "-q"]
    if threads:
        got += ["--threads", str(threads)]
    return exp, ref, got


def compare(ref, got, rtol, atol, extra=None):
    """None if equal within tolerance, else (ratio, description) of the worst
    element. `extra`: a further allowance per element (the sensitivity; inf
    where the reference itself is ill-conditioned)."""
    if ref.shape != got.shape:
        return (math.inf, f"shape {got.shape} != expected {ref.shape}")
    if ref.dtype != got.dtype:
        return (math.inf, f"dtype {got.dtype} != expected {ref.dtype}")
    if ref.size == 0:
        return None
    r = ref.astype(np.float64)
    g = got.astype(np.float64)
    rn, gn = np.isnan(r), np.isnan(g)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(g - r)
        allowed = atol + rtol * np.abs(r) + (0.0 if extra is None else extra)
        ratio = np.where(rn & gn, 0.0, err / allowed)
    ratio = np.where(rn != gn, np.inf, ratio)
    both_inf = np.isinf(r) & np.isinf(g)
    ratio = np.where(both_inf, np.where(r == g, 0.0, np.inf), ratio)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    if extra is not None:
        ratio = np.where(np.isinf(extra), 0.0, ratio)
    i = int(np.argmax(ratio))
    if ratio.flat[i] <= 1.0:
        return None
    idx = np.unravel_index(i, ref.shape) if ref.ndim else ()
    bad = int(np.count_nonzero(ratio > 1.0))
    sens = "" if extra is None else f", of which sensitivity {float(extra.flat[i]):.3g}"
    return (float(ratio.flat[i]),
            f"index {tuple(int(j) for j in idx)}: got {g.flat[i]!r}, expected {r.flat[i]!r} "
            f"(|diff| {err.flat[i]:.3g}, allowed {allowed.flat[i]:.3g}{sens}; {bad} of {ref.size} elements off)")


# (eps, freq) of the perturbed evaluations: several, so that no element's
# allowance is small just because its perturbations happened to be.
SENS_RUNS = ((1e-6, 12345.678), (-1e-6, 3141.5927), (1e-6, 27182.818), (-1e-6, 1414.2136))
SENS_FACTOR = 4.0  # allowance: this many times the largest change they cause


def sensitivity(tools, graph, shapes, seed, workdir, refs):
    """Per output, SENS_FACTOR x how far the perturbed models' outputs move
    from the reference (inf where a finite reference becomes NaN/inf; 0 where
    the reference is NaN/inf, whose places must match exactly). None if the
    evaluator cannot run them."""
    sens = [np.zeros(r.shape) for r in refs]
    for k, (eps, freq) in enumerate(SENS_RUNS):
        d = os.path.join(workdir, f"sens{k}")
        shutil.rmtree(d, ignore_errors=True)
        model = os.path.join(workdir, f"sens{k}.mlir")
        with open(model, "w") as f:
            f.write(perturbed(graph, eps, freq).render())
        st, _ = tools.call([tools.run, model] + input_flags(shapes) + ["-o", d, "--seed", str(seed), "-q"])
        if st != 0:
            return None
        for i, r in enumerate(refs):
            p = np.load(os.path.join(d, f"output{i}.npy")).astype(np.float64)
            r = r.astype(np.float64)
            fr, fp = np.isfinite(r), np.isfinite(p)
            with np.errstate(invalid="ignore", over="ignore"):
                delta = np.where(fr & fp, np.abs(p - r), np.where(fr, np.inf, 0.0))
            sens[i] = np.maximum(sens[i], delta)
    return [SENS_FACTOR * s for s in sens]


def check_model(tools, text, shapes, seed, cpu, threads, workdir, rtol, atol, report=True, graph=None,
                disabled=()):
    """Runs one model both ways. Returns a dict: status pass / invalid / finding,
    category, detail, worst, kernels. With `graph` (the model `text` renders),
    a mismatch is checked again with the outputs' sensitivity to rounding
    added to the tolerance."""
    os.makedirs(workdir, exist_ok=True)
    model = os.path.join(workdir, "model.mlir")
    lib = os.path.join(workdir, "model.so")
    refdir, gotdir = os.path.join(workdir, "ref"), os.path.join(workdir, "got")
    for d in (refdir, gotdir):
        shutil.rmtree(d, ignore_errors=True)
    with open(model, "w") as f:
        f.write(text)
    exp, ref, got = commands(tools, model, lib, shapes, seed, cpu, threads, refdir, gotdir, disabled)
    res = {"status": "pass", "category": "", "detail": "", "kernels": []}

    st, out = tools.call(ref)
    if st == "unavailable":
        return dict(res, status="skipped", category="tool-unavailable", detail=out)
    if crashed(st, out):
        return dict(res, status="finding", category="evaluator-crash" if st != "timeout" else "evaluator-timeout",
                    detail=out[-3000:])
    if st != 0:
        return dict(res, status="invalid", category="evaluator-rejects", detail=out[-3000:])

    kr = os.path.join(workdir, "kernels.json")
    st, out = tools.call(exp + (["--kernel-report", kr] if report else []))
    if st == "unavailable":
        return dict(res, status="skipped", category="tool-unavailable", detail=out)
    if crashed(st, out):
        return dict(res, status="finding", category="export-crash" if st != "timeout" else "export-timeout",
                    detail=out[-3000:])
    if st != 0:
        return dict(res, status="finding", category="export-error", detail=out[-3000:])
    if report:
        try:
            with open(kr) as f:
                for k in json.load(f).get("kernels", []):
                    name = k.get("kernel", "?") + ("/" + k["variant"] if k.get("variant") else "")
                    res["kernels"].append(name + ("+epilogue" if k.get("epilogue") else ""))
        except (OSError, ValueError):
            pass

    st, out = tools.call(got)
    if st == "unavailable":
        return dict(res, status="skipped", category="tool-unavailable", detail=out)
    if crashed(st, out):
        return dict(res, status="finding", category="runtime-crash" if st != "timeout" else "runtime-timeout",
                    detail=out[-3000:])
    if st != 0:
        return dict(res, status="finding", category="runtime-error", detail=out[-3000:])

    nref = len([f for f in os.listdir(refdir) if f.startswith("output")])
    ngot = len([f for f in os.listdir(gotdir) if f.startswith("output")])
    if nref != ngot:
        return dict(res, status="finding", category="mismatch", detail=f"{ngot} outputs, expected {nref}")
    refs = [np.load(os.path.join(refdir, f"output{i}.npy")) for i in range(nref)]
    gots = [np.load(os.path.join(gotdir, f"output{i}.npy")) for i in range(nref)]

    def judge(extras):
        worst = None
        for i in range(nref):
            c = compare(refs[i], gots[i], rtol, atol, None if extras is None else extras[i])
            if c and (worst is None or c[0] > worst[0]):
                worst = (c[0], f"output {i} {c[1]}", i)
        return worst
    worst = judge(None)
    if worst and graph is not None and all(r.shape == g.shape for r, g in zip(refs, gots)):
        extras = sensitivity(tools, graph, shapes, seed, workdir, refs)
        if extras is not None:
            res["sensitivity_checked"] = True
            worst = judge(extras)
    if worst:
        return dict(res, status="finding", category="mismatch", detail=worst[1], output=worst[2])
    return res


# ----------------------------------------------------------------------------
# Reduction
# ----------------------------------------------------------------------------

def reduce_graph(graph, fails, budget=150):
    """Greedy reduction: return the earliest value that still shows the
    finding (or keep one output), cut values into new inputs (latest first:
    one success can drop everything above), bypass ops whose operand has the
    result's shape. `fails(graph)` says whether the finding persists."""
    g = graph
    trials = 0
    # The earliest value that shows the finding on its own, as the only output:
    # everything after it goes (cutting cannot drop ops that change shapes).
    found = False
    for op in g.ops:
        if found or trials >= budget // 2:
            break
        if op.kind == "constant":
            continue
        for r in op.results:
            if g.values[r].dtype in ("f32", "i32", "i64") and g.outputs != [r]:
                h = g.copy()
                h.outputs = [r]
                h.dce()
                trials += 1
                if fails(h):
                    g, found = h, True
                    break
    if len(g.outputs) > 1:
        for o in list(g.outputs):
            h = g.copy()
            h.outputs = [o]
            h.dce()
            trials += 1
            if fails(h):
                g = h
                break
    changed = True
    while changed and trials < budget:
        changed = False
        vals = [r for op in g.ops if op.kind != "constant" for r in op.results
                if g.values[r].dtype == "f32" and r not in g.outputs and not g.values[r].nocut]
        for vid in reversed(vals):
            if trials >= budget:
                break
            h = g.copy()
            h.cut(vid)
            trials += 1
            if fails(h):
                g, changed = h, True
                break
        if changed:
            continue
        for op in reversed(g.live_ops()):
            if trials >= budget or changed:
                break
            r = op.results[0]
            for o in set(op.operands):
                ov = g.values[o]
                if ov.shape == g.values[r].shape and ov.dtype == g.values[r].dtype and o != r:
                    h = g.copy()
                    h.replace_uses(r, o)
                    h.dce()
                    if not h.live_ops():
                        continue
                    trials += 1
                    if fails(h):
                        g, changed = h, True
                        break
    return g, trials


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

# Graph pipeline steps a case may switch off (cuvil-export --disable-optimization).
PASSES = ["simplify", "fold-constants", "dead-code-elimination", "fold-batch-norm",
          "recognize-composites", "fusion", "memory-planning"]


def case_meta(seed, cpus, threads_choices, vary_passes):
    """The case's CPU, thread count and switched-off passes."""
    rng = random.Random(seed * 7919 + 17)  # a stream of its own: the model stays the same
    cpu, threads = rng.choice(cpus), rng.choice(threads_choices)
    disabled = sorted(rng.sample(PASSES, rng.choice([1, 1, 2]))) if rng.random() < vary_passes else []
    return cpu, threads, disabled


def write_finding(args, tools, seed, graph_text, shapes, cpu, threads, res, minimal=None, disabled=()):
    fdir = os.path.join(args.work, "findings")
    os.makedirs(fdir, exist_ok=True)
    base = os.path.join(fdir, f"case-{seed}")
    with open(base + ".mlir", "w") as f:
        f.write(graph_text)
    lines = [f"differential finding, case seed {seed}: {res['category']}", "",
             res["detail"].strip(), "",
             f"cpu: {cpu}, threads: {threads or 'all'}, disabled passes: {' '.join(disabled) or 'none'}, "
             f"rtol {args.rtol}, atol {args.atol}",
             "(the comparison adds to the tolerance 4x how far the outputs move when every intermediate is "
             "perturbed by 1e-6 relative; the plain --expected-output check below does not)", ""]

    def repro(model, shp, tag):
        lib = base + tag + ".so"
        exp, ref, got = commands(tools, model, lib, shp, seed, cpu, threads, base + tag + ".ref", base + tag + ".got",
                                 disabled)
        n_out = model_outputs(model)
        chk = [tools.run, lib] + input_flags(shp) + ["--seed", str(seed), "-q", "--rtol", str(args.rtol), "--atol", str(args.atol)]
        if threads:
            chk += ["--threads", str(threads)]
        chk += ["--expected-output"] + [os.path.join(base + tag + ".ref", f"output{i}.npy") for i in range(n_out)]
        return ["  " + " ".join(exp), "  " + " ".join(ref), "  " + " ".join(got), "  " + " ".join(chk)]
    lines += ["Reproduce:"] + repro(base + ".mlir", shapes, "")
    if minimal:
        mtext, mshapes, mres = minimal
        with open(base + ".min.mlir", "w") as f:
            f.write(mtext)
        lines += ["", f"Reduced ({base}.min.mlir): {mres['category']}", mres["detail"].strip(), "", mtext,
                  "Reproduce the reduced model:"] + repro(base + ".min.mlir", mshapes, ".min")
    with open(base + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")


def model_outputs(path):
    with open(path) as f:
        for line in f:
            if line.strip().startswith("func.func"):
                rt = line.split("->", 1)[1] if "->" in line else ""
                return rt.count("tensor<")
    return 0


SEEN = {}  # signature -> first seed, for the findings that carry a message


def signature(res):
    """What makes two findings the same: the category and, for compile and
    run failures, the first error line without numbers and hashes. Mismatches
    have no such message: each counts on its own."""
    if res["category"] == "mismatch":
        return None
    lines = [ln for ln in res["detail"].splitlines() if "error" in ln.lower()] or res["detail"].splitlines()[:1]
    return res["category"] + ": " + re.sub(r"[0-9a-f]{8,}|\b\d+\b", "#", lines[0].strip() if lines else "")[:200]


def run_case(args, tools, seed, lock):
    t0 = time.time()
    graph = ModelGen(seed, args.max_ops, args.nan_rate).generate()
    text = graph.render()
    shapes = graph.arg_shapes()
    cpu, threads, disabled = case_meta(seed, args.cpus, args.threads, args.vary_passes)
    wdir = os.path.join(args.work, f"case-{seed}")
    res = check_model(tools, text, shapes, seed, cpu, threads, wdir, args.rtol, args.atol, graph=graph,
                      disabled=disabled)
    kinds = Counter(op.kind for op in graph.live_ops())
    patterns = Counter(op.pattern for op in graph.live_ops() if op.pattern)
    minimal = None
    sig, dup = None, None
    if res["status"] == "finding":
        sig = signature(res)
        with lock:
            dup = SEEN.get(sig) if sig else None
            if sig and dup is None:
                SEEN[sig] = seed
    if res["status"] == "finding" and args.reduce and dup is None:
        cat = res["category"]
        n = [0]

        def fails(h):
            n[0] += 1
            r = check_model(tools, h.render(), h.arg_shapes(), seed, cpu, threads,
                            os.path.join(wdir, f"reduce-{n[0]}"), args.rtol, args.atol, report=False, graph=h,
                            disabled=disabled)
            shutil.rmtree(os.path.join(wdir, f"reduce-{n[0]}"), ignore_errors=True)
            return r["status"] == "finding" and r["category"] == cat
        small, _ = reduce_graph(graph, fails)
        mres = check_model(tools, small.render(), small.arg_shapes(), seed, cpu, threads,
                           os.path.join(wdir, "reduced"), args.rtol, args.atol, report=False, graph=small,
                           disabled=disabled)
        minimal = (small.render(), small.arg_shapes(), mres)
    if res["status"] == "finding":
        with lock:
            write_finding(args, tools, seed, text, shapes, cpu, threads, res, minimal, disabled)
    elif res["status"] == "invalid":
        idir = os.path.join(args.work, "invalid")
        os.makedirs(idir, exist_ok=True)
        with open(os.path.join(idir, f"case-{seed}.mlir"), "w") as f:
            f.write(text)
        with open(os.path.join(idir, f"case-{seed}.txt"), "w") as f:
            f.write(res["detail"])
    if not args.keep:
        shutil.rmtree(wdir, ignore_errors=True)
    return dict(seed=seed, status=res["status"], category=res["category"], detail=res["detail"],
                kinds=kinds, patterns=patterns, kernels=Counter(res["kernels"]), cpu=cpu, disabled=disabled,
                threads=threads, time=time.time() - t0, nops=sum(kinds.values()), signature=sig, duplicate_of=dup,
                reduced=minimal[0] if minimal else None)


def main():
    ap = argparse.ArgumentParser(description="Differential fuzzer: cuvil-export'ed libraries vs the reference evaluator.",
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Run (" + __doc__.split("Run (", 1)[1])
    ap.add_argument("--bin", required=True, help="directory with cuvil-export and cuvil-run")
    ap.add_argument("--work", required=True, help="work directory (findings/ and invalid/ go here)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--seconds", type=float, help="run cases until this many seconds have passed")
    g.add_argument("--cases", type=int, help="number of cases (default 20)")
    g.add_argument("--check", metavar="MODEL.mlir", help="check one existing model instead (needs --shapes)")
    ap.add_argument("--shapes", help="with --check: input shapes, e.g. 1x4x8x8,16x4")
    ap.add_argument("--disable", nargs="*", default=[], help="with --check: passes to switch off")
    ap.add_argument("--seed", type=int, default=0, help="case i uses seed SEED+i (default 0)")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--max-ops", type=int, default=16, help="most generator steps per model (default 16)")
    ap.add_argument("--nan-rate", type=float, default=0.0,
                    help="weight of NaN/inf sources (log, sqrt... of values of either sign); default 0: none")
    ap.add_argument("--cpus", default="native,haswell,skylake-avx512",
                    help="CPUs to draw from per case (cuvil-export --cpu; native: this machine's)")
    ap.add_argument("--threads", default="0,1,3,5", help="library thread counts to draw from (0: all cores)")
    ap.add_argument("--vary-passes", type=float, default=0.2,
                    help="share of cases compiled with one or two graph passes switched off (default 0.2)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run in parallel")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per tool call")
    ap.add_argument("--reduce", action="store_true", help="reduce every finding to a small model")
    ap.add_argument("--keep", action="store_true", help="keep every case's directory")
    ap.add_argument("--json", metavar="FILE", help="write the summary as JSON")
    ap.add_argument("-q", "--quiet", action="store_true", help="print findings and the summary only")
    try:
        args = ap.parse_args()
        args.cpus = [c.strip() for c in args.cpus.split(",") if c.strip()]
        args.threads = [int(t) for t in args.threads.split(",")]
    except SystemExit:
        return 2
    except ValueError as e:
        print(f"differential: {e}", file=sys.stderr)
        return 2
    tools = Tools(args.bin, args.timeout)
    if tools.missing():
        print(f"differential: missing tools: {', '.join(tools.missing())}", file=sys.stderr)
        return 2
    os.makedirs(args.work, exist_ok=True)

    if args.check:
        if not args.shapes:
            print("differential: --check needs --shapes", file=sys.stderr)
            return 2
        shapes = [tuple(int(d) for d in s.split("x")) for s in args.shapes.split(",")]
        with open(args.check) as f:
            text = f.read()
        cpu, threads = args.cpus[0], args.threads[0]
        res = check_model(tools, text, shapes, args.seed, cpu, threads, os.path.join(args.work, "check"),
                          args.rtol, args.atol, disabled=args.disable)
        print(f"{args.check}: {res['status'].upper()} {res['category']} {res['detail'].strip()[:2000]}")
        return 1 if res["status"] == "finding" else (2 if res["status"] == "invalid" else 0)

    ncases = args.cases if args.cases is not None else (None if args.seconds else 20)
    t_start = time.time()
    lock = threading.Lock()
    results = []
    kinds, patterns, kernels, cats = Counter(), Counter(), Counter(), Counter()

    def report(r):
        results.append(r)
        kinds.update(r["kinds"])
        patterns.update(r["patterns"])
        kernels.update(r["kernels"])
        if r["status"] != "pass":
            cats[r["status"] + ":" + r["category"]] += 1
        tag = {"pass": "pass", "invalid": "INVALID (generator)", "finding": "FINDING " + r["category"],
               "skipped": "SKIPPED (tool unavailable)"}[r["status"]]
        if not args.quiet or r["status"] != "pass":
            ks = ",".join(sorted(r["kinds"]))
            off = ("/-" + ",-".join(r["disabled"])) if r["disabled"] else ""
            print(f"case {r['seed'] - args.seed:5d} seed {r['seed']}: {r['nops']:2d} ops [{ks}] "
                  f"{r['cpu']}/t{r['threads'] or 'all'}{off} {tag} {r['time']:.2f}s", flush=True)
            if r["status"] != "pass":
                if r.get("duplicate_of") is not None:
                    print(f"    same as seed {r['duplicate_of']}: {r['signature']}", flush=True)
                elif r["detail"].strip():
                    lines = [ln for ln in r["detail"].strip().splitlines() if ln.strip() and not ln.startswith(">>>")]
                    print("    " + (lines[0] if r["category"] != "mismatch" else lines[-1])[:300], flush=True)

    def more(i):
        if ncases is not None:
            return i < ncases
        return time.time() - t_start < args.seconds

    i = 0
    try:
        if args.jobs <= 1:
            while more(i):
                report(run_case(args, tools, args.seed + i, lock))
                i += 1
        else:
            with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
                pending = {}
                while True:
                    while len(pending) < args.jobs and more(i):
                        pending[pool.submit(run_case, args, tools, args.seed + i, lock)] = i
                        i += 1
                    if not pending:
                        break
                    done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                    for fut in sorted(done, key=lambda f: pending[f]):
                        del pending[fut]
                        report(fut.result())
    except KeyboardInterrupt:
        print("differential: interrupted", file=sys.stderr)

    elapsed = time.time() - t_start
    findings = [r for r in results if r["status"] == "finding"]
    invalid = [r for r in results if r["status"] == "invalid"]
    nops = sum(r["nops"] for r in results if r["status"] in ("pass", "finding"))
    skipped = [r for r in results if r["status"] == "skipped"]
    print(f"differential: {len(results)} cases, {nops} ops compiled and checked, {len(findings)} findings in {elapsed:.0f} s")
    print(f"  rate: {len(results) / max(elapsed, 1e-9):.2f} cases/s; invalid (generator) models: {len(invalid)}"
          + (f"; skipped (tools unavailable): {len(skipped)}" if skipped else ""))
    print("  op kinds: " + ", ".join(f"{k}={n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])))
    if patterns:
        print("  patterns: " + ", ".join(f"{k}={n}" for k, n in sorted(patterns.items(), key=lambda kv: -kv[1])))
    if kernels:
        print("  kernels: " + ", ".join(f"{k}={n}" for k, n in sorted(kernels.items(), key=lambda kv: -kv[1])))
    if cats:
        print("  outcomes: " + ", ".join(f"{k}={n}" for k, n in sorted(cats.items())))
    uniq = [r for r in findings if r.get("duplicate_of") is None]
    if findings:
        print(f"  distinct findings: {len(uniq)} (others repeat an earlier one's error message)")
    for r in uniq:
        dups = [d["seed"] for d in findings if d.get("duplicate_of") == r["seed"]]
        more = f" (+{len(dups)} more like it: seeds {', '.join(map(str, dups[:8]))}{'...' if len(dups) > 8 else ''})" if dups else ""
        print(f"  finding: seed {r['seed']} {r['category']}: {os.path.join(args.work, 'findings', 'case-%d.txt' % r['seed'])}{more}")
    if args.json:
        summary = {
            "cases": len(results), "ops": nops, "findings": len(findings), "invalid": len(invalid),
            "seconds": elapsed, "cases_per_second": len(results) / max(elapsed, 1e-9),
            "seed": args.seed, "rtol": args.rtol, "atol": args.atol,
            "op_kinds": dict(kinds), "patterns": dict(patterns), "kernels": dict(kernels),
            "distinct_findings": len(uniq),
            "finding_list": [{k: r[k] for k in ("seed", "category", "detail", "cpu", "threads", "disabled", "reduced",
                                                "signature", "duplicate_of")}
                             for r in findings],
            "invalid_seeds": [r["seed"] for r in invalid],
        }
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(summary, f, indent=2)
        os.replace(tmp, args.json)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
