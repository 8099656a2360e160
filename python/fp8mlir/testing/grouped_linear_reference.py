"""The expert (grouped) linear layer of the blockwise recipe in plain
PyTorch: the reference of fp8mlir.nn.GroupedLinear (needs torch).

The quantizations are torch_recipes' (the recipe's rules in eager ops,
independent of the compiler): X and dY in 1x128 blocks along their rows
(fprop, dgrad) and along the tokens (wgrad: X^T and dY^T), each expert's
weight W[g] in 128x128 tiles on its own (its transpose, dgrad's operand,
is the same tiles transposed). The GEMMs are per expert, in f64, of the
dequantized operands (data times its block's scale, exact in f64): what the
kernels compute up to their f32 accumulation order.

    ref = GroupedLinearReference(x, w, group_index, group_sizes)
    y = ref.forward()                 # [M, N] f64 (rows of padding blocks 0)
    dx, dw = ref.backward(dy)         # [M, K], [G, N, K] f64
"""

import torch

from .torch_recipes import quantize

ALIGNMENT = 128
AMAX_CLAMP = 1e-4  # #fp8.blockwise<>'s default
TILE_ACT, TILE_WEIGHT = (1, ALIGNMENT), (ALIGNMENT, ALIGNMENT)


def _quantize(x, tile, transposed=False):
    return quantize(x, "blockwise", "e4m3", tile, transposed, amax_clamp=AMAX_CLAMP)


def block_groups(group_index):
    """The expert of each 128-row block (that of its first row; -1 or any
    index outside the experts: no expert)."""
    return group_index[::ALIGNMENT].long().tolist()


class GroupedLinearReference:
    """x [M, K] (M a multiple of 128), w [G, N, K], group_index int32 [M],
    group_sizes int32 [G] (each expert's padded rows, back to back)."""

    def __init__(self, x, w, group_index, group_sizes=None):
        if x.shape[0] % ALIGNMENT:
            raise ValueError(f"M = {x.shape[0]} is not a multiple of {ALIGNMENT}")
        self.x, self.w = x, w
        self.groups = w.shape[0]
        self.blocks = block_groups(group_index)
        self.group_sizes = None if group_sizes is None else [int(v) for v in group_sizes]
        self.qx = _quantize(x, TILE_ACT)
        self.qw = [_quantize(w[g], TILE_WEIGHT) for g in range(self.groups)]

    def expert_blocks(self):
        """(expert, row slice) of each block that belongs to an expert."""
        for b, g in enumerate(self.blocks):
            if 0 <= g < self.groups:
                yield g, slice(b * ALIGNMENT, (b + 1) * ALIGNMENT)

    def valid_rows(self):
        """A bool [M] mask of the rows the kernels write (blocks of experts)."""
        mask = torch.zeros(self.x.shape[0], dtype=torch.bool, device=self.x.device)
        for _, rows in self.expert_blocks():
            mask[rows] = True
        return mask

    def forward(self):
        x = self.qx.dequantize()
        w = [q.dequantize() for q in self.qw]
        y = torch.zeros(self.x.shape[0], self.w.shape[1], dtype=torch.float64,
                        device=self.x.device)
        for g, rows in self.expert_blocks():
            y[rows] = x[rows] @ w[g].t()
        return y

    def backward(self, dy):
        """(dx, dw) in f64: dgrad per block of dY's rows with W[g]'s
        transposed tiles, wgrad per expert over its group_sizes rows."""
        qdy = _quantize(dy, TILE_ACT)
        g_rows = qdy.dequantize()
        w = [q.transposed().dequantize().t() for q in self.qw]  # W[g] from W[g]^T's tiles
        dx = torch.zeros(self.x.shape, dtype=torch.float64, device=self.x.device)
        for g, rows in self.expert_blocks():
            dx[rows] = g_rows[rows] @ w[g]
        dyt = _quantize(dy, TILE_ACT, transposed=True).dequantize()  # [N, M]
        xt = _quantize(self.x, TILE_ACT, transposed=True).dequantize()  # [K, M]
        sizes = self.group_sizes
        if sizes is None:
            sizes = [ALIGNMENT * self.blocks.count(g) for g in range(self.groups)]
        dw = torch.zeros(self.w.shape, dtype=torch.float64, device=self.x.device)
        start = 0
        for g, size in enumerate(sizes):
            tokens = slice(start, start + size)
            dw[g] = dyt[:, tokens] @ xt[:, tokens].t()
            start += size
        return dx, dw

    def quantized_input_columnwise(self):
        """X^T [K, M] in 1x128 blocks along the tokens: (uint8 codes [K, M],
        scale_inv [K, M/128]), what wgrad reads."""
        q = _quantize(self.x, TILE_ACT, transposed=True)
        return q.codes(), q.scale_inv

    def quantized_weight_columnwise(self):
        """Each expert's W[g]^T [K, N] in 128x128 tiles: (uint8 codes
        [G, K, N], scale_inv [G, K/128, N/128]), what dgrad reads."""
        qts = [_quantize(self.w[g], TILE_WEIGHT, transposed=True) for g in range(self.groups)]
        return (torch.stack([q.codes() for q in qts]),
                torch.stack([q.scale_inv for q in qts]))


def make_inputs(groups, n, k, tokens, *, dtype=torch.bfloat16, device="cuda", seed=0):
    """Tokens sorted by expert in the m_contiguous layout: tokens[g] rows of
    expert g, each expert padded with zero rows to a multiple of 128.
    Returns x [M, K], w [G, N, K], group_index int32 [M], group_sizes int32
    [G], dy [M, N] (zero on padding rows)."""
    gen = torch.Generator(device="cpu").manual_seed(seed)
    sizes = [-(-t // ALIGNMENT) * ALIGNMENT for t in tokens]
    m = max(sum(sizes), ALIGNMENT)
    x = torch.zeros(m, k)
    dy = torch.zeros(m, n)
    index = torch.full((m,), -1, dtype=torch.int32)
    start = 0
    for g, (t, size) in enumerate(zip(tokens, sizes)):
        x[start:start + t] = torch.randn(t, k, generator=gen)
        dy[start:start + t] = torch.randn(t, n, generator=gen) * 0.1
        index[start:start + t] = g
        start += size
    w = torch.randn(groups, n, k, generator=gen) * k ** -0.5
    return (x.to(dtype).to(device), w.to(dtype).to(device), index.to(device),
            torch.tensor(sizes, dtype=torch.int32, device=device), dy.to(dtype).to(device))
