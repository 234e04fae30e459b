#!/usr/bin/env bash
# Fuzzes Cuvil's TorchScript readers (zip, pickle, code parser, whole import)
# with libFuzzer, ASan and UBSan for SECONDS (default 1800).
#   ./scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
# Crashes are written to build-fuzz/findings/; copy each to
# test/fuzz/regressions/ once fixed, so ctest replays it forever.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
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
cmake --build "$BUILD" --target cuvil-fuzz-torchscript
mkdir -p "$BUILD/corpus" "$BUILD/findings"
/usr/bin/python3 "$ROOT/test/fuzz/make_corpus.py" "$BUILD/corpus/seeds"
cp -n "$ROOT"/test/fuzz/regressions/* "$BUILD/corpus/seeds/" 2>/dev/null || true
# ASan's leak checker stays on: the readers must not leak on any input.
exec "$BUILD/bin/cuvil-fuzz-torchscript" "$BUILD/corpus/live" "$BUILD/corpus/seeds" \
  -max_total_time="$SECONDS_TO_RUN" -timeout=20 -rss_limit_mb=4096 -max_len=262144 \
  -artifact_prefix="$BUILD/findings/" -print_final_stats=1 "$@"
