"""The peers that bench_gemm.py and power_ceiling.py time against the project's
kernels: cuBLASLt through torch, Triton, and DeepGEMM where it is installed.

Each `*_impl(case)` prepares everything that does not belong in the timed
call (scale layouts, output buffers) for every input copy of the case and
returns `call(i)`, which runs the GEMM on input copy i and returns its output.
A peer that cannot run the case raises `Unavailable`, whose message the report
keeps.
"""

import torch

OUT_DTYPE = torch.bfloat16
DEEPGEMM = "deepgemm"


class Unavailable(Exception):
    """An implementation cannot run this case (API missing, shape unsupported)."""


def _out_dtype(case):
    return getattr(case, "out_dtype", OUT_DTYPE)


def _outputs(case):
    return [torch.empty(case.m, case.n, dtype=_out_dtype(case), device=case.device)
            for _ in case.sets]


def torch_scaled_mm_impl(case, fast_accum):
    if not hasattr(torch, "_scaled_mm"):
        raise Unavailable(f"torch {torch.__version__} has no torch._scaled_mm")
    if case.recipe == "tensorwise":
        scales = [(s.a.scale_inv, s.b.scale_inv) for s in case.sets]
    elif case.recipe == "rowwise":
        scales = [(s.a.scale_inv.view(case.m, 1), s.b.scale_inv.view(1, case.n))
                  for s in case.sets]
    else:
        raise Unavailable(f"torch._scaled_mm is not used for {case.recipe}")

    def call(i):
        s, (sa, sb) = case.sets[i], scales[i]
        return torch._scaled_mm(s.a.q, s.b.q.t(), sa, sb, out_dtype=OUT_DTYPE,
                                use_fast_accum=fast_accum)
    return call


def _column_major(x):
    """A copy of the 2-D `x` with strides (1, rows). (`x.t().contiguous().t()`
    keeps a one-row tensor's strides: torch checks them exactly, (1, 1) at
    M = 1.)"""
    out = torch.empty_strided(x.shape, (1, max(x.shape[0], 1)), dtype=x.dtype,
                              device=x.device)
    return out.copy_(x)


def torch_blockwise_scales(s):
    """torch's layouts: scale_a (M, K/128) strides (1, M); scale_b (L4, N/128)
    strides (1, L4) with K/128 padded to L4 = a multiple of 4; a 1x128
    scale_b like scale_a: (N, K/128) strides (1, N)."""
    scale_a = _column_major(s.a.scale_inv)
    if s.b.gran[1] == 1:
        return scale_a, _column_major(s.b.scale_inv)
    b = s.b.scale_inv
    pad = -b.shape[1] % 4
    if pad:
        b = torch.nn.functional.pad(b, (0, pad), value=1.0)
    return scale_a, b.contiguous().t()


def torch_blockwise_impl(case):
    try:
        from torch.nn.functional import ScalingType, SwizzleType, scaled_mm
    except ImportError as e:
        raise Unavailable(f"torch {torch.__version__}: {e}") from None
    scales = [torch_blockwise_scales(s) for s in case.sets]
    b_scaling = (ScalingType.BlockWise1x128 if case.recipe.startswith("blockwise_1d1d")
                 else ScalingType.BlockWise128x128)
    # blockwise_1d1d_acc: D = A B^T in f32 (torch has no accumulate-into-C
    # form; the benchmark's C is zero).
    out_dtype = _out_dtype(case)

    def call(i):
        s, (sa, sb) = case.sets[i], scales[i]
        return scaled_mm(s.a.q, s.b.q.t(), sa, ScalingType.BlockWise1x128,
                         sb, b_scaling,
                         swizzle_a=SwizzleType.NO_SWIZZLE, swizzle_b=SwizzleType.NO_SWIZZLE,
                         output_dtype=out_dtype)
    return call


def triton_impl(case):
    try:
        import triton_fp8_gemm as tk
    except ImportError as e:
        raise Unavailable(f"triton: {e}") from None
    outs = _outputs(case)
    if case.recipe.startswith("blockwise"):
        if case.recipe != "blockwise":
            raise Unavailable(f"triton_fp8_gemm has no {case.recipe} kernel")
        a_scales = [s.a.scale_inv.t().contiguous() for s in case.sets]  # [K/128, M]

        def call(i):
            s = case.sets[i]
            return tk.blockwise_gemm(s.a.q, s.b.q, a_scales[i], s.b.scale_inv, outs[i])
        return call
    row = case.recipe == "rowwise"

    def call(i):
        s = case.sets[i]
        return tk.scaled_gemm(s.a.q, s.b.q, s.a.scale_inv, s.b.scale_inv, outs[i], row)
    return call


def deepgemm_a_scales(scale_inv):
    """DeepGEMM's sm_90 1x128 activation scales: logical (M, K/128) f32,
    MN-major with the M stride rounded up to 16 bytes (4 floats), the layout
    its `fp8_gemm_nt` uses without a transposing copy. Ours is the same
    MN-major [K/128, M] layout, padded here when M % 4 != 0."""
    m, kb = scale_inv.shape
    padded = torch.empty(kb, -(-m // 4) * 4, dtype=torch.float32, device=scale_inv.device)
    padded[:, :m] = scale_inv.t()
    return padded[:, :m].t()


def deepgemm_impl(case):
    """deep_gemm.fp8_gemm_nt with the 1x128 x 128x128 recipe (float scales on
    sm_90): A [M, K] and B [N, K] K-major e4m3, D [M, N] bf16; B's 128x128
    scales [ceil(N/128), ceil(K/128)] row-major as ours. blockwise_1d1d_acc:
    its 1D x 1D kernel (recipe (1, 1, 128)), see deepgemm_1d1d_call."""
    if case.recipe == "blockwise_1d1d":
        raise Unavailable("DeepGEMM's sm_90 1D x 1D kernel writes f32 accumulating "
                          "into C only (timed as blockwise_1d1d_acc)")
    if case.recipe not in ("blockwise", "blockwise_1d1d_acc"):
        raise Unavailable(f"DeepGEMM is timed for blockwise 1x128 x 128x128 and "
                          f"1x128 x 1x128 only, not {case.recipe}")
    try:
        import deep_gemm
    except Exception as e:  # ImportError, or the extension failing to load
        raise Unavailable(f"deep_gemm not importable ({type(e).__name__}: {e}); "
                          f"bench/README.md says how to build it") from None
    gemm = getattr(deep_gemm, "fp8_gemm_nt", None)
    if gemm is None:
        raise Unavailable(f"deep_gemm {getattr(deep_gemm, '__version__', '?')} "
                          f"has no fp8_gemm_nt")
    if case.recipe == "blockwise_1d1d_acc":
        return deepgemm_1d1d_call(case, gemm)
    outs = _outputs(case)
    scales = [(deepgemm_a_scales(s.a.scale_inv), s.b.scale_inv.contiguous())
              for s in case.sets]

    def call(i):
        s, (sa, sb) = case.sets[i], scales[i]
        gemm((s.a.q, sa), (s.b.q, sb), outs[i])
        return outs[i]
    return call


def deepgemm_1d1d_call(case, gemm):
    """The wgrad GEMM of DeepSeek's recipe: D [M, N] f32 += A B^T with 1x128
    scales on both operands, as (M, K/128) and (N, K/128) MN-major with the
    MN stride rounded up to 4 floats (deepgemm_a_scales; the layout its
    sm_90 1D x 1D kernel reads without a copy). Its sm_90 1D x 1D kernel
    takes f32 D accumulating into C only; C is D itself (in place: no copy
    before the GEMM), starting as the case's C (zero), so the first call's D
    is A B^T and later calls keep adding to it."""
    outs = [s.c.clone() for s in case.sets]
    scales = [(deepgemm_a_scales(s.a.scale_inv), deepgemm_a_scales(s.b.scale_inv))
              for s in case.sets]

    def call(i):
        s, (sa, sb) = case.sets[i], scales[i]
        gemm((s.a.q, sa), (s.b.q, sb), outs[i], c=outs[i], recipe=(1, 1, 128))
        return outs[i]
    return call


def warm_deepgemm_1d1d(m, n, k):
    """One call of DeepGEMM's 1D x 1D kernel for M x N x K on zero inputs, so
    that its JIT compiles (and caches, in DG_JIT_CACHE_DIR) the kernel the
    benchmark's shape takes; several shapes compile at once in separate
    processes (`python3 bench/gemm_peers.py MxNxK`)."""
    warm_deepgemm(m, n, k, b_rows=1)


def warm_deepgemm(m, n, k, b_rows):
    """The same for the 1x128 x 128x128 kernel (b_rows 128: bf16 out) or the
    1D x 1D one (b_rows 1: f32 out accumulating into C)."""
    import deep_gemm
    kb = -(-k // 128)
    a = torch.zeros(m, k, dtype=torch.float8_e4m3fn, device="cuda")
    b = torch.zeros(n, k, dtype=torch.float8_e4m3fn, device="cuda")
    sfa = deepgemm_a_scales(torch.ones(m, kb, device="cuda"))
    if b_rows == 1:
        sfb = deepgemm_a_scales(torch.ones(n, kb, device="cuda"))
        d = torch.zeros(m, n, dtype=torch.float32, device="cuda")
        deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d, c=d, recipe=(1, 1, 128))
    else:
        sfb = torch.ones(-(-n // 128), kb, device="cuda")
        d = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
        deep_gemm.fp8_gemm_nt((a, sfa), (b, sfb), d)
    torch.cuda.synchronize()


def deepgemm_version():
    try:
        import deep_gemm
        return getattr(deep_gemm, "__version__", "unknown")
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        return f"not available ({type(e).__name__})"


def peer_impl(name, case):
    if name == "torch._scaled_mm":
        return torch_scaled_mm_impl(case, fast_accum=False)
    if name == "torch._scaled_mm fast_accum":
        return torch_scaled_mm_impl(case, fast_accum=True)
    if name == "F.scaled_mm":
        return torch_blockwise_impl(case)
    if name == "triton":
        return triton_impl(case)
    if name == DEEPGEMM:
        return deepgemm_impl(case)
    raise ValueError(f"unknown peer {name!r}")


if __name__ == "__main__":
    import sys
    # MxNxK [1d2d]: the 1D x 1D kernel, or with 1d2d the 1x128 x 128x128 one.
    m, n, k = (int(x) for x in sys.argv[1].split("x"))
    warm_deepgemm(m, n, k, b_rows=128 if sys.argv[2:] == ["1d2d"] else 1)
