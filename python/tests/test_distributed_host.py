"""Sharded quantization + FP8 all-gather (fp8mlir.distributed) against the
single-device quantization of fp8mlir.numerics, bit for bit, on ranks that
are threads of this process (NumPy, no GPU): row, column and ZeRO-1 flat
shards, even and uneven, cutting blocks and parameters anywhere."""

import numpy as np
import pytest

from fp8mlir import numerics as ref
from fp8mlir.distributed import sharded as sh
from fp8mlir.distributed.backends import NumpyBackend
from fp8mlir.distributed.comm import ThreadGroup

NP = NumpyBackend()

# (QuantSpec, numerics.quantize keyword arguments, transposed reference)
CASES = {
    "current-e4m3": (sh.QuantSpec("current"), dict(recipe="current"), False),
    "current-e5m2-pow2-eps": (sh.QuantSpec("current", "e5m2", epsilon=1e-3, pow2=True),
                              dict(recipe="current", fmt="e5m2", epsilon=1e-3, pow2=True), False),
    "delayed": (sh.QuantSpec("delayed", scale=3.25), dict(recipe="delayed", scale=3.25), False),
    "blockwise-1x128": (sh.QuantSpec("blockwise", block=(1, 128)),
                        dict(recipe="blockwise", granularity=(1, 128)), False),
    "blockwise-128x128-pow2": (sh.QuantSpec("blockwise", block=(128, 128), amax_clamp=1e-4),
                               dict(recipe="blockwise", granularity=(128, 128), amax_clamp=1e-4),
                               False),
    "blockwise-128x128-f32": (sh.QuantSpec("blockwise", block=(128, 128), scales="f32"),
                              dict(recipe="blockwise", granularity=(128, 128), scales="f32"), False),
    "blockwise-128x1-columnwise": (sh.QuantSpec("blockwise", block=(128, 1)),
                                   dict(recipe="blockwise", granularity=(1, 128)), True),
    "mxfp8-1x32": (sh.QuantSpec("mxfp8", block=(1, 32)),
                   dict(recipe="mxfp8", granularity=("mx", 32)), False),
    "mxfp8-32x1-columnwise": (sh.QuantSpec("mxfp8", block=(32, 1)),
                              dict(recipe="mxfp8", granularity=("mx", 32)), True),
    "mxfp8-e5m2-ocp": (sh.QuantSpec("mxfp8", "e5m2", block=(1, 32), rounding="ocp"),
                       dict(recipe="mxfp8", fmt="e5m2", granularity=("mx", 32), rounding="ocp"),
                       False),
}


def make_tensor(shape, seed, specials=False):
    """Normal values whose magnitude changes every 37 rows and 41 columns
    (blocks cut by a shard boundary see different amaxes on each side),
    with one large outlier."""
    rng = np.random.default_rng(seed)
    rows, cols = shape
    x = rng.standard_normal(shape).astype(np.float32)
    x *= np.exp2(rng.integers(-6, 7, size=(-(-rows // 37), 1))).repeat(37, 0)[:rows].astype(np.float32)
    x *= np.exp2(rng.integers(-3, 4, size=(1, -(-cols // 41)))).repeat(41, 1)[:, :cols].astype(np.float32)
    x[rng.integers(rows), rng.integers(cols)] = 3000.0
    if specials:
        x[0, 0], x[-1, -1] = 0.0, -0.0
    return x


def reference(x, kwargs, transposed):
    q = ref.quantize(x, fmt=kwargs.pop("fmt", "e4m3"), transposed=transposed, **kwargs)
    if transposed:
        return q.data.T, q.scale_inv.T
    return q.data, q.scale_inv


def run_sharded(x, counts, spec, dim):
    shape = x.shape

    def rank_fn(comm):
        w = (sh.row_window if dim == 0 else sh.column_window)(shape, counts, comm.rank)
        local = x[w.row:w.row + w.rows, w.col:w.col + w.cols]
        q = sh.shard_and_gather(comm, NP, local, shape, counts, spec, dim)
        return q, comm.traffic
    return ThreadGroup(len(counts)).run(rank_fn)


SPLITS = [
    ((300, 256), [150, 150], 0),   # even, rows cut a 128-row tile
    ((300, 256), [1, 299], 0),     # one row on rank 0
    ((257, 384), [200, 57], 0),    # uneven, tail tile
    ((130, 300), [77, 100, 123], 1),  # columns, three ranks, cut 1x128 and 1x32 blocks
    ((64, 96), [96, 0], 1),        # a rank with nothing
]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("split", range(len(SPLITS)))
def test_sharded_equals_whole(case, split):
    spec, kwargs, transposed = CASES[case]
    shape, counts, dim = SPLITS[split]
    x = make_tensor(shape, seed=split, specials=True)
    want_data, want_scale = reference(x, dict(kwargs), transposed)
    results = run_sharded(x, counts, spec, dim)
    for rank, (q, _) in enumerate(results):
        np.testing.assert_array_equal(q.data, want_data, err_msg=f"rank {rank} data")
        if want_scale.dtype == np.uint8:
            np.testing.assert_array_equal(q.scale_inv, want_scale)
        else:
            np.testing.assert_array_equal(q.scale_inv.view(np.uint32), want_scale.view(np.uint32))


def test_whole_matches_numerics():
    x = make_tensor((200, 160), seed=7)
    for case, (spec, kwargs, transposed) in CASES.items():
        q = sh.quantize_whole(NP, x, spec)
        want_data, _ = reference(x, dict(kwargs), transposed)
        np.testing.assert_array_equal(q.data, want_data, err_msg=case)


def test_traffic_is_one_byte_per_element_and_the_amax_grid():
    x = make_tensor((256, 512), seed=3)
    results = run_sharded(x, [128, 128], sh.QuantSpec("blockwise", block=(128, 128)), 0)
    traffic = results[0][1]
    assert traffic == [("all_reduce_max", 2 * 4 * 4), ("all_gather", 128 * 512)]


@pytest.mark.parametrize("rounding_case", ["current", "mxfp8"])
def test_nan_and_inf_reduce_like_one_device(rounding_case):
    x = make_tensor((64, 64), seed=5)
    x[40, 3] = np.nan   # on rank 1 only
    x[2, 60] = np.inf   # on rank 0 only
    spec, kwargs, _ = (CASES["current-e4m3"] if rounding_case == "current" else CASES["mxfp8-1x32"])
    want_data, want_scale = reference(x, dict(kwargs), False)
    for q, _ in run_sharded(x, [32, 32], spec, 0):
        np.testing.assert_array_equal(q.data, want_data)
        np.testing.assert_array_equal(np.asarray(q.scale_inv).view(np.uint8), want_scale.view(np.uint8))
    if rounding_case == "current":
        assert np.isnan(run_sharded(x, [32, 32], spec, 0)[0][0].amax).all()


@pytest.mark.parametrize("shape,start,length", [((5, 7), 0, 35), ((5, 7), 3, 4), ((5, 7), 3, 20),
                                                ((5, 7), 10, 1), ((5, 7), 14, 14), ((1, 9), 2, 5)])
def test_flat_windows_cover_the_range_in_order(shape, start, length):
    seen = []
    for w, off in sh.flat_windows(shape, start, length):
        assert off == len(seen)
        seen += [(w.row + i) * shape[1] + w.col + j for i in range(w.rows) for j in range(w.cols)]
    assert seen == list(range(start, start + length))


PARAMS = [(300, 200), (7, 50), (256, 384)]
PARAM_SPECS = {
    "current": [CASES["current-e4m3"][0]] * 3,
    "delayed": [sh.QuantSpec("delayed", scale=s) for s in (2.0, 0.5, 1.5)],
    "blockwise-128x128": [CASES["blockwise-128x128-pow2"][0]] * 3,
    "mxfp8-rowwise": [CASES["mxfp8-1x32"][0]] * 3,
    "mxfp8-columnwise": [CASES["mxfp8-32x1-columnwise"][0]] * 3,
}
PARAM_REFS = {
    "current": lambda x, i: reference(x, dict(recipe="current"), False),
    "delayed": lambda x, i: reference(x, dict(recipe="delayed", scale=(2.0, 0.5, 1.5)[i]), False),
    "blockwise-128x128": lambda x, i: reference(x, dict(CASES["blockwise-128x128-pow2"][1]), False),
    "mxfp8-rowwise": lambda x, i: reference(x, dict(CASES["mxfp8-1x32"][1]), False),
    "mxfp8-columnwise": lambda x, i: reference(x, dict(CASES["mxfp8-32x1-columnwise"][1]), True),
}


@pytest.mark.parametrize("recipe", sorted(PARAM_SPECS))
@pytest.mark.parametrize("ranks,counts", [(2, None), (3, None), (2, (60000 + 13, None))])
def test_zero1_primary_weights(recipe, ranks, counts):
    params = [make_tensor(s, seed=10 + i) for i, s in enumerate(PARAMS)]
    flat = np.concatenate([p.reshape(-1) for p in params])
    if counts is None:
        layout = sh.FlatLayout.even(PARAMS, ranks)
    else:
        layout = sh.FlatLayout(tuple(PARAMS), (counts[0], flat.size - counts[0]))
    # every split used here cuts a parameter inside a row
    cuts = [sum(layout.counts[:r + 1]) for r in range(ranks - 1)]
    offsets = layout.param_offsets()
    assert any(o < c < o + r * k and (c - o) % k for c in cuts for o, (r, k) in zip(offsets, PARAMS))

    def rank_fn(comm):
        lo, hi = layout.rank_range(comm.rank)
        codes, scale_invs, _ = sh.quantize_flat_shard(comm, NP, flat[lo:hi], layout,
                                                      PARAM_SPECS[recipe])
        return sh.gather_flat(comm, NP, codes, layout), scale_invs
    for gathered, scale_invs in ThreadGroup(ranks).run(rank_fn):
        for i, p in enumerate(params):
            want_data, want_scale = PARAM_REFS[recipe](p, i)
            np.testing.assert_array_equal(gathered[i], want_data, err_msg=f"param {i}")
            np.testing.assert_array_equal(np.asarray(scale_invs[i]).view(np.uint8),
                                          np.asarray(want_scale).view(np.uint8))


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="unknown recipe"):
        sh.QuantSpec("nvfp4")
    with pytest.raises(ValueError, match="needs a block shape"):
        sh.QuantSpec("blockwise")
    with pytest.raises(ValueError, match="delayed scaling needs"):
        sh.QuantSpec("delayed")
    with pytest.raises(ValueError, match="does not fill its window"):
        sh.quantize_shard(NP, np.zeros((3, 4), np.float32), sh.Window(0, 0, 4, 4), (8, 4),
                          sh.QuantSpec("current"))
    with pytest.raises(ValueError, match="sum to"):
        sh.FlatLayout(((4, 4),), (10, 5))

    def wrong_count(comm):
        sh.gather_rows(comm, NP, np.zeros((3, 4), np.uint8), [2, 2])
    with pytest.raises(ValueError, match="the layout says"):
        ThreadGroup(2).run(wrong_count)


def test_reduce_scatter_sums_and_keeps_each_ranks_slice():
    counts = [3, 5]
    inputs = [np.arange(8, dtype=np.float32) * (r + 1) for r in range(2)]

    def rank_fn(comm):
        return comm.reduce_scatter_sum(inputs[comm.rank], counts)
    out = ThreadGroup(2).run(rank_fn)
    total = inputs[0] + inputs[1]
    np.testing.assert_array_equal(out[0], total[:3])
    np.testing.assert_array_equal(out[1], total[3:])


# Shards whose boundaries cut no block (the kernels' path): each rank
# quantizes its shard alone and all-gathers its codes and block scales in ONE
# packed all-gather. (case, shape, counts, dim): uneven shards, a rank with
# nothing, three ranks, columnwise (the transposed copy gathered along M).
PACKED = [
    ("blockwise-1x128", (300, 384), [150, 150], 0),
    ("blockwise-1x128", (257, 250), [200, 0, 57], 0),
    ("blockwise-128x128-pow2", (384, 200), [256, 128], 0),
    ("blockwise-128x128-f32", (300, 256), [128, 172], 0),
    ("blockwise-1x128", (96, 640), [256, 384], 1),
    ("mxfp8-1x32", (130, 96), [33, 97], 0),
    ("mxfp8-1x32", (70, 160), [64, 96], 1),
    ("mxfp8-e5m2-ocp", (64, 64), [64, 0], 0),
]


@pytest.mark.parametrize("case,shape,counts,dim", PACKED)
def test_local_quantization_gathers_data_and_scales_in_one_call(case, shape, counts, dim):
    spec, kwargs, transposed = CASES[case]
    x = make_tensor(shape, seed=sum(shape) + len(counts))
    block = spec.block[dim]
    grid_counts = [-(-c // block) for c in counts]

    def rank_fn(comm):
        w = (sh.row_window if dim == 0 else sh.column_window)(shape, counts, comm.rank)
        local = x[w.row:w.row + w.rows, w.col:w.col + w.cols]
        q = sh.quantize_whole(NP, local, spec)  # no amax communication
        data, scales = sh.gather_packed(comm, NP, [q.data, q.scale_inv],
                                        [counts, grid_counts], dim)
        return data, scales, comm.traffic
    want = sh.quantize_whole(NP, x, spec)
    want_data, want_scale = reference(x, dict(kwargs), transposed)
    np.testing.assert_array_equal(want.data, want_data)
    for data, scales, traffic in ThreadGroup(len(counts)).run(rank_fn):
        np.testing.assert_array_equal(data, want.data)
        assert scales.dtype == want.scale_inv.dtype
        np.testing.assert_array_equal(scales.view(np.uint8), want.scale_inv.view(np.uint8))
        # one collective: the largest rank's codes and scales, each 16-byte aligned
        other = shape[1 - dim]
        item = want.scale_inv.itemsize
        expected = (-(-max(counts) * other // 16) * 16
                    + -(-max(grid_counts) * want.scale_inv.shape[1 - dim] * item // 16) * 16)
        assert traffic == [("all_gather", expected)]


def test_packed_gather_checks_the_layout():
    def rank_fn(comm):
        comm.all_gather_packed([np.zeros(3, np.uint8)], [[4, 4]])
    with pytest.raises(ValueError, match="array 0 has 3 elements, the layout says 4"):
        ThreadGroup(2).run(rank_fn)
    with pytest.raises(ValueError, match="1 arrays, 2 count lists"):
        ThreadGroup(1).run(lambda comm: comm.all_gather_packed([np.zeros(1)], [[1], [1]]))
