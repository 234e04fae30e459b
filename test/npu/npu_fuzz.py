#!/usr/bin/env python3
"""Differential test of --target npu: random int8 networks, every
schedule path, the NPU library against the reference evaluator, bit for bit;
and random FP16 networks, within a tolerance.

Each case is a random chain of int8 ops in cuvil IR (random weights and
quantization parameters): convolutions (1x1 to 5x5 windows, strides,
dilations, padding up to more than the window, depthwise, per-tensor and
per-channel weights, QNNPACK's or oneDNN's epilogue, u8 or dequantized f32
results), residual sums (fused into a convolution's epilogue or not),
max and average pooling, a flatten and a linear layer; quantize in front
and dequantize behind (on the host). Each is compiled for a configuration
chosen at random (the small-SRAM one forces many bands and channel tiles,
chained convolutions of one band are forwarded on chip), with double
buffering or without, and run by `cuvil-run` beside the reference evaluator
on the .mlir: the outputs must be equal. The seed and the case say how to
get a failing case back.

FP16 cases are chains as `cuvil-quantize --fallback fp16` writes them
(each convolution, depthwise convolution or linear layer reads an f16
tensor widened to f32, f16 weights, an f32 bias; a relu or not; the result
rounded to f16 for the next layer), on the NPU's FP16 mode. The NPU sums in
f32 in its own order and the evaluator in double, so an f16 rounding can
differ by one step (targets/NPU/ARCHITECTURE.md): they must agree within
--rtol/--atol 4e-3 (the values are of order 1: four f16 steps), and the largest difference
is printed.

    python3 test/npu/npu_fuzz.py --bin build/bin --work /tmp/npu-fuzz [--seed 1] [--cases 24]
Exit status: 0 all equal, 1 a difference or a failed compile.
"""
import argparse
import json
import os
import re
import random
import struct
import subprocess
import sys

CONFIGS = ["npu-32x32", "npu-32x32-small-sram", "npu-16x16", "npu-64x64"]


class Net:
    def __init__(self, rng):
        self.rng = rng
        self.lines = []
        self.attrs = []
        self.n = 0

    def name(self):
        self.n += 1
        return f"%v{self.n}"

    def quant(self, per_channel=0):
        r = self.rng
        if per_channel:
            scales = ", ".join(f"{r.uniform(0.004, 0.03):.6g}" for _ in range(per_channel))
            zeros = ", ".join("0" for _ in range(per_channel))
            return f"#cuvil.quant<scale = [{scales}], zero_point = [{zeros}], axis = 0>"
        return f"#cuvil.quant<scale = [{r.uniform(0.02, 0.12):.6g}], zero_point = [{r.randint(0, 40)}]>"

    def weights(self, shape):
        count = 1
        for d in shape:
            count *= d
        raw = bytes(self.rng.randint(-127, 127) & 0xFF for _ in range(count))
        return f'cuvil.constant dense<"0x{raw.hex().upper()}"> : tensor<{"x".join(map(str, shape))}xi8>'

    def bias(self, n):
        return "cuvil.constant dense<[" + ", ".join(f"{self.rng.uniform(-1, 1):.4f}" for _ in range(n)) + \
            f"]> : tensor<{n}xf32>"


def out_size(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def make_case(rng):
    """A random network: returns the .mlir text and its input shape."""
    net = Net(rng)
    c, h, w = rng.choice([3, 8, 16, 40]), rng.randint(6, 40), rng.randint(6, 40)
    in_shape = (1, c, h, w)
    xq = net.quant()
    cur, cur_q, shape = "%q", xq, [c, h, w]
    body = [f"%q = cuvil.quant.quantize %arg0 {{params = {xq}}} : tensor<1x{c}x{h}x{w}xf32> -> tensor<1x{c}x{h}x{w}xui8>"]
    history = []  # (value, q, shape) of u8 tensors, for residual sums
    steps = rng.randint(2, 6)
    for step in range(steps):
        c, h, w = shape
        kind = rng.choices(["conv", "depthwise", "add", "maxpool", "avgpool"], [5, 2, 2, 1, 1])[0]
        if kind == "add":
            same = [t for t in history if t[2] == shape and t[0] != cur]
            if not same:
                kind = "conv"
        if kind in ("conv", "depthwise"):
            k = rng.choice([1, 1, 3, 3, 5])
            s = rng.choice([1, 1, 2])
            d = rng.choice([1, 1, 2]) if k > 1 else 1
            p = rng.choice([0, (k - 1) * d // 2, (k - 1) * d // 2 + 1])
            keep = rng.random() < 0.4  # the shape kept: a residual sum can follow
            if keep:
                s, p = 1, (k - 1) * d // 2
            oh, ow = out_size(h, k, s, p, d), out_size(w, k, s, p, d)
            if oh < 1 or ow < 1:
                continue
            depthwise = kind == "depthwise"
            co = c if depthwise or keep else rng.choice([8, 24, 32, 40, 64, 96])
            wshape = [co, 1 if depthwise else c, k, k]
            wv, bv, yv = net.name(), net.name(), net.name()
            per_channel = rng.random() < 0.5
            wq = net.quant(per_channel=co if per_channel else 0)
            if not per_channel:
                wq = f"#cuvil.quant<scale = [{rng.uniform(0.004, 0.03):.6g}], zero_point = [0]>"
            yq = net.quant()
            arith = rng.choice(["", ', arithmetic = "onednn"', ', arithmetic = "qnnpack"'])
            groups = f" groups {c}" if depthwise else ""
            body += [f"{wv} = {net.weights(wshape)}", f"{bv} = {net.bias(co)}",
                     f"{yv} = cuvil.quant.conv2d {cur}, {wv}, {bv} stride [{s}, {s}] padding [{p}, {p}] "
                     f"dilation [{d}, {d}]{groups} {{input_params = {cur_q}, weight_params = {wq}, "
                     f"output_params = {yq}{arith}}} : (tensor<1x{c}x{h}x{w}xui8>, tensor<{'x'.join(map(str, wshape))}xi8>, "
                     f"tensor<{co}xf32>) -> tensor<1x{co}x{oh}x{ow}xui8>"]
            history.append((cur, cur_q, shape))
            cur, cur_q, shape = yv, yq, [co, oh, ow]
        elif kind == "add":
            other = rng.choice(same)
            yv, yq = net.name(), net.quant()
            arith = rng.choice(["", ', arithmetic = "qnnpack"'])
            relu = rng.choice(["", ", relu"])
            a, aq, b, bq = (cur, cur_q, other[0], other[1]) if rng.random() < 0.5 else (other[0], other[1], cur, cur_q)
            t = f"tensor<1x{c}x{h}x{w}xui8>"
            body.append(f"{yv} = cuvil.quant.add {a}, {b} {{lhs_params = {aq}, rhs_params = {bq}, "
                        f"output_params = {yq}{relu}{arith}}} : ({t}, {t}) -> {t}")
            history.append((cur, cur_q, shape))
            cur, cur_q = yv, yq
        elif kind == "maxpool":
            k, s = rng.choice([(2, 2), (3, 2), (3, 1)])
            p = 1 if k == 3 else 0
            oh, ow = out_size(h, k, s, p, 1), out_size(w, k, s, p, 1)
            if oh < 1 or ow < 1:
                continue
            yv = net.name()
            body.append(f"{yv} = cuvil.pool.max_pool2d {cur} kernel [{k}, {k}] stride [{s}, {s}] padding [{p}, {p}] "
                        f"dilation [1, 1] : tensor<1x{c}x{h}x{w}xui8> -> tensor<1x{c}x{oh}x{ow}xui8>")
            history.append((cur, cur_q, shape))
            cur, shape = yv, [c, oh, ow]
        else:
            k = rng.choice([2, 3])
            oh, ow = out_size(h, k, k, 0, 1), out_size(w, k, k, 0, 1)
            if oh < 1 or ow < 1:
                continue
            yv, yq = net.name(), net.quant()
            arith = rng.choice(["", ', arithmetic = "qnnpack"', ", round_before_zero_point"])
            body.append(f"{yv} = cuvil.quant.avg_pool2d {cur} kernel [{k}, {k}] stride [{k}, {k}] padding [0, 0] "
                        f"{{input_params = {cur_q}, output_params = {yq}, count_include_pad{arith}}} : "
                        f"tensor<1x{c}x{h}x{w}xui8> -> tensor<1x{c}x{oh}x{ow}xui8>")
            history.append((cur, cur_q, shape))
            cur, cur_q, shape = yv, yq, [c, oh, ow]
    c, h, w = shape
    results, types = [], []
    if rng.random() < 0.5:
        # Global average, flatten, a linear layer (u8 or dequantized f32).
        pv, pq = net.name(), net.quant()
        body.append(f"{pv} = cuvil.quant.avg_pool2d {cur} kernel [{h}, {w}] stride [{h}, {w}] padding [0, 0] "
                    f"{{input_params = {cur_q}, output_params = {pq}, count_include_pad}} : "
                    f"tensor<1x{c}x{h}x{w}xui8> -> tensor<1x{c}x1x1xui8>")
        fv = net.name()
        body.append(f"{fv} = cuvil.shape.flatten {pv} {{start_dim = 1 : i64, end_dim = 3 : i64}} : "
                    f"tensor<1x{c}x1x1xui8> -> tensor<1x{c}xui8>")
        n = rng.choice([10, 33, 100])
        wv, bv, lv = net.name(), net.name(), net.name()
        wq = f"#cuvil.quant<scale = [{rng.uniform(0.004, 0.03):.6g}], zero_point = [0]>"
        body += [f"{wv} = {net.weights([n, c])}", f"{bv} = {net.bias(n)}"]
        if rng.random() < 0.5:
            lq = net.quant()
            body.append(f"{lv} = cuvil.quant.linear {fv}, {wv}, {bv} {{input_params = {pq}, weight_params = {wq}, "
                        f"output_params = {lq}}} : (tensor<1x{c}xui8>, tensor<{n}x{c}xi8>, tensor<{n}xf32>) -> tensor<1x{n}xui8>")
            dv = net.name()
            body.append(f"{dv} = cuvil.quant.dequantize {lv} {{params = {lq}}} : tensor<1x{n}xui8> -> tensor<1x{n}xf32>")
            results.append(dv)
        else:
            body.append(f"{lv} = cuvil.quant.linear {fv}, {wv}, {bv} {{input_params = {pq}, weight_params = {wq}}} : "
                        f"(tensor<1x{c}xui8>, tensor<{n}x{c}xi8>, tensor<{n}xf32>) -> tensor<1x{n}xf32>")
            results.append(lv)
        types.append(f"tensor<1x{n}xf32>")
    dv = net.name()
    body.append(f"{dv} = cuvil.quant.dequantize {cur} {{params = {cur_q}}} : tensor<1x{c}x{h}x{w}xui8> -> "
                f"tensor<1x{c}x{h}x{w}xf32>")
    results.append(dv)
    types.append(f"tensor<1x{c}x{h}x{w}xf32>")
    x = in_shape
    text = (f"func.func @forward(%arg0: tensor<1x{x[1]}x{x[2]}x{x[3]}xf32>) -> ({', '.join(types)}) {{\n  " +
            "\n  ".join(body) + f"\n  return {', '.join(results)} : {', '.join(types)}\n}}\n")
    return text, in_shape, len(results)


def half_values(rng, count, scale):
    """`count` random values exactly representable in binary16, as the
    hex of their f32 bytes."""
    out = bytearray()
    for _ in range(count):
        h = struct.unpack("<e", struct.pack("<e", rng.gauss(0.0, scale)))[0]
        out += struct.pack("<f", h)
    return out.hex().upper()


def make_fp16_case(rng):
    """A random FP16 network: returns the .mlir text and its input shape."""
    c, h, w = rng.choice([3, 8, 16, 40]), rng.randint(5, 30), rng.randint(5, 30)
    in_shape = (1, c, h, w)
    n = [0]

    def name():
        n[0] += 1
        return f"%v{n[0]}"

    def tensor(shape, dtype):
        return f"tensor<{'x'.join(map(str, shape))}x{dtype}>"

    shape = [1, c, h, w]
    cur = name()
    body = [f"{cur} = cuvil.tensor.cast %arg0 : {tensor(shape, 'f32')} -> {tensor(shape, 'f16')}"]
    for step in range(rng.randint(1, 4)):
        _, c, h, w = shape
        depthwise = rng.random() < 0.3
        k = rng.choice([1, 3, 3, 5])
        s = rng.choice([1, 1, 2])
        d = rng.choice([1, 1, 2]) if k > 1 else 1
        p = rng.choice([0, (k - 1) * d // 2, (k - 1) * d // 2 + 1])
        oh, ow = out_size(h, k, s, p, d), out_size(w, k, s, p, d)
        if oh < 1 or ow < 1:
            continue
        co = c if depthwise else rng.choice([8, 24, 32, 40, 64, 96])
        wshape = [co, 1 if depthwise else c, k, k]
        fan_in = wshape[1] * k * k
        wv, bv, xv, yv = name(), name(), name(), name()
        out = [1, co, oh, ow]
        groups = f" groups {c}" if depthwise else ""
        body += [f'{wv} = cuvil.constant dense<"0x{half_values(rng, co * fan_in, 1.5 / fan_in ** 0.5)}"> : '
                 f"{tensor(wshape, 'f32')}",
                 f'{bv} = cuvil.constant dense<"0x{half_values(rng, co, 0.5)}"> : {tensor([co], "f32")}',
                 f"{xv} = cuvil.tensor.cast {cur} : {tensor(shape, 'f16')} -> {tensor(shape, 'f32')}",
                 f"{yv} = cuvil.conv.conv2d {xv}, {wv}, {bv} stride [{s}, {s}] padding [{p}, {p}] "
                 f"dilation [{d}, {d}]{groups} : ({tensor(shape, 'f32')}, {tensor(wshape, 'f32')}, "
                 f"{tensor([co], 'f32')}) -> {tensor(out, 'f32')}"]
        if rng.random() < 0.7:
            rv = name()
            body.append(f"{rv} = cuvil.act.relu {yv} : {tensor(out, 'f32')}")
            yv = rv
        cur = name()
        body.append(f"{cur} = cuvil.tensor.cast {yv} : {tensor(out, 'f32')} -> {tensor(out, 'f16')}")
        shape = out
    _, c, h, w = shape
    if rng.random() < 0.5:
        # A flatten (a view of the f16 tensor) and a linear layer, f32 out.
        fv, xv, wv, bv, yv = name(), name(), name(), name(), name()
        k, nout = c * h * w, rng.choice([10, 33, 100])
        body += [f"{fv} = cuvil.shape.flatten {cur} {{start_dim = 1 : i64, end_dim = 3 : i64}} : "
                 f"{tensor(shape, 'f16')} -> {tensor([1, k], 'f16')}",
                 f"{xv} = cuvil.tensor.cast {fv} : {tensor([1, k], 'f16')} -> {tensor([1, k], 'f32')}",
                 f'{wv} = cuvil.constant dense<"0x{half_values(rng, nout * k, 1.0 / k ** 0.5)}"> : '
                 f"{tensor([nout, k], 'f32')}",
                 f'{bv} = cuvil.constant dense<"0x{half_values(rng, nout, 0.5)}"> : {tensor([nout], "f32")}',
                 f"{yv} = cuvil.gemm.linear {xv}, {wv}, {bv} : ({tensor([1, k], 'f32')}, "
                 f"{tensor([nout, k], 'f32')}, {tensor([nout], 'f32')}) -> {tensor([1, nout], 'f32')}"]
        result, rtype = yv, tensor([1, nout], "f32")
    else:
        result, rtype = name(), tensor(shape, "f32")
        body.append(f"{result} = cuvil.tensor.cast {cur} : {tensor(shape, 'f16')} -> {rtype}")
    x = in_shape
    text = (f"func.func @forward(%arg0: {tensor(x, 'f32')}) -> {rtype} {{\n  " + "\n  ".join(body) +
            f"\n  return {result} : {rtype}\n}}\n")
    return text, in_shape, 1


def conv_line(net, x, xq, shape, co, k, s, p, y, yq, depthwise=False):
    c, h, w = shape
    oh, ow = out_size(h, k, s, p, 1), out_size(w, k, s, p, 1)
    wv, bv = net.name(), net.name()
    wshape = [co, 1 if depthwise else c, k, k]
    wq = f"#cuvil.quant<scale = [{net.rng.uniform(0.002, 0.01):.6g}], zero_point = [0]>"
    groups = f" groups {c}" if depthwise else ""
    return [f"{wv} = {net.weights(wshape)}", f"{bv} = {net.bias(co)}",
            f"{y} = cuvil.quant.conv2d {x}, {wv}, {bv} stride [{s}, {s}] padding [{p}, {p}] dilation [1, 1]{groups} "
            f"{{input_params = {xq}, weight_params = {wq}, output_params = {yq}}} : (tensor<1x{c}x{h}x{w}xui8>, "
            f"tensor<{'x'.join(map(str, wshape))}xi8>, tensor<{co}xf32>) -> tensor<1x{co}x{oh}x{ow}xui8>"], [co, oh, ow]


def fixed_cases():
    """Cases random ones rarely reach, each once a bug (text, input shape,
    outputs, configuration)."""
    rng = random.Random(7)
    cases = []
    # A convolution of several output-channel tiles with a fused residual
    # sum, forwarded on chip to the next one: the residual tiles must not
    # overwrite the input the later tiles read, and must stay aligned.
    net = Net(rng)
    xq, aq, yq, sq, zq = (net.quant() for _ in range(5))
    body = [f"%q = cuvil.quant.quantize %arg0 {{params = {xq}}} : tensor<1x256x18x18xf32> -> tensor<1x256x18x18xui8>"]
    lines, _ = conv_line(net, "%q", xq, [256, 18, 18], 512, 3, 1, 1, "%a", aq)
    body += lines
    lines, _ = conv_line(net, "%q", xq, [256, 18, 18], 512, 3, 1, 1, "%y", yq)
    body += lines
    t = "tensor<1x512x18x18xui8>"
    body.append(f"%s = cuvil.quant.add %y, %a {{lhs_params = {yq}, rhs_params = {aq}, output_params = {sq}, relu}} : "
                f"({t}, {t}) -> {t}")
    lines, _ = conv_line(net, "%s", sq, [512, 18, 18], 64, 1, 1, 0, "%z", zq)
    body += lines
    body.append(f"%o = cuvil.quant.dequantize %z {{params = {zq}}} : tensor<1x64x18x18xui8> -> tensor<1x64x18x18xf32>")
    cases.append(("fused residual, forwarded", body, (1, 256, 18, 18), ["%o"], ["tensor<1x64x18x18xf32>"],
                  "npu-32x32"))
    # Bands of one output row, the last of bottom padding only.
    net = Net(rng)
    xq, yq = net.quant(), net.quant()
    body = [f"%q = cuvil.quant.quantize %arg0 {{params = {xq}}} : tensor<1x64x4x300xf32> -> tensor<1x64x4x300xui8>"]
    lines, (co, oh, ow) = conv_line(net, "%q", xq, [64, 4, 300], 64, 1, 1, 1, "%y", yq)
    body += lines
    body.append(f"%o = cuvil.quant.dequantize %y {{params = {yq}}} : tensor<1x{co}x{oh}x{ow}xui8> -> "
                f"tensor<1x{co}x{oh}x{ow}xf32>")
    cases.append(("a band of padding only", body, (1, 64, 4, 300), ["%o"], [f"tensor<1x{co}x{oh}x{ow}xf32>"],
                  "npu-32x32"))
    # A view the host reads between two convolutions.
    net = Net(rng)
    xq, yq, zq = net.quant(), net.quant(), net.quant()
    body = [f"%q = cuvil.quant.quantize %arg0 {{params = {xq}}} : tensor<1x8x6x6xf32> -> tensor<1x8x6x6xui8>"]
    lines, _ = conv_line(net, "%q", xq, [8, 6, 6], 16, 3, 1, 1, "%y", yq)
    body += lines
    body.append("%v = cuvil.shape.flatten %y {start_dim = 1 : i64, end_dim = 3 : i64} : tensor<1x16x6x6xui8> -> "
                "tensor<1x576xui8>")
    lines, _ = conv_line(net, "%y", yq, [16, 6, 6], 8, 3, 1, 1, "%z", zq)
    body += lines
    body.append(f"%o1 = cuvil.quant.dequantize %v {{params = {yq}}} : tensor<1x576xui8> -> tensor<1x576xf32>")
    body.append(f"%o2 = cuvil.quant.dequantize %z {{params = {zq}}} : tensor<1x8x6x6xui8> -> tensor<1x8x6x6xf32>")
    cases.append(("a view the host reads", body, (1, 8, 6, 6), ["%o1", "%o2"],
                  ["tensor<1x576xf32>", "tensor<1x8x6x6xf32>"], "npu-32x32"))
    out = []
    for label, body, shape, results, types, config in cases:
        text = (f"func.func @forward(%arg0: tensor<{'x'.join(map(str, shape))}xf32>) -> ({', '.join(types)}) {{\n  " +
                "\n  ".join(body) + f"\n  return {', '.join(results)} : {', '.join(types)}\n}}\n")
        out.append((label, text, shape, len(results), config))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=24)
    ap.add_argument("--fp16-cases", type=int, default=8)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    cases = []
    for label, text, shape, outputs, config in fixed_cases():
        cases.append((label + f" ({config})", text, shape, outputs, config, True, False))
    for case in range(args.cases):
        rng = random.Random(args.seed * 100003 + case)
        text, shape, outputs = make_case(rng)
        config = rng.choice(CONFIGS)
        double = rng.random() < 0.75
        cases.append((f"seed {args.seed} case {case} ({config}{'' if double else ', single-buffered'})", text,
                      shape, outputs, config, double, False))
    for case in range(args.fp16_cases):
        rng = random.Random(args.seed * 100019 + case)
        text, shape, outputs = make_fp16_case(rng)
        config = rng.choice(CONFIGS)
        double = rng.random() < 0.75
        cases.append((f"seed {args.seed} fp16 case {case} ({config}{'' if double else ', single-buffered'})", text,
                      shape, outputs, config, double, True))
    for case, (label, text, shape, outputs, config, double, fp16) in enumerate(cases):
        base = os.path.join(args.work, f"case{case}")
        with open(base + ".mlir", "w") as f:
            f.write(text)
        spec = f"0={'x'.join(map(str, shape))}xf32:random"
        export = [os.path.join(args.bin, "cuvil-export"), "--model", base + ".mlir", "--target", "npu", "--cpu",
                  config, "-o", base + ".so", "--npu-partition-report", base + ".json"]
        if not double:
            export += ["--target-option", "double-buffering=0"]
        ref = [os.path.join(args.bin, "cuvil-run"), base + ".mlir", "--input", spec, "-o", base + "_ref", "-q"]
        for cmd, what in ((export, "export"), (ref, "reference")):
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if p.returncode != 0:
                print(f"FAIL {label}: {what}: {p.stderr.strip()[-1500:]}")
                failures += 1
                break
        else:
            expected = []
            for i in range(outputs):
                expected += ["--expected-output", os.path.join(base + "_ref", f"output{i}.npy")]
            tolerance = "4e-3" if fp16 else "0"
            run = [os.path.join(args.bin, "cuvil-run"), base + ".so", "--input", spec, "-q", "--rtol", tolerance,
                   "--atol", tolerance, *expected]
            p = subprocess.run(run, capture_output=True, text=True, timeout=600)
            with open(base + ".json") as f:
                host = [o for o in json.load(f)["ops"] if o["placement"] == "cpu"]
            # An FP16 product stays on the NPU unless it does not fit its SRAM.
            host_products = [o["op"] + ": " + o["reason"] for o in host
                             if o["op"] in ("cuvil.conv.conv2d", "cuvil.gemm.linear") and "not fit" not in o["reason"]]
            if p.returncode != 0:
                print(f"FAIL {label}: the NPU library differs from the reference evaluator: "
                      f"{p.stderr.strip()[-800:]}")
                failures += 1
            elif host_products:
                print(f"FAIL {label}: {host_products} stayed on the host: {base}.json")
                failures += 1
            elif fp16:
                found = re.findall(r"largest \|error\| ([0-9.eE+-]+)", p.stdout + p.stderr)
                largest = f"largest difference {max(map(float, found)):.3g}" if found else ""
                print(f"ok   {label}: {text.count('cuvil.conv.conv2d')} FP16 convolutions, "
                      f"{text.count('cuvil.gemm.linear')} linear, within 4e-3 of the reference ({largest})")
            else:
                print(f"ok   {label}: {text.count('cuvil.quant.conv2d')} convolutions, "
                      f"{text.count('cuvil.quant.add')} sums, equal to the reference")
    print(f"{failures} failure(s) in {len(cases)} cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
