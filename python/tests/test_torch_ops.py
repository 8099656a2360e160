"""fp8mlir's PyTorch operators on a GPU (marked `gpu`): torch.library.opcheck
of every operator, scaled_mm with every scale layout torch's scaled GEMMs
take, out=, quantize and dequantize bit for bit against fp8mlir.numerics,
and quantize feeding scaled_mm.

Kernels come from the kernel cache (python/tests/test_gpu.py --populate,
which compiles fp8mlir.testing.torch_ops_cases); python/tests/run_gpu.sh runs
everything.
"""

import numpy as np
import pytest

import fp8mlir
from fp8mlir import numerics
from fp8mlir.testing import torch_ops_cases as cases
from torch_ops_util import (GEMM_TOLERANCE, allclose_takes_fp8, gemm_operands, opcheck,
                            relative_error, rng, random_matrix, same_bits, torch_or_fail)

pytestmark = pytest.mark.gpu
N, K = cases.TEST_N, cases.TEST_K


@pytest.fixture(scope="module")
def torch():
    torch = torch_or_fail()
    import fp8mlir._torch_ops  # noqa: F401 (defines the operators)
    return torch


def ops(torch):
    return torch.ops.fp8mlir


# --- opcheck ------------------------------------------------------------------
#
# Every sub-test of torch.library.opcheck (torch_ops_util.opcheck: test_schema
# compares FP8 arguments bit for bit, which torch 2.11's SchemaCheckMode
# cannot do itself).

@pytest.fixture(scope="module")
def probe_ops(torch):
    """Two operators of an FP8 tensor, one of which mutates it although its
    schema says it does not."""
    lib = torch.library.Library("fp8mlir_test", "DEF")
    lib.define("reads(Tensor x) -> Tensor")
    lib.define("mutates(Tensor x) -> Tensor")
    lib.impl("reads", lambda x: x.to(torch.float32), "CUDA")

    def mutates(x):
        x.view(torch.uint8).bitwise_xor_(1)
        return x.to(torch.float32)

    lib.impl("mutates", mutates, "CUDA")
    yield torch.ops.fp8mlir_test
    del lib


def test_schema_check_compares_fp8_arguments(torch, probe_ops):
    """The schema check used below passes an operator that leaves its FP8
    argument alone and catches one that changes it."""
    from torch.testing._internal.optests.generate_tests import OpCheckError
    x = torch.randn(8, 32, device="cuda").to(torch.float8_e4m3fn)
    opcheck(torch, probe_ops.reads.default, (x,), test_utils=("test_schema",))
    with pytest.raises(OpCheckError, match="not defined as mutable but was mutated"):
        opcheck(torch, probe_ops.mutates.default, (x,), test_utils=("test_schema",))
    if not allclose_takes_fp8(torch):  # torch's own check fails before the operator
        with pytest.raises(OpCheckError, match="not implemented for 'Float8_e4m3fn'"):
            torch.library.opcheck(probe_ops.reads.default, (x,), test_utils="test_schema")


@pytest.mark.parametrize("recipe, bias", [("tensorwise", False), ("tensorwise", True),
                                          ("rowwise", False), ("blockwise", False)])
def test_opcheck_scaled_mm(torch, recipe, bias):
    a, b = gemm_operands(torch, recipe, 64, N, K)
    sa = a.torch_scale().clone().requires_grad_()
    sb = b.torch_scale().clone().requires_grad_()
    kwargs = {"out_dtype": torch.bfloat16}
    if bias:
        kwargs["bias"] = torch.randn(N, device="cuda", dtype=torch.bfloat16,
                                     requires_grad=True)
    opcheck(torch, ops(torch).scaled_mm.default, (a.data, b.data.t(), sa, sb), kwargs)


def test_opcheck_scaled_mm_out(torch):
    a, b = gemm_operands(torch, "rowwise", 64, N, K)
    out = torch.empty(64, N, device="cuda", dtype=torch.float32)  # TEST_GEMMS "rowwise-f32"
    opcheck(torch, ops(torch).scaled_mm_out.default,
            (a.data, b.data.t(), a.torch_scale(), b.torch_scale(), None, "auto", "fast", out))


def _quantize_args(torch, case, rows=cases.TEST_ROWS):
    recipe, block, in_dtype, dtype, rowwise, columnwise, transposed, history = case
    x = torch.from_numpy(random_matrix(rng(case, rows), rows, K)).cuda().to(
        {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[in_dtype])
    fp8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}[dtype]
    scale = torch.tensor(0.75, device="cuda") if recipe == "delayed" else None
    history = torch.rand(history, device="cuda") * 4 if history else None
    return x, fp8, scale, history


@pytest.mark.parametrize("case", cases.QUANTIZE_CASES, ids=str)
def test_opcheck_quantize(torch, case):
    recipe, block, _, _, rowwise, columnwise, transposed, history_length = case
    x, fp8, scale, history = _quantize_args(torch, case)
    if history is not None:
        opcheck(torch, ops(torch).quantize_delayed.default,
                (x, scale, history, fp8, rowwise, columnwise, transposed))
    else:
        opcheck(torch, ops(torch).quantize.default,
                (x, recipe, list(block or ()), fp8, rowwise, columnwise, transposed, scale))


@pytest.mark.parametrize("recipe, block", [("tensorwise", None), ("rowwise", None),
                                           ("blockwise", (1, 128)), ("blockwise", (128, 128))])
def test_opcheck_dequantize(torch, recipe, block):
    x = torch.randn(cases.TEST_ROWS, K, device="cuda", dtype=torch.bfloat16)
    q = fp8mlir.quantize(x, recipe, block=block)
    granularity = fp8mlir.quantization.granularity(recipe, block)
    opcheck(torch, ops(torch).dequantize.default,
            (q.data, q.scale_inv, granularity, torch.bfloat16))


# --- quantize / dequantize bit for bit ------------------------------------------

def _reference(case, x32, transposed_output, scale=None):
    recipe, block, _, dtype, *_ = case
    kind, gran = {"tensorwise": ("current", "tensor"), "rowwise": ("current", "row"),
                  "delayed": ("delayed", "tensor"),
                  "blockwise": ("blockwise", tuple(block or (1, 128)))}[recipe]
    return numerics.quantize(x32, kind, dtype, gran, transposed=transposed_output,
                             scale=scale,
                             amax_clamp=np.float32(1e-4) if kind == "blockwise" else 0.0)


def _check_output(torch, data, scale_inv, ref, untransposed):
    got = data.view(torch.uint8).cpu().numpy()
    if untransposed:  # the transposed output's bytes, stored [R, C]
        got = np.ascontiguousarray(got.T)
    assert np.array_equal(got, ref.data), np.argwhere(got != ref.data)[:5]
    want = np.asarray(ref.scale_inv, dtype=np.float32).reshape(tuple(scale_inv.shape))
    got_scale = scale_inv.float().cpu().numpy()
    assert np.array_equal(got_scale.view(np.uint32), want.view(np.uint32)), (got_scale, want)


@pytest.mark.parametrize("case", cases.QUANTIZE_CASES, ids=str)
def test_quantize_matches_numerics(torch, case):
    recipe, block, _, _, rowwise, columnwise, transposed, _ = case
    rows = (cases.TEST_ROWS,) if columnwise and transposed else (1, 201, cases.TEST_ROWS)
    for r in rows:
        x, fp8, scale, history = _quantize_args(torch, case, r)
        x32 = x.float().cpu().numpy()
        before = None if history is None else history.clone()
        q = fp8mlir.quantize(x, recipe, dtype=fp8, rowwise=rowwise, columnwise=columnwise,
                             transposed=transposed, block=block, scale=scale,
                             amax_history=history)
        torch.cuda.synchronize()
        s = None if scale is None else float(scale)
        if rowwise:
            _check_output(torch, q.data, q.scale_inv, _reference(case, x32, False, s), False)
        else:
            assert q.data is None and q.scale_inv is None
        if columnwise:
            _check_output(torch, q.columnwise_data, q.columnwise_scale_inv,
                          _reference(case, x32, True, s), not transposed)
        if history is not None:  # amax recorded into slot 0, the rest kept
            amax = float(np.abs(x32).max())
            assert history[0].item() == max(before[0].item(), amax)
            assert torch.equal(history[1:], before[1:])


@pytest.mark.parametrize("recipe, block", [("tensorwise", None), ("rowwise", None),
                                           ("blockwise", (1, 128)), ("blockwise", (128, 128))])
def test_dequantize_matches_numerics(torch, recipe, block):
    x = torch.from_numpy(random_matrix(rng(recipe, block), cases.TEST_ROWS, K)).cuda()
    q = fp8mlir.quantize(x.to(torch.bfloat16), recipe, block=block, columnwise=True)
    outputs = [(False, q.data, q.scale_inv)]
    if recipe == "rowwise" or block == (1, 128):  # the test cache's [K, R] kernels
        outputs.append((True, q.columnwise_data, q.columnwise_scale_inv))
    for columnwise, data, scale in outputs:
        y = fp8mlir.dequantize(q, columnwise=columnwise)
        ref = numerics.Quantized(
            data=data.view(torch.uint8).cpu().numpy(),
            scale_inv=scale.float().cpu().numpy().reshape(
                (1, 1) if scale.dim() == 0 else tuple(scale.shape)),
            amax=np.float32(0), fmt="e4m3", block=_numerics_block(recipe, block, data.shape))
        want = torch.from_numpy(ref.dequantize()).to(torch.bfloat16)
        assert same_bits(torch, y.cpu(), want), columnwise
        # Raw tensors with the recipe named do the same.
        assert same_bits(torch, fp8mlir.dequantize(data, scale, recipe=recipe, block=block), y)


def _numerics_block(recipe, block, shape):
    if recipe == "tensorwise":
        return tuple(shape)
    if recipe == "rowwise":
        return (1, shape[1])
    return tuple(block)


# --- scaled_mm: every layout torch takes ------------------------------------------

def _layouts(torch, recipe, a, b, m):
    """(name, scale_a, scale_b): the canonical torch layout first."""
    sa, sb = a.torch_scale(), b.torch_scale()
    out = [("torch", sa, sb)]
    if recipe == "tensorwise":
        out += [("1-element", sa.reshape(1), sb.reshape(1, 1))]
    elif recipe == "rowwise":
        wide = torch.cat([sa, sa], dim=1)[:, :1]  # (M, 1) with strides (2, 1)
        out += [("strided (M,1), (N,1)", wide, sb.t().contiguous())]
    else:
        kb, nb = sb.shape
        padded_m = -(-m // 4) * 4
        padded_a = torch.full((kb, padded_m), float("nan"), device="cuda")
        padded_a[:, :m] = sa.t()  # fp8mlir.quantize's layout: strides (1, roundup(M, 4))
        padded_b = torch.full((nb, -(-kb // 4) * 4), float("nan"), device="cuda")
        padded_b[:, :kb] = sb.t()  # torch's layout: strides (1, roundup(Kb, 4))
        out += [("K-major scale_a, row-major scale_b", sa.contiguous(), sb.contiguous()),
                ("padded", padded_a.t()[:m], padded_b[:, :kb].t())]
    return out


@pytest.mark.parametrize("recipe, m, k", [
    ("tensorwise", 1, K), ("tensorwise", 64, K), ("rowwise", 1, K), ("rowwise", 64, K),
    ("blockwise", 1, K), ("blockwise", 127, K), ("blockwise", 128, K),
    ("blockwise", 64, cases.TEST_K_ODD)])
def test_scaled_mm_takes_torchs_scale_layouts(torch, recipe, m, k):
    a, b = gemm_operands(torch, recipe, m, N, k)
    exact = a.exact @ b.exact.t()
    results = []
    for name, sa, sb in _layouts(torch, recipe, a, b, m):
        y = fp8mlir.scaled_mm(a.data, b.data.t(), sa, sb, out_dtype=torch.bfloat16)
        assert y.shape == (m, N) and y.dtype == torch.bfloat16
        assert relative_error(y, exact) < GEMM_TOLERANCE, name
        results.append((name, y))
    for name, y in results[1:]:
        assert same_bits(torch, y, results[0][1]), name


@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise", "blockwise"])
def test_scaled_mm_out_writes_into_out(torch, recipe):
    a, b = gemm_operands(torch, recipe, 64, N, K)
    args = (a.data, b.data.t(), a.torch_scale(), b.torch_scale())
    out = torch.full((64, N), float("nan"), device="cuda", dtype=torch.bfloat16)
    assert fp8mlir.scaled_mm(*args, out=out) is out
    assert same_bits(torch, out, fp8mlir.scaled_mm(*args))
    with pytest.raises(ValueError, match="differs from out's dtype"):
        fp8mlir.scaled_mm(*args, out=out, out_dtype=torch.float32)


def test_scaled_mm_bias_and_f32_output(torch):
    a, b = gemm_operands(torch, "tensorwise", 64, N, K)
    bias = torch.randn(N, device="cuda", dtype=torch.bfloat16)
    y = fp8mlir.scaled_mm(a.data, b.data.t(), a.torch_scale(), b.torch_scale(), bias=bias)
    assert relative_error(y, a.exact @ b.exact.t() + bias.double()) < GEMM_TOLERANCE
    a, b = gemm_operands(torch, "rowwise", 64, N, K)
    y = fp8mlir.scaled_mm(a.data, b.data.t(), a.torch_scale(), b.torch_scale(),
                          out_dtype=torch.float32)
    assert y.dtype == torch.float32 and relative_error(y, a.exact @ b.exact.t()) < 1e-3


def test_scaled_mm_with_no_rows(torch):
    a, b = gemm_operands(torch, "rowwise", 1, N, K)
    y = fp8mlir.scaled_mm(a.data[:0], b.data.t(), a.torch_scale()[:0], b.torch_scale())
    assert y.shape == (0, N)


@pytest.mark.parametrize("recipe, block, m", [("tensorwise", None, 64), ("rowwise", None, 64),
                                              ("blockwise", (1, 128), 127),
                                              ("blockwise", (1, 128), 1)])
def test_quantize_feeds_scaled_mm(torch, recipe, block, m):
    """quantize's outputs go to scaled_mm as they are (the padded 1x128
    scales of M % 4 != 0 included) and give the GEMM of the dequantized
    operands."""
    gen = rng("feed", recipe, m)
    x = torch.from_numpy(random_matrix(gen, m, K)).cuda().to(torch.bfloat16)
    w = torch.from_numpy(random_matrix(gen, N, K)).cuda().to(torch.bfloat16)
    qx = fp8mlir.quantize(x, recipe, block=block)
    qw = fp8mlir.quantize(w, recipe, block=(128, 128) if recipe == "blockwise" else None)
    scale_w = qw.scale_inv if recipe == "tensorwise" else qw.scale_inv.t()
    y = fp8mlir.scaled_mm(qx.data, qw.data.t(), qx.scale_inv, scale_w)
    exact = _dequantized(qx, m) @ _dequantized(qw, N).t()
    assert relative_error(y, exact) < GEMM_TOLERANCE


def _dequantized(q, rows):
    """data * scale_inv in f64 (the scales broadcast by their recipe)."""
    data = q.data.float().double()
    s = q.scale_inv.double()
    if q.recipe in ("tensorwise", "rowwise"):
        return data * s
    br, bc = q.block
    full = s.repeat_interleave(br, 0)[:rows].repeat_interleave(bc, 1)[:, :data.shape[1]]
    return data * full


def test_metadata_shapes_the_outputs(torch):
    """empty_operands (the registration helpers' metadata-driven outputs)
    gives the quantize kernels' operand shapes, which the operator's own
    layouts match."""
    from fp8mlir._torch_ops import empty_operands, kernels_for
    spec = cases.quantize_spec(("blockwise", (1, 128), "bf16", "e4m3", True, True, True, 0))
    (kernel,) = kernels_for(spec, 0)
    x = torch.empty(208, K, device="cuda", dtype=torch.bfloat16)
    names = [name for name, _, _ in spec.output_layouts(208)]
    made = empty_operands(kernel.meta["operands"], names, {"R": 208}, x)
    for tensor, (name, shape, _) in zip(made, spec.output_layouts(208)):
        assert tuple(tensor.shape) == tuple(shape), name
    assert made[0].dtype == torch.float8_e4m3fn and made[1].dtype == torch.float32
