#!/usr/bin/env bash
# Prepares the GPU check's bundle (issue 25): everything a machine with an
# NVIDIA GPU needs to run every importer test model's CUDA code and compare
# it with PyTorch's outputs, with nothing built there (bash and the bundle
# only; scripts/gpu-check.sh runs it).
#
#   scripts/gpu-check-prepare.sh [BUILD_DIR] [OUT_DIR]
#       BUILD_DIR  default: the source tree's build/ (holds bin/cuvil-export
#                  and test/import/models/, which the import tests fill:
#                  ctest -L import)
#       OUT_DIR    default: ./gpu-bundle
#   MODELS="a b"   only these models (default: every model folder with
#                  model.pt and expected0.npy)
#   CC             the C compiler for the runner (default cc)
#
# The bundle:
#   OUT/models/NAME/lib.so            cuvil-export --target x86_64,cuda
#                                     --cuda-arch sm_80,sm_90 (cubins + PTX + CPU code)
#   OUT/models/NAME/input*.npy, expected*.npy   the test's inputs, PyTorch's outputs
#   OUT/gpu-check-runner              scripts/gpu_check_runner.c (libc + libdl only)
#   OUT/gpu_check_runner.c            its source, should the GPU machine's libc be older
#   OUT/gpu-check.sh                  the check itself
#   OUT/MANIFEST                      models, skipped ones, compiler revision, date
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
OUT=${2:-./gpu-bundle}
EXPORT=$BUILD/bin/cuvil-export
MODELS_DIR=$BUILD/test/import/models
ARCHS=sm_80,sm_90

[[ -x $EXPORT ]] || { echo "gpu-check-prepare: no $EXPORT (build it: ninja -C $BUILD cuvil-export)" >&2; exit 1; }
[[ -d $MODELS_DIR ]] || { echo "gpu-check-prepare: no $MODELS_DIR (the import tests make it: ctest -L import)" >&2; exit 1; }

# Never wipe a folder that is not a bundle of ours: OUT must be new, empty
# or hold a MANIFEST.
if [[ -d $OUT && -n $(ls -A "$OUT") && ! -f $OUT/MANIFEST ]]; then
  echo "gpu-check-prepare: $OUT exists and is not a GPU check bundle (no MANIFEST); not touching it" >&2
  exit 1
fi
rm -rf "$OUT/models"
mkdir -p "$OUT/models"
OUT=$(cd "$OUT" && pwd)

# The models: the MODELS list, or every folder the import tests left with a
# model and PyTorch's outputs.
if [[ -n ${MODELS:-} ]]; then
  read -r -a names <<<"$MODELS"
else
  names=()
  for d in "$MODELS_DIR"/*/; do
    d=${d%/}
    [[ -f $d/model.pt && -f $d/expected0.npy ]] && names+=("$(basename "$d")")
  done
  # Say which of the CMake lists' models the import tests have not made
  # (CUVIL_IMPORT_MODELS, CUVIL_ZOO_MODELS): they cannot be in the bundle.
  listed=$(sed -n '/^set(CUVIL_\(IMPORT\|ZOO\)_MODELS/,/)/p' "$SRC/test/import/CMakeLists.txt" |
           sed 's/set(CUVIL_[A-Z_]*//; s/)//' | tr -s ' \n' '\n' | grep -v '^$' || true)
  for m in $listed; do
    [[ -f $MODELS_DIR/$m/expected0.npy ]] ||
      echo "note: $m is in test/import/CMakeLists.txt but $MODELS_DIR/$m has no model (run its import test first)"
  done
fi

# The runner first: a compiler problem should show before minutes of exports.
echo "== runner: ${CC:-cc} -O2 gpu_check_runner.c -ldl"
"${CC:-cc}" -O2 -o "$OUT/gpu-check-runner" "$SRC/scripts/gpu_check_runner.c" -ldl
cp "$SRC/scripts/gpu_check_runner.c" "$SRC/scripts/gpu-check.sh" "$OUT/"
chmod +x "$OUT/gpu-check.sh"

exported=()
skipped=()
i=0
for name in "${names[@]}"; do
  i=$((i + 1))
  d=$MODELS_DIR/$name
  # One input*.npy per --input-shape flag of shapes.txt (as check_import.py
  # reads them): a model that takes inputs needs input0.npy at least.
  needs_input=$([[ -s $d/shapes.txt ]] && echo 1 || echo 0)
  if [[ ! -f $d/model.pt || ! -f $d/expected0.npy || ($needs_input == 1 && ! -f $d/input0.npy) ]]; then
    echo "[$i/${#names[@]}] $name: SKIPPED (no model.pt, input*.npy or expected*.npy in $d)"
    skipped+=("$name (not built)")
    continue
  fi
  m=$OUT/models/$name
  mkdir -p "$m"
  # shapes.txt holds the test's --input-shape flags (may be empty).
  read -r -a shapes <<<"$(cat "$d/shapes.txt" 2>/dev/null || true)"
  start=$SECONDS
  if "$EXPORT" --model "$d/model.pt" -o "$m/lib.so" --target x86_64,cuda --cuda-arch "$ARCHS" \
       ${shapes[@]+"${shapes[@]}"} >"$m/export.log" 2>&1; then
    cp "$d"/input*.npy "$m/" 2>/dev/null || true
    cp "$d"/expected*.npy "$m/"
    rm -f "$m/export.log"
    echo "[$i/${#names[@]}] $name: exported in $((SECONDS - start)) s, $(du -sh "$m" | cut -f1)"
    exported+=("$name")
  else
    # Expected for models with CPU-only runtime kernels (FFT, sort/top-k):
    # the export names the op. The log stays out of the bundle.
    why=$(grep -m1 -i 'error' "$m/export.log" || tail -n1 "$m/export.log")
    echo "[$i/${#names[@]}] $name: SKIPPED, the CUDA export failed: $why"
    skipped+=("$name (export failed: $why)")
    rm -rf "$m"
  fi
done

rev=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo unknown)
git -C "$SRC" diff --quiet HEAD 2>/dev/null || rev="$rev (with uncommitted changes)"
{
  echo "Cuvil GPU check bundle"
  echo "compiler revision: $rev"
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "export: cuvil-export --target x86_64,cuda --cuda-arch $ARCHS"
  echo "built on: $(uname -srm), $(ldd --version 2>/dev/null | head -n1)"
  # The runner and the libraries are built against this machine's glibc:
  # the GPU machine needs at least the newest symbol version they use.
  if command -v objdump >/dev/null; then
    need=$(find "$OUT" \( -name lib.so -o -name gpu-check-runner \) -exec objdump -T {} + 2>/dev/null |
           grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n1 || true)
    echo "needs: ${need:-unknown} or newer on the GPU machine"
  fi
  echo "models (${#exported[@]}): ${exported[*]}"
  echo "skipped (${#skipped[@]}):"
  for s in ${skipped[@]+"${skipped[@]}"}; do echo "  $s"; done
} >"$OUT/MANIFEST"

echo "== bundle: $OUT ($(du -sh "$OUT" | cut -f1)), ${#exported[@]} models, ${#skipped[@]} skipped"
echo "   copy it to the GPU machine and run there: bash BUNDLE/gpu-check.sh BUNDLE"
[[ ${#exported[@]} -gt 0 ]] || { echo "gpu-check-prepare: no model exported" >&2; exit 1; }
