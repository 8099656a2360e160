#!/usr/bin/env bash
# One command for the GPU machine: build libfp8rt and the numerics reference,
# check every quantization kernel bit for bit, run compute-sanitizer on the
# small kernels, and time the large ones against a device-to-device copy.
#
#   bench/run_quantize_on_gpu.sh CHECK_KERNEL_DIR BENCH_KERNEL_DIR
#
# Kernel dirs come from bench/make_quantize_kernels.py (build machine).
# Environment: OUT (results; default bench/results), PYTHON (default python3),
# SANITIZE (1: run compute-sanitizer; default 1), FP8RT_BUILD_DIR (default
# /tmp/fp8rt-build).
set -uo pipefail
cd "$(dirname "$0")/.."
CHECK_DIR=$(realpath -e "$1") || exit 2
BENCH_DIR=$(realpath -e "$2") || exit 2
OUT_DIR=${OUT:-bench/results}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT_DIR"
OUT_DIR=$(realpath "$OUT_DIR")
BUILD_DIR=${FP8RT_BUILD_DIR:-/tmp/fp8rt-build}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader \
  | tee "$OUT_DIR/gpu.txt"

echo "== building the runtime and the numerics reference"
{ cmake -S runtime -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFP8RT_BUILD_TESTS=OFF && cmake --build "$BUILD_DIR"; } > "$OUT_DIR/build.log" 2>&1 \
  || { tail -30 "$OUT_DIR/build.log"; exit 1; }
c++ -O2 -std=c++17 -shared -fPIC -Iinclude lib/Numerics/*.cpp test/GPU/numerics_capi.cpp \
  -o /tmp/libfp8numerics.so || exit 1
export FP8RT_LIBRARY=$(realpath "$(find "$BUILD_DIR" -name 'libfp8rt.so' | head -n 1)")
export PYTHONPATH="$PWD/python"

echo "== bit-exact checks"
"$PYTHON" test/GPU/check_quantize.py --kernels "$CHECK_DIR" --numerics /tmp/libfp8numerics.so \
  --json "$OUT_DIR/quantize-check.json" 2>&1 | tee "$OUT_DIR/quantize-check.log"
check_status=${PIPESTATUS[0]}

if [[ "${SANITIZE:-1}" == 1 ]]; then
  echo "== compute-sanitizer (one small kernel of each kind)"
  FILTER="fp8_amax_bf16_r208,current_tensor_bf16_e4m3_r208,tensor_tensor_bf16_e4m3_r208,blockwise_pow2_1x128_bf16_e4m3_r208_c336_clamp0x38d1b717_row_col,blockwise_pow2_128x128_bf16_e4m3_r208,mxfp8_1x32_bf16_e4m3_r208_c336_row_col,r208_c336_clamp0x38d1b717_row_col_untransposed_mxscales,current_row_bf16_e4m3_rdyn_c336_col,current_row_f32_e4m3_r208_c336_col_untransposed,current_row_bf16_e4m3_rdyn_c336_row"
  for tool in memcheck racecheck synccheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 3 \
      "$PYTHON" test/GPU/check_quantize.py --kernels "$CHECK_DIR" \
      --numerics /tmp/libfp8numerics.so --filter "$FILTER" \
      > "$OUT_DIR/sanitizer-$tool.log" 2>&1
    echo "$tool: exit $? ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' "$OUT_DIR/sanitizer-$tool.log" | tr '\n' ' '))"
  done | tee "$OUT_DIR/sanitizer-summary.txt"
fi

echo "== bandwidth"
"$PYTHON" test/GPU/check_quantize.py --bench-kernels "$BENCH_DIR" --numerics /tmp/libfp8numerics.so \
  --json "$OUT_DIR/quantize-bench.json" 2>&1 | tee "$OUT_DIR/quantize-bench.log"
exit $check_status
