"""fp8mlir.grouped_scaled_mm (m_contiguous) on a GPU (marked `gpu`): every
recipe and group count 1..8 against a per-group f64 reference of the same
quantized inputs (fp8mlir.numerics), with uneven, empty and single-row
groups, padding rows and whole padding tiles (left untouched: the output
is poisoned with NaN first), the torch-style offsets, and, for rowwise,
torch._scaled_grouped_mm where this torch has it. The m_masked layout
(masked_m=): every recipe with uneven counts, a zero count, count 1 and
count = M, the rows past each count left untouched (NaN), and one launch
captured in a CUDA graph replayed with other counts.

Kernels come from the kernel cache (fp8mlir.testing.grouped_cases, part of
the table python/tests/test_gpu.py --populate compiles); run by
python/tests/run_gpu.sh.
"""

import numpy as np
import pytest

from fp8mlir import numerics
from fp8mlir.testing import grouped_cases as cases
from torch_ops_util import random_matrix, relative_error, rng, torch_or_fail

pytestmark = pytest.mark.gpu

ALIGN = 128
TOLERANCE = {"bf16": 1e-2, "f16": 5e-3, "f32": 1e-3}
GRANULARITY = {"tensorwise": ("tensor", "tensor"), "rowwise": ("row", "row"),
               "blockwise": ((1, 128), (128, 128))}
# Rows of each group, by group count: uneven, empty (0) and single-row
# groups, a group of exactly one tile and groups spanning several tiles.
GROUP_ROWS = {
    1: [1],
    2: [0, 300],
    3: [129, 0, 1],
    4: [128, 1, 0, 257],
    5: [7, 0, 0, 383, 64],
    6: [1, 1, 1, 1, 1, 1],
    7: [200, 0, 513, 1, 0, 127, 50],
    8: [0, 0, 0, 0, 0, 0, 0, 130],
}


@pytest.fixture(scope="module")
def torch():
    return torch_or_fail()


def quantize(x, recipe, side):
    gran = GRANULARITY[recipe][0 if side == "a" else 1]
    kind = "blockwise" if recipe == "blockwise" else "current"
    return numerics.quantize(x, kind, "e4m3", gran,
                             amax_clamp=np.float32(1e-4) if kind == "blockwise" else 0.0)


class Problem(cases.ContiguousProblem):
    """The quantized operands of one grouped GEMM (m_contiguous, one whole
    padding tile at the end: a tile the kernel skips), torch tensors on the
    GPU, and the f64 reference."""

    def __init__(self, torch, recipe, rows, n, k, seed=0):
        super().__init__(rows, n, k, padding_tiles=1)
        gen = rng("grouped", recipe, tuple(rows), n, k, seed)
        index, m = self.index, len(self.index)
        x = random_matrix(gen, m, k)
        x[index < 0] = 0.0  # padding rows: zeros
        qa = quantize(x, recipe, "a")
        qb = [quantize(random_matrix(gen, n, k), recipe, "b") for _ in rows]
        cuda = lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda()  # noqa: E731
        self.a = cuda(qa.data).view(torch.float8_e4m3fn)
        self.b = cuda(np.stack([q.data for q in qb])).view(torch.float8_e4m3fn)
        self.group_index = cuda(index)
        sa = qa.scale_inv
        sb = np.stack([q.scale_inv for q in qb])
        if recipe == "tensorwise":
            self.scale_a, self.scale_b = cuda(sa.reshape(())), cuda(sb.reshape(self.g))
        elif recipe == "rowwise":
            self.scale_a, self.scale_b = cuda(sa.reshape(m, 1)), cuda(sb.reshape(self.g, n))
        else:
            self.scale_a, self.scale_b = cuda(sa), cuda(sb)
        self.a_exact = cuda(qa.dequantize().astype(np.float64))
        self.b_exact = [cuda(q.dequantize().astype(np.float64)) for q in qb]


def check_result(torch, p, d, out_name):
    """Every group's rows against its reference; padding rows of computed
    tiles zero (their A rows are); whole padding tiles still NaN."""
    tol = TOLERANCE[out_name]
    for g in range(p.g):
        if p.rows[g] == 0:
            continue
        s, r = p.starts[g], p.rows[g]
        err = relative_error(d[s:s + r], p.reference(g))
        assert err <= tol, f"group {g} ({r} rows): relative error {err:.3g} > {tol}"
    first_of_tile = p.index[::ALIGN]
    for t, group in enumerate(first_of_tile):
        tile = d[t * ALIGN:(t + 1) * ALIGN]
        padding = torch.from_numpy(p.index[t * ALIGN:(t + 1) * ALIGN] < 0).cuda()
        if group < 0:
            assert torch.isnan(tile.float()).all(), f"padding tile {t} was written"
        elif padding.any():
            assert (tile[padding].float() == 0).all(), f"padding rows of tile {t} not zero"


def poisoned(torch, p, dtype):
    return torch.full((len(p.index), p.n), float("nan"), dtype=dtype, device="cuda")


@pytest.mark.parametrize("groups", cases.TEST_GROUP_COUNTS)
@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_grouped_matches_reference(torch, recipe, groups):
    import fp8mlir
    p = Problem(torch, recipe, GROUP_ROWS[groups], cases.TEST_N, cases.TEST_K)
    d = poisoned(torch, p, torch.bfloat16)
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, group_index=p.group_index,
                              out=d)
    torch.cuda.synchronize()
    check_result(torch, p, d, "bf16")


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_grouped_partial_tiles(torch, recipe):
    """N = 2112 (a partial last N tile, 128x128 B scales straddling tiles),
    K = 7168."""
    import fp8mlir
    p = Problem(torch, recipe, [129, 0, 1, 300], cases.WIDE_N, cases.WIDE_K)
    d = poisoned(torch, p, torch.bfloat16)
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, group_index=p.group_index,
                              recipe=recipe, out=d)
    torch.cuda.synchronize()
    check_result(torch, p, d, "bf16")


def launch_cluster_kernel(torch, spec, operands, device):
    """Launches the 1x2-cluster kernel of `spec` (a #fp8.gemm_config the
    public call does not take for bf16 results) on named operands."""
    from fp8mlir import _torch_ops
    (kernel,) = _torch_ops.kernels_for(spec, device)
    assert "_c1x2" in kernel.name, kernel.name
    _torch_ops.launch(kernel, [operands.get(name) for name in kernel.operand_names])
    torch.cuda.synchronize()


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_grouped_cluster_1x2(torch, recipe):
    """A 1x2 cluster (cases.cluster_spec, a #fp8.gemm_config the public
    call does not take for bf16 results: launched directly): the pair's
    CTAs take two N tiles of the same rows and multicast halves of the A
    tile; N = 2112 leaves the last pair's second CTA past N; an empty
    group, a one-row group and padding tiles."""
    from fp8mlir import _grouped_ops
    p = Problem(torch, recipe, [129, 0, 1, 300], cases.WIDE_N, cases.WIDE_K)
    spec = cases.cluster_spec(recipe)
    assert (spec.groups, spec.n, spec.k) == (p.g, p.n, p.k)
    d = poisoned(torch, p, torch.bfloat16)
    sa, sb = _grouped_ops._kernel_scales(recipe, p.scale_a, p.scale_b, len(p.index), p.g, p.n,
                                         p.k, ())
    operands = {"a": p.a, "b": p.b, "a_scale_inv": sa, "b_scale_inv": sb,
                "group_index": p.group_index, "d": d}
    launch_cluster_kernel(torch, spec, operands, d.device)
    check_result(torch, p, d, "bf16")


@pytest.mark.parametrize("recipe, out", [("rowwise", "f32"), ("blockwise", "f16")])
def test_grouped_output_dtypes(torch, recipe, out):
    import fp8mlir
    dtype = {"f32": torch.float32, "f16": torch.float16}[out]
    p = Problem(torch, recipe, GROUP_ROWS[3], cases.TEST_N, cases.TEST_K, seed=1)
    d = poisoned(torch, p, dtype)
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, group_index=p.group_index,
                              out=d)
    torch.cuda.synchronize()
    check_result(torch, p, d, out)


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_grouped_offsets_match_group_index(torch, recipe):
    """torch-style offsets (cumulative end rows of the padded groups) give
    the group index's result on every group row."""
    import fp8mlir
    p = Problem(torch, recipe, GROUP_ROWS[5], cases.TEST_N, cases.TEST_K, seed=2)
    by_index = fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b,
                                         group_index=p.group_index)
    by_offsets = fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b,
                                           offsets=p.offsets(torch))
    torch.cuda.synchronize()
    rows = torch.from_numpy(p.index >= 0).cuda()
    assert torch.equal(by_index[rows], by_offsets[rows])


def test_grouped_rowwise_matches_torch_scaled_grouped_mm(torch):
    import fp8mlir
    if not hasattr(torch, "_scaled_grouped_mm"):
        pytest.skip(f"torch {torch.__version__} has no _scaled_grouped_mm")
    p = Problem(torch, "rowwise", GROUP_ROWS[4], cases.TEST_N, cases.TEST_K, seed=3)
    offs = p.offsets(torch)
    try:
        want = torch._scaled_grouped_mm(p.a, p.b.transpose(-2, -1), p.scale_a.reshape(-1),
                                        p.scale_b, offs=offs, out_dtype=torch.bfloat16)
    except RuntimeError as error:
        pytest.skip(f"torch._scaled_grouped_mm does not run here: {error}")
    got = fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, offsets=offs)
    torch.cuda.synchronize()
    rows = torch.from_numpy(p.index >= 0).cuda()
    err = relative_error(got[rows], want[rows])
    assert err <= TOLERANCE["bf16"], f"against torch._scaled_grouped_mm: {err:.3g}"


def test_grouped_rejects_bad_arguments(torch):
    import fp8mlir
    p = Problem(torch, "rowwise", GROUP_ROWS[2], cases.TEST_N, cases.TEST_K)
    with pytest.raises(ValueError, match="exactly one of group_index=, offsets=, masked_m= and k_sizes="):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b)
    with pytest.raises(ValueError, match="layout 'k_grouped'"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, group_index=p.group_index,
                                  layout="k_grouped")
    with pytest.raises(RuntimeError, match="group_index: expected int32"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b,
                                  group_index=p.group_index.long())
    with pytest.raises(ValueError, match="cannot tell the recipe"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b[:1],
                                  group_index=p.group_index)


# m_masked: (M, counts of the MASKED_GROUPS groups): a count of 0, of 1, of
# M, uneven ones, M below, at and above one tile and not a multiple of 4
# (the blockwise A scales' padded rows); decode-like counts far below M
# (the scheduler walks only the tiles with valid rows: a grid of more CTAs
# than such tiles), and all counts zero (no tile at all).
MASKED_CASES = [(190, [0, 1, 150, 190]), (64, [64, 0, 3, 17]), (300, [300, 129, 0, 1]),
                (1024, [17, 0, 1, 0]), (512, [0, 0, 0, 0])]


class MaskedProblem(cases.MaskedProblem):
    """The quantized operands of one m_masked grouped GEMM on the GPU: A's
    rows past each count are random (the kernel must ignore them)."""

    def __init__(self, torch, recipe, counts, m, n, k, seed=0):
        super().__init__(counts, m, n, k)
        gen = rng("masked", recipe, tuple(counts), m, n, k, seed)
        g = self.g
        # A quantized as one [G * M, K] matrix: per-tensor scales shared by
        # the groups, per-row and 1x128 ones per row.
        qa = quantize(random_matrix(gen, g * m, k), recipe, "a")
        qb = [quantize(random_matrix(gen, n, k), recipe, "b") for _ in range(g)]
        cuda = lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda()  # noqa: E731
        self.a = cuda(qa.data.reshape(g, m, k)).view(torch.float8_e4m3fn)
        self.b = cuda(np.stack([q.data for q in qb])).view(torch.float8_e4m3fn)
        self.masked_m = cuda(np.asarray(counts, dtype=np.int32))
        sa, sb = qa.scale_inv, np.stack([q.scale_inv for q in qb])
        if recipe == "tensorwise":
            self.scale_a, self.scale_b = cuda(sa.reshape(())), cuda(sb.reshape(g))
        elif recipe == "rowwise":
            self.scale_a, self.scale_b = cuda(sa.reshape(g, m, 1)), cuda(sb.reshape(g, n))
        else:
            self.scale_a, self.scale_b = cuda(sa.reshape(g, m, -1)), cuda(sb)
        self.a_exact = cuda(qa.dequantize().astype(np.float64).reshape(g, m, k))
        self.b_exact = [cuda(q.dequantize().astype(np.float64)) for q in qb]


def check_masked(torch, p, d, out_name):
    """Rows below each count against the reference; the rest still NaN."""
    tol = TOLERANCE[out_name]
    assert tuple(d.shape) == (p.g, p.m, p.n)
    for g, count in enumerate(p.counts):
        if count:
            err = relative_error(d[g, :count], p.reference(g))
            assert err <= tol, f"group {g} ({count} of {p.m} rows): relative error {err:.3g}"
        assert torch.isnan(d[g, count:].float()).all(), \
            f"group {g}: rows from its count {count} on were written"


def masked_poisoned(torch, p, dtype):
    return torch.full((p.g, p.m, p.n), float("nan"), dtype=dtype, device="cuda")


@pytest.mark.parametrize("m, counts", MASKED_CASES)
@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_masked_matches_reference(torch, recipe, m, counts):
    import fp8mlir
    p = MaskedProblem(torch, recipe, counts, m, cases.TEST_N, cases.MASKED_K)
    d = masked_poisoned(torch, p, torch.bfloat16)
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m, out=d)
    torch.cuda.synchronize()
    check_masked(torch, p, d, "bf16")


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_masked_partial_tiles(torch, recipe):
    """N = 2112, K = 7168, M = 130 (two tile rows per group, one row in the
    second), counts 130 and 5."""
    import fp8mlir
    p = MaskedProblem(torch, recipe, [130, 5], 130, cases.WIDE_N, cases.WIDE_K, seed=1)
    d = masked_poisoned(torch, p, torch.bfloat16)
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m,
                              recipe=recipe, out=d)
    torch.cuda.synchronize()
    check_masked(torch, p, d, "bf16")


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_masked_cluster_1x2(torch, recipe):
    """m_masked in a 1x2 cluster (cases.masked_cluster_spec, launched
    directly): the pair's CTAs take two N tiles of the same group rows and
    multicast halves of the A tile; N = 2112 leaves the last pair's second
    CTA past N; counts 130 and 5 of M = 130, and an empty group."""
    from fp8mlir import _grouped_ops
    p = MaskedProblem(torch, recipe, [130, 0, 5], 130, cases.WIDE_N, cases.WIDE_K, seed=4)
    spec = cases.masked_cluster_spec(recipe)
    d = masked_poisoned(torch, p, torch.bfloat16)
    sa, sb = _grouped_ops._kernel_scales(recipe, p.scale_a, p.scale_b, p.m, p.g, p.n, p.k,
                                         (p.g,))
    operands = {"a": p.a, "b": p.b, "a_scale_inv": sa, "b_scale_inv": sb,
                "masked_m": p.masked_m, "d": d}
    assert spec.groups == p.g
    launch_cluster_kernel(torch, spec, operands, d.device)
    check_masked(torch, p, d, "bf16")


def test_masked_f32_output(torch):
    import fp8mlir
    p = MaskedProblem(torch, "rowwise", [5, 0, 77, 128], 128, cases.TEST_N, cases.MASKED_K,
                      seed=2)
    d = masked_poisoned(torch, p, torch.float32)
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m, out=d)
    torch.cuda.synchronize()
    check_masked(torch, p, d, "f32")


def check_replayed_graph(torch, seed, **hint):
    """One captured launch (into a NaN-poisoned D), replayed after the
    counts changed on the device: the launch does not depend on them."""
    import fp8mlir
    p = MaskedProblem(torch, "blockwise", [3, 0, 100, 128], 128, cases.TEST_N, cases.MASKED_K,
                      seed=seed)
    d = masked_poisoned(torch, p, torch.bfloat16)
    call = lambda: fp8mlir.grouped_scaled_mm(  # noqa: E731
        p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m, out=d, **hint)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()  # loads the kernel outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call()
    for counts in ([3, 0, 100, 128], [128, 1, 0, 64], [0, 0, 0, 0], [0, 17, 0, 1]):
        p.counts = counts
        p.masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_masked(torch, p, d, "bf16")


def test_masked_in_a_cuda_graph(torch):
    check_replayed_graph(torch, seed=3)


def test_masked_rejects_bad_arguments(torch):
    import fp8mlir
    p = MaskedProblem(torch, "rowwise", [1, 2], 64, cases.TEST_N, cases.MASKED_K)
    with pytest.raises(ValueError, match="layout 'm_masked' takes masked_m="):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b,
                                  group_index=p.masked_m, layout="m_masked")
    with pytest.raises(RuntimeError, match="masked_m: expected int32"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b,
                                  masked_m=p.masked_m.long())
    with pytest.raises(RuntimeError, match="expected a \\[G, M, K\\]"):
        fp8mlir.grouped_scaled_mm(p.a[0], p.b, p.scale_a, p.scale_b, masked_m=p.masked_m)


# m_masked launch variants (expected_m=): the kernel of every masked spec
# and each of its launch variants (tile M 128 or 64 by tile N in steps of
# 16: at N = 2112 blockwise 128x192, 160, 144, whose tiles span two 128x128
# B blocks at every offset, and 80, 112, with more B scale classes and a
# larger producer budget; partial last tiles), each launched on its own so
# that every one is checked whatever the runtime's model picks, then the
# public path with hints that pick a variant, in a CUDA graph too.
_VARIANTS = {}  # metadata path -> runtime kernels, kept loaded


def masked_kernels(torch, spec):
    """The runtime kernel of `spec` and each of its launch variants."""
    from fp8mlir import _runtime, _torch_ops
    (kernel,) = _torch_ops.kernels_for(spec, torch.device("cuda", torch.cuda.current_device()))
    variants = _VARIANTS.get(kernel.path)
    if variants is None:
        variants = _VARIANTS[kernel.path] = [
            _runtime.Kernel(kernel.path.parent / name) for name in kernel.meta["variants"]]
        for variant in variants:
            _torch_ops._KERNELS_BY_HANDLE.setdefault(variant.handle, variant)
    return [kernel] + variants


def launch_masked(torch, kernel, p, recipe, d):
    from fp8mlir import _grouped_ops, _torch_ops
    sa, sb = _grouped_ops._kernel_scales(recipe, p.scale_a, p.scale_b, p.m, p.g, p.n, p.k,
                                         (p.g,))
    operands = {"a": p.a, "b": p.b, "a_scale_inv": sa, "b_scale_inv": sb,
                "masked_m": p.masked_m, "d": d}
    _torch_ops.launch(kernel, [operands[name] for name in kernel.operand_names])


@pytest.mark.parametrize("wide", [False, True], ids=["n256", "n2112"])
@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_masked_launch_variants_match_reference(torch, recipe, wide):
    groups = cases.WIDE_MASKED_GROUPS if wide else cases.MASKED_GROUPS
    n, k = (cases.WIDE_N, cases.WIDE_K) if wide else (cases.TEST_N, cases.MASKED_K)
    kernels = masked_kernels(torch, cases.test_spec(recipe, groups, n, k, layout="m_masked"))
    tiles = {tuple(kern.meta["gemm"]["tile"][:2]) for kern in kernels}
    assert {(64, 128), (64, 64)} <= tiles and len(tiles) == len(kernels), tiles
    assert {(128, 112), (64, 112), (64, 80), (64, 48), (64, 16)} <= tiles, tiles
    if wide and recipe == "blockwise":
        assert {(128, 192), (128, 160), (128, 144), (64, 192), (64, 144)} <= tiles, tiles
    runs = [(190, [0, 1, 150, 190]), (64, [64, 0, 3, 17]), (300, [300, 129, 0, 1]),
            (512, [0, 0, 0, 0])]
    if wide:
        runs = [(130, [130, 5]), (200, [0, 1]), (65, [64, 65])]
    for m, counts in runs:
        p = MaskedProblem(torch, recipe, counts, m, n, k, seed=m)
        for kern in kernels:
            d = masked_poisoned(torch, p, torch.bfloat16)
            launch_masked(torch, kern, p, recipe, d)
            torch.cuda.synchronize()
            try:
                check_masked(torch, p, d, "bf16")
            except AssertionError as e:
                raise AssertionError(f"{kern.name}, M = {m}, counts {counts}: {e}") from None


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_masked_expected_m_matches_reference(torch, recipe):
    """The public path with the hint: 1 row per group (the runtime picks a
    64-row variant here) and M (the 128-row kernel or a wider variant), the
    f32 output too."""
    import fp8mlir
    from fp8mlir import _grouped_ops, _torch_ops
    device = torch.device("cuda", torch.cuda.current_device())
    (kernel,) = _torch_ops.kernels_for(
        cases.test_spec(recipe, cases.MASKED_GROUPS, k=cases.MASKED_K, layout="m_masked"),
        device)
    picked = _grouped_ops._kernel_for_expected_m(kernel, 1, device)
    assert picked.meta["gemm"]["tile"][0] == 64, picked.name
    p = MaskedProblem(torch, recipe, [1, 0, 37, 190], 190, cases.TEST_N, cases.MASKED_K, seed=5)
    for hint in (1, 16, 190):
        d = masked_poisoned(torch, p, torch.bfloat16)
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m,
                                  expected_m=hint, out=d)
        torch.cuda.synchronize()
        check_masked(torch, p, d, "bf16")
        d = fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m,
                                      expected_m=hint)
        torch.cuda.synchronize()
        for g, count in enumerate(p.counts):
            if count:
                assert relative_error(d[g, :count], p.reference(g)) <= TOLERANCE["bf16"]
    if recipe == "rowwise":
        spec = cases.test_spec("rowwise", cases.MASKED_GROUPS, k=cases.MASKED_K,
                               out_dtype="f32", layout="m_masked")
        assert len(masked_kernels(torch, spec)) > 1
        d = masked_poisoned(torch, p, torch.float32)
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.masked_m,
                                  expected_m=2, out=d)
        torch.cuda.synchronize()
        check_masked(torch, p, d, "f32")


def test_masked_expected_m_in_a_cuda_graph(torch):
    """A launch of the hinted (64-row) variant in a CUDA graph."""
    check_replayed_graph(torch, seed=6, expected_m=4)


def test_masked_rejects_bad_expected_m(torch):
    import fp8mlir
    p = MaskedProblem(torch, "rowwise", [1, 2], 64, cases.TEST_N, cases.MASKED_K)
    args = (p.a, p.b, p.scale_a, p.scale_b)
    for bad in (0, -1, True, 2.0, "8"):
        with pytest.raises(ValueError, match="expected_m: expected a positive int"):
            fp8mlir.grouped_scaled_mm(*args, masked_m=p.masked_m, expected_m=bad)
    with pytest.raises(ValueError, match="expected_m = 65 exceeds M = 64"):
        fp8mlir.grouped_scaled_mm(*args, masked_m=p.masked_m, expected_m=65)
    with pytest.raises(ValueError, match="expected_m is the m_masked layout's hint"):
        fp8mlir.grouped_scaled_mm(p.a[0], p.b, p.scale_a[0], p.scale_b,
                                  group_index=p.masked_m, expected_m=8)
    # The operator itself checks it too.
    with pytest.raises(ValueError, match="expected_m: expected a positive int"):
        torch.ops.fp8mlir.grouped_scaled_mm_masked(*args, p.masked_m, expected_m=-4)


# k_grouped (the experts' weight gradient): (M, the columns of each group).
# Empty groups (first, middle, last, all but one), a group of exactly 128
# columns, uneven sizes; M below one tile, not a multiple of the tile M (a
# partial last tile row per group) nor of 4 (the 1x128 A scales' padding).
K_GROUPED_CASES = [(200, [256, 0, 128, 640]), (64, [0, 0, 384, 0]), (130, [128, 128, 0, 1024])]


def quantize_slices(x, sizes, recipe):
    """x [R, K] quantized per group slice (per-tensor / per-row: one set of
    scales per group) or in 1x128 blocks along K (blockwise): (FP8 bytes
    [R, K], dequantized f64 [R, K], scale_inv per group or [R, K/128])."""
    if recipe == "blockwise":
        q = numerics.quantize(x, "blockwise", "e4m3", (1, 128), amax_clamp=np.float32(1e-4))
        return q.data, q.dequantize().astype(np.float64), q.scale_inv
    gran = "tensor" if recipe == "tensorwise" else "row"
    rows = x.shape[0]
    data, exact, scales, start = [], [], [], 0
    for size in sizes:
        part = np.ascontiguousarray(x[:, start:start + size])
        start += size
        if size == 0:  # no tokens: any scale, nothing to quantize
            data.append(np.zeros((rows, 0), dtype=np.uint8))
            exact.append(np.zeros((rows, 0)))
            scales.append(np.ones(1 if gran == "tensor" else rows, dtype=np.float32))
            continue
        q = numerics.quantize(part, "current", "e4m3", gran)
        data.append(q.data.reshape(rows, size))
        exact.append(q.dequantize().astype(np.float64))
        scales.append(np.asarray(q.scale_inv, dtype=np.float32).reshape(-1))
    return np.concatenate(data, axis=1), np.concatenate(exact, axis=1), np.stack(scales)


class KGroupedProblem:
    """dW_g = dY_g^T X_g for groups of `sizes` tokens: A = dY^T [M, K] and
    B = X^T [N, K] on the GPU, quantized as the recipe says, and the
    per-group f64 reference."""

    def __init__(self, torch, recipe, sizes, m, n, seed=0):
        self.sizes, self.m, self.n, self.g = list(sizes), m, n, len(sizes)
        self.k = sum(sizes)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
        gen = rng("k_grouped", recipe, tuple(sizes), m, n, seed)
        cuda = lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda()  # noqa: E731
        qa, self.a_exact, sa = quantize_slices(random_matrix(gen, m, self.k), sizes, recipe)
        qb, self.b_exact, sb = quantize_slices(random_matrix(gen, n, self.k), sizes, recipe)
        self.a = cuda(qa).view(torch.float8_e4m3fn)
        self.b = cuda(qb).view(torch.float8_e4m3fn)
        self.k_sizes = cuda(np.asarray(sizes, dtype=np.int32))
        if recipe == "rowwise":
            sa, sb = sa.reshape(self.g, m, 1), sb.reshape(self.g, n, 1)
        elif recipe == "tensorwise":
            sa, sb = sa.reshape(self.g), sb.reshape(self.g)
        self.scale_a, self.scale_b = cuda(sa), cuda(sb)

    def reference(self, g):
        s, size = self.starts[g], self.sizes[g]
        return self.a_exact[:, s:s + size] @ self.b_exact[:, s:s + size].T


def check_k_grouped(torch, p, d, out_name):
    """Every group against its reference; empty groups zeros; all of D
    written (it was NaN)."""
    tol = TOLERANCE[out_name]
    assert tuple(d.shape) == (p.g, p.m, p.n)
    assert not torch.isnan(d.float()).any(), "D not written everywhere"
    for g, size in enumerate(p.sizes):
        if size == 0:
            assert (d[g].float() == 0).all(), f"empty group {g}: dW not zero"
            continue
        want = torch.from_numpy(p.reference(g)).cuda()
        err = relative_error(d[g], want)
        assert err <= tol, f"group {g} ({size} tokens): relative error {err:.3g} > {tol}"


def run_k_grouped(torch, p, dtype, **kwargs):
    import fp8mlir
    d = torch.full((p.g, p.m, p.n), float("nan"), dtype=dtype, device="cuda")
    fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, k_sizes=p.k_sizes, out=d,
                              **kwargs)
    torch.cuda.synchronize()
    return d


@pytest.mark.parametrize("m, sizes", K_GROUPED_CASES)
@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_k_grouped_matches_reference(torch, recipe, m, sizes):
    p = KGroupedProblem(torch, recipe, sizes, m, cases.TEST_N)
    check_k_grouped(torch, p, run_k_grouped(torch, p, torch.bfloat16), "bf16")


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_k_grouped_f32_output(torch, recipe):
    p = KGroupedProblem(torch, recipe, [384, 128, 0, 256], 129, cases.TEST_N, seed=1)
    check_k_grouped(torch, p, run_k_grouped(torch, p, torch.float32), "f32")


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_k_grouped_single_group(torch, recipe):
    p = KGroupedProblem(torch, recipe, [640], 256, cases.TEST_N, seed=2)
    check_k_grouped(torch, p, run_k_grouped(torch, p, torch.bfloat16, recipe=recipe), "bf16")


@pytest.mark.parametrize("recipe", cases.GROUPED_RECIPES)
def test_k_grouped_partial_tiles(torch, recipe):
    """N = 2112 (a partial last N tile), M = 300, 3 groups."""
    p = KGroupedProblem(torch, recipe, [128, 0, 896], 300, cases.WIDE_N, seed=3)
    check_k_grouped(torch, p, run_k_grouped(torch, p, torch.bfloat16), "bf16")


def test_k_grouped_mn_major_scales_need_no_copy(torch):
    """1x128 scales given MN-major ([K/128, roundup(M, 4)] storage, as the
    columnwise quantization writes them) give the same result."""
    p = KGroupedProblem(torch, "blockwise", [256, 0, 128, 640], 202, cases.TEST_N, seed=4)
    want = run_k_grouped(torch, p, torch.bfloat16)

    def mn_major(s):
        rows, blocks = s.shape
        padded = (rows + 3) // 4 * 4
        storage = torch.zeros((blocks, padded), dtype=torch.float32, device="cuda")
        storage[:, :rows] = s.t()
        return storage[:, :rows].t()

    p.scale_a, p.scale_b = mn_major(p.scale_a), mn_major(p.scale_b)
    assert torch.equal(run_k_grouped(torch, p, torch.bfloat16), want)


def test_k_grouped_rejects_bad_arguments(torch):
    import fp8mlir
    p = KGroupedProblem(torch, "tensorwise", [128, 256], 64, cases.TEST_N)
    with pytest.raises(ValueError, match="layout 'k_grouped' takes k_sizes="):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, masked_m=p.k_sizes,
                                  layout="k_grouped")
    with pytest.raises(RuntimeError, match="k_sizes: expected int32"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, k_sizes=p.k_sizes.long())
    with pytest.raises(RuntimeError, match="to be a multiple of 128"):
        fp8mlir.grouped_scaled_mm(p.a[:, :300], p.b[:, :300], p.scale_a, p.scale_b,
                                  k_sizes=p.k_sizes)
    with pytest.raises(ValueError, match="k_grouped .k_sizes=. writes a bfloat16"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, k_sizes=p.k_sizes,
                                  out_dtype=torch.float8_e4m3fn)


# FP8 results (out_dtype float8): the bytes and scales the epilogue writes
# are bit for bit fp8mlir.numerics.quantize of the f32 values it quantizes,
# taken from the same grouped GEMM built with an f32 output and the same
# tiling (grouped_cases.fp8_spec), itself checked against the f64 reference.
# Rows the layout does not write keep their poison: bytes 0x7F (NaN in
# E4M3 and E5M2) and NaN scales. Masked: a zero count, count 1, count = M
# and M = 190 (not a multiple of 4: the scales' padded rows).
FP8_MASKED_ROWS, FP8_MASKED_COUNTS = 190, [0, 1, 150, 190]


def _fp8_problem(torch, case):
    _, layout, recipe, groups, n, k, _, _, _ = case
    if layout == "m_masked":
        counts = (FP8_MASKED_COUNTS * groups)[:groups]
        p = MaskedProblem(torch, recipe, counts, FP8_MASKED_ROWS, n, k, seed=5)
        written = np.arange(p.m)[None, :] < np.asarray(counts)[:, None]
        return p, p.masked_m, written.reshape(-1)
    p = Problem(torch, recipe, GROUP_ROWS[groups], n, k, seed=5)
    # Whole tiles of a group are written, its padding rows included.
    written = np.repeat(p.index[::ALIGN] >= 0, ALIGN)[:len(p.index)]
    return p, p.group_index, written


def _f32_same_tiling(torch, case, p, groups):
    """D in f32 from the f32 kernel of `case` (NaN where not written)."""
    from fp8mlir import _grouped_ops as grouped_ops
    from fp8mlir import _torch_ops as ops
    spec = cases.fp8_spec(case, "f32")
    masked = spec.layout == "m_masked"
    m = p.m if masked else len(p.index)
    sa, sb = grouped_ops._kernel_scales(spec.recipe, p.scale_a, p.scale_b, m, p.g, p.n, p.k,
                                        (p.g,) if masked else ())
    d = torch.full(((p.g, m) if masked else (m,)) + (p.n,), float("nan"),
                   dtype=torch.float32, device="cuda")
    operands = {"a": p.a, "b": p.b, "a_scale_inv": sa, "b_scale_inv": sb,
                "masked_m" if masked else "group_index": groups, "d": d}
    (kernel,) = ops.kernels_for(spec, d.device)
    ops.launch(kernel, [operands.get(name) for name in kernel.operand_names])
    return d


def _check_f32(p, d32):
    for g in range(p.g):
        if isinstance(p, MaskedProblem):
            rows, got = p.counts[g], d32[g, :p.counts[g]]
        else:
            rows, got = p.rows[g], d32[p.starts[g]:p.starts[g] + p.rows[g]]
        if rows:
            err = relative_error(got, p.reference(g))
            assert err <= 1e-3, f"f32 group {g}: relative error {err:.3g}"


@pytest.mark.parametrize("case", cases.FP8_CASES, ids=[c[0] for c in cases.FP8_CASES])
def test_grouped_fp8_output_bits(torch, case):
    import fp8mlir
    name, layout, _, _, n, _, result_recipe, dtype, config = case
    p, groups, written = _fp8_problem(torch, case)
    d32 = _f32_same_tiling(torch, case, p, groups)
    torch.cuda.synchronize()
    _check_f32(p, d32)
    rows32 = d32.reshape(-1, n).cpu().numpy()[written]
    fp8_dtype = torch.float8_e4m3fn if dtype == "e4m3" else torch.float8_e5m2
    # Poisoned outputs: FP8 NaN bytes, NaN scales.
    shape = tuple(d32.shape)
    d8 = torch.full(shape, 0x7F, dtype=torch.uint8, device="cuda").view(fp8_dtype)
    scale = None
    if result_recipe == "delayed":
        q99 = float(np.quantile(np.abs(rows32), 0.99))  # saturates ~1% (satfinite)
        scale = torch.tensor(numerics.max_finite(dtype) / max(q99, 1e-30),
                             dtype=torch.float32, device="cuda")
        s = torch.full((), float("nan"), dtype=torch.float32, device="cuda")
    else:
        # MN-major storage [(G,) ceil(N/128), roundup(M, 4)], viewed as a
        # new result's [(G,) M, ceil(N/128)].
        m = shape[-2]
        storage = torch.full(shape[:-2] + (-(-n // 128), -(-m // 4) * 4), float("nan"),
                             dtype=torch.float32, device="cuda")
        s = storage.transpose(-1, -2)[..., :m, :]
    kwargs = {"masked_m" if layout == "m_masked" else "group_index": groups}
    got_d, got_s = fp8mlir.grouped_scaled_mm(
        p.a, p.b, p.scale_a, p.scale_b, out_dtype=fp8_dtype, result_recipe=result_recipe,
        result_scale=scale, config=config, out=(d8, s), **kwargs)
    assert got_d is d8 and got_s is s
    torch.cuda.synchronize()
    if result_recipe == "delayed":
        want = numerics.quantize(rows32, "delayed", dtype, "tensor",
                                 scale=np.float32(scale.item()))
    else:
        want = numerics.quantize(rows32, "blockwise", "e4m3", (1, 128), scales="pow2",
                                 amax_clamp=np.float32(1e-4))
    got = d8.view(torch.uint8).reshape(-1, n).cpu().numpy()
    mismatches = np.count_nonzero(got[written] != want.data)
    assert mismatches == 0, f"{name}: {mismatches} of {want.data.size} FP8 bytes differ"
    assert (got[~written] == 0x7F).all(), f"{name}: rows the layout does not write were written"
    bits = lambda x: np.asarray(x, np.float32).view(np.uint32)  # noqa: E731
    if result_recipe == "delayed":
        np.testing.assert_array_equal(bits(s.cpu().numpy()),
                                      bits(want.scale_inv).reshape(()))
        return
    assert tuple(s.shape) == shape[:-1] + (-(-n // 128),)
    got_s = s.reshape(-1, s.shape[-1]).cpu().numpy()
    np.testing.assert_array_equal(bits(got_s[written]), bits(want.scale_inv))
    assert np.isnan(got_s[~written]).all(), f"{name}: scales of unwritten rows were written"


def test_grouped_fp8_output_rejects_other_recipes(torch):
    import fp8mlir
    p = Problem(torch, "rowwise", GROUP_ROWS[2], cases.TEST_N, cases.TEST_K)
    with pytest.raises(ValueError, match="the grouped kernels quantize 'delayed'"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, group_index=p.group_index,
                                  out_dtype=torch.float8_e4m3fn, result_recipe="current")
    with pytest.raises(ValueError, match="'delayed' needs result_scale"):
        fp8mlir.grouped_scaled_mm(p.a, p.b, p.scale_a, p.scale_b, group_index=p.group_index,
                                  out_dtype=torch.float8_e4m3fn, result_recipe="delayed")
