#!/usr/bin/env python3
"""Host cost per call of fp8mlir.scaled_mm against torch's scaled GEMMs, and
small-shape GEMM times, kernel-only and host-inclusive (see bench/README.md,
"Launch overhead").

    python3 bench/launch_overhead.py [--out bench/results] [--calls 2000]
        [--launch-bench PATH/fp8rt-launch-bench] [--quick]
    python3 bench/launch_overhead.py --render REPORT.json

Kernels come from the kernel cache ($FP8MLIR_KERNEL_CACHE, filled by
python/tests/test_gpu.py --populate); python/tests/run_gpu.sh runs this.
Writes OUT/launch-<gpu>-<date>.{json,md}.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "python"))

import report_util as ru  # noqa: E402
import launch_legacy  # noqa: E402
from fp8mlir.ops import evaluate_extent  # noqa: E402
from fp8mlir.testing import torch_ops_cases as cases  # noqa: E402

SMALL_M = (1, 2, 4, 8, 16, 32, 64, 128, 256)
OVERHEAD_M = 16  # the launch-overhead table's GEMM: [16, 512] x [512, 256]
GRAPH_CALLS = 100  # calls captured in one CUDA graph
TARGET_CALL_US, TARGET_C_LAUNCH_US = 15.0, 5.0
METHOD = (
    "Host time per call: time.perf_counter around N back-to-back calls (after a "
    "warm-up; kernels cached and loaded), divided by N; the GPU is not waited for "
    "inside the loop. The GEMM is small ([16, 512] x [512, 256]) so the GPU keeps "
    "up with the launches and the host never blocks on a full launch queue; the "
    "GPU time of the same calls (CUDA events) is reported beside it, and a row "
    "whose GPU time is not below its host time is flagged. Median of rounds that "
    "alternate the implementations. CUDA graphs: 100 calls captured in one graph; "
    "host time per replay / 100 and GPU time per call. Small shapes: kernel-only = "
    "CUDA events around R back-to-back calls queued behind a GPU spin "
    "(torch.cuda._sleep), so the GPU runs them without waiting for the host, "
    "divided by R, weights rotating over copies larger than 2x L2; host-inclusive "
    "= perf_counter around one call followed by torch.cuda.synchronize(), median "
    "of R. The two are separate columns and never mixed in a ratio.")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=2000, help="calls per host-time round")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--launch-bench", type=Path, help="fp8rt-launch-bench (the C figure)")
    p.add_argument("--quick", action="store_true", help="fewer shapes and repeats")
    return ru.parse_arguments(p, argv, HERE / "results")


# --- operands -----------------------------------------------------------------

class Gemm:
    """FP8 operands of one recipe and shape, ours and the torch peer's calls."""

    def __init__(self, torch, recipe, m, n, k, copies=1):
        import fp8mlir
        self.torch, self.recipe, self.m, self.n, self.k = torch, recipe, m, n, k
        gen = torch.Generator(device="cuda").manual_seed(m * 7 + n + k)
        fp8 = torch.float8_e4m3fn
        self.a = torch.randn(m, k, device="cuda", generator=gen).to(fp8)
        self.ws = [torch.randn(n, k, device="cuda", generator=gen).to(fp8)
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
        self.op = torch.ops.fp8mlir.scaled_mm.default
        self.scaled_mm = fp8mlir.scaled_mm
        self.peer_a, self.peer_sa = self.a, self.sa
        if recipe == "blockwise" and m % 4:  # cuBLASLt's 1x128 scales need M % 4 == 0
            mp = -(-m // 4) * 4
            self.peer_a = torch.cat([self.a.view(torch.uint8), torch.zeros(
                mp - m, k, dtype=torch.uint8, device="cuda")]).view(fp8)
            self.peer_sa = torch.cat([self.sa, torch.ones(mp - m, kb, device="cuda")]
                                     ).t().contiguous().t()

    def ours(self, i=0):
        return self.scaled_mm(self.a, self.ws[i].t(), self.sa, self.sb)

    def ours_op(self, i=0):
        return self.op(self.a, self.ws[i].t(), self.sa, self.sb, None, None, "auto", "fast")

    def peer(self, i=0):
        torch = self.torch
        if self.recipe != "blockwise":
            return torch._scaled_mm(self.a, self.ws[i].t(), self.sa, self.sb,
                                    out_dtype=torch.bfloat16, use_fast_accum=True)
        from torch.nn.functional import ScalingType, SwizzleType, scaled_mm
        return scaled_mm(self.peer_a, self.ws[i].t(), self.peer_sa, ScalingType.BlockWise1x128,
                         self.sb, ScalingType.BlockWise128x128,
                         swizzle_a=SwizzleType.NO_SWIZZLE, swizzle_b=SwizzleType.NO_SWIZZLE,
                         output_dtype=torch.bfloat16)


# --- timing ---------------------------------------------------------------------

def host_time(torch, fn, calls):
    """(host us per call, GPU us per call) of `calls` back-to-back calls."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    end.record()
    torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6, start.elapsed_time(end) / calls * 1e3


def median_rounds(torch, fns, calls, rounds):
    """{name: (host us, GPU us)} medians over rounds that rotate the order."""
    names = list(fns)
    for fn in fns.values():  # warm-up: kernels resolved and loaded
        for _ in range(20):
            fn()
    samples = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            samples[name].append(host_time(torch, fns[name], calls))
    return {name: (statistics.median(s[0] for s in v), statistics.median(s[1] for s in v))
            for name, v in samples.items()}


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
    host, gpu = host_time(torch, graph.replay, replays)
    return host / GRAPH_CALLS, gpu / GRAPH_CALLS


def kernel_only_us(torch, fn, copies, repeats):
    """Back-to-back calls queued behind a GPU spin: events / calls."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for i in range(copies):
        fn(i)
    torch.cuda.synchronize()
    torch.cuda._sleep(50_000_000)  # ~25-40 ms of spinning: every launch queues behind it
    start.record()
    for r in range(repeats):
        fn(r % copies)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / repeats * 1e3


def host_inclusive_us(torch, fn, copies, repeats):
    """Median of perf_counter around one call and a synchronize."""
    times = []
    for r in range(repeats):
        t0 = time.perf_counter()
        fn(r % copies)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


# --- the measurements -----------------------------------------------------------------

def overhead(torch, args):
    rows, graph_rows = [], []
    for recipe in cases.BENCH_RECIPES:
        g = Gemm(torch, recipe, OVERHEAD_M, cases.TEST_N, cases.TEST_K)
        peer = "torch._scaled_mm" if recipe != "blockwise" else "F.scaled_mm"
        fns = {"fp8mlir.scaled_mm": g.ours, "torch.ops.fp8mlir.scaled_mm": g.ours_op,
               peer: g.peer}
        for name, (host, gpu) in median_rounds(torch, fns, args.calls, args.rounds).items():
            rows.append({"recipe": recipe, "impl": name, "host_us": host, "gpu_us": gpu,
                         "queue_bound": gpu >= host})
        for name in ("fp8mlir.scaled_mm", peer):
            host, gpu = graph_time(torch, fns[name])
            graph_rows.append({"recipe": recipe, "impl": name, "host_us": host, "gpu_us": gpu})
    return rows, graph_rows


def breakdown(torch, args):
    """Where the host time of one call goes, before (the ctypes path this
    package used to run, reproduced by launch_legacy) and now."""
    out = {}
    for recipe in cases.BENCH_RECIPES:
        g = Gemm(torch, recipe, OVERHEAD_M, cases.TEST_N, cases.TEST_K)
        legacy = launch_legacy.pieces(torch, g.a, g.ws[0].t(), g.sa, g.sb, recipe)
        pieces = {name: median_rounds(torch, {name: fn}, args.calls, 1)[name][0]
                  for name, fn in legacy.items()}
        now = {"torch.empty (the output)": lambda: torch.empty(
                   (OVERHEAD_M, cases.TEST_N), device="cuda", dtype=torch.bfloat16),
               "torch.ops.fp8mlir.scaled_mm": g.ours_op,
               "fp8mlir.scaled_mm": g.ours}
        out[recipe] = {"before": pieces,
                       "now": {name: median_rounds(torch, {name: fn}, args.calls, 1)[name][0]
                               for name, fn in now.items()}}
    return out


def c_launch(args):
    """fp8rt-launch-bench on the rowwise overhead GEMM's kernel."""
    if not args.launch_bench or not args.launch_bench.is_file():
        return {"error": f"no fp8rt-launch-bench at {args.launch_bench}"}
    from fp8mlir._torch_ops import kernels_for
    (kernel,) = kernels_for(cases.bench_gemm("rowwise", cases.TEST_N, cases.TEST_K), 0)
    operands = []
    for op in kernel.meta["operands"]:
        shape = "x".join(str(evaluate_extent(e, {"M": OVERHEAD_M})) for e in op["shape"])
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
                row = {"recipe": recipe, "m": m, "n": n, "k": k}
                for name, fn in (("ours", g.ours), ("torch", g.peer)):
                    try:
                        row[f"{name}_kernel_us"] = kernel_only_us(torch, fn, copies, repeats)
                        row[f"{name}_host_inclusive_us"] = host_inclusive_us(
                            torch, fn, copies, repeats)
                    except Exception as e:  # a peer's API missing, a failed launch
                        row[f"{name}_error"] = f"{type(e).__name__}: {e}"[:300]
                rows.append(row)
                del g
                torch.cuda.empty_cache()
    return rows


def run(args, torch, env, now):
    import fp8mlir._torch_ops as ops
    report = {"environment": env, "method": METHOD, "extension": ops.EXTENSION is not None,
              "targets": {"call_us": TARGET_CALL_US, "c_launch_us": TARGET_C_LAUNCH_US}}
    report["overhead"], report["graphs"] = overhead(torch, args)
    report["breakdown"] = breakdown(torch, args)
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
    """The targets: fp8mlir.scaled_mm <= 15 us and below the peer, per recipe;
    fp8rt_launch_ordered <= 5 us from C."""
    out = {}
    for recipe in cases.BENCH_RECIPES:
        rows = {r["impl"]: r["host_us"] for r in report["overhead"] if r["recipe"] == recipe}
        ours = rows["fp8mlir.scaled_mm"]
        peer = min(v for k, v in rows.items() if not k.startswith(("fp8mlir", "torch.ops")))
        out[f"{recipe}: fp8mlir.scaled_mm <= {TARGET_CALL_US} us and < peer"] = \
            ours <= TARGET_CALL_US and ours < peer
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
    lines += ["", f"## Host time per call, eager ([{OVERHEAD_M}, {cases.TEST_K}] x "
              f"[{cases.TEST_K}, {cases.TEST_N}], bf16 out)", ""]
    lines += ru.table(["recipe", "implementation", "host us/call", "GPU us/call", "note"],
                      [[r["recipe"], r["impl"], f(r["host_us"], ".2f"), f(r["gpu_us"], ".2f"),
                        "GPU-bound: host time may include waiting" if r["queue_bound"] else ""]
                       for r in report["overhead"]])
    lines += ["", f"## Under CUDA graphs ({GRAPH_CALLS} calls per graph)", ""]
    lines += ru.table(["recipe", "implementation", "host us/call (replay)", "GPU us/call"],
                      [[r["recipe"], r["impl"], f(r["host_us"], ".3f"), f(r["gpu_us"], ".2f")]
                       for r in report["graphs"]])
    lines += ["", "## Breakdown (host us per call)", ""]
    for recipe, parts in report["breakdown"].items():
        lines += [f"### {recipe}", ""] + ru.table(
            ["path", "piece", "us"],
            [["before (ctypes)", k, f(v, ".2f")] for k, v in parts["before"].items()]
            + [["now", k, f(v, ".2f")] for k, v in parts["now"].items()]) + [""]
    c = report["c_launch"]
    lines += ["## From C (fp8rt-launch-bench, rowwise kernel, M = 16)", ""]
    if "error" in c:
        lines.append(f"not measured: {c['error']}")
    else:
        lines += ru.table(["way", "median us/launch", "min us/launch"],
                          [[k, f(v["median_us"], ".3f"), f(v["min_us"], ".3f")]
                           for k, v in c.items() if isinstance(v, dict)])
    lines += ["", "## Small shapes (bf16 out; kernel-only and host-inclusive are separate)", ""]
    lines += ru.table(
        ["recipe", "M", "N x K", "ours kernel us", "torch kernel us", "kernel speedup",
         "ours host-incl. us", "torch host-incl. us", "host-incl. speedup"],
        [[r["recipe"], r["m"], f"{r['n']} x {r['k']}", f(r.get("ours_kernel_us"), ".2f"),
          f(r.get("torch_kernel_us"), ".2f"),
          f(_ratio(r, "torch_kernel_us", "ours_kernel_us"), ".2f"),
          f(r.get("ours_host_inclusive_us"), ".2f"), f(r.get("torch_host_inclusive_us"), ".2f"),
          f(_ratio(r, "torch_host_inclusive_us", "ours_host_inclusive_us"), ".2f")]
         for r in report["small_shapes"]])
    errors = [r for r in report["small_shapes"] if any(k.endswith("_error") for k in r)]
    if errors:
        lines += ["", "Errors:", ""] + [f"- {r['recipe']} M={r['m']} {r['n']}x{r['k']}: "
                                        f"{r.get('ours_error') or r.get('torch_error')}"
                                        for r in errors]
    return "\n".join(lines) + "\n"


def _ratio(row, numerator, denominator):
    a, b = row.get(numerator), row.get(denominator)
    return a / b if a and b else None


def plot(report, path):
    import matplotlib.pyplot as plt
    rows = report["overhead"]
    fig, ax = plt.subplots(figsize=(8, 4))
    labels = [f"{r['recipe']}\n{r['impl'].replace('fp8mlir.', '')}" for r in rows]
    ax.bar(range(len(rows)), [r["host_us"] for r in rows])
    ax.set_xticks(range(len(rows)), labels, fontsize=6, rotation=45, ha="right")
    ax.axhline(TARGET_CALL_US, color="red", linewidth=0.8)
    ax.set_ylabel("host us per call (eager)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(ru.main(sys.argv[1:], parse_args, markdown, plot, run))
