#!/usr/bin/env python3
"""Writes the .mlir inputs for the GPU check and benchmark, one fp8.scaled_matmul
per (recipe, N, K), and compiles them with fp8-compile into one directory,
recording the per-kernel compile time (build machine) in compile-times.json.

    bench/make_kernels.py --out kernels [--fp8-compile build/bin/fp8-compile]
                          [--set check|bench|decode|tile256|wgrad|wgrad_check|all]
                          [--nk NxK,...]
"""
import argparse
import json
import os
import subprocess
import sys
import time

# (M, N, K) of the benchmark (issue 3). M is a run-time value of each kernel.
BENCH_SHAPES = [
    (8192, 8192, 8192), (4096, 4096, 4096), (16384, 8192, 8192),
    (4096, 7168, 2048), (4096, 2112, 7168), (4096, 24576, 1536),
    (4096, 7168, 16384), (4096, 4096, 7168), (128, 7168, 2048),
    (64, 2112, 7168),
]

# (N, K) of decode-sized and narrow GEMMs: projections of real models, each
# run at small M (1 to 128) by the benchmark's decode grid (bench/README.md).
DECODE_NK = [
    (4096, 4096), (1024, 4096), (6144, 4096), (14336, 4096), (4096, 14336),  # Llama-3 8B
    (8192, 8192), (10240, 8192), (28672, 8192), (8192, 28672),  # Llama-3 70B
    (2112, 7168), (576, 7168), (1536, 7168), (24576, 1536), (7168, 16384),  # DeepSeek-V3
    (7168, 2048),
    (4608, 3584), (512, 3584), (3584, 18944),  # Qwen2.5-7B
]

# (M, N, K) of wgrad GEMMs dW = dY^T X of linear layers: M = out features,
# N = in features, K = tokens (Llama-3 8B/70B, DeepSeek-V3 projections).
WGRAD_SHAPES = [
    (4096, 4096, 8192), (14336, 4096, 8192), (4096, 14336, 8192),
    (8192, 8192, 8192), (7168, 2048, 16384), (2112, 7168, 8192),
]

# The 1D x 1D (1x128 x 1x128, the wgrad GEMM's) tiles configured against the
# heuristic's 128x128: wider tiles, whose last column part reads its B scales
# late, and the 2-CTA cluster multicasting B. Stages: as many as fit (direct
# stores: 160 and 176 are no whole 64-column bf16 store boxes; the 128-wide
# bf16 tile stages its output in 32 KiB).
WGRAD_TILE_CONFIGS = {
    "t160": "#fp8.gemm_config<tile = 128x160x128, stages = 6>",
    "t176": "#fp8.gemm_config<tile = 128x176x128, stages = 5>",
    "c2": "#fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 2x1>",
    # Accumulate-into-C only: 4 stages beside the whole f32 tile staged
    # (the heuristic's 5 stage it in two 32-column boxes in turn), and 6,
    # which leave no room for staging: C loaded and D stored directly by
    # each thread (the accumulating kernel before the staged epilogue).
    "s4": "#fp8.gemm_config<tile = 128x128x128, stages = 4>",
    "direct": "#fp8.gemm_config<tile = 128x128x128, stages = 6>",
    # Each K block's MMAs as one part (A read once per block; the whole
    # block promoted after its MMAs) instead of 96 + 32 columns: the
    # heuristic's own form for bf16 out, configured here for f32
    # accumulate-into-C, which the heuristic keeps in two parts.
    "p1": "#fp8.gemm_config<tile = 128x128x128, stages = 5, promotion_parts = 1>",
}
WGRAD_ACC_ONLY = ("s4", "direct")
# Wider 1D x 1D tiles in one promotion part (DeepGEMM's sm_90 cost model
# takes 128x152 for its K-grouped wgrad): a set of their own (`wgrad_wide`),
# which kernel_ab.py times with `@"fp8-mlir one part"` against the `wgrad`
# set's heuristic kernels (bench_gemm.py's "one part" column takes the first
# 128-row one-part tile by name, so each width is timed from a folder of
# its own; bench/README.md).
WGRAD_WIDE_TILE_NS = (144, 152)
WGRAD_ACC = {"out": "f32", "accumulate": True}

# The wgrad set's correctness kernels: each configured tile with bf16 and
# f32 accumulate-into-C outputs, partial N tiles (N = 2112 and 7168 are no
# multiples of 160 and 176), and a partial K block (K = 160).
WGRAD_CHECK_KERNELS = [
    ("wg_t160", "blockwise_1d1d", 2112, 7168, {"config": WGRAD_TILE_CONFIGS["t160"]}),
    ("wg_t160_acc_k160", "blockwise_1d1d", 7168, 160,
     dict(WGRAD_ACC, config=WGRAD_TILE_CONFIGS["t160"])),
    ("wg_t176", "blockwise_1d1d", 7168, 2048, {"config": WGRAD_TILE_CONFIGS["t176"]}),
    ("wg_t176_k160", "blockwise_1d1d", 2112, 160, {"config": WGRAD_TILE_CONFIGS["t176"]}),
    ("wg_t176_acc", "blockwise_1d1d", 2112, 7168,
     dict(WGRAD_ACC, config=WGRAD_TILE_CONFIGS["t176"])),
    ("wg_c2_acc", "blockwise_1d1d", 2112, 7168,
     dict(WGRAD_ACC, config="#fp8.gemm_config<tile = 128x128x128, stages = 6, "
                            "cluster = 2x1>")),
    # Accumulating through the staged f32 tile (also checked in place, C's
    # memory passed as D): the whole tile with 4 stages, partial N and K;
    # the cluster's tile in two boxes in turn.
    ("wg_s4_acc", "blockwise_1d1d", 2112, 7168,
     dict(WGRAD_ACC, config=WGRAD_TILE_CONFIGS["s4"])),
    ("wg_s4_acc_k160", "blockwise_1d1d", 2112, 160,
     dict(WGRAD_ACC, config=WGRAD_TILE_CONFIGS["s4"])),
    ("wg_c2_acc_staged", "blockwise_1d1d", 7168, 2048,
     dict(WGRAD_ACC, config=WGRAD_TILE_CONFIGS["c2"])),
    # One promotion part, bf16 out and accumulating (partial N and K).
    ("wg_p1", "blockwise_1d1d", 2112, 7168, {"config": WGRAD_TILE_CONFIGS["p1"]}),
    ("wg_p1_acc_k160", "blockwise_1d1d", 2112, 160,
     dict(WGRAD_ACC, config=WGRAD_TILE_CONFIGS["p1"])),
    # The heuristic's (launch variants included: M picks them) and its
    # stream-K form.
    ("wg_acc", "blockwise_1d1d", 2112, 7168, dict(WGRAD_ACC)),
    ("wg_acc_k160", "blockwise_1d1d", 7168, 160, dict(WGRAD_ACC)),
    ("wg_sk_acc", "blockwise_1d1d", 7168, 2048,
     dict(WGRAD_ACC, config="#fp8.gemm_config<tile = 128x128x128, stages = 5, "
                            "stream_k = true>")),
]

# The 256x128 blockwise tile (opt-in): 3 stages beside its 64 KiB output
# staging buffer, with and without the 1x2 cluster multicasting A.
WAVE_TILE_CONFIG = "#fp8.gemm_config<tile = 256x128x128, stages = 3, cluster = 1x2>"
WAVE_TILE_CONFIG_1CTA = "#fp8.gemm_config<tile = 256x128x128, stages = 3>"
# The same with each 64-row wave's MMAs as one 128-column group (one
# promotion part), and the default 128x192 tile in one part.
ONE_PART_CONFIGS = {
    "t256_p1": "#fp8.gemm_config<tile = 256x128x128, stages = 3, cluster = 1x2, "
               "promotion_parts = 1>",
    "t256_1cta_p1": "#fp8.gemm_config<tile = 256x128x128, stages = 3, promotion_parts = 1>",
    "p1": "#fp8.gemm_config<tile = 128x192x128, stages = 4, promotion_parts = 1>",
}

# Correctness set: every recipe and tile choice, awkward N and K (K = 160 is
# a partial K block; N = 2112 a partial N tile), bias, accumulate-into-C,
# hybrid E5M2 x E4M3, f16/f32 outputs, a configuration override.
CHECK_KERNELS = [
    # name, recipe, N, K, extra
    ("tw_fast", "tensorwise", 7168, 2048, {"accumulation": "fast"}),
    ("tw_promoted", "tensorwise", 7168, 2048, {}),
    ("tw_k160", "tensorwise", 2112, 160, {"accumulation": "fast"}),
    ("tw_n2112_k7168", "tensorwise", 2112, 7168, {"accumulation": "fast"}),
    ("tw_hybrid_f16_bias", "tensorwise", 4096, 2048,
     {"a_type": "f8E5M2", "out": "f16", "bias": "bf16", "accumulation": "fast"}),
    ("tw_tile64", "tensorwise", 4096, 2048,
     {"accumulation": "fast", "config": "#fp8.gemm_config<tile = 64x128x128, stages = 6>"}),
    ("row_fast", "rowwise", 7168, 2048, {"accumulation": "fast"}),
    ("row_promoted_bias", "rowwise", 2112, 7168, {"bias": "f32"}),
    ("wgrad_f32_acc", "tensorwise", 2048, 4096,
     {"out": "f32", "accumulate": True, "accumulation": "fast"}),
    ("bw_2112_7168", "blockwise", 2112, 7168, {}),
    ("bw_7168_2048", "blockwise", 7168, 2048, {}),
    ("bw_k160", "blockwise", 2112, 160, {}),
    # 2-CTA clusters: B tile halves multicast to both CTAs.
    ("tw_cluster", "tensorwise", 7168, 2048,
     {"accumulation": "fast",
      "config": "#fp8.gemm_config<tile = 128x256x128, stages = 3, cluster = 2x1>"}),
    ("bw_cluster", "blockwise", 2112, 7168,
     {"config": "#fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 2x1>"}),
    # Activations in the epilogue (after scales and bias).
    ("tw_silu_bias", "tensorwise", 2112, 2048,
     {"accumulation": "fast", "bias": "f32", "activation": "silu"}),
    ("row_gelu", "rowwise", 4096, 2048, {"accumulation": "fast", "activation": "gelu"}),
    ("bw_gelu_tanh_f32", "blockwise", 2112, 7168,
     {"out": "f32", "activation": "gelu_tanh"}),
    # Output amax for current scaling of the next layer (exact max |D|).
    ("tw_amax_bias", "tensorwise", 2112, 2048,
     {"accumulation": "fast", "bias": "f32", "amax": True}),
    ("row_silu_amax_f32", "rowwise", 4096, 2048,
     {"accumulation": "fast", "out": "f32", "activation": "silu", "amax": True}),
    ("wgrad_cluster", "tensorwise", 2048, 4096,
     {"out": "f32", "accumulate": True, "accumulation": "fast",
      "config": "#fp8.gemm_config<tile = 128x128x128, stages = 6, cluster = 2x1>"}),
    # Blockwise 1D x 1D (1x128 scales on both operands: the wgrad GEMM, f32
    # out accumulating into C), with the 1D x 2D kernel of the same shape to
    # time against.
    ("bw1d1d_2112_7168", "blockwise_1d1d", 2112, 7168, {}),
    ("bw1d1d_7168_7168", "blockwise_1d1d", 7168, 7168, {}),
    ("bw1d1d_k160", "blockwise_1d1d", 2112, 160, {}),
    ("bw1d1d_wgrad_acc", "blockwise_1d1d", 7168, 7168,
     {"out": "f32", "accumulate": True}),
    ("bw1d1d_wgrad_acc_k160", "blockwise_1d1d", 2112, 160,
     {"out": "f32", "accumulate": True}),
    ("bw1d1d_cluster", "blockwise_1d1d", 2112, 7168,
     {"config": "#fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 2x1>"}),
    ("bw_7168_7168", "blockwise", 7168, 7168, {}),
    # The 128-wide blockwise tile (one B block per tile), by override.
    ("bw_t128", "blockwise", 7168, 2048,
     {"config": "#fp8.gemm_config<tile = 128x128x128, stages = 5>"}),
    # Blockwise tiles 160 wide: tiles start at any multiple of 32 of a
    # 128x128 B block and meet two of them (five column classes of B scales).
    ("bw_t160", "blockwise", 2112, 7168,
     {"config": "#fp8.gemm_config<tile = 128x160x128, stages = 4>"}),
    ("tw_promoted_t160_f32", "tensorwise", 2112, 2048,
     {"out": "f32", "config": "#fp8.gemm_config<tile = 128x160x128, stages = 4>"}),
    # Stream-K where it is not the default (tensorwise promoted kernels above
    # have it): the partial sums of blockwise, fast, rowwise-scaled, bias,
    # f32 accumulate-into-C and 1D x 1D kernels meet in the same fixup.
    ("sk_bw", "blockwise", 2112, 7168,
     {"config": "#fp8.gemm_config<tile = 128x128x128, stages = 5, stream_k = true>"}),
    ("sk_tw_fast", "tensorwise", 4096, 2048,
     {"accumulation": "fast",
      "config": "#fp8.gemm_config<tile = 128x192x128, stages = 4, stream_k = true>"}),
    ("sk_row_bias", "rowwise", 7168, 7168,
     {"bias": "f32", "config": "#fp8.gemm_config<tile = 128x192x128, stages = 4, stream_k = true>"}),
    ("sk_wgrad_acc", "blockwise_1d1d", 2112, 7168,
     {"out": "f32", "accumulate": True,
      "config": "#fp8.gemm_config<tile = 128x128x128, stages = 5, stream_k = true>"}),
    ("sk_tw_t64", "tensorwise", 7168, 7168,
     {"config": "#fp8.gemm_config<tile = 64x128x128, stages = 8, stream_k = true>"}),
    # N a multiple of 16 but not of 64: a partial last tile, also for the
    # swap-AB launch variant (whose tile rows are N), with a bias, row
    # scales of both operands, 128x128 B scales, E5M2 A.
    ("row_n1040_bias", "rowwise", 1040, 4096, {"bias": "bf16", "accumulation": "fast"}),
    ("bw_n1040", "blockwise", 1040, 7168, {}),
    ("tw_hybrid_n1040", "tensorwise", 1040, 4096, {"a_type": "f8E5M2"}),
    # The 256x128 tile (two consumer warpgroups of two 64-row waves), with
    # its 1x2 cluster multicasting A: N = 2112 makes 17 tile columns (the
    # last pair's second CTA past N) and a partial one; f32 out stores
    # directly; rowwise scales and bias in the epilogue.
    ("bw_t256_c12", "blockwise", 7168, 2048, {"config": WAVE_TILE_CONFIG}),
    ("bw_t256_c12_n2112", "blockwise", 2112, 7168, {"config": WAVE_TILE_CONFIG}),
    ("bw_t256", "blockwise", 2112, 7168, {"config": WAVE_TILE_CONFIG_1CTA}),
    # 9 K blocks: the 256-row tiles' K loop runs two blocks a trip, then
    # the odd one.
    ("bw_t256_k1152", "blockwise", 2112, 1152, {"config": WAVE_TILE_CONFIG_1CTA}),
    # 9 and 11 K blocks (the last one partial at K = 1104): the promoted
    # 64-row launch variants' K loop runs blocks in pairs, then the odd one,
    # and so do the promoted tensorwise one-wave 128-row ones (128x64,
    # 128x128; 128x80 at N = 10096).
    ("bw_k1104", "blockwise", 1024, 1104, {}),
    ("tw_k1408", "tensorwise", 1024, 1408, {}),
    ("tw_wavefill_promoted_n10096", "tensorwise", 10096, 1104, {}),
    ("bw_t256_f32_gelu", "blockwise", 2112, 7168,
     {"out": "f32", "activation": "gelu_tanh",
      "config": "#fp8.gemm_config<tile = 256x128x128, stages = 4, cluster = 1x2>"}),
    ("row_t256_bias", "rowwise", 4096, 2048, {"bias": "f32", "config": WAVE_TILE_CONFIG}),
    # Promoted tensorwise kernels with the 256x128 launch variant: f32
    # accumulate-into-C (the per-tensor main-grad wgrad GEMM), and bias,
    # SiLU and the output amax.
    ("tw_promoted_acc", "tensorwise", 2112, 4096, {"out": "f32", "accumulate": True}),
    ("tw_promoted_silu_amax", "tensorwise", 4096, 2048,
     {"bias": "bf16", "activation": "silu", "amax": True}),
    # A 1x2 cluster on the 128-row tile.
    ("bw_t128_c12", "blockwise", 2112, 7168,
     {"config": "#fp8.gemm_config<tile = 128x128x128, stages = 5, cluster = 1x2>"}),
    # Ping-pong as configured: a 64-row tile of one wave per consumer, with
    # a bias and a 2x1 cluster (the heuristic's 128x128 fast tiles run
    # ping-pong too); fast accumulation in the 256x128 tile with A
    # multicast, N = 2112 past the last pair's second CTA.
    ("tw_pp_t64x256_bias", "tensorwise", 2112, 4096,
     {"accumulation": "fast", "bias": "bf16",
      "config": "#fp8.gemm_config<tile = 64x256x128, stages = 4, cluster = 2x1, ping_pong = true>"}),
    ("tw_fast_t256_c12", "tensorwise", 2112, 7168,
     {"accumulation": "fast",
      "config": "#fp8.gemm_config<tile = 256x128x128, stages = 4, cluster = 1x2>"}),
    # The wave-filling launch variants (one tile per SM of 132): 128x80 and
    # 64x80 at N = 10096 (127 tiles, the last 16 columns wide; blockwise
    # tiles straddle B's 128-column blocks), 128x224 and 64x224 at N =
    # 27904 (the last 128 columns wide), 9 K blocks, the last one partial.
    ("tw_wavefill_n10096", "tensorwise", 10096, 1104, {"accumulation": "fast"}),
    ("bw_wavefill_n10096", "blockwise", 10096, 1104, {}),
    ("tw_wavefill_n27904", "tensorwise", 27904, 1104, {"accumulation": "fast"}),
]

GRANULARITY = {
    "tensorwise": ("#fp8.granularity<tensor>", "#fp8.granularity<tensor>"),
    "rowwise": ("#fp8.granularity<row>", "#fp8.granularity<row>"),
    "blockwise": ("#fp8.granularity<tile 1x128>", "#fp8.granularity<tile 128x128>"),
    "blockwise_1d1d": ("#fp8.granularity<tile 1x128>", "#fp8.granularity<tile 1x128>"),
}


def scale_types(recipe, n, k):
    kb = (k + 127) // 128
    if recipe == "tensorwise":
        return "tensor<f32>", "tensor<f32>"
    if recipe == "rowwise":
        return "tensor<?x1xf32>", f"tensor<{n}x1xf32>"
    if recipe == "blockwise_1d1d":
        return f"tensor<?x{kb}xf32>", f"tensor<{n}x{kb}xf32>"
    return f"tensor<?x{kb}xf32>", f"tensor<{(n + 127) // 128}x{kb}xf32>"


def gemm_mlir(fn, recipe, n, k, extra):
    a_type = extra.get("a_type", "f8E4M3FN")
    out = extra.get("out", "bf16")
    accumulation = extra.get("accumulation", "promoted(128)")
    sa_t, sb_t = scale_types(recipe, n, k)
    ga, gb = GRANULARITY[recipe]
    args = [f"%a: tensor<?x{k}x{a_type}>", f"%b: tensor<{n}x{k}xf8E4M3FN>",
            f"%sa: {sa_t}", f"%sb: {sb_t}"]
    operands, types = "%a, %b, %sa, %sb", [f"tensor<?x{k}x{a_type}>",
                                           f"tensor<{n}x{k}xf8E4M3FN>", sa_t, sb_t]
    if "bias" in extra:
        args.append(f"%bias: tensor<{n}x{extra['bias']}>")
        operands += " bias %bias"
        types.append(f"tensor<{n}x{extra['bias']}>")
    if extra.get("accumulate"):
        args.append(f"%c: tensor<?x{n}xf32>")
        operands += " accumulate_into %c"
        types.append(f"tensor<?x{n}xf32>")
    attrs = [f"a_granularity = {ga}", f"b_granularity = {gb}",
             f"accumulation = #fp8.accumulation<{accumulation}>"]
    if "config" in extra:
        attrs.append(f"config = {extra['config']}")
    if "activation" in extra:
        attrs.append(f"activation = #fp8.activation<{extra['activation']}>")
    result = f"tensor<?x{n}x{out}>"
    if extra.get("amax"):
        return (f"func.func @{fn}({', '.join(args)}) -> ({result}, tensor<f32>) {{\n"
                f"  %0, %1 = fp8.scaled_matmul {operands} {{{', '.join(attrs)}}}\n"
                f"      : ({', '.join(types)}) -> ({result}, tensor<f32>)\n"
                f"  return %0, %1 : {result}, tensor<f32>\n}}\n")
    return (f"func.func @{fn}({', '.join(args)}) -> {result} {{\n"
            f"  %0 = fp8.scaled_matmul {operands} {{{', '.join(attrs)}}}\n"
            f"      : ({', '.join(types)}) -> {result}\n"
            f"  return %0 : {result}\n}}\n")


def bench_tile_n(n):
    """The fast kernels' tile N that the heuristic picks (tile N 256 or, for
    N = 2112, 192)."""
    return 192 if n % 256 and n % 192 == 0 else 256


def bench_variants():
    """(recipe, accumulation, name tag) of the bench and decode sets: fast and
    promoted tensorwise and rowwise, promoted blockwise."""
    for recipe in ("tensorwise", "rowwise", "blockwise"):
        for accumulation in (["fast", "promoted(128)"] if recipe != "blockwise"
                             else ["promoted(128)"]):
            yield recipe, accumulation, "fast" if accumulation == "fast" else "promoted"


def kernel_specs(which):
    specs = []
    if which in ("check", "all"):
        specs += [(name, recipe, n, k, extra) for name, recipe, n, k, extra in CHECK_KERNELS]
    if which in ("bench", "all"):
        for (_, n, k) in BENCH_SHAPES:
            for recipe, accumulation, tag in bench_variants():
                specs.append((f"bench_{recipe}_{tag}_n{n}_k{k}", recipe, n, k,
                              {"accumulation": accumulation}))
                if recipe == "rowwise":
                    continue
                # The same with a 2-CTA cluster multicasting B.
                tile = (f"128x{bench_tile_n(n)}x128" if accumulation == "fast"
                        else "128x128x128")
                stages = 3 if tile.startswith("128x256") else (4 if "x192x" in tile else 6)
                if recipe == "blockwise":
                    stages = 5  # the stages' scale slots take the sixth's room
                specs.append((f"bench_{recipe}_{tag}_c2_n{n}_k{k}", recipe, n, k,
                              {"accumulation": accumulation,
                               "config": f"#fp8.gemm_config<tile = {tile}, "
                                         f"stages = {stages}, cluster = 2x1>"}))
                if recipe == "blockwise":
                    # The 256x128 tile, with and without its 1x2 cluster.
                    for suffix, config in (("t256", WAVE_TILE_CONFIG),
                                           ("t256_1cta", WAVE_TILE_CONFIG_1CTA)):
                        specs.append((f"bench_{recipe}_{tag}_{suffix}_n{n}_k{k}", recipe,
                                      n, k, {"accumulation": accumulation, "config": config}))
    if which == "decode":
        specs += decode_specs()
    if which == "wgrad":
        specs += wgrad_specs()
    if which == "wgrad_check":
        specs += [(name, recipe, n, k, extra)
                  for name, recipe, n, k, extra in WGRAD_CHECK_KERNELS]
    if which == "tile256":
        specs += tile256_specs()
    if which == "wgrad_wide":
        specs += [(f"wgrad_1d1d{suffix}_t{tn}p1_n{n}_k{k}", "blockwise_1d1d", n, k,
                   dict(out, config=f"#fp8.gemm_config<tile = 128x{tn}x128, "
                                    f"promotion_parts = 1>"))
                  for tn in WGRAD_WIDE_TILE_NS for _, n, k in WGRAD_SHAPES
                  for suffix, out in (("", {}), ("_acc", WGRAD_ACC))]
    return specs


def tile256_specs():
    """The 256x128 tile against the default blockwise kernels: the bench set's
    blockwise kernels without the 2x1 cluster (default, t256, t256_1cta) and
    the check set's kernels of tile M 256 or a 1x2 cluster, and per bench
    shape the ONE_PART_CONFIGS kernels."""
    specs = [spec for spec in kernel_specs("all")
             if (spec[0].startswith("bench_blockwise_") and "_c2_" not in spec[0])
             or "t256" in spec[0] or "c12" in spec[0]]
    for _, n, k in BENCH_SHAPES:
        for suffix, config in ONE_PART_CONFIGS.items():
            specs.append((f"bench_blockwise_promoted_{suffix}_n{n}_k{k}", "blockwise", n, k,
                          {"accumulation": "promoted(128)", "config": config}))
    specs += [(f"bw_{suffix}", "blockwise", 2112, 7168, {"config": config})
              for suffix, config in ONE_PART_CONFIGS.items()]
    return specs


def wgrad_specs():
    """Per WGRAD_SHAPES entry, 1D x 1D with bf16 output and with f32
    accumulating into C (the main-grad form): the heuristic's kernel and each
    of WGRAD_TILE_CONFIGS (f32 direct stores leave the 2-CTA tile room for a
    sixth stage)."""
    specs = []
    for _, n, k in WGRAD_SHAPES:
        for suffix, out in (("", {}), ("_acc", WGRAD_ACC)):
            specs.append((f"wgrad_1d1d{suffix}_n{n}_k{k}", "blockwise_1d1d", n, k, dict(out)))
            for tag, config in WGRAD_TILE_CONFIGS.items():
                if not out and tag in WGRAD_ACC_ONLY:
                    continue
                if out and tag == "c2":
                    config = config.replace("stages = 5", "stages = 6")
                specs.append((f"wgrad_1d1d{suffix}_{tag}_n{n}_k{k}", "blockwise_1d1d",
                              n, k, dict(out, config=config)))
    return specs


# The decode set's split-K kernels: 64x64 tiles, stream-K over all SMs.
DECODE_STREAM_K = "#fp8.gemm_config<tile = 64x64x128, stages = 8, stream_k = true>"


def decode_specs():
    """Per DECODE_NK entry: tensorwise and rowwise fast and promoted, blockwise
    (named like the bench set's kernels, so that both sets share files), each
    also as a 64x64 stream-K kernel."""
    specs = []
    for n, k in DECODE_NK:
        for recipe, accumulation, tag in bench_variants():
            specs.append((f"bench_{recipe}_{tag}_n{n}_k{k}", recipe, n, k,
                          {"accumulation": accumulation}))
            specs.append((f"bench_{recipe}_{tag}_sk64_n{n}_k{k}", recipe, n, k,
                          {"accumulation": accumulation, "config": DECODE_STREAM_K}))
    return specs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--fp8-compile", default="build/bin/fp8-compile")
    parser.add_argument("--set", choices=["check", "bench", "decode", "tile256", "wgrad",
                                          "wgrad_check", "wgrad_wide", "all"],
                        default="all",
                        help="all = check + bench; decode: the DECODE_NK kernels; "
                             "tile256: the 256x128 tile and the default blockwise kernels; "
                             "wgrad: 1D x 1D kernels of WGRAD_SHAPES (bf16 and f32 "
                             "accumulate-into-C, the heuristic's tile and the configured "
                             "ones); wgrad_check: the configured 1D x 1D tiles' "
                             "correctness kernels; wgrad_wide: 1D x 1D kernels of "
                             "WGRAD_SHAPES at 128x144 and 128x152 in one promotion part")
    parser.add_argument("--nk", default="",
                        help="comma-separated NxK list: only the set's kernels of these "
                             "(N, K), e.g. 4096x4096,2112x7168")
    args = parser.parse_args()
    only = {tuple(int(x) for x in nk.split("x")) for nk in args.nk.split(",") if nk}
    os.makedirs(args.out, exist_ok=True)
    times = {}
    failures = 0
    seen = set()
    for fn, recipe, n, k, extra in kernel_specs(args.set):
        if only and (n, k) not in only:
            continue
        src = os.path.join(args.out, f"{fn}.mlir")
        with open(src, "w") as f:
            f.write(gemm_mlir(fn, recipe, n, k, extra))
        before = set(os.listdir(args.out))
        start = time.perf_counter()
        proc = subprocess.run([args.fp8_compile, src, "--chip=sm_90a", "-o", args.out],
                              capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            failures += 1
            print(f"FAILED {fn}:\n{proc.stderr}", file=sys.stderr)
            continue
        new = sorted(f[:-5] for f in set(os.listdir(args.out)) - before if f.endswith(".json"))
        # One fp8-compile run per op: a dynamic-M GEMM also builds its launch
        # variants, so each kernel is charged its share of the run.
        for kernel in new:
            times[kernel] = round(elapsed / len(new), 4)
        seen.update(new)
        print(f"{fn}: {elapsed:.3f} s -> {', '.join(new) or '(kernel already compiled)'}")
    with open(os.path.join(args.out, "compile-times.json"), "w") as f:
        json.dump({"machine": os.uname().nodename, "cpus": os.cpu_count(),
                   "seconds_per_kernel": times}, f, indent=1)
    print(f"{len(seen)} kernels in {args.out}, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
