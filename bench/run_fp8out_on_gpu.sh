#!/usr/bin/env bash
# One command for the GPU machine: the FP8-output GEMMs' bit-exact checks
# (python/tests/test_gpu_fp8out.py), compute-sanitizer's racecheck and
# memcheck on a few of them (the staged TMA-store epilogue), then
# bench/bench_fp8out.py (FP8-output GEMM against bf16 output and bf16 output +
# the quantize kernel, kernel-only).
#
#   bench/run_fp8out_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]
#
# KERNEL_CACHE is filled on the build machine (which has the compiler) by
#   /usr/bin/python3 python/tests/test_gpu.py --populate KERNEL_CACHE
# (every kernel of the GPU tests, fp8mlir.testing.fp8out_cases among them).
# OUT_DIR (default bench/results) receives the logs and the report
# fp8out-<gpu>-<date>.{json,md}. Environment: as python/tests/run_gpu.sh
# (PYTHON, FP8RT_BUILD_DIR, CXX, TORCH_EXTENSIONS_DIR); SANITIZE=0 skips
# compute-sanitizer. Exits non-zero when a step fails.
set -uo pipefail
cd "$(dirname "$0")/.."
CACHE=${1:?usage: bench/run_fp8out_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]}
[[ -e "$CACHE" ]] || { echo "error: no kernel cache at $CACHE" >&2; exit 2; }
OUT_DIR=$(realpath -m "${2:-bench/results}")
mkdir -p "$OUT_DIR" && source python/tests/gpu_env.sh
gpu_env "$(realpath "$CACHE")" "$OUT_DIR" || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

use_runtime_library "$OUT_DIR/build-runtime.log" || exit 1
status=0

echo "== bit-exact checks (log: $OUT_DIR/fp8out-tests.log)"
"$PYTHON" -m pytest -m gpu -q -p no:cacheprovider -rfE python/tests/test_gpu_fp8out.py \
  > "$OUT_DIR/fp8out-tests.log" 2>&1 || status=1
tail -n 3 "$OUT_DIR/fp8out-tests.log"

if [[ "${SANITIZE:-1}" == 1 ]] && command -v compute-sanitizer > /dev/null; then
  for tool in racecheck memcheck; do
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 3 \
      "$PYTHON" -m pytest -m gpu -q -p no:cacheprovider python/tests/test_gpu_fp8out.py \
      -k "(blockwise-1x128 or delayed-e4m3) and (127 or 1999)" \
      > "$OUT_DIR/fp8out-sanitizer-$tool.log" 2>&1
    rc=$?
    [[ $rc == 0 ]] || status=1
    echo "$tool: exit $rc ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed|failed' \
      "$OUT_DIR/fp8out-sanitizer-$tool.log" | tr '\n' ' '))"
  done
fi

echo "== benchmark (log: $OUT_DIR/fp8out-bench.log)"
"$PYTHON" bench/bench_fp8out.py --out "$OUT_DIR" 2>&1 | tee "$OUT_DIR/fp8out-bench.log"
[[ ${PIPESTATUS[0]} == 0 ]] || status=1
exit $status
