"""Builder of the grouped (mixture-of-experts) GEMM: one
fp8.grouped_scaled_matmul with a run-time M.

    GroupedScaledMatmul(recipe="blockwise", groups=8, n=4096, k=7168).to_mlir()

gives a func.func computing, for every group g, D[rows of g] = (A[rows of
g] sA)(B[g] sB[g])^T in the m_contiguous layout: A [M, K] holds the rows of
all groups sorted by group, each group starting at a multiple of
GROUP_ALIGNMENT rows; B is [G, N, K]; group_index [M] (i32) is the group of
each row, -1 for padding rows (not written). fp8-to-ptx compiles it to one
kernel whose operands are named a, b, a_scale_inv, b_scale_inv,
group_index, d.

layout="m_masked" (DeepGEMM's masked layout, decode under CUDA graphs): A
is [G, M, K] (M run-time, the most rows of a group), masked_m [G] (i32) the
valid rows of each group, D [G, M, N]; rows from a group's count on are not
written. The kernel's operands: a, b, a_scale_inv, b_scale_inv, masked_m, d.

layout="k_grouped" (the experts' weight gradient dW_g = dY_g^T X_g,
DeepGEMM's k_grouped_fp8_gemm_tn_contiguous; k=None: K is a run-time
extent): A [M, K] and B [N, K] hold the tokens (K columns) of all groups
one after the other, ks [G] (i32) the columns of each group (multiples of
128, 0 allowed), D [G, M, N]. Per-tensor and per-row scales are one set
per group on both sides; blockwise is 1x128 on both sides. The kernel's
operands: a, b, a_scale_inv, b_scale_inv, ks, d.

result_recipe (out_dtype "e4m3" / "e5m2"): D quantized to FP8 in the
epilogue, "delayed" (one given scale for all groups: operand result_scale)
or "blockwise" (1x128 blocks along N, e4m3; result_scale_inv MN-major
[ceil(N/128), roundup(M, 4)], m_masked [G, ceil(N/128), roundup(M, 4)]).
The kernel then also writes result_scale_inv; rows it does not write get
neither bytes nor scales.
"""

from dataclasses import dataclass

from ._math import ceil_div
from .gemm import ELEMENT_TYPES, OUT_TYPES, RESULT_RECIPES, SCALE_BLOCK, scale_types

# "mxfp8" (mx 1x32 scales, UE8M0) runs on sm_100a only, m_contiguous only;
# k_grouped runs on sm_90a only.
GROUPED_RECIPES = ("tensorwise", "rowwise", "blockwise", "mxfp8")
LAYOUTS = ("m_contiguous", "m_masked", "k_grouped")
# Every group's first row is a multiple of this (the kernels read one group
# per 128-row tile), DeepGEMM's get_mk_alignment_for_contiguous_layout().
GROUP_ALIGNMENT = 128


@dataclass(frozen=True)
class GroupedScaledMatmul:
    recipe: str
    groups: int
    n: int
    k: int  # None for k_grouped (K is a run-time extent)
    out_dtype: str = "bf16"
    accumulation: str = "fast"  # blockwise: always promoted(128)
    a_dtype: str = "e4m3"
    b_dtype: str = "e4m3"
    layout: str = "m_contiguous"
    config: str = None  # a #fp8.gemm_config, e.g. "<tile = 128x128x128>"
    name: str = "grouped_scaled_mm"
    # An FP8 D (out_dtype "e4m3" / "e5m2"): "delayed" or "blockwise".
    result_recipe: str = None

    def __post_init__(self):
        if self.recipe not in GROUPED_RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}: expected one of "
                             f"{GROUPED_RECIPES}")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout {self.layout!r}: expected one of {LAYOUTS}")
        if self.result_recipe not in (None,) + RESULT_RECIPES:
            raise ValueError(f"result_recipe {self.result_recipe!r}: expected one of "
                             f"{RESULT_RECIPES}")
        out_types = ELEMENT_TYPES if self.result_recipe else OUT_TYPES
        if self.recipe == "mxfp8" and self.layout != "m_contiguous":
            raise ValueError(f"recipe 'mxfp8' (sm_100a kernels) takes the m_contiguous "
                             f"layout only, got {self.layout!r}")
        for field, value, allowed in (("a_dtype", self.a_dtype, ELEMENT_TYPES),
                                      ("b_dtype", self.b_dtype, ELEMENT_TYPES),
                                      ("out_dtype", self.out_dtype, out_types)):
            if value not in allowed:
                raise ValueError(f"{field} {value!r}: expected one of {tuple(allowed)}")
        if self.layout == "k_grouped" and self.result_recipe:
            raise ValueError("k_grouped writes a bf16, f16 or f32 D: no result_recipe, "
                             f"got {self.result_recipe!r}")
        if self.layout == "k_grouped" and self.k is not None:
            raise ValueError(f"k_grouped takes K at run time: k must be None, got {self.k!r}")
        for field in ("groups", "n") if self.layout == "k_grouped" else ("groups", "n", "k"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.accumulation != "fast" and not self.accumulation.startswith("promoted("):
            raise ValueError(f"accumulation {self.accumulation!r}: expected 'fast' or "
                             f"'promoted(N)'")
        if not self.name.isidentifier():
            raise ValueError(f"name {self.name!r} is not an identifier")

    @property
    def effective_accumulation(self):
        return "promoted(128)" if self.recipe == "blockwise" else self.accumulation

    def _k_grouped_types(self):
        """(a_granularity, b_granularity, A scale type, B scale type) of the
        k_grouped layout: per-tensor / per-row one set per group, 1x128 on
        both sides over the columns of all groups."""
        g, n = self.groups, self.n
        return {"tensorwise": ("tensor", "tensor", f"tensor<{g}xf32>", f"tensor<{g}xf32>"),
                "rowwise": ("row", "row", f"tensor<{g}x?x1xf32>", f"tensor<{g}x{n}x1xf32>"),
                "blockwise": ("tile 1x128", "tile 1x128", "tensor<?x?xf32>",
                              f"tensor<{n}x?xf32>")}[self.recipe]

    def to_mlir(self):
        if self.layout == "k_grouped":
            ga, gb, sa, sb = self._k_grouped_types()
            a_t = f"tensor<?x?x{ELEMENT_TYPES[self.a_dtype]}>"
            b_t = f"tensor<{self.n}x?x{ELEMENT_TYPES[self.b_dtype]}>"
            out_t = f"tensor<{self.groups}x?x{self.n}x{OUT_TYPES[self.out_dtype]}>"
            return self._func(ga, gb, a_t, b_t, sa, sb, f"tensor<{self.groups}xi32>", out_t)
        ga, gb, sa, sb = scale_types(self.recipe, self.n, self.k, self.groups)
        # m_masked: A, D and the per-row / 1x128 A scales with G outermost;
        # the groups operand is the valid rows of each group [G].
        lead = f"{self.groups}x" if self.layout == "m_masked" else ""
        if lead and self.recipe != "tensorwise":
            sa = sa.replace("tensor<", f"tensor<{lead}", 1)
        a_t = f"tensor<{lead}?x{self.k}x{ELEMENT_TYPES[self.a_dtype]}>"
        b_t = f"tensor<{self.groups}x{self.n}x{self.k}x{ELEMENT_TYPES[self.b_dtype]}>"
        out_types = ELEMENT_TYPES if self.result_recipe else OUT_TYPES
        out_t = f"tensor<{lead}?x{self.n}x{out_types[self.out_dtype]}>"
        index_t = f"tensor<{self.groups}xi32>" if lead else "tensor<?xi32>"
        return self._func(ga, gb, a_t, b_t, sa, sb, index_t, out_t)

    def _func(self, ga, gb, a_t, b_t, sa, sb, index_t, out_t):
        attrs = [f"layout = #fp8.grouped_layout<{self.layout}>",
                 f"a_granularity = #fp8.granularity<{ga}>",
                 f"b_granularity = #fp8.granularity<{gb}>",
                 f"accumulation = #fp8.accumulation<{self.effective_accumulation}>"]
        if self.config:
            attrs.append(f"config = #fp8.gemm_config{self.config}")
        params = [f"%a: {a_t}", f"%b: {b_t}", f"%sa: {sa}", f"%sb: {sb}", f"%groups: {index_t}"]
        types = [a_t, b_t, sa, sb, index_t]
        operands = "%a, %b, %sa, %sb, %groups"
        results, values = out_t, "%d"
        if self.result_recipe == "delayed":
            params.append("%result_scale: tensor<f32>")
            types.append("tensor<f32>")
            operands += " result_scale %result_scale"
            attrs += ["result_recipe = #fp8.delayed<>",
                      "result_granularity = #fp8.granularity<tensor>"]
            results, values = f"({out_t}, tensor<f32>)", "%d, %ds"
        elif self.result_recipe == "blockwise":
            nb = ceil_div(self.n, SCALE_BLOCK)
            lead = f"{self.groups}x" if self.layout == "m_masked" else ""
            attrs += ["result_recipe = #fp8.blockwise<>",
                      f"result_granularity = #fp8.granularity<tile 1x{SCALE_BLOCK}>"]
            results, values = f"({out_t}, tensor<{lead}?x{nb}xf32>)", "%d, %ds"
        return (f"func.func @{self.name}({', '.join(params)}) -> {results} {{\n"
                f"  {values} = fp8.grouped_scaled_matmul {operands} "
                f"{{{', '.join(attrs)}}}\n"
                f"      : ({', '.join(types)}) -> {results}\n"
                f"  return {values} : {results.strip('()')}\n"
                f"}}\n")

    @property
    def cache_key(self):
        """The kernel cache's name for this shape class, recipe and types."""
        acc = self.effective_accumulation.replace("(", "").replace(")", "")
        config = ""
        if self.config:
            config = "-cfg" + "".join(c for c in self.config if c.isalnum())
        result = f"-q{self.result_recipe}" if self.result_recipe else ""
        return (f"grouped-{self.layout}-{self.recipe}-{acc}-{self.a_dtype}x{self.b_dtype}-"
                f"{self.out_dtype}{result}-g{self.groups}-n{self.n}-k{self.k or 'dyn'}{config}")
