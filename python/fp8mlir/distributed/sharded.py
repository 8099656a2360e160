"""Sharded quantization: every rank quantizes its shard of a tensor so that
the FP8 data and scales equal those of quantizing the whole tensor on one
device, bit for bit (docs/distributed.md).

One rule covers every recipe. A recipe's scales live on a grid of blocks of
the whole tensor (per tensor: one block; blockwise: 1x128 or 128x128; MX:
1x32 or 32x1). Each rank computes the amax of the part of every block it
holds (0 for a block it does not touch), the grid is all-reduced with max
over the group, every rank derives all the scales from the reduced grid
with the recipe's scale rule, and quantizes its own elements with the
scale of their block. Blocks inside one rank's shard need no reduction;
the collective is still one call on the (small) grid. Delayed scaling
quantizes with the given scale and reduces the amax only for the history.

Shards are windows of a 2-D tensor: row shards (sequence parallel,
column-parallel weights), column shards (row-parallel weights), or a flat
range of the concatenation of several flattened parameters (ZeRO-1
"FP8 primary weights"), which may cut a parameter anywhere, even inside a
row. The FP8 data are then all-gathered as bytes (``gather_rows``,
``gather_columns``, ``gather_flat``).

Arrays go through a backend (fp8mlir.distributed.backends): NumPy with a
threaded fake communicator on the host, torch with NCCL on GPUs.
"""

from dataclasses import dataclass, field, replace

RECIPES = ("current", "delayed", "blockwise", "mxfp8")


@dataclass(frozen=True)
class QuantSpec:
    """One quantization: recipe, element format, block and the recipe's
    parameters (those of fp8mlir.numerics.quantize).

    block: "tensor" or (rows, cols), e.g. (1, 128), (128, 128), (1, 32),
    (32, 1) (MX columnwise: blocks of 32 along the rows).
    scale: delayed scaling's scale (from the amax history), a float.
    """
    recipe: str
    fmt: str = "e4m3"
    block: object = "tensor"
    epsilon: float = 0.0
    pow2: bool = False
    scale: float = None
    scales: str = "pow2"
    amax_clamp: float = 0.0
    rounding: str = "round_up"

    def __post_init__(self):
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}: expected one of {RECIPES}")
        if self.fmt not in ("e4m3", "e5m2"):
            raise ValueError(f"unknown fp8 format {self.fmt!r}")
        if self.block != "tensor" and not (
                isinstance(self.block, tuple) and len(self.block) == 2
                and all(isinstance(b, int) and b > 0 for b in self.block)):
            raise ValueError(f"block {self.block!r}: expected 'tensor' or (rows, cols)")
        if self.recipe in ("current", "delayed") and self.block != "tensor":
            raise ValueError(f"{self.recipe} scaling is per tensor here")
        if self.recipe in ("blockwise", "mxfp8") and self.block == "tensor":
            raise ValueError(f"{self.recipe} needs a block shape")
        if self.recipe == "blockwise" and self.fmt != "e4m3":
            raise ValueError("blockwise scaling is defined for E4M3 only")
        if self.recipe == "delayed" and (self.scale is None or not self.scale > 0):
            raise ValueError("delayed scaling needs the scale of the previous steps (> 0)")

    def block_shape(self, shape):
        return tuple(shape) if self.block == "tensor" else self.block

    def transposed(self):
        """The quantization of x^T in x's blocks (columnwise)."""
        return self if self.block == "tensor" else replace(self, block=self.block[::-1])


@dataclass(frozen=True)
class Window:
    """Rows [row, row + rows) and columns [col, col + cols) of a 2-D tensor."""
    row: int
    col: int
    rows: int
    cols: int

    def transposed(self):
        return Window(self.col, self.row, self.cols, self.rows)


def split(total, parts):
    """An even split of total into parts counts (the first ranks get one
    more when it does not divide)."""
    if parts < 1 or total < 0:
        raise ValueError(f"cannot split {total} into {parts} parts")
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def _offsets(counts):
    out, start = [], 0
    for c in counts:
        out.append(start)
        start += c
    return out


def row_window(shape, counts, rank):
    return Window(_offsets(counts)[rank], 0, counts[rank], shape[1])


def column_window(shape, counts, rank):
    return Window(0, _offsets(counts)[rank], shape[0], counts[rank])


def grid_shape(shape, block):
    return (-(-shape[0] // block[0]), -(-shape[1] // block[1]))


def _axis(origin, extent, block, total):
    """(block extent used, block count, first block, pad before, pad after)
    of a window's axis; a block spanning the whole axis is the window."""
    if block >= total:
        return extent, 1, 0, 0, 0
    first = origin // block
    last = -(-(origin + extent) // block)
    return block, last - first, first, origin - first * block, last * block - origin - extent


def _blocks(backend, values, window, shape, block):
    r = _axis(window.row, window.rows, block[0], shape[0])
    c = _axis(window.col, window.cols, block[1], shape[1])
    padded = backend.pad(values, r[3], r[4], c[3], c[4])
    return padded, r, c


def window_amax(backend, values, window, shape, block, grid):
    """Max of grid and the amaxes of the parts of blocks the window holds."""
    if window.rows == 0 or window.cols == 0:
        return grid
    padded, r, c = _blocks(backend, values, window, shape, block)
    amax = backend.block_amax(padded, r[1], r[0], c[1], c[0])
    region = grid[r[2]:r[2] + r[1], c[2]:c[2] + c[1]]
    grid[r[2]:r[2] + r[1], c[2]:c[2] + c[1]] = backend.maximum(region, amax)
    return grid


def window_encode(backend, values, window, shape, block, scale, fmt):
    """fp8 codes of the window's values, each with its block's scale."""
    if window.rows == 0 or window.cols == 0:
        return backend.zeros((window.rows, window.cols), like=values, dtype="u8")
    padded, r, c = _blocks(backend, values, window, shape, block)
    s = scale[r[2]:r[2] + r[1], c[2]:c[2] + c[1]].reshape(r[1], 1, c[1], 1)
    blocks = backend.reshape_blocks(backend.f32(padded), r[1], r[0], c[1], c[0])
    codes = backend.encode(blocks, s, fmt).reshape(r[1] * r[0], c[1] * c[0])
    return backend.compact(codes[r[3]:r[3] + window.rows, c[3]:c[3] + window.cols])


def reduce_amax(comm, backend, grid):
    """The group's elementwise max of amax grids, NaN-exact (int32 bits)."""
    if comm is None or comm.size == 1:
        return grid
    shape = grid.shape
    bits = comm.all_reduce_max(backend.amax_to_bits(backend.flatten(grid)))
    return backend.bits_to_amax(bits).reshape(shape)


@dataclass
class ShardQuantized:
    """A rank's quantized shard: ``data`` uint8 codes of its window(s);
    ``scale_inv`` (f32, or UE8M0 codes for MX) and ``amax`` (the reduced
    block amaxes) on the whole tensor's block grid, equal on every rank."""
    data: object
    scale_inv: object
    amax: object
    spec: QuantSpec
    shape: tuple
    traffic: list = field(default_factory=list)


def quantize_pieces(backend, pieces, shape, spec, comm=None):
    """Quantizes (values, Window) pieces of one tensor of ``shape`` held by
    this rank; the amax grid is reduced over comm. Returns (codes of each
    piece, scale_inv grid, reduced amax grid)."""
    block = spec.block_shape(shape)
    grid = backend.zeros(grid_shape(shape, block), like=pieces[0][0] if pieces else None)
    for values, window in pieces:
        _check_window(values, window, shape)
        grid = window_amax(backend, values, window, shape, block, grid)
    grid = reduce_amax(comm, backend, grid)
    scale, scale_inv = backend.scale_rule(spec, grid)
    codes = [window_encode(backend, v, w, shape, block, scale, spec.fmt) for v, w in pieces]
    return codes, scale_inv, grid


def _check_window(values, window, shape):
    if tuple(values.shape) != (window.rows, window.cols):
        raise ValueError(f"shard of shape {tuple(values.shape)} does not fill its window {window}")
    if (window.row < 0 or window.col < 0 or window.row + window.rows > shape[0]
            or window.col + window.cols > shape[1]):
        raise ValueError(f"window {window} outside the tensor of shape {tuple(shape)}")


def quantize_shard(backend, values, window, shape, spec, comm=None):
    """Quantizes one rank's 2-D shard (a window of the tensor)."""
    codes, scale_inv, amax = quantize_pieces(backend, [(values, window)], shape, spec, comm)
    return ShardQuantized(codes[0], scale_inv, amax, spec, tuple(shape))


def quantize_whole(backend, values, spec):
    """The single-device quantization through the same arithmetic."""
    shape = tuple(values.shape)
    return quantize_shard(backend, values, Window(0, 0, *shape), shape, spec)


# --- FP8 all-gathers -------------------------------------------------------------------

def gather_rows(comm, backend, codes, counts):
    """Row shards [counts[i], C] of every rank -> [sum(counts), C]."""
    cols = codes.shape[1]
    full = comm.all_gather_concat(backend.flatten(codes), [c * cols for c in counts])
    return full.reshape(sum(counts), cols)


def gather_columns(comm, backend, codes, counts):
    """Column shards [R, counts[i]] of every rank -> [R, sum(counts)]."""
    rows = codes.shape[0]
    parts = comm.all_gather(backend.flatten(codes), [rows * c for c in counts])
    return backend.concat([p.reshape(rows, c) for p, c in zip(parts, counts)], 1)


def gather_packed(comm, backend, arrays, counts, dim=0, send=None):
    """Row (dim 0) or column (dim 1) shards of several 2-D arrays (a
    shard's FP8 codes and its block scales), in one all-gather: returns
    each array gathered as gather_rows / gather_columns would, with
    ``counts[p]`` the shard extents of array p along ``dim``; ``send``:
    the packed buffer already holding the arrays (comm.packed_send)."""
    other = [a.shape[1 - dim] for a in arrays]
    sizes = [[n * o for n in c] for c, o in zip(counts, other)]
    parts = comm.all_gather_packed([backend.flatten(a) for a in arrays], sizes, send)
    out = []
    for pieces, c, o in zip(parts, counts, other):
        shaped = [p.reshape((n, o) if dim == 0 else (o, n)) for p, n in zip(pieces, c)]
        out.append(backend.concat(shaped, dim))
    return out


def shard_and_gather(comm, backend, values, shape, counts, spec, dim=0):
    """Sharded quantization of this rank's shard along ``dim`` (row shards
    for 0, column shards for 1) and the FP8 all-gather: the whole tensor's
    codes, scale_inv and amax grid, as quantize_whole gives them."""
    window = (row_window if dim == 0 else column_window)(shape, counts, comm.rank)
    q = quantize_shard(backend, values, window, shape, spec, comm)
    q.data = (gather_rows if dim == 0 else gather_columns)(comm, backend, q.data, counts)
    return q


# --- ZeRO-1 flat shards (FP8 primary weights) ---------------------------------------------

@dataclass(frozen=True)
class FlatLayout:
    """Parameters of ``shapes`` (2-D) flattened and concatenated, the flat
    buffer split into ``counts`` elements per rank (a distributed
    optimizer's master-weight shards)."""
    shapes: tuple
    counts: tuple

    def __post_init__(self):
        total = sum(r * c for r, c in self.shapes)
        if sum(self.counts) != total:
            raise ValueError(f"shard counts {self.counts} sum to {sum(self.counts)}, "
                             f"the parameters hold {total} elements")

    @classmethod
    def even(cls, shapes, ranks):
        shapes = tuple(tuple(s) for s in shapes)
        return cls(shapes, tuple(split(sum(r * c for r, c in shapes), ranks)))

    def param_offsets(self):
        return _offsets([r * c for r, c in self.shapes])

    def rank_range(self, rank):
        start = _offsets(self.counts)[rank]
        return start, start + self.counts[rank]

    def pieces(self, rank):
        """(param index, start inside the param, length, offset in the
        rank's shard) of each parameter part this rank holds."""
        lo, hi = self.rank_range(rank)
        out = []
        for i, (offset, (r, c)) in enumerate(zip(self.param_offsets(), self.shapes)):
            a, b = max(lo, offset), min(hi, offset + r * c)
            if a < b:
                out.append((i, a - offset, b - a, a - lo))
        return out


def flat_windows(shape, start, length):
    """A flat range of a row-major [R, C] tensor as at most three windows
    (partial first row, whole rows, partial last row), each with its
    offset in the range."""
    cols = shape[1]
    out, pos, end = [], start, start + length
    while pos < end:
        row, col = divmod(pos, cols)
        if col or end - pos < cols:
            width = min(cols - col, end - pos)
            out.append((Window(row, col, 1, width), pos - start))
            pos += width
        else:
            rows = (end - pos) // cols
            out.append((Window(row, 0, rows, cols), pos - start))
            pos += rows * cols
    return out


def quantize_flat_shard(comm, backend, local, layout, specs):
    """Quantizes this rank's flat master-weight shard ``local`` (1-D) with
    one QuantSpec per parameter: per-parameter amax grids (0 where the
    rank holds nothing), one max all-reduce of all the grids together,
    the rank's elements quantized with their parameter's scales. Returns
    (local codes, 1-D like ``local``; [scale_inv grid per param]; [amax
    grid per param])."""
    rank = comm.rank if comm is not None else 0
    if len(specs) != len(layout.shapes):
        raise ValueError(f"{len(specs)} quantizations for {len(layout.shapes)} parameters")
    if local.shape[0] != layout.counts[rank]:
        raise ValueError(f"rank {rank}: shard of {local.shape[0]} elements, the layout says "
                         f"{layout.counts[rank]}")
    pieces = {i: [] for i in range(len(layout.shapes))}
    for i, start, length, at in layout.pieces(rank):
        for w, off in flat_windows(layout.shapes[i], start, length):
            n = w.rows * w.cols
            pieces[i].append((local[at + off:at + off + n].reshape(w.rows, w.cols), w, at + off))
    grids = []
    for i, shape in enumerate(layout.shapes):
        block = specs[i].block_shape(shape)
        grid = backend.zeros(grid_shape(shape, block), like=local)
        for values, w, _ in pieces[i]:
            grid = window_amax(backend, values, w, shape, block, grid)
        grids.append(grid)
    flat = reduce_amax(comm, backend, backend.concat([backend.flatten(g) for g in grids], 0))
    codes = backend.zeros((local.shape[0],), like=local, dtype="u8")
    scale_invs, amaxes, start = [], [], 0
    for i, shape in enumerate(layout.shapes):
        n = grids[i].shape[0] * grids[i].shape[1]
        amax = flat[start:start + n].reshape(grids[i].shape)
        start += n
        scale, scale_inv = backend.scale_rule(specs[i], amax)
        for values, w, at in pieces[i]:
            q = window_encode(backend, values, w, shape, specs[i].block_shape(shape), scale,
                              specs[i].fmt)
            codes[at:at + w.rows * w.cols] = backend.flatten(q)
        scale_invs.append(scale_inv)
        amaxes.append(amax)
    return codes, scale_invs, amaxes


def gather_flat(comm, backend, codes, layout):
    """FP8 all-gather of the flat shards; returns each parameter's codes."""
    full = comm.all_gather_concat(codes, list(layout.counts))
    return [full[o:o + r * c].reshape(r, c)
            for o, (r, c) in zip(layout.param_offsets(), layout.shapes)]
