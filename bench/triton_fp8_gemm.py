"""Triton FP8 GEMMs used as a peer in bench_gemm.py.

D[M, N] = (A sA)(B sB)^T with A [M, K] and B [N, K] row-major FP8 (K-major,
the same TN layout as the project's kernels).

- scaled_gemm: tensorwise or rowwise scale_inv applied in the epilogue; the
  K loop accumulates with tl.dot's default FP8 accumulation (on Hopper that
  is the wgmma accumulator without promotion, i.e. "fast" accumulation).
- blockwise_gemm: 1x128 scales for A (MN-major [K/128, M]) and 128x128 for B
  ([N/128, K/128]); every 128-wide K step is a separate tl.dot whose f32
  result is scaled and added to the accumulator (promotion every 128 K, as in
  DeepSeek-V3's inference kernel).

Both use a grouped tile order for L2 reuse and small autotune spaces keyed on
(M, N, K). K must be a multiple of 128.
"""

import triton
import triton.language as tl

BLOCK_K = 128


def _config(bm, bn, stages, warps, group=8):
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": BLOCK_K, "GROUP_M": group},
                         num_stages=stages, num_warps=warps)


# (BLOCK_M, BLOCK_N, stages, warps): large tiles for big GEMMs, small for small M.
SCALED_CONFIGS = [
    _config(128, 256, 3, 8),
    _config(128, 128, 4, 8),
    _config(128, 128, 4, 4),
    _config(128, 64, 4, 4),
    _config(64, 128, 4, 4),
    _config(64, 64, 5, 4),
]
# BLOCK_N must divide 128 so that an N tile lies in one 128-row block of B.
BLOCKWISE_CONFIGS = [
    _config(128, 128, 4, 8),
    _config(128, 128, 3, 4),
    _config(128, 64, 4, 4),
    _config(64, 128, 4, 4),
    _config(64, 64, 5, 4),
]


@triton.jit
def _tile_coords(M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of this program, GROUP_M row tiles at a time."""
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    return pid_m, pid_n


@triton.autotune(configs=SCALED_CONFIGS, key=["M", "N", "K", "ROW_SCALES"])
@triton.jit
def _scaled_gemm_kernel(a_ptr, b_ptr, d_ptr, sa_ptr, sb_ptr, M, N, K,
                        stride_a, stride_b, stride_d,
                        ROW_SCALES: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _tile_coords(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rows_a = offs_m % M  # wrapped: loads need no mask, the store is masked
    rows_b = offs_n % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows_a[:, None] * stride_a + offs_k[None, :]
    b_ptrs = b_ptr + rows_b[:, None] * stride_b + offs_k[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K // BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, tl.trans(b), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    if ROW_SCALES:
        sa = tl.load(sa_ptr + rows_a)
        sb = tl.load(sb_ptr + rows_b)
        acc = acc * sa[:, None] * sb[None, :]
    else:
        acc = acc * (tl.load(sa_ptr) * tl.load(sb_ptr))

    d_ptrs = d_ptr + offs_m[:, None] * stride_d + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(d_ptrs, acc.to(d_ptr.dtype.element_ty), mask=mask)


@triton.autotune(configs=BLOCKWISE_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _blockwise_gemm_kernel(a_ptr, b_ptr, d_ptr, sa_ptr, sb_ptr, M, N, K,
                           stride_a, stride_b, stride_d, stride_sb,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    tl.static_assert(BLOCK_K == 128)
    tl.static_assert(128 % BLOCK_N == 0)
    pid_m, pid_n = _tile_coords(M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rows_a = offs_m % M
    rows_b = offs_n % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows_a[:, None] * stride_a + offs_k[None, :]
    b_ptrs = b_ptr + rows_b[:, None] * stride_b + offs_k[None, :]
    sa_ptrs = sa_ptr + rows_a                                    # row kb of [K/128, M]
    sb_ptrs = sb_ptr + ((pid_n * BLOCK_N) // 128) * stride_sb   # row of [N/128, K/128]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, K // BLOCK_K):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        partial = tl.dot(a, tl.trans(b))
        sa = tl.load(sa_ptrs + kb * M)
        sb = tl.load(sb_ptrs + kb)
        acc += partial * (sa[:, None] * sb)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    d_ptrs = d_ptr + offs_m[:, None] * stride_d + offs_n[None, :]
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(d_ptrs, acc.to(d_ptr.dtype.element_ty), mask=mask)


def _check(a, b, d):
    M, K = a.shape
    N = b.shape[0]
    if b.shape[1] != K or tuple(d.shape) != (M, N):
        raise ValueError(f"shapes a {tuple(a.shape)}, b {tuple(b.shape)}, d {tuple(d.shape)} "
                         "do not make D[M,N] = A[M,K] B[N,K]^T")
    if K % BLOCK_K:
        raise ValueError(f"K={K} must be a multiple of {BLOCK_K}")
    for name, t in (("a", a), ("b", b), ("d", d)):
        if t.stride(-1) != 1:
            raise ValueError(f"{name} must be row-major (inner stride 1)")
    return M, N, K


def _grid(M, N):
    return lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)


def scaled_gemm(a, b, a_scale_inv, b_scale_inv, d, row_scales):
    """Tensorwise (scalar scale_inv) or rowwise ([M] and [N] scale_inv) GEMM into d."""
    M, N, K = _check(a, b, d)
    _scaled_gemm_kernel[_grid(M, N)](
        a, b, d, a_scale_inv, b_scale_inv, M, N, K,
        a.stride(0), b.stride(0), d.stride(0), ROW_SCALES=row_scales)
    return d


def blockwise_gemm(a, b, a_scale_inv, b_scale_inv, d):
    """1x128 x 128x128 blockwise GEMM; a_scale_inv [K/128, M], b_scale_inv [N/128, K/128]."""
    M, N, K = _check(a, b, d)
    kb = K // BLOCK_K
    if tuple(a_scale_inv.shape) != (kb, M) or not a_scale_inv.is_contiguous():
        raise ValueError(f"a_scale_inv must be a dense [{kb}, {M}] (got {tuple(a_scale_inv.shape)})")
    if tuple(b_scale_inv.shape) != (triton.cdiv(N, 128), kb) or b_scale_inv.stride(1) != 1:
        raise ValueError(f"b_scale_inv must be [{triton.cdiv(N, 128)}, {kb}] row-major "
                         f"(got {tuple(b_scale_inv.shape)})")
    _blockwise_gemm_kernel[_grid(M, N)](
        a, b, d, a_scale_inv, b_scale_inv, M, N, K,
        a.stride(0), b.stride(0), d.stride(0), b_scale_inv.stride(0))
    return d
