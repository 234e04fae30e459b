#!/usr/bin/env bash
# The GPU check's plumbing without a GPU (ctest tools.gpu-check, label cuda):
# scripts/gpu-check-prepare.sh bundles two small importer test models, then
# scripts/gpu-check.sh runs the bundle
#   --device cpu                    -> ok: the library's CPU code gives PyTorch's outputs;
#   --device cuda, stand-in driver  -> MISMATCH on device=cuda:...: the runner created
#                                      the model on the "GPU", launched its kernels and
#                                      compared (test/runtime/fake_cuda runs no kernels,
#                                      so the outputs cannot match);
#   --device cuda, no driver        -> ERROR naming "no CUDA driver".
#
#   check.sh SOURCE_DIR BUILD_DIR WORK_DIR
# Exit 77 (skipped) when the import tests have not made the models yet.
set -uo pipefail
src=$1 build=$2 work=$3
models="mlp_traced cnn_scripted"

fail() { echo "FAIL: $*"; exit 1; }
for m in $models; do
  d=$build/test/import/models/$m
  for f in model.pt input0.npy expected0.npy; do
    [[ -f $d/$f ]] || { echo "SKIPPED: no $d/$f (made by ctest -R import.$m, which needs PyTorch)"; exit 77; }
  done
done
rm -rf "$work" && mkdir -p "$work"
bundle=$work/bundle

echo "== prepare"
MODELS=$models bash "$src/scripts/gpu-check-prepare.sh" "$build" "$bundle" || fail "gpu-check-prepare.sh exited $?"
for f in gpu-check-runner gpu-check.sh MANIFEST models/mlp_traced/lib.so models/cnn_scripted/expected0.npy; do
  [[ -e $bundle/$f ]] || fail "the bundle lacks $f"
done
grep -q '^models (2): mlp_traced cnn_scripted$' "$bundle/MANIFEST" || fail "MANIFEST: $(cat "$bundle/MANIFEST")"
# The runner must run where nothing of Cuvil or C++ is installed: libc (and
# libdl on an older glibc) only.
needed=$(readelf -d "$bundle/gpu-check-runner" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
for lib in $needed; do
  [[ $lib == libc.so.* || $lib == libdl.so.* ]] || fail "the runner needs $lib (libc and libdl only)"
done

echo "== --device cpu"
out=$(bash "$bundle/gpu-check.sh" "$bundle" --device cpu --runs 3 2>&1); rc=$?
echo "$out"
((rc == 0)) || fail "gpu-check.sh --device cpu exited $rc"
for m in $models; do
  grep -q "^$m: ok device=cpu median_ms=" <<<"$out" || fail "no ok line for $m on the CPU"
done

echo "== --device cuda on the stand-in driver"
cc -std=c11 -shared -fPIC -o "$work/libfakecuda.so" "$src/test/runtime/fake_cuda/fake_cuda.c" -pthread ||
  fail "cannot build the stand-in driver"
out=$(CUVIL_CUDA_DRIVER=$work/libfakecuda.so CUVIL_FAKE_CUDA_LOG=$work/fake.log \
      bash "$bundle/gpu-check.sh" "$bundle" --device cuda --runs 3 2>&1); rc=$?
echo "$out"
((rc == 1)) || fail "gpu-check.sh --device cuda (stand-in) exited $rc, expected 1"
for m in $models; do
  grep -q "^$m: MISMATCH device=cuda:Cuvil Fake GPU 0 (sm_80, device 0, cubin sm_80) median_ms=[0-9]" <<<"$out" ||
    fail "no MISMATCH line on device=cuda:... for $m"
done
grep -q "^ok: 0, mismatched: 2, errors: 0, not run: 0" <<<"$out" || fail "summary counts"
# The kernels were launched (the stand-in just does not execute them).
grep -q "cuLaunchKernel" "$work/fake.log" || fail "the stand-in driver saw no cuLaunchKernel"

echo "== --device cuda without a driver"
out=$(CUVIL_CUDA_DRIVER=/nonexistent bash "$bundle/gpu-check.sh" "$bundle" --device cuda 2>&1); rc=$?
echo "$out"
((rc == 1)) || fail "gpu-check.sh without a driver exited $rc, expected 1"
for m in $models; do
  grep -q "^$m: ERROR device=- .* error=.*no CUDA driver (/nonexistent" <<<"$out" ||
    fail "no ERROR line naming 'no CUDA driver' for $m"
done

echo "PASS"
