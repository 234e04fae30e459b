#!/usr/bin/env python3
"""--target npu on real models, checked against the CPU's int8 libraries.

  * resnet18 and mobilenet_v2, quantized by PyTorch (eager post-training
    quantization of torchvision's quantizable models, as
    test/import/quantized_models.py makes them) under the qnnpack and onednn
    engines, at 224x224: the NPU library's output equals the x86_64
    library's bit for bit;
  * a small int8 transformer (an encoder layer and a head, quantized by
    cuvil-quantize): its linear layers run on the NPU, attention, layer norm
    and softmax on the host, and the partition report names each host op
    with its reason; the output equals the x86_64 library's bit for bit;
  * simulated resnet18 (qnnpack): at least 70% MAC utilization over its
    convolution layers; with double buffering at least 90% of their DMA
    time hidden behind compute, against the figure of the same library
    built without it (--target-option double-buffering=0), which must be
    far lower; total cycles within 1.3x of the layers' roofline bounds,
    summed; the simulator runs the whole model in at most 2 s;
  * --npu-trace writes a trace (JSON) and a timeline (SVG) that parse;
  * a mixed-precision resnet18 (cuvil-quantize --fallback fp16: the layers
    the accuracy gate takes out of int8 run in FP16): its int8 and its FP16
    layers all run on the NPU (the FP16 ones on the array's FP16 mode), and
    its output is within half the gate's --max-l2 (relative L2) of the x86_64
    library's, same top class: FP16 sums are f32 in the NPU's own order
    (targets/NPU/ARCHITECTURE.md), so not bit for bit, and an f16 step can
    move a value across an int8 step in the layer after it.

    /usr/bin/python3 test/npu/npu_models.py --bin build/bin --work /tmp/npu
Exit status: 0 pass, 1 a failure, 77 no PyTorch.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"SKIPPED: PyTorch not importable ({e})")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "import"))
import quantized_models  # noqa: E402  (the zoo's quantization recipe)

FAILURES = []
SIZE = 224


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


def run(cmd, what, timeout=900):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[-2000:]}")
    return p


def export(args, model, target, out, extra=()):
    cmd = [os.path.join(args.bin, "cuvil-export"), "--model", model, "--target", target, "-o", out, *extra]
    run(cmd, f"cuvil-export --target {target} {os.path.basename(model)}")


def run_library(args, lib, x, out_dir, extra=()):
    cmd = [os.path.join(args.bin, "cuvil-run"), lib, "--input", x, "-o", out_dir, "-q", *extra]
    return run(cmd, f"cuvil-run {os.path.basename(lib)}")


def same_outputs(a_dir, b_dir):
    outs = sorted(f for f in os.listdir(a_dir) if f.startswith("output"))
    if not outs:
        return False, "no outputs"
    for f in outs:
        a, b = np.load(os.path.join(a_dir, f)), np.load(os.path.join(b_dir, f))
        if a.shape != b.shape or not np.array_equal(a, b):
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max() if a.shape == b.shape else "shape"
            return False, f"{f} differs (largest difference {diff})"
    return True, f"{len(outs)} output(s) equal"


def conv_figures(report):
    """Over the convolution layers: MAC utilization (their MACs over the
    array's peak for the time they own), the share of their DMA time that
    compute hid, and the whole run's cycles against the summed rooflines."""
    seg = report["segments"]
    layers = [l for s in seg for l in s["layers"]]
    conv = [l for l in layers if l["kind"].startswith("conv2d")]
    slots = seg[0]["config"]["array_k"] * seg[0]["config"]["array_n"]
    util = sum(l["macs"] for l in conv) / (slots * sum(l["cycles"] for l in conv))
    dma = sum(l["dma_cycles"] for l in conv)
    hidden = 1 - sum(l["dma_exposed"] for l in conv) / dma if dma else 1.0
    cycles = sum(s["cycles"] for s in seg)
    roofline = sum(l["roofline_cycles"] for l in layers)
    whole_hidden = 1 - sum(s["dma_exposed"] for s in seg) / max(1, sum(s["dma_busy"] for s in seg))
    return util, hidden, cycles / roofline, whole_hidden, cycles


def cnn(args, name, engine, x_path):
    work = os.path.join(args.work, f"{name}_{engine}")
    os.makedirs(work, exist_ok=True)
    quantized_models.SIZE = SIZE
    m, _ = quantized_models.quantized_model(name, engine, args.seed)
    pt = os.path.join(work, "model.pt")
    torch.jit.trace(m, torch.randn(1, 3, SIZE, SIZE)).save(pt)
    shape = ["--input-shape", f"0=1x3x{SIZE}x{SIZE}xf32", "--quantized-engine", engine]
    npu, cpu = os.path.join(work, "npu.so"), os.path.join(work, "cpu.so")
    part = os.path.join(work, "partition.json")
    export(args, pt, "npu", npu, shape + ["--npu-partition-report", part])
    export(args, pt, "x86_64", cpu, shape)
    trace = os.path.join(work, "trace.json")
    run_library(args, npu, x_path, os.path.join(work, "out_npu"), ["--npu-trace", trace])
    run_library(args, cpu, x_path, os.path.join(work, "out_cpu"))
    ok, what = same_outputs(os.path.join(work, "out_npu"), os.path.join(work, "out_cpu"))
    check(ok, f"{name} ({engine}): the NPU library equals the x86_64 int8 library bit for bit: {what}")
    placement = json.load(open(part))
    check(placement["segments"] >= 1 and placement["ops_on_npu"] > 0,
          f"{name} ({engine}): {placement['ops_on_npu']} ops on the NPU in {placement['segments']} segment(s), "
          f"{placement['ops_on_cpu']} on the host")
    with open(trace) as f:
        report = json.load(f)["cuvil"]
    util, hidden, ratio, whole, cycles = conv_figures(report)
    print(f"     {name} ({engine}): {cycles} cycles, convolution layers: MAC utilization {util:.1%}, "
          f"DMA hidden {hidden:.1%} (whole run {whole:.1%}), cycles / summed rooflines {ratio:.3f}")
    return work, pt, shape, npu, report


def resnet18_targets(args, work, pt, shape, npu, report, x_path):
    util, hidden, ratio, whole, cycles = conv_figures(report)
    check(util >= 0.70, f"resnet18: MAC utilization over the convolution layers {util:.1%} >= 70%")
    check(ratio <= 1.3, f"resnet18: total cycles {cycles} within 1.3x of the summed roofline bounds ({ratio:.3f}x)")
    single = os.path.join(work, "single.so")
    export(args, pt, "npu", single, shape + ["--target-option", "double-buffering=0"])
    strace = os.path.join(work, "single.json")
    run_library(args, single, x_path, os.path.join(work, "out_single"), ["--npu-trace", strace])
    ok, what = same_outputs(os.path.join(work, "out_single"), os.path.join(work, "out_npu"))
    check(ok, f"resnet18: the single-buffered library computes the same outputs: {what}")
    with open(strace) as f:
        s_util, s_hidden, s_ratio, s_whole, s_cycles = conv_figures(json.load(f)["cuvil"])
    print(f"     without double buffering: {s_cycles} cycles, DMA hidden {s_hidden:.1%} (whole run {s_whole:.1%}), "
          f"MAC utilization {s_util:.1%}")
    check(hidden >= 0.90 and s_hidden < hidden - 0.3,
          f"resnet18: double buffering hides {hidden:.1%} of the convolution layers' DMA time (>= 90%), "
          f"against {s_hidden:.1%} without it")
    check(cycles < s_cycles, f"resnet18: double buffering is faster ({cycles} < {s_cycles} cycles)")
    # The simulator's own speed: the median of three runs of the library.
    timing = os.path.join(work, "timing.json")
    run_library(args, npu, x_path, os.path.join(work, "out_timed"),
                ["--benchmark", "3", "--warmup", "1", "--json", timing])
    median = json.load(open(timing))["latency_ms"]["p50"]
    check(median <= 2000, f"resnet18: the simulator runs the model in {median:.0f} ms (<= 2000 ms)")
    svg = os.path.join(work, "timeline.svg")
    run_library(args, npu, x_path, os.path.join(work, "out_svg"), ["--npu-trace", svg])
    root = ET.parse(svg).getroot()
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    commands = sum(len(s["events"]) for s in report["segments"])
    check(len(rects) > commands, f"resnet18: the SVG timeline parses, {len(rects)} boxes for {commands} commands")


class TinyTransformer(nn.Module):
    def __init__(self, d=64, heads=4, ff=128):
        super().__init__()
        self.encoder = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        return self.head(self.encoder(x))


def transformer(args):
    work = os.path.join(args.work, "transformer")
    os.makedirs(os.path.join(work, "calibration"), exist_ok=True)
    torch.manual_seed(args.seed)
    m = TinyTransformer().eval()
    pt = os.path.join(work, "model.pt")
    torch.jit.trace(m, torch.randn(1, 16, 64), check_trace=False).save(pt)
    for i in range(8):
        np.savez(os.path.join(work, "calibration", f"s{i}.npz"), input0=torch.randn(1, 16, 64).numpy())
    x = os.path.join(work, "x.npy")
    np.save(x, torch.randn(1, 16, 64).numpy())
    q = os.path.join(work, "model.int8.mlirbc")
    run([os.path.join(args.bin, "cuvil-quantize"), "--model", pt, "--input-shape", "0=1x16x64xf32",
         "--calibration-data", os.path.join(work, "calibration"), "--output", q, "--max-l2", "0.05"],
        "cuvil-quantize (transformer)")
    npu, cpu, part = (os.path.join(work, n) for n in ("npu.so", "cpu.so", "partition.json"))
    export(args, q, "npu", npu, ["--npu-partition-report", part])
    export(args, q, "x86_64", cpu)
    run_library(args, npu, x, os.path.join(work, "out_npu"), ["--npu-trace", os.path.join(work, "trace.json")])
    run_library(args, cpu, x, os.path.join(work, "out_cpu"))
    ok, what = same_outputs(os.path.join(work, "out_npu"), os.path.join(work, "out_cpu"))
    check(ok, f"int8 transformer: the NPU library equals the x86_64 int8 library bit for bit: {what}")
    placement = json.load(open(part))
    npu_ops = [o for o in placement["ops"] if o["placement"] == "npu"]
    host = {o["op"]: o["reason"] for o in placement["ops"] if o["placement"] == "cpu"}
    check(sum(o["op"] == "cuvil.quant.linear" for o in npu_ops) >= 4,
          f"int8 transformer: its int8 linear layers run on the NPU ({len(npu_ops)} ops)")
    for op in ("cuvil.act.softmax", "cuvil.norm.layer_norm", "cuvil.gemm.batch_matmul"):
        check(op in host and host[op], f"int8 transformer: {op} runs on the host, reason: {host.get(op)!r}")


def mixed_fp16(args):
    work = os.path.join(args.work, "mixed_fp16")
    os.makedirs(os.path.join(work, "calibration"), exist_ok=True)
    import torchvision
    torch.manual_seed(args.seed + 7)
    size = 112
    m = torchvision.models.resnet18().eval()
    pt = os.path.join(work, "model.pt")
    torch.jit.trace(m, torch.randn(1, 3, size, size)).save(pt)
    for i in range(4):
        np.savez(os.path.join(work, "calibration", f"s{i}.npz"), input0=torch.randn(1, 3, size, size).numpy())
    x = os.path.join(work, "x.npy")
    np.save(x, torch.randn(1, 3, size, size).numpy())
    q, report = os.path.join(work, "model.mixed.mlirbc"), os.path.join(work, "quantize.json")
    # The gate that sends some layers to FP16 depends on the model's
    # numbers: tighten it until it does.
    for l2 in ("0.01", "0.005", "0.002", "0.0005"):
        run([os.path.join(args.bin, "cuvil-quantize"), "--model", pt, "--input-shape", f"0=1x3x{size}x{size}xf32",
             "--calibration-data", os.path.join(work, "calibration"), "--output", q, "--max-l2", l2,
             "--fallback", "fp16", "--report", report], "cuvil-quantize (mixed resnet18)")
        precisions = [l["precision"] for l in json.load(open(report))["layers"]]
        if "fp16" in precisions:
            break
    fp16, int8 = precisions.count("fp16"), precisions.count("int8")
    check(fp16 > 0, f"mixed resnet18 (--max-l2 {l2}): {fp16} FP16 and {int8} int8 layers")
    npu, cpu, part = (os.path.join(work, n) for n in ("npu.so", "cpu.so", "partition.json"))
    export(args, q, "npu", npu, ["--npu-partition-report", part])
    export(args, q, "x86_64", cpu)
    trace = os.path.join(work, "trace.json")
    run_library(args, npu, x, os.path.join(work, "out_npu"), ["--npu-trace", trace])
    run_library(args, cpu, x, os.path.join(work, "out_cpu"))
    a, b = np.load(os.path.join(work, "out_npu", "output0.npy")), np.load(os.path.join(work, "out_cpu", "output0.npy"))
    rel = float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
    # An f16 rounding one step apart can move a value across an int8 step
    # in the layer after it: the difference must stay a small part of the
    # accuracy budget the gate gave the model.
    check(rel <= 0.5 * float(l2) and a.argmax() == b.argmax(),
          f"mixed resnet18: the NPU library is within {rel:.2g} (relative L2, <= half the gate's {l2}) of the "
          f"x86_64 library, same top class")
    ops = json.load(open(part))["ops"]
    products = [o for o in ops if o["op"] in ("cuvil.conv.conv2d", "cuvil.quant.conv2d")]
    on_npu = [o for o in products if o["placement"] == "npu"]
    fp16_on_npu = sum(o["op"] == "cuvil.conv.conv2d" for o in on_npu)
    check(len(on_npu) == len(products) and fp16_on_npu > 0,
          f"mixed resnet18: all {len(products)} convolutions on the NPU, {fp16_on_npu} of them FP16")
    with open(trace) as f:
        layers = [l for s in json.load(f)["cuvil"]["segments"] for l in s["layers"]]
    half = [l for l in layers if l["kind"].endswith("fp16")]
    slots = 32 * 32 // 2  # the FP16 mode's peak: half the int8 array's MACs
    util = sum(l["macs"] for l in half) / (slots * max(1, sum(l["cycles"] for l in half)))
    print(f"     mixed resnet18: {len(half)} FP16 layers on the NPU at {util:.1%} of the FP16 peak")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(args.seed + 1)
    x = os.path.join(args.work, "x.npy")
    np.save(x, torch.randn(1, 3, SIZE, SIZE).numpy())
    started = time.time()
    try:
        r18 = cnn(args, "resnet18", "qnnpack", x)
        resnet18_targets(args, *r18, x)
        cnn(args, "resnet18", "onednn", x)
        cnn(args, "mobilenet_v2", "qnnpack", x)
        cnn(args, "mobilenet_v2", "onednn", x)
        transformer(args)
        mixed_fp16(args)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        check(False, str(e))
    print(f"{len(FAILURES)} failure(s), {time.time() - started:.0f} s")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
