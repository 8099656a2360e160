#!/usr/bin/env python3
"""The weak-shape grid: every M of a list against the (N, K) of real models'
projections, each GEMM against the best peer of the same accumulation.

Runs bench_gemm.py (kernel-only, queued timing; no sustained pass, no
Triton) over the grid M x (N, K) and reduces its report to one ratio per
shape and pairing: the project's kernel the runtime picks for the M against
the fastest peer of the same accumulation:

  - tensorwise fast (`fp8-mlir fast`) against `torch._scaled_mm` with
    use_fast_accum=True, promoted (`fp8-mlir`) against its default;
  - rowwise fast and promoted against `torch._scaled_mm` (cuBLASLt's
    rowwise kernel has one accumulation);
  - blockwise (promoted) against the faster of `F.scaled_mm` (cuBLASLt) and
    DeepGEMM.

Each shape is also placed against its roofline (bench_gemm.py's: the FP8
peak or a device copy's bandwidth measured in the same run); an HBM-bound
shape's fraction is the project kernel's bytes per second over the copy's,
and its second fraction the time of a copy of its own bytes (timed like
the kernels) over the kernel's.
Writes gemm-grid-<gpu>-<date>.{json,md} to --out (the json holds
bench_gemm.py's whole report beside the grid).

    PYTHONPATH=python python3 bench/gemm_grid.py --kernels K/decode --out /tmp/grid
    python3 bench/gemm_grid.py --render gemm-grid-....json     # the md again
"""

import argparse
import datetime
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "python")]

from make_kernels import DECODE_NK  # noqa: E402
from report_util import PROGRAMMATIC_LAUNCH_NOTE, fmt, geomean, kernel_tag, table  # noqa: E402

GRID_M = (1, 16, 64, 128, 256, 512, 1000, 2048, 4096, 8192)
WEAK = 0.95
PROJECT, PROJECT_FAST, DEEPGEMM = "fp8-mlir", "fp8-mlir fast", "deepgemm"
# recipe -> [(label, our implementation, the peers of the same accumulation)]
PAIRINGS = {
    "tensorwise": [("fast", PROJECT_FAST, ["torch._scaled_mm fast_accum"]),
                   ("promoted", PROJECT, ["torch._scaled_mm"])],
    "rowwise": [("fast", PROJECT_FAST, ["torch._scaled_mm"]),
                ("promoted", PROJECT, ["torch._scaled_mm"])],
    "blockwise": [("promoted", PROJECT, ["F.scaled_mm", DEEPGEMM])],
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", type=Path, help="compiled kernels (make_kernels.py --set decode)")
    p.add_argument("--out", type=Path, default=HERE / "results")
    p.add_argument("--m", default=",".join(map(str, GRID_M)), help="comma-separated M list")
    p.add_argument("--nk", default=",".join(f"{n}x{k}" for n, k in DECODE_NK),
                   help="comma-separated NxK list (default: make_kernels.py's DECODE_NK)")
    p.add_argument("--recipes", default="tensorwise,blockwise")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--rep", type=int, default=30, help="GPU time per timing (ms)")
    p.add_argument("--reference-rows", type=int, default=64)
    p.add_argument("--render", type=Path, nargs="+", metavar="JSON",
                   help="only write the report of earlier runs' json (several: merged, "
                        "e.g. one run per recipe) to --out")
    return p.parse_args(argv)


def tflops(result, impl):
    entry = result["impls"].get(impl) or {}
    return entry.get("tflops") if entry.get("status") == "ok" else None


def grid_rows(bench_report):
    """One row per (recipe, pairing, shape): ours, the best peer, the ratio
    and the roofline fraction."""
    rows = []
    for r in bench_report["results"]:
        roof = r.get("roofline") or {}
        for label, ours_impl, peers in PAIRINGS.get(r["recipe"], []):
            ours = tflops(r, ours_impl)
            timed = {p: tflops(r, p) for p in peers if tflops(r, p)}
            best = max(timed, key=timed.get) if timed else None
            row = {"recipe": r["recipe"], "pairing": label, "m": r["m"], "n": r["n"],
                   "k": r["k"], "ours": ours, "kernel": (r.get("kernel") or {}).get(ours_impl),
                   "launched": (r.get("launched") or {}).get(ours_impl),
                   "best_peer": best, "peer_tflops": timed.get(best),
                   "ratio": ours / timed[best] if ours and best else None,
                   "bound": roof.get("bound"),
                   "of_roofline": (ours / roof["roofline_tflops"]
                                   if ours and roof.get("roofline_tflops") else None),
                   "of_copy": (ours / roof["copy_tflops"]
                               if ours and roof.get("copy_tflops") else None)}
            rows.append(row)
    return rows


def cell(value, weak=False):
    text = fmt(value, ".2f")
    return f"**{text}**" if weak and value is not None else text


def matrix(rows, key, flag):
    """Rows (N, K), columns M: the `key` of each shape."""
    ms = sorted({r["m"] for r in rows})
    nks = list(dict.fromkeys((r["n"], r["k"]) for r in rows))
    at = {(r["n"], r["k"], r["m"]): r for r in rows}
    cells = [[f"{n}x{k}"] + [cell(at[n, k, m][key], bool(flag(at[n, k, m])))
                             if (n, k, m) in at else "n/a" for m in ms]
             for n, k in nks]
    return table(["N x K", *(f"M={m}" for m in ms)], cells)


def markdown(report):
    bench, rows, env = report["bench"], report["grid"], report["bench"]["environment"]
    machine = bench.get("machine") or {}
    lines = [f"# FP8 GEMM weak-shape grid: {env['gpu']}", "",
             f"- driver {env['driver']}, CUDA runtime {env['cuda_runtime']}, torch "
             f"{env['torch']}, deep_gemm {env.get('deep_gemm')}; date {env['date']}",
             f"- command: `{report['command']}`",
             "- timing: kernel-only (back-to-back calls queued behind a GPU spin, inputs "
             "rotating over copies of more than 4x L2; " + PROGRAMMATIC_LAUNCH_NOTE + "), "
             f"{bench['settings']['rounds']} round(s) of about {bench['settings']['rep_ms']} "
             "ms per implementation; no sustained pass (bench_gemm.py `--sustained 0`)",
             "- ratio = fp8-mlir TFLOP/s (the kernel the runtime picks for the M) / the "
             "fastest peer of the same accumulation: tensorwise fast vs `torch._scaled_mm` "
             "fast_accum, promoted vs its default; rowwise vs `torch._scaled_mm`; "
             "blockwise vs the faster of `F.scaled_mm` and DeepGEMM. "
             f"Bold: below {WEAK}.",
             f"- roofline: the larger of FLOPs / FP8 peak "
             f"({machine.get('fp8_peak_flops', 0) / 1e12:.0f} TFLOP/s) and bytes (A, B, "
             f"scales, bf16 D once) / a device copy's bandwidth in this run "
             f"({machine.get('copy_bytes_per_s', 0) / 1e12:.2f} TB/s); for an HBM-bound "
             "shape the fraction is the kernel's bandwidth over the copy's. Bold: an "
             "HBM-bound shape below 0.90. Its second table (runs that have it): a copy of "
             "the shape's own bytes, timed as the kernels (kernel-only, rotating buffers; "
             "torch's copy kernel, no programmatic launch), over the kernel's time.", ""]
    verification = report.get("verification") or {}
    if verification:
        lines += [f"- verification: {verification['checked']} outputs against the f64 "
                  f"reference, {len(verification['failures'])} outside tolerance", ""]
    for recipe, pairings in PAIRINGS.items():
        for label, ours_impl, peers in pairings:
            sel = [r for r in rows if r["recipe"] == recipe and r["pairing"] == label]
            if not sel:
                continue
            ratios = [r["ratio"] for r in sel if r["ratio"]]
            weak = [r for r in sel if r["ratio"] and r["ratio"] < WEAK]
            lines += [f"## {recipe} {label}: {ours_impl} / best of {', '.join(peers)}", "",
                      f"{len(ratios)} shapes timed; {len(weak)} below {WEAK}; min "
                      f"{cell(min(ratios) if ratios else None)}, geomean "
                      f"{cell(geomean(ratios))}.", ""]
            lines += matrix(sel, "ratio", lambda r: r["ratio"] and r["ratio"] < WEAK) + [""]
            if any(r.get("launched") for r in weak):
                lines += [f"{recipe} {label}, shapes below {WEAK}: the kernel the runtime "
                          "launched", ""]
                lines += table(["M x N x K", "ratio", "launched", "best peer"],
                               [[f"{r['m']}x{r['n']}x{r['k']}", cell(r["ratio"]),
                                 f"`{kernel_tag(r.get('launched') or r['kernel'])}`", r["best_peer"]]
                                for r in weak]) + [""]
            hbm = [r for r in sel if r["bound"] == "HBM"]
            if hbm:
                lines += [f"{recipe} {label}, HBM-bound shapes: fraction of the copy's "
                          "bandwidth", ""]
                lines += matrix(hbm, "of_roofline",
                                lambda r: r["of_roofline"] and r["of_roofline"] < 0.9) + [""]
                if any(r.get("of_copy") for r in hbm):
                    lines += [f"{recipe} {label}, HBM-bound shapes: a copy of the shape's "
                              "bytes (kernel-only, as the kernels) / the kernel's time", ""]
                    lines += matrix(hbm, "of_copy",
                                    lambda r: r.get("of_copy") and r["of_copy"] < 0.9) + [""]
    return "\n".join(lines) + "\n"


def write(report, out, stem):
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(report, indent=1, default=str))
    (out / f"{stem}.md").write_text(markdown(report))
    print(f"wrote {out / stem}.json, .md")


def main(argv=None):
    args = parse_args(argv)
    if args.render:
        reports = [json.loads(path.read_text()) for path in args.render]
        report = reports[0]
        for other in reports[1:]:
            report["bench"]["results"] += other["bench"]["results"]
            report["bench"]["recipes"] += other["bench"]["recipes"]
            report["grid"] += other["grid"]
            report["command"] += "; " + other["command"]
            for key in ("checked", "failures"):
                report["verification"][key] += other["verification"][key]
        write(report, args.out, args.render[0].stem)
        return 0
    if not args.kernels:
        print("error: --kernels is required (or --render)", file=sys.stderr)
        return 2
    import bench_gemm as bg
    from gemm_verify import verification_failures
    ms = [int(x) for x in args.m.split(",") if x]
    nks = [tuple(int(x) for x in nk.split("x")) for nk in args.nk.split(",") if nk]
    shapes = ",".join(f"{m}x{n}x{k}" for n, k in nks for m in ms)
    with tempfile.TemporaryDirectory() as tmp:
        code = bg.main(["--kernels", str(args.kernels), "--out", tmp, "--shapes", shapes,
                        "--recipes", args.recipes, "--sustained", "0", "--no-triton",
                        "--rounds", str(args.rounds), "--rep", str(args.rep),
                        "--reference-rows", str(args.reference_rows)])
        if code:
            return code
        bench = json.loads(next(Path(tmp).glob("gemm-*.json")).read_text())
    checked, failures = verification_failures(bench, bg.RECIPE_OUTPUTS)
    report = {"command": " ".join(["python3", "bench/gemm_grid.py", *sys.argv[1:]]),
              "bench": bench, "grid": grid_rows(bench),
              "verification": {"checked": checked, "failures": failures}}
    now = datetime.datetime.now().astimezone()
    stem = bg.report_stem(bench["environment"], now).replace("gemm-", "gemm-grid-", 1)
    write(report, args.out, stem)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
