#!/usr/bin/env python3
"""Host cost per call of fp8mlir.scaled_mm against torch's scaled GEMMs, and
small-shape GEMM times, kernel-only and synchronous (see bench/README.md,
"Launch overhead"; the timing methods are bench/launch_timing.py).

    python3 bench/launch_overhead.py [--out bench/results] [--calls 2000]
        [--rounds 9] [--launch-bench PATH/fp8rt-launch-bench] [--quick]
    python3 bench/launch_overhead.py --render REPORT.json

Kernels come from the kernel cache ($FP8MLIR_KERNEL_CACHE, filled by
python/tests/test_gpu.py --populate); python/tests/run_gpu.sh runs this.
Writes OUT/launch-<gpu>-<date>.{json,md}.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "python"))

import report_util as ru  # noqa: E402
import launch_legacy  # noqa: E402
import launch_timing as lt  # noqa: E402
from fp8mlir.ops import evaluate_extent  # noqa: E402
from fp8mlir.testing import torch_ops_cases as cases  # noqa: E402

SMALL_M = (1, 2, 4, 8, 16, 32, 64, 128, 256)
M, N, K = cases.OVERHEAD_M, cases.OVERHEAD_N, cases.OVERHEAD_K
GRAPH_CALLS = 100  # calls captured in one CUDA graph
GPU_CALLS = 500  # calls per GPU-time measurement (well inside the launch queue)
TARGET_CALL_US, TARGET_C_LAUNCH_US = 15.0, 5.0
OURS, OP, EMPTY, OUT = ("fp8mlir.scaled_mm", "torch.ops.fp8mlir.scaled_mm",
                        "torch.empty (the output)", "fp8mlir.scaled_mm(out=)")
METHOD = (
    f"Host time per call: time.perf_counter around N back-to-back calls of one "
    f"implementation ([{M}, {K}] x [{K}, {N}], bf16 out; the weight's w.t() view made "
    f"once), divided by N. Every implementation of every recipe is sampled once per "
    f"round, rounds interleaved in one process after a warm-up of 2 s of all of them "
    f"(so a drift of the host or of the GPU's clocks over time moves all alike); the "
    f"table gives the median of the rounds and their range. Host-bound check: the "
    f"same calls are also timed with the GPU held back ({GPU_CALLS} calls queued "
    f"behind a GPU spin, so the host cannot wait on them; checked that the host "
    f"queued them all before the spin ended; median of 3), which also gives the GPU "
    f"time per call (the GPU then runs them back to back), and after each sample the "
    f"time the GPU still needed to finish (drain) is measured. A row is host-bound "
    f"when its host time is within {lt.HELD_TOLERANCE}x (+1 us) of the held-back "
    f"host time, its GPU time is below its host time and no drain exceeded "
    f"{lt.DRAIN_LIMIT_US:.0f} us: the host never waited on the GPU. "
    f"GPU idle = 1 - GPU time / host time. CUDA graphs: "
    f"{GRAPH_CALLS} calls captured in one graph; host time per replay / "
    f"{GRAPH_CALLS} and GPU time per call (events around the replays, which the GPU "
    f"runs back to back). Small shapes: kernel-only = GPU time per call of "
    f"back-to-back calls queued behind a GPU spin (checked: the host queued them all "
    f"before the spin ended), weights rotating over copies larger than 2x L2; it "
    f"includes any copy the call makes (ours: 1x128 scales of M % 4 != 0 are padded "
    f"into the kernel's layout). Synchronous = perf_counter around one call and "
    f"torch.cuda.synchronize(), median of R, ours and torch's alternating call by "
    f"call. torch's blockwise GEMM takes 1x128 scales only for M % 4 == 0: it runs on "
    f"A and scales padded to a multiple of 4 rows beforehand (not timed). The two "
    f"measures are separate columns and never mixed in a ratio.")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000, help="calls per host-time sample")
    p.add_argument("--rounds", type=int, default=9, help="host-time samples per implementation")
    p.add_argument("--launch-bench", type=Path, help="fp8rt-launch-bench (the C figure)")
    p.add_argument("--quick", action="store_true", help="fewer shapes and repeats")
    return ru.parse_arguments(p, argv, HERE / "results")


# --- operands -----------------------------------------------------------------

class Gemm:
    """FP8 operands of one recipe and shape, ours and the torch peer's calls
    (b is the [K, N] view w.t() of a row-major [N, K] weight, made once)."""

    def __init__(self, torch, recipe, m, n, k, copies=1):
        import fp8mlir
        self.torch, self.recipe, self.m, self.n, self.k = torch, recipe, m, n, k
        gen = torch.Generator(device="cuda").manual_seed(m * 7 + n + k)
        fp8 = torch.float8_e4m3fn
        self.a = torch.randn(m, k, device="cuda", generator=gen).to(fp8)
        self.bs = [torch.randn(n, k, device="cuda", generator=gen).to(fp8).t()
                   for _ in range(copies)]
        kb, nb = -(-k // 128), -(-n // 128)
        if recipe == "tensorwise":
            self.sa, self.sb = (torch.ones((), device="cuda") for _ in range(2))
        elif recipe == "rowwise":
            self.sa = torch.rand(m, 1, device="cuda", generator=gen) + 0.5
            self.sb = torch.rand(1, n, device="cuda", generator=gen) + 0.5
        else:
            self.sa = (torch.rand(kb, m, device="cuda", generator=gen) + 0.5).t()
            self.sb = (torch.rand(nb, kb, device="cuda", generator=gen) + 0.5).t()
        self.out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        self.op = torch.ops.fp8mlir.scaled_mm.default
        self.scaled_mm = fp8mlir.scaled_mm
        self.peer_a, self.peer_sa = self.a, self.sa
        if recipe == "blockwise" and m % 4:  # cuBLASLt's 1x128 scales need M % 4 == 0
            mp = -(-m // 4) * 4
            self.peer_a = torch.cat([self.a.view(torch.uint8), torch.zeros(
                mp - m, k, dtype=torch.uint8, device="cuda")]).view(fp8)
            self.peer_sa = torch.cat([self.sa, torch.ones(mp - m, kb, device="cuda")]
                                     ).t().contiguous().t()
        self.peer_name = "torch._scaled_mm" if recipe != "blockwise" else "F.scaled_mm"
        if recipe == "blockwise":  # imported once: the timed call is the call
            from torch.nn.functional import ScalingType, SwizzleType, scaled_mm
            self.blockwise = (scaled_mm, ScalingType.BlockWise1x128,
                              ScalingType.BlockWise128x128, SwizzleType.NO_SWIZZLE)

    def ours(self, i=0):
        return self.scaled_mm(self.a, self.bs[i], self.sa, self.sb)

    def ours_op(self, i=0):
        return self.op(self.a, self.bs[i], self.sa, self.sb, None, None, "auto", "fast")

    def ours_out(self, i=0):
        return self.scaled_mm(self.a, self.bs[i], self.sa, self.sb, out=self.out)

    def empty(self, i=0):
        return self.torch.empty((self.m, self.n), device="cuda", dtype=self.torch.bfloat16)

    def peer(self, i=0):
        torch = self.torch
        if self.recipe != "blockwise":
            return torch._scaled_mm(self.a, self.bs[i], self.sa, self.sb,
                                    out_dtype=torch.bfloat16, use_fast_accum=True)
        scaled_mm, block_1x128, block_128x128, no_swizzle = self.blockwise
        return scaled_mm(self.peer_a, self.bs[i], self.peer_sa, block_1x128, self.sb,
                         block_128x128, swizzle_a=no_swizzle, swizzle_b=no_swizzle,
                         output_dtype=torch.bfloat16)


# --- the measurements -----------------------------------------------------------------

def overhead(torch, args):
    """The host-time table and the 'now' breakdown (one interleaved run),
    the GPU time per call of each row, and the CUDA-graph table."""
    gemms = {r: Gemm(torch, r, M, N, K) for r in cases.BENCH_RECIPES}
    fns = {}
    for recipe, g in gemms.items():
        for name, fn in ((OURS, g.ours), (OP, g.ours_op), (g.peer_name, g.peer),
                         (OUT, g.ours_out), (EMPTY, g.empty)):
            fns[(recipe, name)] = fn
    samples = lt.interleaved(torch, fns, args.calls, args.rounds,
                             probe=lt.sm_clock_probe(torch))
    rows = []
    for (recipe, name), values in samples.items():
        row = {"recipe": recipe, "impl": name, **lt.summarize(values),
               "samples": [list(v) for v in values]}
        if name != EMPTY:
            held = held_back(torch, fns[(recipe, name)])
            row["gpu_us"] = None if held is None else held["gpu_us"]
            row["held_host_us"] = None if held is None else held["host_us"]
            row["host_bound"] = lt.host_bound(row["host_us"], row["drain_max_us"], held)
        rows.append(row)
    graph_rows = []
    for recipe, g in gemms.items():
        for name, fn in ((OURS, g.ours), (g.peer_name, g.peer)):
            host, gpu = graph_time(torch, fn)
            graph_rows.append({"recipe": recipe, "impl": name, "host_us": host, "gpu_us": gpu})
    return rows, graph_rows


def held_back(torch, fn, repeats=3):
    """queued() of GPU_CALLS calls, the median of `repeats` by host time
    (None if one is invalid)."""
    results = [lt.queued(torch, lambda i: fn(), GPU_CALLS) for _ in range(repeats)]
    if any(r is None for r in results):
        return None
    return sorted(results, key=lambda r: r["host_us"])[len(results) // 2]


def graph_time(torch, fn, replays=20):
    """(host us per captured call, GPU us per call) of GRAPH_CALLS calls in
    one CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(GRAPH_CALLS):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    for _ in range(replays):
        graph.replay()
    host_s = time.perf_counter() - t0
    end.record()
    torch.cuda.synchronize()
    calls = replays * GRAPH_CALLS
    return host_s / calls * 1e6, start.elapsed_time(end) / calls * 1e3


def legacy(torch, args):
    """The pieces of the ctypes path this package used to take
    (launch_legacy), interleaved like the main table (fewer rounds)."""
    fns = {}
    for recipe in cases.BENCH_RECIPES:
        g = Gemm(torch, recipe, M, N, K)
        for name, fn in launch_legacy.pieces(torch, g.a, g.bs[0], g.sa, g.sb, recipe).items():
            fns[(recipe, name)] = fn
    samples = lt.interleaved(torch, fns, max(args.calls // 4, 50), 3, warmup_s=0.3)
    out = {}
    for (recipe, name), values in samples.items():
        out.setdefault(recipe, {})[name] = lt.summarize(values)["host_us"]
    return out


def c_launch(args):
    """fp8rt-launch-bench on the rowwise overhead GEMM's kernel."""
    if not args.launch_bench or not args.launch_bench.is_file():
        return {"error": f"no fp8rt-launch-bench at {args.launch_bench}"}
    from fp8mlir._torch_ops import kernels_for
    (kernel,) = kernels_for(cases.bench_gemm("rowwise", N, K), 0)
    operands = []
    for op in kernel.meta["operands"]:
        shape = "x".join(str(evaluate_extent(e, {"M": M})) for e in op["shape"])
        operands.append(f"{op['name']}=none" if op.get("optional") else
                        f"{op['name']}={op['dtype']}:{shape}")
    run = subprocess.run([str(args.launch_bench), str(kernel.path), *operands],
                         capture_output=True, text=True, timeout=300)
    if run.returncode:
        return {"error": run.stderr.strip() or run.stdout.strip()}
    result = json.loads(run.stdout.strip().splitlines()[-1])
    result["output"] = run.stdout
    return result


def small_shapes(torch, args, l2_bytes):
    rows = []
    ms = (1, 16, 128) if args.quick else SMALL_M
    shapes = cases.BENCH_SHAPES[:1] if args.quick else cases.BENCH_SHAPES
    repeats = 50 if args.quick else 200
    for n, k in shapes:
        copies = max(2, -(-2 * l2_bytes // (n * k)))
        for recipe in cases.BENCH_RECIPES:
            for m in ms:
                g = Gemm(torch, recipe, m, n, k, copies)
                rows.append(small_shape_row(torch, g, copies, repeats))
                del g
                torch.cuda.empty_cache()
    return rows


def small_shape_row(torch, g, copies, repeats):
    row = {"recipe": g.recipe, "m": g.m, "n": g.n, "k": g.k}
    fns = {}
    for name, fn in (("ours", g.ours), ("torch", g.peer)):
        try:  # a peer's API missing, a failed launch
            row[f"{name}_kernel_us"] = lt.queued_gpu_us(torch, fn, repeats, copies)
            fns[name] = fn
        except Exception as e:
            row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
    for name, us in lt.synchronous_us(torch, fns, copies, repeats).items():
        row[f"{name}_sync_us"] = us
    return row


def run(args, torch, env, now):
    import fp8mlir._torch_ops as ops
    report = {"environment": env, "method": METHOD, "extension": ops.EXTENSION is not None,
              "targets": {"call_us": TARGET_CALL_US, "c_launch_us": TARGET_C_LAUNCH_US},
              "calls": args.calls, "rounds": args.rounds}
    report["overhead"], report["graphs"] = overhead(torch, args)
    report["legacy"] = legacy(torch, args)
    report["c_launch"] = c_launch(args)
    props = torch.cuda.get_device_properties(0)
    report["small_shapes"] = small_shapes(torch, args,
                                          int(getattr(props, "L2_cache_size", 50 << 20)))
    report["verdict"] = verdict(report)
    path = ru.report_path(args.out, "launch", env, now)
    for written in ru.write_outputs(report, path, markdown, plot):
        print(f"wrote {written}")
    print(markdown(report))
    return 0 if all(report["verdict"].values()) else 1


def verdict(report):
    """The targets: fp8mlir.scaled_mm host-bound, <= 15 us and below the
    peer, per recipe; fp8rt_launch_ordered <= 5 us from C."""
    out = {}
    for recipe in cases.BENCH_RECIPES:
        rows = {r["impl"]: r for r in report["overhead"] if r["recipe"] == recipe}
        ours = rows[OURS]
        peer = next(r for name, r in rows.items() if name not in (OURS, OP, OUT, EMPTY))
        out[f"{recipe}: {OURS} <= {TARGET_CALL_US} us and < {peer['impl']}, "
            f"both host-bound"] = (ours["host_bound"] and peer["host_bound"]
                                   and ours["host_us"] <= TARGET_CALL_US
                                   and ours["host_us"] < peer["host_us"])
    c = report["c_launch"]
    if "ordered-moving" in c:
        out[f"C: fp8rt_launch_ordered <= {TARGET_C_LAUNCH_US} us"] = \
            c["ordered-moving"]["median_us"] <= TARGET_C_LAUNCH_US
    return out


# --- report ------------------------------------------------------------------------------

def markdown(report):
    f = ru.fmt
    lines = ["# Launch overhead of fp8mlir.scaled_mm", ""] + \
        ru.environment_lines(report["environment"]) + \
        [f"- C++ operators: {'loaded' if report['extension'] else 'NOT loaded (Python kernels)'}",
         "", "## Method", "", report["method"], "", "## Verdict", ""]
    lines += [f"- {'PASS' if ok else 'FAIL'}: {name}" for name, ok in report["verdict"].items()]
    lines += ["", f"## Host time per call, eager ([{M}, {K}] x [{K}, {N}], bf16 out; "
              f"{report.get('calls', '?')} calls per sample, {report.get('rounds', '?')} "
              f"interleaved rounds)", ""]
    main = [r for r in report["overhead"] if r["impl"] not in (OUT, EMPTY)]
    lines += ru.table(
        ["recipe", "implementation", "host us/call", "range", "GPU held back: host us/call",
         "GPU us/call", "GPU idle", "max drain us", "host-bound"],
        [[r["recipe"], r["impl"], f(r["host_us"], ".2f"),
          f"{f(r['host_min_us'], '.1f')}-{f(r['host_max_us'], '.1f')}",
          f(r.get("held_host_us"), ".2f"), f(r.get("gpu_us"), ".2f"), _idle(r),
          f(r["drain_max_us"], ".0f"), "yes" if r.get("host_bound") else "NO"]
         for r in main])
    clocks = [c for r in report["overhead"] for c in (r.get("probe_range") or [])]
    lines += ["", f"GPU SM clock after the samples: {min(clocks)}-{max(clocks)} MHz"
              if clocks else "GPU SM clock: not read (no NVML through torch.cuda.clock_rate)"]
    lines += ["", f"## Under CUDA graphs ({GRAPH_CALLS} calls per graph)", ""]
    lines += ru.table(["recipe", "implementation", "host us/call (replay)", "GPU us/call"],
                      [[r["recipe"], r["impl"], f(r["host_us"], ".3f"), f(r["gpu_us"], ".2f")]
                       for r in report["graphs"]])
    lines += ["", "## Breakdown (host us per call)", ""]
    for recipe in cases.BENCH_RECIPES:
        now = {r["impl"]: r["host_us"] for r in report["overhead"] if r["recipe"] == recipe}
        before = report.get("legacy", {}).get(recipe, {})
        lines += [f"### {recipe}", ""] + ru.table(
            ["path", "piece", "us"],
            [["before (ctypes)", k, f(v, ".2f")] for k, v in before.items()]
            + [["now", k, f(now.get(k), ".2f")] for k in (EMPTY, OUT, OP, OURS)]) + [""]
    lines += _c_launch_lines(report["c_launch"]) + _small_shape_lines(report["small_shapes"])
    return "\n".join(lines) + "\n"


def _idle(row):
    gpu = row.get("gpu_us")
    return "n/a" if gpu is None else f"{max(0.0, 1 - gpu / row['host_us']):.0%}"


def _c_launch_lines(c):
    lines = [f"## From C (fp8rt-launch-bench, rowwise kernel, M = {M})", ""]
    if "error" in c:
        return lines + [f"not measured: {c['error']}", ""]
    return lines + ru.table(["way", "median us/launch", "min us/launch"],
                            [[k, ru.fmt(v["median_us"], ".3f"), ru.fmt(v["min_us"], ".3f")]
                             for k, v in c.items() if isinstance(v, dict)]) + [""]


def _small_shape_lines(rows):
    f = ru.fmt
    lines = ["## Small shapes (bf16 out; kernel-only and synchronous are separate)", ""]
    lines += ru.table(
        ["recipe", "M", "N x K", "ours kernel us", "torch kernel us", "kernel speedup",
         "ours sync us", "torch sync us", "sync speedup"],
        [[r["recipe"], r["m"], f"{r['n']} x {r['k']}", f(r.get("ours_kernel_us"), ".2f"),
          f(r.get("torch_kernel_us"), ".2f"),
          f(_ratio(r, "torch_kernel_us", "ours_kernel_us"), ".2f"),
          f(r.get("ours_sync_us"), ".2f"), f(r.get("torch_sync_us"), ".2f"),
          f(_ratio(r, "torch_sync_us", "ours_sync_us"), ".2f")] for r in rows])
    errors = [r for r in rows if any(k.endswith("_error") for k in r)]
    if errors:
        lines += ["", "Errors:", ""] + [f"- {r['recipe']} M={r['m']} {r['n']}x{r['k']}: "
                                        f"{r.get('ours_error') or r.get('torch_error')}"
                                        for r in errors]
    return lines


def _ratio(row, numerator, denominator):
    a, b = row.get(numerator), row.get(denominator)
    return a / b if a and b else None


def plot(report, path):
    import matplotlib.pyplot as plt
    rows = [r for r in report["overhead"] if r["impl"] not in (OUT, EMPTY)]
    fig, ax = plt.subplots(figsize=(8, 4))
    labels = [f"{r['recipe']}\n{r['impl'].replace('fp8mlir.', '')}" for r in rows]
    ax.bar(range(len(rows)), [r["host_us"] for r in rows],
           yerr=[[r["host_us"] - r["host_min_us"] for r in rows],
                 [r["host_max_us"] - r["host_us"] for r in rows]])
    ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=45, ha="right")
    ax.axhline(TARGET_CALL_US, color="red", linewidth=0.8)
    ax.set_ylabel("host us per call (eager)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(ru.main(sys.argv[1:], parse_args, markdown, plot, run))
