"""Tensor-parallel FP8 linear layers with sequence parallelism (torch).

A layer Y = X W^T, X [M, K], W [N, K], on a group of ranks:

- column parallel: rank r holds W's rows [N_r] and a sequence shard of X
  (rows [M_r]). Forward: sharded quantization of X (amax reduced over the
  group), FP8 all-gather of the rowwise data, Y_r = X W_r^T [M, N_r]. The
  columnwise FP8 shard of X (for wgrad) is kept and all-gathered when the
  backward starts. Backward: dX partial = dY_r W_r, reduce-scattered over
  the sequence in f32 (a reduction: high precision), dW_r = dY_r^T X.
- row parallel: rank r holds W's columns [K_r] and X's columns [K_r] (the
  output of a column-parallel layer). Forward: Y partial = X_r W_r^T,
  reduce-scattered over the sequence. Backward: sharded quantization of the
  sequence shard dY_r, FP8 all-gather (rowwise for dgrad, columnwise for
  wgrad), dX_r = dY W_r, dW_r = dY^T X_r.

W is quantized from the rank's shard with its amax reduced over the group,
so every FP8 tensor equals the single-device one (docs/distributed.md).
``comm="bf16"`` gathers the high-precision shards and quantizes the whole
tensor instead: the same FP8 tensors (the check), more bytes on the wire.
``kernels=True`` (TPContext): quantization and GEMMs on the project's
kernels (fp8mlir.distributed.kernels: fp8mlir.quantize, fp8mlir.scaled_mm;
the blockwise weight gradient, 1x128 x 1x128, on cuBLASLt); else the
torch references (torch_recipes: eager quantization, cuBLASLt GEMMs).
Recipes: current, delayed (scales passed in, reduced amaxes recorded),
blockwise (X/dY 1x128, W 128x128; the K shard boundaries of a row-parallel
layer and the N boundaries of a column-parallel one must be multiples of
128, else ValueError: the local GEMM's 128-blocks would straddle two tiles).
"""

import torch

from ..testing import torch_recipes as rec
from . import sharded as sh
from .backends import TorchBackend

_BLOCK = 128


def _specs(recipe, scales=None):
    """QuantSpecs of X, W, dY (rowwise; .transposed() for columnwise)."""
    if recipe.name == "blockwise":
        row = sh.QuantSpec("blockwise", block=(1, _BLOCK), scales=recipe.scales,
                           amax_clamp=recipe.amax_clamp)
        return row, sh.QuantSpec("blockwise", block=(_BLOCK, _BLOCK), scales=recipe.scales,
                                 amax_clamp=recipe.amax_clamp), row
    grad = recipe.grad_format
    if recipe.name == "current":
        make = lambda fmt, _: sh.QuantSpec("current", fmt, epsilon=recipe.epsilon,  # noqa: E731
                                           pow2=recipe.pow2)
    else:
        if scales is None:
            raise ValueError("delayed scaling needs the scales of X, W and dY")
        make = lambda fmt, i: sh.QuantSpec("delayed", fmt, scale=float(scales[i]))  # noqa: E731
    return make("e4m3", 0), make("e4m3", 1), make(grad, 2)


def _recipe_q(codes, scale_inv, amax, spec, shape):
    """A torch_recipes.Quantized of whole-tensor codes."""
    fmt_dtype = rec.FP8_DTYPES[spec.fmt]
    if spec.block == "tensor":
        gran, block = "tensor", tuple(shape)
    else:
        gran = block = spec.block
    return rec.Quantized(codes.view(fmt_dtype), scale_inv, amax, spec.fmt, gran, block)


class TPContext:
    """The group, its communicator, the sequence split and the comm mode."""

    def __init__(self, comm, seq_counts, mode="fp8", kernels=False):
        if mode not in ("fp8", "bf16"):
            raise ValueError(f"comm mode {mode!r}: expected 'fp8' or 'bf16'")
        self.comm, self.seq_counts, self.mode = comm, list(seq_counts), mode
        self.backend = TorchBackend()
        self.kernels = None
        if kernels:
            from . import kernels as kq  # loads the project's torch operators
            self.kernels = kq
        self.amax = {}  # delayed scaling: the reduced amaxes of the last step

    def gemm(self, a, b, out_dtype):
        """A B^T of Quantized operands."""
        return (self.kernels.scaled_mm if self.kernels else rec.scaled_mm)(a, b, out_dtype)

    @property
    def rank(self):
        return self.comm.rank

    def seq_window(self, shape):
        """This rank's sequence shard (rows) of a [M, C] tensor."""
        return sh.row_window(shape, self.seq_counts, self.rank)

    def _record(self, name, q):
        if name and q.amax is not None:
            self.amax[name] = q.amax.amax()

    def gather_sequence(self, local, shape, spec, columnwise, record=None):
        """The whole [M, C] tensor's quantizations from this rank's sequence
        shard [M_r, C]: (rowwise Quantized, columnwise pending). fp8 mode:
        sharded quantization and FP8 all-gather (the columnwise shard is
        quantized now and gathered when ``pending()`` is called); bf16 mode:
        one BF16 all-gather, then the whole tensor quantized. ``columnwise``
        (blockwise only): the spec of the 1x128 quantization of the
        transpose along M; None for per-tensor recipes (the transpose of
        the rowwise bytes)."""
        if self.kernels:
            return self._gather_sequence_kernels(local, shape, spec, columnwise, record)
        be, comm, counts = self.backend, self.comm, self.seq_counts
        rows, cols = shape
        if self.mode == "fp8":
            q = sh.shard_and_gather(comm, be, local, shape, counts, spec, 0)
            qt = None
            if columnwise is not None:
                window = sh.column_window((cols, rows), counts, comm.rank)
                qt = sh.quantize_shard(be, local.t(), window, (cols, rows), columnwise, comm)
        else:
            full = sh.gather_rows(comm, be, local, counts)
            q = sh.quantize_whole(be, full, spec)
            qt = None if columnwise is None else sh.quantize_whole(be, full.t(), columnwise)
        self._record(record, q)
        rowwise = _recipe_q(q.data, q.scale_inv, q.amax.amax(), spec, shape)

        def pending():
            if columnwise is None:
                return rowwise.transposed()
            data = qt.data
            if self.mode == "fp8":
                data = sh.gather_columns(comm, be, data, counts)
            return _recipe_q(data, qt.scale_inv, qt.amax.amax(), columnwise, (cols, rows))
        return rowwise, pending

    def _gather_sequence_kernels(self, local, shape, spec, columnwise, record):
        kq, comm, counts = self.kernels, self.comm, self.seq_counts
        rows, cols = shape
        t_shape = (cols, rows)
        if self.mode == "fp8":
            q = kq.shard_and_gather(comm, local, shape, counts, spec, 0)
            if columnwise is not None:
                windows = [sh.column_window(t_shape, counts, r) for r in range(comm.size)]
                send, out = kq.packed_send(comm, local, windows, columnwise)
                qt = kq.quantize_window(comm, local.t(), windows[comm.rank], windows, t_shape,
                                        columnwise, out) + (send,)
        else:
            full = sh.gather_rows(comm, self.backend, local, counts)
            q = kq.quantize_whole(full, spec)
            if columnwise is not None:
                qt = kq.quantize_whole(full.t(), columnwise)
        self._record(record, q)
        rowwise = _recipe_q(q.data, q.scale_inv, _amax(q.amax), spec, shape)

        def pending():
            if columnwise is None:
                return rowwise.transposed()
            if self.mode == "bf16":
                return _recipe_q(qt.data, qt.scale_inv, _amax(qt.amax), columnwise, t_shape)
            codes, scale_inv, amax, kernel, send = qt
            codes, scale_inv = kq.gather(comm, codes, scale_inv, counts, columnwise, 1, kernel,
                                         send)
            return _recipe_q(codes, scale_inv, _amax(amax), columnwise, t_shape)
        return rowwise, pending

    def local_quantized(self, local, window_of, shape, spec, record=None):
        """Quantization of a shard used where it is (weights, and shards
        along the GEMM's K or N): the amax grid reduced over the group; the
        scales of the shard's own blocks."""
        window = window_of(self.rank)
        if self.kernels:
            windows = [window_of(r) for r in range(self.comm.size)]
            codes, grid, amax, kernel = self.kernels.quantize_window(
                self.comm, local, window, windows, shape, spec)
            q = sh.ShardQuantized(codes, grid, amax, spec, tuple(shape))
        else:
            q = sh.quantize_shard(self.backend, local, window, shape, spec, self.comm)
            kernel = False
        self._record(record, q)
        grid = q.scale_inv
        if spec.block != "tensor" and not kernel:
            br, bc = spec.block
            r0, c0 = window.row // br, window.col // bc
            grid = grid[r0:r0 + -(-window.rows // br), c0:c0 + -(-window.cols // bc)]
        return _recipe_q(q.data, grid.contiguous(), _amax(q.amax), spec,
                         (window.rows, window.cols))

    def reduce_scatter_rows(self, partial, out_dtype):
        """Sum over ranks of [M, C] f32 partials; this rank's rows [M_r, C]."""
        cols = partial.shape[1]
        flat = self.comm.reduce_scatter_sum(partial.float().reshape(-1),
                                            [c * cols for c in self.seq_counts])
        return flat.reshape(-1, cols).to(out_dtype)


def _amax(grid):
    return None if grid is None else grid.amax()


def _check_aligned(recipe, what, counts):
    offsets = _offsets(counts)
    if recipe.name == "blockwise" and any(o % _BLOCK for o in offsets):
        raise ValueError(f"blockwise {what}: shard boundaries {offsets} must be multiples of "
                         f"{_BLOCK} (a 128-block of the local GEMM would span two scale tiles)")


def _offsets(counts):
    return [sum(counts[:i]) for i in range(len(counts))]


def _prepare(recipe, scales, what, counts):
    """The QuantSpecs of X, W, dY once the split is checked."""
    _check_aligned(recipe, what, counts)
    return _specs(recipe, scales)


def _columnwise(recipe, spec):
    return spec if recipe.name == "blockwise" else None


class _ColumnParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x_r, w_r, ctxt, recipe, w_counts, scales):
        x_spec, w_spec, dy_spec = _prepare(recipe, scales, "column-parallel W rows", w_counts)
        M, K, N = sum(ctxt.seq_counts), x_r.shape[1], sum(w_counts)
        qx, x_t = ctxt.gather_sequence(x_r, (M, K), x_spec, _columnwise(recipe, x_spec), "x")
        w_of = lambda r: sh.row_window((N, K), w_counts, r)  # noqa: E731
        qw = ctxt.local_quantized(w_r, w_of, (N, K), w_spec, record="w")
        y = ctxt.gemm(qx, qw, x_r.dtype)
        # Kept for the backward: FP8 only (X^T's shard in fp8 mode, W_r^T).
        ctx.saved = (x_t, qw.transposed())
        ctx.args = (ctxt, recipe, dy_spec, (M, N), w_of, x_r.dtype, w_r.dtype)
        return y

    @staticmethod
    def backward(ctx, dy):
        ctxt, recipe, dy_spec, (M, N), w_of, x_dtype, w_dtype = ctx.args
        x_t, w_t = ctx.saved
        ctx.saved = None
        xt = x_t()  # the FP8 all-gather of X^T at the start of the backward
        dy = dy.contiguous()
        dy_of = lambda r: sh.Window(0, w_of(r).row, M, w_of(r).rows)  # noqa: E731
        qdy = ctxt.local_quantized(dy, dy_of, (M, N), dy_spec, record="dy")
        dx = ctxt.reduce_scatter_rows(ctxt.gemm(qdy, w_t, torch.float32), x_dtype)
        if recipe.name == "blockwise":
            qdy_t = ctxt.local_quantized(dy.t(), lambda r: dy_of(r).transposed(), (N, M), dy_spec)
        else:
            qdy_t = qdy.transposed()
        dw = ctxt.gemm(qdy_t, xt, w_dtype)
        return dx, dw, None, None, None, None


class _RowParallel(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x_r, w_r, ctxt, recipe, k_counts, scales):
        x_spec, w_spec, dy_spec = _prepare(recipe, scales, "row-parallel K", k_counts)
        M, N, K = sum(ctxt.seq_counts), w_r.shape[0], sum(k_counts)
        x_of = lambda r: sh.column_window((M, K), k_counts, r)  # noqa: E731
        w_of = lambda r: sh.column_window((N, K), k_counts, r)  # noqa: E731
        qx = ctxt.local_quantized(x_r, x_of, (M, K), x_spec, record="x")
        qw = ctxt.local_quantized(w_r, w_of, (N, K), w_spec, record="w")
        y_r = ctxt.reduce_scatter_rows(ctxt.gemm(qx, qw, torch.float32), x_r.dtype)
        if recipe.name == "blockwise":
            xt = ctxt.local_quantized(x_r.t(), lambda r: x_of(r).transposed(), (K, M), x_spec)
        else:
            xt = qx.transposed()
        ctx.saved = (xt, qw.transposed())
        ctx.args = (ctxt, recipe, dy_spec, (M, N), x_r.dtype, w_r.dtype)
        return y_r

    @staticmethod
    def backward(ctx, dy_r):
        ctxt, recipe, dy_spec, (M, N), x_dtype, w_dtype = ctx.args
        xt, w_t = ctx.saved
        ctx.saved = None
        qdy, dy_t = ctxt.gather_sequence(dy_r.contiguous(), (M, N), dy_spec,
                                         _columnwise(recipe, dy_spec), "dy")
        dx = ctxt.gemm(qdy, w_t, x_dtype)
        dw = ctxt.gemm(dy_t(), xt, w_dtype)
        return dx, dw, None, None, None, None


def column_parallel_linear(x_r, w_r, ctxt, recipe, w_counts, scales=None):
    """Y[:, N_r] of the sequence shard x_r [M_r, K] and weight rows w_r."""
    return _ColumnParallel.apply(x_r, w_r, ctxt, rec.make_recipe(recipe), list(w_counts), scales)


def row_parallel_linear(x_r, w_r, ctxt, recipe, k_counts, scales=None):
    """The sequence shard [M_r, N] of X W^T from x_r [M, K_r], w_r [N, K_r]."""
    return _RowParallel.apply(x_r, w_r, ctxt, rec.make_recipe(recipe), list(k_counts), scales)
