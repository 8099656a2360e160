#!/usr/bin/env bash
# The main job: set up, build, then compile every example in examples/ for
# each chip its header lists. sm_90a: fp8-compile writes NAME.ptx and
# NAME.json per GEMM kernel into build/examples/<example>/<chip>/ (and ptxas
# checks them when CUDA is installed). sm_100a has no lowering yet: the
# example is verified, target-checked and run through the target-neutral
# passes, and the result is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
BUILD=${BUILD_DIR:-build}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}

status=0
for example in examples/*.mlir; do
  name=$(basename "$example" .mlir)
  chips=$(sed -n 's|^// Chips: ||p' "$example")
  for chip in $chips; do
    echo "=== $example (chip=$chip)"
    if [ "$chip" = sm_90a ]; then
      out="$BUILD/examples/$name/$chip"
      rm -rf "$out" && mkdir -p "$out"
      # Warnings name the fp8 ops no kernel computes yet (quantization).
      if ! "$BUILD/bin/fp8-compile" "$example" --chip="$chip" -o "$out"; then
        status=1
        continue
      fi
      for ptx in "$out"/*.ptx; do
        if [ -x "$PTXAS" ]; then
          resources=$("$PTXAS" -arch="$chip" -v "$ptx" -o /dev/null 2>&1 |
                      grep -E "registers|spill" | tr -s ' \n' ' ')
          echo "  $ptx: $resources"
        else
          echo "  $ptx"
        fi
      done
    else
      "$BUILD/bin/fp8-opt" "$example" --fp8-verify-target="chip=$chip" \
        --fp8-decompose-quantize --canonicalize || status=1
    fi
  done
done
exit $status
