# Sourced (from the repository root) by python/tests/run_gpu.sh and
# bench/run_dist_on_gpu.sh: the environment of the project's kernels on a
# GPU machine.
#
# gpu_env CACHE OUT_DIR: CACHE (a kernel cache directory, or its .tar.xz,
# unpacked into OUT_DIR/kernel-cache) becomes FP8MLIR_KERNEL_CACHE; sets
# PYTHON (default python3), BUILD_DIR (FP8RT_BUILD_DIR, default
# /tmp/fp8rt-build), CXX (default /usr/bin/g++ when it exists),
# TORCH_EXTENSIONS_DIR (default /tmp/fp8mlir-torch-extensions), PYTHONPATH.
# build_runtime: libfp8rt.so and fp8rt-launch-bench into BUILD_DIR.
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
