#!/usr/bin/env bash
# Installs dependencies, builds Cuvil and runs the bundled example model
# (examples/mlp): optimises it with cuvil-opt, runs it with cuvil-run on the
# reference evaluator, and compares the output with PyTorch's.
#
# What is not there yet: importing the .pt file (cuvil-import) and compiling
# to libinference.so (cuvil-export) land with the importer and CPU-export
# issues; until then the demo starts from the model's cuvil IR and runs it on
# the reference evaluator.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"

EXAMPLE="$ROOT/examples/mlp"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "== cuvil-opt: canonicalize, fold constants, infer shapes"
"$BUILD_DIR/bin/cuvil-opt" "$EXAMPLE/model.mlir" \
  --pass-pipeline='builtin.module(func.func(canonicalize,cuvil-fold-constants,cuvil-infer-shapes))' \
  -o "$OUT/model.opt.mlir"
echo "   wrote $(wc -l < "$OUT/model.opt.mlir") lines of cuvil IR"

echo "== cuvil-run: reference evaluation of examples/mlp on input0.npy"
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
