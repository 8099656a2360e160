"""The project's kernels on the sharded path (torch tensors on a CUDA device).

The same sharded quantization as fp8mlir.distributed.sharded, with the FP8
encoding done by fp8mlir.quantize and the GEMMs by fp8mlir.scaled_mm:

- per tensor (current, delayed): the NaN-propagating amax of the shard,
  the max all-reduce of that one value (int32 bits, NaN-exact), the
  recipe's scale from the reduced amax, then the project's delayed-scaling
  kernel with that scale (the encoding is elementwise, so the shard goes in
  as a flat [n / 1024, 1024] tensor, zero-padded: any shard, any shape, one
  kernel per input dtype and format);
- blockwise 1x128 and 128x128 (power-of-two scales, amax clamp 1e-4, the
  kernels' rule) where no shard boundary cuts a block: every block lies on
  one rank, so the shard is quantized locally by the blockwise kernel (no
  amax all-reduce) and the scale grids are all-gathered with the codes.
  1x128 shards go in as [n / W, W] rows, W = 1024 or 128 (a row of 1x128
  blocks is a run of them); columns are zero-padded to a block or to 16,
  which leaves every block's amax unchanged;
- elsewhere (blockwise with a boundary inside a block, other blockwise
  scale rules, MXFP8: no quantize kernel for Hopper) the torch reference of
  fp8mlir.distributed.backends.TorchBackend, with the reason counted in
  ``USAGE``.

``scaled_mm`` runs A B^T of torch_recipes.Quantized operands on the
project's GEMM (tensorwise x tensorwise, 1x128 x 128x128; N and K
zero-padded to multiples of 16, promoted f32 accumulation every 128 of K
as cuBLASLt's non-fast mode); 1x128 x 1x128 (the blockwise weight
gradient) has no project kernel and runs on cuBLASLt through torch.

A kernel missing from the kernel cache (the GPU machine has no compiler)
is a counted fallback to the reference, not a failure: ``USAGE`` says what
ran where, and the benchmark reports print it.
"""

import collections

import torch
import torch.nn.functional as F

from .. import _torch_ops as ops
from ..testing import torch_recipes as rec
from . import kernel_specs as ks
from . import sharded as sh
from .backends import TorchBackend

BLOCK, FLAT_COLS = ks.BLOCK, ks.FLAT_COLS
FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
BACKEND = TorchBackend()
USAGE = collections.Counter()  # "quantize kernel ...", "quantize reference: <reason>", ...


def usage_lines():
    return [f"{count} x {what}" for what, count in sorted(USAGE.items())]


def _resolve(specs, device):
    """Loads the kernels of `specs` (raises on a kernel-cache miss)."""
    for spec in specs:
        ops.kernels_for(spec, device)


def _miss(error):
    return f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"


# --- the kernels on one rank's values ---------------------------------------------------

def _aligned(t):
    """``t`` contiguous at a 16-byte aligned address (the kernels' contract):
    a view into a flat shard may start anywhere, so such a view is copied."""
    t = t.contiguous()
    return t if t.data_ptr() % 16 == 0 else t.clone()


def _per_tensor(values, scale, fmt):
    """(codes, scale_inv [1, 1] or None for no elements) of values * scale
    through the delayed-scaling kernel."""
    n = values.numel()
    if n == 0:
        return torch.zeros(values.shape, dtype=torch.uint8, device=values.device), None
    flat = _aligned(values).reshape(-1)
    if n % FLAT_COLS:
        flat = F.pad(flat, (0, FLAT_COLS - n % FLAT_COLS))
    q = ops.quantize(flat.reshape(-1, FLAT_COLS), "delayed", dtype=FP8[fmt],
                     scale=scale.reshape(1).float().contiguous())
    codes = q.data.view(torch.uint8).reshape(-1)[:n].reshape(values.shape)
    return codes, q.scale_inv.reshape(1, 1).float()


def _rows_1x128(values):
    rows, cols = values.shape
    padded = ks.ceil_div(cols, BLOCK) * BLOCK
    x = F.pad(values, (0, padded - cols)) if padded != cols else _aligned(values)
    width = ks.blockwise_width(cols, (1, BLOCK))
    q = ops.quantize(x.reshape(-1, width), "blockwise", block=(1, BLOCK))
    codes = q.data.view(torch.uint8).reshape(rows, padded)[:, :cols]
    return codes.contiguous(), q.scale_inv.contiguous().reshape(rows, padded // BLOCK)


def _tiles_128(values):
    rows, cols = values.shape
    padded = ks.blockwise_width(cols, (BLOCK, BLOCK))
    x = F.pad(values, (0, padded - cols)) if padded != cols else _aligned(values)
    q = ops.quantize(x, "blockwise", block=(BLOCK, BLOCK))
    return q.data.view(torch.uint8)[:, :cols].contiguous(), q.scale_inv.contiguous().float()


def _blockwise(values, block):
    rows, cols = values.shape
    if rows == 0 or cols == 0:
        grid = torch.ones((ks.ceil_div(rows, block[0]), ks.ceil_div(cols, block[1])),
                          device=values.device)
        return torch.zeros(values.shape, dtype=torch.uint8, device=values.device), grid
    return (_rows_1x128 if block == (1, BLOCK) else _tiles_128)(values)


def quantize_window(comm, values, window, windows, shape, spec):
    """This rank's window of a tensor of ``shape`` quantized as the whole
    tensor would be; ``windows``: those of all ranks. Returns (codes,
    scale_inv, amax grid or None, kernel): per tensor, scale_inv [1, 1];
    blockwise, the grid of this window's blocks when ``kernel`` (else the
    whole tensor's grid, from the reference)."""
    reason = ks.kernel_reason(spec, windows, shape)
    in_dtype = ops.HIGH_DTYPES[values.dtype]
    if reason is None:
        try:  # every rank loads the same kernels before any collective
            _resolve([ks.per_tensor_spec(in_dtype, spec.fmt)] if spec.block == "tensor" else
                     ks.blockwise_specs(windows, in_dtype, spec.block), values.device)
        except Exception as error:  # noqa: BLE001 - a kernel-cache miss: counted, reference
            reason = _miss(error)
    if reason is not None:
        USAGE[f"quantize reference: {reason}"] += 1
        q = sh.quantize_shard(BACKEND, values, window, shape, spec, comm)
        return q.data, q.scale_inv, q.amax, False
    if spec.block != "tensor":
        codes, grid = _blockwise(values, spec.block)
        USAGE[f"quantize kernel (blockwise {spec.block[0]}x{spec.block[1]})"] += 1
        return codes, grid, None, True
    grid = torch.zeros((1, 1), dtype=torch.float32, device=values.device)
    if values.numel():
        grid = values.abs().amax().float().reshape(1, 1)
    grid = sh.reduce_amax(comm, BACKEND, grid)
    scale, scale_inv = BACKEND.scale_rule(spec, grid)
    codes, kernel_scale_inv = _per_tensor(values, scale, spec.fmt)
    USAGE["quantize kernel (per tensor, scale from the reduced amax)"] += 1
    return codes, scale_inv if kernel_scale_inv is None else kernel_scale_inv, grid, True


def _windows(shape, counts, dim):
    make = sh.row_window if dim == 0 else sh.column_window
    return [make(shape, counts, r) for r in range(len(counts))]


def shard_and_gather(comm, values, shape, counts, spec, dim=0):
    """sh.shard_and_gather on the project's kernels: the whole tensor's
    codes, scale_inv grid and (per tensor) amax, as quantize_whole gives."""
    windows = _windows(shape, counts, dim)
    codes, scale_inv, amax, kernel = quantize_window(comm, values, windows[comm.rank],
                                                     windows, shape, spec)
    codes, scale_inv = gather(comm, codes, scale_inv, counts, spec, dim, kernel)
    return sh.ShardQuantized(codes, scale_inv, amax, spec, tuple(shape))


def gather(comm, codes, scale_inv, counts, spec, dim, kernel):
    """FP8 all-gather of row (dim 0) or column shards' codes; the blockwise
    scale grids of the kernel path with them (the reference path's grid is
    already the whole tensor's)."""
    along = sh.gather_rows if dim == 0 else sh.gather_columns
    codes = along(comm, BACKEND, codes, counts)
    if kernel and spec.block != "tensor":
        b = spec.block[dim]
        scale_inv = along(comm, BACKEND, scale_inv, [ks.ceil_div(c, b) for c in counts])
    return codes, scale_inv


def quantize_whole(values, spec):
    """The single-device quantization of a whole tensor on the kernels;
    current scaling (no epsilon, no power-of-two rounding) on the
    project's tensorwise kernel (its own amax kernel, then the cast)."""
    shape = tuple(values.shape)
    if (spec.recipe == "current" and not spec.epsilon and not spec.pow2 and values.numel()
            and shape[1] % ks.GEMM_ALIGN == 0):  # the kernel's C: a multiple of 16
        try:
            _resolve([ks.tensorwise_spec(shape[1], ops.HIGH_DTYPES[values.dtype], spec.fmt)],
                     values.device)
            q = ops.quantize(_aligned(values), "tensorwise", dtype=FP8[spec.fmt])
            USAGE["quantize kernel (tensorwise, whole tensor)"] += 1
            return sh.ShardQuantized(q.data.view(torch.uint8), q.scale_inv.reshape(1, 1).float(),
                                     None, spec, shape)
        except Exception as error:  # noqa: BLE001 - a kernel-cache miss: counted
            USAGE[f"tensorwise kernel missing, per-tensor path: {_miss(error)}"] += 1
    window = sh.Window(0, 0, *shape)
    codes, scale_inv, amax, _ = quantize_window(None, values, window, [window], shape, spec)
    return sh.ShardQuantized(codes, scale_inv, amax, spec, shape)


class KernelBackend(TorchBackend):
    """TorchBackend whose per-tensor encoding is the project's kernel (the
    flat shards of fp8mlir.distributed.sharded.quantize_flat_shard); block
    scales (blocks cut by the flat shards) stay on the reference."""
    name = "torch+kernels"

    def encode(self, x, scale, fmt):
        if scale.numel() != 1:
            USAGE["quantize reference: blocks of a flat shard"] += 1
            return super().encode(x, scale, fmt)
        try:
            _resolve([ks.per_tensor_spec(ops.HIGH_DTYPES[x.dtype], fmt)], x.device)
        except Exception as error:  # noqa: BLE001 - a kernel-cache miss: counted
            USAGE[f"quantize reference: {_miss(error)}"] += 1
            return super().encode(x, scale, fmt)
        USAGE["quantize kernel (per tensor, flat shard)"] += 1
        return _per_tensor(x, scale.reshape(1), fmt)[0]


# --- GEMMs ----------------------------------------------------------------------------------

def _padded(data, rows, cols):
    data = _aligned(data)
    if tuple(data.shape) == (rows, cols):
        return data
    out = torch.zeros((rows, cols), dtype=torch.uint8, device=data.device)
    out[:data.shape[0], :data.shape[1]] = data.view(torch.uint8)
    return out.view(data.dtype)


def gemm_reason(a, b):
    if a.granularity == "tensor" and b.granularity == "tensor":
        return None
    if a.block == (1, BLOCK) and b.block == (BLOCK, BLOCK):
        return None
    return f"{a.granularity} x {b.granularity}: no project GEMM (cuBLASLt through torch)"


def scaled_mm(a, b, out_dtype):
    """A B^T of torch_recipes.Quantized A [M, K], B [N, K] -> [M, N]."""
    reason = gemm_reason(a, b)
    if reason is not None:
        USAGE[f"gemm torch: {reason}"] += 1
        return rec.scaled_mm(a, b, out_dtype)
    m, k = a.data.shape
    n = b.data.shape[0]
    align = ks.GEMM_ALIGN
    kp, np_ = ks.ceil_div(k, align) * align, ks.ceil_div(n, align) * align
    da, db = _padded(a.data, m, kp), _padded(b.data, np_, kp)
    if a.granularity == "tensor":
        recipe, sa, sb = "tensorwise", a.scale_inv.reshape(()), b.scale_inv.reshape(())
    else:  # (M, K/128) read MN-major; B's (N/128, K/128) grid as (K/128, N/128)
        recipe, sa, sb = "blockwise", a.scale_inv.float().t().contiguous().t(), b.scale_inv.t()
    try:
        out = ops.scaled_mm(da, db.t(), sa, sb, recipe=recipe, out_dtype=out_dtype,
                            accumulation=ks.ACCUMULATION)
    except Exception as error:  # noqa: BLE001 - a kernel-cache miss (before any launch): counted
        USAGE[f"gemm torch: {_miss(error)}"] += 1
        return rec.scaled_mm(a, b, out_dtype)
    USAGE[f"gemm kernel ({recipe} {a.fmt}x{b.fmt})"] += 1
    return (out[:, :n] if np_ != n else out).contiguous()
