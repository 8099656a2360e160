#!/usr/bin/env bash
# One command for a machine with 2 (or more) GPUs: FP8 communication checks
# and benchmarks through torch.distributed (NCCL), written to OUT_DIR.
#
#   bench/run_dist_on_gpu.sh [OUT_DIR] [GPUS]
#
# 1. bench/dist_exactness.py: sharded quantization + FP8 all-gather equal
#    single-GPU quantization bit for bit (every recipe, MX included), ZeRO-1
#    FP8 primary weights, TP linear layers against the single-GPU layer;
# 2. bench/dist_speed.py: FP8 vs BF16 all-gather (+ quantization), 7B/70B
#    shapes;
# 3. bench/train_tp.py: a TP training step, BF16 vs FP8 communication.
# No kernel cache and no runtime build: quantization is the torch reference,
# GEMMs are cuBLASLt through torch. NCCL settings (NCCL_NVLS_ENABLE=0 etc.)
# come from the machine's environment and are recorded, not changed.
# Exits non-zero when a step fails; the summary names each step's result.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT_DIR=$(realpath -m "${1:-bench/results}")
GPUS=${2:-2}
mkdir -p "$OUT_DIR"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
TORCHRUN=${TORCHRUN:-torchrun}
declare -A RESULT
nvidia-smi topo -m | tee "$OUT_DIR/dist-topology.txt"

# name, then the script of each step
STEPS=(exactness bench/dist_exactness.py speed bench/dist_speed.py train-tp bench/train_tp.py)
for ((i = 0; i < ${#STEPS[@]}; i += 2)); do
  name=${STEPS[i]}
  log="$OUT_DIR/${STEPS[i + 1]##*/}"
  log=${log%.py}.log
  t0=$SECONDS
  echo "== $name ($TORCHRUN --nproc-per-node $GPUS ${STEPS[i + 1]}; log: $log)"
  "$TORCHRUN" --nproc-per-node "$GPUS" "${STEPS[i + 1]}" --out "$OUT_DIR" > "$log" 2>&1
  rc=$?
  RESULT[$name]="$([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)") ($((SECONDS - t0)) s)"
  tail -n 25 "$log"
done
echo "== summary (logs and reports in $OUT_DIR)"
status=0
for name in exactness speed train-tp; do
  echo "$name: ${RESULT[$name]:-not run}"
  [[ "${RESULT[$name]:-}" == ok* ]] || status=1
done
exit $status
