#!/usr/bin/env python3
"""Grouped (mixture-of-experts) FP8 GEMM benchmark: fp8mlir's grouped
kernels against DeepGEMM's (blockwise 1x128 x 128x128, where `deep_gemm`
imports) and torch._scaled_grouped_mm (rowwise), on the same FP8 inputs.

- m_contiguous (training, prefill): 4 experts of ~8192 rows and 8 of
  ~4096 (uneven, each padded to 128 rows), rowwise (fp8mlir vs
  torch._scaled_grouped_mm) and blockwise (fp8mlir vs DeepGEMM's
  m_grouped_fp8_gemm_nt_contiguous);
- m_masked decode (blockwise, vs m_grouped_fp8_gemm_nt_masked): 1-32
  experts, uneven valid counts (some 0) in a launch of fixed shape
  [G, 1024, K]; with each implementation's bandwidth (the fewest bytes
  the GEMM moves over its time) against a device copy's in the same run;
- k_grouped (the experts' weight gradient, vs
  k_grouped_fp8_gemm_nt_contiguous): fp8mlir's side is
  fp8mlir.grouped_scaled_mm(..., k_sizes=) with f32 output.

Shapes (N x K per expert): DeepSeek-V3 4096 x 7168 and 7168 x 2048,
Qwen3-235B-A22B 3072 x 4096, Mixtral-8x7B 4096 x 14336
(fp8mlir.testing.grouped_cases). Every implementation's output is checked
against the per-group f64 reference of the quantized inputs, and each
peer's against fp8mlir's (the largest per-group relative difference);
fp8mlir's public grouped_scaled_mm must give the timed kernel's bits.

Timing is kernel-only, bench_gemm.py's method (gemm_timing.queued_ms):
calls queued behind a GPU spin so the GPU runs them back to back, each on
the next of several input copies totalling more than 4x the L2; the median
of --rounds rounds with the implementations' order rotated. --sustained S
adds power_ceiling's sustained throughput (S seconds of back-to-back calls
per implementation, SM clock sampled). DeepGEMM's JIT compiles every
kernel first, in --deepgemm-jobs processes. Writes
grouped-<gpu>-<date>.{json,md} into --out. --fp8-out times instead the
m_contiguous GEMMs with an FP8 result against bf16 output and bf16 output
+ quantization (bench_grouped_fp8out.py).

    FP8MLIR_KERNEL_CACHE=CACHE FP8RT_LIBRARY=libfp8rt.so PYTHONPATH=python \\
        python3 bench/bench_grouped.py [--layouts m_contiguous,m_masked,k_grouped] \\
        [--shapes 4096x7168,...] [--sustained 3] [--out bench/results]
"""

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]

import torch  # noqa: E402

import grouped_peers as peers  # noqa: E402
import grouped_report  # noqa: E402
from fp8mlir.testing import grouped_cases as cases  # noqa: E402
from fp8mlir.testing.gemm_inputs import relative_error  # noqa: E402
from fp8mlir.testing.gemm_spec import TOLERANCE  # noqa: E402
from gemm_peers import Unavailable, deepgemm_version  # noqa: E402
from grouped_problems import ContiguousCase, KGroupedCase, MaskedCase  # noqa: E402

LAYOUTS = ("m_contiguous", "m_masked", "k_grouped")


def tolerance(case):
    if case.layout == "k_grouped":
        return TOLERANCE[("f32", "promoted")]
    return TOLERANCE[("bf16", "promoted" if case.recipe == "blockwise" else "fast")]


def case_factories(args, copies_for):
    """[(warm, factory)] of the selected cases in run order: factory() makes
    the case's inputs on the GPU; warm is what grouped_peers.warm_deepgemm
    needs to compile DeepGEMM's kernel for it (None: no DeepGEMM peer)."""
    out = []
    shapes = [s for s in cases.BENCH_SHAPES if s in args.shapes]
    if "m_contiguous" in args.layouts:
        for recipe in args.recipes:
            for groups, mean in cases.BENCH_CONTIGUOUS:
                for n, k in shapes:
                    rows = cases.bench_contiguous_rows(groups, mean, seed=groups * mean + n + k)
                    m = len(cases.ContiguousProblem(rows, n, k).index)
                    warm = ("m_contiguous", groups, m, n, k, None) if recipe == "blockwise" \
                        else None
                    out.append((warm, lambda r=recipe, rows=rows, n=n, k=k:
                                ContiguousCase(r, rows, n, k, copies_for,
                                               args.config.get(r))))
    if "m_masked" in args.layouts:
        max_m = cases.BENCH_MASKED_MAX_M
        for groups, mean in cases.BENCH_MASKED:
            for n, k in shapes:
                counts = cases.bench_masked_counts(groups, mean, seed=groups * mean + n + k)
                warm = ("m_masked", groups, max_m, n, k,
                        (tuple(counts), MaskedCase.expected_m_of(counts)))
                out.append((warm, lambda c=counts, n=n, k=k:
                            MaskedCase(c, max_m, n, k, copies_for,
                                       args.config.get("m_masked"))))
    if "k_grouped" in args.layouts:
        for groups, m, n, mean in cases.BENCH_K_GROUPED:
            ks = [128 * -(-r // 128) for r in cases.bench_contiguous_rows(groups, mean, seed=m + n)]
            out.append((("k_grouped", groups, m, n, None, tuple(ks)),
                        lambda m=m, n=n, ks=ks: KGroupedCase(m, n, ks, copies_for,
                                                             args.config.get("k_grouped"))))
    return out


def implementations(case):
    """[(name, impl)] for the case: fp8mlir first, then its peers."""
    if case.layout == "k_grouped":
        ours = peers.fp8mlir_kgrouped_impl
    else:
        ours = peers.fp8mlir_impl
    if case.recipe == "rowwise":
        return [(peers.FP8MLIR, ours), (peers.TORCH_GROUPED, peers.torch_grouped_impl)]
    return [(peers.FP8MLIR, ours), (peers.DEEPGEMM, peers.deepgemm_impl)]


def group_errors(case, d, want=None):
    """The largest per-group relative error of d against the f64 reference
    (or against `want`, another implementation's output)."""
    worst = 0.0
    for g in case.groups_with_rows():
        ref = case.reference(g) if want is None else case.valid_rows(want, g)
        worst = max(worst, relative_error(case.valid_rows(d, g), ref.double()))
    return worst


def prepare(case, name, impl):
    """(entry, call): the implementation ready to time, its first output
    checked; entry["status"] is "ok", "unavailable" or "error"."""
    entry = {"status": "ok"}
    try:
        call, outs, kernel = impl(case)
        entry["kernel"] = kernel
        first = call(0)
        torch.cuda.synchronize()
        entry["rel_error"] = group_errors(case, first)
        entry["within_tolerance"] = entry["rel_error"] <= tolerance(case)
        entry["output"] = first
        if name == peers.FP8MLIR and case.layout != "k_grouped":
            entry.update(api_check(case, first))
        return entry, call
    except Unavailable as e:
        return {"status": "unavailable", "reason": str(e)}, None
    except Exception as e:  # noqa: BLE001 - report it, time the others
        return {"status": "error", "reason": f"{type(e).__name__}: {e}"}, None


def api_check(case, timed):
    """Whether fp8mlir.grouped_scaled_mm gives the timed kernel's bits."""
    try:
        api = peers.fp8mlir_api_output(case)
    except Exception as e:  # noqa: BLE001 - reported beside the kernel's numbers
        return {"api_bit_identical": False, "api_error": f"{type(e).__name__}: {e}"}
    return {"api_bit_identical": all(torch.equal(case.valid_rows(api, g),
                                                 case.valid_rows(timed, g))
                                     for g in case.groups_with_rows())}


def time_case(case, calls, entries, args):
    """Kernel-only ms per call of each ready implementation, the median of
    args.rounds rounds, the order rotated per round."""
    from gemm_timing import queued_ms
    names = [n for n in calls if calls[n] is not None]
    if not names:
        return
    samples = {n: [] for n in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            try:
                samples[name].append(queued_ms(calls[name], case.count, args.rep))
            except Exception as e:  # noqa: BLE001 - report it, time the others
                entries[name].update(status="error", reason=f"timing: {type(e).__name__}: {e}")
    for name in names:
        if entries[name]["status"] == "ok" and samples[name]:
            ms = statistics.median(samples[name])
            entries[name].update(us=ms * 1e3, tflops=case.flop / ms / 1e9,
                                 bytes_per_s=case.bytes / ms * 1e3)


def bench_case(case, index, args, machine, sampler):
    entries, calls = {}, {}
    for name, impl in implementations(case):
        entries[name], calls[name] = prepare(case, name, impl)
    ours = entries[peers.FP8MLIR].get("output")
    for name, entry in entries.items():
        if name != peers.FP8MLIR and ours is not None and "output" in entry:
            entry["max_rel_diff_vs_fp8mlir"] = group_errors(case, entry["output"], ours)
            entry["diff_within_tolerance"] = entry["max_rel_diff_vs_fp8mlir"] <= tolerance(case)
    for entry in entries.values():
        entry.pop("output", None)
    time_case(case, calls, entries, args)
    copy = machine.get("copy_bytes_per_s")
    for entry in entries.values():
        if copy and "bytes_per_s" in entry:
            entry["of_copy_bandwidth"] = entry["bytes_per_s"] / copy
    if args.sustained > 0:
        from gemm_timing import time_sustained
        time_sustained({n: (entries[n], calls[n]) for n in calls if calls[n] is not None},
                       case, args.sustained, args.sustained_rest, sampler, index)
    return dict(case.describe(), flop=case.flop, bytes=case.bytes, copies=case.count,
                tolerance=tolerance(case), impls=entries)


def machine_info():
    try:
        from gemm_timing import copy_bandwidth
        return {"copy_bytes_per_s": copy_bandwidth()}
    except Exception as e:  # noqa: BLE001 - no roofline column then
        print(f"note: no copy bandwidth ({type(e).__name__}: {e})", flush=True)
        return {}


def clock_sampler(args):
    if args.sustained <= 0:
        return None
    try:
        from power_ceiling import ClockSampler
        return ClockSampler(torch.cuda.current_device())
    except Exception as e:  # noqa: BLE001 - sustained numbers without clocks
        print(f"note: no clock sampling ({type(e).__name__}: {e})", flush=True)
        return None


def run(args):
    import bench_gemm
    l2 = bench_gemm.l2_bytes()
    factories = case_factories(args, lambda nbytes: bench_gemm.input_set_count(nbytes, l2))
    machine = machine_info()
    if args.deepgemm_jobs > 0:  # DeepGEMM's JIT first, all shapes at once
        machine["deepgemm_warmup_s"] = peers.warm_deepgemm(
            [warm for warm, _ in factories if warm], args.deepgemm_jobs)
    sampler = clock_sampler(args)
    rows = []
    try:
        for index, (_, factory) in enumerate(factories):
            case = factory()
            row = bench_case(case, index, args, machine, sampler)
            rows.append(row)
            print(grouped_report.console_line(row), flush=True)
            del case
            torch.cuda.empty_cache()
    finally:
        if sampler:
            sampler.stop()
    return machine, rows


def parse_args(argv):
    import report_util
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layouts", default=",".join(LAYOUTS))
    p.add_argument("--recipes", default=",".join(cases.BENCH_RECIPES),
                   help="m_contiguous recipes")
    p.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in cases.BENCH_SHAPES),
                   help="N x K per expert, among the default ones")
    p.add_argument("--config", action="append", default=[], metavar="KEY=CONFIG",
                   help="fp8mlir's m_contiguous kernel of recipe KEY, or (KEY m_masked, "
                        "k_grouped) that layout's kernel, with this #fp8.gemm_config instead "
                        "of the tile "
                        "heuristic's and its launch variants, e.g. "
                        "'blockwise=<tile = 128x160x128, cluster = 1x2>' (repeatable; the "
                        "kernel cache must hold it)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rep", type=float, default=50.0, help="ms of GPU time per timing")
    p.add_argument("--sustained", type=float, default=0.0,
                   help="seconds of back-to-back calls per implementation (0: off)")
    p.add_argument("--sustained-rest", type=float, default=1.0)
    p.add_argument("--deepgemm-jobs", type=int, default=min(12, os.cpu_count() or 1),
                   help="processes compiling DeepGEMM's kernels first (0: compile on use)")
    p.add_argument("--out", type=Path, default=HERE / "results")
    p.add_argument("--fp8-out", action="store_true",
                   help="time the m_contiguous grouped GEMMs with an FP8 result against bf16 "
                        "output and bf16 output + quantization instead "
                        "(bench_grouped_fp8out.py; --recipes, --shapes, --rounds, --rep apply)")
    args = p.parse_args(argv)
    shapes = {f"{n}x{k}": (n, k) for n, k in cases.BENCH_SHAPES}
    try:
        args.layouts = report_util.parse_list(args.layouts, report_util.one_of(LAYOUTS),
                                              "--layouts")
        args.recipes = report_util.parse_list(args.recipes,
                                              report_util.one_of(cases.BENCH_RECIPES), "--recipes")
        args.shapes = [shapes[s] for s in report_util.parse_list(
            args.shapes, report_util.one_of(list(shapes)), "--shapes")]
        args.config = dict(parse_config(c) for c in args.config)
    except ValueError as e:
        p.error(str(e))
    if args.rounds < 1 or args.rep <= 0 or args.sustained < 0 or args.deepgemm_jobs < 0:
        p.error("--rounds must be >= 1, --rep > 0, --sustained and --deepgemm-jobs >= 0")
    return args


def parse_config(text):
    """'KEY=<...>' -> (KEY, '<...>'); KEY an m_contiguous recipe, m_masked or
    k_grouped."""
    key, sep, config = text.partition("=")
    key, config = key.strip(), config.strip()
    keys = (*cases.BENCH_RECIPES, "m_masked", "k_grouped")
    if not sep or key not in keys or not config.startswith("<"):
        raise ValueError(f"--config {text!r}: expected KEY=<...> with KEY one of "
                         f"{', '.join(keys)}")
    return key, config


def run_fp8_out(args, env, now):
    """--fp8-out: writes grouped-fp8out-<gpu>-<date>.{json,md} into --out."""
    import bench_grouped_fp8out
    import report_util
    rows = bench_grouped_fp8out.run(args)
    report = {"environment": env, "rows": rows,
              "settings": {"rounds": args.rounds, "rep_ms": args.rep}}
    path = report_util.report_path(args.out, "grouped-fp8out", env, now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
    lines = bench_grouped_fp8out.markdown_lines(env["gpu"], rows)
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(line for line in lines if line.startswith("- ")))
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return 0 if rows else 1


def main(argv=None):
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    import bench_gemm
    now = datetime.datetime.now().astimezone()
    env = dict(bench_gemm.environment(now), deepgemm=deepgemm_version())
    print(f"device: {env['gpu']} (driver {env['driver']}, torch {env['torch']}, "
          f"DeepGEMM {env['deepgemm']})", flush=True)
    if args.fp8_out:
        return run_fp8_out(args, env, now)
    machine, rows = run(args)
    report = {"environment": env, "machine": machine, "rows": rows,
              "settings": {"rounds": args.rounds, "rep_ms": args.rep,
                           "sustained_s": args.sustained}}
    import report_util
    path = report_util.report_path(args.out, "grouped", env, now)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
    markdown = grouped_report.markdown(report)
    path.with_suffix(".md").write_text(markdown)
    print("\n".join(grouped_report.summary_lines(report)))
    print(f"wrote {path} and {path.with_suffix('.md')}")
    return 0 if rows and grouped_report.all_correct(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
