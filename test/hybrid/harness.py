"""What the hybrid tests share: named checks, cuvil-export / cuvil-run calls
and the comparison of a library's outputs with PyTorch's (rtol 1e-3,
atol 1e-4 as for static libraries; integer outputs, such as a loop's step
count, exactly). Imported by hybrid_models.py and control_flow.py, which
check that PyTorch is present first."""
import os
import subprocess

import numpy as np
import torch

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def export(bin_dir, model_path, shapes, out, strategy="hybrid", target="x86_64", extra=()):
    cmd = [os.path.join(bin_dir, "cuvil-export"), "--model", model_path, "--target", target,
           "--strategy", strategy, "-o", out, *extra]
    for s in shapes:
        cmd += ["--input-shape", s]
    return run(cmd)


def run_library(bin_dir, lib, arrays, work, runner=None):
    """Runs `lib` on `arrays` (cuvil-run, or `runner`'s command before the
    library: the aarch64 one under qemu); (the result, its output dir)."""
    paths = []
    for i, a in enumerate(arrays):
        p = os.path.join(work, f"in{i}.npy")
        np.save(p, a)
        paths += ["--input", p]
    out = os.path.join(work, "out")
    r = run((runner or [os.path.join(bin_dir, "cuvil-run")]) + [lib, *paths, "--output-dir", out, "--quiet"])
    return r, out


def compare(bin_dir, lib, model, arrays, work, what, runner=None):
    r, out = run_library(bin_dir, lib, arrays, work, runner)
    if r.returncode != 0:
        check(False, f"{what}: cuvil-run failed: {r.stderr.strip()}")
        return
    with torch.no_grad():
        want = model(*[torch.from_numpy(a) for a in arrays])
    want = want if isinstance(want, tuple) else (want,)
    for k, w in enumerate(want):
        got = np.load(os.path.join(out, f"output{k}.npy"))
        w = np.asarray(w.numpy() if isinstance(w, torch.Tensor) else w)
        if w.dtype.kind in "iu":
            same = got.shape == w.shape and np.array_equal(got, w)
            check(same, f"{what}: output{k} = {got.tolist()} (PyTorch {w.tolist()})")
            continue
        same = got.shape == w.shape and np.allclose(got, w, rtol=1e-3, atol=1e-4)
        err = float(np.abs(got - w).max()) if got.shape == w.shape else float("nan")
        check(same, f"{what}: output{k} {got.shape} vs PyTorch {w.shape} (max |diff| {err:.2e})")


def expect_error(r, needles, what):
    text = r.stderr + r.stdout
    ok = r.returncode != 0 and all(n in text for n in needles) and "Assertion" not in text
    check(ok, f"{what}: exit {r.returncode}, message names {needles}" + ("" if ok else f": {text.strip()}"))
