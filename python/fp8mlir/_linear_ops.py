"""The compiled linear layer's PyTorch operators (namespace ``fp8mlir``).

- ``linear_forward(x, weight, bias, x_scale, w_scale, x_history,
  w_history, dy_scale, dy_history, main_grad, step) -> (y, *saved,
  x_scale_next, w_scale_next, x_history_next, w_history_next)``:
  ``@linear_forward`` of the layer's compiled training step (fp8mlir.
  linear_step): Y and the four tensors the backward reads (FP8 copies of X
  and W and their scales, as the recipe and chip need them). Functional
  (so that it carries an autograd formula): under the delayed recipe it
  returns X's and W's histories with this step's amax recorded and rolled,
  and their next scales, which fp8mlir.nn.Linear copies into its buffers
  (empty tensors for the other recipes). The dY state and the main
  gradient are only handed to the backward.
- ``linear_backward(dy, saved, dy_scale, dy_history, main_grad, step) ->
  (dx, dw)``: ``@linear_backward``; delayed: dY's amax recorded and its
  next scale written in place; with ``main_grad``, dW is accumulated into
  it in place and ``dw`` is an empty tensor. Where the module says dW is
  main_grad (``alias_of``: the wgrad GEMM adds into it with TMA
  reduce-adds, the sm_90a blockwise recipe), the call writes it directly;
  otherwise it returns main_grad + dW in a new tensor, copied back.

- ``linear_inference(x, weight, bias, x_scale, w_scale, step) -> y``: the
  forward alone, compiled with a run-time token count (any M, also
  symbolic under torch.compile); delayed scaling reads the scales and
  records nothing.

``step`` is a LinearStep signature (everything but M and the chip, which
come from ``x`` and its device). The autograd formula of linear_forward
calls linear_backward. Fake implementations give every shape from the
compiled module's description (module.json), loading it from the kernel
cache (or compiling it) when a trace first meets it.
"""

from typing import List, Optional, Tuple

import torch
from torch import Tensor

from .linear_step import BACKWARD, FORWARD, FUNCTION, LinearStep
from .ops import _cache, device_chip

SAVED = 4  # X's and W's FP8 copy and scale, for every recipe and chip


class _Step:
    """The two functions of one compiled step, and how they connect (also
    the expert layer's, _grouped_linear_ops: its functions' names)."""

    def __init__(self, spec, module, forward=FORWARD, backward=BACKWARD):
        self.spec = spec
        self.forward = module[forward]
        self.backward = module[backward]
        backward_args = set(self.backward.argument_names)
        self.saved = [n for n in self.forward.result_names if n in backward_args]
        if len(self.saved) != SAVED:
            raise RuntimeError(f"{module.directory}: {forward} hands {len(self.saved)} tensors "
                               f"({', '.join(self.saved)}) to {backward}, expected {SAVED}")
        self.forward_results = {n: i for i, n in enumerate(self.forward.result_names)}
        self.backward_results = {n: i for i, n in enumerate(self.backward.result_names)}
        self.saved_infos = [self.forward.results[self.forward_results[n]] for n in self.saved]


_STEPS = {}


def step_for(signature, m, device):
    """The compiled step of `signature` for M tokens on a CUDA device."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (signature, m, index)
    found = _STEPS.get(key)
    if found is None:
        spec = LinearStep.from_signature(signature, m, device_chip(index))
        found = _STEPS[key] = _Step(spec, _cache(None).module(spec))
    return found


def inference_for(signature, device):
    """The compiled inference forward of `signature` on a CUDA device."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    key = (signature, None, index)
    found = _STEPS.get(key)
    if found is None:
        spec = LinearStep.from_signature(signature, None, device_chip(index))
        found = _STEPS[key] = _cache(None).module(spec)[FUNCTION]
    return found


def _static_m(x):
    m = x.shape[0]
    return m if isinstance(m, int) else int(m)  # a traced M is specialized


def _torch_dtype(name):
    from ._module_torch import torch_dtype
    return torch_dtype(name)


_STATE_NEXT = ("x_scale_next", "w_scale_next", "x_history_next", "w_history_next")


def _run_forward(x, weight, bias, x_scale, w_scale, x_history, w_history, step):
    """Runs @linear_forward: (y, *saved, *next delayed-scaling state)."""
    s = step_for(step, _static_m(x), x.device)
    args = {"x": x, "w": weight}
    if bias is not None:
        args["bias"] = bias
    if s.spec.delayed:
        # The function records the amaxes into the histories in place: it
        # gets copies, and the new state is returned (a functional operator
        # can carry an autograd formula and be traced).
        args.update(x_scale=x_scale, w_scale=w_scale, x_history=x_history.clone(),
                    w_history=w_history.clone())
    outs = s.forward(**args)
    r = s.forward_results
    if s.spec.delayed:
        state = [outs[r[n]] for n in _STATE_NEXT]
    else:
        state = [x.new_empty((0,), dtype=torch.float32) for _ in _STATE_NEXT]
    return (outs[r["y"]], *(outs[r[n]] for n in s.saved), *state)


def _run_backward(dy, saved, dy_scale, dy_history, main_grad, step):
    """Runs @linear_backward: (dx, dw); delayed: dY's scale and history
    updated in place; with main_grad, dW accumulated into it (dw empty)."""
    s = step_for(step, _static_m(dy), dy.device)
    args = dict(zip(s.saved, saved), dy=dy)
    if s.spec.delayed:
        args.update(dy_scale=dy_scale, dy_history=dy_history)
    if s.spec.main_grad:
        args["main_grad"] = main_grad
    outs = s.backward(**args)
    r = s.backward_results
    if s.spec.delayed:
        dy_scale.copy_(outs[r["dy_scale_next"]])
        if outs[r["dy_history_next"]] is not dy_history:
            dy_history.copy_(outs[r["dy_history_next"]])
    dw = outs[r["dw"]]
    if s.spec.main_grad:
        # dW is main_grad itself where the wgrad kernel adds into it in place
        # (`alias_of`); else a new main_grad + dW, copied back.
        if dw is not main_grad:
            main_grad.copy_(dw)
        dw = dw.new_empty((0,))
    return outs[r["dx"]], dw


@torch.library.custom_op("fp8mlir::linear_forward", mutates_args=(), device_types="cuda")
def linear_forward(x: Tensor, weight: Tensor, bias: Optional[Tensor], x_scale: Optional[Tensor],
                   w_scale: Optional[Tensor], x_history: Optional[Tensor],
                   w_history: Optional[Tensor], dy_scale: Optional[Tensor],
                   dy_history: Optional[Tensor], main_grad: Optional[Tensor],
                   step: str) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor,
                                       Tensor, Tensor]:
    return _run_forward(x, weight, bias, x_scale, w_scale, x_history, w_history, step)


@linear_forward.register_fake
def _linear_forward_fake(x, weight, bias, x_scale, w_scale, x_history, w_history, dy_scale,
                         dy_history, main_grad, step):
    s = step_for(step, _static_m(x), x.device)
    y = x.new_empty((x.shape[0], weight.shape[0]), dtype=x.dtype)
    saved = [x.new_empty(info.shape, dtype=_torch_dtype(info.dtype)) for info in s.saved_infos]
    f32 = dict(dtype=torch.float32)
    if s.spec.delayed:
        state = [x.new_empty((), **f32), x.new_empty((), **f32),
                 x.new_empty((s.spec.history,), **f32), x.new_empty((s.spec.history,), **f32)]
    else:
        state = [x.new_empty((0,), **f32) for _ in _STATE_NEXT]
    return (y, *saved, *state)


@torch.library.custom_op("fp8mlir::linear_backward",
                         mutates_args=("dy_scale", "dy_history", "main_grad"),
                         device_types="cuda")
def linear_backward(dy: Tensor, saved: List[Tensor], dy_scale: Optional[Tensor],
                    dy_history: Optional[Tensor], main_grad: Optional[Tensor],
                    step: str) -> Tuple[Tensor, Tensor]:
    return _run_backward(dy, saved, dy_scale, dy_history, main_grad, step)


@linear_backward.register_fake
def _linear_backward_fake(dy, saved, dy_scale, dy_history, main_grad, step):
    s = step_for(step, _static_m(dy), dy.device)
    dx = dy.new_empty((dy.shape[0], s.spec.k), dtype=dy.dtype)
    dw = (dy.new_empty((0,), dtype=torch.float32) if s.spec.main_grad else
          dy.new_empty((s.spec.n, s.spec.k), dtype=_torch_dtype(s.spec.w_dtype)))
    return dx, dw


def _setup_context(ctx, inputs, output):
    (_, weight, bias, _, _, _, _, dy_scale, dy_history, main_grad, step) = inputs
    ctx.save_for_backward(*output[1:1 + SAVED])
    # Not saved tensors: every backward updates them in place (several
    # forwards may run before their backwards, e.g. gradient accumulation).
    ctx.state = (dy_scale, dy_history, main_grad)
    ctx.step = step
    ctx.weight_dtype = weight.dtype
    ctx.bias_dtype = None if bias is None else bias.dtype


def _gradients(ctx, dy, backward):
    """The gradients of (x, weight, bias) from `backward`, the operator or
    the function that runs @linear_backward."""
    dy_scale, dy_history, main_grad = ctx.state
    dx, dw = backward(dy.contiguous(), list(ctx.saved_tensors), dy_scale, dy_history, main_grad,
                      ctx.step)
    dweight = None
    if main_grad is None and ctx.needs_input_grad[1]:
        dweight = dw if dw.dtype == ctx.weight_dtype else dw.to(ctx.weight_dtype)
    dbias = None
    if ctx.bias_dtype is not None and ctx.needs_input_grad[2]:
        dbias = dy.sum(0, dtype=torch.float32).to(ctx.bias_dtype)
    return dx if ctx.needs_input_grad[0] else None, dweight, dbias


def _backward(ctx, dy, *unused):
    return _gradients(ctx, dy, linear_backward) + (None,) * 8


linear_forward.register_autograd(_backward, setup_context=_setup_context)


class LinearFunction(torch.autograd.Function):
    """Eager mode's path (fp8mlir.nn.Linear): the same compiled forward and
    backward as the operators, called directly, which skips the custom
    operators' dispatch and autograd wrapper, and returns Y alone: the FP8
    tensors for the backward are saved here, not outputs, and no zero
    gradients are made for them. torch.compile traces the operators instead.

    apply(x, weight, bias, state, main_grad, record, step) -> y. state:
    None, or the delayed-scaling buffers (x_scale, w_scale, x_history,
    w_history, dy_scale, dy_history); with `record` the forward records X's
    and W's amaxes into their histories and writes their next scales in
    place (else it works on copies), and the backward does the same for dY.
    """

    @staticmethod
    def forward(ctx, x, weight, bias, state, main_grad, record, step):
        ctx.set_materialize_grads(False)
        s = step_for(step, _static_m(x), x.device)
        args = {"x": x, "w": weight}
        if bias is not None:
            args["bias"] = bias
        dy_state = (None, None)
        if s.spec.delayed:
            if not record:
                state = [t.clone() for t in state]
            x_scale, w_scale, x_history, w_history = state[:4]
            # The histories are updated in place (results aliasing them).
            args.update(x_scale=x_scale, w_scale=w_scale, x_history=x_history,
                        w_history=w_history)
            dy_state = state[4:]
        outs = s.forward(**args)
        r = s.forward_results
        if s.spec.delayed:
            x_scale.copy_(outs[r["x_scale_next"]])
            w_scale.copy_(outs[r["w_scale_next"]])
        ctx.save_for_backward(*(outs[r[n]] for n in s.saved))
        ctx.state = (*dy_state, main_grad)
        ctx.step = step
        ctx.weight_dtype = weight.dtype
        ctx.bias_dtype = None if bias is None else bias.dtype
        return outs[r["y"]]

    @staticmethod
    def backward(ctx, dy):
        if dy is None:
            return (None,) * 7
        return _gradients(ctx, dy, _run_backward) + (None,) * 4


@torch.library.custom_op("fp8mlir::linear_inference", mutates_args=(), device_types="cuda")
def linear_inference(x: Tensor, weight: Tensor, bias: Optional[Tensor],
                     x_scale: Optional[Tensor], w_scale: Optional[Tensor], step: str) -> Tensor:
    forward = inference_for(step, x.device)
    args = {"x": x, "w": weight}
    if bias is not None:
        args["bias"] = bias
    if x_scale is not None:
        args.update(x_scale=x_scale, w_scale=w_scale)
    return forward(**args)


@linear_inference.register_fake
def _linear_inference_fake(x, weight, bias, x_scale, w_scale, step):
    return x.new_empty((x.shape[0], weight.shape[0]), dtype=x.dtype)
