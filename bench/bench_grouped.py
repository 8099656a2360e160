#!/usr/bin/env python3
"""Grouped (mixture-of-experts) FP8 GEMM benchmark, m_contiguous layout:
fp8mlir.grouped_scaled_mm against torch._scaled_grouped_mm (rowwise) and
DeepGEMM's m_grouped contiguous kernel (blockwise) when `deep_gemm`
imports, on DeepSeek-V3's expert GEMMs (fp8mlir.testing.grouped_cases:
N x K 4096 x 7168 and 7168 x 2048, 4 and 8 groups) with uneven group
sizes (each padded to 128 rows).

Timing is kernel-only: every input (FP8 data, scales in the layout each
implementation reads without a copy, the group index / offsets) is made
before the timed loop, so each call launches one GEMM kernel; the time is
CUDA events around --iters back-to-back calls after --warmup, the median
of --repeats, divided by the calls. Every implementation is checked
against the f64 reference of the same quantized inputs first. Writes
grouped-<gpu>-<date>.json and .md into --out.

    python3 bench/bench_grouped.py [--tokens 4096,8192] [--out bench/results]
"""

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]

from fp8mlir.testing.grouped_cases import ContiguousProblem  # noqa: E402



def group_rows(tokens, groups, seed):
    """Uneven token counts of `groups` experts summing to about `tokens`
    (a routing-like spread: 0.5x .. 1.5x the mean)."""
    import numpy as np
    gen = np.random.default_rng(seed)
    weights = gen.uniform(0.5, 1.5, groups)
    return [int(r) for r in np.floor(weights / weights.sum() * tokens)]


def quantize(torch, x, recipe, weight):
    """x (f32, GPU) quantized to E4M3 on the GPU: (data, scale_inv, exact
    f64 values). rowwise: one scale per row; blockwise: power-of-two scales
    per 1x128 block (activations) or 128x128 tile (weights)."""
    r, c = x.shape
    if recipe == "rowwise":
        scale = x.abs().amax(1, keepdim=True).clamp_min(1e-4) / 448.0
        full = scale
    elif weight:
        tiles = x.reshape(r // 128, 128, c // 128, 128).abs().amax((1, 3))
        scale = torch.exp2(torch.ceil(torch.log2(tiles.clamp_min(1e-4) / 448.0)))
        full = scale.repeat_interleave(128, 0).repeat_interleave(128, 1)
    else:
        blocks = x.reshape(r, c // 128, 128).abs().amax(2)
        scale = torch.exp2(torch.ceil(torch.log2(blocks.clamp_min(1e-4) / 448.0)))
        full = scale.repeat_interleave(128, 1)
    data = (x / full).to(torch.float8_e4m3fn)
    return data, scale, data.double() * full.double()


class Problem(ContiguousProblem):
    """One grouped GEMM's inputs made on the GPU (m_contiguous, groups
    padded to 128 rows)."""

    def __init__(self, torch, recipe, rows, n, k):
        super().__init__(rows, n, k)
        gen = torch.Generator(device="cuda").manual_seed(sum(rows) + n + k)
        self.group_index = torch.from_numpy(self.index).cuda()
        x = torch.randn((len(self.index), k), generator=gen, device="cuda")
        x[self.group_index < 0] = 0.0
        self.a, self.scale_a, self.a_exact = quantize(torch, x, recipe, weight=False)
        data, scales, self.b_exact = [], [], []
        for _ in rows:
            w = torch.randn((n, k), generator=gen, device="cuda")
            d, s, e = quantize(torch, w, recipe, weight=True)
            data.append(d)
            scales.append(s.reshape(n) if recipe == "rowwise" else s)
            self.b_exact.append(e)
        self.b, self.scale_b = torch.stack(data), torch.stack(scales)


def time_calls(torch, fn, warmup, iters, repeats):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / iters)
    return statistics.median(times)


def mn_major(torch, scale):
    """[M, Kb] scales MN-major ([Kb, M] storage, M % 4 == 0): what the
    fp8mlir kernel and DeepGEMM read in place."""
    return scale.t().contiguous().t()


def implementations(torch, recipe, p):
    """{name: zero-argument call launching one GEMM kernel} for problem p."""
    import fp8mlir
    impls = {}
    d = torch.empty((len(p.index), p.n), dtype=torch.bfloat16, device="cuda")
    sa = mn_major(torch, p.scale_a) if recipe == "blockwise" else p.scale_a
    impls["fp8mlir"] = (lambda: fp8mlir.grouped_scaled_mm(
        p.a, p.b, sa, p.scale_b, group_index=p.group_index, out=d), d)
    if recipe == "rowwise" and hasattr(torch, "_scaled_grouped_mm"):
        offs, bt, sa1 = p.offsets(torch), p.b.transpose(-2, -1), p.scale_a.reshape(-1)
        out = {}

        def call():
            out["d"] = torch._scaled_grouped_mm(p.a, bt, sa1, p.scale_b, offs=offs,
                                                out_dtype=torch.bfloat16)
            return out["d"]
        impls["torch._scaled_grouped_mm"] = (call, out)
    if recipe == "blockwise":
        try:
            import deep_gemm
        except ImportError:
            deep_gemm = None
        fn = None
        if deep_gemm is not None:
            fn = (getattr(deep_gemm, "m_grouped_fp8_gemm_nt_contiguous", None)
                  or getattr(deep_gemm, "m_grouped_gemm_fp8_fp8_bf16_nt_contiguous", None))
        if fn is not None:
            dg = torch.empty_like(d)
            impls["deep_gemm"] = (lambda: fn((p.a, sa), (p.b, p.scale_b), dg, p.group_index),
                                  dg)
    return impls


def result_of(holder):
    return holder["d"] if isinstance(holder, dict) else holder


def relative_error(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-300)).item()


def check(torch, p, d):
    worst = 0.0
    for g in range(p.g):
        if p.rows[g]:
            s, r = p.starts[g], p.rows[g]
            worst = max(worst, relative_error(d[s:s + r], p.reference(g)))
    return worst


def run(args):
    import torch
    from fp8mlir.testing import grouped_cases as cases
    gpu = torch.cuda.get_device_name()
    rows_out = []
    for recipe in cases.BENCH_RECIPES:
        for groups in cases.BENCH_GROUPS:
            for n, k in cases.BENCH_SHAPES:
                for tokens in args.tokens:
                    rows = group_rows(tokens, groups, seed=tokens + groups)
                    p = Problem(torch, recipe, rows, n, k)
                    flops = 2.0 * sum(rows) * n * k
                    for name, (fn, holder) in implementations(torch, recipe, p).items():
                        try:
                            fn()
                            torch.cuda.synchronize()
                            error = check(torch, p, result_of(holder))
                            us = time_calls(torch, fn, args.warmup, args.iters, args.repeats)
                        except Exception as e:  # noqa: BLE001 - report and go on
                            print(f"{name} {recipe} G={groups} {n}x{k}: {e}", flush=True)
                            continue
                        row = dict(impl=name, recipe=recipe, groups=groups, n=n, k=k,
                                   tokens=sum(rows), group_rows=rows, us=us,
                                   tflops=flops / us / 1e6, rel_error=error)
                        rows_out.append(row)
                        print(f"{name:>26} {recipe:>9} G={groups} {n}x{k} M={sum(rows):>6}: "
                              f"{us:9.1f} us {row['tflops']:7.1f} TFLOP/s err {error:.2e}",
                              flush=True)
    return gpu, rows_out


def write_report(out, gpu, rows):
    out.mkdir(parents=True, exist_ok=True)
    stem = f"grouped-{gpu.replace(' ', '_')}-{datetime.date.today().isoformat()}"
    (out / f"{stem}.json").write_text(json.dumps({"gpu": gpu, "rows": rows}, indent=1))
    lines = [f"# Grouped FP8 GEMM (m_contiguous) on {gpu}", "",
             "Kernel-only time (CUDA events over back-to-back calls, inputs prepared "
             "outside the loop), bf16 output.", "",
             "| impl | recipe | G | N x K | M | us | TFLOP/s | rel. error |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['impl']} | {r['recipe']} | {r['groups']} | {r['n']} x {r['k']} | "
                     f"{r['tokens']} | {r['us']:.1f} | {r['tflops']:.1f} | "
                     f"{r['rel_error']:.1e} |")
    ratios = {}
    for r in rows:
        if r["impl"] == "fp8mlir":
            continue
        ours = next((o for o in rows if o["impl"] == "fp8mlir" and all(
            o[key] == r[key] for key in ("recipe", "groups", "n", "k", "tokens"))), None)
        if ours:
            ratios.setdefault(r["impl"], []).append(r["us"] / ours["us"])
    lines.append("")
    for impl, values in ratios.items():
        lines.append(f"Geometric mean speedup of fp8mlir over {impl}: "
                     f"{statistics.geometric_mean(values):.3f}x ({len(values)} shapes)")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-len(ratios) - 1:]))


def run_fp8_out(args):
    """--fp8-out: writes grouped-fp8out-<gpu>-<date>.json and .md."""
    import torch
    import bench_grouped_fp8out
    gpu = torch.cuda.get_device_name()
    rows = bench_grouped_fp8out.run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"grouped-fp8out-{gpu.replace(' ', '_')}-{datetime.date.today().isoformat()}"
    (args.out / f"{stem}.json").write_text(json.dumps({"gpu": gpu, "rows": rows}, indent=1))
    lines = bench_grouped_fp8out.markdown_lines(gpu, rows)
    (args.out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(line for line in lines if line.startswith("- ")))
    return 0 if rows else 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", default="4096,8192",
                        type=lambda s: [int(t) for t in s.split(",")],
                        help="total tokens over the groups (before padding)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--fp8-out", action="store_true",
                        help="time the FP8-output grouped GEMMs against bf16 output and bf16 "
                             "output + quantization instead (bench_grouped_fp8out.py)")
    args = parser.parse_args(argv)
    if args.fp8_out:
        return run_fp8_out(args)
    gpu, rows = run(args)
    write_report(args.out, gpu, rows)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
