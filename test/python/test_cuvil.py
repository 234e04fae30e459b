#!/usr/bin/env python3
"""`import cuvil` from the build tree, against PyTorch: compile() on a
ScriptModule, an nn.Module and a .pt path, calls with torch tensors and
NumPy arrays, load() of an exported library (and a --symbol-prefix one),
disable_optimization as an option and a context manager, quantize() with a
calibration loader, and the errors (wrong shape, wrong dtype, no tool,
autotune not yet available).

    PYTHONPATH=build/python /usr/bin/python3 test/python/test_cuvil.py --bin build/bin --work-dir /tmp/py
"""
import argparse
import os
import subprocess
import sys

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    try:
        import torch
    except ImportError:
        print("SKIP: PyTorch is not importable")
        return 77
    import numpy as np
    import cuvil

    torch.manual_seed(0)
    example = os.path.join(args.src, "examples", "mlp", "model.pt")
    scripted = torch.jit.load(example)
    x = torch.randn(2, 8)

    # The one-liner.
    m = cuvil.compile(torch.jit.load(example), example_inputs=[torch.randn(2, 8)])
    y = m(x)
    with torch.no_grad():
        want = scripted(x)
    check(isinstance(y, torch.Tensor) and y.shape == want.shape and torch.allclose(y, want, atol=1e-5),
          f"compile(ScriptModule) runs like PyTorch (max |diff| {float((y - want).abs().max()):.2e})")
    check(repr(m).startswith("<cuvil.CompiledModel") and m.inputs[0][2] == (2, 8), f"repr and signature: {m!r}")
    yn = m(x.numpy())
    check(isinstance(yn, np.ndarray) and np.allclose(yn, want.numpy(), atol=1e-5), "NumPy in, NumPy out")

    # An nn.Module (scripted by compile), two inputs and two outputs.
    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l = torch.nn.Linear(4, 3)

        def forward(self, a, b):
            h = torch.relu(self.l(a))
            return h * b, h.sum(1)

    two = Two().eval()
    a, b = torch.randn(5, 4), torch.randn(5, 3)
    m2 = cuvil.compile(two, example_inputs=[a, b])
    got = m2(a, b)
    with torch.no_grad():
        ref = two(a, b)
    check(isinstance(got, tuple) and len(got) == 2 and all(torch.allclose(g, r, atol=1e-5) for g, r in zip(got, ref)),
          "compile(nn.Module): two inputs, two outputs, like PyTorch")

    # Errors: shapes, dtypes, counts are checked before the library runs.
    for label, call, needle in [
            ("wrong shape", lambda: m(torch.randn(3, 8)), "shape (3, 8), the model takes (2, 8)"),
            ("wrong dtype", lambda: m(torch.randn(2, 8, dtype=torch.float64)), "dtype float64"),
            ("wrong count", lambda: m(x, x), "takes 1 input(s), got 2"),
            ("not a model", lambda: cuvil.compile(42), "cannot compile a int"),
            ("autotune", lambda: cuvil.autotune(scripted, device="aarch64-v8.2"), "cuvil-autotune"),
            ("missing library", lambda: cuvil.load(os.path.join(args.work_dir, "none.so")), "cannot open")]:
        try:
            call()
            check(False, f"{label}: an error")
        except cuvil.CuvilError as e:
            check(needle in str(e), f"{label}: CuvilError ({e})")

    # load(): a library exported by the tool, and one with --symbol-prefix.
    lib = os.path.join(args.work_dir, "libmlp.so")
    subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", example, "--input-shape", "0=2x8xf32",
                    "--target", "x86_64", "-o", lib, "--symbol-prefix", "mlp"], check=True)
    lm = cuvil.load(lib, symbol_prefix="mlp")
    check(torch.allclose(lm(x), want, atol=1e-5), "load() of a --symbol-prefix library")
    try:
        cuvil.load(lib)
        check(False, "load() without the prefix: an error")
    except cuvil.CuvilError as e:
        check("cuvil_* C API" in str(e), f"load() without the prefix: CuvilError ({e})")

    # disable_optimization: an option, a context manager, and compile(disable=).
    with cuvil.disable_optimization("dead_code_elimination"):
        inside = cuvil.compile(example, example_inputs=[x])
    check("dead-code-elimination" in inside.command and not cuvil.disabled_optimizations(),
          "disable_optimization as a context manager: in the compile, gone after")
    check(torch.allclose(inside(x), want, atol=1e-5), "...and the model still computes the same")
    cuvil.disable_optimization("fusion")
    outside = cuvil.compile(example, example_inputs=[x], disable=["dead-code-elimination"])
    cuvil.enable_optimization("fusion")
    check("fusion" in outside.command and "dead-code-elimination" in outside.command,
          "disable_optimization(name) and compile(disable=[...]) together")

    # plugins=: a pass plugin's pass in the compile (the example plugin
    # turns the division by a constant into a product).
    plugin = os.path.join(args.bin, "..", "lib", "test-plugins", "libCuvilExamplePlugin.so")
    if os.path.exists(plugin):
        class Halve(torch.nn.Module):
            def forward(self, x):
                return torch.relu(x) / 2.0
        ph = cuvil.compile(Halve(), example_inputs=[x], plugins=[plugin])
        check("--load-pass-plugin" in ph.command and torch.allclose(ph(x), torch.relu(x) / 2.0),
              "compile(plugins=[...]): the plugin loaded, the model computes the same")
        try:
            cuvil.compile(Halve(), example_inputs=[x], plugins=[os.path.join(args.work_dir, "none.so")])
            check(False, "a missing plugin: an error")
        except cuvil.CuvilError as e:
            check("none.so" in str(e), f"a missing plugin: CuvilError naming it")
    else:
        print(f"SKIP plugins: {plugin} not built")

    # quantize(): calibration samples from a loader, the gate, a compiled int8 model.
    class CNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8, 4)

        def forward(self, x):
            h = torch.relu(self.c1(x))
            h = torch.relu(self.c2(h) + h)
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(h, 1), 1))

    cnn = CNN().eval()
    loader = [torch.randn(1, 3, 12, 12) for _ in range(6)]
    q = cuvil.quantize(cnn, loader, backend="qnnpack")
    xv = torch.randn(1, 3, 12, 12)
    with torch.no_grad():
        ref = cnn(xv)
    err = float((q(xv) - ref).norm() / ref.norm())
    check(q.report["gate"]["passed"] and q.report["backend"] == "qnnpack" and err < 0.05,
          f"quantize(): gate met, compiled int8 model vs PyTorch relative L2 {err:.4f}")
    check(any(l["precision"] == "int8" for l in q.report["layers"]), "quantize(): layers in int8")

    # No tools: a clear error.
    saved = os.environ.get("CUVIL_BIN_DIR")
    os.environ["CUVIL_BIN_DIR"] = os.path.join(args.work_dir, "no-such-dir")
    try:
        cuvil.compile(example, example_inputs=[x])
        check(False, "no tools: an error")
    except cuvil.CuvilError as e:
        check("CUVIL_BIN_DIR" in str(e), f"no tools: CuvilError ({e})")
    finally:
        if saved is None:
            del os.environ["CUVIL_BIN_DIR"]
        else:
            os.environ["CUVIL_BIN_DIR"] = saved

    print("all passed" if not FAILURES else f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
