#!/usr/bin/env python3
"""PyTorch's own operator database (OpInfo) as Cuvil's coverage measure.

For every OpInfo entry and dtype (float32; int64, int32, uint8 and bool where
the entry lists them; complex64 for the complex and Fourier entries), each sample input becomes a small TorchScript module
whose tensors are the model's inputs and whose other arguments are constants
in the source. The module is scripted (or, where TorchScript cannot script the
call, traced), saved, compiled by `cuvil-export` for the host, run by
`cuvil-run` and compared with PyTorch eager on the same inputs.

Each sample ends as one of
  pass         the library's outputs match PyTorch (float32 rtol 1e-3 atol 1e-4,
               float64 1e-7, integers and bools exactly, NaN where PyTorch's are,
               same shapes and dtypes)
  unsupported  cuvil-export refused it with a clear message and exit 1
  mismatch     a wrong answer: the library ran and its outputs differ      (bug)
  crash        a signal, an exit status other than 0-3, an "internal error",
               a hang, or a library that failed at run time              (bug)
  skipped      not testable here: eager PyTorch raised, nondeterministic
               output, unsupported input dtypes, not scriptable
               or traceable
An entry passes when every sample it tested passes.

    /usr/bin/python3 opinfo_coverage.py --bin build/bin [--ops add,mul] [--subset fast]
        [--table test/coverage/OPINFO.md] [--json FILE] [--jobs 2]

Exit status: 1 when any sample is a mismatch or a crash, or an entry named in
--expect-pass does not pass; else 0. 77 when PyTorch is not importable.
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "stubs"))  # expecttest stand-in

try:
    import numpy as np
    import torch
    # PyTorch's test utilities parse sys.argv when imported (and answer
    # --help with their own options): keep our arguments out of their sight.
    _argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    finally:
        sys.argv = _argv
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIPPED: PyTorch/NumPy not importable ({e}); run with /usr/bin/python3")
    sys.exit(77)

warnings.filterwarnings("ignore")

DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "i32": torch.int32,
          "ui8": torch.uint8, "i8": torch.int8, "i16": torch.int16, "bool": torch.bool,
          "c64": torch.complex64}
MLIR_NAMES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
              torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32", torch.int16: "i16",
              torch.int8: "i8", torch.uint8: "ui8", torch.bool: "i1",
              torch.complex64: "complex64", torch.complex128: "complex128"}
# complex64 samples are tested for the entries about complex numbers and
# Fourier transforms (for the others, complex support is not a goal yet).
COMPLEX_ENTRIES = {"view_as_real", "real", "imag", "conj", "conj_physical", "resolve_conj",
                   "resolve_neg", "abs", "angle", "sgn", "istft", "stft"}


def entry_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


class NotLiteral(Exception):
    pass


def literal(v):
    """Python source for a constant argument, or NotLiteral."""
    if v is None or isinstance(v, (bool, int, str)):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "float('-inf')"
        return repr(v)
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, (torch.memory_format, torch.layout)):
        return str(v)
    if isinstance(v, torch.device):
        return repr(str(v))
    if isinstance(v, (list, tuple, torch.Size)):
        items = [literal(x) for x in v]
        if isinstance(v, tuple) and not isinstance(v, torch.Size):
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "[" + ", ".join(items) + "]"
    raise NotLiteral(type(v).__name__)


class Inputs:
    """Collects the tensors of a call as numbered model inputs."""

    def __init__(self):
        self.tensors = []

    def source(self, v):
        """The argument's source text: tensors become inputs i0, i1, ..."""
        if isinstance(v, torch.Tensor):
            self.tensors.append(v)
            return f"i{len(self.tensors) - 1}"
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            return "[" + ", ".join(self.source(x) for x in v) + "]"
        return literal(v)

    def value(self, v, tensors):
        """The argument with tensors taken, in order, from `tensors`."""
        if isinstance(v, torch.Tensor):
            return tensors.pop(0)
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            return type(v)(self.value(x, tensors) for x in v) if isinstance(v, tuple) else \
                [self.value(x, tensors) for x in v]
        return v


def resolve_function(op):
    """`torch.<name>` (or torch.nn.functional..., torch.linalg...) when it is op.op."""
    obj = torch
    for part in op.name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return "torch." + op.name if obj is op.op else None


MODULE_TEMPLATE = '''import torch
from typing import List


class Case(torch.nn.Module):
    def forward(self{formals}):
        return {call}
'''


def make_module(op, sample, workdir, serial):
    """A saved TorchScript module computing the sample; returns (mode, inputs, module)."""
    inp = Inputs()
    pieces = [inp.source(sample.input)]
    pieces += [inp.source(a) for a in sample.args]
    kw = [f"{k}={inp.source(v)}" for k, v in sample.kwargs.items()]
    tensors = inp.tensors
    formals = "".join(f", i{i}" for i in range(len(tensors)))
    calls = []
    fn = resolve_function(op)
    if fn:
        calls.append(f"{fn}({', '.join(pieces + kw)})")
    if op.method_variant is not None and re.fullmatch(r"[a-z_][a-z_0-9]*", op.name):
        calls.append(f"{pieces[0]}.{op.name}({', '.join(pieces[1:] + kw)})")
    errors = []
    for call in calls:
        path = os.path.join(workdir, f"case_{serial}.py")
        with open(path, "w") as f:
            f.write(MODULE_TEMPLATE.format(formals=formals, call=call))
        spec = importlib.util.spec_from_file_location(f"cuvil_case_{serial}_{len(errors)}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
            return "script", tensors, torch.jit.script(mod.Case().eval())
        except Exception as e:  # TorchScript cannot script this call
            errors.append(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)

    # Traced: any Python callable, its non-tensor arguments fixed.
    class Traced(torch.nn.Module):
        def forward(self, *ts):
            ts = list(ts)
            first = inp.value(sample.input, ts)
            args = [inp.value(a, ts) for a in sample.args]
            kwargs = {k: inp.value(v, ts) for k, v in sample.kwargs.items()}
            return op.op(first, *args, **kwargs)

    with torch.no_grad():
        traced = torch.jit.trace(Traced().eval(), tuple(t.clone() for t in tensors), check_trace=False)
    return "trace", tensors, traced


def flatten_outputs(out):
    """Output tensors of a call in order, or None when an output is not a tensor."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            sub = flatten_outputs(o)
            if sub is None:
                return None
            res += sub
        return res
    return None


def same_outputs(a, b):
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if not torch.equal(x, y) and not (x.is_floating_point() and
                                          torch.allclose(x, y, equal_nan=True, rtol=0, atol=0)):
            return False
    return True


def to_numpy(t):
    t = t.detach().resolve_conj().resolve_neg().contiguous()
    return t.numpy()


class Case:
    def __init__(self, entry, dtype, index):
        self.entry, self.dtype, self.index = entry, dtype, index
        self.status, self.reason, self.mode, self.dir = None, "", "", None
        self.shapes, self.expected = [], []

    def key(self):
        return f"{self.entry}/{self.dtype}/{self.index}"


def prepare(op, dtype_name, index, sample, root, serial):
    """Builds the module, inputs and PyTorch's outputs of one sample (in this process)."""
    c = Case(entry_name(op), dtype_name, index)
    if (c.entry, dtype_name) in PLATFORM_DEPENDENT:
        c.status, c.reason = "skipped", PLATFORM_DEPENDENT[(c.entry, dtype_name)]
        return c
    c.dir = os.path.join(root, re.sub(r"[^A-Za-z0-9_.-]", "_", c.key()))
    shutil.rmtree(c.dir, ignore_errors=True)
    os.makedirs(c.dir)
    try:
        c.mode, tensors, module = make_module(op, sample, c.dir, serial)
    except Exception as e:
        c.status, c.reason = "skipped", "not scriptable or traceable: " + (str(e).strip().splitlines() or [""])[0][:160]
        return c
    for t in tensors:
        if t.dtype not in MLIR_NAMES or t.dtype in (torch.float16, torch.bfloat16):
            c.status, c.reason = "skipped", f"input dtype {t.dtype}"
            return c
    try:
        with torch.no_grad():
            out1 = module(*[t.clone() for t in tensors])
            out2 = module(*[t.clone() for t in tensors])
    except Exception as e:
        c.status, c.reason = "skipped", "PyTorch raised: " + (str(e).strip().splitlines() or [""])[0][:160]
        return c
    outs, outs2 = flatten_outputs(out1), flatten_outputs(out2)
    if outs is None:
        c.status, c.reason = "unsupported", f"output is not a tensor ({type(out1).__name__})"
        return c
    if not same_outputs(outs, outs2):
        c.status, c.reason = "skipped", "nondeterministic output"
        return c
    if any(o.dtype not in MLIR_NAMES or o.dtype in (torch.float16, torch.bfloat16) for o in outs):
        c.status, c.reason = "skipped", "unsupported output dtype"
        return c
    module.save(os.path.join(c.dir, "model.pt"))
    for i, t in enumerate(tensors):
        np.save(os.path.join(c.dir, f"input{i}.npy"), to_numpy(t))
        dims = "x".join(str(d) for d in t.shape)
        c.shapes.append(f"{i}={dims + 'x' if dims else ''}{MLIR_NAMES[t.dtype]}")
    for i, o in enumerate(outs):
        np.save(os.path.join(c.dir, f"expected{i}.npy"), to_numpy(o))
    c.expected = len(outs)
    return c


def first_error_line(text):
    """The gist of a tool's error output: the first error, without the file
    and source position, and with the first unsupported construct named."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for i, l in enumerate(lines):
        if "error" in l.lower():
            msg = re.sub(r"^.*?error: ", "", l)
            msg = re.sub(r"^.*?(CUVIL-E-[A-Z-]+: )", r"\1", msg)
            if "unsupported operator(s)" in msg and i + 1 < len(lines):
                msg = "unsupported: " + lines[i + 1]
            return msg[:200]
    return (lines[0] if lines else "")[:200]


def compare(c, out_dir):
    for i in range(c.expected):
        want = np.load(os.path.join(c.dir, f"expected{i}.npy"))
        path = os.path.join(out_dir, f"output{i}.npy")
        if not os.path.exists(path):
            return f"output {i} missing"
        got = np.load(path)
        if got.shape != want.shape:
            return f"output {i}: shape {got.shape}, PyTorch {want.shape}"
        if got.dtype != want.dtype:
            return f"output {i}: dtype {got.dtype}, PyTorch {want.dtype}"
        if c.entry.split(".")[0] in UNINITIALISED:
            continue
        if want.dtype.kind in "fc":  # complex: |got - want| against |want|
            rtol, atol = (1e-3, 1e-4) if want.dtype in (np.float32, np.complex64) else (1e-7, 1e-9)
            poles = pole_mask(c, want)
            if poles is not None:
                got, want = np.where(poles, 0, got), np.where(poles, 0, want)
            if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
                axis = SIGN_FREE.get(c.entry, {}).get(i)
                if axis is not None and same_up_to_sign(got, want, axis, rtol, atol):
                    continue
                bad = ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
                idx = np.argwhere(bad)[0] if want.ndim else ()
                return (f"output {i}: {int(bad.sum())} of {want.size} elements differ, e.g. at "
                        f"{tuple(int(x) for x in idx)}: {got[tuple(idx)]!r} vs {want[tuple(idx)]!r}")
        elif not np.array_equal(got, want):
            if (c.entry in TIE_ORDER and want.dtype == np.int64 and
                    same_elements_at(np.load(os.path.join(c.dir, "input0.npy")), got, want,
                                     c.entry in PERMUTATIONS)):
                continue
            bad = got != want
            idx = np.argwhere(bad)[0] if want.ndim else ()
            return (f"output {i}: {int(np.sum(bad))} of {want.size} elements differ, e.g. at "
                    f"{tuple(int(x) for x in idx)}: {got[tuple(idx)]!r} vs {want[tuple(idx)]!r}")
    produced = len([f for f in os.listdir(out_dir) if f.startswith("output")])
    if produced != c.expected:
        return f"{produced} outputs, PyTorch has {c.expected}"
    return None


def run_case(c, args):
    """Export, run and compare (in a worker thread: only subprocesses and numpy)."""
    try:
        return run_case_unguarded(c, args)
    except Exception as e:  # the harness's own failure, not Cuvil's
        c.status, c.reason = "skipped", "harness: " + repr(e)[:160]
        return c


def run_case_unguarded(c, args):
    lib = os.path.join(c.dir, "libinference.so")
    cmd = [os.path.join(args.bin, "cuvil-export"), "--model", os.path.join(c.dir, "model.pt"),
           "--target", "x86_64", "-o", lib] + [f"--input-shape={s}" for s in c.shapes]
    try:
        exp = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        c.status, c.reason = "crash", f"cuvil-export ran past {args.timeout} s"
        return c
    with open(os.path.join(c.dir, "export.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + exp.stderr)
    if exp.returncode != 0:
        internal = re.search(r"internal error|LLVM ERROR|Assertion|PLEASE submit|Stack dump", exp.stderr)
        if exp.returncode < 0 or exp.returncode > 3 or internal:
            c.status = "crash"
            c.reason = (f"cuvil-export died of signal {-exp.returncode}" if exp.returncode < 0
                        else f"cuvil-export exit {exp.returncode}") + ": " + first_error_line(exp.stderr)
        else:
            c.status, c.reason = "unsupported", first_error_line(exp.stderr)
        return c
    if os.path.exists(os.path.join(c.dir, "out")):
        shutil.rmtree(os.path.join(c.dir, "out"))
    out_dir = os.path.join(c.dir, "out")
    cmd = [os.path.join(args.bin, "cuvil-run"), lib, "--quiet", "--output-dir", out_dir]
    for i in range(len(c.shapes)):
        cmd += ["--input", os.path.join(c.dir, f"input{i}.npy")]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        c.status, c.reason = "crash", f"the library ran past {args.timeout} s"
        return c
    if run.returncode != 0:
        c.status = "crash"
        c.reason = (f"cuvil-run exit {run.returncode}: " + first_error_line(run.stderr))
        return c
    diff = compare(c, out_dir)
    c.status, c.reason = ("mismatch", diff) if diff else ("pass", "")
    if c.status == "pass" and not args.keep:
        shutil.rmtree(c.dir, ignore_errors=True)
    return c


def supported_dtypes(op, wanted):
    try:
        listed = op.supported_dtypes("cpu")
    except Exception:
        listed = op.dtypes
    complex_ok = entry_name(op) in COMPLEX_ENTRIES or entry_name(op).startswith("fft.")
    return [n for n in wanted if DTYPES[n] in listed and (n != "c64" or complex_ok)]


def samples_of(op, dtype, limit):
    try:
        it = op.sample_inputs("cpu", dtype, requires_grad=False)
        out = []
        for s in it:
            out.append(s)
            if len(out) >= limit:
                break
        return out, None
    except Exception as e:
        return [], "sample_inputs raised: " + (str(e).strip().splitlines() or [""])[0][:160]


def entry_verdict(cases):
    statuses = collections.Counter(c.status for c in cases)
    tested = [c for c in cases if c.status != "skipped"]
    if statuses["crash"]:
        return "crash"
    if statuses["mismatch"]:
        return "mismatch"
    if not tested:
        return "skipped"
    if statuses["pass"] == len(tested):
        return "pass"
    if statuses["pass"]:
        return "partial"
    return "unsupported"


def scriptable(cases):
    """The entry has samples TorchScript scripts with static shapes."""
    return any(c.mode == "script" and c.status != "skipped" for c in cases)


def write_table(path, entries, args, seconds):
    verdicts = {name: entry_verdict(cs) for name, cs in entries.items()}
    count = collections.Counter(verdicts.values())
    scripted = [n for n, cs in entries.items() if scriptable(cs)]
    scripted_pass = [n for n in scripted if verdicts[n] == "pass"]
    tested = [n for n in entries if verdicts[n] != "skipped"]
    samples = collections.Counter(c.status for cs in entries.values() for c in cs)
    lines = [
        "# OpInfo coverage",
        "",
        "Generated by `test/coverage/opinfo_coverage.py` (do not edit by hand): every entry of",
        f"PyTorch {torch.__version__}'s OpInfo database, dtypes {args.dtypes}, up to {args.max_samples}",
        "samples per dtype, each a TorchScript module exported by `cuvil-export --target x86_64`, run by",
        "`cuvil-run` and compared with PyTorch eager. An entry passes when every sample it tested passes.",
        "",
        f"- entries: {len(entries)}; tested (at least one sample not skipped): {len(tested)}",
        f"- entries TorchScript scripts with static shapes: {len(scripted)}; of them pass: "
        f"{len(scripted_pass)} ({100.0 * len(scripted_pass) / max(1, len(scripted)):.1f}%)",
        f"- entries: " + ", ".join(f"{k} {count[k]}" for k in
                                    ["pass", "partial", "unsupported", "mismatch", "crash", "skipped"]),
        f"- samples: " + ", ".join(f"{k} {samples[k]}" for k in
                                    ["pass", "unsupported", "mismatch", "crash", "skipped"]),
        f"- run time: {seconds / 60:.1f} min",
        "",
        "| entry | mode | samples | pass | unsupported | mismatch | crash | skipped | verdict | first reason |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = {"crash": 0, "mismatch": 1, "partial": 2, "unsupported": 3, "pass": 4, "skipped": 5}
    for name in sorted(entries, key=lambda n: (order[verdicts[n]], n)):
        cs = entries[name]
        st = collections.Counter(c.status for c in cs)
        modes = "/".join(sorted({c.mode for c in cs if c.mode})) or "-"
        reason = next((c.reason for c in cs if c.status in ("crash", "mismatch")), None) or \
            next((c.reason for c in cs if c.status == "unsupported"), None) or \
            next((c.reason for c in cs if c.status == "skipped"), "")
        reason = reason.replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| `{name}` | {modes} | {len(cs)} | {st['pass']} | {st['unsupported']} | "
                     f"{st['mismatch']} | {st['crash']} | {st['skipped']} | {verdicts[name]} | {reason} |")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


FAST_SUBSET = os.path.join(HERE, "fast_subset.txt")

# Entries whose outputs are uninitialised memory in PyTorch: only their
# shapes and dtypes are compared.
UNINITIALISED = {"empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided"}

# Entries whose index outputs PyTorch leaves unspecified among equal
# elements (its sort is not stable; median, kthvalue, topk and mode pick
# any of the ties): an index output that differs from PyTorch's passes when,
# along some dimension of the first input, it points at elements equal to
# the ones PyTorch's indices point at (and, for the permutations, never
# twice at the same one).
TIE_ORDER = {"sort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode", "masked.median"}
PERMUTATIONS = {"sort", "argsort", "topk"}


# Eigen- and singular vectors are unique only up to sign (PyTorch's docs):
# entry -> {output: the axis along which one vector lies}; such an output
# passes when each vector matches PyTorch's or its negation.
SIGN_FREE = {"linalg.eigh": {1: -2}, "symeig": {1: -2}, "linalg.svd": {0: -2, 2: -1},
             "svd": {0: -2, 2: -2}}


# Functions with poles at the non-positive integers, where PyTorch's float32
# result is rounding noise of a huge number (polygamma(1, -9) is 1.9e15 in
# float32 and 8.1e30 in float64: neither is the true +inf): elements whose
# argument (input 0) is at a pole are not compared.
POLES = ("polygamma.", "special.polygamma.")


def pole_mask(c, want):
    if not c.entry.startswith(POLES):
        return None
    x = np.load(os.path.join(c.dir, "input0.npy"))
    if x.shape != want.shape:
        return None
    return (x <= 0) & (np.floor(x) == x)


def same_up_to_sign(got, want, axis, rtol, atol):
    if got.ndim < 2 or got.size == 0:
        return False
    signs = np.where(np.sum(got * want, axis=axis, keepdims=True) < 0, -1.0, 1.0).astype(got.dtype)
    return np.allclose(got * signs, want, rtol=rtol, atol=atol)


def same_elements_at(x, got, want, distinct):
    """Whether indices `got` and `want` pick equal elements of x along one dim."""
    for d in range(max(1, x.ndim)):
        xd = x.reshape(1) if x.ndim == 0 else x
        g, w = got.reshape(1) if got.ndim == 0 else got, want.reshape(1) if want.ndim == 0 else want
        if g.ndim == xd.ndim - 1:  # keepdim=False
            g, w = np.expand_dims(g, d), np.expand_dims(w, d)
        if g.ndim != xd.ndim or any(g.shape[k] != xd.shape[k] for k in range(xd.ndim) if k != d):
            continue
        if g.min(initial=0) < 0 or g.max(initial=0) >= xd.shape[d]:
            continue
        a, b = np.take_along_axis(xd, g, d), np.take_along_axis(xd, w, d)
        if not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            continue
        if distinct and g.shape[d] > 1 and (np.diff(np.sort(g, axis=d), axis=d) == 0).any():
            continue
        return True
    return False

# (entry, dtype) whose PyTorch result depends on how PyTorch was built, not
# on the operator's definition: skipped, with the reason in the table.
PLATFORM_DEPENDENT = {
    ("linspace", "i64"): "PyTorch's integer linspace truncates per SIMD block (its CPU path)",
    ("linspace", "i32"): "PyTorch's integer linspace truncates per SIMD block (its CPU path)",
    ("logspace", "i64"): "PyTorch's integer logspace truncates per SIMD block (its CPU path)",
    ("logspace", "i32"): "PyTorch's integer logspace truncates per SIMD block (its CPU path)",
}


def read_list(path):
    with open(path) as f:
        return [l.split("#")[0].strip() for l in f if l.split("#")[0].strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the folder with cuvil-export and cuvil-run")
    ap.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--ops", default="", help="comma-separated entries (name or name.variant)")
    ap.add_argument("--subset", choices=["all", "fast"], default="all",
                    help="fast: the entries in fast_subset.txt, each of which must pass")
    ap.add_argument("--dtypes", default="f32,i64,i32,ui8,bool,c64")
    ap.add_argument("--max-samples", type=int, default=6, help="per entry and dtype")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=120, help="seconds per export or run")
    ap.add_argument("--table", default=None, help="write the Markdown coverage table here")
    ap.add_argument("--json", default=None, help="write every sample's result here")
    ap.add_argument("--keep", action="store_true", help="keep passing cases' files")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for d in args.dtypes.split(","):
        if d not in DTYPES:
            ap.error(f"--dtypes: unknown dtype '{d}' (known: {', '.join(DTYPES)})")
    for tool in ("cuvil-export", "cuvil-run"):
        if not os.path.exists(os.path.join(args.bin, tool)):
            ap.error(f"--bin: {os.path.join(args.bin, tool)} does not exist (build first)")

    expect_pass = set()
    selected = set(x for x in args.ops.split(",") if x)
    if args.subset == "fast":
        expect_pass = set(read_list(FAST_SUBSET))
        selected |= expect_pass
    ops = [op for op in op_db if not selected or entry_name(op) in selected or op.name in selected]
    unknown = selected - {entry_name(op) for op in op_db} - {op.name for op in op_db}
    if unknown:
        ap.error("unknown OpInfo entries: " + ", ".join(sorted(unknown)))
    # A name in the subset is that entry; one that names no entry but an
    # operator stands for all its variants ("meshgrid" ->
    # "meshgrid.variadic_tensors", "meshgrid.list_of_tensors").
    entry_names = {entry_name(op) for op in op_db}
    expect_pass = {entry_name(op) for op in ops
                   if entry_name(op) in expect_pass or
                   (op.name in expect_pass and op.name not in entry_names)}

    root = args.work or tempfile.mkdtemp(prefix="cuvil-opinfo-")
    os.makedirs(root, exist_ok=True)
    wanted = args.dtypes.split(",")
    entries = collections.OrderedDict()
    start = time.time()
    torch.manual_seed(0)
    serial = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = []
        for n, op in enumerate(ops):
            name = entry_name(op)
            cases = entries.setdefault(name, [])
            dts = supported_dtypes(op, wanted)
            if not dts:
                c = Case(name, "-", 0)
                c.status, c.reason = "skipped", "no dtype of " + args.dtypes
                cases.append(c)
            for dt in dts:
                samples, err = samples_of(op, DTYPES[dt], args.max_samples)
                if err:
                    c = Case(name, dt, 0)
                    c.status, c.reason = "skipped", err
                    cases.append(c)
                for i, s in enumerate(samples):
                    serial += 1
                    try:
                        c = prepare(op, dt, i, s, root, serial)
                    except Exception as e:
                        c = Case(name, dt, i)
                        c.status, c.reason = "skipped", "harness: " + repr(e)[:160]
                    cases.append(c)
                    if c.status is None:
                        futures.append(pool.submit(run_case, c, args))
            if args.verbose or sys.stderr.isatty():
                print(f"[{n + 1}/{len(ops)}] {name}: {len(cases)} samples queued", file=sys.stderr)
        for f in futures:
            c = f.result()
            if args.verbose or c.status in ("mismatch", "crash"):
                print(f"{c.status.upper():11} {c.key()} ({c.mode}): {c.reason}", flush=True)
    seconds = time.time() - start

    bad = [c for cs in entries.values() for c in cs if c.status in ("mismatch", "crash")]
    verdicts = {name: entry_verdict(cs) for name, cs in entries.items()}
    failed_expect = sorted(n for n in expect_pass if verdicts.get(n) != "pass")
    count = collections.Counter(verdicts.values())
    scripted = [n for n, cs in entries.items() if scriptable(cs)]
    scripted_pass = [n for n in scripted if verdicts[n] == "pass"]
    print(f"entries: {len(entries)}; " + ", ".join(f"{k} {v}" for k, v in sorted(count.items())))
    print(f"scriptable with static shapes: {len(scripted)}, pass {len(scripted_pass)} "
          f"({100.0 * len(scripted_pass) / max(1, len(scripted)):.1f}%); {seconds:.0f} s")
    for n in failed_expect:
        cs = entries[n]
        why = next((c.reason for c in cs if c.status not in ("pass", "skipped")), verdicts[n])
        print(f"EXPECTED TO PASS: {n}: {verdicts[n]}: {why}")
    if args.table:
        write_table(args.table, entries, args, seconds)
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump([{"entry": c.entry, "dtype": c.dtype, "sample": c.index, "mode": c.mode,
                        "status": c.status, "reason": c.reason, "dir": c.dir}
                       for cs in entries.values() for c in cs], f, indent=1)
        os.replace(args.json + ".tmp", args.json)
    if not args.work and not bad and not failed_expect:
        shutil.rmtree(root, ignore_errors=True)
    elif bad or failed_expect:
        print(f"failing cases kept in {root}")
    return 1 if bad or failed_expect else 0


if __name__ == "__main__":
    sys.exit(main())
