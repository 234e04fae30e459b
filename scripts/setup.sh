#!/usr/bin/env bash
# Installs every Debian package Cuvil's build, tests and benchmarks need.
# Idempotent: when everything is present it prints one line and exits 0.
set -euo pipefail

PACKAGES=(
  # toolchain
  cmake ninja-build clang-19 lld-19 liblld-19-dev llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  # libraries used by the tools
  libcli11-dev libspdlog-dev libfmt-dev libprotobuf-dev protobuf-compiler zlib1g-dev libzstd-dev
  # tests: Catch2, PyTorch reference models, numpy, cross targets
  catch2 python3-torch python3-torchvision python3-numpy
  # the Python package is pip-installed (offline) by the SDK test
  python3-pip python3-setuptools
  qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
  # the installed SDK is tested with pkg-config too
  pkgconf
  # fuzzing and sanitizers (libFuzzer, ASan, UBSan runtimes)
  libclang-rt-19-dev
  # benchmarks: PyTorch at its best needs an optimised BLAS
  libopenblas0-pthread
  # cuvil-quantize's HTML report is checked in a real, headless browser
  chromium
  # translation validation of the graph rewrites (cuvil-opt --cuvil-validate-rewrites)
  libz3-dev
  # the shared compile cache (--remote-cache) is tested against a real Redis server
  redis-server
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
