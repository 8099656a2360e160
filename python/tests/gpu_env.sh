# Sourced (from the repository root) by python/tests/run_gpu.sh and the
# bench/run_*_on_gpu.sh scripts: the environment of the project's kernels
# on a GPU machine.
#
# gpu_env CACHE OUT_DIR: CACHE (a kernel cache directory, or its .tar.xz,
# unpacked into OUT_DIR/kernel-cache) becomes FP8MLIR_KERNEL_CACHE; sets
# PYTHON (default python3), BUILD_DIR (FP8RT_BUILD_DIR, default
# /tmp/fp8rt-build), CXX (default /usr/bin/g++ when it exists),
# TORCH_EXTENSIONS_DIR (default /tmp/fp8mlir-torch-extensions), PYTHONPATH.
# build_runtime: libfp8rt.so and fp8rt-launch-bench into BUILD_DIR.
# export_runtime_library: FP8RT_LIBRARY, the libfp8rt.so under BUILD_DIR.
# use_runtime_library LOG: both (build_runtime's output into LOG).
gpu_env() {
  local cache=$1 out=$2
  if [[ -f "$cache" ]]; then
    mkdir -p "$out/kernel-cache"
    tar -xJf "$cache" -C "$out/kernel-cache" || return 1
    cache="$out/kernel-cache"
  fi
  PYTHON=${PYTHON:-python3}
  BUILD_DIR=${FP8RT_BUILD_DIR:-/tmp/fp8rt-build}
  if [[ -z "${CXX:-}" && -x /usr/bin/g++ ]]; then
    export CXX=/usr/bin/g++
  fi
  export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-/tmp/fp8mlir-torch-extensions}
  export FP8MLIR_KERNEL_CACHE=$cache
  export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
}

build_runtime() {
  cmake -S runtime -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFP8RT_BUILD_TESTS=OFF ${CXX:+-DCMAKE_CXX_COMPILER=$CXX} &&
    cmake --build "$BUILD_DIR"
}

export_runtime_library() {
  local lib
  lib=$(find "$BUILD_DIR" -name libfp8rt.so \( -type f -o -type l \) \
    2> /dev/null | head -n 1)
  if [[ -z "$lib" ]]; then
    echo "error: no libfp8rt.so under $BUILD_DIR" >&2
    return 1
  fi
  FP8RT_LIBRARY=$(realpath "$lib")
  export FP8RT_LIBRARY
}

use_runtime_library() {
  local log=$1
  echo "== runtime (log: $log)"
  if ! build_runtime > "$log" 2>&1; then
    tail -n 30 "$log"
    return 1
  fi
  export_runtime_library
}
