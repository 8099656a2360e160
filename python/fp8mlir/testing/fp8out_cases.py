"""The kernels of the FP8-output GEMM checks (python/tests/test_gpu_fp8out.py)
and benchmark (bench/bench_fp8out.py), part of the GPU kernel table
(torch_ops_cases.all_specs). Pure Python.

Each checked GEMM is compiled twice with one fixed tiling (a
``#fp8.gemm_config``, so no launch variant is picked by M): with its FP8
output, and with an f32 output. The two kernels share the mainloop and the
epilogue's f32 arithmetic (scales, bias), so the f32 kernel's output is
bit for bit the values the FP8 kernel quantizes.
"""
from ..gemm import ScaledMatmul
from ..quantization import QuantizeSpec

# (name, GEMM recipe, N, K, bias dtype, result recipe, FP8 dtype, config)
CASES = [
    # N = 2112: a last, partial 1x128 block of 64 columns.
    ("blockwise-1x128", "blockwise", 2112, 2048, None, "blockwise", "e4m3",
     "<tile = 128x128x128>"),
    ("blockwise-1x128-bias", "blockwise", 1024, 512, "bf16", "blockwise", "e4m3",
     "<tile = 128x128x128>"),
    # The 128x256 tile in column waves: the last tile one whole and one
    # partial block; 16 K blocks, two a trip.
    ("blockwise-1x128-w256", "blockwise", 2112, 2048, None, "blockwise", "e4m3",
     "<tile = 128x256x128>"),
    ("delayed-e4m3", "tensorwise", 4096, 2048, None, "delayed", "e4m3",
     "<tile = 128x256x128>"),
    ("delayed-e5m2-rowwise", "rowwise", 2112, 1024, None, "delayed", "e5m2",
     "<tile = 128x192x128>"),
]


def fp8_spec(case):
    _, recipe, n, k, bias, result_recipe, dtype, config = case
    return ScaledMatmul(recipe, n=n, k=k, out_dtype=dtype, bias_dtype=bias, config=config,
                        result_recipe=result_recipe,
                        accumulation="promoted(128)" if recipe == "blockwise" else "fast")


def f32_spec(case):
    _, recipe, n, k, bias, _, _, config = case
    return ScaledMatmul(recipe, n=n, k=k, out_dtype="f32", bias_dtype=bias, config=config,
                        accumulation="promoted(128)" if recipe == "blockwise" else "fast")


# The benchmark: DeepSeek-V3 shapes (N, K), blockwise with 1x128 output
# blocks and tensorwise with a delayed output scale, against the same GEMM
# writing bf16 and bf16 followed by the quantization kernel. Blockwise: each
# GEMM with the heuristic's tiling (no config), as a user gets it (FP8
# result 128x256, bf16 output 128x192 and its launch variants); tensorwise:
# one tiling for both.
BENCH_SHAPES = [(7168, 2048), (2048, 7168), (4096, 7168), (7168, 4096)]
BENCH_RECIPES = {"blockwise": ("blockwise", None),
                 "tensorwise": ("delayed", "<tile = 128x256x128>")}


def bench_specs(recipe, n, k):
    """(FP8-output GEMM, bf16-output GEMM, quantization of its output)."""
    result_recipe, config = BENCH_RECIPES[recipe]
    acc = "promoted(128)" if recipe == "blockwise" else "fast"
    fp8 = ScaledMatmul(recipe, n=n, k=k, out_dtype="e4m3", config=config,
                       result_recipe=result_recipe, accumulation=acc)
    bf16 = ScaledMatmul(recipe, n=n, k=k, out_dtype="bf16", config=config, accumulation=acc)
    return fp8, bf16, output_quantize_spec(result_recipe, n)


def output_quantize_spec(result_recipe, n):
    """The quantization kernel an FP8 output of `result_recipe` replaces:
    of a bf16 [M, N] D, rowwise, 1x128 blocks or a given per-tensor scale."""
    blockwise = result_recipe == "blockwise"
    return QuantizeSpec("blockwise" if blockwise else "delayed", n, in_dtype="bf16",
                        dtype="e4m3", rowwise=True, columnwise=False, transposed=True,
                        block=(1, 128) if blockwise else None)


def all_specs():
    specs = [fp8_spec(c) for c in CASES] + [f32_spec(c) for c in CASES]
    for recipe in BENCH_RECIPES:
        for n, k in BENCH_SHAPES:
            specs += bench_specs(recipe, n, k)
    return specs
