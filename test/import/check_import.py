#!/usr/bin/env python3
"""Imports a test model with cuvil-import, runs the IR on the reference
evaluator with cuvil-run, and compares with PyTorch's eager outputs
(allclose rtol 1e-4, atol 1e-5 of the output's scale max(1, max|y|)). Then runs the graph pipeline
(cuvil-opt --cuvil-graph-optimize) on the imported IR and checks that the
optimised model still gives PyTorch's outputs, and prints its op counts.

    /usr/bin/python3 check_import.py --bin BUILD/bin --work DIR --model NAME
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

try:
    import numpy as np
except ImportError:
    print("SKIPPED: numpy not importable")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))


def run_model(args, d, mlir, inputs, out_dir):
    """Runs `mlir` on the inputs (reference evaluator); returns None or a failure message."""
    return run_library(args, d, mlir, inputs, out_dir, [])


def run_library(args, d, lib, inputs, out_dir, flags):
    """Runs a compiled library (or a .mlir model) with cuvil-run; returns None or a failure message."""
    shutil.rmtree(out_dir, ignore_errors=True)
    cmd = [os.path.join(args.bin, "cuvil-run"), lib, "--quiet", "--output-dir", out_dir] + flags
    for f in inputs:
        cmd += ["--input", os.path.join(d, f)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        return f"{run.stderr}\nFAIL: cuvil-run {os.path.basename(lib)} exited {run.returncode}"
    return None


def compare(d, out_dir, what, rtol=1e-4, atol=1e-5):
    """Compares out_dir/output*.npy with PyTorch's; True when all match."""
    count = len([f for f in os.listdir(d) if f.startswith("expected")])
    produced = [f for f in os.listdir(out_dir) if f.startswith("output")]
    if len(produced) != count:
        print(f"FAIL ({what}): the model has {len(produced)} outputs, PyTorch's has {count}")
        return False
    ok = True
    for i in range(count):
        want = np.load(os.path.join(d, f"expected{i}.npy"))
        got = np.load(os.path.join(out_dir, f"output{i}.npy"))
        if got.shape != want.shape or got.dtype != want.dtype:
            print(f"FAIL ({what}): output {i}: {got.shape} {got.dtype} != expected "
                  f"{want.shape} {want.dtype}")
            ok = False
            continue
        wide = np.complex128 if want.dtype.kind == "c" else np.float64
        err = np.abs(got.astype(wide) - want.astype(wide))
        # atol is relative to the output's scale (deep networks with outputs
        # in the tens differ from PyTorch's float32 by more than 1e-5 in
        # absolute terms near zero).
        scale = max(1.0, float(np.abs(want).max())) if want.size and want.dtype.kind in "fc" else 1.0
        close = np.allclose(got, want, rtol=rtol, atol=atol * scale)
        print(f"{what}: output {i}: {want.shape} {want.dtype} max abs error "
              f"{err.max() if err.size else 0:.3g} -> {'ok' if close else 'MISMATCH'}")
        ok &= close
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--export", default="", help="targets to compile for and run, e.g. x86_64,aarch64")
    ap.add_argument("--qemu", default="qemu-aarch64")
    args = ap.parse_args()

    d = os.path.join(args.work, args.model)
    try:
        subprocess.run([args.python, os.path.join(HERE, "models.py"), "--out", args.work,
                        "--model", args.model], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"SKIPPED: cannot build the model with PyTorch ({e})")
        return 77
    shapes = open(os.path.join(d, "shapes.txt")).read().split()
    inputs = [f"input{i}.npy" for i in range(len(shapes))]

    # Import, run, compare.
    mlir = os.path.join(d, "model.mlirbc")
    t0 = time.time()
    imp = subprocess.run([os.path.join(args.bin, "cuvil-import"), os.path.join(d, "model.pt"),
                          "-o", mlir] + shapes, capture_output=True, text=True)
    t1 = time.time()
    if imp.returncode != 0:
        print(imp.stderr)
        print(f"FAIL: cuvil-import exited {imp.returncode}")
        return 1
    failure = run_model(args, d, mlir, inputs, os.path.join(d, "out"))
    t2 = time.time()
    if failure:
        print(failure)
        return 1
    ok = compare(d, os.path.join(d, "out"), "imported")
    print(f"import {t1 - t0:.2f} s, reference run {t2 - t1:.2f} s")

    # The graph pipeline must not change what the model computes.
    optimized = os.path.join(d, "model.opt.mlirbc")
    opt = subprocess.run([os.path.join(args.bin, "cuvil-opt"), mlir,
                          "--cuvil-graph-optimize=graph-stats=1 memory-report=1", "-o", optimized],
                         capture_output=True, text=True)
    print(opt.stderr.rstrip())
    if opt.returncode != 0:
        print(f"FAIL: cuvil-opt --cuvil-graph-optimize exited {opt.returncode}")
        return 1
    # What the pipeline must achieve on the reference models (op counts
    # from the graph-stats table: "after" column, and fused patterns).
    expectations = {
        "resnet18": {"cuvil.norm.batch_norm": 0, "cuvil.act.relu": 0, "cuvil.math.add": 0,
                     "conv2d+relu": 9, "conv2d+add+relu": 8},
        "mobilenet_v2": {"cuvil.norm.batch_norm": 0, "cuvil.act.hardtanh": 0,
                         "conv2d+hardtanh": 35},
        "transformer_encoder": {"cuvil.act.relu": 0, "linear+relu": 4},
    }
    for prefix, wanted in expectations.items():
        if not args.model.startswith(prefix):
            continue
        for name, count in wanted.items():
            m = re.search(r"^\s+" + re.escape(name) + r"\s+(?:\d+\s+)?(\d+)\s*$", opt.stderr, re.M)
            got = int(m.group(1)) if m else 0
            if got != count:
                print(f"FAIL: after the pipeline, {name}: {got}, expected {count}")
                return 1
    # resnet18's planned activation memory must be within 1.1x of the
    # liveness lower bound (the graph optimisation issue's bar).
    if args.model.startswith("resnet18"):
        m = re.search(r"arena/bound ([0-9.]+)x", opt.stderr)
        if not m or float(m.group(1)) > 1.1:
            print(f"FAIL: memory plan arena/bound {m.group(1) if m else 'missing'} > 1.1")
            return 1
    failure = run_model(args, d, optimized, inputs, os.path.join(d, "out-opt"))
    if failure:
        print(failure)
        return 1
    ok &= compare(d, os.path.join(d, "out-opt"), "optimized")

    # Compiled: cuvil-export to a library per target, run through the C API
    # (aarch64 under qemu), compared with PyTorch (rtol 1e-3, atol 1e-4).
    for target in [t for t in args.export.split(",") if t]:
        lib = os.path.join(d, f"lib{target}.so")
        t0 = time.time()
        flags = ["--target", target]
        if target == "cuda" and not (os.path.isdir(os.path.join(os.environ.get("CUDA_PATH", "/usr/local/cuda"), "nvvm"))
                                     or os.path.isdir("/usr/local/cuda/nvvm")):
            print("SKIPPED cuda: no CUDA toolkit (its libdevice) on this machine")
            continue
        if target == "cuda":
            # One library with the CUDA kernels (checked and assembled by
            # ptxas for sm_80 and sm_90) and the CPU code.
            flags = ["--target", "x86_64,cuda", "--cuda-arch", "sm_80,sm_90"]
        exp = subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model",
                              os.path.join(d, "model.pt"), "-o", lib] + flags + shapes,
                             capture_output=True, text=True)
        if exp.returncode != 0:
            print(exp.stderr)
            print(f"FAIL: cuvil-export --target {target} exited {exp.returncode}")
            return 1
        export_s = time.time() - t0
        if target == "cuda":
            # No GPU here: the library's CPU code must give the x86_64
            # library's outputs bit for bit (the GPU's own are compared with
            # PyTorch by scripts/gpu-check.sh where there is one).
            ptxas = shutil.which("ptxas") or (os.path.exists("/usr/local/cuda/bin/ptxas") and "/usr/local/cuda/bin/ptxas")
            print(f"cuda: export {export_s:.2f} s, kernels " +
                  ("checked and assembled by ptxas for sm_80, sm_90" if ptxas else
                   "as PTX only (SKIPPED the ptxas check: no CUDA toolkit)"))
            out_dir = os.path.join(d, "out-cuda-cpu")
            failure = run_library(args, d, lib, inputs, out_dir, ["--device", "cpu"])
            if failure:
                print(failure + " (the x86_64,cuda library on the CPU)")
                return 1
            # The CUDA lowering itself, numerically: the same library with
            # its launches run as loops on the CPU (--target-option
            # emulate=1), against PyTorch.
            emulated = os.path.join(d, "libcuda-emulated.so")
            exp = subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", os.path.join(d, "model.pt"),
                                  "-o", emulated, "--target", "cuda", "--target-option", "emulate=1"] + shapes,
                                 capture_output=True, text=True)
            if exp.returncode != 0:
                print(exp.stderr)
                print(f"FAIL: cuvil-export --target cuda --target-option emulate=1 exited {exp.returncode}")
                return 1
            emu_dir = os.path.join(d, "out-cuda-emulated")
            failure = run_library(args, d, emulated, inputs, emu_dir, [])
            if failure:
                print(failure + " (the emulated CUDA library)")
                return 1
            ok &= compare(d, emu_dir, "CUDA lowering, emulated on the CPU", rtol=1e-3, atol=1e-4)
            cpu_dir = os.path.join(d, "out-x86_64")
            for f in sorted(os.listdir(cpu_dir)):
                if f.startswith("output") and f.endswith(".npy"):
                    got, want = np.load(os.path.join(out_dir, f)), np.load(os.path.join(cpu_dir, f))
                    if got.shape != want.shape or not np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"):
                        print(f"FAIL (x86_64,cuda on the CPU): {f} differs from the x86_64 library's")
                        ok = False
            continue
        if target == "x86_64":
            # The deployment check: cuvil-verify against PyTorch's outputs
            # (stored with the sample) and the manifest against the model.
            sample = os.path.join(d, "verify", "s0")
            shutil.rmtree(os.path.dirname(sample), ignore_errors=True)
            os.makedirs(sample)
            for f in inputs:
                shutil.copy(os.path.join(d, f), os.path.join(sample, f))
            for f in os.listdir(d):
                if f.startswith("expected") and f.endswith(".npy"):
                    shutil.copy(os.path.join(d, f), os.path.join(sample, "output" + f[8:]))
            ver = subprocess.run([os.path.join(args.bin, "cuvil-verify"), lib, "--manifest",
                                  "--reference", os.path.join(d, "model.pt"),
                                  "--data", os.path.dirname(sample),
                                  "--json", os.path.join(d, "verify.json")],
                                 capture_output=True, text=True)
            print(ver.stdout.rstrip().splitlines()[-1] if ver.stdout.strip() else "")
            if ver.returncode != 0:
                print(ver.stdout + ver.stderr)
                print(f"FAIL: cuvil-verify exited {ver.returncode}")
                return 1
        runner = [os.path.join(args.bin, "cuvil-run")]
        if target == "aarch64":
            runner = [args.qemu, "-L", "/usr/aarch64-linux-gnu",
                      os.path.join(args.bin, "aarch64", "cuvil-run")]
            if not shutil.which(args.qemu) or not os.path.exists(runner[-1]):
                print(f"SKIPPED aarch64: {args.qemu} or the aarch64 cuvil-run is missing")
                continue
        # On all cores, then on one thread and on three: the kernels split
        # their work by the thread count (blocks sized per count), and a
        # split that only some counts take must be right too.
        for threads in ([None, 1, 3] if target == "x86_64" else [None, 1]):
            suffix = "" if threads is None else f"-t{threads}"
            out_dir = os.path.join(d, f"out-{target}{suffix}")
            shutil.rmtree(out_dir, ignore_errors=True)
            cmd = runner + [lib, "--quiet", "--output-dir", out_dir]
            if threads is not None:
                cmd += ["--threads", str(threads)]
            for f in inputs:
                cmd += ["--input", os.path.join(d, f)]
            t1 = time.time()
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                print(run.stderr)
                print(f"FAIL: running the {target} library{suffix} exited {run.returncode}")
                return 1
            print(f"{target}{suffix}: export {export_s:.2f} s, run {time.time() - t1:.2f} s")
            ok &= compare(d, out_dir, f"compiled {target}{suffix}", rtol=1e-3, atol=1e-4)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
