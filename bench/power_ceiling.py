#!/usr/bin/env python3
"""Sustained FP8 GEMM throughput against the SM clock the power limit allows.

Large FP8 GEMMs on an H100/H200 run at the board's power limit: the SM clock
drops from 1980 MHz to about 1250-1550 MHz within a second, so TFLOP/s alone does
not say how close a kernel is to the tensor cores' limit. For each shape and
implementation this script calls the GEMM back to back for --seconds (same
inputs, rotating copies as in bench_gemm.py), samples the SM clock, power
and clock-event reasons with nvidia-smi every 100 ms, and reports

    utilization = TFLOP/s / (2 * 4096 * SMs * mean SM clock)

where 4096 is the dense FP8 multiply-adds per clock and SM of sm_90
(1979 TFLOP/s = 2 * 4096 * 132 * 1.83 GHz). The samples of the first
second (the clock's fall to the limit) are left out.

It also runs a wgmma-only kernel (unless --no-peak): two warpgroups per
SM issuing `wgmma.mma_async.m64n256k32.f32.e4m3.e4m3` from shared memory
filled with random bytes, no global memory traffic. Its TFLOP/s at the power
limit bounds what any FP8 GEMM on the GPU can reach. The kernel is
generated as CUDA with inline PTX (a diagnostic, not project code) and built
with nvcc -arch=sm_90a.

    PYTHONPATH=python python3 bench/power_ceiling.py --kernels out/ --out bench/results
    python3 bench/power_ceiling.py --render bench/results/ceiling-....json   # no GPU

Because sampled clocks only approximate the clock the tensor cores ran at
(the power limiter moves it within 100 ms), the report also gives each
kernel's TFLOP/s per MHz relative to the wgmma-only kernel's on the same GPU.
"""

import argparse
import datetime
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

FMA_PER_CLOCK_PER_SM = 4096  # dense FP8, sm_90
DEFAULT_SHAPES = "8192x8192x8192,4096x7168x16384,4096x4096x7168"
PEAK_IMPL = "wgmma only (no memory traffic)"


class ClockSampler:
    """nvidia-smi sampling of SM clock (MHz), power (W) and clock-event reasons."""

    QUERY = "timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active"

    def __init__(self, index, period_ms=100):
        self.samples = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "-i", str(index), f"--query-gpu={self.QUERY}",
             "--format=csv,noheader,nounits", f"-lms={period_ms}"],
            stdout=subprocess.PIPE, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            fields = [f.strip() for f in line.split(",")]
            try:
                when = datetime.datetime.strptime(fields[0], "%Y/%m/%d %H:%M:%S.%f")
                self.samples.append((when.timestamp(), float(fields[1]),
                                     float(fields[2]), int(fields[3], 16)))
            except (ValueError, IndexError):
                continue

    def window(self, start, end):
        rows = [s for s in self.samples if start <= s[0] <= end]
        if not rows:
            return None
        reasons = 0
        for r in rows:
            reasons |= r[3]
        return {"samples": len(rows),
                "sm_clock_mhz": sum(r[1] for r in rows) / len(rows),
                "power_w": sum(r[2] for r in rows) / len(rows),
                "clock_event_reasons": hex(reasons)}

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def utilization(tflops, clock_mhz, sms):
    peak = 2 * FMA_PER_CLOCK_PER_SM * sms * clock_mhz * 1e6 / 1e12
    return tflops / peak


def sustained(call, count, flop, seconds):
    """Calls back to back for `seconds`; returns (TFLOP/s, wall start, wall end).
    The host waits for the GPU once per batch of about 50 ms of calls, one
    batch behind, so that the GPU never idles between calls."""
    import torch
    from launch_timing import estimate_ms
    batch = max(count, int(50 / max(estimate_ms(torch, call, count), 1e-3)))
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    done = torch.cuda.Event()
    calls = 0
    start = time.time()
    begin.record()
    while time.time() - start < seconds:
        for _ in range(batch):
            call(calls % count)
            calls += 1
        done.synchronize()  # the previous batch; this one stays queued
        done.record()
    end.record()
    end.synchronize()
    ms = begin.elapsed_time(end) / calls
    return flop / ms / 1e9, start, time.time()


def peak_source(n=256):
    regs = n // 2
    operands = ", ".join(f"%{i}" for i in range(regs))
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    mma = (f'asm volatile("wgmma.mma_async.sync.aligned.m64n{n}k32.f32.e4m3.e4m3 '
           f'{{{operands}}}, %{regs}, %{regs + 1}, 1, 1, 1;\\n" : {outputs} : '
           f'"l"(da), "l"(db));')
    return r"""
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
constexpr int N = %N%;
constexpr int kSmem = 2 * 64 * 128 + N * 128;  // two 64x128 A tiles, one Nx128 B tile
// K-major, 128B swizzle (PTX ISA wgmma descriptor): start >> 4, SBO 1024 B >> 4.
__device__ __forceinline__ uint64_t desc(uint32_t addr) {
  return uint64_t((addr >> 4) & 0x3FFF) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}
__device__ __forceinline__ void mma(float *d, uint64_t da, uint64_t db) { %MMA% }
__global__ void __launch_bounds__(256, 1) peak(long long iters, const uint4 *src, float *out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  for (int i = threadIdx.x; i < kSmem / 16; i += blockDim.x)
    reinterpret_cast<uint4 *>(smem)[i] = src[i];
  __syncthreads();
  uint32_t base = uint32_t(__cvta_generic_to_shared(smem));
  uint32_t a = base + (threadIdx.x / 128) * 64 * 128, b = base + 2 * 64 * 128;
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) d[i] = 0.f;
  for (long long it = 0; it < iters; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int k = 0; k < 4; ++k) mma(d, desc(a + 32 * k), desc(b + 32 * k));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;\n" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  float s = 0.f;
  for (int i = 0; i < N / 2; ++i) s += d[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
static double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 3.0;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaFuncSetAttribute(peak, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  uint4 *src; float *out;
  cudaMalloc(&src, kSmem); cudaMalloc(&out, sms * 256 * sizeof(float));
  uint8_t *host = (uint8_t *)malloc(kSmem);
  uint32_t x = 12345;  // random finite e4m3 bytes (no 0x7F / 0xFF NaNs)
  for (int i = 0; i < kSmem; ++i) {
    x = x * 1664525u + 1013904223u;
    uint8_t v = x >> 24;
    host[i] = (v & 0x7F) == 0x7F ? v ^ 1 : v;
  }
  cudaMemcpy(src, host, kSmem, cudaMemcpyHostToDevice);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  long long iters = 20000;
  for (int rep = 0; rep < 2; ++rep) {  // a short run to size the timed one
    double start = now();
    cudaEventRecord(e0);
    peak<<<sms, 256, kSmem>>>(iters, src, out);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    if (cudaGetLastError() != cudaSuccess) { printf("error\n"); return 1; }
    if (rep == 1)
      printf("%.3f %.3f %.1f\n", start, now(), 2.0 * 128 * N * 128 * double(iters) * sms / ms / 1e9);
    iters = (long long)(iters * seconds * 1000 / ms);
  }
  return 0;
}
""".replace("%N%", str(n)).replace("%MMA%", mma)


def run_peak(seconds, workdir):
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    src, exe = Path(workdir) / "wgmma_peak.cu", Path(workdir) / "wgmma_peak"
    src.write_text(peak_source())
    subprocess.run([nvcc, "-gencode", "arch=compute_90a,code=sm_90a", "-O3", "-o",
                    str(exe), str(src)], check=True)
    out = subprocess.run([str(exe), str(seconds)], check=True, capture_output=True,
                         text=True).stdout.split()
    return float(out[2]), float(out[0]), float(out[1])


def markdown(report):
    env, rows = report["environment"], report["rows"]
    peak = next((r for r in rows if r["impl"] == PEAK_IMPL and r.get("sm_clock_mhz")), None)
    per_mhz = peak["tflops"] / peak["sm_clock_mhz"] if peak else None
    fmt = lambda v, spec: "n/a" if v is None else format(v, spec)  # noqa: E731
    lines = [f"# Sustained FP8 throughput at the power limit: {env['gpu']}", "",
             f"- driver {env['driver']}, torch {env['torch']}, date {env['date']}",
             f"- command: `{env['command']}`",
             f"- each implementation called back to back for {report['seconds']} s; SM clock "
             f"and power: mean of nvidia-smi samples (100 ms) after the first "
             f"{report['ramp_s']:.1f} s",
             f"- utilization = TFLOP/s / (2 x {report['fma_per_clock_per_sm']} x "
             f"{report['sms']} SMs x SM clock); per clock vs wgmma only = "
             f"(TFLOP/s / MHz) / (the wgmma-only kernel's TFLOP/s / MHz)", "",
             "| shape | recipe | implementation | TFLOP/s | SM clock (MHz) | power (W) "
             "| clock-event reasons | utilization | per clock vs wgmma only |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        clock = r.get("sm_clock_mhz")
        relative = r["tflops"] / clock / per_mhz if clock and per_mhz else None
        lines.append(f"| {r['shape']} | {r['recipe']} | {r['impl']} | {r['tflops']:.1f} | "
                     f"{fmt(clock, '.0f')} | {fmt(r.get('power_w'), '.0f')} | "
                     f"{r.get('clock_event_reasons', 'n/a')} | "
                     f"{fmt(r.get('utilization'), '.3f')} | {fmt(relative, '.3f')} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", type=Path, help="fp8-compile output directory")
    ap.add_argument("--shapes", default=DEFAULT_SHAPES)
    ap.add_argument("--recipes", default="tensorwise,blockwise")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--no-peak", action="store_true")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    ap.add_argument("--render", type=Path, help="rewrite the .md of this report's .json")
    args = ap.parse_args(argv)
    if args.render:
        args.render.with_suffix(".md").write_text(
            markdown(json.loads(args.render.read_text())))
        return 0

    sys.path.insert(0, str(HERE))
    import bench_gemm as bg  # also puts python/ on the path
    import torch
    now = datetime.datetime.now(datetime.timezone.utc)
    env = bg.environment(now)
    env["command"] = " ".join(["python3", "bench/power_ceiling.py", *(argv or sys.argv[1:])])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    specs = bg.load_kernel_specs(args.kernels)
    if specs:
        from fp8mlir._runtime import Kernel
    sampler = ClockSampler(torch.cuda.current_device())
    ramp = min(1.0, args.seconds / 3)
    rows = []

    def record(shape, recipe, impl, tflops, start, end):
        stats = sampler.window(start + ramp, end) or {}
        row = {"shape": shape, "recipe": recipe, "impl": impl, "tflops": tflops, **stats}
        if stats:
            row["utilization"] = utilization(tflops, stats["sm_clock_mhz"], sms)
        rows.append(row)
        print(f"{shape:>16} {recipe:10} {impl:30} {tflops:7.1f} TFLOP/s "
              f"{stats.get('sm_clock_mhz', 0):6.0f} MHz {stats.get('power_w', 0):5.0f} W "
              f"util {row.get('utilization', 0):.3f}", flush=True)

    try:
        time.sleep(1.0)
        if not args.no_peak:
            with tempfile.TemporaryDirectory() as tmp:
                tflops, start, end = run_peak(args.seconds, tmp)
            record("-", "-", PEAK_IMPL, tflops, start, end)
        for m, n, k in bg.parse_shapes(args.shapes):
            for recipe in args.recipes.split(","):
                chosen, _ = bg.pick_kernels(specs, m, n, k, recipe)
                spec = next(iter(chosen.values()), None)
                case = bg.Case(m, n, k, recipe, spec, 1234, bg.l2_bytes())
                # bench_gemm.py's peers but Triton, and fp8-mlir without clusters.
                impls = []
                for p in bg.PEERS[recipe]:
                    try:
                        if p != "triton":
                            impls.append((p, bg.peer_impl(p, case)))
                    except bg.Unavailable as e:
                        print(f"{p}: unavailable: {e}", flush=True)
                impls += [(impl, bg.project_impl(case, Kernel(s.json_path)))
                          for impl, s in chosen.items()
                          if bg.PROJECT_IMPLS[impl][1] == (1, 1)]
                for name, call in impls:
                    time.sleep(1.0)
                    record(f"{m}x{n}x{k}", recipe, name,
                           *sustained(call, case.count, case.flop, args.seconds))
                del case, impls
                torch.cuda.empty_cache()
    finally:
        sampler.stop()

    args.out.mkdir(parents=True, exist_ok=True)
    stem = "ceiling-" + bg.report_stem(env, now).removeprefix("gemm-")
    report = {"environment": env, "sms": sms, "seconds": args.seconds, "ramp_s": ramp,
              "fma_per_clock_per_sm": FMA_PER_CLOCK_PER_SM, "rows": rows}
    (args.out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / f"{stem}.md").write_text(markdown(report))
    print(f"wrote {args.out / stem}.{{json,md}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
