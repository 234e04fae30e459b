#!/usr/bin/env python3
"""Random PyTorch programs with data-dependent while loops, compiled by
cuvil-export (static and hybrid) and compared with PyTorch.

Each seed writes a small nn.Module: one or two tensors carried by a `while`
whose condition reads tensor data and a step count (`a and b`, so it always
ends), a body of 1-4 random ops (element-wise, a linear layer, softmax, an
input read inside the loop), sometimes a swap of the two carried tensors
and a data-dependent `if`; it returns a tensor and the step count. The
module is scripted, exported with static shapes and with a run-time batch,
run on random inputs and compared with PyTorch (rtol 1e-3, atol 1e-4; the
step count exactly). A failure prints the program.

  loop_programs.py --bin build/bin --work DIR [--seed S] [--cases N]

Exit 0: every case matched; 1: a mismatch or failure (named); 77: no PyTorch.
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
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

OPS = ["torch.tanh({v})", "torch.sin({v}) * 0.9", "{v} * 0.5 + 0.1", "torch.relu({v}) - 0.05",
       "self.lin({v})", "{v} + x * 0.01", "torch.sigmoid({v}) - 0.5", "torch.softmax({v}, -1)"]
CONDITIONS = ["bool(y0.abs().max() > 0.3) and n < {k}", "n < {k} and bool(y0.sum() > -100.0)",
              "bool((y0 * y0).sum() > 0.5) and n < {k}"]


def program(seed):
    """The source of module M for `seed`."""
    r = random.Random(seed)
    carried = r.choice([1, 2])
    head = ["y0 = x * 1.0"] + (["y1 = x * 0.5"] if carried == 2 else []) + ["n = 0"]
    body = []
    for _ in range(r.randint(1, 4)):
        target, source = r.randrange(carried), r.randrange(carried)
        body.append(f"y{target} = " + r.choice(OPS).format(v=f"y{source}"))
    if carried == 2 and r.random() < 0.5:
        body.append("y0, y1 = y1, y0")
    if r.random() < 0.4:
        body += ["if bool(y0.mean() > 0.0):", "    y0 = y0 * 0.8", "else:", "    y0 = y0 + 0.05"]
    body.append("n += 1")
    result = "y0 + y1 * 0.5, n" if carried == 2 else "y0, n"
    lines = ["import torch", "import torch.nn as nn", "", "", "class M(nn.Module):",
             "    def __init__(self):", "        super().__init__()", "        self.lin = nn.Linear(8, 8)", "",
             "    def forward(self, x):"]
    lines += ["        " + l for l in head]
    lines.append("        while " + r.choice(CONDITIONS).format(k=r.randint(1, 12)) + ":")
    lines += ["            " + l for l in body]
    lines.append("        return " + result)
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", type=int, default=30)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    for seed in range(args.seed, args.seed + args.cases):
        src = program(seed)
        d = os.path.join(args.work, f"case{seed}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.py"), "w") as f:
            f.write(src)
        spec = importlib.util.spec_from_file_location(f"loop_case{seed}", os.path.join(d, "model.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # TorchScript reads the class's source from the file
        torch.manual_seed(seed)
        module = torch.jit.script(mod.M().eval())
        pt = os.path.join(d, "model.pt")
        module.save(pt)
        for form, shape, strategy, rows in (("static", "0=4x8xf32", "graph_fusion", 4),
                                            ("hybrid", "0=rows:1..16x8xf32", "hybrid", 3)):
            lib = os.path.join(d, f"{form}.so")
            r = subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", pt, "--target", "x86_64",
                                "--strategy", strategy, "--input-shape", shape, "-o", lib],
                               capture_output=True, text=True)
            what = f"seed {seed} ({form})"
            if r.returncode != 0:
                print(f"FAIL {what}: cuvil-export: {r.stderr.strip()[-400:]}\n{src}")
                failures += 1
                continue
            x = (np.random.default_rng(seed).standard_normal((rows, 8)) * 2).astype(np.float32)
            np.save(os.path.join(d, "x.npy"), x)
            out = os.path.join(d, f"out-{form}")
            r = subprocess.run([os.path.join(args.bin, "cuvil-run"), lib, "--input", os.path.join(d, "x.npy"),
                                "--output-dir", out, "--quiet"], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {what}: cuvil-run: {r.stderr.strip()[-300:]}\n{src}")
                failures += 1
                continue
            with torch.no_grad():
                want, steps = module(torch.from_numpy(x))
            got = np.load(os.path.join(out, "output0.npy"))
            got_steps = int(np.load(os.path.join(out, "output1.npy")))
            if got_steps != steps or not np.allclose(got, want.numpy(), rtol=1e-3, atol=1e-4):
                err = float(np.abs(got - want.numpy()).max())
                print(f"FAIL {what}: {got_steps} steps (PyTorch {steps}), max |diff| {err:.2e}\n{src}")
                failures += 1
    print(f"{args.cases} programs x 2 forms: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
