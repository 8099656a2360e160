"""The grouped GEMM kernels the GPU test (python/tests/test_gpu_grouped.py)
and bench/bench_grouped.py run: part of torch_ops_cases.all_specs(), the
table the GPU machine's kernel cache is filled from. Pure Python.
"""

from ..grouped import GROUP_ALIGNMENT, GroupedScaledMatmul

GROUPED_RECIPES = ("tensorwise", "rowwise", "blockwise")
# The correctness test's small GEMMs: every group count 1..8 for each
# recipe ([M, 512] x [G, 256, 512]), and DeepSeek-V3-like partial tiles
# (N = 2112: a partial last N tile and 128x128 B scale blocks straddling
# tiles; K = 7168: 56 K blocks).
TEST_N, TEST_K = 256, 512
TEST_GROUP_COUNTS = tuple(range(1, 9))
WIDE_N, WIDE_K, WIDE_GROUPS = 2112, 7168, 4


def test_spec(recipe, groups, n=TEST_N, k=TEST_K, out_dtype="bf16", layout="m_contiguous"):
    return GroupedScaledMatmul(recipe, groups=groups, n=n, k=k, out_dtype=out_dtype,
                               layout=layout)


# The m_masked test's GEMMs: 4 groups of [M, 640] x [256, 640] per recipe
# (M is a run-time extent: one kernel serves every M; 5 K blocks: the
# promoted 64-row variants run two pairs of blocks and the last one alone),
# 2 groups of DeepSeek-V3-like partial tiles, and an f32 output.
MASKED_GROUPS, WIDE_MASKED_GROUPS = 4, 2
MASKED_K = 640
MASKED_CLUSTER_GROUPS = 3  # the masked 1x2 cluster test's (one empty)


def masked_specs():
    specs = [test_spec(r, MASKED_GROUPS, k=MASKED_K, layout="m_masked")
             for r in GROUPED_RECIPES]
    specs += [test_spec(r, WIDE_MASKED_GROUPS, WIDE_N, WIDE_K, layout="m_masked")
              for r in GROUPED_RECIPES]
    specs.append(test_spec("rowwise", MASKED_GROUPS, k=MASKED_K, out_dtype="f32",
                           layout="m_masked"))
    return specs


# The k_grouped test's GEMMs (M and K are run-time extents): 4 groups of
# [M, K_g] x [N = 256, K_g] per recipe with bf16 and f32 outputs, one group,
# and 3 groups of N = 2112 (a partial last N tile).
K_GROUPED_GROUPS, K_GROUPED_WIDE_GROUPS = 4, 3


def k_grouped_spec(recipe, groups, n=TEST_N, out_dtype="bf16"):
    return GroupedScaledMatmul(recipe, groups=groups, n=n, k=None, out_dtype=out_dtype,
                               layout="k_grouped")


def k_grouped_specs():
    specs = [k_grouped_spec(r, K_GROUPED_GROUPS, out_dtype=o)
             for r in GROUPED_RECIPES for o in ("bf16", "f32")]
    specs += [k_grouped_spec(r, 1) for r in GROUPED_RECIPES]
    specs += [k_grouped_spec(r, K_GROUPED_WIDE_GROUPS, WIDE_N) for r in GROUPED_RECIPES]
    return specs


# FP8 results (test_gpu_grouped.py's FP8-output tests): each GEMM built
# twice with one tiling, with its FP8 result and with an f32 one, whose
# output is bit for bit the values the FP8 kernel quantizes.
# (name, layout, GEMM recipe, G, N, K, result recipe, FP8 dtype, config);
# N = 2112: a last, partial 1x128 block of 64 columns.
FP8_CONFIG = "<tile = 128x128x128>"
# The 128x256 tile in column waves (the heuristic's for 1x128 FP8 results
# where N is a multiple of 256): at N = 2112 its last tile holds one whole
# and one partial 1x128 block; K = 512 is 4 blocks, two a trip.
FP8_WIDE_CONFIG = "<tile = 128x256x128>"
FP8_CASES = [
    ("contiguous-blockwise-1x128", "m_contiguous", "blockwise", 4, WIDE_N, TEST_K,
     "blockwise", "e4m3", FP8_CONFIG),
    ("contiguous-tensorwise-delayed", "m_contiguous", "tensorwise", 3, TEST_N, TEST_K,
     "delayed", "e4m3", FP8_CONFIG),
    ("contiguous-rowwise-delayed-e5m2", "m_contiguous", "rowwise", 5, TEST_N, TEST_K,
     "delayed", "e5m2", FP8_CONFIG),
    ("contiguous-blockwise-1x128-w256", "m_contiguous", "blockwise", 4, WIDE_N, TEST_K,
     "blockwise", "e4m3", FP8_WIDE_CONFIG),
    ("masked-blockwise-1x128", "m_masked", "blockwise", 4, WIDE_N, TEST_K, "blockwise", "e4m3",
     FP8_CONFIG),
    ("masked-rowwise-delayed", "m_masked", "rowwise", 4, TEST_N, TEST_K, "delayed", "e4m3",
     FP8_CONFIG),
]


def fp8_spec(case, out_dtype=None):
    """The FP8-result kernel of `case`, or with `out_dtype` (e.g. "f32")
    the same GEMM with that high-precision output and the same tiling."""
    _, layout, recipe, groups, n, k, result_recipe, dtype, config = case
    return GroupedScaledMatmul(recipe, groups=groups, n=n, k=k, layout=layout,
                               out_dtype=out_dtype or dtype, config=config,
                               result_recipe=None if out_dtype else result_recipe)


def fp8_specs():
    return [fp8_spec(c, out) for c in FP8_CASES for out in (None, "f32")]


# m_contiguous with a 1x2 cluster (the two CTAs multicast their shared A
# tile; a #fp8.gemm_config): at N = 2112, 17 tiles of 128, the last pair's
# second CTA lies past N.
CLUSTER_CONFIGS = {
    "tensorwise": "<tile = 128x128x128, stages = 6, cluster = 1x2>",
    "rowwise": "<tile = 128x128x128, stages = 6, cluster = 1x2>",
    "blockwise": "<tile = 128x128x128, stages = 5, cluster = 1x2>",
}


def cluster_spec(recipe):
    return GroupedScaledMatmul(recipe, groups=WIDE_GROUPS, n=WIDE_N, k=WIDE_K,
                               config=CLUSTER_CONFIGS[recipe])


def masked_cluster_spec(recipe):
    return GroupedScaledMatmul(recipe, groups=MASKED_CLUSTER_GROUPS, n=WIDE_N, k=WIDE_K,
                               layout="m_masked", config=CLUSTER_CONFIGS[recipe])


def test_specs():
    specs = [test_spec(r, g) for r in GROUPED_RECIPES for g in TEST_GROUP_COUNTS]
    specs += [cluster_spec(r) for r in GROUPED_RECIPES]
    specs += [masked_cluster_spec(r) for r in GROUPED_RECIPES]
    specs += [test_spec(r, WIDE_GROUPS, WIDE_N, WIDE_K) for r in GROUPED_RECIPES]
    specs += [test_spec("rowwise", 3, out_dtype="f32"), test_spec("blockwise", 3, out_dtype="f16")]
    return specs + masked_specs() + k_grouped_specs() + fp8_specs()


# bench/bench_grouped.py: mixture-of-experts expert GEMMs, N x K per
# expert: DeepSeek-V3's gate+up (4096 x 7168) and down (7168 x 2048)
# projections, Qwen3-235B-A22B's gate+up (3072 x 4096) and Mixtral-8x7B's
# down (4096 x 14336).
BENCH_SHAPES = ((4096, 7168), (7168, 2048), (3072, 4096), (4096, 14336))
BENCH_RECIPES = ("rowwise", "blockwise")
# m_contiguous (training, prefill): (experts, mean rows per expert), the
# rows of each expert drawn uniformly in 0.7x..1.3x the mean (DeepGEMM's
# own grouped benchmark: 4 x 8192 and 8 x 4096 rows).
BENCH_CONTIGUOUS = ((4, 8192), (8, 4096))
# m_masked (decode under CUDA graphs), blockwise: (experts, mean valid
# rows), counts drawn in 0.5x..1.5x the mean and clamped to the launch's
# fixed [G, BENCH_MASKED_MAX_M, K]; with 4 or more experts every fourth
# is empty. 1-4 experts of hundreds of rows, and 8-32 local experts of
# expert-parallel decode with few rows each.
BENCH_MASKED = ((1, 768), (2, 512), (4, 256), (8, 128), (16, 48), (32, 16))
BENCH_MASKED_MAX_M = 1024


def _uniform(seed):
    import random
    return random.Random(seed).uniform


def bench_contiguous_rows(groups, mean, seed):
    """The rows of each of `groups` experts (uneven, 0.7x..1.3x `mean`)."""
    draw = _uniform(seed)
    return [int(mean * draw(0.7, 1.3)) for _ in range(groups)]


def bench_masked_counts(groups, mean, seed, max_m=BENCH_MASKED_MAX_M):
    """The valid rows of each of `groups` experts (0.5x..1.5x `mean`,
    clamped to max_m; every fourth of 4 or more experts empty)."""
    draw = _uniform(seed)
    counts = [min(max_m, int(mean * draw(0.5, 1.5))) for _ in range(groups)]
    return [0 if groups >= 4 and g % 4 == 3 else c for g, c in enumerate(counts)]


# k_grouped: (experts, M, N, mean tokens per expert): the wgrad of
# DeepSeek-V3's gate+up and down projections (DeepGEMM's own K-grouped
# shapes); tokens 0.7x..1.3x the mean, rounded up to 128; f32 D.
BENCH_K_GROUPED = ((4, 4096, 7168, 8192), (8, 7168, 2048, 4096))


def bench_specs():
    contiguous = [GroupedScaledMatmul(r, groups=g, n=n, k=k) for r in BENCH_RECIPES
                  for g, _ in BENCH_CONTIGUOUS for n, k in BENCH_SHAPES]
    masked = [GroupedScaledMatmul("blockwise", groups=g, n=n, k=k, layout="m_masked")
              for g, _ in BENCH_MASKED for n, k in BENCH_SHAPES]
    k_grouped = [k_grouped_spec("blockwise", g, n, out_dtype="f32")
                 for g, _, n, _ in BENCH_K_GROUPED]
    return contiguous + masked + k_grouped


# bench/bench_grouped.py --fp8-out: the grouped GEMM with an FP8 result
# against the same GEMM writing bf16 and bf16 followed by the quantization
# kernel: blockwise with 1x128 output blocks, each GEMM with the
# heuristic's tiling (both 128x256 where N is a multiple of 256), rowwise
# with a given (delayed) output scale and one tiling for both.
FP8_BENCH_RECIPES = {"blockwise": ("blockwise", None),
                     "rowwise": ("delayed", "<tile = 128x256x128>")}


def fp8out_bench_specs(recipe, groups, n, k):
    """(FP8-output grouped GEMM, bf16-output one, quantization of its output)."""
    from .fp8out_cases import output_quantize_spec
    result_recipe, config = FP8_BENCH_RECIPES[recipe]
    fp8 = GroupedScaledMatmul(recipe, groups=groups, n=n, k=k, out_dtype="e4m3",
                              config=config, result_recipe=result_recipe)
    bf16 = GroupedScaledMatmul(recipe, groups=groups, n=n, k=k, config=config)
    return fp8, bf16, output_quantize_spec(result_recipe, n)


def all_specs():
    specs = test_specs() + bench_specs()
    for recipe in FP8_BENCH_RECIPES:
        for groups, _ in BENCH_CONTIGUOUS:
            for n, k in BENCH_SHAPES:
                specs += fp8out_bench_specs(recipe, groups, n, k)
    unique = {}  # one quantization per N
    for spec in specs:
        unique.setdefault(spec.cache_key, spec)
    return list(unique.values())


class ContiguousProblem:
    """What the GPU test's and the benchmark's grouped GEMMs share: the
    m_contiguous layout of groups of `rows` rows (each padded to
    GROUP_ALIGNMENT, then `padding_tiles` whole padding tiles), and the
    per-group f64 reference of the subclass's `a_exact` [M, K] and
    `b_exact[g]` [N, K] (torch tensors)."""

    def __init__(self, rows, n, k, padding_tiles=0):
        import numpy as np
        self.rows, self.n, self.k, self.g = list(rows), n, k, len(rows)
        index, self.starts = [], []
        for g, r in enumerate(self.rows):
            self.starts.append(len(index))
            index += [g] * r + [-1] * (-r % GROUP_ALIGNMENT)
        index += [-1] * (GROUP_ALIGNMENT * padding_tiles)
        self.index = np.asarray(index, dtype=np.int32)

    def reference(self, g):
        s, r = self.starts[g], self.rows[g]
        return self.a_exact[s:s + r] @ self.b_exact[g].t()

    def offsets(self, torch):
        """torch._scaled_grouped_mm's offs: each padded group's end row."""
        ends = [s + r + (-r % GROUP_ALIGNMENT) for s, r in zip(self.starts, self.rows)]
        return torch.tensor(ends, dtype=torch.int32, device="cuda")


class MaskedProblem:
    """The m_masked layout's problem: G groups of `m` rows each, of which
    `counts[g]` are valid, and the per-group f64 reference of the
    subclass's `a_exact` [G, M, K] and `b_exact[g]` [N, K]."""

    def __init__(self, counts, m, n, k):
        self.counts, self.m, self.n, self.k, self.g = list(counts), m, n, k, len(counts)

    def reference(self, g):
        return self.a_exact[g, :self.counts[g]] @ self.b_exact[g].t()
