#!/usr/bin/env python3
"""Models PyTorch quantized, compiled by Cuvil, against PyTorch running the
same .pt with the engine that made it, in one run on this machine.

For resnet18 and mobilenet_v2 (torchvision's quantizable models, eager-mode
static post-training quantization, batch 1, 224x224), under each engine
(onednn, qnnpack): the traced+frozen .pt is compiled by
`cuvil-export --quantized-engine ENGINE --target x86_64`, checked against
PyTorch's quantized output (quantization steps), and both are timed at
--threads threads in alternating rounds (the machine's noise hits both);
the medians of the rounds' medians are reported with their ratio.

    /usr/bin/python3 bench/quantized_import_bench.py --bin build/bin --work /tmp/qib [--rounds 5]
"""
import argparse
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import torch
import torchvision.models.quantization as qm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quantize_bench import cuvil_latency, torch_latency  # noqa: E402  (the same timing)

warnings.filterwarnings("ignore")


def quantized(name, engine):
    torch.backends.quantized.engine = engine
    torch.manual_seed(0)
    m = {"resnet18": qm.resnet18, "mobilenet_v2": qm.mobilenet_v2}[name](weights=None, quantize=False)
    for mod in m.modules():  # batch-norm statistics of its own activations
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.momentum = None
    m.train()
    with torch.no_grad():
        for _ in range(3):
            m(torch.randn(4, 3, 224, 224))
    m.eval().fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(m, inplace=True)
    with torch.no_grad():
        for _ in range(3):
            m(torch.randn(2, 3, 224, 224))
    torch.ao.quantization.convert(m, inplace=True)
    m.dequant = torch.nn.Identity()
    x = torch.randn(1, 3, 224, 224)
    return torch.jit.freeze(torch.jit.trace(m, x)), x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--work", default="/tmp/cuvil-quantized-import-bench")
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    ap.add_argument("--engines", default="onednn,qnnpack")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    print(f"{'model':14s} {'engine':8s} {'exact':>7s} {'worst':>6s} {'PyTorch ms':>11s} {'Cuvil ms':>9s} {'speed-up':>9s}")
    for name in args.models.split(","):
        for engine in args.engines.split(","):
            ts, x = quantized(name, engine)
            pt = os.path.join(args.work, f"{name}_{engine}.pt")
            ts.save(pt)
            xs = os.path.join(args.work, "x.npy")
            np.save(xs, x.numpy())
            lib = pt[:-3] + ".so"
            subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", pt, "--quantized-engine", engine,
                            "--target", "x86_64", "--input-shape", "0=1x3x224x224xf32", "-o", lib], check=True)
            ts = torch.jit.load(pt)  # what a user runs: the saved model
            want = ts(x)
            out = os.path.join(args.work, "out")
            subprocess.run([os.path.join(args.bin, "cuvil-run"), lib, "-i", xs, "-o", out, "-q"], check=True)
            got = np.round(np.load(os.path.join(out, "output0.npy")) / np.float32(want.q_scale())) + want.q_zero_point()
            diff = np.abs(got - want.int_repr().numpy().astype(np.int64))
            off, exact = int(diff.max()), 100.0 * float((diff == 0).mean())
            torch.backends.quantized.engine = engine
            tp, tc = [], []
            for _ in range(args.rounds):
                tp.append(torch_latency(ts, x, args.threads, args.runs))
                tc.append(cuvil_latency(args.bin, lib, xs, args.threads, args.runs))
            p, c = float(np.median(tp)), float(np.median(tc))
            print(f"{name:14s} {engine:8s} {exact:6.1f}% {off:6d} {p:11.2f} {c:9.2f} {p / c:8.2f}x", flush=True)


if __name__ == "__main__":
    sys.exit(main())
