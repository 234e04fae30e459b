#!/usr/bin/env python3
"""Import speed and memory, side by side with PyTorch's own loader.

For resnet18 (traced+frozen and scripted) and mobilenet_v2, measures in one
run: cuvil-import to bytecode and to text (wall time, peak RSS of the
process) and torch.jit.load of the same file in a fresh interpreter. Reports
medians, ratios to the file size and to PyTorch, as a table and as JSON.

    /usr/bin/python3 bench/import_bench.py --bin build/bin [--runs 5] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch
import torchvision

MODELS = {
    "resnet18_traced_frozen": lambda: torch.jit.freeze(
        torch.jit.trace(torchvision.models.resnet18().eval(), torch.randn(1, 3, 224, 224))),
    "resnet18_scripted": lambda: torch.jit.script(torchvision.models.resnet18().eval()),
    "mobilenet_v2_scripted": lambda: torch.jit.script(torchvision.models.mobilenet_v2().eval()),
}
SHAPE = "0=1x3x224x224xf32"


def measure(cmd):
    """Wall seconds and peak RSS (bytes) of one process. GNU time measures
    the RSS: a child forked from this (large) Python process would report
    the parent's size in ru_maxrss."""
    proc = subprocess.run(["/usr/bin/time", "-f", "CUVIL-TIME %e %M"] + cmd,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    line = [l for l in proc.stderr.splitlines() if l.startswith("CUVIL-TIME")][-1]
    _, wall, rss_kb = line.split()
    return float(wall), int(rss_kb) * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="directory holding cuvil-import")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", help="write all numbers here")
    args = ap.parse_args()
    importer = os.path.join(args.bin, "cuvil-import")
    work = tempfile.mkdtemp(prefix="cuvil-bench-import-")
    torch.manual_seed(0)
    results = {"torch_version": torch.__version__, "runs": args.runs, "models": {}}
    rows = []
    for name, make in MODELS.items():
        pt = os.path.join(work, name + ".pt")
        make().save(pt)
        size = os.path.getsize(pt)
        entry = {"file_bytes": size}
        configs = {
            "cuvil-import -> .mlirbc": [importer, pt, "--input-shape", SHAPE, "-o", os.path.join(work, "o.mlirbc")],
            "cuvil-import -> .mlir": [importer, pt, "--input-shape", SHAPE, "-o", os.path.join(work, "o.mlir")],
            "torch.jit.load": [sys.executable, "-c", f"import torch; torch.jit.load({pt!r})"],
            "python + import torch (baseline)": [sys.executable, "-c", "import torch"],
        }
        for label, cmd in configs.items():
            samples = [measure(cmd) for _ in range(args.runs)]
            wall = statistics.median(s[0] for s in samples)
            rss = max(s[1] for s in samples)
            entry[label] = {"median_s": wall, "min_s": min(s[0] for s in samples), "peak_rss_bytes": rss}
        results["models"][name] = entry
        base = entry["cuvil-import -> .mlirbc"]
        tl = entry["torch.jit.load"]
        rows.append((name, size, base["median_s"], base["peak_rss_bytes"],
                     entry["cuvil-import -> .mlir"]["median_s"], entry["cuvil-import -> .mlir"]["peak_rss_bytes"],
                     tl["median_s"], tl["peak_rss_bytes"]))
    print(f"{'model':26} {'file MB':>8} | {'.mlirbc s':>9} {'RSS/file':>8} | {'.mlir s':>7} {'RSS/file':>8} |"
          f" {'torch.jit.load s':>16} {'speedup':>7}")
    for name, size, bs, brss, ts, trss, ls, lrss in rows:
        print(f"{name:26} {size / 1e6:8.1f} | {bs:9.3f} {brss / size:8.2f} | {ts:7.3f} {trss / size:8.2f} |"
              f" {ls:16.3f} {ls / bs:6.1f}x")
    print("RSS/file: peak resident memory of the whole process over the .pt size. "
          "torch.jit.load includes starting Python and importing torch, as a user pays it.")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
