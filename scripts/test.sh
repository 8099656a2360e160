#!/usr/bin/env bash
# Set up, build, and run every test: the GoogleTest unit tests and the lit
# suite, through CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure
