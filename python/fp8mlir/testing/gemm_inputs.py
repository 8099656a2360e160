"""Quantized GEMM inputs for the GPU check and the benchmark (torch).

Quantization follows the project's recipes (include/FP8/Numerics/Scaling.h):
the quantizer multiplies, q = fp8(clamp(x_f32 * scale, -max, max)), and the
GEMM consumes scale_inv = 1 / scale, so x ~= q * scale_inv.

- tensor: scale = max/amax over the tensor (E4M3 448, E5M2 57344);
- row:    the same per row of A [M, K] and per row of B [N, K];
- tile RxC (1x128 for A, 128x128 or 1x128 for B): amax per tile over its valid
  elements, clamped to >= 1e-4, scale = max/amax rounded down to a power of
  two (sign and exponent bits kept), so scale_inv is exact.

Scales are returned in the physical layout the runtime takes (see gemm_spec:
1x128 scales MN-major, a's [ceil(K/128), roundup(M, 4)] and b's
[ceil(K/128), roundup(N, 4)], the padding NaN (never read); b's 128x128
[ceil(N/128), ceil(K/128)]), or in the layout the kernel's metadata asks for
when it says.
"""

import time
from dataclasses import dataclass

import torch

from .gemm_spec import (FP8_MAX, MN_MAJOR_SCALE_ALIGNMENT, ceil_div, physical_scale_shape,
                        shape_matches)

BLOCKWISE_AMAX_CLAMP = 1e-4
FLT_MAX = 3.4028234663852886e38
SIGN_EXPONENT_MASK = -8388608  # 0xFF800000 as int32: keep sign and exponent bits

# Fraction of rows (and of 128-column blocks) multiplied by a power of ten, so
# that scales differ between rows and between blocks.
SCALED_FRACTION = 0.25
ROW_EXPONENTS = (-2, 2)  # inclusive range of the power of ten per row
COLUMN_BLOCK_EXPONENTS = (-1, 1)
# Shrink factor of A (times 1/sqrt(K)) for f16 outputs: the largest row and
# block factors (10^2 * 10^1 * 10^1) times a few sigma stay under 65504.
F16_HEADROOM = 1e-2

TORCH_FP8_NAMES = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
TORCH_DTYPE_NAMES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}


def torch_dtype(name):
    """torch dtype of a metadata dtype name (e4m3, e5m2, bf16, f16, f32)."""
    attr = TORCH_FP8_NAMES.get(name) or TORCH_DTYPE_NAMES.get(name)
    if attr is None or not hasattr(torch, attr):
        raise ValueError(f"no torch dtype for {name!r} in torch {torch.__version__}")
    return getattr(torch, attr)


def new_seed():
    """A fresh seed from the clock (print it: it reproduces the inputs)."""
    return time.time_ns() % (2**31 - 1)


def make_generator(seed, device):
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def _powers_of_ten(count, exponents, gen, device):
    """count factors: 1, or 10^e (e uniform in exponents) for SCALED_FRACTION of them."""
    low, high = exponents
    chosen = torch.rand(count, generator=gen, device=device) < SCALED_FRACTION
    power = torch.randint(low, high + 1, (count,), generator=gen, device=device)
    factor = torch.pow(10.0, power.to(torch.float32))
    return torch.where(chosen, factor, torch.ones_like(factor))


def random_operand(rows, k, gen, device, dtype=torch.bfloat16):
    """[rows, k] normal data with some rows and some 128-column blocks scaled
    by powers of ten, rounded to `dtype` (the high-precision source)."""
    x = torch.randn(rows, k, generator=gen, device=device, dtype=torch.float32)
    x *= _powers_of_ten(rows, ROW_EXPONENTS, gen, device)[:, None]
    blocks = _powers_of_ten(ceil_div(k, 128), COLUMN_BLOCK_EXPONENTS, gen, device)
    x *= blocks.repeat_interleave(128)[:k][None, :]
    return x.to(dtype)


# --- scale rules (f32, elementwise on tensors of amax) -------------------------

def current_scale(amax, fmt):
    """max/amax in f32; amax 0/inf/NaN -> 1; an inf quotient -> FLT_MAX."""
    amax = amax.to(torch.float32)
    usable = torch.isfinite(amax) & (amax > 0)
    safe = torch.where(usable, amax, torch.ones_like(amax))
    # tensor / tensor: one f32 division, correctly rounded. (scalar / tensor
    # would be computed by torch as reciprocal() * scalar, rounding twice.)
    quotient = torch.full_like(safe, FP8_MAX[fmt]) / safe
    scale = torch.where(usable, quotient, torch.ones_like(amax))
    return torch.where(torch.isinf(scale), torch.full_like(scale, FLT_MAX), scale)


def power_of_two_floor(scale):
    """Keep sign and exponent bits of f32 values (round |x| down to 2^n)."""
    return (scale.contiguous().view(torch.int32) & SIGN_EXPONENT_MASK).view(torch.float32)


def blockwise_scale(amax, fmt):
    return power_of_two_floor(current_scale(amax.clamp(min=BLOCKWISE_AMAX_CLAMP), fmt))


def cast_to_fp8(x_scaled, fmt):
    """Saturating cast: torch's .to(float8) does not saturate, so clamp first."""
    limit = FP8_MAX[fmt]
    return x_scaled.clamp(-limit, limit).to(torch_dtype(fmt))


# --- quantization ------------------------------------------------------------

@dataclass
class Quantized:
    q: torch.Tensor          # [rows, K] fp8
    scale_inv: torch.Tensor  # logical: (), (rows,), or (rows/r, K/c); f32
    gran: tuple

    def expanded_scale_inv(self):
        """scale_inv broadcastable to [rows, K]."""
        rows, k = self.q.shape
        if self.gran[0] == "tensor":
            return self.scale_inv
        if self.gran[0] == "row":
            return self.scale_inv[:, None]
        _, r, c = self.gran
        full = self.scale_inv.repeat_interleave(r, dim=0).repeat_interleave(c, dim=1)
        return full[:rows, :k]

    def dequantized(self):
        """q * scale_inv in f64 (exact: both factors are exact in f64)."""
        return self.q.to(torch.float32).to(torch.float64) * \
            self.expanded_scale_inv().to(torch.float64)


def quantize(x, gran, fmt):
    """Quantize a [rows, K] operand with the granularity's scale rule."""
    xf = x.to(torch.float32)
    rows, k = xf.shape
    if gran[0] == "tensor":
        scale = current_scale(xf.abs().amax(), fmt)
        q = cast_to_fp8(xf * scale, fmt)
    elif gran[0] == "row":
        scale = current_scale(xf.abs().amax(dim=1), fmt)
        q = cast_to_fp8(xf * scale[:, None], fmt)
    elif gran[0] == "tile":
        q, scale = _quantize_tiles(xf, gran[1], gran[2], fmt)
    else:
        raise ValueError(f"unknown granularity {gran!r}")
    return Quantized(q=q.contiguous(), scale_inv=torch.reciprocal(scale), gran=gran)


def _quantize_tiles(xf, r, c, fmt):
    """Tiles of r x c: padding is zero, so tail tiles' amax uses valid elements."""
    rows, k = xf.shape
    rb, kb = ceil_div(rows, r), ceil_div(k, c)
    padded = torch.zeros(rb * r, kb * c, dtype=torch.float32, device=xf.device)
    padded[:rows, :k] = xf
    tiles = padded.view(rb, r, kb, c)
    amax = tiles.abs().amax(dim=3).amax(dim=1)  # [rb, kb]
    scale = blockwise_scale(amax, fmt)
    q = cast_to_fp8(tiles * scale[:, None, :, None], fmt).view(rb * r, kb * c)
    return q[:rows, :k], scale


# --- physical scale layout ---------------------------------------------------

def arrange_scale(scale_inv, operand, gran, rows, k, expected=None):
    """scale_inv (logical) as the dense tensor to pass for `operand` ("a"/"b").

    `expected` is the metadata's shape for the operand (entries may be None);
    without it the project convention (gemm_spec.physical_scale_shape) holds.
    Candidates, in order: the convention, the logical order, the transpose
    (and for 1x128 tiles the transpose with its MN extent padded to a
    multiple of 4, the padding NaN); the first whose shape matches wins.
    1x128 tile scales try their MN-major forms first, so that a square
    logical shape (M = K/128, e.g. 64 x 8192) is passed transposed, as the
    convention says."""
    logical = scale_inv.contiguous()
    candidates = [logical]
    if logical.dim() == 2:
        candidates.append(logical.t().contiguous())
        if gran[0] == "tile" and gran[1] == 1:
            mn, kb = logical.shape
            padded = torch.full((kb, ceil_div(mn, MN_MAJOR_SCALE_ALIGNMENT)
                                 * MN_MAJOR_SCALE_ALIGNMENT), float("nan"),
                                dtype=logical.dtype, device=logical.device)
            padded[:, :mn] = logical.t()
            candidates = [padded, candidates[1], logical]
    convention = physical_scale_shape(operand, gran, rows, k)
    candidates.sort(key=lambda t: tuple(t.shape) != convention)
    target = convention if expected is None else expected
    for candidate in candidates:
        if shape_matches(target, tuple(candidate.shape)):
            return candidate
    if expected is not None and logical.numel() == 1 and all(e in (1, None) for e in expected):
        return logical.reshape([1] * len(expected))
    raise ValueError(f"{operand}_scale_inv: metadata shape {list(expected)} fits neither "
                     f"the logical {list(logical.shape)} nor its transpose "
                     f"(granularity {gran}, rows={rows}, K={k})")


# --- a full set of inputs -------------------------------------------------------

@dataclass
class GemmInputs:
    m: int
    n: int
    k: int
    a: Quantized
    b: Quantized
    a_scale_inv: torch.Tensor  # physical layout
    b_scale_inv: torch.Tensor  # physical layout
    bias: object = None        # [N] tensor or None
    c: object = None           # [M, N] f32 tensor or None
    seed: int = 0

    def operands(self):
        """Launch operands by metadata name (without the output d)."""
        ops = {"a": self.a.q, "b": self.b.q,
               "a_scale_inv": self.a_scale_inv, "b_scale_inv": self.b_scale_inv}
        if self.bias is not None:
            ops["bias"] = self.bias
        if self.c is not None:
            ops["c"] = self.c
        return ops

    def nbytes(self):
        return sum(t.numel() * t.element_size() for t in self.operands().values())

    def clone(self):
        """Same values in new memory (for rotating buffers)."""
        copy = lambda t: None if t is None else t.clone()
        return GemmInputs(
            m=self.m, n=self.n, k=self.k,
            a=Quantized(self.a.q.clone(), self.a.scale_inv.clone(), self.a.gran),
            b=Quantized(self.b.q.clone(), self.b.scale_inv.clone(), self.b.gran),
            a_scale_inv=self.a_scale_inv.clone(), b_scale_inv=self.b_scale_inv.clone(),
            bias=copy(self.bias), c=copy(self.c), seed=self.seed)


def make_gemm_inputs(m, n, k, *, a_dtype="e4m3", b_dtype="e4m3",
                     a_gran=("tensor",), b_gran=("tensor",), bias_dtype=None,
                     with_c=False, seed=None, device="cuda",
                     a_scale_expected=None, b_scale_expected=None,
                     out_dtype=None):
    """Fresh random quantized inputs for D = (A sA)(B sB)^T [+ bias] [+ C].

    For an f16 output, A is shrunk by F16_HEADROOM / sqrt(k) so that D stays
    inside f16's range (65504) despite the powers of ten: otherwise the
    reference holds values f16 can only store as inf."""
    seed = new_seed() if seed is None else seed
    gen = make_generator(seed, device)
    source_a = random_operand(m, k, gen, device)
    if out_dtype == "f16":
        source_a = (source_a.float() * (F16_HEADROOM / float(k) ** 0.5)).to(source_a.dtype)
    a = quantize(source_a, a_gran, a_dtype)
    b = quantize(random_operand(n, k, gen, device), b_gran, b_dtype)
    bias = c = None
    if bias_dtype is not None:
        bias = torch.randn(n, generator=gen, device=device).to(torch_dtype(bias_dtype))
    if with_c:
        c = torch.randn(m, n, generator=gen, device=device) * float(k) ** 0.5
    return GemmInputs(
        m=m, n=n, k=k, a=a, b=b,
        a_scale_inv=arrange_scale(a.scale_inv, "a", a_gran, m, k, a_scale_expected),
        b_scale_inv=arrange_scale(b.scale_inv, "b", b_gran, n, k, b_scale_expected),
        bias=bias, c=c, seed=seed)


ACTIVATIONS = {
    # The definitions of #fp8.activation, evaluated in f64.
    "gelu": lambda x: 0.5 * x * (1.0 + torch.erf(x / 2.0 ** 0.5)),
    "gelu_tanh": lambda x: 0.5 * x * (1.0 + torch.tanh(
        (2.0 / torch.pi) ** 0.5 * (x + 0.044715 * x ** 3))),
    "silu": lambda x: x * torch.sigmoid(x),
}


def reference(inputs, activation=None):
    """f64 D of the dequantized inputs (+ bias, + C), then the activation."""
    d = inputs.a.dequantized() @ inputs.b.dequantized().t()
    if inputs.bias is not None:
        d += inputs.bias.to(torch.float64)[None, :]
    if inputs.c is not None:
        d += inputs.c.to(torch.float64)
    if activation is not None:
        d = ACTIVATIONS[activation](d)
    return d


# --- error measures -----------------------------------------------------------

def relative_error(d, ref):
    """||d - ref||_F / ||ref||_F in f64 (inf if d has non-finite values)."""
    diff = d.to(torch.float64) - ref
    denom = torch.linalg.norm(ref).item()
    num = torch.linalg.norm(diff).item()
    return num / denom if denom > 0 else (0.0 if num == 0 else float("inf"))


def worst_row_error(d, ref):
    """max over rows of ||d_i - ref_i|| / ||ref_i|| (rows with ref_i = 0 skipped)."""
    diff = torch.linalg.norm(d.to(torch.float64) - ref, dim=1)
    norm = torch.linalg.norm(ref, dim=1)
    nonzero = norm > 0
    if not bool(nonzero.any()):
        return 0.0
    return (diff[nonzero] / norm[nonzero]).max().item()


def bitwise_equal(x, y):
    """Same bits (NaN == NaN), for the determinism check."""
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    as_int = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    return bool(torch.equal(x.contiguous().view(as_int), y.contiguous().view(as_int)))
