"""FP8-output GEMMs against the same GEMM writing bf16, and bf16 followed by
the quantization kernel that the FP8 output replaces (H100; kernels from
fp8mlir.testing.fp8out_cases, in the GPU kernel cache):

    FP8MLIR_KERNEL_CACHE=CACHE FP8RT_LIBRARY=libfp8rt.so PYTHONPATH=python \\
        python3 bench/bench_fp8out.py [--m 4096 8192] [--out DIR]

Each variant's time is GPU time per call: CUDA events around `--iters`
back-to-back launches on one stream after `--warmup` (the launches queue
ahead of the GPU, so host launch cost is hidden; kernel-only in that
sense). The three variants use the same GEMM tiling (a #fp8.gemm_config).
blockwise: 1x128 output blocks with power-of-two scales (DeepSeek-V3's
activation quantization); tensorwise: a given (delayed) output scale.
"""

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

import fp8mlir  # noqa: E402
from fp8mlir import _torch_ops as ops  # noqa: E402
from fp8mlir.testing import fp8out_cases as cases  # noqa: E402


def gpu_ms(call, iters, warmup):
    for _ in range(warmup):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


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
    return a, b, sa, sb


def bench_shape(recipe, m, n, k, args):
    fp8_spec, bf16_spec, _ = cases.bench_specs(recipe, n, k)
    a, b, sa, sb = operands(recipe, m, n, k)
    result_recipe = fp8_spec.result_recipe
    scale = torch.tensor(1.0, device="cuda") if result_recipe == "delayed" else None

    def fp8_out():
        return fp8mlir.scaled_mm(a, b.t(), sa, sb, recipe=recipe, out_dtype=torch.float8_e4m3fn,
                                 result_recipe=result_recipe, result_scale=scale,
                                 config=fp8_spec.config,
                                 accumulation=fp8_spec.accumulation)

    gsa, gsb = ops._gemm_scales(recipe, sa, sb, m, n, k)
    d = torch.empty((m, n), dtype=torch.bfloat16, device="cuda")
    named = {"a": a, "b": b, "a_scale_inv": gsa, "b_scale_inv": gsb, "d": d}
    (kernel,) = ops.kernels_for(bf16_spec, a.device)
    ordered = [named.get(name) for name in kernel.operand_names]

    def bf16_out():
        ops.launch(kernel, ordered)

    def quantize():
        if recipe == "blockwise":
            return fp8mlir.quantize(d, "blockwise", block=(1, 128))
        return fp8mlir.quantize(d, "delayed", scale=torch.tensor([1.0], device="cuda"))

    def bf16_then_quantize():
        bf16_out()
        quantize()

    row = {"recipe": recipe, "m": m, "n": n, "k": k}
    for name, call in (("fp8_out", fp8_out), ("bf16_out", bf16_out),
                       ("bf16_out_then_quantize", bf16_then_quantize)):
        row[name + "_ms"] = gpu_ms(call, args.iters, args.warmup)
    row["speedup_vs_bf16"] = row["bf16_out_ms"] / row["fp8_out_ms"]
    row["speedup_vs_bf16_quantize"] = row["bf16_out_then_quantize_ms"] / row["fp8_out_ms"]
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--out", default="bench/results")
    args = p.parse_args()
    rows = []
    print(f"device: {torch.cuda.get_device_name()}")
    print("recipe      M     N     K   fp8-out ms  bf16 ms  bf16+quant ms  vs bf16  vs bf16+quant")
    for recipe in cases.BENCH_RECIPES:
        for n, k in cases.BENCH_SHAPES:
            for m in args.m:
                r = bench_shape(recipe, m, n, k, args)
                rows.append(r)
                print(f"{recipe:10s} {m:5d} {n:5d} {k:5d} {r['fp8_out_ms']:10.4f} "
                      f"{r['bf16_out_ms']:8.4f} {r['bf16_out_then_quantize_ms']:14.4f} "
                      f"{r['speedup_vs_bf16']:8.3f} {r['speedup_vs_bf16_quantize']:14.3f}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    name = torch.cuda.get_device_name().replace(" ", "_")
    (out / f"fp8out-{name}.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
