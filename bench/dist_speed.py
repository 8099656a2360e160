#!/usr/bin/env python3
"""Bytes and time of FP8 all-gather against BF16 all-gather + quantization.

    torchrun --nproc-per-node 2 bench/dist_speed.py [--out bench/results] [--iters 20]

For activation and weight shapes of 7B and 70B models (row shards, one per
GPU: the sequence-parallel all-gather of a layer input, the TP/ZeRO
gather of a weight), per recipe (current: per tensor; blockwise: 1x128
activations, 128x128 weights), times on every rank with CUDA events (the
median over --iters, a barrier before each):

- bf16 path: all-gather of the BF16 shards, then quantizing the whole
  tensor (what a layer does without FP8 communication);
- fp8 path: amax of the shard, max all-reduce of the amax grid, quantizing
  the shard, FP8 all-gather (fp8mlir.distributed.sharded): the same FP8
  tensor (checked here once per case);
- the collectives alone: BF16 all-gather, FP8 all-gather, amax all-reduce.

Bytes: what one rank sends. Quantization is the eager-PyTorch reference
(fp8mlir.distributed.backends.TorchBackend, several kernels per call), the
same code in both paths; a fused quantize kernel shortens both, the
communication numbers do not depend on it. Writes
dist-speed-<n>x-<gpu>-<date>.{json,md}.
"""

import argparse
import statistics
import sys

import dist_common

torch, dist = dist_common.init()

from fp8mlir.distributed import sharded as sh  # noqa: E402
from fp8mlir.distributed.backends import TorchBackend  # noqa: E402
from fp8mlir.distributed.comm import TorchCommunicator  # noqa: E402

BE = TorchBackend()
TOKENS = 8192  # sequence 4096 x micro-batch 2, or 8192 x 1
SHAPES = [  # (model, tensor, kind, rows, cols)
    ("7B", "layer input (hidden 4096)", "activation", TOKENS, 4096),
    ("7B", "qkv weight", "weight", 12288, 4096),
    ("7B", "fc1 weight (gate+up)", "weight", 22016, 4096),
    ("7B", "fc2 weight", "weight", 4096, 11008),
    ("70B", "layer input (hidden 8192)", "activation", TOKENS, 8192),
    ("70B", "qkv weight (GQA)", "weight", 10240, 8192),
    ("70B", "fc1 weight (gate+up)", "weight", 57344, 8192),
    ("70B", "fc2 weight", "weight", 8192, 28672),
]


def spec_for(recipe, kind):
    if recipe == "current":
        return sh.QuantSpec("current")
    return sh.QuantSpec("blockwise", block=(1, 128) if kind == "activation" else (128, 128),
                        amax_clamp=1e-4)


def timed(fn, iters, warmup=3):
    times = []
    for i in range(warmup + iters):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench_case(comm, model, tensor, kind, rows, cols, recipe, iters):
    counts = sh.split(rows, comm.size)
    spec = spec_for(recipe, kind)
    g = torch.Generator(device="cuda").manual_seed(rows * 31 + cols)
    w = sh.row_window((rows, cols), counts, comm.rank)
    local = torch.randn((w.rows, cols), generator=g, device="cuda", dtype=torch.bfloat16)
    fp8_local = torch.zeros((w.rows, cols), dtype=torch.uint8, device="cuda")
    grid = sh.grid_shape((rows, cols), spec.block_shape((rows, cols)))
    bits = torch.zeros(grid[0] * grid[1], dtype=torch.int32, device="cuda")

    def bf16_path():
        full = sh.gather_rows(comm, BE, local, counts)
        return sh.quantize_whole(BE, full, spec)

    def fp8_path():
        return sh.shard_and_gather(comm, BE, local, (rows, cols), counts, spec, 0)

    a, b = bf16_path(), fp8_path()
    same = bool(torch.equal(a.data, b.data)) and bool(torch.equal(
        a.scale_inv.contiguous().view(torch.int32), b.scale_inv.contiguous().view(torch.int32)))
    del a, b
    result = {
        "model": model, "tensor": tensor, "kind": kind, "shape": [rows, cols], "recipe": recipe,
        "fp8_equals_bf16_path": same,
        "bytes_bf16_gather": max(counts) * cols * 2,
        "bytes_fp8_gather": max(counts) * cols,
        "bytes_amax_reduce": grid[0] * grid[1] * 4,
        "ms_bf16_path": timed(bf16_path, iters),
        "ms_fp8_path": timed(fp8_path, iters),
        "ms_bf16_gather": timed(lambda: sh.gather_rows(comm, BE, local, counts), iters),
        "ms_fp8_gather": timed(lambda: sh.gather_rows(comm, BE, fp8_local, counts), iters),
        "ms_amax_reduce": timed(lambda: comm.all_reduce_max(bits), iters),
    }
    full = torch.randn((rows, cols), generator=g, device="cuda", dtype=torch.bfloat16)
    result["ms_quantize_whole"] = timed(lambda: sh.quantize_whole(BE, full, spec), iters)
    result["ms_quantize_shard"] = timed(lambda: sh.quantize_shard(BE, local, w, (rows, cols), spec), iters)
    del full
    for key in ("bf16_gather", "fp8_gather"):
        ms = result["ms_" + key]
        # bus bandwidth of an all-gather: (n-1)/n of the gathered bytes per rank-time
        total = result["bytes_" + key] * comm.size
        result["busbw_GBps_" + key.split("_")[0]] = total * (comm.size - 1) / comm.size / ms / 1e6
    torch.cuda.empty_cache()
    return result


def markdown(report):
    lines = ["# FP8 all-gather against BF16 all-gather + quantization", ""]
    lines += dist_common.environment_markdown(report["environment"])
    lines += [f"Row shards over {report['environment']['gpus']} GPUs, {TOKENS} tokens; "
              "times: median ms on rank 0 (CUDA events). Quantization: eager-PyTorch reference "
              "(same code both paths).", "",
              "| model | tensor | shape | recipe | bytes sent BF16 / FP8 (+amax) | BF16 AG | FP8 AG "
              "| amax AR | quantize whole / shard | BF16 AG + quantize | quantize shard + amax AR + FP8 AG "
              "| speed-up | same FP8 |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["cases"]:
        lines.append(
            f"| {r['model']} | {r['tensor']} | {r['shape'][0]}x{r['shape'][1]} | {r['recipe']} "
            f"| {r['bytes_bf16_gather'] / 2**20:.1f} / {r['bytes_fp8_gather'] / 2**20:.1f} MiB "
            f"(+{r['bytes_amax_reduce']} B) | {r['ms_bf16_gather']:.3f} | {r['ms_fp8_gather']:.3f} "
            f"| {r['ms_amax_reduce']:.3f} | {r['ms_quantize_whole']:.3f} / {r['ms_quantize_shard']:.3f} "
            f"| {r['ms_bf16_path']:.3f} | {r['ms_fp8_path']:.3f} "
            f"| {r['ms_bf16_path'] / r['ms_fp8_path']:.2f}x | {'yes' if r['fp8_equals_bf16_path'] else 'NO'} |")
    lines += ["", "Bus bandwidth of the all-gathers (GB/s): "
              + ", ".join(f"{r['model']} {r['tensor']}: BF16 {r['busbw_GBps_bf16']:.0f}, "
                          f"FP8 {r['busbw_GBps_fp8']:.0f}" for r in report["cases"]
                          if r["recipe"] == "current")]
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(dist_common.HERE / "results"))
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--recipes", default="current,blockwise")
    p.add_argument("--models", default="7B,70B")
    args = p.parse_args()
    comm = TorchCommunicator()
    cases = []
    for model, tensor, kind, rows, cols in SHAPES:
        if model not in args.models.split(","):
            continue
        for recipe in args.recipes.split(","):
            cases.append(bench_case(comm, model, tensor, kind, rows, cols, recipe, args.iters))
            if comm.rank == 0:
                c = cases[-1]
                print(f"{model} {tensor} {recipe}: BF16 path {c['ms_bf16_path']:.3f} ms, "
                      f"FP8 path {c['ms_fp8_path']:.3f} ms, gathers {c['ms_bf16_gather']:.3f} / "
                      f"{c['ms_fp8_gather']:.3f} ms, same FP8 {c['fp8_equals_bf16_path']}", flush=True)
    env = dist_common.environment(torch, dist)
    ok = all(c["fp8_equals_bf16_path"] for c in cases)
    if comm.rank == 0:
        report = {"environment": env, "tokens": TOKENS, "iters": args.iters, "cases": cases}
        dist_common.write_report(report, dist_common.report_path(args.out, "dist-speed", env), markdown)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
