"""The compiled expert (grouped) linear layer on torch tensors: the forward
and backward functions of fp8mlir.grouped_linear_step, called from an
autograd.Function (fp8mlir.nn.GroupedLinear).

The forward quantizes X and the experts' weights W [G, N, K] and runs
fprop; it keeps for the backward only the FP8 copies and scales that dgrad
and wgrad read (X's 1x128 columnwise copy, each expert's transposed
weight), never X itself. The backward quantizes dY and runs dgrad and
wgrad. Modules come from the kernel cache, compiled on a miss where the
compiler is installed (a training step per token count M; the inference
forward once for any M).
"""

import torch

from ._linear_ops import _Step
from .grouped_linear_step import BACKWARD, FORWARD, FUNCTION, GroupedLinearStep
from .ops import _cache, device_chip


_STEPS = {}


def _device_index(device):
    return device.index if device.index is not None else torch.cuda.current_device()


def step_for(signature, m, device):
    """The compiled training step of `signature` for M tokens on `device`."""
    key = (signature, m, _device_index(device))
    found = _STEPS.get(key)
    if found is None:
        spec = GroupedLinearStep.from_signature(signature, m, device_chip(key[2]))
        # X's and W's FP8 copies and scales pass to the backward, as for
        # the dense layer.
        found = _STEPS[key] = _Step(spec, _cache(None).module(spec), FORWARD, BACKWARD)
    return found


def inference_for(signature, device):
    """The compiled inference forward of `signature` (any M) on `device`."""
    key = (signature, None, _device_index(device))
    found = _STEPS.get(key)
    if found is None:
        spec = GroupedLinearStep.from_signature(signature, None, device_chip(key[2]))
        found = _STEPS[key] = _cache(None).module(spec)[FUNCTION]
    return found


def grouped_linear_inference(x, weight, group_index, signature):
    """Y of the forward alone (no state, nothing saved)."""
    return inference_for(signature, x.device)(x=x, w=weight, group_index=group_index)


class GroupedLinearFunction(torch.autograd.Function):
    """apply(x, weight, group_index, group_sizes, signature) -> y, with x
    [M, K] (M a multiple of 128, padding rows zero), weight [G, N, K],
    group_index int32 [M], group_sizes int32 [G]."""

    @staticmethod
    def forward(ctx, x, weight, group_index, group_sizes, signature):
        ctx.set_materialize_grads(False)
        s = step_for(signature, x.shape[0], x.device)
        outs = s.forward(x=x, w=weight, group_index=group_index)
        r = s.forward_results
        ctx.save_for_backward(group_index, group_sizes, *(outs[r[n]] for n in s.saved))
        ctx.signature = signature
        ctx.weight_dtype = weight.dtype
        return outs[r["y"]]

    @staticmethod
    def backward(ctx, dy):
        if dy is None:
            return (None,) * 5
        group_index, group_sizes, *saved = ctx.saved_tensors
        s = step_for(ctx.signature, dy.shape[0], dy.device)
        args = dict(zip(s.saved, saved), dy=dy.contiguous(), group_index=group_index,
                    group_sizes=group_sizes)
        outs = s.backward(**args)
        r = s.backward_results
        dx = outs[r["dx"]] if ctx.needs_input_grad[0] else None
        dw = outs[r["dw"]].to(ctx.weight_dtype) if ctx.needs_input_grad[1] else None
        return dx, dw, None, None, None
