#!/usr/bin/env python3
"""Compiled module programs with collective steps on several GPUs equal the
single-GPU program, bit for bit.

    torchrun --nproc-per-node 2 bench/dist_module.py [--modules DIR] [--out DIR]

Each case of fp8mlir.testing.dist_module_cases is one compiled module (in
the kernel cache: ``fp8mlir.populate --suite dist`` compiles them into
$FP8MLIR_KERNEL_CACHE/dist-module/<GPUS>/) holding ``sharded`` (the
program fp8-shard-quantize makes of an annotated input: the local slice,
the amax max-all-reduce between the amax and cast kernels, the FP8
all-gather, for a linear layer the gathered input feeding the GEMM) and
``whole`` (the same quantization or layer on one GPU). Every rank loads the
module with ``fp8mlir.load_module(dir, process_group=...)`` and calls both
on the same inputs (same seed on every rank); every result of ``sharded``
must equal that of ``whole`` byte for byte. Two collective backends:
``torch`` (torch.distributed, NCCL, on the call's stream) and ``nccl`` (the
runtime's own backend, libnccl loaded at run time, on the process group's
communicator; reported as skipped where torch does not expose it).

A second section runs whole training steps of a linear layer in their
tensor- and data-parallel forms (``dist_module_cases.TP_LAYERS``: what
fp8-shard-linear makes of the single-device step, compiled with its strided
collectives) against the single-device step: each rank's Y, dX and dW are
all-gathered and assembled (column: Y columns, dX and dW rows; row: Y rows,
dX and dW columns; dp: Y and dX whole, dW rows of the sum over the ranks).
Results that come from the same FP8 operands, only on a subset of rows or
columns (column Y and dW, row dX and dW, dp Y and dX), must equal the
single-GPU ones bit for bit; the dp weight gradient is the sum of the
ranks' identical gradients, exactly twice the single-GPU one on 2 GPUs;
sums of partial products across the ranks (column dX, row Y) differ in
the order of additions: reduced in bf16 (one rounding per partial, and
the sum's), they are checked to a relative Frobenius error of 1e-2;
reduced in f32 and rounded once (the ``_f32_partials`` cases: only the
order of two f32 additions differs from the single GPU's accumulation,
which moves a value across a bf16 rounding boundary rarely), to 1e-3, and
the report compares each with the bf16-reduced case of the same layer.

Rank 0 rewrites dist-module-<n>x-<gpu>-<date>.{json,md} in --out after each
case (a hung or failed case leaves the earlier ones written); the script
exits non-zero when a result differs or a case fails.
"""

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

import dist_common

torch, dist = dist_common.init()

from fp8mlir.module import load_module  # noqa: E402
from fp8mlir.testing import dist_module_cases  # noqa: E402

TORCH_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def make_inputs(fn, seed):
    """Deterministic arguments (the same on every rank): bf16/f32 data with
    outliers, a scalar scale."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    for arg in fn.arguments:
        shape = tuple(arg.shape)
        if not shape:  # a delayed-scaling scale
            out.append(torch.tensor(48.0, dtype=TORCH_DTYPES[arg.dtype]).cuda())
            continue
        x = torch.randn(shape, generator=gen) * 2.0
        x.view(-1)[::997] *= 40.0
        out.append(x.to(TORCH_DTYPES[arg.dtype]).cuda())
    return out


def as_bytes(t):
    return t.contiguous().view(-1).view(torch.uint8)


def timed(call, repeat=10):
    call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeat):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeat * 1e3


def load_case(directory, backend, seed):
    """The case's sharded and whole programs (collectives on torch.distributed
    or, for backend "nccl", on the runtime's NCCL backend) and its inputs."""
    kwargs = {"process_group": None}
    if backend == "nccl":
        kwargs["collectives"] = "nccl"
    module = load_module(directory, **kwargs)
    return module.sharded, module.whole, make_inputs(module.whole, seed)


def run_case(name, directory, backend, seed):
    sharded, whole, args = load_case(directory, backend, seed)
    expected = whole(*args)
    got = sharded(*args)
    torch.cuda.synchronize()
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    got = got if isinstance(got, (tuple, list)) else (got,)
    results = []
    for i, (e, g) in enumerate(zip(expected, got)):
        differ = int((as_bytes(e) != as_bytes(g)).sum().item()) if e.shape == g.shape else -1
        results.append({"result": whole.result_names[i], "shape": list(e.shape),
                        "dtype": str(e.dtype).replace("torch.", ""),
                        "bytes_differing": differ})
    return {"case": name, "backend": backend, "rank": dist.get_rank(),
            "collectives": sharded.num_collectives, "results": results,
            "equal": all(r["bytes_differing"] == 0 for r in results),
            "sharded_ms": timed(lambda: sharded(*args)),
            "whole_ms": timed(lambda: whole(*args))}


# Per mode: how each result of a rank is placed in the whole tensor (the
# dimension its pieces are concatenated along, None: the whole on every
# rank) and whether it must be bit-exact.
LAYOUT = {"column": {"y": (1, True), "dx": (0, False), "dw": (0, True)},
          "row": {"y": (0, False), "dx": (1, True), "dw": (1, True)},
          "dp": {"y": (None, True), "dx": (None, True), "dw": (0, True)}}
TOLERANCE = 1e-2
F32_PARTIALS_TOLERANCE = 1e-3


def run_layer(name, spec, directory, backend, seed):
    """A TP/DP layer step against the single-device step (see LAYOUT)."""
    mode, f32_partials = spec[0], spec[5]
    tolerance = F32_PARTIALS_TOLERANCE if f32_partials else TOLERANCE
    world = dist.get_world_size()
    sharded, whole, args = load_case(directory, backend, seed)
    expected = dict(zip(whole.result_names, whole(*args)))
    got = dict(zip(sharded.result_names, sharded(*args)))
    torch.cuda.synchronize()
    results = []
    for result, (dim, exact) in LAYOUT[mode].items():
        piece = got[result].contiguous()
        if dim is not None:
            pieces = [torch.empty_like(piece) for _ in range(world)]
            dist.all_gather(pieces, piece)
            piece = torch.cat(pieces, dim=dim)
        want = expected[result]
        if mode == "dp" and result == "dw":
            want = want * world  # every rank's gradient is the same
            exact = world == 2  # x + x == 2x exactly; longer sums round
        if piece.shape != want.shape:
            results.append({"result": result, "shape": list(piece.shape),
                            "expected_shape": list(want.shape), "ok": False})
            continue
        differ = int((as_bytes(piece) != as_bytes(want)).sum().item())
        error = float((piece.float() - want.float()).norm() / want.float().norm().clamp_min(1e-30))
        results.append({"result": result, "shape": list(piece.shape),
                        "rule": "bit-exact" if exact else f"rel. error <= {tolerance}",
                        "bytes_differing": differ, "relative_error": error,
                        "ok": differ == 0 if exact else error <= tolerance})
    return {"case": name, "backend": backend, "rank": dist.get_rank(), "mode": mode,
            "collectives": sharded.num_collectives, "results": results,
            "equal": all(r["ok"] for r in results),
            "sharded_ms": timed(lambda: sharded(*args)),
            "whole_ms": timed(lambda: whole(*args))}


def markdown(report):
    lines = ["# Compiled module programs with collectives vs one GPU", ""]
    lines += dist_common.environment_markdown(report["environment"])
    lines += ["| case | backend | collectives | equal (all ranks) | sharded ms | whole ms | notes |",
              "|---|---|---|---|---|---|---|"]
    for row in report["cases"]:
        ranks = row["ranks"]
        equal = all(r.get("equal") for r in ranks)
        notes = "; ".join(sorted({r["error"] for r in ranks if r.get("error")}))
        if "mode" in ranks[0] and not notes:
            notes = ", ".join(f"{x['result']} {x.get('rule', 'shape')}: "
                              f"{x.get('bytes_differing', '-')} bytes differ, "
                              f"rel. {x.get('relative_error', float('nan')):.2e}"
                              for x in ranks[0]["results"])
        elif not equal and not notes:
            notes = "; ".join(f"rank {r['rank']} {x['result']}: {x['bytes_differing']} bytes differ"
                              for r in ranks for x in r.get("results", [])
                              if x["bytes_differing"])
        ms = [r for r in ranks if "sharded_ms" in r]
        lines.append(f"| {row['case']} | {row['backend']} | {ranks[0].get('collectives', '')} | "
                     f"{'yes' if equal else ('skipped' if row.get('skipped') else 'NO')} | "
                     + (f"{max(r['sharded_ms'] for r in ms):.3f} | {max(r['whole_ms'] for r in ms):.3f}"
                        if ms else " | ") + f" | {notes} |")
    lines += _partials_comparison(report)
    return lines


def _partials_comparison(report):
    """The summed results of each f32-partials case next to those of the
    same layer with bf16-reduced partials (relative error to one GPU)."""
    errors = {}
    for row in report["cases"]:
        for x in row["ranks"][0].get("results", []):
            if x.get("rule", "").startswith("rel."):
                errors[(row["case"], row["backend"], x["result"])] = x.get("relative_error")
    lines = []
    for (case, backend, result), error in errors.items():
        base = errors.get((case.removesuffix("_f32_partials"), backend, result))
        if case.endswith("_f32_partials") and error is not None and base is not None:
            lines.append(f"- {case.removesuffix('_f32_partials')} {result} [{backend}]: "
                         f"partials reduced in f32 {error:.2e}, in bf16 {base:.2e} "
                         f"({'closer' if error < base else 'NOT closer'} to one GPU)")
    return ["", "Partial sums reduced in f32 and rounded once against reduced in bf16 "
                "(relative Frobenius error to the single-GPU step):", ""] + lines if lines else []


def main():
    world = dist.get_world_size()
    cache = os.environ.get("FP8MLIR_KERNEL_CACHE", "")
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--modules", default=str(Path(cache) / dist_module_cases.DIRECTORY / str(world)))
    p.add_argument("--out", default="bench/results")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--backend", action="append", choices=["torch", "nccl"])
    args = p.parse_args()
    env = dist_common.environment(torch, dist)
    report = {"environment": env, "modules": args.modules, "cases": []}
    path = dist_common.report_path(args.out, "dist-module", env)
    failed = False
    runs = [(name, None) for name in dist_module_cases.cases(world)]
    runs += list(dist_module_cases.TP_LAYERS.items())
    for name, spec in runs:
        for backend in args.backend or ["torch", "nccl"]:
            try:
                directory = Path(args.modules) / name
                row = (run_case(name, directory, backend, args.seed) if spec is None
                       else run_layer(name, spec, directory, backend, args.seed))
            except Exception as error:  # noqa: BLE001 - reported per case
                traceback.print_exc()
                row = {"case": name, "backend": backend, "rank": dist.get_rank(),
                       "error": f"{type(error).__name__}: {error}"[:500]}
            ranks = [None] * world
            dist.all_gather_object(ranks, row)
            skipped = backend == "nccl" and all("_comm_ptr" in r.get("error", "") for r in ranks)
            entry = {"case": name, "backend": backend, "ranks": ranks, "skipped": skipped}
            if not skipped and not all(r.get("equal") for r in ranks):
                failed = True
            report["cases"].append(entry)
            if dist.get_rank() == 0:
                print(f"{name} [{backend}]: "
                      + ("skipped" if skipped else "equal" if all(r.get("equal") for r in ranks)
                         else "DIFFERENT or failed"), flush=True)
                dist_common.write_report(report, path, markdown)
    dist.barrier()
    dist.destroy_process_group()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
