"""Every kernel the GPU tests (python/tests/test_gpu.py, test_torch_ops.py,
test_torch_compile.py) and the launch benchmark (bench/launch_overhead.py)
run, in one table. ``python/tests/test_gpu.py --populate DIR`` compiles
``all_specs()`` into the kernel cache the GPU machine (which has no compiler)
reads, and the GPU tests may use no other kernel: python/tests/conftest.py
fails a test that asks for one (``check_in_table``), whatever the cache
holds. A test needing a new kernel adds it here. Pure Python.
"""

from ..gemm import ScaledMatmul
from ..quantization import DequantizeSpec, QuantizeSpec
from . import grouped_cases
from . import fp8out_cases

# fp8mlir.scaled_mm against torch's scaled GEMMs (test_gpu.py): (recipe, M,
# N, K, accumulation, out dtype); M is a run-time value, so one kernel per
# (recipe, N, K, accumulation, out dtype).
SCALED_MM_CASES = [
    ("tensorwise", 512, 1024, 2048, "fast", "bf16"),
    ("tensorwise", 127, 2112, 160, "fast", "f32"),
    ("rowwise", 512, 1024, 2048, "fast", "bf16"),
    ("rowwise", 256, 2048, 1024, "promoted(128)", "f16"),
    ("blockwise", 512, 1024, 2048, "promoted(128)", "bf16"),
    ("blockwise", 100, 2112, 7168, "promoted(128)", "bf16"),
    # M % 4 != 0: the 1x128 scales are padded to [K/128, roundup(M, 4)].
    ("blockwise", 127, 2112, 7168, "promoted(128)", "bf16"),
]


def scaled_mm_case_spec(case):
    recipe, _, n, k, accumulation, out = case
    return ScaledMatmul(recipe, n=n, k=k, out_dtype=out, accumulation=accumulation)


# GEMMs of the operator tests (test_torch_ops.py, test_torch_compile.py), by
# name: [M, 512] x [512, 256]; K = 640 has 5 K-blocks, so torch's padded
# 128x128 scale layout (strides (1, 8)) differs from the kernel's dense one.
TEST_N, TEST_K, TEST_K_ODD = 256, 512, 640
TEST_GEMMS = {
    "tensorwise": ScaledMatmul("tensorwise", n=TEST_N, k=TEST_K, accumulation="fast"),
    "tensorwise+bias": ScaledMatmul("tensorwise", n=TEST_N, k=TEST_K, accumulation="fast",
                                    bias_dtype="bf16"),
    "rowwise": ScaledMatmul("rowwise", n=TEST_N, k=TEST_K, accumulation="fast"),
    "rowwise-f32": ScaledMatmul("rowwise", n=TEST_N, k=TEST_K, accumulation="fast",
                                out_dtype="f32"),
    "blockwise": ScaledMatmul("blockwise", n=TEST_N, k=TEST_K),
    "blockwise-f32": ScaledMatmul("blockwise", n=TEST_N, k=TEST_K, out_dtype="f32"),
    "blockwise-k640": ScaledMatmul("blockwise", n=TEST_N, k=TEST_K_ODD),
}

# Quantizations of the tests: x [R, TEST_K] (R a run-time value).
# (recipe, block, input dtype, FP8 dtype, rowwise, columnwise, transposed,
# amax history length)
QUANTIZE_CASES = [
    ("tensorwise", None, "bf16", "e4m3", True, True, True, 0),
    ("tensorwise", None, "bf16", "e4m3", True, False, True, 0),
    ("tensorwise", None, "f32", "e5m2", True, False, True, 0),
    ("rowwise", None, "bf16", "e4m3", True, True, True, 0),
    ("rowwise", None, "bf16", "e4m3", True, False, True, 0),
    ("blockwise", (1, 128), "bf16", "e4m3", True, True, True, 0),
    ("blockwise", (1, 128), "bf16", "e4m3", True, False, True, 0),
    ("blockwise", (1, 128), "f16", "e4m3", True, True, False, 0),
    ("blockwise", (128, 128), "bf16", "e4m3", True, True, True, 0),
    ("blockwise", (128, 128), "bf16", "e4m3", True, False, True, 0),
    ("delayed", None, "bf16", "e4m3", True, True, True, 0),
    ("delayed", None, "bf16", "e4m3", True, True, True, 16),
]
# Rows of the columnwise outputs the tests dequantize ([TEST_K, R]).
TEST_ROWS = 256


def quantize_spec(case, cols=TEST_K):
    recipe, block, in_dtype, dtype, rowwise, columnwise, transposed, history = case
    return QuantizeSpec(recipe, cols, in_dtype=in_dtype, dtype=dtype, rowwise=rowwise,
                        columnwise=columnwise, transposed=transposed, block=block,
                        history=history)


DEQUANTIZE_SPECS = (
    [DequantizeSpec(g, TEST_K) for g in ("tensor", "row", "tile 1x128", "tile 128x128")]
    + [DequantizeSpec("tensor", TEST_K, dtype="e5m2"),
       DequantizeSpec("tile 1x128", TEST_ROWS), DequantizeSpec("row", TEST_ROWS)])

# The launch benchmark: its launch-overhead GEMM ([16, 512] x [512, 256]),
# and the small-shape table's N x K of real models (Llama-3-8B's attention
# output, MLP up and MLP down projections), each recipe.
BENCH_RECIPES = ("tensorwise", "rowwise", "blockwise")
OVERHEAD_M, OVERHEAD_N, OVERHEAD_K = 16, TEST_N, TEST_K
BENCH_SHAPES = [(4096, 4096), (14336, 4096), (4096, 14336)]


def bench_gemm(recipe, n, k):
    return ScaledMatmul(recipe, n=n, k=k,
                        accumulation="promoted(128)" if recipe == "blockwise" else "fast")


def all_specs():
    """Every spec the GPU tests and the benchmark need, without repeats."""
    specs = [scaled_mm_case_spec(case) for case in SCALED_MM_CASES]
    specs += list(TEST_GEMMS.values())
    specs += [quantize_spec(case) for case in QUANTIZE_CASES]
    specs += DEQUANTIZE_SPECS
    specs += fp8out_cases.all_specs()
    specs += [bench_gemm(r, n, k) for r in BENCH_RECIPES
              for n, k in [(OVERHEAD_N, OVERHEAD_K)] + BENCH_SHAPES]
    specs += grouped_cases.all_specs()  # test_gpu_grouped.py, bench_grouped.py
    unique = {}
    for spec in specs:
        unique.setdefault(spec.cache_key, spec)
    return list(unique.values())


class NotInTable(LookupError):
    """A GPU test asked for a kernel that all_specs() does not list."""


_TABLE_KEYS = None


def check_in_table(spec):
    """Raises NotInTable unless `spec` is one of all_specs()."""
    global _TABLE_KEYS
    if _TABLE_KEYS is None:
        _TABLE_KEYS = frozenset(s.cache_key for s in all_specs())
    if spec.cache_key not in _TABLE_KEYS:
        raise NotInTable(
            f"kernel {spec.cache_key} is not in fp8mlir/testing/torch_ops_cases.py, the "
            f"table of the GPU tests' kernels (python/tests/test_gpu.py --populate compiles "
            f"it): add the test's GEMM, quantization or dequantization there")
