"""The training step of one FP8 expert (grouped) linear layer as MLIR text
(torch-free).

    GroupedLinearStep("blockwise", m=8192, groups=8, n=4096, k=7168).to_mlir()

gives a func.func ``@grouped_linear`` marked ``fp8.split_backward``:
``fp8.grouped_linear`` (fprop) and ``fp8.grouped_linear_backward`` (dgrad,
wgrad) of one X [M, K] (tokens sorted by expert, each expert's rows
starting at a multiple of 128) and W [G, N, K]. fp8-to-ptx splits it into
``@grouped_linear_forward`` and ``@grouped_linear_backward``, which
fp8mlir.nn.GroupedLinear calls from autograd. Arguments and results (by
``fp8.name``):

    forward  arguments x, w, group_index
             results   y, then the saved tensors (X's and W's FP8 copies
                       the backward reads, and their scales)
    backward arguments dy, group_index, group_sizes, then the saved tensors
             results   dx, dw

``group_index`` (int32 [M]) is the expert of each row, -1 for padding;
``group_sizes`` (int32 [G]) each expert's rows with its padding (multiples
of 128, back to back from row 0). A training step needs a static M (wgrad
reduces over the tokens); with ``m=None`` the step is the forward alone
(inference), with a run-time M.
"""

import re
from dataclasses import dataclass, replace
from typing import Optional

RECIPES = ("blockwise",)
HIGH_TYPES = ("bf16", "f16", "f32")
FUNCTION = "grouped_linear"
FORWARD = FUNCTION + "_forward"
BACKWARD = FUNCTION + "_backward"
# Every expert's rows start at a multiple of this (the grouped GEMMs' tile
# M, DeepGEMM's m_contiguous alignment); N and K multiples of it too (the
# experts' 128x128 weight tiles).
ALIGNMENT = 128


@dataclass(frozen=True)
class GroupedLinearStep:
    """One expert layer's training step: Y[rows of g] = X[rows of g] W[g]^T.

    recipe: "blockwise" (DeepSeek-V3's: 1x128 activations and gradients,
    128x128 weight tiles per expert); x_dtype: X's (also Y's and dX's);
    w_dtype: W's."""
    recipe: str
    m: Optional[int]
    groups: int
    n: int
    k: int
    chip: str = "sm_90a"
    x_dtype: str = "bf16"
    w_dtype: str = "bf16"

    def __post_init__(self):
        if self.recipe not in RECIPES:
            raise ValueError(f"recipe {self.recipe!r}: expert layers run the "
                             f"{', '.join(RECIPES)} recipe only")
        if self.chip != "sm_90a":
            raise ValueError(f"expert layers run on sm_90a (the grouped GEMMs), not {self.chip}")
        for name in ("groups", "n", "k") + (("m",) if self.m is not None else ()):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("n", "k") + (("m",) if self.m is not None else ()):
            if getattr(self, name) % ALIGNMENT:
                raise ValueError(f"{name} = {getattr(self, name)} is not a multiple of "
                                 f"{ALIGNMENT} (expert rows and 128x128 weight tiles)")
        for name in ("x_dtype", "w_dtype"):
            if getattr(self, name) not in HIGH_TYPES:
                raise ValueError(f"{name} {getattr(self, name)!r}: expected one of {HIGH_TYPES}")

    @property
    def training(self):
        return self.m is not None

    def to_mlir(self):
        g, n, k, x, w = self.groups, self.n, self.k, self.x_dtype, self.w_dtype
        m = self.m if self.training else "?"
        recipe = f"#fp8.{self.recipe}<>"
        types = {"x": f"tensor<{m}x{k}x{x}>", "w": f"tensor<{g}x{n}x{k}x{w}>",
                 "group_index": f"tensor<{m}xi32>", "group_sizes": f"tensor<{g}xi32>",
                 "dy": f"tensor<{m}x{n}x{x}>", "y": f"tensor<{m}x{n}x{x}>",
                 "dx": f"tensor<{m}x{k}x{x}>", "dw": f"tensor<{g}x{n}x{k}xf32>"}
        args = ["x", "w", "group_index"]
        results = ["y"]
        if self.training:
            args += ["group_sizes", "dy"]
            results += ["dx", "dw"]
        params = ",\n    ".join(f"%{a}: {types[a]} {{fp8.name = \"{a}\"}}" for a in args)
        outs = ", ".join(f"{types[r]} {{fp8.name = \"{r}\"}}" for r in results)
        body = [f"  %y = fp8.grouped_linear %x, %w groups %group_index {{recipe = {recipe}}}\n"
                f"      : ({types['x']}, {types['w']}, {types['group_index']}) -> {types['y']}"]
        attributes = ""
        if self.training:
            attributes = " attributes {fp8.split_backward}"
            body.append(
                f"  %dx, %dw = fp8.grouped_linear_backward %x, %w, %dy"
                f" groups(%group_index, %group_sizes) {{recipe = {recipe}}}\n"
                f"      : ({types['x']}, {types['w']}, {types['dy']}, {types['group_index']},"
                f" {types['group_sizes']}) -> ({types['dx']}, {types['dw']})")
        body.append(f"  return {', '.join('%' + r for r in results)}"
                    f" : {', '.join(types[r] for r in results)}")
        return (f"// {self.describe()}\n"
                f"func.func @{FUNCTION}(\n    {params})\n    -> ({outs}){attributes} {{\n"
                + "\n".join(body) + "\n}\n")

    def describe(self):
        what = "grouped linear" if self.training else "grouped linear inference"
        m = self.m if self.training else "?"
        return (f"{what} {self.recipe} M={m} G={self.groups} N={self.n} K={self.k} "
                f"X {self.x_dtype} W {self.w_dtype} on {self.chip}")

    def signature(self):
        """Everything but M and the chip, as text."""
        return (f"{self.recipe}-g{self.groups}-n{self.n}-k{self.k}-x{self.x_dtype}"
                f"-w{self.w_dtype}")

    @property
    def cache_key(self):
        """The module's directory name in the kernel cache."""
        suffix = f"m{self.m}" if self.training else "inference"
        return f"grouped-linear-{self.signature()}-{suffix}"

    @classmethod
    def from_signature(cls, signature, m, chip):
        match = _SIGNATURE.fullmatch(signature)
        if not match:
            raise ValueError(f"not a grouped-linear signature: {signature!r}")
        d = match.groupdict()
        return cls(d["recipe"], m=None if m is None else int(m), groups=int(d["g"]),
                   n=int(d["n"]), k=int(d["k"]), chip=chip, x_dtype=d["x"], w_dtype=d["w"])

    # How fp8mlir.populate compiles it (a cache-miss error says so).
    populate_args = "--suite grouped-linear"

    def with_m(self, m):
        return replace(self, m=None if m is None else int(m))


_SIGNATURE = re.compile(r"(?P<recipe>[a-z0-9]+)-g(?P<g>\d+)-n(?P<n>\d+)-k(?P<k>\d+)"
                        r"-x(?P<x>\w+?)-w(?P<w>\w+?)")
