#!/usr/bin/env python3
"""Imports a test model with cuvil-import, runs the IR on the reference
evaluator with cuvil-run, and compares with PyTorch's eager outputs
(allclose rtol 1e-4, atol 1e-5).

    /usr/bin/python3 check_import.py --bin BUILD/bin --work DIR --model NAME
"""
import argparse
import os
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--python", default="/usr/bin/python3")
    args = ap.parse_args()
    d = os.path.join(args.work, args.model)
    try:
        subprocess.run([args.python, os.path.join(HERE, "models.py"), "--out", args.work,
                        "--model", args.model], check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"SKIPPED: cannot build the model with PyTorch ({e})")
        return 77
    shapes = open(os.path.join(d, "shapes.txt")).read().split()
    mlir = os.path.join(d, "model.mlirbc")
    t0 = time.time()
    imp = subprocess.run([os.path.join(args.bin, "cuvil-import"), os.path.join(d, "model.pt"),
                          "-o", mlir] + shapes, capture_output=True, text=True)
    t1 = time.time()
    if imp.returncode != 0:
        print(imp.stderr)
        print(f"FAIL: cuvil-import exited {imp.returncode}")
        return 1
    inputs = [f"input{i}.npy" for i in range(len(shapes))]
    shutil.rmtree(os.path.join(d, "out"), ignore_errors=True)
    cmd = [os.path.join(args.bin, "cuvil-run"), mlir, "--quiet", "--output-dir",
           os.path.join(d, "out")]
    for f in inputs:
        cmd += ["--input", os.path.join(d, f)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    t2 = time.time()
    if run.returncode != 0:
        print(run.stderr)
        print(f"FAIL: cuvil-run exited {run.returncode}")
        return 1
    count = len([f for f in os.listdir(d) if f.startswith("expected")])
    expected = [f"expected{i}.npy" for i in range(count)]
    produced = [f for f in os.listdir(os.path.join(d, "out")) if f.startswith("output")]
    if len(produced) != count:
        print(f"FAIL: the model has {len(produced)} outputs, PyTorch's has {count}")
        return 1
    ok = True
    for i, f in enumerate(expected):
        want = np.load(os.path.join(d, f))
        got_path = os.path.join(d, "out", f"output{i}.npy")
        if not os.path.exists(got_path):
            print(f"FAIL: output {i} missing")
            return 1
        got = np.load(got_path)
        if got.shape != want.shape or got.dtype != want.dtype:
            print(f"FAIL: output {i}: {got.shape} {got.dtype} != expected {want.shape} {want.dtype}")
            ok = False
            continue
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        close = np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print(f"output {i}: {want.shape} {want.dtype} max abs error {err.max() if err.size else 0:.3g}"
              f" -> {'ok' if close else 'MISMATCH'}")
        ok &= close
    print(f"import {t1 - t0:.2f} s, reference run {t2 - t1:.2f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
