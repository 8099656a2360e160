"""bench/train_fp8.py and bench/bench_linear.py without a GPU: argument
checks, the summary arithmetic and --render of synthetic reports (the PNG
only where matplotlib is installed). Neither needs torch for this."""

import importlib
import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def train():
    sys.path.insert(0, str(BENCH))
    return importlib.import_module("train_fp8")


@pytest.fixture(scope="module")
def linear():
    sys.path.insert(0, str(BENCH))
    return importlib.import_module("bench_linear")


def has_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


ENV = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.1", "cuda_runtime": "13.0",
       "torch": "2.11.0", "python": "3.12.3", "host": "vm", "date": "2026-11-22T10:00:00+00:00",
       "command": "python3 bench/x.py"}


def train_report(steps=40):
    cfg = {"layers": 4, "hidden": 2048, "heads": 16, "ffn": 5632, "seq": 1024, "batch": 16,
           "steps": steps, "warmup": 4, "lr": 3e-4, "min_lr_ratio": 0.1, "weight_decay": 0.1,
           "clip": 1.0, "seed": 1, "val_fraction": 0.02, "eval_batches": 8, "smoothing": 0.9,
           "timing_steps": 5, "log_every": 10, "impl": "torch", "precision": "f32 + bf16"}
    base = [5.5 * math.exp(-t / 20) + 1.0 for t in range(steps)]

    def run(name, recipe, factor, step_ms):
        return {"name": name, "recipe": recipe, "status": "ok", "message": "", "linear": "layer",
                "params": 10, "loss": [v * factor for v in base], "val_loss": 1.5 * factor,
                "step_ms": [step_ms * 3] + [step_ms] * (steps - 1),
                "peak_memory_bytes": 3 * 2**30, "wall_s": 1.0, "timed_steps": [20, 21],
                "linear_ms_per_step": step_ms / 2, "timed_step_ms": step_ms}
    runs = [run("bf16", "bf16", 1.0, 100.0), run("current (torch)", "current", 1.005, 80.0),
            {"name": "blockwise (torch)", "recipe": "blockwise", "status": "error",
             "message": "RuntimeError: boom | bad", "linear": "layer"}]
    return {"kind": "train", "environment": ENV, "config": cfg,
            "data": {"files": 3, "bytes": 1000, "sha256": "ab" * 32, "root": "/usr/lib/python3"},
            "runs": runs}


def test_train_arguments(train):
    args = train.parse_args(["--steps", "50"])
    assert args.warmup == 5 and args.heads == 16 and args.recipe_list == list(train.RECIPES)
    for bad, message in [(["--recipes", "bf16,fp4"], "fp4"), (["--hidden", "100"], "multiple of 128"),
                         (["--steps", "10", "--warmup", "10"], "--warmup")]:
        with pytest.raises(SystemExit):
            train.parse_args(bad)


def test_train_summary(train):
    assert train.smooth([2.0, 2.0, 2.0], 0.9) == pytest.approx([2.0, 2.0, 2.0])
    assert train.largest_gap([1.0, 1.1, 0.9, 1.02], [1.0, 1.0, 1.0, 1.0], 2) == (pytest.approx(-0.1), 2)
    rows = {r["name"]: r for r in train.summarize(train_report())}
    current = rows["current (torch)"]
    assert current["gap"] == pytest.approx(0.005) and current["within_goal"]
    assert current["step_ms"] == 80.0 and current["speedup"] == pytest.approx(1.25)
    assert current["tokens_per_s"] == pytest.approx(16 * 1024 / 0.08)
    assert current["linear_share"] == pytest.approx(0.5)
    assert "gap" not in rows["bf16"] and rows["blockwise (torch)"]["status"] == "error"


def render(script, report, tmp_path, name):
    path = tmp_path / name
    path.write_text(json.dumps(report))
    done = subprocess.run([sys.executable, str(BENCH / script), "--render", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert path.with_suffix(".png").exists() == has_matplotlib()
    return path.with_suffix(".md").read_text()


def test_train_render(tmp_path):
    md = render("train_fp8.py", train_report(), tmp_path, "train-gpu-1.json")
    assert "| run | linear layers | final train loss |" in md
    assert "| current (torch) | layer |" in md and "| +0.50% (" in md
    assert "error: RuntimeError: boom / bad" in md
    assert ENV["command"] in md


def linear_report():
    rows = []
    for impl, recipe, ms in [("bf16", "bf16", 10.0), ("torch", "current", 8.0),
                             ("fp8mlir", "current", 5.0), ("torch", "blockwise", None)]:
        rows.append({"tokens": 4096, "in_features": 8192, "out_features": 8192, "impl": impl,
                     "recipe": recipe, "status": "ok" if ms else "error",
                     "message": "" if ms else "ValueError: no", "ms": ms,
                     "round_ms": [ms] * 3 if ms else [], "host_issue_ms": 1.0,
                     "rel_diff_vs_bf16": {"y": 0.03, "dx": 0.05, "dw": 0.05} if ms else None})
    return {"kind": "linear", "environment": ENV,
            "settings": {"warmup": 5, "iters": 20, "rounds": 3, "dtype": "bf16", "seed": 1},
            "results": rows}


def test_linear_summary_and_render(linear, tmp_path):
    rows = linear.with_ratios(linear_report()["results"])
    by = {(r["impl"], r["recipe"]): r for r in rows}
    assert by[("torch", "current")]["vs_bf16"] == pytest.approx(1.25)
    assert by[("fp8mlir", "current")]["vs_torch_fp8"] == pytest.approx(1.6)
    assert by[("fp8mlir", "current")]["tflops"] == pytest.approx(6 * 4096 * 8192 * 8192 / 5e-3 / 1e12)
    md = render("bench_linear.py", linear_report(), tmp_path, "linear-gpu-1.json")
    assert "| 4096 | 8192x8192 | fp8mlir | current |" in md
    assert "ValueError: no" in md


def test_linear_arguments(linear):
    args = linear.parse_args(["--shapes", "4096x4096", "--tokens", "4096,8192"])
    assert args.shape_list == [(4096, 4096)] and args.token_list == [4096, 8192]
    with pytest.raises(SystemExit):
        linear.parse_args(["--shapes", "4096by4096"])
