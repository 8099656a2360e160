"""Builder of the common case: one fp8.scaled_matmul with a run-time M.

    ScaledMatmul(recipe="rowwise", n=4096, k=2048).to_mlir()

gives a func.func computing D[M, N] = (A[M, K] sA)(B[N, K] sB)^T (+ bias),
TN storage, which fp8-to-ptx compiles to one kernel whose operands are named
a, b, a_scale_inv, b_scale_inv, (bias,) d.
"""

from dataclasses import dataclass
from typing import Optional

from ._math import ceil_div

RECIPES = ("tensorwise", "rowwise", "blockwise", "mxfp8")
ELEMENT_TYPES = {"e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}
OUT_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32"}
RESULT_RECIPES = ("delayed", "blockwise")
BIAS_TYPES = {"bf16": "bf16", "f32": "f32"}
SCALE_BLOCK = 128
MX_BLOCK = 32



def scale_types(recipe, n, k, groups=None):
    """(granularity A, granularity B, scale tensor type A, scale tensor type
    B) of a GEMM of `recipe`; B's with a leading extent of `groups` (one
    set of scales per group of a grouped GEMM) when given."""
    lead = f"{groups}x" if groups else ""
    if recipe == "tensorwise":
        return "tensor", "tensor", "tensor<f32>", f"tensor<{lead}f32>"
    if recipe == "rowwise":
        return "row", "row", "tensor<?x1xf32>", f"tensor<{lead}{n}x1xf32>"
    if recipe == "blockwise":
        kb = ceil_div(k, SCALE_BLOCK)
        return (f"tile 1x{SCALE_BLOCK}", f"tile {SCALE_BLOCK}x{SCALE_BLOCK}",
                f"tensor<?x{kb}xf32>", f"tensor<{lead}{ceil_div(n, SCALE_BLOCK)}x{kb}xf32>")
    kb = ceil_div(k, MX_BLOCK)
    return (f"mx 1x{MX_BLOCK}", f"mx 1x{MX_BLOCK}",
            f"tensor<?x{kb}xf8E8M0FNU>", f"tensor<{lead}{n}x{kb}xf8E8M0FNU>")


@dataclass(frozen=True)
class ScaledMatmul:
    recipe: str
    n: int
    k: int
    out_dtype: str = "bf16"
    accumulation: str = "promoted(128)"  # or "fast"
    a_dtype: str = "e4m3"
    b_dtype: str = "e4m3"
    bias_dtype: Optional[str] = None
    config: Optional[str] = None  # a #fp8.gemm_config, e.g. "<tile = 128x128x128>"
    name: str = "scaled_mm"
    # An FP8 D (out_dtype "e4m3" / "e5m2") quantized in the epilogue:
    # "delayed" (per tensor, the given scale: operand result_scale) or
    # "blockwise" (1x128 blocks along N; e4m3).
    result_recipe: Optional[str] = None

    def __post_init__(self):
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}: expected one of {RECIPES}")
        out_types = ELEMENT_TYPES if self.result_recipe else OUT_TYPES
        if self.result_recipe not in (None,) + RESULT_RECIPES:
            raise ValueError(f"result_recipe {self.result_recipe!r}: expected one of "
                             f"{RESULT_RECIPES}")
        for field, value, allowed in (("a_dtype", self.a_dtype, ELEMENT_TYPES),
                                      ("b_dtype", self.b_dtype, ELEMENT_TYPES),
                                      ("out_dtype", self.out_dtype, out_types)):
            if value not in allowed:
                raise ValueError(f"{field} {value!r}: expected one of {tuple(allowed)}")
        if self.bias_dtype is not None and self.bias_dtype not in BIAS_TYPES:
            raise ValueError(f"bias_dtype {self.bias_dtype!r}: expected one of {tuple(BIAS_TYPES)}")
        for field in ("n", "k"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"{field} must be a positive integer, got {value!r}")
        if self.accumulation != "fast" and not self.accumulation.startswith("promoted("):
            raise ValueError(f"accumulation {self.accumulation!r}: expected 'fast' or 'promoted(N)'")
        if not self.name.isidentifier():
            raise ValueError(f"name {self.name!r} is not an identifier")

    def _scales(self):
        """(granularity A, granularity B, scale type A, scale type B)."""
        return scale_types(self.recipe, self.n, self.k)

    def _result(self):
        """(D's type, its scale_inv type or None, the result attributes)."""
        if not self.result_recipe:
            return f"tensor<?x{self.n}x{OUT_TYPES[self.out_dtype]}>", None, []
        out_t = f"tensor<?x{self.n}x{ELEMENT_TYPES[self.out_dtype]}>"
        if self.result_recipe == "delayed":
            return out_t, "tensor<f32>", ["result_recipe = #fp8.delayed<>",
                                          "result_granularity = #fp8.granularity<tensor>"]
        return (out_t, f"tensor<?x{ceil_div(self.n, SCALE_BLOCK)}xf32>",
                ["result_recipe = #fp8.blockwise<>",
                 f"result_granularity = #fp8.granularity<tile 1x{SCALE_BLOCK}>"])

    def to_mlir(self):
        ga, gb, sa, sb = self._scales()
        a_t = f"tensor<?x{self.k}x{ELEMENT_TYPES[self.a_dtype]}>"
        b_t = f"tensor<{self.n}x{self.k}x{ELEMENT_TYPES[self.b_dtype]}>"
        out_t, scale_inv_t, result_attrs = self._result()
        params = [f"%a: {a_t}", f"%b: {b_t}", f"%sa: {sa}", f"%sb: {sb}"]
        types = [a_t, b_t, sa, sb]
        operands = "%a, %b, %sa, %sb"
        if self.bias_dtype:
            bias_t = f"tensor<{self.n}x{BIAS_TYPES[self.bias_dtype]}>"
            params.append(f"%bias: {bias_t}")
            types.append(bias_t)
            operands += " bias %bias"
        if self.result_recipe == "delayed":
            params.append("%result_scale: tensor<f32>")
            types.append("tensor<f32>")
            operands += " result_scale %result_scale"
        attrs = [f"a_granularity = #fp8.granularity<{ga}>",
                 f"b_granularity = #fp8.granularity<{gb}>",
                 f"accumulation = #fp8.accumulation<{self.accumulation}>"] + result_attrs
        if self.recipe == "blockwise" and self.result_recipe:
            attrs.append("recipe = #fp8.blockwise<>")
        if self.config:
            attrs.append(f"config = #fp8.gemm_config{self.config}")
        results = f"({out_t}, {scale_inv_t})" if scale_inv_t else out_t
        values = "%d, %ds" if scale_inv_t else "%d"
        return (f"func.func @{self.name}({', '.join(params)}) -> {results} {{\n"
                f"  {values} = fp8.scaled_matmul {operands} {{{', '.join(attrs)}}}\n"
                f"      : ({', '.join(types)}) -> {results}\n"
                f"  return {values} : {results[1:-1] if scale_inv_t else results}\n"
                f"}}\n")

    @property
    def cache_key(self):
        """The kernel cache's name for this shape class, recipe and types."""
        acc = "fast" if self.accumulation == "fast" else self.accumulation.replace("(", "").replace(")", "")
        bias = f"-bias{self.bias_dtype}" if self.bias_dtype else ""
        config = ""
        if self.config:
            config = "-cfg" + "".join(c for c in self.config if c.isalnum())
        result = f"-q{self.result_recipe}" if self.result_recipe else ""
        return (f"{self.recipe}-{acc}-{self.a_dtype}x{self.b_dtype}-{self.out_dtype}"
                f"{result}{bias}-n{self.n}-k{self.k}{config}")
