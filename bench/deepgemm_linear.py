"""The blockwise linear layer with DeepGEMM's GEMMs: bench_linear.py's
peer `deepgemm` (how far a blockwise layer gets with the best GEMMs there
are, beside fp8mlir.nn.Linear's compiled step).

DeepGemmLinear(in, out, bias=False, recipe="blockwise") is an nn.Linear
whose forward and backward quantize with the project's kernels
(fp8mlir.quantize, DeepSeek-V3's recipe: 1x128 X and dY, 128x128 W,
power-of-two scales; each tensor's rowwise and columnwise copies from one
read) and multiply with DeepGEMM (deep_gemm.fp8_gemm_nt, sm_90 float
scales):

- fprop  Y [T, out] = X W^T: 1x128 x 128x128 (the 1D x 2D kernel), bf16;
- dgrad dX [T, in] = dY W: dY 1x128 x W^T 128x128 (W's columnwise copy,
  quantized in the forward), bf16;
- wgrad dW [out, in] = dY^T X: 1x128 x 1x128 along the tokens (the 1D x 1D
  kernel, recipe (1, 1, 128), on the columnwise copies of dY and X). Its
  sm_90 form writes f32 accumulating into C only: dW is a zero-filled f32
  buffer it accumulates into, then cast to W's dtype (both counted).

The forward keeps X's and W's columnwise FP8 copies (and scales) for the
backward, never X. The 1x128 scales of fp8mlir.quantize are MN-major with
the MN stride rounded up to 4 floats, DeepGEMM's own layout (no copy).
Tokens must be a multiple of 16 (the columnwise copies' rows). DeepGEMM
compiles each kernel at its first call (6-10 s): warm_all() compiles a
benchmark's kernels beforehand in parallel processes
(`python3 bench/deepgemm_linear.py 1d2d|1d1d MxNxK` compiles one).
"""

import concurrent.futures
import subprocess
import sys
from pathlib import Path

import torch

import gemm_peers

LABEL = "deepgemm"
RECIPES = ("blockwise",)
TOKEN_MULTIPLE = 16


def load():
    """(deep_gemm, "") or (None, the reason it cannot be used)."""
    try:
        import deep_gemm
    except Exception as e:  # ImportError, or the extension failing to load
        return None, (f"deep_gemm not importable ({type(e).__name__}: {e}); bench/README.md "
                      "says how to build it")
    if not hasattr(deep_gemm, "fp8_gemm_nt"):
        return None, f"deep_gemm {getattr(deep_gemm, '__version__', '?')} has no fp8_gemm_nt"
    return deep_gemm, ""


def _quantize(t, block):
    import fp8mlir
    return fp8mlir.quantize(t, "blockwise", block=block, rowwise=True, columnwise=True)


class _DeepGemmLinearFunction(torch.autograd.Function):
    """Y = X W^T; apply(x [T, in], weight [out, in], gemm, main_grad):
    with main_grad (f32 [out, in]) the wgrad GEMM adds dW into it and W
    gets no grad."""

    @staticmethod
    def forward(ctx, x, weight, gemm, main_grad):
        qx, qw = _quantize(x, (1, 128)), _quantize(weight, (128, 128))
        y = torch.empty(x.shape[0], weight.shape[0], dtype=x.dtype, device=x.device)
        gemm((qx.data, qx.scale_inv), (qw.data, qw.scale_inv.contiguous()), y)
        ctx.save_for_backward(qx.columnwise_data, qx.columnwise_scale_inv, qw.columnwise_data,
                              qw.columnwise_scale_inv.contiguous())
        ctx.gemm, ctx.weight_dtype, ctx.main_grad = gemm, weight.dtype, main_grad
        return y

    @staticmethod
    def backward(ctx, dy):
        x_t, x_t_scale, w_t, w_t_scale = ctx.saved_tensors
        qdy = _quantize(dy.contiguous(), (1, 128))
        dx = dw = None
        if ctx.needs_input_grad[0]:
            dx = torch.empty(dy.shape[0], w_t.shape[0], dtype=dy.dtype, device=dy.device)
            ctx.gemm((qdy.data, qdy.scale_inv), (w_t, w_t_scale), dx)
        if ctx.needs_input_grad[1] or ctx.main_grad is not None:
            # sm_90's 1D x 1D kernel writes f32 D = C + A B^T only.
            acc = ctx.main_grad
            if acc is None:
                acc = torch.zeros(dy.shape[1], x_t.shape[0], dtype=torch.float32,
                                  device=dy.device)
            ctx.gemm((qdy.columnwise_data, qdy.columnwise_scale_inv), (x_t, x_t_scale), acc,
                     c=acc, recipe=(1, 1, 128))
            if ctx.main_grad is None:
                dw = acc.to(ctx.weight_dtype)
        return dx, dw, None, None


class DeepGemmLinear(torch.nn.Linear):
    """nn.Linear (no bias) with the blockwise recipe's GEMMs in DeepGEMM."""

    def __init__(self, in_features, out_features, bias=False, recipe="blockwise",
                 device=None, dtype=None, main_grad=False):
        if recipe not in RECIPES:
            raise ValueError(f"DeepGemmLinear runs the blockwise recipe only, not {recipe!r}")
        if bias:
            raise ValueError("DeepGemmLinear has no bias")
        deep_gemm, reason = load()
        if deep_gemm is None:
            raise RuntimeError(reason)
        super().__init__(in_features, out_features, bias=False, device=device, dtype=dtype)
        self._gemm = deep_gemm.fp8_gemm_nt
        self.main_grad = bool(main_grad)

    def forward(self, x):
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features).contiguous()
        if x2.shape[0] % TOKEN_MULTIPLE:
            raise ValueError(f"DeepGemmLinear: {x2.shape[0]} tokens, expected a multiple of "
                             f"{TOKEN_MULTIPLE} (the columnwise copies' rows)")
        from fp8mlir.nn import main_grad_of
        main_grad = (main_grad_of(self.weight) if self.main_grad and torch.is_grad_enabled()
                     else None)
        y = _DeepGemmLinearFunction.apply(x2, self.weight, self._gemm, main_grad)
        return y.reshape(*lead, self.out_features)


def factory():
    """bench_linear.py's layer factory (raises RuntimeError when deep_gemm
    cannot be used); `recipes`: what it builds."""
    deep_gemm, reason = load()
    if deep_gemm is None:
        raise RuntimeError(reason)

    def make(in_features, out_features, bias=False, recipe="blockwise", format=None,  # noqa: A002
             main_grad=False):
        return DeepGemmLinear(in_features, out_features, bias=bias, recipe=recipe,
                              main_grad=main_grad)
    make.label = LABEL
    make.recipes = RECIPES
    make.description = (f"fp8mlir.quantize + deep_gemm {getattr(deep_gemm, '__version__', '?')} "
                        "fp8_gemm_nt (fprop, dgrad 1x128 x 128x128; wgrad 1x128 x 1x128 into "
                        "zeroed f32, cast to W's dtype; with --main-grad into weight.main_grad)")
    return make


# --- compiling DeepGEMM's kernels beforehand ------------------------------------------

def gemm_problems(tokens, k, n):
    """The layer's three GEMMs as (kind, M, N, K) for T tokens, in x out."""
    return [("1d2d", tokens, n, k), ("1d2d", tokens, k, n), ("1d1d", n, k, tokens)]


def warm(kind, m, n, k):
    """One call of the kind's kernel for M x N x K on zero inputs (DeepGEMM
    compiles and caches the kernel that shape takes)."""
    if kind == "1d1d":
        gemm_peers.warm_deepgemm_1d1d(m, n, k)
        return
    import deep_gemm
    kb = -(-k // 128)
    a = torch.zeros(m, k, dtype=torch.float8_e4m3fn, device="cuda")
    b = torch.zeros(n, k, dtype=torch.float8_e4m3fn, device="cuda")
    sfa = gemm_peers.deepgemm_a_scales(torch.ones(m, kb, device="cuda"))
    sfb = torch.ones(-(-n // 128), kb, device="cuda")
    d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    torch.cuda.synchronize()


def warm_all(problems, jobs):
    """Compiles the kernels of `problems` ((kind, M, N, K)), one process
    each, `jobs` at a time; returns the failures as (problem, output)."""
    def one(problem):
        kind, m, n, k = problem
        done = subprocess.run([sys.executable, str(Path(__file__).resolve()), kind, f"{m}x{n}x{k}"],
                              capture_output=True, text=True)
        return problem, done.returncode, (done.stdout + done.stderr)[-2000:]
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        results = list(pool.map(one, dict.fromkeys(problems)))
    return [(problem, output) for problem, status, output in results if status]


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("1d2d", "1d1d"):
        print("usage: python3 bench/deepgemm_linear.py 1d2d|1d1d MxNxK", file=sys.stderr)
        sys.exit(2)
    warm(sys.argv[1], *(int(v) for v in sys.argv[2].split("x")))
