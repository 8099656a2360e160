#!/usr/bin/env python3
"""FP8 training of a small decoder-only transformer against BF16, per recipe.

One process trains the same model (bench/train_model.py: byte-level, the
Python standard library's sources as text, same initial weights and the
same batches in the same order for every run) once with every linear layer
of its blocks in BF16 nn.Linear and once per FP8 recipe with those layers
replaced by an FP8 linear layer, and reports one table: final train loss,
smoothed train loss, validation loss, the largest gap of the smoothed loss
curve to BF16 after warm-up (goal: within 1%) next to the same gap of a
repeated BF16 run (the run-to-run noise), the mean gap over the last third
of the run, step time, tokens/s, peak
memory and the linear layers' share of the step. Writes
train-<gpu>-<date>.{json,md,png} into --out after every run.

    python3 bench/train_fp8.py --recipes bf16,bf16-repeat,current,delayed,blockwise --impl torch
    python3 bench/train_fp8.py --recipes bf16,current,current-e4m3 --impl fp8mlir   # E4M3 dY
    python3 bench/train_fp8.py --render bench/results/train-....json   # no GPU, no torch

--impl torch uses fp8mlir.testing.torch_recipes.TorchFP8Linear (plain
PyTorch), --impl fp8mlir uses fp8mlir.nn.Linear, --linear-factory
module:function any layer built as function(in, out, bias=..., recipe=...).
"""

import argparse
import gc
import math
import statistics
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE), str(ROOT / "python")]

import report_util  # noqa: E402
from fp8mlir.linear_step import recipe_and_format  # noqa: E402

RECIPES = ("bf16", "bf16-repeat", "current", "current-e4m3", "delayed", "delayed-e4m3",
           "blockwise")
# current-e4m3 / delayed-e4m3: the per-tensor recipes with the format e4m3
# (dY quantized to E4M3 like X and W, not E5M2), asked for by name.
DEFAULT_RECIPES = ("bf16", "bf16-repeat", "current", "delayed", "blockwise")
# bf16-repeat trains the BF16 model again with the same seed, weights and
# batches: its gap to the first BF16 run is the run-to-run noise of this
# training (non-deterministic kernels such as the attention backward's
# atomics, amplified by the optimizer), the floor any FP8 run's gap is read
# against.
REPEAT = "bf16-repeat"
BF16_RUNS = ("bf16", REPEAT)
GAP_GOAL = 0.01
PRECISION = "f32 master weights, bf16 autocast (FP8 layers: FP8 GEMMs, Y and dX in bf16, dW in f32)"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipes", default=",".join(DEFAULT_RECIPES),
                   help="comma-separated runs among " + ", ".join(RECIPES)
                   + f" (default: {','.join(DEFAULT_RECIPES)})")
    p.add_argument("--impl", default="torch", choices=("torch", "fp8mlir"),
                   help="FP8 linear layer: torch (TorchFP8Linear) or fp8mlir (fp8mlir.nn.Linear)")
    p.add_argument("--linear-factory", metavar="MODULE:FUNCTION",
                   help="build FP8 layers with FUNCTION(in, out, bias=..., recipe=...) instead")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--warmup", type=int, help="learning-rate warm-up steps (default: steps // 10)")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--heads", type=int, help="attention heads (default: hidden // 128)")
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--batch", type=int, default=16, help="sequences per step")
    p.add_argument("--lr", type=float, default=3e-4, help="peak learning rate")
    p.add_argument("--min-lr-ratio", type=float, default=0.1, help="cosine floor / peak")
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0, help="gradient-norm clip")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--val-fraction", type=float, default=0.02, help="tail of the corpus held out")
    p.add_argument("--eval-batches", type=int, default=8)
    p.add_argument("--smoothing", type=float, default=0.9, help="EMA factor of the smoothed loss")
    p.add_argument("--timing-steps", type=int, default=5,
                   help="steps (from the middle of the run) whose linear layers are timed")
    p.add_argument("--log-every", type=int, default=10)
    args = report_util.parse_arguments(p, argv, HERE / "results")
    if args.render:
        return args
    try:
        args.recipe_list = report_util.parse_list(args.recipes, report_util.one_of(RECIPES), "--recipes")
    except ValueError as e:
        p.error(str(e))
    if args.warmup is None:
        args.warmup = max(1, args.steps // 10)
    if args.heads is None:
        args.heads = max(1, args.hidden // 128)
    checks = [
        (args.steps >= 2, "--steps must be at least 2"),
        (0 < args.warmup < args.steps, "--warmup must be in [1, steps)"),
        (args.layers >= 1 and args.seq >= 2 and args.batch >= 1, "--layers, --seq, --batch must be positive"),
        (args.hidden >= 128 and args.hidden % 128 == 0, "--hidden must be a positive multiple of 128"),
        (args.heads >= 1 and args.hidden % args.heads == 0 and (args.hidden // args.heads) % 8 == 0,
         "--heads must divide --hidden into heads of a multiple of 8"),
        (0 < args.val_fraction < 0.5, "--val-fraction must be in (0, 0.5)"),
        (0 <= args.smoothing < 1, "--smoothing must be in [0, 1)"),
        (args.eval_batches >= 1 and args.log_every >= 1 and args.timing_steps >= 0,
         "--eval-batches and --log-every must be positive, --timing-steps >= 0"),
        (args.lr > 0 and 0 <= args.min_lr_ratio <= 1, "--lr must be > 0, --min-lr-ratio in [0, 1]"),
    ]
    for ok, message in checks:
        if not ok:
            p.error(message)
    return args


# --- summary (pure Python: also what --render uses) ----------------------------------

def smooth(values, beta):
    """Bias-corrected exponential moving average."""
    out, avg = [], 0.0
    for i, v in enumerate(values, 1):
        avg = beta * avg + (1 - beta) * v
        out.append(avg / (1 - beta ** i))
    return out


def largest_gap(curve, base, start):
    """(relative gap, step) of the largest |curve - base| / base from `start`."""
    best = None
    for t in range(start, min(len(curve), len(base))):
        gap = (curve[t] - base[t]) / base[t] if base[t] else math.inf
        if best is None or not abs(gap) <= abs(best[0]):
            best = (gap, t)
    return best or (None, None)


def mean_gap(curve, base, start):
    """Mean relative gap (curve - base) / base over steps >= start."""
    gaps = [(c - b) / b for c, b in list(zip(curve, base))[start:] if b]
    return sum(gaps) / len(gaps) if gaps else None


def steady_steps(count):
    """Steps timed for the step time: all but the first tenth (at least 3)."""
    return min(count - 1, max(3, count // 10)) if count > 1 else 0


def summarize(report):
    """One row per run with the table's metrics."""
    cfg = report["config"]
    runs = [r for r in report["runs"] if r.get("status") == "ok"]
    base = next((r for r in runs if r["recipe"] == "bf16"), None)
    base_curve = smooth(base["loss"], cfg["smoothing"]) if base else None
    tokens = cfg["batch"] * cfg["seq"]
    rows = []
    for r in report["runs"]:
        row = {"name": r["name"], "recipe": r["recipe"], "status": r.get("status"),
               "message": r.get("message", ""), "linear": r.get("linear", "")}
        if r.get("status") == "ok":
            curve = smooth(r["loss"], cfg["smoothing"])
            step_ms = statistics.median(r["step_ms"][steady_steps(len(r["step_ms"])):])
            row.update(final_loss=r["loss"][-1], smoothed_loss=curve[-1], val_loss=r["val_loss"],
                       step_ms=step_ms, tokens_per_s=tokens / (step_ms / 1e3),
                       peak_memory_gib=r["peak_memory_bytes"] / 2**30, curve=curve)
            if r.get("linear_ms_per_step") is not None and r.get("timed_step_ms"):
                row["linear_share"] = r["linear_ms_per_step"] / r["timed_step_ms"]
                row["linear_ms"] = r["linear_ms_per_step"]
            if base is not None and r is not base:
                gap, step = largest_gap(curve, base_curve, cfg["warmup"])
                tail = len(curve) - len(curve) // 3
                row.update(gap=gap, gap_step=step, tail_gap=mean_gap(curve, base_curve, tail),
                           within_goal=gap is not None and abs(gap) <= GAP_GOAL)
        rows.append(row)
    noise = next((row.get("gap") for row in rows if row["recipe"] == REPEAT), None)
    for row in rows:
        if row.get("gap") is not None and noise is not None and row["recipe"] != REPEAT:
            row["within_noise"] = abs(row["gap"]) <= abs(noise)
    base_row = next((row for row in rows if base is not None and row["name"] == base["name"]), None)
    for row in rows:
        if base_row and row.get("step_ms"):
            row["speedup"] = base_row["step_ms"] / row["step_ms"]
    return rows


def markdown(report):
    env, cfg, data = report["environment"], report["config"], report["data"]
    rows = summarize(report)
    header = ["run", "linear layers", "final train loss", "smoothed", "val loss",
              "max gap to BF16 (step)", "within 1%", "within BF16 repeat's gap",
              "mean gap, last third", "step ms", "tokens/s", "vs BF16",
              "peak memory GiB", "linear fwd+bwd ms/step (share)"]
    body = []
    for row in rows:
        if row["status"] != "ok":
            body.append([row["name"], row["linear"], "error: " + row["message"][:300]] + [""] * 11)
            continue
        gap = "-" if "gap" not in row else (
            f"{fmt_pct(row['gap'])} ({row['gap_step']})" if row["gap"] is not None else "n/a")
        within = "-" if "within_goal" not in row else ("yes" if row["within_goal"] else "no")
        noise = "-" if "within_noise" not in row else ("yes" if row["within_noise"] else "no")
        tail = fmt_pct(row["tail_gap"]) if "tail_gap" in row else "-"
        share = (f"{row['linear_ms']:.1f} ({row['linear_share'] * 100:.0f}%)"
                 if "linear_share" in row else "n/a")
        body.append([row["name"], row["linear"], report_util.fmt(row["final_loss"], ".4f"),
                     report_util.fmt(row["smoothed_loss"], ".4f"), report_util.fmt(row["val_loss"], ".4f"),
                     gap, within, noise, tail, report_util.fmt(row["step_ms"], ".1f"),
                     report_util.fmt(row["tokens_per_s"], ",.0f"),
                     report_util.fmt(row.get("speedup"), ".2f"),
                     report_util.fmt(row["peak_memory_gib"], ".2f"), share])
    lines = [f"# FP8 training against BF16: {env.get('gpu', '?')}", ""]
    lines += report_util.environment_lines(env)
    lines += [
        f"- model: decoder-only transformer, {cfg['layers']} layers, hidden {cfg['hidden']}, "
        f"{cfg['heads']} heads, SwiGLU {cfg['ffn']}, learned positions, RMSNorm, causal "
        f"F.scaled_dot_product_attention, untied byte-level head (256); sequence {cfg['seq']}, "
        f"batch {cfg['batch']} ({cfg['batch'] * cfg['seq']} tokens/step)",
        f"- data: the .py files of the standard library ({data.get('files')} files, "
        f"{data.get('bytes')} bytes, sha256 {str(data.get('sha256'))[:16]}..., from "
        f"{data.get('root')}), sorted by path, joined by NUL bytes; the last "
        f"{cfg['val_fraction'] * 100:g}% is the validation split ({cfg['eval_batches']} batches at "
        "fixed offsets); training batches at offsets drawn from the seed, the same for every run",
        f"- training: {cfg['steps']} steps, AdamW (betas 0.9/0.95, weight decay "
        f"{cfg['weight_decay']} on matrices), peak lr {cfg['lr']:g}, {cfg['warmup']} warm-up steps "
        f"then cosine to {cfg['min_lr_ratio']:g}x, gradient clip {cfg['clip']}; {cfg['precision']}; "
        f"eager mode; seed {cfg['seed']} (same initial weights in every run)",
        f"- FP8 runs replace the blocks' linear layers (qkv, proj, gate_up, down; "
        f"{4 * cfg['layers']} layers); embeddings, norms, attention and the head stay as in BF16"
        + ("; the per-tensor recipes quantize dY to E5M2 (format hybrid), their `-e4m3` runs to "
           "E4M3 (format e4m3)" if any(recipe_and_format(r["recipe"])[1] == "e4m3" for r in report["runs"])
           else ""),
        f"- smoothed: bias-corrected EMA (factor {cfg['smoothing']}) of the train loss; max gap = "
        f"largest |smoothed - smoothed BF16| / smoothed BF16 over steps >= {cfg['warmup']} "
        f"(after warm-up), signed; goal within {GAP_GOAL * 100:g}%; the run "
        f"`{REPEAT}` trains BF16 again with the same seed, weights and batches: its gap is the "
        "run-to-run noise of this training (non-deterministic kernels, amplified by training), "
        "and `within BF16 repeat's gap` compares each FP8 run's max gap with it; mean gap, last "
        "third = the mean signed gap over the last third of the steps (a systematic offset "
        "rather than noise)",
        "- step ms: median of CUDA-event times of whole steps (forward, backward, clip, "
        "optimizer) after the first tenth of the run; tokens/s = tokens per step / step time; "
        "vs BF16 = BF16 step time / this step time; peak memory: torch.cuda.max_memory_allocated",
        "- linear fwd+bwd: CUDA events around each block linear layer's forward (module hooks) "
        "and backward (identity autograd marks on its output and input), summed over layers, on "
        f"{cfg['timing_steps']} steps from the middle of the run; share = that / the mean time of "
        "the same steps (quantization included)",
        ""]
    lines += report_util.table(header, body)
    return "\n".join(lines) + "\n"


def fmt_pct(value):
    return "n/a" if value is None else f"{value * 100:+.2f}%"


def plot(report, path):
    import matplotlib.pyplot as plt
    cfg, env = report["config"], report["environment"]
    rows = [r for r in summarize(report) if r["status"] == "ok"]
    raw = {r["name"]: r["loss"] for r in report["runs"] if r.get("status") == "ok"}
    fig, axes = plt.subplots(1, 3, figsize=(18, 5))
    for i, row in enumerate(rows):
        color = f"C{i}"
        axes[0].plot(raw[row["name"]], color=color, alpha=0.2, linewidth=0.7)
        axes[0].plot(row["curve"], color=color, label=f"{row['name']} (val {row['val_loss']:.3f})")
        if "gap" in row:
            base = next(b for b in rows if b["recipe"] == "bf16")
            gaps = [100 * (c - b) / b for c, b in zip(row["curve"], base["curve"])]
            axes[1].plot(range(cfg["warmup"], len(gaps)), gaps[cfg["warmup"]:], color=color,
                         label=row["name"])
    axes[0].set(title="train loss (smoothed; raw faint)", xlabel="step", ylabel="loss")
    axes[0].legend(fontsize=8)
    for bound in (-100 * GAP_GOAL, 100 * GAP_GOAL):
        axes[1].axhline(bound, color="gray", linestyle="--", linewidth=0.8)
    axes[1].axhline(0, color="black", linewidth=0.5)
    axes[1].set(title="smoothed loss gap to BF16 after warm-up", xlabel="step", ylabel="%")
    if axes[1].lines:
        axes[1].legend(fontsize=8)
    names = [r["name"] for r in rows]
    speed = [r["tokens_per_s"] for r in rows]
    bars = axes[2].bar(names, speed, color=[f"C{i}" for i in range(len(rows))])
    for bar, row in zip(bars, rows):
        label = f"{row.get('speedup', float('nan')):.2f}x"
        if "linear_share" in row:
            label += f"\nlinear {row['linear_share'] * 100:.0f}%"
        axes[2].annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                         ha="center", va="bottom", fontsize=8)
    axes[2].set(title="throughput (x BF16; linear layers' share of the step)", ylabel="tokens/s")
    fig.suptitle(f"FP8 training, {cfg['layers']}x{cfg['hidden']}, seq {cfg['seq']}, batch "
                 f"{cfg['batch']}, {cfg['steps']} steps - {env.get('gpu')}, torch {env.get('torch')}, "
                 f"{env.get('date')}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- running ------------------------------------------------------------------------

def config(args):
    import train_model
    return {"layers": args.layers, "hidden": args.hidden, "heads": args.heads,
            "ffn": train_model.ffn_size(args.hidden), "seq": args.seq, "batch": args.batch,
            "steps": args.steps, "warmup": args.warmup, "lr": args.lr,
            "min_lr_ratio": args.min_lr_ratio, "weight_decay": args.weight_decay, "clip": args.clip,
            "seed": args.seed, "val_fraction": args.val_fraction, "eval_batches": args.eval_batches,
            "smoothing": args.smoothing, "timing_steps": args.timing_steps,
            "log_every": args.log_every, "impl": args.linear_factory or args.impl,
            "precision": PRECISION}


def log(message):
    print(message, flush=True)


def main(argv=None):
    return report_util.main(argv, parse_args, markdown, plot, run)


def run(args, torch, env, now):
    import linear_factories
    import train_model

    factory = None
    if any(r not in BF16_RUNS for r in args.recipe_list):
        try:
            factory = linear_factories.make_factory(args.impl, args.linear_factory, device="cuda")
        except linear_factories.FactoryError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    cfg = config(args)
    data, info = train_model.stdlib_corpus()
    batches = train_model.Batches(data, args.seq, args.batch, args.steps, args.seed,
                                  args.val_fraction, args.eval_batches, "cuda")
    log(f"{env['gpu']}, torch {env['torch']}; corpus {info['files']} files, {info['bytes']} bytes; "
        f"{cfg['layers']}x{cfg['hidden']} model, {args.steps} steps of {args.batch}x{args.seq} tokens")
    report = {"kind": "train", "environment": env, "config": cfg,
              "data": {**info, **batches.split}, "runs": []}
    json_path = report_util.report_path(args.out, "train", env, now)
    for recipe in args.recipe_list:
        name = {"bf16": "bf16", REPEAT: "bf16 (repeat)"}.get(recipe) or f"{recipe} ({factory.label})"
        try:
            record = train_model.train_run(name, "bf16" if recipe == REPEAT else recipe, factory,
                                           batches, cfg, log)
            record["recipe"] = recipe
        except Exception as e:  # noqa: BLE001 - report it, run the others
            traceback.print_exc()
            record = {"name": name, "recipe": recipe, "status": "error",
                      "message": f"{type(e).__name__}: {e}".strip(),
                      "linear": "" if factory is None else factory.description}
        if record["status"] != "ok":  # free what the failed run left
            gc.collect()
            torch.cuda.empty_cache()
        report["runs"].append(record)
        written = report_util.write_outputs(report, json_path, markdown, plot)
    print()
    print(markdown(report).split("\n\n")[-1])
    for path in written:
        print(f"wrote {path}")
    return 0 if all(r["status"] == "ok" for r in report["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
