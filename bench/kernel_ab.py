#!/usr/bin/env python3
"""A/B timing of kernel directories: the same GEMMs compiled by two (or more)
compilers, timed in one process on the same inputs, beside DeepGEMM where it
is importable (blockwise recipes).

For each shape MxNxK, the heuristic's promoted kernel of the recipe is
picked from every --kernels directory (bench_gemm.py's rule), each output is
checked against the f64 reference and against the first directory's output,
and all are timed kernel-only in rounds of rotated order (bench_gemm.py's
timing), optionally also sustained. Prints one table and writes
kernel-ab-<gpu>-<date>.json to --out.

    PYTHONPATH=python python3 bench/kernel_ab.py --kernels old=dirA \\
        --kernels new=dirB --recipe blockwise --shapes 8192x8192x8192
"""

import argparse
import datetime
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]

import bench_gemm as bg  # noqa: E402
import torch  # noqa: E402
from gemm_peers import DEEPGEMM, peer_impl  # noqa: E402
from gemm_timing import time_sustained  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", action="append", required=True, metavar="NAME=DIR[@IMPL]",
                   help="a labelled kernel directory (repeat; the first is the baseline); "
                        "@IMPL takes bench_gemm.py's column IMPL of it (e.g. "
                        "'fp8-mlir 2cta') instead of the heuristic's kernel")
    p.add_argument("--recipe", default="blockwise", choices=sorted(bg.GRANULARITIES))
    p.add_argument("--shapes", required=True, help="comma-separated MxNxK list")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rep", type=int, default=100, help="GPU time per timing (ms)")
    p.add_argument("--reference-rows", type=int, default=256, metavar="R",
                   help="rows of the f64 reference (0: all)")
    p.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS",
                   help="also time each implementation back to back this long per shape")
    p.add_argument("--no-peer", action="store_true", help="skip DeepGEMM")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("."))
    args = p.parse_args(argv)
    args.timing, args.warmup = "queued", 25
    labelled = []
    for item in args.kernels:
        name, sep, path = item.partition("=")
        path, _, impl = path.partition("@")
        impl = impl or bg.PROJECT
        if not sep or not name or not path or impl not in bg.PROJECT_IMPLS:
            p.error(f"--kernels {item!r}: expected NAME=DIR[@IMPL], IMPL one of "
                    + ", ".join(bg.PROJECT_IMPLS))
        labelled.append((name, Path(path), impl))
    args.kernels = labelled
    return args


def main(argv=None):
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    from fp8mlir._runtime import Kernel
    shapes = bg.parse_shapes(args.shapes)
    specs = {name: bg.load_kernel_specs(path) for name, path, _ in args.kernels}
    impls = {name: impl for name, _, impl in args.kernels}
    names = [name for name, _, _ in args.kernels]
    loaded = {}
    l2 = bg.l2_bytes()
    sampler = bg.ClockSampler(torch.cuda.current_device()) if args.sustained else None
    rows, failures = [], 0
    try:
        for index, (m, n, k) in enumerate(shapes):
            picked = {}
            for name in names:
                chosen, note = bg.pick_kernels(specs[name], m, n, k, args.recipe)
                if impls[name] in chosen:
                    picked[name] = chosen[impls[name]]
                else:
                    print(f"{name}: {note or 'no ' + impls[name] + ' kernel'}")
            if not picked:
                continue
            case = bg.Case(m, n, k, args.recipe, next(iter(picked.values())), args.seed,
                           l2, reference_rows=args.reference_rows)
            calls, outs, first_out = {}, {}, None
            for name, spec in picked.items():
                key = (name, spec.name)
                if key not in loaded:
                    loaded[key] = Kernel(spec.json_path)
                entry, call, out = bg.prepare(lambda: bg.project_impl(case, loaded[key]),
                                              case, first_out)
                entry["kernel"] = spec.name
                calls[name], outs[name] = (entry, call), out
                first_out = first_out if first_out is not None else out
            if not args.no_peer and DEEPGEMM in bg.PEERS[args.recipe]:
                entry, call, out = bg.prepare(lambda: peer_impl(DEEPGEMM, case), case,
                                              first_out)
                calls[DEEPGEMM], outs[DEEPGEMM] = (entry, call), out
            bg.cross_check(calls, outs)
            del outs
            bg.time_rounds(calls, case, args)
            if args.sustained > 0:
                time_sustained(calls, case, args.sustained, 1.0, sampler, index)
            row = {"m": m, "n": n, "k": k,
                   "impls": {name: entry for name, (entry, _) in calls.items()}}
            rows.append(row)
            failures += print_row(row, names)
            torch.cuda.empty_cache()
    finally:
        if sampler:
            sampler.stop()
        for kernel in loaded.values():
            kernel.close()
    print_summary(rows, names, args.sustained > 0)
    now = datetime.datetime.now().astimezone()
    env = bg.environment(now)
    path = args.out / (bg.report_stem(env, now).replace("gemm-", "kernel-ab-", 1) + ".json")
    args.out.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"environment": env, "recipe": args.recipe,
                                "kernels": {n: f"{p}@{i}" for n, p, i in args.kernels},
                                "rows": rows}, indent=1, default=str))
    print(f"wrote {path}")
    return 1 if failures else 0


def tflops(entry, sustained=False):
    if not entry or entry.get("status") != "ok":
        return None
    if sustained:
        return (entry.get("sustained") or {}).get("tflops")
    return entry.get("tflops")


def print_row(row, names):
    """One line per shape; returns 1 when a kernel's output is off."""
    impls = row["impls"]
    cells, bad = [], 0
    for name, entry in impls.items():
        value = tflops(entry)
        err = entry.get("rel_err_vs_ref")
        cells.append(f"{name} {value:.0f}" if value else f"{name} {entry['status']}")
        if name in names and (entry["status"] != "ok" or err is None or err > 1e-2):
            bad = 1
            cells[-1] += f" (FAILED: rel err {err}, {entry.get('message', '')})"
    base = tflops(impls.get(names[0]))
    ratios = [f"{n}/{names[0]} {tflops(impls[n]) / base:.3f}" for n in names[1:]
              if n in impls and tflops(impls[n]) and base]
    if DEEPGEMM in impls and tflops(impls[DEEPGEMM]):
        ratios += [f"{n}/DeepGEMM {tflops(impls[n]) / tflops(impls[DEEPGEMM]):.3f}"
                   for n in names if n in impls and tflops(impls[n])]
    print(f"{row['m']}x{row['n']}x{row['k']}: " + ", ".join(cells) + " | " + ", ".join(ratios),
          flush=True)
    return bad


def print_summary(rows, names, sustained):
    """Geomean TFLOP/s over the shapes with M >= bench_gemm's GEOMEAN_MIN_M."""
    big = [r for r in rows if r["m"] >= bg.GEOMEAN_MIN_M]
    for kind in (False, True) if sustained else (False,):
        means = {}
        for name in [*names, DEEPGEMM]:
            values = [tflops(r["impls"].get(name), kind) for r in big]
            if values and all(values):
                means[name] = bg.geomean(values)
        label = "sustained" if kind else "kernel-only"
        print(f"geomean {label}, {len(big)} shapes with M >= {bg.GEOMEAN_MIN_M}: "
              + ", ".join(f"{n} {v:.1f}" for n, v in means.items()))


if __name__ == "__main__":
    sys.exit(main())
