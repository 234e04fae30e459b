#!/usr/bin/env bash
# Installs dependencies, builds Cuvil and runs the bundled example model
# (examples/mlp/model.pt, a scripted PyTorch classifier) the way a user
# would: cuvil-import and cuvil-opt show the graph IR and what the graph
# pipeline did to it, cuvil-export compiles the .pt into libinference.so,
# and cuvil-run runs that library through its C API (outputs, latency),
# compared with PyTorch's output. With qemu-aarch64 it also compiles for
# aarch64 and runs that library under emulation.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"

EXAMPLE="$ROOT/examples/mlp"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "== cuvil-import: examples/mlp/model.pt -> cuvil IR"
"$BUILD_DIR/bin/cuvil-import" "$EXAMPLE/model.pt" --input-shape 0=2x8xf32 -o "$OUT/model.mlir"
echo "   wrote $(grep -cE '= cuvil\.' "$OUT/model.mlir") cuvil ops"

echo "== cuvil-opt: the graph pipeline (fusion, memory planning)"
"$BUILD_DIR/bin/cuvil-opt" "$OUT/model.mlir" --cuvil-graph-optimize='graph-stats=1 memory-report=1' \
  -o "$OUT/model.opt.mlir"

echo "== cuvil-export: examples/mlp/model.pt -> libinference.so (x86_64)"
"$BUILD_DIR/bin/cuvil-export" --model "$EXAMPLE/model.pt" --input-shape 0=2x8xf32 \
  --target x86_64 -o "$OUT/libinference.so" --emit-header "$OUT/cuvil_runtime.h"
echo "   $(stat -c %s "$OUT/libinference.so") bytes, exports: $(nm -D --defined-only "$OUT/libinference.so" | grep -c ' T cuvil_') cuvil_* functions"

echo "== cuvil-run: the library on examples/mlp/input0.npy"
"$BUILD_DIR/bin/cuvil-run" "$OUT/libinference.so" --input "$EXAMPLE/input0.npy" \
  --output-dir "$OUT" --benchmark 1000

if command -v qemu-aarch64 >/dev/null && [ -x "$BUILD_DIR/bin/aarch64/cuvil-run" ]; then
  echo "== cuvil-export --target aarch64, run under qemu-aarch64"
  "$BUILD_DIR/bin/cuvil-export" --model "$EXAMPLE/model.pt" --input-shape 0=2x8xf32 \
    --target aarch64 -o "$OUT/libinference_aarch64.so"
  qemu-aarch64 -L /usr/aarch64-linux-gnu "$BUILD_DIR/bin/aarch64/cuvil-run" \
    "$OUT/libinference_aarch64.so" --input "$EXAMPLE/input0.npy" --output-dir "$OUT/aarch64"
fi

echo "== compare with PyTorch's output (expected_output0.npy)"
/usr/bin/python3 - "$OUT/output0.npy" "$EXAMPLE/expected_output0.npy" <<'PY'
import sys
import numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.abs(got - want).max())
print(f"   max abs difference to PyTorch: {err:.3g}")
sys.exit(0 if err <= 1e-5 else 1)
PY
echo "== cuvil-quantize: int8 with the accuracy gate (relative L2 <= 0.01), then export and run"
mkdir -p "$OUT/calibration"
/usr/bin/python3 - "$EXAMPLE/input0.npy" "$OUT/calibration" <<'PY'
import os, sys
import numpy as np
x = np.load(sys.argv[1])
rng = np.random.RandomState(0)
for i in range(16):  # samples like the example input: .npz, one array per model input
    np.savez(os.path.join(sys.argv[2], f"{i:02d}.npz"), input0=(rng.randn(*x.shape) * x.std()).astype(np.float32))
PY
"$BUILD_DIR/bin/cuvil-quantize" --model "$EXAMPLE/model.pt" --calibration-data "$OUT/calibration" \
  --output "$OUT/model.int8.mlirbc" --report "$OUT/quantize.json" --no-progress
/usr/bin/python3 - "$OUT/quantize.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
layers = ", ".join(f"{l['name']}: {l['precision']}" for l in r["layers"])
print(f"   gate: relative L2 {r['gate']['after_fallback']['relative_l2']:.4f} <= {r['gate']['max_l2']}; {layers}")
PY
"$BUILD_DIR/bin/cuvil-export" --model "$OUT/model.int8.mlirbc" --target x86_64 -o "$OUT/libinference_int8.so"
"$BUILD_DIR/bin/cuvil-run" "$OUT/libinference_int8.so" --input "$EXAMPLE/input0.npy" --output-dir "$OUT/int8"
echo "== done"
