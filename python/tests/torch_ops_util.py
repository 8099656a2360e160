"""Helpers of the PyTorch-operator GPU tests (test_torch_ops.py,
test_torch_compile.py): FP8 operands quantized with fp8mlir.numerics (an
independent reference), the scales in torch's layouts, and the f64 GEMM.
"""

import zlib

import numpy as np
import pytest

from fp8mlir import numerics

GRANULARITY = {("tensorwise", "a"): "tensor", ("tensorwise", "b"): "tensor",
               ("rowwise", "a"): "row", ("rowwise", "b"): "row",
               ("blockwise", "a"): (1, 128), ("blockwise", "b"): (128, 128)}
# Relative Frobenius error of a GEMM against f64 (bf16 output rounding, and
# FP8 "fast" accumulation).
GEMM_TOLERANCE = 1e-2


def torch_or_fail():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.fail("no CUDA device: GPU tests must run on a GPU machine")
    return torch


def rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def random_matrix(gen, rows, cols):
    """Normal data with per-row magnitudes over 2^-3..2^3."""
    x = gen.standard_normal((rows, cols)).astype(np.float32)
    return x * np.float32(2.0) ** gen.integers(-3, 4, size=(rows, 1)).astype(np.float32)


class Operand:
    """x [rows, K] quantized with numerics for one recipe: FP8 data (torch,
    CUDA), scale_inv as the numerics grid (numpy), and the dequantized f64
    values (torch, CUDA)."""

    def __init__(self, torch, recipe, side, rows, k, gen):
        gran = GRANULARITY[(recipe, side)]
        kind = "blockwise" if recipe == "blockwise" else "current"
        q = numerics.quantize(random_matrix(gen, rows, k), kind, "e4m3", gran,
                              amax_clamp=np.float32(1e-4) if kind == "blockwise" else 0.0)
        self.recipe, self.side = recipe, side
        self.data = torch.from_numpy(q.data).cuda().view(torch.float8_e4m3fn)
        self.grid = torch.from_numpy(np.ascontiguousarray(q.scale_inv)).cuda()
        self.exact = torch.from_numpy(q.dequantize().astype(np.float64)).cuda()

    def torch_scale(self):
        """The scales as torch's scaled GEMMs take them: a's (M, 1) /
        (M, Kb) MN-major; b's (1, N) / (Kb, Nb) for b = w.t()."""
        g = self.grid
        if self.recipe == "tensorwise":
            return g.reshape(())
        if self.side == "a":
            return g if self.recipe == "rowwise" else g.t().contiguous().t()
        return g.t()  # (1, N) or (Kb, Nb) with strides (1, Kb)


def gemm_operands(torch, recipe, m, n, k, seed=0):
    gen = rng(recipe, m, n, k, seed)
    return Operand(torch, recipe, "a", m, k, gen), Operand(torch, recipe, "b", n, k, gen)


def relative_error(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-300)).item()


def same_bits(torch, got, want):
    """Bitwise equality of two tensors of one dtype (any, FP8 included)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    width = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[got.element_size()]
    return torch.equal(got.contiguous().view(width), want.contiguous().view(width))
