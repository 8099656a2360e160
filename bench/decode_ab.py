#!/usr/bin/env python3
"""Decode-sized GEMMs: kernels of several compiled folders against each other
and the torch peers, in one process on the same inputs.

For each shape MxNxK and recipe, times (kernel-only, queued calls on rotating
input copies larger than the L2, as bench_gemm.py does, rounds in rotated
order) every kernel of each --kernels folder whose N, K and recipe match and
whose name contains one of the --filter strings, the folder's dispatching
kernel as "LABEL:auto[ fast]" (what the runtime launches for that M), and the
recipe's torch peers. Prints microseconds per call, bytes moved per second,
the fraction of a 1 GiB device copy's bandwidth and the time of a copy of the
shape's own bytes (timed the same way) over the call's; writes
decode-ab.json.

    PYTHONPATH=python python3 bench/decode_ab.py --kernels main=DIR_A \\
        --kernels new=DIR_B --shapes 1x4096x4096,16x4096x4096 --out OUT

--profile N instead calls each implementation N times (no timing): for
`ncu --kernel-name regex:...` runs.
"""

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]

import torch  # noqa: E402

import bench_gemm as bg  # noqa: E402
from fp8mlir.testing.gemm_spec import accumulation_mode, load_specs, parse_shapes  # noqa: E402
from gemm_peers import peer_impl  # noqa: E402
from gemm_timing import copy_bandwidth, gemm_bytes, same_bytes_copy  # noqa: E402
from report_util import kernel_tag  # noqa: E402

PEERS = {"tensorwise": ("torch._scaled_mm", "torch._scaled_mm fast_accum"),
         "rowwise": ("torch._scaled_mm",),
         "blockwise": ("F.scaled_mm",)}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", action="append", required=True, metavar="LABEL=DIR",
                   help="a labelled folder of compiled kernels (repeatable)")
    p.add_argument("--shapes", required=True, help="comma-separated MxNxK list")
    p.add_argument("--recipes", default="tensorwise", help="comma-separated recipes")
    p.add_argument("--filter", default="swapab",
                   help="comma-separated kernel-name substrings timed besides LABEL:auto")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--rep", type=int, default=25, help="GPU milliseconds per timing")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="call each implementation N times instead of timing")
    p.add_argument("--out", type=Path, help="folder for decode-ab.json")
    return p.parse_args(argv)


def matching(specs, n, k, recipe):
    return [s for s in specs
            if s.n == n and s.k == k and s.recipe == recipe and s.a_dtype == "e4m3"
            and s.b_dtype == "e4m3" and s.out_dtype == "bf16" and not s.bias
            and not s.accumulate_into_c and not s.activation and not s.output_amax]


def short_name(spec):
    """The kernel name after its _k<K>_ part (tile, stages, tags)."""
    return kernel_tag(spec.name)


def chosen_kernels(folders, n, k, recipe, filters):
    """[(impl name, spec)] per folder: the dispatching kernels and the
    filtered ones."""
    chosen = []
    for label, specs in folders.items():
        for s in sorted(matching(specs, n, k, recipe), key=lambda s: s.name):
            mode = accumulation_mode(s.accumulation)
            if s.variants:
                chosen.append((f"{label}:auto{' fast' if mode == 'fast' else ''}", s))
            if any(f in s.name for f in filters):
                chosen.append((f"{label}:{short_name(s)}", s))
    return chosen


def run_case(m, n, k, recipe, folders, kernel_of, args, copy_bps, l2):
    chosen = chosen_kernels(folders, n, k, recipe, [f for f in args.filter.split(",") if f])
    case = bg.Case(m, n, k, recipe, chosen[0][1] if chosen else None, 1234, l2)
    calls, outs, first = {}, {}, None
    for impl, spec in chosen:
        entry, call, out = bg.prepare(lambda: bg.project_impl(case, kernel_of(spec)),
                                      case, first)
        entry["kernel"] = spec.name
        entry["launched"] = bg.launched_kernel(kernel_of(spec), m)
        calls[impl], outs[impl] = (entry, call), out
        first = first if first is not None else out
    for peer in PEERS[recipe]:
        entry, call, out = bg.prepare(lambda: peer_impl(peer, case), case, first)
        calls[peer], outs[peer] = (entry, call), out
    bg.cross_check(calls, outs)
    if args.profile:
        for name, (entry, call) in calls.items():
            if call is None:
                continue
            torch.cuda.nvtx.range_push(name)
            for i in range(args.profile):
                call(i % case.count)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        return {"m": m, "n": n, "k": k, "recipe": recipe, "profiled": list(calls)}
    bg.time_rounds(calls, case, args)
    nbytes = gemm_bytes(case)
    same = same_bytes_copy(nbytes, case.count, args.rep)
    if "copy_error" in same:
        print(f"same-bytes copy: {same['copy_error']}")
    same_ms = same.get("copy_us", float("nan")) * 1e-3
    best_peer = min((calls[p][0]["ms"] for p in PEERS[recipe] if calls[p][0]["ms"]),
                    default=None)
    rows = {}
    print(f"\n{m}x{n}x{k} {recipe}: {nbytes / 1e6:.1f} MB, copy {copy_bps / 1e12:.2f} TB/s, "
          f"a copy of these bytes {same_ms * 1e3:.2f} us")
    print(f"  {'implementation':48s} {'us':>7s} {'TB/s':>6s} {'of copy':>8s} "
          f"{'of same':>8s} {'best peer/this':>14s}  rel.err")
    for name, (entry, _) in calls.items():
        ms = entry["ms"]
        row = {"status": entry["status"], "kernel": entry.get("kernel"),
               "launched": entry.get("launched"),
               "rel_err_vs_ref": entry["rel_err_vs_ref"],
               "identical_to": entry.get("identical_to", []), "message": entry["message"]}
        if ms:
            row.update(us=ms * 1e3, round_us=[x * 1e3 for x in entry["round_ms"]],
                       bytes_per_s=nbytes / (ms * 1e-3),
                       of_copy=nbytes / (ms * 1e-3) / copy_bps,
                       of_same_bytes_copy=same_ms / ms,
                       vs_best_peer=best_peer / ms if best_peer else None)
            print(f"  {name:48s} {row['us']:7.2f} {row['bytes_per_s'] / 1e12:6.2f} "
                  f"{row['of_copy']:8.2f} {row['of_same_bytes_copy']:8.2f} "
                  f"{row['vs_best_peer'] or 0:14.2f}  {entry['rel_err_vs_ref']:.2e}"
                  + (f"  ran {kernel_tag(row['launched'])}"
                     if row["launched"] and row["launched"] != row["kernel"] else ""))
        else:
            print(f"  {name:48s} {entry['status']}: {entry['message']}")
        rows[name] = row
    return {"m": m, "n": n, "k": k, "recipe": recipe, "bytes": nbytes,
            "same_bytes_copy_us": same_ms * 1e3, "impls": rows}


def main(argv=None):
    args = parse_args(argv)
    args.timing, args.warmup = "queued", 25  # bench_gemm.time_rounds's settings
    from fp8mlir._runtime import Kernel
    folders = {}
    for item in args.kernels:
        label, _, folder = item.partition("=")
        specs, skipped = load_specs(Path(folder))
        folders[label] = specs
        print(f"{label}: {len(specs)} kernels in {folder} ({len(skipped)} skipped)")
    loaded = {}

    def kernel_of(spec):
        if spec.json_path not in loaded:
            loaded[spec.json_path] = Kernel(spec.json_path)
        return loaded[spec.json_path]

    copy_bps = copy_bandwidth() if not args.profile else 0.0
    print(f"{torch.cuda.get_device_name()}: device copy {copy_bps / 1e12:.2f} TB/s "
          "(read + written)")
    results = []
    try:
        for m, n, k in parse_shapes(args.shapes):
            for recipe in args.recipes.split(","):
                results.append(run_case(m, n, k, recipe, folders, kernel_of, args,
                                        copy_bps, bg.l2_bytes()))
                torch.cuda.empty_cache()
    finally:
        for kernel in loaded.values():
            kernel.close()
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / ("decode-ab-profile.json" if args.profile else "decode-ab.json")
        path.write_text(json.dumps({"gpu": torch.cuda.get_device_name(),
                                    "copy_bytes_per_s": copy_bps, "results": results},
                                   indent=1))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
