"""Builders of the quantization kernels ``fp8mlir.quantize`` and
``fp8mlir.dequantize`` run, their cache keys, the layouts of their outputs,
and the ``QuantizedTensor`` container. Pure Python (no torch).

Every kernel takes a run-time row count R (``x: [R, C]``): one kernel set
per (recipe, C, types, outputs) in the kernel cache, like ``ScaledMatmul``.

Recipes (the names ``scaled_mm`` uses for the same scales):

========================  =====================================  ==========================
recipe                    scales (scale_inv)                     the dialect's recipe
========================  =====================================  ==========================
``tensorwise``            one f32, 0-d                           ``#fp8.current<>``, tensor
``rowwise``               one per row, ``(R, 1)``                ``#fp8.current<>``, row
``blockwise`` (1, 128)    ``(R, ceil(C/128))``, MN-major          ``#fp8.blockwise<>``, 1x128
``blockwise`` (128, 128)  ``(ceil(R/128), ceil(C/128))``          ``#fp8.blockwise<>``, 128x128
``delayed``               one f32 (1/scale of the given scale)    ``#fp8.delayed<history = H>``
========================  =====================================  ==========================

The columnwise output quantizes x^T ([C, R], or [R, C] stored untransposed
with ``transposed=False``) with the same rule, so its scales are those of a
[C, R] tensor.
"""

from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

from .gemm import ELEMENT_TYPES
from ._math import ceil_div

QUANTIZE_RECIPES = ("tensorwise", "rowwise", "blockwise", "delayed")
BLOCKS = ((1, 128), (128, 128))
INPUT_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32"}
# The 1x128 scales' padding: MN-major [ceil(C/128), roundup(R, 4)], 16-byte
# aligned K-block columns (what the GEMMs read).
MN_MAJOR_ALIGNMENT = 4


class QuantizedTensor(NamedTuple):
    """FP8 data and scales as ``fp8mlir.quantize`` returns them.

    data, scale_inv: the rowwise output (x quantized along its rows) or
    None; columnwise_data, columnwise_scale_inv: x^T quantized along its rows
    ([C, R]; [R, C] when not ``transposed``) or None. scale_inv is what the
    GEMM multiplies by (x ~= data * scale_inv), in the layout ``scaled_mm``
    and ``torch._scaled_mm`` / ``F.scaled_mm`` take for the recipe.
    """
    data: Any
    scale_inv: Any
    columnwise_data: Any
    columnwise_scale_inv: Any
    recipe: str
    block: Optional[tuple] = None  # (1, 128) or (128, 128) for blockwise
    transposed: bool = True



def _roundup(a, b):
    return (a + b - 1) // b * b


def granularity(recipe, block=None):
    """The dialect's granularity of a recipe: "tensor", "row",
    "tile 1x128" or "tile 128x128"."""
    if recipe in ("tensorwise", "delayed"):
        return "tensor"
    if recipe == "rowwise":
        return "row"
    if recipe == "blockwise":
        block = tuple(block or BLOCKS[0])
        if block not in BLOCKS:
            raise ValueError(f"blockwise block {block}: expected one of {BLOCKS}")
        return f"tile {block[0]}x{block[1]}"
    raise ValueError(f"unknown quantization recipe {recipe!r}: expected one of "
                     f"{QUANTIZE_RECIPES}")


def scale_layout(gran, rows, cols):
    """(physical shape, kind) of the scales of a [rows, cols] tensor: kind
    "scalar" (0-d), "dense" (the physical tensor is the scale tensor) or
    "mn_major" (physical [ceil(cols/128), roundup(rows, 4)]; the scale
    tensor is its (rows, ceil(cols/128)) view with strides
    (1, roundup(rows, 4))). Works on ints and torch.SymInts alike."""
    if gran == "tensor":
        return (), "scalar"
    if gran == "row":
        return (rows, 1), "dense"
    if gran == "tile 1x128":
        return (ceil_div(cols, 128), _roundup(rows, MN_MAJOR_ALIGNMENT)), "mn_major"
    if gran == "tile 128x128":
        return (ceil_div(rows, 128), ceil_div(cols, 128)), "dense"
    raise ValueError(f"unknown granularity {gran!r}")


def _tensor_type(shape, element):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def _scale_type(gran, rows, cols):
    """The logical scale_inv type of a [rows, cols] tensor ("?" rows)."""
    if gran == "tensor":
        return "tensor<f32>"
    if gran == "row":
        return _tensor_type([rows, 1], "f32")
    tr, tc = (int(v) for v in gran.split()[1].split("x"))
    block_rows = "?" if rows == "?" else ceil_div(rows, tr)
    block_cols = "?" if cols == "?" else ceil_div(cols, tc)
    return _tensor_type([block_rows, block_cols], "f32")


def _check_positive(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} {value!r}: expected one of {tuple(allowed)}")


@dataclass(frozen=True)
class QuantizeSpec:
    """One quantization of x: [R, C] (R a run-time value)."""
    recipe: str
    cols: int
    in_dtype: str = "bf16"
    dtype: str = "e4m3"
    rowwise: bool = True
    columnwise: bool = False
    transposed: bool = True
    block: Optional[tuple] = None  # blockwise: (1, 128) or (128, 128)
    history: int = 0  # delayed: the amax history length (0: none)

    def __post_init__(self):
        granularity(self.recipe, self.block)
        _check_positive("cols", self.cols)
        _check_choice("in_dtype", self.in_dtype, INPUT_TYPES)
        _check_choice("dtype", self.dtype, ELEMENT_TYPES)
        if not (self.rowwise or self.columnwise):
            raise ValueError("quantize: ask for the rowwise or the columnwise output (or both)")
        if self.recipe == "blockwise" and self.dtype != "e4m3":
            raise ValueError("blockwise scaling is defined for e4m3 only")
        if self.history and self.recipe != "delayed":
            raise ValueError("an amax history belongs to delayed scaling")
        if self.history < 0:
            raise ValueError(f"history must be >= 0, got {self.history}")

    @property
    def granularity(self):
        return granularity(self.recipe, self.block)

    def _dialect_recipe(self):
        if self.recipe == "blockwise":
            return "#fp8.blockwise<>"
        if self.recipe == "delayed":
            return f"#fp8.delayed<history = {max(self.history, 1)}>"
        return "#fp8.current<>"

    def to_mlir(self):
        c = self.cols
        elem = ELEMENT_TYPES[self.dtype]
        x_t = _tensor_type(["?", c], INPUT_TYPES[self.in_dtype])
        args, operands, operand_types = [f"%x: {x_t}"], "%x", x_t
        if self.recipe == "delayed":
            args.append("%scale: tensor<f32>")
            operands += " scale %scale"
            operand_types += ", tensor<f32>"
        results, types, out_spec = [], [], ""
        if self.rowwise:
            types += [_tensor_type(["?", c], elem), _scale_type(self.granularity, "?", c)]
            results += ["%q", "%s"]
            out_spec += f" rowwise({types[-2]}, {types[-1]})"
        if self.columnwise:
            data_shape = [c, "?"] if self.transposed else ["?", c]
            types += [_tensor_type(data_shape, elem), _scale_type(self.granularity, c, "?")]
            results += ["%qt", "%st"]
            out_spec += f" columnwise({types[-2]}, {types[-1]})"
        attrs = [f"recipe = {self._dialect_recipe()}",
                 f"granularity = #fp8.granularity<{self.granularity}>"]
        if self.columnwise and not self.transposed:
            attrs.append("columnwise_layout = #fp8.columnwise_layout<untransposed>")
        body = list(results)
        lines = []
        if self.history:
            h_t = f"tensor<{self.history}xf32>"
            args.append(f"%h: {h_t}")
            out_spec += " amax(tensor<f32>)"
            body.append("%amax")
            lines.append(f"  %h1 = fp8.update_amax_history %h, %amax "
                         f"{{recipe = {self._dialect_recipe()}}} : {h_t}, tensor<f32>")
            results.append("%h1")
            types.append(h_t)
        lines.insert(0, f"  {', '.join(body)} = fp8.quantize {operands} "
                        f"{{{', '.join(attrs)}}} : {operand_types} ->{out_spec}")
        return (f"func.func @quantize({', '.join(args)}) -> ({', '.join(types)}) {{\n"
                + "\n".join(lines) + f"\n  return {', '.join(results)} : {', '.join(types)}\n}}\n")

    @property
    def cache_key(self):
        gran = self.granularity.replace("tile ", "")
        outputs = ("row" if self.rowwise else "") + \
            (("col" if self.transposed else "colu") if self.columnwise else "")
        history = f"-h{self.history}" if self.history else ""
        return (f"quantize-{self.recipe}-{gran}-{self.in_dtype}x{self.dtype}-{outputs}"
                f"-c{self.cols}{history}")

    def output_layouts(self, rows):
        """[(name, physical shape, kind)] of the outputs in the order
        QuantizedTensor holds them; kind as in scale_layout, "data" for
        FP8 data."""
        c, out = self.cols, []
        if self.rowwise:
            out.append(("rowwise", (rows, c), "data"))
            out.append(("rowwise_scale_inv", *scale_layout(self.granularity, rows, c)))
        if self.columnwise:
            out.append(("columnwise", (c, rows) if self.transposed else (rows, c), "data"))
            out.append(("columnwise_scale_inv", *scale_layout(self.granularity, c, rows)))
        return out


@dataclass(frozen=True)
class DequantizeSpec:
    """y [R, C] = data [R, C] * its scales (R a run-time value)."""
    granularity: str
    cols: int
    dtype: str = "e4m3"
    out_dtype: str = "bf16"

    def __post_init__(self):
        scale_layout(self.granularity, 1, 1)
        _check_positive("cols", self.cols)
        _check_choice("dtype", self.dtype, ELEMENT_TYPES)
        _check_choice("out_dtype", self.out_dtype, INPUT_TYPES)

    def to_mlir(self):
        q_t = _tensor_type(["?", self.cols], ELEMENT_TYPES[self.dtype])
        s_t = _scale_type(self.granularity, "?", self.cols)
        y_t = _tensor_type(["?", self.cols], INPUT_TYPES[self.out_dtype])
        return (f"func.func @dequantize(%q: {q_t}, %s: {s_t}) -> {y_t} {{\n"
                f"  %y = fp8.dequantize %q, %s {{granularity = "
                f"#fp8.granularity<{self.granularity}>}} : {q_t}, {s_t} -> {y_t}\n"
                f"  return %y : {y_t}\n}}\n")

    @property
    def cache_key(self):
        gran = self.granularity.replace("tile ", "")
        return f"dequantize-{gran}-{self.dtype}x{self.out_dtype}-c{self.cols}"
