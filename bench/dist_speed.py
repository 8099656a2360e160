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

Bytes: what one rank sends. Quantization runs on the project's kernels
(fp8mlir.distributed.kernels), launched the same way on both paths: the
bf16 path quantizes the gathered tensor (current scaling: the tensorwise
amax kernel, then the cast kernel, which derives the scale from the amax
in device memory; blockwise: the blockwise kernel); the fp8 path runs the
amax kernel on the shard, all-reduces those 4 bytes in place and runs the
same cast kernel (per tensor), or quantizes the block-aligned shard with
the blockwise kernel and gathers its codes and its scales in two
all-gathers (no amax all-reduce: no block spans two ranks; also timed
with both in one all-gather of each rank's packed bytes). "same FP8"
compares the gathered bytes and scales with the bf16 path's and, for
current scaling, with the public operator fp8mlir.quantize on the whole tensor. Host: the time the
host takes to issue a path (no synchronization inside): where it is close
to the path's GPU time, the path is bound by the host, not by the GPU.
``--reference`` times the eager-PyTorch reference quantization instead
(several kernels per call).
Needs FP8RT_LIBRARY and a kernel cache with ``fp8mlir.populate --suite
dist`` unless ``--reference``. Writes dist-speed-<n>x-<gpu>-<date>.{json,md}.
"""

import argparse
import statistics
import sys
import time

import dist_common

torch, dist = dist_common.init()

from fp8mlir.distributed import sharded as sh  # noqa: E402
from fp8mlir.distributed.backends import TorchBackend  # noqa: E402
from fp8mlir.distributed.comm import TorchCommunicator  # noqa: E402
from fp8mlir.testing import dist_cases as dc  # noqa: E402

BE = TorchBackend()
TOKENS, SHAPES, spec_for = dc.TOKENS, dc.SPEED_SHAPES, dc.speed_spec


class Reference:
    """The eager-PyTorch quantization with the interface of
    fp8mlir.distributed.kernels."""

    @staticmethod
    def quantize_whole(values, spec):
        return sh.quantize_whole(BE, values, spec)

    @staticmethod
    def shard_and_gather(comm, values, shape, counts, spec, dim):
        return sh.shard_and_gather(comm, BE, values, shape, counts, spec, dim)

    @staticmethod
    def quantize_window(comm, values, window, windows, shape, spec):
        return sh.quantize_shard(BE, values, window, shape, spec, comm)


def timed(fn, iters, warmup=3, host=None):
    """Median GPU ms of fn (CUDA events); with a ``host`` list, the median
    host ms to issue it is appended there."""
    times, issue = [], []
    for i in range(warmup + iters):
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
            issue.append((t1 - t0) * 1e3)
    if host is not None:
        host.append(statistics.median(issue))
    return statistics.median(times)


def gpu_ops(fn):
    """The GPU operations (kernels, copies, NCCL kernels) one call of fn
    runs, from the profiler (None where it cannot say)."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sum(1 for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA)
    except Exception:  # noqa: BLE001 - a profiler without CUDA activities
        return None


def same_quantized(a, b):
    return bool(torch.equal(a.data, b.data)) and bool(torch.equal(
        a.scale_inv.contiguous().view(torch.int32), b.scale_inv.contiguous().view(torch.int32)))


def bench_case(comm, q, model, tensor, kind, rows, cols, recipe, iters):
    counts = sh.split(rows, comm.size)
    spec = spec_for(recipe, kind)
    g = torch.Generator(device="cuda").manual_seed(rows * 31 + cols)
    w = sh.row_window((rows, cols), counts, comm.rank)
    local = torch.randn((w.rows, cols), generator=g, device="cuda", dtype=torch.bfloat16)
    fp8_local = torch.zeros((w.rows, cols), dtype=torch.uint8, device="cuda")
    grid = sh.grid_shape((rows, cols), spec.block_shape((rows, cols)))
    bits = torch.zeros(grid[0] * grid[1], dtype=torch.int32, device="cuda")
    windows = [sh.row_window((rows, cols), counts, r) for r in range(comm.size)]
    # the kernels' blockwise path gathers the shard's scales, not an amax grid
    kernel_blocks = q is not Reference and spec.block != "tensor"
    if kernel_blocks:  # this rank's scale grid and every rank's grid rows
        grid_counts = [-(-c // spec.block[0]) for c in counts]
        scales = torch.zeros((grid_counts[comm.rank], grid[1]), device="cuda")
        small_collective = lambda: sh.gather_rows(comm, BE, scales, grid_counts)  # noqa: E731
    else:
        small_collective = lambda: comm.all_reduce_max(bits)  # noqa: E731

    def bf16_path():
        full = sh.gather_rows(comm, BE, local, counts)
        return q.quantize_whole(full, spec)

    def fp8_path():
        return q.shard_and_gather(comm, local, (rows, cols), counts, spec, 0)

    a, b = bf16_path(), fp8_path()
    same = same_quantized(a, b)
    operator = getattr(q, "quantize_operator", None)
    if operator is not None:  # a second instance of the kernels, through fp8mlir.quantize
        c = operator(sh.gather_rows(comm, BE, local, counts), spec)
        same = same and (c is None or same_quantized(a, c))
        del c
    del a, b
    host = []
    result = {
        "model": model, "tensor": tensor, "kind": kind, "shape": [rows, cols], "recipe": recipe,
        "fp8_equals_bf16_path": same,
        "bytes_bf16_gather": max(counts) * cols * 2,
        "bytes_fp8_gather": max(counts) * cols,
        "bytes_amax_reduce": 0 if kernel_blocks else grid[0] * grid[1] * 4,
        "bytes_scale_gather": max(grid_counts) * grid[1] * 4 if kernel_blocks else 0,
        "ms_bf16_path": timed(bf16_path, iters, host=host),
        "ms_fp8_path": timed(fp8_path, iters, host=host),
        "ms_bf16_gather": timed(lambda: sh.gather_rows(comm, BE, local, counts), iters),
        "ms_fp8_gather": timed(lambda: sh.gather_rows(comm, BE, fp8_local, counts), iters),
        "ms_amax_reduce": timed(small_collective, iters),
    }
    result["host_ms_bf16_path"], result["host_ms_fp8_path"] = host
    result["gpu_ops_bf16_path"], result["gpu_ops_fp8_path"] = gpu_ops(bf16_path), gpu_ops(fp8_path)
    if kernel_blocks:  # the codes and the scales gathered the other way (packed or two)
        default = q.PACKED_GATHER
        q.PACKED_GATHER = not default
        try:
            key = "ms_fp8_path_two_gathers" if default else "ms_fp8_path_packed_gather"
            result[key] = timed(fp8_path, iters)
        finally:
            q.PACKED_GATHER = default
    full = torch.randn((rows, cols), generator=g, device="cuda", dtype=torch.bfloat16)
    result["ms_quantize_whole"] = timed(lambda: q.quantize_whole(full, spec), iters)
    result["ms_quantize_shard"] = timed(
        lambda: q.quantize_window(None, local, w, windows, (rows, cols), spec), iters)
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
              f"times: median ms on rank 0 (CUDA events). Quantization: {report['quantization']} "
              "(same code both paths). amax AR: the amax all-reduce, or on the kernels' "
              "blockwise path (no block spans two ranks) the all-gather of the scales. "
              "Host: ms the host takes to issue each path (a path whose GPU time is "
              "close to it is bound by the host). The kernels' blockwise FP8 path gathers "
              "the codes and the scales in two all-gathers (fp8mlir.distributed.kernels."
              "PACKED_GATHER False, the default) or in one of each rank's packed bytes; "
              "the column after the speed-up times the other form. "
              "GPU ops: kernels, copies and NCCL kernels of one call (profiler).", "",
              "| model | tensor | shape | recipe | bytes sent BF16 / FP8 (+amax or scales) | BF16 AG | FP8 AG "
              "| amax AR | quantize whole / shard | BF16 AG + quantize | quantize shard + amax AR + FP8 AG "
              "| speed-up | FP8 path, the other gather form | GPU ops BF16 / FP8 path "
              "| host BF16 / FP8 path | same FP8 |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["cases"]:
        lines.append(
            f"| {r['model']} | {r['tensor']} | {r['shape'][0]}x{r['shape'][1]} | {r['recipe']} "
            f"| {r['bytes_bf16_gather'] / 2**20:.1f} / {r['bytes_fp8_gather'] / 2**20:.1f} MiB "
            f"(+{r['bytes_amax_reduce'] + r.get('bytes_scale_gather', 0)} B) | {r['ms_bf16_gather']:.3f} | {r['ms_fp8_gather']:.3f} "
            f"| {r['ms_amax_reduce']:.3f} | {r['ms_quantize_whole']:.3f} / {r['ms_quantize_shard']:.3f} "
            f"| {r['ms_bf16_path']:.3f} | {r['ms_fp8_path']:.3f} "
            f"| {r['ms_bf16_path'] / r['ms_fp8_path']:.2f}x "
            f"| {_other_form(r)} | {r.get('gpu_ops_bf16_path')} / {r.get('gpu_ops_fp8_path')} "
            f"| {r.get('host_ms_bf16_path', float('nan')):.3f} / "
            f"{r.get('host_ms_fp8_path', float('nan')):.3f} "
            f"| {'yes' if r['fp8_equals_bf16_path'] else 'NO'} |")
    lines += ["", "Bus bandwidth of the all-gathers (GB/s): "
              + ", ".join(f"{r['model']} {r['tensor']}: BF16 {r['busbw_GBps_bf16']:.0f}, "
                          f"FP8 {r['busbw_GBps_fp8']:.0f}" for r in report["cases"]
                          if r["recipe"] == "current")]
    return lines


def _other_form(r):
    """The FP8 path's time with the other form of the blockwise gather."""
    for key, form in (("ms_fp8_path_two_gathers", "two"), ("ms_fp8_path_packed_gather", "packed")):
        if r.get(key) is not None:
            return f"{r[key]:.3f} ({form})"
    return "-"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(dist_common.HERE / "results"))
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--recipes", default="current,blockwise")
    p.add_argument("--models", default="7B,70B")
    p.add_argument("--reference", action="store_true",
                   help="the eager-PyTorch reference quantization instead of the project's kernels")
    args = p.parse_args()
    comm = TorchCommunicator()
    if args.reference:
        q = Reference
    else:
        from fp8mlir.distributed import kernels as q
    cases = []
    for model, tensor, kind, rows, cols in SHAPES:
        if model not in args.models.split(","):
            continue
        for recipe in args.recipes.split(","):
            cases.append(bench_case(comm, q, model, tensor, kind, rows, cols, recipe, args.iters))
            if comm.rank == 0:
                c = cases[-1]
                print(f"{model} {tensor} {recipe}: BF16 path {c['ms_bf16_path']:.3f} ms, "
                      f"FP8 path {c['ms_fp8_path']:.3f} ms, gathers {c['ms_bf16_gather']:.3f} / "
                      f"{c['ms_fp8_gather']:.3f} ms, same FP8 {c['fp8_equals_bf16_path']}", flush=True)
    env = dist_common.environment(torch, dist)
    ok = all(c["fp8_equals_bf16_path"] for c in cases)
    if comm.rank == 0:
        report = {"environment": env, "tokens": TOKENS, "iters": args.iters, "cases": cases,
                  "quantization": "eager-PyTorch reference" if args.reference else
                  "the project's kernels (fp8mlir.quantize)",
                  "kernel_usage": [] if args.reference else q.usage_lines()}
        dist_common.write_report(report, dist_common.report_path(args.out, "dist-speed", env), markdown)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
