#!/usr/bin/env bash
# The main job: set up, build, then compile every example in examples/ for
# each chip its header lists. For now that is parse, verify, the target
# check and the target-neutral fp8 passes, printing the result; the Hopper
# and Blackwell lowerings will turn this into PTX.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
FP8_OPT=${BUILD_DIR:-build}/bin/fp8-opt

status=0
for example in examples/*.mlir; do
  chips=$(sed -n 's|^// Chips: ||p' "$example")
  for chip in $chips; do
    echo "=== $example (chip=$chip)"
    if ! "$FP8_OPT" "$example" --fp8-verify-target="chip=$chip" \
         --fp8-decompose-quantize --canonicalize; then
      status=1
    fi
  done
done
exit $status
