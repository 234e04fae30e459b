#!/usr/bin/env python3
"""Export time and inference latency, side by side with PyTorch.

For resnet18 (traced+frozen and scripted) and mobilenet_v2, in one run:
- cuvil-export to x86_64 and aarch64: wall time and peak RSS (median of --runs);
- latency of the compiled x86_64 library (cuvil-run --benchmark, median and
  p90) at 1 and 2 threads, and of PyTorch on the same input in the same run:
  eager under inference_mode, and TorchScript frozen +
  torch.jit.optimize_for_inference; reported as ratios (PyTorch / Cuvil:
  above 1 means Cuvil is faster).

    /usr/bin/python3 bench/export_bench.py --bin build/bin [--runs 3] [--iters 30] [--json out.json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

MODELS = {
    "resnet18_traced_frozen": lambda: torchvision.models.resnet18(),
    "resnet18_scripted": lambda: torchvision.models.resnet18(),
    "mobilenet_v2_scripted": lambda: torchvision.models.mobilenet_v2(),
}
SHAPE = "0=1x3x224x224xf32"


def save_model(name, module, path, example):
    if name.endswith("traced_frozen"):
        torch.jit.freeze(torch.jit.trace(module, example)).save(path)
    else:
        torch.jit.script(module).save(path)


def measure(cmd):
    """Wall seconds and peak RSS (bytes) of one process (GNU time)."""
    proc = subprocess.run(["/usr/bin/time", "-f", "CUVIL-TIME %e %M"] + cmd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    line = [l for l in proc.stderr.splitlines() if l.startswith("CUVIL-TIME")][-1]
    _, wall, rss_kb = line.split()
    return float(wall), int(rss_kb) * 1024


def cuvil_latency(bin_dir, lib, x_path, iters, threads):
    out = subprocess.run([os.path.join(bin_dir, "cuvil-run"), lib, "--input", x_path,
                          "--output-dir", os.path.dirname(lib) + "/out", "--benchmark",
                          str(iters), "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    number = r"([\d.]+(?:e[-+]?\d+)?)"
    m = re.search(rf"min {number} ms, median {number} ms, p90 {number} ms", out)
    if not m:
        raise SystemExit(f"unexpected cuvil-run output:\n{out}")
    return {"min_ms": float(m.group(1)), "median_ms": float(m.group(2)),
            "p90_ms": float(m.group(3))}


def torch_latency(fn, x, iters, threads):
    torch.set_num_threads(threads)
    with torch.inference_mode():
        for _ in range(3):
            fn(x)
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return {"min_ms": times[0], "median_ms": statistics.median(times),
            "p90_ms": times[int(0.9 * (len(times) - 1))]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--runs", type=int, default=3, help="exports per target (median)")
    ap.add_argument("--iters", type=int, default=30, help="timed inferences per measurement")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--json", help="write every number here")
    args = ap.parse_args()
    export = os.path.join(args.bin, "cuvil-export")
    results = {"torch": torch.__version__, "blas": torch.__config__.show(), "models": {}}
    print(f"PyTorch {torch.__version__}; cuvil-export {export}")
    with tempfile.TemporaryDirectory() as work:
        for name in args.models.split(","):
            torch.manual_seed(0)
            module = MODELS[name]().eval()
            x = torch.randn(1, 3, 224, 224)
            path = os.path.join(work, name + ".pt")
            save_model(name, module, path, x)
            x_path = os.path.join(work, name + ".x.npy")
            np.save(x_path, x.numpy())
            entry = {"export": {}, "latency": {}}
            for target in ("x86_64", "aarch64"):
                lib = os.path.join(work, f"{name}.{target}.so")
                samples = [measure([export, "--model", path, "--input-shape", SHAPE,
                                    "--target", target, "-o", lib]) for _ in range(args.runs)]
                entry["export"][target] = {
                    "seconds": statistics.median(s[0] for s in samples),
                    "peak_rss_mib": statistics.median(s[1] for s in samples) / 2**20}
            lib = os.path.join(work, f"{name}.x86_64.so")
            frozen = torch.jit.optimize_for_inference(torch.jit.freeze(
                torch.jit.script(module)))
            for threads in (1, 2):
                entry["latency"][f"{threads}t"] = {
                    "cuvil": cuvil_latency(args.bin, lib, x_path, args.iters, threads),
                    "torch_eager": torch_latency(module, x, args.iters, threads),
                    "torch_frozen_optimized": torch_latency(frozen, x, args.iters, threads)}
            results["models"][name] = entry

    print("\nexport (median of %d)                x86_64 s  RSS MiB   aarch64 s  RSS MiB" % args.runs)
    for name, e in results["models"].items():
        x86, arm = e["export"]["x86_64"], e["export"]["aarch64"]
        print(f"  {name:32s} {x86['seconds']:8.2f} {x86['peak_rss_mib']:8.0f}"
              f"   {arm['seconds']:8.2f} {arm['peak_rss_mib']:8.0f}")
    print("\nlatency, batch 1, median ms (x86_64)   threads   cuvil  eager  frozen+opt"
          "   best-torch/cuvil")
    for name, e in results["models"].items():
        for t, l in e["latency"].items():
            c = l["cuvil"]["median_ms"]
            eager = l["torch_eager"]["median_ms"]
            opt = l["torch_frozen_optimized"]["median_ms"]
            print(f"  {name:36s} {t:>4s} {c:8.2f} {eager:6.1f} {opt:8.1f}"
                  f"   {min(eager, opt) / c:8.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
        print(f"\nall numbers: {args.json}")


if __name__ == "__main__":
    sys.exit(main())
