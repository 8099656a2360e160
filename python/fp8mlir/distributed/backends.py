"""Array backends of the sharded quantization: NumPy and PyTorch.

The sharding logic (fp8mlir.distributed.sharded) is written once against
this small interface; each backend applies the recipes' scale rules with
its own independent reference implementation of the numerics:

- ``NumpyBackend``: fp8mlir.numerics (f32 arrays, uint8 codes), for the
  host tests with the threaded fake communicator;
- ``TorchBackend``: fp8mlir.testing.torch_recipes (any device), for NCCL.

Values are 2-D arrays; fp8 data is always handled as uint8 codes, scales
as f32 grids (MX: UE8M0 codes as uint8).
"""

from .. import numerics as _np_ref

# f32 bits of 1/448 and 1/57344 (the MX round-up rule multiplies by them).
_RCP_MAX_BITS = {"e4m3": 0x3B124925, "e5m2": 0x37924925}
_NAN_BITS = 0x7FC00000


class NumpyBackend:
    name = "numpy"

    def __init__(self):
        import numpy as np
        self.np = np

    def f32(self, x):
        return self.np.asarray(x, dtype=self.np.float32)

    def zeros(self, shape, like=None, dtype="f32"):
        return self.np.zeros(shape, self.np.float32 if dtype == "f32" else self.np.uint8)

    def pad(self, x, top, bottom, left, right):
        if not (top or bottom or left or right):
            return x
        return self.np.pad(x, ((top, bottom), (left, right)))

    def block_amax(self, x, nbr, br, nbc, bc):
        """NaN-propagating max |x| of each (br, bc) block of x [nbr*br, nbc*bc]."""
        return self.np.abs(self.f32(x)).reshape(nbr, br, nbc, bc).max(axis=(1, 3))

    def scale_rule(self, spec, amax):
        """(scale, scale_inv) of an amax grid; MX: scale_inv is UE8M0 codes."""
        ref = _np_ref
        if spec.recipe == "current":
            scale = ref.current_scaling_scale(amax, spec.fmt, spec.epsilon, spec.pow2)
            return scale, ref.scale_inverse(scale)
        if spec.recipe == "delayed":
            scale = self.np.full(amax.shape, self.np.float32(spec.scale), self.np.float32)
            return scale, ref.scale_inverse(scale)
        if spec.recipe == "blockwise":
            return ref.blockwise_scale(amax, spec.scales, spec.amax_clamp)
        codes = ref.mx_scale_exponent(amax, spec.fmt, spec.rounding)
        return ref.mx_quantize_multiplier(codes), codes

    def encode(self, x, scale, fmt):
        """codes of cvt.rn.satfinite(x_f32 * scale) (scale broadcasts)."""
        with self.np.errstate(over="ignore", under="ignore", invalid="ignore"):
            return _np_ref.encode(fmt, (self.f32(x) * scale).astype(self.np.float32))

    def reshape_blocks(self, x, nbr, br, nbc, bc):
        return x.reshape(nbr, br, nbc, bc)

    def amax_to_bits(self, amax):
        bits = self.f32(amax).copy().view(self.np.int32)
        bits[self.np.isnan(amax)] = _NAN_BITS
        return bits

    def bits_to_amax(self, bits):
        return self.np.asarray(bits, self.np.int32).view(self.np.float32)

    def flatten(self, x):
        return self.np.ascontiguousarray(x).reshape(-1)

    def compact(self, x):
        return self.np.ascontiguousarray(x)

    def concat(self, parts, dim=0):
        return self.np.concatenate(parts, axis=dim)

    def maximum(self, a, b):
        return self.np.maximum(a, b)


class TorchBackend:
    """torch tensors on one device; the scale rules of torch_recipes."""
    name = "torch"

    def __init__(self, device=None):
        import torch
        from ..testing import torch_recipes
        self.torch, self.rec, self.device = torch, torch_recipes, device

    def f32(self, x):
        return x.float() if x.dtype != self.torch.float32 else x

    def zeros(self, shape, like=None, dtype="f32"):
        device = like.device if like is not None else self.device
        return self.torch.zeros(shape, dtype=self.torch.float32 if dtype == "f32" else self.torch.uint8,
                                device=device)

    def pad(self, x, top, bottom, left, right):
        if not (top or bottom or left or right):
            return x
        return self.torch.nn.functional.pad(x, (left, right, top, bottom))

    def block_amax(self, x, nbr, br, nbc, bc):
        return x.reshape(nbr, br, nbc, bc).abs().amax(dim=(1, 3)).float()

    def scale_rule(self, spec, amax):
        rec, torch = self.rec, self.torch
        if spec.recipe == "current":
            scale = rec.current_scale(amax, spec.fmt, spec.epsilon, spec.pow2)
            return scale, rec.scale_inverse(scale)
        if spec.recipe == "delayed":
            scale = torch.as_tensor(spec.scale, dtype=torch.float32, device=amax.device)
            scale = scale.reshape(()).expand(amax.shape).contiguous()
            return scale, rec.scale_inverse(scale)
        if spec.recipe == "blockwise":
            return rec.blockwise_scales(amax, spec.scales, spec.amax_clamp)
        codes = self.mx_codes(amax, spec.fmt, spec.rounding)
        e = codes.to(torch.int64)
        multiplier = torch.exp2((127 - e).to(torch.float64)).float()
        multiplier = torch.where(e == 0xFF, torch.full_like(multiplier, float("nan")), multiplier)
        return multiplier, codes

    def mx_codes(self, amax, fmt, rounding):
        """UE8M0 code of each block's scale_inv (numerics.md, MXFP8)."""
        torch = self.torch
        if rounding != "round_up":
            raise ValueError("the torch backend implements the default MX rounding (round_up) only")
        rcp = torch.tensor([_RCP_MAX_BITS[fmt]], dtype=torch.int32).view(torch.float32).to(amax.device)
        value = amax.abs().float() * rcp
        bits = value.contiguous().view(torch.int32).to(torch.int64)
        e, m = (bits >> 23) & 0xFF, bits & 0x7FFFFF
        up = (m > 0) & (e != 0xFE) & ~((e == 0) & (m <= 0x400000))
        code = e + up.to(torch.int64)
        code = torch.where(torch.isinf(value), torch.full_like(code, 0xFE), code)
        code = torch.where(torch.isnan(value), torch.full_like(code, 0xFF), code)
        return code.to(torch.uint8)

    def encode(self, x, scale, fmt):
        torch = self.torch
        scaled = x * scale  # one f32 multiply of the exact f32 value of x
        limit = self.rec.FP8_MAX[fmt]
        codes = scaled.clamp(-limit, limit).to(self.rec.FP8_DTYPES[fmt]).view(torch.uint8)
        # NaN: the NaN code with the sign of the NaN operand (x first); no
        # host synchronization to test for NaNs first.
        sign = torch.where(torch.isnan(x), torch.signbit(x), torch.signbit(scale))
        signed = (torch.broadcast_to(sign, codes.shape).to(torch.uint8) << 7) | 0x7F
        return torch.where(torch.isnan(scaled), signed, codes)

    def reshape_blocks(self, x, nbr, br, nbc, bc):
        return x.reshape(nbr, br, nbc, bc)

    def amax_to_bits(self, amax):
        torch = self.torch
        bits = amax.float().contiguous().view(torch.int32).clone()
        return torch.where(torch.isnan(amax), torch.full_like(bits, _NAN_BITS), bits)

    def bits_to_amax(self, bits):
        return bits.view(self.torch.float32)

    def flatten(self, x):
        return x.contiguous().reshape(-1)

    def compact(self, x):
        return x.contiguous()

    def concat(self, parts, dim=0):
        return self.torch.cat(parts, dim=dim)

    def maximum(self, a, b):
        return self.torch.maximum(a, b)
