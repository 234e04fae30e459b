#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test through ctest: the lit
# suite, the Catch2 unit tests and the PyTorch parity checks.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh"
cd "${BUILD_DIR:-$ROOT/build}"
ctest --output-on-failure "$@"
