#!/usr/bin/env python3
"""FP8-output GEMMs against the same GEMM writing bf16, and bf16 followed by
the quantization kernel that the FP8 output replaces, on DeepSeek-V3 shapes
(kernels from fp8mlir.testing.fp8out_cases, in the GPU kernel cache):

    FP8MLIR_KERNEL_CACHE=CACHE FP8RT_LIBRARY=libfp8rt.so PYTHONPATH=python \\
        python3 bench/bench_fp8out.py [--m 4096 8192] [--out DIR]

Timing is kernel-only: every operand and output (FP8 data, scales in the
layouts the kernels read, the bf16 D the quantization reads) is made before
the timed calls, and each call launches the kernels through the runtime
(one for a GEMM; the GEMM and then the quantization kernel for
"bf16 + quantize"). The calls are queued behind a GPU spin
(launch_timing.queued), so the GPU runs them back to back and never waits
on the host (a run where the host could not queue them first is an error);
the time per call is the median of --rounds rounds, the three variants
alternating. Blockwise: each GEMM with the heuristic's tiling (what a user
gets); tensorwise: one tiling (a #fp8.gemm_config) for both.
blockwise: 1x128 output blocks with power-of-two scales (DeepSeek-V3's
activation quantization); tensorwise: a given (delayed) output scale.
Writes fp8out-<gpu>-<date>.json and .md into --out.
"""

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]

import torch  # noqa: E402

import report_util  # noqa: E402
from fp8mlir import _torch_ops as ops  # noqa: E402
from fp8mlir.quantization import MN_MAJOR_ALIGNMENT  # noqa: E402
from fp8mlir.testing import fp8out_cases as cases  # noqa: E402
from launch_timing import estimate_ms, queued  # noqa: E402

VARIANTS = ("fp8_out", "bf16_out", "quantize", "bf16_out_then_quantize")


def operands(recipe, m, n, k):
    a = (torch.randn(m, k, device="cuda") / 4).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda") / 4).to(torch.float8_e4m3fn)
    if recipe == "blockwise":
        kb, nb = -(-k // 128), -(-n // 128)
        sa = torch.rand(kb, m, device="cuda").add_(0.5).t()  # MN-major (M, Kb)
        sb = torch.rand(kb, nb, device="cuda").add_(0.5)
        # power-of-two A scales, as a 1x128 quantization writes them
        sa = torch.exp2(torch.round(torch.log2(sa)))
    else:
        sa = torch.tensor(0.5, device="cuda")
        sb = torch.tensor(0.25, device="cuda")
    gsa, gsb = ops._gemm_scales(recipe, sa, sb, m, n, k)
    return {"a": a, "b": b, "a_scale_inv": gsa, "b_scale_inv": gsb}


def launcher(spec, named):
    """A call launching `spec`'s kernels on the operands `named` (by name)."""
    kernels = ops.kernels_for(spec, torch.device("cuda", torch.cuda.current_device()))
    ordered = [[named.get(name) for name in kernel.operand_names] for kernel in kernels]

    def call(_=0):
        for kernel, tensors in zip(kernels, ordered):
            ops.launch(kernel, tensors)
    return call, [kernel.name for kernel in kernels]


def shape_calls(recipe, m, n, k):
    """{variant: call} and {variant: kernel names} of one shape."""
    return variant_calls(cases.bench_specs(recipe, n, k), operands(recipe, m, n, k), m, n)


def variant_calls(specs, common, m, n):
    """{variant: call} and {variant: kernel names} of `specs` (the
    FP8-output GEMM, the bf16-output one and the quantization of its
    [m, n] output) on the GEMM operands `common` (by name); also the grouped
    GEMMs' (bench_grouped_fp8out.py)."""
    fp8_spec, bf16_spec, quantize_spec = specs
    fp8 = dict(common, d=torch.empty((m, n), dtype=torch.float8_e4m3fn, device="cuda"))
    if fp8_spec.result_recipe == "delayed":
        fp8["result_scale"] = torch.tensor(1.0, device="cuda")
        fp8["result_scale_inv"] = torch.empty((), device="cuda")
    else:
        padded = -(-m // MN_MAJOR_ALIGNMENT) * MN_MAJOR_ALIGNMENT
        fp8["result_scale_inv"] = torch.empty((-(-n // 128), padded), device="cuda")
    d = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    bf16 = dict(common, d=d)
    block = [1, 128] if fp8_spec.result_recipe == "blockwise" else []
    gran = ops._check_quantize(d, quantize_spec.recipe, block, torch.float8_e4m3fn)
    physical, _ = ops._quantize_outputs(d, gran, torch.float8_e4m3fn, True, False, True)
    quantized = dict(physical, x=d, scale=torch.tensor(1.0, device="cuda"))
    calls, names = {}, {}
    for variant, spec, named in (("fp8_out", fp8_spec, fp8), ("bf16_out", bf16_spec, bf16),
                                 ("quantize", quantize_spec, quantized)):
        calls[variant], names[variant] = launcher(spec, named)

    def both(_=0):
        calls["bf16_out"]()
        calls["quantize"]()
    calls["bf16_out_then_quantize"] = both
    return calls, names


def kernel_ms(call, rep_ms=50.0):
    """Kernel-only ms per call, queued behind a GPU spin: about rep_ms of
    GPU time, at most 400 calls (800 launches for bf16 + quantize, within
    the launch queue's depth)."""
    per_call = max(estimate_ms(torch, call, 3), 1e-3)
    result = queued(torch, call, max(10, min(400, int(rep_ms / per_call))))
    if result is None:
        raise RuntimeError("the host could not queue the calls ahead of the GPU")
    return result["gpu_us"] * 1e-3


def variant_ms(calls, rounds, rep_ms=50.0):
    """{variant: kernel-only ms per call}, the median of `rounds` rounds
    with the variants alternating; also bench_grouped_fp8out.py's."""
    times = {v: [] for v in VARIANTS}
    for r in range(rounds):
        for v in (VARIANTS if r % 2 == 0 else VARIANTS[::-1]):
            times[v].append(kernel_ms(calls[v], rep_ms))
    return {v: statistics.median(t) for v, t in times.items()}


def bench_shape(recipe, m, n, k, rounds):
    calls, names = shape_calls(recipe, m, n, k)
    ms = variant_ms(calls, rounds)
    row = {"recipe": recipe, "m": m, "n": n, "k": k, "kernels": names}
    for v in VARIANTS:
        row[v + "_ms"] = ms[v]
    row["speedup_vs_bf16"] = row["bf16_out_ms"] / row["fp8_out_ms"]
    row["speedup_vs_bf16_quantize"] = row["bf16_out_then_quantize_ms"] / row["fp8_out_ms"]
    return row


def markdown(report):
    env, rows = report["environment"], report["rows"]
    lines = [f"# FP8-output GEMM against bf16 output and bf16 output + quantization: "
             f"{env.get('gpu', '?')}", ""]
    lines += report_util.environment_lines(env)
    lines += ["- time: kernel-only, ms per call (calls queued behind a GPU spin, median of "
              f"{report['rounds']} rounds); `vs bf16` = bf16-output ms / FP8-output ms, "
              "`vs bf16+quant` = (bf16 output + the quantize kernel) ms / FP8-output ms",
              "- FP8 bytes and scales of these kernels are checked bit-exact by "
              "`python/tests/test_gpu_fp8out.py`", ""]
    header = ["recipe", "M", "N", "K", "FP8 out ms", "bf16 out ms", "quantize ms",
              "bf16 + quantize ms", "vs bf16", "vs bf16+quant"]
    lines += report_util.table(header, [
        [r["recipe"], r["m"], r["n"], r["k"], report_util.fmt(r["fp8_out_ms"], ".4f"),
         report_util.fmt(r["bf16_out_ms"], ".4f"), report_util.fmt(r["quantize_ms"], ".4f"),
         report_util.fmt(r["bf16_out_then_quantize_ms"], ".4f"),
         report_util.fmt(r["speedup_vs_bf16"]), report_util.fmt(r["speedup_vs_bf16_quantize"])]
        for r in rows])
    lines.append("")
    for recipe in sorted({r["recipe"] for r in rows}):
        mine = [r for r in rows if r["recipe"] == recipe]
        lines.append(f"- {recipe}: geomean vs bf16 "
                     f"{report_util.fmt(report_util.geomean([r['speedup_vs_bf16'] for r in mine]))}"
                     ", vs bf16 + quantize "
                     f"{report_util.fmt(report_util.geomean([r['speedup_vs_bf16_quantize'] for r in mine]))}")
    lines += ["", "Kernels:", ""]
    for r in rows:
        if r["m"] == rows[0]["m"]:
            kernels = r["kernels"]
            lines.append(f"- {r['recipe']} {r['n']}x{r['k']}: " + ", ".join(
                f"`{name}`" for v in ("fp8_out", "bf16_out", "quantize") for name in kernels[v]))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="bench/results")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    import bench_gemm
    now = datetime.datetime.now().astimezone()
    env = bench_gemm.environment(now)
    print(f"device: {env['gpu']} (driver {env['driver']}, torch {env['torch']})")
    print("recipe      M     N     K   fp8-out ms  bf16 ms  quant ms  bf16+quant ms"
          "  vs bf16  vs bf16+quant")
    rows = []
    for recipe in cases.BENCH_RECIPES:
        for n, k in cases.BENCH_SHAPES:
            for m in args.m:
                r = bench_shape(recipe, m, n, k, args.rounds)
                rows.append(r)
                print(f"{recipe:10s} {m:5d} {n:5d} {k:5d} {r['fp8_out_ms']:10.4f} "
                      f"{r['bf16_out_ms']:8.4f} {r['quantize_ms']:9.4f} "
                      f"{r['bf16_out_then_quantize_ms']:14.4f} "
                      f"{r['speedup_vs_bf16']:8.3f} {r['speedup_vs_bf16_quantize']:14.3f}",
                      flush=True)
    report = {"environment": env, "rounds": args.rounds, "rows": rows}
    path = report_util.report_path(args.out, "fp8out", env, now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
    path.with_suffix(".md").write_text(markdown(report))
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
