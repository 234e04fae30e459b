#!/usr/bin/env python3
"""CPU performance: Cuvil's x86_64 libraries against PyTorch at its best,
measured side by side in one run, with this machine's ceilings.

For every model of the importer tests and a few large single layers, at
batch 1 and 8, with 1 and 2 threads: PyTorch eager under inference_mode,
TorchScript frozen + torch.jit.optimize_for_inference, and the library
cuvil-export makes (timed by cuvil-run --benchmark). Warm-up, then median
and p90 over enough runs, in rounds that alternate Cuvil and PyTorch (a
shared machine's speed drifts: each side sees the same spells; with 1
thread both run on the same CPU in a round, the other CPU the next round),
the median over rounds. Reports the ratio best-PyTorch / Cuvil (above 1:
Cuvil is faster), the geometric mean of it, and each case's fraction of
the measured fp32 FMA peak (FLOPs from PyTorch's profiler) and of the
memory bandwidth (cuvil-bench-ceilings), as a table and as JSON. The FMA
peak is measured at the start and again around Cuvil's runs in each round;
the fraction is the median over rounds of the fraction of that round's peak
(the fraction of the start's peak is in the JSON too).

With --autotune each case is also tuned for this machine (cuvil-autotune
tune into one database for the whole run, or --tuning-db FILE, extended)
and exported with --strategy autotune; the tuned library is timed in the
same rounds, next to the heuristics' one: the report adds autotune /
graph_fusion (above 1: tuning gained) and best-PyTorch / autotune, and the
tuning's wall time per case.

    /usr/bin/python3 bench/perf_bench.py --bin build/bin [--json perf.json]
        [--cases resnet18_scripted,linear_1x1024] [--batches 1,8] [--threads 1,2]
        [--rounds 5] [--autotune [--tuning-db FILE]]
"""
import argparse
import functools
import ctypes
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "import"))
import models  # noqa: E402  (the importer's test models)

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64", torch.bool: "i1"}
# Which dimension of each input is the batch (default: 0 for every input).
BATCH_DIMS = {"recurrent_scripted": [0, 1, 1]}
# Models written for one batch size (indexing expands to a fixed shape):
# measured at their own example inputs only.
# So are the recommender's bags, given by offsets into one flat index list.
FIXED_BATCH = {"indexing_scripted", "recommender_traced", "recommender_scripted"}  # (and the single layers, below)
MIN_SECONDS = 0.25  # of timed runs per measurement and round
SETTLE_SECONDS = 1.0  # idle before timing Cuvil
ALL_CPUS = sorted(os.sched_getaffinity(0))  # this process's, at the start


class Linear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1024, 1024)

    def forward(self, x):
        return self.fc(x)


class Conv3x3(nn.Module):
    def __init__(self, channels, groups=1):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups)

    def forward(self, x):
        return self.conv(x)


def layer(name):
    torch.manual_seed(0)
    if name == "linear_1x1024":
        return Linear().eval(), [torch.randn(1, 1024)], "script"
    if name == "linear_64x1024":
        return Linear().eval(), [torch.randn(64, 1024)], "script"
    if name == "conv3x3_64_56x56":
        return Conv3x3(64).eval(), [torch.randn(1, 64, 56, 56)], "script"
    if name == "depthwise3x3_144_56x56":
        return Conv3x3(144, groups=144).eval(), [torch.randn(1, 144, 56, 56)], "script"
    if name == "attention_seq128":
        block = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True).eval()
        return block, [torch.randn(1, 128, 256)], "script"
    raise KeyError(name)


LAYERS = ["linear_1x1024", "linear_64x1024", "conv3x3_64_56x56", "depthwise3x3_144_56x56",
          "attention_seq128"]


def build(name):
    return layer(name) if name in LAYERS else models.build(name)


def batched(name, inputs, batch):
    """The inputs with exactly `batch` samples (the first one repeated)."""
    dims = BATCH_DIMS.get(name, [0] * len(inputs))
    out = []
    for x, d in zip(inputs, dims):
        if x.dim() == 0:
            out.append(x)
            continue
        reps = [1] * x.dim()
        reps[d] = batch
        out.append(x.narrow(d, 0, 1).repeat(*reps).contiguous())
    return out


def write_json(results, path):
    """All numbers so far, replacing the file whole (never half written)."""
    with open(path + ".tmp", "w") as f:
        json.dump(results, f, indent=2)
    os.replace(path + ".tmp", path)


def flops_of(module, inputs):
    """FLOPs of one eager run, as PyTorch's profiler counts them (matrix
    products and convolutions; elementwise ops add little)."""
    with torch.inference_mode(), torch.profiler.profile(with_flops=True) as prof:
        module(*inputs)
    return sum(e.flops for e in prof.key_averages() if e.flops)


def set_torch_threads(threads):
    """PyTorch's own pool (OpenMP, oneDNN) and OpenBLAS's, which
    torch.set_num_threads does not reach in Debian's build."""
    torch.set_num_threads(threads)
    for lib in blas_in_use():
        try:
            ctypes.CDLL(lib).openblas_set_num_threads(threads)
        except (OSError, AttributeError):
            pass


def time_torch(fn, inputs, threads):
    set_torch_threads(threads)
    with torch.inference_mode():
        for _ in range(3):
            fn(*inputs)
        times, start = [], time.perf_counter()
        while len(times) < 10 or (time.perf_counter() - start < MIN_SECONDS and len(times) < 500):
            t0 = time.perf_counter()
            fn(*inputs)
            times.append((time.perf_counter() - t0) * 1e3)
    return summary(times)


def summary(times):
    times = sorted(times)
    return {"median_ms": statistics.median(times), "p90_ms": times[int(0.9 * (len(times) - 1))],
            "min_ms": times[0], "runs": len(times)}


def time_cuvil(bin_dir, lib, input_paths, threads, out_dir):
    def run(n):
        cmd = [os.path.join(bin_dir, "cuvil-run"), lib, "--output-dir", out_dir,
               "--threads", str(threads), "--benchmark", str(n)]
        for p in input_paths:
            cmd += ["--input", p]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        number = r"([\d.]+(?:e[-+]?\d+)?)"
        m = re.search(rf"min {number} ms, median {number} ms, p90 {number} ms", out)
        return {"min_ms": float(m.group(1)), "median_ms": float(m.group(2)),
                "p90_ms": float(m.group(3)), "runs": n}
    probe = run(3)
    n = int(min(500, max(10, MIN_SECONDS * 1e3 / max(probe["median_ms"], 1e-3))))
    return run(n)


def round_cpus(threads, round_index):
    """The CPUs one round runs on: with fewer threads than CPUs, the same
    `threads` CPUs for Cuvil (cuvil-run inherits them) and PyTorch (this
    thread computes), the next ones each round. A shared VM's virtual CPUs
    are not equally fast at any one moment."""
    if threads >= len(ALL_CPUS):
        return set(ALL_CPUS)
    start = round_index * threads
    return {ALL_CPUS[(start + i) % len(ALL_CPUS)] for i in range(threads)}


def fma_ceiling(bin_dir):
    """This core's fp32 FMA GFLOP/s now (cuvil-bench-ceilings --fma-only)."""
    out = subprocess.run([os.path.join(bin_dir, "cuvil-bench-ceilings"), "--fma-only"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["fp32_fma_gflops_per_core"]["best"]


@functools.lru_cache(maxsize=None)
def blas_in_use():
    """The BLAS library this process's PyTorch has loaded."""
    torch.nn.functional.linear(torch.randn(4, 4), torch.randn(4, 4))
    with open("/proc/self/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
    return tuple(sorted(os.path.realpath(p) for p in libs)) or ("(none: PyTorch's own kernels)",)


def over_rounds(measurements):
    """One measurement from several rounds: the median of their medians."""
    medians = [x["median_ms"] for x in measurements]
    return {"median_ms": statistics.median(medians),
            "p90_ms": statistics.median(x["p90_ms"] for x in measurements),
            "min_ms": min(x["min_ms"] for x in measurements),
            "runs": sum(x["runs"] for x in measurements), "round_medians_ms": medians}


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--cases", default=",".join(models.MODELS + LAYERS))
    ap.add_argument("--batches", default="1,8", help="the first also counts fixed-batch models")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json", help="write every number here")
    ap.add_argument("--rounds", type=int, default=5,
                    help="alternations of Cuvil and PyTorch per case and thread count")
    ap.add_argument("--autotune", action="store_true",
                    help="also tune each case and time the --strategy autotune library")
    ap.add_argument("--tuning-db", help="with --autotune: the database to extend (default: one in "
                                        "the run's temporary directory)")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]

    ceilings = json.loads(subprocess.run([os.path.join(args.bin, "cuvil-bench-ceilings")],
                                         capture_output=True, text=True, check=True).stdout)
    peak = ceilings["fp32_fma_gflops_per_core"]["best"]
    bandwidth = ceilings["triad_bandwidth_gbs"]
    results = {"torch": torch.__version__, "blas": list(blas_in_use()),
               "mkldnn": torch.backends.mkldnn.is_available(), "ceilings": ceilings, "cases": {}}
    print(f"PyTorch {torch.__version__}, BLAS {', '.join(results['blas'])}, "
          f"oneDNN {'yes' if results['mkldnn'] else 'no'}")
    print(f"ceilings: fp32 FMA {peak:.1f} GFLOP/s per core, triad bandwidth "
          f"{bandwidth['1_thread']:.1f} GB/s (1 thread) / {bandwidth['all_cores']:.1f} GB/s (all)")

    with tempfile.TemporaryDirectory() as work:
        tuning_db = args.tuning_db or os.path.join(work, "tuning.db")
        for name in args.cases.split(","):
            module, inputs0, how = build(name)
            fixed = name in FIXED_BATCH or name in LAYERS  # layers: shapes as specified
            for batch in ([None] if fixed else batches):
                if batch is None:
                    batch, inputs = inputs0[0].shape[0], inputs0
                else:
                    inputs = batched(name, inputs0, batch)
                key = f"{name}@{batch}"
                entry = results["cases"][key] = {"model": name, "batch": batch,
                                                 "fixed_batch": fixed}
                d = os.path.join(work, key)
                os.makedirs(d)
                try:
                    scripted = models.to_torchscript(module, inputs, how)
                    path = os.path.join(d, "model.pt")
                    torch.jit.save(scripted, path)
                    paths, shapes = [], []
                    for i, x in enumerate(inputs):
                        p = os.path.join(d, f"input{i}.npy")
                        np.save(p, x.numpy())
                        paths.append(p)
                        dims = "x".join(str(s) for s in x.shape)
                        shapes += ["--input-shape", f"{i}={dims + 'x' if dims else ''}{DTYPES[x.dtype]}"]
                    lib = os.path.join(d, "lib.so")
                    subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", path,
                                    "--target", "x86_64", "-o", lib,
                                    "--kernel-report", os.path.join(d, "kernels.json")] + shapes,
                                   check=True, capture_output=True, text=True)
                    tuned_lib = None
                    if args.autotune:
                        start = time.perf_counter()
                        out = subprocess.run([os.path.join(args.bin, "cuvil-autotune"), "tune", "--model",
                                              path, "--output", tuning_db] + shapes,
                                             check=True, capture_output=True, text=True).stdout
                        entry["tune_seconds"] = time.perf_counter() - start
                        entry["tune_summary"] = out.strip()
                        tuned_lib = os.path.join(d, "tuned", "lib.so")
                        os.makedirs(os.path.dirname(tuned_lib))
                        subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", path,
                                        "--target", "x86_64", "--strategy", "autotune", "--tuning-db",
                                        tuning_db, "-o", tuned_lib, "--kernel-report",
                                        os.path.join(d, "tuned", "kernels.json")] + shapes,
                                       check=True, capture_output=True, text=True)
                        # How many kernels the database configures otherwise
                        # than the heuristics (none: the same code, and any
                        # difference in time is the machine's noise).
                        def configs(f):
                            return [(k["kernel"], k["variant"]) for k in json.load(open(f))["kernels"]]
                        entry["kernels_changed_by_tuning"] = sum(
                            a != b for a, b in zip(configs(os.path.join(d, "kernels.json")),
                                                   configs(os.path.join(d, "tuned", "kernels.json"))))
                except subprocess.CalledProcessError as e:
                    entry["error"] = (e.stderr or str(e)).strip().splitlines()[-1]
                    print(f"  {key}: cannot export: {entry['error']}", flush=True)
                    continue
                except Exception as e:  # noqa: BLE001 (PyTorch cannot trace or run this case)
                    entry["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"
                    print(f"  {key}: skipped: {entry['error']}", flush=True)
                    continue
                entry["gflop"] = flops_of(module, inputs) / 1e9
                entry["bytes"] = int(sum(x.numel() * x.element_size() for x in inputs) +
                                     sum(p.numel() * p.element_size() for p in module.parameters()))
                try:
                    optimized = torch.jit.optimize_for_inference(
                        torch.jit.freeze(scripted.eval()) if how != "trace_freeze" else scripted)
                except Exception as e:  # noqa: BLE001 (PyTorch refuses some models)
                    optimized, entry["optimize_for_inference"] = None, str(e).splitlines()[0]
                # Rounds of Cuvil, eager, frozen: each side sees the same
                # spells of a drifting machine. Cuvil first in a round, after
                # a pause: PyTorch's OpenMP and OpenBLAS threads keep
                # spinning for a while after a run. The FMA ceiling is
                # measured again right before and after Cuvil's runs: the
                # fraction of the peak compares spells of the same speed.
                for t in thread_counts:
                    rounds = {"cuvil": [], "torch_eager": [], "torch_frozen_optimized": []}
                    if tuned_lib:
                        rounds["cuvil_autotune"] = []
                    round_peaks, cpus_per_round = [], []
                    for r in range(max(1, args.rounds)):
                        cpus = round_cpus(t, r)
                        os.sched_setaffinity(0, cpus)
                        cpus_per_round.append(sorted(cpus))
                        time.sleep(SETTLE_SECONDS)
                        before = fma_ceiling(args.bin)
                        rounds["cuvil"].append(
                            time_cuvil(args.bin, lib, paths, t, os.path.join(d, "out")))
                        if tuned_lib:
                            rounds["cuvil_autotune"].append(
                                time_cuvil(args.bin, tuned_lib, paths, t, os.path.join(d, "out")))
                        round_peaks.append((before + fma_ceiling(args.bin)) / 2)
                        rounds["torch_eager"].append(time_torch(module, inputs, t))
                        if optimized is not None:
                            try:
                                rounds["torch_frozen_optimized"].append(
                                    time_torch(optimized, inputs, t))
                            except RuntimeError as e:  # e.g. oneDNN refuses a pooling attribute
                                optimized = None
                                rounds["torch_frozen_optimized"] = []
                                entry["optimize_for_inference"] = str(e).strip().splitlines()[-1]
                    os.sched_setaffinity(0, ALL_CPUS)
                    m = entry[f"{t}t"] = {k: over_rounds(v) for k, v in rounds.items() if v}
                    m["cpus_per_round"] = cpus_per_round
                    best = min(v["median_ms"] for k, v in m.items() if k.startswith("torch"))
                    c = max(m["cuvil"]["median_ms"], 1e-6)
                    m["ratio"] = best / c
                    if "cuvil_autotune" in m:
                        a = max(m["cuvil_autotune"]["median_ms"], 1e-6)
                        m["autotune_gain"] = c / a
                        m["ratio_autotune"] = best / a
                    m["fma_peak_per_round"] = round_peaks
                    m["fraction_of_fma_peak"] = statistics.median(
                        entry["gflop"] / (r["median_ms"] * 1e-3) / (p * t)
                        for r, p in zip(rounds["cuvil"], round_peaks))
                    m["fraction_of_start_fma_peak"] = entry["gflop"] / (c * 1e-3) / (peak * t)
                    bw = bandwidth["1_thread"] if t == 1 else bandwidth["all_cores"]
                    m["fraction_of_bandwidth"] = entry["bytes"] / 1e9 / (c * 1e-3) / bw
                # Progress, and every number so far on disk: a long run cut
                # short keeps the cases it finished.
                print(f"  {key}: " + ", ".join(
                    f"{t}t {entry[f'{t}t']['cuvil']['median_ms']:.3f} ms ({entry[f'{t}t']['ratio']:.2f}x)"
                    for t in thread_counts), flush=True)
                if args.json:
                    write_json(results, args.json)

    print(f"\n{'case':42s} thr  cuvil ms    p90   eager  frozen+opt  best/cuvil  %FMA  %BW")
    for key, e in results["cases"].items():
        for t in thread_counts:
            m = e.get(f"{t}t")
            if not m:
                continue
            opt = m.get("torch_frozen_optimized", {}).get("median_ms", float("nan"))
            print(f"{key:42s} {t:3d} {m['cuvil']['median_ms']:9.3f} {m['cuvil']['p90_ms']:6.2f}"
                  f" {m['torch_eager']['median_ms']:7.2f} {opt:10.2f} {m['ratio']:10.2f}x"
                  f" {100 * m['fraction_of_fma_peak']:5.1f} {100 * m['fraction_of_bandwidth']:4.0f}")
    summary_lines = {}
    for batch in batches:
        for t in thread_counts:
            # Models at this batch; those with a fixed batch count with batch 1.
            ratios = [e[f"{t}t"]["ratio"] for e in results["cases"].values()
                      if f"{t}t" in e and e["model"] not in LAYERS and
                      (e["batch"] == batch if not e["fixed_batch"] else batch == batches[0])]
            if ratios:
                summary_lines[f"batch{batch}_{t}t"] = {"geomean": geomean(ratios), "min": min(ratios),
                                                       "models": len(ratios)}
            gains = [e[f"{t}t"]["autotune_gain"] for e in results["cases"].values()
                     if f"{t}t" in e and "autotune_gain" in e[f"{t}t"] and e["model"] not in LAYERS and
                     (e["batch"] == batch if not e["fixed_batch"] else batch == batches[0])]
            if gains:
                tuned = [e[f"{t}t"]["ratio_autotune"] for e in results["cases"].values()
                         if f"{t}t" in e and "ratio_autotune" in e[f"{t}t"] and e["model"] not in LAYERS and
                         (e["batch"] == batch if not e["fixed_batch"] else batch == batches[0])]
                summary_lines[f"batch{batch}_{t}t"].update(
                    {"autotune_gain_geomean": geomean(gains), "autotune_gain_min": min(gains),
                     "autotune_vs_torch_geomean": geomean(tuned), "autotune_vs_torch_min": min(tuned)})
    results["summary"] = summary_lines
    print("\nmodels, best-PyTorch / Cuvil median latency:")
    for k, v in summary_lines.items():
        print(f"  {k:12s} geomean {v['geomean']:.2f}x, lowest {v['min']:.2f}x over {v['models']} models")
    if args.autotune:
        print("\n--strategy autotune: graph_fusion / autotune latency (above 1: tuning gained), "
              "best-PyTorch / autotune:")
        for key, e in results["cases"].items():
            for t in thread_counts:
                m = e.get(f"{t}t")
                if m and "autotune_gain" in m:
                    print(f"  {key:40s} {t}t  gain {m['autotune_gain']:.3f}x  vs PyTorch "
                          f"{m['ratio_autotune']:.2f}x  (tuned in {e['tune_seconds']:.1f} s; "
                          f"{e['kernels_changed_by_tuning']} kernel(s) configured otherwise)")
        for k, v in summary_lines.items():
            if "autotune_gain_geomean" in v:
                print(f"  {k:12s} gain geomean {v['autotune_gain_geomean']:.3f}x, lowest "
                      f"{v['autotune_gain_min']:.3f}x; vs PyTorch geomean "
                      f"{v['autotune_vs_torch_geomean']:.2f}x, lowest {v['autotune_vs_torch_min']:.2f}x")
    if args.json:
        write_json(results, args.json)
        print(f"\nall numbers: {args.json}")


if __name__ == "__main__":
    sys.exit(main())
