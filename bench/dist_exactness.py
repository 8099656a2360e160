#!/usr/bin/env python3
"""FP8 communication on several GPUs equals single-GPU FP8, bit for bit.

    torchrun --nproc-per-node 2 bench/dist_exactness.py [--out bench/results] [--seed N]

Every rank (one GPU each, NCCL) checks, for every recipe:

1. sharded quantization + FP8 all-gather (fp8mlir.distributed.sharded) of
   row and column shards, even and uneven, with boundaries that cut
   1x128 / 128x128 / 1x32 / 32x1 blocks (fixed cases plus random ones from
   --seed), against quantizing the whole tensor on one GPU: the bytes and
   the scales bit for bit (on the kernels' blockwise path, where no
   boundary cuts a block, the codes and the scales travel in one
   all-gather: checked too). References: fp8mlir.testing.torch_recipes
   (current, delayed, blockwise) and fp8mlir.numerics (MXFP8, NumPy on the
   host: no sm_100a GEMM is needed to check MX quantization);
2. ZeRO-1 FP8 primary weights: flat f32 master shards cutting parameters
   inside rows, per-parameter amax grids, one max all-reduce, FP8
   all-gather, against each parameter quantized whole;
3. tensor-parallel FP8 linear layers with sequence parallelism
   (fp8mlir.distributed.tp; column- and row-parallel; current, delayed,
   blockwise), forward and backward, against the single-GPU
   torch_recipes.TorchFP8Linear on the whole tensors. The FP8 operands are
   equal by (1); GEMM outputs that are not reduced across ranks use the
   same operands and the same cuBLASLt call shape class, those that are
   (the row-parallel Y, the column-parallel dX: a sum of per-rank f32
   partials) differ by the order of f32 additions: checked to a relative
   Frobenius error (docs/distributed.md), the exact equality is reported.
   FP8 communication against BF16 communication (gather, then quantize):
   every output bit for bit.

Sections 1-3 run twice: on the torch references (eager PyTorch
quantization, cuBLASLt GEMMs) and on the project's kernels
(fp8mlir.distributed.kernels: fp8mlir.quantize for the encoding, with the
amax all-reduce in front for per-tensor scaling; fp8mlir.scaled_mm for
the TP GEMMs), checked against the same references. The kernel sections
need FP8RT_LIBRARY and a kernel cache holding
``fp8mlir.populate --suite dist`` (bench/run_dist_on_gpu.sh sets both up);
``--no-kernels`` skips them. What ran on a kernel and what fell back to the
reference (and why) is counted in the report.

Writes dist-exactness-<n>x-<gpu>-<date>.{json,md} (rank 0) and exits
non-zero when a check fails.
"""

import argparse
import os
import sys
import traceback

import dist_common

torch, dist = dist_common.init()


from fp8mlir import numerics  # noqa: E402
from fp8mlir.distributed import sharded as sh  # noqa: E402
from fp8mlir.distributed import tp  # noqa: E402
from fp8mlir.distributed.backends import TorchBackend  # noqa: E402
from fp8mlir.distributed.comm import TorchCommunicator  # noqa: E402
from fp8mlir.testing import dist_cases as dc  # noqa: E402
from fp8mlir.testing import torch_recipes as rec  # noqa: E402

BE = TorchBackend()
REDUCED_TOL = 1e-2   # relative Frobenius error of outputs summed across ranks
SAME_TOL = 1e-3      # outputs of the same operands on fewer rows/columns


def make_tensor(shape, seed, dtype):
    """Identical on every rank: normal values whose magnitude changes
    every 37 rows and 41 columns, one outlier."""
    g = torch.Generator().manual_seed(seed)
    rows, cols = shape
    x = torch.randn(shape, generator=g)
    rs = torch.randint(-6, 7, (-(-rows // 37), 1), generator=g).float().exp2()
    cs = torch.randint(-3, 4, (1, -(-cols // 41)), generator=g).float().exp2()
    x = x * rs.repeat_interleave(37, 0)[:rows] * cs.repeat_interleave(41, 1)[:, :cols]
    x[int(torch.randint(rows, (1,), generator=g)), int(torch.randint(cols, (1,), generator=g))] = 3000.0
    return x.to(dtype).cuda()


# (name, QuantSpec, reference(x) -> (codes [R, C] uint8, scale_inv grid as on R x C))
def _torch_ref(**kw):
    transposed = kw.pop("transposed", False)

    def ref(x):
        q = rec.quantize(x, transposed=transposed, **kw)
        data, s = q.data.view(torch.uint8), q.scale_inv
        return (data.t(), s.t()) if transposed else (data, s)
    return ref


def _mx_ref(fmt="e4m3", transposed=False):
    def ref(x):
        q = numerics.quantize(x.float().cpu().numpy(), "mxfp8", fmt, ("mx", 32), transposed)
        data, s = torch.from_numpy(q.data).cuda(), torch.from_numpy(q.scale_inv).cuda()
        return (data.t(), s.t()) if transposed else (data, s)
    return ref


QUANT_CASES = [
    ("current e4m3", sh.QuantSpec("current"), _torch_ref(recipe="current")),
    ("current e5m2 pow2", sh.QuantSpec("current", "e5m2", pow2=True),
     _torch_ref(recipe="current", fmt="e5m2", pow2=True)),
    ("delayed e4m3", sh.QuantSpec("delayed", scale=0.375), _torch_ref(recipe="delayed", scale=0.375)),
    ("blockwise 1x128", sh.QuantSpec("blockwise", block=(1, 128), amax_clamp=1e-4),
     _torch_ref(recipe="blockwise", granularity=(1, 128), amax_clamp=1e-4)),
    ("blockwise 1x128 columnwise", sh.QuantSpec("blockwise", block=(128, 1), amax_clamp=1e-4),
     _torch_ref(recipe="blockwise", granularity=(1, 128), amax_clamp=1e-4, transposed=True)),
    ("blockwise 128x128 pow2", sh.QuantSpec("blockwise", block=(128, 128), amax_clamp=1e-4),
     _torch_ref(recipe="blockwise", granularity=(128, 128), amax_clamp=1e-4)),
    ("blockwise 128x128 f32", sh.QuantSpec("blockwise", block=(128, 128), scales="f32"),
     _torch_ref(recipe="blockwise", granularity=(128, 128), scales="f32")),
    ("mxfp8 1x32", sh.QuantSpec("mxfp8", block=(1, 32)), _mx_ref()),
    ("mxfp8 32x1 columnwise", sh.QuantSpec("mxfp8", block=(32, 1)), _mx_ref(transposed=True)),
    ("mxfp8 e5m2 1x32", sh.QuantSpec("mxfp8", "e5m2", block=(1, 32)), _mx_ref("e5m2")),
]


def same_bits(a, b):
    a, b = a.contiguous(), b.contiguous()
    if a.shape != b.shape:
        return False
    if a.dtype == torch.float32:
        a, b = a.view(torch.int32), b.view(torch.int32)
    return bool(torch.equal(a, b))


def check_quantization(comm, seed, random_cases, kq=None):
    """Sharded quantization + FP8 all-gather against the whole tensor's
    reference; with the kernels (``kq``), also the kernels' quantization of
    the whole tensor (MXFP8 has no Hopper kernel: left out there)."""
    results = []
    section = "quantization" + (" (project kernels)" if kq else "")
    cases = [c for c in QUANT_CASES if not (kq and c[1].recipe == "mxfp8")]
    for i, (shape, dim, counts) in enumerate(dc.splits(comm.size, seed, random_cases)):
        for dtype in (torch.bfloat16, torch.float32):
            x = make_tensor(shape, seed * 1000 + i, dtype)
            w = (sh.row_window if dim == 0 else sh.column_window)(shape, counts, comm.rank)
            local = x[w.row:w.row + w.rows, w.col:w.col + w.cols].contiguous()
            for name, spec, ref in cases:
                # the kernels' blockwise codes and scales: in two all-gathers
                # (the default) and in one packed all-gather (opt-in)
                forms = (False, True) if kq and spec.block != "tensor" else (None,)
                for packed in forms:
                    results.append(check_quantization_case(comm, kq, x, local, shape, dim, counts,
                                                           name, spec, ref, packed))
                    results[-1]["section"] = section
                    results[-1]["case"] = f"{shape[0]}x{shape[1]} {str(dtype)[6:]} dim {dim} " \
                                          f"split {counts}" + {None: "", False: " (two gathers)",
                                                               True: " (packed gather)"}[packed]
    return results


def check_quantization_case(comm, kq, x, local, shape, dim, counts, name, spec, ref, packed):
    """One sharded quantization + FP8 all-gather against the whole tensor's
    reference; ``packed``: the kernels' blockwise gather form (None: the
    path has one form)."""
    comm.traffic.clear()
    if kq:
        default = kq.PACKED_GATHER
        kq.PACKED_GATHER = default if packed is None else packed
        try:
            q = kq.shard_and_gather(comm, local, shape, counts, spec, dim)
        finally:
            kq.PACKED_GATHER = default
    else:
        q = sh.shard_and_gather(comm, BE, local, shape, counts, spec, dim)
    want_data, want_scale = ref(x)
    ok = same_bits(q.data, want_data) and same_bits(q.scale_inv, want_scale)
    kinds = [k for k, _ in comm.traffic]
    if packed is not None and "all_reduce_max" not in kinds:
        # codes and scales in one call, or the scales in a second one
        ok &= kinds == ["all_gather"] * (1 if packed else 2)
    if kq:
        whole = kq.quantize_whole(x, spec)
        ok &= same_bits(whole.data, want_data) and same_bits(whole.scale_inv, want_scale)
    return {"recipe": name, "ok": ok, "bytes": sum(b for _, b in comm.traffic),
            "collectives": kinds}


ZERO_PARAMS = [(3072, 1024), (1024, 1024), (2816, 1024), (1000, 1000), (5, 77), (1024, 2816)]
ZERO_CASES = [
    ("current", lambda i: sh.QuantSpec("current"), lambda i: _torch_ref(recipe="current")),
    ("delayed", lambda i: sh.QuantSpec("delayed", scale=2.0 ** -i),
     lambda i: _torch_ref(recipe="delayed", scale=2.0 ** -i)),
    ("blockwise 128x128", lambda i: sh.QuantSpec("blockwise", block=(128, 128), amax_clamp=1e-4),
     lambda i: _torch_ref(recipe="blockwise", granularity=(128, 128), amax_clamp=1e-4)),
    ("mxfp8 1x32", lambda i: sh.QuantSpec("mxfp8", block=(1, 32)), lambda i: _mx_ref()),
    ("mxfp8 32x1", lambda i: sh.QuantSpec("mxfp8", block=(32, 1)), lambda i: _mx_ref(transposed=True)),
]


def check_zero1(comm, seed, kq=None):
    """ZeRO-1 flat shards; with the kernels (``kq``) the per-tensor recipes
    only (blocks cut by a flat shard are the reference's)."""
    results = []
    backend = kq.KernelBackend() if kq else BE
    section = "zero1 primary weights" + (" (project kernels)" if kq else "")
    cases = [c for c in ZERO_CASES if not kq or c[0] in ("current", "delayed")]
    params = [make_tensor(s, seed + 50 + i, torch.float32) for i, s in enumerate(ZERO_PARAMS)]
    flat = torch.cat([p.reshape(-1) for p in params])
    layouts = [sh.FlatLayout.even(ZERO_PARAMS, comm.size)]
    uneven = sh.split(flat.numel(), comm.size)
    uneven[0] += 12345
    uneven[-1] -= 12345
    layouts.append(sh.FlatLayout(tuple(ZERO_PARAMS), tuple(uneven)))
    for layout in layouts:
        lo, hi = layout.rank_range(comm.rank)
        for name, spec_of, ref_of in cases:
            specs = [spec_of(i) for i in range(len(ZERO_PARAMS))]
            comm.traffic.clear()
            codes, scale_invs, _ = sh.quantize_flat_shard(comm, backend, flat[lo:hi], layout, specs)
            gathered = sh.gather_flat(comm, backend, codes, layout)
            ok = True
            for i, p in enumerate(params):
                want_data, want_scale = ref_of(i)(p)
                ok &= same_bits(gathered[i], want_data) and same_bits(scale_invs[i], want_scale)
            results.append({"section": section, "recipe": name,
                            "case": f"{len(ZERO_PARAMS)} params, shards {list(layout.counts)}",
                            "ok": ok, "bytes": sum(b for _, b in comm.traffic)})
    return results


def rel_error(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def single_gpu(recipe, x, w, dy, scales):
    layer = rec.TorchFP8Linear(w.shape[1], w.shape[0], bias=False, recipe=recipe,
                               device="cuda", **({"history": 4} if recipe == "delayed" else {}))
    with torch.no_grad():
        layer.weight.copy_(w)
        if recipe == "delayed":
            layer.fp8_scale.copy_(torch.tensor(scales))
    xx = x.clone().requires_grad_()
    y = layer(xx)
    y.backward(dy)
    amax = layer.amax_history[:, -1].clone() if recipe == "delayed" else None
    return y.detach(), xx.grad, layer.weight.grad, amax


def tp_run(comm, parallel, mode, recipe, x, w, dy, seq_counts, split_counts, scales, kernels):
    ctxt = tp.TPContext(comm, seq_counts, mode, kernels=kernels)
    r = comm.rank
    seq = sh.row_window(x.shape, seq_counts, r)
    if parallel == "column":
        nw = sh.row_window(w.shape, split_counts, r)
        x_r = x[seq.row:seq.row + seq.rows].clone().requires_grad_()
        w_r = w[nw.row:nw.row + nw.rows].clone().requires_grad_()
        y = tp.column_parallel_linear(x_r, w_r, ctxt, recipe, split_counts, scales)
        y.backward(dy[:, nw.row:nw.row + nw.rows].contiguous())
    else:
        kw = sh.column_window(w.shape, split_counts, r)
        x_r = x[:, kw.col:kw.col + kw.cols].clone().requires_grad_()
        w_r = w[:, kw.col:kw.col + kw.cols].clone().requires_grad_()
        y = tp.row_parallel_linear(x_r, w_r, ctxt, recipe, split_counts, scales)
        y.backward(dy[seq.row:seq.row + seq.rows].contiguous())
    return y.detach(), x_r.grad, w_r.grad, ctxt.amax


def tp_slices(parallel, comm, seq_counts, split_counts, shapes):
    """The single-GPU slices each rank's Y, dX, dW correspond to."""
    (m, k), (n, _) = shapes
    seq = sh.row_window((m, k), seq_counts, comm.rank)
    rows = slice(seq.row, seq.row + seq.rows)
    if parallel == "column":
        nw = sh.row_window((n, k), split_counts, comm.rank)
        cols = slice(nw.row, nw.row + nw.rows)
        return (slice(None), cols), (rows, slice(None)), (cols, slice(None))
    kw = sh.column_window((n, k), split_counts, comm.rank)
    ks = slice(kw.col, kw.col + kw.cols)
    return (rows, slice(None)), (slice(None), ks), (slice(None), ks)


def check_tp(comm, seed, kernels=False):
    """TP layers against the single-GPU reference layer (eager quantization,
    cuBLASLt); with ``kernels`` the TP layers run on the project's kernels."""
    results = []
    section = "tp linear" + (" (project kernels)" if kernels else "")
    for idx, ((parallel, m, k, n, seq, split), recipe) in enumerate(dc.tp_cases(comm.size)):
        x = make_tensor((m, k), seed + 100 + idx, torch.bfloat16)
        w = make_tensor((n, k), seed + 200 + idx, torch.float32) * 0.02
        dy = make_tensor((m, n), seed + 300 + idx, torch.bfloat16)
        scales = [0.5, 8.0, 2.0 ** -3] if recipe == "delayed" else None
        ref = single_gpu(recipe, x, w, dy, scales)
        runs = {mode: tp_run(comm, parallel, mode, recipe, x, w, dy, seq, split, scales, kernels)
                for mode in ("fp8", "bf16")}
        where = tp_slices(parallel, comm, seq, split, ((m, k), (n, k)))
        reduced = {"column": (False, True, False), "row": (True, False, False)}[parallel]
        detail, ok = {}, True
        for j, name in enumerate(("Y", "dX", "dW")):
            got, want = runs["fp8"][j], ref[j][where[j]]
            err = rel_error(got, want)
            tol = REDUCED_TOL if reduced[j] else SAME_TOL
            same_modes = same_bits(runs["fp8"][j], runs["bf16"][j])
            detail[name] = {"rel_err": err, "bitwise_vs_1gpu": same_bits(got, want),
                            "tol": tol, "fp8_comm_equals_bf16_comm": same_modes}
            ok &= err <= tol and same_modes
        if recipe == "delayed":
            amax = runs["fp8"][3]
            got = torch.stack([amax["x"], amax["w"], amax["dy"]]).float()
            amax_ok = same_bits(got, ref[3].float())
            detail["amax_history_equal"] = amax_ok
            ok &= amax_ok
        results.append({"section": section, "recipe": recipe,
                        "case": f"{parallel} M={m} K={k} N={n} seq {seq} split {split}",
                        "ok": ok, "detail": detail})
    return results


SECTIONS = ("quantization", "quantization (project kernels)", "zero1 primary weights",
            "zero1 primary weights (project kernels)")


def tp_table(checks, section):
    rows = [c for c in checks if c["section"] == section and c["rank"] == 0]
    if not rows:
        return []
    gemms = "cuBLASLt" if section == "tp linear" else "the project's GEMMs"
    lines = [f"## {section}: TP layers (sequence parallel, {gemms}) against the single-GPU "
             "reference layer (cuBLASLt)", "",
             "| recipe | case | Y rel err (bitwise) | dX rel err (bitwise) | dW rel err (bitwise) "
             "| FP8 comm == BF16 comm | ok |", "|---|---|---|---|---|---|---|"]
    for c in rows:
        d = c["detail"]
        cells = [f"{d[t]['rel_err']:.2e} ({'yes' if d[t]['bitwise_vs_1gpu'] else 'no'})"
                 for t in ("Y", "dX", "dW")]
        same = all(d[t]["fp8_comm_equals_bf16_comm"] for t in ("Y", "dX", "dW"))
        lines.append(f"| {c['recipe']} | {c['case']} | " + " | ".join(cells)
                     + f" | {'yes' if same else 'NO'} | {'ok' if c['ok'] else 'FAIL'} |")
    return lines + [""]


def markdown(report):
    lines = ["# FP8 communication: exactness on several GPUs", ""]
    lines += dist_common.environment_markdown(report["environment"])
    checks = report["checks"]
    failed = [c for c in checks if not c["ok"]]
    lines += [f"**{len(checks) - len(failed)}/{len(checks)} checks pass** (every rank).", ""]
    for section in SECTIONS:
        if section.startswith("tp linear"):
            continue
        rows = {}
        for c in checks:
            if c["section"] == section:
                entry = rows.setdefault(c["recipe"], [0, 0, 0])
                entry[0] += 1
                entry[1] += c["ok"]
                entry[2] = max(entry[2], c.get("bytes", 0))
        lines += [f"## {section}: bit-exact against the whole tensor on one GPU", "",
                  "| recipe | cases | bit-exact | largest bytes sent per rank |", "|---|---|---|---|"]
        lines += [f"| {r} | {v[0]} | {v[1]} | {v[2]} |" for r, v in rows.items()]
        lines.append("")
    for section in ("tp linear", "tp linear (project kernels)"):
        lines += tp_table(checks, section)
    if report.get("kernel_usage"):
        lines += ["", "## What ran on the project's kernels (rank 0, all kernel sections)", ""]
        lines += [f"- {u}" for u in report["kernel_usage"]]
    if failed:
        lines += ["", "## Failures", ""]
        lines += [f"- rank {c['rank']}: {c['section']} {c['recipe']} {c['case']}" for c in failed[:50]]
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(dist_common.HERE / "results"))
    p.add_argument("--seed", type=int, default=dc.SEED)
    p.add_argument("--random-cases", type=int, default=dc.RANDOM_CASES)
    p.add_argument("--no-kernels", action="store_true",
                   help="the torch references only (no runtime, no kernel cache)")
    args = p.parse_args()
    comm = TorchCommunicator()
    checks = []
    sections = [lambda: check_quantization(comm, args.seed, args.random_cases),
                lambda: check_zero1(comm, args.seed), lambda: check_tp(comm, args.seed)]
    kq = None
    if not args.no_kernels:
        from fp8mlir.distributed import kernels as kq
        sections += [lambda: check_quantization(comm, args.seed, args.random_cases, kq),
                     lambda: check_zero1(comm, args.seed, kq),
                     lambda: check_tp(comm, args.seed, kernels=True)]
    for section in sections:
        try:
            checks += section()
        except Exception:  # noqa: BLE001
            # The other ranks are inside the section's collectives, which this
            # rank left: going on would pair mismatched collectives and hang.
            # End every rank (torchrun stops the others) with the error shown.
            traceback.print_exc()
            print(f"rank {comm.rank}: a section failed; ending the run", file=sys.stderr,
                  flush=True)
            os._exit(1)
    for c in checks:
        c["rank"] = comm.rank
    everyone = [None] * comm.size
    dist.all_gather_object(everyone, checks)
    env = dist_common.environment(torch, dist)
    status = 0
    if comm.rank == 0:
        report = {"environment": env, "seed": args.seed,
                  "checks": [c for rank in everyone for c in rank],
                  "kernel_usage": kq.usage_lines() if kq else []}
        dist_common.write_report(report, dist_common.report_path(args.out, "dist-exactness", env),
                                 markdown)
        print("\n".join(markdown(report)[-60:]))
        status = 0 if all(c["ok"] for c in report["checks"]) else 1
    flag = torch.tensor([status], device="cuda")
    dist.broadcast(flag, 0)
    dist.destroy_process_group()
    return int(flag.item())


if __name__ == "__main__":
    sys.exit(main())
