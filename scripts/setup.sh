#!/usr/bin/env bash
# Installs every Debian package FP8-MLIR needs. Idempotent: when everything
# is already installed it only checks, quietly, in well under a second.
set -euo pipefail

PACKAGES=(
  # Build
  cmake ninja-build g++ ccache
  # LLVM/MLIR 22 (libMLIR.so, mlir-tblgen, lit, FileCheck, not)
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  # Sanitizers and libFuzzer for clang-22
  libclang-rt-22-dev
  # C++ unit tests
  libgtest-dev
  # Python layer (for /usr/bin/python3)
  python3-pybind11 pybind11-dev python3-numpy python3-pytest
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# CUDA comes with the machine image, not from apt: ptxas checks the generated
# PTX when it is there; tests that need it say so when it is not.
if [ -x /usr/local/cuda/bin/ptxas ]; then
  echo "setup: ok ($(/usr/local/cuda/bin/ptxas --version | tail -1))"
else
  echo "setup: ok (no ptxas at /usr/local/cuda/bin: PTX assembly checks will be reported unsupported)"
fi
