"""fp8mlir's PyTorch operators: ``torch.library`` definitions, their fake
implementations, the Python kernels, and the public functions
``fp8mlir.scaled_mm``, ``fp8mlir.quantize`` and ``fp8mlir.dequantize``.

Importing this module imports torch, defines the operators, and builds
(first time) and loads the C++ kernels (``_extension``); without them the
operators run the Python kernels below, which give the same results at a
higher host cost per call.

Operators (namespace ``fp8mlir``; see python/README.md):

- ``scaled_mm`` / ``scaled_mm_out``: the GEMM; C++ kernels (CUDA, Autograd).
- ``scaled_mm_backward``: its backward, a composite of PyTorch ops in f32.
- ``quantize`` / ``quantize_delayed`` / ``dequantize``: Python kernels that
  launch the quantization kernels through ``_launch``.
- ``_launch``: one runtime kernel, operands in metadata order (internal).

``define_op`` is the registration helper other layers of the package use
(a schema, a CUDA kernel, a fake implementation), with ``kernels_for``,
``launch`` and ``empty_operands`` (outputs shaped by a kernel's metadata).
"""

import ctypes
import threading

import torch

from . import _extension, _runtime
from .gemm import ScaledMatmul
from .ops import (RECIPE_CODES, GemmRequest, KernelCache, _cache, _installed_runtime,
                  device_chip, evaluate_extent, gemm_spec, infer_recipe)
from .quantization import (BLOCKS, MN_MAJOR_ALIGNMENT, DequantizeSpec, QuantizedTensor,
                       QuantizeSpec, granularity as recipe_granularity, scale_layout)

NAMESPACE = "fp8mlir"
LIB = torch.library.Library(NAMESPACE, "FRAGMENT")

FP8_DTYPES = {torch.float8_e4m3fn: "e4m3", torch.float8_e5m2: "e5m2"}
HIGH_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


def define_op(name, schema, *, cuda=None, fake=None, composite=None, cpu=None):
    """Defines ``fp8mlir::NAME`` with `schema` (the part after the name) and
    registers what is given: `cuda` (the CUDA kernel), `cpu`, `fake` (the
    fake/meta implementation tracing uses) and `composite` (a
    CompositeImplicitAutograd implementation). Returns the OpOverload."""
    LIB.define(name + schema)
    if cuda is not None:
        LIB.impl(name, cuda, "CUDA")
    if cpu is not None:
        LIB.impl(name, cpu, "CPU")
    if composite is not None:
        LIB.impl(name, composite, "CompositeImplicitAutograd")
    if fake is not None:
        torch.library.register_fake(f"{NAMESPACE}::{name}", fake, lib=LIB)
    return getattr(getattr(torch.ops, NAMESPACE), name).default


_TORCH_DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
                 "bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
if hasattr(torch, "float8_e8m0fnu"):
    _TORCH_DTYPES["ue8m0"] = torch.float8_e8m0fnu


def empty_operands(metadata_operands, names, symbols, like):
    """New tensors (like `like`'s device) for the operands `names` of a
    kernel's metadata ("operands": name, dtype, shape), their extents
    evaluated for `symbols` {"M": ..., "R": ...} (ints or torch.SymInts):
    the outputs a kernel writes, for a real implementation to launch into
    and a fake one to return."""
    by_name = {op["name"]: op for op in metadata_operands}
    return [like.new_empty(tuple(evaluate_extent(e, symbols) for e in by_name[name]["shape"]),
                           dtype=_TORCH_DTYPES[by_name[name]["dtype"]]) for name in names]


# --- the kernel cache and the resolver the C++ kernels call -----------------

_override = threading.local()  # .cache: the cache= of the running call


def _kernel_cache():
    return getattr(_override, "cache", None) or _cache(None)


class _UsingCache:
    """Runs a call with `cache` (KernelCache or directory) as the kernel
    cache of this thread."""

    def __init__(self, cache):
        self.cache = cache if isinstance(cache, KernelCache) else KernelCache(cache)

    def __enter__(self):
        self.previous = getattr(_override, "cache", None)
        _override.cache = self.cache

    def __exit__(self, *exc):
        _override.cache = self.previous


_KERNELS_BY_HANDLE = {}  # fp8rt_kernel address -> _runtime.Kernel


_KERNEL_SETS = {}  # (cache directory, device index, spec) -> kernels


def kernels_for(spec, device):
    """The runtime kernels of `spec` for a CUDA device, in launch order."""
    index = device.index if isinstance(device, torch.device) else device
    if index is None:
        index = torch.cuda.current_device()
    cache = _kernel_cache()
    key = (cache.directory, index, spec)
    kernels = _KERNEL_SETS.get(key)
    if kernels is None:
        kernels = cache.kernels(spec, device_chip(index))
        for kernel in kernels:
            _KERNELS_BY_HANDLE.setdefault(kernel.handle, kernel)
        _KERNEL_SETS[key] = kernels
    return kernels


_RESOLVE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.POINTER(GemmRequest), ctypes.c_void_p,
                            ctypes.c_int64)


def _resolve(request, error, size):
    """The C++ kernels' registry miss: the kernel's address, or None with
    the reason in `error` (a char buffer of `size` bytes)."""
    try:
        r = request.contents
        (kernel,) = kernels_for(gemm_spec(r), r.device)
        return kernel.handle
    except Exception as e:  # noqa: BLE001 (reported to C++, then raised there)
        message = f"{type(e).__name__}: {e}".encode("utf-8", "replace")[:max(size - 1, 0)]
        ctypes.memmove(error, message + b"\0", len(message) + 1)
        return None


_resolver = _RESOLVE(_resolve)  # kept alive for the process


# --- the operators --------------------------------------------------------

def _check_gemm(a, b, out_dtype, scales=()):
    """The operators' argument checks, with the C++ operators' error types
    (TypeError for a dtype or a missing tensor, ValueError for a shape)."""
    for name, scale in scales:
        torch._check_type(isinstance(scale, torch.Tensor),
                          lambda: f"{name}: expected a tensor, got {type(scale).__name__}")
    torch._check_value(a.dim() == 2 and b.dim() == 2,
                       lambda: f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and "
                               f"{tuple(b.shape)}")
    torch._check_value(a.shape[1] == b.shape[0],
                       lambda: f"expected a [M, K] and b [K, N], got {tuple(a.shape)} and "
                               f"{tuple(b.shape)}")
    check_gemm_dtypes(a, b, out_dtype)


def check_gemm_dtypes(a, b, out_dtype):
    """FP8 a and b, and an output dtype the GEMMs write (also the grouped
    GEMM's check)."""
    for name, t in (("a", a), ("b", b)):
        torch._check_type(t.dtype in FP8_DTYPES,
                          lambda: f"{name}: unsupported dtype {t.dtype} (expected float8_e4m3fn "
                                  f"or float8_e5m2)")
    torch._check_type(out_dtype in HIGH_DTYPES, lambda: f"out_dtype: unsupported dtype {out_dtype}")


def _scaled_mm_fake(a, b, scale_a, scale_b, bias=None, out_dtype=None, recipe="auto",
                    accumulation="fast"):
    out_dtype = out_dtype or torch.bfloat16
    _check_gemm(a, b, out_dtype, (("scale_a", scale_a), ("scale_b", scale_b)))
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _scaled_mm_out_fake(a, b, scale_a, scale_b, bias, recipe, accumulation, out):
    _check_gemm(a, b, out.dtype)
    torch._check(tuple(out.shape) == (a.shape[0], b.shape[1]),
                 lambda: f"out: expected ({a.shape[0]}, {b.shape[1]}), got {tuple(out.shape)}")


def _broadcast_scale(recipe, scale, rows, cols, operand):
    """The scales of a's [M, K] / b's [K, N] broadcast to the operand (f32)."""
    s = scale.float()
    if recipe == "tensorwise":
        return s.reshape(())
    if recipe == "rowwise":
        return s.reshape(rows, 1) if operand == "a" else s.reshape(1, cols)
    if operand == "a":  # (M, ceil(K/128)): one per 1x128 block
        return s.repeat_interleave(128, dim=1)[:, :cols]
    return s.repeat_interleave(128, dim=0)[:rows].repeat_interleave(128, dim=1)[:, :cols]


def _sum_per_scale(recipe, x, scale, operand):
    """`x` summed over each block of the scales shaped like `scale`."""
    if recipe == "tensorwise":
        return x.sum().reshape(scale.shape)
    if recipe == "rowwise":
        return x.sum(dim=1 if operand == "a" else 0, keepdim=True).reshape(scale.shape)
    rows, cols = x.shape
    rb = rows if operand == "a" else (rows + 127) // 128
    cb = (cols + 127) // 128
    padded = torch.nn.functional.pad(x, (0, cb * 128 - cols, 0, (rb if operand == "a" else
                                                                  rb * 128) - rows))
    if operand == "a":
        return padded.reshape(rows, cb, 128).sum(2)
    return padded.reshape(rb, 128, cb, 128).sum((1, 3))


def _scaled_mm_backward(grad, a, b, scale_a, scale_b, recipe, output_mask):
    """Gradients of D = (a * Sa) @ (b * Sb) in f32: da, db (cast by autograd
    to a's/b's FP8 dtype), dscale_a, dscale_b; empty where not asked for."""
    m, k = a.shape
    n = b.shape[1]
    if recipe == "auto":
        recipe = infer_recipe(scale_a, scale_b, m, n, k)
    g = grad.float()
    sa = _broadcast_scale(recipe, scale_a, m, k, "a")
    sb = _broadcast_scale(recipe, scale_b, k, n, "b")
    grads = [grad.new_empty(0) for _ in range(4)]
    if output_mask[0] or output_mask[2]:
        p = g @ (b.float() * sb).t()
        grads[0] = p * sa
        grads[2] = _sum_per_scale(recipe, a.float() * p, scale_a, "a")
    if output_mask[1] or output_mask[3]:
        q = (a.float() * sa).t() @ g
        grads[1] = q * sb
        grads[3] = _sum_per_scale(recipe, b.float() * q, scale_b, "b")
    return tuple(grads)


def _quantize_outputs(x, gran, dtype, rowwise, columnwise, transposed):
    """(physical outputs {operand name: tensor}, the tensors quantize
    returns) for x [R, C]: FP8 data, and scales in torch's layouts (a 1x128
    scale is the (rows, blocks) view of its MN-major [blocks, roundup(rows, 4)]
    buffer). The fake and the CUDA implementations share it."""
    rows, cols = x.shape
    physical, results = {}, []
    for name, this_rows, this_cols, wanted in (("rowwise", rows, cols, rowwise),
                                               ("columnwise", cols, rows, columnwise)):
        if not wanted:
            continue
        data_shape = (rows, cols) if name == "rowwise" or not transposed else (cols, rows)
        data = x.new_empty(data_shape, dtype=dtype)
        shape, kind = scale_layout(gran, this_rows, this_cols)
        scale = x.new_empty(shape, dtype=torch.float32)
        physical[name], physical[name + "_scale_inv"] = data, scale
        results += [data, scale.t()[:this_rows] if kind == "mn_major" else scale]
    return physical, results


def _check_quantize(x, recipe, block, dtype):
    torch._check(x.dim() == 2, lambda: f"x: expected a 2-D tensor, got {tuple(x.shape)}")
    torch._check(x.dtype in HIGH_DTYPES, lambda: f"x: unsupported dtype {x.dtype} "
                                                 f"(expected bfloat16, float16 or float32)")
    torch._check(dtype in FP8_DTYPES, lambda: f"dtype: expected float8_e4m3fn or "
                                              f"float8_e5m2, got {dtype}")
    return recipe_granularity(recipe, tuple(block) or None)


def _quantize_fake(x, recipe, block, dtype, rowwise, columnwise, transposed, scale=None):
    gran = _check_quantize(x, recipe, block, dtype)
    return _quantize_outputs(x, gran, dtype, rowwise, columnwise, transposed)[1]


def _four_outputs(x, dtype, rowwise, columnwise, outputs):
    """quantize_delayed's fixed returns (rowwise data, scale, columnwise
    data, scale) from quantize's list: empty tensors for the absent ones. A
    mutating operator needs fixed Tensor returns for torch.compile to
    functionalize it (torch._higher_order_ops.auto_functionalize takes no
    Tensor[] return)."""
    outputs = list(outputs)
    fixed = []
    for wanted in (rowwise, columnwise):
        if wanted:
            fixed += outputs[:2]
            outputs = outputs[2:]
        else:
            fixed += [x.new_empty((0,), dtype=dtype), x.new_empty((0,), dtype=torch.float32)]
    return tuple(fixed)


def _quantize_delayed_fake(x, scale, amax_history, dtype, rowwise, columnwise, transposed):
    return _four_outputs(x, dtype, rowwise, columnwise, _quantize_fake(
        x, "delayed", [], dtype, rowwise, columnwise, transposed, scale))


def _check_cuda(tensors, device):
    for name, t in tensors.items():
        if t is not None and (not t.is_cuda or t.device != device):
            raise ValueError(f"{name}: expected a CUDA tensor on {device}, got one on {t.device}")


def _run_quantize(x, recipe, block, dtype, rowwise, columnwise, transposed, scale, history):
    gran = _check_quantize(x, recipe, block, dtype)
    _check_cuda({"x": x, "scale": scale, "amax_history": history}, x.device)
    if (scale is not None) != (recipe == "delayed"):
        raise ValueError("quantize: a scale is given exactly for the delayed recipe")
    if scale is not None and (scale.numel() != 1 or scale.dtype != torch.float32):
        raise ValueError(f"scale: expected one float32, got {tuple(scale.shape)} {scale.dtype}")
    physical, results = _quantize_outputs(x, gran, dtype, rowwise, columnwise, transposed)
    if x.shape[0] == 0:
        for tensor in results:
            if tensor.dtype == torch.float32:
                tensor.fill_(1.0)
        return results
    spec = QuantizeSpec(recipe, int(x.shape[1]), in_dtype=HIGH_DTYPES[x.dtype],
                        dtype=FP8_DTYPES[dtype], rowwise=rowwise, columnwise=columnwise,
                        transposed=transposed, block=tuple(block) or None,
                        history=0 if history is None else history.numel())
    operands = dict(physical, x=x.contiguous(), scale=None if scale is None else
                    scale.reshape(()), amax_history=history)
    for kernel in kernels_for(spec, x.device):
        if kernel.meta.get("kind") == "amax":  # current scaling: the amax, zeroed
            operands["amax"] = torch.zeros((), dtype=torch.float32, device=x.device)
        launch(kernel, [operands.get(name) for name in kernel.operand_names])
    return results


def _quantize_cuda(x, recipe, block, dtype, rowwise, columnwise, transposed, scale=None):
    return _run_quantize(x, recipe, block, dtype, rowwise, columnwise, transposed, scale, None)


def _quantize_delayed_cuda(x, scale, amax_history, dtype, rowwise, columnwise, transposed):
    if amax_history.dtype != torch.float32 or amax_history.dim() != 1:
        raise ValueError(f"amax_history: expected a 1-D float32 tensor, got "
                         f"{tuple(amax_history.shape)} {amax_history.dtype}")
    return _four_outputs(x, dtype, rowwise, columnwise, _run_quantize(
        x, "delayed", [], dtype, rowwise, columnwise, transposed, scale, amax_history))


def mn_major_scales(scale, rows, blocks):
    """A 1x128 scale tensor (rows, blocks) as the kernels read it: the
    MN-major [blocks, roundup(rows, 4)] tensor over its storage when it has
    that layout (strides (1, roundup(rows, 4)), padding in the storage,
    16-byte aligned), else a padded copy."""
    padded = (rows + MN_MAJOR_ALIGNMENT - 1) // MN_MAJOR_ALIGNMENT * MN_MAJOR_ALIGNMENT
    scale = scale.float()
    if (scale.stride(0) == 1 and (blocks == 1 or scale.stride(1) == padded)
            and scale.data_ptr() % 16 == 0):
        try:  # as_strided checks that the storage holds the padding
            return scale.as_strided((blocks, padded), (padded, 1))
        except RuntimeError:
            pass
    buffer = scale.new_empty((blocks, padded))
    buffer[:, :rows] = scale.t()
    return buffer


def _scale_operand(gran, scale, rows, cols):
    """`scale` (in torch's layout) as the dequantize kernel's scale_inv."""
    shape, kind = scale_layout(gran, rows, cols)
    if kind == "scalar":
        return scale.float().reshape(())
    if kind == "mn_major":
        return mn_major_scales(scale, rows, shape[0])
    return scale.float().reshape(shape).contiguous()


def _dequantize_fake(data, scale_inv, granularity, out_dtype):
    torch._check(data.dim() == 2, lambda: f"data: expected a 2-D tensor, got {tuple(data.shape)}")
    torch._check(out_dtype in HIGH_DTYPES, lambda: f"out_dtype: unsupported dtype {out_dtype}")
    return data.new_empty(data.shape, dtype=out_dtype)


def _dequantize_cuda(data, scale_inv, granularity, out_dtype):
    y = _dequantize_fake(data, scale_inv, granularity, out_dtype)
    _check_cuda({"data": data, "scale_inv": scale_inv}, data.device)
    if data.dtype not in FP8_DTYPES:
        raise TypeError(f"data: expected float8_e4m3fn or float8_e5m2, got {data.dtype}")
    rows, cols = data.shape
    if rows == 0:
        return y
    spec = DequantizeSpec(granularity, int(cols), dtype=FP8_DTYPES[data.dtype],
                          out_dtype=HIGH_DTYPES[out_dtype])
    operands = {"x": data.contiguous(), "scale_inv": _scale_operand(granularity, scale_inv,
                                                                     rows, cols), "y": y}
    (kernel,) = kernels_for(spec, data.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])
    return y


# --- Python kernels of the GEMM (used without the C++ extension) ------------

def _gemm_scales(recipe, scale_a, scale_b, m, n, k):
    """torch's scale layouts as the GEMM's a_scale_inv / b_scale_inv."""
    sa, sb = scale_a.float(), scale_b.float()
    if recipe == "tensorwise":
        return sa.reshape(()), sb.reshape(())
    if recipe == "rowwise":
        return sa.reshape(m).contiguous(), sb.reshape(n).contiguous()
    kb, nb = (k + 127) // 128, (n + 127) // 128
    if tuple(sa.shape) != (m, kb) or tuple(sb.shape) != (kb, nb):
        raise ValueError(f"blockwise: expected scale_a ({m}, {kb}) and scale_b ({kb}, {nb}), "
                         f"got {tuple(sa.shape)} and {tuple(sb.shape)}")
    return mn_major_scales(sa, m, kb), sb.t().contiguous()


def _scaled_mm_python(a, b, scale_a, scale_b, bias, recipe, accumulation, out):
    _check_cuda({"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b, "bias": bias,
                 "out": out}, a.device)
    _check_gemm(a, b, out.dtype)
    m, k = a.shape
    n = b.shape[1]
    recipe = infer_recipe(scale_a, scale_b, m, n, k) if recipe == "auto" else recipe
    if recipe not in RECIPE_CODES:
        raise ValueError(f"unknown recipe {recipe!r}: expected auto or one of {RECIPE_CODES}")
    if m == 0:
        return
    spec = ScaledMatmul(recipe, n=n, k=k, out_dtype=HIGH_DTYPES[out.dtype],
                        accumulation="promoted(128)" if recipe == "blockwise" else accumulation,
                        a_dtype=FP8_DTYPES[a.dtype], b_dtype=FP8_DTYPES[b.dtype],
                        bias_dtype=None if bias is None else HIGH_DTYPES[bias.dtype])
    sa, sb = _gemm_scales(recipe, scale_a, scale_b, m, n, k)
    operands = {"a": a.contiguous(), "b": b.t().contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, "bias": bias, "d": out}
    (kernel,) = kernels_for(spec, a.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])


def _scaled_mm_fp8_out(a, b, scale_a, scale_b, bias, recipe, accumulation, out_dtype,
                       result_recipe, result_scale, config):
    """D quantized to FP8 in the GEMM's epilogue: (d, d_scale_inv).

    result_recipe "delayed": D * result_scale (a one-element float32
    tensor), d_scale_inv = 1 / result_scale (0-d). "blockwise": 1x128
    blocks along N with DeepSeek-V3's power-of-two scales (amax clamp 1e-4,
    e4m3), d_scale_inv (M, ceil(N/128)) float32 over MN-major storage
    [ceil(N/128), roundup(M, 4)] (strides (1, roundup(M, 4))): the layout
    scaled_mm reads a blockwise scale_a in place."""
    _check_cuda({"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b, "bias": bias,
                 "result_scale": result_scale}, a.device)
    m, k = a.shape
    n = b.shape[1]
    recipe = infer_recipe(scale_a, scale_b, m, n, k) if recipe == "auto" else recipe
    if recipe not in RECIPE_CODES:
        raise ValueError(f"unknown recipe {recipe!r}: expected auto or one of {RECIPE_CODES}")
    if result_recipe == "delayed" and result_scale is None:
        raise ValueError("result_recipe 'delayed' needs result_scale (the quantization scale)")
    if result_recipe == "blockwise" and result_scale is not None:
        raise ValueError("result_recipe 'blockwise' computes its scales: no result_scale")
    spec = ScaledMatmul(recipe, n=n, k=k, out_dtype=FP8_DTYPES[out_dtype],
                        accumulation="promoted(128)" if recipe == "blockwise" else accumulation,
                        a_dtype=FP8_DTYPES[a.dtype], b_dtype=FP8_DTYPES[b.dtype],
                        bias_dtype=None if bias is None else HIGH_DTYPES[bias.dtype],
                        config=config, result_recipe=result_recipe)
    d = a.new_empty((m, n), dtype=out_dtype)
    if result_recipe == "delayed":
        scale_inv = torch.empty((), dtype=torch.float32, device=a.device)
        stored = scale_inv
    else:
        padded = (m + MN_MAJOR_ALIGNMENT - 1) // MN_MAJOR_ALIGNMENT * MN_MAJOR_ALIGNMENT
        stored = torch.empty(((n + 127) // 128, padded), dtype=torch.float32, device=a.device)
        scale_inv = stored[:, :m].t()
    if m == 0:
        return d, scale_inv
    sa, sb = _gemm_scales(recipe, scale_a, scale_b, m, n, k)
    operands = {"a": a.contiguous(), "b": b.t().contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, "bias": bias, "d": d, "result_scale_inv": stored,
                "result_scale": None if result_scale is None
                else result_scale.float().reshape(()).contiguous()}
    (kernel,) = kernels_for(spec, a.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])
    return d, scale_inv


def _scaled_mm_cuda(a, b, scale_a, scale_b, bias=None, out_dtype=None, recipe="auto",
                    accumulation="fast"):
    out = _scaled_mm_fake(a, b, scale_a, scale_b, bias, out_dtype)
    _scaled_mm_python(a, b, scale_a, scale_b, bias, recipe, accumulation, out)
    return out


def _scaled_mm_out_cuda(a, b, scale_a, scale_b, bias, recipe, accumulation, out):
    if tuple(out.shape) != (a.shape[0], b.shape[1]) or not out.is_contiguous():
        raise ValueError(f"out: expected a contiguous ({a.shape[0]}, {b.shape[1]}) tensor, "
                         f"got {tuple(out.shape)} with strides {out.stride()}")
    _scaled_mm_python(a, b, scale_a, scale_b, bias, recipe, accumulation, out)


def _launch_python(kernel, operands):
    device = next(t.device for t in operands if t is not None)
    _KERNELS_BY_HANDLE[kernel].launch_ordered(operands, torch.cuda.current_stream(device))


def _scaled_mm_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs[:4])
    ctx.recipe = inputs[6]
    ctx.bias_dtype = None if inputs[4] is None else inputs[4].dtype


def _scaled_mm_autograd_backward(ctx, grad):
    a, b, scale_a, scale_b = ctx.saved_tensors
    mask = list(ctx.needs_input_grad[:4])
    grads = _SCALED_MM_BACKWARD(grad, a, b, scale_a, scale_b, ctx.recipe, mask)
    dbias = grad.sum(0).to(ctx.bias_dtype) if ctx.needs_input_grad[4] else None
    return (*(g if need else None for g, need in zip(grads, mask)), dbias, None, None, None)


# --- definitions ------------------------------------------------------------

_SCALED_MM = define_op(
    "scaled_mm", "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor? bias=None, "
    "ScalarType? out_dtype=None, str recipe=\"auto\", str accumulation=\"fast\") -> Tensor",
    fake=_scaled_mm_fake)
_SCALED_MM_OUT = define_op(
    "scaled_mm_out", "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, Tensor? bias, "
    "str recipe, str accumulation, Tensor(a!) out) -> ()", fake=_scaled_mm_out_fake)
_SCALED_MM_BACKWARD = define_op(
    "scaled_mm_backward", "(Tensor grad, Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
    "str recipe, bool[4] output_mask) -> (Tensor, Tensor, Tensor, Tensor)",
    composite=_scaled_mm_backward)
_QUANTIZE = define_op(
    "quantize", "(Tensor x, str recipe, int[] block, ScalarType dtype, bool rowwise, "
    "bool columnwise, bool transposed, Tensor? scale=None) -> Tensor[]",
    cuda=_quantize_cuda, cpu=_quantize_cuda, fake=_quantize_fake)
_QUANTIZE_DELAYED = define_op(
    "quantize_delayed", "(Tensor x, Tensor scale, Tensor(a!) amax_history, ScalarType dtype, "
    "bool rowwise, bool columnwise, bool transposed) -> (Tensor, Tensor, Tensor, Tensor)",
    cuda=_quantize_delayed_cuda, cpu=_quantize_delayed_cuda, fake=_quantize_delayed_fake)
_DEQUANTIZE = define_op(
    "dequantize", "(Tensor data, Tensor scale_inv, str granularity, ScalarType out_dtype) "
    "-> Tensor", cuda=_dequantize_cuda, cpu=_dequantize_cuda, fake=_dequantize_fake)
_LAUNCH = define_op("_launch", "(int kernel, Tensor?[] operands) -> ()")
# A module function (fp8rt_function address) on the current stream: the C++
# path of fp8mlir.module.Function calls (fp8mlir._module_torch).
_CALL = define_op("_call", "(int function, Tensor?[] arguments, Tensor?[] results, "
                  "int workspace_bytes) -> ()")
# The same with the results allocated in C++ from a registered result plan.
_CALL_PLANNED = define_op("_call_planned", "(int function, int plan, Tensor?[] arguments, "
                          "int workspace_bytes) -> Tensor[]")



def launch(kernel, operands):
    """Launches the runtime kernel `kernel` (a _runtime.Kernel) on the
    current CUDA stream, `operands` in its metadata order (None for an
    absent optional operand): through the C++ kernel of ``_launch`` when
    the extension is loaded."""
    _LAUNCH(kernel.handle, operands)


def _initialize():
    """Loads the C++ kernels (or registers the Python ones) and hands the
    C++ side the runtime and the resolver."""
    extension = _extension.load()
    if extension is not None:
        try:
            runtime = _runtime.load_library(_installed_runtime())
        except FileNotFoundError as error:
            # Fake tensors (tracing, export) need no runtime: fail at the
            # first real call instead, with the C++ kernels' message.
            import warnings
            warnings.warn(f"fp8mlir: {error}", RuntimeWarning, stacklevel=3)
            return extension
        extension.init(runtime, _resolver)
        return extension
    for name, kernel in (("scaled_mm", _scaled_mm_cuda), ("scaled_mm_out", _scaled_mm_out_cuda)):
        LIB.impl(name, kernel, "CUDA")
        LIB.impl(name, kernel, "CPU")
    LIB.impl("_launch", _launch_python, "CUDA")
    torch.library.register_autograd(f"{NAMESPACE}::scaled_mm", _scaled_mm_autograd_backward,
                                    setup_context=_scaled_mm_setup_context, lib=LIB)
    return None


EXTENSION = _initialize()


# --- the public functions ---------------------------------------------------

def scaled_mm(a, b, scale_a, scale_b, *, recipe=None, out_dtype=None, bias=None,
              accumulation="fast", cache=None, out=None, result_recipe=None,
              result_scale=None, config=None):
    """D = (a * scale_a) @ (b * scale_b) (+ bias), like torch._scaled_mm.

    a: [M, K] FP8 (row-major); b: [K, N] FP8 (column-major: ``w.t()`` of a
    row-major [N, K] weight; other layouts are copied); scale_a / scale_b:
    the dequantization scales (scale_inv) in any layout torch's scaled GEMMs
    take for the recipe: tensorwise 0-d or one element; rowwise (M, 1) and
    (1, N); blockwise (M, ceil(K/128)) (MN-major, strides (1, M), is read
    in place when M % 4 == 0, as is fp8mlir.quantize's padded layout) and
    (ceil(K/128), ceil(N/128)). recipe: "tensorwise", "rowwise" or
    "blockwise" (None: from the scale shapes). out_dtype: bfloat16
    (default), float16 or float32. bias: (N,) bfloat16 or float32.
    accumulation: "fast" or "promoted(N)" (blockwise always promotes every
    128). out: a contiguous (M, N) tensor to write (its dtype is the output
    dtype). cache: a KernelCache or directory to take kernels from for this
    call (default: $FP8MLIR_KERNEL_CACHE or ~/.cache/fp8mlir/kernels).
    Runs on the current CUDA stream; differentiable (see python/README.md).

    out_dtype float8_e4m3fn (or float8_e5m2 with result_recipe "delayed"):
    D quantized to FP8 in the GEMM's epilogue, returning (d, d_scale_inv)
    (not differentiable): result_recipe "delayed" (the default with a
    result_scale) with the given one-element float32 result_scale, or
    "blockwise" (the default without one; 1x128 blocks along N, scales in
    the layout the next blockwise scaled_mm reads as scale_a). config: a
    #fp8.gemm_config body such as "<tile = 128x128x128>" for that path.
    """
    recipe = recipe or "auto"
    if out_dtype in FP8_DTYPES:
        if out is not None:
            raise ValueError("an FP8 out_dtype returns new tensors: out is not taken")
        result_recipe = result_recipe or ("blockwise" if result_scale is None else "delayed")
        if cache is not None:
            with _UsingCache(cache):
                return _scaled_mm_fp8_out(a, b, scale_a, scale_b, bias, recipe, accumulation,
                                          out_dtype, result_recipe, result_scale, config)
        return _scaled_mm_fp8_out(a, b, scale_a, scale_b, bias, recipe, accumulation,
                                  out_dtype, result_recipe, result_scale, config)
    if cache is not None:
        with _UsingCache(cache):
            return scaled_mm(a, b, scale_a, scale_b, recipe=recipe, out_dtype=out_dtype,
                             bias=bias, accumulation=accumulation, out=out)
    return call_functional_or_out(_SCALED_MM, _SCALED_MM_OUT, (a, b, scale_a, scale_b, bias),
                                  out_dtype, recipe, accumulation, out)


def call_functional_or_out(op, op_out, operands, out_dtype, recipe, accumulation, out):
    """``op(*operands, out_dtype, recipe, accumulation)``, or with ``out``
    its out= form ``op_out(*operands, recipe, accumulation, out)`` (out_dtype,
    when given, must be out's dtype)."""
    if out is None:
        return op(*operands, out_dtype, recipe, accumulation)
    if out_dtype is not None and out_dtype != out.dtype:
        raise ValueError(f"out_dtype {out_dtype} differs from out's dtype {out.dtype}")
    op_out(*operands, recipe, accumulation, out)
    return out


def quantize(x, recipe="tensorwise", *, dtype=torch.float8_e4m3fn, rowwise=True,
             columnwise=False, transposed=True, block=None, scale=None, amax_history=None,
             cache=None):
    """Quantizes x [R, C] (bfloat16, float16 or float32) to FP8 with the
    project's quantization kernels; returns a QuantizedTensor.

    recipe: "tensorwise" (current per-tensor scaling: an amax kernel, then
    the cast), "rowwise" (one current scale per row), "blockwise" (``block``
    (1, 128), the default, or (128, 128); e4m3; power-of-two scales,
    DeepSeek-V3's), "delayed" (the given ``scale``, a one-element float32
    tensor; with ``amax_history`` (a float32 [H] tensor) x's amax is
    recorded into amax_history[0] in place). rowwise / columnwise: which
    outputs (columnwise quantizes x^T: [C, R] when ``transposed``, needing R
    a multiple of 16, else [R, C]). dtype: torch.float8_e4m3fn or
    torch.float8_e5m2. Scales are scale_inv (x ~= data * scale_inv) in the
    layouts scaled_mm and torch's scaled GEMMs take."""
    if cache is not None:
        with _UsingCache(cache):
            return quantize(x, recipe, dtype=dtype, rowwise=rowwise, columnwise=columnwise,
                            transposed=transposed, block=block, scale=scale,
                            amax_history=amax_history)
    block = list(block) if block is not None and recipe == "blockwise" else []
    if amax_history is not None:
        if recipe != "delayed":
            raise ValueError("amax_history belongs to the delayed recipe")
        outputs = _QUANTIZE_DELAYED(x, scale, amax_history, dtype, rowwise, columnwise,
                                    transposed)
        rowwise_out = outputs[:2] if rowwise else (None, None)
        columnwise_out = outputs[2:] if columnwise else (None, None)
    else:
        outputs = _QUANTIZE(x, recipe, block, dtype, rowwise, columnwise, transposed, scale)
        rowwise_out = (outputs[0], outputs[1]) if rowwise else (None, None)
        columnwise_out = (outputs[-2], outputs[-1]) if columnwise else (None, None)
    return QuantizedTensor(*rowwise_out, *columnwise_out, recipe,
                           tuple(block) or (BLOCKS[0] if recipe == "blockwise" else None),
                           transposed)


def dequantize(data, scale_inv=None, *, recipe=None, block=None, columnwise=False,
               out_dtype=torch.bfloat16, cache=None):
    """FP8 data [R, C] times its scales, as out_dtype.

    data: a QuantizedTensor (its rowwise output, or with ``columnwise`` its
    columnwise output; the recipe and block come with it) or an FP8 tensor
    with ``scale_inv`` in the layout quantize returns and ``recipe`` (and
    ``block`` for blockwise) saying what the scales are."""
    if cache is not None:
        with _UsingCache(cache):
            return dequantize(data, scale_inv, recipe=recipe, block=block,
                              columnwise=columnwise, out_dtype=out_dtype)
    if isinstance(data, QuantizedTensor):
        q = data
        if columnwise and not q.transposed:
            raise ValueError("dequantize: an untransposed columnwise output has per-column "
                             "scales, which the dequantize kernels do not take")
        data, scale_inv = ((q.columnwise_data, q.columnwise_scale_inv) if columnwise
                           else (q.data, q.scale_inv))
        if data is None:
            raise ValueError(f"dequantize: the QuantizedTensor has no "
                             f"{'columnwise' if columnwise else 'rowwise'} output")
        recipe, block = q.recipe, q.block
    if recipe is None:
        raise ValueError("dequantize: pass recipe= (and block= for blockwise) with raw tensors")
    return _DEQUANTIZE(data, scale_inv, recipe_granularity(recipe, block), out_dtype)


def _publish():
    """fp8mlir.scaled_mm / quantize / dequantize as plain attributes of the
    package (so torch.compile sees functions, not a module __getattr__)."""
    import sys
    package = sys.modules[__name__.rpartition(".")[0]]
    for name in ("scaled_mm", "quantize", "dequantize"):
        setattr(package, name, globals()[name])


_publish()
