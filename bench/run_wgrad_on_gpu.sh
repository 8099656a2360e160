#!/usr/bin/env bash
# One command for the GPU machine: the 1D x 1D GEMM (1x128 scales on both
# operands: the wgrad GEMM of the blockwise recipe) - the correctness check of
# its configured tiles, then its benchmark on wgrad shapes against
# F.scaled_mm (cuBLASLt, BlockWise1x128 x BlockWise1x128) and DeepGEMM's
# sm_90 1D x 1D kernel, bf16 out and f32 accumulating into C. The
# accumulating kernels are timed with separate C and D and in place (C's
# memory passed as D: the TMA reduce-add epilogue), beside the configured
# whole-tile staging (4 stages) and direct-store (6 stages) forms; the check
# and the benchmark require the in-place D bit-identical to the separate D.
#
#   bench/run_wgrad_on_gpu.sh KERNELS[.tar.xz] [OUT_DIR]
#
# KERNELS (a directory or its .tar.xz) holds check/ and bench/, made on the
# build machine:
#   python3 bench/make_kernels.py --set wgrad_check --out K/check
#   python3 bench/make_kernels.py --set wgrad --out K/bench
#   tar -cJf wgrad-kernels.tar.xz -C K check bench
# OUT_DIR (default bench/results) receives build-runtime.log, check.log,
# check.json, bench.log and gemm-<gpu>-<date>.{json,md,png}. DeepGEMM is timed
# when `import deep_gemm` works (built beforehand), else reported unavailable.
# Environment: as python/tests/run_gpu.sh (PYTHON, FP8RT_BUILD_DIR, CXX);
# SUSTAINED (seconds of back-to-back calls per implementation and shape,
# default 1; 0: kernel-only), CHECK_M (default check_gemm.py's M list).
# Exits non-zero when the check or the benchmark fails or an output is
# outside its tolerance.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
KERNELS=${1:?usage: bench/run_wgrad_on_gpu.sh KERNELS[.tar.xz] [OUT_DIR]}
[[ -e "$KERNELS" ]] || { echo "error: no kernels at $KERNELS" >&2; exit 2; }
OUT_DIR=$(realpath -m "${2:-bench/results}")
mkdir -p "$OUT_DIR"
KERNELS=$(realpath "$KERNELS")
if [[ -f "$KERNELS" ]]; then
  # Unpacked outside OUT_DIR, which keeps only the results.
  unpacked=$(mktemp -d /tmp/wgrad-kernels.XXXXXX)
  tar -xJf "$KERNELS" -C "$unpacked" || exit 1
  KERNELS=$unpacked
fi
for sub in check bench; do
  compgen -G "$KERNELS/$sub/*.json" > /dev/null ||
    { echo "error: no NAME.json in $KERNELS/$sub" >&2; exit 2; }
done
# shellcheck source=python/tests/gpu_env.sh
source python/tests/gpu_env.sh
gpu_env "$KERNELS" "$OUT_DIR" || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
start=$SECONDS

use_runtime_library "$OUT_DIR/build-runtime.log" || exit 1
# DeepGEMM compiles its kernel at the first call of a shape (6-10 s each):
# the benchmark's shapes compile in parallel while the check runs.
if "$PYTHON" -c "import deep_gemm; print('deep_gemm', getattr(deep_gemm, '__version__', '?'))" \
     2> /dev/null; then
  for shape in $("$PYTHON" -c "import sys; sys.path.insert(0, 'bench'); import make_kernels as m
print(' '.join(f'{a}x{b}x{c}' for a, b, c in m.WGRAD_SHAPES))"); do
    "$PYTHON" bench/gemm_peers.py "$shape" > /dev/null 2>&1 &
  done
else
  echo "deep_gemm: not importable (its columns read unavailable)"
fi

echo "== check: $KERNELS/check ($((SECONDS - start)) s; log: $OUT_DIR/check.log)"
check_args=(--kernels "$KERNELS/check" --json "$OUT_DIR/check.json")
[[ -n "${CHECK_M:-}" ]] && check_args+=(--m "$CHECK_M")
"$PYTHON" test/GPU/check_gemm.py "${check_args[@]}" > "$OUT_DIR/check.log" 2>&1
check_status=$?
grep -E "FAIL|^[0-9]+ passed, [0-9]+ failed" "$OUT_DIR/check.log" | tail -n 20
wait  # the DeepGEMM compilations

# The f64 reference of 256 rows per shape (the whole product takes minutes);
# the outputs are compared with each other in full.
echo "== benchmark ($((SECONDS - start)) s; log: $OUT_DIR/bench.log)"
"$PYTHON" bench/bench_gemm.py --kernels "$KERNELS/bench" --out "$OUT_DIR" --shapes wgrad \
  --recipes blockwise_1d1d,blockwise_1d1d_acc --sustained "${SUSTAINED:-1}" \
  --sustained-rest 0.5 --reference-rows 256 > "$OUT_DIR/bench.log" 2>&1
bench_status=$?
# shellcheck disable=SC2012  # our own file names; newest first
report=$(ls -t "$OUT_DIR"/gemm-*.md 2> /dev/null | head -n 1)
[[ -n "$report" ]] && sed -n '/^## blockwise_1d1d/,/^## Verification/p' "$report" | grep -v '^## Verification'
sed -n '/^verification:/,$p' "$OUT_DIR/bench.log" | grep -v '^wrote '
verify_status=0
grep -q '^verification: [0-9]* outputs, 0 outside' "$OUT_DIR/bench.log" || verify_status=1

# In place (C's memory passed as D, D += A B) against the same kernel with
# separate C and D (C zero): bit-identical outputs.
echo "== in place vs separate C and D"
inplace_status=0
"$PYTHON" - "${report%.md}.json" "$OUT_DIR/check.json" <<'PY' || inplace_status=1
import json, sys
report = json.load(open(sys.argv[1]))
bad = checked = 0
for r in report["results"]:
    for name, e in r["impls"].items():
        if not name.endswith(" in place") or e["status"] != "ok":
            continue
        base = name[:-len(" in place")]
        same = base in (e.get("identical_to") or [])
        checked, bad = checked + 1, bad + (not same)
        print(f"  {r['m']}x{r['n']}x{r['k']} {name}: "
              f"{'bit-identical to' if same else 'DIFFERS from'} {base}")
cases = json.load(open(sys.argv[2])).get("cases", [])
in_place = [c for c in cases if "in_place_equal" in c]
print(f"bench: {checked} in-place outputs, {bad} differ; check: {len(in_place)} "
      f"in-place cases, {sum(not c['in_place_equal'] for c in in_place)} differ")
sys.exit(1 if bad or not checked or not in_place
         or any(not c["in_place_equal"] for c in in_place) else 0)
PY

echo
echo "== summary ($((SECONDS - start)) s)"
echo "check: $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$OUT_DIR/check.log" | tail -n 1 ||
  echo 'no result line') (exit $check_status)"
echo "bench: exit $bench_status, verification exit $verify_status, in place exit $inplace_status;" \
  "report ${report:-none}"
[[ $check_status == 0 && $bench_status == 0 && $verify_status == 0 && $inplace_status == 0 ]]
