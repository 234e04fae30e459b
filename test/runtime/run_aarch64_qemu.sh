#!/bin/sh
# Runs the aarch64 runtime test driver under qemu-user.
#   run_aarch64_qemu.sh QEMU SYSROOT DRIVER LIB...
# Exit 77 (ctest: skipped) when qemu-aarch64 is not installed.
qemu="$1" sysroot="$2"
shift 2
if [ -z "$qemu" ] || [ ! -x "$qemu" ]; then
  echo "SKIPPED: qemu-aarch64 not found (apt-get install qemu-user)"
  exit 77
fi
if [ ! -d "$sysroot" ]; then
  echo "SKIPPED: no aarch64 sysroot at $sysroot"
  exit 77
fi
# Options for qemu itself (-cpu max) may come before the program.
exec "$qemu" -L "$sysroot" "$@"
