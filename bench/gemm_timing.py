"""Sustained timing and rooflines for bench_gemm.py.

Kernel-only timing (do_bench medians of short bursts) and sustained timing
(power_ceiling.py's method: back-to-back calls for some seconds, so the
clock settles at the power limit) measure different things; the report keeps
them in separate tables and never divides one by the other.

The roofline of a shape is the larger of two times: its FLOPs at the dense
FP8 peak at the GPU's maximum SM clock, and the bytes it must move (A, B and
their scales read once, D written once) at the bandwidth of a device-to-
device copy measured in the same run. A shape whose byte time is larger is
memory-bound ("HBM"), and its fraction of the roofline is its achieved
bandwidth over the copy's. A memory-bound shape is also placed against a
copy of its own byte count timed like the GEMM (same_bytes_copy_ms): a
small weight's time holds the launch's ramp and the memory latency that a
1 GiB copy amortizes, and that copy shows how much of them a kernel of
that size can hide.
"""

import subprocess
import time

import torch

from power_ceiling import FMA_PER_CLOCK_PER_SM, sustained

COPY_BYTES = 1 << 30  # each of source and destination
FALLBACK_SM_CLOCK_MHZ = 1980.0


def max_sm_clock_mhz():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.max.sm",
                              "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30, check=True)
        return float(out.stdout.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return FALLBACK_SM_CLOCK_MHZ


def copy_bandwidth(warmup=25, rep=200):
    """Bytes read + written per second of a device-to-device copy of 1 GiB
    (median of do_bench)."""
    from triton.testing import do_bench
    buffers = [torch.empty(COPY_BYTES, dtype=torch.uint8, device="cuda") for _ in range(2)]
    buffers[0].random_()
    ms = do_bench(lambda: buffers[1].copy_(buffers[0]), warmup=warmup, rep=rep,
                  return_mode="median")
    buffers.clear()
    torch.cuda.empty_cache()
    return 2 * COPY_BYTES / (ms * 1e-3)


def machine_rooflines(sms):
    """{'copy_bytes_per_s', 'fp8_peak_flops', 'max_sm_clock_mhz'} of this GPU."""
    clock = max_sm_clock_mhz()
    return {"copy_bytes_per_s": copy_bandwidth(), "max_sm_clock_mhz": clock,
            "fp8_peak_flops": 2.0 * FMA_PER_CLOCK_PER_SM * sms * clock * 1e6}


def gemm_bytes(case):
    """The fewest bytes the GEMM moves: FP8 A and B, their f32 scales, bf16 D."""
    s = case.sets[0]
    scales = s.a_scale_inv.numel() + s.b_scale_inv.numel()
    return case.m * case.k + case.n * case.k + 4 * scales + 2 * case.m * case.n


def same_bytes_copy_ms(nbytes, count, rep_ms):
    """Kernel-only time (ms) of a device-to-device copy moving `nbytes`
    (half read, half written), timed as queued_ms times a GEMM: `count`
    sources and destinations rotating, so every copy reads from memory."""
    half = max(nbytes // 2, 1)
    sources = [torch.empty(half, dtype=torch.uint8, device="cuda").random_()
               for _ in range(count)]
    targets = [torch.empty_like(t) for t in sources]
    try:
        return queued_ms(lambda i: targets[i].copy_(sources[i]), count, rep_ms)
    finally:
        sources.clear()
        targets.clear()
        torch.cuda.empty_cache()


def same_bytes_copy(nbytes, count, rep_ms):
    """{'copy_us': ...} of same_bytes_copy_ms, or {'copy_error': why} when
    the host could not queue the copies or their buffers did not fit."""
    try:
        return {"copy_us": same_bytes_copy_ms(nbytes, count, rep_ms) * 1e3}
    except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
        return {"copy_error": f"{type(e).__name__}: {e}"}


def same_bytes_copy_roofline(roof, case, rep_ms):
    """Adds to an HBM-bound roofline `roof` the time (same_bytes_copy) and
    the TFLOP/s of the case's FLOPs at the time of a copy of its bytes."""
    if roof.get("bound") != "HBM":
        return
    roof.update(same_bytes_copy(roof["bytes"], case.count, rep_ms))
    if "copy_us" in roof:
        roof["copy_tflops"] = case.flop / (roof["copy_us"] * 1e-6) / 1e12


def roofline(case, machine):
    """{'bound', 'bytes', 'roofline_tflops'} of the case on this machine."""
    nbytes = gemm_bytes(case)
    t_mem = nbytes / machine["copy_bytes_per_s"]
    t_fp8 = case.flop / machine["fp8_peak_flops"]
    return {"bound": "HBM" if t_mem > t_fp8 else "FP8", "bytes": nbytes,
            "roofline_tflops": case.flop / max(t_mem, t_fp8) / 1e12}


def time_sustained(calls, case, seconds, rest_s, sampler, first):
    """One pass over the implementations, starting at index `first`: each is
    called back to back for `seconds` after `rest_s` of idle GPU; its entry
    gets 'sustained' = {tflops, sm_clock_mhz, power_w, clock_event_reasons}
    (clock and power: the nvidia-smi samples after the first second)."""
    names = list(calls)
    ramp = min(1.0, seconds / 3)
    for name in names[first % len(names):] + names[:first % len(names)]:
        entry, call = calls[name]
        if entry["status"] != "ok":
            continue
        time.sleep(rest_s)
        try:
            tflops, start, end = sustained(call, case.count, case.flop, seconds)
        except Exception as e:  # noqa: BLE001 - report it, time the others
            entry["sustained"] = {"error": f"{type(e).__name__}: {e}"}
            continue
        stats = sampler.window(start + ramp, end) if sampler else None
        entry["sustained"] = {"tflops": tflops, **(stats or {})}


MAX_QUEUED_CALLS = 1000  # launches the host queues behind one spin


def queued_ms(call, count, rep_ms):
    """Kernel-only time per call (ms): calls of `call(i)`, i rotating over
    the `count` input copies, queued behind a GPU spin so the GPU runs them
    back to back, never waiting on the host, with no cache flush between
    them (the rotation over copies larger than the L2 makes every call read
    its inputs from memory). Enough calls for about `rep_ms` of GPU time (at
    least 3 per copy, at most MAX_QUEUED_CALLS); launch_timing.queued checks
    that the host queued them all before the spin ended."""
    from launch_timing import estimate_ms, queued
    per_call = max(estimate_ms(torch, call, count), 1e-4)
    calls = min(MAX_QUEUED_CALLS, max(3 * count, int(rep_ms / per_call)))
    result = queued(torch, call, calls, count)
    if result is None:
        raise RuntimeError("the host could not queue the calls ahead of the GPU")
    return result["gpu_us"] * 1e-3
