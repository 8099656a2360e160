#!/usr/bin/env bash
# The main job: set up, build, then compile every example in examples/ for
# each chip its header lists. fp8-compile writes NAME.ptx and NAME.json per
# kernel and module.json (the host program of each function) into
# build/examples/<example>/<chip>/; ptxas (when CUDA is installed) reports
# each kernel's resources. sm_90a must succeed. Should the
# sm_100a lowering reject an example (it takes every recipe of the examples
# today), its diagnostic is printed and the example is verified and run
# through the target-neutral passes instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The build's progress (ninja's [n/N] lines) on stderr, the examples'
# report on stdout.
scripts/build.sh >&2
BUILD=${BUILD_DIR:-build}
PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}

status=0
for example in examples/*.mlir; do
  name=$(basename "$example" .mlir)
  chips=$(sed -n 's|^// Chips: ||p' "$example")
  for chip in $chips; do
    echo "=== $example (chip=$chip)"
    out="$BUILD/examples/$name/$chip"
    rm -rf "$out" && mkdir -p "$out"
    # An op no kernel runs is an error naming it (no module.json then).
    if ! "$BUILD/bin/fp8-compile" "$example" --chip="$chip" -o "$out"; then
      if [ "$chip" = sm_90a ]; then
        status=1
      else
        echo "  (not lowered for $chip yet; verifying instead)"
        "$BUILD/bin/fp8-opt" "$example" --fp8-attach-target="chip=$chip" \
          --fp8-verify-target \
          --fp8-decompose-quantize --canonicalize >/dev/null || status=1
      fi
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
    # The host program: each function and how many steps a call runs.
    python3 - "$out/module.json" <<'PY' || status=1
import json, sys
program = json.load(open(sys.argv[1]))
for fn in program["functions"]:
    print("  %s: @%s, %d steps, %d kernels in the module" % (
        sys.argv[1], fn["name"], len(fn["steps"]), len(program["kernels"])))
PY
  done
done
exit $status
