#!/usr/bin/env python3
"""The report of bench/bench_grouped.py, rendered from its JSON alone (no
torch, no GPU):

    python3 bench/grouped_report.py bench/results/grouped-<gpu>-<date>.json

rewrites the .md beside it. One table per layout (and recipe), fp8mlir
against each peer: kernel-only time, TFLOP/s, for m_masked the bandwidth
and its fraction of a device copy's, the errors against the f64 reference
and the largest per-group difference to fp8mlir's output; the geometric
mean of peer time / fp8mlir time per layout; sustained tables when run.
"""

import json
import sys
from pathlib import Path

import report_util
from report_util import PROGRAMMATIC_LAUNCH_NOTE, fmt

FP8MLIR = "fp8mlir"
SECTIONS = (("m_contiguous", "rowwise"), ("m_contiguous", "blockwise"),
            ("m_masked", "blockwise"), ("k_grouped", "blockwise_1d1d"))
TITLES = {("m_contiguous", "rowwise"): "m_contiguous, rowwise",
          ("m_contiguous", "blockwise"): "m_contiguous, blockwise 1x128 x 128x128",
          ("m_masked", "blockwise"): "m_masked decode, blockwise 1x128 x 128x128 "
                                     "(launch shape [G, max M, K] fixed)",
          ("k_grouped", "blockwise_1d1d"): "k_grouped (expert wgrad), 1x128 x 1x128, f32 out"}


def shape_label(row):
    if row["layout"] == "k_grouped":
        return f"{row['m']} x {row['n']}"
    return f"{row['n']} x {row['k']}"


def rows_label(row):
    """The group sizes: rows (m_contiguous), counts/max M (m_masked), K (k_grouped)."""
    if row["layout"] == "m_masked":
        return f"{','.join(str(c) for c in row['counts'])} / {row['max_m']}"
    values = row["ks"] if row["layout"] == "k_grouped" else row["group_rows"]
    return ",".join(str(v) for v in values)


def peers_of(rows):
    names = []
    for row in rows:
        names += [n for n in row["impls"] if n != FP8MLIR and n not in names]
    return names


def status(entry):
    """'' for a correct, timed implementation, else a short note."""
    if not entry:
        return "absent"
    if entry["status"] != "ok":
        return f"{entry['status']}: {entry.get('reason', '')}"
    notes = []
    if not entry.get("within_tolerance", True):
        notes.append("ERROR above tolerance")
    if entry.get("diff_within_tolerance") is False:
        notes.append("DIFFERS from fp8mlir")
    if entry.get("api_error"):
        notes.append(f"public API failed: {entry['api_error']}")
    elif entry.get("api_bit_identical") is False:
        notes.append("public API output differs")
    return "; ".join(notes)


def ratio(row, peer, key="us"):
    ours, theirs = row["impls"].get(FP8MLIR, {}), row["impls"].get(peer, {})
    if key == "sustained":
        a, b = ours.get("sustained", {}).get("tflops"), theirs.get("sustained", {}).get("tflops")
        return a / b if a and b else None
    a, b = ours.get(key), theirs.get(key)
    return b / a if a and b else None


def section_table(rows, peer, masked):
    header = ["G", "N x K" if rows[0]["layout"] != "k_grouped" else "M x N",
              "rows" if rows[0]["layout"] != "k_grouped" else "K per expert",
              "fp8mlir us", "TFLOP/s"]
    if masked:
        header += ["GB/s", "of copy"]
    header += [f"{peer} us", "TFLOP/s"]
    if masked:
        header += ["GB/s", "of copy"]
    header += [f"{peer} / fp8mlir", "error fp8mlir", f"error {peer}",
               "max rel diff", "notes"]
    body = []
    for row in rows:
        ours, theirs = row["impls"].get(FP8MLIR, {}), row["impls"].get(peer, {})
        line = [row["groups"], shape_label(row), rows_label(row)]
        for entry in (ours, theirs):
            line += [fmt(entry.get("us"), ".1f"), fmt(entry.get("tflops"), ".1f")]
            if masked:
                bw = entry.get("bytes_per_s")
                line += [fmt(bw / 1e9 if bw else None, ".0f"), fmt(entry.get("of_copy_bandwidth"))]
        line += [fmt(ratio(row, peer)), fmt(ours.get("rel_error"), ".1e"),
                 fmt(theirs.get("rel_error"), ".1e"),
                 fmt(theirs.get("max_rel_diff_vs_fp8mlir"), ".1e"),
                 "; ".join(s for s in (status(ours) and f"fp8mlir {status(ours)}",
                                       status(theirs) and f"{peer} {status(theirs)}") if s)]
        body.append(line)
    return report_util.table(header, body)


def sustained_table(rows, peer):
    header = ["G", "shape", "rows", "fp8mlir TFLOP/s", "MHz", f"{peer} TFLOP/s", "MHz",
              "fp8mlir / peer"]
    body = []
    for row in rows:
        s_ours = row["impls"].get(FP8MLIR, {}).get("sustained", {})
        s_peer = row["impls"].get(peer, {}).get("sustained", {})
        body.append([row["groups"], shape_label(row), rows_label(row),
                     fmt(s_ours.get("tflops"), ".1f"), fmt(s_ours.get("sm_clock_mhz"), ".0f"),
                     fmt(s_peer.get("tflops"), ".1f"), fmt(s_peer.get("sm_clock_mhz"), ".0f"),
                     fmt(ratio(row, peer, "sustained"))])
    return report_util.table(header, body)


def times(value):
    """'1.234x', or 'n/a' without a value."""
    return f"{fmt(value)}x" if value else "n/a"


def geomean_line(rows, peer, key="us"):
    values = [ratio(row, peer, key) for row in rows]
    mean = report_util.geomean(values)
    counted = sum(1 for v in values if v)
    return mean, counted


def summary_lines(report):
    """One line per (layout, recipe, peer): the geometric mean speedup."""
    lines = []
    for layout, recipe in SECTIONS:
        rows = [r for r in report["rows"] if r["layout"] == layout and r["recipe"] == recipe]
        for peer in peers_of(rows):
            mean, counted = geomean_line(rows, peer)
            lines.append(f"geomean {layout} {recipe}: fp8mlir / {peer} = {times(mean)} "
                         f"kernel-only ({counted} of {len(rows)} shapes)")
            if report.get("settings", {}).get("sustained_s"):
                mean, counted = geomean_line(rows, peer, "sustained")
                lines.append(f"geomean {layout} {recipe}: fp8mlir / {peer} = {times(mean)} "
                             f"sustained ({counted} shapes)")
    return lines


def markdown(report):
    env, machine, settings = report["environment"], report.get("machine", {}), report["settings"]
    copy = machine.get("copy_bytes_per_s")
    lines = [f"# Grouped FP8 GEMMs: {env.get('gpu', '?')}", ""]
    lines += report_util.environment_lines(env)
    lines += [f"- DeepGEMM {env.get('deepgemm', '?')}",
              f"- time: kernel-only, us per call (calls queued behind a GPU spin, input copies "
              f"totalling > 4x L2 cycled per call; median of {settings['rounds']} rounds, the "
              f"order rotated; {PROGRAMMATIC_LAUNCH_NOTE}); `X / fp8mlir` = X's time / "
              f"fp8mlir's (> 1: fp8mlir faster)",
              "- error: the largest per-group relative Frobenius error against the f64 "
              "reference of the quantized inputs; max rel diff: the largest per-group relative "
              "difference of the peer's output to fp8mlir's (valid rows only)",
              f"- device copy bandwidth (read + write, 1 GiB): "
              f"{fmt(copy / 1e9 if copy else None, '.0f')} GB/s; m_masked GB/s = the fewest "
              "bytes moved (valid A rows, the weights of experts with rows, scales, valid D "
              "rows) / time", ""]
    lines += [f"- {line}" for line in summary_lines(report)] + [""]
    for layout, recipe in SECTIONS:
        rows = [r for r in report["rows"] if r["layout"] == layout and r["recipe"] == recipe]
        if not rows:
            continue
        for peer in peers_of(rows):
            lines += [f"## {TITLES[(layout, recipe)]}: fp8mlir vs {peer}", ""]
            lines += section_table(rows, peer, layout == "m_masked")
            mean, counted = geomean_line(rows, peer)
            lines += ["", f"Geometric mean speedup of fp8mlir over {peer} ({peer} time / "
                      f"fp8mlir time): {times(mean)} ({counted} of {len(rows)} shapes). "
                      f"Tolerance of the errors and differences: {rows[0]['tolerance']:.0e}.",
                      ""]
            if settings.get("sustained_s"):
                lines += [f"Sustained ({settings['sustained_s']} s of back-to-back calls per "
                          "implementation, mean SM clock after the first second):", ""]
                lines += sustained_table(rows, peer)
                mean, _ = geomean_line(rows, peer, "sustained")
                lines += ["", f"Geometric mean sustained fp8mlir / {peer}: {times(mean)}.", ""]
    kernels = sorted({e["kernel"] for r in report["rows"] for e in r["impls"].values()
                      if e.get("kernel")})
    lines += ["Kernels and functions: " + ", ".join(f"`{k}`" for k in kernels), ""]
    return "\n".join(lines)


def console_line(row):
    parts = [f"{row['layout']:>12} {row['recipe']:>14} G={row['groups']:<2} "
             f"{shape_label(row):>12}"]
    for name, entry in row["impls"].items():
        if entry["status"] == "ok":
            parts.append(f"{name} {fmt(entry.get('us'), '.1f')} us "
                         f"err {fmt(entry.get('rel_error'), '.1e')}")
            if "max_rel_diff_vs_fp8mlir" in entry:
                parts[-1] += f" diff {entry['max_rel_diff_vs_fp8mlir']:.1e}"
        else:
            parts.append(f"{name} {entry['status']}")
    return " | ".join(parts)


def all_correct(rows):
    """No implementation that ran gave a wrong result or differed from
    fp8mlir, and fp8mlir ran wherever it is available."""
    for row in rows:
        for name, entry in row["impls"].items():
            if entry["status"] == "error" and name == FP8MLIR:
                return False
            if status(entry) and entry["status"] == "ok":
                return False
    return True


def main(argv):
    if len(argv) != 1:
        print("usage: bench/grouped_report.py REPORT.json", file=sys.stderr)
        return 2
    path = Path(argv[0])
    path.with_suffix(".md").write_text(markdown(json.loads(path.read_text())))
    print(f"wrote {path.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
