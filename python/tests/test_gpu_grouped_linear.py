"""fp8mlir.nn.GroupedLinear on a GPU (marked `gpu`): the expert layer of
the DeepSeek-V3 blockwise recipe against its plain-PyTorch reference
(fp8mlir.testing.grouped_linear_reference: the recipe's quantizations in
eager ops, per-expert f64 GEMMs of the quantized operands) and against
BF16, with uneven, empty and single-token experts:

- the experts' weight quantization (a batch of matrices in 128x128 tiles:
  the rowwise copy and each expert's transpose, dgrad's operand): FP8 bytes
  and scales bit for bit;
- the forward (inference: any token count): Y;
- a training step (forward and backward): Y and dX of every expert's rows
  and dW of every expert (the weight gradient is the K-grouped grouped
  GEMM; an expert without tokens gets zeros), and the FP8 copies the
  forward saves for the backward (X^T in 1x128 blocks, each expert's
  transposed weight) bit for bit;
- M not a multiple of 128 (the last expert unpadded): the training step
  pads it to the same bits, the forward alone runs it as it is.

The modules come from the kernel cache ($FP8MLIR_KERNEL_CACHE), filled on
the build machine:

    PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate CACHE --suite grouped-linear

then on the GPU machine:

    FP8MLIR_KERNEL_CACHE=CACHE python3 -m pytest -m gpu python/tests/test_gpu_grouped_linear.py
"""

import pytest

from fp8mlir.testing import grouped_linear_cases as cases
from torch_ops_util import only_modules_of

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
    only_modules_of(monkeypatch, cases.all_modules(), "fp8mlir.testing.grouped_linear_cases")


def rel(a, b):
    a, b = a.double(), b.double()
    return ((a - b).norm() / b.norm().clamp_min(1e-30)).item()


def expert_rows(ref):
    """{expert: its rows (a bool [M] mask)} for every expert with tokens."""
    rows = {}
    for g, block in ref.expert_blocks():
        mask = rows.setdefault(g, torch.zeros(ref.x.shape[0], dtype=torch.bool,
                                              device=ref.x.device))
        mask[block] = True
    return rows


def assert_per_expert(what, got, want, ref, tolerance=GEMM_TOLERANCE):
    """Rows [M, ...] of every expert with tokens, each within `tolerance`."""
    for g, mask in expert_rows(ref).items():
        error = rel(got[mask], want[mask])
        assert error < tolerance, f"{what} of expert {g}: relative error {error:.3g}"


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
    assert_per_expert("Y", y, expected, ref)
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
    assert_per_expert("Y", y, ref.forward(), ref)
    assert_per_expert("dX", dx, expected_dx, ref)
    for g, t in enumerate(cases.LAYERS[name][3]):
        if t == 0:  # an expert without tokens has a zero gradient
            assert torch.all(dw[g] == 0), f"dW of expert {g} (no tokens) is not zero"
        else:
            error = rel(dw[g], expected_dw[g])
            assert error < GEMM_TOLERANCE, f"dW of expert {g}: relative error {error:.3g}"
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


@pytest.mark.parametrize("name", list(cases.LAYERS))
def test_saved_tensors_bytes(name):
    """What the forward saves for the backward, bit for bit: X's 1x128
    quantization along the tokens (X^T [K, M], scales [M/128, K]) and each
    expert's transposed weight in 128x128 tiles."""
    from fp8mlir import _grouped_linear_ops
    layer, (x, w, index, _, _), ref = make(name)
    step = _grouped_linear_ops.step_for(layer.signature(x.dtype), x.shape[0], x.device)
    with torch.no_grad():
        outs = step.forward(x=x, w=w, group_index=index)
    saved = {n: outs[step.forward_results[n]] for n in step.saved}
    codes, scales = ref.quantized_input_columnwise()
    assert torch.equal(saved["x_columnwise"].view(torch.uint8), codes), "X^T bytes"
    assert torch.equal(saved["x_columnwise_scale_inv"].t(), scales), "X^T scales"
    codes, scales = ref.quantized_weight_columnwise()
    assert torch.equal(saved["w_columnwise"].view(torch.uint8), codes), "W[g]^T bytes"
    assert torch.equal(saved["w_columnwise_scale_inv"], scales), "W[g]^T scales"


def _unpadded_tail():
    """(layer, inputs, reference, M) of the "uneven" layer with its last
    expert's padding rows left off (M not a multiple of 128)."""
    layer, inputs, ref = make("uneven")
    x, _, index, sizes, _ = inputs
    m = int(sizes.sum()) - 128 + 1  # the last expert's 129 tokens, no padding
    assert m % 128 and torch.all(x[m:] == 0) and index[m - 1] == len(sizes) - 1
    return layer, inputs, ref, m


def test_unpadded_tail_training_step():
    """M need not be a multiple of 128: the training step pads the last
    expert's rows back (the same module, the same bits)."""
    layer, (x, _, index, sizes, dy), _, m = _unpadded_tail()
    step = cases.layer_steps("uneven")[1]
    padded = _training_step(layer, x, index, sizes, dy, step)
    layer.weight.grad = None
    tail = _training_step(layer, x[:m], index[:m], sizes, dy[:m], step)
    for what, full, cut in zip(("Y", "dX"), padded[:2], tail[:2]):
        assert cut.shape[0] == m, f"{what} has {cut.shape[0]} rows, expected {m}"
        assert torch.equal(cut, full[:m]), f"{what} differs from the padded step's"
    assert torch.equal(tail[2], padded[2]), "dW differs from the padded step's"


def test_group_sizes_from_index():
    """Without group_sizes the layer counts each expert's 128-row blocks."""
    layer, (x, _, index, sizes, _), _ = make("wide")
    assert torch.equal(layer.group_sizes(index), sizes)


# Last in the file: the only test whose grouped GEMM has a partial last
# 128-row block (a fault there would not take the other tests with it).
def test_unpadded_tail_forward_alone():
    """The forward alone (no autograd) runs the M it is given, not a
    multiple of 128: every expert's rows against the reference."""
    layer, (x, _, index, _, _), ref, m = _unpadded_tail()
    with torch.no_grad():
        y = layer(x[:m], index[:m])
    assert y.shape[0] == m
    expected = ref.forward()[:m]
    for g, mask in expert_rows(ref).items():
        rows = mask[:m]
        error = rel(y[rows], expected[rows])
        assert error < GEMM_TOLERANCE, f"Y of expert {g} (forward alone, M = {m}): {error:.3g}"
