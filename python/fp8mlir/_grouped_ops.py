"""fp8mlir's grouped (mixture-of-experts) GEMM on torch tensors: the
``fp8mlir::grouped_scaled_mm`` / ``grouped_scaled_mm_out`` operators and
the public ``fp8mlir.grouped_scaled_mm``.

One kernel per (recipe, G, N, K, dtypes) from the kernel cache, launched
through ``_torch_ops.launch`` on the current stream. The m_contiguous
layout (DeepGEMM's ``m_grouped_fp8_gemm_nt_contiguous``; the 2-D x 3-D case
of ``torch._scaled_grouped_mm``): see python/README.md and docs/grouped.md
for the mapping of the arguments.
"""

import torch

from ._torch_ops import (FP8_DTYPES, HIGH_DTYPES, _check_cuda, _UsingCache,
                         check_gemm_dtypes, define_op, kernels_for, launch, mn_major_scales)
from .grouped import GROUPED_RECIPES, GroupedScaledMatmul
from ._math import ceil_div
from .scale_atoms import MX_BLOCK, to_atoms

_UE8M0 = getattr(torch, "float8_e8m0fnu", None)



def _check(a, b, group_index, out_dtype):
    torch._check(a.dim() == 2 and b.dim() == 3 and a.shape[1] == b.shape[2],
                 lambda: f"expected a [M, K] and b [G, N, K] with the same K, got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    check_gemm_dtypes(a, b, out_dtype)
    torch._check(group_index.dim() == 1 and group_index.shape[0] == a.shape[0]
                 and group_index.dtype == torch.int32,
                 lambda: f"group_index: expected int32 [M] = [{a.shape[0]}], got "
                         f"{group_index.dtype} {tuple(group_index.shape)}")


def infer_grouped_recipe(scale_a, scale_b, m, g, n, k):
    """tensorwise, rowwise or blockwise from the scale shapes; mxfp8 from
    UE8M0 scales."""
    sa, sb = tuple(scale_a.shape), tuple(scale_b.shape)
    if scale_a.dtype == _UE8M0 and scale_b.dtype == _UE8M0:
        return "mxfp8"
    if scale_a.numel() == 1 and sb in ((g,), (g, 1)):
        return "tensorwise"
    if sa in ((m,), (m, 1)) and sb in ((g, n), (g, n, 1)):
        return "rowwise"
    kb = ceil_div(k, 128)
    if sa == (m, kb) and sb == (g, ceil_div(n, 128), kb):
        return "blockwise"
    raise ValueError(f"cannot tell the recipe from scale_a {sa} and scale_b {sb} "
                     f"(M={m}, G={g}, N={n}, K={k}); pass recipe=")


def _mx_kernel_scales(scale_a, scale_b, m, g, n, k):
    """MXFP8: the UE8M0 scales (a [M, ceil(K/32)], b [G, N, ceil(K/32)]) in
    the sm_100a kernels' 128x4 atom layout, b one set of atoms per group."""
    kx = ceil_div(k, MX_BLOCK)
    if tuple(scale_a.shape) != (m, kx) or tuple(scale_b.shape) != (g, n, kx):
        raise ValueError(f"mxfp8: expected scale_a ({m}, {kx}) and scale_b ({g}, {n}, {kx}) "
                         f"(UE8M0, one per 1x{MX_BLOCK} block), got {tuple(scale_a.shape)} "
                         f"and {tuple(scale_b.shape)}")

    def atoms(codes, rows):
        return to_atoms(codes.view(torch.uint8), rows, k, codes.view(torch.uint8).new_full)

    sa = atoms(scale_a, m)
    sb = torch.stack([atoms(scale_b[i], n) for i in range(g)])
    return sa.contiguous().view(_UE8M0), sb.contiguous().view(_UE8M0)


def _kernel_scales(recipe, scale_a, scale_b, m, g, n, k):
    """The scales as the kernel's a_scale_inv / b_scale_inv."""
    if recipe == "mxfp8":
        return _mx_kernel_scales(scale_a, scale_b, m, g, n, k)
    sa, sb = scale_a.float(), scale_b.float()
    if recipe == "tensorwise":
        return sa.reshape(()), sb.reshape(g).contiguous()
    if recipe == "rowwise":
        return sa.reshape(m).contiguous(), sb.reshape(g, n).contiguous()
    kb, nb = ceil_div(k, 128), ceil_div(n, 128)
    if tuple(sa.shape) != (m, kb) or tuple(sb.shape) != (g, nb, kb):
        raise ValueError(f"blockwise: expected scale_a ({m}, {kb}) and scale_b ({g}, {nb}, "
                         f"{kb}), got {tuple(sa.shape)} and {tuple(sb.shape)}")
    return mn_major_scales(sa, m, kb), sb.contiguous()


def _run(a, b, scale_a, scale_b, group_index, recipe, accumulation, out):
    _check_cuda({"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b,
                 "group_index": group_index, "out": out}, a.device)
    _check(a, b, group_index, out.dtype)
    m, k = a.shape
    g, n = b.shape[0], b.shape[1]
    if recipe == "auto":
        recipe = infer_grouped_recipe(scale_a, scale_b, m, g, n, k)
    if recipe not in GROUPED_RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}: expected auto or one of {GROUPED_RECIPES}")
    if m == 0:
        return
    spec = GroupedScaledMatmul(recipe, groups=int(g), n=int(n), k=int(k),
                               out_dtype=HIGH_DTYPES[out.dtype], accumulation=accumulation,
                               a_dtype=FP8_DTYPES[a.dtype], b_dtype=FP8_DTYPES[b.dtype])
    sa, sb = _kernel_scales(recipe, scale_a, scale_b, m, g, n, k)
    operands = {"a": a.contiguous(), "b": b.contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, "group_index": group_index.contiguous(), "d": out}
    (kernel,) = kernels_for(spec, a.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])


def _fake(a, b, scale_a, scale_b, group_index, out_dtype=None, recipe="auto",
          accumulation="fast"):
    out_dtype = out_dtype or torch.bfloat16
    _check(a, b, group_index, out_dtype)
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


def _cuda(a, b, scale_a, scale_b, group_index, out_dtype=None, recipe="auto",
          accumulation="fast"):
    out = _fake(a, b, scale_a, scale_b, group_index, out_dtype)
    _run(a, b, scale_a, scale_b, group_index, recipe, accumulation, out)
    return out


def _out_fake(a, b, scale_a, scale_b, group_index, recipe, accumulation, out):
    _check(a, b, group_index, out.dtype)
    torch._check(tuple(out.shape) == (a.shape[0], b.shape[1]),
                 lambda: f"out: expected ({a.shape[0]}, {b.shape[1]}), got {tuple(out.shape)}")


def _out_cuda(a, b, scale_a, scale_b, group_index, recipe, accumulation, out):
    if tuple(out.shape) != (a.shape[0], b.shape[1]) or not out.is_contiguous():
        raise ValueError(f"out: expected a contiguous ({a.shape[0]}, {b.shape[1]}) tensor, "
                         f"got {tuple(out.shape)} with strides {out.stride()}")
    _run(a, b, scale_a, scale_b, group_index, recipe, accumulation, out)


_GROUPED_SCALED_MM = define_op(
    "grouped_scaled_mm", "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
    "Tensor group_index, ScalarType? out_dtype=None, str recipe=\"auto\", "
    "str accumulation=\"fast\") -> Tensor", cuda=_cuda, fake=_fake)
_GROUPED_SCALED_MM_OUT = define_op(
    "grouped_scaled_mm_out", "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
    "Tensor group_index, str recipe, str accumulation, Tensor(a!) out) -> ()",
    cuda=_out_cuda, fake=_out_fake)


def group_index_from_offsets(offsets, m):
    """The per-row group index [M] (int32, -1 past the last group) of the
    groups ``torch._scaled_grouped_mm``'s ``offs`` describe: int32 [G]
    cumulative end rows, group g = rows [offs[g-1], offs[g]). Device ops
    only (no host synchronization)."""
    rows = torch.arange(m, device=offsets.device, dtype=offsets.dtype)
    index = torch.bucketize(rows, offsets, right=True).to(torch.int32)
    return torch.where(index < offsets.numel(), index, torch.full_like(index, -1))


def grouped_scaled_mm(a, b, scale_a, scale_b, *, group_index=None, offsets=None,
                      layout="m_contiguous", recipe=None, out_dtype=None,
                      accumulation="fast", cache=None, out=None):
    """Per group g: D[rows of g] = (a[rows of g] * scale_a) @ (b[g] * scale_b[g])^T.

    layout "m_contiguous": a [M, K] FP8, the rows of all groups sorted by
    group, every group starting at a multiple of 128 rows; b
    [G, N, K] FP8 (each group's weight K-major, as DeepGEMM's rhs; the
    [G, K, N] column-major operand of torch._scaled_grouped_mm is its
    ``transpose(-2, -1)``). The groups: ``group_index`` int32 [M], each
    row's group and -1 for padding rows (DeepGEMM's m_indices), or
    ``offsets`` int32 [G], the cumulative end row of each group
    (torch._scaled_grouped_mm's offs; rows past the last are padding).
    Padding rows of the result are not written (with ``out``, they keep
    what it held).

    Scales (scale_inv, f32): tensorwise scale_a one element, scale_b [G];
    rowwise scale_a [M] or [M, 1], scale_b [G, N] (or [G, N, 1]);
    blockwise (DeepSeek-V3: 1x128 activations, 128x128 weights) scale_a
    [M, ceil(K/128)], scale_b [G, ceil(N/128), ceil(K/128)]; mxfp8 (sm_100a,
    float8_e8m0fnu scales, one per 1x32 block) scale_a [M, ceil(K/32)],
    scale_b [G, N, ceil(K/32)], passed to the kernel in its 128x4 atom
    layout (fp8mlir.scale_atoms). recipe: None
    (from the shapes) or one of those names. out_dtype: bfloat16 (default),
    float16 or float32. accumulation "fast" or "promoted(128)" (blockwise
    always promotes). cache: a KernelCache or directory for this call.
    Runs on the current CUDA stream; not differentiable.
    """
    if layout != "m_contiguous":
        raise ValueError(f"layout {layout!r}: expected 'm_contiguous'")
    if (group_index is None) == (offsets is None):
        raise ValueError("pass exactly one of group_index= and offsets=")
    if cache is not None:
        with _UsingCache(cache):
            return grouped_scaled_mm(a, b, scale_a, scale_b, group_index=group_index,
                                     offsets=offsets, layout=layout, recipe=recipe,
                                     out_dtype=out_dtype, accumulation=accumulation, out=out)
    if offsets is not None:
        if offsets.dim() != 1 or offsets.dtype != torch.int32:
            raise ValueError(f"offsets: expected int32 [G], got {offsets.dtype} "
                             f"{tuple(offsets.shape)}")
        group_index = group_index_from_offsets(offsets, a.shape[0])
    recipe = recipe or "auto"
    if out is None:
        return _GROUPED_SCALED_MM(a, b, scale_a, scale_b, group_index, out_dtype, recipe,
                                  accumulation)
    if out_dtype is not None and out_dtype != out.dtype:
        raise ValueError(f"out_dtype {out_dtype} differs from out's dtype {out.dtype}")
    _GROUPED_SCALED_MM_OUT(a, b, scale_a, scale_b, group_index, recipe, accumulation, out)
    return out
