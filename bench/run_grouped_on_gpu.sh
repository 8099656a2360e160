#!/usr/bin/env bash
# One command for the GPU machine: the grouped (mixture-of-experts) GEMM
# benchmark, bench/bench_grouped.py (fp8mlir against DeepGEMM's grouped
# kernels and torch._scaled_grouped_mm, outputs checked against the f64
# reference and against each other).
#
#   bench/run_grouped_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]
#
# KERNEL_CACHE is filled on the build machine (which has the compiler) by
#   PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate CACHE --suite grouped \
#       --archive grouped-kernels.tar.xz
# OUT_DIR (default bench/results) receives build-runtime.log, grouped-bench.log
# and the report grouped-<gpu>-<date>.{json,md}. DeepGEMM is timed when
# `import deep_gemm` works (DEEPGEMM_DIR, a DeepGEMM directory built in place as
# bench/README.md says, is put on PYTHONPATH); otherwise its columns read
# unavailable and the rest runs. BENCH_ARGS: extra bench_grouped.py arguments
# (e.g. "--sustained 2"). Environment: as python/tests/run_gpu.sh (PYTHON,
# FP8RT_BUILD_DIR, CXX, TORCH_EXTENSIONS_DIR). Exits non-zero when a step
# fails or an output is wrong.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
CACHE=${1:?usage: bench/run_grouped_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR]}
[[ -e "$CACHE" ]] || { echo "error: no kernel cache at $CACHE" >&2; exit 2; }
OUT_DIR=$(realpath -m "${2:-bench/results}")
mkdir -p "$OUT_DIR" && source python/tests/gpu_env.sh
gpu_env "$(realpath "$CACHE")" "$OUT_DIR" || exit 1
if [[ -n "${DEEPGEMM_DIR:-}" ]]; then
  PYTHONPATH="$(realpath "$DEEPGEMM_DIR"):$PYTHONPATH"
  export PYTHONPATH
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$PYTHON" -c "import deep_gemm; print('DeepGEMM', deep_gemm.__version__)" 2> /dev/null ||
  echo "DeepGEMM unavailable (import deep_gemm failed): its columns will read unavailable"

use_runtime_library "$OUT_DIR/build-runtime.log" || exit 1

echo "== benchmark (log: $OUT_DIR/grouped-bench.log), ${SECONDS} s so far"
# shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
"$PYTHON" bench/bench_grouped.py --out "$OUT_DIR" ${BENCH_ARGS:-} 2>&1 |
  tee "$OUT_DIR/grouped-bench.log"
status=${PIPESTATUS[0]}
echo "== done in ${SECONDS} s (benchmark exit $status)"
exit "$status"
