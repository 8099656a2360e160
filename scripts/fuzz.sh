#!/usr/bin/env bash
# Builds the libFuzzer target (clang-22, AddressSanitizer + UBSan, coverage
# on the project's code) into build-fuzz/ and fuzzes parse -> verify ->
# fp8-to-ptx for sm_90a and sm_100a, seeded with the lit inputs.
#
#   scripts/fuzz.sh [SECONDS]      (default 60)
#
# Findings (crash-*, timeout-*, leak-*) land in build-fuzz/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build-fuzz}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_SANITIZER="Address;Undefined" \
    -DLLVM_USE_SANITIZE_COVERAGE=ON -DFP8_ENABLE_FUZZER=ON \
    -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=undefined" >/dev/null
fi
cmake --build "$BUILD_DIR" --target fp8-fuzz
CORPUS="$BUILD_DIR/corpus"
FINDINGS="$BUILD_DIR/findings"
mkdir -p "$CORPUS" "$FINDINGS"
# Seeds: every lit input and example, one per file.
find test examples -name '*.mlir' -exec cp {} "$CORPUS/" \;
# See scripts/sanitize.sh for why these two checks are off.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_container_overflow=0:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$BUILD_DIR/bin/fp8-fuzz" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" \
  -timeout=60 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$FINDINGS/"
