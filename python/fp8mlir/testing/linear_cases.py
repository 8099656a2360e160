"""The compiled linear-layer modules (fp8mlir.linear_step.LinearStep) that
the GPU tests (python/tests/test_gpu_linear.py) and the benchmarks with
``--impl fp8mlir`` (bench/train_fp8.py, bench/bench_linear.py) run: the
table ``python3 -m fp8mlir.populate`` compiles (pure Python).

A layer compiles one module per token count (a training step needs a
static M) and per dtypes of X, W and the bias; tokens are padded to a
multiple of 16 (fp8mlir.nn.TOKEN_MULTIPLE). Without autograd it runs the
inference forward, one module for every token count (LinearStep m=None).

A recipe here may be a run name "RECIPE-FORMAT" (linear_step.
recipe_and_format): "current-e4m3" is the current recipe with the e4m3
format (E4M3 dY).
"""

import shlex
import sys
from pathlib import Path

from ..linear_step import LinearStep, recipe_and_format
from ..quantization import QuantizeSpec

RECIPES = ("current", "delayed", "blockwise")  # what runs on sm_90a
# The per-tensor recipes with E4M3 gradients, tested against the reference
# of the same format.
E4M3_RECIPES = ("current-e4m3", "delayed-e4m3")
TOKEN_MULTIPLE = 16
_BENCH = Path(__file__).resolve().parents[3] / "bench"


def padded(tokens):
    return -(-tokens // TOKEN_MULTIPLE) * TOKEN_MULTIPLE


# --- the GPU tests ------------------------------------------------------------------

# name: (batch, seq, in, out, x dtype, w dtype, bias dtype, main_grad)
LAYERS = {
    # 3 x 112 = 336 tokens: not a multiple of 128, an odd batch; bias.
    "tail": (3, 112, 256, 384, "bf16", "bf16", "bf16", False),
    # 5 x 40 = 200 tokens (padded to 208); f32 master weights and bias
    # under bf16 autocast.
    "padded": (5, 40, 512, 256, "bf16", "f32", "f32", False),
    # main-gradient accumulation.
    "main_grad": (2, 128, 256, 256, "bf16", "bf16", None, True),
}
# The small model of the convert_to_fp8 / torch.compile / CUDA-graph tests:
# Linear(IN, HIDDEN) -> GELU -> Linear(HIDDEN, IN), bf16, no bias.
MODEL = {"batch": 2, "seq": 64, "in": 256, "hidden": 512}


def step(run, m, n, k, chip="sm_90a", **options):
    """The LinearStep of a recipe or run name ("current-e4m3")."""
    recipe, fmt = recipe_and_format(run)
    return LinearStep(recipe, m=m, n=n, k=k, chip=chip, format=fmt, **options)


def layer_step(name, recipe, chip="sm_90a"):
    batch, seq, k, n, x, w, bias, main_grad = LAYERS[name]
    return step(recipe, padded(batch * seq), n, k, chip, x_dtype=x, w_dtype=w,
                bias_dtype=bias, main_grad=main_grad)


def model_steps(recipe, chip="sm_90a"):
    m = padded(MODEL["batch"] * MODEL["seq"])
    return [step(recipe, m, MODEL["hidden"], MODEL["in"], chip),
            step(recipe, m, MODEL["in"], MODEL["hidden"], chip)]


# The layers the tests also run without autograd (evaluation, inference).
INFERENCE_LAYERS = ("tail",)


def gpu_test_steps(chip="sm_90a"):
    steps = []
    for recipe in RECIPES + E4M3_RECIPES:
        steps += [layer_step(name, recipe, chip) for name in LAYERS]
        steps += [layer_step(name, recipe, chip).with_m(None) for name in INFERENCE_LAYERS]
        steps += model_steps(recipe, chip)
    return steps


# --- the benchmarks -----------------------------------------------------------------

def _bench_module(name):
    if str(_BENCH) not in sys.path:
        sys.path.insert(0, str(_BENCH))
    return __import__(name)


def ffn_size(hidden):
    """bench/train_model.py's SwiGLU width (8/3 of hidden, a multiple of 256)."""
    return -(-(8 * hidden // 3) // 256) * 256


def train_steps(argv="", chip="sm_90a"):
    """The modules of bench/train_fp8.py --impl fp8mlir with these
    arguments: every block's qkv, proj, gate_up and down layer (f32 master
    weights, bf16 autocast, no bias) for batch x seq tokens, per recipe
    (or run name: "current-e4m3"), and their inference forwards (the
    evaluation runs without grad)."""
    train_fp8 = _bench_module("train_fp8")
    args = train_fp8.parse_args(shlex.split(argv) + ["--impl", "fp8mlir"])
    hidden, ffn = args.hidden, ffn_size(args.hidden)
    shapes = [(hidden, 3 * hidden), (hidden, hidden), (hidden, 2 * ffn), (ffn, hidden)]
    recipes = train_fp8.fp8_layer_runs(args.recipe_list)  # "delayed-calibrated": delayed's
    m = padded(args.batch * args.seq)
    return [step(recipe, tokens, n, k, chip, w_dtype="f32")
            for recipe in recipes for k, n in shapes for tokens in (m, None)]


def deepgemm_layer_kernels(k, n):
    """The quantization kernels of bench/deepgemm_linear.py's layer, in x
    out = k x n: X [T, k] and dY [T, n] 1x128, W [n, k] 128x128, each
    rowwise and columnwise (transposed) from one read, bf16 in."""
    def both(cols, block):
        return QuantizeSpec("blockwise", cols, rowwise=True, columnwise=True, block=block)
    return [both(k, (1, 128)), both(n, (1, 128)), both(k, (128, 128))]


def bench_linear_steps(argv="", chip="sm_90a"):
    """The modules of bench/bench_linear.py --impl fp8mlir with these
    arguments (bf16 X and W, no bias, per shape, token count and recipe;
    with --main-grad dW accumulated into an f32 main gradient), and the
    quantization kernels of its deepgemm layer (blockwise)."""
    args = _bench_module("bench_linear").parse_args(shlex.split(argv))
    steps = [LinearStep(recipe, m=padded(tokens), n=n, k=k, chip=chip, main_grad=args.main_grad)
             for recipe in args.recipe_list for k, n in args.shape_list
             for tokens in args.token_list]
    if "blockwise" in args.recipe_list and "deepgemm" in (args.impl_list or ["deepgemm"]):
        steps += [spec for k, n in args.shape_list for spec in deepgemm_layer_kernels(k, n)]
    return steps


SUITES = {"gpu-tests": lambda argv, chip: gpu_test_steps(chip),
          "train": train_steps, "bench-linear": bench_linear_steps}
