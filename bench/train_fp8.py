#!/usr/bin/env python3
"""FP8 training of a small decoder-only transformer against BF16, per recipe.

One process trains the same model (bench/train_model.py: byte-level, the
Python standard library's sources as text) once with every linear layer
of its blocks in BF16 nn.Linear and once per FP8 recipe with those layers
replaced by an FP8 linear layer, per seed (--seeds: a seed sets the
initial weights and the order of the batches, the same for every run of
that seed), and reports one table, a row per run name: final train loss,
smoothed train loss, validation loss (means over the seeds), the largest
gap of the seed-mean smoothed loss curve to BF16's after warm-up (goal:
within 1%) next to the same gap of a repeated BF16 run (the run-to-run
noise) and the range of the per-seed largest gaps, the mean gap over the
last third of the run, step time, tokens/s, peak memory and the linear
layers' share of the step; with several seeds a second table per seed.
Writes train-<gpu>-<date>.{json,md,png} into --out after every run.

A run RECIPE-calibrated (delayed and delayed-e4m3) trains its first step
(step 0) in calibration mode (fp8mlir.calibrating: a BF16 step that
records the amaxes into the delayed-scaling state) and the others in FP8.

    python3 bench/train_fp8.py --recipes bf16,bf16-repeat,current,delayed,blockwise --impl torch
    python3 bench/train_fp8.py --recipes bf16,current,current-e4m3 --impl fp8mlir   # E4M3 dY
    python3 bench/train_fp8.py --recipes bf16,bf16-repeat,delayed,delayed-calibrated \
        --impl fp8mlir --seeds 1234,1,2
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

# A run RECIPE + CALIBRATED trains step 0 in calibration mode (delayed
# scaling's first step in BF16, recording the amaxes), the others in FP8.
CALIBRATED = "-calibrated"
CALIBRATION_STEPS = 1
RECIPES = ("bf16", "bf16-repeat", "current", "current-e4m3", "delayed", "delayed-e4m3",
           "delayed" + CALIBRATED, "delayed-e4m3" + CALIBRATED, "blockwise")
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


def layer_run(run):
    """(the layers' run name, whether step 0 calibrates):
    ("delayed-e4m3", True) for "delayed-e4m3-calibrated"."""
    if run.endswith(CALIBRATED):
        return run[:-len(CALIBRATED)], True
    return run, False


def fp8_layer_runs(runs):
    """The FP8 layers' run names of `runs` (no BF16 runs, calibrated runs
    as their layers', once each): what the kernel cache must hold."""
    layers = [layer_run(r)[0] for r in runs if r not in BF16_RUNS]
    return list(dict.fromkeys(layers))
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
    p.add_argument("--seed", type=int, default=1234, help="the seed when --seeds is not given")
    p.add_argument("--seeds", help="comma-separated seeds: every run trains once per seed "
                   "(default: --seed)")
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
    try:
        args.seed_list = (report_util.parse_list(args.seeds, int, "--seeds") if args.seeds
                          else [args.seed])
    except ValueError as e:
        p.error(str(e))
    if len(set(args.seed_list)) != len(args.seed_list):
        p.error(f"--seeds: {args.seeds!r} repeats a seed")
    if (any(layer_run(r)[1] for r in args.recipe_list) and args.impl == "torch"
            and not args.linear_factory):
        p.error("the -calibrated runs need fp8mlir.nn.Linear layers (fp8mlir.calibrating): "
                "use --impl fp8mlir")
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


def gap_fields(curve, base, cfg):
    """The gaps of a smoothed curve to the BF16 one: the largest after
    warm-up (signed, relative; its step), the mean over the last third."""
    gap, step = largest_gap(curve, base, cfg["warmup"])
    tail = len(curve) - len(curve) // 3
    return {"gap": gap, "gap_step": step, "tail_gap": mean_gap(curve, base, tail),
            "within_goal": gap is not None and abs(gap) <= GAP_GOAL}


def mean_curve(curves):
    """The pointwise mean of curves (over their common length)."""
    length = min(len(c) for c in curves)
    return [sum(c[t] for c in curves) / len(curves) for t in range(length)]


def run_rows(report):
    """One row per run (recipe and seed): its metrics, its gaps to the BF16
    run of its seed and whether the largest is within the gap of the
    repeated BF16 run of that seed. (A report of one seed may name it in
    the config only.)"""
    cfg = report["config"]
    tokens = cfg["batch"] * cfg["seq"]
    rows = []
    for r in report["runs"]:
        row = {"name": r["name"], "recipe": r["recipe"], "seed": r.get("seed", cfg["seed"]),
               "status": r.get("status"), "message": r.get("message", ""),
               "linear": r.get("linear", "")}
        if row["status"] == "ok":
            step_ms = statistics.median(r["step_ms"][steady_steps(len(r["step_ms"])):])
            row.update(loss=r["loss"], final_loss=r["loss"][-1], val_loss=r["val_loss"],
                       curve=smooth(r["loss"], cfg["smoothing"]), step_ms=step_ms,
                       tokens_per_s=tokens / (step_ms / 1e3),
                       peak_memory_gib=r["peak_memory_bytes"] / 2**30)
            row["smoothed_loss"] = row["curve"][-1]
            if r.get("linear_ms_per_step") is not None and r.get("timed_step_ms"):
                row["linear_share"] = r["linear_ms_per_step"] / r["timed_step_ms"]
                row["linear_ms"] = r["linear_ms_per_step"]
        rows.append(row)
    bases = {row["seed"]: row for row in rows if row["recipe"] == "bf16" and row["status"] == "ok"}
    for row in rows:
        base = bases.get(row["seed"])
        if row["status"] == "ok" and base is not None and row is not base:
            row.update(gap_fields(row["curve"], base["curve"], cfg))
    noise = {row["seed"]: row.get("gap") for row in rows if row["recipe"] == REPEAT}
    for row in rows:
        if row.get("gap") is not None and noise.get(row["seed"]) is not None and row["recipe"] != REPEAT:
            row["within_noise"] = abs(row["gap"]) <= abs(noise[row["seed"]])
    return rows


def _recipe_row(recipe, members, tokens):
    """A run name's row from its runs over the seeds (means of the losses,
    median step time, the range of the per-seed largest gaps)."""
    ok = [m for m in members if m["status"] == "ok"]
    row = {"name": members[0]["name"], "recipe": recipe, "linear": members[0]["linear"],
           "seeds": [m["seed"] for m in ok], "status": "ok" if ok else "error",
           "message": "; ".join((f"seed {m['seed']}: " if len(members) > 1 else "") + m["message"]
                                for m in members if m["status"] != "ok")}
    if not ok:
        return row
    row.update({key: statistics.fmean(m[key] for m in ok)
                for key in ("final_loss", "smoothed_loss", "val_loss")})
    row["step_ms"] = statistics.median(m["step_ms"] for m in ok)
    row["tokens_per_s"] = tokens / (row["step_ms"] / 1e3)
    row["peak_memory_gib"] = max(m["peak_memory_gib"] for m in ok)
    row["curve"] = mean_curve([m["curve"] for m in ok])
    row["raw_curve"] = mean_curve([m["loss"] for m in ok])
    timed = [m for m in ok if "linear_share" in m]
    if timed:
        row["linear_ms"] = statistics.fmean(m["linear_ms"] for m in timed)
        row["linear_share"] = statistics.fmean(m["linear_share"] for m in timed)
    gaps = [m["gap"] for m in ok if m.get("gap") is not None]
    if gaps:
        row["seed_gap_min"], row["seed_gap_max"] = min(gaps), max(gaps)
    return row


def summarize(report):
    """One row per run name over its seeds (see _recipe_row), with the
    largest gap of its seed-mean smoothed curve to the seed-mean smoothed
    curve of BF16 over the same seeds (`curve`, `base_curve`), whether
    that is within the repeated BF16 run's seed-mean gap, and the speed
    ratio to BF16."""
    cfg = report["config"]
    per_run = run_rows(report)
    groups = {}
    for row in per_run:
        groups.setdefault(row["recipe"], []).append(row)
    rows = [_recipe_row(recipe, members, cfg["batch"] * cfg["seq"])
            for recipe, members in groups.items()]
    bf16 = {m["seed"]: m for m in groups.get("bf16", []) if m["status"] == "ok"}
    for row in rows:
        if row["status"] != "ok" or row["recipe"] == "bf16":
            continue
        members = [m for m in groups[row["recipe"]] if m["status"] == "ok" and m["seed"] in bf16]
        if members:
            row["curve"] = mean_curve([m["curve"] for m in members])
            row["base_curve"] = mean_curve([bf16[m["seed"]]["curve"] for m in members])
            row.update(gap_fields(row["curve"], row["base_curve"], cfg))
    noise = next((row.get("gap") for row in rows if row["recipe"] == REPEAT), None)
    base = next((row for row in rows if row["recipe"] == "bf16" and row["status"] == "ok"), None)
    for row in rows:
        if row.get("gap") is not None and noise is not None and row["recipe"] != REPEAT:
            row["within_noise"] = abs(row["gap"]) <= abs(noise)
        if base is not None and row.get("step_ms"):
            row["speedup"] = base["step_ms"] / row["step_ms"]
    return rows


def _yes_no(row, key):
    return "-" if key not in row else ("yes" if row[key] else "no")


def _gap_cell(row):
    if "gap" not in row:
        return "-"
    return f"{fmt_pct(row['gap'])} ({row['gap_step']})" if row["gap"] is not None else "n/a"


def _table(header, rows, lead, cells):
    """Markdown lines: per row lead(row) + cells(row), or lead(row) and
    the error of a failed run."""
    body = []
    for row in rows:
        first = lead(row)
        if row["status"] != "ok":
            rest = ["error: " + row["message"][:300]] + [""] * (len(header) - len(first) - 1)
        else:
            rest = cells(row)
        body.append(first + rest)
    return report_util.table(header, body)


def _loss_cells(row):
    """final, smoothed and validation loss, the max gap and its verdicts."""
    return [report_util.fmt(row["final_loss"], ".4f"), report_util.fmt(row["smoothed_loss"], ".4f"),
            report_util.fmt(row["val_loss"], ".4f"), _gap_cell(row),
            _yes_no(row, "within_goal"), _yes_no(row, "within_noise")]


def _recipe_cells(row):
    spread = (f"{fmt_pct(row['seed_gap_min'])} / {fmt_pct(row['seed_gap_max'])}"
              if "seed_gap_min" in row else "-")
    share = (f"{row['linear_ms']:.1f} ({row['linear_share'] * 100:.0f}%)"
             if "linear_share" in row else "n/a")
    return [", ".join(map(str, row["seeds"]))] + _loss_cells(row) + [
        spread, fmt_pct(row["tail_gap"]) if "tail_gap" in row else "-",
        report_util.fmt(row["step_ms"], ".1f"), report_util.fmt(row["tokens_per_s"], ",.0f"),
        report_util.fmt(row.get("speedup"), ".2f"), report_util.fmt(row["peak_memory_gib"], ".2f"),
        share]


RECIPE_HEADER = ["run", "linear layers", "seeds", "final train loss", "smoothed", "val loss",
                 "max gap to BF16 (step)", "within 1%", "within BF16 repeat's gap",
                 "per-seed max gaps (min / max)", "mean gap, last third", "step ms", "tokens/s",
                 "vs BF16", "peak memory GiB", "linear fwd+bwd ms/step (share)"]
SEED_HEADER = ["run", "seed", "final train loss", "smoothed", "val loss",
               "max gap to BF16 of the seed (step)", "within 1%",
               "within the seed's BF16 repeat gap", "mean gap, last third", "step ms"]


def _recipe_table(rows):
    return _table(RECIPE_HEADER, rows, lambda row: [row["name"], row["linear"]], _recipe_cells)


def _seed_table(rows):
    return _table(SEED_HEADER, rows, lambda row: [row["name"], row["seed"]], lambda row: (
        _loss_cells(row) + [fmt_pct(row["tail_gap"]) if "tail_gap" in row else "-",
                            report_util.fmt(row["step_ms"], ".1f")]))


def markdown(report):
    env, cfg, data = report["environment"], report["config"], report["data"]
    seeds = cfg.get("seeds", [cfg["seed"]])
    several = len(seeds) > 1
    calibrated = [r["name"] for r in report["runs"] if layer_run(r["recipe"])[1]]
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
        "fixed offsets); training batches at offsets drawn from the seed, the same for every run "
        "of a seed",
        f"- training: {cfg['steps']} steps, AdamW (betas 0.9/0.95, weight decay "
        f"{cfg['weight_decay']} on matrices), peak lr {cfg['lr']:g}, {cfg['warmup']} warm-up steps "
        f"then cosine to {cfg['min_lr_ratio']:g}x, gradient clip {cfg['clip']}; {cfg['precision']}; "
        f"eager mode; {'seeds ' if several else 'seed '}{', '.join(map(str, seeds))} (a seed "
        "sets the initial weights and the batch order, the same in every run of that seed)",
        f"- FP8 runs replace the blocks' linear layers (qkv, proj, gate_up, down; "
        f"{4 * cfg['layers']} layers); embeddings, norms, attention and the head stay as in BF16"
        + ("; the per-tensor recipes quantize dY to E5M2 (format hybrid), their `-e4m3` runs to "
           "E4M3 (format e4m3)" if any(recipe_and_format(layer_run(r["recipe"])[0])[1] == "e4m3"
                                       for r in report["runs"]) else ""),
    ]
    if calibrated:
        lines.append(
            f"- `-calibrated` runs: the first {cfg.get('calibration_steps', CALIBRATION_STEPS)} "
            "step(s) under `fp8mlir.calibrating(model)` (the delayed layers compute in BF16 and "
            "record the amaxes of X, W and dY into their amax histories and scales, "
            "TransformerEngine's calibration), then FP8 from those scales; the other delayed "
            "runs start from empty histories (scales 1.0)")
    lines += [
        f"- smoothed: bias-corrected EMA (factor {cfg['smoothing']}) of the train loss; max gap = "
        f"largest |smoothed - smoothed BF16| / smoothed BF16 over steps >= {cfg['warmup']} "
        f"(after warm-up), signed; goal within {GAP_GOAL * 100:g}%; the run "
        f"`{REPEAT}` trains BF16 again with the same seed, weights and batches: its gap is the "
        "run-to-run noise of this training (non-deterministic kernels, amplified by training), "
        "and `within BF16 repeat's gap` compares each FP8 run's max gap with it; mean gap, last "
        "third = the mean signed gap over the last third of the steps (a systematic offset "
        "rather than noise)",
        "- over seeds: losses are means over the seeds; the max gap, mean gap and the repeat "
        "comparison are those of the seed-mean smoothed curve against BF16's seed-mean smoothed "
        "curve (over the seeds both trained); per-seed max gaps: the smallest and largest of "
        "each seed's max gap to the BF16 run of that seed; step ms: the median over seeds",
        "- step ms: median of CUDA-event times of whole steps (forward, backward, clip, "
        "optimizer) after the first tenth of the run; tokens/s = tokens per step / step time; "
        "vs BF16 = BF16 step time / this step time; peak memory: torch.cuda.max_memory_allocated",
        "- linear fwd+bwd: CUDA events around each block linear layer's forward (module hooks) "
        "and backward (identity autograd marks on its output and input), summed over layers, on "
        f"{cfg['timing_steps']} steps from the middle of the run; share = that / the mean time of "
        "the same steps (quantization included)",
        ""]
    lines += _recipe_table(summarize(report))
    if several:
        lines += ["", "Per seed:", ""] + _seed_table(run_rows(report))
    return "\n".join(lines) + "\n"


def fmt_pct(value):
    return "n/a" if value is None else f"{value * 100:+.2f}%"


def plot(report, path):
    import matplotlib.pyplot as plt
    cfg, env = report["config"], report["environment"]
    rows = [r for r in summarize(report) if r["status"] == "ok"]
    seeds = cfg.get("seeds", [cfg["seed"]])
    fig, axes = plt.subplots(1, 3, figsize=(18, 5))
    for i, row in enumerate(rows):
        color = f"C{i}"
        axes[0].plot(row["raw_curve"], color=color, alpha=0.2, linewidth=0.7)
        axes[0].plot(row["curve"], color=color, label=f"{row['name']} (val {row['val_loss']:.3f})")
        if "gap" in row:
            gaps = [100 * (c - b) / b for c, b in zip(row["curve"], row["base_curve"])]
            axes[1].plot(range(cfg["warmup"], len(gaps)), gaps[cfg["warmup"]:], color=color,
                         label=row["name"])
    over = f", mean of {len(seeds)} seeds" if len(seeds) > 1 else ""
    axes[0].set(title=f"train loss (smoothed; raw faint{over})", xlabel="step", ylabel="loss")
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
    axes[2].tick_params(axis="x", labelrotation=30, labelsize=8)
    for label in axes[2].get_xticklabels():
        label.set_horizontalalignment("right")
    fig.suptitle(f"FP8 training, {cfg['layers']}x{cfg['hidden']}, seq {cfg['seq']}, batch "
                 f"{cfg['batch']}, {cfg['steps']} steps, seeds {', '.join(map(str, seeds))} - {env.get('gpu')}, torch {env.get('torch')}, "
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
            "seed": args.seed_list[0], "seeds": args.seed_list,
            "calibration_steps": CALIBRATION_STEPS, "val_fraction": args.val_fraction, "eval_batches": args.eval_batches,
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
    log(f"{env['gpu']}, torch {env['torch']}; corpus {info['files']} files, {info['bytes']} bytes; "
        f"{cfg['layers']}x{cfg['hidden']} model, {args.steps} steps of {args.batch}x{args.seq} "
        f"tokens; {len(args.recipe_list)} runs x {len(args.seed_list)} seeds")
    report = {"kind": "train", "environment": env, "config": cfg, "data": info, "runs": []}
    json_path = report_util.report_path(args.out, "train", env, now)
    for seed in args.seed_list:  # a seed's runs share its batches
        batches = train_model.Batches(data, args.seq, args.batch, args.steps, seed,
                                      args.val_fraction, args.eval_batches, "cuda")
        report["data"].update(batches.split)
        for recipe in args.recipe_list:
            record = one_run(recipe, seed, factory, batches, cfg, torch)
            report["runs"].append(record)
            written = report_util.write_outputs(report, json_path, markdown, plot)
        del batches
    print()
    text = markdown(report)
    print(text[text.index("| run |"):])
    for path in written:
        print(f"wrote {path}")
    return 0 if all(r["status"] == "ok" for r in report["runs"]) else 1


def one_run(recipe, seed, factory, batches, cfg, torch):
    """The record of one run (an error record if it raised)."""
    import train_model
    name = {"bf16": "bf16", REPEAT: "bf16 (repeat)"}.get(recipe) or f"{recipe} ({factory.label})"
    layers, calibrated = layer_run(recipe)
    try:
        record = train_model.train_run(name, "bf16" if recipe == REPEAT else layers, factory,
                                       batches, cfg, log, seed=seed,
                                       calibration_steps=CALIBRATION_STEPS if calibrated else 0)
        record["recipe"] = recipe
    except Exception as e:  # noqa: BLE001 - report it, run the others
        traceback.print_exc()
        record = {"name": name, "recipe": recipe, "status": "error",
                  "message": f"{type(e).__name__}: {e}".strip(),
                  "linear": "" if factory is None else factory.description}
    record["seed"] = seed
    if record["status"] != "ok":  # free what the failed run left
        gc.collect()
        torch.cuda.empty_cache()
    return record


if __name__ == "__main__":
    sys.exit(main())
