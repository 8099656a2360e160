"""fp8mlir.scaled_mm against torch._scaled_mm on a GPU (marked `gpu`).

The GPU machine has no compiler: fill a kernel cache on the build machine
with every kernel of the GPU tests and of bench/launch_overhead.py (the
table fp8mlir.testing.torch_ops_cases; a GPU test using a kernel outside it
fails, see conftest.py),

    /usr/bin/python3 python/tests/test_gpu.py --populate CACHE_DIR [--chip sm_90a]

then run there with FP8MLIR_KERNEL_CACHE=CACHE_DIR and FP8RT_LIBRARY set
(python/tests/run_gpu.sh does all of it):

    python3 -m pytest -m gpu python/tests/test_gpu.py python/tests/test_torch_ops.py

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
from fp8mlir.testing import torch_ops_cases as cases  # noqa: E402

CASES = cases.SCALED_MM_CASES
# Relative Frobenius error of ours against torch's FP8 GEMM on the same
# quantized inputs (both accumulate in f32; bf16/f16 outputs round at 2^-9).
TOLERANCE = {"bf16": 1e-2, "f16": 5e-3, "f32": 1e-3}

RESULTS = []


def populate(directory, chip):
    """Compiles the table of every kernel the GPU tests and
    bench/launch_overhead.py run (fp8mlir.testing.torch_ops_cases) into
    `directory`."""
    cache = fp8mlir.KernelCache(directory)
    for spec in cases.all_specs():
        print(cache.compile(spec, chip))


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
        # cuBLASLt takes 1x128 scales only for M % 4 == 0 (its TMA-aligned
        # layout, the one our kernels read padded): run it on A with zero
        # rows appended, and keep its first M rows.
        mp = -(-m // 4) * 4
        a_peer = torch.cat([a.view(torch.uint8),
                            torch.zeros((mp - m, k), dtype=torch.uint8, device=dev)])
        sa_peer = torch.cat([sa, torch.ones((mp - m, sa.shape[1]), device=dev)])
        peer = scaled_mm(a_peer.view(torch.float8_e4m3fn), w.t(), sa_peer.t().contiguous().t(),
                         ScalingType.BlockWise1x128, scale_b, ScalingType.BlockWise128x128,
                         swizzle_a=SwizzleType.NO_SWIZZLE, swizzle_b=SwizzleType.NO_SWIZZLE,
                         output_dtype=out_dtype)[:m]
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


def _tensorwise_operands(torch, m=512, n=1024, k=2048):
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.ones((), device="cuda")
    return dict(a=a, b=b, scale_a=one, scale_b=one.clone())


BAD_ARGUMENTS = [
    # (what is wrong, change to the good arguments, error type, message part)
    ("a in bf16", lambda t, o: o.update(a=o["a"].to(t.bfloat16)), TypeError, "a: unsupported dtype"),
    ("K mismatch", lambda t, o: o.update(b=o["b"][:1024]), ValueError, "expected a [M, K] and b [K, N]"),
    ("a on the host", lambda t, o: o.update(a=o["a"].cpu()), ValueError, "a: expected a CUDA tensor"),
    # The operator's argument parser or its kernel rejects it, naming scale_b.
    ("scale_b missing", lambda t, o: o.update(scale_b=None), (TypeError, RuntimeError), "scale_b"),
    ("scale_a of no recipe", lambda t, o: o.update(scale_a=t.ones(7, 3, device="cuda")), ValueError,
     "cannot tell the recipe from scale_a (7, 3)"),
    ("out of the wrong shape", lambda t, o: o.update(out=t.empty(512, 1000, device="cuda", dtype=t.bfloat16)),
     ValueError, "out: expected a contiguous (512, 1024)"),
    ("out strided", lambda t, o: o.update(out=t.empty(512, 2048, device="cuda", dtype=t.bfloat16)[:, ::2]),
     ValueError, "out: expected a contiguous"),
    # The runtime's own check, named by the kernel's operand: A one byte off
    # the 16-byte alignment TMA needs (contiguous, so passed as it is).
    ("a misaligned",
     lambda t, o: o.update(a=t.empty(512 * 2048 + 16, device="cuda", dtype=t.float8_e4m3fn)[1:1 + 512 * 2048]
                           .view(512, 2048)),
     RuntimeError, 'operand "a"'),
]


@pytest.mark.gpu
@pytest.mark.parametrize("bad", BAD_ARGUMENTS, ids=lambda c: c[0].replace(" ", "_"))
def test_scaled_mm_rejects_bad_arguments(bad):
    """Each bad argument raises a Python exception naming it; nothing is
    launched and the process (and the CUDA context) stays usable."""
    import torch
    _, change, error, message = bad
    args = _tensorwise_operands(torch)
    change(torch, args)
    recipe = args.pop("recipe", None)
    with pytest.raises(error) as raised:
        fp8mlir.scaled_mm(args.pop("a"), args.pop("b"), args.pop("scale_a"), args.pop("scale_b"),
                          recipe=recipe, **args)
    assert message in str(raised.value)
    good = _tensorwise_operands(torch)
    assert torch.isfinite(fp8mlir.scaled_mm(good["a"], good["b"], good["scale_a"],
                                            good["scale_b"]).float()).all()


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description="fill a kernel cache for the GPU tests")
    parser.add_argument("--populate", required=True)
    parser.add_argument("--chip", default="sm_90a")
    args = parser.parse_args()
    populate(args.populate, args.chip)
