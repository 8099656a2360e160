"""fp8mlir's grouped (mixture-of-experts) GEMM on torch tensors: the
``fp8mlir::grouped_scaled_mm`` / ``grouped_scaled_mm_out`` operators and
the public ``fp8mlir.grouped_scaled_mm``.

One kernel per (layout, recipe, G, N, K, dtypes) from the kernel cache,
launched through ``_torch_ops.launch`` on the current stream. The
m_contiguous layout (DeepGEMM's ``m_grouped_fp8_gemm_nt_contiguous``; the
2-D x 3-D case of ``torch._scaled_grouped_mm``) and the m_masked one
(``fp8mlir::grouped_scaled_mm_masked``, DeepGEMM's
``m_grouped_fp8_gemm_nt_masked``) and the k_grouped one
(``fp8mlir::grouped_scaled_mm_k``, the experts' weight gradient, DeepGEMM's
``k_grouped_fp8_gemm_tn_contiguous``): see python/README.md and
docs/grouped.md for the mapping of the arguments.
"""

import functools

import torch

from ._torch_ops import (_KERNELS_BY_HANDLE, FP8_DTYPES, HIGH_DTYPES, _check_cuda, _UsingCache,
                         call_functional_or_out, check_gemm_dtypes, define_op, kernels_for,
                         launch, mn_major_scales)
from .grouped import GROUPED_RECIPES, LAYOUTS, GroupedScaledMatmul, check_expected_m
from ._math import ceil_div
from .quantization import MN_MAJOR_ALIGNMENT
from .scale_atoms import MX_BLOCK, to_atoms

_UE8M0 = getattr(torch, "float8_e8m0fnu", None)



class _Layout:
    """What the operators of one layout check and pass: A's rank, the
    groups operand (the kernel operand's name, its extent) and whether the
    per-row / 1x128 A scales have G outermost."""

    def __init__(self, name, groups_name):
        self.name, self.groups_name = name, groups_name
        self.masked = name == "m_masked"

    def check(self, a, b, groups, out_dtype):
        if self.masked:
            ok = a.dim() == 3 and b.dim() == 3 and a.shape[0] == b.shape[0] \
                and a.shape[2] == b.shape[2]
            what, rows, extent = "a [G, M, K] and b [G, N, K] with the same G and K", \
                b.shape[0], "G"
        else:
            ok = a.dim() == 2 and b.dim() == 3 and a.shape[1] == b.shape[2]
            what, rows, extent = "a [M, K] and b [G, N, K] with the same K", a.shape[0], "M"
        torch._check(ok, lambda: f"expected {what}, got {tuple(a.shape)} and "
                                 f"{tuple(b.shape)}")
        # An FP8 result's dtype is checked by its own path.
        check_gemm_dtypes(a, b, torch.bfloat16 if out_dtype in FP8_DTYPES else out_dtype)
        torch._check(groups.dim() == 1 and groups.shape[0] == rows
                     and groups.dtype == torch.int32,
                     lambda: f"{self.groups_name}: expected int32 [{extent}] = [{rows}], got "
                             f"{groups.dtype} {tuple(groups.shape)}")

    def out_shape(self, a, b):
        return (*a.shape[:-1], b.shape[1])

    def extents(self, a, b):
        """(G, M, N, K); M is each group's rows (m_masked) or all rows."""
        return b.shape[0], a.shape[-2], b.shape[1], a.shape[-1]

    def lead(self, g):
        return (g,) if self.masked else ()


_CONTIGUOUS = _Layout("m_contiguous", "group_index")
_MASKED = _Layout("m_masked", "masked_m")


def infer_grouped_recipe(scale_a, scale_b, m, g, n, k, lead=()):
    """tensorwise, rowwise or blockwise from the scale shapes (`lead`: the
    extents before A's rows, (G,) for m_masked); mxfp8 from UE8M0 scales."""
    sa, sb = tuple(scale_a.shape), tuple(scale_b.shape)
    if scale_a.dtype == _UE8M0 and scale_b.dtype == _UE8M0:
        return "mxfp8"
    if scale_a.numel() == 1 and sb in ((g,), (g, 1)):
        return "tensorwise"
    if sa in (lead + (m,), lead + (m, 1)) and sb in ((g, n), (g, n, 1)):
        return "rowwise"
    kb = ceil_div(k, 128)
    if sa == lead + (m, kb) and sb == (g, ceil_div(n, 128), kb):
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


def _kernel_scales(recipe, scale_a, scale_b, m, g, n, k, lead=()):
    """The scales as the kernel's a_scale_inv / b_scale_inv (m_masked: A's
    1x128 scales MN-major per group, [G, ceil(K/128), roundup(M, 4)])."""
    if recipe == "mxfp8":
        return _mx_kernel_scales(scale_a, scale_b, m, g, n, k)
    sa, sb = scale_a.float(), scale_b.float()
    if recipe == "tensorwise":
        return sa.reshape(()), sb.reshape(g).contiguous()
    if recipe == "rowwise":
        return sa.reshape(*lead, m).contiguous(), sb.reshape(g, n).contiguous()
    kb, nb = ceil_div(k, 128), ceil_div(n, 128)
    if tuple(sa.shape) != lead + (m, kb) or tuple(sb.shape) != (g, nb, kb):
        raise ValueError(f"blockwise: expected scale_a {lead + (m, kb)} and scale_b ({g}, "
                         f"{nb}, {kb}), got {tuple(sa.shape)} and {tuple(sb.shape)}")
    if not lead:
        return mn_major_scales(sa, m, kb), sb.contiguous()
    buffer = sa.new_zeros((g, kb, ceil_div(m, 4) * 4))
    buffer[:, :, :m] = sa.transpose(1, 2)
    return buffer, sb.contiguous()


@functools.lru_cache(maxsize=None)
def _num_sms(index):
    return torch.cuda.get_device_properties(index).multi_processor_count


def _kernel_for_expected_m(kernel, expected_m, device):
    """The kernel of an m_masked launch: without a hint the kernel itself;
    with one, the runtime's choice among it and its launch variants for
    groups of expected_m rows on the device's SMs (a host value: the launch
    still does not depend on the counts)."""
    if expected_m is None:
        return kernel
    index = device.index if device.index is not None else torch.cuda.current_device()
    chosen = kernel.for_expected_m(int(expected_m), _num_sms(index))
    _KERNELS_BY_HANDLE.setdefault(chosen.handle, chosen)
    return chosen


def _extents_and_recipe(layout, a, b, scale_a, scale_b, recipe):
    """(G, M, N, K, A's leading extents, the recipe) of a checked call."""
    g, m, n, k = layout.extents(a, b)
    lead = layout.lead(g)
    if recipe == "auto":
        recipe = infer_grouped_recipe(scale_a, scale_b, m, g, n, k, lead)
    if recipe not in GROUPED_RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}: expected auto or one of {GROUPED_RECIPES}")
    return g, m, n, k, lead, recipe


def _run(layout, a, b, scale_a, scale_b, groups, recipe, accumulation, out, expected_m=None):
    _check_cuda({"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b,
                 layout.groups_name: groups, "out": out}, a.device)
    layout.check(a, b, groups, out.dtype)
    g, m, n, k, lead, recipe = _extents_and_recipe(layout, a, b, scale_a, scale_b, recipe)
    check_expected_m(expected_m, m)
    if m == 0:
        return
    spec = GroupedScaledMatmul(recipe, groups=int(g), n=int(n), k=int(k),
                               out_dtype=HIGH_DTYPES[out.dtype], accumulation=accumulation,
                               a_dtype=FP8_DTYPES[a.dtype], b_dtype=FP8_DTYPES[b.dtype],
                               layout=layout.name)
    sa, sb = _kernel_scales(recipe, scale_a, scale_b, m, g, n, k, lead)
    operands = {"a": a.contiguous(), "b": b.contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, layout.groups_name: groups.contiguous(), "d": out}
    (kernel,) = kernels_for(spec, a.device)
    kernel = _kernel_for_expected_m(kernel, expected_m, a.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])


def _fp8_result_buffers(layout, a, b, out_dtype, result_recipe, out):
    """(d, d_scale_inv, the scale_inv storage the kernel writes): new ones,
    or those of `out` = (d, d_scale_inv). A 1x128 d_scale_inv is the
    logical [M, ceil(N/128)] ([G, M, ceil(N/128)]) view of MN-major storage
    [ceil(N/128), roundup(M, 4)] (per group), the layout the next grouped
    GEMM reads its blockwise A scales in."""
    g, m, n, _ = layout.extents(a, b)
    lead = layout.lead(g)
    padded = ceil_div(m, MN_MAJOR_ALIGNMENT) * MN_MAJOR_ALIGNMENT
    nb = ceil_div(n, 128)
    stored_shape, stored_strides = lead + (nb, padded), ((nb * padded,) if lead else ()) \
        + (padded, 1)
    view_shape, view_strides = lead + (m, nb), stored_strides[:-2] + (1, padded)
    if out is None:
        d = a.new_empty(layout.out_shape(a, b), dtype=out_dtype)
        if result_recipe == "delayed":
            scale_inv = torch.empty((), dtype=torch.float32, device=a.device)
            return d, scale_inv, scale_inv
        stored = torch.empty(stored_shape, dtype=torch.float32, device=a.device)
        return d, stored.as_strided(view_shape, view_strides), stored
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise ValueError("out: expected (d, d_scale_inv) with an FP8 out_dtype")
    d, scale_inv = out
    _check_cuda({"out[0]": d, "out[1]": scale_inv}, a.device)
    if d.dtype != out_dtype or tuple(d.shape) != layout.out_shape(a, b) \
            or not d.is_contiguous():
        raise ValueError(f"out[0]: expected a contiguous {out_dtype} "
                         f"{layout.out_shape(a, b)} tensor, got {d.dtype} {tuple(d.shape)}")
    if result_recipe == "delayed":
        if scale_inv.dtype != torch.float32 or scale_inv.dim() != 0:
            raise ValueError(f"out[1]: expected a 0-d float32 scale_inv, got "
                             f"{scale_inv.dtype} {tuple(scale_inv.shape)}")
        return d, scale_inv, scale_inv
    if scale_inv.dtype != torch.float32 or tuple(scale_inv.shape) != view_shape \
            or scale_inv.stride() != view_strides:
        raise ValueError(f"out[1]: expected a float32 {view_shape} scale_inv with strides "
                         f"{view_strides} (MN-major, as a new result has), got "
                         f"{scale_inv.dtype} {tuple(scale_inv.shape)} {scale_inv.stride()}")
    return d, scale_inv, scale_inv.as_strided(stored_shape, stored_strides)


def _run_fp8(layout, a, b, scale_a, scale_b, groups, recipe, accumulation, out_dtype,
             result_recipe, result_scale, config, out, expected_m=None):
    """D quantized to FP8 in the grouped GEMM's epilogue: (d, d_scale_inv)."""
    _check_cuda({"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b,
                 layout.groups_name: groups, "result_scale": result_scale}, a.device)
    layout.check(a, b, groups, out_dtype)
    if result_recipe not in ("delayed", "blockwise"):
        raise ValueError(f"result_recipe {result_recipe!r}: the grouped kernels quantize "
                         f"'delayed' (a given per-tensor scale) or 'blockwise' (1x128 blocks)")
    if result_recipe == "delayed" and result_scale is None:
        raise ValueError("result_recipe 'delayed' needs result_scale (the quantization scale)")
    if result_recipe == "blockwise" and result_scale is not None:
        raise ValueError("result_recipe 'blockwise' computes its scales: no result_scale")
    g, m, n, k, lead, recipe = _extents_and_recipe(layout, a, b, scale_a, scale_b, recipe)
    check_expected_m(expected_m, m)
    d, scale_inv, stored = _fp8_result_buffers(layout, a, b, out_dtype, result_recipe, out)
    if m == 0:
        return d, scale_inv
    spec = GroupedScaledMatmul(recipe, groups=int(g), n=int(n), k=int(k),
                               out_dtype=FP8_DTYPES[out_dtype], accumulation=accumulation,
                               a_dtype=FP8_DTYPES[a.dtype], b_dtype=FP8_DTYPES[b.dtype],
                               layout=layout.name, config=config, result_recipe=result_recipe)
    sa, sb = _kernel_scales(recipe, scale_a, scale_b, m, g, n, k, lead)
    operands = {"a": a.contiguous(), "b": b.contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, layout.groups_name: groups.contiguous(), "d": d,
                "result_scale_inv": stored,
                "result_scale": None if result_scale is None
                else result_scale.float().reshape(()).contiguous()}
    (kernel,) = kernels_for(spec, a.device)
    kernel = _kernel_for_expected_m(kernel, expected_m, a.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])
    return d, scale_inv


def _define_ops(name, layout):
    """fp8mlir::NAME (a new result) and NAME_out (into `out`) of `layout`
    (m_masked's also take the expected_m hint)."""
    def fake(a, b, scale_a, scale_b, groups, out_dtype=None, recipe="auto",
             accumulation="fast", expected_m=None):
        out_dtype = out_dtype or torch.bfloat16
        layout.check(a, b, groups, out_dtype)
        check_expected_m(expected_m)
        return a.new_empty(layout.out_shape(a, b), dtype=out_dtype)

    def cuda(a, b, scale_a, scale_b, groups, out_dtype=None, recipe="auto",
             accumulation="fast", expected_m=None):
        out = fake(a, b, scale_a, scale_b, groups, out_dtype)
        _run(layout, a, b, scale_a, scale_b, groups, recipe, accumulation, out, expected_m)
        return out

    def out_fake(a, b, scale_a, scale_b, groups, recipe, accumulation, out, expected_m=None):
        layout.check(a, b, groups, out.dtype)
        check_expected_m(expected_m)
        torch._check(tuple(out.shape) == layout.out_shape(a, b),
                     lambda: f"out: expected {layout.out_shape(a, b)}, got {tuple(out.shape)}")

    def out_cuda(a, b, scale_a, scale_b, groups, recipe, accumulation, out, expected_m=None):
        if tuple(out.shape) != layout.out_shape(a, b) or not out.is_contiguous():
            raise ValueError(f"out: expected a contiguous {layout.out_shape(a, b)} tensor, "
                             f"got {tuple(out.shape)} with strides {out.stride()}")
        _run(layout, a, b, scale_a, scale_b, groups, recipe, accumulation, out, expected_m)

    groups = layout.groups_name
    hint = ", int? expected_m=None" if layout.masked else ""
    return (define_op(name, f"(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
                            f"Tensor {groups}, ScalarType? out_dtype=None, "
                            f"str recipe=\"auto\", str accumulation=\"fast\"{hint}) -> Tensor",
                      cuda=cuda, fake=fake),
            define_op(name + "_out", f"(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
                                     f"Tensor {groups}, str recipe, str accumulation, "
                                     f"Tensor(a!) out{hint}) -> ()",
                      cuda=out_cuda, fake=out_fake))


_GROUPED_SCALED_MM_OPS = _define_ops("grouped_scaled_mm", _CONTIGUOUS)
_GROUPED_SCALED_MM_MASKED_OPS = _define_ops("grouped_scaled_mm_masked", _MASKED)


# k_grouped: the columns of every group are a multiple of this.
K_GROUP_ALIGNMENT = 128


def _check_k_grouped(a, b, ks, out_dtype):
    torch._check(a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[1],
                 lambda: f"expected a [M, K] and b [N, K] with the same K (the tokens of all "
                         f"groups), got {tuple(a.shape)} and {tuple(b.shape)}")
    torch._check(a.shape[1] % K_GROUP_ALIGNMENT == 0,
                 lambda: f"expected K = {a.shape[1]} to be a multiple of {K_GROUP_ALIGNMENT} "
                         f"(the columns of every group are)")
    check_gemm_dtypes(a, b, out_dtype)
    torch._check(ks.dim() == 1 and ks.dtype == torch.int32,
                 lambda: f"k_sizes: expected int32 [G], got {ks.dtype} {tuple(ks.shape)}")


def _k_grouped_shape(a, b, ks):
    return (ks.shape[0], a.shape[0], b.shape[0])


def infer_k_grouped_recipe(scale_a, scale_b, g, m, n, k):
    sa, sb = tuple(scale_a.shape), tuple(scale_b.shape)
    if sa in ((g,), (g, 1)) and sb in ((g,), (g, 1)):
        return "tensorwise"
    if sa in ((g, m), (g, m, 1)) and sb in ((g, n), (g, n, 1)):
        return "rowwise"
    if sa == (m, k // 128) and sb == (n, k // 128):
        return "blockwise"
    raise ValueError(f"cannot tell the recipe from scale_a {sa} and scale_b {sb} "
                     f"(k_grouped, G={g}, M={m}, N={n}, K={k}); pass recipe=")


def _k_grouped_scales(recipe, scale_a, scale_b, g, m, n, k):
    """The kernel's a_scale_inv / b_scale_inv: [G] per tensor, [G, M] and
    [G, N] per row, the 1x128 scales MN-major [K/128, roundup(M, 4)] and
    [K/128, N] (no copy when they are already: the columnwise quantization
    writes them so)."""
    sa, sb = scale_a.float(), scale_b.float()
    if recipe == "tensorwise":
        return sa.reshape(g).contiguous(), sb.reshape(g).contiguous()
    if recipe == "rowwise":
        return sa.reshape(g, m).contiguous(), sb.reshape(g, n).contiguous()
    kb = k // 128
    if tuple(sa.shape) != (m, kb) or tuple(sb.shape) != (n, kb):
        raise ValueError(f"blockwise (k_grouped): expected scale_a ({m}, {kb}) and scale_b "
                         f"({n}, {kb}), got {tuple(sa.shape)} and {tuple(sb.shape)}")
    return mn_major_scales(sa, m, kb), mn_major_scales(sb, n, kb)


def _run_k_grouped(a, b, scale_a, scale_b, ks, recipe, accumulation, out, config=None):
    _check_cuda({"a": a, "b": b, "scale_a": scale_a, "scale_b": scale_b, "k_sizes": ks,
                 "out": out}, a.device)
    _check_k_grouped(a, b, ks, out.dtype)
    (g, m, n), k = _k_grouped_shape(a, b, ks), a.shape[1]
    if recipe == "auto":
        recipe = infer_k_grouped_recipe(scale_a, scale_b, g, m, n, k)
    if recipe not in GROUPED_RECIPES:
        raise ValueError(f"unknown recipe {recipe!r}: expected auto or one of {GROUPED_RECIPES}")
    if m == 0 or g == 0:
        return
    if k == 0:  # every group is empty: dW_g = 0
        out.zero_()
        return
    spec = GroupedScaledMatmul(recipe, groups=int(g), n=int(n), k=None,
                               out_dtype=HIGH_DTYPES[out.dtype], accumulation=accumulation,
                               a_dtype=FP8_DTYPES[a.dtype], b_dtype=FP8_DTYPES[b.dtype],
                               layout="k_grouped", config=config)
    sa, sb = _k_grouped_scales(recipe, scale_a, scale_b, g, m, n, k)
    operands = {"a": a.contiguous(), "b": b.contiguous(), "a_scale_inv": sa,
                "b_scale_inv": sb, "ks": ks.contiguous(), "d": out}
    (kernel,) = kernels_for(spec, a.device)
    launch(kernel, [operands.get(name) for name in kernel.operand_names])


def _define_k_grouped_ops(name):
    def fake(a, b, scale_a, scale_b, k_sizes, out_dtype=None, recipe="auto",
             accumulation="fast"):
        out_dtype = out_dtype or torch.bfloat16
        _check_k_grouped(a, b, k_sizes, out_dtype)
        return a.new_empty(_k_grouped_shape(a, b, k_sizes), dtype=out_dtype)

    def cuda(a, b, scale_a, scale_b, k_sizes, out_dtype=None, recipe="auto",
             accumulation="fast"):
        out = fake(a, b, scale_a, scale_b, k_sizes, out_dtype)
        _run_k_grouped(a, b, scale_a, scale_b, k_sizes, recipe, accumulation, out)
        return out

    def out_fake(a, b, scale_a, scale_b, k_sizes, recipe, accumulation, out):
        _check_k_grouped(a, b, k_sizes, out.dtype)
        shape = _k_grouped_shape(a, b, k_sizes)
        torch._check(tuple(out.shape) == shape,
                     lambda: f"out: expected {shape}, got {tuple(out.shape)}")

    def out_cuda(a, b, scale_a, scale_b, k_sizes, recipe, accumulation, out):
        shape = _k_grouped_shape(a, b, k_sizes)
        if tuple(out.shape) != shape or not out.is_contiguous():
            raise ValueError(f"out: expected a contiguous {shape} tensor, "
                             f"got {tuple(out.shape)} with strides {out.stride()}")
        _run_k_grouped(a, b, scale_a, scale_b, k_sizes, recipe, accumulation, out)

    return (define_op(name, "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
                            "Tensor k_sizes, ScalarType? out_dtype=None, "
                            "str recipe=\"auto\", str accumulation=\"fast\") -> Tensor",
                      cuda=cuda, fake=fake),
            define_op(name + "_out", "(Tensor a, Tensor b, Tensor scale_a, Tensor scale_b, "
                                     "Tensor k_sizes, str recipe, str accumulation, "
                                     "Tensor(a!) out) -> ()",
                      cuda=out_cuda, fake=out_fake))


_GROUPED_SCALED_MM_K_OPS = _define_k_grouped_ops("grouped_scaled_mm_k")


def group_index_from_offsets(offsets, m):
    """The per-row group index [M] (int32, -1 past the last group) of the
    groups ``torch._scaled_grouped_mm``'s ``offs`` describe: int32 [G]
    cumulative end rows, group g = rows [offs[g-1], offs[g]). Device ops
    only (no host synchronization)."""
    rows = torch.arange(m, device=offsets.device, dtype=offsets.dtype)
    index = torch.bucketize(rows, offsets, right=True).to(torch.int32)
    return torch.where(index < offsets.numel(), index, torch.full_like(index, -1))


def grouped_scaled_mm(a, b, scale_a, scale_b, *, group_index=None, offsets=None,
                      masked_m=None, k_sizes=None, layout=None, recipe=None, out_dtype=None,
                      accumulation="fast", cache=None, out=None, result_recipe=None,
                      result_scale=None, config=None, expected_m=None):
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

    layout "m_masked" (given ``masked_m``; DeepGEMM's masked layout, for
    decode under CUDA graphs): a [G, M, K] FP8, each group's rows; b
    [G, N, K]; ``masked_m`` int32 [G] on the device, the valid rows of each
    group (0..M; read by the kernel, so the launch does not depend on it and
    can be captured once). The result is [G, M, N]; rows from a group's
    count on are not written (with ``out``, they keep what it held).
    ``expected_m`` (DeepGEMM's hint, an int in [1, M]): the rows each group
    is expected to hold, from which the runtime picks the kernel's tile
    (smaller tiles for few rows, as DeepGEMM picks its block M); a host
    value, so the launch still does not depend on the counts. Without it
    the kernel's default tile (128 rows) runs.

    layout "k_grouped" (given ``k_sizes``; the experts' weight gradient
    dW_g = dY_g^T X_g, DeepGEMM's k_grouped_fp8_gemm_tn_contiguous): a
    [M, K] and b [N, K] FP8, the tokens of all groups one after the other
    along K (dY^T and X^T, the columnwise quantized copies); ``k_sizes``
    int32 [G] on the device, the tokens of each group, each a multiple of
    128 (0 allowed; read by the kernel, not checked). The result is
    [G, M, N], D[g] = a[:, cols of g] @ b[:, cols of g]^T scaled; an empty
    group's is zeros. Scales: tensorwise scale_a and scale_b [G] (one per
    group's slice), rowwise scale_a [G, M], scale_b [G, N] (or [.., 1]),
    blockwise 1x128 on both sides, scale_a [M, K/128], scale_b [N, K/128]
    (taken without a copy where they are MN-major, as the columnwise
    quantization writes them).

    Scales (scale_inv, f32): tensorwise scale_a one element, scale_b [G];
    rowwise scale_a [M] or [M, 1], scale_b [G, N] (or [G, N, 1]);
    blockwise (DeepSeek-V3: 1x128 activations, 128x128 weights) scale_a
    [M, ceil(K/128)], scale_b [G, ceil(N/128), ceil(K/128)]; with m_masked
    scale_a is [G, M] / [G, M, 1] (rowwise) and [G, M, ceil(K/128)]
    (blockwise); mxfp8 (sm_100a, m_contiguous, float8_e8m0fnu scales, one
    per 1x32 block) scale_a [M, ceil(K/32)], scale_b [G, N, ceil(K/32)],
    passed to the kernel in its 128x4 atom layout (fp8mlir.scale_atoms).
    recipe: None
    (from the shapes) or one of those names. out_dtype: bfloat16 (default),
    float16 or float32. accumulation "fast" or "promoted(128)" (blockwise
    always promotes). cache: a KernelCache or directory for this call.
    Runs on the current CUDA stream; not differentiable.

    out_dtype float8_e4m3fn (or float8_e5m2 with result_recipe "delayed"):
    D quantized to FP8 in the epilogue, returning (d, d_scale_inv):
    result_recipe "delayed" (the default with a result_scale; one given
    one-element float32 scale for all groups, d_scale_inv = 1 /
    result_scale, 0-d) or "blockwise" (the default without one; 1x128
    blocks along N, power-of-two scales, d_scale_inv [M, ceil(N/128)]
    ([G, M, ceil(N/128)] m_masked) over MN-major storage: the layout the
    next blockwise grouped_scaled_mm reads as scale_a in place). Rows the
    layout does not write get neither bytes nor scales. out: (d,
    d_scale_inv) to write, as a call without out returns them. config: a
    #fp8.gemm_config body such as "<tile = 128x128x128>" for that path.
    FP8 results are sm_90a kernels (sm_100a's write bf16, f16 or f32) of
    the m_contiguous and m_masked layouts (k_grouped writes bf16, f16 or
    f32).
    """
    fp8 = out_dtype in FP8_DTYPES
    if not fp8 and (result_recipe is not None or result_scale is not None
                    or config is not None):
        raise ValueError("result_recipe, result_scale and config are taken with an FP8 "
                         "out_dtype only")
    if layout is not None and layout not in LAYOUTS:
        raise ValueError(f"layout {layout!r}: expected one of {LAYOUTS}")
    if sum(x is not None for x in (group_index, offsets, masked_m, k_sizes)) != 1:
        raise ValueError("pass exactly one of group_index=, offsets=, masked_m= and k_sizes=")
    if expected_m is not None and masked_m is None:
        raise ValueError("expected_m is the m_masked layout's hint: pass it with masked_m=")
    check_expected_m(expected_m)
    given = ("m_masked" if masked_m is not None else
             "k_grouped" if k_sizes is not None else "m_contiguous")
    if layout is not None and layout != given:
        takes = {"m_masked": "masked_m=", "k_grouped": "k_sizes="}
        raise ValueError(f"layout {layout!r} takes "
                         f"{takes.get(layout, 'group_index= or offsets=')}")
    if cache is not None:
        with _UsingCache(cache):
            return grouped_scaled_mm(a, b, scale_a, scale_b, group_index=group_index,
                                     offsets=offsets, masked_m=masked_m, k_sizes=k_sizes,
                                     layout=layout, recipe=recipe, out_dtype=out_dtype,
                                     accumulation=accumulation, out=out,
                                     result_recipe=result_recipe, result_scale=result_scale,
                                     config=config, expected_m=expected_m)
    if k_sizes is not None:
        if fp8:
            raise ValueError("k_grouped (k_sizes=) writes a bfloat16, float16 or float32 "
                             f"result, got out_dtype {out_dtype}")
        return _call(_GROUPED_SCALED_MM_K_OPS, a, b, scale_a, scale_b, k_sizes,
                     recipe or "auto", out_dtype, accumulation, out)
    if offsets is not None:
        if offsets.dim() != 1 or offsets.dtype != torch.int32:
            raise ValueError(f"offsets: expected int32 [G], got {offsets.dtype} "
                             f"{tuple(offsets.shape)}")
        group_index = group_index_from_offsets(offsets, a.shape[0])
    if fp8:
        result_recipe = result_recipe or ("blockwise" if result_scale is None else "delayed")
        layout_ops = _MASKED if masked_m is not None else _CONTIGUOUS
        return _run_fp8(layout_ops, a, b, scale_a, scale_b,
                        group_index if masked_m is None else masked_m, recipe or "auto",
                        accumulation, out_dtype, result_recipe, result_scale, config, out,
                        expected_m)
    if masked_m is not None:
        ops = tuple(functools.partial(op, expected_m=expected_m)
                    for op in _GROUPED_SCALED_MM_MASKED_OPS)
        return _call(ops, a, b, scale_a, scale_b, masked_m, recipe or "auto", out_dtype,
                     accumulation, out)
    return _call(_GROUPED_SCALED_MM_OPS, a, b, scale_a, scale_b, group_index,
                 recipe or "auto", out_dtype, accumulation, out)


def _call(ops, a, b, scale_a, scale_b, groups, recipe, out_dtype, accumulation, out):
    """The functional operator of `ops`, or its out= form."""
    return call_functional_or_out(*ops, (a, b, scale_a, scale_b, groups), out_dtype, recipe,
                                  accumulation, out)

