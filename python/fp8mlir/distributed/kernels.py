"""The project's kernels on the sharded path (torch tensors on a CUDA device).

The same sharded quantization as fp8mlir.distributed.sharded, with the FP8
encoding done by the project's quantize kernels (launched directly into
the outputs fp8mlir.quantize would allocate, without the operator's
dispatch and checks on every call) and the GEMMs by fp8mlir.scaled_mm:

- per tensor: the shard goes in as a flat [n / 1024, 1024] tensor,
  zero-padded (the encoding is elementwise and |0| raises no amax: any
  shard, any shape, one kernel set per input dtype and format). Current
  scaling (no epsilon, no power of two) runs the tensorwise kernels split
  around the collective: the amax kernel of the shard (one pass, |x| bits
  max-ed with atomics into a zeroed f32), the max all-reduce of those 4
  bytes in place on the stream (as int32: the kernel's own combination,
  so the reduced amax is the whole tensor's bit for bit), then the cast
  kernel, which reads the amax from device memory and derives the scale
  itself: no host round trip, no scale arithmetic in between, and the
  whole tensor (``quantize_whole``) runs the same two kernels. Delayed
  scaling and current scaling with an epsilon or power-of-two scales: the
  amax kernel, the all-reduce, the recipe's scale (torch), then the
  delayed-scaling kernel with that scale;
- blockwise 1x128 and 128x128 (power-of-two scales, amax clamp 1e-4, the
  kernels' rule) where no shard boundary cuts a block: every block lies on
  one rank, so the shard is quantized locally by the blockwise kernel (no
  amax all-reduce); the codes and the scale grids are all-gathered in two
  all-gathers, or with ``PACKED_GATHER`` in one (each rank's codes and
  scales packed into one byte buffer, the gathered bytes split into the
  codes and the scales again, one copy each: slower on 2 H100s, whose
  NCCL call costs less than the copy).
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
import functools

import torch
import torch.nn.functional as F

from .. import _torch_ops as ops
from ..quantization import granularity
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


@functools.lru_cache(maxsize=None)
def _spec(kind, cols, in_dtype, fmt="e4m3", block=None):
    """The QuantizeSpec of a kernel set, built once (its checks cost host
    time on every call otherwise)."""
    if kind == "tensorwise":
        return ks.tensorwise_spec(cols, in_dtype, fmt)
    if kind == "delayed":
        return ks.per_tensor_spec(in_dtype, fmt)
    return ks.QuantizeSpec("blockwise", cols, in_dtype=in_dtype, block=block)


def _launch(kernel, named):
    """One kernel on the current stream, its operands by metadata name."""
    ops.launch(kernel, [named.get(name) for name in kernel.operand_names])


def _flat(values):
    """values (n > 0 elements) as the kernels' [n / 1024, 1024] matrix:
    a view of a contiguous, aligned tensor whose n is a multiple of 1024;
    else zero-padded (|0| raises no amax; the padding's codes are dropped)."""
    n = values.numel()
    flat = _aligned(values).reshape(-1)
    if n % FLAT_COLS:
        flat = F.pad(flat, (0, FLAT_COLS - n % FLAT_COLS))
    return flat.reshape(-1, FLAT_COLS)


def _unflat(codes, values):
    """The codes of _flat(values) as values' shape (a view when unpadded)."""
    return codes.view(torch.uint8).reshape(-1)[:values.numel()].reshape(values.shape)


def _shard_amax(comm, x, in_dtype, fmt):
    """The amax over the group of the flat shards x (None: no elements here),
    as a zeroed [1] f32 the amax kernel max-es |x| into, all-reduced in
    place as int32 bits (the kernel's own order: |x| bits, sign cleared)."""
    amax = torch.zeros(1, dtype=torch.float32, device=x.device)
    if x.numel():
        amax_kernel = ops.kernels_for(_spec("tensorwise", FLAT_COLS, in_dtype, fmt), x.device)[0]
        _launch(amax_kernel, {"x": x, "amax": amax.reshape(())})
    if comm is not None and comm.size > 1:
        comm.all_reduce_max(amax.view(torch.int32))
    return amax


def _current(comm, values, fmt):
    """(codes, scale_inv [1, 1], amax [1, 1]) of current scaling of the
    group's tensor: amax kernel, 4-byte all-reduce, cast kernel."""
    in_dtype = ops.HIGH_DTYPES[values.dtype]
    x = _flat(values) if values.numel() else values.reshape(0, FLAT_COLS)
    amax = _shard_amax(comm, x, in_dtype, fmt)
    if not values.numel():  # nothing to encode here: the scale from the reduced amax
        scale_inv = BACKEND.scale_rule(sh.QuantSpec("current", fmt), amax.reshape(1, 1))[1]
        return torch.zeros(values.shape, dtype=torch.uint8, device=values.device), \
            scale_inv, amax.reshape(1, 1)
    cast = ops.kernels_for(_spec("tensorwise", FLAT_COLS, in_dtype, fmt), x.device)[1]
    codes = torch.empty(x.shape, dtype=FP8[fmt], device=x.device)
    scale_inv = torch.empty((), dtype=torch.float32, device=x.device)
    _launch(cast, {"x": x, "amax": amax.reshape(()), "rowwise": codes,
                   "rowwise_scale_inv": scale_inv})
    return _unflat(codes, values), scale_inv.reshape(1, 1), amax.reshape(1, 1)


def _per_tensor(values, scale, fmt):
    """(codes, scale_inv [1, 1] or None for no elements) of values * scale
    through the delayed-scaling kernel."""
    if values.numel() == 0:
        return torch.zeros(values.shape, dtype=torch.uint8, device=values.device), None
    x = _flat(values)
    kernel = ops.kernels_for(_spec("delayed", FLAT_COLS, ops.HIGH_DTYPES[values.dtype], fmt),
                             x.device)[0]
    codes = torch.empty(x.shape, dtype=FP8[fmt], device=x.device)
    scale_inv = torch.empty((), dtype=torch.float32, device=x.device)
    _launch(kernel, {"x": x, "scale": scale.reshape(()).float().contiguous(), "rowwise": codes,
                     "rowwise_scale_inv": scale_inv})
    return _unflat(codes, values), scale_inv.reshape(1, 1)


def _fast_current(spec):
    """Current scaling the cast kernel derives from the amax itself."""
    return spec.recipe == "current" and not spec.epsilon and not spec.pow2


def _quantize_blocks(x, block, data_out=None, scale_out=None):
    """(codes [R, C] e4m3, scale_inv in torch's layout) of the blockwise
    kernel on x [R, C], launched directly: the outputs fp8mlir.quantize
    would allocate, without its operator dispatch per call; ``data_out``
    (uint8, R * C) and ``scale_out`` (f32, 128x128 only: the dense grid)
    take the kernel's outputs instead (views of a packed send buffer)."""
    spec = _spec("blockwise", int(x.shape[1]), ops.HIGH_DTYPES[x.dtype], block=block)
    physical, (codes, scale_inv) = ops._quantize_outputs(  # noqa: SLF001 (this package's)
        x, granularity("blockwise", block), torch.float8_e4m3fn, True, False, True)
    if data_out is not None:
        codes = physical["rowwise"] = data_out.view(torch.float8_e4m3fn).view(x.shape)
    if scale_out is not None:
        scale_inv = physical["rowwise_scale_inv"] = scale_out.view(scale_inv.shape)
    for kernel in ops.kernels_for(spec, x.device):
        _launch(kernel, dict(physical, x=x))
    return codes, scale_inv


def _codes_into(codes, out):
    """codes [R, C] as a contiguous uint8 tensor: ``out`` (uint8, R * C)
    holding them (copied unless the kernel wrote there), or codes."""
    if out is None:
        return codes.contiguous()
    view = out.view(codes.shape)
    if view.data_ptr() != codes.data_ptr():
        view.copy_(codes)
    return view


def _rows_1x128(values, out=None):
    rows, cols = values.shape
    padded = ks.ceil_div(cols, BLOCK) * BLOCK
    x = F.pad(values, (0, padded - cols)) if padded != cols else _aligned(values)
    width = ks.blockwise_width(cols, (1, BLOCK))
    direct = out is not None and padded == cols
    data, scale_inv = _quantize_blocks(x.reshape(-1, width), (1, BLOCK),
                                       out[0] if direct else None)
    codes = _codes_into(data.view(torch.uint8).reshape(rows, padded)[:, :cols],
                        None if out is None else out[0])
    # the kernel's MN-major scales as a row-major (rows, blocks) grid (the
    # gather concatenates rows): one small transposing copy
    if out is None:
        return codes, scale_inv.contiguous().reshape(rows, padded // BLOCK)
    grid = out[1].view(rows, padded // BLOCK)
    grid.view(scale_inv.shape).copy_(scale_inv)
    return codes, grid


def _tiles_128(values, out=None):
    rows, cols = values.shape
    padded = ks.blockwise_width(cols, (BLOCK, BLOCK))
    x = F.pad(values, (0, padded - cols)) if padded != cols else _aligned(values)
    direct = out is not None and padded == cols
    data, scale_inv = _quantize_blocks(x, (BLOCK, BLOCK), out[0] if direct else None,
                                       None if out is None else out[1])
    return _codes_into(data.view(torch.uint8)[:, :cols], None if out is None else out[0]), \
        scale_inv


def _blockwise(values, block, out=None):
    """(codes, scale grid) of the blockwise kernel on one shard; ``out``:
    (uint8 view for the codes, f32 view for the grid), 1-D, where they go
    (packed_send's views), or None."""
    rows, cols = values.shape
    grid_shape = (ks.ceil_div(rows, block[0]), ks.ceil_div(cols, block[1]))
    if rows == 0 or cols == 0:
        if out is not None:
            return out[0].view(values.shape), out[1].view(grid_shape)
        grid = torch.ones(grid_shape, device=values.device)
        return torch.zeros(values.shape, dtype=torch.uint8, device=values.device), grid
    return (_rows_1x128 if block == (1, BLOCK) else _tiles_128)(values, out)


def _kernel_specs(spec, windows, in_dtype):
    """The kernel sets quantize_window runs for these windows (every rank
    resolves the same ones before any collective)."""
    if spec.block != "tensor":
        return [_spec("blockwise", ks.blockwise_width(w.cols, spec.block), in_dtype,
                      block=tuple(spec.block)) for w in windows if w.rows and w.cols]
    specs = [_spec("tensorwise", FLAT_COLS, in_dtype, spec.fmt)]
    return specs if _fast_current(spec) else specs + [_spec("delayed", FLAT_COLS, in_dtype,
                                                            spec.fmt)]


def quantize_window(comm, values, window, windows, shape, spec, out=None):
    """This rank's window of a tensor of ``shape`` quantized as the whole
    tensor would be; ``windows``: those of all ranks. Returns (codes,
    scale_inv, amax grid or None, kernel): per tensor, scale_inv [1, 1];
    blockwise, the grid of this window's blocks when ``kernel`` (else the
    whole tensor's grid, from the reference), written into ``out``
    (packed_send's views) when given."""
    reason = ks.kernel_reason(spec, windows, shape)
    in_dtype = ops.HIGH_DTYPES[values.dtype]
    if reason is None:
        try:  # every rank loads the same kernels before any collective
            _resolve(_kernel_specs(spec, windows, in_dtype), values.device)
        except Exception as error:  # noqa: BLE001 - a kernel-cache miss: counted, reference
            reason = _miss(error)
    if reason is not None:
        USAGE[f"quantize reference: {reason}"] += 1
        q = sh.quantize_shard(BACKEND, values, window, shape, spec, comm)
        return q.data, q.scale_inv, q.amax, False
    if spec.block != "tensor":
        codes, grid = _blockwise(values, spec.block, out)
        USAGE[f"quantize kernel (blockwise {spec.block[0]}x{spec.block[1]})"] += 1
        return codes, grid, None, True
    if _fast_current(spec):
        USAGE["quantize kernel (per tensor: amax, all-reduce, cast from the amax)"] += 1
        return (*_current(comm, values, spec.fmt), True)
    x = _flat(values) if values.numel() else values.reshape(0, FLAT_COLS)
    grid = _shard_amax(comm, x, in_dtype, spec.fmt).reshape(1, 1)
    grid = BACKEND.bits_to_amax(BACKEND.amax_to_bits(grid))  # NaN: the reference's one NaN
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
    send, out = packed_send(comm, values, windows, spec)
    codes, scale_inv, amax, kernel = quantize_window(comm, values, windows[comm.rank],
                                                     windows, shape, spec, out)
    codes, scale_inv = gather(comm, codes, scale_inv, counts, spec, dim, kernel, send)
    return sh.ShardQuantized(codes, scale_inv, amax, spec, tuple(shape))


# True: the kernels' blockwise codes and scales in one all-gather (each
# rank's packed into one byte buffer, then one copy to join the codes);
# False (the default): the scales in a second all-gather after the codes,
# each written in place. On 2x H100 (NVLink) two gathers were faster for
# every tensor of bench/dist_speed.py (7B and 70B shapes), which times both.
PACKED_GATHER = False


def packed_send(comm, values, windows, spec):
    """(send buffer, (codes view, scales view)) of this rank's part of a
    packed all-gather of the blockwise kernels' codes and scales (the
    kernel writes them there: nothing is copied in), or (None, None) where
    nothing is packed (per-tensor recipes, one rank, PACKED_GATHER off)."""
    if spec.block == "tensor" or comm is None or comm.size == 1 or not PACKED_GATHER:
        return None, None
    grids = [ks.ceil_div(w.rows, spec.block[0]) * ks.ceil_div(w.cols, spec.block[1])
             for w in windows]
    send, views = comm.packed_send(values, [(torch.uint8, [w.rows * w.cols for w in windows]),
                                            (torch.float32, grids)])
    return send, tuple(views)


def gather(comm, codes, scale_inv, counts, spec, dim, kernel, send=None):
    """FP8 all-gather of row (dim 0) or column shards' codes; on the kernel
    path the blockwise scale grids are gathered too: in a second all-gather,
    or with PACKED_GATHER in the same one (each rank's codes and scales
    packed into one byte buffer, ``send`` when the kernel wrote them there;
    the reference path's grid is already the whole tensor's)."""
    along = sh.gather_rows if dim == 0 else sh.gather_columns
    if not (kernel and spec.block != "tensor"):
        return along(comm, BACKEND, codes, counts), scale_inv
    b = spec.block[dim]
    grid_counts = [ks.ceil_div(c, b) for c in counts]
    if not PACKED_GATHER:
        return along(comm, BACKEND, codes, counts), along(comm, BACKEND, scale_inv, grid_counts)
    return tuple(sh.gather_packed(comm, BACKEND, [codes, scale_inv], [counts, grid_counts], dim,
                                  send))


def quantize_whole(values, spec):
    """The single-device quantization of a whole tensor on the same kernels
    as the shards (current scaling: the tensorwise amax kernel, then the
    cast), with the same host work per call."""
    shape = tuple(values.shape)
    window = sh.Window(0, 0, *shape)
    codes, scale_inv, amax, _ = quantize_window(None, values, window, [window], shape, spec)
    return sh.ShardQuantized(codes, scale_inv, amax, spec, shape)


def quantize_operator(values, spec):
    """Current scaling of a whole [R, C] tensor (C a multiple of 16) through
    the public operator fp8mlir.quantize (the tensorwise kernels built for
    C): a second instance of the kernels to check the shards' bytes
    against. None where it does not apply or a kernel is missing."""
    shape = tuple(values.shape)
    if not (_fast_current(spec) and values.numel() and shape[1] % ks.GEMM_ALIGN == 0):
        return None
    try:
        _resolve([ks.tensorwise_spec(shape[1], ops.HIGH_DTYPES[values.dtype], spec.fmt)],
                 values.device)
    except Exception as error:  # noqa: BLE001 - a kernel-cache miss: counted
        USAGE[f"tensorwise kernel missing: {_miss(error)}"] += 1
        return None
    q = ops.quantize(_aligned(values), "tensorwise", dtype=FP8[spec.fmt])
    return sh.ShardQuantized(q.data.view(torch.uint8), q.scale_inv.reshape(1, 1).float(),
                             None, spec, shape)


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
