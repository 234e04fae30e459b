#!/usr/bin/env bash
# The GPU check (issue 25): runs every model of a bundle made by
# scripts/gpu-check-prepare.sh on the GPU and compares its outputs with
# PyTorch's. Needs bash and the bundle only (no compiler, no Python, no
# CUDA toolkit: the libraries load libcuda.so.1 themselves).
#
#   bash gpu-check.sh [BUNDLE_DIR] [--device cuda|cpu|auto] [--budget SECONDS] [--runs N]
#       BUNDLE_DIR  default: this script's folder (it is copied into the bundle)
#       --device    default cuda: the GPU or an ERROR, never a silent CPU fallback
#       --budget    default 420: no model is started once this many seconds
#                   have passed (they are listed as not run); a model that is
#                   running is stopped at the budget's end where `timeout` exists
#       --runs      timed runs per model after one warm-up (default 20)
#   RTOL, ATOL     tolerances (default 1e-3, 1e-4 of max(1, max|y|)): the
#                  kernels compute in FP32 (no TF32), as PyTorch's CPU outputs do
#
# Exit: 0 every model ok; 1 a mismatch or an error; 3 none failed but the
# budget left some not run.
set -uo pipefail  # no -e: a failing model must not end the check

bundle=
device=cuda
budget=420
runs=20
while [[ $# -gt 0 ]]; do
  case $1 in
    --device) device=${2:?--device needs a value}; shift 2 ;;
    --budget) budget=${2:?--budget needs a value}; shift 2 ;;
    --runs) runs=${2:?--runs needs a value}; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "gpu-check: unknown option $1" >&2; exit 2 ;;
    *) [[ -z $bundle ]] || { echo "gpu-check: one bundle folder only" >&2; exit 2; }
       bundle=$1; shift ;;
  esac
done
bundle=${bundle:-$(dirname "${BASH_SOURCE[0]}")}
case $device in cuda|cpu|auto) ;; *) echo "gpu-check: --device $device not in {cuda,cpu,auto}" >&2; exit 2 ;; esac
[[ $budget =~ ^[0-9]+$ ]] || { echo "gpu-check: --budget $budget is not a number of seconds" >&2; exit 2; }
runner=$bundle/gpu-check-runner
# A copy that lost its mode bits (some transfers drop them) still runs.
[[ -f $runner && ! -x $runner ]] && chmod +x "$runner" 2>/dev/null
[[ -x $runner ]] || { echo "gpu-check: no runner at $runner (not a bundle? make one with scripts/gpu-check-prepare.sh)" >&2; exit 2; }
[[ -d $bundle/models ]] || { echo "gpu-check: no $bundle/models" >&2; exit 2; }

[[ -f $bundle/MANIFEST ]] && sed -n '1,5p' "$bundle/MANIFEST"
if command -v nvidia-smi >/dev/null 2>&1; then
  echo "nvidia-smi -L:"
  nvidia-smi -L 2>&1 | sed 's/^/  /'
else
  echo "nvidia-smi: not found"
fi
echo "device: $device, budget: ${budget} s, runs: $runs, rtol ${RTOL:-1e-3}, atol ${ATOL:-1e-4}"
echo

# `timeout` stops a hung model at the budget's end (coreutils; optional).
have_timeout=$(command -v timeout >/dev/null 2>&1 && echo 1 || echo 0)
logdir=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# One key=value field of a verdict line.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
names=() results=() whys=() devices=() medians=() mins=() errs=() secs=() not_run=()
n_ok=0 n_mismatch=0 n_error=0
start=$SECONDS
for m in "$bundle"/models/*/; do
  m=${m%/}
  name=$(basename "$m")
  left=$((budget - (SECONDS - start)))
  if ((left <= 0)); then
    not_run+=("$name")
    continue
  fi
  t0=$SECONDS
  cmd=("$runner" "$m/lib.so" --name "$name" --device "$device" --inputs "$m" --expected "$m"
       --rtol "${RTOL:-1e-3}" --atol "${ATOL:-1e-4}" --runs "$runs")
  ((have_timeout)) && cmd=(timeout -k 5 "$left" "${cmd[@]}")
  "${cmd[@]}" >"$logdir/out" 2>"$logdir/err"
  rc=$?
  sed 's/^/    /' "$logdir/err"
  # The runner's verdict is its last stdout line: "NAME: RESULT device=... median_ms=..."
  line=$(grep "^$name: " "$logdir/out" | tail -n1)
  if [[ -z $line ]]; then
    why="exit $rc"
    ((rc == 124 || rc == 137)) && why="stopped at the budget's end"
    line="$name: ERROR device=- median_ms=- min_ms=- max_abs_err=- error=no verdict from the runner ($why)"
  elif [[ $rc -ne 0 && $line == *": ok "* ]]; then
    line="${line/: ok /: ERROR } error=the runner exited $rc"
  fi
  echo "$line"
  result=$(sed 's/^[^:]*: \([A-Za-z]*\).*/\1/' <<<"$line")
  names+=("$name") results+=("$result") medians+=("$(field median_ms)") mins+=("$(field min_ms)")
  errs+=("$(field max_abs_err)") secs+=("$((SECONDS - t0))")
  devices+=("$(sed -n 's/.* device=\(.*\) median_ms=.*/\1/p' <<<"$line")")
  whys+=("$(sed -n 's/.* max_abs_err=[^ ]* error=//p' <<<"$line")")
  case $result in ok) n_ok=$((n_ok + 1)) ;; MISMATCH) n_mismatch=$((n_mismatch + 1)) ;; *) n_error=$((n_error + 1)) ;; esac
done
total=$((SECONDS - start))

echo
echo "== summary"
printf '%-34s %-9s %12s %12s %12s %6s  %s\n' model result median_ms min_ms max_abs_err secs device
for i in "${!names[@]}"; do
  printf '%-34s %-9s %12s %12s %12s %6s  %s\n' "${names[$i]}" "${results[$i]}" "${medians[$i]}" \
    "${mins[$i]}" "${errs[$i]}" "${secs[$i]}" "${devices[$i]}"
done
echo "ok: $n_ok, mismatched: $n_mismatch, errors: $n_error, not run: ${#not_run[@]}, total ${total} s (budget ${budget} s)"
for i in "${!names[@]}"; do
  [[ ${results[$i]} == ERROR ]] && echo "error: ${names[$i]}: ${whys[$i]}"
done
if ((${#not_run[@]})); then
  echo "not run (budget spent): ${not_run[*]}"
fi
if ((n_mismatch + n_error)); then
  exit 1
elif ((${#not_run[@]})); then
  exit 3
fi
exit 0
