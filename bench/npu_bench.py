#!/usr/bin/env python3
"""The virtual NPU's design space: one model on every configuration.

Quantizes a torchvision model with PyTorch (eager post-training
quantization, as test/import/quantized_models.py does), compiles it with
`cuvil-export --target npu --cpu CONFIG` for each configuration (and once
without double buffering), runs each library through the simulator with
`cuvil-run --npu-trace` and tabulates what the simulator reports: cycles
and time at the configuration's clock, MAC utilization over the whole run
and over the convolution layers, DMA bytes, the share of DMA time compute
hid, bank-conflict cycles, the ratio to the layers' summed roofline bounds,
and the host's wall time to simulate. Every library's output is compared
with the x86_64 int8 library's (they must be equal bit for bit).

    /usr/bin/python3 bench/npu_bench.py --bin build/bin --work /tmp/npu-bench \\
        [--model resnet18|mobilenet_v2] [--engine qnnpack|onednn] [--size 224] [--json FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "import"))
import quantized_models  # noqa: E402

CONFIGS = ["npu-32x32", "npu-16x16", "npu-64x64", "npu-32x32-small-sram", "npu-32x32-slow-dram"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr.strip()[-2000:]}")
    return p


def figures(trace):
    report = json.load(open(trace))["cuvil"]
    seg = report["segments"]
    cfg = seg[0]["config"]
    slots = cfg["array_k"] * cfg["array_n"]
    layers = [l for s in seg for l in s["layers"]]
    conv = [l for l in layers if l["kind"].startswith("conv2d")]
    cycles = sum(s["cycles"] for s in seg)
    return {
        "cycles": cycles,
        "time_us": cycles / cfg["clock_mhz"],
        "mac_utilization": sum(s["macs"] for s in seg) / (slots * cycles),
        "conv_mac_utilization": sum(l["macs"] for l in conv) / (slots * max(1, sum(l["cycles"] for l in conv))),
        "dma_bytes": sum(s["load_bytes"] + s["store_bytes"] for s in seg),
        "dma_hidden": 1 - sum(s["dma_exposed"] for s in seg) / max(1, sum(s["dma_busy"] for s in seg)),
        "conv_dma_hidden": 1 - sum(l["dma_exposed"] for l in conv) / max(1, sum(l["dma_cycles"] for l in conv)),
        "conflict_cycles": sum(s["conflict_cycles"] for s in seg),
        "roofline_ratio": cycles / max(1, sum(l["roofline_cycles"] for l in layers)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--engine", default="qnnpack")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    quantized_models.SIZE = args.size
    m, _ = quantized_models.quantized_model(args.model, args.engine, 0)
    pt = os.path.join(args.work, "model.pt")
    torch.jit.trace(m, torch.randn(1, 3, args.size, args.size)).save(pt)
    x = os.path.join(args.work, "x.npy")
    np.save(x, torch.randn(1, 3, args.size, args.size).numpy())
    shape = ["--input-shape", f"0=1x3x{args.size}x{args.size}xf32", "--quantized-engine", args.engine]
    export, runner = os.path.join(args.bin, "cuvil-export"), os.path.join(args.bin, "cuvil-run")
    cpu = os.path.join(args.work, "cpu.so")
    run([export, "--model", pt, *shape, "--target", "x86_64", "-o", cpu])
    run([runner, cpu, "--input", x, "-o", os.path.join(args.work, "out_cpu"), "-q"])
    want = np.load(os.path.join(args.work, "out_cpu", "output0.npy"))
    rows = []
    for name, extra in [(c, ["--cpu", c]) for c in CONFIGS] + [("npu-32x32 single-buffered",
                                                                 ["--target-option", "double-buffering=0"])]:
        tag = name.replace(" ", "_")
        lib, trace = os.path.join(args.work, f"{tag}.so"), os.path.join(args.work, f"{tag}.json")
        run([export, "--model", pt, *shape, "--target", "npu", *extra, "-o", lib])
        started = time.time()
        run([runner, lib, "--input", x, "-o", os.path.join(args.work, f"out_{tag}"), "-q", "--npu-trace", trace])
        wall = time.time() - started
        got = np.load(os.path.join(args.work, f"out_{tag}", "output0.npy"))
        f = figures(trace)
        f.update(config=name, simulate_s=wall, exact=bool(np.array_equal(got, want)))
        rows.append(f)
    print(f"{args.model} ({args.engine}), {args.size}x{args.size}, simulated; outputs against the x86_64 int8 library")
    print("| configuration | cycles | time us | MAC util | conv MAC util | DMA MB | DMA hidden | conv DMA hidden "
          "| conflicts | / roofline | simulate s | exact |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['config']} | {r['cycles']} | {r['time_us']:.0f} | {r['mac_utilization']:.1%} | "
              f"{r['conv_mac_utilization']:.1%} | {r['dma_bytes'] / 1e6:.1f} | {r['dma_hidden']:.1%} | "
              f"{r['conv_dma_hidden']:.1%} | {r['conflict_cycles']} | {r['roofline_ratio']:.3f} | "
              f"{r['simulate_s']:.2f} | {'yes' if r['exact'] else 'NO'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if all(r["exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
