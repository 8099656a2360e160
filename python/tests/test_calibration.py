"""Delayed-scaling calibration (fp8mlir.calibrating, fp8mlir.calibration)
on the CPU: the state update bit for bit against the plain-PyTorch
reference (testing/torch_recipes) and the NumPy one (fp8mlir.numerics),
a calibration step of fp8mlir.nn.Linear (outputs and gradients of F.linear,
the state the reference's update gives for the same amaxes), and the
context manager's rules. Needs torch (skipped without it), no GPU: a
calibrating layer runs F.linear, no kernel. The GPU side (a calibration
step, then FP8 steps against the reference) is in test_gpu_linear.py."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fp8mlir  # noqa: E402
import fp8mlir.nn  # noqa: E402
from fp8mlir import numerics  # noqa: E402
from fp8mlir.calibration import update_state  # noqa: E402
from fp8mlir.testing import torch_recipes as tr  # noqa: E402

FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
NAN, INF = math.nan, math.inf

# (history before, previous scale, this step's amax, format)
UPDATES = [
    ([0.0] * 8, 1.0, 3.5, "e4m3"),                      # the first step
    ([0.0, 9.0, 2.0, 0.5, 0, 0, 0, 0], 7.0, 3.0, "e4m3"),  # an older, larger amax wins
    ([0.0] * 8, 2.0, 0.0, "e4m3"),                      # all zero: the scale stays
    ([0.0, 4.0, 0, 0, 0, 0, 0, 0], 3.0, NAN, "e4m3"),   # NaN recorded, skipped by max
    ([0.0] * 8, 5.0, NAN, "e5m2"),                      # only NaN: the scale stays
    ([0.0, 1.0, 0, 0, 0, 0, 0, 0], 5.0, INF, "e4m3"),   # inf: the scale stays
    ([0.0] * 8, 1.0, 1e-45, "e4m3"),                    # quotient overflows: FLT_MAX
    ([0.0] * 8, 1.0, 1.2e-5, "e5m2"),                   # a small gradient: a large scale
    ([1.5], 1.0, 0.25, "e4m3"),                         # history of 1: slot 0 is max(1.5, .25)
    ([0.75, 0.0, 3.0, 0.0], 9.0, 0.5, "e5m2"),          # slot 0 already holds an amax
]


def reference_update(history, scale, amax, fmt):
    """torch_recipes' bookkeeping: record, scale rule, roll."""
    history, scale = history.clone(), scale.clone()
    tr.record_amax(history, amax)
    limit = torch.tensor(FP8_MAX[fmt], dtype=torch.float32)
    scale = tr._delayed_scale_from_max(tr.history_amax(history), scale, limit)
    tr.roll_history(history)
    return history, scale


@pytest.mark.parametrize("before, scale, amax, fmt", UPDATES)
def test_update_state_matches_the_references(before, scale, amax, fmt):
    history = torch.tensor(before, dtype=torch.float32)
    scale_t = torch.tensor(scale, dtype=torch.float32)
    amax_t = torch.tensor(amax, dtype=torch.float32)
    want_history, want_scale = reference_update(history, scale_t, amax_t, fmt)
    update_state(history, scale_t, amax_t, FP8_MAX[fmt])
    torch.testing.assert_close(history, want_history, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(scale_t, want_scale, rtol=0, atol=0)
    # NumPy: the same rule from the recorded history.
    recorded = np.array(before, dtype=np.float32)
    recorded[0] = np.float32(np.nan) if math.isnan(amax) or math.isnan(recorded[0]) else max(
        recorded[0], np.float32(amax))
    np_scale = numerics.delayed_scaling_scale(numerics.history_amax(recorded), scale, fmt)
    assert scale_t.item() == float(np_scale), (scale_t.item(), float(np_scale))


def make_layer(recipe="delayed", k=64, n=32, seed=0, **options):
    torch.manual_seed(seed)
    layer = fp8mlir.nn.Linear(k, n, recipe=recipe, **options)
    plain = torch.nn.Linear(k, n, bias=layer.bias is not None)
    with torch.no_grad():
        plain.weight.copy_(layer.weight)
        if layer.bias is not None:
            plain.bias.copy_(layer.bias)
    return layer, plain


def reference_for(layer):
    fmt = {} if layer.format is None else {"format": layer.format}
    return tr.TorchFP8Linear(layer.in_features, layer.out_features, bias=False,
                             recipe="delayed", history=layer.history, **fmt)


def assert_state(layer, ref):
    for i, t in enumerate(("x", "w", "dy")):
        torch.testing.assert_close(getattr(layer, f"{t}_scale"), ref.fp8_scale[i], rtol=0,
                                   atol=0, msg=f"{t}_scale")
        torch.testing.assert_close(getattr(layer, f"{t}_amax_history"), ref.amax_history[i],
                                   rtol=0, atol=0, msg=f"{t}_amax_history")


def step(layer, x, dy, autocast=False):
    x = x.detach().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        y = layer(x)
    y.backward(dy)
    return y.detach(), x.grad


@pytest.mark.parametrize("fmt", ["hybrid", "e4m3"])
def test_calibration_step_is_f_linear_and_records_the_state(fmt):
    layer, plain = make_layer(format=fmt, history=16)
    ref = reference_for(layer)
    gen = torch.Generator().manual_seed(1)
    for scale in (3.0, 0.5):  # two steps: the second sees the rolled history
        x = scale * torch.randn(3, 5, 64, generator=gen)
        dy = 1e-5 * torch.randn(3, 5, 32, generator=gen)
        with fp8mlir.calibrating(layer):
            got = step(layer, x, dy)
        want = step(plain, x, dy)
        for what, g, w in zip(("y", "dx"), got, want):
            torch.testing.assert_close(g, w, msg=what)
        torch.testing.assert_close(layer.weight.grad, plain.weight.grad)
        torch.testing.assert_close(layer.bias.grad, plain.bias.grad)
        ref.record_and_update(x.reshape(-1, 64), layer.weight, dy.reshape(-1, 32))
        assert_state(layer, ref)
        layer.zero_grad(set_to_none=True)
        plain.zero_grad(set_to_none=True)
    expected = FP8_MAX["e5m2" if fmt == "hybrid" else "e4m3"]
    assert layer.dy_scale.item() > expected, "dY's scale did not come from its small amax"


def test_calibration_under_autocast_records_the_compute_dtype():
    """Under autocast X is cast to the autocast dtype (its amax is the
    bf16 X's), W keeps its dtype; Y and dX in bf16, dW in W's dtype."""
    layer, _ = make_layer(history=4)
    ref = reference_for(layer)
    x = torch.randn(40, 64) * 7
    dy = torch.randn(40, 32, dtype=torch.bfloat16)
    with fp8mlir.calibrating(layer):
        y, dx = step(layer, x, dy, autocast=True)
    assert y.dtype == torch.bfloat16 and layer.weight.grad.dtype == torch.float32
    ref.record_and_update(x.bfloat16(), layer.weight, dy)
    assert_state(layer, ref)


def test_calibration_accumulates_the_main_gradient():
    layer, plain = make_layer(main_grad=True, bias=False)
    x, dy = torch.randn(16, 64), torch.randn(16, 32)
    layer.weight.main_grad = torch.ones(32, 64)
    with fp8mlir.calibrating(layer):
        step(layer, x, dy)
    step(plain, x, dy)
    assert layer.weight.grad is None
    torch.testing.assert_close(layer.weight.main_grad, 1 + plain.weight.grad)


def test_calibration_without_autograd_records_x_and_w_only():
    layer, plain = make_layer(history=8)
    ref = reference_for(layer)
    x = torch.randn(10, 64)
    layer.eval()
    with fp8mlir.calibrating(layer), torch.no_grad():
        torch.testing.assert_close(layer(x), plain(x))
        assert layer(x[:0]).shape == (0, 32)  # no tokens: nothing recorded
    zero_dy = torch.zeros(1, 32)  # an amax of 0 leaves dY's scale, history only rolls
    ref.record_and_update(x, layer.weight, zero_dy)
    for i, t in enumerate(("x", "w")):
        assert torch.equal(getattr(layer, f"{t}_scale"), ref.fp8_scale[i]), t
        assert torch.equal(getattr(layer, f"{t}_amax_history"), ref.amax_history[i]), t
    assert layer.dy_scale.item() == 1.0 and not layer.dy_amax_history.any()


def test_backward_follows_its_forward():
    """A forward under calibration records dY in its backward, even after
    the context has ended."""
    layer, _ = make_layer(history=4)
    x = torch.randn(8, 64, requires_grad=True)
    with fp8mlir.calibrating(layer):
        y = layer(x)
    assert not layer.calibrating
    y.backward(torch.full((8, 32), 2.0))
    assert layer.dy_amax_history[-1].item() == 2.0  # recorded, then rolled


def test_context_sets_and_restores_the_mode():
    model = torch.nn.Sequential(fp8mlir.nn.Linear(64, 64, recipe="delayed"), torch.nn.ReLU(),
                                fp8mlir.nn.Linear(64, 32, recipe="current"),
                                fp8mlir.nn.Linear(32, 16, recipe="delayed"))
    with fp8mlir.calibrating(model) as inside:
        assert inside is model
        assert [getattr(m, "calibrating", None) for m in model] == [True, None, False, True]
        assert "calibrating=True" in repr(model[0])
        with fp8mlir.calibrating(model[3], enabled=False):
            assert model[3].calibrating  # enabled=False changes nothing
        with fp8mlir.calibrating(model[3]):
            pass
        assert model[3].calibrating  # an inner context restores the outer mode
    assert not model[0].calibrating and not model[3].calibrating
    with pytest.raises(RuntimeError, match="boom"):
        with fp8mlir.calibrating(model):
            raise RuntimeError("boom")
    assert not model[0].calibrating
    with fp8mlir.calibrating(model, enabled=False):
        assert not model[0].calibrating
    assert fp8mlir.calibrating is fp8mlir.nn.calibrating


def test_context_rejects_models_without_delayed_layers():
    current = torch.nn.Sequential(fp8mlir.nn.Linear(64, 64, recipe="current"),
                                  fp8mlir.nn.Linear(64, 64, recipe="blockwise"))
    with pytest.raises(ValueError, match="recipe='delayed'.*use blockwise, current"):
        with fp8mlir.calibrating(current):
            pass
    with pytest.raises(ValueError, match="no fp8mlir.nn.Linear"):
        with fp8mlir.calibrating(torch.nn.Linear(4, 4)):
            pass
    with pytest.raises(TypeError, match="nn.Module"):
        with fp8mlir.calibrating([current]):
            pass


def test_calibrating_a_layer_of_another_recipe_is_an_error():
    layer = fp8mlir.nn.Linear(64, 32, recipe="current")
    layer.calibrating = True  # by hand: the context skips such layers
    with pytest.raises(ValueError, match="recipe 'current'.*recipe='delayed'"):
        layer(torch.randn(4, 64))


def test_outside_calibration_the_layer_needs_cuda():
    layer, _ = make_layer()
    with pytest.raises(ValueError, match="CUDA"):
        layer(torch.randn(4, 64))
