#!/usr/bin/env python3
"""The runtime's launch-variant choice against the fastest variant, from a
`decode_ab.py` run that timed every variant.

Reads decode-ab.json (`decode_ab.py --kernels LABEL=DIR --filter _t`: each
launch variant of DIR's kernels timed on its own, and `LABEL:auto`, what the
runtime launched) and the kernels' metadata in DIR, and replays the
runtime's rule (`selectLaunchVariant`, runtime/lib/LaunchArguments.cpp, and
fp8schema/LaunchVariantModel.h) for each shape: waves of tiles over the
CTAs, stream-K and K-split waves, times tile area over throughput, ties to
the earlier candidate. Prints per shape the pick, its time, the fastest
variant's and their ratio, then the geometric mean and the shapes above
--slack. Candidate rules can be tried on measured times before a GPU run:
--throughput TILE=VALUE overrides a tile's throughput, --clusters S=COUNT
the resident clusters of S CTAs (the driver's count; default the GPC
model). A swap-AB kernel is a candidate for one row of its tiles, or,
split along K, several where its CTAs fill at most 0.6 of the SMs.

The replay is checked against the measured `LABEL:auto`: a pick whose time
differs from it by more than --slack is flagged `replay != runtime` (the
rule here and the runtime's have drifted apart, or the run was noisy).

    python3 bench/variant_picks.py --ab OUT/decode-ab.json --kernels DIR \\
        [--label p] [--fast] [--clusters 2=66,4=30] [--throughput 64x64=57]
"""

import argparse
import json
import math
import re
import sys
from pathlib import Path

# fp8schema/LaunchVariantModel.h
STREAM_K_FIXUP_WAVES = 0.05
STREAM_K_ONE_ROW_SHARE = 0.4
STREAM_K_ROWS_SHARE = 0.5
SWAP_AB_ROWS_SHARE = 0.6
GPCS = 8


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ab", type=Path, required=True, help="decode-ab.json")
    p.add_argument("--kernels", type=Path, required=True, help="the folder timed")
    p.add_argument("--label", default=None,
                   help="the folder's label in the run (default: the only one)")
    p.add_argument("--fast", action="store_true",
                   help="the fast-accumulation kernels (LABEL:auto fast)")
    p.add_argument("--sms", type=int, default=132)
    p.add_argument("--clusters", default="", metavar="S=COUNT,...",
                   help="resident clusters of S CTAs (default: the GPC model)")
    p.add_argument("--throughput", action="append", default=[], metavar="TMxTN=VALUE",
                   help="a tile's throughput instead of its metadata's")
    p.add_argument("--slack", type=float, default=0.03)
    return p.parse_args(argv)


def parse_pairs(text, key=int, value=int):
    pairs = {}
    for item in filter(None, text.split(",")):
        k, _, v = item.partition("=")
        pairs[key(k)] = value(v)
    return pairs


class Candidate:
    """One kernel's launch-variant metadata (the fields the choice reads)."""

    def __init__(self, meta):
        grid = meta["grid"]
        self.name = meta["name"]
        self.tag = re.search(r"_t(\d+x\d+x\d+.*)$", self.name).group(1)
        self.tile_m, self.tile_n = grid["tile_m"], grid["tile_n"]
        self.throughput = grid["throughput"]
        self.k_split = grid.get("k_split", 1)
        self.cluster = meta["cluster"][0]
        self.stream_k = any(p.get("kind") == "workspace" for p in meta.get("params", []))
        self.swap_ab = bool(meta.get("gemm", {}).get("swap_ab"))


def resident_clusters(size, sms, counts):
    return counts.get(size) or max(sms // GPCS // size, 1) * GPCS


def cost(c, m, n, sms, counts, throughput):
    rows = math.ceil(m / c.tile_m)
    tiles = rows * math.ceil(n / c.tile_n)
    if c.swap_ab and rows > 1 and not (c.k_split > 1 and
                                       tiles * c.k_split <= SWAP_AB_ROWS_SHARE * sms):
        return math.inf
    ctas = max(sms // c.cluster * c.cluster, c.cluster)
    waves = math.ceil(tiles / ctas)
    share = STREAM_K_ONE_ROW_SHARE if rows == 1 else STREAM_K_ROWS_SHARE
    if c.stream_k and (tiles <= share * ctas or (c.swap_ab and rows == 1)):
        waves = tiles / ctas + STREAM_K_FIXUP_WAVES * max(1.0, ctas / tiles)
    if c.k_split > 1:
        waves = math.ceil(tiles / resident_clusters(c.k_split, sms, counts)) / c.k_split
    return waves * c.tile_m * c.tile_n / throughput.get((c.tile_m, c.tile_n), c.throughput)


def candidates(folder, recipe, n, k, fast):
    """The dispatching kernel of (recipe, N, K) and its variants, in order."""
    for path in sorted(folder.glob(f"fp8_gemm_{recipe}_*_n{n}_k{k}_t*.json")):
        if path.stem.endswith("_fast") != fast:
            continue
        meta = json.loads(path.read_text())
        if meta.get("variants"):
            return [Candidate(meta)] + [
                Candidate(json.loads((folder / v).read_text())) for v in meta["variants"]]
    return []


def main(argv=None):
    args = parse_args(argv)
    run = json.loads(args.ab.read_text())
    counts = parse_pairs(args.clusters)
    throughput = parse_pairs(",".join(args.throughput),
                             key=lambda t: tuple(int(x) for x in t.split("x")))
    ratios, above, drift = [], 0, 0
    for r in run["results"]:
        impls = r["impls"]
        labels = {name.split(":", 1)[0] for name in impls if ":" in name}
        label = args.label or (labels.pop() if len(labels) == 1 else None)
        if label is None:
            sys.exit(f"error: several folders in {args.ab} ({sorted(labels)}): pass --label")
        cands = candidates(args.kernels, r["recipe"], r["n"], r["k"], args.fast)
        timed = {c.tag: impls.get(f"{label}:t{c.tag}", {}) for c in cands}
        if not cands or any(t.get("status") != "ok" for t in timed.values()):
            continue
        us = {tag: t["us"] for tag, t in timed.items()}
        pick = min(cands, key=lambda c: (cost(c, r["m"], r["n"], args.sms, counts,
                                              throughput), cands.index(c)))
        best = min(us, key=us.get)
        ratio = us[pick.tag] / us[best]
        ratios.append(math.log(ratio))
        above += ratio > 1 + args.slack
        note = ""
        auto = impls.get(f"{label}:auto" + (" fast" if args.fast else ""), {})
        if auto.get("status") == "ok" and abs(us[pick.tag] / auto["us"] - 1) > args.slack:
            note = f"  replay != runtime ({auto['us']:.2f} us)"
            drift += 1
        print(f"{r['m']}x{r['n']}x{r['k']} {r['recipe']}: pick {pick.tag} {us[pick.tag]:.2f} us, "
              f"best {best} {us[best]:.2f} us, {ratio:.3f}x{note}")
    if not ratios:
        sys.exit("error: no shape with every variant of its kernel timed")
    print(f"\n{len(ratios)} shapes: the pick at {math.exp(sum(ratios) / len(ratios)):.4f}x "
          f"the fastest variant (geomean), {above} above {1 + args.slack:.2f}x; "
          f"{drift} replays differ from the runtime's launch")


if __name__ == "__main__":
    main()
