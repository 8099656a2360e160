#!/usr/bin/env bash
# One command for the GPU machine: builds the runtime (libfp8rt.so and
# fp8rt-launch-bench) and the C++ PyTorch operators, runs every GPU test of
# python/tests (also a few with the Python kernels instead of the C++ ones)
# and the launch benchmark.
#
#   python/tests/run_gpu.sh KERNEL_CACHE [OUT_DIR [PYTEST_ARGS...]]
#
# KERNEL_CACHE is filled on the build machine (which has the compiler):
#   /usr/bin/python3 python/tests/test_gpu.py --populate KERNEL_CACHE
#   PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate KERNEL_CACHE \
#       --suite gpu-tests [--archive KERNEL_CACHE.tar.xz]
# (the layer modules of test_gpu_linear.py). KERNEL_CACHE may be such a
# .tar.xz: it is unpacked into OUT_DIR/kernel-cache first.
# OUT_DIR (default bench/results) receives the logs and the benchmark report
# launch-<gpu>-<date>.{json,md}. PYTEST_ARGS (test node ids, -k EXPR, ...)
# select GPU tests instead of all of them; the Python-kernel pass then
# runs the selected tests of test_torch_ops.py only. Environment: PYTHON (default python3),
# FP8RT_BUILD_DIR (default /tmp/fp8rt-build), CXX (default /usr/bin/g++ when
# it exists), TORCH_EXTENSIONS_DIR (default /tmp/fp8mlir-torch-extensions).
# Exits non-zero when a step fails; the summary names each step's result.
set -uo pipefail
cd "$(dirname "$0")/../.."

if [[ $# -lt 1 || ! ( -d "$1" || "$1" == *.tar.xz ) ]]; then
  echo "usage: python/tests/run_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]" >&2
  exit 2
fi
CACHE=$(realpath "$1")
OUT_DIR=${2:-bench/results}
shift $(($# < 2 ? $# : 2))
SELECTION=("$@")
mkdir -p "$OUT_DIR"
OUT_DIR=$(realpath "$OUT_DIR")
source python/tests/gpu_env.sh
gpu_env "$CACHE" "$OUT_DIR" || exit 1
declare -A RESULT
start=$SECONDS

step() { # step NAME LOG COMMAND...
  local name=$1 log=$2
  shift 2
  local t0=$SECONDS
  echo "== $name (log: $log)"
  if "$@" > "$log" 2>&1; then
    RESULT[$name]="ok ($((SECONDS - t0)) s)"
  else
    RESULT[$name]="FAILED ($((SECONDS - t0)) s)"
    tail -n 40 "$log"
  fi
  grep -E "^[0-9]+ (passed|failed)|passed|failed|error" "$log" | tail -n 3 || true
}

step runtime "$OUT_DIR/build-runtime.log" build_runtime
export_runtime_library || exit 1
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

# The C++ operators: built here at the first import (torch.utils.cpp_extension).
step extension "$OUT_DIR/build-extension.log" env FP8MLIR_TORCH_EXTENSION_VERBOSE=1 \
  "$PYTHON" -c "import fp8mlir._torch_ops as o, sys
print('C++ operators:', 'loaded from ' + o.EXTENSION.path if o.EXTENSION else 'NOT loaded')
sys.exit(0 if o.EXTENSION else 1)"

if [[ ${#SELECTION[@]} -gt 0 ]]; then
  TESTS=("${SELECTION[@]}")
  PYTHON_KERNEL_TESTS=("${SELECTION[@]}")
else
  TESTS=(python/tests/test_gpu.py python/tests/test_torch_ops.py python/tests/test_torch_compile.py
         python/tests/test_gpu_linear.py python/tests/test_gpu_grouped.py
         python/tests/test_gpu_fp8out.py)
  PYTHON_KERNEL_TESTS=(python/tests/test_torch_ops.py -k "layouts or out_writes or feeds")
fi
step tests "$OUT_DIR/gpu-tests.log" "$PYTHON" -m pytest -m gpu -q -p no:cacheprovider -rfE \
  --durations=5 "${TESTS[@]}"

# The tests that need torch and no GPU (skipped where torch is missing,
# as on the build machine).
step torch-cpu "$OUT_DIR/torch-cpu-tests.log" "$PYTHON" -m pytest -m "not gpu" -q \
  -p no:cacheprovider -rfE python/tests/test_calibration.py

# The Python kernels (no C++ extension) on the GEMM layouts, out= and
# quantize feeding the GEMM (or on the selected tests).
step python-kernels "$OUT_DIR/gpu-tests-python-kernels.log" env FP8MLIR_TORCH_EXTENSION=0 \
  "$PYTHON" -m pytest -m gpu -q -p no:cacheprovider -rfE "${PYTHON_KERNEL_TESTS[@]}"

step benchmark "$OUT_DIR/launch-bench.log" "$PYTHON" bench/launch_overhead.py \
  --out "$OUT_DIR" --launch-bench "$BUILD_DIR/fp8rt-launch-bench"
sed -n '/^## Verdict/,/^## Host time/p' "$OUT_DIR/launch-bench.log" | grep -E "PASS|FAIL" || true

echo
echo "== summary ($((SECONDS - start)) s; logs and report in $OUT_DIR)"
status=0
for name in runtime extension tests torch-cpu python-kernels benchmark; do
  echo "$name: ${RESULT[$name]:-not run}"
  [[ "${RESULT[$name]:-}" == ok* ]] || status=1
done
exit $status
