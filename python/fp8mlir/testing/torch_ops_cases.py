"""The kernels the PyTorch-operator GPU tests (python/tests/test_torch_ops.py)
and the launch benchmark (bench/launch_overhead.py) run, in one place, so
that ``python/tests/test_gpu.py --populate DIR`` compiles all of them into
the kernel cache the GPU machine (which has no compiler) reads. Pure Python.
"""

from ..gemm import ScaledMatmul
from ..quantization import DequantizeSpec, QuantizeSpec

# GEMMs of the operator tests: [M, 512] x [512, 256]; K = 640 has 5 K-blocks,
# so torch's padded 128x128 scale layout (strides (1, 8)) differs from the
# kernel's dense one.
TEST_N, TEST_K, TEST_K_ODD = 256, 512, 640
TEST_GEMMS = [
    ScaledMatmul("tensorwise", n=TEST_N, k=TEST_K, accumulation="fast"),
    ScaledMatmul("tensorwise", n=TEST_N, k=TEST_K, accumulation="fast", bias_dtype="bf16"),
    ScaledMatmul("rowwise", n=TEST_N, k=TEST_K, accumulation="fast"),
    ScaledMatmul("rowwise", n=TEST_N, k=TEST_K, accumulation="fast", out_dtype="f32"),
    ScaledMatmul("blockwise", n=TEST_N, k=TEST_K),
    ScaledMatmul("blockwise", n=TEST_N, k=TEST_K_ODD),
]

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

# The launch benchmark: N x K of real models (Llama-3-8B's attention output,
# MLP up and MLP down projections), each recipe.
BENCH_SHAPES = [(4096, 4096), (14336, 4096), (4096, 14336)]
BENCH_RECIPES = ("tensorwise", "rowwise", "blockwise")
LAUNCH_SHAPE = (4096, 4096)  # N x K of the launch-overhead table


def bench_gemm(recipe, n, k):
    return ScaledMatmul(recipe, n=n, k=k,
                        accumulation="promoted(128)" if recipe == "blockwise" else "fast")


def all_specs():
    """Every spec the GPU tests and the benchmark need, without repeats."""
    specs = list(TEST_GEMMS)
    specs += [quantize_spec(case) for case in QUANTIZE_CASES]
    specs += DEQUANTIZE_SPECS
    specs += [bench_gemm(r, n, k) for r in BENCH_RECIPES for n, k in BENCH_SHAPES]
    unique = {}
    for spec in specs:
        unique.setdefault(spec.cache_key, spec)
    return list(unique.values())
