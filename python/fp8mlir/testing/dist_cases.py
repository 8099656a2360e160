"""The cases of the 2-GPU FP8-communication scripts (bench/dist_*.py,
bench/train_tp.py) and every project kernel they run, for the kernel cache
filled on the build machine (``fp8mlir.populate --suite dist``). No torch:
the lists come from the rules of fp8mlir.distributed.kernel_specs, the
same the GPU path follows.
"""

import random

from ..distributed import kernel_specs as ks
from ..distributed import sharded as sh

# --- bench/dist_exactness.py -----------------------------------------------------------

def splits(world, seed, count):
    """(shape, dim, counts): fixed cases (boundaries off every block
    multiple, a one-row shard, a rank with nothing) and random ones."""
    fixed = [((4096, 1024), 0, sh.split(4096, world)),
             ((1000, 768), 0, None), ((333, 640), 0, None), ((256, 1000), 1, None),
             ((128, 300), 1, None), ((517, 129), 0, [1] + [0] * (world - 2) + [516])]
    # uneven shards on 128 boundaries (no block cut: the kernels quantize
    # each shard alone and gather its codes and scales in one all-gather),
    # rows ending in a partial tile, and columns
    aligned = [128 * c for c in sh.split(2 * world + 1, world)]
    fixed += [((sum(aligned) - 50, 384), 0, aligned[:-1] + [aligned[-1] - 50]),
              ((200, sum(aligned)), 1, aligned)]
    rng = random.Random(seed)
    out = []
    for shape, dim, counts in fixed:
        extent = shape[dim]
        if counts is None:
            cuts = sorted(rng.sample(range(1, extent), world - 1))
            counts = [b - a for a, b in zip([0] + cuts, cuts + [extent])]
        out.append((shape, dim, counts))
    for _ in range(count):
        shape = (rng.randint(1, 700), rng.randint(1, 700))
        dim = rng.randint(0, 1)
        cuts = sorted(rng.randint(0, shape[dim]) for _ in range(world - 1))
        out.append((shape, dim, [b - a for a, b in zip([0] + cuts, cuts + [shape[dim]])]))
    return out


def windows(shape, counts, dim):
    make = sh.row_window if dim == 0 else sh.column_window
    return [make(shape, counts, r) for r in range(len(counts))]


SEED, RANDOM_CASES = 2024, 12  # dist_exactness.py's defaults
INPUT_DTYPES = ("bf16", "f32")
BLOCK_SPECS = (sh.QuantSpec("blockwise", block=(1, 128), amax_clamp=1e-4),
               sh.QuantSpec("blockwise", block=(128, 128), amax_clamp=1e-4))

TP_CASES = [  # (parallel, M, K, N, seq counts, weight split)  for 2 ranks; scaled for more
    ("column", 1024, 1024, 768, [512, 512], [384, 384]),
    ("column", 1000, 640, 512, [600, 400], [256, 256]),
    ("row", 1024, 1024, 768, [512, 512], [512, 512]),
    ("row", 1000, 768, 640, [300, 700], [256, 512]),
]
TP_UNALIGNED = [("column", 512, 512, 700, [256, 256], [333, 367]),
                ("row", 512, 700, 512, [200, 312], [300, 400])]  # per-tensor recipes only


def tp_cases(world):
    """((parallel, M, K, N, seq, split), recipe) of the TP checks."""
    cases = [(c, r) for c in TP_CASES for r in ("current", "delayed", "blockwise")]
    if world == 2:
        return cases + [(c, r) for c in TP_UNALIGNED for r in ("current", "delayed")]
    out = []
    for (parallel, m, k, n, _, _), recipe in cases:  # even, 128-aligned splits
        split = [s * 128 for s in sh.split((n if parallel == "column" else k) // 128, world)]
        out.append(((parallel, m, k, n, sh.split(m, world), split), recipe))
    return out


# --- bench/dist_speed.py ---------------------------------------------------------------

TOKENS = 8192  # sequence 4096 x micro-batch 2, or 8192 x 1
SPEED_SHAPES = [  # (model, tensor, kind, rows, cols)
    ("7B", "layer input (hidden 4096)", "activation", TOKENS, 4096),
    ("7B", "qkv weight", "weight", 12288, 4096),
    ("7B", "fc1 weight (gate+up)", "weight", 22016, 4096),
    ("7B", "fc2 weight", "weight", 4096, 11008),
    ("70B", "layer input (hidden 8192)", "activation", TOKENS, 8192),
    ("70B", "qkv weight (GQA)", "weight", 10240, 8192),
    ("70B", "fc1 weight (gate+up)", "weight", 57344, 8192),
    ("70B", "fc2 weight", "weight", 8192, 28672),
]


def speed_spec(recipe, kind):
    if recipe == "current":
        return sh.QuantSpec("current")
    return sh.QuantSpec("blockwise", block=(1, 128) if kind == "activation" else (128, 128),
                        amax_clamp=1e-4)


# --- bench/train_tp.py (its defaults) ----------------------------------------------------

def ffn_size(hidden):
    """SwiGLU width: 8/3 of hidden, rounded up to a multiple of 256 (bench/train_model.py)."""
    return -(-(8 * hidden // 3) // 256) * 256


def train_layers(world, hidden=2048, seq=1024, batch=16):
    """(parallel, M, K, N, seq counts, split) of the TP model's linears."""
    m, ffn = seq * batch, ffn_size(hidden)
    seq_counts = sh.split(m, world)
    even = lambda n: [n // world] * world  # noqa: E731
    return [("column", m, hidden, 3 * hidden, seq_counts, even(3 * hidden)),
            ("row", m, hidden, hidden, seq_counts, even(hidden)),
            ("column", m, hidden, 2 * ffn, seq_counts, even(2 * ffn)),
            ("row", m, ffn, hidden, seq_counts, even(ffn))]


# --- the kernels -----------------------------------------------------------------------------

def _offsets(counts):
    return [sum(counts[:i]) for i in range(len(counts))]


def tp_layer_specs(layer, recipe, x_dtype="bf16", w_dtype="f32"):
    """The kernels of one TP layer (fp8mlir.distributed.tp with kernels)."""
    parallel, m, k, n, seq, split = layer
    specs = []
    if recipe == "blockwise":
        w_shape = (n, k)
        w_windows = windows(w_shape, split, 0 if parallel == "column" else 1)
        specs += ks.blockwise_specs(w_windows, w_dtype, (128, 128))
        specs += ks.blockwise_specs(w_windows, "bf16", (128, 128))
        gemm = "blockwise"
    else:
        gemm = "tensorwise"
        specs += [ks.tensorwise_spec(c, x_dtype, f) for c in (k, n) if c % 16 == 0
                  for f in ("e4m3", "e5m2")]  # the BF16-communication mode's whole tensors
    grad = "e4m3" if recipe == "blockwise" else "e5m2"  # dY of the hybrid per-tensor recipes
    for part in split:
        if parallel == "column":  # fprop, dgrad, wgrad
            shapes = [(part, k, x_dtype, "e4m3"), (k, part, "f32", grad), (k, m, w_dtype, grad)]
        else:
            shapes = [(n, part, "f32", "e4m3"), (part, n, x_dtype, grad), (part, m, w_dtype, grad)]
        if recipe == "blockwise":
            shapes = shapes[:2]  # wgrad 1x128 x 1x128: cuBLASLt
        specs += [ks.gemm_spec(gemm, nn, kk, out, a) for nn, kk, out, a in shapes]
    return specs


def quantization_specs(world, seed=SEED, random_cases=RANDOM_CASES):
    """The kernels of dist_exactness.py's quantization section."""
    specs = []
    for shape, dim, counts in splits(world, seed, random_cases):
        ws = windows(shape, counts, dim)
        whole = [sh.Window(0, 0, *shape)]  # the kernels' whole-tensor quantization
        for spec in BLOCK_SPECS:
            if ks.kernel_reason(spec, ws, shape) is None:
                specs += [s for d in INPUT_DTYPES for s in ks.blockwise_specs(ws, d, spec.block)]
            specs += [s for d in INPUT_DTYPES for s in ks.blockwise_specs(whole, d, spec.block)]
        if shape[1] % 16 == 0:
            specs += [ks.tensorwise_spec(shape[1], d, f) for d in INPUT_DTYPES
                      for f in ("e4m3", "e5m2")]
    return specs


def speed_specs(world):
    specs = []
    for _, _, kind, rows, cols in SPEED_SHAPES:
        shape, counts = (rows, cols), sh.split(rows, world)
        specs.append(ks.tensorwise_spec(cols, "bf16", "e4m3"))
        spec = speed_spec("blockwise", kind)
        specs += ks.blockwise_specs(windows(shape, counts, 0) + [sh.Window(0, 0, rows, cols)],
                                    "bf16", spec.block)
    return specs


def all_specs(world=2):
    """Every project kernel the 2-GPU scripts run with their defaults
    (without repeats)."""
    specs = [s for d in ("bf16", "f16", "f32") for f in ("e4m3", "e5m2")
             for s in (ks.per_tensor_spec(d, f), ks.tensorwise_spec(ks.FLAT_COLS, d, f))]
    specs += [ks.QuantizeSpec("blockwise", width, in_dtype=d, block=(1, 128))
              for width in (128, 1024) for d in INPUT_DTYPES]
    specs += quantization_specs(world)
    for layer, recipe in tp_cases(world):
        specs += tp_layer_specs(layer, recipe)
    for layer in train_layers(world):
        for recipe in ("current", "blockwise"):
            specs += tp_layer_specs(layer, recipe)
    specs += speed_specs(world)
    unique = {}
    for spec in specs:
        unique.setdefault(spec.cache_key, spec)
    return list(unique.values())
