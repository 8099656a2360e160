"""fp8mlir.scaled_mm: FP8 GEMMs on PyTorch CUDA tensors, like torch._scaled_mm.

Kernels come from a cache directory keyed by chip, recipe and shape class
(N, K and the types; M is a run-time value of every kernel):
``<cache>/<chip>/<key>/NAME.{ptx,json}``. A miss compiles the kernel when the
compiler library is available; on a machine without it (the GPU machine has
no LLVM) the cache must have been filled elsewhere, e.g. with
``KernelCache(dir).compile(ScaledMatmul(...), chip)`` or fp8-compile.
"""

import json
import os
import threading
from pathlib import Path

from . import _capi
from .errors import CompilerUnavailableError
from .gemm import ScaledMatmul

CACHE_ENV = "FP8MLIR_KERNEL_CACHE"
_TORCH_ELEMENT = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
_TORCH_OUT = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}


def default_cache_dir():
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "fp8mlir" / "kernels")


class KernelCache:
    """Compiled kernels on disk, and the loaded runtime kernels in memory."""

    def __init__(self, directory=None):
        self.directory = Path(directory) if directory else default_cache_dir()
        self._loaded = {}
        self._lock = threading.Lock()

    def path(self, spec, chip):
        return self.directory / chip / spec.cache_key

    def compile(self, spec, chip):
        """Compiles `spec` for `chip` into the cache; returns the JSON path."""
        from .compiler import compile as compile_mlir
        return compile_mlir(spec, chip).save(self.path(spec, chip))

    def lookup(self, spec, chip):
        """The JSON path of the cached kernel (not one of its launch
        variants), or None."""
        found = [p for p in sorted(self.path(spec, chip).glob("*.json"))
                 if "variant_of" not in json.loads(p.read_text())]
        return found[0] if found else None

    def kernel(self, spec, chip):
        """The runtime kernel for `spec` on `chip`, compiled on a miss when the
        compiler is available."""
        key = (chip, spec.cache_key)
        with self._lock:
            if key in self._loaded:
                return self._loaded[key]
            json_path = self.lookup(spec, chip)
            if json_path is None:
                if not _capi.available():
                    raise CompilerUnavailableError(
                        f"no kernel {spec.cache_key} for {chip} in {self.directory} and no "
                        f"compiler here: compile it on a machine with FP8-MLIR into this cache")
                json_path = self.compile(spec, chip)
            from ._runtime import Kernel
            kernel = Kernel(str(json_path), library=_installed_runtime())
            self._loaded[key] = kernel
            return kernel


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


def _check_tensors(torch, **tensors):
    """Every given argument is a tensor on the CUDA device of the first one
    (a kernel handed a host pointer would fault on the GPU, not here)."""
    device = None
    for name, t in tensors.items():
        if t is None and name in ("bias", "out"):
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        if not t.is_cuda:
            raise ValueError(f"{name}: expected a CUDA tensor, got one on {t.device}")
        device = device or t.device
        if t.device != device:
            raise ValueError(f"{name}: on {t.device}, but a is on {device}")


def _dtype_name(tensor, table, what):
    name = str(tensor.dtype).replace("torch.", "")
    if name not in table:
        raise TypeError(f"{what}: unsupported dtype {tensor.dtype} (expected {tuple(table)})")
    return table[name]


# 1x128 scales are MN-major [K/128, roundup(M, 4)] (the kernels'
# kMNMajorScaleAlignment: 16-byte aligned K-block columns).
MN_MAJOR_SCALE_ALIGNMENT = 4


def infer_recipe(scale_a, scale_b, m, n, k):
    """tensorwise, rowwise or blockwise from the scale shapes of torch's API."""
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        return "tensorwise"
    if tuple(scale_a.shape) == (m, 1) and tuple(scale_b.shape) in ((1, n), (n, 1)):
        return "rowwise"
    kb = -(-k // 128)
    if tuple(scale_a.shape) == (m, kb) and tuple(scale_b.shape) in ((kb, -(-n // 128)),
                                                                   (-(-n // 128), kb)):
        return "blockwise"
    raise ValueError(f"cannot tell the recipe from scale_a {tuple(scale_a.shape)} and "
                     f"scale_b {tuple(scale_b.shape)} (M={m}, N={n}, K={k}); pass recipe=")


def _kernel_scales(recipe, scale_a, scale_b, n, k):
    """torch._scaled_mm's scales as the kernel's a_scale_inv / b_scale_inv."""
    if recipe == "tensorwise":
        return scale_a.reshape(()), scale_b.reshape(())
    if recipe == "rowwise":  # the kernels take [M] and [N]
        return scale_a.reshape(-1).contiguous(), scale_b.reshape(n).contiguous()
    # Blockwise: a's 1x128 scales stored K-block-major [K/128, roundup(M, 4)]
    # (torch's (M, K/128) with strides (1, M), padded to 16-byte aligned
    # columns: a copy unless M % 4 == 0); b's 128x128 scales as
    # [N/128, K/128].
    kb = -(-k // 128)
    sb = scale_b if tuple(scale_b.shape) == (-(-n // 128), kb) else scale_b.t()
    m = scale_a.shape[0]
    padded_m = -(-m // MN_MAJOR_SCALE_ALIGNMENT) * MN_MAJOR_SCALE_ALIGNMENT
    sa = scale_a.t()
    if padded_m != m:
        sa = torch_pad_columns(sa, padded_m)
    return sa.contiguous(), sb.contiguous()


def torch_pad_columns(t, columns):
    """A copy of the 2-D tensor `t` with its columns padded to `columns`
    (the padding is never read by the kernels)."""
    out = t.new_zeros((t.shape[0], columns))
    out[:, :t.shape[1]] = t
    return out


def scaled_mm(a, b, scale_a, scale_b, *, recipe=None, out_dtype=None, bias=None,
              accumulation="fast", chip=None, cache=None, out=None):
    """D = (a * scale_a) @ (b * scale_b) (+ bias), like torch._scaled_mm.

    a: [M, K] fp8, row-major; b: [K, N] fp8, column-major (``w.t()`` of a
    row-major [N, K] weight); scale_a / scale_b: dequantization scales
    (scale_inv) -- tensorwise scalars, rowwise (M, 1) and (1, N), or
    blockwise (M, K/128) and (K/128, N/128) as torch's blockwise API takes
    them. recipe: "tensorwise", "rowwise", "blockwise" (inferred from the
    scale shapes when None). out_dtype: torch.bfloat16 (default), float16 or
    float32. accumulation: "fast" or "promoted(128)" (blockwise always
    promotes). Runs on the current CUDA stream.
    """
    import torch
    _check_tensors(torch, a=a, b=b, scale_a=scale_a, scale_b=scale_b, bias=bias, out=out)
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and {tuple(b.shape)}")
    m, k = a.shape
    n = b.shape[1]
    recipe = recipe or infer_recipe(scale_a, scale_b, m, n, k)
    if recipe == "blockwise":
        accumulation = "promoted(128)"
    out_dtype = out_dtype or torch.bfloat16
    spec = ScaledMatmul(recipe=recipe, n=n, k=k,
                        out_dtype=_dtype_name(torch.empty(0, dtype=out_dtype), _TORCH_OUT, "out_dtype"),
                        accumulation=accumulation,
                        a_dtype=_dtype_name(a, _TORCH_ELEMENT, "a"),
                        b_dtype=_dtype_name(b, _TORCH_ELEMENT, "b"),
                        bias_dtype=None if bias is None else
                        _dtype_name(bias, {"bfloat16": "bf16", "float32": "f32"}, "bias"))
    chip = chip or device_chip(a.device)
    kernel = _cache(cache).kernel(spec, chip)
    sa, sb = _kernel_scales(recipe, scale_a.float(), scale_b.float(), n, k)
    if out is None:
        out = torch.empty((m, n), dtype=out_dtype, device=a.device)
    elif tuple(out.shape) != (m, n) or out.dtype != out_dtype or not out.is_contiguous():
        raise ValueError(f"out: expected a contiguous ({m}, {n}) {out_dtype} tensor, got "
                         f"{tuple(out.shape)} {out.dtype} with strides {out.stride()}")
    operands = dict(a=a.contiguous(), b=b.t().contiguous(), a_scale_inv=sa,
                    b_scale_inv=sb, d=out)
    if bias is not None:
        operands["bias"] = bias.contiguous()
    kernel.launch(stream=torch.cuda.current_stream(a.device), **operands)
    return out
