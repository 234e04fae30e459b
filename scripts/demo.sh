#!/usr/bin/env bash
# Installs dependencies, builds Cuvil and runs the bundled example model
# (examples/mlp/model.pt, a scripted PyTorch classifier): imports it with
# cuvil-import, optimises it with cuvil-opt, runs it with cuvil-run on the
# reference evaluator, and compares the output with PyTorch's.
#
# Not there yet: compiling to libinference.so (cuvil-export), which lands
# with the CPU code generation issue; the demo will then run the library.
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

echo "== cuvil-opt: canonicalize, fold constants, infer shapes"
"$BUILD_DIR/bin/cuvil-opt" "$OUT/model.mlir" \
  --pass-pipeline='builtin.module(func.func(canonicalize,cuvil-fold-constants,cuvil-infer-shapes))' \
  -o "$OUT/model.opt.mlir"

echo "== cuvil-run: reference evaluation on examples/mlp/input0.npy"
"$BUILD_DIR/bin/cuvil-run" "$OUT/model.opt.mlir" --input "$EXAMPLE/input0.npy" \
  --output-dir "$OUT" --benchmark 20

echo "== compare with PyTorch's output (expected_output0.npy)"
/usr/bin/python3 - "$OUT/output0.npy" "$EXAMPLE/expected_output0.npy" <<'PY'
import sys
import numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
err = float(np.abs(got - want).max())
print(f"   max abs difference to PyTorch: {err:.3g}")
sys.exit(0 if err <= 1e-5 else 1)
PY
echo "== done (compiling to libinference.so arrives with cuvil-export)"
