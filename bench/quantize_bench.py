#!/usr/bin/env python3
"""cuvil-quantize on real models: accuracy with every method, and INT8 speed next to PyTorch.

For resnet18, mobilenet_v2 and the transformer encoder (test/import/models.py),
random calibration (--calibration N) and validation (--validation N) samples in
the model's batch-1 shapes are written; cuvil-quantize runs with each --method;
the report's gate figures, the layers left in int8 and the fallbacks are
tabulated, and the compiled quantized library's outputs are compared with
PyTorch's float outputs here (relative L2, independent of the tool).

With --speed, the same run also times, at --threads threads, the float Cuvil
library, the int8 Cuvil library (the percentile quantization at the 0.01
gate), PyTorch's own INT8 (static post-training quantization of torchvision's
quantizable resnet18/mobilenet_v2 with the same weights and calibration
samples, on the onednn and the qnnpack engine) and Cuvil at PyTorch's
accuracy (cuvil-quantize --max-l2 set to the relative L2 PyTorch's INT8
reaches on the same validation samples), alternating them in rounds, and
prints the ratios and the fraction of the int8 dot-product peak
cuvil-bench-ceilings measures.

    /usr/bin/python3 bench/quantize_bench.py --bin build/bin [--models resnet18,...]
        [--methods minmax,percentile,entropy,mse] [--speed] [--json out.json]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "import"))
import models  # noqa: E402

MODELS = {"resnet18": "resnet18_scripted", "mobilenet_v2": "mobilenet_v2_scripted",
          "transformer_encoder": "transformer_encoder_scripted"}


def prepare(name, work, n_cal, n_val):
    torch.manual_seed(0)
    module, inputs = models.make(MODELS[name])
    path = os.path.join(work, name + ".pt")
    module.save(path)
    rng = np.random.RandomState(0)
    shapes = [tuple(x.shape) for x in inputs]
    cal, val = os.path.join(work, name + "_cal"), os.path.join(work, name + "_val")
    os.makedirs(cal)
    os.makedirs(val)
    for i in range(n_cal):
        np.savez(os.path.join(cal, f"{i:03d}.npz"),
                 **{f"input{k}": rng.randn(*s).astype(np.float32) for k, s in enumerate(shapes)})
    refs = []
    for i in range(n_val):
        xs = [rng.randn(*s).astype(np.float32) for s in shapes]
        d = os.path.join(val, f"{i:03d}")
        os.makedirs(d)
        for k, x in enumerate(xs):
            np.save(os.path.join(d, f"input{k}.npy"), x)
        with torch.no_grad():
            refs.append((d, module(*[torch.from_numpy(x) for x in xs]).numpy()))
    return path, cal, val, refs, module, shapes


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def compiled_l2(bin_dir, qpath, refs, work):
    lib = qpath + ".so"
    r = run([os.path.join(bin_dir, "cuvil-export"), "--model", qpath, "--target", "x86_64", "-o", lib])
    if r.returncode:
        raise RuntimeError(r.stderr)
    num = den = 0.0
    for d, ref in refs:
        out = os.path.join(work, "out")
        r = run([os.path.join(bin_dir, "cuvil-run"), lib, "--input", os.path.join(d, "input0.npy"),
                 "--output-dir", out])
        if r.returncode:
            raise RuntimeError(r.stderr)
        got = np.load(os.path.join(out, "output0.npy")).astype(np.float64)
        num += float(np.sum((got - ref) ** 2))
        den += float(np.sum(ref.astype(np.float64) ** 2))
    return lib, (num / den) ** 0.5


def cuvil_latency(bin_dir, lib, x_path, threads, runs):
    r = run([os.path.join(bin_dir, "cuvil-run"), lib, "--input", x_path, "--threads", str(threads),
             "--benchmark", str(runs), "--output-dir", lib + ".out"])
    if r.returncode:
        raise RuntimeError(r.stderr)
    m = re.search(r"median ([\d.]+(?:e[-+]?\d+)?) ms", r.stdout)
    return float(m.group(1))


def torch_int8(name, engine, cal_dir, float_model):
    """torchvision's quantizable model with the float model's weights, static
    PTQ on `engine`, calibrated on the same samples."""
    import torchvision.models.quantization as qm
    torch.backends.quantized.engine = engine
    m = {"resnet18": qm.resnet18, "mobilenet_v2": qm.mobilenet_v2}[name](weights=None, quantize=False).eval()
    missing = m.load_state_dict(float_model.state_dict(), strict=False)
    if missing.missing_keys:
        raise RuntimeError(f"{name}: the quantizable model lacks {missing.missing_keys[:3]}")
    m.fuse_model()
    m.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    torch.ao.quantization.prepare(m, inplace=True)
    with torch.no_grad():
        for f in sorted(os.listdir(cal_dir)):
            m(torch.from_numpy(np.load(os.path.join(cal_dir, f))["input0"]))
    torch.ao.quantization.convert(m, inplace=True)
    return m


def torch_l2(m, float_model, refs):
    """Relative L2 of PyTorch's INT8 model against the float one on the validation samples."""
    num = den = 0.0
    with torch.no_grad():
        for d, ref in refs:
            q = m(torch.from_numpy(np.load(os.path.join(d, "input0.npy")))).double().numpy()
            num += float(np.sum((q - ref) ** 2))
            den += float(np.sum(ref.astype(np.float64) ** 2))
    return (num / den) ** 0.5


def torch_latency(m, x, threads, runs):
    torch.set_num_threads(threads)
    with torch.inference_mode():
        for _ in range(5):
            m(x)
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            m(x)
            times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def conv_ops(module, shapes):
    """Direct-convolution and linear multiply-adds x2 (the op count the peak is compared with)."""
    total = [0]

    def hook(mod, inp, out):
        if isinstance(mod, torch.nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1] * mod.in_channels // mod.groups
            total[0] += 2 * out.numel() * k
        elif isinstance(mod, torch.nn.Linear):
            total[0] += 2 * out.numel() * mod.in_features
    hs = [m.register_forward_hook(hook) for m in module.modules()]
    with torch.no_grad():
        module(*[torch.randn(*s) for s in shapes])
    for h in hs:
        h.remove()
    return total[0]


def int8_peak(bin_dir):
    exe = os.path.join(bin_dir, "cuvil-bench-ceilings")
    if not os.path.exists(exe):
        return None
    r = run([exe])
    try:
        data = json.loads(r.stdout)
    except ValueError:
        return None
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--methods", default="minmax,percentile,entropy,mse")
    ap.add_argument("--calibration", type=int, default=16)
    ap.add_argument("--validation", type=int, default=8)
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=3, help="speed: rounds alternating the contenders")
    ap.add_argument("--json")
    ap.add_argument("--keep", help="work directory to keep")
    args = ap.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="cuvil-qbench-")
    os.makedirs(work, exist_ok=True)
    results = []
    print("| model | method | layers int8 | fallbacks | L2 all int8 | L2 after (gate) | L2 vs PyTorch (compiled) | cosine | time |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        os.makedirs(os.path.join(work, name), exist_ok=True)
        path, cal, val, refs, module, shapes = prepare(name, os.path.join(work, name), args.calibration,
                                                        args.validation)
        for method in args.methods.split(","):
            out = os.path.join(work, name, f"{method}.mlirbc")
            rep = os.path.join(work, name, f"{method}.json")
            t = time.time()
            r = run([os.path.join(args.bin, "cuvil-quantize"), "--no-progress", "--model", path,
                     "--calibration-data", cal, "--validation-data", val, "--method", method,
                     "--output", out, "--report", rep, "--html", rep.replace(".json", ".html")])
            seconds = time.time() - t
            if r.returncode:
                print(f"| {name} | {method} | FAILED: {r.stderr.strip()[-300:]} |||||||")
                results.append({"model": name, "method": method, "error": r.stderr})
                continue
            report = json.load(open(rep))
            layers = report["layers"]
            int8 = sum(l["precision"] == "int8" for l in layers)
            lib, l2 = compiled_l2(args.bin, out, refs, work)
            g = report["gate"]
            fb = ", ".join(f"{f['layer']}->{f['precision']}" for f in report["fallbacks"])
            print(f"| {name} | {method} | {int8}/{len(layers)} | {fb if len(fb) < 80 else fb[:77] + '...'} | "
                  f"{g['before_fallback']['relative_l2']:.4f} | {g['after_fallback']['relative_l2']:.4f} | "
                  f"{l2:.4f} | {g['after_fallback']['cosine']:.5f} | {seconds:.0f} s |", flush=True)
            results.append({"model": name, "method": method, "int8_layers": int8, "layers": len(layers),
                            "fallbacks": report["fallbacks"], "gate": g, "compiled_l2_vs_torch": l2,
                            "seconds": seconds, "library": lib})
    if args.speed:
        # Speed at the accuracy PyTorch's own INT8 reaches: cuvil-quantize
        # with --max-l2 set to PyTorch's relative L2 on the same samples
        # (and at its own 0.01 gate, the percentile row above).
        peak = int8_peak(args.bin)
        print("\n| model | Cuvil fp32 | Cuvil int8 (gate 0.01) | Cuvil int8 at PyTorch's accuracy | PyTorch INT8 onednn | PyTorch INT8 qnnpack | speed-up vs best PyTorch INT8 | GOP/s | fraction of int8 peak |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name in args.models.split(","):
            libs = [r for r in results if r["model"] == name and r.get("method") == "percentile" and "library" in r]
            if not libs:
                continue
            d = os.path.join(work, name)
            path = os.path.join(d, name + ".pt")
            fp32 = os.path.join(d, "fp32.so")
            _, inputs = models.make(MODELS[name])
            run([os.path.join(args.bin, "cuvil-export"), "--model", path, "--target", "x86_64", "-o", fp32,
                 "--input-shape", "0=" + "x".join(map(str, inputs[0].shape)) + "xf32"])
            x_path = os.path.join(d, name + "_val", "000", "input0.npy")
            float_model = torch.jit.load(path)
            refs = [(os.path.join(d, name + "_val", v), None) for v in sorted(os.listdir(os.path.join(d, name + "_val")))]
            with torch.no_grad():
                refs = [(v, float_model(torch.from_numpy(np.load(os.path.join(v, "input0.npy")))).numpy()) for v, _ in refs]
            torch_models, torch_acc = {}, {}
            if name in ("resnet18", "mobilenet_v2"):
                for engine in ("onednn", "qnnpack"):
                    if engine in torch.backends.quantized.supported_engines:
                        torch_models[engine] = torch_int8(name, engine, os.path.join(d, name + "_cal"), float_model)
                        torch_acc[engine] = torch_l2(torch_models[engine], float_model, refs)
            matched = None
            if torch_acc:
                target = min(torch_acc.values())
                out = os.path.join(d, "matched.mlirbc")
                r = run([os.path.join(args.bin, "cuvil-quantize"), "--no-progress", "--model", path,
                         "--calibration-data", os.path.join(d, name + "_cal"), "--validation-data",
                         os.path.join(d, name + "_val"), "--output", out, "--max-l2", f"{target:.6f}",
                         "--report", out + ".json"])
                if r.returncode == 0:
                    matched, _ = compiled_l2(args.bin, out, refs, work)
                    matched_report = json.load(open(out + ".json"))
            # Alternate the contenders in rounds; medians of the rounds.
            times = {"fp32": [], "int8": [], "matched": [], **{e: [] for e in torch_models}}
            x = torch.from_numpy(np.load(x_path))
            for _ in range(args.rounds):
                times["fp32"].append(cuvil_latency(args.bin, fp32, x_path, args.threads, args.runs))
                times["int8"].append(cuvil_latency(args.bin, libs[0]["library"], x_path, args.threads, args.runs))
                if matched:
                    times["matched"].append(cuvil_latency(args.bin, matched, x_path, args.threads, args.runs))
                for e, m in torch_models.items():
                    times[e].append(torch_latency(m, x, args.threads, args.runs))
            med = {k: float(np.median(v)) if v else float("nan") for k, v in times.items()}
            best = min([med[e] for e in torch_models] or [float("nan")])
            ops = conv_ops(models.build(MODELS[name])[0], [tuple(i.shape) for i in inputs])
            fastest = med["matched"] if matched else med["int8"]
            vnni = (peak or {}).get("int8_dot_gops_per_core", {}).get("avx512_vnni", 0) * args.threads
            int8_layers = (sum(l["precision"] == "int8" for l in matched_report["layers"]), len(matched_report["layers"])) if matched else None
            print(f"| {name} | {med['fp32']:.2f} ms | {med['int8']:.2f} ms | "
                  + (f"{med['matched']:.2f} ms (L2 <= {min(torch_acc.values()):.4f}, {int8_layers[0]}/{int8_layers[1]} int8)" if matched else "n/a")
                  + f" | {med.get('onednn', float('nan')):.2f} ms (L2 {torch_acc.get('onednn', float('nan')):.4f}) | "
                  f"{med.get('qnnpack', float('nan')):.2f} ms (L2 {torch_acc.get('qnnpack', float('nan')):.4f}) | "
                  f"{best / fastest:.2f}x | {ops / fastest / 1e6:.0f} | "
                  + (f"{ops / fastest / 1e6 / vnni:.0%}" if vnni else "n/a") + " |", flush=True)
            results.append({"model": name, "speed": {"medians_ms": med, "torch_l2": torch_acc, "ops": ops,
                                                     "threads": args.threads}})
        if peak:
            print("\nceilings:", json.dumps(peak))
    if args.json:
        json.dump(results, open(args.json, "w"), indent=2)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
