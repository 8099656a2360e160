"""FP8 outputs of fp8mlir.scaled_mm on a GPU (marked `gpu`; run by
python/tests/run_gpu.sh, kernels from fp8mlir.testing.fp8out_cases).

The contract: the FP8 bytes and scales the GEMM's epilogue writes are bit
for bit fp8mlir.numerics.quantize (the project's recipe arithmetic) of the
f32 values of D that the kernel quantizes. Those values are not the exact
product (the kernel's f32 accumulation order decides their last bits), so
they are taken from the same GEMM built with an f32 output and the same
tiling (a #fp8.gemm_config, no launch variant): the two kernels share the
mainloop and the epilogue's f32 arithmetic, only the store differs. That f32
output is itself checked against the exact f64 product (relative Frobenius
error < 1e-3), so a wrong mainloop cannot pass.
"""

import numpy as np
import pytest

from fp8mlir import numerics
from fp8mlir.testing import fp8out_cases as cases
from torch_ops_util import gemm_operands, relative_error, torch_or_fail

pytestmark = pytest.mark.gpu

F32_TOLERANCE = 1e-3


def _f32_same_tiling(torch, case, a, b, bias, m):
    """D in f32 from the f32 kernel of `case` (same tiling as the FP8 one)."""
    from fp8mlir import _torch_ops as ops
    spec = cases.f32_spec(case)
    sa, sb = ops._gemm_scales(spec.recipe, a.torch_scale(), b.torch_scale(), m,
                              spec.n, spec.k)
    d = torch.empty((m, spec.n), dtype=torch.float32, device="cuda")
    operands = {"a": a.data.contiguous(), "b": b.data.contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, "bias": bias, "d": d}
    (kernel,) = ops.kernels_for(spec, d.device)
    ops.launch(kernel, [operands.get(name) for name in kernel.operand_names])
    return d


def _exact(a, b, bias):
    d = a.exact @ b.exact.t()
    return d if bias is None else d + bias.double()


def _blockwise_reference(d32):
    """The numerics library's 1x128 quantization of the f32 D (the recipe
    the kernels' epilogue follows: power-of-two scales, amax clamped at
    1e-4)."""
    return numerics.quantize(d32, "blockwise", "e4m3", (1, 128), scales="pow2",
                             amax_clamp=np.float32(1e-4))


def _check_bits(torch, name, d8, s, want):
    """The FP8 bytes and scale_inv bits of (d8, s) are want's."""
    got = d8.view(torch.uint8).cpu().numpy()
    mismatches = np.count_nonzero(got != want.data)
    assert mismatches == 0, f"{name}: {mismatches} of {got.size} FP8 bytes differ"
    np.testing.assert_array_equal(s.cpu().numpy().view(np.uint32),
                                  np.asarray(want.scale_inv, np.float32).view(np.uint32)
                                  .reshape(s.shape))


# 1999: a partial last M tile, and more tiles than an H100 or H200 has SMs,
# so that CTAs run several tiles and reuse their staging buffer.
@pytest.mark.parametrize("m", [256, 127, 1, 1999])
@pytest.mark.parametrize("case", cases.CASES, ids=[c[0] for c in cases.CASES])
def test_fp8_output_bits(case, m):
    torch = torch_or_fail()
    import fp8mlir
    name, recipe, n, k, bias_dtype, result_recipe, dtype, config = case
    a, b = gemm_operands(torch, recipe, m, n, k, seed=7)
    bias = None
    if bias_dtype:
        gen = torch.Generator(device="cuda").manual_seed(3)
        bias = torch.randn(n, generator=gen, device="cuda").to(torch.bfloat16)
    d32 = _f32_same_tiling(torch, case, a, b, bias, m)
    torch.cuda.synchronize()
    assert relative_error(d32, _exact(a, b, bias)) < F32_TOLERANCE
    ref_in = d32.cpu().numpy()

    fp8_dtype = torch.float8_e4m3fn if dtype == "e4m3" else torch.float8_e5m2
    scale = None
    if result_recipe == "delayed":
        # Saturates the largest ~1% of |D| (satfinite).
        q99 = float(np.quantile(np.abs(ref_in), 0.99))
        scale = torch.tensor(numerics.max_finite(dtype) / max(q99, 1e-30),
                             dtype=torch.float32, device="cuda")
    d8, s = fp8mlir.scaled_mm(a.data, b.data.t(), a.torch_scale(), b.torch_scale(),
                              recipe=recipe, out_dtype=fp8_dtype, bias=bias,
                              result_recipe=result_recipe, result_scale=scale,
                              config=config)
    torch.cuda.synchronize()
    if result_recipe == "delayed":
        want = numerics.quantize(ref_in, "delayed", dtype, "tensor",
                                 scale=np.float32(scale.item()))
        assert s.shape == ()
    else:
        want = _blockwise_reference(ref_in)
        assert tuple(s.shape) == (m, -(-n // 128))
    _check_bits(torch, name, d8, s, want)


def test_fp8_output_scale_layout_and_values():
    """The 1x128 scales come in the layout scaled_mm reads a blockwise
    scale_a in place (strides (1, roundup(M, 4))), and the dequantized
    output is the exact product up to E4M3's rounding."""
    torch = torch_or_fail()
    import fp8mlir
    case = cases.CASES[0]
    _, recipe, n, k, _, result_recipe, _, config = case
    m = 128
    a, b = gemm_operands(torch, recipe, m, n, k, seed=11)
    d8, s = fp8mlir.scaled_mm(a.data, b.data.t(), a.torch_scale(), b.torch_scale(),
                              recipe=recipe, out_dtype=torch.float8_e4m3fn,
                              result_recipe=result_recipe, config=config)
    assert s.stride() == (1, (m + 3) // 4 * 4)
    dequantized = d8.double() * s.double().repeat_interleave(128, dim=1)[:, :n]
    assert relative_error(dequantized, _exact(a, b, None)) < 0.05


def test_fp8_output_nan_blocks():
    """A NaN in D makes its 1x128 block's amax NaN (the maxima propagate
    NaN), so the block takes the NaN scale rule: a NaN in row 5 of A (a
    whole NaN row of D) and in row 700 of B (NaN in column 700 of every row:
    one NaN among finite values in block 5 of each row), bit for bit
    numerics.quantize of the f32 kernel's D."""
    torch = torch_or_fail()
    import fp8mlir
    case = cases.CASES[0]
    _, recipe, n, k, _, result_recipe, _, config = case
    m = 256
    a, b = gemm_operands(torch, recipe, m, n, k, seed=13)
    a_data, b_data = a.data.contiguous(), b.data.contiguous()
    a_data.view(torch.uint8)[5, 17] = 0x7F  # E4M3 NaN
    b_data.view(torch.uint8)[700, 33] = 0xFF
    a.data, b.data = a_data, b_data
    d32 = _f32_same_tiling(torch, case, a, b, None, m)
    torch.cuda.synchronize()
    ref_in = d32.cpu().numpy()
    assert np.isnan(ref_in[5]).all() and np.isnan(ref_in[:, 700]).all()
    assert np.isfinite(np.delete(np.delete(ref_in, 5, 0), 700, 1)).all()
    d8, s = fp8mlir.scaled_mm(a_data, b_data.t(), a.torch_scale(), b.torch_scale(),
                              recipe=recipe, out_dtype=torch.float8_e4m3fn,
                              result_recipe=result_recipe, config=config)
    torch.cuda.synchronize()
    _check_bits(torch, "NaN blocks", d8, s, _blockwise_reference(ref_in))
