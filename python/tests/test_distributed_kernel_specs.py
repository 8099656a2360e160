"""The rules by which fp8mlir.distributed.kernels puts sharded quantization
on the project's kernels (fp8mlir.distributed.kernel_specs), checked on the
host: which splits the kernels quantize exactly, and that the reshapes the
GPU path feeds the kernels (per-tensor shards as [n / 1024, 1024], 1x128
rows as runs of blocks, zero padding, gathered block-scale grids) give the
whole tensor's bytes and scales, with the NumPy reference standing in for
the kernels (they are bit-exact to it, python/tests/test_gpu_torch_recipes.py)."""

import numpy as np
import pytest

from fp8mlir import numerics as ref
from fp8mlir.distributed import kernel_specs as ks
from fp8mlir.distributed import sharded as sh
from fp8mlir.testing import dist_cases as dc

ROWS_1x128 = sh.QuantSpec("blockwise", block=(1, 128), amax_clamp=1e-4)
TILES_128 = sh.QuantSpec("blockwise", block=(128, 128), amax_clamp=1e-4)


def tensor(rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    return x * np.float32(2.0) ** rng.integers(-4, 5, size=(rows, 1)).astype(np.float32)


def test_kernel_decisions():
    shape = (4096, 1024)
    rows = dc.windows(shape, [2048, 2048], 0)
    assert ks.kernel_reason(sh.QuantSpec("current"), rows, shape) is None
    assert ks.kernel_reason(TILES_128, rows, shape) is None
    assert ks.kernel_reason(ROWS_1x128, dc.windows(shape, [1000, 3096], 0), shape) is None
    cut = ks.kernel_reason(TILES_128, dc.windows(shape, [1000, 3096], 0), shape)
    assert "cuts a block" in cut
    assert "cuts a block" in ks.kernel_reason(ROWS_1x128, dc.windows(shape, [100, 924], 1), shape)
    # the last shard may end inside a block: the tensor ends there too
    assert ks.kernel_reason(TILES_128, dc.windows((300, 200), [256, 44], 0), (300, 200)) is None
    assert "MXFP8" in ks.kernel_reason(sh.QuantSpec("mxfp8", block=(1, 32)), rows, shape)
    f32_scales = sh.QuantSpec("blockwise", block=(128, 128), scales="f32")
    assert "scale rule" in ks.kernel_reason(f32_scales, rows, shape)
    columnwise = sh.QuantSpec("blockwise", block=(128, 1), amax_clamp=1e-4)
    assert "no kernel" in ks.kernel_reason(columnwise, rows, shape)


@pytest.mark.parametrize("shape", [(7, 1000), (64, 1024), (1, 5)])
def test_per_tensor_shard_as_flat_rows(shape):
    """The cast is elementwise: [n / 1024, 1024] zero-padded gives x's codes."""
    x = tensor(*shape)
    whole = ref.quantize(x, "delayed", scale=0.75)
    n = x.size
    flat = np.zeros(-(-n // ks.FLAT_COLS) * ks.FLAT_COLS, np.float32)
    flat[:n] = x.reshape(-1)
    q = ref.quantize(flat.reshape(-1, ks.FLAT_COLS), "delayed", scale=0.75)
    assert np.array_equal(q.data.reshape(-1)[:n].reshape(shape), whole.data)
    assert np.array_equal(q.scale_inv.reshape(1, 1), whole.scale_inv.reshape(1, 1))


@pytest.mark.parametrize("shape,counts,dim", [((7, 1000), [3, 4], 0), ((64, 1024), [32, 32], 0),
                                              ((48, 96), [40, 56], 1), ((5, 3), [5, 0], 0)])
def test_current_shards_reduce_the_kernels_amax_bits(shape, counts, dim):
    """The sharded current-scaling path: each rank's amax kernel max-es the
    |x| bits of its zero-padded flat shard, the int32 max all-reduce
    combines them, the cast derives the scale from that amax: the whole
    tensor's codes and scale, NaN included (|NaN| bits lie above inf's)."""
    x = tensor(*shape, seed=3)
    nan = shape == (64, 1024)
    if nan:
        x[40, 7] = np.float32("nan")
    whole = ref.quantize(x, "current")
    parts, bits = [], []
    for w in dc.windows(shape, counts, dim):
        part = x[w.row:w.row + w.rows, w.col:w.col + w.cols]
        flat = np.zeros(-(-part.size // ks.FLAT_COLS) * ks.FLAT_COLS, np.float32)
        flat[:part.size] = part.reshape(-1)
        parts.append((w, part, flat))
        bits.append(np.abs(flat).view(np.int32).max(initial=0))  # |x| bits: sign cleared
    amax = np.array(max(bits), np.int32).view(np.float32)
    assert np.isnan(amax) if nan else amax == np.abs(x).max()
    scale = ref.current_scaling_scale(amax, "e4m3")
    for w, part, flat in parts:
        if not part.size:
            continue
        q = ref.quantize(flat.reshape(-1, ks.FLAT_COLS), "delayed", scale=float(scale))
        assert np.array_equal(q.data.reshape(-1)[:part.size].reshape(part.shape),
                              whole.data[w.row:w.row + w.rows, w.col:w.col + w.cols])
        assert np.array_equal(q.scale_inv.reshape(1, 1), whole.scale_inv.reshape(1, 1))


@pytest.mark.parametrize("shape", [(5, 1024), (3, 384), (4, 300), (2, 2048 + 128)])
def test_1x128_rows_as_runs_of_blocks(shape):
    rows, cols = shape
    x = tensor(*shape, seed=1)
    kw = dict(granularity=(1, 128), amax_clamp=1e-4)
    whole = ref.quantize(x, "blockwise", **kw)
    padded = -(-cols // 128) * 128
    width = ks.blockwise_width(cols, (1, 128))
    assert width in (128, 1024) and padded % width == 0
    xp = np.zeros((rows, padded), np.float32)
    xp[:, :cols] = x
    q = ref.quantize(xp.reshape(-1, width), "blockwise", **kw)
    assert np.array_equal(q.data.reshape(rows, padded)[:, :cols], whole.data)
    assert np.array_equal(q.scale_inv.reshape(rows, padded // 128), whole.scale_inv)


def test_aligned_128x128_shards_gather_the_whole_grid():
    x = tensor(640, 200, seed=2)
    kw = dict(granularity=(128, 128), amax_clamp=1e-4)
    whole = ref.quantize(x, "blockwise", **kw)
    counts = [256, 384]
    assert ks.kernel_reason(TILES_128, dc.windows(x.shape, counts, 0), x.shape) is None
    parts = [ref.quantize(x[w.row:w.row + w.rows], "blockwise", **kw)
             for w in dc.windows(x.shape, counts, 0)]
    assert np.array_equal(np.concatenate([p.data for p in parts]), whole.data)
    assert np.array_equal(np.concatenate([p.scale_inv for p in parts]), whole.scale_inv)


def test_dist_suite_lists_the_kernels():
    specs = dc.all_specs(2)
    keys = {s.cache_key for s in specs}
    assert len(keys) == len(specs)
    for d in ("bf16", "f16", "f32"):
        for f in ("e4m3", "e5m2"):
            assert ks.per_tensor_spec(d, f).cache_key in keys
            assert ks.tensorwise_spec(ks.FLAT_COLS, d, f).cache_key in keys
    for layer in dc.train_layers(2):
        for spec in dc.tp_layer_specs(layer, "current"):
            if hasattr(spec, "n"):
                assert spec.n % 16 == 0 and spec.k % 16 == 0
                assert spec.cache_key in keys
