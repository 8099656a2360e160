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

--save FILE writes the shapes read, each candidate's metadata fields and
time in the runtime's order, as a sweep that --sweep FILE replays without
the kernels (bench/results keeps one per GPU model); --accumulation both
reads the promoted and the fast kernels.

    python3 bench/variant_picks.py --ab OUT/decode-ab.json --kernels DIR \\
        [--label p] [--fast] [--clusters 2=66,4=30] [--throughput 64x64=57]
    python3 bench/variant_picks.py --sweep bench/results/launch-variants-GPU.json \\
        --accumulation both [--throughput 128x64=66]
"""

import argparse
import json
import math
import re
import sys
from pathlib import Path

# decode_ab.py's timing, recorded in a saved sweep.
METHOD = ("kernel-only: calls queued behind a GPU spin on rotating input copies larger "
          "than the L2, rounds in rotated order, one process (bench/decode_ab.py)")

# fp8schema/LaunchVariantModel.h
STREAM_K_FIXUP_WAVES = 0.05
STREAM_K_ONE_ROW_SHARE = 0.4
STREAM_K_ROWS_SHARE = 0.5
SWAP_AB_ROWS_SHARE = 0.6
GPCS = 8


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ab", type=Path, action="append", default=[],
                   help="decode-ab.json (repeatable; with --kernels)")
    p.add_argument("--kernels", type=Path, help="the folder timed")
    p.add_argument("--sweep", type=Path, action="append", default=[],
                   help="a sweep saved with --save (repeatable; instead of --ab)")
    p.add_argument("--label", default=None,
                   help="the folder's label in the run (default: the only one)")
    p.add_argument("--accumulation", choices=["promoted", "fast", "both"],
                   default="promoted",
                   help="promoted (blockwise, rowwise, tensorwise default), fast, or both")
    p.add_argument("--fast", action="store_const", const="fast", dest="accumulation",
                   help="same as --accumulation fast")
    p.add_argument("--sms", type=int, default=132)
    p.add_argument("--clusters", default="", metavar="S=COUNT,...",
                   help="resident clusters of S CTAs (default: the GPC model)")
    p.add_argument("--throughput", action="append", default=[], metavar="TMxTN=VALUE",
                   help="a tile's throughput instead of its metadata's")
    p.add_argument("--slack", type=float, default=0.03)
    p.add_argument("--save", type=Path,
                   help="write the shapes read (each variant's metadata and time) as a "
                        "sweep that --sweep replays without the kernels")
    p.add_argument("--report", type=Path,
                   help="write the replay as markdown (geomeans, the picks above --slack)")
    p.add_argument("--method", default=METHOD,
                   help="the timing method recorded in --save's file")
    args = p.parse_args(argv)
    if bool(args.ab) == bool(args.sweep) or (args.ab and not args.kernels):
        p.error("pass --ab with --kernels, or --sweep")
    return args


def parse_pairs(text, key=int, value=int):
    pairs = {}
    for item in filter(None, text.split(",")):
        k, _, v = item.partition("=")
        pairs[key(k)] = value(v)
    return pairs


class Candidate:
    """One kernel's launch-variant metadata (the fields the choice reads)."""

    FIELDS = ("tag", "tile_m", "tile_n", "throughput", "k_split", "cluster",
              "stream_k", "swap_ab")

    def __init__(self, fields):
        for name in self.FIELDS:
            setattr(self, name, fields[name])

    @classmethod
    def from_metadata(cls, meta):
        grid = meta["grid"]
        return cls({
            "tag": re.search(r"_t(\d+x\d+x\d+.*)$", meta["name"]).group(1),
            "tile_m": grid["tile_m"], "tile_n": grid["tile_n"],
            "throughput": grid["throughput"], "k_split": grid.get("k_split", 1),
            "cluster": meta["cluster"][0],
            "stream_k": any(p.get("kind") == "workspace" for p in meta.get("params", [])),
            "swap_ab": bool(meta.get("gemm", {}).get("swap_ab"))})

    def as_dict(self):
        return {name: getattr(self, name) for name in self.FIELDS}


class Shape:
    """One timed shape and accumulation: its candidates in the runtime's
    order, each one's time, and what the runtime launched (None: not timed)."""

    def __init__(self, m, n, k, recipe, accumulation, cands, us, auto_us):
        self.m, self.n, self.k, self.recipe = m, n, k, recipe
        self.accumulation, self.cands, self.us, self.auto_us = accumulation, cands, us, auto_us

    def as_dict(self):
        return {"m": self.m, "n": self.n, "k": self.k, "recipe": self.recipe,
                "accumulation": self.accumulation,
                "auto_us": None if self.auto_us is None else round(self.auto_us, 3),
                "variants": [dict(c.as_dict(), us=round(self.us[c.tag], 3))
                             for c in self.cands]}

    @classmethod
    def from_dict(cls, d):
        cands = [Candidate(v) for v in d["variants"]]
        return cls(d["m"], d["n"], d["k"], d["recipe"], d["accumulation"], cands,
                   {v["tag"]: v["us"] for v in d["variants"]}, d["auto_us"])


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
            return [Candidate.from_metadata(meta)] + [
                Candidate.from_metadata(json.loads((folder / v).read_text()))
                for v in meta["variants"]]
    return []


def accumulations(choice):
    return ("promoted", "fast") if choice == "both" else (choice,)


def shapes_from_ab(run, source, folder, label, wanted):
    """The shapes of a decode_ab.py run whose candidates were all timed."""
    shapes = []
    for r in run["results"]:
        impls = r["impls"]
        labels = {name.split(":", 1)[0] for name in impls if ":" in name}
        folder_label = label or (labels.pop() if len(labels) == 1 else None)
        if folder_label is None:
            sys.exit(f"error: several folders in {source} ({sorted(labels)}): pass --label")
        for accumulation in wanted:
            fast = accumulation == "fast"
            cands = candidates(folder, r["recipe"], r["n"], r["k"], fast)
            timed = {c.tag: impls.get(f"{folder_label}:t{c.tag}", {}) for c in cands}
            if not cands or any(t.get("status") != "ok" for t in timed.values()):
                continue
            auto = impls.get(f"{folder_label}:auto" + (" fast" if fast else ""), {})
            shapes.append(Shape(r["m"], r["n"], r["k"], r["recipe"], accumulation, cands,
                                {tag: t["us"] for tag, t in timed.items()},
                                auto["us"] if auto.get("status") == "ok" else None))
    return shapes


def replay(shapes, args, counts, throughput):
    """Prints each shape's pick against the fastest variant, then the
    geometric mean per accumulation; returns the summary lines and the
    shapes above --slack."""
    summary, misses = {}, []
    for s in shapes:
        pick = min(s.cands, key=lambda c: (cost(c, s.m, s.n, args.sms, counts, throughput),
                                           s.cands.index(c)))
        best = min(s.us, key=s.us.get)
        ratio = s.us[pick.tag] / s.us[best]
        group = summary.setdefault(f"{s.recipe} {s.accumulation}", [[], 0, 0])
        group[0].append(math.log(ratio))
        group[1] += ratio > 1 + args.slack
        note = ""
        if s.auto_us and abs(s.us[pick.tag] / s.auto_us - 1) > args.slack:
            note = f"  replay != runtime ({s.auto_us:.2f} us)"
            group[2] += 1
        line = (f"{s.m}x{s.n}x{s.k} {s.recipe} {s.accumulation}: pick {pick.tag} "
                f"{s.us[pick.tag]:.2f} us, best {best} {s.us[best]:.2f} us, {ratio:.3f}x")
        print(line + note)
        if ratio > 1 + args.slack:
            misses.append(line)
    print()
    lines = [f"{name}: {len(logs)} shapes, the pick at "
             f"{math.exp(sum(logs) / len(logs)):.4f}x the fastest variant (geomean), "
             f"{above} above {1 + args.slack:.2f}x; {drift} replays differ from the "
             f"runtime's launch" for name, (logs, above, drift) in summary.items()]
    print("\n".join(lines))
    return lines, misses


def write_report(path, argv, gpu, method, lines, misses):
    """The replay as markdown: the command, the method, the geomeans and
    the shapes whose pick is above --slack."""
    command = " ".join(["python3", "bench/variant_picks.py", *argv])
    text = [f"# Launch-variant replay: {gpu}", "",
            f"- command: `{command}`", f"- timing: {method}",
            "- ratio: the time of the variant the runtime's rule picks over the "
            "fastest variant's, every variant timed on its own", ""]
    text += [f"- {line}" for line in lines] + ["", "## Picks above the slack", ""]
    text += [f"- {line}" for line in misses] or ["none"]
    path.write_text("\n".join(text) + "\n")


def main(argv=None):
    args = parse_args(argv)
    counts = parse_pairs(args.clusters)
    throughput = parse_pairs(",".join(args.throughput),
                             key=lambda t: tuple(int(x) for x in t.split("x")))
    wanted = accumulations(args.accumulation)
    shapes, gpus, methods = [], set(), set()
    for path in args.ab:
        run = json.loads(path.read_text())
        gpus.add(run.get("gpu"))
        shapes += shapes_from_ab(run, path, args.kernels, args.label, wanted)
    for path in args.sweep:
        data = json.loads(path.read_text())
        gpus.add(data["gpu"])
        methods.add(data["method"])
        shapes += [Shape.from_dict(d) for d in data["results"] if d["accumulation"] in wanted]
    # A shape timed in several runs counts once: the first run's.
    unique = {}
    for s in shapes:
        unique.setdefault((s.m, s.n, s.k, s.recipe, s.accumulation), s)
    shapes = list(unique.values())
    if not shapes:
        sys.exit("error: no shape with every variant of its kernel timed")
    shapes_gpu = " / ".join(sorted(map(str, gpus)))
    shapes_method = " / ".join(sorted(methods)) or args.method
    if args.save:
        if len(gpus) != 1:
            sys.exit(f"error: --save takes the runs of one GPU, not {shapes_gpu}")
        head = json.dumps({"gpu": shapes_gpu, "method": shapes_method, "sms": args.sms})
        rows = ",\n".join(json.dumps(s.as_dict(), separators=(",", ":")) for s in shapes)
        # One shape a line.
        args.save.write_text(f'{head[:-1]}, "results": [\n{rows}\n]}}\n')
        print(f"wrote {args.save} ({len(shapes)} shapes)")
    lines, misses = replay(shapes, args, counts, throughput)
    if args.report:
        write_report(args.report, sys.argv[1:] if argv is None else argv,
                     shapes_gpu, shapes_method, lines, misses)


if __name__ == "__main__":
    main()
