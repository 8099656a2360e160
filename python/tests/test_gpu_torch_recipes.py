"""fp8mlir.testing.torch_recipes on a GPU (marked `gpu`; needs torch + CUDA).

1. The torch quantizers against fp8mlir.numerics (NumPy), bit for bit:
   every recipe and direction, bf16 and f32 inputs of awkward shapes (tails,
   a zero row, a zero 128x128 tile, rows of 1e30 and 1e-30, with and without
   NaN/inf), fresh random values each run (the seed is in every message;
   FP8MLIR_TEST_SEED=N reproduces a run).
2. The scale and amax-history rules on special values.
3. TorchFP8Linear per recipe: Y, dX, dW within the GEMM tolerance of an f64
   product of the dequantized FP8 operands, within a loose bound of BF16
   nn.Linear, and the delayed-scaling state step by step.

    PYTHONPATH=python python3 -m pytest python/tests/test_gpu_torch_recipes.py -m gpu -x
"""

import math
import os
import time
import warnings

import numpy as np
import pytest

from fp8mlir import numerics

SEED = int(os.environ.get("FP8MLIR_TEST_SEED", time.time_ns() % (2**31 - 1)))
SHAPES = [(1, 1), (3, 130), (129, 257), (256, 384), (300, 1000)]
QUANTIZERS = [
    ("current-e4m3", dict(recipe="current", fmt="e4m3")),
    ("current-e5m2", dict(recipe="current", fmt="e5m2")),
    ("current-eps-pow2", dict(recipe="current", fmt="e4m3", epsilon=1e-3, pow2=True)),
    ("current-row", dict(recipe="current", fmt="e4m3", granularity="row")),
    ("delayed-e4m3", dict(recipe="delayed", fmt="e4m3", scale=3.0)),
    ("delayed-e5m2-small-scale", dict(recipe="delayed", fmt="e5m2", scale=2.0**-10)),
    ("delayed-e4m3-large-scale", dict(recipe="delayed", fmt="e4m3", scale=1e20)),
    ("blockwise-1x128-pow2", dict(recipe="blockwise", granularity=(1, 128), amax_clamp=1e-4)),
    ("blockwise-128x128-pow2", dict(recipe="blockwise", granularity=(128, 128), amax_clamp=1e-4)),
    ("blockwise-1x128-pow2-noclamp", dict(recipe="blockwise", granularity=(1, 128))),
    ("blockwise-1x128-f32", dict(recipe="blockwise", granularity=(1, 128), scales="f32",
                                 amax_clamp=1e-4)),
    ("blockwise-128x128-f32-noclamp", dict(recipe="blockwise", granularity=(128, 128),
                                           scales="f32")),
]
# Relative Frobenius error against the f64 product of the dequantized
# operands (test/GPU/gemm_spec.py's promoted-accumulation tolerances).
GEMM_TOLERANCE = {"bfloat16": 5e-3, "float32": 1e-3}
ROW_FACTOR = 2.0
# Against BF16 nn.Linear: E4M3 rounding (3 mantissa bits) of both operands,
# and E5M2 (2 bits) for dY under the hybrid format.
BF16_BOUND = {"y": 0.1, "dx": 0.15, "dw": 0.15}
SPECIAL_AMAX = np.array([0.0, 1e-45, 1e-40, 1.1754944e-38, 1e-30, 1.75 * 2.0**-120, 1e-5,
                         1e-4, 0.5, 1.0, 448.0, 449.0, 57344.0, 1e30, 3.4028235e38,
                         np.inf, np.nan], dtype=np.float32)


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.fail("no CUDA device: GPU tests must run on a GPU machine")
    return torch


@pytest.fixture(scope="module")
def tr(torch):
    from fp8mlir.testing import torch_recipes
    return torch_recipes


def awkward_input(rows, cols, specials, seed):
    """f32 [rows, cols]: normal values with per-row magnitudes 2^-6..2^6, a
    128-column block 16x larger, a zero row, a zero 128x128 tile, a row of
    ~1e30 and one of ~1e-30; with specials, NaN, -NaN, inf and -inf."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    x *= np.float32(2.0) ** rng.integers(-6, 7, size=(rows, 1)).astype(np.float32)
    if cols > 256:
        x[:, 128:256] *= np.float32(16)
    if rows > 4:
        x[1] = 0
        x[2] *= np.float32(1e30)
        x[3] *= np.float32(1e-30)
    if rows >= 256 and cols >= 128:
        x[128:256, :128] = 0
    if specials:
        x[0, 0] = np.nan
        x[-1, -1] = -np.inf
        x[rows // 2, cols // 2] = np.copysign(np.float32(np.nan), np.float32(-1))
        x[rows // 2, 0] = np.inf
    return x


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def same_floats(a, b):
    """Bitwise equal, or both NaN."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    return a.shape == b.shape and bool(np.all((bits(a) == bits(b)) | (np.isnan(a) & np.isnan(b))))


def first_mismatch(ours, ref, differ):
    idx = tuple(int(i) for i in np.argwhere(differ)[0])
    return f"{int(np.count_nonzero(differ))} differ, first at {idx}: {ours[idx]!r} vs {ref[idx]!r}"


@pytest.mark.gpu
@pytest.mark.parametrize("specials", [False, True], ids=["finite", "nan-inf"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("transposed", [False, True], ids=["rowwise", "columnwise"])
@pytest.mark.parametrize("case", QUANTIZERS, ids=lambda c: c[0])
def test_quantize_matches_numpy(torch, tr, case, transposed, dtype, specials):
    name, kwargs = case
    for i, (rows, cols) in enumerate(SHAPES):
        seed = SEED + 7919 * i
        where = f"{name} {dtype} {rows}x{cols} transposed={transposed} seed={SEED}"
        x = torch.from_numpy(awkward_input(rows, cols, specials, seed)).cuda().to(getattr(torch, dtype))
        x_ref = x.float().cpu().numpy()  # the values the quantizer sees (bf16 NaNs lose their sign)
        ours = tr.quantize(x, transposed=transposed, **kwargs)
        ref = numerics.quantize(x_ref, transposed=transposed, **kwargs)
        torch.cuda.synchronize()
        codes = ours.codes().cpu().numpy()
        assert codes.shape == ref.data.shape, where
        differ = codes != ref.data
        assert not differ.any(), f"{where}: data {first_mismatch(codes, ref.data, differ)}"
        scale_inv = ours.scale_inv.cpu().numpy()
        assert scale_inv.shape == ref.scale_inv.shape, where
        differ = bits(scale_inv) != bits(ref.scale_inv)
        assert not differ.any(), f"{where}: scale_inv {first_mismatch(scale_inv, ref.scale_inv, differ)}"
        assert same_floats(ours.amax.cpu().numpy(), ref.amax), f"{where}: amax"
        # The dequantization the GEMM checks rely on.
        assert same_floats(ours.dequantize(torch.float32).cpu().numpy(), ref.dequantize()), where


@pytest.mark.gpu
def test_per_recipe_wrappers(torch, tr):
    """quantize_current / _delayed / _blockwise: (data, scale_inv) with the
    recipe defaults (blockwise amax clamp 1e-4)."""
    x_np = awkward_input(129, 257, False, SEED)
    x = torch.from_numpy(x_np).cuda()
    for ours, ref in [
            (tr.quantize_current(x, "e5m2", True), numerics.quantize(x_np, "current", "e5m2", transposed=True)),
            (tr.quantize_delayed(x, 0.25), numerics.quantize(x_np, "delayed", scale=0.25)),
            (tr.quantize_blockwise(x, (128, 128)),
             numerics.quantize(x_np, "blockwise", granularity=(128, 128), amax_clamp=1e-4))]:
        assert np.array_equal(ours[0].view(torch.uint8).cpu().numpy(), ref.data)
        assert np.array_equal(bits(ours[1].cpu().numpy()), bits(ref.scale_inv))


@pytest.mark.gpu
@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_scale_rules_match_numpy(torch, tr, fmt):
    amax = torch.from_numpy(SPECIAL_AMAX).cuda()
    for eps, pow2 in [(0.0, False), (0.0, True), (1e-3, False)]:
        ours = tr.current_scale(amax, fmt, eps, pow2).cpu().numpy()
        assert same_floats(ours, numerics.current_scaling_scale(SPECIAL_AMAX, fmt, eps, pow2)), \
            (eps, pow2, ours)
        assert same_floats(tr.scale_inverse(torch.from_numpy(ours).cuda()).cpu().numpy(),
                           numerics.scale_inverse(ours))
    for kind in ("pow2", "f32"):
        for clamp in (0.0, 1e-4):
            scale, scale_inv = tr.blockwise_scales(amax, kind, clamp)
            ref_scale, ref_inv = numerics.blockwise_scale(SPECIAL_AMAX, kind, clamp)
            assert same_floats(scale.cpu().numpy(), ref_scale), (kind, clamp)
            assert same_floats(scale_inv.cpu().numpy(), ref_inv), (kind, clamp)
    for margin in (0, 3):
        for previous in (1.0, 0.5, np.inf):
            ours = tr.delayed_scale(amax, torch.full_like(amax, previous), fmt, margin).cpu().numpy()
            ref = [numerics.delayed_scaling_scale(a, previous, fmt, margin) for a in SPECIAL_AMAX]
            assert same_floats(ours, np.array(ref, np.float32)), (margin, previous, ours)


HISTORIES = np.array([[0, 0, 0, 0], [1, np.nan, 3, 2], [np.nan] * 4, [0, 5, np.inf, 1],
                      [2, 0, 0, 7]], dtype=np.float32)


@pytest.mark.gpu
def test_amax_history_rules(torch, tr):
    h = torch.from_numpy(HISTORIES).cuda()
    for algo in ("max", "most_recent"):
        ours = tr.history_amax(h, algo).cpu().numpy()
        ref = np.array([numerics.history_amax(row, algo) for row in HISTORIES], np.float32)
        assert same_floats(ours, ref), (algo, ours, ref)
    # record (NaN sticky, else max into slot 0), then roll (include/FP8/Numerics/Scaling.h).
    amax = np.array([3.0, 0.5, 1.0, np.nan, 0.0], np.float32)
    expected = HISTORIES.copy()
    for row, a in zip(expected, amax):
        row[0] = np.nan if np.isnan(row[0]) or np.isnan(a) else max(row[0], a)
    tr.record_amax(h, torch.from_numpy(amax).cuda())
    assert same_floats(h.cpu().numpy(), expected)
    expected = np.roll(expected, -1, axis=1)
    expected[:, 0] = 0
    tr.roll_history(h)
    assert same_floats(h.cpu().numpy(), expected)


# --- TorchFP8Linear ------------------------------------------------------------------

LINEAR_SHAPES = [  # (leading dims of x, in_features, out_features, bias)
    ((2, 50), 200, 136, True),     # M = 100, K and N not multiples of 16
    ((256,), 512, 384, False),
    ((3, 111), 384, 640, True),    # M = 333
]


def rel_fro(out, ref):
    out, ref = out.double().reshape(ref.shape), ref.double()
    return ((out - ref).norm() / ref.norm()).item()


def worst_row(out, ref):
    out, ref = out.double().reshape(ref.shape), ref.double()
    scale = ref.norm() / math.sqrt(ref.shape[0])
    return ((out - ref).norm(dim=1).max() / scale).item()


def expected_operands(tr, layer, x, w, dy, scales):
    """The FP8 operands the recipe prescribes, quantized here with the same
    functions (checked against NumPy above): (X, W, dY, dY^T, X^T)."""
    r = layer.recipe
    if r.name == "blockwise":
        def q(t, tile, transposed=False):
            return tr.quantize(t, "blockwise", "e4m3", tile, transposed, scales=r.scales,
                               amax_clamp=r.amax_clamp)
        return (q(x, (1, 128)), q(w, (128, 128)), q(dy, (1, 128)),
                q(dy, (1, 128), True), q(x, (1, 128), True))
    if r.name == "current":
        def q(t, fmt, _):
            return tr.quantize(t, "current", fmt, epsilon=r.epsilon, pow2=r.pow2)
    else:
        def q(t, fmt, i):
            return tr.quantize(t, "delayed", fmt, scale=scales[i])
    qx, qw, qdy = q(x, "e4m3", 0), q(w, "e4m3", 1), q(dy, r.grad_format, 2)
    return qx, qw, qdy, qdy.transposed(), qx.transposed()


def numpy_delayed_step(scales, history, amaxes, recipe):
    """fp8mlir.numerics' delayed-scaling rules for one step, on copies."""
    scales, history = scales.copy(), history.copy()
    formats = ("e4m3", "e4m3", recipe.grad_format)
    for i, a in enumerate(amaxes):
        h0 = history[i, 0]
        history[i, 0] = np.nan if np.isnan(h0) or np.isnan(a) else max(h0, a)
        amax = numerics.history_amax(history[i], recipe.algo)
        scales[i] = numerics.delayed_scaling_scale(amax, scales[i], formats[i], recipe.margin)
        history[i] = np.roll(history[i], -1)
        history[i, 0] = 0
    return scales, history


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["autocast", "bf16"])
@pytest.mark.parametrize("recipe", ["current", "delayed", "blockwise"])
@pytest.mark.parametrize("shape", LINEAR_SHAPES, ids=lambda s: f"m{math.prod(s[0])}-k{s[1]}-n{s[2]}")
def test_linear_against_dequantized_f64_and_bf16(torch, tr, shape, recipe, mode):
    """Three training steps: each step's outputs against the f64 product of
    the dequantized operands; the last step's against BF16 nn.Linear."""
    lead, k, n, bias = shape
    param_dtype = torch.float32 if mode == "autocast" else torch.bfloat16
    options = dict(history=4) if recipe == "delayed" else {}
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    layer = tr.TorchFP8Linear(k, n, bias=bias, recipe=recipe, device="cuda", dtype=param_dtype,
                              **options)
    reference = torch.nn.Linear(k, n, bias=bias, device="cuda", dtype=param_dtype)
    reference.load_state_dict(layer.state_dict(), strict=False)
    where = f"{recipe} {mode} {shape} seed={SEED}"
    for step in range(3):
        x = torch.randn(*lead, k, device="cuda", generator=gen) * (1 + step)
        dy = torch.randn(*lead, n, device="cuda", generator=gen) * 1e-3
        if mode == "bf16":
            x = x.to(torch.bfloat16)
        dy = dy.to(torch.bfloat16)
        x_ours, x_ref = x.clone().requires_grad_(), x.clone().requires_grad_()
        state = (layer.fp8_scale.clone(), layer.amax_history.clone()) if recipe == "delayed" else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # reported by tr._fallback_warned
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode == "autocast"):
                y = layer(x_ours)
            y.backward(dy)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=mode == "autocast"):
            y_bf16 = reference(x_ref)
        y_bf16.backward(dy)
        torch.cuda.synchronize()

        x_in = x.reshape(-1, k).to(torch.bfloat16)  # what the layer quantizes
        dy2 = dy.reshape(-1, n)
        qx, qw, qdy, qdy_t, qx_t = expected_operands(tr, layer, x_in, layer.weight.detach(), dy2,
                                                    None if state is None else state[0])
        ref_y = qx.dequantize() @ qw.dequantize().t()
        if bias:
            ref_y = ref_y + layer.bias.detach().double()
        ref_dx = qdy.dequantize() @ qw.dequantize()
        ref_dw = qdy_t.dequantize() @ qx_t.dequantize().t()
        dw_dtype = str(param_dtype).removeprefix("torch.")
        if tr._fallback_warned:  # F.scaled_mm gave bf16 instead of an f32 dW
            dw_dtype = "bfloat16"
        for what, out, ref, tol in [("y", y, ref_y, GEMM_TOLERANCE["bfloat16"]),
                                    ("dx", x_ours.grad, ref_dx, GEMM_TOLERANCE["bfloat16"]),
                                    ("dw", layer.weight.grad, ref_dw, GEMM_TOLERANCE[dw_dtype])]:
            assert torch.isfinite(out).all(), f"{where} step {step}: {what} not finite"
            err, row = rel_fro(out, ref), worst_row(out, ref)
            assert err <= tol and row <= ROW_FACTOR * tol, \
                f"{where} step {step}: {what} rel err {err:.2e} (worst row {row:.2e}) > {tol:.0e}"
        if bias:
            db = dy2.float().sum(0)
            assert rel_fro(layer.bias.grad, db) <= 1e-2, where  # in the bias dtype
        if recipe == "delayed":
            amaxes = [t.abs().max().float().item() for t in (x_in, layer.weight.detach(), dy2)]
            scales, history = numpy_delayed_step(state[0].cpu().numpy(), state[1].cpu().numpy(),
                                                 amaxes, layer.recipe)
            assert same_floats(layer.fp8_scale.cpu().numpy(), scales), f"{where} step {step}"
            assert same_floats(layer.amax_history.cpu().numpy(), history), f"{where} step {step}"
        if step == 2:
            for what, out, ref in [("y", y, y_bf16), ("dx", x_ours.grad, x_ref.grad),
                                   ("dw", layer.weight.grad, reference.weight.grad)]:
                err = rel_fro(out, ref.detach())
                assert err <= BF16_BOUND[what], f"{where}: {what} vs BF16 nn.Linear {err:.3f}"
        layer.weight.grad = reference.weight.grad = None
        if bias:
            layer.bias.grad = reference.bias.grad = None


@pytest.mark.gpu
def test_delayed_state_is_untouched_by_evaluation(torch, tr):
    layer = tr.TorchFP8Linear(256, 128, recipe="delayed", history=8, device="cuda")
    x = torch.randn(64, 256, device="cuda")
    layer(x.requires_grad_()).sum().backward()
    state = {k: v.clone() for k, v in layer.state_dict().items()}
    assert set(state) == {"weight", "bias", "fp8_scale", "amax_history"}
    with torch.no_grad():
        layer(x * 100)
    layer.eval()
    layer(x * 100)
    for key, value in layer.state_dict().items():
        assert torch.equal(value, state[key]), key
