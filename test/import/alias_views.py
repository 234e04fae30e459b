#!/usr/bin/python3
"""In-place writes through views, against PyTorch (RELIABILITY.md D6).

PyTorch's aliasing decides what an in-place write changes: a view (view,
transpose, permute, slicing, select, unsqueeze, squeeze, expand, and
reshape, flatten or contiguous where the strides allow one) shares its
base's memory, a copy (reshape, flatten or contiguous of a transposed or
strided view, clone) does not. A compiler that gets one of these wrong
silently computes a different answer.

Each case is a random program: y = x.clone(); a random chain of view and
copy ops on y; an in-place op (add_, mul_, fill_, copy_, zero_, clamp_)
on the chain's end; outputs y, the view and one value computed from the
chain's middle. The program is written as a module file, scripted, saved,
compiled by cuvil-export and run by cuvil-run; its outputs must equal
PyTorch's eager ones exactly (the arithmetic is exact in float32). Programs
PyTorch itself rejects (view of incompatible strides, in-place on an
expanded view) are expected to be refused by Cuvil too (exit 1, never a
wrong answer).

    /usr/bin/python3 test/import/alias_views.py --bin build/bin --work /tmp/a [--cases 40] [--seed 0]

Exit status: 0 pass, 1 a mismatch or a crash (each named, with its program),
77 PyTorch is not importable.
"""
import argparse
import importlib.util
import os
import random
import subprocess
import sys

try:
    import numpy as np
    import torch
except Exception:
    print("SKIPPED: PyTorch is not importable")
    sys.exit(77)

SHAPE = (2, 3, 4)


def view_step(rng, rank, shape):
    """One op of the chain, as source text, and the shape after it."""
    kinds = ["transpose", "permute", "slice", "select", "unsqueeze", "squeeze", "view", "reshape",
             "flatten", "contiguous", "t"]
    for _ in range(20):
        k = rng.choice(kinds)
        if k == "transpose" and rank >= 2:
            a, b = rng.sample(range(rank), 2)
            s = list(shape)
            s[a], s[b] = s[b], s[a]
            return "v = v.transpose(%d, %d)" % (a, b), s
        if k == "t" and rank == 2:
            return "v = v.t()", [shape[1], shape[0]]
        if k == "permute" and rank >= 2:
            p = list(range(rank))
            rng.shuffle(p)
            return "v = v.permute(%s)" % ", ".join(map(str, p)), [shape[i] for i in p]
        if k == "slice" and rank >= 1:
            d = rng.randrange(rank)
            if shape[d] < 2:
                continue
            step = rng.choice([1, 2])
            start = rng.randrange(shape[d] - 1)
            end = rng.randrange(start + 1, shape[d] + 1)
            n = len(range(start, end, step))
            s = list(shape)
            s[d] = n
            idx = ", ".join([":"] * d + ["%d:%d:%d" % (start, end, step)])
            return "v = v[%s]" % idx, s
        if k == "select" and rank >= 2:
            d = rng.randrange(rank)
            i = rng.randrange(shape[d])
            s = list(shape)
            del s[d]
            return "v = v.select(%d, %d)" % (d, i), s
        if k == "unsqueeze" and rank < 4:
            d = rng.randrange(rank + 1)
            s = list(shape)
            s.insert(d, 1)
            return "v = v.unsqueeze(%d)" % d, s
        if k == "squeeze" and 1 in shape and rank >= 2:
            d = shape.index(1)
            s = list(shape)
            del s[d]
            return "v = v.squeeze(%d)" % d, s
        if k in ("view", "reshape") and rank >= 1:
            n = int(np.prod(shape))
            divisors = [d for d in range(1, n + 1) if n % d == 0]
            a = rng.choice(divisors)
            s = [a, n // a] if rng.random() < 0.7 else [n]
            return "v = v.%s(%s)" % (k, ", ".join(map(str, s))), s
        if k == "flatten" and rank >= 2:
            return "v = v.flatten()", [int(np.prod(shape))]
        if k == "contiguous":
            return "v = v.contiguous()", list(shape)
    return "v = v.contiguous()", list(shape)


INPLACE = ["v.add_(%s)", "v.mul_(%s)", "v.fill_(%s)", "v.zero_()", "v.clamp_(min=%s)", "v.copy_(v * 0 + %s)",
           "v.sub_(%s)"]


def program(rng):
    lines = ["y = x.clone()", "v = y"]
    rank, shape = len(SHAPE), list(SHAPE)
    mid = None
    steps = rng.randint(1, 4)
    for i in range(steps):
        text, shape = view_step(rng, rank, shape)
        rank = len(shape)
        lines.append(text)
        if i == steps // 2 and mid is None:
            lines.append("m = v * 1.0")
            mid = True
    k = rng.choice(INPLACE)
    value = rng.choice(["2.0", "-3.0", "0.5", "7.0"])
    lines.append(k % value if "%s" in k else k)
    outputs = "y, v, m" if mid else "y, v"
    return lines, outputs


def write_module(path, lines, outputs):
    body = "\n".join("        " + l for l in lines)
    with open(path, "w") as f:
        f.write("import torch\n\n\nclass M(torch.nn.Module):\n"
                "    def forward(self, x):\n%s\n        return %s\n" % (body, outputs))


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.M().eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    export = os.path.join(args.bin, "cuvil-export")
    run = os.path.join(args.bin, "cuvil-run")
    x = torch.arange(float(np.prod(SHAPE))).reshape(SHAPE) - 7.0
    xpath = os.path.join(args.work, "x.npy")
    np.save(xpath, x.numpy())
    failures, refused, checked = [], 0, 0
    for case in range(args.seed, args.seed + args.cases):
        rng = random.Random(case)
        lines, outputs = program(rng)
        src = os.path.join(args.work, "case%d.py" % case)
        write_module(src, lines, outputs)
        text = "; ".join(lines)
        try:
            m = load_module(src, "case%d" % case)
            want = m(x.clone())
            torch_ok = True
        except RuntimeError:
            torch_ok = False
        scripted = torch.jit.script(load_module(src, "case%d_s" % case))
        pt = os.path.join(args.work, "case%d.pt" % case)
        scripted.save(pt)
        lib = os.path.join(args.work, "case%d.so" % case)
        r = subprocess.run([export, "--model", pt, "--input-shape", "0=%sxf32" % "x".join(map(str, SHAPE)),
                            "--target", "x86_64", "-o", lib], capture_output=True, text=True)
        if r.returncode < 0 or r.returncode > 3 or "internal error" in r.stderr:
            failures.append("case %d (%s): cuvil-export crashed: %s" % (case, text, r.stderr[-300:]))
            continue
        if not torch_ok:
            if r.returncode == 0:
                # PyTorch raises: the compiled model must raise too (or refuse).
                rr = subprocess.run([run, lib, "--input", xpath, "-o", os.path.join(args.work, "out")],
                                    capture_output=True, text=True)
                if rr.returncode == 0:
                    failures.append("case %d (%s): PyTorch raises, Cuvil computes" % (case, text))
                    continue
            refused += 1
            continue
        if r.returncode != 0:
            if "CUVIL-E-IMPORT-UNSUPPORTED" in r.stderr or "unsupported" in r.stderr or "not supported" in r.stderr:
                refused += 1 # refused by name: not a wrong answer
                continue
            failures.append("case %d (%s): cuvil-export failed: %s" % (case, text, r.stderr[-300:]))
            continue
        outs = want if isinstance(want, tuple) else (want,)
        expected = []
        for i, o in enumerate(outs):
            p = os.path.join(args.work, "case%d_want%d.npy" % (case, i))
            np.save(p, o.detach().contiguous().numpy())
            expected.append(p)
        rr = subprocess.run([run, lib, "--input", xpath, "-o", os.path.join(args.work, "out"),
                             "--expected-output"] + expected + ["--atol", "0", "--rtol", "0"],
                            capture_output=True, text=True)
        if rr.returncode != 0:
            failures.append("case %d (%s): %s" % (case, text, (rr.stderr or rr.stdout)[-400:]))
            continue
        checked += 1
    print("alias_views: %d programs, %d equal to PyTorch, %d refused as PyTorch refuses or by name, %d failures"
          % (args.cases, checked, refused, len(failures)))
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
