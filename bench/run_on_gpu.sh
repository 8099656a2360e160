#!/usr/bin/env bash
# One command for the GPU machine: build libfp8rt, check the kernels, benchmark.
#
#   bench/run_on_gpu.sh KERNEL_DIR [extra bench_gemm.py arguments...]
#
# KERNEL_DIR holds NAME.json/NAME.ptx from fp8-compile (made on the build
# machine). If it has compile-times.json, the report includes it.
# Environment: OUT (results and logs; default bench/results), FP8RT_BUILD_DIR
# (default /tmp/fp8rt-build), PYTHON (default python3), CHECK_M (M list for the
# check, default check_gemm.py's), CHECK_DIR (the kernels to check, default
# KERNEL_DIR), CHECK_FILTER (only kernels whose name contains one of these
# comma-separated strings), SANITIZE (kernel name substrings, comma-separated:
# compute-sanitizer memcheck and racecheck over the check of those kernels
# at M = SANITIZE_M, default 1,17; off when empty).
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 1 ]]; then
  echo "usage: bench/run_on_gpu.sh KERNEL_DIR [bench_gemm.py args...]" >&2
  exit 2
fi
KERNEL_DIR=$(realpath "$1")
shift
OUT_DIR=${OUT:-bench/results}
BUILD_DIR=${FP8RT_BUILD_DIR:-/tmp/fp8rt-build}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT_DIR"
OUT_DIR=$(realpath "$OUT_DIR")

if ! compgen -G "$KERNEL_DIR/*.json" > /dev/null; then
  echo "error: no NAME.json in $KERNEL_DIR" >&2
  exit 2
fi

echo "== building the runtime in $BUILD_DIR (log: $OUT_DIR/build-runtime.log)"
if ! { cmake -S runtime -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DFP8RT_BUILD_TESTS=OFF && cmake --build "$BUILD_DIR"; } \
       > "$OUT_DIR/build-runtime.log" 2>&1; then
  tail -n 40 "$OUT_DIR/build-runtime.log" >&2
  echo "error: runtime build failed" >&2
  exit 1
fi
LIB=$(find "$BUILD_DIR" -name 'libfp8rt.so' \( -type f -o -type l \) | head -n 1)
if [[ -z "$LIB" ]]; then
  echo "error: no libfp8rt.so under $BUILD_DIR" >&2
  exit 1
fi
FP8RT_LIBRARY=$(realpath "$LIB")
export FP8RT_LIBRARY
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
echo "FP8RT_LIBRARY=$FP8RT_LIBRARY"
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
fi

CHECK_DIR=$(realpath "${CHECK_DIR:-$KERNEL_DIR}")
echo "== correctness: test/GPU/check_gemm.py (log: $OUT_DIR/check.log)"
check_args=(--kernels "$CHECK_DIR" --json "$OUT_DIR/check.json")
[[ -n "${CHECK_M:-}" ]] && check_args+=(--m "$CHECK_M")
[[ -n "${CHECK_FILTER:-}" ]] && check_args+=(--filter "$CHECK_FILTER")
check_status=0
"$PYTHON" test/GPU/check_gemm.py "${check_args[@]}" 2>&1 | tee "$OUT_DIR/check.log" \
  || check_status=$?

sanitizer_status=0
if [[ -n "${SANITIZE:-}" ]]; then
  echo "== compute-sanitizer on kernels matching $SANITIZE (logs: $OUT_DIR/sanitizer-*.log)"
  for tool in memcheck racecheck; do
    tool_status=0
    timeout 300 compute-sanitizer --tool $tool --error-exitcode 3 \
      "$PYTHON" test/GPU/check_gemm.py --kernels "$CHECK_DIR" --filter "$SANITIZE" \
      --m "${SANITIZE_M:-1,17}" > "$OUT_DIR/sanitizer-$tool.log" 2>&1 || tool_status=$?
    echo "$tool: exit $tool_status ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed,' \
      "$OUT_DIR/sanitizer-$tool.log" | tr '\n' ' '))"
  done | tee "$OUT_DIR/sanitizer-summary.txt"
  grep -q 'exit [^0]' "$OUT_DIR/sanitizer-summary.txt" && sanitizer_status=1
fi

echo "== benchmark: bench/bench_gemm.py (log: $OUT_DIR/bench.log)"
bench_args=(--kernels "$KERNEL_DIR" --out "$OUT_DIR")
[[ -f "$KERNEL_DIR/compile-times.json" ]] && \
  bench_args+=(--compile-times "$KERNEL_DIR/compile-times.json")
bench_status=0
"$PYTHON" bench/bench_gemm.py "${bench_args[@]}" "$@" 2>&1 | tee "$OUT_DIR/bench.log" \
  || bench_status=$?

echo
echo "== summary"
echo "check: $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT_DIR/check.log" | tail -n 1 \
  || echo "no result line") (exit $check_status)"
[[ -n "${SANITIZE:-}" ]] && echo "sanitizer: $(tr '\n' ' ' < "$OUT_DIR/sanitizer-summary.txt")"
sed -n '/^geomean over/,$p' "$OUT_DIR/bench.log" | grep -v '^wrote ' || true
# shellcheck disable=SC2012  # our own file names; newest first
report=$(ls -t "$OUT_DIR"/gemm-*.md 2> /dev/null | head -n 1 || true)
echo "bench: exit $bench_status; report ${report:-none}"
echo "logs and results: $OUT_DIR"
if [[ $check_status -ne 0 || $sanitizer_status -ne 0 || $bench_status -ne 0 ]]; then
  exit 1
fi
