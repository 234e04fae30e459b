#!/usr/bin/env bash
# The runtime's threading under ThreadSanitizer: the thread pool, the busy
# guard and every kernel that splits work across threads
# (cuvil-runtime-internal-tests), built with -fsanitize=thread in a build
# directory of its own (build-tsan/). Any data race TSan reports fails it.
#   ./scripts/tsan.sh [Catch2 test filters...]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="$ROOT/build-tsan"
"$ROOT/scripts/setup.sh"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
    -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_CXX_FLAGS=-fsanitize=thread \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread -fuse-ld=lld" \
    -DPython3_EXECUTABLE=/usr/bin/python3
fi
cmake --build "$BUILD" --target cuvil-runtime-internal-tests
# halt_on_error: the first race fails the run (exit 66).
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
  "$BUILD/bin/cuvil-runtime-internal-tests" "$@"
