"""Delayed-scaling calibration: ``fp8mlir.calibrating(model)``.

    with fp8mlir.calibrating(model):
        loss = loss_fn(model(x), target)
        loss.backward()          # a high-precision step that fills the state

Delayed scaling quantizes each step with scales computed from the amaxes of
the previous steps; a fresh layer has empty amax histories and scales of
1.0, so its first FP8 step casts with scales unrelated to the data (small
gradients flush to zero in E5M2 and that step's update is lost).
TransformerEngine's remedy is calibration (``fp8_autocast(enabled=False,
calibrating=True)``): steps computed in high precision that record the
amaxes. Inside ``calibrating(model)`` every ``fp8mlir.nn.Linear`` of the
delayed recipe computes ``F.linear`` in the compute dtype (the backward
too: dX = dY W, dW = dY^T X) and updates its delayed-scaling state exactly
as a compiled FP8 step does (fp8.update_amax_history + fp8.compute_scale):
the forward records X's and W's amaxes into slot 0 of their histories,
computes their next scales and rolls the histories; the backward does the
same for dY. The next FP8 step then starts from the scales of real data.

Rules: the mode is a layer's attribute ``calibrating``, read at the
forward (a backward runs the way its forward ran, inside the context or
not). A calibrating forward records in training and in evaluation, with
and without autograd (calibrating an inference checkpoint runs under
``torch.no_grad()``); without autograd nothing records dY. A forward of
no tokens records nothing. Layers of the other recipes compute their
scales from each step's data and have no state to calibrate: they run as
usual (FP8); a model without any delayed layer is an error (the context
would do nothing). Calibration runs wherever F.linear does (also on the
CPU), with no kernel.
"""

import contextlib

import torch
import torch.nn.functional as F

from .linear_step import element_format
from .numerics import max_finite


def _fp8_max(layer, tensor):
    """fp8.compute_scale of #fp8.delayed<history = L> (margin 0, amax
    "max"): the scale is this / amax, the largest finite value of the
    format `tensor` is cast to."""
    return max_finite(element_format(layer.format, tensor))


@torch.no_grad()
def update_state(history, scale, amax, fp8_max):
    """One tensor's delayed-scaling update, in place, as a compiled step
    does it: history[0] = max(history[0], amax) (a NaN is kept); the
    history's amax (the max of its slots that are not NaN) gives
    scale = fp8_max / amax when it is finite and positive, else the scale
    stays; an infinite scale becomes FLT_MAX; then the history rolls left
    by one with slot 0 cleared (new[i] = old[i + 1], new[L - 1] = old[0]).
    All arithmetic in f32."""
    history[0] = torch.maximum(history[0], amax.float())  # maximum propagates NaN
    slots = torch.where(torch.isnan(history), float("-inf"), history)
    reduced = slots.amax()
    usable = torch.isfinite(reduced) & (reduced > 0)
    limit = torch.full_like(reduced, fp8_max)
    divisor = torch.where(usable, reduced, torch.ones_like(reduced))
    proposed = torch.where(usable, limit / divisor, scale)
    flt_max = torch.full_like(proposed, torch.finfo(torch.float32).max)
    scale.copy_(torch.where(torch.isinf(proposed), flt_max, proposed))
    rolled = torch.roll(history, -1)
    rolled[0] = 0.0
    history.copy_(rolled)


def _amax(t):
    """max |t| in f32, NaN-propagating (exact: a max rounds nothing)."""
    return t.detach().abs().amax().float()


def _record_forward(layer, x, weight):
    update_state(layer.x_amax_history, layer.x_scale, _amax(x), _fp8_max(layer, "x"))
    update_state(layer.w_amax_history, layer.w_scale, _amax(weight), _fp8_max(layer, "w"))


class _CalibrationFunction(torch.autograd.Function):
    """Y = X W^T (+ b) in X's dtype, recording X's and W's amaxes; its
    backward records dY's. apply(x, weight, bias, layer, main_grad)."""

    @staticmethod
    def forward(ctx, x, weight, bias, layer, main_grad):
        _record_forward(layer, x, weight)
        ctx.save_for_backward(x, weight)
        ctx.layer, ctx.main_grad = layer, main_grad
        ctx.bias_dtype = None if bias is None else bias.dtype
        return F.linear(x, weight.to(x.dtype), None if bias is None else bias.to(x.dtype))

    @staticmethod
    def backward(ctx, dy):
        x, weight = ctx.saved_tensors
        layer = ctx.layer
        update_state(layer.dy_amax_history, layer.dy_scale, _amax(dy),
                     _fp8_max(layer, "dy"))
        dx = dy.mm(weight.to(dy.dtype)) if ctx.needs_input_grad[0] else None
        dweight = None
        if ctx.needs_input_grad[1] or ctx.main_grad is not None:
            dw = dy.t().mm(x)
            if ctx.main_grad is not None:
                ctx.main_grad.add_(dw.float())
            else:
                dweight = dw.to(weight.dtype)
        dbias = None
        if ctx.bias_dtype is not None and ctx.needs_input_grad[2]:
            dbias = dy.sum(0, dtype=torch.float32).to(ctx.bias_dtype)
        return dx, dweight, dbias, None, None


def calibration_forward(layer, x):
    """The forward of a calibrating delayed ``fp8mlir.nn.Linear``."""
    if layer.recipe != "delayed":
        raise ValueError(f"fp8mlir.nn.Linear: calibrating is set on a layer of recipe "
                         f"{layer.recipe!r}: calibration fills delayed scaling's state "
                         f"(recipe='delayed')")
    if torch.is_autocast_enabled(x.device.type):
        x = x.to(torch.get_autocast_dtype(x.device.type))
    lead = x.shape[:-1]
    x2 = x.reshape(-1, layer.in_features)
    bias = layer.bias
    with torch.autocast(x.device.type, enabled=False):
        if x2.shape[0] == 0:  # no tokens: nothing to record
            y = F.linear(x2, layer.weight.to(x2.dtype), None if bias is None else bias.to(x2.dtype))
        elif torch.is_grad_enabled() and (x2.requires_grad or layer.weight.requires_grad or (
                bias is not None and bias.requires_grad)):
            main_grad = layer._main_grad() if layer.main_grad else None
            y = _CalibrationFunction.apply(x2, layer.weight, bias, layer, main_grad)
        else:
            _record_forward(layer, x2, layer.weight)
            y = F.linear(x2, layer.weight.to(x2.dtype), None if bias is None else bias.to(x2.dtype))
    return y.reshape(*lead, layer.out_features)


@contextlib.contextmanager
def calibrating(model, enabled=True):
    """Inside, every delayed-scaling ``fp8mlir.nn.Linear`` of `model` (an
    ``nn.Module``; the layer itself too) runs calibration steps: high
    precision, recording the amaxes into its delayed-scaling state (see
    the module's description). Each layer's previous mode comes back on
    exit. enabled=False leaves the layers as they are (one code path for
    steps that calibrate and steps that do not). Raises ValueError when
    `model` has no delayed layer. Yields `model`."""
    from .nn import Linear
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"fp8mlir.calibrating: expected an nn.Module, got {type(model).__name__}")
    layers = [m for m in model.modules() if isinstance(m, Linear) and m.recipe == "delayed"]
    if not layers:
        recipes = sorted({m.recipe for m in model.modules() if isinstance(m, Linear)})
        found = (f"its fp8mlir.nn.Linear layers use {', '.join(recipes)}" if recipes
                 else "it has no fp8mlir.nn.Linear")
        raise ValueError(f"fp8mlir.calibrating: nothing to calibrate in {type(model).__name__}: "
                         f"calibration fills the amax histories of recipe='delayed' layers, and "
                         f"{found} (the other recipes compute their scales from each step's data)")
    previous = [layer.calibrating for layer in layers]
    try:
        if enabled:
            for layer in layers:
                layer.calibrating = True
        yield model
    finally:
        for layer, mode in zip(layers, previous):
            layer.calibrating = mode
