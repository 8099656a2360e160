"""The FP8 training recipes in plain PyTorch: a reference and a baseline.

An implementation of the recipes' rules (docs/design.md, "Numerics: one
definition of the recipes"; include/FP8/Numerics/Scaling.h) written with
eager PyTorch ops only, independent of ``fp8mlir.numerics`` (the NumPy
reference) so that the two check each other:

- quantizers: per-tensor current and delayed scaling, 1x128 / 128x128
  blockwise (power-of-two or f32 scales) and per-row current scaling, each
  rowwise or columnwise (the quantization of x^T, stored transposed); the
  result is FP8 data plus ``scale_inv`` (``x ~= q * scale_inv``) on the grid
  of blocks, tails using their valid elements;
- the delayed-scaling bookkeeping (amax history record, reduction, roll and
  the scale rule);
- ``scaled_mm``: A B^T of two quantized operands through ``torch._scaled_mm``
  (per-tensor) or ``torch.nn.functional.scaled_mm`` (1x128 x 128x128 and
  1x128 x 1x128 blockwise; torch 2.11 takes 1x128 scales on both operands
  on an H100, as bench/bench_gemm.py's blockwise_1d1d peer), padding to what
  cuBLASLt accepts;
- ``TorchFP8Linear``: a drop-in ``nn.Linear`` whose forward (Y = X W^T + b)
  and backward (dX = dY W, dW = dY^T X) run these FP8 GEMMs with eager
  quantization, per recipe, saving FP8 copies of X and W for the backward.

Arithmetic: every scale rule is a chain of single f32 operations (tensor by
tensor, never a Python scalar divisor, which torch turns into a multiply by
the reciprocal); ``x * scale`` is one f32 multiply of the exact f32 value of
a bf16/f16/f32 input; the cast clamps to +-max first (``tensor.to(float8)``
does not saturate) and then rounds to nearest even with subnormals.
Amaxes propagate NaN; a NaN input gives the NaN code with the input's sign
(0x7F / 0xFF) when ``exact_nan`` is set (a GPU multiply returns a positive
NaN whatever the input's sign; ``TorchFP8Linear`` skips this fix-up).
"""

import math
import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F

FP8_DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
FLT_MAX = 3.4028234663852886e38
SIGN_AND_EXPONENT = -8388608  # 0xFF800000 as an int32
BLOCK = 128
RECIPES = ("current", "delayed", "blockwise")
# torch._scaled_mm wants K and N multiples of 16; cuBLASLt's 1x128 scales
# want M a multiple of 4. The reference pads with zero data (scale 1.0).
_GEMM_ALIGN = 16


# --- recipes --------------------------------------------------------------------

@dataclass(frozen=True)
class Recipe:
    """A recipe and its parameters, with the project's defaults.

    name: "current" | "delayed" | "blockwise".
    format (per-tensor recipes): "hybrid" (E4M3 X and W, E5M2 dY) or "e4m3".
    epsilon, pow2 (current): lower clamp of the amax; power-of-two scales.
    history, algo, margin (delayed): amax history length, "max" or
    "most_recent", scale = (fp8_max * 2^-margin) / amax.
    scales, amax_clamp (blockwise, E4M3 only): "pow2" or "f32"; lower clamp
    of each tile's amax (1e-4, DeepGEMM's; 0.0 is TE's).
    """
    name: str
    format: str = "hybrid"
    epsilon: float = 0.0
    pow2: bool = False
    history: int = 1024
    algo: str = "max"
    margin: int = 0
    scales: str = "pow2"
    amax_clamp: float = 1e-4

    def __post_init__(self):
        def require(ok, what):
            if not ok:
                raise ValueError(f"recipe {self.name!r}: {what}")
        require(self.name in RECIPES, f"unknown recipe: expected one of {RECIPES}")
        require(self.format in ("hybrid", "e4m3"), f"format {self.format!r}: expected 'hybrid' or 'e4m3'")
        require(math.isfinite(self.epsilon) and self.epsilon >= 0, f"epsilon {self.epsilon} must be finite and >= 0")
        require(isinstance(self.history, int) and 1 <= self.history <= 65536,
                f"history {self.history!r} must be an integer in [1, 65536]")
        require(self.algo in ("max", "most_recent"), f"algo {self.algo!r}: expected 'max' or 'most_recent'")
        require(isinstance(self.margin, int) and 0 <= self.margin <= 64,
                f"margin {self.margin!r} must be an integer in [0, 64]")
        require(self.scales in ("pow2", "f32"), f"scales {self.scales!r}: expected 'pow2' or 'f32'")
        require(math.isfinite(self.amax_clamp) and self.amax_clamp >= 0,
                f"amax_clamp {self.amax_clamp} must be finite and >= 0")

    @property
    def grad_format(self):
        """The element format of dY: E5M2 for hybrid per-tensor recipes."""
        return "e5m2" if self.name != "blockwise" and self.format == "hybrid" else "e4m3"


def make_recipe(recipe, **options):
    """A Recipe from a name and keyword parameters, or a Recipe as it is."""
    if isinstance(recipe, Recipe):
        if options:
            raise ValueError("pass either a Recipe or a name with options, not both")
        return recipe
    return Recipe(str(recipe), **options)


# --- scale rules (elementwise on f32 tensors) ---------------------------------------

def _full(like, value):
    return torch.full_like(like, value, dtype=torch.float32)


def _finite_or_max(scale):
    """inf -> FLT_MAX (NaN stays)."""
    return torch.where(torch.isinf(scale), _full(scale, FLT_MAX), scale)


def _pow2_floor(scale):
    """Keep the sign and exponent bits of f32 values."""
    return (scale.contiguous().view(torch.int32) & SIGN_AND_EXPONENT).view(torch.float32)


def current_scale(amax, fmt, epsilon=0.0, pow2=False):
    """Current scaling: fp8_max / max(amax, epsilon) in f32; 1 for an amax of
    0, inf or NaN; FLT_MAX where the quotient overflows; optionally rounded
    down to a power of two."""
    amax = amax.float()
    eps = _full(amax, epsilon)
    amax = torch.where(amax < eps, eps, amax)
    usable = torch.isfinite(amax) & (amax != 0)
    one = _full(amax, 1.0)
    quotient = _full(amax, FP8_MAX[fmt]) / torch.where(usable, amax, one)
    scale = torch.where(usable, _finite_or_max(quotient), one)
    return _pow2_floor(scale) if pow2 else scale


def scale_inverse(scale):
    """1 / scale in f32 (what the GEMMs consume)."""
    return _full(scale, 1.0) / scale


def blockwise_scales(amax, kind="pow2", amax_clamp=0.0):
    """(scale, scale_inv) of E4M3 tiles. pow2: TE's rule, 448 / max(amax,
    clamp) rounded down to a power of two, scale_inv = 1 / scale. f32:
    DeepGEMM's, scale_inv = max(amax, clamp) / 448, scale = 1 / scale_inv;
    1 and 1 for an unusable (0, inf, NaN) tile."""
    amax = amax.float()
    clamp = _full(amax, amax_clamp)
    clamped = torch.where(amax < clamp, clamp, amax)
    if kind == "pow2":
        scale = current_scale(clamped, "e4m3", 0.0, pow2=True)
        return scale, scale_inverse(scale)
    if kind != "f32":
        raise ValueError(f"unknown blockwise scale kind {kind!r}: expected 'pow2' or 'f32'")
    one = _full(clamped, 1.0)
    usable = torch.isfinite(clamped) & (clamped != 0)
    scale_inv = torch.where(usable, clamped, one) / _full(clamped, FP8_MAX["e4m3"])
    usable = usable & (scale_inv != 0)
    scale = _finite_or_max(one / torch.where(usable, scale_inv, one))
    return torch.where(usable, scale, one), torch.where(usable, scale_inv, one)


def _delayed_scale_from_max(amax, previous_scale, scaled_max):
    """scaled_max / amax where amax is finite and > 0, else the previous
    scale; inf -> FLT_MAX. scaled_max: a tensor broadcastable to amax."""
    amax = amax.float()
    previous = torch.as_tensor(previous_scale, dtype=torch.float32, device=amax.device)
    ok = torch.isfinite(amax) & (amax > 0)
    quotient = scaled_max.float().expand_as(amax) / torch.where(ok, amax, _full(amax, 1.0))
    return _finite_or_max(torch.where(ok, quotient, previous.expand_as(amax)))


def delayed_scale(amax, previous_scale, fmt, margin=0):
    """Delayed scaling: (fp8_max * 2^-margin) / amax, or the previous scale."""
    amax = amax.float()
    return _delayed_scale_from_max(amax, previous_scale, _full(amax, math.ldexp(FP8_MAX[fmt], -margin)))


def history_amax(history, algo="max"):
    """The amax of amax histories [..., L]: max over the last dimension
    ignoring NaN slots (all NaN -> NaN), or slot 0 for most_recent."""
    if algo == "most_recent":
        return history[..., 0]
    if algo != "max":
        raise ValueError(f"unknown amax algorithm {algo!r}")
    nan = torch.isnan(history)
    largest = torch.where(nan, _full(history, -math.inf), history).amax(dim=-1)
    return torch.where(nan.all(dim=-1), _full(largest, math.nan), largest)


def record_amax(history, amax):
    """In place: history[..., 0] = max(history[..., 0], amax), NaN sticky."""
    slot = history[..., 0]
    amax = amax.float().expand_as(slot)
    nan = torch.isnan(slot) | torch.isnan(amax)
    history[..., 0] = torch.where(nan, _full(slot, math.nan), torch.maximum(slot, amax))


def roll_history(history):
    """In place, TE's roll: new[i] = old[i + 1], new[L - 1] = old[0], new[0] = 0."""
    rolled = torch.roll(history, shifts=-1, dims=-1)
    rolled[..., 0] = 0.0
    history.copy_(rolled)


# --- quantization -----------------------------------------------------------------

@dataclass
class Quantized:
    """FP8 ``data`` [rows, cols]; ``scale_inv`` f32 on the block grid
    [ceil(rows / block[0]), ceil(cols / block[1])] ([1, 1] per tensor);
    ``amax`` the NaN-propagating max |x| of the input (f32 scalar tensor);
    ``granularity`` "tensor", "row" or a (rows, cols) tile."""
    data: torch.Tensor
    scale_inv: torch.Tensor
    amax: torch.Tensor
    fmt: str
    granularity: object
    block: tuple

    def codes(self):
        """The data as uint8 codes."""
        return self.data.view(torch.uint8)

    def dequantize(self, dtype=torch.float64):
        """data * scale_inv of its block (exact in f64)."""
        rows, cols = self.data.shape
        values = self.data.float().to(dtype)
        scale = self.scale_inv.to(dtype)
        if scale.numel() == 1:
            return values * scale.reshape(())
        scale = scale.repeat_interleave(self.block[0], 0).repeat_interleave(self.block[1], 1)
        return values * scale[:rows, :cols]

    def transposed(self):
        """The quantization of x^T where it is the transpose of this one's
        (per tensor, square tiles): the bytes and scales transposed."""
        if self.granularity != "tensor" and self.block[0] != self.block[1]:
            raise ValueError(f"a {self.block[0]}x{self.block[1]} quantization of x^T is not "
                             "the transpose of x's; quantize with transposed=True")
        data = self.data.view(torch.uint8).t().contiguous().view(self.data.dtype)
        return Quantized(data, self.scale_inv.t().contiguous(), self.amax, self.fmt,
                         self.granularity, (self.block[1], self.block[0]))


def _block_shape(granularity, rows, cols):
    if granularity == "tensor":
        return rows, cols
    if granularity == "row":
        return 1, cols
    if (isinstance(granularity, tuple) and len(granularity) == 2
            and all(isinstance(v, int) and v > 0 for v in granularity)):
        return granularity
    raise ValueError(f"unknown granularity {granularity!r}: expected 'tensor', 'row' or "
                     "a (rows, cols) tile of positive integers")


def _compute_input(x):
    """x as the quantizer reads it: bf16/f16/f32 as they are (each converts
    exactly to f32), other floating types rounded to f32."""
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got {getattr(x, 'shape', type(x))}")
    if x.shape[0] == 0 or x.shape[1] == 0:
        raise ValueError(f"cannot quantize an empty tensor of shape {tuple(x.shape)}")
    if x.dtype in (torch.bfloat16, torch.float16, torch.float32):
        return x
    if x.is_floating_point():
        return x.float()
    raise TypeError(f"cannot quantize a {x.dtype} tensor")


def _block_amax(blocks):
    """max |x| of each block of a [gr, br, gc, bc] view -> [gr, gc] f32,
    NaN-propagating (torch.aminmax and torch.maximum propagate NaN)."""
    if blocks.shape[3] == 1:  # column blocks: reduce along the rows only
        low, high = torch.aminmax(blocks[..., 0], dim=1)
        return torch.maximum(high, -low).float()
    low, high = torch.aminmax(blocks, dim=3)
    segment = torch.maximum(high, -low)
    return torch.aminmax(segment, dim=1).max.float()


def _saturating_cast(scaled, fmt):
    """f32 -> fp8, RNE with subnormals, saturating (NaN stays NaN)."""
    limit = FP8_MAX[fmt]
    return scaled.clamp_(-limit, limit).to(FP8_DTYPES[fmt])


def _with_signed_nan_codes(q, x):
    """Where x is NaN, the NaN code with x's sign (0x7F / 0xFF)."""
    codes = q.view(torch.uint8)
    nan_codes = (torch.signbit(x).to(torch.uint8) << 7) | 0x7F
    return torch.where(torch.isnan(x), nan_codes, codes).view(q.dtype)


def _quantize_blocks(x, block, fmt, rule, exact_nan):
    """Quantizes x [R, C] in blocks of block = (br, bc): rule(block_amax)
    gives (scale, scale_inv). Tails use their valid elements (zero padding
    leaves a block's amax as it is)."""
    rows, cols = x.shape
    br, bc = block
    grid = (-(-rows // br), -(-cols // bc))
    pad_rows, pad_cols = grid[0] * br - rows, grid[1] * bc - cols
    padded = F.pad(x, (0, pad_cols, 0, pad_rows)) if pad_rows or pad_cols else x
    blocks = padded.reshape(grid[0], br, grid[1], bc)
    amax = _block_amax(blocks)
    scale, scale_inv = rule(amax)
    # bf16/f16/f32 times f32: one f32 multiply of the exact f32 input.
    scaled = blocks * scale.reshape(grid[0], 1, grid[1], 1)
    q = _saturating_cast(scaled, fmt).reshape(grid[0] * br, grid[1] * bc)
    if pad_rows or pad_cols:
        q = q.view(torch.uint8)[:rows, :cols].contiguous().view(q.dtype)
    if exact_nan:
        q = _with_signed_nan_codes(q, x)
    return q, scale_inv, torch.aminmax(amax).max


def quantize(x, recipe, fmt="e4m3", granularity="tensor", transposed=False, *,
             scale=None, epsilon=0.0, pow2=False, scales="pow2", amax_clamp=0.0,
             exact_nan=True):
    """Quantizes a 2-D tensor with one recipe (the arguments of
    ``fp8mlir.numerics.quantize``, whose results this reproduces bit for bit).

    recipe: "delayed" (per tensor, the given ``scale``: a positive finite
    float or an f32 scalar tensor), "current" (``epsilon``, ``pow2``; per
    tensor or per row), "blockwise" (E4M3; ``scales`` "pow2" or "f32",
    ``amax_clamp``; tiles such as (1, 128) and (128, 128)).
    transposed: quantize x^T (the columnwise output), stored [cols, rows].
    exact_nan: give NaN inputs the NaN code with their sign (one more pass).
    amax_clamp defaults to 0.0 here as in numerics.quantize; the blockwise
    recipe's default (Recipe, quantize_blockwise, TorchFP8Linear) is 1e-4.
    """
    if fmt not in FP8_DTYPES:
        raise ValueError(f"unknown fp8 format {fmt!r}: expected one of {tuple(FP8_DTYPES)}")
    x = _compute_input(x)
    rows, cols = (x.shape[1], x.shape[0]) if transposed else tuple(x.shape)
    block = _block_shape(granularity, rows, cols)
    if recipe == "delayed":
        if granularity != "tensor":
            raise ValueError("delayed scaling is per-tensor")
        if scale is None:
            raise ValueError("delayed scaling needs the scale computed from the amax history")
        if not isinstance(scale, torch.Tensor):
            if not (math.isfinite(scale) and scale > 0):
                raise ValueError(f"delayed scaling needs a finite scale > 0, got {scale}")
            scale = torch.tensor(float(scale), dtype=torch.float32, device=x.device)
        given = scale.float().reshape(())

        def rule(amax):
            s = given.expand_as(amax).contiguous()
            return s, scale_inverse(s)
    elif recipe == "current":
        if granularity not in ("tensor", "row"):
            raise ValueError("current scaling is per tensor or per row")

        def rule(amax):
            s = current_scale(amax, fmt, epsilon, pow2)
            return s, scale_inverse(s)
    elif recipe == "blockwise":
        if fmt != "e4m3":
            raise ValueError("blockwise scaling is defined for E4M3 only")

        def rule(amax):
            return blockwise_scales(amax, scales, amax_clamp)
    else:
        raise ValueError(f"unknown recipe {recipe!r}: expected one of {RECIPES} "
                         "(MXFP8 has no torch reference here: sm_100a only)")
    # x^T in blocks (br, bc) is x in blocks (bc, br), transposed afterwards.
    on_x = (block[1], block[0]) if transposed else block
    q, scale_inv, amax = _quantize_blocks(x, on_x, fmt, rule, exact_nan)
    if transposed:
        q = q.view(torch.uint8).t().contiguous().view(q.dtype)
        scale_inv = scale_inv.t().contiguous()
    return Quantized(q, scale_inv, amax, fmt, granularity, tuple(block))


def quantize_current(x, fmt="e4m3", transposed=False, *, epsilon=0.0, pow2=False,
                     granularity="tensor"):
    """Current scaling (per tensor, or "row"): (fp8 data, scale_inv)."""
    q = quantize(x, "current", fmt, granularity, transposed, epsilon=epsilon, pow2=pow2)
    return q.data, q.scale_inv


def quantize_delayed(x, scale, fmt="e4m3", transposed=False):
    """Delayed scaling with the scale of the previous steps: (fp8 data,
    scale_inv); the amax to record is quantize(...).amax."""
    q = quantize(x, "delayed", fmt, "tensor", transposed, scale=scale)
    return q.data, q.scale_inv


def quantize_blockwise(x, tile=(1, BLOCK), transposed=False, *, scales="pow2", amax_clamp=1e-4):
    """Blockwise E4M3 in tiles (1x128, 128x128): (fp8 data, scale_inv on the
    tile grid [ceil(rows / tile[0]), ceil(cols / tile[1])])."""
    q = quantize(x, "blockwise", "e4m3", tuple(tile), transposed, scales=scales,
                 amax_clamp=amax_clamp)
    return q.data, q.scale_inv


# --- GEMMs ------------------------------------------------------------------------

def _round_up(value, multiple):
    return -(-value // multiple) * multiple


def _pad_data(q, rows, cols):
    """fp8 [R, C] zero-padded to [rows, cols] (no copy when it fits)."""
    if tuple(q.shape) == (rows, cols):
        return q
    out = torch.zeros((rows, cols), dtype=torch.uint8, device=q.device)
    out[:q.shape[0], :q.shape[1]] = q.view(torch.uint8)
    return out.view(q.dtype)


def _pad_scales(s, rows, cols):
    """f32 [R, C] padded with 1.0 to [rows, cols], contiguous."""
    if tuple(s.shape) == (rows, cols):
        return s.contiguous()
    out = torch.ones((rows, cols), dtype=torch.float32, device=s.device)
    out[:s.shape[0], :s.shape[1]] = s
    return out


_fallback_warned = set()


def _blockwise_gemm(a, b, out_dtype):
    """F.scaled_mm of 1x128 A [M, K] and 1x128 or 128x128 B [N, K]: A's
    scales (M, K/128) with strides (1, M); a 1x128 B's likewise (N, K/128)
    strides (1, N); a 128x128 B's (roundup(K/128, 4), ceil(N/128)) strides
    (1, roundup(K/128, 4)). M, N padded to 16 and K to 128 with zero data."""
    from torch.nn.functional import ScalingType, SwizzleType, scaled_mm
    m, k = a.data.shape
    n = b.data.shape[0]
    mp, np_, kp = _round_up(m, _GEMM_ALIGN), _round_up(n, _GEMM_ALIGN), _round_up(k, BLOCK)
    kb = -(-k // BLOCK)
    a_data = _pad_data(a.data, mp, kp)
    a_scale = _pad_scales(a.scale_inv, mp, kb).t().contiguous().t()
    b_data = _pad_data(b.data, np_, kp)
    if b.block == (1, BLOCK):
        b_scale = _pad_scales(b.scale_inv, np_, kb).t().contiguous().t()
        b_recipe = ScalingType.BlockWise1x128
    else:
        b_scale = _pad_scales(b.scale_inv, -(-n // BLOCK), _round_up(kb, 4)).t()
        b_recipe = ScalingType.BlockWise128x128

    def call(dtype):
        return scaled_mm(a_data, b_data.t(), a_scale, ScalingType.BlockWise1x128,
                         b_scale, b_recipe, swizzle_a=SwizzleType.NO_SWIZZLE,
                         swizzle_b=SwizzleType.NO_SWIZZLE, output_dtype=dtype)
    try:
        out = call(out_dtype)
    except (RuntimeError, ValueError) as e:
        if out_dtype != torch.float32:
            raise
        # Should cuBLASLt refuse an f32 output for block scales: bf16, widened.
        key = (b_recipe, str(e).splitlines()[0][:200])
        if key not in _fallback_warned:
            _fallback_warned.add(key)
            warnings.warn(f"F.scaled_mm rejected an f32 output ({key[1]}); "
                          "computing it in bf16 and widening", RuntimeWarning)
        out = call(torch.bfloat16).float()
    return out[:m, :n] if (mp, np_) != (m, n) else out


def _tensorwise_gemm(a, b, out_dtype):
    """torch._scaled_mm of per-tensor A [M, K] and B [N, K] (B passed
    column-major as b.t()); K and N padded to multiples of 16."""
    m, k = a.data.shape
    n = b.data.shape[0]
    kp, np_ = _round_up(k, _GEMM_ALIGN), _round_up(n, _GEMM_ALIGN)
    out = torch._scaled_mm(_pad_data(a.data, m, kp), _pad_data(b.data, np_, kp).t(),
                           a.scale_inv.reshape(()), b.scale_inv.reshape(()),
                           out_dtype=out_dtype, use_fast_accum=False)
    return out[:, :n] if np_ != n else out


def scaled_mm(a, b, out_dtype, bias=None):
    """A B^T (+ bias) of quantized A [M, K] and B [N, K] -> [M, N] in
    out_dtype. Per-tensor x per-tensor: torch._scaled_mm; 1x128 x 128x128
    or 1x128 x 1x128: F.scaled_mm. Both accumulate in f32 with cuBLASLt's
    promotion (no fast accumulation). A bias is added to the f32 product
    before the one rounding to out_dtype."""
    if a.data.shape[1] != b.data.shape[1]:
        raise ValueError(f"K mismatch: A {tuple(a.data.shape)}, B {tuple(b.data.shape)}")
    gemm_dtype = torch.float32 if bias is not None else out_dtype
    if a.granularity == "tensor" and b.granularity == "tensor":
        out = _tensorwise_gemm(a, b, gemm_dtype)
    elif a.block == (1, BLOCK) and b.block in ((1, BLOCK), (BLOCK, BLOCK)):
        out = _blockwise_gemm(a, b, gemm_dtype)
    else:
        raise ValueError(f"no torch FP8 GEMM for {a.granularity} x {b.granularity} operands")
    if bias is not None:
        out = (out + bias.float()).to(out_dtype)
    return out.contiguous()


# --- the linear layer ------------------------------------------------------------------

_X, _W, _DY = 0, 1, 2  # rows of the delayed-scaling state


def _quantize_for_layer(t, layer, which, fmt, recording, granularity=None, transposed=False):
    """t quantized as layer.recipe prescribes for tensor `which`."""
    r = layer.recipe
    if r.name == "blockwise":
        return quantize(t, "blockwise", "e4m3", granularity, transposed, scales=r.scales,
                        amax_clamp=r.amax_clamp, exact_nan=False)
    if r.name == "current":
        return quantize(t, "current", fmt, "tensor", epsilon=r.epsilon, pow2=r.pow2,
                        exact_nan=False)
    q = quantize(t, "delayed", fmt, "tensor", scale=layer.fp8_scale[which], exact_nan=False)
    if recording:
        record_amax(layer.amax_history[which], q.amax)
    return q


class _FP8LinearFunction(torch.autograd.Function):
    """Y = X W^T + b with FP8 GEMMs; X [M, K], W [N, K]."""

    @staticmethod
    def forward(ctx, x, weight, bias, layer, recording):
        blockwise = layer.recipe.name == "blockwise"
        qx = _quantize_for_layer(x, layer, _X, "e4m3", recording, (1, BLOCK))
        qw = _quantize_for_layer(weight, layer, _W, "e4m3", recording, (BLOCK, BLOCK))
        y = scaled_mm(qx, qw, x.dtype, bias)
        # For the backward, FP8 only: X^T for wgrad (K = M), W^T for dgrad
        # (K = N). Per tensor and 128x128 they are the same bytes transposed;
        # X's 1x128 blocks along M are a second quantization.
        need_dx, need_dw = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        x_t = w_t = None
        if need_dw:
            x_t = (_quantize_for_layer(x, layer, _X, "e4m3", False, (1, BLOCK), transposed=True)
                   if blockwise else qx.transposed())
        if need_dx:
            w_t = qw.transposed()
        ctx.quantized = (x_t, w_t)
        ctx.layer, ctx.recording = layer, recording
        ctx.dtypes = (x.dtype, weight.dtype, None if bias is None else bias.dtype)
        return y

    @staticmethod
    def backward(ctx, dy):
        layer = ctx.layer
        r = layer.recipe
        x_t, w_t = ctx.quantized
        ctx.quantized = None
        x_dtype, w_dtype, b_dtype = ctx.dtypes
        dy = dy.contiguous()
        dx = dw = db = None
        if r.name == "blockwise":
            if w_t is not None:
                qdy = _quantize_for_layer(dy, layer, _DY, "e4m3", False, (1, BLOCK))
                dx = scaled_mm(qdy, w_t, x_dtype)
            if x_t is not None:
                qdy_t = _quantize_for_layer(dy, layer, _DY, "e4m3", False, (1, BLOCK), transposed=True)
                dw = scaled_mm(qdy_t, x_t, w_dtype)
        else:
            qdy = _quantize_for_layer(dy, layer, _DY, r.grad_format, ctx.recording)
            if w_t is not None:
                dx = scaled_mm(qdy, w_t, x_dtype)
            if x_t is not None:
                dw = scaled_mm(qdy.transposed(), x_t, w_dtype)
            if r.name == "delayed" and ctx.recording:
                layer.update_delayed_scales()
        if b_dtype is not None and ctx.needs_input_grad[2]:
            db = dy.float().sum(dim=0).to(b_dtype)
        return dx, dw, db, None, None


class TorchFP8Linear(torch.nn.Linear):
    """``nn.Linear`` computing its three GEMMs in FP8 with plain PyTorch.

    recipe: "current", "delayed" or "blockwise" (or a Recipe), with the
    Recipe parameters as keyword options. Per recipe:
    - current / delayed: X, W per-tensor E4M3, dY E5M2 (hybrid) or E4M3;
      torch._scaled_mm. Delayed scaling keeps its state in buffers
      ``fp8_scale`` [3] and ``amax_history`` [3, history] (rows X, W, dY;
      saved in the state_dict): the casts of a training step use the scales
      of the previous steps and record this step's amaxes, and after the
      backward each scale is recomputed from its history, which is rolled.
      Forwards without grad (evaluation) neither record nor update.
    - blockwise: X and dY 1x128 along each GEMM's K (so X and dY are
      quantized twice: rowwise for fprop/dgrad, columnwise for wgrad), W
      128x128 (once; W^T is its transpose); F.scaled_mm 1x128 x 128x128
      (fprop, dgrad) and 1x128 x 1x128 (wgrad).
    The forward keeps only FP8 X^T and W^T (and their scales) for the
    backward. Outputs: Y and dX in X's dtype (the autocast dtype under
    autocast), dW in W's dtype.
    """

    def __init__(self, in_features, out_features, bias=True, recipe="current",
                 device=None, dtype=None, **options):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.recipe = make_recipe(recipe, **options)
        if self.recipe.name == "delayed":
            f32 = dict(dtype=torch.float32, device=device)
            self.register_buffer("fp8_scale", torch.ones(3, **f32))
            self.register_buffer("amax_history", torch.zeros(3, self.recipe.history, **f32))
            maxima = [FP8_MAX["e4m3"], FP8_MAX["e4m3"], FP8_MAX[self.recipe.grad_format]]
            self.register_buffer("fp8_scaled_max", torch.tensor(
                [math.ldexp(m, -self.recipe.margin) for m in maxima], **f32), persistent=False)

    def extra_repr(self):
        return f"{super().extra_repr()}, recipe={self.recipe}"

    @torch.no_grad()
    def update_delayed_scales(self):
        """After a step: scale = rule(history amax, previous scale); roll."""
        amax = history_amax(self.amax_history, self.recipe.algo)
        self.fp8_scale.copy_(_delayed_scale_from_max(amax, self.fp8_scale, self.fp8_scaled_max))
        roll_history(self.amax_history)

    @torch.no_grad()
    def record_and_update(self, x, weight, dy):
        """The state change of one step that cast x, weight and dy (what
        a calibration step records too): each tensor's amax recorded into
        its history, then update_delayed_scales()."""
        for which, t in enumerate((x, weight, dy)):
            low, high = torch.aminmax(t.detach().reshape(-1))
            record_amax(self.amax_history[which], torch.maximum(high, -low).float())
        self.update_delayed_scales()

    def forward(self, x):
        if self.recipe.name == "delayed" and (self.fp8_scale.dtype != torch.float32
                                              or self.amax_history.dtype != torch.float32):
            raise TypeError("TorchFP8Linear: the delayed-scaling buffers must stay float32 "
                            "(convert the parameters, not the module, to another dtype)")
        if torch.is_autocast_enabled(x.device.type):
            x = x.to(torch.get_autocast_dtype(x.device.type))
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        recording = self.training and torch.is_grad_enabled()
        with torch.autocast(x.device.type, enabled=False):
            y = _FP8LinearFunction.apply(x2, self.weight, self.bias, self, recording)
        return y.reshape(*lead, self.out_features)
