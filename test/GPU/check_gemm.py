#!/usr/bin/env python3
"""Correctness check of compiled FP8 GEMM kernels on a GPU.

For every GEMM kernel (NAME.json + NAME.ptx) in --kernels and every M, build
fresh quantized inputs with the kernel's N, K, dtypes and granularities,
poison D with NaN, launch through libfp8rt on a torch stream and check:
  - every element of D was written (no NaN left),
  - ||D - ref||_F / ||ref||_F <= tolerance, ref = f64 GEMM of the dequantized
    inputs (+ bias, + C, then the epilogue activation); and the worst row
    within ROW_TOLERANCE_FACTOR x that,
  - a second launch gives bit-identical D (determinism),
  - with an output amax: it equals max |D| of the stored D, bit for bit,
  - where D may be C's memory (`in_place_of`): a launch with C's copy as both
    C and D leaves it bit-identical to the D of the separate buffers.
Then a negative section: malformed launches must raise an error naming the
offending operand instead of crashing.

    PYTHONPATH=python python3 test/GPU/check_gemm.py --kernels out/ [--m 1,64] [--json r.json]

Exit status: 0 all passed, 1 a check failed, 2 nothing to check / bad usage.
"""

import argparse
import json
import re
import sys
import traceback
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "python"))  # fp8mlir, if PYTHONPATH lacks it
from fp8mlir.testing import gemm_inputs as gi  # noqa: E402
from fp8mlir.testing.gemm_spec import (ROW_TOLERANCE_FACTOR, load_specs,  # noqa: E402
                                       parse_int_list, scale_shape)

DEFAULT_MS = "1,64,127,128,1600,4096,4097"
KNOWN_OPERANDS = ("a", "b", "a_scale_inv", "b_scale_inv", "bias", "c", "d", "amax")
# Not a multiple of 4: 1x128 A scales then need their padding.
NEGATIVE_M = 127


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernels", required=True, type=Path,
                   help="directory with NAME.json/NAME.ptx from fp8-compile")
    p.add_argument("--m", default=DEFAULT_MS,
                   help=f"comma-separated M values (default {DEFAULT_MS}); "
                        "kernels with a static M use only theirs")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--seed", type=int, help="base seed (default: from the clock)")
    p.add_argument("--library", help="libfp8rt.so (default: $FP8RT_LIBRARY or build dirs)")
    p.add_argument("--filter", default="",
                   help="only kernels whose name contains this (or one of these, "
                        "comma-separated)")
    return p.parse_args(argv)


# --- building a launch ------------------------------------------------------------

def metadata_operand_names(spec):
    names = [op.get("name") for op in spec.operands]
    unknown = [n for n in names if n not in KNOWN_OPERANDS]
    if unknown:
        raise ValueError(f"metadata operand(s) {unknown} unknown to this test "
                         f"(knows {', '.join(KNOWN_OPERANDS)})")
    return set(names) if names else set(KNOWN_OPERANDS)


def inputs_for(spec, m, seed, device="cuda"):
    bias_dtype = spec.operand_dtype("bias", "bf16") if spec.bias else None
    return gi.make_gemm_inputs(
        m, spec.n, spec.k, a_dtype=spec.a_dtype, b_dtype=spec.b_dtype,
        a_gran=spec.a_gran, b_gran=spec.b_gran, bias_dtype=bias_dtype,
        with_c=spec.accumulate_into_c, seed=seed, device=device,
        a_scale_expected=spec.expected_shape("a_scale_inv", m),
        b_scale_expected=spec.expected_shape("b_scale_inv", m),
        out_dtype=spec.out_dtype)


def poisoned_output(spec, m, device="cuda"):
    dtype = gi.torch_dtype(spec.operand_dtype("d", spec.out_dtype))
    return torch.full((m, spec.n), float("nan"), dtype=dtype, device=device)


def launch_operands(spec, inputs, d, amax=None):
    wanted = metadata_operand_names(spec)
    ops = dict(inputs.operands(), d=d)
    if amax is not None:
        ops["amax"] = amax
    return {name: t for name, t in ops.items() if name in wanted}


def zeroed_amax(spec, device="cuda"):
    """The output-amax buffer (max-accumulated into: starts at 0), or None."""
    return torch.zeros((), dtype=torch.float32, device=device) if spec.output_amax else None


def launch_and_wait(kernel, operands, stream):
    """Launch on `stream` after the work queued on the current stream; wait."""
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        kernel.launch(stream=stream, **operands)
    stream.synchronize()


# --- one case ---------------------------------------------------------------------

def case_record(spec, m, seed):
    return {"kernel": spec.name, "m": m, "n": spec.n, "k": spec.k,
            "recipe": spec.recipe, "a_dtype": spec.a_dtype, "b_dtype": spec.b_dtype,
            "out_dtype": spec.out_dtype, "accumulation": spec.accumulation,
            "bias": spec.bias, "accumulate_into_c": spec.accumulate_into_c,
            "activation": spec.activation, "output_amax": spec.output_amax,
            "tolerance": spec.tolerance, "seed": seed,
            "rel_err": None, "worst_row_err": None, "unwritten": None,
            "deterministic": None, "passed": False, "error": None}


def check_case(kernel, spec, m, seed, stream, device="cuda"):
    """Run one (kernel, M) case; returns its record (never raises)."""
    record = case_record(spec, m, seed)
    try:
        inputs = inputs_for(spec, m, seed, device)
        ref = gi.reference(inputs, spec.activation)
        d1, d2 = poisoned_output(spec, m, device), poisoned_output(spec, m, device)
        amax1, amax2 = zeroed_amax(spec, device), zeroed_amax(spec, device)
        launch_and_wait(kernel, launch_operands(spec, inputs, d1, amax1), stream)
        launch_and_wait(kernel, launch_operands(spec, inputs, d2, amax2), stream)
        record["unwritten"] = int(torch.isnan(d1).sum().item())
        record["rel_err"] = gi.relative_error(d1, ref)
        record["worst_row_err"] = gi.worst_row_error(d1, ref)
        record["deterministic"] = gi.bitwise_equal(d1, d2)
        if spec.in_place:
            # D += A B in C's own memory (the main-grad form).
            d3 = inputs.c.clone()
            launch_and_wait(kernel, dict(launch_operands(spec, inputs, d3), c=d3), stream)
            record["in_place_equal"] = gi.bitwise_equal(d3, d1)
            record["deterministic"] = record["deterministic"] and record["in_place_equal"]
        amax_ok = True
        if amax1 is not None:
            # Exact: the max |D| of the stored output, bit for bit.
            expected = d1.float().abs().max()
            record["amax"] = amax1.item()
            record["amax_expected"] = expected.item()
            amax_ok = gi.bitwise_equal(amax1, expected) and gi.bitwise_equal(amax1, amax2)
        record["passed"] = (record["unwritten"] == 0
                            and record["rel_err"] <= spec.tolerance
                            and record["worst_row_err"] <= ROW_TOLERANCE_FACTOR * spec.tolerance
                            and record["deterministic"] and amax_ok)
    except Exception as e:  # report and go on with the next case
        record["error"] = f"{type(e).__name__}: {e}"
        if not isinstance(e, RuntimeError):
            record["traceback"] = traceback.format_exc()
    return record


# --- negative launches ---------------------------------------------------------------

def mentions(message, name):
    """Whether `name` occurs in `message` as a whole identifier."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message) is not None


def wrong_scale_shape(spec, m):
    logical = scale_shape(spec.b_gran, spec.n, spec.k)
    return (2,) if not logical else (logical[0] + 1,) + tuple(logical[1:])


def negative_cases(spec, inputs, m, device="cuda"):
    """(description, operands, name the error must mention or None)."""
    good = launch_operands(spec, inputs, poisoned_output(spec, m, device))
    cases = []
    bad_scale = torch.ones(wrong_scale_shape(spec, m), dtype=torch.float32, device=device)
    cases.append(("b_scale_inv of a wrong shape", dict(good, b_scale_inv=bad_scale), "b_scale_inv"))
    bad_d = torch.empty((m, spec.n + 8), dtype=good["d"].dtype, device=device)
    cases.append(("d with N+8 columns", dict(good, d=bad_d), "d"))
    cases.append(("a given as bf16", dict(good, a=good["a"].to(torch.bfloat16)), None))
    bad_k = torch.empty((m, spec.k + 128), dtype=good["a"].dtype, device=device)
    cases.append(("a with K+128 columns", dict(good, a=bad_k), None))
    if spec.a_gran[0] == "tile" and spec.a_gran[1] == 1 and m % 4 != 0:
        # 1x128 A scales without the padding to roundup(M, 4).
        unpadded = good["a_scale_inv"][:, :m].contiguous()
        cases.append(("a_scale_inv [K/128, M], not padded to roundup(M, 4)",
                      dict(good, a_scale_inv=unpadded), "a_scale_inv"))
    if spec.a_gran[0] == "tile" and spec.a_gran[1] == 1:
        # 1x128 A scales 4 bytes off the 16-byte alignment the kernel's bulk
        # copies need (same shape and strides, storage offset 1).
        scales = good["a_scale_inv"]
        storage = torch.empty(scales.numel() + 1, dtype=scales.dtype, device=device)
        shifted = storage[1:].view(scales.shape)
        shifted.copy_(scales)
        cases.append(("a_scale_inv 4 bytes off 16-byte alignment",
                      dict(good, a_scale_inv=shifted), "a_scale_inv"))
    # Last: if the runtime wrongly accepted it, the kernel would read address 0.
    # (Every other bad operand is larger than the right one, so an accepted
    # launch cannot touch memory out of bounds.)
    without = {k: v for k, v in good.items() if k != "a_scale_inv"}
    cases.append(("a_scale_inv left out", without, "a_scale_inv"))
    return cases


def run_negative(kernel, spec, stream, seed, device="cuda"):
    m = spec.static_m or NEGATIVE_M
    inputs = inputs_for(spec, m, seed, device)
    results = []
    for description, operands, name in negative_cases(spec, inputs, m, device):
        entry = {"kernel": spec.name, "case": description, "passed": False, "message": ""}
        try:
            launch_and_wait(kernel, operands, stream)
            entry["message"] = "launch succeeded; expected an error"
        except RuntimeError as e:
            entry["message"] = str(e)
            entry["passed"] = name is None or mentions(str(e), name)
            if not entry["passed"]:
                entry["message"] += f"  [does not name '{name}']"
        except Exception as e:
            entry["message"] = f"{type(e).__name__} instead of RuntimeError: {e}"
        results.append(entry)
    torch.cuda.synchronize()  # a rejected launch must leave no sticky CUDA error
    return results


# --- reporting ---------------------------------------------------------------------

def fmt_err(value):
    return "-" if value is None else f"{value:.2e}"


def print_table(records):
    header = ("kernel", "M", "N", "K", "recipe", "types", "acc", "rel err",
              "worst row", "tol", "det", "result")
    rows = []
    for r in records:
        rows.append((r["kernel"], str(r["m"]), str(r["n"]), str(r["k"]), r["recipe"],
                     f"{r['a_dtype']}x{r['b_dtype']}->{r['out_dtype']}",
                     r["accumulation"], fmt_err(r["rel_err"]), fmt_err(r["worst_row_err"]),
                     f"{r['tolerance']:.0e}",
                     {None: "-", True: "yes", False: "NO"}[r["deterministic"]],
                     "PASS" if r["passed"] else "FAIL"))
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(header)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))
    print(line(header))
    print(line(["-" * w for w in widths]))
    for r, row in zip(records, rows):
        print(line(row))
        if not r["passed"]:
            print("    " + failure_reason(r))
            if r.get("traceback"):
                print("    " + r["traceback"].rstrip().replace("\n", "\n    "))


def failure_reason(r):
    if r["error"]:
        return r["error"]
    reasons = []
    if r["unwritten"]:
        reasons.append(f"{r['unwritten']} elements of d not written (NaN)")
    if r["rel_err"] is not None and not r["rel_err"] <= r["tolerance"]:
        reasons.append(f"rel err {r['rel_err']:.3e} > {r['tolerance']:.0e}")
    if r["worst_row_err"] is not None and \
            not r["worst_row_err"] <= ROW_TOLERANCE_FACTOR * r["tolerance"]:
        reasons.append(f"worst row {r['worst_row_err']:.3e} > "
                       f"{ROW_TOLERANCE_FACTOR:g} x {r['tolerance']:.0e}")
    if r.get("in_place_equal") is False:
        reasons.append("D computed in C's memory differs bitwise from separate C and D")
    elif r["deterministic"] is False:
        reasons.append("two launches differ bitwise")
    return "; ".join(reasons) or "failed"


def print_progress(r):
    status = "ok" if r["passed"] else "FAIL: " + failure_reason(r)
    print(f"  M={r['m']}: rel err {fmt_err(r['rel_err'])}, worst row "
          f"{fmt_err(r['worst_row_err'])}: {status}", flush=True)


def print_negative(results):
    print("\nnegative launches (must be rejected, naming the operand):")
    for r in results:
        print(f"  {'PASS' if r['passed'] else 'FAIL'}  {r['kernel']}: {r['case']}: {r['message']}")


# --- main -------------------------------------------------------------------------

def m_values(spec, requested):
    return [spec.static_m] if spec.static_m else requested


def main(argv=None):
    args = parse_args(argv)
    from fp8mlir._runtime import Kernel

    if not torch.cuda.is_available():
        print("error: no CUDA device visible to torch", file=sys.stderr)
        return 2
    try:
        requested_ms = parse_int_list(args.m)
    except ValueError as e:
        print(f"error: --m: {e}", file=sys.stderr)
        return 2
    specs, skipped = load_specs(args.kernels)
    filters = args.filter.split(",")
    specs = [s for s in specs if any(f in s.name for f in filters)]
    for name, reason in skipped:
        print(f"skipping {name}: {reason}")
    if not specs:
        print(f"error: no GEMM kernel in {args.kernels}", file=sys.stderr)
        return 2

    seed = gi.new_seed() if args.seed is None else args.seed
    print(f"GPU: {torch.cuda.get_device_name()}  torch {torch.__version__}  seed {seed}")
    stream = torch.cuda.Stream()
    records, negative = [], []
    for index, spec in enumerate(specs):
        print(f"checking {spec.describe()}", flush=True)
        try:
            kernel = Kernel(spec.json_path, library=args.library)
        except (RuntimeError, OSError) as e:
            for m in m_values(spec, requested_ms):
                record = case_record(spec, m, None)
                record["error"] = f"load failed: {e}"
                records.append(record)
            continue
        with kernel:
            for j, m in enumerate(m_values(spec, requested_ms)):
                records.append(check_case(kernel, spec, m, seed + 1000 * index + j, stream))
                print_progress(records[-1])
    # After every positive case: a wrongly accepted launch could break the context.
    try:
        with Kernel(specs[0].json_path, library=args.library) as kernel:
            negative = run_negative(kernel, specs[0], stream, seed)
    except Exception as e:
        negative = [{"kernel": specs[0].name, "case": "negative section", "passed": False,
                     "message": f"{type(e).__name__}: {e}"}]

    print()
    print_table(records)
    print_negative(negative)
    failed = [r for r in records if not r["passed"]] + [r for r in negative if not r["passed"]]
    total = len(records) + len(negative)
    print(f"\n{total - len(failed)} passed, {len(failed)} failed")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        report = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                  "seed": seed, "command": " ".join(sys.argv),
                  "skipped": skipped, "cases": records, "negative": negative}
        args.json.write_text(json.dumps(report, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
