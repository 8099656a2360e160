#!/usr/bin/env python3
"""FP8 GEMM benchmark: the project's kernels against torch and Triton peers.

For each shape MxNxK and recipe (tensorwise, rowwise, blockwise), in one
process and on the same quantized inputs, time:
  - fp8-mlir: the kernel in --kernels whose N, K and recipe match (e4m3 in,
    bf16 out, no bias/C; f32 out accumulating into C for *_acc), launched
    through libfp8rt;
  - torch._scaled_mm (tensorwise, also with use_fast_accum=True; rowwise);
  - torch.nn.functional.scaled_mm with BlockWise1x128 x BlockWise128x128
    (and BlockWise1x128 x BlockWise1x128 for blockwise_1d1d, where torch
    takes it);
  - DeepGEMM's fp8_gemm_nt where it is importable (blockwise; its sm_90
    1D x 1D kernel for blockwise_1d1d_acc, the wgrad GEMM accumulating f32);
  - triton: bench/triton_fp8_gemm.py.
blockwise_1d1d_acc is the wgrad GEMM with a main-grad buffer: f32 D = C + A B^T
with C zero (so that the peers that cannot accumulate compute the same D).
Times are medians over rounds of triton.testing.do_bench medians, the
implementations' order rotated per round; each timed call takes the next of
several copies of the inputs whose total size exceeds 2x the L2 cache. Each
implementation's output is compared with an f64 reference and with fp8-mlir's
output on the first copy. Writes gemm-<gpu>-<date>.{json,md,png} to --out.

    PYTHONPATH=python python3 bench/bench_gemm.py --kernels out/ --out bench/results
"""

import argparse
import datetime
import functools
import itertools
import json
import math
import platform
import re
import shlex
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "python")]

import torch  # noqa: E402

from fp8mlir.testing import gemm_inputs as gi  # noqa: E402
from fp8mlir.testing.gemm_spec import accumulation_mode, load_specs, parse_shapes  # noqa: E402
from gemm_peers import DEEPGEMM, Unavailable, deepgemm_version, peer_impl  # noqa: E402,F401
from gemm_timing import (machine_rooflines, queued_ms, roofline,  # noqa: E402
                         same_bytes_copy_roofline, time_sustained)
from report_util import PROGRAMMATIC_LAUNCH_NOTE  # noqa: E402
from gemm_verify import reference_of_rows, verification_failures  # noqa: E402
from make_kernels import WGRAD_SHAPES  # noqa: E402
from power_ceiling import ClockSampler  # noqa: E402

DEFAULT_SHAPES = ("8192x8192x8192,4096x4096x4096,16384x8192x8192,4096x7168x2048,"
                  "4096x2112x7168,4096x24576x1536,4096x7168x16384,4096x4096x7168,"
                  "128x7168x2048,64x2112x7168")
GRANULARITIES = {
    "tensorwise": (("tensor",), ("tensor",)),
    "rowwise": (("row",), ("row",)),
    "blockwise": (("tile", 1, 128), ("tile", 128, 128)),
    "blockwise_1d1d": (("tile", 1, 128), ("tile", 1, 128)),
    "blockwise_1d1d_acc": (("tile", 1, 128), ("tile", 1, 128)),
}
# The configured 128x128 accumulate-into-C tiles by their stages: 4 beside
# the whole f32 tile staged (the heuristic's 5 stage it in two boxes in
# turn), 6 with no room for staging (each thread loads C and stores D
# directly, as the accumulating kernels did before the staged epilogue).
ACC_STAGE_TAGS = {4: "s4", 6: "direct"}
# (output dtype, accumulate into C) of a recipe's GEMM; bf16 and no C unless
# listed.
RECIPE_OUTPUTS = {"blockwise_1d1d_acc": ("f32", True)}
# --shapes keywords: the wgrad GEMMs (M = out features, N = in features,
# K = tokens) of make_kernels.py's wgrad set.
SHAPE_SETS = {"wgrad": lambda: ",".join(f"{m}x{n}x{k}" for m, n, k in WGRAD_SHAPES)}
# Timed unless --recipes says otherwise.
DEFAULT_RECIPES = ("tensorwise", "rowwise", "blockwise")
PROJECT = "fp8-mlir"
PROJECT_FAST = "fp8-mlir fast"
# The project's kernels by accumulation mode: promoted(128) compares with
# cuBLAS's default (and F.scaled_mm), fast with use_fast_accum=True and with
# Triton (whose tl.dot accumulates like fast).
# Also by cluster size and stream-K (kernels configured so, e.g. the decode
# set's 64x64 stream-K kernels), the 256-row tile of two 64-row waves per
# consumer warpgroup (`256x128`: its 1x2 cluster multicasting A, `1cta`
# without), the swap-AB launch variant timed on its own (the plain columns
# launch what the runtime picks for M), and the configured 128-row tiles of
# TILE_VARIANT_NS columns (the wgrad set's 1D x 1D tiles, `128xN`), apart
# from the heuristic's kernel of the same recipe, which has launch variants.
PROJECT_IMPLS = {PROJECT: ("promoted", (1, 1), False, False),
                 PROJECT_FAST: ("fast", (1, 1), False, False),
                 PROJECT + " 2cta": ("promoted", (2, 1), False, False),
                 PROJECT_FAST + " 2cta": ("fast", (2, 1), False, False),
                 PROJECT + " stream-K": ("promoted", (1, 1), True, False),
                 PROJECT_FAST + " stream-K": ("fast", (1, 1), True, False),
                 PROJECT + " 256x128": ("promoted", (1, 2), False, True),
                 PROJECT + " 256x128 1cta": ("promoted", (1, 1), False, True),
                 PROJECT_FAST + " 256x128": ("fast", (1, 2), False, True),
                 PROJECT_FAST + " 256x128 1cta": ("fast", (1, 1), False, True),
                 PROJECT + " swap-AB": ("promoted", (1, 1), "swap-AB", False),
                 PROJECT_FAST + " swap-AB": ("fast", (1, 1), "swap-AB", False),
                 PROJECT + " 128x160": ("promoted", (1, 1), False, False, 160),
                 PROJECT + " 128x176": ("promoted", (1, 1), False, False, 176),
                 PROJECT + " 4 stages": ("promoted", (1, 1), False, False, "s4"),
                 PROJECT + " direct stores": ("promoted", (1, 1), False, False, "direct"),
                 PROJECT + " one part": ("promoted", (1, 1), False, False, "p1"),
                 PROJECT + " 256x128 one part": ("promoted", (1, 2), False, True, "p1"),
                 PROJECT + " 256x128 1cta one part": ("promoted", (1, 1), False, True, "p1")}
TILE_VARIANT_NS = (160, 176)
# An accumulate-into-C kernel whose D may be C's memory (`in_place_of`) is
# also timed in place, C's memory passed as D (D += A B: the main-grad
# form), as "<impl> in place".
IN_PLACE = " in place"


def project_impl_names():
    return [*PROJECT_IMPLS, *(impl + IN_PLACE for impl in PROJECT_IMPLS)]


WAVE_TILE_M = 256
PEERS = {
    "tensorwise": ("torch._scaled_mm", "torch._scaled_mm fast_accum", "triton"),
    "rowwise": ("torch._scaled_mm", "triton"),
    "blockwise": ("F.scaled_mm", DEEPGEMM, "triton"),
    "blockwise_1d1d": ("F.scaled_mm", DEEPGEMM),
    "blockwise_1d1d_acc": ("F.scaled_mm", DEEPGEMM),
}
# One colour per implementation across the chart's panels.
COLORS = {PROJECT: "C0", PROJECT_FAST: "C4", PROJECT + " 2cta": "C5",
          PROJECT_FAST + " 2cta": "C6", PROJECT + " stream-K": "C8",
          PROJECT_FAST + " stream-K": "C9", PROJECT + " 256x128": "k",
          PROJECT + " 256x128 1cta": "0.5", PROJECT_FAST + " 256x128": "k",
          PROJECT_FAST + " 256x128 1cta": "0.5", PROJECT + " swap-AB": "C8",
          PROJECT_FAST + " swap-AB": "C9", "torch._scaled_mm": "C1", "F.scaled_mm": "C1",
          "torch._scaled_mm fast_accum": "C2", "triton": "C3", DEEPGEMM: "C7",
          PROJECT + " 128x160": "C8", PROJECT + " 128x176": "C9",
          PROJECT + IN_PLACE: "navy", PROJECT + " 2cta" + IN_PLACE: "C5",
          PROJECT + " 128x160" + IN_PLACE: "C8", PROJECT + " 4 stages": "C4",
          PROJECT + " 4 stages" + IN_PLACE: "C6", PROJECT + " direct stores": "0.5",
          PROJECT + " one part": "C2", PROJECT + " one part" + IN_PLACE: "C3",
          PROJECT + " 256x128 one part": "C6", PROJECT + " 256x128 1cta one part": "C5"}
GEOMEAN_MIN_M = 4096
MIN_INPUT_SETS = 3
# Input copies total more than this many L2 sizes, so that every call reads
# its inputs from memory (no cache flush runs between queued calls).
L2_COPIES = 4
L2_FALLBACK_BYTES = 50 * 2**20


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", type=Path,
                   help="directory with the compiled NAME.json/NAME.ptx (omit: peers only)")
    p.add_argument("--out", type=Path, default=HERE / "results", help="report directory")
    p.add_argument("--shapes", default=DEFAULT_SHAPES,
                   help="comma-separated MxNxK list, or one of: " + ", ".join(SHAPE_SETS))
    p.add_argument("--recipes", default=",".join(DEFAULT_RECIPES),
                   help="comma-separated subset of " + ", ".join(GRANULARITIES))
    p.add_argument("--timing", choices=("queued", "do_bench"), default="queued",
                   help="kernel-only timing: back-to-back calls queued ahead of the GPU "
                        "(default), or triton.testing.do_bench")
    p.add_argument("--warmup", type=int, default=25, help="do_bench warmup (ms)")
    p.add_argument("--rep", type=int, default=100,
                   help="GPU time per timing (ms): do_bench's rep, or the queued calls' length")
    p.add_argument("--rounds", type=int, default=3,
                   help="timing rounds, implementation order rotated per round (median)")
    p.add_argument("--seed", type=int, help="input seed (default: from the clock)")
    p.add_argument("--reference-rows", type=int, default=0, metavar="R",
                   help="compute the f64 reference for R rows spread over M only (0: all "
                        "rows); the outputs are still compared with each other in full")
    p.add_argument("--no-triton", action="store_true", help="skip the Triton peer")
    p.add_argument("--sustained", type=float, default=3.0, metavar="SECONDS",
                   help="also time each implementation by back-to-back calls for this "
                        "long per shape (power_ceiling.py's method); 0: kernel-only")
    p.add_argument("--sustained-rest", type=float, default=1.0, metavar="SECONDS",
                   help="idle time before each sustained run")
    p.add_argument("--library", help="libfp8rt.so (default: $FP8RT_LIBRARY or build dirs)")
    p.add_argument("--compile-times", type=Path,
                   help="JSON of compile times measured on the build machine, to include")
    return p.parse_args(argv)


# --- environment -------------------------------------------------------------------

def driver_version():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True)
        return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        getter = getattr(torch._C, "_cuda_getDriverVersion", None)
        return f"CUDA driver API {getter()}" if getter else "unknown"


def triton_version():
    try:
        import triton
        return triton.__version__
    except ImportError:
        return "not installed"


def l2_bytes():
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return int(getattr(props, "L2_cache_size", 0) or L2_FALLBACK_BYTES)


def environment(now):
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return {
        "gpu": torch.cuda.get_device_name(),
        "sm_count": props.multi_processor_count,
        "l2_bytes": l2_bytes(),
        "driver": driver_version(),
        "cuda_runtime": torch.version.cuda,
        "torch": torch.__version__,
        "triton": triton_version(),
        "python": platform.python_version(),
        "host": platform.node(),
        "date": now.isoformat(timespec="seconds"),
        "command": shlex.join([Path(sys.executable).name] + sys.argv),
    }


# --- inputs ------------------------------------------------------------------------

def input_set_count(set_bytes, l2):
    """Copies of the inputs whose total size exceeds L2_COPIES x the L2 (at
    least MIN_INPUT_SETS)."""
    return max(MIN_INPUT_SETS, L2_COPIES * l2 // max(set_bytes, 1) + 1)


class Case:
    """One shape x recipe: rotating copies of one input set and its f64 reference."""

    def __init__(self, m, n, k, recipe, spec, seed, l2, device="cuda", reference_rows=0):
        self.m, self.n, self.k, self.recipe, self.device = m, n, k, recipe, device
        a_gran, b_gran = GRANULARITIES[recipe]
        out, accumulate = RECIPE_OUTPUTS.get(recipe, ("bf16", False))
        self.out_dtype = gi.torch_dtype(out)
        first = gi.make_gemm_inputs(
            m, n, k, a_gran=a_gran, b_gran=b_gran, seed=seed, device=device,
            with_c=accumulate,
            a_scale_expected=spec.expected_shape("a_scale_inv", m) if spec else None,
            b_scale_expected=spec.expected_shape("b_scale_inv", m) if spec else None)
        if first.c is not None:
            first.c.zero_()  # D = A B^T, as the peers without C compute it
        self.rows = None
        if 0 < reference_rows < m:
            self.rows = torch.linspace(0, m - 1, reference_rows, device=device).long()
        self.reference = reference_of_rows(first, self.rows)
        self.count = input_set_count(first.nbytes(), l2)
        self.sets = [first] + [first.clone() for _ in range(self.count - 1)]
        self.set_bytes = first.nbytes()

    @property
    def flop(self):
        return 2.0 * self.m * self.n * self.k

    def checked(self, out):
        """The rows of an output that the reference has."""
        return out if self.rows is None else out[self.rows]

    def outputs(self):
        return [torch.empty(self.m, self.n, dtype=self.out_dtype, device=self.device)
                for _ in self.sets]


# --- implementations: each returns call(i) -> output of input set i ------------------

def project_impl(case, kernel, in_place=False):
    """in_place: each input set's C (zero) passed as D too, so that call i
    adds A B into it (its first call computes C + A B = A B)."""
    outs = case.outputs() if not in_place else [s.c.clone() for s in case.sets]
    wanted = {op.get("name") for op in kernel.meta.get("operands", [])} or None
    bound = []
    for s, d in zip(case.sets, outs):
        ops = dict(s.operands(), d=d)
        if in_place:
            ops["c"] = d
        bound.append(kernel.bind(**{k: v for k, v in ops.items() if wanted is None or k in wanted}))
    stream = torch.cuda.current_stream().cuda_stream  # do_bench records events here

    def call(i):
        bound[i](stream)
        return outs[i]
    return call


# --- measuring ---------------------------------------------------------------------

def time_ms(call, count, args):
    """Kernel-only time per call: back-to-back calls queued ahead of the GPU
    (--timing queued), or the median of do_bench (which zeroes a 256 MB
    buffer before each call: the write-back of its dirty lines is charged to
    the timed call), each call on the next input set."""
    if args.timing == "queued":
        return queued_ms(call, count, args.rep)
    from triton.testing import do_bench
    counter = itertools.count()
    return do_bench(lambda: call(next(counter) % count), warmup=args.warmup, rep=args.rep,
                    return_mode="median")


def prepare(make_call, case, project_out):
    """Build one implementation's call and verify it on input set 0.
    Returns (entry, call or None, output of set 0 or None)."""
    entry = {"status": "ok", "ms": None, "tflops": None, "round_ms": [],
             "rel_err_vs_ref": None, "rel_diff_vs_project": None, "message": ""}
    try:
        call = make_call()
        out = call(0)
        torch.cuda.synchronize()
        out = out.clone()
        entry["rel_err_vs_ref"] = gi.relative_error(case.checked(out), case.reference)
        if project_out is not None:
            entry["rel_diff_vs_project"] = gi.relative_error(out, project_out.to(torch.float64))
        return entry, call, out
    except Unavailable as e:
        entry.update(status="unavailable", message=str(e))
    except Exception as e:  # keep going: a broken peer must not stop the benchmark
        entry.update(status="error", message=f"{type(e).__name__}: {e}".strip())
    return entry, None, None


def cross_check(calls, outs):
    """Each implementation's output on input set 0 against every other's:
    entry['diff_vs'] = {other: relative Frobenius difference} and
    entry['identical_to'] = the others with the same bits."""
    done = {name: out for name, out in outs.items() if out is not None}
    for name, out in done.items():
        entry = calls[name][0]
        entry["diff_vs"], entry["identical_to"] = {}, []
        for other, other_out in done.items():
            if other == name:
                continue
            entry["diff_vs"][other] = gi.relative_error(out, other_out.to(torch.float64))
            if gi.bitwise_equal(out, other_out):
                entry["identical_to"].append(other)


def time_rounds(calls, case, args):
    """Time every implementation in `calls` ({name: (entry, call)}) in
    args.rounds rounds, round r starting at the r-th implementation, so that
    none is always timed first (after the idle reference) or last (after the
    others heated the GPU): on an H100, identical kernels timed back to back
    in one fixed order differed by up to 10% (clock and power drift). An
    entry's time is the median of its rounds' do_bench medians."""
    names = list(calls)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            entry, call = calls[name]
            if entry["status"] != "ok":
                continue
            try:
                entry["round_ms"].append(time_ms(call, case.count, args))
            except Exception as e:  # noqa: BLE001 - report it, time the others
                entry.update(status="error", message=f"{type(e).__name__}: {e}".strip())
    for entry, _ in calls.values():
        if entry["status"] == "ok":
            entry["ms"] = statistics.median(entry["round_ms"])
            entry["tflops"] = case.flop / (entry["ms"] * 1e-3) / 1e12


def cluster_shape(spec):
    """(rows, columns) of the kernel's cluster: (2, 1) shares B, (1, 2) A."""
    rows, cols = (list(spec.cluster) + [1, 1])[:2]
    return rows, cols


def tile_variant_n(spec):
    """Tile N of a configured 128-row tile of TILE_VARIANT_NS columns (no
    launch variants), "p1" for one promotion part, the ACC_STAGE_TAGS tag
    of a configured 128x128 accumulate-into-C tile, else None."""
    if spec.variants or spec.tile[:1] not in ([128], [WAVE_TILE_M]):
        return None
    if "_p1" in spec.name:  # promotion_parts = 1
        return "p1"
    if spec.tile[:1] != [128]:
        return None
    if (spec.accumulate_into_c and spec.tile[1:2] == [128]
            and spec.stages in ACC_STAGE_TAGS
            and cluster_shape(spec) == (1, 1) and not spec.stream_k):
        return ACC_STAGE_TAGS[spec.stages]
    return spec.tile[1] if spec.tile[1:2] and spec.tile[1] in TILE_VARIANT_NS else None


def pick_kernels(specs, m, n, k, recipe):
    """({impl: spec}, note): the project's kernel per accumulation mode."""
    out, accumulate = RECIPE_OUTPUTS.get(recipe, ("bf16", False))
    base = recipe.removesuffix("_acc")
    matches = [s for s in specs
               if s.n == n and s.k == k and s.recipe == base
               and s.a_dtype == "e4m3" and s.b_dtype == "e4m3" and s.out_dtype == out
               and not s.bias and s.accumulate_into_c == accumulate and not s.activation
               and not s.output_amax and s.static_m in (None, m)]

    def kind_matches(s, kind):
        # A launch variant only as the swap-AB column.
        if kind == "swap-AB":
            return s.swap_ab
        return s.variant_of is None and s.stream_k == kind

    chosen = {}
    for impl, (mode, cluster, kind, wave_tile, *tile_n) in PROJECT_IMPLS.items():
        modes = sorted((s for s in matches if accumulation_mode(s.accumulation) == mode
                        and cluster_shape(s) == cluster and kind_matches(s, kind)
                        and (s.tile[:1] == [WAVE_TILE_M]) == wave_tile
                        and tile_variant_n(s) == (tile_n[0] if tile_n else None)),
                       key=lambda s: s.name)
        if modes:
            chosen[impl] = modes[0]
    if not chosen:
        return {}, f"no {PROJECT} kernel with N={n}, K={k}, {recipe}, e4m3->{out}"
    return chosen, ""


def ratio_key(impl, peer):
    return f"{impl} vs {peer}"


def bench_case(m, n, k, recipe, chosen, kernels, args, seed, l2, timing, device="cuda"):
    """timing: {'machine': machine_rooflines(), 'sampler': ClockSampler or None,
    'index': the case's position (rotates the sustained order)}."""
    spec = next(iter(chosen.values()), None)
    case = Case(m, n, k, recipe, spec, seed, l2, device, args.reference_rows)
    result = {"m": m, "n": n, "k": k, "recipe": recipe, "input_sets": case.count,
              "set_bytes": case.set_bytes,
              "kernel": {impl: s.name for impl, s in chosen.items()},
              "roofline": roofline(case, timing["machine"]),
              "impls": {}, "ratios": {}, "sustained_ratios": {}}
    project_out = None
    calls, outs = {}, {}
    for impl, impl_spec in chosen.items():
        entry, call, out = prepare(lambda: project_impl(case, kernels(impl_spec)),
                                   case, project_out)
        calls[impl], outs[impl] = (entry, call), out
        project_out = project_out if project_out is not None else out
    for impl, impl_spec in list(chosen.items()):
        if impl_spec.in_place and impl_spec.accumulate_into_c:
            entry, call, out = prepare(
                lambda: project_impl(case, kernels(impl_spec), in_place=True),
                case, project_out)
            calls[impl + IN_PLACE], outs[impl + IN_PLACE] = (entry, call), out
    for peer in PEERS[recipe]:
        if peer == "triton" and args.no_triton:
            continue
        entry, call, out = prepare(functools.partial(peer_impl, peer, case), case,
                                   project_out)
        calls[peer], outs[peer] = (entry, call), out
    cross_check(calls, outs)
    del outs
    time_rounds(calls, case, args)
    same_bytes_copy_roofline(result["roofline"], case, args.rep)
    if args.sustained > 0:
        time_sustained(calls, case, args.sustained, args.sustained_rest,
                       timing["sampler"], timing["index"])
    result["impls"] = {name: entry for name, (entry, _) in calls.items()}
    result["launched"] = {impl: launched_kernel(kernels(impl_spec), m)
                          for impl, impl_spec in chosen.items()}
    for impl in (name for name in calls if name not in PEERS[recipe]):
        for peer in PEERS[recipe]:
            for key, get in (("ratios", kernel_tflops), ("sustained_ratios", sustained_tflops)):
                ours, theirs = get(result, impl), get(result, peer)
                if ours and theirs:
                    result[key][ratio_key(impl, peer)] = ours / theirs
    return result


def launched_kernel(kernel, m):
    """The name of the kernel a launch of `kernel` for M rows runs (the
    launch variant the runtime picks), or None with a runtime library that
    cannot say."""
    try:
        return kernel.for_m(m).name
    except RuntimeError:
        return None


def kernel_tflops(result, impl):
    return result["impls"].get(impl, {}).get("tflops")


def sustained_tflops(result, impl):
    return (result["impls"].get(impl, {}).get("sustained") or {}).get("tflops")


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def summarize(results, recipes):
    """Geometric means over the shapes with M >= GEOMEAN_MIN_M, per recipe."""
    summary = {}
    for recipe in recipes:
        rows = [r for r in results if r["recipe"] == recipe and r["m"] >= GEOMEAN_MIN_M]
        impls = [*project_impl_names(), *PEERS[recipe]]
        keys = [ratio_key(i, p) for i in project_impl_names() for p in PEERS[recipe]]
        summary[recipe] = {
            "shapes": len(rows),
            "tflops": {i: geomean([kernel_tflops(r, i) for r in rows]) for i in impls},
            "ratios": {key: geomean([r["ratios"].get(key) for r in rows]) for key in keys},
            "sustained_tflops": {i: geomean([sustained_tflops(r, i) for r in rows])
                                 for i in impls},
            "sustained_ratios": {key: geomean([r.get("sustained_ratios", {}).get(key)
                                               for r in rows]) for key in keys},
        }
    return summary


# --- reports -----------------------------------------------------------------------

def fmt(value, spec=".1f"):
    return "n/a" if value is None else format(value, spec)


def shape_text(r):
    return f"{r['m']}x{r['n']}x{r['k']}"


def compile_times_markdown(data):
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list):
        items = [(d.get("name", i) if isinstance(d, dict) else i, d) for i, d in enumerate(data)]
    else:
        return [f"```\n{json.dumps(data, indent=2)}\n```"]
    lines = ["| kernel | compile time |", "|---|---|"]
    for name, value in items:
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items() if k != "name")
        lines.append(f"| {name} | {value} |")
    return lines


def markdown_report(report):
    env = report["environment"]
    lines = [f"# FP8 GEMM benchmark: {env['gpu']}", "",
             f"- driver {env['driver']}, CUDA runtime {env['cuda_runtime']}, "
             f"torch {env['torch']}, triton {env['triton']}",
             f"- date {env['date']}, host {env['host']}",
             f"- command: `{env['command']}`",
             f"- kernel-only TFLOP/s = 2*M*N*K / {timing_text(report['settings'])}, "
             f"median of {report['settings']['rounds']} rounds, implementation order rotated "
             f"per round; inputs rotate over copies totalling > {L2_COPIES}x L2 "
             f"({env['l2_bytes'] // 2**20} MiB)",
             f"- {PROJECT}: one kernel per (N, K, recipe) with a run-time M; where it has "
             f"launch variants (tiles 128x128, 128x64, 64x128, 64x64; 128x192 for a fast 128x256 kernel; "
             f"256x128 for a promoted blockwise or tensorwise one) "
             f"the runtime launches the one with "
             f"the fewest weighted waves for the M (runtime/README.md)",
             f"- ratio = {PROJECT} TFLOP/s / peer TFLOP/s (> 1: {PROJECT} is faster), "
             f"kernel-only against kernel-only and sustained against sustained, never mixed; "
             f"geomean over shapes with M >= {GEOMEAN_MIN_M}",
             sustained_line(report), roofline_line(report), ""]
    for mode in ("kernel", "sustained"):
        for recipe in report["recipes"]:
            lines += recipe_table(report, recipe, mode)
    lines += verification_table(report)
    if report.get("compile_times") is not None:
        lines += ["## Compile times (build machine)", ""]
        lines += compile_times_markdown(report["compile_times"]) + [""]
    return "\n".join(lines) + "\n"


def shown(report, recipe, key, names):
    """The names with a value in some row of the recipe (drops all-n/a columns)."""
    rows = [r for r in report["results"] if r["recipe"] == recipe]
    return [n for n in names if any(r.get(key, {}).get(n) for r in rows)]


def timing_text(settings):
    if settings.get("timing", "do_bench") == "do_bench":
        return (f"median time of triton.testing.do_bench (warmup {settings['warmup_ms']} ms, "
                f"rep {settings['rep_ms']} ms, a 256 MB buffer zeroed before each call)")
    return (f"GPU time per call of back-to-back calls (about {settings['rep_ms']} ms of them) "
            f"queued behind a GPU spin, so the GPU never waits on the host and no cache "
            f"flush runs between calls; {PROGRAMMATIC_LAUNCH_NOTE}")


def sustained_line(report):
    seconds = report["settings"].get("sustained_s") or 0
    if seconds <= 0:
        return "- sustained timing: not run (`--sustained 0`)"
    return (f"- sustained: each implementation called back to back for {seconds} s per shape "
            f"after {report['settings']['sustained_rest_s']} s idle (power_ceiling.py's method: "
            f"the host one ~50 ms batch behind the GPU), TFLOP/s over all calls; SM clock: "
            f"mean of nvidia-smi samples every 100 ms after the first second; one pass, "
            f"the implementations' order rotated from shape to shape")


def roofline_line(report):
    m = report.get("machine") or {}
    if not m:
        return ""
    return (f"- roofline per shape: the larger of FLOPs / FP8 peak "
            f"({m['fp8_peak_flops'] / 1e12:.0f} TFLOP/s: 2 x 4096 x SMs x "
            f"{m['max_sm_clock_mhz']:.0f} MHz) and bytes (FP8 A and B, f32 scales, bf16 D, "
            f"each once) / the bandwidth of a device-to-device copy in this run "
            f"({m['copy_bytes_per_s'] / 1e12:.2f} TB/s, read + written); bound = HBM or FP8; "
            f"{PROJECT} / roofline = the faster {PROJECT} kernel's TFLOP/s over the roofline's "
            f"(for an HBM-bound shape: its bandwidth over the copy's); {PROJECT} / copy "
            f"(HBM-bound shapes) = a copy of the shape's bytes, timed as the kernels "
            f"(kernel-only, rotating buffers; torch's copy kernel, launched without "
            f"programmatic serialization), over the faster {PROJECT} kernel's time")


def recipe_table(report, recipe, mode):
    """mode 'kernel': do_bench medians; 'sustained': back-to-back calls."""
    sustained = mode == "sustained"
    get = sustained_tflops if sustained else kernel_tflops
    ratio_field = "sustained_ratios" if sustained else "ratios"
    rows = [r for r in report["results"] if r["recipe"] == recipe]
    impls = [i for i in [*project_impl_names(), *PEERS[recipe]] if any(get(r, i) for r in rows)]
    if not impls:
        return []
    keys = shown(report, recipe, ratio_field,
                 [ratio_key(i, p) for i in project_impl_names() for p in PEERS[recipe]])
    header = ["shape", *impls, *keys]
    if not sustained:
        header += ["bound", f"{PROJECT} / roofline", f"{PROJECT} / copy"]
    title = (f"## {recipe}, sustained (TFLOP/s @ mean SM MHz, {report['settings']['sustained_s']}"
             f" s of back-to-back calls each)" if sustained
             else f"## {recipe}, kernel-only (TFLOP/s)")
    lines = [title, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        cells = [shape_text(r)]
        for i in impls:
            clock = (r["impls"].get(i, {}).get("sustained") or {}).get("sm_clock_mhz")
            cells.append(fmt(get(r, i)) + (f" @ {clock:.0f}" if sustained and clock else ""))
        cells += [fmt(r[ratio_field].get(key), ".2f") for key in keys]
        if not sustained:
            roof = r.get("roofline") or {}
            best = max((get(r, i) or 0 for i in project_impl_names()), default=0)
            frac = best / roof["roofline_tflops"] if roof.get("roofline_tflops") else None
            of_copy = best / roof["copy_tflops"] if best and roof.get("copy_tflops") else None
            cells += [roof.get("bound", "n/a"), fmt(frac, ".2f"), fmt(of_copy, ".2f")]
        lines.append("| " + " | ".join(cells) + " |")
    s = report["geomean"][recipe]
    cells = [f"geomean (M >= {GEOMEAN_MIN_M}, {s['shapes']} shapes)"]
    cells += [fmt(s["sustained_tflops" if sustained else "tflops"].get(i)) for i in impls]
    cells += [fmt(s[ratio_field].get(key), ".2f") for key in keys]
    lines.append("| " + " | ".join(cells + [""] * (len(header) - len(cells))) + " |")
    kernels = sorted({name for r in rows for name in (r["kernel"] or {}).values()})
    if kernels and not sustained:
        lines += ["", "Kernels: " + ", ".join(f"`{k}`" for k in kernels)]
    return lines + [""]


def verification_table(report):
    rows = report["settings"].get("reference_rows") or 0
    lines = ["## Verification (input set 0)", "",
             "rel err: ||out - ref||_F / ||ref||_F, ref = f64 GEMM of the dequantized "
             f"inputs{f' ({rows} rows spread over M)' if rows else ''}; vs {PROJECT}: the "
             f"same with {PROJECT}'s output as ref (all rows); largest "
             "difference: the same against each other implementation's output, the largest; "
             "identical to: the implementations with the same output bits.", "",
             f"| recipe | shape | implementation | rel err | vs {PROJECT} "
             "| largest difference (to) | identical to | status |",
             "|---|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        for name, e in r["impls"].items():
            status = e["status"] + (f": {e['message']}" if e["message"] else "")
            status = status.replace("|", "/").replace("\n", " ")
            diffs = e.get("diff_vs") or {}
            worst = max(diffs, key=diffs.get) if diffs else None
            worst_text = f"{diffs[worst]:.2e} ({worst})" if worst else "n/a"
            lines.append(f"| {r['recipe']} | {shape_text(r)} | {name} | "
                         f"{fmt(e['rel_err_vs_ref'], '.2e')} | "
                         f"{fmt(e['rel_diff_vs_project'], '.2e')} | {worst_text} | "
                         f"{', '.join(e.get('identical_to') or []) or '-'} | {status} |")
        if r.get("note"):
            lines.append(f"| {r['recipe']} | {shape_text(r)} | {PROJECT} | | | | | "
                         f"{r['note']} |")
    return lines + [""]


def plot_report(report, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    env, recipes = report["environment"], report["recipes"]
    fig, axes = plt.subplots(len(recipes), 1, figsize=(14, 4.2 * len(recipes)), squeeze=False)
    for ax, recipe in zip(axes[:, 0], recipes):
        rows = [r for r in report["results"] if r["recipe"] == recipe]
        impls = [i for i in [*project_impl_names(), *PEERS[recipe]]
                 if any(r["impls"].get(i) for r in rows)]
        width = 0.8 / max(len(impls), 1)
        for j, impl in enumerate(impls):
            values = [r["impls"].get(impl, {}).get("tflops") or 0.0 for r in rows]
            ax.bar([i + (j - (len(impls) - 1) / 2) * width for i in range(len(rows))],
                   values, width, label=impl, color=COLORS.get(impl))
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([shape_text(r) for r in rows], rotation=20, fontsize=8)
        ax.set_ylabel("TFLOP/s")
        out = RECIPE_OUTPUTS.get(recipe, ("bf16", False))[0]
        ax.set_title(f"{recipe} (MxNxK, {out} out)")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"FP8 GEMM on {env['gpu']} - driver {env['driver']}, torch {env['torch']}, "
                 f"triton {env['triton']}, {env['date']}", fontsize=10)
    fig.text(0.01, 0.005, "\n".join(textwrap.wrap(env["command"], 180)), fontsize=6,
             family="monospace", va="bottom")
    fig.tight_layout(rect=(0, 0.03, 1, 0.97))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def report_stem(env, now):
    gpu = re.sub(r"[^a-z0-9]+", "-", env["gpu"].lower()).strip("-") or "gpu"
    return f"gemm-{gpu}-{now.strftime('%Y%m%d-%H%M%S')}"


def write_reports(report, out_dir, stem):
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {ext: out_dir / f"{stem}.{ext}" for ext in ("json", "md", "png")}
    paths["json"].write_text(json.dumps(report, indent=2))
    paths["md"].write_text(markdown_report(report))
    try:
        plot_report(report, paths["png"])
    except Exception as e:  # the numbers matter more than the chart
        print(f"warning: no chart: {type(e).__name__}: {e}", file=sys.stderr)
        del paths["png"]
    return paths


# --- main --------------------------------------------------------------------------

def load_kernel_specs(kernel_dir):
    if kernel_dir is None:
        print("no --kernels: timing the peers only")
        return []
    specs, skipped = load_specs(kernel_dir)
    for name, reason in skipped:
        print(f"skipping {name}: {reason}")
    print(f"{len(specs)} GEMM kernel(s) in {kernel_dir}")
    return specs


def main(argv=None):
    args = parse_args(argv)
    if not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    try:
        shapes = parse_shapes(SHAPE_SETS.get(args.shapes, lambda: args.shapes)())
    except ValueError as e:
        print(f"error: --shapes: {e}", file=sys.stderr)
        return 2
    if args.rounds < 1:
        print("error: --rounds must be at least 1", file=sys.stderr)
        return 2
    if args.sustained < 0 or args.sustained_rest < 0:
        print("error: --sustained and --sustained-rest must not be negative", file=sys.stderr)
        return 2
    recipes = [r for r in args.recipes.split(",") if r]
    unknown = [r for r in recipes if r not in GRANULARITIES]
    if unknown:
        print(f"error: unknown recipe(s) {unknown}", file=sys.stderr)
        return 2
    try:
        compile_times = json.loads(args.compile_times.read_text()) if args.compile_times else None
    except (OSError, ValueError) as e:
        print(f"error: --compile-times: {e}", file=sys.stderr)
        return 2
    from fp8mlir._runtime import Kernel

    now = datetime.datetime.now().astimezone()
    env = environment(now)
    env["deep_gemm"] = deepgemm_version()
    seed = gi.new_seed() if args.seed is None else args.seed
    print(f"{env['gpu']}, driver {env['driver']}, torch {env['torch']}, "
          f"triton {env['triton']}, deep_gemm {env['deep_gemm']}, "
          f"L2 {env['l2_bytes'] // 2**20} MiB, seed {seed}")
    machine = machine_rooflines(env["sm_count"])
    print(f"device copy {machine['copy_bytes_per_s'] / 1e12:.2f} TB/s (read + written), "
          f"FP8 peak {machine['fp8_peak_flops'] / 1e12:.0f} TFLOP/s at "
          f"{machine['max_sm_clock_mhz']:.0f} MHz")
    specs = load_kernel_specs(args.kernels)
    loaded = {}

    def kernels(spec):
        if spec.name not in loaded:
            loaded[spec.name] = Kernel(spec.json_path, library=args.library)
        return loaded[spec.name]

    results = []
    timing = {"machine": machine, "index": 0,
              "sampler": ClockSampler(torch.cuda.current_device()) if args.sustained else None}
    try:
        for m, n, k in shapes:
            for recipe in recipes:
                chosen, note = pick_kernels(specs, m, n, k, recipe)
                result = bench_case(m, n, k, recipe, chosen, kernels, args, seed,
                                    env["l2_bytes"], timing)
                timing["index"] += 1
                result["note"] = note
                results.append(result)
                torch.cuda.empty_cache()  # the case's buffers are gone now
                print_result(result)
    finally:
        if timing["sampler"]:
            timing["sampler"].stop()
        for kernel in loaded.values():
            kernel.close()

    report = {"environment": env, "recipes": recipes, "seed": seed,
              "settings": {"warmup_ms": args.warmup, "rep_ms": args.rep,
                           "timing": args.timing,
                           "return_mode": "median", "rounds": args.rounds,
                           "out_dtype": {r: RECIPE_OUTPUTS.get(r, ("bf16", False))[0]
                                         for r in recipes},
                           "rotation": f"input copies totalling > {L2_COPIES}x L2, cycled per call",
                           "geomean_min_m": GEOMEAN_MIN_M, "sustained_s": args.sustained,
                           "sustained_rest_s": args.sustained_rest,
                           "reference_rows": args.reference_rows},
              "machine": machine, "results": results, "geomean": summarize(results, recipes),
              "compile_times": compile_times}
    paths = write_reports(report, args.out, report_stem(env, now))
    print_summary(report)
    for path in paths.values():
        print(f"wrote {path}")
    return 0


def print_result(r):
    parts = []
    for name, e in r["impls"].items():
        if e["status"] == "ok":
            held = (e.get("sustained") or {}).get("tflops")
            parts.append(f"{name} {e['tflops']:.1f}" + (f"/{held:.1f}" if held else "")
                         + f" TF/s (err {e['rel_err_vs_ref']:.1e})")
        else:
            parts.append(f"{name} {e['status']}: {e['message'][:120]}")
    note = f" [{r['note']}]" if r.get("note") else ""
    roof = r["roofline"]
    best = max((kernel_tflops(r, i) or 0 for i in project_impl_names()), default=0)
    frac = (f" {best / roof['roofline_tflops']:.0%} of roofline"
            if best and roof.get("roofline_tflops") else "")
    if best and roof.get("copy_tflops"):
        frac += f", {best / roof['copy_tflops']:.0%} of a copy of its bytes"
    print(f"{shape_text(r):>17} {r['recipe']:<10} {roof['bound']}{frac} "
          f"x{r['input_sets']} sets: "
          + "; ".join(parts) + note, flush=True)


def print_summary(report):
    checked, failures = verification_failures(report, RECIPE_OUTPUTS)
    print(f"verification: {checked} outputs, {len(failures)} outside tolerance"
          + "".join(f"\n  {f}" for f in failures))
    print(f"\ngeomean over M >= {GEOMEAN_MIN_M} ({PROJECT} / peer TFLOP/s, "
          f"kernel-only and sustained apart):")
    for recipe in report["recipes"]:
        s = report["geomean"][recipe]
        for mode, suffix in (("kernel-only", ""), ("sustained", "sustained_")):
            ratios = ", ".join(f"{key} {fmt(v, '.2f')}"
                               for key, v in s[suffix + "ratios"].items() if v)
            ours = ", ".join(f"{impl} {fmt(s[suffix + 'tflops'].get(impl))}"
                             for impl in project_impl_names() if s[suffix + "tflops"].get(impl))
            if ours or ratios:
                print(f"  {recipe:<10} {mode:<11} {ours} TF/s; {ratios}")


if __name__ == "__main__":
    sys.exit(main())
