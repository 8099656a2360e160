"""Pure-Python description of a compiled GEMM kernel (NAME.json), no torch.

Shared by test/GPU/check_gemm.py, bench/bench_gemm.py and
bench/power_ceiling.py. Knows the metadata's "gemm" section, the operand
conventions of the runtime (TN: a [M, K], b [N, K]) and the physical shapes
of the scale operands, and resolves the symbolic operand shapes of the
metadata ("M", or small expressions such as "ceil(K/128)").
"""

import ast
import json
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path

from .._math import ceil_div

SCHEMA = "fp8-mlir-kernel"
SCALE_BLOCK = 128

FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
OUT_DTYPES = ("bf16", "f16", "f32")

# Relative Frobenius error tolerances against the f64 reference of the
# dequantized inputs, by output dtype and accumulation mode. bf16/f16 outputs
# carry their rounding (~2^-9 relative); "fast" accumulation is Hopper's FP8
# wgmma accumulator without promotion to full f32 along K.
TOLERANCE = {
    ("bf16", "fast"): 1e-2,
    ("bf16", "promoted"): 5e-3,
    ("f16", "fast"): 1e-2,
    ("f16", "promoted"): 5e-3,
    ("f32", "fast"): 5e-3,
    ("f32", "promoted"): 1e-3,
}
# The worst single row of D may be this many times the tolerance (catches a
# wrong scale on rows too small to move the global norm).
ROW_TOLERANCE_FACTOR = 2.0

RECIPES = {
    (("tensor",), ("tensor",)): "tensorwise",
    (("row",), ("row",)): "rowwise",
    (("tile", 1, 128), ("tile", 128, 128)): "blockwise",
    # DeepSeek/TE "1D x 1D": both operands in 1x128 tiles (the wgrad GEMM).
    (("tile", 1, 128), ("tile", 1, 128)): "blockwise_1d1d",
}


def parse_granularity(text):
    """"tensor" -> ("tensor",), "row" -> ("row",), "tile 1x128" -> ("tile", 1, 128)."""
    words = str(text).strip().lower().split()
    if words in (["tensor"], ["row"]):
        return (words[0],)
    if len(words) == 2 and words[0] == "tile":
        rows, _, cols = words[1].partition("x")
        if rows.isdigit() and cols.isdigit() and int(rows) > 0 and int(cols) > 0:
            return ("tile", int(rows), int(cols))
    raise ValueError(f"unknown granularity {text!r} "
                     "(expected 'tensor', 'row' or 'tile RxC')")


def granularity_text(gran):
    return gran[0] if gran[0] != "tile" else f"tile {gran[1]}x{gran[2]}"


def recipe_name(a_gran, b_gran):
    """tensorwise / rowwise / blockwise, or 'A-gran/B-gran' for other pairs."""
    return RECIPES.get((a_gran, b_gran),
                       f"{granularity_text(a_gran)}/{granularity_text(b_gran)}")


def accumulation_mode(text):
    """'fast' or 'promoted' from "fast" / "promoted(128)"."""
    text = str(text).strip().lower()
    if text == "fast":
        return "fast"
    if text.startswith("promoted"):
        return "promoted"
    raise ValueError(f"unknown accumulation {text!r}")


def tolerance(out_dtype, accumulation):
    return TOLERANCE[(out_dtype, accumulation_mode(accumulation))]



def scale_shape(gran, rows, k):
    """Logical scale_inv shape of a [rows, K] operand: (), (rows,), (rows/r, K/c)."""
    if gran[0] == "tensor":
        return ()
    if gran[0] == "row":
        return (rows,)
    return (ceil_div(rows, gran[1]), ceil_div(k, gran[2]))


# 1x128 scales are MN-major with the MN extent rounded up to a multiple of
# this (16 bytes of f32: TMA alignment; kMNMajorScaleAlignment).
MN_MAJOR_SCALE_ALIGNMENT = 4


def physical_scale_shape(operand, gran, rows, k):
    """Shape the runtime expects by convention: 1x128 tile scales are stored
    MN-major (a: [K/128, roundup(M, 4)], b: [K/128, roundup(N, 4)]), so that
    one K block's scales are contiguous and 16-byte aligned; everything else
    in its logical order."""
    shape = scale_shape(gran, rows, k)
    if gran[0] == "tile" and gran[1] == 1:
        return (shape[1], ceil_div(shape[0], MN_MAJOR_SCALE_ALIGNMENT) * MN_MAJOR_SCALE_ALIGNMENT)
    return shape


# --- symbolic shapes ---------------------------------------------------------

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_FUNCTIONS = {"ceil_div": ceil_div, "cdiv": ceil_div, "ceildiv": ceil_div,
              "min": min, "max": max,
              "align": lambda x, a: ceil_div(x, a) * a,
              "round_up": lambda x, a: ceil_div(x, a) * a,
              "roundup": lambda x, a: ceil_div(x, a) * a}


def _eval_node(node, env):
    if isinstance(node, ast.Expression):
        return _eval_node(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise KeyError(node.id)
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval_node(node.left, env), _eval_node(node.right, env))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        # "/" in a shape means an exact or rounded-up block count.
        return ceil_div(_eval_node(node.left, env), _eval_node(node.right, env))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_eval_node(a, env) for a in node.args]
        if node.func.id == "ceil" and len(args) == 1:
            return math.ceil(args[0])
        if node.func.id in _FUNCTIONS:
            return _FUNCTIONS[node.func.id](*args)
    raise ValueError(f"unsupported shape expression {ast.dump(node)}")


def eval_dim(dim, env):
    """An operand extent: int, or a symbol/expression over env (M, N, K).

    Returns None when the expression uses unknown names or syntax."""
    if isinstance(dim, bool):
        raise ValueError(f"bad extent {dim!r}")
    if isinstance(dim, int):
        return dim
    try:
        return int(_eval_node(ast.parse(str(dim), mode="eval"), env))
    except (KeyError, ValueError, SyntaxError, TypeError, ZeroDivisionError):
        return None


def resolve_shape(shape, env):
    """Tuple of extents (None where unresolvable)."""
    return tuple(eval_dim(d, env) for d in shape)


def shape_matches(expected, actual):
    """expected may hold None (unknown extents match anything)."""
    return len(expected) == len(actual) and all(
        e is None or e == a for e, a in zip(expected, actual))


# --- the kernel ----------------------------------------------------------------

@dataclass
class GemmSpec:
    name: str
    json_path: Path
    m: object  # int (static M) or a symbol string
    n: int
    k: int
    a_dtype: str
    b_dtype: str
    out_dtype: str
    a_gran: tuple
    b_gran: tuple
    accumulation: str
    bias: bool
    accumulate_into_c: bool
    activation: str = None  # gelu, gelu_tanh, silu (epilogue), or None
    output_amax: bool = False  # the epilogue also reduces max |D|
    operands: list = field(default_factory=list)
    tile: list = field(default_factory=list)
    stages: int = 0
    cluster: list = field(default_factory=list)
    stream_k: bool = False  # the tiles' K blocks are split over the CTAs
    # sm_90a swap-AB (decode) kernel: the MMA computes D^T = B A^T (the
    # metadata's gemm.swap_ab; its tile is [tokens, B rows, K]).
    swap_ab: bool = False
    # Launch variants: the kernels the runtime may launch instead of this
    # one (by M), and the kernel a variant belongs to.
    variants: list = field(default_factory=list)
    variant_of: str = None

    @property
    def recipe(self):
        return recipe_name(self.a_gran, self.b_gran)

    @property
    def static_m(self):
        return self.m if isinstance(self.m, int) else None

    @property
    def tolerance(self):
        return tolerance(self.out_dtype, self.accumulation)

    def operand(self, name):
        for op in self.operands:
            if op.get("name") == name:
                return op
        return None

    @property
    def in_place(self):
        """Whether the caller may pass C's memory as D (`in_place_of` of the
        output d): the kernel then adds A B into it (D += A B)."""
        d = self.operand("d")
        return bool(d) and d.get("in_place_of") == "c"

    def operand_dtype(self, name, default):
        op = self.operand(name)
        return op.get("dtype", default) if op else default

    def expected_shape(self, name, m):
        """Metadata shape of operand `name` at this M (None entries unknown),
        or None when the metadata does not list the operand."""
        op = self.operand(name)
        if op is None or "shape" not in op:
            return None
        env = {"M": m, "N": self.n, "K": self.k}
        if isinstance(self.m, str):
            env[self.m] = m
        return resolve_shape(op["shape"], env)

    def describe(self):
        return (f"{self.name}: {self.recipe} {self.a_dtype}x{self.b_dtype}->{self.out_dtype}"
                f" N={self.n} K={self.k} acc={self.accumulation}"
                f"{' +bias' if self.bias else ''}{' +C' if self.accumulate_into_c else ''}"
                f"{' +' + self.activation if self.activation else ''}")


def _require(section, key, path):
    if key not in section:
        raise ValueError(f"{path}: gemm section lacks '{key}'")
    return section[key]


def spec_from_meta(meta, json_path="<memory>"):
    """GemmSpec from parsed NAME.json; ValueError if it is not a GEMM kernel."""
    schema = meta.get("format", meta.get("schema", SCHEMA))
    if schema != SCHEMA:
        raise ValueError(f"{json_path}: format {schema!r} is not {SCHEMA!r}")
    gemm = meta.get("gemm")
    if not isinstance(gemm, dict):
        raise ValueError(f"{json_path}: no 'gemm' section")
    n, k = _require(gemm, "n", json_path), _require(gemm, "k", json_path)
    if not isinstance(n, int) or not isinstance(k, int):
        raise ValueError(f"{json_path}: gemm n/k must be static ints (got {n!r}, {k!r})")
    out_dtype = gemm.get("out_dtype", "bf16")
    if out_dtype not in OUT_DTYPES:
        raise ValueError(f"{json_path}: unsupported out_dtype {out_dtype!r}")
    spec = GemmSpec(
        name=meta.get("name", Path(str(json_path)).stem),
        json_path=Path(str(json_path)),
        m=_require(gemm, "m", json_path), n=n, k=k,
        a_dtype=gemm.get("a_dtype", "e4m3"), b_dtype=gemm.get("b_dtype", "e4m3"),
        out_dtype=out_dtype,
        a_gran=parse_granularity(_require(gemm, "a_granularity", json_path)),
        b_gran=parse_granularity(_require(gemm, "b_granularity", json_path)),
        accumulation=gemm.get("accumulation", "promoted(128)"),
        bias=bool(gemm.get("bias", False)),
        accumulate_into_c=bool(gemm.get("accumulate_into_c", False)),
        activation=gemm.get("activation"),
        output_amax=bool(gemm.get("output_amax", False)),
        operands=list(meta.get("operands", [])),
        tile=list(gemm.get("tile", [])), stages=int(gemm.get("stages", 0)),
        cluster=list(gemm.get("cluster", [])), stream_k=bool(gemm.get("stream_k", False)),
        swap_ab=bool(gemm.get("swap_ab", False)),
        variants=list(meta.get("variants", [])), variant_of=meta.get("variant_of"))
    for dtype in (spec.a_dtype, spec.b_dtype):
        if dtype not in FP8_MAX:
            raise ValueError(f"{json_path}: unsupported FP8 dtype {dtype!r}")
    accumulation_mode(spec.accumulation)  # validates
    return spec


def load_spec(json_path):
    with open(json_path, encoding="utf-8") as f:
        return spec_from_meta(json.load(f), json_path)


def load_specs(kernel_dir):
    """(specs, skipped): GEMM kernels of a directory, and (file, reason) of the rest."""
    specs, skipped = [], []
    paths = sorted(Path(kernel_dir).glob("*.json"))
    for path in paths:
        try:
            specs.append(load_spec(path))
        except (ValueError, json.JSONDecodeError) as e:
            skipped.append((path.name, str(e)))
    return specs, skipped


def parse_int_list(text):
    """'1,64,127' -> [1, 64, 127]."""
    values = [int(v) for v in str(text).replace(" ", "").split(",") if v]
    if not values or any(v <= 0 for v in values):
        raise ValueError(f"expected a comma-separated list of positive ints, got {text!r}")
    return values


def parse_shapes(text):
    """'8192x8192x8192,128x7168x2048' -> [(8192, 8192, 8192), (128, 7168, 2048)]."""
    shapes = []
    for item in str(text).replace(" ", "").split(","):
        if not item:
            continue
        parts = item.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
            raise ValueError(f"bad shape {item!r}: expected MxNxK")
        shapes.append(tuple(int(p) for p in parts))
    if not shapes:
        raise ValueError("no shapes given")
    return shapes
