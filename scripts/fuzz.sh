#!/usr/bin/env bash
# Builds the libFuzzer target (clang-22, AddressSanitizer + UBSan, coverage
# on the project's code: the build of scripts/sanitize.sh, build-asan/) and
# fuzzes parse -> verify -> fp8-to-ptx for sm_90a and sm_100a (checking
# every compiled kernel against the input contract), seeded with the lit
# inputs and tools/fp8-fuzz/corpus. CI runs it for a minute after the
# sanitizer suite.
#
#   scripts/fuzz.sh [SECONDS]      (default 60)
#
# Findings (crash-*, timeout-*, leak-*) land in build-asan/findings/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-60}
export BUILD_DIR=${BUILD_DIR:-build-asan}
scripts/sanitize.sh --build-only
CORPUS="$BUILD_DIR/corpus"
FINDINGS="$BUILD_DIR/findings"
mkdir -p "$CORPUS" "$FINDINGS"
# Seeds: every lit input and example, one per file, and the single-case
# inputs of tools/fp8-fuzz/corpus (each row of docs/contract.md, in and out
# of bounds; a lit file of many cases fails verification as a whole).
find test examples tools/fp8-fuzz/corpus -name '*.mlir' -exec cp {} "$CORPUS/" \;
# See scripts/sanitize.sh for why these two checks are off.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_container_overflow=0:allow_user_poisoning=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$BUILD_DIR/bin/fp8-fuzz" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" \
  -timeout=120 -rss_limit_mb=4096 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$FINDINGS/"
