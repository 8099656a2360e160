#!/usr/bin/env bash
# One command for a machine with 2 (or more) GPUs: FP8 communication checks
# and benchmarks through torch.distributed (NCCL), on the project's kernels.
#
#   bench/run_dist_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR] [GPUS]
#
# KERNEL_CACHE is filled on the build machine (which has the compiler):
#   PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate KERNEL_CACHE \
#       --suite dist [--world GPUS] --archive KERNEL_CACHE.tar.xz
# A .tar.xz is unpacked into OUT_DIR/kernel-cache first. The runtime
# (libfp8rt.so) and the C++ PyTorch operators are built here, as
# python/tests/run_gpu.sh does. Then:
# 1. bench/dist_exactness.py: sharded quantization + FP8 all-gather equal
#    single-GPU quantization bit for bit (every recipe, MX included), ZeRO-1
#    FP8 primary weights, TP linear layers against the single-GPU layer;
#    each on the torch references and on the project's kernels;
# 2. bench/dist_speed.py: FP8 vs BF16 all-gather (+ the project's quantize
#    kernels), 7B/70B shapes;
# 3. bench/train_tp.py: a TP training step on the project's kernels, BF16
#    vs FP8 communication;
# 4. bench/dist_module.py: compiled module programs with collective steps
#    (slice, amax all-reduce, FP8 all-gather between the kernels, through
#    torch.distributed and through the runtime's NCCL backend) against the
#    single-GPU program, bit for bit.
# Everything lands in OUT_DIR (default bench/results/dist) and, at the end,
# in one archive OUT_DIR.tar.xz. NCCL settings (NCCL_NVLS_ENABLE=0 etc.)
# come from the machine's environment and are recorded, not changed.
# Environment: PYTHON (default python3), TORCHRUN (default torchrun),
# FP8RT_BUILD_DIR (default /tmp/fp8rt-build), CXX (default /usr/bin/g++ when
# it exists), TORCH_EXTENSIONS_DIR (default /tmp/fp8mlir-torch-extensions).
# STEP_TIMEOUT (default 240) bounds each step. SCRIPTS (default
# "dist_exactness dist_speed train_tp dist_module") picks the scripts of
# steps 1-4 (the reference-path exactness check runs with dist_exactness).
# Exits non-zero when a step fails; the summary names each step's result.
set -uo pipefail
cd "$(dirname "$0")/.."
if [[ $# -lt 1 || ! ( -d "$1" || "$1" == *.tar.xz ) ]]; then
  echo "usage: bench/run_dist_on_gpu.sh KERNEL_CACHE[.tar.xz] [OUT_DIR] [GPUS]" >&2
  exit 2
fi
CACHE=$(realpath "$1")
OUT_DIR=$(realpath -m "${2:-bench/results/dist}")
GPUS=${3:-2}
mkdir -p "$OUT_DIR"
source python/tests/gpu_env.sh
gpu_env "$CACHE" "$OUT_DIR" || exit 1
TORCHRUN=${TORCHRUN:-torchrun}
declare -A RESULT
NAMES=()
nvidia-smi topo -m | tee "$OUT_DIR/dist-topology.txt"

step() { # step NAME LOG COMMAND...
  local name=$1 log=$2 t0=$SECONDS
  shift 2
  NAMES+=("$name")
  echo "== $name (log: $log)"
  if "$@" > "$log" 2>&1; then
    RESULT[$name]="ok ($((SECONDS - t0)) s)"
  else
    RESULT[$name]="FAILED ($((SECONDS - t0)) s)"
  fi
  tail -n 25 "$log"
}

step runtime "$OUT_DIR/build-runtime.log" build_runtime
LIB=$(find "$BUILD_DIR" -name libfp8rt.so \( -type f -o -type l \) | head -n 1)
[[ -n "$LIB" ]] && export FP8RT_LIBRARY=$(realpath "$LIB")
# The C++ operators, built once before the ranks start.
step extension "$OUT_DIR/build-extension.log" env FP8MLIR_TORCH_EXTENSION_VERBOSE=1 \
  "$PYTHON" -c "import fp8mlir._torch_ops as o, sys
print('C++ operators:', 'loaded from ' + o.EXTENSION.path if o.EXTENSION else 'NOT loaded')
sys.exit(0 if o.EXTENSION else 1)"

# Each step gets at most STEP_TIMEOUT seconds (a hung collective is a
# failed step, and the steps after it still run). The reference-path
# exactness check (the eager-PyTorch quantization, no kernels) runs first.
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
SCRIPTS=${SCRIPTS:-dist_exactness dist_speed train_tp dist_module}
if [[ " $SCRIPTS " == *" dist_exactness "* ]]; then
  step exactness-reference "$OUT_DIR/dist_exactness_reference.log" \
    timeout "$STEP_TIMEOUT" "$TORCHRUN" --nproc-per-node "$GPUS" bench/dist_exactness.py \
    --no-kernels --out "$OUT_DIR/reference"
fi
for script in $SCRIPTS; do
  step "${script//_/-}" "$OUT_DIR/$script.log" \
    timeout "$STEP_TIMEOUT" "$TORCHRUN" --nproc-per-node "$GPUS" "bench/$script.py" \
    --out "$OUT_DIR"
done

echo "== summary (logs and reports in $OUT_DIR)"
status=0
for name in "${NAMES[@]}"; do
  echo "$name: ${RESULT[$name]}"
  [[ "${RESULT[$name]}" == ok* ]] || status=1
done | tee "$OUT_DIR/summary.txt"
grep -q FAILED "$OUT_DIR/summary.txt" && status=1
tar -cJf "$OUT_DIR.tar.xz" --exclude=kernel-cache -C "$(dirname "$OUT_DIR")" "$(basename "$OUT_DIR")"
echo "archive: $OUT_DIR.tar.xz"
exit $status
