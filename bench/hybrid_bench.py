#!/usr/bin/env python3
"""--strategy hybrid against static libraries and PyTorch, in one run.

A BERT-style encoder (nn.TransformerEncoder: 4 layers, d_model 256, 4 heads,
feed-forward 1024, scripted) compiled once with a run-time sequence length
(--input-shape 0=1xseq:1..512x256xf32 --strategy hybrid) and once per length L
as a static library (0=1xLx256xf32, graph_fusion); at each L of --lengths:
the hybrid library, a hybrid library with static copies for the lengths of
--specialize (--specialize seq=128,256), the static one, PyTorch eager (inference_mode) and
scripted + frozen + optimize_for_inference, timed in rounds that alternate
their order (median over rounds of each one's median), all on the same
CPU(s) within a round. Outputs are checked against PyTorch (rtol 1e-3,
atol 1e-4). Reports hybrid / static (and its geometric mean) and
best-PyTorch / hybrid.

    /usr/bin/python3 bench/hybrid_bench.py --bin build/bin [--lengths 16,64,128,256,512]
        [--threads 1] [--rounds 3] [--json out.json]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import perf_bench as pb  # noqa: E402  (timing helpers shared with the performance benchmark)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=4)

    def forward(self, x):
        return self.encoder(x)


def export(bin_dir, model, shape, out, strategy, extra=()):
    subprocess.run([os.path.join(bin_dir, "cuvil-export"), "--model", model, "--target", "x86_64",
                    "--input-shape", shape, "--strategy", strategy, "-o", out, *extra],
                   check=True, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lengths", default="16,64,128,256,512")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--specialize", default="128,256",
                    help="lengths of a second hybrid library's static copies (--specialize seq=...)")
    ap.add_argument("--json")
    args = ap.parse_args()
    lengths = [int(x) for x in args.lengths.split(",")]
    work = tempfile.mkdtemp(prefix="cuvil-hybrid-bench-")
    torch.manual_seed(0)
    eager = Encoder().eval()
    scripted = torch.jit.script(eager)
    model = os.path.join(work, "encoder.pt")
    scripted.save(model)
    frozen = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(eager)))
    hybrid = os.path.join(work, "hybrid.so")
    export(args.bin, model, f"0=1xseq:1..{max(lengths)}x256xf32", hybrid, "hybrid")
    special = os.path.join(work, "specialized.so")
    export(args.bin, model, f"0=1xseq:1..{max(lengths)}x256xf32", special, "hybrid",
           ["--specialize", "seq=" + args.specialize])

    rows = []
    for L in lengths:
        x = torch.randn(1, L, 256)
        path = os.path.join(work, f"x{L}.npy")
        np.save(path, x.numpy())
        static = os.path.join(work, f"static{L}.so")
        export(args.bin, model, f"0=1x{L}x256xf32", static, "graph_fusion")
        with torch.inference_mode():
            want = eager(x).numpy()
        libs = {"hybrid": hybrid, "specialized": special, "static": static}
        for name, lib in libs.items():
            out = os.path.join(work, f"out-{name}-{L}")
            subprocess.run([os.path.join(args.bin, "cuvil-run"), lib, "--input", path, "--output-dir", out,
                            "--quiet"], check=True)
            got = np.load(os.path.join(out, "output0.npy"))
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-3, atol=1e-4):
                sys.exit(f"{name} at L={L}: outputs differ from PyTorch's")
        runs = {"hybrid": [], "specialized": [], "static": [], "eager": [], "frozen": []}
        for r in range(args.rounds):
            os.sched_setaffinity(0, pb.round_cpus(args.threads, r))
            order = list(runs)
            order = order[r % len(order):] + order[:r % len(order)]
            for name in order:
                if name in libs:
                    m = pb.time_cuvil(args.bin, libs[name], [path], args.threads, os.path.join(work, "bench-out"))
                else:
                    fn = eager if name == "eager" else frozen
                    m = pb.time_torch(fn, [x], args.threads)
                runs[name].append(m["median_ms"])
        os.sched_setaffinity(0, set(pb.ALL_CPUS))
        med = {k: statistics.median(v) for k, v in runs.items()}
        best = min(med["eager"], med["frozen"])
        row = {"length": L, **{f"{k}_ms": v for k, v in med.items()},
               "hybrid_over_static": med["hybrid"] / med["static"],
               "specialized_over_static": med["specialized"] / med["static"],
               "best_pytorch_over_hybrid": best / med["hybrid"],
               "rounds": {k: v for k, v in runs.items()}}
        rows.append(row)
        print(f"L={L:4d}  hybrid {med['hybrid']:8.3f} ms  specialized {med['specialized']:8.3f} ms  "
              f"static {med['static']:8.3f} ms  "
              f"eager {med['eager']:8.3f} ms  frozen {med['frozen']:8.3f} ms  "
              f"hybrid/static {row['hybrid_over_static']:.3f}  best-PyTorch/hybrid "
              f"{row['best_pytorch_over_hybrid']:.2f}x", flush=True)
    geo = math.exp(sum(math.log(r["hybrid_over_static"]) for r in rows) / len(rows))
    print(f"hybrid/static: geometric mean {geo:.3f}, worst {max(r['hybrid_over_static'] for r in rows):.3f}; "
          f"best-PyTorch/hybrid: lowest {min(r['best_pytorch_over_hybrid'] for r in rows):.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "rows": rows, "hybrid_over_static_geomean": geo}, f, indent=1)


if __name__ == "__main__":
    main()
