#!/usr/bin/env python3
"""Two builds of Cuvil against each other (a commit before a change and
after it), in one run: no regression beyond noise.

Each build exports its own library of every case with its own cuvil-export
and times it with its own cuvil-run (the builds may differ in model ABI),
in rounds that alternate which build goes first (a shared machine's speed
drifts: both see the same spells). Per case and thread count: the median
over rounds of each build's median latency, the ratio after / before
(below 1: the change is faster), and the noise: the spread of the same
ratio over rounds (its lowest and highest). A case regresses when even the
lowest round's ratio is above 1 + --tolerance.

    /usr/bin/python3 bench/compare_builds.py --before /tmp/base/build/bin --after build/bin
        [--cases resnet18_scripted,mobilenet_v2_scripted,transformer_encoder_scripted]
        [--batches 1] [--threads 1,2] [--rounds 5] [--tolerance 0.05] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import perf_bench  # noqa: E402  (models, batching, cuvil-run timing, CPU rounds)

DEFAULT_CASES = "resnet18_scripted,mobilenet_v2_scripted,transformer_encoder_scripted"


def export(bin_dir, model_path, shapes, out):
    cmd = [os.path.join(bin_dir, "cuvil-export"), "--model", model_path, "--target", "x86_64",
           "-o", out]
    for i, s in enumerate(shapes):
        cmd += ["--input-shape", f"{i}={s}"]
    subprocess.run(cmd, check=True, capture_output=True, text=True)


def check_outputs(a_dir, b_dir, want):
    """Both builds' outputs against PyTorch's (a speed-up that is wrong is
    no speed-up)."""
    for i, w in enumerate(want):
        for d in (a_dir, b_dir):
            got = np.load(os.path.join(d, f"output{i}.npy"))
            err = float(np.abs(got - w).max()) if got.size else 0.0
            if err > 1e-3 * max(1.0, float(np.abs(w).max())):
                raise SystemExit(f"{d}: output {i} differs from PyTorch's by {err}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", required=True, help="bin directory of the build before")
    p.add_argument("--after", required=True, help="bin directory of the build after")
    p.add_argument("--cases", default=DEFAULT_CASES)
    p.add_argument("--batches", default="1")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--tolerance", type=float, default=0.05)
    p.add_argument("--json")
    args = p.parse_args()
    builds = {"before": args.before, "after": args.after}
    results, regressions = [], []
    with tempfile.TemporaryDirectory() as work:
        for name in args.cases.split(","):
            for batch in [int(b) for b in args.batches.split(",")]:
                module, inputs, how = perf_bench.build(name)
                inputs = perf_bench.batched(name, inputs, batch)
                scripted = perf_bench.models.to_torchscript(module, inputs, how)
                case = os.path.join(work, f"{name}_b{batch}")
                os.makedirs(case)
                model_path = os.path.join(case, "model.pt")
                torch.jit.save(scripted, model_path)
                paths, shapes = [], []
                for i, x in enumerate(inputs):
                    path = os.path.join(case, f"input{i}.npy")
                    np.save(path, x.numpy())
                    paths.append(path)
                    dims = "x".join(str(d) for d in x.shape)
                    dtype = perf_bench.DTYPES[x.dtype]
                    shapes.append(f"{dims}x{dtype}" if dims else dtype)
                with torch.inference_mode():
                    want = module(*inputs)
                want = [w.numpy() for w in (want if isinstance(want, (tuple, list)) else [want])]
                libs = {}
                for label, bin_dir in builds.items():
                    libs[label] = os.path.join(case, f"{label}.so")
                    export(bin_dir, model_path, shapes, libs[label])
                for threads in [int(t) for t in args.threads.split(",")]:
                    per_round = {"before": [], "after": []}
                    ratios = []
                    for r in range(args.rounds):
                        os.sched_setaffinity(0, perf_bench.round_cpus(threads, r))
                        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
                        got = {}
                        for label in order:
                            out = os.path.join(case, f"out_{label}")
                            got[label] = perf_bench.time_cuvil(builds[label], libs[label], paths,
                                                               threads, out)["median_ms"]
                            per_round[label].append(got[label])
                        ratios.append(got["after"] / got["before"])
                    os.sched_setaffinity(0, set(perf_bench.ALL_CPUS))
                    check_outputs(os.path.join(case, "out_before"), os.path.join(case, "out_after"),
                                  want)
                    row = {"case": name, "batch": batch, "threads": threads,
                           "before_ms": statistics.median(per_round["before"]),
                           "after_ms": statistics.median(per_round["after"]),
                           "ratio": statistics.median(ratios), "ratio_low": min(ratios),
                           "ratio_high": max(ratios), "rounds": per_round}
                    results.append(row)
                    if row["ratio_low"] > 1 + args.tolerance:
                        regressions.append(row)
                    print(f"{name:32} b{batch} t{threads}: before {row['before_ms']:8.3f} ms  "
                          f"after {row['after_ms']:8.3f} ms  after/before {row['ratio']:.3f} "
                          f"(rounds {row['ratio_low']:.3f}..{row['ratio_high']:.3f})", flush=True)
    geo = statistics.geometric_mean(r["ratio"] for r in results)
    print(f"geometric mean after/before: {geo:.3f}; regressions beyond "
          f"{args.tolerance:.0%} in every round: {len(regressions)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "geomean_ratio": geo,
                       "regressions": [f"{r['case']} b{r['batch']} t{r['threads']}"
                                       for r in regressions]}, f, indent=2)
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
