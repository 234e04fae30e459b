#!/usr/bin/env python3
"""cuvil.quant.* against PyTorch's own quantization, bit for bit.

For each storage type (quint8, qint8, qint32), per tensor and per channel
(on every axis of a rank-3 tensor), quantize, dequantize and requantize
are evaluated by the reference evaluator (cuvil-run on the .mlir) and by
the libraries cuvil-export compiles for x86_64 and for aarch64 (run under
qemu-aarch64 where it is installed; skipped visibly otherwise), on inputs with ties (x.5
steps), NaN, +-inf and values past int64, and every result is compared
with torch.quantize_per_tensor / quantize_per_channel / dequantize exactly.
cuvil.quant.linear and cuvil.quant.conv2d (weights per tensor and per
output channel, with and without bias; groups, strides, padding, dilation)
are compared exactly with torch.ops.quantized.linear / conv2d on the
QNNPACK engine, whose arithmetic they define (depthwise convolutions within
one step: QNNPACK's depthwise kernels round differently in rare cases).
cuvil.quant.add (with and without relu) is compared with
torch.ops.quantized.add / add_relu: exactly on onednn (float arithmetic, as
the op defines it), within one step on QNNPACK (integer requantization).

    /usr/bin/python3 test/reference/quant_parity.py --bin build/bin --work-dir /tmp/quant
Exit status: 0 all exact, 1 a difference, 77 PyTorch is not importable.
"""
import argparse
import os
import shutil
import subprocess
import sys

# Before torch loads glog: QNNPACK warns that it ignores reduce_range on
# every dynamically quantized call.
os.environ.setdefault("GLOG_minloglevel", "2")

try:
    import numpy as np
    import torch
except ImportError:
    sys.exit(77)

STORAGE = {torch.quint8: ("ui8", 0, 255), torch.qint8: ("i8", -128, 127),
           torch.qint32: ("i32", -2**31, 2**31 - 1)}
SHAPE = (2, 3, 4)


def params_attr(scales, zero_points, axis):
    s = ", ".join(repr(float(x)) for x in scales)
    z = ", ".join(str(int(x)) for x in zero_points)
    tail = f", axis = {axis}" if axis is not None else ""
    return f"#cuvil.quant<scale = [{s}], zero_point = [{z}]{tail}>"


def tensor(elem):
    return "tensor<" + "x".join(str(d) for d in SHAPE) + f"x{elem}>"


def sample_input(rng, scale):
    x = (rng.randn(*SHAPE) * 40 * float(np.max(scale))).astype(np.float32)
    flat = x.reshape(-1)
    flat[:4] = [np.nan, np.inf, -np.inf, 1e30]
    s0 = float(np.ravel(scale)[0])
    flat[4:8] = np.float32(s0) * np.array([2.5, 3.5, -2.5, 0.5], dtype=np.float32)
    return x


def cases(rng):
    """(name, torch quantize fn, params (scales, zps, axis), storage dtype)."""
    out = []
    for dtype, (elem, lo, hi) in STORAGE.items():
        zp_hi = min(hi, 20) if dtype != torch.quint8 else 200
        zp_lo = max(lo, -20)
        scale = float(rng.uniform(0.01, 0.5))
        zp = int(rng.randint(zp_lo, zp_hi + 1))
        out.append((f"{elem}_tensor", dtype, [scale], [zp], None))
        for axis in range(len(SHAPE)):
            n = SHAPE[axis]
            scales = rng.uniform(0.01, 0.5, n)
            zps = rng.randint(zp_lo, zp_hi + 1, n)
            out.append((f"{elem}_axis{axis}", dtype, list(scales), list(zps), axis))
    return out


def torch_quantize(x, dtype, scales, zps, axis):
    if axis is None:
        return torch.quantize_per_tensor(x, scales[0], zps[0], dtype)
    return torch.quantize_per_channel(x, torch.tensor(scales, dtype=torch.double),
                                      torch.tensor(zps, dtype=torch.int64), axis, dtype)


def check_linear(args, rng):
    """cuvil.quant.linear against torch.ops.quantized.linear (QNNPACK), with
    and without bias, weights per tensor and per output channel."""
    torch.backends.quantized.engine = "qnnpack"
    failures = 0
    m, k, n = 6, 45, 9
    for per_channel in (False, True):
        for with_bias in (True, False):
            name = f"linear_{'channel' if per_channel else 'tensor'}{'_bias' if with_bias else ''}"
            x = torch.from_numpy(rng.randn(m, k).astype(np.float32))
            w = torch.from_numpy((rng.randn(n, k) * 0.2).astype(np.float32))
            b = torch.from_numpy(rng.randn(n).astype(np.float32)) if with_bias else None
            sx, zx, sy, zy = 0.03, 120, 0.08, 100
            xq = torch.quantize_per_tensor(x, sx, zx, torch.quint8)
            if per_channel:
                sw = rng.uniform(0.002, 0.01, n)
                wq = torch.quantize_per_channel(w, torch.tensor(sw), torch.zeros(n, dtype=torch.int64),
                                                0, torch.qint8)
                wattr = params_attr(sw, [0] * n, 0)
            else:
                wq = torch.quantize_per_tensor(w, 0.005, 0, torch.qint8)
                wattr = params_attr([0.005], [0], None)
            try:
                yq = torch.ops.quantized.linear(xq, torch.ops.quantized.linear_prepack(wq, b), sy, zy)
            except RuntimeError as e:  # an engine without this form
                print(f"{name}: skipped, PyTorch's QNNPACK cannot run it ({str(e).splitlines()[0]})")
                continue
            d = os.path.join(args.work_dir, name)
            os.makedirs(d, exist_ok=True)
            bias_arg = ", %b" if with_bias else ""
            bias_type = f", tensor<{n}xf32>" if with_bias else ""
            mlir = f"""func.func @forward(%x: tensor<{m}x{k}xui8>, %w: tensor<{n}x{k}xi8>{bias_arg and f", %b: tensor<{n}xf32>"}) -> tensor<{m}x{n}xui8> {{
  %y = cuvil.quant.linear %x, %w{bias_arg} {{input_params = {params_attr([sx], [zx], None)}, weight_params = {wattr}, output_params = {params_attr([sy], [zy], None)}}} : (tensor<{m}x{k}xui8>, tensor<{n}x{k}xi8>{bias_type}) -> tensor<{m}x{n}xui8>
  return %y : tensor<{m}x{n}xui8>
}}
"""
            inputs = [xq.int_repr().numpy(), wq.int_repr().numpy()] + ([b.numpy()] if with_bias else [])
            failures += run_both(args, d, mlir, inputs, yq.int_repr().numpy(), name)
    return failures


def runs(args, d, model):
    """(label, command prefix) of each way to run `model`: the evaluator,
    the x86_64 library and, where qemu-aarch64 and the aarch64 cuvil-run
    exist, the aarch64 library under emulation."""
    out = [("reference", [os.path.join(args.bin, "cuvil-run"), model])]
    for target in ("x86_64", "aarch64"):
        lib = os.path.join(d, f"lib-{target}.so")
        runner = [os.path.join(args.bin, "cuvil-run")]
        if target == "aarch64":
            runner = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu",
                      os.path.join(args.bin, "aarch64", "cuvil-run")]
            if not shutil.which(runner[0]) or not os.path.exists(runner[-1]):
                print("SKIPPED aarch64: qemu-aarch64 or the aarch64 cuvil-run is missing")
                continue
        subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", model, "--target",
                        target, "-o", lib], check=True)
        out.append((target, runner + [lib]))
    return out


def write_case(d, mlir, inputs):
    """`mlir` as d/model.mlir and the inputs as d/inputN.npy: (model, paths)."""
    model = os.path.join(d, "model.mlir")
    with open(model, "w") as f:
        f.write(mlir)
    paths = []
    for i, a in enumerate(inputs):
        paths.append(os.path.join(d, f"input{i}.npy"))
        np.save(paths[-1], a)
    return model, paths


def run_both(args, d, mlir, inputs, want, name, max_step=0):
    """The model on the evaluator and compiled for x86_64 against `want`
    (exactly, or within `max_step` quantization steps)."""
    model, paths = write_case(d, mlir, inputs)
    failures = 0
    for how, prefix in runs(args, d, model):
        out = os.path.join(d, how)
        cmd = prefix + ["-o", out, "--quiet"]
        for p in paths:
            cmd += ["-i", p]
        subprocess.run(cmd, check=True)
        got = np.load(os.path.join(out, "output0.npy"))
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        if got.shape != want.shape or int(diff.max(initial=0)) > max_step:
            print(f"FAIL {name} {how}: {int((diff > 0).sum())} element(s) differ, by up to "
                  f"{int(diff.max(initial=0))}")
            failures += 1
        elif diff.any():
            print(f"{name} {how}: {int((diff > 0).sum())} element(s) one step off (allowed here)")
    print(f"{name}: {'checked' if not failures else 'DIFFERS'} (reference, x86_64, aarch64)")
    return failures


def check_linear_ties(args):
    """QNNPACK's epilogue multiplier is (sw * sx) * (1 / sy) in float, which
    for some scales is an ulp from sw * sx / sy: sums built so that each
    output lands where that last bit decides the rounding (a weight scale
    with such sums is searched for; each sum spread over a block of
    columns of products)."""
    torch.backends.quantized.engine = "qnnpack"
    f32 = np.float32
    sx, zx, sy, zy = 0.03, 120, 0.08, 128
    acc = np.arange(-60000, 60001, dtype=np.int64)
    t = acc.astype(np.float32)
    ties = []
    for i in range(20000):
        sw = float(f32(0.005 + 1e-8 * i))
        m_mul = (f32(sw) * f32(sx)) * (f32(1) / f32(sy))
        m_div = (f32(sw) * f32(sx)) / f32(sy)
        if m_mul != m_div:
            ties = acc[np.rint(t * m_mul) != np.rint(t * m_div)]
            if len(ties):
                break
    if not len(ties):
        print("FAIL linear_ties: no weight scale with such sums found")
        return 1
    m, n, block = 4, 6, 8
    k = m * n * block
    x = np.full((m, k), zx, np.uint8)
    w = np.zeros((n, k), np.int8)
    for r in range(m):
        for c in range(n):
            target = int(ties[(r * n + c) % len(ties)])
            col = (r * n + c) * block
            # target = 100 * q + rem: q in pieces of at most 120, rem * 1.
            q, rem = divmod(abs(target), 100)
            sign = 1 if target >= 0 else -1
            while q:
                piece = min(q, 120)
                x[r, col] = zx + piece
                w[c, col] = 100 * sign
                q -= piece
                col += 1
            x[r, col] = zx + rem
            w[c, col] = sign
    xq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(x), sx, zx)
    wq = torch._make_per_tensor_quantized_tensor(torch.from_numpy(w), sw, 0)
    yq = torch.ops.quantized.linear(xq, torch.ops.quantized.linear_prepack(wq, None), sy, zy)
    mlir = f"""func.func @forward(%x: tensor<{m}x{k}xui8>, %w: tensor<{n}x{k}xi8>) -> tensor<{m}x{n}xui8> {{
  %y = cuvil.quant.linear %x, %w {{input_params = {params_attr([sx], [zx], None)}, weight_params = {params_attr([sw], [0], None)}, output_params = {params_attr([sy], [zy], None)}}} : (tensor<{m}x{k}xui8>, tensor<{n}x{k}xi8>) -> tensor<{m}x{n}xui8>
  return %y : tensor<{m}x{n}xui8>
}}
"""
    d = os.path.join(args.work_dir, "linear_ties")
    os.makedirs(d, exist_ok=True)
    print(f"linear_ties: weight scale {sw!r}, {len(ties)} sum(s) in +-60000 where the last bit decides")
    return run_both(args, d, mlir, [x, w], yq.int_repr().numpy(), "linear_ties")


def run_exact(args, name, mlir, inputs, want):
    """`mlir` on the evaluator and the libraries against `want`, exactly."""
    d = os.path.join(args.work_dir, name)
    os.makedirs(d, exist_ok=True)
    model, paths = write_case(d, mlir, inputs)
    bad = []
    for how, prefix in runs(args, d, model):
        out = os.path.join(d, how)
        subprocess.run(prefix + ["-o", out, "--quiet"] + [a for p in paths for a in ("-i", p)], check=True)
        got = np.load(os.path.join(out, "output0.npy"))
        if got.shape != want.shape or not np.array_equal(got, want):
            bad.append(f"{how}: {int((got != want).sum())} of {want.size} differ")
    print(f"{name}: {'exact' if not bad else 'DIFFERS: ' + '; '.join(bad)} (reference, x86_64, aarch64)")
    return int(bool(bad))


def check_linear_dynamic(args, rng):
    """cuvil.quant.linear_dynamic against torch.ops.quantized.linear_dynamic
    / linear_relu_dynamic under both engines, bit for bit: inputs whose
    ranges take each branch of PyTorch's parameter choice (both signs,
    one sign only, zeros, ranges small enough that the scale is raised to
    its floor, an outlier), weights per tensor and per channel, with and
    without bias, relu and reduce_range."""
    failures = 0
    m, k, n = 5, 37, 11
    ranges = {
        "mixed": lambda: rng.randn(m, k) * 2.0,
        "positive": lambda: np.abs(rng.randn(m, k)) + 0.5,
        "negative": lambda: -np.abs(rng.randn(m, k)) - 0.25,
        "zeros": lambda: np.zeros((m, k)),
        "tiny": lambda: rng.randn(m, k) * 1e-5,
        "tiny_positive": lambda: np.abs(rng.randn(m, k)) * 1e-5,
        "tiny_negative": lambda: -np.abs(rng.randn(m, k)) * 1e-5,
        "outlier": lambda: np.where(rng.rand(m, k) < 0.02, 80.0, rng.randn(m, k) * 0.1),
    }
    for engine in ("qnnpack", "onednn"):
        if engine not in torch.backends.quantized.supported_engines:
            print(f"linear_dynamic {engine}: skipped, not an engine of this PyTorch")
            continue
        torch.backends.quantized.engine = engine
        for index, (rname, make) in enumerate(ranges.items()):
            per_channel, with_bias = index % 2 == 1, index % 3 != 2
            relu, reduce_range = index % 4 == 3, index % 2 == 0
            name = f"linear_dynamic_{engine}_{rname}"
            x = torch.from_numpy(make().astype(np.float32))
            w = torch.from_numpy((rng.randn(n, k) * 0.2).astype(np.float32))
            b = torch.from_numpy(rng.randn(n).astype(np.float32)) if with_bias else None
            if per_channel:
                sw = (w.abs().amax(1) / 127.5).double()
                wq = torch.quantize_per_channel(w, sw, torch.zeros(n, dtype=torch.int64), 0, torch.qint8)
                wattr = params_attr(list(sw.numpy()), [0] * n, 0)
            else:
                s = float(w.abs().max()) / 127.5
                wq = torch.quantize_per_tensor(w, s, 0, torch.qint8)
                wattr = params_attr([s], [0], None)
            op = torch.ops.quantized.linear_relu_dynamic if relu else torch.ops.quantized.linear_dynamic
            try:
                y = op(x, torch.ops.quantized.linear_prepack(wq, b), reduce_range)
            except RuntimeError as e:
                print(f"{name}: skipped, PyTorch cannot run it ({str(e).splitlines()[0]})")
                continue
            attrs = [f"weight_params = {wattr}", f'arithmetic = "{engine}"']
            if reduce_range and engine == "onednn":  # QNNPACK ignores it (and says so)
                attrs.append("reduce_range")
            if relu:
                attrs.append("relu")
            bias_arg, bias_type = (", %b", f", tensor<{n}xf32>") if with_bias else ("", "")
            mlir = f"""func.func @forward(%x: tensor<{m}x{k}xf32>, %w: tensor<{n}x{k}xi8>{bias_arg and f", %b: tensor<{n}xf32>"}) -> tensor<{m}x{n}xf32> {{
  %y = cuvil.quant.linear_dynamic %x, %w{bias_arg} {{{", ".join(attrs)}}} : (tensor<{m}x{k}xf32>, tensor<{n}x{k}xi8>{bias_type}) -> tensor<{m}x{n}xf32>
  return %y : tensor<{m}x{n}xf32>
}}
"""
            inputs = [x.numpy(), wq.int_repr().numpy()] + ([b.numpy()] if with_bias else [])
            failures += run_exact(args, name, mlir, inputs, y.numpy())
    return failures


def check_mul(args, rng):
    """cuvil.quant.mul against torch.ops.quantized.mul / mul_relu on both
    engines: broadcasting (a squeeze-excitation scale times its input),
    quint8 and qint8, and products placed where the multiplier's last bit,
    (sa * sb) * (1 / sy) in float, decides the rounding."""
    failures = 0
    f32 = np.float32
    for engine in ("onednn", "qnnpack"):
        if engine not in torch.backends.quantized.supported_engines:
            continue
        torch.backends.quantized.engine = engine
        for dtype, elem, lo, hi in ((torch.quint8, "ui8", 0, 255), (torch.qint8, "i8", -128, 127)):
            if engine == "qnnpack" and dtype == torch.qint8:
                continue  # PyTorch hands that to XNNPACK
            for relu in (False, True):
                za, zb, zy = (128, 128, 40) if dtype == torch.quint8 else (0, 0, -30)
                # A scale set whose multiplier differs from sa * sb / sy in
                # float, and the products that difference rounds otherwise.
                c = np.arange(-16000, 16001, dtype=np.int64)
                ties = []
                for i in range(20000):
                    sa, sb, sy = float(f32(0.02 + 1e-6 * i)), float(f32(0.03)), float(f32(0.05 + 3e-7 * i))
                    m = f32(f32(sa) * f32(sb)) * (f32(1) / f32(sy))
                    alt = f32(sa * sb / sy)
                    if m != alt:
                        ties = c[np.rint(c.astype(np.float32) * m) != np.rint(c.astype(np.float32) * alt)]
                        ties = [int(t) for t in ties if any(t % p == 0 and abs(t // p) <= 127 for p in range(1, 128))]
                        if ties:
                            break
                if not ties:
                    print("FAIL mul: no scales whose multiplier's last bit matters found")
                    failures += 1
                    continue
                a = rng.randint(lo, hi + 1, (2, 5, 1, 1))
                b = rng.randint(lo, hi + 1, (2, 5, 3, 4))
                for j, t in enumerate(ties[:10]):  # a few operand pairs with exactly those products
                    p = next(p for p in range(1, 128) if t % p == 0 and abs(t // p) <= 127)
                    a.flat[j] = za + p
                    b[np.unravel_index(j, (2, 5))][0, 0] = zb + t // p
                qa = torch._make_per_tensor_quantized_tensor(torch.from_numpy(a.astype(np.uint8 if lo == 0 else np.int8)), sa, za)
                qb = torch._make_per_tensor_quantized_tensor(torch.from_numpy(b.astype(np.uint8 if lo == 0 else np.int8)), sb, zb)
                y = (torch.ops.quantized.mul_relu if relu else torch.ops.quantized.mul)(qa, qb, sy, zy)
                attrs = [f"lhs_params = {params_attr([sa], [za], None)}", f"rhs_params = {params_attr([sb], [zb], None)}",
                         f"output_params = {params_attr([sy], [zy], None)}"] + (["relu"] if relu else [])
                mlir = f"""func.func @forward(%a: tensor<2x5x1x1x{elem}>, %b: tensor<2x5x3x4x{elem}>) -> tensor<2x5x3x4x{elem}> {{
  %y = cuvil.quant.mul %a, %b {{{", ".join(attrs)}}} : (tensor<2x5x1x1x{elem}>, tensor<2x5x3x4x{elem}>) -> tensor<2x5x3x4x{elem}>
  return %y : tensor<2x5x3x4x{elem}>
}}
"""
                failures += run_exact(args, f"mul_{engine}_{elem}{'_relu' if relu else ''}", mlir,
                                      [qa.int_repr().numpy(), qb.int_repr().numpy()], y.int_repr().numpy())
    return failures


def check_vectorized_dequantize(args):
    """quantized::hardswish on the onednn engine (PyTorch's vectorized x86
    kernel) dequantizes with a fused multiply-add: on parameters where that
    moves an output, every 8-bit input through quant.dequantize {fused},
    cuvil.act.hardswish and quant.quantize equals PyTorch's."""
    if "onednn" not in torch.backends.quantized.supported_engines:
        return 0
    torch.backends.quantized.engine = "onednn"
    f32 = np.float32
    q = np.arange(256, dtype=np.uint8)
    rng = np.random.RandomState(5)
    for _ in range(20000):
        s, z = float(f32(rng.uniform(0.01, 0.08))), int(rng.randint(0, 256))
        so, zo = float(f32(rng.uniform(0.01, 0.08))), int(rng.randint(0, 64))
        def out(x):
            y = x * np.minimum(np.maximum(x + f32(3), f32(0)), f32(6)) / f32(6)
            return np.clip(np.rint(y * (f32(1) / f32(so))) + zo, 0, 255)
        plain = f32(s) * (q.astype(np.float32) - f32(z))
        fused = (np.float64(f32(s)) * q + np.float64(f32(f32(s) * f32(-z)))).astype(np.float32)
        if (out(plain) != out(fused)).any():
            break
    else:
        print("FAIL hardswish_vectorized: no parameters where the fused dequantization matters")
        return 1
    x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(np.tile(q, 4)), s, z)
    want = torch.ops.quantized.hardswish(x, so, zo).int_repr().numpy()
    mlir = f"""func.func @forward(%q: tensor<1024xui8>) -> tensor<1024xui8> {{
  %x = cuvil.quant.dequantize %q {{fused, params = {params_attr([s], [z], None)}}} : tensor<1024xui8> -> tensor<1024xf32>
  %h = cuvil.act.hardswish %x : tensor<1024xf32>
  %y = cuvil.quant.quantize %h {{params = {params_attr([so], [zo], None)}}} : tensor<1024xf32> -> tensor<1024xui8>
  return %y : tensor<1024xui8>
}}
"""
    return run_exact(args, "hardswish_vectorized", mlir, [x.int_repr().numpy()], want)


def check_conv(args, rng):
    """cuvil.quant.conv2d against torch.ops.quantized.conv2d (QNNPACK):
    groups, strides, padding, dilation; weights per tensor and per output
    channel; with and without bias."""
    torch.backends.quantized.engine = "qnnpack"
    failures = 0
    shapes = [  # (N, C, H, W, Cout, groups, K, stride, padding, dilation)
        (1, 4, 7, 6, 6, 2, 3, (2, 1), (1, 2), (1, 2)),
        (2, 3, 9, 9, 5, 1, 3, (1, 1), (1, 1), (1, 1)),
        (1, 8, 6, 6, 8, 8, 3, (1, 1), (1, 1), (1, 1)),  # depthwise
        (1, 5, 5, 7, 4, 1, 1, (1, 1), (0, 0), (1, 1)),  # pointwise
    ]
    for index, (n, c, h, w, co, g, k, st, pad, dil) in enumerate(shapes):
        for per_channel in (False, True):
            with_bias = (index + per_channel) % 2 == 0
            name = f"conv{index}_{'channel' if per_channel else 'tensor'}{'_bias' if with_bias else ''}"
            x = torch.from_numpy(rng.randn(n, c, h, w).astype(np.float32))
            wt = torch.from_numpy((rng.randn(co, c // g, k, k) * 0.2).astype(np.float32))
            b = torch.from_numpy(rng.randn(co).astype(np.float32)) if with_bias else None
            sx, zx, sy, zy = 0.03, 120, 0.06, 110
            xq = torch.quantize_per_tensor(x, sx, zx, torch.quint8)
            if per_channel:
                sw = rng.uniform(0.002, 0.01, co)
                wq = torch.quantize_per_channel(wt, torch.tensor(sw), torch.zeros(co, dtype=torch.int64),
                                                0, torch.qint8)
                wattr = params_attr(sw, [0] * co, 0)
            else:
                wq = torch.quantize_per_tensor(wt, 0.005, 0, torch.qint8)
                wattr = params_attr([0.005], [0], None)
            try:
                packed = torch.ops.quantized.conv2d_prepack(wq, b, list(st), list(pad), list(dil), g)
                yq = torch.ops.quantized.conv2d(xq, packed, sy, zy)
            except RuntimeError as e:
                print(f"{name}: skipped, PyTorch's QNNPACK cannot run it ({str(e).splitlines()[0]})")
                continue
            oh, ow = yq.shape[2], yq.shape[3]
            xt, wtt, yt = (f"tensor<{n}x{c}x{h}x{w}xui8>", f"tensor<{co}x{c // g}x{k}x{k}xi8>",
                           f"tensor<{n}x{co}x{oh}x{ow}xui8>")
            bt = f"tensor<{co}xf32>"
            sig = f"%x: {xt}, %w: {wtt}" + (f", %b: {bt}" if with_bias else "")
            operands = "%x, %w" + (", %b" if with_bias else "")
            types = f"{xt}, {wtt}" + (f", {bt}" if with_bias else "")
            groups = f" groups {g}" if g != 1 else ""
            mlir = f"""func.func @forward({sig}) -> {yt} {{
  %y = cuvil.quant.conv2d {operands} stride [{st[0]}, {st[1]}] padding [{pad[0]}, {pad[1]}] dilation [{dil[0]}, {dil[1]}]{groups} {{input_params = {params_attr([sx], [zx], None)}, weight_params = {wattr}, output_params = {params_attr([sy], [zy], None)}}} : ({types}) -> {yt}
  return %y : {yt}
}}
"""
            d = os.path.join(args.work_dir, name)
            os.makedirs(d, exist_ok=True)
            inputs = [xq.int_repr().numpy(), wq.int_repr().numpy()] + ([b.numpy()] if with_bias else [])
            failures += run_both(args, d, mlir, inputs, yq.int_repr().numpy(), name)
    return failures


def check_add(args, rng):
    """cuvil.quant.add against torch.ops.quantized.add / add_relu on both
    engines here: exactly on the x86 path PyTorch takes with onednn (float
    dequantize, add, quantize), within one step of QNNPACK's integer
    arithmetic."""
    failures = 0
    shape = (2, 3, 7, 11)
    for engine, max_step in (("onednn", 0), ("qnnpack", 0)):
        if engine not in torch.backends.quantized.supported_engines:
            print(f"add {engine}: skipped, not an engine of this PyTorch")
            continue
        arithmetic = ', arithmetic = "qnnpack"' if engine == "qnnpack" else ""
        torch.backends.quantized.engine = engine
        for relu in (False, True):
            name = f"add{'_relu' if relu else ''}_{engine}"
            sa, za, sb, zb, sy, zy = 0.05, 128, 0.031, 7, 0.06, 0 if relu else 110
            a = torch.quantize_per_tensor(torch.from_numpy((rng.randn(*shape) * 3).astype(np.float32)),
                                          sa, za, torch.quint8)
            b = torch.quantize_per_tensor(torch.from_numpy((rng.randn(*shape) * 2).astype(np.float32)),
                                          sb, zb, torch.quint8)
            fn = torch.ops.quantized.add_relu if relu else torch.ops.quantized.add
            y = fn(a, b, sy, zy)
            t = "x".join(map(str, shape))
            mlir = f"""func.func @forward(%a: tensor<{t}xui8>, %b: tensor<{t}xui8>) -> tensor<{t}xui8> {{
  %y = cuvil.quant.add %a, %b {{lhs_params = {params_attr([sa], [za], None)}, rhs_params = {params_attr([sb], [zb], None)}, output_params = {params_attr([sy], [zy], None)}{", relu" if relu else ""}{arithmetic}}} : (tensor<{t}xui8>, tensor<{t}xui8>) -> tensor<{t}xui8>
  return %y : tensor<{t}xui8>
}}
"""
            d = os.path.join(args.work_dir, name)
            os.makedirs(d, exist_ok=True)
            failures += run_both(args, d, mlir, [a.int_repr().numpy(), b.int_repr().numpy()],
                                 y.int_repr().numpy(), name, max_step)
    return failures


def qnnpack_tie_scale():
    """A scale s whose QNNPACK multiplier over a 12x12 window, float(s) /
    (float(s) * 144), is not float(1/144), and the centred window sums
    that this last bit rounds to another integer."""
    f32 = np.float32
    for i in range(10000):
        s = f32(0.043 + 1e-5 * i)
        m, plain = s / (s * f32(144)), f32(1) / f32(144)
        if m != plain:
            acc = np.arange(-17 * 144, 200 * 144, dtype=np.int64)
            t = acc.astype(np.float32)
            ties = acc[np.rint(t * m) != np.rint(t * plain)]
            if len(ties):
                return float(s), ties
    raise RuntimeError("no scale whose QNNPACK pooling multiplier differs from 1/144")


def check_avg_pool(args, rng):
    """cuvil.quant.avg_pool2d against PyTorch's quantized average pooling:
    its x86 kernels on NCHW and on channels-last tensors (which round
    differently), padding counted or not, and QNNPACK's pooling (the
    qnnpack engine, either layout: its own multiplier, the whole window
    always counted), on a scale where QNNPACK's multiplier differs from the
    plain one in its last bit and window sums that this changes."""
    failures = 0
    s, ties = qnnpack_tie_scale()
    z = 17
    x = torch.quantize_per_tensor(torch.from_numpy((rng.randn(1, 40, 12, 12) * 2).astype(np.float32)), s, z,
                                  torch.quint8)
    q = x.int_repr().numpy().copy()
    for c, acc in enumerate(ties[:: max(1, len(ties) // 20)][:20]):  # channels whose sums are such ties
        per, extra = divmod(int(acc), 144)
        plane = np.full(144, z + per, np.int64)
        plane[:extra] += 1
        q[0, c] = plane.reshape(12, 12)
    x = torch._make_per_tensor_quantized_tensor(torch.from_numpy(q), s, z)
    cases = []
    for layout in ("nchw", "channels_last"):
        xx = x if layout == "nchw" else x.contiguous(memory_format=torch.channels_last)
        cases.append((f"adaptive_{layout}", "onednn", lambda t: torch.nn.functional.adaptive_avg_pool2d(t, 3),
                      [4, 4], [4, 4], [0, 0], True, layout != "nchw", xx))
        for include in (True, False):
            cases.append((f"avg3x3_pad{'_counted' if include else ''}_{layout}", "onednn",
                          lambda t, inc=include: torch.nn.functional.avg_pool2d(t, 3, 1, 1, count_include_pad=inc),
                          [3, 3], [1, 1], [1, 1], include, layout != "nchw", xx))
        qnnpack = [("global", lambda t: torch.nn.functional.adaptive_avg_pool2d(t, 1), [12, 12], [12, 12], [0, 0]),
                   ("adaptive2", lambda t: torch.nn.functional.adaptive_avg_pool2d(t, 2), [6, 6], [6, 6], [0, 0]),
                   ("avg3x3s2_pad_uncounted",  # QNNPACK counts the padding whatever the flag says
                    lambda t: torch.nn.functional.avg_pool2d(t, 3, 2, 1, count_include_pad=False),
                    [3, 3], [2, 2], [1, 1]),
                   ("avg2x2_divisor_override",  # and ignores the override
                    lambda t: torch.nn.functional.avg_pool2d(t, 2, divisor_override=3), [2, 2], [2, 2], [0, 0])]
        for name, fn, k, st, pad in qnnpack:
            cases.append((f"{name}_qnnpack_{layout}", "qnnpack", fn, k, st, pad, True, "qnnpack", xx))
    for name, engine, fn, k, st, pad, include, rounding, xx in cases:
        if engine not in torch.backends.quantized.supported_engines:
            print(f"avg_pool {name}: skipped, not an engine of this PyTorch")
            continue
        torch.backends.quantized.engine = engine
        y = fn(xx)
        out = "x".join(map(str, y.shape))
        attrs = [f"input_params = {params_attr([s], [z], None)}", f"output_params = {params_attr([s], [z], None)}"]
        if include:
            attrs.append("count_include_pad")
        if rounding == "qnnpack":
            attrs.append('arithmetic = "qnnpack"')
        elif rounding:
            attrs.append("round_before_zero_point")
        mlir = f"""func.func @forward(%x: tensor<1x40x12x12xui8>) -> tensor<{out}xui8> {{
  %y = cuvil.quant.avg_pool2d %x kernel {k} stride {st} padding {pad} {{{", ".join(attrs)}}} : tensor<1x40x12x12xui8> -> tensor<{out}xui8>
  return %y : tensor<{out}xui8>
}}
"""
        d = os.path.join(args.work_dir, "avg_pool_" + name)
        os.makedirs(d, exist_ok=True)
        failures += run_both(args, d, mlir, [q.astype(np.uint8)], y.int_repr().numpy(), "avg_pool_" + name)
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    os.makedirs(args.work_dir, exist_ok=True)
    rng = np.random.RandomState(11)
    failures = 0
    for name, dtype, scales, zps, axis in cases(rng):
        elem = STORAGE[dtype][0]
        attr = params_attr(scales, zps, axis)
        out_attr = params_attr([0.07], [3], None)  # requantize target: quint8 per tensor
        mlir = f"""func.func @forward(%x: {tensor('f32')}) -> ({tensor(elem)}, {tensor('f32')}, {tensor('ui8')}) {{
  %q = cuvil.quant.quantize %x {{params = {attr}}} : {tensor('f32')} -> {tensor(elem)}
  %d = cuvil.quant.dequantize %q {{params = {attr}}} : {tensor(elem)} -> {tensor('f32')}
  %r = cuvil.quant.requantize %q {{input_params = {attr}, output_params = {out_attr}}} : {tensor(elem)} -> {tensor('ui8')}
  return %q, %d, %r : {tensor(elem)}, {tensor('f32')}, {tensor('ui8')}
}}
"""
        d = os.path.join(args.work_dir, name)
        os.makedirs(d, exist_ok=True)
        model = os.path.join(d, "model.mlir")
        with open(model, "w") as f:
            f.write(mlir)
        x = sample_input(rng, np.array(scales))
        np.save(os.path.join(d, "x.npy"), x)
        q = torch_quantize(torch.from_numpy(x), dtype, scales, zps, axis)
        r = torch.quantize_per_tensor(q.dequantize(), 0.07, 3, torch.quint8)
        want = [q.int_repr().numpy(), q.dequantize().numpy(), r.int_repr().numpy()]
        for how, prefix in runs(args, d, model):
            out = os.path.join(d, how)
            subprocess.run(prefix + ["-i", os.path.join(d, "x.npy"), "-o", out, "--quiet"],
                           check=True)
            for i, (label, w) in enumerate(zip(("quantize", "dequantize", "requantize"), want)):
                got = np.load(os.path.join(out, f"output{i}.npy"))
                exact = np.array_equal(got.astype(np.float64), w.astype(np.float64), equal_nan=True)
                if not exact:
                    bad = np.argwhere(got.astype(np.float64) != w.astype(np.float64))[:3].tolist()
                    print(f"FAIL {name} {how} {label}: differs at {bad}")
                    failures += 1
        print(f"{name}: quantize, dequantize, requantize exact (reference, x86_64, aarch64)"
              if not failures else f"{name}: checked")
    failures += check_linear(args, rng)
    failures += check_linear_ties(args)
    failures += check_linear_dynamic(args, rng)
    failures += check_mul(args, rng)
    failures += check_vectorized_dequantize(args)
    failures += check_conv(args, rng)
    failures += check_add(args, rng)
    failures += check_avg_pool(args, rng)
    print('all as PyTorch computes them (exact unless said above)' if not failures
          else f'{failures} difference(s)')
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
