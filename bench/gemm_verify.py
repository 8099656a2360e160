"""bench_gemm.py's verification: the f64 reference of some rows of D and the
outputs outside the check's tolerance (test/GPU/check_gemm.py's)."""

import torch

from fp8mlir.testing import gemm_inputs as gi
from fp8mlir.testing.gemm_spec import tolerance


def reference_of_rows(inputs, rows):
    """gi.reference (f64, + C) of the given rows of D (all: None)."""
    if rows is None:
        return gi.reference(inputs)
    a = inputs.a.dequantized()[rows].to(torch.float64)
    d = a @ inputs.b.dequantized().to(torch.float64).t()
    if inputs.c is not None:
        d += inputs.c[rows].to(torch.float64)
    return d


def impl_tolerance(recipe, impl, recipe_outputs):
    """The check set's tolerance for the implementation's output (fast
    accumulation: cuBLASLt fast_accum, Triton, fp8-mlir fast)."""
    out = recipe_outputs.get(recipe, ("bf16", False))[0]
    fast = "fast" in impl or impl == "triton"
    return tolerance(out, "fast" if fast else "promoted")


def verification_failures(report, recipe_outputs):
    """(outputs checked, ["shape recipe impl: what"]) for the outputs of a
    bench_gemm.py report outside their tolerance, against the reference or
    against another output; recipe_outputs: {recipe: (out dtype, C)}, bf16
    where absent."""
    checked, failures = 0, []
    for r in report["results"]:
        for name, e in r["impls"].items():
            if e["status"] != "ok":
                continue
            checked += 1
            tol = impl_tolerance(r["recipe"], name, recipe_outputs)
            where = f"{r['m']}x{r['n']}x{r['k']} {r['recipe']} {name}"
            if e["rel_err_vs_ref"] is None or not e["rel_err_vs_ref"] <= tol:
                failures.append(f"{where}: rel err {e['rel_err_vs_ref']} > {tol}")
            for other, diff in (e.get("diff_vs") or {}).items():
                limit = max(tol, impl_tolerance(r["recipe"], other, recipe_outputs))
                if not diff <= limit:
                    failures.append(f"{where}: differs from {other} by {diff:.2e} > {limit}")
    return checked, failures
