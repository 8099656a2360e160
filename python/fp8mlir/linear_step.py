"""The training step of one FP8 linear layer as MLIR text (torch-free).

    LinearStep("current", m=4096, n=2048, k=2048, chip="sm_90a").to_mlir()

gives a func.func ``@linear`` marked ``fp8.split_backward``: ``fp8.linear``
(fprop) and ``fp8.linear_backward`` (dgrad, wgrad) of one X [M, K] and
W [N, K]. fp8-to-ptx splits it into ``@linear_forward`` (X and W quantized,
fprop; it also returns the FP8 copies and scales the backward reads) and
``@linear_backward`` (dY quantized, dgrad, wgrad), which fp8mlir.nn.Linear
calls from autograd. Every argument and result carries an ``fp8.name``:

    forward  arguments x, w, [bias], [x_scale, w_scale, x_history, w_history]
             results   y, [x_scale_next, w_scale_next, x_history_next,
                       w_history_next], then the saved tensors
    backward arguments dy, [main_grad], [dy_scale, dy_history], then the
                       saved tensors
             results   dx, dw, [dy_scale_next, dy_history_next]

(brackets: bias with a bias, main_grad with main-gradient accumulation, the
scaling state under the delayed recipe). A training step needs a static
token count M (wgrad's K), so a layer has one module per M it runs with.

With ``m=None`` the step is the forward alone, for inference: ``@linear``
taking x, w, [bias], [x_scale, w_scale] and returning y, with a run-time
token count (one module serves every M).

``format`` chooses the per-tensor recipes' element formats, as the
dialect's recipe parameter does: "hybrid" (E4M3 X and W, E5M2 dY; the
default) or "e4m3" (E4M3 dY too). The other recipes take none (None).
"""

import re
from dataclasses import dataclass, fields, replace
from typing import Optional

RECIPES = ("current", "delayed", "blockwise", "mxfp8")
# The chip each recipe runs on ("mxfp8" needs the block-scaled MMA of sm_100a).
RECIPE_CHIPS = {"current": ("sm_90a", "sm_100a"), "delayed": ("sm_90a", "sm_100a"),
                "blockwise": ("sm_90a", "sm_100a"), "mxfp8": ("sm_100a",)}
HIGH_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32"}
BIAS_TYPES = ("bf16", "f32")
FUNCTION = "linear"
FORWARD = FUNCTION + "_forward"
BACKWARD = FUNCTION + "_backward"
DELAYED_TENSORS = ("x", "w", "dy")
# The per-tensor recipes' element formats (the first is the default):
# hybrid quantizes dY to E5M2, e4m3 to E4M3; X and W are E4M3 in both.
FORMATS = ("hybrid", "e4m3")
PER_TENSOR = ("current", "delayed")


def element_format(format, tensor):  # noqa: A002 - the recipe parameter's name
    """The FP8 element format ("e4m3" or "e5m2") of `tensor` ("x", "w" or
    "dy") under the per-tensor recipes' `format`."""
    return "e5m2" if tensor == "dy" and format == "hybrid" else "e4m3"


def check_format(recipe, format):  # noqa: A002 - the recipe parameter's name
    """The element format of `recipe` for the `format` asked (None: the
    recipe's default); raises ValueError for an unknown format or one given
    to a recipe without formats."""
    if recipe not in PER_TENSOR:
        if format is not None:
            raise ValueError(f"format {format!r}: only the per-tensor recipes "
                             f"({', '.join(PER_TENSOR)}) take a format, not {recipe}")
        return None
    if format is None:
        return FORMATS[0]
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r} for recipe {recipe!r}: expected one of "
                         f"{FORMATS}")
    return format


def recipe_and_format(name):
    """("current", "e4m3") from a run name "current-e4m3"; (name, None)
    for a plain recipe name (the benchmarks' and tests' naming)."""
    recipe, _, fmt = name.partition("-")
    return (recipe, fmt) if fmt else (name, None)


def _recipe_attr(recipe, history, format=None):  # noqa: A002
    params = [f"history = {history}"] if recipe == "delayed" else []
    if format not in (None, FORMATS[0]):
        params.append(f"format = {format}")
    return f"#fp8.{recipe}<{', '.join(params)}>"


@dataclass(frozen=True)
class LinearStep:
    """One linear layer's training step: Y[M, N] = X[M, K] W[N, K]^T (+ b).

    recipe: "current" | "delayed" | "blockwise" | "mxfp8" (sm_100a only).
    x_dtype: X's dtype, also Y's and dX's (the compute dtype, bf16 under
    autocast); w_dtype: W's (f32 master weights are quantized directly);
    bias_dtype: None (no bias), "bf16" or "f32"; main_grad: dW is
    accumulated into an f32 main gradient (an argument) instead of being
    returned alone; history: the delayed recipe's amax history length;
    format: the per-tensor recipes' "hybrid" (default; None becomes it) or
    "e4m3", None for the others. An inference step (m=None) has no dY: its
    format is the default (the same module)."""
    recipe: str
    m: Optional[int]
    n: int
    k: int
    chip: str = "sm_90a"
    x_dtype: str = "bf16"
    w_dtype: str = "bf16"
    bias_dtype: Optional[str] = None
    main_grad: bool = False
    history: int = 1024
    format: Optional[str] = None

    def __post_init__(self):
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}: expected one of {RECIPES}")
        if self.chip not in RECIPE_CHIPS[self.recipe]:
            raise ValueError(f"recipe {self.recipe!r} runs on {', '.join(RECIPE_CHIPS[self.recipe])}, "
                             f"not {self.chip}")
        if self.m is None and self.main_grad:
            raise ValueError("an inference step (m=None) has no main gradient")
        fmt = check_format(self.recipe, self.format)
        # The default spelled out (one cache key per module); the inference
        # forward quantizes no gradient, so every format shares its module.
        object.__setattr__(self, "format", fmt if self.training else
                           check_format(self.recipe, None))
        for name in ("m", "n", "k", "history"):
            value = getattr(self, name)
            if name == "m" and value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("x_dtype", "w_dtype"):
            if getattr(self, name) not in HIGH_TYPES:
                raise ValueError(f"{name} {getattr(self, name)!r}: expected one of "
                                 f"{tuple(HIGH_TYPES)}")
        if self.bias_dtype is not None and self.bias_dtype not in BIAS_TYPES:
            raise ValueError(f"bias_dtype {self.bias_dtype!r}: expected None or one of "
                             f"{BIAS_TYPES}")

    @property
    def delayed(self):
        return self.recipe == "delayed"

    @property
    def training(self):
        """A training step (forward and backward, static M), not the
        inference forward (m=None)."""
        return self.m is not None

    def _inference_mlir(self):
        k, n = self.k, self.n
        x, w = HIGH_TYPES[self.x_dtype], HIGH_TYPES[self.w_dtype]
        args = [("x", f"tensor<?x{k}x{x}>"), ("w", f"tensor<{n}x{k}x{w}>")]
        operands, scales, results = "%x, %w", "", ["y"]
        if self.bias_dtype:
            args.append(("bias", f"tensor<{n}x{self.bias_dtype}>"))
            operands += " bias %bias"
        y = f"tensor<?x{n}x{x}>"
        types = [y]
        if self.delayed:
            args += [("x_scale", "tensor<f32>"), ("w_scale", "tensor<f32>")]
            scales = " scales(%x_scale, %w_scale)"
            results += ["x_amax", "w_amax"]
            types += ["tensor<f32>", "tensor<f32>"]
        params = ",\n    ".join(f"%{a}: {t} {{fp8.name = \"{a}\"}}" for a, t in args)
        return (f"// {self.describe()}\n"
                f"func.func @{FUNCTION}(\n    {params})\n"
                f"    -> ({y} {{fp8.name = \"y\"}}) {{\n"
                f"  {', '.join('%' + r for r in results)} = fp8.linear {operands}{scales}"
                f" {{recipe = {self._recipe()}}}\n"
                f"      : ({', '.join(t for _, t in args)}) -> ({', '.join(types)})\n"
                f"  return %y : {y}\n}}\n")

    def _recipe(self):
        return _recipe_attr(self.recipe, self.history, self.format)

    def _arguments(self):
        """(name, type) of the step function's arguments."""
        m, n, k = self.m, self.n, self.k
        x, w = HIGH_TYPES[self.x_dtype], HIGH_TYPES[self.w_dtype]
        args = [("x", f"tensor<{m}x{k}x{x}>"), ("w", f"tensor<{n}x{k}x{w}>")]
        if self.bias_dtype:
            args.append(("bias", f"tensor<{n}x{self.bias_dtype}>"))
        args.append(("dy", f"tensor<{m}x{n}x{x}>"))
        if self.main_grad:
            args.append(("main_grad", f"tensor<{n}x{k}xf32>"))
        if self.delayed:
            args += [(f"{t}_scale", "tensor<f32>") for t in DELAYED_TENSORS]
            args += [(f"{t}_history", f"tensor<{self.history}xf32>") for t in DELAYED_TENSORS]
        return args

    def _results(self):
        m, n, k = self.m, self.n, self.k
        x = HIGH_TYPES[self.x_dtype]
        # dW in W's type (what torch.nn.Linear returns; the wgrad GEMM writes
        # it directly), in f32 when it accumulates into the main gradient.
        dw = "f32" if self.main_grad else HIGH_TYPES[self.w_dtype]
        results = [("y", f"tensor<{m}x{n}x{x}>"), ("dx", f"tensor<{m}x{k}x{x}>"),
                   ("dw", f"tensor<{n}x{k}x{dw}>")]
        if self.delayed:
            results += [(f"{t}_scale_next", "tensor<f32>") for t in DELAYED_TENSORS]
            results += [(f"{t}_history_next", f"tensor<{self.history}xf32>")
                        for t in DELAYED_TENSORS]
        return results

    def to_mlir(self):
        """The step function, marked fp8.split_backward (compile it for
        self.chip); the forward alone for an inference step."""
        if not self.training:
            return self._inference_mlir()
        recipe = self._recipe()
        args, results = self._arguments(), self._results()
        types = dict(args + results)
        params = ",\n    ".join(f"%{n}: {t} {{fp8.name = \"{n}\"}}" for n, t in args)
        outs = ",\n        ".join(f"{t} {{fp8.name = \"{n}\"}}" for n, t in results)
        bias = " bias %bias" if self.bias_dtype else ""
        fwd_in = ["x", "w"] + (["bias"] if self.bias_dtype else [])
        fwd_out = ["y"]
        bwd_in = ["x", "w", "dy"] + (["main_grad"] if self.main_grad else [])
        bwd_out = ["dx", "dw"]
        fwd_scales = bwd_scales = ""
        if self.delayed:
            fwd_scales = " scales(%x_scale, %w_scale)"
            bwd_scales = " scales(%x_scale, %w_scale, %dy_scale)"
            fwd_in += ["x_scale", "w_scale"]
            bwd_in += ["x_scale", "w_scale", "dy_scale"]
            fwd_out += ["x_amax", "w_amax"]
            bwd_out += ["dy_amax"]
            types.update({f"{t}_amax": "tensor<f32>" for t in DELAYED_TENSORS})
        accumulate = " accumulate_into %main_grad" if self.main_grad else ""
        body = [
            f"  {', '.join('%' + v for v in fwd_out)} = fp8.linear %x, %w{bias}{fwd_scales}"
            f" {{recipe = {recipe}}}\n"
            f"      : ({', '.join(types[v] for v in fwd_in)})"
            f" -> ({', '.join(types[v] for v in fwd_out)})",
            f"  {', '.join('%' + v for v in bwd_out)} = fp8.linear_backward %x, %w, %dy"
            f"{accumulate}{bwd_scales} {{recipe = {recipe}}}\n"
            f"      : ({', '.join(types[v] for v in bwd_in)})"
            f" -> ({', '.join(types[v] for v in bwd_out)})"]
        returned = ["y", "dx", "dw"]
        if self.delayed:
            for t in DELAYED_TENSORS:
                body.append(f"  %{t}_h = fp8.update_amax_history %{t}_history, %{t}_amax"
                            f" {{recipe = {recipe}}} : tensor<{self.history}xf32>, tensor<f32>")
            for t in DELAYED_TENSORS:
                element = {"e5m2": "f8E5M2", "e4m3": "f8E4M3FN"}[element_format(self.format, t)]
                body.append(f"  %{t}_scale_next, %{t}_scale_inv_next, %{t}_history_next ="
                            f" fp8.compute_scale %{t}_h, %{t}_scale"
                            f" {{recipe = {recipe}, element_type = {element}}}\n"
                            f"      : tensor<{self.history}xf32>, tensor<f32>"
                            f" -> tensor<f32>, tensor<f32>, tensor<{self.history}xf32>")
            returned += [f"{t}_scale_next" for t in DELAYED_TENSORS]
            returned += [f"{t}_history_next" for t in DELAYED_TENSORS]
        body.append(f"  return {', '.join('%' + v for v in returned)}\n"
                    f"      : {', '.join(types[v] for v in returned)}")
        return (f"// {self.describe()}\n"
                f"func.func @{FUNCTION}(\n    {params})\n"
                f"    -> ({outs})\n"
                f"    attributes {{fp8.split_backward}} {{\n"
                + "\n".join(body) + "\n}\n")

    def describe(self):
        bias = f", bias {self.bias_dtype}" if self.bias_dtype else ""
        grad = ", main_grad" if self.main_grad else ""
        what = "linear" if self.training else "linear inference"
        m = self.m if self.training else "?"
        fmt = f" {self.format}" if self.format not in (None, FORMATS[0]) else ""
        return (f"{what} {self.recipe}{fmt} M={m} N={self.n} K={self.k} X {self.x_dtype} "
                f"W {self.w_dtype}{bias}{grad} on {self.chip}")

    # --- naming -----------------------------------------------------------------

    def signature(self):
        """Everything but M and the chip, as text (the layer operators' key)."""
        bias = self.bias_dtype or "none"
        history = f"-h{self.history}" if self.delayed else ""
        grad = "-mg" if self.main_grad else ""
        fmt = f"-{self.format}" if self.format not in (None, FORMATS[0]) else ""
        return (f"{self.recipe}{fmt}-n{self.n}-k{self.k}-x{self.x_dtype}-w{self.w_dtype}"
                f"-b{bias}{grad}{history}")

    @property
    def cache_key(self):
        """The module's directory name in the kernel cache."""
        if not self.training:
            return f"linear-{self.signature()}-inference"
        return f"linear-{self.signature()}-m{self.m}"

    @classmethod
    def from_signature(cls, signature, m, chip):
        """The step of `signature` (see signature()) for M tokens on chip;
        M None: the inference forward (no main gradient)."""
        match = _SIGNATURE.fullmatch(signature)
        if not match:
            raise ValueError(f"not a linear-step signature: {signature!r}")
        g = match.groupdict()
        return cls(g["recipe"], m=None if m is None else int(m), n=int(g["n"]), k=int(g["k"]),
                   chip=chip, x_dtype=g["x"], w_dtype=g["w"],
                   bias_dtype=None if g["bias"] == "none" else g["bias"],
                   main_grad=bool(g["mg"]) and m is not None, history=int(g["h"] or 1024),
                   format=g["format"])

    def with_m(self, m):
        """This step for m tokens (None: the inference forward)."""
        if m is None:
            return replace(self, m=None, main_grad=False)
        return replace(self, m=int(m))


_SIGNATURE = re.compile(r"(?P<recipe>[a-z0-9]+)(?:-(?P<format>e4m3))?-n(?P<n>\d+)-k(?P<k>\d+)-x(?P<x>\w+?)"
                        r"-w(?P<w>\w+?)-b(?P<bias>\w+?)(?P<mg>-mg)?(?:-h(?P<h>\d+))?")

FIELDS = tuple(f.name for f in fields(LinearStep))
