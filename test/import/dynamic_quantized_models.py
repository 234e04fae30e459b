#!/usr/bin/env python3
"""Models PyTorch quantized dynamically (torch.ao.quantization.quantize_dynamic:
int8 weights, each layer's input quantized by its own range on every call),
imported by cuvil-import and compared with PyTorch's outputs.

The models, built here under each engine (qnnpack, onednn): an LSTM
classifier (two layers, batch first), a bidirectional GRU tagger, cell
modules stepped by hand (LSTMCell, GRUCell, RNNCell tanh/relu), and a
BERT-style encoder written with nn.Linear projections (attention, padding
mask, feed-forward, LayerNorm; the way Hugging Face's encoders are
quantized), each saved traced+frozen and scripted, run by the reference
evaluator and compiled for x86_64 (and aarch64 under qemu where
--aarch64 names the model and qemu is installed).

The outputs are float. Each dynamically quantized layer rounds its input to
the grid it chooses on every call, so a float difference of an ulp before
a layer (PyTorch's vectorized tanh against Cuvil's, say) may move one input
by one step of that grid: the criterion is a relative error (the largest
difference over the largest output) of at most --max-rel, and the share of
outputs PyTorch computes identically is printed.

    /usr/bin/python3 test/import/dynamic_quantized_models.py --bin build/bin --work /tmp/dq
Exit status: 0 all within the criterion, 1 a difference, 77 no PyTorch.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import warnings

# Before torch loads glog: QNNPACK warns that it ignores reduce_range on
# every dynamically quantized call.
os.environ.setdefault("GLOG_minloglevel", "2")

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"SKIPPED: PyTorch not importable ({e})")
    sys.exit(77)

warnings.filterwarnings("ignore")


class LstmClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.fc = nn.Linear(32, 5)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return self.fc(y[:, -1]) + h.sum(0).mean() + c.mean()


class GruTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(12, 24, bidirectional=True)
        self.fc = nn.Linear(48, 6)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.fc(torch.relu(y))


class Cells(nn.Module):
    """Cell modules stepped by hand (a decoder loop): LSTMCell, GRUCell and
    RNNCells with tanh and relu."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTMCell(8, 12)
        self.gru = nn.GRUCell(12, 10)
        self.tanh = nn.RNNCell(10, 6)
        self.relu = nn.RNNCell(6, 4, nonlinearity="relu")

    def forward(self, x):
        h = torch.zeros(x.size(1), 12)
        c = torch.zeros(x.size(1), 12)
        g = torch.zeros(x.size(1), 10)
        outs = []
        for t in range(x.size(0)):
            h, c = self.lstm(x[t], (h, c))
            g = self.gru(h, g)
            outs.append(self.relu(self.tanh(g)))
        return torch.stack(outs)


class EncoderLayer(nn.Module):
    """Self-attention with separate q/k/v/o projections, a padding mask,
    GELU feed-forward and post-LayerNorm (BERT's layer)."""

    def __init__(self, d=64, heads=4, ff=128):
        super().__init__()
        self.heads, self.dk = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def split(self, y, b: int, t: int):
        return y.view(b, t, self.heads, self.dk).transpose(1, 2)

    def forward(self, x, mask):
        b, t, d = x.shape
        q, k, v = self.split(self.q(x), b, t), self.split(self.k(x), b, t), self.split(self.v(x), b, t)
        s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.dk)
        s = s.masked_fill(mask[:, None, None, :] == 0, -1e4)
        a = torch.matmul(torch.softmax(s, -1), v).transpose(1, 2).reshape(b, t, d)
        x = self.n1(x + self.o(a))
        return self.n2(x + self.ff2(torch.nn.functional.gelu(self.ff1(x))))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(32, 64)
        self.layers = nn.ModuleList([EncoderLayer(), EncoderLayer()])
        self.head = nn.Linear(64, 3)

    def forward(self, x, mask):
        h = self.embed(x)
        for layer in self.layers:
            h = layer(h, mask)
        return self.head(h[:, 0])


def build(name):
    torch.manual_seed(0)
    if name == "lstm":
        m, inputs = LstmClassifier(), [torch.randn(2, 7, 16)]
        shapes = ["0=2x7x16xf32"]
    elif name == "gru":
        m, inputs = GruTagger(), [torch.randn(5, 3, 12)]
        shapes = ["0=5x3x12xf32"]
    elif name == "cells":
        m, inputs = Cells(), [torch.randn(4, 2, 8)]
        shapes = ["0=4x2x8xf32"]
    else:
        m = Encoder()
        mask = torch.ones(2, 9, dtype=torch.int64)
        mask[1, 6:] = 0
        inputs = [torch.randn(2, 9, 32), mask]
        shapes = ["0=2x9x32xf32", "1=2x9xi64"]
    m.eval()
    q = torch.ao.quantization.quantize_dynamic(
        m, {nn.Linear, nn.LSTM, nn.GRU, nn.LSTMCell, nn.GRUCell, nn.RNNCell}, dtype=torch.qint8)
    return q, inputs, shapes


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {p.returncode}): {p.stderr.strip()[-1500:]}")
    return p


def check(label, got, want, max_rel):
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    scale = float(np.abs(want).max()) or 1.0
    rel = float(diff.max(initial=0)) / scale
    exact = float((diff == 0).mean())
    ok = got.shape == want.shape and np.isfinite(got).all() and rel <= max_rel
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {want.size} outputs, {100 * exact:.1f}% identical, "
          f"largest difference {rel:.2e} of the largest output", flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="lstm,gru,cells,encoder")
    ap.add_argument("--engines", default="qnnpack,onednn")
    ap.add_argument("--compile", default="lstm,gru,cells,encoder", help="models also compiled for x86_64")
    ap.add_argument("--aarch64", default="", help="models (qnnpack) also compiled for aarch64, run under qemu")
    ap.add_argument("--max-rel", type=float, default=1e-3)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    tool = lambda t: os.path.join(args.bin, t)
    qemu = shutil.which("qemu-aarch64")
    run_aarch64 = os.path.join(args.bin, "aarch64", "cuvil-run")
    failures = 0
    for name in [m for m in args.models.split(",") if m]:
        for engine in args.engines.split(","):
            if engine not in torch.backends.quantized.supported_engines:
                print(f"skip {name} {engine}: not an engine of this PyTorch")
                continue
            torch.backends.quantized.engine = engine
            model, inputs, shapes = build(name)
            paths = []
            for i, x in enumerate(inputs):
                paths.append(os.path.join(args.work, f"input{i}.npy"))
                np.save(paths[-1], x.numpy())
            with torch.no_grad():
                want = model(*inputs).numpy()
                forms = [("traced+frozen", torch.jit.freeze(torch.jit.trace(model, tuple(inputs)))),
                         ("scripted", torch.jit.script(model))]
            for form, ts in forms:
                label = f"{name} {engine} {form}"
                pt = os.path.join(args.work, f"{name}_{engine}_{form.split('+')[0]}.pt")
                ts.save(pt)
                shape_args = [a for s in shapes for a in ("--input-shape", s)]
                inputs_args = [a for p in paths for a in ("-i", p)]
                try:
                    ir = pt[:-3] + ".mlirbc"
                    run([tool("cuvil-import"), pt, "--quantized-engine", engine, *shape_args, "-o", ir],
                        f"{label}: cuvil-import")
                    out = os.path.join(args.work, "out")
                    run([tool("cuvil-run"), ir, *inputs_args, "-o", out, "-q"], f"{label}: evaluator")
                    failures += not check(label + " (evaluator)", np.load(os.path.join(out, "output0.npy")),
                                          want, args.max_rel)
                    targets = []
                    if name in args.compile.split(","):
                        targets.append("x86_64")
                    if name in args.aarch64.split(",") and engine == "qnnpack":
                        if qemu and os.path.exists(run_aarch64):
                            targets.append("aarch64")
                        else:
                            print(f"skip {label} aarch64: qemu-aarch64 or the aarch64 cuvil-run is missing")
                    for target in targets:
                        lib = pt[:-3] + f"_{target}.so"
                        cmd = [tool("cuvil-export"), "--model", pt, "--target", target, *shape_args, "-o", lib]
                        if target == "x86_64":
                            cmd += ["--quantized-engine", engine]
                        run(cmd, f"{label}: cuvil-export --target {target}")
                        runner = [tool("cuvil-run")] if target == "x86_64" else \
                            [qemu, "-L", "/usr/aarch64-linux-gnu", run_aarch64]
                        run(runner + [lib, *inputs_args, "-o", out, "-q"], f"{label}: {target} library")
                        failures += not check(f"{label} ({target})", np.load(os.path.join(out, "output0.npy")),
                                              want, args.max_rel)
                except RuntimeError as e:
                    print(f"FAIL {label}: {e}", flush=True)
                    failures += 1
    print("all dynamically quantized models as PyTorch computes them" if not failures
          else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
