"""fp8mlir.scaled_mm against torch._scaled_mm on a GPU (marked `gpu`).

The GPU machine has no compiler: fill a kernel cache on the build machine,

    /usr/bin/python3 python/tests/test_gpu.py --populate CACHE_DIR [--chip sm_90a]

then run there with FP8MLIR_KERNEL_CACHE=CACHE_DIR and FP8RT_LIBRARY set:

    python3 -m pytest -m gpu python/tests/test_gpu.py

FP8MLIR_GPU_RESULTS=FILE writes the measured errors as JSON.
"""

import json
import zlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import fp8mlir  # noqa: E402
from fp8mlir import numerics  # noqa: E402

# (recipe, M, N, K, accumulation, out dtype); M is a run-time value, so
# one kernel per (recipe, N, K, accumulation, out dtype).
CASES = [
    ("tensorwise", 512, 1024, 2048, "fast", "bf16"),
    ("tensorwise", 127, 2112, 160, "fast", "f32"),
    ("rowwise", 512, 1024, 2048, "fast", "bf16"),
    ("rowwise", 256, 2048, 1024, "promoted(128)", "f16"),
    ("blockwise", 512, 1024, 2048, "promoted(128)", "bf16"),
    ("blockwise", 100, 2112, 7168, "promoted(128)", "bf16"),
]
# Relative Frobenius error of ours against torch's FP8 GEMM on the same
# quantized inputs (both accumulate in f32; bf16/f16 outputs round at 2^-9).
TOLERANCE = {"bf16": 1e-2, "f16": 5e-3, "f32": 1e-3}

RESULTS = []


def spec_of(case):
    recipe, _, n, k, accumulation, out = case
    return fp8mlir.ScaledMatmul(recipe, n=n, k=k, out_dtype=out, accumulation=accumulation)


def populate(directory, chip):
    cache = fp8mlir.KernelCache(directory)
    for case in CASES:
        print(cache.compile(spec_of(case), chip))


def quantized_operand(rng, rows, k, gran):
    x = rng.standard_normal((rows, k)).astype(np.float32)
    x *= np.float32(2.0) ** rng.integers(-3, 4, size=(rows, 1)).astype(np.float32)
    recipe = "blockwise" if isinstance(gran, tuple) else "current"
    return numerics.quantize(x, recipe, "e4m3", gran)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-m{c[1]}-n{c[2]}-k{c[3]}-{c[4]}-{c[5]}")
def test_scaled_mm_matches_torch(case):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.fail("no CUDA device: GPU tests must run on a GPU machine")
    recipe, m, n, k, accumulation, out = case
    out_dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[out]
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))
    gran_a, gran_b = {"tensorwise": ("tensor", "tensor"), "rowwise": ("row", "row"),
                      "blockwise": ((1, 128), (128, 128))}[recipe]
    qa = quantized_operand(rng, m, k, gran_a)
    qb = quantized_operand(rng, n, k, gran_b)
    dev = "cuda"
    a = torch.from_numpy(qa.data).to(dev).view(torch.float8_e4m3fn)
    w = torch.from_numpy(qb.data).to(dev).view(torch.float8_e4m3fn)  # [N, K]
    sa = torch.from_numpy(qa.scale_inv).to(dev)
    sb = torch.from_numpy(qb.scale_inv).to(dev)
    if recipe == "tensorwise":
        scale_a, scale_b = sa.reshape(()), sb.reshape(())
    elif recipe == "rowwise":
        scale_a, scale_b = sa.reshape(m, 1), sb.reshape(1, n)
    else:  # torch's blockwise layouts: (M, K/128) with strides (1, M); (K/128, N/128)
        scale_a = sa.t().contiguous().t()
        scale_b = sb.t()

    ours = fp8mlir.scaled_mm(a, w.t(), scale_a, scale_b, out_dtype=out_dtype,
                             accumulation=accumulation)
    if recipe == "blockwise":
        from torch.nn.functional import ScalingType, SwizzleType, scaled_mm
        peer = scaled_mm(a, w.t(), scale_a, ScalingType.BlockWise1x128, scale_b,
                         ScalingType.BlockWise128x128, swizzle_a=SwizzleType.NO_SWIZZLE,
                         swizzle_b=SwizzleType.NO_SWIZZLE, output_dtype=out_dtype)
        peer_name = "torch.nn.functional.scaled_mm"
    else:
        peer = torch._scaled_mm(a, w.t(), scale_a, scale_b, out_dtype=out_dtype,
                                use_fast_accum=accumulation == "fast")
        peer_name = "torch._scaled_mm"
    torch.cuda.synchronize()
    exact = torch.from_numpy(qa.dequantize().astype(np.float64) @
                             qb.dequantize().astype(np.float64).T).to(dev)
    ours64, peer64 = ours.double(), peer.double()
    rel_peer = ((ours64 - peer64).norm() / peer64.norm()).item()
    rel_exact = ((ours64 - exact).norm() / exact.norm()).item()
    RESULTS.append({"recipe": recipe, "m": m, "n": n, "k": k, "accumulation": accumulation,
                    "out": out, "peer": peer_name,
                    "max_abs_diff_vs_peer": (ours64 - peer64).abs().max().item(),
                    "rel_fro_vs_peer": rel_peer, "rel_fro_vs_f64": rel_exact,
                    "peer_rel_fro_vs_f64": ((peer64 - exact).norm() / exact.norm()).item(),
                    "device": torch.cuda.get_device_name()})
    assert torch.isfinite(ours64).all()
    assert rel_peer < TOLERANCE[out], RESULTS[-1]
    assert rel_exact < TOLERANCE[out], RESULTS[-1]


def teardown_module():
    path = os.environ.get("FP8MLIR_GPU_RESULTS")
    if path and RESULTS:
        Path(path).write_text(json.dumps(RESULTS, indent=1))


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="fill a kernel cache for the GPU tests")
    parser.add_argument("--populate", required=True)
    parser.add_argument("--chip", default="sm_90a")
    args = parser.parse_args()
    populate(args.populate, args.chip)
