"""Helpers of the PyTorch-operator GPU tests (test_torch_ops.py,
test_torch_compile.py): FP8 operands quantized with fp8mlir.numerics (an
independent reference), the scales in torch's layouts, the f64 GEMM, and
torch.library.opcheck for operators taking FP8 tensors.
"""

import contextlib
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


def only_modules_of(monkeypatch, specs, table):
    """Every module a GPU test loads must be one of `specs` (the table
    `table`, what the populate step compiles into the GPU machine's cache):
    asking for another one fails the test with the table named."""
    torch_or_fail()
    from fp8mlir.ops import KernelCache
    allowed = {s.cache_key for s in specs}
    module = KernelCache.module

    def module_in_table(cache, spec):
        assert spec.cache_key in allowed, (
            f"{spec.cache_key} is not in {table} (add it there so that the populate step "
            f"compiles it)")
        return module(cache, spec)
    monkeypatch.setattr(KernelCache, "module", module_in_table)


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


def torch_dtype(torch, name):
    return {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
            "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[name]


# --- opcheck with FP8 arguments ------------------------------------------------
#
# opcheck's test_schema runs the operator under SchemaCheckMode, which checks
# every tensor argument for mutation with bitwise_equal(before, after), and
# bitwise_equal is torch.allclose(lhs, rhs, equal_nan=True) for every tensor
# that is not quantized (torch 2.11: torch/_subclasses/schema_check_mode.py,
# bitwise_equal lines 102-108, called from has_mutated lines 110-125 for each
# argument at lines 235-240). torch.allclose has no FP8 kernel ("mul_cuda" not
# implemented for 'Float8_e4m3fn'), so test_schema fails for any operator
# with an FP8 argument before looking at the operator. Where that is so,
# test_schema runs with torch.allclose comparing FP8 tensors bit for bit (what
# the check means: has the argument changed?), every other dtype going to
# torch's own allclose; the other sub-tests run as they are.

DEFAULT_OPCHECK = ("test_schema", "test_autograd_registration", "test_faketensor",
                   "test_aot_dispatch_dynamic")


def _fp8_dtypes(torch):
    return (torch.float8_e4m3fn, torch.float8_e5m2)


def allclose_takes_fp8(torch, device="cuda"):
    """Whether this torch's allclose compares FP8 tensors on `device`."""
    x = torch.zeros(2, device=device, dtype=torch.float8_e4m3fn)
    try:
        torch.allclose(x, x, equal_nan=True)
        return True
    except (NotImplementedError, RuntimeError):
        return False


@contextlib.contextmanager
def fp8_bitwise_allclose(torch):
    """torch.allclose comparing FP8 tensors bit for bit (for SchemaCheckMode's
    mutation check); other dtypes as torch does."""
    original = torch.allclose

    def allclose(lhs, rhs, *args, **kwargs):
        if lhs.dtype in _fp8_dtypes(torch) and rhs.dtype == lhs.dtype:
            return torch.equal(lhs.view(torch.uint8), rhs.view(torch.uint8))
        return original(lhs, rhs, *args, **kwargs)

    torch.allclose = allclose
    try:
        yield
    finally:
        torch.allclose = original


def opcheck(torch, op, args, kwargs=None, test_utils=DEFAULT_OPCHECK):
    """torch.library.opcheck of `op` with `test_utils`, test_schema with the
    FP8 comparison above where torch cannot compare FP8 tensors (an FP8
    argument, or FP8 results, which SchemaCheckMode also compares when the
    operator runs through its autograd registration)."""
    if "test_schema" not in test_utils or allclose_takes_fp8(torch):
        return torch.library.opcheck(op, args, kwargs, test_utils=test_utils)
    with fp8_bitwise_allclose(torch):
        torch.library.opcheck(op, args, kwargs, test_utils="test_schema")
    rest = tuple(u for u in test_utils if u != "test_schema")
    if rest:
        torch.library.opcheck(op, args, kwargs, test_utils=rest)
