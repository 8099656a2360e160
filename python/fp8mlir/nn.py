"""FP8 training layers: ``fp8mlir.nn.Linear``, ``fp8mlir.nn.GroupedLinear``
(mixture-of-experts) and ``fp8mlir.convert_to_fp8``.

    import fp8mlir.nn
    model = fp8mlir.convert_to_fp8(model, recipe="delayed")

``Linear`` is a drop-in ``torch.nn.Linear`` whose forward and backward run
the compiled training step of the layer (fp8mlir.linear_step): the forward
quantizes X and W and runs fprop, and keeps for the backward only the FP8
copies and scales that dgrad and wgrad read (never X itself); the backward
quantizes dY and runs dgrad and wgrad. In eager mode an
``autograd.Function`` calls the compiled functions; under ``torch.compile``
the layer goes through the operators ``fp8mlir::linear_forward`` /
``fp8mlir::linear_backward`` (same functions, same kernels), so
``torch.compile(fullgraph=True)`` and CUDA graphs take the layer.

The module of a layer is compiled per token count M (a training step needs
a static M); without autograd (no grad, or nothing requiring it) the layer
runs the forward alone, compiled once for any M. Modules come from the
kernel cache ($FP8MLIR_KERNEL_CACHE), compiled on a miss where the compiler
is installed; elsewhere a miss raises an error naming the module and the
command that fills the cache.

Delayed scaling starts from empty amax histories (scales 1.0):
``with fp8mlir.calibrating(model):`` runs steps in high precision that
record the amaxes into the state (fp8mlir.calibration), TransformerEngine's
calibration.
"""

import torch
import torch.nn.functional as F

from . import _linear_ops, calibration
from .calibration import calibrating  # noqa: F401 - also fp8mlir.calibrating
from .linear_step import FORMATS, RECIPES, LinearStep, check_format

_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}
# Tokens are padded with zero rows to a multiple of this (wgrad's K): a zero
# row changes no amax, no scale and no sum.
TOKEN_MULTIPLE = 16
FEATURE_MULTIPLE = 16  # N and K: TMA's 16-byte row strides


def main_grad_of(weight):
    """`weight.main_grad`, the f32 tensor that main-gradient accumulation
    adds dW into (Megatron's name); created zeroed when absent or not of
    the weight's shape and device."""
    grad = getattr(weight, "main_grad", None)
    if grad is None or grad.shape != weight.shape or grad.device != weight.device:
        grad = weight.main_grad = torch.zeros(weight.shape, dtype=torch.float32,
                                              device=weight.device)
    return grad


class Linear(torch.nn.Linear):
    """``torch.nn.Linear`` with its three GEMMs in FP8.

    recipe: "current" (per-tensor current scaling: E4M3 X and W, E5M2 dY),
    "delayed" (per-tensor scales from an amax history of ``history`` steps;
    the scales ``x_scale``, ``w_scale``, ``dy_scale`` and the histories
    ``x_amax_history``, ``w_amax_history``, ``dy_amax_history`` are buffers,
    saved in the state_dict, updated by the compiled functions in training
    steps only), "blockwise" (1x128 activations and gradients, 128x128
    weights, DeepSeek-V3's) or "mxfp8" (sm_100a only). format (current and
    delayed only): "hybrid" (the default: E4M3 X and W, E5M2 dY) or "e4m3"
    (dY in E4M3 too, TransformerEngine's Format.E4M3). Inputs [..., in] are
    flattened to tokens; under autocast X is cast to the autocast dtype,
    else the compute dtype is X's (bf16, f16 or f32). Y and dX have X's
    dtype, dW W's. main_grad: dW is accumulated into the f32 tensor
    ``weight.main_grad`` (created zeroed when absent) and ``weight.grad``
    stays None. in_features and out_features must be multiples of 16.
    calibrating (delayed only; set by ``fp8mlir.calibrating(model)``):
    the forward and backward run F.linear in the compute dtype and record
    the amaxes into the delayed-scaling state (fp8mlir.calibration).
    """

    def __init__(self, in_features, out_features, bias=True, recipe="current", device=None,
                 dtype=None, main_grad=False, history=1024, format=None):  # noqa: A002
        if recipe not in RECIPES:
            raise ValueError(f"unknown recipe {recipe!r}: expected one of {RECIPES}")
        fmt = check_format(recipe, format)
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if value % FEATURE_MULTIPLE:
                raise ValueError(f"fp8mlir.nn.Linear: {name} = {value} is not a multiple of "
                                 f"{FEATURE_MULTIPLE} (the FP8 GEMMs' TMA rows need it)")
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.recipe = recipe
        self.format = fmt
        self.main_grad = bool(main_grad)
        self.history = int(history)
        # fp8mlir.calibrating(model) sets it (delayed recipe only): the
        # forward computes in high precision and records the amaxes.
        self.calibrating = False
        self._signatures = {}
        if recipe == "delayed":
            f32 = dict(dtype=torch.float32, device=device)
            for t in ("x", "w", "dy"):
                self.register_buffer(f"{t}_scale", torch.ones((), **f32))
            for t in ("x", "w", "dy"):
                self.register_buffer(f"{t}_amax_history", torch.zeros(self.history, **f32))

    def _apply(self, fn, recurse=True):
        # module.to(torch.bfloat16) and .half() cast floating buffers too;
        # the delayed-scaling state stays f32 (what the kernels read and
        # write), wherever it moves.
        super()._apply(fn, recurse)
        for name, buffer in self._buffers.items():
            if buffer is not None and buffer.dtype != torch.float32:
                self._buffers[name] = buffer.float()
        return self

    def extra_repr(self):
        fmt = f", format={self.format!r}" if self.format not in (None, FORMATS[0]) else ""
        grad = ", main_grad=True" if self.main_grad else ""
        mode = ", calibrating=True" if self.calibrating else ""
        return f"{super().extra_repr()}, recipe={self.recipe!r}{fmt}{grad}{mode}"

    def step_signature(self, x_dtype):
        """The layer operators' key: the LinearStep (less M and chip) of
        this layer for inputs of x_dtype."""
        key = (x_dtype, self.weight.dtype, None if self.bias is None else self.bias.dtype)
        found = self._signatures.get(key)
        if found is None:
            for dtype in key[:2]:
                if dtype not in _DTYPES:
                    raise TypeError(f"fp8mlir.nn.Linear: unsupported dtype {dtype} (expected "
                                    f"bfloat16, float16 or float32)")
            bias = None if key[2] is None else ("bf16" if key[2] == torch.bfloat16 else "f32")
            found = LinearStep(self.recipe, m=1, n=self.out_features, k=self.in_features,
                               chip="sm_100a" if self.recipe == "mxfp8" else "sm_90a",
                               x_dtype=_DTYPES[key[0]], w_dtype=_DTYPES[key[1]],
                               bias_dtype=bias, main_grad=self.main_grad,
                               history=self.history, format=self.format).signature()
            self._signatures[key] = found
        return found

    def _main_grad(self):
        return main_grad_of(self.weight)

    def forward(self, x):
        if self.calibrating:
            return calibration.calibration_forward(self, x)
        if x.device.type != "cuda":
            raise ValueError(f"fp8mlir.nn.Linear runs on CUDA tensors, got one on {x.device}")
        if torch.is_autocast_enabled(x.device.type):
            x = x.to(torch.get_autocast_dtype(x.device.type))
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        m = x2.shape[0]
        if m == 0:  # no tokens: nothing to quantize
            bias = None if self.bias is None else self.bias.to(x.dtype)
            return F.linear(x, self.weight.to(x.dtype), bias)
        bias = self.bias
        if bias is not None and bias.dtype not in (torch.bfloat16, torch.float32):
            bias = bias.float()
        grad = torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad or (
            bias is not None and bias.requires_grad))
        if not grad:  # the inference forward: any token count, no state change
            scales = (self.x_scale, self.w_scale) if self.recipe == "delayed" else (None, None)
            with torch.autocast(x.device.type, enabled=False):
                y = _linear_ops.linear_inference(x2.contiguous(), self.weight, bias, *scales,
                                                 self.step_signature(x2.dtype))
            return y.reshape(*lead, self.out_features)
        pad = -m % TOKEN_MULTIPLE
        if pad:
            x2 = F.pad(x2, (0, 0, 0, pad))
        x2 = x2.contiguous()
        recording = self.training and torch.is_grad_enabled()
        state = None
        if self.recipe == "delayed":
            state = [self.x_scale, self.w_scale, self.x_amax_history, self.w_amax_history,
                     self.dy_scale, self.dy_amax_history]
        main_grad = self._main_grad() if self.main_grad and torch.is_grad_enabled() else None
        signature = self.step_signature(x2.dtype)
        with torch.autocast(x.device.type, enabled=False):
            if not torch.compiler.is_compiling():
                # Eager mode: the compiled functions through an
                # autograd.Function (less host time per call).
                y = _linear_ops.LinearFunction.apply(x2, self.weight, bias, state, main_grad,
                                                     recording, signature)
            else:
                y = self._traced_forward(x2, bias, state, main_grad, recording, signature)
        if pad:
            y = y[:m]
        return y.reshape(*lead, self.out_features)

    def _traced_forward(self, x2, bias, state, main_grad, recording, signature):
        """The forward through the operators (what torch.compile traces):
        functional, so the delayed-scaling state comes back as results."""
        state = state or [None] * 6
        if self.recipe == "delayed" and not recording:  # evaluation: work on copies
            state = [t.clone() for t in state]
        outs = _linear_ops.linear_forward(x2, self.weight, bias, *state, main_grad, signature)
        if self.recipe == "delayed" and recording:
            with torch.no_grad():
                for buffer, value in zip(state[:4], outs[-4:]):
                    buffer.copy_(value)
        return outs[0]


class GroupedLinear(torch.nn.Module):
    """The experts' linear layers of a mixture-of-experts block in FP8:
    ``y[rows of g] = x[rows of g] @ weight[g].T`` for G experts.

    weight: [num_experts, out_features, in_features]. forward(x,
    group_index, group_sizes=None): x [M, in_features], the tokens sorted by
    expert with every expert's rows starting at a multiple of 128 (zero
    padding rows, DeepGEMM's m_contiguous layout); group_index int32 [M],
    the expert of each row, -1 for padding rows; group_sizes int32 [G],
    each expert's rows with its padding (multiples of 128, back to back from
    row 0): what the weight gradient reads, derived from group_index when
    not given (128-row blocks per expert, counted on the device). Returns y
    [M, out_features]: padding rows in an expert's last block are zero (the
    products of zero rows), rows of whole padding blocks (whose first row
    is -1) are not written and hold no defined value (likewise in dX).

    recipe: "blockwise" (DeepSeek-V3's: 1x128 activation and gradient
    blocks, 128x128 weight tiles per expert). in_features and out_features
    must be multiples of 128. A training step is compiled per M (pad M to a
    fixed capacity to reuse it); without autograd the forward runs alone,
    compiled once for any M. Kernels come from the kernel cache, as for
    ``Linear``.
    """

    def __init__(self, num_experts, in_features, out_features, recipe="blockwise",
                 device=None, dtype=None):
        super().__init__()
        from .grouped_linear_step import ALIGNMENT, RECIPES
        if recipe not in RECIPES:
            raise ValueError(f"fp8mlir.nn.GroupedLinear: recipe {recipe!r}: expert layers run "
                             f"{', '.join(RECIPES)} only")
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if value % ALIGNMENT:
                raise ValueError(f"fp8mlir.nn.GroupedLinear: {name} = {value} is not a multiple "
                                 f"of {ALIGNMENT} (the experts' 128x128 weight tiles)")
        self.num_experts, self.in_features, self.out_features = num_experts, in_features, out_features
        self.recipe = recipe
        self.weight = torch.nn.Parameter(torch.empty(
            (num_experts, out_features, in_features), device=device, dtype=dtype))
        bound = 1.0 / in_features ** 0.5
        torch.nn.init.uniform_(self.weight, -bound, bound)

    def extra_repr(self):
        return (f"num_experts={self.num_experts}, in_features={self.in_features}, "
                f"out_features={self.out_features}, recipe={self.recipe!r}")

    def signature(self, x_dtype):
        from .grouped_linear_step import GroupedLinearStep
        for dtype in (x_dtype, self.weight.dtype):
            if dtype not in _DTYPES:
                raise TypeError(f"fp8mlir.nn.GroupedLinear: unsupported dtype {dtype}")
        return GroupedLinearStep(self.recipe, m=None, groups=self.num_experts,
                                 n=self.out_features, k=self.in_features,
                                 x_dtype=_DTYPES[x_dtype],
                                 w_dtype=_DTYPES[self.weight.dtype]).signature()

    def group_sizes(self, group_index):
        """Each expert's rows with its padding: 128 times its 128-row
        blocks (the expert of a block is that of its first row)."""
        from .grouped_linear_step import ALIGNMENT
        first = group_index[::ALIGNMENT].long()
        counts = torch.zeros(self.num_experts + 1, dtype=torch.long, device=group_index.device)
        # Padding blocks (-1, or any index outside [0, G)) count in the last bin.
        first = torch.where((first >= 0) & (first < self.num_experts), first, self.num_experts)
        counts.index_add_(0, first, torch.ones_like(first))
        return (counts[:self.num_experts] * ALIGNMENT).to(torch.int32)

    def forward(self, x, group_index, group_sizes=None):
        from . import _grouped_linear_ops
        from .grouped_linear_step import ALIGNMENT
        if x.device.type != "cuda":
            raise ValueError(f"fp8mlir.nn.GroupedLinear runs on CUDA tensors, got {x.device}")
        if x.dim() != 2 or x.shape[1] != self.in_features:
            raise ValueError(f"fp8mlir.nn.GroupedLinear: expected x [M, {self.in_features}], "
                             f"got {list(x.shape)}")
        if group_index.dtype != torch.int32 or group_index.shape != (x.shape[0],):
            raise ValueError(f"fp8mlir.nn.GroupedLinear: expected group_index int32 "
                             f"[{x.shape[0]}], got {group_index.dtype} {list(group_index.shape)}")
        if torch.is_autocast_enabled(x.device.type):
            x = x.to(torch.get_autocast_dtype(x.device.type))
        m = x.shape[0]
        signature = self.signature(x.dtype)
        grad = torch.is_grad_enabled() and (x.requires_grad or self.weight.requires_grad)
        with torch.autocast(x.device.type, enabled=False):
            if not grad:
                return _grouped_linear_ops.grouped_linear_inference(
                    x.contiguous(), self.weight, group_index.contiguous(), signature)
            # The weight gradient reduces over whole 128-row blocks: pad the
            # tokens with zero rows outside every expert.
            pad = -m % ALIGNMENT
            if pad:
                x = F.pad(x, (0, 0, 0, pad))
                group_index = F.pad(group_index, (0, pad), value=-1)
            if group_sizes is None:
                group_sizes = self.group_sizes(group_index)
            y = _grouped_linear_ops.GroupedLinearFunction.apply(
                x.contiguous(), self.weight, group_index.contiguous(),
                group_sizes.to(torch.int32).contiguous(), signature)
        return y[:m] if pad else y


def convert_to_fp8(model, recipe="current", filter=None, **options):  # noqa: A002
    """Replaces every ``torch.nn.Linear`` of `model` (in place; returned)
    whose features are multiples of 16 by an ``fp8mlir.nn.Linear`` of
    `recipe` with the same weight and bias (same device and dtype).
    filter(name, module) -> bool chooses among them (name: the dotted
    path); options go to Linear (format=, main_grad=, history=)."""
    targets = []
    for name, module in model.named_modules():
        if type(module) is not torch.nn.Linear:  # not subclasses (ours included)
            continue
        if module.in_features % FEATURE_MULTIPLE or module.out_features % FEATURE_MULTIPLE:
            continue
        if filter is None or filter(name, module):
            targets.append(name)
    for name in targets:
        parent_name, _, attr = name.rpartition(".")
        parent = model.get_submodule(parent_name) if parent_name else model
        old = getattr(parent, attr)
        new = Linear(old.in_features, old.out_features, bias=old.bias is not None,
                     recipe=recipe, device=old.weight.device, dtype=old.weight.dtype,
                     **options)
        with torch.no_grad():
            new.weight.copy_(old.weight)
            if old.bias is not None:
                new.bias.copy_(old.bias)
        new.weight.requires_grad_(old.weight.requires_grad)
        new.train(old.training)
        setattr(parent, attr, new)
    if not targets and isinstance(model, torch.nn.Linear) and type(model) is torch.nn.Linear:
        raise ValueError("convert_to_fp8: pass a model containing the Linear layer (a layer "
                         "cannot replace itself)")
    return model
