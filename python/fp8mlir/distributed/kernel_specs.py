"""Which of the project's kernels the sharded path runs (no torch needed).

fp8mlir.distributed.kernels runs them on a GPU; fp8mlir.testing.dist_cases
lists, from the same rules, every kernel the 2-GPU scripts need, for the
kernel cache filled on the build machine (fp8mlir.populate --suite dist).
"""

import struct

from ..gemm import ScaledMatmul
from ..quantization import QuantizeSpec  # noqa: F401 (dist_cases)
from .._math import ceil_div

FLAT_COLS = 1024   # per-tensor shards are encoded as [n / 1024, 1024]
BLOCK = 128
GEMM_ALIGN = 16
ACCUMULATION = "promoted(128)"


def f32(value):
    return struct.unpack("f", struct.pack("f", value))[0]


KERNEL_CLAMP = f32(1e-4)  # the blockwise kernels' amax clamp



def kernel_reason(spec, windows, shape):
    """None when the project's kernels quantize these windows (those of all
    ranks) of a tensor of ``shape`` exactly, else why not. Every rank
    decides the same."""
    if spec.recipe in ("current", "delayed"):
        return None
    if spec.recipe == "mxfp8":
        return "MXFP8: no quantize kernel for sm_90a"
    if spec.scales != "pow2" or f32(spec.amax_clamp) != KERNEL_CLAMP:
        return "blockwise scale rule other than the kernels' (pow2, amax clamp 1e-4)"
    if spec.block not in ((1, BLOCK), (BLOCK, BLOCK)):
        return f"blockwise {spec.block[0]}x{spec.block[1]}: no kernel"
    for w in windows:
        for origin, extent, b, total in ((w.row, w.rows, spec.block[0], shape[0]),
                                         (w.col, w.cols, spec.block[1], shape[1])):
            end = origin + extent
            if extent and (origin % b or (end % b and end != total)):
                return "a shard boundary cuts a block (needs the amax all-reduce)"
    return None


def per_tensor_spec(in_dtype, fmt):
    """The delayed-scaling kernel that encodes any per-tensor shard."""
    return QuantizeSpec("delayed", FLAT_COLS, in_dtype=in_dtype, dtype=fmt)


def tensorwise_spec(cols, in_dtype, fmt):
    """The current-scaling kernel (amax, then cast) of a whole [R, cols]."""
    return QuantizeSpec("tensorwise", cols, in_dtype=in_dtype, dtype=fmt)


def blockwise_width(cols, block):
    """The kernel's C for a [R, cols] window: 1x128 rows go in as runs of
    blocks, [n / W, W] with W = 1024 or 128 (cols padded to a block);
    128x128 tiles as they are (cols padded to 16)."""
    if block == (1, BLOCK):
        padded = ceil_div(cols, BLOCK) * BLOCK
        return 1024 if padded % 1024 == 0 else BLOCK
    return ceil_div(cols, GEMM_ALIGN) * GEMM_ALIGN


def blockwise_specs(windows, in_dtype, block):
    return [QuantizeSpec("blockwise", blockwise_width(w.cols, block), in_dtype=in_dtype,
                         block=tuple(block)) for w in windows if w.rows and w.cols]


def gemm_spec(recipe, n, k, out_dtype, a_dtype="e4m3", b_dtype="e4m3"):
    """The GEMM of A [M, k] B[n, k]^T (n and k padded to 16)."""
    return ScaledMatmul(recipe, n=ceil_div(n, GEMM_ALIGN) * GEMM_ALIGN,
                        k=ceil_div(k, GEMM_ALIGN) * GEMM_ALIGN, out_dtype=out_dtype,
                        accumulation=ACCUMULATION, a_dtype=a_dtype, b_dtype=b_dtype)
