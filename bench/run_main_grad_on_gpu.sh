#!/usr/bin/env bash
# One command for the GPU machine: fp8mlir.nn.Linear with main-gradient
# accumulation (main_grad=True) - the layer tests that accumulate dW into
# the f32 main gradient over 3 steps against the plain-PyTorch reference of
# each recipe (python/tests/test_gpu_linear.py, layer "main_grad"), then one
# layer's forward + backward with and without --main-grad
# (bench/bench_linear.py: BF16 nn.Linear, TorchFP8Linear and fp8mlir.nn.Linear
# per recipe; under the blockwise recipe on sm_90a the wgrad GEMM adds into
# main_grad in place with TMA reduce-adds).
#
#   bench/run_main_grad_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]
#
# KERNEL_CACHE is filled on the build machine (with this checkout's
# compiler, into a new directory):
#   BENCH="--shapes 8192x8192,8192x28672 --tokens 8192 --recipes blockwise,current"
#   PYTHONPATH=python python3 -m fp8mlir.populate CACHE --suite gpu-tests
#   PYTHONPATH=python python3 -m fp8mlir.populate CACHE --suite bench-linear --bench-args "$BENCH"
#   PYTHONPATH=python python3 -m fp8mlir.populate CACHE --suite bench-linear \
#       --bench-args "$BENCH --main-grad" --archive CACHE.tar.xz
# OUT_DIR (default bench/results) receives the logs and the two
# linear-<gpu>-<date> and linear-main-grad-<gpu>-<date> reports (.json,
# .md, .png). Environment: as
# python/tests/run_gpu.sh (PYTHON, FP8RT_BUILD_DIR, CXX). Exits non-zero when
# a step fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
CACHE=${1:?usage: bench/run_main_grad_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]}
[[ -e "$CACHE" ]] || { echo "error: no kernel cache at $CACHE" >&2; exit 2; }
CACHE=$(realpath "$CACHE")
OUT_DIR=$(realpath -m "${2:-bench/results}")
mkdir -p "$OUT_DIR"
# shellcheck source=python/tests/gpu_env.sh
source python/tests/gpu_env.sh
gpu_env "$CACHE" "$OUT_DIR" || exit 1
BENCH=(--shapes 8192x8192,8192x28672 --tokens 8192 --recipes blockwise,current
       --impls torch,fp8mlir)
status=0
run() { # run NAME LOG COMMAND...
  local name=$1 log=$2
  shift 2
  echo "== $name (log: $log)"
  if ! "$@" > "$log" 2>&1; then
    echo "$name: FAILED"
    tail -n 40 "$log"
    status=1
  fi
}
run runtime "$OUT_DIR/build-runtime.log" build_runtime
LIB=$(find "$BUILD_DIR" -name libfp8rt.so \( -type f -o -type l \) | head -n 1)
[[ -n "$LIB" ]] || { echo "error: no libfp8rt.so under $BUILD_DIR" >&2; exit 1; }
export FP8RT_LIBRARY=$(realpath "$LIB")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run tests "$OUT_DIR/main-grad-tests.log" "$PYTHON" -m pytest -m gpu -q -p no:cacheprovider \
  -rfE python/tests/test_gpu_linear.py -k main_grad
grep -E "passed|failed" "$OUT_DIR/main-grad-tests.log" | tail -n 1
run "bench (dW into weight.grad)" "$OUT_DIR/bench-linear.log" \
  "$PYTHON" bench/bench_linear.py "${BENCH[@]}" --out "$OUT_DIR"
run "bench (--main-grad)" "$OUT_DIR/bench-linear-main-grad.log" \
  "$PYTHON" bench/bench_linear.py "${BENCH[@]}" --main-grad --out "$OUT_DIR"
grep -hE "^ +8192 x" "$OUT_DIR/bench-linear.log" "$OUT_DIR/bench-linear-main-grad.log"
exit $status
