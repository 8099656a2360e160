#!/usr/bin/env bash
# One command for the GPU machine, grouped GEMMs only: python/tests/run_gpu.sh
# with test_gpu_grouped.py selected (it builds the runtime and the C++
# operators), then bench/bench_grouped.py with the same runtime and kernels.
#
#   python/tests/run_gpu_grouped.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]
#
# KERNEL_CACHE as for run_gpu.sh (test_gpu.py --populate compiles the grouped
# kernels too). BENCH_ARGS: extra bench_grouped.py arguments. Exits non-zero
# when a step fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
if [[ $# -lt 1 ]]; then
  echo "usage: python/tests/run_gpu_grouped.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]" >&2
  exit 2
fi
OUT_DIR=${2:-bench/results}
mkdir -p "$OUT_DIR"
OUT_DIR=$(realpath "$OUT_DIR")
python/tests/run_gpu.sh "$1" "$OUT_DIR" python/tests/test_gpu_grouped.py
tests=$?
CACHE=$(realpath "$1")
[[ -f "$CACHE" ]] && CACHE="$OUT_DIR/kernel-cache"
BUILD_DIR=${FP8RT_BUILD_DIR:-/tmp/fp8rt-build}
LIB=$(find "$BUILD_DIR" -name libfp8rt.so \( -type f -o -type l \) | head -n 1)
echo "== grouped benchmark (log: $OUT_DIR/grouped-bench.log)"
FP8MLIR_KERNEL_CACHE=$CACHE FP8RT_LIBRARY=$(realpath "$LIB") \
  TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/fp8mlir-torch-extensions} \
  PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" \
  "${PYTHON:-python3}" bench/bench_grouped.py --out "$OUT_DIR" ${BENCH_ARGS:-} \
  > "$OUT_DIR/grouped-bench.log" 2>&1
bench=$?
tail -n 40 "$OUT_DIR/grouped-bench.log"
echo "tests (run_gpu.sh): $([[ $tests == 0 ]] && echo ok || echo FAILED); benchmark: $([[ $bench == 0 ]] && echo ok || echo FAILED)"
[[ $tests == 0 && $bench == 0 ]]
