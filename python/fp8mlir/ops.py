"""The kernel cache behind fp8mlir's PyTorch operators (torch-free).

Kernels come from a cache directory keyed by chip, recipe and shape class
(N, K and the types for a GEMM; the columns and outputs for a quantization;
M or the row count is a run-time value of every kernel):
``<cache>/<chip>/<key>/NAME.{ptx,json}``. Compiled modules (a layer's
training step, fp8mlir.linear_step) are directories of the same cache,
``<cache>/<chip>/<key>/module.json`` beside their kernels. A miss compiles the kernel when the
compiler library is available; on a machine without it (the GPU machine has
no LLVM) the cache must have been filled elsewhere, e.g. with
``KernelCache(dir).compile(spec, chip)`` or fp8-compile.
"""

import ctypes
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

from . import _capi
from .errors import CompilerUnavailableError
from .gemm import ScaledMatmul
from ._math import ceil_div

CACHE_ENV = "FP8MLIR_KERNEL_CACHE"


def default_cache_dir():
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "fp8mlir" / "kernels")


class KernelCache:
    """Compiled kernels on disk, and the loaded runtime kernels in memory.

    A spec (``ScaledMatmul``, ``QuantizeSpec``, ``DequantizeSpec``) is one
    directory ``<cache>/<chip>/<spec.cache_key>`` holding the NAME.json +
    NAME.ptx of each of its kernels (a GEMM's launch variants included)."""

    def __init__(self, directory=None):
        self.directory = Path(directory) if directory else default_cache_dir()
        self._loaded = {}
        self._lock = threading.Lock()

    def path(self, spec, chip):
        return self.directory / chip / spec.cache_key

    def compile(self, spec, chip):
        """Compiles `spec` for `chip` into the cache; returns the JSON paths
        of its kernels (not of launch variants): one for a GEMM."""
        from .compiler import compile_all
        directory = self.path(spec, chip)
        saved = [kernel.save(directory) for kernel in compile_all(spec, chip)]
        primaries = [p for p in saved if "variant_of" not in json.loads(p.read_text())]
        return primaries[0] if isinstance(spec, ScaledMatmul) else primaries

    def lookup_all(self, spec, chip):
        """The JSON paths of the cached kernels of `spec` (not launch
        variants), in launch order (amax kernels first), or []."""
        found = []
        for path in sorted(self.path(spec, chip).glob("*.json")):
            meta = json.loads(path.read_text())
            if "variant_of" not in meta:
                found.append((meta.get("kind") != "amax", path))
        return [path for _, path in sorted(found)]

    def lookup(self, spec, chip):
        """The JSON path of the cached kernel (not one of its launch
        variants), or None."""
        found = self.lookup_all(spec, chip)
        return found[0] if found else None

    def kernels(self, spec, chip):
        """The runtime kernels of `spec` on `chip`, in launch order,
        compiled on a miss when the compiler is available."""
        key = (chip, spec.cache_key)
        with self._lock:
            if key in self._loaded:
                return self._loaded[key]
            paths = self.lookup_all(spec, chip)
            if not paths:
                if not _capi.available():
                    raise CompilerUnavailableError(
                        f"no kernel {spec.cache_key} for {chip} in {self.directory} and no "
                        f"compiler here: compile it on a machine with FP8-MLIR into this "
                        f"cache (KernelCache(dir).compile(spec, chip) or python/tests/"
                        f"test_gpu.py --populate DIR)")
                self.compile(spec, chip)
                paths = self.lookup_all(spec, chip)
            from ._runtime import Kernel
            kernels = [Kernel(str(path), library=_installed_runtime()) for path in paths]
            self._loaded[key] = kernels
            return kernels

    def kernel(self, spec, chip):
        """The one runtime kernel of `spec` (a GEMM) on `chip`."""
        kernels = self.kernels(spec, chip)
        if len(kernels) != 1:
            raise RuntimeError(f"{spec.cache_key}: expected one kernel, found {len(kernels)}")
        return kernels[0]


    # --- modules (module.json + kernels) -----------------------------------------

    def module_path(self, spec):
        """The directory of a module spec (LinearStep: it names its chip)."""
        return self.directory / spec.chip / spec.cache_key

    def compile_module(self, spec):
        """Compiles a module spec into the cache; returns its directory."""
        from .module import compile_module_to
        path = self.module_path(spec)
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{spec.cache_key}-", dir=path.parent))
        try:
            compile_module_to(spec.to_mlir(), spec.chip, staging)
            if path.exists():  # another process got there first
                shutil.rmtree(staging)
            else:
                staging.rename(path)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return path

    def module(self, spec):
        """The loaded module of `spec`, compiled into the cache on a miss
        when the compiler is here, else CompilerUnavailableError saying
        which module is missing and how to fill the cache."""
        key = (spec.chip, spec.cache_key)
        with self._lock:
            found = self._loaded.get(key)
            if found is not None:
                return found
            path = self.module_path(spec)
            if not (path / "module.json").is_file():
                if not module_compiler_available():
                    raise CompilerUnavailableError(missing_module_message(self, spec))
                self.compile_module(spec)
            from .module import load_module
            found = self._loaded[key] = load_module(path, _installed_runtime())
            return found


def module_compiler_available():
    """Whether modules can be compiled here (the compiler library)."""
    return _capi.available()


def _populate_args(spec):
    """The fp8mlir.populate arguments that compile `spec`'s module."""
    found = getattr(spec, "populate_args", None)
    return found or f"--linear {spec.signature()}:{spec.m or 'inference'}"


def missing_module_message(cache, spec):
    return (f"no compiled module {spec.cache_key} ({spec.describe()}) in {cache.directory} and "
            f"no compiler here. On a machine with FP8-MLIR built, fill the cache with\n"
            f"  PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate {cache.directory} "
            f"--chip {spec.chip} {_populate_args(spec)}\n"
            f"(or a whole suite: --suite gpu-tests|train|bench-linear) and copy it here "
            f"(${CACHE_ENV} names the cache)")


def _installed_runtime():
    """libfp8rt.so of an install (<prefix>/lib, beside <prefix>/python), or
    None for the runtime binding's own search ($FP8RT_LIBRARY, build dirs)."""
    if os.environ.get("FP8RT_LIBRARY"):
        return None
    candidate = Path(__file__).resolve().parents[2] / "lib" / "libfp8rt.so"
    return str(candidate) if candidate.is_file() else None


_default_cache = None


def _cache(cache):
    global _default_cache
    if cache is not None:
        return cache if isinstance(cache, KernelCache) else KernelCache(cache)
    if _default_cache is None:
        _default_cache = KernelCache()
    return _default_cache


def device_chip(device):
    """The chip whose kernels run on `device`: ``sm_<major><minor>a``, the
    architecture-specific target of its compute capability, which is the
    runtime's own rule (fp8rt runs an ``sm_XYa`` kernel only on compute
    capability X.Y). Where the compiler library is loaded, the chip must be
    one it supports; elsewhere (a GPU machine without LLVM) a chip without
    kernels in the cache is reported by the cache lookup."""
    import torch
    major, minor = torch.cuda.get_device_capability(device)
    chip = f"sm_{major}{minor}a"
    if _capi.available():
        from .compiler import supported_chips
        if chip not in supported_chips():
            raise RuntimeError(
                f"no FP8-MLIR target for compute capability {major}.{minor}: "
                f"{chip} is not one of {', '.join(supported_chips())}")
    return chip


RECIPE_CODES = ("tensorwise", "rowwise", "blockwise")  # fp8mlir_torch.cpp's Recipe
# fp8rt_dtype values, in fp8rt.h's order.
FP8RT_DTYPE_NAMES = ("e4m3", "e5m2", "ue8m0", "bf16", "f16", "f32", "i32")


class GemmRequest(ctypes.Structure):
    """The GEMM kernel the C++ operators ask the package for
    (csrc/fp8mlir_torch.cpp's GemmRequest): dtypes are fp8rt_dtype values
    (bias_dtype -1: no bias), accumulation 0 is "fast", N "promoted(N)"."""
    _fields_ = [("device", ctypes.c_int32), ("recipe", ctypes.c_int32),
                ("a_dtype", ctypes.c_int32), ("b_dtype", ctypes.c_int32),
                ("out_dtype", ctypes.c_int32), ("bias_dtype", ctypes.c_int32),
                ("n", ctypes.c_int64), ("k", ctypes.c_int64),
                ("accumulation", ctypes.c_int64)]


def gemm_spec(request):
    """The ScaledMatmul a GemmRequest asks for."""
    names = FP8RT_DTYPE_NAMES
    if not 0 <= request.recipe < len(RECIPE_CODES):
        raise ValueError(f"GemmRequest: recipe code {request.recipe}")
    return ScaledMatmul(
        RECIPE_CODES[request.recipe], n=request.n, k=request.k,
        out_dtype=names[request.out_dtype],
        accumulation="fast" if request.accumulation == 0 else
        f"promoted({request.accumulation})",
        a_dtype=names[request.a_dtype], b_dtype=names[request.b_dtype],
        bias_dtype=None if request.bias_dtype < 0 else names[request.bias_dtype])



def infer_recipe(scale_a, scale_b, m, n, k):
    """tensorwise, rowwise or blockwise from the scale shapes of torch's
    scaled GEMM APIs (the C++ operator's inferRecipe)."""
    sa, sb = tuple(scale_a.shape), tuple(scale_b.shape)
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        return "tensorwise"
    if sa in ((m, 1), (m,)) and sb in ((1, n), (n, 1), (n,)):
        return "rowwise"
    kb = ceil_div(k, 128)
    if sa == (m, kb) and sb == (kb, ceil_div(n, 128)):
        return "blockwise"
    raise ValueError(f"cannot tell the recipe from scale_a {sa} and scale_b {sb} "
                     f"(M={m}, N={n}, K={k}); pass recipe=")


def evaluate_extent(extent, symbols):
    """The value of a metadata extent (an int, "SYM", "roundup(SYM, INT)" or
    "ceildiv(SYM, INT)") for `symbols` {name: value}; values may be ints or
    torch.SymInts."""
    if isinstance(extent, int):
        return extent
    text = extent.replace(" ", "")
    for name, function in (("roundup(", lambda v, q: (v + q - 1) // q * q),
                           ("ceildiv(", lambda v, q: (v + q - 1) // q)):
        if text.startswith(name) and text.endswith(")"):
            symbol, divisor = text[len(name):-1].split(",")
            return function(symbols[symbol], int(divisor))
    return symbols[text]
