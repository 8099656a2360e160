"""fp8mlir.nn.GroupedLinear on a GPU (marked `gpu`): the expert layer of
the DeepSeek-V3 blockwise recipe against its plain-PyTorch reference
(fp8mlir.testing.grouped_linear_reference: the recipe's quantizations in
eager ops, per-expert f64 GEMMs of the quantized operands) and against
BF16, with uneven, empty and single-token experts:

- the experts' weight quantization (a batch of matrices in 128x128 tiles:
  the rowwise copy and each expert's transpose, dgrad's operand): FP8 bytes
  and scales bit for bit;
- the forward (inference: any token count): Y;
- a training step (forward and backward): Y, dX and dW (the weight
  gradient is the K-grouped grouped GEMM).

The modules come from the kernel cache ($FP8MLIR_KERNEL_CACHE), filled on
the build machine:

    PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate CACHE --suite grouped-linear

then on the GPU machine:

    FP8MLIR_KERNEL_CACHE=CACHE python3 -m pytest -m gpu python/tests/test_gpu_grouped_linear.py
"""

import pytest

from fp8mlir.testing import grouped_linear_cases as cases

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

# Relative Frobenius error against the reference: the same FP8 operands,
# f32 accumulation in another order (promoted every 128), one rounding.
GEMM_TOLERANCE = 1e-2
# Against BF16: the quantization error an FP8 user accepts (E4M3 blocks).
BF16_BOUND = {"y": 0.08, "dx": 0.15, "dw": 0.15}


@pytest.fixture(autouse=True)
def _modules_from_the_table(monkeypatch):
    """Every module a test loads must be in grouped_linear_cases (what the
    populate suite compiles into the GPU machine's cache)."""
    if not torch.cuda.is_available():
        pytest.fail("no CUDA device: GPU tests must run on a GPU machine")
    from fp8mlir.ops import KernelCache
    allowed = {s.cache_key for s in cases.all_modules()}
    module = KernelCache.module

    def module_in_table(cache, spec):
        assert spec.cache_key in allowed, (
            f"{spec.cache_key} is not in fp8mlir.testing.grouped_linear_cases (add it there so "
            f"that the populate suite compiles it)")
        return module(cache, spec)
    monkeypatch.setattr(KernelCache, "module", module_in_table)


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def make(name, seed=0):
    """(layer, inputs, reference) of a test layer."""
    import fp8mlir.nn
    from fp8mlir.testing.grouped_linear_reference import GroupedLinearReference, make_inputs
    groups, n, k, tokens = cases.LAYERS[name]
    x, w, index, sizes, dy = make_inputs(groups, n, k, tokens, seed=seed)
    layer = fp8mlir.nn.GroupedLinear(groups, k, n, device="cuda", dtype=torch.bfloat16)
    with torch.no_grad():
        layer.weight.copy_(w)
    return layer, (x, w, index, sizes, dy), GroupedLinearReference(x, w, index, sizes)


def bf16_reference(x, w, ref, dy=None):
    """Per-expert GEMMs of the unquantized operands (f64)."""
    y = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float64, device=x.device)
    for g, rows in ref.expert_blocks():
        y[rows] = x[rows].double() @ w[g].double().t()
    return y


@pytest.mark.parametrize("shape", sorted({layer[:3] for layer in cases.LAYERS.values()}))
def test_weight_quantization_bytes(shape):
    """Each expert's 128x128 tiles, rowwise and transposed: bit for bit."""
    from fp8mlir.ops import _cache
    from fp8mlir.testing.grouped_linear_reference import GroupedLinearReference, make_inputs
    groups, n, k = shape
    _, w, index, sizes, _ = make_inputs(groups, n, k, (128,) * groups)
    x = torch.zeros(index.shape[0], k, dtype=torch.bfloat16, device="cuda")
    module = _cache(None).module(cases.WeightQuantization(groups, n, k))
    q, s, qt, st = module["quantize"](w=w)
    ref = GroupedLinearReference(x, w, index, sizes)
    for g in range(groups):
        assert torch.equal(q[g].view(torch.uint8), ref.qw[g].codes()), f"expert {g} rowwise"
        assert torch.equal(s[g], ref.qw[g].scale_inv), f"expert {g} rowwise scales"
    codes, scales = ref.quantized_weight_columnwise()
    assert torch.equal(qt.view(torch.uint8), codes), "the experts' transposes"
    assert torch.equal(st, scales), "the experts' transposed scales"


@pytest.mark.parametrize("name", list(cases.LAYERS))
def test_forward(name):
    layer, (x, w, index, _, _), ref = make(name)
    with torch.no_grad():
        y = layer(x, index)
    valid = ref.valid_rows()
    expected = ref.forward()
    assert rel(y[valid], expected[valid]) < GEMM_TOLERANCE
    assert rel(y[valid], bf16_reference(x, w, ref)[valid]) < BF16_BOUND["y"]
    # Padding rows of an expert's last block are products of zero rows.
    assert torch.all(y[valid][(x[valid] == 0).all(dim=1)] == 0)


def _training_step(layer, x, index, sizes, dy, step):
    """Forward and backward through autograd; a module that does not
    load fails the test with the reason."""
    x = x.clone().requires_grad_(True)
    try:
        y = layer(x, index, sizes)
    except Exception as error:  # noqa: BLE001 - reported as the failure
        pytest.fail(f"the training module {step.cache_key} did not load: {error}\n(compile "
                    f"the cache with fp8mlir.populate --suite grouped-linear)")
    y.backward(dy)
    return y.detach(), x.grad, layer.weight.grad


@pytest.mark.parametrize("name", list(cases.LAYERS))
def test_training_step(name):
    layer, (x, w, index, sizes, dy), ref = make(name)
    step = cases.layer_steps(name)[1]
    y, dx, dw = _training_step(layer, x, index, sizes, dy, step)
    valid = ref.valid_rows()
    expected_dx, expected_dw = ref.backward(dy)
    assert rel(y[valid], ref.forward()[valid]) < GEMM_TOLERANCE
    assert rel(dx[valid], expected_dx[valid]) < GEMM_TOLERANCE
    assert rel(dw, expected_dw) < GEMM_TOLERANCE
    # An expert without tokens has a zero gradient.
    for g, t in enumerate(cases.LAYERS[name][3]):
        if t == 0:
            assert torch.all(dw[g] == 0), f"expert {g} has no tokens"
    # Against BF16 autograd of the same per-expert GEMMs.
    xb = x.clone().double().requires_grad_(True)
    wb = w.double().clone().requires_grad_(True)
    yb = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float64, device=x.device)
    for g, rows in ref.expert_blocks():
        yb[rows] = xb[rows] @ wb[g].t()
    yb.backward(dy.double())
    assert rel(y[valid], yb.detach()[valid]) < BF16_BOUND["y"]
    assert rel(dx[valid], xb.grad[valid]) < BF16_BOUND["dx"]
    assert rel(dw, wb.grad) < BF16_BOUND["dw"]


def test_group_sizes_from_index():
    """Without group_sizes the layer counts each expert's 128-row blocks."""
    layer, (x, _, index, sizes, _), _ = make("wide")
    assert torch.equal(layer.group_sizes(index), sizes)
