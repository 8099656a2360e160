"""bench/train_fp8.py, bench/bench_linear.py and bench/launch_overhead.py
without a GPU: argument checks, the summary arithmetic, verdicts and
--render of synthetic reports (the PNG only where matplotlib is installed).
None needs torch for this."""

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


TRAIN_CONFIG = {"layers": 4, "hidden": 2048, "heads": 16, "ffn": 5632, "seq": 1024, "batch": 16,
                "warmup": 4, "lr": 3e-4, "min_lr_ratio": 0.1, "weight_decay": 0.1,
                "clip": 1.0, "seed": 1, "val_fraction": 0.02, "eval_batches": 8, "smoothing": 0.9,
                "timing_steps": 5, "log_every": 10, "impl": "torch", "precision": "f32 + bf16"}


def train_run(name, recipe, factor, step_ms, steps=40, seed=None):
    base = [5.5 * math.exp(-t / 20) + 1.0 for t in range(steps)]
    run = {"name": name, "recipe": recipe, "status": "ok", "message": "", "linear": "layer",
           "params": 10, "loss": [v * factor for v in base], "val_loss": 1.5 * factor,
           "step_ms": [step_ms * 3] + [step_ms] * (steps - 1),
           "peak_memory_bytes": 3 * 2**30, "wall_s": 1.0, "timed_steps": [20, 21],
           "linear_ms_per_step": step_ms / 2, "timed_step_ms": step_ms}
    return run if seed is None else {**run, "seed": seed}


def train_report(steps=40):
    """A report of one seed, as written before --seeds (the seed in the
    config only)."""
    cfg = {**TRAIN_CONFIG, "steps": steps}

    def run(name, recipe, factor, step_ms):
        return train_run(name, recipe, factor, step_ms, steps)
    runs = [run("bf16", "bf16", 1.0, 100.0), run("current (torch)", "current", 1.005, 80.0),
            run("current-e4m3 (torch)", "current-e4m3", 0.998, 80.0),
            {"name": "blockwise (torch)", "recipe": "blockwise", "status": "error",
             "message": "RuntimeError: boom | bad", "linear": "layer"}]
    return {"kind": "train", "environment": ENV, "config": cfg,
            "data": {"files": 3, "bytes": 1000, "sha256": "ab" * 32, "root": "/usr/lib/python3"},
            "runs": runs}


def test_train_arguments(train):
    args = train.parse_args(["--steps", "50"])
    assert args.warmup == 5 and args.heads == 16
    assert args.recipe_list == ["bf16", "bf16-repeat", "current", "delayed", "blockwise"]
    e4m3 = train.parse_args(["--recipes", "bf16,current-e4m3,delayed-e4m3"])
    assert e4m3.recipe_list == ["bf16", "current-e4m3", "delayed-e4m3"]
    for bad, message in [(["--recipes", "bf16,fp4"], "fp4"), (["--hidden", "100"], "multiple of 128"),
                         (["--steps", "10", "--warmup", "10"], "--warmup")]:
        with pytest.raises(SystemExit):
            train.parse_args(bad)


def test_train_seeds_and_calibrated_runs(train):
    args = train.parse_args(["--recipes", "bf16,delayed,delayed-calibrated,delayed-e4m3-calibrated",
                             "--impl", "fp8mlir", "--seeds", "7,1,2"])
    assert args.seed_list == [7, 1, 2]
    assert train.parse_args(["--seed", "5"]).seed_list == [5]
    assert train.layer_run("delayed-e4m3-calibrated") == ("delayed-e4m3", True)
    assert train.layer_run("delayed") == ("delayed", False)
    assert train.fp8_layer_runs(args.recipe_list) == ["delayed", "delayed-e4m3"]
    for bad in (["--seeds", "1,x"], ["--seeds", "1,1"], ["--recipes", "delayed-calibrated"],
                ["--recipes", "current-calibrated", "--impl", "fp8mlir"]):
        with pytest.raises(SystemExit):
            train.parse_args(bad)


def seeds_report(steps=40):
    """Two seeds: per seed BF16, its repeat and two FP8 runs (one fails
    on seed 2)."""
    cfg = {**TRAIN_CONFIG, "steps": steps, "seed": 1, "seeds": [1, 2], "calibration_steps": 1}
    runs = []
    for seed, shift in ((1, 0.0), (2, 0.004)):
        runs += [train_run("bf16", "bf16", 1.0, 100.0, steps, seed),
                 train_run("bf16 (repeat)", "bf16-repeat", 1.001, 100.0, steps, seed),
                 train_run("delayed (fp8mlir)", "delayed", 1.02 - 2 * shift, 80.0 + seed, steps, seed)]
        calibrated = train_run("delayed-calibrated (fp8mlir)", "delayed-calibrated", 1.002 + shift,
                               80.0, steps, seed)
        if seed == 2:
            calibrated = {"name": calibrated["name"], "recipe": "delayed-calibrated",
                          "status": "error", "message": "RuntimeError: late", "linear": "layer",
                          "seed": 2}
        runs.append(calibrated)
    return {"kind": "train", "environment": ENV, "config": cfg,
            "data": {"files": 3, "bytes": 1000, "sha256": "ab" * 32, "root": "/usr/lib/python3"},
            "runs": runs}


def test_train_summary_over_seeds(train):
    rows = {r["name"]: r for r in train.summarize(seeds_report())}
    delayed = rows["delayed (fp8mlir)"]
    assert delayed["seeds"] == [1, 2]
    # the seed-mean curve is 1.016 x BF16's; per seed 1.02 and 1.012
    assert delayed["gap"] == pytest.approx(0.016) and not delayed["within_goal"]
    assert delayed["seed_gap_min"] == pytest.approx(0.012)
    assert delayed["seed_gap_max"] == pytest.approx(0.02)
    assert delayed["step_ms"] == pytest.approx(81.5) and not delayed["within_noise"]
    assert delayed["final_loss"] == pytest.approx(1.016 * train_run("", "", 1.0, 1.0)["loss"][-1])
    calibrated = rows["delayed-calibrated (fp8mlir)"]
    assert calibrated["seeds"] == [1] and calibrated["gap"] == pytest.approx(0.002)
    assert calibrated["message"] == "seed 2: RuntimeError: late"
    assert rows["bf16 (repeat)"]["gap"] == pytest.approx(0.001)
    per_seed = [r for r in train.run_rows(seeds_report()) if r["recipe"] == "delayed"]
    assert [r["seed"] for r in per_seed] == [1, 2]
    assert [r["gap"] for r in per_seed] == [pytest.approx(0.02), pytest.approx(0.012)]


def test_train_render_over_seeds(tmp_path):
    md = render("train_fp8.py", seeds_report(), tmp_path, "train-gpu-2.json")
    assert "| delayed (fp8mlir) | layer | 1, 2 | " in md and "| +1.60% (" in md
    assert "| +1.20% / +2.00% |" in md
    assert "Per seed:" in md and "| delayed (fp8mlir) | 2 | " in md
    assert "| delayed-calibrated (fp8mlir) | 2 | error: RuntimeError: late |" in md
    assert "`-calibrated` runs: the first 1 step(s) under `fp8mlir.calibrating(model)`" in md
    assert "seeds 1, 2" in md


def test_run_names_give_the_factory_the_format():
    sys.path.insert(0, str(BENCH))
    factories = importlib.import_module("linear_factories")
    assert factories.recipe_options("current") == {"recipe": "current"}
    assert factories.recipe_options("delayed-e4m3") == {"recipe": "delayed", "format": "e4m3"}


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
    assert "| run | linear layers | seeds | final train loss |" in md
    assert "Per seed" not in md  # one seed: no second table
    assert "| current (torch) | layer |" in md and "| +0.50% (" in md
    assert "| current-e4m3 (torch) | layer |" in md and "| -0.20% (" in md
    assert "their `-e4m3` runs to E4M3" in md
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
    assert args.impl_list is None and args.jit_jobs == 8
    assert linear.parse_args(["--impls", "fp8mlir,deepgemm"]).impl_list == ["fp8mlir", "deepgemm"]
    for bad in (["--shapes", "4096by4096"], ["--impls", "cutlass"], ["--jit-jobs", "0"]):
        with pytest.raises(SystemExit):
            linear.parse_args(bad)


def test_linear_report_names_the_layers_and_the_skipped_ones(linear, tmp_path):
    report = linear_report()
    report["settings"].update(layers={"fp8mlir": "fp8mlir.nn.Linear"},
                              skipped={"deepgemm": "deep_gemm not importable (ImportError: x)"})
    md = render("bench_linear.py", report, tmp_path, "linear-gpu-2.json")
    assert "- layer `fp8mlir`: fp8mlir.nn.Linear" in md
    assert "- not timed: `deepgemm` (deep_gemm not importable (ImportError: x))" in md


def test_deepgemm_layer_kernels_in_the_bench_linear_suite():
    """populate --suite bench-linear compiles the deepgemm layer's
    quantizations (X, dY 1x128; W 128x128; rowwise + columnwise) when it
    runs the blockwise recipe."""
    sys.path.insert(0, str(BENCH.parent / "python"))
    from fp8mlir.testing import linear_cases
    keys = {s.cache_key for s in linear_cases.bench_linear_steps(
        "--shapes 4096x14336 --tokens 4096 --recipes blockwise")}
    assert {"quantize-blockwise-1x128-bf16xe4m3-rowcol-c4096",
            "quantize-blockwise-1x128-bf16xe4m3-rowcol-c14336",
            "quantize-blockwise-128x128-bf16xe4m3-rowcol-c4096"} <= keys
    for argv in ("--recipes current", "--recipes blockwise --impls fp8mlir"):
        assert not any(k.startswith("quantize-") for k in
                       (s.cache_key for s in linear_cases.bench_linear_steps(argv)))


@pytest.fixture(scope="module")
def launch():
    sys.path.insert(0, str(BENCH))
    return importlib.import_module("launch_overhead")


def launch_report(launch, ours_us=11.0, peer_us=25.0, ours_drain=20.0):
    timing = importlib.import_module("launch_timing")

    def row(recipe, impl, host, drain=20.0, gpu=2.5, held_host=10.0):
        held = {"gpu_us": gpu, "host_us": held_host, "calls": 500}
        return {"recipe": recipe, "impl": impl, "host_us": host, "host_min_us": host - 0.5,
                "host_max_us": host + 1.0, "drain_max_us": drain, "gpu_us": gpu,
                "held_host_us": held_host, "host_bound": timing.host_bound(host, drain, held),
                "samples": [[0.1, host, drain, 1980]], "probe_range": [1755, 1980]}
    rows = []
    for recipe in ("tensorwise", "rowwise", "blockwise"):
        peer = "F.scaled_mm" if recipe == "blockwise" else "torch._scaled_mm"
        rows += [row(recipe, launch.OURS, ours_us, ours_drain), row(recipe, launch.OP, 10.5),
                 row(recipe, peer, peer_us, gpu=3.0, held_host=peer_us - 1.0),
                 row(recipe, launch.OUT, 9.0), {**row(recipe, launch.EMPTY, 2.0),
                                                "gpu_us": None, "held_host_us": None}]
    report = {"environment": ENV, "method": launch.METHOD, "extension": True,
              "calls": 2000, "rounds": 9, "overhead": rows,
              "graphs": [{"recipe": "tensorwise", "impl": launch.OURS, "host_us": 0.05,
                          "gpu_us": 2.2}],
              "legacy": {"tensorwise": {"total (the whole call)": 130.0}},
              "c_launch": {"ordered-moving": {"median_us": 4.2, "min_us": 3.5}},
              "small_shapes": [{"recipe": "rowwise", "m": 1, "n": 4096, "k": 4096,
                                "ours_kernel_us": 10.0, "torch_kernel_us": 14.0,
                                "ours_sync_us": 25.0, "torch_sync_us": None}]}
    report["verdict"] = launch.verdict(report)
    return report


def test_launch_verdict_needs_host_bound_rows_below_the_peer(launch):
    assert all(launch_report(launch)["verdict"].values())
    # 16 us back to back against 10 us with the GPU held back: not host-bound.
    slow = launch_report(launch, ours_us=16.0)["verdict"]
    assert not any(ok for name, ok in slow.items() if not name.startswith("C:"))
    # A drain longer than the limit: the host may have waited on the GPU.
    queued = launch_report(launch, ours_drain=5000.0)["verdict"]
    assert not any(ok for name, ok in queued.items() if not name.startswith("C:"))
    above_peer = launch_report(launch, ours_us=12.0, peer_us=11.0)["verdict"]
    assert not any(ok for name, ok in above_peer.items() if not name.startswith("C:"))


def test_launch_render(launch, tmp_path):
    path = tmp_path / "launch-h100-20261122-100000.json"
    path.write_text(json.dumps(launch_report(launch)))
    result = subprocess.run([sys.executable, str(BENCH / "launch_overhead.py"), "--render",
                             str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    md = path.with_suffix(".md").read_text()
    assert "PASS: tensorwise: fp8mlir.scaled_mm <= 15.0 us and < torch._scaled_mm" in md
    assert ("| tensorwise | fp8mlir.scaled_mm | 11.00 | 10.5-12.0 | 10.00 | 2.50 | 77% | 20 "
            "| yes |") in md
    assert "GPU SM clock after the samples: 1755-1980 MHz" in md
    assert "| now | fp8mlir.scaled_mm(out=) | 9.00 |" in md
    assert "| rowwise | 1 | 4096 x 4096 | 10.00 | 14.00 | 1.40 | 25.00 | n/a | n/a |" in md



@pytest.fixture(scope="module")
def timing():
    sys.path.insert(0, str(BENCH))
    return importlib.import_module("launch_timing")


class _FakeCuda:
    """torch.cuda for launch_timing without a GPU: a spin lasting `spin_ms`
    (4x longer at each retry, as the cycles are), kernels `kernel_ms` in all."""

    def __init__(self, spin_ms, kernel_ms):
        self.spin_ms, self.kernel_ms, self.sleeps, self.events = spin_ms, kernel_ms, [], []

    def Event(self, enable_timing=False):  # noqa: N802 (torch's name)
        cuda = self

        class Event:
            def record(self):
                pass

            def elapsed_time(self, other):
                if self is cuda.events[0]:
                    return cuda.spin_ms * cuda.sleeps[-1] / cuda.sleeps[0]
                return cuda.kernel_ms
        self.events.append(Event())
        return self.events[-1]

    def synchronize(self):
        pass

    def _sleep(self, cycles):
        self.sleeps.append(cycles)


def test_launch_gpu_time_needs_the_calls_queued_before_the_spin_ended(timing):
    from types import SimpleNamespace
    slow_host = SimpleNamespace(cuda=_FakeCuda(spin_ms=0.0, kernel_ms=1.0))
    calls = []
    assert timing.queued(slow_host, lambda i: calls.append(i), 16) is None
    assert slow_host.cuda.sleeps == [timing.SPIN_CYCLES * 2 ** i for i in range(4)]
    assert len(calls) == 16 + 8 + 4 + 2  # half the calls at each retry
    fast_host = SimpleNamespace(cuda=_FakeCuda(spin_ms=1000.0, kernel_ms=2.0))
    result = timing.queued(fast_host, lambda i: None, 10)
    assert result["gpu_us"] == pytest.approx(200.0) and result["calls"] == 10
    assert 0 <= result["host_us"] < 1000.0
    assert len(fast_host.cuda.sleeps) == 1


def test_launch_host_bound_means_the_host_did_not_wait(timing):
    held = {"gpu_us": 2.5, "host_us": 10.0, "calls": 500}
    assert timing.host_bound(11.0, 20.0, held)
    assert not timing.host_bound(17.8, 20.0, held)  # slower than with the GPU held back
    assert not timing.host_bound(11.0, 2000.0, held)  # the GPU had a backlog
    assert not timing.host_bound(2.0, 20.0, held)  # the GPU is slower than the host
    assert not timing.host_bound(11.0, 20.0, None)


def test_launch_host_time_interleaves_every_implementation_each_round(timing):
    from types import SimpleNamespace
    calls = []
    fake = SimpleNamespace(cuda=SimpleNamespace(synchronize=lambda: None))
    fns = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    samples = timing.interleaved(fake, fns, calls=10, rounds=4, warmup_s=0.0)
    assert {name: len(v) for name, v in samples.items()} == {"a": 4, "b": 4, "c": 4}
    assert calls[:60] == ["a"] * 20 + ["b"] * 20 + ["c"] * 20  # the warm-up
    measured = calls[60:]
    assert len(measured) == 120
    order = "".join(measured[i] for i in range(0, 120, 10))
    assert order == "abc" + "acb" + "cab" + "cba"  # rotated, every other round reversed
    summary = timing.summarize(samples["a"])
    assert summary["host_min_us"] <= summary["host_us"] <= summary["host_max_us"]


@pytest.fixture(scope="module")
def grouped():
    sys.path.insert(0, str(BENCH))
    return importlib.import_module("grouped_report")


def grouped_row(layout, recipe, peer, ours_us, peer_us, diff=2e-3, **shape):
    entry = {"status": "ok", "kernel": f"k_{layout}", "rel_error": 1.7e-3,
             "within_tolerance": True, "us": ours_us, "tflops": 1000.0,
             "bytes_per_s": 2.0e12, "of_copy_bandwidth": 0.8, "api_bit_identical": True}
    theirs = dict(entry, kernel=peer, us=peer_us, max_rel_diff_vs_fp8mlir=diff,
                  diff_within_tolerance=diff <= 5e-3)
    theirs.pop("api_bit_identical")
    return dict(layout=layout, recipe=recipe, groups=4, tolerance=5e-3,
                impls={"fp8mlir": entry, peer: theirs}, **shape)


def grouped_report_dict(diff=2e-3):
    rows = [grouped_row("m_contiguous", "blockwise", "deepgemm", 100.0, 110.0, diff,
                        n=4096, k=7168, m=32768, group_rows=[8000, 8100, 8200, 8300]),
            grouped_row("m_contiguous", "blockwise", "deepgemm", 50.0, 60.0,
                        n=7168, k=2048, m=32768, group_rows=[8000, 8100, 8200, 8300]),
            grouped_row("m_contiguous", "rowwise", "torch._scaled_grouped_mm", 100.0, 150.0,
                        n=4096, k=7168, m=32768, group_rows=[8000, 8100, 8200, 8300]),
            grouped_row("m_masked", "blockwise", "deepgemm", 20.0, 19.0,
                        n=4096, k=7168, max_m=1024, counts=[100, 0, 7, 1]),
            dict(layout="k_grouped", recipe="blockwise_1d1d", groups=4, m=4096, n=7168,
                 ks=[8192, 7168, 9216, 8192], tolerance=1e-3,
                 impls={"fp8mlir": {"status": "unavailable", "reason": "not available: no "
                                    "k_grouped layout"},
                        "deepgemm": {"status": "ok", "us": 900.0, "rel_error": 1e-4,
                                     "within_tolerance": True}})]
    return {"environment": dict(ENV, deepgemm="2.6.1"),
            "machine": {"copy_bytes_per_s": 2.5e12}, "rows": rows,
            "settings": {"rounds": 3, "rep_ms": 50.0, "sustained_s": 0.0}}


def test_grouped_report_geomeans_and_tables(grouped):
    report = grouped_report_dict()
    lines = grouped.summary_lines(report)
    assert ("geomean m_contiguous blockwise: fp8mlir / deepgemm = "
            f"{math.sqrt(1.1 * 1.2):.3f}x kernel-only (2 of 2 shapes)") in lines
    assert "geomean m_masked blockwise: fp8mlir / deepgemm = 0.950x kernel-only (1 of 1 shapes)" \
        in lines
    assert "geomean k_grouped blockwise_1d1d: fp8mlir / deepgemm = n/a kernel-only (0 of 1 " \
        "shapes)" in lines
    md = grouped.markdown(report)
    assert "- DeepGEMM 2.6.1" in md
    assert "| 4 | 4096 x 7168 | 100,0,7,1 / 1024 | 20.0 | 1000.0 | 2000 | 0.800 | 19.0 |" in md
    assert "fp8mlir unavailable: not available: no k_grouped layout" in md
    assert grouped.all_correct(report["rows"])


def test_grouped_report_flags_outputs_that_differ(grouped, tmp_path):
    report = grouped_report_dict(diff=2e-2)
    assert not grouped.all_correct(report["rows"])
    path = tmp_path / "grouped-h100-20261126-100000.json"
    path.write_text(json.dumps(report))
    result = subprocess.run([sys.executable, str(BENCH / "grouped_report.py"), str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "deepgemm DIFFERS from fp8mlir" in path.with_suffix(".md").read_text()
