"""NumPy reference of every recipe's quantization.

An independent implementation of the definitions of ``FP8/Numerics``
(docs: shared numerics spec, ``include/FP8/Numerics/*.h``): the tests check it
bit for bit against the C++ library through the C API
(``fp8QuantizedTensor*``). Arrays are f32; fp8 data and UE8M0 scales are
``uint8`` codes; ``scale_inv`` is what the GEMM consumes (``x ~= q * scale_inv``).

Every float32 operation below is one IEEE single-precision operation (NumPy
rounds each to nearest even), as in the C++ library, which is compiled
without FMA contraction.
"""

from dataclasses import dataclass

import numpy as np

FORMATS = ("e4m3", "e5m2")


@dataclass(frozen=True)
class _FormatInfo:
    bias: int
    mantissa_bits: int
    max_finite: float
    max_exponent: int  # of max_finite, the OCP MX emax_elem
    nan_code: int
    has_inf: bool


_INFO = {
    "e4m3": _FormatInfo(7, 3, 448.0, 8, 0x7F, False),
    "e5m2": _FormatInfo(15, 2, 57344.0, 15, 0x7F, True),
}

# f32 RN of 1/448 and 1/57344 (Scaling.h kRcpE4M3MaxBits / kRcpE5M2MaxBits).
_RCP_MAX_BITS = {"e4m3": 0x3B124925, "e5m2": 0x37924925}
_FLT_MAX = np.float32(np.finfo(np.float32).max)
_SIGN_AND_EXPONENT = np.uint32(0xFF800000)


def _info(fmt):
    if fmt not in _INFO:
        raise ValueError(f"unknown fp8 format {fmt!r}: expected one of {FORMATS}")
    return _INFO[fmt]


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def max_finite(fmt):
    return _info(fmt).max_finite


def encode(fmt, x):
    """f32 -> fp8 codes as PTX ``cvt.rn.satfinite``: RNE with subnormals,
    overflow and inf saturate, NaN -> 0x7F with the input's sign."""
    info = _info(fmt)
    x = _f32(x)
    sign = np.signbit(x).astype(np.uint8) << 7
    nan = np.isnan(x)
    mag = np.abs(np.where(nan, np.float32(0), x)).astype(np.float64)  # exact
    min_exponent = 1 - info.bias
    # Exponent of each value (subnormals use the minimum): the rounding step
    # is 2^(e - mantissa_bits); the division by it is exact in f64.
    _, frexp_exp = np.frexp(mag)
    e = np.maximum(frexp_exp - 1, min_exponent)
    step = np.ldexp(1.0, e - info.mantissa_bits)
    rounded = np.round(mag / step) * step  # np.round: ties to even
    rounded = np.minimum(rounded, info.max_finite)  # satfinite
    # Encode the rounded magnitude (rounding may have carried a binade up).
    _, r_exp = np.frexp(rounded)
    r_e = r_exp - 1
    normal = rounded >= np.ldexp(1.0, min_exponent)
    exp_field = np.where(normal, r_e + info.bias, 0)
    mant = np.where(normal,
                    rounded / np.ldexp(1.0, r_e - info.mantissa_bits) - (1 << info.mantissa_bits),
                    rounded / np.ldexp(1.0, min_exponent - info.mantissa_bits))
    code = (exp_field.astype(np.int64) << info.mantissa_bits) | mant.astype(np.int64)
    code = np.where(nan, info.nan_code, code).astype(np.uint8)
    return code | sign


def decode(fmt, codes):
    """fp8 codes -> f32 (exact)."""
    info = _info(fmt)
    codes = np.asarray(codes, dtype=np.uint8)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp_field = (codes >> info.mantissa_bits) & ((1 << (7 - info.mantissa_bits)) - 1)
    mant = (codes & ((1 << info.mantissa_bits) - 1)).astype(np.float64)
    min_exponent = 1 - info.bias
    value = np.where(exp_field == 0,
                     np.ldexp(mant, min_exponent - info.mantissa_bits),
                     np.ldexp(1.0 + mant / (1 << info.mantissa_bits),
                              exp_field.astype(np.int64) - info.bias))
    magnitude_code = codes & 0x7F
    if info.has_inf:
        all_ones_exp = exp_field == (1 << (7 - info.mantissa_bits)) - 1
        value = np.where(all_ones_exp & (mant == 0), np.inf, value)
        value = np.where(all_ones_exp & (mant != 0), np.nan, value)
    else:
        value = np.where(magnitude_code == 0x7F, np.nan, value)
    # copysign: NaNs keep the code's sign too.
    return np.copysign(value, sign).astype(np.float32)


def encode_ue8m0_round_up(x):
    """|x| rounded up to 2^(e-127), e in [0, 254]; NaN -> 0xFF, inf -> 0xFE."""
    mag = np.abs(_f32(x)).astype(np.float64)
    nan = np.isnan(mag)
    safe = np.where(nan | np.isinf(mag) | (mag == 0), 1.0, mag)
    m, p = np.frexp(safe)  # safe = m * 2^p, m in [0.5, 1)
    ceil_log2 = np.where(m == 0.5, p - 1, p)
    code = np.clip(ceil_log2 + 127, 0, 254)
    code = np.where(mag == 0, 0, code)
    code = np.where(np.isinf(mag), 0xFE, code)
    code = np.where(nan, 0xFF, code)
    return code.astype(np.uint8)


def decode_ue8m0(codes):
    codes = np.asarray(codes, dtype=np.uint8)
    value = np.ldexp(1.0, codes.astype(np.int64) - 127)
    return np.where(codes == 0xFF, np.nan, value).astype(np.float32)


# --- scale rules ---------------------------------------------------------------

def _finite_or_max(scale):
    return np.where(np.isinf(scale), _FLT_MAX, scale).astype(np.float32)


def current_scaling_scale(amax, fmt, epsilon=0.0, pow2=False):
    """TE current scaling: fp8_max / max(amax, epsilon); 1 for 0/inf/NaN."""
    amax = _f32(amax)
    eps = np.float32(epsilon)
    amax = np.where(amax < eps, eps, amax).astype(np.float32)
    usable = np.isfinite(amax) & (amax != 0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        scale = np.float32(_info(fmt).max_finite) / np.where(usable, amax, np.float32(1))
    scale = np.where(usable, _finite_or_max(scale), np.float32(1)).astype(np.float32)
    if pow2:
        scale = (scale.view(np.uint32) & _SIGN_AND_EXPONENT).view(np.float32)
    return scale


def scale_inverse(scale):
    with np.errstate(divide="ignore"):
        return (np.float32(1) / _f32(scale)).astype(np.float32)


def history_amax(history, algo="max"):
    """Delayed scaling: the amax of an amax history (NaN slots skipped by max)."""
    history = _f32(history)
    if history.size == 0:
        return np.float32(0)
    if algo == "most_recent":
        return history[0]
    if algo != "max":
        raise ValueError(f"unknown amax algorithm {algo!r}")
    finite = history[~np.isnan(history)]
    return np.float32(np.nan) if finite.size == 0 else finite.max()


def delayed_scaling_scale(amax, previous_scale, fmt, margin=0):
    amax = np.float32(amax)
    scaled_max = np.float32(np.ldexp(_info(fmt).max_finite, -margin))
    if np.isfinite(amax) and amax > 0:
        with np.errstate(over="ignore"):
            scale = scaled_max / amax
    else:
        scale = np.float32(previous_scale)
    return np.float32(_finite_or_max(np.float32(scale)))


def blockwise_scale(amax, kind="pow2", amax_clamp=0.0):
    """DeepSeek-V3 blockwise (E4M3): (scale, scale_inv) arrays."""
    amax = _f32(amax)
    clamp = np.float32(amax_clamp)
    clamped = np.where(amax < clamp, clamp, amax).astype(np.float32)
    if kind == "pow2":
        scale = current_scaling_scale(clamped, "e4m3", 0.0, pow2=True)
        return scale, scale_inverse(scale)
    if kind != "f32":
        raise ValueError(f"unknown blockwise scale kind {kind!r}")
    usable = np.isfinite(clamped) & (clamped != 0)
    scale_inv = (np.where(usable, clamped, np.float32(1)) / np.float32(448.0)).astype(np.float32)
    usable &= scale_inv != 0
    with np.errstate(divide="ignore", over="ignore"):
        scale = _finite_or_max(np.float32(1) / np.where(usable, scale_inv, np.float32(1)))
    return (np.where(usable, scale, np.float32(1)).astype(np.float32),
            np.where(usable, scale_inv, np.float32(1)).astype(np.float32))


def _floor_log2(mag):
    _, p = np.frexp(mag.astype(np.float64))
    return p - 1


def mx_scale_exponent(amax, fmt, rounding="round_up"):
    """UE8M0 code of an MX block's scale_inv."""
    mag = np.abs(_f32(amax))
    if rounding == "round_up":
        rcp = np.array([_RCP_MAX_BITS[fmt]], dtype=np.uint32).view(np.float32)[0]
        with np.errstate(over="ignore", under="ignore"):
            return encode_ue8m0_round_up((mag * rcp).astype(np.float32))
    if rounding != "ocp":
        raise ValueError(f"unknown UE8M0 rounding {rounding!r}")
    safe = np.where(np.isfinite(mag) & (mag != 0), mag, np.float32(1))
    exponent = np.clip(_floor_log2(safe) - _info(fmt).max_exponent, -127, 127) + 127
    exponent = np.where(mag == 0, 0, exponent)
    exponent = np.where(np.isinf(mag), 0xFE, exponent)
    exponent = np.where(np.isnan(mag), 0xFF, exponent)
    return exponent.astype(np.uint8)


def mx_quantize_multiplier(codes):
    """2^(127 - e), exact in f32 (e = 0xFF -> NaN)."""
    codes = np.asarray(codes, dtype=np.uint8)
    value = np.ldexp(1.0, 127 - codes.astype(np.int64))
    return np.where(codes == 0xFF, np.nan, value).astype(np.float32)


# --- quantize ------------------------------------------------------------------

@dataclass
class Quantized:
    """fp8 ``data`` (uint8 codes, rows x cols), ``scale_inv`` (f32 grid, or
    UE8M0 codes for MX), and the input's NaN-propagating ``amax``."""
    data: np.ndarray
    scale_inv: np.ndarray
    amax: np.float32
    fmt: str
    block: tuple

    def dequantize(self):
        """decode(q) * scale_inv of its block, f32."""
        scale = decode_ue8m0(self.scale_inv) if self.scale_inv.dtype == np.uint8 else self.scale_inv
        rows, cols = self.data.shape
        full = np.repeat(np.repeat(scale, self.block[0], 0), self.block[1], 1)[:rows, :cols]
        return (decode(self.fmt, self.data) * full).astype(np.float32)


def _amax(x):
    """NaN-propagating max |x| (0 for an empty array)."""
    if x.size == 0:
        return np.float32(0)
    return np.float32(np.max(np.abs(x)))


def _block_amax(x, block_rows, block_cols):
    rows, cols = x.shape
    grid = (-(-rows // block_rows), -(-cols // block_cols))
    padded = np.zeros((grid[0] * block_rows, grid[1] * block_cols), np.float32)
    padded[:rows, :cols] = np.abs(x)  # zero padding leaves each amax as is
    blocks = padded.reshape(grid[0], block_rows, grid[1], block_cols)
    return blocks.max(axis=(1, 3)).astype(np.float32)  # NaN-propagating


RECIPES = ("delayed", "current", "blockwise", "mxfp8")


def quantize(x, recipe, fmt="e4m3", granularity="tensor", transposed=False, *,
             scale=None, epsilon=0.0, pow2=False, scales="pow2", amax_clamp=0.0,
             rounding="round_up"):
    """Quantizes a 2-D array with one recipe.

    recipe: "delayed" (tensor granularity, given ``scale``), "current"
    (``epsilon``, ``pow2``), "blockwise" (E4M3; ``scales`` "pow2" or "f32",
    ``amax_clamp``), "mxfp8" (``rounding`` "round_up" or "ocp").
    granularity: "tensor", "row", (rows, cols) tiles, or ("mx", 32).
    transposed: quantize x^T (the columnwise output of cast+transpose).
    """
    x = _f32(x)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array, got shape {x.shape}")
    if transposed:
        x = np.ascontiguousarray(x.T)
    rows, cols = x.shape
    mx = isinstance(granularity, tuple) and granularity[:1] == ("mx",)
    if (recipe == "mxfp8") != mx:
        raise ValueError("MX granularity and the mxfp8 recipe go together")
    if granularity == "tensor":
        block = (max(rows, 1), max(cols, 1))
    elif granularity == "row":
        block = (1, max(cols, 1))
    elif mx:
        block = (1, int(granularity[1]))
    elif isinstance(granularity, tuple) and len(granularity) == 2:
        block = (int(granularity[0]), int(granularity[1]))
    else:
        raise ValueError(f"unknown granularity {granularity!r}")
    if block[0] <= 0 or block[1] <= 0:
        raise ValueError(f"block extents must be positive: {block}")
    _info(fmt)

    block_amax = _block_amax(x, *block)
    ue8m0 = None
    if recipe == "delayed":
        if granularity != "tensor":
            raise ValueError("delayed scaling is per-tensor")
        if scale is None or not (np.float32(scale) > 0) or np.isinf(np.float32(scale)):
            raise ValueError("delayed scaling needs a finite scale > 0")
        block_scale = np.full(block_amax.shape, np.float32(scale), np.float32)
        block_scale_inv = scale_inverse(block_scale)
    elif recipe == "current":
        block_scale = current_scaling_scale(block_amax, fmt, epsilon, pow2)
        block_scale_inv = scale_inverse(block_scale)
    elif recipe == "blockwise":
        if fmt != "e4m3":
            raise ValueError("blockwise scaling is defined for E4M3 only")
        block_scale, block_scale_inv = blockwise_scale(block_amax, scales, amax_clamp)
    elif recipe == "mxfp8":
        ue8m0 = mx_scale_exponent(block_amax, fmt, rounding)
        block_scale = mx_quantize_multiplier(ue8m0)
    else:
        raise ValueError(f"unknown recipe {recipe!r}: expected one of {RECIPES}")

    full_scale = np.repeat(np.repeat(block_scale, block[0], 0), block[1], 1)[:rows, :cols]
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        data = encode(fmt, (x * full_scale).astype(np.float32))
    return Quantized(data=data,
                     scale_inv=ue8m0 if ue8m0 is not None else block_scale_inv,
                     amax=_amax(x), fmt=fmt, block=block)
