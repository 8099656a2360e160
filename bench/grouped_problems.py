"""The inputs of bench/bench_grouped.py's grouped GEMMs, made on the GPU.

Each case quantizes one set of random operands to E4M3 (rowwise: one f32
scale per row; blockwise: power-of-two scales per 1x128 block of the
activations and 128x128 tile of the weights, DeepSeek-V3's recipe) and
keeps `count` copies of it (clones: the same values in other buffers), so
that the timed calls, rotating over the copies, read their inputs from
memory rather than from the L2. Scales are stored once, in the layout both
fp8mlir's kernels and DeepGEMM read in place: the 1x128 activation scales
MN-major, `[..., ceil(K/128), roundup(rows, 4)]` storage viewed as the
logical `[..., rows, ceil(K/128)]`.

The f64 reference of a group is computed on demand from copy 0 (the
dequantized operands of that group only, so that 32 experts' weights never
exist in f64 at once).
"""

import math

import torch

from fp8mlir.testing.grouped_cases import ContiguousProblem

FP8 = torch.float8_e4m3fn
BLOCK = 128


def quantize(x, recipe, weight):
    """x (f32 [rows, cols], GPU) to E4M3: (data, scale_inv). rowwise: one
    scale per row ([rows]); blockwise: power-of-two scales per 1x128 block
    ([rows, cols/128]) or, for a weight, per 128x128 tile."""
    r, c = x.shape
    if recipe == "rowwise":
        scale = x.abs().amax(1).clamp_min(1e-4) / 448.0
        return (x / scale[:, None]).to(FP8), scale
    if weight:
        tiles = x.reshape(r // BLOCK, BLOCK, c // BLOCK, BLOCK).abs().amax((1, 3))
        scale = torch.exp2(torch.ceil(torch.log2(tiles.clamp_min(1e-4) / 448.0)))
        full = scale.repeat_interleave(BLOCK, 0).repeat_interleave(BLOCK, 1)
    else:
        blocks = x.reshape(r, c // BLOCK, BLOCK).abs().amax(2)
        scale = torch.exp2(torch.ceil(torch.log2(blocks.clamp_min(1e-4) / 448.0)))
        full = scale.repeat_interleave(BLOCK, 1)
    return (x / full).to(FP8), scale


def dequantize(data, scale, recipe, weight):
    """The f64 values of quantize()'s (data, scale)."""
    if recipe == "rowwise":
        return data.double() * scale.double()[:, None]
    full = scale.double().repeat_interleave(BLOCK, -1)
    if weight:
        full = full.repeat_interleave(BLOCK, 0)
    return data.double() * full


def mn_major(scale):
    """Logical [..., rows, kb] f32 scales stored MN-major with the rows
    padded to 4 floats (16-byte TMA rows): fp8mlir's a_scale_inv storage
    and DeepGEMM's sm_90 `sfa` (get_mn_major_tma_aligned_tensor's layout,
    which it then takes without a copy)."""
    *lead, rows, kb = scale.shape
    padded = -(-rows // 4) * 4
    storage = torch.zeros((*lead, kb, padded), dtype=torch.float32, device=scale.device)
    storage[..., :rows] = scale.transpose(-1, -2)
    return storage[..., :rows].transpose(-1, -2)


def stacked_weights(recipe, groups, n, k, gen):
    """[G, N, K] E4M3 weights and their scales ([G, N] or [G, N/128, K/128])."""
    data, scales = [], []
    for _ in range(groups):
        d, s = quantize(torch.randn((n, k), generator=gen, device="cuda"), recipe, weight=True)
        data.append(d)
        scales.append(s)
    return torch.stack(data), torch.stack(scales)


def same_layout_copy(t):
    """A copy of t with t's strides (clone() makes a view with gaps, such
    as padded MN-major scales, contiguous)."""
    out = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
    return out.copy_(t)


class _Copies:
    """count copies of the named input tensors (copy 0 the originals)."""

    config = None  # a #fp8.gemm_config for fp8mlir's kernel instead of the heuristic's

    def described(self, **fields):
        """The case's description: layout, recipe, group count, `fields`
        and the configured kernel's #fp8.gemm_config if there is one."""
        out = dict(layout=self.layout, recipe=self.recipe, groups=self.g, **fields)
        if self.config:
            out["fp8mlir_config"] = self.config
        return out

    def make_copies(self, count, **tensors):
        self.count = count
        self.copies = [tensors] + [{name: same_layout_copy(t) for name, t in tensors.items()}
                                   for _ in range(count - 1)]


class ContiguousCase(ContiguousProblem, _Copies):
    """m_contiguous: the rows of every expert in one [M, K] tensor, each
    expert's starting at a multiple of 128 (padding rows zero, group index
    -1); B [G, N, K]."""

    layout = "m_contiguous"

    def __init__(self, recipe, rows, n, k, copies_for, config=None):
        ContiguousProblem.__init__(self, rows, n, k)
        self.recipe, self.config = recipe, config
        gen = torch.Generator(device="cuda").manual_seed(sum(rows) * 31 + n + k)
        group_index = torch.from_numpy(self.index).cuda()
        x = torch.randn((len(self.index), k), generator=gen, device="cuda")
        x[group_index < 0] = 0.0
        a, sa = quantize(x, recipe, weight=False)
        del x
        b, sb = stacked_weights(recipe, self.g, n, k, gen)
        if recipe == "blockwise":
            sa = mn_major(sa)
        self.m = len(self.index)
        self.flop = 2.0 * sum(rows) * n * k
        self.bytes = self.m * k + self.g * n * k + 4 * (sa.numel() + sb.numel()) \
            + 2 * self.m * n
        self.make_copies(copies_for(self.bytes), a=a, sa=sa, b=b, sb=sb,
                         group_index=group_index)

    def describe(self):
        return self.described(n=self.n, k=self.k, m=self.m, group_rows=self.rows)

    def valid_rows(self, d, g):
        s = self.starts[g]
        return d[s:s + self.rows[g]]

    def reference(self, g):
        c, s, r = self.copies[0], self.starts[g], self.rows[g]
        a = dequantize(c["a"][s:s + r], c["sa"][s:s + r], self.recipe, weight=False)
        b = dequantize(c["b"][g], c["sb"][g], self.recipe, weight=True)
        return a @ b.t()

    def groups_with_rows(self):
        return [g for g in range(self.g) if self.rows[g]]


class MaskedCase(_Copies):
    """m_masked (blockwise): A [G, max_m, K], of which the first counts[g]
    rows of each expert are valid (masked_m on the device); B [G, N, K];
    D [G, max_m, N]."""

    layout = "m_masked"
    recipe = "blockwise"

    def __init__(self, counts, max_m, n, k, copies_for, config=None):
        self.counts, self.m, self.n, self.k, self.g = list(counts), max_m, n, k, len(counts)
        self.config = config
        gen = torch.Generator(device="cuda").manual_seed(sum(counts) * 17 + len(counts) + n + k)
        x = torch.randn((self.g * max_m, k), generator=gen, device="cuda")
        a, sa = quantize(x, "blockwise", weight=False)
        del x
        b, sb = stacked_weights("blockwise", self.g, n, k, gen)
        a = a.reshape(self.g, max_m, k)
        sa = mn_major(sa.reshape(self.g, max_m, -1))
        masked_m = torch.tensor(self.counts, dtype=torch.int32, device="cuda")
        total, busy = sum(self.counts), sum(1 for c in self.counts if c)
        kb, nb = -(-k // BLOCK), -(-n // BLOCK)
        self.flop = 2.0 * total * n * k
        # The fewest bytes the GEMM moves: the valid rows of A and their
        # scales, the weights (and scales) of the experts with rows, the
        # valid rows of D (bf16).
        self.bytes = total * (k + 4 * kb) + busy * (n * k + 4 * nb * kb) + 2 * total * n
        self.make_copies(copies_for(self.bytes), a=a, sa=sa, b=b, sb=sb, masked_m=masked_m)

    @staticmethod
    def expected_m_of(counts):
        """DeepGEMM's expected_m hint: the mean count, rounded up (>= 1)."""
        return max(1, math.ceil(sum(counts) / len(counts)))

    @property
    def expected_m(self):
        return self.expected_m_of(self.counts)

    def describe(self):
        return self.described(n=self.n, k=self.k, max_m=self.m, counts=self.counts)

    def valid_rows(self, d, g):
        return d[g, :self.counts[g]]

    def reference(self, g):
        c, r = self.copies[0], self.counts[g]
        a = dequantize(c["a"][g, :r], c["sa"][g, :r], "blockwise", weight=False)
        b = dequantize(c["b"][g], c["sb"][g], "blockwise", weight=True)
        return a @ b.t()

    def groups_with_rows(self):
        return [g for g in range(self.g) if self.counts[g]]


class KGroupedCase(_Copies):
    """k_grouped (the experts' weight gradient dW_g = dY_g^T X_g): per
    expert g, A_g [M, K_g] and B_g [N, K_g], K_g its token count (a
    multiple of 128), both quantized in 1x128 blocks along K; D [G, M, N]
    f32. Two storages of the same values: `a_cat` / `b_cat` [M, sum K_g]
    (the experts side by side along K, scales [M, sum K_g / 128]) and
    DeepGEMM's `a_flat` / `b_flat` (each expert's [M, K_g] block after the
    previous one, scales MN-major [M, sum K_g / 128])."""

    layout = "k_grouped"
    recipe = "blockwise_1d1d"

    def __init__(self, m, n, ks, copies_for, config=None):
        self.m, self.n, self.ks, self.g = m, n, list(ks), len(ks)
        self.config = config
        gen = torch.Generator(device="cuda").manual_seed(sum(ks) + m * 7 + n)
        parts = {"a": [], "b": []}
        for kg in self.ks:
            for name, rows in (("a", m), ("b", n)):
                parts[name].append(quantize(torch.randn((rows, kg), generator=gen, device="cuda"),
                                            "blockwise", weight=False))
        tensors = {"ks": torch.tensor(self.ks, dtype=torch.int32, device="cuda"),
                   "k_ends": torch.tensor(list(_cumulative(self.ks)), dtype=torch.int32,
                                          device="cuda")}
        for name, blocks in parts.items():
            tensors[name + "_cat"] = torch.cat([d for d, _ in blocks], 1)
            tensors["s" + name + "_cat"] = torch.cat([s for _, s in blocks], 1)
            tensors[name + "_flat"] = torch.cat([d.flatten() for d, _ in blocks])
            tensors["s" + name + "_mn"] = mn_major(tensors["s" + name + "_cat"])
        total = sum(self.ks)
        self.flop = 2.0 * total * m * n
        self.bytes = total * (m + n) * (1 + 4 / BLOCK) + 4 * self.g * m * n
        self.make_copies(copies_for(self.bytes), **tensors)

    def describe(self):
        return self.described(m=self.m, n=self.n, ks=self.ks)

    def reference(self, g):
        c, end = self.copies[0], sum(self.ks[:g + 1])
        start = end - self.ks[g]
        a = dequantize(c["a_cat"][:, start:end], c["sa_cat"][:, start // BLOCK:end // BLOCK],
                       "blockwise", weight=False)
        b = dequantize(c["b_cat"][:, start:end], c["sb_cat"][:, start // BLOCK:end // BLOCK],
                       "blockwise", weight=False)
        return a @ b.t()

    def valid_rows(self, d, g):
        return d[g]

    def groups_with_rows(self):
        return [g for g in range(self.g) if self.ks[g]]


def _cumulative(values):
    total = 0
    for v in values:
        total += v
        yield total
