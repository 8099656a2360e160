"""The ctypes path fp8mlir.scaled_mm took before the C++ operators, step by
step, for bench/launch_overhead.py's before/after breakdown: Python checks,
the kernel spec and cache lookup, torch's scales reshaped into the kernel's
layout, the output, an fp8rt_tensor array built per call, and fp8rt_launch
through ctypes (name lookup and the full validation per launch).
"""

from fp8mlir.gemm import ScaledMatmul
from fp8mlir.ops import _cache, device_chip, infer_recipe

_ELEMENT = {"float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
_OUT = {"bfloat16": "bf16", "float16": "f16", "float32": "f32"}


def _dtype_name(tensor, table):
    return table[str(tensor.dtype).replace("torch.", "")]


def _check_tensors(torch, **tensors):
    device = None
    for name, t in tensors.items():
        if t is None and name in ("bias", "out"):
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor")
        if not t.is_cuda:
            raise ValueError(f"{name}: expected a CUDA tensor")
        device = device or t.device
        if t.device != device:
            raise ValueError(f"{name}: on {t.device}, but a is on {device}")


def lookup(torch, a, b, scale_a, scale_b):
    """Checks, recipe, spec, chip and the cached kernel."""
    _check_tensors(torch, a=a, b=b, scale_a=scale_a, scale_b=scale_b, bias=None, out=None)
    m, k = a.shape
    n = b.shape[1]
    recipe = infer_recipe(scale_a, scale_b, m, n, k)
    spec = ScaledMatmul(recipe=recipe, n=n, k=k,
                        out_dtype=_dtype_name(torch.empty(0, dtype=torch.bfloat16), _OUT),
                        accumulation="promoted(128)" if recipe == "blockwise" else "fast",
                        a_dtype=_dtype_name(a, _ELEMENT), b_dtype=_dtype_name(b, _ELEMENT))
    return recipe, _cache(None).kernel(spec, device_chip(a.device))


def kernel_scales(torch, recipe, scale_a, scale_b, n, k):
    """torch's scales as a_scale_inv / b_scale_inv (copies for blockwise)."""
    if recipe == "tensorwise":
        return scale_a.reshape(()), scale_b.reshape(())
    if recipe == "rowwise":
        return scale_a.reshape(-1).contiguous(), scale_b.reshape(n).contiguous()
    kb = -(-k // 128)
    sb = scale_b if tuple(scale_b.shape) == (-(-n // 128), kb) else scale_b.t()
    m = scale_a.shape[0]
    padded_m = -(-m // 4) * 4
    sa = scale_a.t()
    if padded_m != m:
        out = sa.new_zeros((sa.shape[0], padded_m))
        out[:, :m] = sa
        sa = out
    return sa.contiguous(), sb.contiguous()


def scaled_mm(torch, a, b, scale_a, scale_b):
    """The whole call."""
    recipe, kernel = lookup(torch, a, b, scale_a, scale_b)
    n, k = b.shape[1], a.shape[1]
    sa, sb = kernel_scales(torch, recipe, scale_a.float(), scale_b.float(), n, k)
    out = torch.empty((a.shape[0], n), dtype=torch.bfloat16, device=a.device)
    kernel.launch(stream=torch.cuda.current_stream(a.device), a=a.contiguous(),
                  b=b.t().contiguous(), a_scale_inv=sa, b_scale_inv=sb, d=out)
    return out


def pieces(torch, a, b, scale_a, scale_b, recipe):
    """{piece: a call doing just that piece} of the legacy path."""
    _, kernel = lookup(torch, a, b, scale_a, scale_b)
    n, k = b.shape[1], a.shape[1]
    sa, sb = kernel_scales(torch, recipe, scale_a.float(), scale_b.float(), n, k)
    out = torch.empty((a.shape[0], n), dtype=torch.bfloat16, device=a.device)
    operands = dict(a=a.contiguous(), b=b.t().contiguous(), a_scale_inv=sa,
                    b_scale_inv=sb, d=out)
    bound = kernel.bind(**operands)
    return {
        "checks, spec, kernel lookup": lambda: lookup(torch, a, b, scale_a, scale_b),
        "scales to the kernel's layout": lambda: kernel_scales(
            torch, recipe, scale_a.float(), scale_b.float(), n, k),
        "output allocation": lambda: torch.empty((a.shape[0], n), dtype=torch.bfloat16,
                                                 device=a.device),
        "operand array (ctypes structs)": lambda: kernel.bind(**operands),
        "launch (ctypes, fp8rt_launch)": lambda: bound(torch.cuda.current_stream(a.device)),
        "total (the whole call)": lambda: scaled_mm(torch, a, b, scale_a, scale_b),
    }
