#!/usr/bin/env python3
"""cuvil-quantize end to end, checked against PyTorch's float outputs.

A small residual CNN and a small transformer-style MLP (linear layers on
3-D inputs) are scripted with PyTorch; calibration samples are written as
.npz files and validation samples as sub-directories of input0.npy. Then:
  * every method (minmax, percentile, entropy, mse) quantizes both models,
    the gate is met, the JSON report lists the layers in priority order,
    and the quantized IR compiled by cuvil-export and run by cuvil-run is
    within --max-l2 of PyTorch's own float output (measured here, not by
    the tool);
  * a gate met only by falling back (--max-l2 1e-7 --fallback fp32)
    records the fallbacks in the report and the precision in the IR; a gate
    that cannot be met (--max-l2 1e-12 --fallback fp16) exits 1 with the
    report written and no output;
  * a calibration table is written, then read (calibration skipped, the
    same output byte for byte), and a table from another graph or a corrupt
    one is refused;
  * bad input: an empty directory, a NaN sample, a sample of the wrong
    shape, fewer samples than asked, an unwritable report path: each a
    clear message and a non-zero exit, with no output written;
  * the HTML report renders in headless Chromium with every chart laid out
    (skipped visibly when chromium is not installed).

    /usr/bin/python3 test/quantize-tool/quantize_tool.py --bin build/bin --work-dir /tmp/q
Exit status: 0 pass, 1 a failure, 77 PyTorch is not importable.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit(77)

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)
        self.conv3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.conv2(x) + x)
        x = torch.nn.functional.hardtanh(self.conv3(x), 0.0, 6.0)
        x = torch.relu(self.dw(x))
        x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


class TwoInputs(nn.Module):
    """Token ids (i64, through an embedding) and float features."""
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(8, 32)
        self.c = nn.Linear(32, 4)

    def forward(self, ids, x):
        h = self.emb(ids).mean(1)
        return self.c(torch.relu(self.a(h) + self.b(x)))


class NoLayers(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


class ArgMax(nn.Module):
    """Only an integer output: nothing for the gate to compare."""
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 4)

    def forward(self, x):
        return torch.argmax(self.l(x), 1)


class TokenMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(32, 64)
        self.down = nn.Linear(64, 32)
        self.norm = nn.LayerNorm(32)
        self.head = nn.Linear(32, 8)

    def forward(self, x):
        h = self.down(torch.nn.functional.gelu(self.up(x)))
        return torch.softmax(self.head(self.norm(x + h)), -1)


class LoopRefine(nn.Module):
    """A layer before a data-dependent loop and one inside it (RELIABILITY F6:
    control flow at calibration)."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(16, 16)
        self.inner = nn.Linear(16, 16)

    def forward(self, x):
        y = torch.relu(self.first(x))
        n = 0
        while bool(y.abs().max() > 0.5) and n < 6:
            y = torch.tanh(self.inner(y)) * 0.5
            n += 1
        return y


def make_model(work, name, module, shape):
    torch.manual_seed(0)
    m = module().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics, folded by the compiler
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.2, 0.2)
                mod.running_var.uniform_(0.5, 1.5)
    path = os.path.join(work, name + ".pt")
    torch.jit.script(m).save(path)
    rng = np.random.RandomState(1)
    cal = os.path.join(work, name + "_cal")
    val = os.path.join(work, name + "_val")
    for d in (cal, val):
        os.makedirs(d, exist_ok=True)
    for i in range(8):
        np.savez(os.path.join(cal, f"sample{i:02d}.npz"), input0=rng.randn(*shape).astype(np.float32))
    refs = []
    for i in range(3):
        x = rng.randn(*shape).astype(np.float32)
        os.makedirs(os.path.join(val, f"s{i}"), exist_ok=True)
        np.save(os.path.join(val, f"s{i}", "input0.npy"), x)
        with torch.no_grad():
            refs.append((x, m(torch.from_numpy(x)).numpy()))
    return path, cal, val, refs


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def compiled_l2(args, work, qpath, refs):
    """Relative L2 of the compiled quantized model against PyTorch's float outputs."""
    lib = qpath + ".so"
    r = run([os.path.join(args.bin, "cuvil-export"), "--model", qpath, "--target", "x86_64", "-o", lib])
    if r.returncode != 0:
        print(r.stderr)
        return float("inf")
    num = den = 0.0
    for i, (x, ref) in enumerate(refs):
        xin = os.path.join(work, f"x{i}.npy")
        np.save(xin, x)
        outdir = os.path.join(work, f"out{i}")
        r = run([os.path.join(args.bin, "cuvil-run"), lib, "--input", xin, "--output-dir", outdir])
        if r.returncode != 0:
            print(r.stderr)
            return float("inf")
        got = np.load(os.path.join(outdir, "output0.npy"))
        num += float(np.sum((got.astype(np.float64) - ref) ** 2))
        den += float(np.sum(ref.astype(np.float64) ** 2))
    return (num / den) ** 0.5


def quantize(args, *extra):
    return run([os.path.join(args.bin, "cuvil-quantize"), "--no-progress", *extra])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    models = {
        "cnn": make_model(work, "cnn", SmallCNN, (1, 3, 16, 16)),
        "mlp": make_model(work, "mlp", TokenMLP, (2, 5, 32)),
    }

    # Every method on both models: the gate, the report, PyTorch's own check.
    for name, (model, cal, val, refs) in models.items():
        for method in ("minmax", "percentile", "entropy", "mse"):
            out = os.path.join(work, f"{name}_{method}.mlirbc")
            rep = os.path.join(work, f"{name}_{method}.json")
            r = quantize(args, "--model", model, "--calibration-data", cal, "--validation-data", val,
                         "--method", method, "--output", out, "--report", rep)
            check(r.returncode == 0, f"{name} {method}: exit 0 ({r.stderr.strip()[-300:]})")
            if r.returncode != 0:
                continue
            report = json.load(open(rep))
            layers = report["layers"]
            check([l["priority"] for l in layers] == list(range(1, len(layers) + 1)),
                  f"{name} {method}: layers listed in priority order")
            l2s = [l["sensitivity"]["alone_int8"]["relative_l2"] for l in layers]
            check(all(a >= b for a, b in zip(l2s, l2s[1:])),
                  f"{name} {method}: priority follows the sensitivity {['%.2e' % v for v in l2s]}")
            check(report["gate"]["passed"] and report["gate"]["after_fallback"]["relative_l2"] <= 0.01,
                  f"{name} {method}: gate met, relative L2 {report['gate']['after_fallback']['relative_l2']:.5f}")
            check(all(l["precision"] in ("int8", "fp16", "bf16", "fp32") for l in layers),
                  f"{name} {method}: every layer has a precision")
            check(report["method"] == method and len(report["tensors"]) > 0,
                  f"{name} {method}: method and tensors recorded")
            l2 = compiled_l2(args, work, out, refs)
            check(l2 <= 0.01, f"{name} {method}: compiled int8 model vs PyTorch float: relative L2 {l2:.5f}")
            int8 = sum(l["precision"] == "int8" for l in layers)
            print(f"     {name} {method}: {int8}/{len(layers)} layers int8")

    model, cal, val, refs = models["cnn"]
    # relu(conv2(x) + x): the residual sum is an int8 layer of its own (its
    # output is what conv3 reads), a quant.add with the relu folded in.
    report = json.load(open(os.path.join(work, "cnn_percentile.json")))
    adds = [l for l in report["layers"] if l["op"] == "add"]
    check(len(adds) == 1 and adds[0]["name"] == "add" and adds[0]["precision"] == "int8",
          f"cnn: the residual add is a layer of the report ({[(l['name'], l['precision']) for l in adds]})")
    r = run([os.path.join(args.bin, "cuvil-opt"), os.path.join(work, "cnn_percentile.mlirbc")])
    check(r.returncode == 0 and "cuvil.quant.add" in r.stdout and "cuvil.math.add" not in r.stdout,
          "cnn: the residual add runs as cuvil.quant.add")
    # The int8 kernels: the compiled library equals the reference evaluator
    # bit for bit, and so does the aarch64 library under qemu.
    qir = os.path.join(work, "cnn_percentile.mlirbc")
    x0 = os.path.join(val, "s0", "input0.npy")
    outs = {}
    r = run([os.path.join(args.bin, "cuvil-run"), qir, "--input", x0, "--output-dir", os.path.join(work, "eval")])
    check(r.returncode == 0, "int8 IR runs on the reference evaluator")
    outs["evaluator"] = os.path.join(work, "eval", "output0.npy")
    kr = os.path.join(work, "kernels.json")
    r = run([os.path.join(args.bin, "cuvil-export"), "--model", qir, "--target", "x86_64", "-o",
             os.path.join(work, "k.so"), "--kernel-report", kr])
    kernels = [k["kernel"] for k in json.load(open(kr))["kernels"]] if r.returncode == 0 else []
    r = run([os.path.join(args.bin, "cuvil-run"), os.path.join(work, "k.so"), "--input", x0,
             "--output-dir", os.path.join(work, "x86")])
    check(r.returncode == 0, "x86_64 int8 library runs")
    outs["x86_64"] = os.path.join(work, "x86", "output0.npy")
    check("qconv2d" in kernels and "qlinear" in kernels, f"int8 layers run on the int8 kernels ({kernels})")
    qemu = shutil.which("qemu-aarch64")
    arm_run = os.path.join(args.bin, "aarch64", "cuvil-run")
    if qemu and os.path.exists(arm_run):
        lib = os.path.join(work, "k_aarch64.so")
        r = run([os.path.join(args.bin, "cuvil-export"), "--model", qir, "--target", "aarch64", "-o", lib])
        r2 = run([qemu, "-L", "/usr/aarch64-linux-gnu", arm_run, lib, "--input", x0, "--output-dir",
                  os.path.join(work, "arm")]) if r.returncode == 0 else r
        check(r2.returncode == 0, f"aarch64 int8 library runs under qemu ({r2.stderr.strip()[-200:]})")
        outs["aarch64"] = os.path.join(work, "arm", "output0.npy")
    else:
        print("SKIP aarch64 int8 library: qemu-aarch64 or the aarch64 cuvil-run is missing")
    if all(os.path.exists(p) for p in outs.values()):
        ref = np.load(outs["evaluator"])
        for name, p in outs.items():
            if name != "evaluator":
                check(np.array_equal(np.load(p), ref), f"int8 outputs: {name} equals the reference evaluator")

    # A gate met only by falling back.
    out = os.path.join(work, "strict.mlir")
    rep = os.path.join(work, "strict.json")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", out, "--report", rep,
                 "--max-l2", "1e-7", "--fallback", "fp32")
    check(r.returncode == 0, f"strict gate with fp32 fallback: exit 0 ({r.stderr.strip()[-300:]})")
    if r.returncode == 0:
        report = json.load(open(rep))
        check(len(report["fallbacks"]) > 0 and report["gate"]["before_fallback"]["relative_l2"] > 1e-7,
              f"strict gate: {len(report['fallbacks'])} fallback(s) taken and reported")
        text = open(out).read()
        check('cuvil.precision = "fp32"' in text, "strict gate: fp32 precision recorded in the IR")
        check(all(f["reason"] for f in report["fallbacks"]), "strict gate: every fallback has a reason")
        check(not any("--kl-threshold" in f["reason"] for f in report["fallbacks"]),
              "strict gate, default --kl-threshold 0.02: layers fall back in priority order, none for KL")
    # --kl-threshold: with 0, every layer whose output KL alone in int8 is
    # above it falls back at once, for that reason.
    rep = os.path.join(work, "kl0.json")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", os.path.join(work, "kl0.mlirbc"),
                 "--report", rep, "--max-l2", "1e-7", "--fallback", "fp32", "--kl-threshold", "0")
    check(r.returncode == 0, f"--kl-threshold 0: exit 0 ({r.stderr.strip()[-200:]})")
    if r.returncode == 0:
        report = json.load(open(rep))
        kl_layers = [l["name"] for l in report["layers"] if l["kl"] and l["kl"] > 0]
        reasons = {f["layer"]: f["reason"] for f in report["fallbacks"]}
        check(kl_layers and all("--kl-threshold 0" in reasons.get(n, "") for n in kl_layers),
              f"--kl-threshold 0: every layer with KL > 0 falls back for its KL ({reasons})")
        first = [s for s in report["steps"] if s["fell_back"]][0]["fell_back"]
        check(all(n in first for n in kl_layers), "--kl-threshold 0: they fall back in the first step, together")
    for value in ("-1", "abc"):
        r = quantize(args, "--model", model, "--calibration-data", cal, "--output",
                     os.path.join(work, "bad.mlirbc"), "--kl-threshold", value)
        check(r.returncode == 2 and "--kl-threshold" in r.stderr and not os.path.exists(os.path.join(work, "bad.mlirbc")),
              f"--kl-threshold {value}: usage error ({r.stderr.strip()[-120:]})")

    # --backend: x86 keeps weights symmetric on [-127, 127] (scale max|w| / 127),
    # qnnpack and onednn use [-128, 127] (max|w| / 127.5).
    def weight_scales(path):
        text = run([os.path.join(args.bin, "cuvil-opt"), path]).stdout
        m = re.search(r"cuvil\.quant\.conv2d .*?weight_params = #cuvil\.quant<scale = \[([^\]]*)\]", text)
        return [float(v) for v in m.group(1).split(",")] if m else []
    scales = {}
    for backend in ("x86", "qnnpack", "onednn"):
        out = os.path.join(work, f"backend_{backend}.mlirbc")
        rep = os.path.join(work, f"backend_{backend}.json")
        r = quantize(args, "--model", model, "--calibration-data", cal, "--output", out, "--report", rep,
                     "--backend", backend)
        check(r.returncode == 0 and json.load(open(rep))["backend"] == backend,
              f"--backend {backend}: quantized, recorded in the report ({r.stderr.strip()[-120:]})")
        scales[backend] = weight_scales(out) if r.returncode == 0 else []
    for backend in ("qnnpack", "onednn"):
        ok = scales["x86"] and len(scales[backend]) == len(scales["x86"]) and all(
            abs(a / b - 127.5 / 127) < 1e-5 for a, b in zip(scales["x86"], scales[backend]))
        check(ok, f"--backend {backend}: weight scales are max|w| / 127.5, x86's max|w| / 127")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", os.path.join(work, "bad.mlirbc"),
                 "--backend", "avx2")
    check(r.returncode == 2 and "--backend" in r.stderr and "x86" in r.stderr
          and not os.path.exists(os.path.join(work, "bad.mlirbc")),
          f"--backend avx2: usage error naming the choices ({r.stderr.strip()[-160:]})")

    # A gate that cannot be met.
    out = os.path.join(work, "impossible.mlirbc")
    rep = os.path.join(work, "impossible.json")
    html = os.path.join(work, "impossible.html")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", out, "--report", rep,
                 "--html", html, "--max-l2", "1e-12", "--fallback", "fp16")
    check(r.returncode == 1 and "cannot be met" in r.stderr, f"impossible gate: exit 1 ({r.stderr.strip()[-200:]})")
    check(os.path.exists(rep) and not json.load(open(rep))["gate"]["passed"], "impossible gate: report written")
    check(not os.path.exists(out), "impossible gate: no output written")

    # Calibration tables.
    table = os.path.join(work, "cnn.textproto")
    out1, out2 = os.path.join(work, "t1.mlirbc"), os.path.join(work, "t2.mlirbc")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", out1,
                 "--calibration-table", table)
    check(r.returncode == 0 and os.path.exists(table), "table written")
    check(os.path.exists(table) and "graph_hash" in open(table).read() and "scale" in open(table).read(),
          "table is a text CalibrationTable")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", out2,
                 "--calibration-table", table, "--log-level", "info")
    check(r.returncode == 0 and "calibration skipped" in r.stderr, "table read, calibration skipped")
    check(os.path.exists(out2) and open(out1, "rb").read() == open(out2, "rb").read(),
          "same output from the table, byte for byte")
    mlp_model = models["mlp"][0]
    r = quantize(args, "--model", mlp_model, "--calibration-data", models["mlp"][1],
                 "--output", os.path.join(work, "foreign.mlirbc"), "--calibration-table", table)
    check(r.returncode == 1 and "another graph" in r.stderr, f"foreign table refused ({r.stderr.strip()[-200:]})")
    corrupt = os.path.join(work, "corrupt.textproto")
    open(corrupt, "w").write("version: 1\ngraph_hash: \"x\"\ntensors { name: \"a\" scale: oops }\n")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", os.path.join(work, "c.mlirbc"),
                 "--calibration-table", corrupt)
    check(r.returncode == 1 and "corrupt.textproto" in r.stderr, f"corrupt table refused ({r.stderr.strip()[-200:]})")
    badbin = os.path.join(work, "corrupt.pb")
    open(badbin, "wb").write(b"\xff\xff\xff\xff garbage")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", os.path.join(work, "c.mlirbc"),
                 "--calibration-table", badbin)
    check(r.returncode == 1 and "corrupt.pb" in r.stderr, f"corrupt binary table refused ({r.stderr.strip()[-200:]})")

    # Two inputs, one of them i64 token ids: shapes and dtypes from the samples.
    torch.manual_seed(0)
    two = TwoInputs().eval()
    two_pt = os.path.join(work, "two.pt")
    torch.jit.script(two).save(two_pt)
    two_cal = os.path.join(work, "two_cal")
    os.makedirs(two_cal)
    rng = np.random.RandomState(3)
    for i in range(6):
        np.savez(os.path.join(two_cal, f"{i}.npz"), input0=rng.randint(0, 50, (3, 5)).astype(np.int64),
                 input1=rng.randn(3, 8).astype(np.float32))
    rep = os.path.join(work, "two.json")
    r = quantize(args, "--model", two_pt, "--calibration-data", two_cal, "--output",
                 os.path.join(work, "two.mlirbc"), "--report", rep)
    check(r.returncode == 0 and json.load(open(rep))["gate"]["passed"],
          f"two inputs (i64 ids and f32): quantized ({r.stderr.strip()[-200:]})")
    if r.returncode == 0:
        layers = {l["name"]: l for l in json.load(open(rep))["layers"]}
        # a(h) + b(x) is a residual-style sum that c reads: an int8 add,
        # which the two linear layers feed in ui8; c's output only a float
        # return reads: its sums stay f32.
        adds = [l for l in layers.values() if l["op"] == "add"]
        check(len(adds) == 1 and adds[0]["precision"] == "int8" and adds[0]["output"]["dtype"] == "ui8"
              and adds[0]["rhs"]["dtype"] == "ui8", f"two inputs: the sum quantized as an add layer ({adds})")
        check(layers["a"]["output"]["dtype"] == "ui8" and layers["b"]["output"]["dtype"] == "ui8",
              "two inputs: the layers the int8 add reads have ui8 outputs")
        check(layers["c"]["output"]["dtype"] == "f32", "layers no int8 layer reads keep f32 outputs")
    one_array = os.path.join(work, "one_array")
    os.makedirs(one_array)
    np.savez(os.path.join(one_array, "a.npz"), input0=rng.randint(0, 50, (3, 5)).astype(np.int64))
    r = quantize(args, "--model", two_pt, "--calibration-data", one_array, "--output",
                 os.path.join(work, "bad.mlirbc"))
    check(r.returncode != 0 and "a.npz" in r.stderr and not os.path.exists(os.path.join(work, "bad.mlirbc")),
          f"a sample with fewer arrays than inputs: named ({r.stderr.strip()[-200:]})")
    nolayers = os.path.join(work, "nolayers.pt")
    torch.jit.script(NoLayers()).save(nolayers)
    r = quantize(args, "--model", nolayers, "--calibration-data", cal, "--output", os.path.join(work, "bad.mlirbc"))
    check(r.returncode == 1 and "nothing to quantize" in r.stderr, f"no layers to quantize ({r.stderr.strip()[-120:]})")

    # Data-dependent control flow: the layer before the loop is quantized,
    # the one inside it (run a data-dependent number of times) stays float,
    # and the compiled model passes the gate against PyTorch.
    loop_pt, loop_cal, loop_val, loop_refs = make_model(work, "loop", LoopRefine, (4, 16))
    out = os.path.join(work, "loop.mlirbc")
    rep = os.path.join(work, "loop.json")
    r = quantize(args, "--model", loop_pt, "--calibration-data", loop_cal, "--validation-data", loop_val,
                 "--output", out, "--report", rep)
    check(r.returncode == 0, f"a model with a data-dependent loop quantizes ({r.stderr.strip()[-300:]})")
    check("inside data-dependent control flow" in r.stderr and "stays float" in r.stderr,
          "loop: a warning names the layer left in float")
    if r.returncode == 0:
        precisions = {l["name"]: l["precision"] for l in json.load(open(rep))["layers"]}
        check(list(precisions) == ["first"],
              f"loop: the layer before the loop is a layer (int8 or its fallback), the one inside it "
              f"stays float ({precisions})")
        l2 = compiled_l2(args, work, out, loop_refs)
        check(l2 <= 0.01, f"loop: compiled quantized model within the gate of PyTorch (relative L2 {l2:.2e})")

    argmax = os.path.join(work, "argmax.pt")
    torch.jit.script(ArgMax().eval()).save(argmax)
    argmax_cal = os.path.join(work, "argmax_cal")
    os.makedirs(argmax_cal)
    np.savez(os.path.join(argmax_cal, "a.npz"), input0=rng.randn(3, 8).astype(np.float32))
    r = quantize(args, "--model", argmax, "--calibration-data", argmax_cal, "--output", os.path.join(work, "bad.mlirbc"))
    check(r.returncode == 1 and "no float32 output" in r.stderr, f"no float output to gate on ({r.stderr.strip()[-120:]})")

    # Bad input.
    def bad(label, extra, code, needle, out_name="bad.mlirbc"):
        out = os.path.join(work, out_name)
        r = quantize(args, "--model", model, "--output", out, *extra)
        check(r.returncode == code and needle in r.stderr and not os.path.exists(out),
              f"{label}: exit {r.returncode} ({r.stderr.strip()[-200:]})")
    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    bad("empty calibration directory", ["--calibration-data", empty], 1, "holds no samples")
    nan_dir = os.path.join(work, "nan")
    os.makedirs(nan_dir)
    x = np.zeros((1, 3, 16, 16), np.float32)
    x[0, 1, 2, 3] = np.nan
    np.savez(os.path.join(nan_dir, "a.npz"), input0=x)
    bad("NaN sample", ["--calibration-data", nan_dir], 1, "a.npz")
    shape_dir = os.path.join(work, "shape")
    for i, shape in enumerate([(1, 3, 16, 16), (1, 3, 8, 8)]):
        os.makedirs(os.path.join(shape_dir, f"s{i}"))
        np.save(os.path.join(shape_dir, f"s{i}", "input0.npy"), np.ones(shape, np.float32))
    bad("wrong shape", ["--calibration-data", shape_dir], 1, "s1")
    bad("wrong shape with --input-shape", ["--calibration-data", shape_dir, "--input-shape", "0=1x3x8x8xf32"],
        1, "s0")
    dtype_dir = os.path.join(work, "dtype")
    os.makedirs(dtype_dir)
    np.savez(os.path.join(dtype_dir, "a.npz"), input0=np.zeros((1, 3, 16, 16), np.float64))
    bad("wrong dtype", ["--calibration-data", dtype_dir], 1, "a.npz")
    bad("fewer samples than asked", ["--calibration-data", cal, "--samples", "20"], 1, "fewer than")
    bad("unwritable report", ["--calibration-data", cal, "--report", "/nonexistent/dir/r.json"], 3, "r.json")
    bad("missing directory", ["--calibration-data", os.path.join(work, "nope")], 3, "nope")

    # The HTML report in a real browser.
    html = os.path.join(work, "cnn.html")
    r = quantize(args, "--model", model, "--calibration-data", cal, "--output", os.path.join(work, "h.mlirbc"),
                 "--method", "entropy", "--html", html, "--max-l2", "0.002")
    check(r.returncode == 0 and os.path.exists(html), "HTML report written")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP HTML report in the browser: chromium is not installed (scripts/setup.sh installs it)")
    elif os.path.exists(html):
        r = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 # A profile of its own: two headless browsers sharing the
                 # default one (ctest -j runs both report tests) collide.
                 "--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=work), "--dump-dom",
                 "file://" + os.path.abspath(html)], timeout=120)
        dom = r.stdout
        check(r.returncode == 0 and 'id="render-check">rendered ' in dom,
              f"HTML report renders in chromium with every chart laid out "
              f"({dom[dom.find('render-check'):][:60] if 'render-check' in dom else r.stderr[-200:]})")
        check(dom.count("<svg") >= 3, "HTML report has the sensitivity, steps and histogram charts")

    # Interrupted (SIGINT, then SIGTERM) while it compiles and calibrates:
    # exit 130 with a message, no output, and nothing left in the
    # temporary directory (the work libraries and their directory).
    import signal
    import time
    for sig in (signal.SIGINT, signal.SIGTERM):
        tmp = os.path.join(work, f"tmp-{sig.name}")
        os.makedirs(tmp)
        out = os.path.join(work, f"interrupted-{sig.name}.mlirbc")
        p = subprocess.Popen([os.path.join(args.bin, "cuvil-quantize"), "--no-progress", "--model", model,
                              "--calibration-data", cal, "--output", out],
                             env=dict(os.environ, TMPDIR=tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        # Once its work directory exists it is compiling its libraries.
        deadline = time.time() + 30
        while not os.listdir(tmp) and p.poll() is None and time.time() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)
        if p.poll() is not None:
            print(f"SKIP {sig.name}: cuvil-quantize finished before the signal")
            continue
        p.send_signal(sig)
        _, err = p.communicate(timeout=60)
        check(p.returncode == 130 and "interrupted" in err and not os.path.exists(out) and not os.listdir(tmp),
              f"{sig.name}: exit {p.returncode}, no output, nothing left in TMPDIR "
              f"({os.listdir(tmp)}; {err.strip()[-120:]})")

    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
