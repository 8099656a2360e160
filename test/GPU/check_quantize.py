#!/usr/bin/env python3
"""Bit-exact check of the quantization kernels on a GPU, and their bandwidth.

For every kernel (NAME.json with "kind": "quantize", "amax",
"compute_scale", "update_amax_history", "dequantize" or "scales_to_mx") in
--kernels:
fresh random inputs (seeded from the clock, recorded) of several magnitudes
plus special values (0, +-subnormals, the 448/464 and 57344/61440
boundaries, +-inf, NaN, all-zero and all-NaN blocks), outputs poisoned
before the launch, then
  - every data byte and every scale equals the numerics library's reference
    (lib/Numerics through test/GPU/numerics_capi.cpp, built here), for
    transposed and untransposed columnwise outputs alike;
  - the data equals PyTorch's float8 conversion of x * scale after clamping to
    +-max (PyTorch does not saturate), with the kernel's scales;
  - the amax / history slot equals the reference;
  - compute_scale / update_amax_history: scale, scale_inv and the whole
    history (rolled in place) equal the reference, bit for bit, over
    histories with zeros, infs and NaNs;
  - casts and amax with a run-time row count ("rows": "R", an i32 kernel
    parameter) are checked at each R of DYNAMIC_ROWS, the operand shapes
    evaluated from the metadata's extents ("R", "roundup(R, 4)",
    "ceildiv(R, 128)");
  - dequantize: every output equals the reference's decode * scale_inv
    (f32) rounded to the output type, bit for bit, and PyTorch's, over
    random codes (NaN/inf codes included) and scales (0, inf, NaN,
    subnormals, every UE8M0 code) in the layouts the quantize kernels write;
  - scales_to_mx: every byte of the MX atoms (padding 0 included) equals
    blockwiseScalesToMxAtoms's, over power-of-two scales 2^-127..2^127 (f32)
    or UE8M0 codes, static R or each R of DYNAMIC_ROWS (rounded up to a
    multiple of 4 for MN-major f32 grids, whose padding rows are converted);
  - a delayed cast whose amax is returned (amax_out): the zeroed scalar
    holds the reference amax.
With --bench, times every kernel (CUDA events, median of repeats, L2 flushed
by a read, see flush_l2) against torch's device-to-device copy and PyTorch
eager quantization; also with a memset flush, for comparison.

    PYTHONPATH=python python3 test/GPU/check_quantize.py --kernels DIR --numerics LIB
        [--bench-kernels DIR] [--json out.json] [--markdown out.md]
"""
import argparse
import ctypes
import json
import math
import statistics
import sys
import time
import traceback
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(1, str(HERE.parents[1] / "python"))
from fp8mlir import _runtime as rt  # noqa: E402

FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
MAX = {"e4m3": 448.0, "e5m2": 57344.0}
TORCH_IN = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
POISON = 0xA5
# The row counts a kernel with a run-time R is checked at: one row, a partial
# tile, a whole tile, a partial second tile, and 33 tiles (the last of one row).
DYNAMIC_ROWS = (1, 127, 128, 208, 4097)
# More row counts for kernels that need R a multiple of 16 (transposed
# columnwise outputs): of DYNAMIC_ROWS only 128 and 208 are.
TRANSPOSED_DYNAMIC_ROWS = (16, 4112)


def check_rejected_rows(meta, kernel, rows, multiple):
    """A launch with R not a multiple of `multiple` must fail with the
    runtime's argument error (nothing launched), not run."""
    q = meta["quantize"]
    ops = {op["name"]: op for op in meta["operands"]}
    dtypes = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
              "ue8m0": torch.float8_e8m0fnu,
              "f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    args = {}
    for name, op in ops.items():
        shape = eval_shape(op["shape"], rows)
        args[name] = torch.empty(shape, dtype=dtypes[op["dtype"]], device="cuda")
    try:
        kernel.launch(**args)
        torch.cuda.synchronize()
    except Exception as e:  # the runtime's error, with its message
        if f"not a multiple of {multiple}" in str(e):
            return []
        return [f"R = {rows}: launch failed with an unexpected error: {e}"]
    return [f"R = {rows}: launched although R is not a multiple of {multiple} "
            f"({q['rows']} rows of a transposed output)"]


def eval_extent(extent, rows):
    """A metadata shape entry's value for the run-time row count `rows`."""
    if isinstance(extent, int):
        return extent
    e = extent.replace(" ", "")
    if e == "R":
        return rows
    for name, fn in (("roundup(R,", lambda r, k: (r + k - 1) // k * k),
                     ("ceildiv(R,", lambda r, k: (r + k - 1) // k)):
        if e.startswith(name) and e.endswith(")"):
            return fn(rows, int(e[len(name):-1]))
    raise ValueError(f"unknown extent {extent!r}")


def eval_shape(shape, rows):
    return [eval_extent(e, rows) for e in shape]


def load_numerics(path):
    lib = ctypes.CDLL(path)
    f = lib.fp8ref_quantize
    f.restype = ctypes.c_int
    f.argtypes = ([ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_int,
                   ctypes.c_int64, ctypes.c_int64, ctypes.c_int, ctypes.c_float, ctypes.c_float,
                   ctypes.c_int, ctypes.c_int, ctypes.c_float, ctypes.c_int, ctypes.c_int,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_void_p])
    lib.fp8ref_amax.restype = ctypes.c_float
    lib.fp8ref_amax.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    lib.fp8ref_current_scale.restype = ctypes.c_float
    lib.fp8ref_current_scale.argtypes = [ctypes.c_float, ctypes.c_int, ctypes.c_float,
                                         ctypes.c_int]
    lib.fp8ref_record_amax.restype = ctypes.c_float
    lib.fp8ref_record_amax.argtypes = [ctypes.c_float, ctypes.c_float]
    lib.fp8ref_delayed_scale.restype = None
    lib.fp8ref_delayed_scale.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
                                         ctypes.c_int, ctypes.c_int, ctypes.c_float,
                                         ctypes.c_void_p, ctypes.c_void_p]
    lib.fp8ref_dequantize.restype = None
    lib.fp8ref_dequantize.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                                      ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
                                      ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                      ctypes.c_void_p]
    return lib


def special_values():
    v = [0.0, -0.0, 448.0, -448.0, 464.0, -464.0, 463.99, 464.01, 480.0, 57344.0, 61440.0,
         61439.0, -61440.0, 1e38, float("inf"), float("-inf"), float("nan"), 2.0**-9,
         2.0**-10, 2.0**-10 * 1.01, -(2.0**-10), 2.0**-7, 2.0**-17, 2.0**-16, 1e-30,
         2.0**-126, 2.0**-127, 2.0**-133, 3.0 * 2.0**-130, 0.5, 1.0, 3.0, 449.0, 7.0]
    return torch.tensor(v, dtype=torch.float32)


def make_input(rows, cols, in_dtype, gen, specials):
    """Random normal rows with magnitudes spread over many binades."""
    x = torch.randn(rows, cols, generator=gen, dtype=torch.float32)
    mag = torch.pow(2.0, torch.randint(-20, 20, (rows, 1), generator=gen).float())
    x = x * mag
    if specials:
        sv = special_values()
        idx = torch.randint(0, rows * cols, (4 * sv.numel(),), generator=gen)
        x.view(-1)[idx] = sv.repeat(4)
        # A row whose first 128 columns are all zero, a block of NaN, an
        # all-zero 32x128 region, a row of huge values.
        x[0, :128] = 0.0
        if rows > 40:
            x[8:40, 128:] = 0.0
        if rows > 5:  # Run-time row counts go down to 1.
            x[3, 32:64] = float("nan")
            x[5, :] = 60000.0
    x = x.to(TORCH_IN[in_dtype])
    return x


def as_f32(x):
    return x.float().contiguous()


def ref_quantize(lib, x32, q, transposed, scale=1.0):
    """Reference data (bytes) and scale grid (f32 or u8) of one output."""
    rows, cols = x32.shape
    rule_name = q["rule"]
    gran = q["granularity"]
    e5m2 = int(q["dtype"] == "e5m2")
    rule = {"tensor": 0, "current": 0, "blockwise_pow2": 2, "blockwise_f32": 2,
            "mxfp8": 3, "mxfp8_ocp": 3}[rule_name]
    epsilon, pow2 = 0.0, 0
    if gran == "tensor":
        g, tr, tc = 0, 0, 0
    elif gran == "row":
        # One scale per row, each from its row's amax (current scaling).
        g, tr, tc = 1, 1, 0
        rule, epsilon, pow2 = 1, float(q.get("epsilon", 0.0)), int(q.get("pow2", False))
    else:
        tr, tc = (int(v) for v in gran.split("x"))
        g = 3 if rule_name.startswith("mxfp8") else 2
    out_rows, out_cols = (cols, rows) if transposed else (rows, cols)
    data = torch.empty(out_rows * out_cols, dtype=torch.uint8)
    n_scales = max(1, math.ceil(out_rows / max(tr, 1)) * math.ceil(out_cols / max(tc, 1)))
    scale_inv = torch.empty(n_scales, dtype=torch.float32)
    e8m0 = torch.empty(n_scales, dtype=torch.uint8)
    grid = (ctypes.c_int64 * 2)()
    amax = ctypes.c_float()
    status = lib.fp8ref_quantize(
        x32.data_ptr(), rows, cols, e5m2, g, tr, tc, rule, scale, epsilon, pow2,
        int(rule_name == "blockwise_f32"), float(q.get("amax_clamp", 0.0)),
        int(rule_name == "mxfp8_ocp"), int(transposed), data.data_ptr(),
        scale_inv.data_ptr(), e8m0.data_ptr(), grid, ctypes.byref(amax))
    if status != 0:
        raise RuntimeError("reference rejected the arguments")
    grid_shape = (grid[0], grid[1])
    scales = e8m0 if g == 3 else scale_inv
    scales = scales[:grid[0] * grid[1]].view(grid_shape)
    if has_mx_scales(q):
        scales = blockwise_to_mx(scales, tr, tc, out_rows, out_cols)
    return data.view(out_rows, out_cols), scales, amax.value


def has_mx_scales(q):
    """Blockwise scales written as the MX scales of a block-scaled GEMM."""
    return q.get("scale_granularity") == "mx1x32"


def blockwise_to_mx(scale_inv, tr, tc, out_rows, out_cols):
    """The MX form of power-of-two blockwise scale_inv [ceil(P/tr), ceil(K/tc)]:
    [P, ceil(K/32)] UE8M0 codes, the f32 biased exponent of each element's tile
    (docs/design.md, "Blockwise to MX on Blackwell"; NaN/inf would be 0xFF)."""
    codes = ((scale_inv.contiguous().view(torch.int32) >> 23) & 0xFF).to(torch.uint8)
    rows = torch.arange(out_rows) // tr
    blocks = torch.arange(math.ceil(out_cols / 32)) * 32 // tc
    return codes[rows][:, blocks].contiguous()


def physical_to_grid(q, phys, out_rows, out_cols):
    """The logical scale grid [out_rows, ceil(out_cols / block)] read from the
    kernel's physical layout (and a mask of what is meaningful)."""
    gran = q["granularity"]
    phys = phys.cpu()
    if gran == "tensor":
        return phys.view(1, 1)
    if gran == "row":
        return phys.view(-1, 1)
    tr, tc = (int(v) for v in gran.split("x"))
    if q["rule"].startswith("mxfp8") or has_mx_scales(q):
        # [ceil(P/128), ceil(K/128), 512] atoms; byte (p%32)*16 + (p%128)/32*4 + kb%4.
        kblocks = math.ceil(out_cols / 32)
        p = torch.arange(out_rows).view(-1, 1)
        kb = torch.arange(kblocks).view(1, -1)
        kgroups = phys.shape[1]
        off = ((p // 128) * kgroups + kb // 4) * 512 + (p % 32) * 16 + (p % 128) // 32 * 4 + kb % 4
        return phys.view(-1)[off.view(-1)].view(out_rows, kblocks)
    if tr == 1:
        # MN-major [ceil(K/128), roundup(P, 4)].
        return phys[:, :out_rows].t().contiguous()
    return phys


def torch_quantize(x32, scale_mult, dtype):
    """PyTorch's conversion of x * scale after clamping (PyTorch does not saturate)."""
    m = MAX[dtype]
    y = (x32 * scale_mult).clamp(-m, m)
    return y.to(FP8[dtype]).view(torch.uint8)


def multiplier_grid(q, scales_grid, out_rows, out_cols, ref_scale):
    """The per-element multiplier the kernel used, from its scale_inv grid."""
    gran = q["granularity"]
    if gran == "tensor":
        return torch.full((out_rows, out_cols), ref_scale)
    if gran == "row":
        # The kernel's multiplier: the reference current scale of each row.
        return ref_scale.view(-1, 1).expand(out_rows, out_cols)
    tr, tc = (int(v) for v in gran.split("x"))
    if has_mx_scales(q):
        tr, tc = 1, 32
    if q["rule"].startswith("mxfp8") or has_mx_scales(q):
        e = scales_grid.to(torch.int32)
        mult = torch.pow(2.0, (127 - e).double()).float()
        mult[e == 255] = float("nan")
    else:
        mult = 1.0 / scales_grid.float()
    full = mult.repeat_interleave(tr, 0)[:out_rows].repeat_interleave(tc, 1)[:, :out_cols]
    return full


def check_kernel(path, numerics, gen, record):
    meta = json.loads(path.read_text())
    kernel = rt.Kernel(path)
    if meta["kind"] in CHECKS:
        failures = CHECKS[meta["kind"]](meta, kernel, numerics, gen)
        kernel.close()
        return failures
    q = meta["quantize"]
    if isinstance(q["rows"], str):
        # A run-time R: every row count of DYNAMIC_ROWS (those the kernel
        # takes: a multiple of 16 for a transposed columnwise output, the
        # others must be rejected at launch).
        failures = []
        multiple = next((p.get("multiple_of", 1) for p in meta["params"]
                         if p["name"] == "r"), 1)
        for rows in DYNAMIC_ROWS + (TRANSPOSED_DYNAMIC_ROWS if multiple > 1 else ()):
            if rows % multiple != 0:
                failures += check_rejected_rows(meta, kernel, rows, multiple)
                continue
            failures += [f"R = {rows}: {f}"
                         for f in check_cast(meta, kernel, numerics, gen, record, rows)]
        kernel.close()
        return failures
    failures = check_cast(meta, kernel, numerics, gen, record, q["rows"])
    kernel.close()
    return failures


def check_cast(meta, kernel, numerics, gen, record, rows):
    """Checks the amax or cast kernel `kernel` on [rows, C] inputs."""
    q = meta["quantize"]
    cols = q["cols"]
    in_dtype = q["input_dtype"]
    ops = {op["name"]: op for op in meta["operands"]}
    failures = []
    for specials in (False, True):
        x = make_input(rows, cols, in_dtype, gen, specials).cuda()
        x32 = as_f32(x.cpu())
        ref_amax = numerics.fp8ref_amax(x32.data_ptr(), x32.numel())
        args = {"x": x}
        if meta["kind"] == "amax":
            amax = torch.zeros((), dtype=torch.float32, device="cuda")
            kernel.launch(x=x, amax=amax)
            torch.cuda.synchronize()
            got = amax.item()
            ok = (math.isnan(got) and math.isnan(ref_amax)) or got == ref_amax
            if not ok:
                failures.append(f"amax {got} != reference {ref_amax}")
            continue
        rule = q["rule"]
        given_scale = 1.0
        if "scale" in ops:
            given_scale = float(torch.exp2(torch.randint(-8, 8, (1,), generator=gen)).item()
                                * (1 + torch.rand(1, generator=gen).item()))
            args["scale"] = torch.tensor(given_scale, dtype=torch.float32, device="cuda")
        if "amax" in ops:
            args["amax"] = torch.tensor(ref_amax, dtype=torch.float32, device="cuda")
            given_scale = numerics.fp8ref_current_scale(
                ref_amax, int(q["dtype"] == "e5m2"), float(q.get("epsilon", 0.0)),
                int(q.get("pow2", False)))
        history0 = None
        if "amax_out" in ops:
            # The amax returned as it is: max-ed into a zeroed scalar.
            history0 = torch.zeros(1)
            args["amax_out"] = torch.zeros((), dtype=torch.float32, device="cuda")
        if "amax_history" in ops:
            n = ops["amax_history"]["shape"][0]
            h = torch.rand(n, generator=gen) * 100
            h[0] = float(torch.rand(1, generator=gen).item() * 10)
            history0 = h.clone()
            args["amax_history"] = h.cuda()
        outs = {}
        for name in ("rowwise", "rowwise_scale_inv", "columnwise", "columnwise_scale_inv"):
            if name in ops:
                op = ops[name]
                dt = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
                      "ue8m0": torch.float8_e8m0fnu, "f32": torch.float32}[op["dtype"]]
                t = torch.empty(eval_shape(op["shape"], rows), dtype=dt, device="cuda")
                t.view(-1).view(torch.uint8).fill_(POISON)
                outs[name] = t
        kernel.launch(**args, **outs)
        torch.cuda.synchronize()
        for transposed, dname, sname in ((False, "rowwise", "rowwise_scale_inv"),
                                         (True, "columnwise", "columnwise_scale_inv")):
            if dname not in outs:
                continue
            ref_data, ref_grid, _ = ref_quantize(numerics, x32, q, transposed, given_scale)
            got = outs[dname].view(torch.uint8).cpu()
            if transposed and q.get("columnwise_layout") == "untransposed":
                # The same data as the transposed layout, stored [R, C].
                got = got.t().contiguous()
            bad = (got != ref_data).sum().item()
            if bad:
                i = (got != ref_data).nonzero()[0].tolist()
                failures.append(f"{dname}: {bad} bytes differ from the reference, first at {i}: "
                                f"got {got[i[0], i[1]].item():#04x} want "
                                f"{ref_data[i[0], i[1]].item():#04x}")
            out_rows, out_cols = ref_data.shape
            phys = outs[sname]
            phys = phys.view(torch.uint8) if phys.dtype == torch.float8_e8m0fnu else phys
            grid = physical_to_grid(q, phys, out_rows, out_cols)
            if q["granularity"] == "tensor":
                want = torch.tensor([[1.0 / given_scale]], dtype=torch.float32)
                # scale_inv = 1.0f / scale in f32
                want = (torch.tensor([1.0], dtype=torch.float32)
                        / torch.tensor([given_scale], dtype=torch.float32)).view(1, 1)
            else:
                want = ref_grid
            if grid.dtype == torch.float32:
                same = (grid.view(torch.int32) == want.view(torch.int32))
            else:
                same = grid == want
            if not bool(same.all()):
                i = (~same).nonzero()[0].tolist()
                failures.append(f"{sname}: {(~same).sum().item()} scales differ, first at {i}: "
                                f"got {grid[i[0], i[1]].item()} want {want[i[0], i[1]].item()}")
            # PyTorch, after clamping, with the kernel's own scales.
            ref_scale = given_scale
            if q["granularity"] == "row":
                # Rows of x, or of x^T (x's columns) for the columnwise output.
                row_amax = (x32.t() if transposed else x32).abs().amax(dim=1)
                ref_scale = torch.tensor(
                    [numerics.fp8ref_current_scale(
                        float(a), int(q["dtype"] == "e5m2"), float(q.get("epsilon", 0.0)),
                        int(q.get("pow2", False))) for a in row_amax.tolist()],
                    dtype=torch.float32)
            mult = multiplier_grid(q, grid, out_rows, out_cols, ref_scale)
            xin = x32.t() if transposed else x32
            tq = torch_quantize(xin, mult, q["dtype"])
            nan_in = torch.isnan(xin * mult)
            # NaN encodings: PyTorch and cvt may pick different NaN codes.
            tbad = ((tq != got) & ~nan_in).sum().item()
            record.setdefault("torch_mismatches", 0)
            record["torch_mismatches"] += tbad
            if tbad:
                failures.append(f"{dname}: {tbad} bytes differ from PyTorch (clamped)")
        if history0 is not None:
            got = args.get("amax_history", args.get("amax_out")).cpu().view(-1)
            want = history0.clone()
            want[0] = numerics.fp8ref_record_amax(float(history0[0]), ref_amax)
            same = (got.view(torch.int32) == want.view(torch.int32)) | (got.isnan() & want.isnan())
            if not bool(same.all()):
                failures.append(f"amax_history: got {got[:2].tolist()} want {want[:2].tolist()}")
    return failures


# --- scale kernels and dequantization ------------------------------------------

def same_bits(got, want):
    """Elementwise: equal bits, or both NaN (a NaN's payload is not a
    numerics rule). got/want: float tensors of one dtype, on the CPU."""
    ints = {torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16}
    it = ints[got.dtype]
    return (got.view(it) == want.view(it)) | (got.isnan() & want.isnan())


def poisoned(shape, dtype):
    t = torch.empty(shape, dtype=dtype, device="cuda")
    t.view(-1).view(torch.uint8).fill_(POISON)
    return t


def scalar(v):
    return torch.tensor(v, dtype=torch.float32, device="cuda")


def first_difference(name, got, want):
    same = same_bits(got, want)
    if bool(same.all()):
        return None
    i = (~same).nonzero()[0].tolist()
    return (f"{name}: {(~same).sum().item()} values differ, first at {i}: got "
            f"{got[tuple(i)].item()!r} want {want[tuple(i)].item()!r}")


def special_amaxes(gen):
    return ([0.0, -0.0, 1.0, 448.0, 3.5e-38, 1e-45, 1e-30, 1e30, 3.4e38, float("inf"),
             float("-inf"), float("nan"), -2.5, 1e-3, 0.999e-3, 57344.0]
            + (torch.exp2(torch.randint(-40, 40, (16,), generator=gen).float())
               * (1 + torch.rand(16, generator=gen))).tolist())


def random_history(n, gen, trial):
    """Histories of amaxes, with special values as the trial asks."""
    h = torch.rand(n, generator=gen) * torch.exp2(torch.randint(-10, 10, (n,), generator=gen).float())
    if trial == 1:
        h[torch.randint(0, n, (max(1, n // 4),), generator=gen)] = float("nan")
    if trial == 2:
        h.zero_()
    if trial == 3:
        h.fill_(float("nan"))
    if trial == 4:
        h[torch.randint(0, n, (1,), generator=gen)] = float("inf")
    if trial == 5:
        h = -h
    if trial == 6:
        h[0] = float("nan")
    if trial == 7:
        h[torch.randint(0, n, (max(1, n // 8),), generator=gen)] = 0.0
    return h.float().contiguous()


def check_compute_scale(meta, kernel, numerics, gen):
    desc = meta["compute_scale"]
    e5m2 = int(desc["dtype"] == "e5m2")
    failures = []
    if desc["rule"] == "current":
        for a in special_amaxes(gen):
            scale, scale_inv = poisoned((), torch.float32), poisoned((), torch.float32)
            kernel.launch(amax=scalar(a), scale=scale, scale_inv=scale_inv)
            torch.cuda.synchronize()
            want = torch.tensor(numerics.fp8ref_current_scale(
                a, e5m2, float(desc["epsilon"]), int(desc["pow2"])), dtype=torch.float32)
            want_inv = torch.tensor(1.0, dtype=torch.float32) / want
            for name, got, w in (("scale", scale, want), ("scale_inv", scale_inv, want_inv)):
                diff = first_difference(f"{name} of amax {a!r}", got.cpu(), w)
                if diff:
                    failures.append(diff)
        return failures
    n = desc["history"]
    for trial in range(8):
        h = random_history(n, gen, trial)
        prev = [1.5, float("inf"), 0.25, float("nan"), 3.0e38, 7.0, 1.0, 2.0**-20][trial]
        got_h = h.cuda()
        scale, scale_inv = poisoned((), torch.float32), poisoned((), torch.float32)
        kernel.launch(amax_history=got_h, previous_scale=scalar(prev), scale=scale,
                      scale_inv=scale_inv)
        torch.cuda.synchronize()
        want_h = h.clone()
        want_s, want_si = ctypes.c_float(), ctypes.c_float()
        numerics.fp8ref_delayed_scale(want_h.data_ptr(), n, int(desc["algo"] == "most_recent"),
                                      int(desc["margin"]), e5m2, prev, ctypes.byref(want_s),
                                      ctypes.byref(want_si))
        checks = (("scale", scale.cpu(), torch.tensor(want_s.value, dtype=torch.float32)),
                  ("scale_inv", scale_inv.cpu(), torch.tensor(want_si.value, dtype=torch.float32)),
                  ("rolled amax_history", got_h.cpu(), want_h))
        for name, got, want in checks:
            diff = first_difference(f"trial {trial}: {name}", got, want)
            if diff:
                failures.append(diff)
        # Moves keep NaN payloads too: the history must be bit-identical.
        if not bool((got_h.cpu().view(torch.int32) == want_h.view(torch.int32)).all()):
            failures.append(f"trial {trial}: rolled history differs in NaN payload bits")
    return failures


def check_update_history(meta, kernel, numerics, gen):
    n = meta["update_amax_history"]["history"]
    failures = []
    for trial, a in enumerate(special_amaxes(gen)):
        h = random_history(n, gen, trial % 8)
        got_h = h.cuda()
        kernel.launch(amax_history=got_h, amax=scalar(a))
        torch.cuda.synchronize()
        want = h.clone()
        want[0] = numerics.fp8ref_record_amax(float(h[0]), a)
        diff = first_difference(f"amax {a!r}: amax_history", got_h.cpu(), want)
        if diff:
            failures.append(diff)
    return failures


DEQUANT_OUT = {"bf16": (torch.bfloat16, 1), "f16": (torch.float16, 2), "f32": (torch.float32, 0)}


def random_scales(shape, gen, specials):
    s = (torch.exp2(torch.randint(-30, 30, shape, generator=gen).float())
         * (1 + torch.rand(shape, generator=gen)))
    if specials and s.numel() > 8:
        flat = s.view(-1)
        idx = torch.randint(0, flat.numel(), (8,), generator=gen)
        flat[idx] = torch.tensor([0.0, float("inf"), float("nan"), 1e-40, -3.0, 2.0**-126,
                                  3.0e38, -0.0])
    return s.contiguous()


def check_dequantize(meta, kernel, numerics, gen):
    desc = meta["dequantize"]
    if isinstance(desc["rows"], str):
        # A run-time R: every row count of DYNAMIC_ROWS.
        failures = []
        for rows in DYNAMIC_ROWS:
            failures += [f"R = {rows}: {f}"
                         for f in check_dequantize_rows(meta, kernel, numerics, gen, rows)]
        return failures
    return check_dequantize_rows(meta, kernel, numerics, gen, desc["rows"])


def check_dequantize_rows(meta, kernel, numerics, gen, rows):
    desc = meta["dequantize"]
    cols = desc["cols"]
    gran = desc["granularity"]
    e5m2 = int(desc["dtype"] == "e5m2")
    out_dtype, out_code = DEQUANT_OUT[desc["out_dtype"]]
    ops = {op["name"]: op for op in meta["operands"]}
    mx = gran.startswith("mx")
    q = {"granularity": gran[2:] if mx else gran, "rule": "mxfp8" if mx else ""}
    if gran in ("tensor", "row"):
        g, tr, tc = (0, 0, 0) if gran == "tensor" else (1, 1, 0)
    else:
        tr, tc = (int(v) for v in q["granularity"].split("x"))
        g = 3 if mx else 2
    failures = []
    for specials in (False, True):
        codes = torch.randint(0, 256, (rows, cols), generator=gen, dtype=torch.int32)
        codes = codes.to(torch.uint8)
        if not specials:  # no NaN/inf codes: every output is a number
            codes = codes & 0x77
        shape = eval_shape(ops["scale_inv"]["shape"], rows)
        if mx:
            phys = torch.randint(0, 256, shape, generator=gen, dtype=torch.int32).to(torch.uint8)
            if not specials:
                phys = phys % 64 + 96
        else:
            phys = random_scales(shape, gen, specials)
        grid = physical_to_grid(q, phys, rows, cols).contiguous()
        elem = FP8["e5m2" if e5m2 else "e4m3"]
        y = poisoned((rows, cols), out_dtype)
        phys_gpu = phys.cuda().view(torch.float8_e8m0fnu) if mx else phys.cuda()
        kernel.launch(x=codes.cuda().view(elem), scale_inv=phys_gpu, y=y)
        torch.cuda.synchronize()
        want = torch.empty((rows, cols), dtype=out_dtype)
        grid_f32 = grid if not mx else torch.zeros(1)
        grid_u8 = grid if mx else torch.zeros(1, dtype=torch.uint8)
        numerics.fp8ref_dequantize(codes.data_ptr(), rows, cols, e5m2, g, tr, tc,
                                   grid_f32.data_ptr(), grid_u8.data_ptr(), out_code,
                                   want.data_ptr())
        got = y.cpu()
        diff = first_difference("y", got, want)
        if diff:
            failures.append(diff)
        # PyTorch: f32 product of the decoded codes and the expanded scales.
        if mx:
            e = grid.to(torch.int32)
            sgrid = torch.pow(2.0, (e - 127).double()).float()
            sgrid[e == 255] = float("nan")
        else:
            sgrid = grid.float()
        if gran == "tensor":
            full = sgrid.view(1, 1).expand(rows, cols)
        else:
            br = 1 if gran == "row" or tr == 1 else tr
            bc = cols if gran == "row" else tc
            full = sgrid.repeat_interleave(br, 0)[:rows].repeat_interleave(bc, 1)[:, :cols]
        peer = (codes.view(elem).float() * full).to(out_dtype)
        bad = (~same_bits(got, peer)).sum().item()
        if bad:
            failures.append(f"y: {bad} values differ from PyTorch")
    return failures


def mx_atom_image(codes, kgroups):
    """The 128x4 atom image [ceil(P/128), kgroups, 512] of UE8M0 codes [P, KB]
    (byte (p%32)*16 + (p%128)/32*4 + kb%4 of atom (p/128, kb/4), padding 0):
    ScaleEmulation's layoutScaleFactors."""
    rows, kblocks = codes.shape
    image = torch.zeros(math.ceil(rows / 128) * kgroups * 512, dtype=torch.uint8)
    p = torch.arange(rows).view(-1, 1)
    kb = torch.arange(kblocks).view(1, -1)
    off = ((p // 128) * kgroups + kb // 4) * 512 + (p % 32) * 16 + (p % 128) // 32 * 4 + kb % 4
    image[off.view(-1)] = codes.reshape(-1)
    return image.view(-1, kgroups, 512)


def check_scales_to_mx(meta, kernel, numerics, gen):
    """Every byte of the atoms (padding included) against
    blockwiseScalesToMxAtoms's rule, for power-of-two scales over the whole
    UE8M0 range (2^-127 subnormal to 2^127) or UE8M0 codes 0..254."""
    desc = meta["scales_to_mx"]
    tr, tc = desc["tile"]
    kblocks = desc["mx_blocks"]
    grid_cols = math.ceil(kblocks * 32 / tc)
    kgroups = math.ceil(kblocks / 4)
    failures = []
    mn_major = desc["input_layout"] == "mn_major_tma_aligned"
    for rows in (DYNAMIC_ROWS if isinstance(desc["rows"], str) else (desc["rows"],)):
        if mn_major and isinstance(desc["rows"], str):
            # A run-time R is RP = roundup(R, 4): every row of the padded
            # grid is converted (the padding's codes included).
            rows = (rows + 3) // 4 * 4
        exps = torch.randint(-127, 128, (math.ceil(rows / tr), grid_cols), generator=gen)
        codes = (exps + 127).to(torch.uint8)
        if desc["input_dtype"] == "f32":
            given = torch.exp2(exps.double()).float()
        else:
            given = codes.view(torch.float8_e8m0fnu)
        if mn_major:
            # [ceil(C/128), roundup(R, 4)], the padding poisoned.
            padded = torch.full((grid_cols, (rows + 3) // 4 * 4), float("nan"))
            padded[:, :rows] = given.t()
            given = padded
        given = given.contiguous().cuda()
        mx = codes[torch.arange(rows) // tr][:, torch.arange(kblocks) * 32 // tc]
        want = mx_atom_image(mx, kgroups)
        got = torch.empty(want.shape, dtype=torch.float8_e8m0fnu, device="cuda")
        got.view(torch.uint8).fill_(POISON)
        kernel.launch(scale_inv=given, mx_scale_inv=got)
        torch.cuda.synchronize()
        got = got.view(torch.uint8).cpu()
        bad = (got != want).sum().item()
        if bad:
            i = (got != want).view(-1).nonzero()[0].item()
            failures.append(f"R = {rows}: {bad} atom bytes differ, first at byte {i}: "
                            f"got {got.view(-1)[i].item():#04x} want {want.view(-1)[i].item():#04x}")
    return failures


CHECKS = {"compute_scale": check_compute_scale, "update_amax_history": check_update_history,
          "dequantize": check_dequantize, "scales_to_mx": check_scales_to_mx}


# --- bandwidth ---------------------------------------------------------------

def flush_l2(buf):
    """Evicts the last launch's data from L2 by reading `buf` (larger than L2),
    leaving L2 clean. A memset flush leaves L2 full of its dirty lines, whose
    write-back then lands in the next timed launch: a copy pays it, a
    read-only kernel (amax) pays it in full, 18% of its time at 8192^2."""
    buf.sum()


def memset_l2(buf):
    buf.zero_()


def time_fn(fn, flush, reps=20):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    fn()
    torch.cuda.synchronize()
    for i in range(reps):
        flush()
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end)) * 1e-3


def bench(kernel_dir, results):
    l2 = torch.zeros(256 * 2**20, dtype=torch.uint8, device="cuda")
    flush = lambda: flush_l2(l2)  # noqa: E731
    memset = lambda: memset_l2(l2)  # noqa: E731
    by_shape = {}
    for path in sorted(Path(kernel_dir).glob("*.json")):
        meta = json.loads(path.read_text())
        if meta.get("kind") not in ("quantize", "amax"):
            continue
        # A run-time row count is timed on a square input (R = C).
        rows, cols = meta["quantize"]["rows"], meta["quantize"]["cols"]
        by_shape.setdefault((rows if isinstance(rows, int) else cols, cols),
                            []).append(path)
    for (n, cols), paths in sorted(by_shape.items()):
        x = torch.randn(n, cols, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty_like(x)
        t_copy = time_fn(lambda: dst.copy_(x), flush)
        copy_bw = 2 * x.numel() * 2 / t_copy
        memset_copy_bw = 2 * x.numel() * 2 / time_fn(lambda: dst.copy_(x), memset)
        kernels = {}
        for path in paths:
            meta = json.loads(path.read_text())
            k = rt.Kernel(path)
            ops = {}
            for op in meta["operands"]:
                if op["name"] == "x":
                    ops["x"] = x
                    continue
                dt = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
                      "ue8m0": torch.float8_e8m0fnu, "f32": torch.float32}[op["dtype"]]
                t = torch.zeros(eval_shape(op["shape"], n), dtype=dt, device="cuda")
                if op["name"] in ("scale", "amax") and op["role"] == "input":
                    t.fill_(1.0)
                ops[op["name"]] = t
            bytes_moved = sum(t.numel() * t.element_size() for t in ops.values())
            kernels[path.stem] = (k, k.bind(**ops), bytes_moved, meta)
        amax_name = next((k for k in kernels if k.startswith("fp8_amax")), None)
        for name, (k, launch, nbytes, meta) in kernels.items():
            t = time_fn(launch, flush)
            t_memset = time_fn(launch, memset)
            entry = {"kernel": name, "n": n, "cols": cols, "seconds": t, "bytes": nbytes,
                     "bandwidth_GBps": nbytes / t / 1e9, "copy_GBps": copy_bw / 1e9,
                     "fraction_of_copy": nbytes / t / copy_bw,
                     "memset_flush_seconds": t_memset,
                     "memset_flush_copy_GBps": memset_copy_bw / 1e9,
                     "memset_flush_fraction_of_copy": nbytes / t_memset / memset_copy_bw}
            q = meta["quantize"]
            if q.get("rule") == "current" and q.get("granularity") == "tensor" and amax_name:
                # Per-tensor current scaling = amax kernel + cast kernel.
                ak, alaunch, abytes, _ = kernels[amax_name]
                t2 = time_fn(lambda: (alaunch(), launch()), flush)
                total = nbytes + abytes - 4
                entry.update({"two_launch_seconds": t2,
                              "two_launch_bytes": total,
                              "two_launch_fraction_of_copy": total / t2 / copy_bw})
            entry["torch_eager_seconds"] = torch_eager_time(x, meta, flush)
            results.append(entry)
            print(f"{name:75s} {t * 1e6:8.1f} us {nbytes / t / 1e9:7.0f} GB/s "
                  f"({100 * nbytes / t / copy_bw:5.1f}% of copy {copy_bw / 1e9:.0f} GB/s)"
                  + f"  memset-flush {100 * entry['memset_flush_fraction_of_copy']:5.1f}%"
                  + (f"  2-launch {100 * entry['two_launch_fraction_of_copy']:5.1f}%"
                     if "two_launch_seconds" in entry else "")
                  + (f"  torch {entry['torch_eager_seconds'] * 1e6:8.1f} us"
                     if entry["torch_eager_seconds"] else ""), flush=True)
        for k, *_ in kernels.values():
            k.close()


def torch_eager_time(x, meta, flush):
    """PyTorch eager for the same computation (rowwise, + the transposed copy)."""
    q = meta["quantize"]
    if meta["kind"] == "amax":
        return time_fn(lambda: x.abs().amax(), flush)
    col = any(op["name"] == "columnwise" for op in meta["operands"])
    dt = FP8[q["dtype"]]
    m = MAX[q["dtype"]]
    g = q["granularity"]

    def run():
        xf = x.float()
        if g == "row":
            y = (xf * (m / xf.abs().amax(dim=1, keepdim=True))).clamp(-m, m).to(dt)
            return y
        if g == "tensor":
            s = m / xf.abs().amax()
            y = (xf * s).clamp(-m, m).to(dt)
            if col:
                y.t().contiguous()
            return
        tr, tc = (int(v) for v in g.split("x"))
        n = x.shape[0]
        xb = xf.view(n // tr, tr, n // tc, tc)
        a = xb.abs().amax(dim=(1, 3), keepdim=True)
        s = m / a
        y = (xb * s).clamp(-m, m).to(dt)
        if col:
            xt = xf.t().contiguous().view(n // tr, tr, n // tc, tc)
            at = xt.abs().amax(dim=(1, 3), keepdim=True)
            (xt * (m / at)).clamp(-m, m).to(dt)
        return y
    return time_fn(run, flush, reps=5)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", type=Path)
    p.add_argument("--bench-kernels", type=Path)
    p.add_argument("--numerics", required=True)
    p.add_argument("--json", type=Path)
    p.add_argument("--seed", type=int)
    p.add_argument("--filter", default="",
                   help="comma-separated substrings: check only kernels with one")
    args = p.parse_args()
    seed = args.seed if args.seed is not None else int(time.time())
    gen = torch.Generator().manual_seed(seed)
    numerics = load_numerics(args.numerics)
    report = {"seed": seed, "device": torch.cuda.get_device_name(),
              "torch": torch.__version__, "checks": [], "bench": []}
    passed = failed = 0
    if args.kernels:
        for path in sorted(args.kernels.glob("*.json")):
            meta = json.loads(path.read_text())
            if meta.get("kind") not in ("quantize", "amax", *CHECKS):
                continue
            if args.filter and not any(f in path.stem for f in args.filter.split(",")):
                continue
            record = {"kernel": path.stem}
            try:
                failures = check_kernel(path, numerics, gen, record)
            except Exception:  # noqa: BLE001 - report and go on
                failures = [traceback.format_exc()]
            record["failures"] = failures
            report["checks"].append(record)
            status = "PASS" if not failures else "FAIL"
            passed += not failures
            failed += bool(failures)
            print(f"{status} {path.stem}" + "".join(f"\n    {f}" for f in failures[:4]),
                  flush=True)
        print(f"{passed} passed, {failed} failed (seed {seed})")
        if passed + failed == 0:
            # A missing directory or a filter matching nothing is not a pass.
            print(f"error: no quantization kernel in {args.kernels}"
                  + (f" matching {args.filter!r}" if args.filter else ""))
            failed = 1
    if args.bench_kernels:
        bench(args.bench_kernels, report["bench"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
