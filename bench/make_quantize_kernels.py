#!/usr/bin/env python3
"""Writes the .mlir inputs of the quantization kernels (fp8.amax,
fp8.quantize of every recipe, fp8.compute_scale, fp8.update_amax_history,
fp8.dequantize) for the GPU check and benchmark, and compiles them with
fp8-compile into one directory per set.

    bench/make_quantize_kernels.py --out DIR [--set check|bench|all]
                                   [--chip sm_90a] [--fp8-compile build/bin/fp8-compile]

The check set covers every recipe, rowwise + columnwise (transposed and
untransposed) outputs, bf16/f16/f32 inputs and tail tiles (208 x 336:
neither is a multiple of 128), casts and amax with a run-time row count
(tensor<?xC>: R a kernel parameter, the check picks several; transposed
columnwise outputs and dequantization too), blockwise casts writing their
scales in the MX atom layout (mxscales), the scale kernels (current, delayed with
both algorithms and a margin, history lengths around the CTA size) and the
dequantization of every scale layout to bf16/f16/f32; the bench set is
8192^2 and 16384^2 bf16 (row granularity also 4096 x 7168).
"""
import argparse
import os
import subprocess
import sys

MLIR_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32"}
ELEM = {"e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}


def ceil_div(a, b):
    """ceil(a / b); "?" (a run-time extent) stays "?"."""
    if a == "?" or b == "?":
        return "?"
    return (a + b - 1) // b


def tensor(shape, elem):
    return "tensor<" + "x".join(str(d) for d in shape) + ("x" if shape else "") + elem + ">"


def scale_types(r, c, granularity, mx_scales=False):
    """The logical scale_inv types of the rowwise and the columnwise output
    (mx_scales: blockwise scales given as MX 1x32 UE8M0 codes)."""
    g = granularity
    if mx_scales:
        g = "mx 1x32"
    if g == "tensor":
        return "tensor<f32>", "tensor<f32>"
    if g == "row":
        return tensor([r, 1], "f32"), tensor([c, 1], "f32")
    if g.startswith("mx"):
        return (tensor([r, ceil_div(c, 32)], "f8E8M0FNU"),
                tensor([c, ceil_div(r, 32)], "f8E8M0FNU"))
    tr, tc = (int(v) for v in g.split()[1].split("x"))
    return (tensor([ceil_div(r, tr), ceil_div(c, tc)], "f32"),
            tensor([ceil_div(c, tr), ceil_div(r, tc)], "f32"))


def quantize_case(fn, r, c, in_type, recipe, granularity, elem="e4m3",
                  rowwise=True, columnwise=True, scale_kind=None, history=0,
                  untransposed=False, mx_scales=False, amax=False):
    """One function quantizing x [r, c]. scale_kind: None (per-block or fused
    current scaling, decomposed by the pipeline) or "given" (a scale operand).
    untransposed: the columnwise output in x's layout ([r, c]). mx_scales:
    power-of-two blockwise scales written as the MX scales of a block-scaled
    GEMM (scale_granularity = mx 1x32: UE8M0 codes in the 128x4 atoms).
    history: the amax recorded into an amax history of that length; amax:
    the amax returned as it is (a zeroed scalar the kernel max-accumulates
    into)."""
    x = tensor([r, c], MLIR_TYPES[in_type])
    et = ELEM[elem]
    g = granularity
    s_row, s_col = scale_types(r, c, g, mx_scales)
    results, types = [], []
    if rowwise:
        results += ["%q", "%s"]
        types += [tensor([r, c], et), s_row]
    if columnwise:
        results += ["%qt", "%st"]
        types += [tensor([r, c] if untransposed else [c, r], et), s_col]
    args = [f"%x: {x}"]
    operands = "%x"
    operand_types = x
    if scale_kind == "given":
        args.append("%scale: tensor<f32>")
        operands += " scale %scale"
        operand_types += ", tensor<f32>"
    out_spec = ""
    if rowwise:
        out_spec += f" rowwise({types[0]}, {types[1]})"
    if columnwise:
        out_spec += f" columnwise({types[-2]}, {types[-1]})"
    body_results = list(results)
    ret_types = list(types)
    lines = []
    if history or amax:
        out_spec += " amax(tensor<f32>)"
        body_results.append("%amax")
    if history:
        args.append(f"%h: tensor<{history}xf32>")
    elif amax:
        results.append("%amax")
        ret_types.append("tensor<f32>")
    layout = (", columnwise_layout = #fp8.columnwise_layout<untransposed>"
              if untransposed else "")
    if mx_scales:
        layout += ", scale_granularity = #fp8.granularity<mx 1x32>"
    lines.append(f"  {', '.join(body_results)} = fp8.quantize {operands} "
                 f"{{recipe = {recipe}, granularity = #fp8.granularity<{g}>{layout}}} "
                 f": {operand_types} ->{out_spec}")
    if history:
        lines.append(f"  %h1 = fp8.update_amax_history %h, %amax {{recipe = {recipe}}} "
                     f": tensor<{history}xf32>, tensor<f32>")
        results.append("%h1")
        ret_types.append(f"tensor<{history}xf32>")
    lines.append(f"  return {', '.join(results)} : {', '.join(ret_types)}")
    return (f"func.func @{fn}({', '.join(args)}) -> ({', '.join(ret_types)}) {{\n"
            + "\n".join(lines) + "\n}\n")


def amax_case(fn, r, c, in_type):
    x = tensor([r, c], MLIR_TYPES[in_type])
    return (f"func.func @{fn}(%x: {x}) -> tensor<f32> {{\n"
            f"  %a = fp8.amax %x : {x} -> tensor<f32>\n"
            f"  return %a : tensor<f32>\n}}\n")


def compute_scale_case(fn, recipe, elem, history=0):
    """fp8.compute_scale alone: current (amax -> scale, scale_inv) or delayed
    (history, previous scale -> scale, scale_inv, next history)."""
    et = ELEM[elem]
    if not history:
        return (f"func.func @{fn}(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {{\n"
                f"  %s, %si = fp8.compute_scale %a {{recipe = {recipe}, element_type = {et}}}"
                f" : tensor<f32> -> tensor<f32>, tensor<f32>\n"
                f"  return %s, %si : tensor<f32>, tensor<f32>\n}}\n")
    h = f"tensor<{history}xf32>"
    return (f"func.func @{fn}(%h: {h}, %p: tensor<f32>) -> (tensor<f32>, tensor<f32>, {h}) {{\n"
            f"  %s, %si, %n = fp8.compute_scale %h, %p {{recipe = {recipe}, element_type = {et}}}"
            f" : {h}, tensor<f32> -> tensor<f32>, tensor<f32>, {h}\n"
            f"  return %s, %si, %n : tensor<f32>, tensor<f32>, {h}\n}}\n")


def update_history_case(fn, history):
    h = f"tensor<{history}xf32>"
    return (f"func.func @{fn}(%h: {h}, %a: tensor<f32>) -> {h} {{\n"
            f"  %n = fp8.update_amax_history %h, %a {{recipe = #fp8.delayed<history = {history}>}}"
            f" : {h}, tensor<f32>\n"
            f"  return %n : {h}\n}}\n")


def dequantize_case(fn, r, c, elem, out_type, granularity):
    """fp8.dequantize of q [r, c] with its scale_inv (logical shape)."""
    q = tensor([r, c], ELEM[elem])
    s = scale_types(r, c, granularity)[0]
    y = tensor([r, c], MLIR_TYPES[out_type])
    return (f"func.func @{fn}(%q: {q}, %s: {s}) -> {y} {{\n"
            f"  %y = fp8.dequantize %q, %s {{granularity = #fp8.granularity<{granularity}>}}"
            f" : {q}, {s} -> {y}\n"
            f"  return %y : {y}\n}}\n")


def scales_to_mx_case(fn, r, c, tile, in_type="f32"):
    """fp8.scales_to_mx of the blockwise `tile` scales (RtxKb) of an [r, c]
    operand: [ceil(r/Rt), ceil(c/Kb)] f32 or UE8M0 -> [r, ceil(c/32)] UE8M0."""
    tr, tc = (int(v) for v in tile.split("x"))
    s = tensor([ceil_div(r, tr), ceil_div(c, tc)],
               "f32" if in_type == "f32" else "f8E8M0FNU")
    mx = tensor([r, ceil_div(c, 32)], "f8E8M0FNU")
    return (f"func.func @{fn}(%s: {s}) -> {mx} {{\n"
            f"  %mx = fp8.scales_to_mx %s {{granularity = #fp8.granularity<tile {tile}>}}"
            f" : {s} -> {mx}\n"
            f"  return %mx : {mx}\n}}\n")


def cases(which):
    out = []
    if which in ("check", "all"):
        for r, c in ((208, 336), (256, 512)):
            for t in ("bf16", "f16", "f32"):
                out.append(amax_case(f"amax_{t}_{r}", r, c, t))
                out.append(quantize_case(f"current_{t}_{r}", r, c, t, "#fp8.current<>", "tensor"))
                out.append(quantize_case(f"bw128_{t}_{r}", r, c, t, "#fp8.blockwise<>", "tile 1x128"))
                out.append(quantize_case(f"mx_{t}_{r}", r, c, t, "#fp8.mxfp8<>", "mx 1x32"))
            out.append(quantize_case(f"current_e5m2_eps_pow2_{r}", r, c, "bf16",
                                     "#fp8.current<epsilon = 1.0, pow2 = true>", "tensor",
                                     elem="e5m2"))
            out.append(quantize_case(f"delayed_{r}", r, c, "bf16", "#fp8.delayed<history = 16>",
                                     "tensor", scale_kind="given", history=16))
            out.append(quantize_case(f"delayed_e5m2_row_{r}", r, c, "bf16",
                                     "#fp8.delayed<history = 16>", "tensor", elem="e5m2",
                                     columnwise=False, scale_kind="given", history=16))
            out.append(quantize_case(f"bw128_f32scales_{r}", r, c, "bf16",
                                     "#fp8.blockwise<scales = f32>", "tile 1x128"))
            out.append(quantize_case(f"bw128_te_row_{r}", r, c, "bf16",
                                     "#fp8.blockwise<amax_clamp = 0.0>", "tile 1x128",
                                     columnwise=False))
            out.append(quantize_case(f"bw128x128_{r}", r, c, "bf16", "#fp8.blockwise<>",
                                     "tile 128x128"))
            out.append(quantize_case(f"bw128x128_f32scales_row_{r}", r, c, "bf16",
                                     "#fp8.blockwise<scales = f32>", "tile 128x128",
                                     columnwise=False))
            out.append(quantize_case(f"mx_ocp_e5m2_{r}", r, c, "bf16",
                                     "#fp8.mxfp8<rounding = ocp, format = e5m2>", "mx 1x32",
                                     elem="e5m2"))
            out.append(quantize_case(f"mx_col_{r}", r, c, "bf16", "#fp8.mxfp8<>", "mx 1x32",
                                     rowwise=False))
            # Untransposed columnwise outputs (MN-major operands on sm_100a).
            out.append(quantize_case(f"bw128_untr_{r}", r, c, "bf16", "#fp8.blockwise<>",
                                     "tile 1x128", untransposed=True))
            out.append(quantize_case(f"bw128_f32_untr_col_{r}", r, c, "f32",
                                     "#fp8.blockwise<scales = f32>", "tile 1x128",
                                     rowwise=False, untransposed=True))
            out.append(quantize_case(f"mx_untr_{r}", r, c, "bf16", "#fp8.mxfp8<>", "mx 1x32",
                                     untransposed=True))
            out.append(quantize_case(f"mx_ocp_e5m2_untr_col_{r}", r, c, "f16",
                                     "#fp8.mxfp8<rounding = ocp, format = e5m2>", "mx 1x32",
                                     elem="e5m2", rowwise=False, untransposed=True))
            out.append(quantize_case(f"bw128x128_untr_{r}", r, c, "bf16", "#fp8.blockwise<>",
                                     "tile 128x128", untransposed=True))
            out.append(quantize_case(f"delayed_untr_{r}", r, c, "bf16",
                                     "#fp8.delayed<history = 16>", "tensor",
                                     scale_kind="given", untransposed=True))
            # Dequantization of every scale layout the quantize kernels write.
            for g, name in (("tensor", "tensor"), ("row", "row"), ("tile 1x128", "bw128"),
                            ("tile 128x128", "bw128x128"), ("mx 1x32", "mx")):
                for out_type in ("bf16", "f16", "f32"):
                    out.append(dequantize_case(f"dq_{name}_{out_type}_{r}", r, c, "e4m3",
                                               out_type, g))
            out.append(dequantize_case(f"dq_mx_e5m2_{r}", r, c, "e5m2", "bf16", "mx 1x32"))
            out.append(dequantize_case(f"dq_tensor_e5m2_{r}", r, c, "e5m2", "f16", "tensor"))
        # A run-time row count (R = "?"): every recipe, rowwise and
        # untransposed columnwise outputs (transposed ones below).
        r, c = "?", 336
        out.append(amax_case("amax_bf16_dyn", r, c, "bf16"))
        out.append(amax_case("amax_f32_dyn", r, c, "f32"))
        out.append(quantize_case("current_row_dyn", r, c, "bf16", "#fp8.current<>", "tensor",
                                 columnwise=False))
        out.append(quantize_case("current_e5m2_eps_pow2_untr_dyn", r, c, "f16",
                                 "#fp8.current<epsilon = 1.0, pow2 = true>", "tensor",
                                 elem="e5m2", untransposed=True))
        out.append(quantize_case("delayed_row_dyn", r, c, "bf16", "#fp8.delayed<history = 16>",
                                 "tensor", columnwise=False, scale_kind="given", history=16))
        out.append(quantize_case("bw128_row_dyn", r, c, "bf16", "#fp8.blockwise<>", "tile 1x128",
                                 columnwise=False))
        out.append(quantize_case("bw128_untr_dyn", r, c, "bf16", "#fp8.blockwise<>",
                                 "tile 1x128", untransposed=True))
        out.append(quantize_case("bw128_f32scales_f32_untr_col_dyn", r, c, "f32",
                                 "#fp8.blockwise<scales = f32>", "tile 1x128", rowwise=False,
                                 untransposed=True))
        out.append(quantize_case("bw128x128_untr_dyn", r, c, "bf16", "#fp8.blockwise<>",
                                 "tile 128x128", untransposed=True))
        out.append(quantize_case("mx_untr_dyn", r, c, "bf16", "#fp8.mxfp8<>", "mx 1x32",
                                 untransposed=True))
        out.append(quantize_case("mx_ocp_e5m2_row_dyn", r, c, "f16",
                                 "#fp8.mxfp8<rounding = ocp, format = e5m2>", "mx 1x32",
                                 elem="e5m2", columnwise=False))
        # Transposed columnwise outputs with a run-time R: rows of R bytes, R
        # a multiple of 16 checked at launch (the check also expects the
        # runtime to reject the other row counts).
        out.append(quantize_case("bw128_tr_dyn", "?", 336, "bf16", "#fp8.blockwise<>",
                                 "tile 1x128"))
        out.append(quantize_case("bw128x128_tr_dyn", "?", 336, "f16", "#fp8.blockwise<>",
                                 "tile 128x128"))
        out.append(quantize_case("mx_tr_col_dyn", "?", 336, "bf16", "#fp8.mxfp8<>", "mx 1x32",
                                 rowwise=False))
        out.append(quantize_case("current_tr_dyn", "?", 352, "f16", "#fp8.current<>", "tensor"))
        out.append(quantize_case("delayed_e5m2_tr_dyn", "?", 336, "bf16",
                                 "#fp8.delayed<history = 16>", "tensor", elem="e5m2",
                                 scale_kind="given", history=16))
        out.append(quantize_case("bw128_mxs_tr_dyn", "?", 336, "bf16", "#fp8.blockwise<>",
                                 "tile 1x128", mx_scales=True))
        # Dequantization with a run-time R, every scale layout.
        for g, name in (("tensor", "tensor"), ("row", "row"), ("tile 1x128", "bw128"),
                        ("tile 128x128", "bw128x128"), ("mx 1x32", "mx")):
            out.append(dequantize_case(f"dq_{name}_bf16_dyn", "?", 336, "e4m3", "bf16", g))
        out.append(dequantize_case("dq_bw128_e5m2_f32_dyn", "?", 336, "e5m2", "f32",
                                   "tile 1x128"))
        # Blockwise power-of-two scales written in the sm_100a GEMM's MX
        # layout (UE8M0 128x4 atoms, each tile's code repeated over its 1x32
        # blocks): target-neutral code, checked here on sm_90a.
        for rr, cc in ((208, 336), (256, 512)):
            out.append(quantize_case(f"bw128_mxs_untr_{rr}", rr, cc, "bf16", "#fp8.blockwise<>",
                                     "tile 1x128", untransposed=True, mx_scales=True))
            out.append(quantize_case(f"bw128_mxs_{rr}", rr, cc, "f16", "#fp8.blockwise<>",
                                     "tile 1x128", mx_scales=True))
            out.append(quantize_case(f"bw128x128_mxs_untr_{rr}", rr, cc, "bf16",
                                     "#fp8.blockwise<>", "tile 128x128", untransposed=True,
                                     mx_scales=True))
            out.append(quantize_case(f"bw128x128_mxs_{rr}", rr, cc, "f32", "#fp8.blockwise<>",
                                     "tile 128x128", mx_scales=True))
        out.append(quantize_case("bw128_mxs_row_1", 1, 336, "bf16", "#fp8.blockwise<>",
                                 "tile 1x128", columnwise=False, mx_scales=True))
        out.append(quantize_case("bw128_mxs_untr_dyn", "?", 336, "bf16", "#fp8.blockwise<>",
                                 "tile 1x128", untransposed=True, mx_scales=True))
        out.append(quantize_case("bw128_mxs_noclamp_f32_row_dyn", "?", 336, "f32",
                                 "#fp8.blockwise<amax_clamp = 0.0>", "tile 1x128",
                                 columnwise=False, mx_scales=True))
        out.append(quantize_case("bw128x128_mxs_untr_dyn", "?", 336, "bf16", "#fp8.blockwise<>",
                                 "tile 128x128", untransposed=True, mx_scales=True))
        # Row granularity (one current scale per row, rowwise output):
        # bf16/f16/f32 inputs, e4m3/e5m2, epsilon and pow2, static (tail
        # tiles) and run-time R.
        for rr, cc in ((208, 336), (256, 512)):
            for t in ("bf16", "f16", "f32"):
                out.append(quantize_case(f"rowg_{t}_{rr}", rr, cc, t, "#fp8.current<>", "row",
                                         columnwise=False))
            out.append(quantize_case(f"rowg_e5m2_eps_pow2_{rr}", rr, cc, "bf16",
                                     "#fp8.current<epsilon = 1.0, pow2 = true>", "row",
                                     elem="e5m2", columnwise=False))
            out.append(quantize_case(f"rowg_e5m2_eps_{rr}", rr, cc, "f32",
                                     "#fp8.current<epsilon = 1.0e-3>", "row",
                                     elem="e5m2", columnwise=False))
            out.append(quantize_case(f"rowg_pow2_{rr}", rr, cc, "bf16",
                                     "#fp8.current<pow2 = true>", "row", columnwise=False))
        out.append(quantize_case("rowg_bf16_dyn", "?", 336, "bf16", "#fp8.current<>", "row",
                                 columnwise=False))
        # Row granularity, columnwise output (one scale per column of x: the
        # rows of x^T), transposed or untransposed, static and run-time R.
        for rr, cc in ((208, 336), (256, 512)):
            out.append(quantize_case(f"rowg_col_{rr}", rr, cc, "bf16", "#fp8.current<>", "row",
                                     rowwise=False))
            out.append(quantize_case(f"rowg_col_untr_{rr}", rr, cc, "f32", "#fp8.current<>",
                                     "row", rowwise=False, untransposed=True))
        out.append(quantize_case("rowg_col_e5m2_eps_pow2_1", 1, 336, "f16",
                                 "#fp8.current<epsilon = 1.0, pow2 = true>", "row",
                                 elem="e5m2", rowwise=False, untransposed=True))
        out.append(quantize_case("rowg_col_dyn", "?", 336, "bf16", "#fp8.current<>", "row",
                                 rowwise=False))
        out.append(quantize_case("rowg_col_untr_dyn", "?", 336, "f16",
                                 "#fp8.current<epsilon = 1.0e-3>", "row", rowwise=False,
                                 untransposed=True))
        out.append(quantize_case("rowg_f32_e5m2_eps_pow2_dyn", "?", 336, "f32",
                                 "#fp8.current<epsilon = 1.0, pow2 = true>", "row",
                                 elem="e5m2", columnwise=False))
        # The scale kernels.
        out.append(compute_scale_case("cs_current", "#fp8.current<>", "e4m3"))
        out.append(compute_scale_case("cs_current_eps_pow2", "#fp8.current<epsilon = 1.0e-3, "
                                      "pow2 = true>", "e5m2"))
        for n, algo, margin, elem in ((16, "max", 0, "e4m3"), (1024, "max", 2, "e5m2"),
                                      (257, "most_recent", 0, "e4m3"), (1, "max", 0, "e4m3"),
                                      (256, "max", 1, "e4m3")):
            out.append(compute_scale_case(
                f"cs_delayed_{n}_{algo}", f"#fp8.delayed<history = {n}, algo = {algo}, "
                f"margin = {margin}>", elem, history=n))
        for n in (1, 16, 1024):
            out.append(update_history_case(f"uh_{n}", n))
        # A delayed-scaling cast whose amax is returned, not recorded into a
        # history: max-ed into the zeroed scalar itself.
        out.append(quantize_case("delayed_amax_208", 208, 336, "bf16", "#fp8.delayed<>",
                                 "tensor", scale_kind="given", amax=True))
        out.append(quantize_case("delayed_amax_row_dyn", "?", 336, "bf16", "#fp8.delayed<>",
                                 "tensor", columnwise=False, scale_kind="given", amax=True))
        # Blockwise scales from elsewhere as MX atoms (the sm_100a blockwise
        # GEMMs' scale layout): f32 1x128 (MN-major, as the quantize kernels
        # write them) and 128x128 tiles with tails, UE8M0 input (row-major),
        # a 1x64 tile (two codes per atom row), a run-time R (UE8M0, f32).
        out.append(scales_to_mx_case("s2mx_1x128_208", 208, 336, "1x128"))
        out.append(scales_to_mx_case("s2mx_128x128_208", 208, 336, "128x128"))
        out.append(scales_to_mx_case("s2mx_ue8m0_1x64_256", 256, 512, "1x64", "ue8m0"))
        out.append(scales_to_mx_case("s2mx_ue8m0_1x128_256", 256, 7168, "1x128", "ue8m0"))
        out.append(scales_to_mx_case("s2mx_ue8m0_1x128_dyn", "?", 336, "1x128", "ue8m0"))
        out.append(scales_to_mx_case("s2mx_1x128_dyn", "?", 336, "1x128"))
    if which in ("bench", "all"):
        for n in (8192, 16384):
            out.append(amax_case(f"b_amax_{n}", n, n, "bf16"))
            out.append(quantize_case(f"b_current_row_{n}", n, n, "bf16", "#fp8.current<>",
                                     "tensor", columnwise=False))
            out.append(quantize_case(f"b_current_{n}", n, n, "bf16", "#fp8.current<>", "tensor"))
            out.append(quantize_case(f"b_delayed_row_{n}", n, n, "bf16",
                                     "#fp8.delayed<history = 1024>", "tensor",
                                     columnwise=False, scale_kind="given", history=1024))
            out.append(quantize_case(f"b_delayed_{n}", n, n, "bf16",
                                     "#fp8.delayed<history = 1024>", "tensor",
                                     scale_kind="given", history=1024))
            out.append(quantize_case(f"b_bw128_row_{n}", n, n, "bf16", "#fp8.blockwise<>",
                                     "tile 1x128", columnwise=False))
            out.append(quantize_case(f"b_bw128_{n}", n, n, "bf16", "#fp8.blockwise<>",
                                     "tile 1x128"))
            out.append(quantize_case(f"b_bw128x128_{n}", n, n, "bf16", "#fp8.blockwise<>",
                                     "tile 128x128"))
            out.append(quantize_case(f"b_mx_row_{n}", n, n, "bf16", "#fp8.mxfp8<>", "mx 1x32",
                                     columnwise=False))
            out.append(quantize_case(f"b_mx_{n}", n, n, "bf16", "#fp8.mxfp8<>", "mx 1x32"))
            # Untransposed columnwise outputs (the sm_100a 1-D-block operands)
            # and a run-time row count (activations), timed at R = C = n.
            out.append(quantize_case(f"b_bw128_untr_{n}", n, n, "bf16", "#fp8.blockwise<>",
                                     "tile 1x128", untransposed=True))
            out.append(quantize_case(f"b_mx_untr_{n}", n, n, "bf16", "#fp8.mxfp8<>", "mx 1x32",
                                     untransposed=True))
            out.append(quantize_case(f"b_bw128_row_rdyn_{n}", "?", n, "bf16",
                                     "#fp8.blockwise<>", "tile 1x128", columnwise=False))
            out.append(quantize_case(f"b_bw128_untr_rdyn_{n}", "?", n, "bf16",
                                     "#fp8.blockwise<>", "tile 1x128", untransposed=True))
            out.append(quantize_case(f"b_mx_row_rdyn_{n}", "?", n, "bf16", "#fp8.mxfp8<>",
                                     "mx 1x32", columnwise=False))
            out.append(quantize_case(f"b_current_row_rdyn_{n}", "?", n, "bf16",
                                     "#fp8.current<>", "tensor", columnwise=False))
            out.append(amax_case(f"b_amax_rdyn_{n}", "?", n, "bf16"))
            # Row granularity (one scale per row), static and run-time R.
            out.append(quantize_case(f"b_rowg_{n}", n, n, "bf16", "#fp8.current<>", "row",
                                     columnwise=False))
            out.append(quantize_case(f"b_rowg_rdyn_{n}", "?", n, "bf16", "#fp8.current<>",
                                     "row", columnwise=False))
            # Row granularity, columnwise (one scale per column of x): one
            # CTA per 128-column band, x read twice (maxima, then the cast).
            out.append(quantize_case(f"b_rowg_col_{n}", n, n, "bf16", "#fp8.current<>",
                                     "row", rowwise=False))
            out.append(quantize_case(f"b_rowg_col_untr_{n}", n, n, "bf16",
                                     "#fp8.current<>", "row", rowwise=False,
                                     untransposed=True))
        # An activation shape: 4096 tokens of 7168 (timed on its own shape).
        out.append(quantize_case("b_rowg_4096x7168", 4096, 7168, "bf16", "#fp8.current<>",
                                 "row", columnwise=False))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--set", default="all", choices=("check", "bench", "all"))
    p.add_argument("--chip", default="sm_90a")
    p.add_argument("--filter", default="",
                   help="comma-separated substrings: only cases whose function name has one")
    p.add_argument("--fp8-compile", default="build/bin/fp8-compile")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    src_dir = os.path.join(args.out, "mlir")
    os.makedirs(src_dir, exist_ok=True)
    status = 0
    # One module per case: fp8-compile writes a module's whole PTX for each
    # of its kernels.
    selected = [c for c in cases(args.set)
                if not args.filter or any(f in c.split("(")[0] for f in args.filter.split(","))]
    for i, case in enumerate(selected):
        src = os.path.join(src_dir, f"case{i:03d}.mlir")
        with open(src, "w", encoding="utf-8") as f:
            f.write(case)
        proc = subprocess.run([args.fp8_compile, src, f"--chip={args.chip}", "-o", args.out],
                              capture_output=True, text=True, check=False)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        status = status or proc.returncode
    return status

if __name__ == "__main__":
    sys.exit(main())
