"""bench/variant_picks.py without a GPU: the runtime's launch-variant rule
replayed on a synthetic decode_ab.py run, the override of a throughput and
of the resident clusters, and the check against the runtime's launch."""

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "variant_picks.py"
PREFIX = "fp8_gemm_tensorwise_e4m3_e4m3_bf16_n{n}_k4096"


def kernel(tile, throughput, variants=(), k_split=1, workspace=False, swap_ab=False,
           n=4096):
    grid = {"kind": "persistent", "tile_m": tile[0], "tile_n": tile[1],
            "throughput": throughput}
    if k_split > 1:
        grid["k_split"] = k_split
    suffix = f"_t{tile[0]}x{tile[1]}x128_s4" + ("_ks%d" % k_split if k_split > 1 else "")
    meta = {"name": PREFIX.format(n=n) + suffix, "grid": grid, "cluster": [k_split, 1, 1],
            "gemm": {"swap_ab": swap_ab},
            "params": [{"name": "workspace", "kind": "workspace"}] if workspace else []}
    if variants:
        meta["variants"] = list(variants)
    return meta


def write_run(tmp, times, auto, m=16, n=4096):
    """Kernels 128x192 (the dispatching one), 64x64 and a swap-AB K-split
    16x64 over clusters of 4; one shape timed."""
    folder = tmp / "k"
    folder.mkdir(exist_ok=True)
    metas = [kernel((64, 64), 45, n=n),
             kernel((16, 64), 16, k_split=4, swap_ab=True, n=n)]
    names = [m["name"] + ".json" for m in metas]
    metas.insert(0, kernel((128, 192), 100, names, n=n))
    for meta in metas:
        (folder / (meta["name"] + ".json")).write_text(json.dumps(meta))
    impls = {"q:" + m["name"][len(PREFIX.format(n=n)) + 1:]: {"status": "ok", "us": t}
             for m, t in zip(metas, times)}
    impls["q:auto"] = {"status": "ok", "us": auto}
    run = {"results": [{"m": m, "n": n, "k": 4096, "recipe": "tensorwise",
                        "impls": impls}]}
    (tmp / "ab.json").write_text(json.dumps(run))
    return folder


def picks(tmp, folder, *extra):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--ab", str(tmp / "ab.json"),
                           "--kernels", str(folder), *extra],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_rule_is_replayed_and_checked_against_the_runtime(tmp_path):
    # M = 16, N = 4096: one wave each of 22 tiles of 128x192 (cost 245.8),
    # 64 of 64x64 (91.0) and 64 swap-AB tiles over 32 clusters of 4, one
    # row of them: 2 waves / 4 (32.0). The K-split kernel is the pick.
    folder = write_run(tmp_path, times=[26.0, 24.0, 25.0], auto=25.0)
    out = picks(tmp_path, folder)
    assert "pick 16x64x128_s4_ks4 25.00 us, best 64x64x128_s4 24.00 us, 1.042x" in out
    assert "1 above 1.03x; 0 replays differ" in out
    # 8 clusters of 4 at once: 8 waves / 4 (128.0) against 91.0.
    out = picks(tmp_path, folder, "--clusters", "4=8")
    assert "pick 64x64x128_s4 24.00 us" in out and "replay != runtime (25.00 us)" in out
    # Throughput overrides: 64x64 at 10 (409.6), the swap-AB tile at 1
    # (512): the 128x192 tile.
    out = picks(tmp_path, folder, "--throughput", "64x64=10", "--throughput", "16x64=1")
    assert "pick 128x192x128_s4 26.00 us" in out


def test_a_swap_ab_kernel_runs_one_row_of_its_tiles(tmp_path):
    # M = 24: two rows of 16-token tiles; the 64x64 tile runs.
    folder = write_run(tmp_path, times=[26.0, 24.0, 25.0], auto=24.0, m=24)
    assert "pick 64x64x128_s4 24.00 us" in picks(tmp_path, folder)
    # N = 512: two rows of 8 tiles split over clusters of 4 are 64 CTAs, at
    # most 0.6 of 132 SMs: the K-split kernel runs them (0.25 waves, 16.0,
    # against 91.0).
    folder = write_run(tmp_path, times=[26.0, 24.0, 25.0], auto=25.0, m=24, n=512)
    assert "pick 16x64x128_s4_ks4 25.00 us" in picks(tmp_path, folder)


def test_a_saved_sweep_replays_without_the_kernels(tmp_path):
    folder = write_run(tmp_path, times=[26.0, 24.0, 25.0], auto=25.0)
    sweep = tmp_path / "sweep.json"
    first = picks(tmp_path, folder, "--save", str(sweep))
    saved = json.loads(sweep.read_text())
    assert saved["method"].startswith("kernel-only")
    [shape] = saved["results"]
    assert [v["tag"] for v in shape["variants"]] == [
        "128x192x128_s4", "64x64x128_s4", "16x64x128_s4_ks4"]
    assert shape["variants"][2]["k_split"] == 4 and shape["variants"][2]["swap_ab"]
    for path in folder.iterdir():
        path.unlink()
    report = tmp_path / "replay.md"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--sweep", str(sweep),
                           "--clusters", "4=8", "--report", str(report)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    assert "- tensorwise promoted: 1 shapes, the pick at 1.0000x" in text
    assert "--clusters 4=8" in text and "## Picks above the slack\n\nnone" in text
    assert "pick 16x64x128_s4_ks4 25.00 us" in first
    assert "pick 64x64x128_s4 24.00 us" in proc.stdout
    # A saved sweep holds the accumulations asked for: no fast kernel here.
    proc = subprocess.run([sys.executable, str(SCRIPT), "--sweep", str(sweep), "--fast"],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and "no shape" in proc.stderr
