#!/usr/bin/env python3
"""Per-layer FP8 benchmark: one linear layer's forward + backward.

For each (in_features x out_features) and token count, in one process and
on the same inputs and weights (bf16, no bias): BF16 nn.Linear, the
plain-PyTorch FP8 layer (fp8mlir.testing.torch_recipes.TorchFP8Linear:
eager quantization, torch._scaled_mm / F.scaled_mm) per recipe,
fp8mlir.nn.Linear per recipe when the package has it (or a layer of
--linear-factory), and for the blockwise recipe the project's quantization
kernels with DeepGEMM's GEMMs (bench/deepgemm_linear.py) where deep_gemm
imports. One call is y = layer(x); y.backward(dy). With --main-grad, dW is
accumulated into an f32 main gradient (weight.main_grad, as Megatron /
Transformer Engine train): fp8mlir.nn.Linear(main_grad=True) and the
DeepGEMM layer add it in their wgrad GEMM, the other layers add their
weight grad to it after the backward. Writes
linear-<gpu>-<date>.{json,md,png} (with --main-grad
linear-main-grad-<gpu>-<date>...) into --out.

    python3 bench/bench_linear.py                       # every default shape
    python3 bench/bench_linear.py --shapes 8192x8192 --tokens 8192 --recipes blockwise
    python3 bench/bench_linear.py --main-grad --shapes 8192x8192 --tokens 8192 --recipes blockwise
    python3 bench/bench_linear.py --render bench/results/linear-....json   # no GPU, no torch
"""

import argparse
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "python")]

import report_util  # noqa: E402

DEFAULT_SHAPES = "4096x4096,4096x14336,8192x8192,8192x28672,28672x8192"
DEFAULT_TOKENS = "4096,8192,16384"
RECIPES = ("current", "delayed", "blockwise")
BASELINE = ("bf16", "bf16")
HOST_BOUND = 0.9  # host issue time / GPU time from which a row is marked
GOAL_HIDDEN = 8192
IMPLS = ("torch", "fp8mlir", "deepgemm")
# The layers that accumulate into weight.main_grad in their wgrad GEMM
# (main_grad=True); bench --main-grad adds the others' weight grad after
# the backward.
MAIN_GRAD_LAYERS = ("fp8mlir", "deepgemm")


def _shape(text):
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError("expected INxOUT, e.g. 4096x14336")
    return int(parts[0]), int(parts[1])


def _positive(text):
    value = int(text)
    if value <= 0:
        raise ValueError("must be positive")
    return value


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated INxOUT list")
    p.add_argument("--tokens", default=DEFAULT_TOKENS, help="comma-separated token counts")
    p.add_argument("--recipes", default=",".join(RECIPES))
    p.add_argument("--impls", help="comma-separated among torch, fp8mlir, deepgemm (default: "
                   "all; fp8mlir when fp8mlir.nn.Linear exists, deepgemm (blockwise only) where "
                   "deep_gemm imports, else skipped with the reason)")
    p.add_argument("--jit-jobs", type=int, default=8,
                   help="processes compiling DeepGEMM's kernels before the timing")
    p.add_argument("--linear-factory", metavar="MODULE:FUNCTION",
                   help="also time FUNCTION(in, out, bias=..., recipe=...)'s layers")
    p.add_argument("--warmup", type=int, default=5, help="calls before each timed batch")
    p.add_argument("--iters", type=int, default=20, help="timed calls per round")
    p.add_argument("--rounds", type=int, default=3, help="rounds, implementation order rotated")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--main-grad", action="store_true",
                   help="accumulate dW into an f32 weight.main_grad (fp8mlir.nn.Linear's "
                   "main_grad=True; the other layers add their grad to it)")
    args = report_util.parse_arguments(p, argv, HERE / "results")
    if args.render:
        return args
    try:
        args.shape_list = report_util.parse_list(args.shapes, _shape, "--shapes")
        args.token_list = report_util.parse_list(args.tokens, _positive, "--tokens")
        args.recipe_list = report_util.parse_list(args.recipes, report_util.one_of(RECIPES), "--recipes")
        args.impl_list = (None if args.impls is None else
                          report_util.parse_list(args.impls, report_util.one_of(IMPLS), "--impls"))
    except ValueError as e:
        p.error(str(e))
    if args.warmup < 0 or args.iters < 1 or args.rounds < 1 or args.jit_jobs < 1:
        p.error("--warmup must be >= 0, --iters, --rounds and --jit-jobs >= 1")
    return args


# --- summary (pure Python: also what --render uses) ----------------------------------

def case_key(row):
    return row["tokens"], row["in_features"], row["out_features"]


def with_ratios(results):
    """Rows with tflops (6 * tokens * in * out per fwd+bwd), vs_bf16 and, for
    layers other than the plain-PyTorch one, vs_torch_fp8 (same recipe)."""
    times = {(case_key(r), r["impl"], r["recipe"]): r["ms"] for r in results
             if r["status"] == "ok" and r.get("ms")}
    rows = []
    for r in results:
        row = dict(r)
        ms = r.get("ms") if r["status"] == "ok" else None
        if ms:
            t, k, n = case_key(r)
            row["tflops"] = 6.0 * t * k * n / (ms * 1e-3) / 1e12
            base = times.get((case_key(r), *BASELINE))
            row["vs_bf16"] = base / ms if base else None
            plain = times.get((case_key(r), "torch", r["recipe"]))
            row["vs_torch_fp8"] = plain / ms if plain and r["impl"] not in ("torch", "bf16") else None
        rows.append(row)
    return rows


def geomeans(rows):
    """{(impl, recipe): (geomean x BF16 over all cases, over hidden-8192 cases)}."""
    out = {}
    for key in dict.fromkeys((r["impl"], r["recipe"]) for r in rows if (r["impl"], r["recipe"]) != BASELINE):
        mine = [r for r in rows if (r["impl"], r["recipe"]) == key]
        at_goal = [r for r in mine if GOAL_HIDDEN in (r["in_features"], r["out_features"])]
        out[key] = (report_util.geomean([r.get("vs_bf16") for r in mine]),
                    report_util.geomean([r.get("vs_bf16") for r in at_goal]))
    return out


def markdown(report):
    env, s = report["environment"], report["settings"]
    rows = with_ratios(report["results"])
    fmt = report_util.fmt
    lines = [f"# Linear layer forward + backward, FP8 against BF16: {env.get('gpu', '?')}", ""]
    lines += report_util.environment_lines(env)
    main_grad = (" dW is accumulated into an f32 `weight.main_grad` (fp8mlir.nn.Linear "
                 "`main_grad=True` and the DeepGEMM layer: in their wgrad GEMM; the other "
                 "layers: `main_grad += weight.grad` after the backward);"
                 if s.get("main_grad") else "")
    lines += [
        "- one call: `y = layer(x); y.backward(dy)`, x [tokens, in] bf16 requiring grad, dy "
        "[tokens, out] bf16, weight [out, in] bf16, no bias;" + main_grad + " the weight's grad "
        "is reset to None after each call (as after zero_grad); delayed scaling updates its "
        "state every call",
        f"- time: CUDA events around {s['iters']} calls after {s['warmup']} warm-up calls, per "
        f"call; median of {s['rounds']} rounds, the implementations' order rotated per round; "
        "all on the same inputs. This is the GPU timeline, kernels only while the host keeps "
        "ahead: `host ms` is the host's time to issue one call, and a row where it reaches "
        f"{HOST_BOUND:.0%} of the GPU time is marked host-bound (its time includes idle gaps)",
        "- TFLOP/s = 6 x tokens x in x out / time; x BF16 = BF16 nn.Linear's time / this time; "
        "x torch FP8 = TorchFP8Linear's time (same recipe) / this time",
        "- rel diff = ||out - out_BF16||_F / ||out_BF16||_F of y, dX, dW after the warm-up"]
    lines += [f"- layer `{label}`: {text}" for label, text in s.get("layers", {}).items()]
    lines += [f"- not timed: `{label}` ({reason})" for label, reason in s.get("skipped", {}).items()]
    lines += [""]
    header = ["tokens", "in x out", "layer", "recipe", "ms", "TFLOP/s", "x BF16", "x torch FP8",
              "rel diff y / dX / dW", "host ms", "note"]
    body = []
    for r in rows:
        diff = r.get("rel_diff_vs_bf16")
        diff = " / ".join(fmt(diff.get(k), ".3f") for k in ("y", "dx", "dw")) if diff else "-"
        note = r.get("message", "") if r["status"] != "ok" else (
            "host-bound" if r.get("ms") and r.get("host_issue_ms", 0) >= HOST_BOUND * r["ms"] else "")
        body.append([r["tokens"], f"{r['in_features']}x{r['out_features']}", r["impl"], r["recipe"],
                     fmt(r.get("ms")), fmt(r.get("tflops"), ".1f"), fmt(r.get("vs_bf16"), ".2f"),
                     fmt(r.get("vs_torch_fp8"), ".2f"), diff, fmt(r.get("host_issue_ms")), note[:300]])
    lines += report_util.table(header, body) + ["", "## Geometric means of x BF16", ""]
    lines += report_util.table(
        ["layer", "recipe", "all shapes", f"shapes with {GOAL_HIDDEN} in or out"],
        [[impl, recipe, fmt(a, ".2f"), fmt(b, ".2f")] for (impl, recipe), (a, b) in geomeans(rows).items()])
    return "\n".join(lines) + "\n"


def plot(report, path):
    import matplotlib.pyplot as plt
    rows = [r for r in with_ratios(report["results"]) if r.get("vs_bf16")]
    cases = list(dict.fromkeys(case_key(r) for r in rows))
    impls = list(dict.fromkeys((r["impl"], r["recipe"]) for r in rows if (r["impl"], r["recipe"]) != BASELINE))
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(cases) * max(1, len(impls)) ** 0.5), 5))
    width = 0.8 / max(1, len(impls))
    for j, key in enumerate(impls):
        values = {case_key(r): r["vs_bf16"] for r in rows if (r["impl"], r["recipe"]) == key}
        ax.bar([i + (j - (len(impls) - 1) / 2) * width for i in range(len(cases))],
               [values.get(c, 0.0) for c in cases], width, label=f"{key[0]} {key[1]}",
               color=f"C{j}")
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.axhline(1.5, color="gray", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"{t} x {k}x{n}" for t, k, n in cases], rotation=30, fontsize=7, ha="right")
    ax.set_ylabel("speedup over BF16 nn.Linear (fwd+bwd)")
    env = report["environment"]
    ax.set_title(f"tokens x in x out - {env.get('gpu')}, torch {env.get('torch')}, {env.get('date')}",
                 fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- measuring ---------------------------------------------------------------------

def rel_diff(out, ref):
    out, ref = out.float(), ref.float()
    return ((out - ref).norm() / ref.norm()).item()


class Case:
    """Inputs of one token count for the layers of one shape."""

    def __init__(self, torch, tokens, k, n, seed, main_grad=False):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        self.x = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16, generator=gen)
        self.dy = torch.randn(tokens, n, device="cuda", dtype=torch.bfloat16, generator=gen)
        self.main_grad = main_grad

    def call(self, layer, keep=False):
        x = self.x.detach().requires_grad_()
        if self.main_grad and keep:  # the kept dW: this call's alone
            self.main_grad_of(layer).zero_()
        y = layer(x)
        y.backward(self.dy)
        dw, layer.weight.grad = layer.weight.grad, None
        if self.main_grad:
            main = self.main_grad_of(layer)
            if dw is not None:  # a layer without its own main-grad accumulation
                main.add_(dw)
            dw = main
        return (y.detach(), x.grad, dw.clone()) if keep else None

    @staticmethod
    def main_grad_of(layer):
        """weight.main_grad (f32), created zeroed when absent."""
        w = layer.weight
        if getattr(w, "main_grad", None) is None:
            import torch
            w.main_grad = torch.zeros(w.shape, dtype=torch.float32, device=w.device)
        return w.main_grad


def time_call(torch, call, warmup, iters):
    """(GPU ms per call, host issue ms per call)."""
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    issued = time.perf_counter()
    start.record()
    for _ in range(iters):
        call()
    end.record()
    issued = (time.perf_counter() - issued) * 1e3 / iters
    end.synchronize()
    return start.elapsed_time(end) / iters, issued


def build_layers(torch, args, k, n, factories):
    """{(impl, recipe): layer or the exception building it}, BF16 first."""
    import linear_factories
    torch.manual_seed(args.seed)
    base = torch.nn.Linear(k, n, bias=False, device="cuda", dtype=torch.bfloat16)
    layers = {BASELINE: base}
    for label, factory in factories:
        for recipe in args.recipe_list:
            if recipe not in getattr(factory, "recipes", RECIPES):
                continue
            try:
                options = ({"main_grad": True} if args.main_grad and label in MAIN_GRAD_LAYERS
                           else {})
                layers[(label, recipe)] = linear_factories.build(factory, recipe, base, "cuda",
                                                                 torch.bfloat16, **options)
            except Exception as e:  # noqa: BLE001 - report it, time the others
                layers[(label, recipe)] = e
    return layers


def bench_case(torch, case, tokens, k, n, layers, args):
    rows = {key: {"tokens": tokens, "in_features": k, "out_features": n, "impl": key[0],
                  "recipe": key[1], "status": "ok", "message": "", "ms": None, "round_ms": [],
                  "host_ms": [], "rel_diff_vs_bf16": None} for key in layers}
    live, reference = {}, None
    for key, layer in layers.items():
        if isinstance(layer, Exception):
            rows[key].update(status="error", message=f"{type(layer).__name__}: {layer}".strip())
            continue
        try:
            for _ in range(args.warmup):
                case.call(layer)
            outputs = case.call(layer, keep=True)
            if key == BASELINE:
                reference = outputs
            elif reference is not None:
                rows[key]["rel_diff_vs_bf16"] = {
                    name: rel_diff(o, r) for name, o, r in zip(("y", "dx", "dw"), outputs, reference)}
            del outputs
            live[key] = layer
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            rows[key].update(status="error", message=f"{type(e).__name__}: {e}".strip())
    del reference
    keys = list(live)
    for r in range(args.rounds if keys else 0):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            if rows[key]["status"] != "ok":
                continue
            try:
                ms, host = time_call(torch, lambda: case.call(live[key]), args.warmup, args.iters)
                rows[key]["round_ms"].append(ms)
                rows[key]["host_ms"].append(host)
            except Exception as e:  # noqa: BLE001
                rows[key].update(status="error", message=f"{type(e).__name__}: {e}".strip())
    out = []
    for row in rows.values():
        if row["status"] == "ok" and row["round_ms"]:
            row["ms"] = statistics.median(row["round_ms"])
            row["host_issue_ms"] = statistics.median(row.pop("host_ms"))
        else:
            row.pop("host_ms")
        out.append(row)
    return out


def factories_to_time(args, skipped):
    """[(label, factory)]; exits on an explicitly asked fp8mlir layer that
    is missing; DeepGEMM's layer, where deep_gemm does not import or no
    blockwise recipe is asked, goes into `skipped` with the reason."""
    import torch

    import linear_factories as lf
    chosen = [("torch", lf.torch_factory("cuda", torch.bfloat16))]
    impls = args.impl_list or list(IMPLS)
    if "torch" not in impls:
        chosen = []
    if "fp8mlir" in impls:
        try:
            chosen.append(("fp8mlir", lf.fp8mlir_factory()))
        except lf.FactoryError as e:
            if args.impl_list is not None:
                raise
            print(f"note: {e}; timing without it", flush=True)
    if "deepgemm" in impls:
        import deepgemm_linear
        try:
            if not set(deepgemm_linear.RECIPES) & set(args.recipe_list):
                raise RuntimeError("it runs the blockwise recipe only, which --recipes leaves out")
            chosen.append((deepgemm_linear.LABEL, deepgemm_linear.factory()))
        except RuntimeError as e:
            skipped[deepgemm_linear.LABEL] = str(e)
            print(f"note: {deepgemm_linear.LABEL} layer skipped: {e}", flush=True)
    if args.linear_factory:
        chosen.append((args.linear_factory, lf.custom_factory(args.linear_factory)))
    return chosen


def compile_deepgemm(args, factories, settings):
    """DeepGEMM compiles a kernel at its first call (6-10 s): all of the
    benchmark's, beforehand, in --jit-jobs processes (time in settings)."""
    if not any(label == "deepgemm" for label, _ in factories):
        return
    import deepgemm_linear
    problems = [p for k, n in args.shape_list for t in args.token_list
                for p in deepgemm_linear.gemm_problems(t, k, n)]
    print(f"DeepGEMM: compiling the kernels of {len(set(problems))} GEMMs "
          f"({args.jit_jobs} processes)", flush=True)
    start = time.perf_counter()
    for problem, output in deepgemm_linear.warm_all(problems, args.jit_jobs):
        print(f"warning: DeepGEMM {problem} did not compile beforehand:\n{output}", flush=True)
    settings["deepgemm_compile_s"] = time.perf_counter() - start


def main(argv=None):
    return report_util.main(argv, parse_args, markdown, plot, run)


def run(args, torch, env, now):
    import linear_factories
    skipped = {}
    try:
        factories = factories_to_time(args, skipped)
    except linear_factories.FactoryError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{env['gpu']}, torch {env['torch']}; layers: bf16, "
          + ", ".join(f"{label} x {len([r for r in args.recipe_list if r in getattr(f, 'recipes', RECIPES)])}"
                      f" recipes" for label, f in factories), flush=True)
    report = {"kind": "linear", "environment": env,
              "settings": {"warmup": args.warmup, "iters": args.iters, "rounds": args.rounds,
                           "dtype": "bf16", "seed": args.seed, "bias": False,
                           "main_grad": args.main_grad,
                           "layers": {label: f.description for label, f in factories},
                           "skipped": skipped},
              "results": []}
    compile_deepgemm(args, factories, report["settings"])
    # --main-grad measures another training setup: its own report name.
    kind = "linear-main-grad" if args.main_grad else "linear"
    json_path = report_util.report_path(args.out, kind, env, now)
    for k, n in args.shape_list:
        layers = build_layers(torch, args, k, n, factories)
        for tokens in args.token_list:
            case = Case(torch, tokens, k, n, args.seed + tokens, args.main_grad)
            rows = bench_case(torch, case, tokens, k, n, layers, args)
            report["results"] += rows
            for row in with_ratios(rows):
                print(f"{tokens:>6} x {k}x{n} {row['impl']:>8} {row['recipe']:<9} "
                      + (f"{row['ms']:8.3f} ms {row['tflops']:7.1f} TF/s x BF16 "
                         f"{report_util.fmt(row.get('vs_bf16'), '.2f')}" if row.get("ms")
                         else f"{row['status']}: {row['message'][:200]}"), flush=True)
            del case
            torch.cuda.empty_cache()
        del layers
        torch.cuda.empty_cache()
        written = report_util.write_outputs(report, json_path, markdown, plot)
    for path in written:
        print(f"wrote {path}")
    return 0 if all(r["status"] == "ok" for r in report["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
