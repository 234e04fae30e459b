#!/usr/bin/env python3
"""The compile cache: what a redeploy costs against a cold export, same run.

For resnet18 (traced+frozen) and the transformer encoder (4 layers, d=256,
scripted), each measured --runs times (medians):
- cold: an export into an empty cache;
- warm: the same export again (the whole library from the cache);
- weights: the model with new weights (as after fine-tuning) saved under
  a new file name, exported to the same output into the warm cache: the weights plan of the model's structure
  makes the library's weights from the new tensors and places them in the
  cached linked code (no graph pipeline, lowering or code generation);
- layer: the model with one more layer (a LayerNorm after the encoder, a
  conv-bn-relu block before resnet18's pooling), new weights each run: only
  the functions it touches compile.
Every redeployed library is timed and checked byte for byte against a cold
export of the same model; the report gives the ratios (cold / redeploy) and
the code units served from the cache.

    /usr/bin/python3 bench/cache_bench.py --bin build/bin [--runs 3] [--json out.json]
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torchvision


class ExtraNorm(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.norm = nn.LayerNorm(256)

    def forward(self, x):
        return self.norm(self.body(x))


def resnet_with_block(base):
    m = torchvision.models.resnet18()
    m.load_state_dict(base.state_dict())
    m.layer4 = nn.Sequential(m.layer4, nn.Conv2d(512, 512, 3, padding=1), nn.BatchNorm2d(512), nn.ReLU())
    return m.eval()


def encoder():
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=4).eval()


MODELS = {
    "resnet18_traced_frozen": dict(
        make=lambda: torchvision.models.resnet18().eval(),
        grow=resnet_with_block,
        example=lambda: torch.randn(1, 3, 224, 224),
        shape="0=1x3x224x224xf32", save="trace_freeze"),
    "transformer_encoder_scripted": dict(
        make=encoder,
        grow=lambda base: ExtraNorm(base).eval(),
        example=lambda: torch.randn(2, 16, 256),
        shape="0=2x16x256xf32", save="script"),
}


def save(module, how, example, path):
    with torch.no_grad():
        if how == "trace_freeze":
            torch.jit.freeze(torch.jit.trace(module, example)).save(path)
        else:
            torch.jit.script(module).save(path)


def reweight(module, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(1.0 + 0.01 * torch.randn_like(p))
    return module


def export(bin_dir, model, shape, out, cache):
    cmd = [os.path.join(bin_dir, "cuvil-export"), "--model", model, "--input-shape", shape,
           "--target", "x86_64", "--soname", "libinference.so", "-o", out, "-v"]
    if cache:
        cmd += ["--cache-dir", cache]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    units = re.search(r"code compiled: (\d+) of (\d+) units", proc.stderr)
    cached = re.search(r"code from the cache \((\d+) units\)", proc.stderr)
    plan = re.search(r"weights made by the cached plan of this model structure \((\d+) weights, (\d+) transforms", proc.stderr)
    if "from the compile cache" in proc.stderr:
        served = "library"
    elif plan:
        served = f"plan: {plan.group(1)} weights, {plan.group(2)} transforms replayed, no compile"
    elif cached:
        served = f"{cached.group(1)}/{cached.group(1)} units"
    elif units:
        served = f"{int(units.group(2)) - int(units.group(1))}/{units.group(2)} units"
    else:
        served = "?"
    return seconds, served


def bench(bin_dir, name, spec, runs, work):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    model = os.path.join(d, "model.pt")
    cache = os.path.join(d, "cache")
    example = spec["example"]()
    torch.manual_seed(0)
    base = spec["make"]()
    figures = {k: [] for k in ("cold", "warm", "weights", "cold_weights", "layer", "cold_layer")}
    served = {}
    identical = {"weights": True, "layer": True}

    def against_cold(what, path):
        """Times a cold export of the model just redeployed; compares the bytes."""
        ref = os.path.join(d, f"cold-{what}.so")
        t, _ = export(bin_dir, path, spec["shape"], ref, None)
        figures["cold_" + what].append(t)
        identical[what] &= filecmp.cmp(os.path.join(d, "out.so"), ref, shallow=False)

    out = os.path.join(d, "out.so")
    for run in range(runs):
        shutil.rmtree(cache, ignore_errors=True)
        save(base, spec["save"], example, model)
        t, served["cold"] = export(bin_dir, model, spec["shape"], out, cache)
        figures["cold"].append(t)
        t, served["warm"] = export(bin_dir, model, spec["shape"], out, cache)
        figures["warm"].append(t)

        # Fine-tuned, saved under a name of its own.
        tuned = os.path.join(d, f"model_finetuned_{run}.pt")
        save(reweight(spec["make"](), 100 + run), spec["save"], example, tuned)
        t, served["weights"] = export(bin_dir, tuned, spec["shape"], out, cache)
        figures["weights"].append(t)
        against_cold("weights", tuned)

        save(reweight(spec["grow"](base), 200 + run), spec["save"], example, model)
        t, served["layer"] = export(bin_dir, model, spec["shape"], out, cache)
        figures["layer"].append(t)
        against_cold("layer", model)
    medians = {k: statistics.median(v) for k, v in figures.items()}
    return {"seconds": medians, "served": served,
            "ratios": {"warm": medians["cold"] / medians["warm"],
                       "weights": medians["cold_weights"] / medians["weights"],
                       "layer": medians["cold_layer"] / medians["layer"]},
            "byte_identical": identical}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    ap.add_argument("--json")
    args = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory(prefix="cuvil-cache-bench-") as work:
        for name in args.models:
            results[name] = bench(args.bin, name, MODELS[name], args.runs, work)
    print(f"{'model':30} {'cold s':>7} {'warm s':>7} {'weights s':>9} {'layer s':>8} {'cold+layer s':>12}"
          f"   {'warm x':>7} {'weights x':>9} {'layer x':>8}   from the cache (weights; layer)")
    ok = True
    for name, r in results.items():
        s, x = r["seconds"], r["ratios"]
        print(f"{name:30} {s['cold']:7.3f} {s['warm']:7.3f} {s['weights']:9.3f} {s['layer']:8.3f} "
              f"{s['cold_layer']:12.3f}   {x['warm']:6.1f}x {x['weights']:8.1f}x {x['layer']:7.1f}x   "
              f"{r['served']['weights']}; {r['served']['layer']}")
        for what, same in r["byte_identical"].items():
            if not same:
                ok = False
                print(f"  {name}: the {what} redeploy differs from a cold export of the same model")
    print("ratios: cold export of the same model / redeploy through the cache (warm: no change); "
          "every redeployed library byte-identical to its cold export" if ok else "")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
