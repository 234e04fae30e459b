#!/usr/bin/env bash
# Fuzzes Cuvil's readers of untrusted input with libFuzzer, ASan and UBSan
# for SECONDS (default 1800):
#   ./scripts/fuzz.sh [TARGET] [SECONDS] [extra libFuzzer flags...]
# TARGET: torchscript (default: the zip container, pickle VM, code parser
# and whole import), inputs (.npy files, libraries before dlopen, IR text
# before the MLIR parser) or runtime-api (random call sequences on the C API
# of a model, the runtime built with the sanitizers too).
# Crashes are written to build-fuzz/findings/TARGET/; copy each to the
# target's regression directory once fixed, so ctest replays it forever.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TARGET=torchscript
case "${1:-}" in torchscript|inputs|runtime-api) TARGET="$1"; shift ;; esac
SECONDS_TO_RUN="${1:-1800}"
shift || true
BUILD="$ROOT/build-fuzz"
"$ROOT/scripts/setup.sh"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld -DPython3_EXECUTABLE=/usr/bin/python3 \
    -DCUVIL_ENABLE_FUZZING=ON
fi
cmake --build "$BUILD" --target "cuvil-fuzz-$TARGET"
CORPUS="$BUILD/corpus/$TARGET"
FINDINGS="$BUILD/findings/$TARGET"
mkdir -p "$CORPUS/live" "$CORPUS/seeds" "$FINDINGS"
if [ "$TARGET" = torchscript ]; then
  /usr/bin/python3 "$ROOT/test/fuzz/make_corpus.py" "$CORPUS/seeds"
  cp -n "$ROOT"/test/fuzz/regressions/* "$CORPUS/seeds/" 2>/dev/null || true
  MAX_LEN=262144
elif [ "$TARGET" = runtime-api ]; then
  cp -n "$ROOT"/test/fuzz/runtime-api-regressions/* "$CORPUS/seeds/" 2>/dev/null || true
  MAX_LEN=4096
else
  # A Cuvil library among the seeds, when the main build has made one.
  LIB=""
  if [ -x "$ROOT/build/bin/cuvil-export" ]; then
    "$ROOT/build/bin/cuvil-export" --model "$ROOT/examples/mlp/model.pt" --input-shape 0=2x8xf32 \
      --target x86_64 -o "$BUILD/corpus/mlp.so" && LIB="$BUILD/corpus/mlp.so"
  fi
  /usr/bin/python3 "$ROOT/test/fuzz/make_input_corpus.py" "$CORPUS/seeds" $LIB
  cp -n "$ROOT"/test/fuzz/inputs-regressions/* "$CORPUS/seeds/" 2>/dev/null || true
  MAX_LEN=1048576
fi
# ASan's leak checker stays on: the readers must not leak on any input.
# LLVM's allocators poison and unpoison their slabs by hand when their
# headers are built with ASan; Debian's MLIR libraries are not, so the two
# disagree (a use-after-poison inside MLIRContext's constructor, on every
# input): manual poisoning is ignored, real heap errors are still caught.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allow_user_poisoning=0}"
exec "$BUILD/bin/cuvil-fuzz-$TARGET" "$CORPUS/live" "$CORPUS/seeds" \
  -max_total_time="$SECONDS_TO_RUN" -timeout=20 -rss_limit_mb=4096 -max_len="$MAX_LEN" \
  -artifact_prefix="$FINDINGS/" -print_final_stats=1 "$@"
