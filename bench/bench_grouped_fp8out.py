"""Grouped FP8-output GEMMs (m_contiguous) against the same grouped GEMM
writing bf16, and bf16 followed by the quantization kernel the FP8 output
replaces, on bench_grouped.py's m_contiguous expert shapes and uneven groups
(fp8mlir.testing.grouped_cases.BENCH_CONTIGUOUS, the same rows per expert):
``bench/bench_grouped.py --fp8-out`` (kernels from
fp8mlir.testing.grouped_cases.fp8out_bench_specs, in the GPU kernel cache).

Kernel-only, as bench_fp8out.py times the dense ones: operands and outputs
made first (grouped_problems.ContiguousCase's inputs, one copy), calls
queued behind a GPU spin for about --rep ms, the median of --rounds rounds
with the variants alternating. blockwise: 1x128 output blocks with
power-of-two scales (the next grouped GEMM's A scales); rowwise: a given
(delayed) output scale. The quantization reads the whole bf16 [M, N] D,
padding rows included, as a separate pass would.
"""

import statistics

from fp8mlir.testing import grouped_cases as cases

VARIANTS = ("fp8_out", "bf16_out", "quantize", "bf16_out_then_quantize")


def shape_calls(recipe, rows, n, k):
    """(case, {variant: call}, {variant: kernel names}) of one shape."""
    import bench_fp8out
    from grouped_problems import ContiguousCase
    from fp8mlir import _grouped_ops as grouped_ops
    case = ContiguousCase(recipe, rows, n, k, lambda _: 1)
    c = case.copies[0]
    gsa, gsb = grouped_ops._kernel_scales(recipe, c["sa"], c["sb"], case.m, case.g, n, k)
    common = {"a": c["a"], "b": c["b"], "a_scale_inv": gsa, "b_scale_inv": gsb,
              "group_index": c["group_index"]}
    specs = cases.fp8out_bench_specs(recipe, case.g, n, k)
    calls, names = bench_fp8out.variant_calls(specs, common, case.m, n)
    return case, calls, names


def bench_shape(recipe, groups, mean, n, k, args):
    """One row: the median us of each variant and the speed-ups."""
    import bench_fp8out
    rows = cases.bench_contiguous_rows(groups, mean, seed=groups * mean + n + k)
    case, calls, names = shape_calls(recipe, rows, n, k)
    ms = bench_fp8out.variant_ms(calls, args.rounds, args.rep)
    row = dict(recipe=recipe, groups=groups, n=n, k=k, tokens=sum(rows), m=case.m,
               group_rows=rows, kernels=names)
    for v in VARIANTS:
        row[v + "_us"] = ms[v] * 1e3
    row["speedup_vs_bf16"] = row["bf16_out_us"] / row["fp8_out_us"]
    row["speedup_vs_bf16_quantize"] = row["bf16_out_then_quantize_us"] / row["fp8_out_us"]
    return row


def run(args):
    """The rows of the FP8-output comparison, one per recipe, group count
    and shape of bench_grouped.py's m_contiguous cases (--recipes, --shapes)."""
    import torch
    rows = []
    print("recipe    G     N     K      M  fp8-out us  bf16 us  quant us  bf16+quant us"
          "  vs bf16  vs bf16+quant")
    shapes = [s for s in cases.BENCH_SHAPES if s in args.shapes]
    for recipe in [r for r in cases.FP8_BENCH_RECIPES if r in args.recipes]:
        for groups, mean in cases.BENCH_CONTIGUOUS:
            for n, k in shapes:
                row = bench_shape(recipe, groups, mean, n, k, args)
                rows.append(row)
                print(f"{recipe:9s} {groups:2d} {n:5d} {k:5d} {row['m']:6d} "
                      f"{row['fp8_out_us']:11.1f} {row['bf16_out_us']:8.1f} "
                      f"{row['quantize_us']:9.1f} {row['bf16_out_then_quantize_us']:14.1f} "
                      f"{row['speedup_vs_bf16']:8.3f} {row['speedup_vs_bf16_quantize']:14.3f}",
                      flush=True)
                torch.cuda.empty_cache()
    return rows


def markdown_lines(gpu, rows):
    lines = [f"# Grouped FP8-output GEMM (m_contiguous) on {gpu}", "",
             "Kernel-only us per call; `vs bf16` = bf16-output us / FP8-output us, "
             "`vs bf16+quant` = (bf16 output + the quantize kernel) us / FP8-output us. "
             "FP8 bytes and scales are checked bit-exact by "
             "`python/tests/test_gpu_grouped.py`.", "",
             "| recipe | G | N x K | M | FP8 out | bf16 out | quantize | bf16 + quantize "
             "| vs bf16 | vs bf16+quant |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['recipe']} | {r['groups']} | {r['n']} x {r['k']} | {r['m']} | "
                     f"{r['fp8_out_us']:.1f} | {r['bf16_out_us']:.1f} | {r['quantize_us']:.1f} | "
                     f"{r['bf16_out_then_quantize_us']:.1f} | {r['speedup_vs_bf16']:.3f} | "
                     f"{r['speedup_vs_bf16_quantize']:.3f} |")
    lines.append("")
    ratios = (("speedup_vs_bf16", "vs bf16"), ("speedup_vs_bf16_quantize", "vs bf16 + quantize"))
    for recipe in sorted({r["recipe"] for r in rows}):
        mine = [r for r in rows if r["recipe"] == recipe]
        geomeans = [f"{label} {statistics.geometric_mean(r[key] for r in mine):.3f}"
                    for key, label in ratios]
        lines.append(f"- {recipe}: geomean " + ", ".join(geomeans))
    return lines
