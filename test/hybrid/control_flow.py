#!/usr/bin/env python3
"""Data-dependent `while` loops kept as loops in the library, against PyTorch.

The models (scripted by PyTorch at test time) loop on tensor values: an
iterative refinement that stops when its output is small (and after at most
100 steps, an `a and b` condition; it returns its step count, a Python int),
Newton's square root until converged, a two-term recurrence that swaps its
variables (`a, b = b, f(a, b)`), an accumulation by an in-place op on a
tensor the loop does not rebind, a loop whose condition is a Python bool the
first time and tensor data from then on, a loop with a data-dependent `if`
inside, a counted `for` loop left by a `break` on tensor data, and `for`
loops over `range()` of a count computed from tensor data, and an
embedding lookup inside a loop and an if (its run-time index check reaches
the library's status: an id out of range stops the loop and fails the run),
and a loop over a run-time sequence length stepping LSTM, GRU and RNN cells
through x[:, t] and a window x[:, t:t + 2]. Each is exported twice: with static shapes (graph_fusion) and
with a run-time batch (hybrid), and run on inputs for which the loops run
zero, a few and many times (two of them for aarch64 too, under qemu);
outputs are compared with PyTorch's (rtol 1e-3,
atol 1e-4; step counts exactly).

Then what is refused, with a clear message and no library: a loop that
changes a tensor's shape, one that grows a list or replaces its items, and (hybrid) a loop that changes a run-time size.

Exit 0: every case passed; 1: a failure (named); 77: PyTorch is missing.
"""
import argparse
import os
import shutil
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

from harness import check, compare, export, failures, run  # noqa: E402


class Refine(nn.Module):
    """Shrinks its state until it is small; returns it and the step count."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 16)
        self.b = nn.Linear(16, 16)

    def forward(self, x):
        y = self.a(x)
        steps = 0
        while bool(y.abs().max() > 0.05) and steps < 100:
            y = 0.5 * torch.tanh(self.b(y))
            steps += 1
        return y, steps


class Newton(nn.Module):
    """Square roots by Newton's iteration, to a tolerance."""

    def forward(self, a):
        x = a * 0.5 + 0.5
        err = (x * x - a).abs().max()
        it = 0
        while bool(err > 1e-5) and it < 50:
            x = 0.5 * (x + a / x)
            err = (x * x - a).abs().max()
            it += 1
        return x


class Recurrence(nn.Module):
    """a, b = b, f(a, b): the loop swaps what it carries."""

    def forward(self, x):
        a = x
        b = x * 0.5
        n = 0
        while bool((b.abs() > 1e-3).any()) and n < 60:
            a, b = b, 0.5 * a - 0.25 * b
            n += 1
        return a, b


class Accumulate(nn.Module):
    """An in-place op on a tensor the loop does not rebind."""

    def forward(self, x):
        acc = x * 0.0
        y = x
        while bool(y.abs().sum() > 1.0):
            acc.add_(y)
            y = y * 0.5
        return acc


class LateCondition(nn.Module):
    """The first test is a Python bool (run at import time), later ones tensor data."""

    def forward(self, x):
        go = True
        k = 0
        while go:
            x = torch.sin(x) * 0.9
            k += 1
            go = bool(x.abs().max() > 0.2)
        return x * float(k)


class BranchInLoop(nn.Module):
    """A data-dependent if inside a data-dependent loop."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y = x
        n = 0
        while bool(y.norm() > 0.5) and n < 30:
            if bool(y.sum() > 0):
                y = torch.relu(self.lin(y)) * 0.5
            else:
                y = y * 0.75
            n += 1
        return y


class Breaks(nn.Module):
    """A `break` on tensor data in a counted loop (TorchScript makes the
    break a loop-carried condition)."""

    def forward(self, x):
        n = 0
        for _ in range(20):
            x = torch.cos(x) * 1.5
            if bool(x.sum() < 0.0):
                break
            n += 1
        return x, n


class Repeat(nn.Module):
    """Counted loops whose counts are tensor data: range(k) and
    range(k, 0, -2) with k = int(n.sum())."""

    def forward(self, x, n):
        k = int(n.sum())
        for i in range(k):
            x = torch.sin(x) + float(i) * 0.1
        for j in range(k, 0, -2):
            x = x * 0.9 + float(j) * 0.01
        return x


class LookupInLoop(nn.Module):
    """An embedding lookup (a run-time index check) inside a loop and inside
    a data-dependent if: out-of-range ids are a run-time error, as in
    PyTorch, and the loop stops at the first one."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)

    def forward(self, x, ids):
        n = 0
        while bool(x.abs().sum() > 1.0) and n < 20:
            x = x * 0.5 + self.emb(ids).sum(0) * 0.01
            n += 1
        if bool(x.sum() > 0.0):
            x = x + self.emb(ids[:1]).sum(0)
        return x


def expect_refused(bin_dir, work, name, module, shapes, strategy, needles, what):
    path = os.path.join(work, f"{name}.pt")
    module.save(path)
    lib = os.path.join(work, f"{name}.so")
    r = export(bin_dir, path, shapes, lib, strategy)
    text = r.stderr + r.stdout
    ok = r.returncode == 1 and all(n in text for n in needles) and "internal" not in text.lower()
    check(ok and not os.path.exists(lib),
          f"{what}: exit {r.returncode}, message names {needles}" + ("" if ok else f": {text.strip()}"))


class SequenceCells(nn.Module):
    """A loop over a run-time sequence length, step by step: x[:, t] with a
    run-time t into an LSTM cell, a GRU cell and a bias-free ReLU RNN cell
    whose states start as torch.zeros(x.size(0), 16), and a window
    x[:, t:t + 2] accumulated."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTMCell(8, 16)
        self.gru = nn.GRUCell(8, 16)
        self.rnn = nn.RNNCell(8, 16, nonlinearity="relu", bias=False)

    def forward(self, x):
        h = torch.zeros(x.size(0), 16)
        c = torch.zeros(x.size(0), 16)
        g = torch.zeros(x.size(0), 16)
        window = torch.zeros(x.size(0), 2, x.size(2))
        for t in range(x.size(1)):
            h, c = self.lstm(x[:, t], (h, c))
            g = self.gru(x[:, t], g) + self.rnn(x[:, t], h)
        for t in range(x.size(1) - 1):
            window = window + x[:, t:t + 2] * 0.5
        return h, c, g, window


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    work = args.work or tempfile.mkdtemp(prefix="cuvil-loops-")
    os.makedirs(work, exist_ok=True)

    def normal(shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def positive(shape):
        return (rng.random(shape) * 20 + 0.01).astype(np.float32)

    # The aarch64 libraries run under qemu where it is installed.
    qemu = shutil.which("qemu-aarch64")
    run_aarch64 = os.path.join(args.bin, "aarch64", "cuvil-run")
    aarch64 = [qemu, "-L", "/usr/aarch64-linux-gnu", run_aarch64] if qemu and os.path.exists(run_aarch64) else None

    # (name, module, features, inputs(rows) -> list of input lists)
    cases = [
        ("refine", Refine(), [16], lambda n: [[normal((n, 16), 3.0)], [normal((n, 16), 1e-4)]]),
        ("newton", Newton(), [16], lambda n: [[positive((n, 16))], [np.ones((n, 16), np.float32)]]),
        ("recurrence", Recurrence(), [8], lambda n: [[normal((n, 8))], [np.zeros((n, 8), np.float32)]]),
        ("accumulate", Accumulate(), [8], lambda n: [[normal((n, 8), 2.0)], [normal((n, 8), 1e-3)]]),
        ("late_condition", LateCondition(), [8], lambda n: [[normal((n, 8), 2.0)], [normal((n, 8), 0.01)]]),
        ("branch_in_loop", BranchInLoop(), [8], lambda n: [[normal((n, 8), 2.0)], [-np.abs(normal((n, 8)))]]),
        ("breaks", Breaks(), [8], lambda n: [[normal((n, 8))], [np.full((n, 8), 3.0, np.float32)]]),
    ]
    for name, module, features, inputs in cases:
        scripted = torch.jit.script(module.eval())
        path = os.path.join(work, f"{name}.pt")
        scripted.save(path)
        dims = "x".join(str(f) for f in features)
        variants = [("static", "graph_fusion", [f"0=4x{dims}xf32"], [4], "x86_64"),
                    ("hybrid", "hybrid", [f"0=rows:1..64x{dims}xf32"], [1, 5, 64], "x86_64")]
        if name in ("refine", "recurrence"):
            if aarch64:
                variants.append(("hybrid aarch64", "hybrid", [f"0=rows:1..64x{dims}xf32"], [5], "aarch64"))
            else:
                print(f"skip {name} (hybrid aarch64): qemu-aarch64 or the aarch64 cuvil-run is missing")
        for form, strategy, shapes, rows, target in variants:
            lib = os.path.join(work, f"{name}_{form.replace(' ', '_')}.so")
            r = export(args.bin, path, shapes, lib, strategy, target)
            check(r.returncode == 0, f"{name} ({form}): exported" + ("" if r.returncode == 0 else ": " + r.stderr))
            if r.returncode != 0:
                continue
            for n in rows:
                for k, arrays in enumerate(inputs(n)):
                    compare(args.bin, lib, scripted, arrays, work, f"{name} ({form}) rows={n} input {k}",
                            aarch64 if target == "aarch64" else None)

    # Counted loops over a run-time count.
    repeat = torch.jit.script(Repeat())
    path = os.path.join(work, "repeat.pt")
    repeat.save(path)
    for form, strategy, x_shape, rows in (("static", "graph_fusion", "0=4x8xf32", [4]),
                                          ("hybrid", "hybrid", "0=rows:1..64x8xf32", [1, 5, 64])):
        lib = os.path.join(work, f"repeat_{form}.so")
        r = export(args.bin, path, [x_shape, "1=2xi64"], lib, strategy)
        check(r.returncode == 0, f"repeat ({form}): exported" + ("" if r.returncode == 0 else ": " + r.stderr))
        if r.returncode != 0:
            continue
        for n in rows:
            for counts in ([0, 0], [2, 3], [10, 15]):
                compare(args.bin, lib, repeat, [normal((n, 8)), np.array(counts, np.int64)], work,
                        f"repeat ({form}) rows={n} counts={counts}")

    # Loops over a run-time sequence length (hybrid: the loop bound and the
    # step's index x[:, t] are run-time values; static: unrolled at import;
    # hybrid specialised for seq=7: the copy for 7 has the loops unrolled by
    # cuvil-unroll-loops, other lengths run the loops).
    cells = torch.jit.script(SequenceCells().eval())
    path = os.path.join(work, "cells.pt")
    cells.save(path)
    for form, strategy, x_shape, sizes, extra in (
            ("static", "graph_fusion", "0=3x6x8xf32", [(3, 6)], ()),
            ("hybrid", "hybrid", "0=b:1..4xseq:2..64x8xf32", [(1, 2), (3, 7), (4, 64)], ()),
            ("hybrid specialised", "hybrid", "0=b:1..4xseq:2..64x8xf32", [(1, 7), (3, 7), (2, 5)],
             ("--specialize", "seq=7"))):
        lib = os.path.join(work, f"cells_{form.replace(' ', '_')}.so")
        r = export(args.bin, path, [x_shape], lib, strategy, extra=extra)
        check(r.returncode == 0, f"sequence cells ({form}): exported" + ("" if r.returncode == 0 else ": " + r.stderr))
        if r.returncode != 0:
            continue
        for b, n in sizes:
            compare(args.bin, lib, cells, [normal((b, n, 8))], work, f"sequence cells ({form}) batch={b} seq={n}")

    # Run-time checks inside the loop and the if.
    lookup = torch.jit.script(LookupInLoop().eval())
    path = os.path.join(work, "lookup.pt")
    lookup.save(path)
    for form, strategy, x_shape, rows in (("static", "graph_fusion", "0=4x8xf32", [4]),
                                          ("hybrid", "hybrid", "0=rows:1..64x8xf32", [1, 64])):
        lib = os.path.join(work, f"lookup_{form}.so")
        r = export(args.bin, path, [x_shape, "1=3xi64"], lib, strategy)
        check(r.returncode == 0, f"lookup ({form}): exported" + ("" if r.returncode == 0 else ": " + r.stderr))
        if r.returncode != 0:
            continue
        for n in rows:
            for scale in (3.0, 1e-3):
                compare(args.bin, lib, lookup, [normal((n, 8), scale), np.array([1, 9, 4], np.int64)], work,
                        f"lookup ({form}) rows={n} scale={scale}")
            np.save(os.path.join(work, "bad0.npy"), normal((n, 8), 3.0))
            np.save(os.path.join(work, "bad1.npy"), np.array([1, 12, 4], np.int64))
            r = run([os.path.join(args.bin, "cuvil-run"), lib, "--input", os.path.join(work, "bad0.npy"),
                     "--input", os.path.join(work, "bad1.npy"), "--output-dir", os.path.join(work, "bad"),
                     "--quiet"])
            text = r.stderr + r.stdout
            ok = r.returncode != 0 and "index out of range" in text and "embedding" in text
            check(ok, f"lookup ({form}) rows={n}: an id out of range inside the loop is a run-time error "
                      f"naming the check (exit {r.returncode})" + ("" if ok else f": {text.strip()}"))

    # What is refused.
    class Grows(nn.Module):
        def forward(self, x):
            while bool(x.sum() < 100.0):
                x = torch.cat([x, x], 0)
            return x

    class Collects(nn.Module):
        def forward(self, x):
            outs = [x]
            while bool(x.sum() > 1.0):
                x = x * 0.5
                outs.append(x)
            return torch.stack(outs).sum(0)

    class Replaces(nn.Module):
        def forward(self, x):
            outs = [x, x]
            while bool(x.sum() > 1.0):
                x = x * 0.5
                outs[1] = x
            return outs[0] + outs[1]

    class Shrinks(nn.Module):
        def forward(self, x):
            while bool(x.sum() > 1.0):
                x = x[1:] * 0.5
            return x

    expect_refused(args.bin, work, "grows", torch.jit.script(Grows()), ["0=4x8xf32"], "graph_fusion",
                   ["changes its type inside a loop that depends on tensor data", "tensor<4x8xf32> before",
                    "tensor<8x8xf32> after"],
                   "a loop that changes a tensor's shape")
    expect_refused(args.bin, work, "collects", torch.jit.script(Collects()), ["0=4x8xf32"], "graph_fusion",
                   ["a list that grows or shrinks inside a loop that depends on tensor data"],
                   "a loop that grows a list")
    expect_refused(args.bin, work, "replaces", torch.jit.script(Replaces()), ["0=4x8xf32"], "graph_fusion",
                   ["a list whose items are replaced inside a loop that depends on tensor data"],
                   "a loop that replaces a list item")
    expect_refused(args.bin, work, "shrinks", torch.jit.script(Shrinks()), ["0=rows:1..64x8xf32"], "hybrid",
                   ["data-dependent loop", "run-time size 0 may change between iterations",
                    "'rows'"],
                   "a loop that changes a run-time size")

    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
