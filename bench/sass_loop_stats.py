#!/usr/bin/env python3
"""Instruction counts of a GEMM kernel's wgmma K loop, from `cuobjdump -sass`
output: the innermost loops (backward branches) that hold wgmma (QGMMA for FP8, HGMMA), per loop
the instructions by class and the issue order with runs collapsed.

    bench/sass_loop_stats.py KERNEL.sass [--kernel SUBSTRING] [--order]

Counts are per loop body as compiled (an unrolled loop holds several K
blocks: compare per HGMMA or divide by the K blocks it holds).
"""
import argparse
import re
import sys
from collections import Counter

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNC = re.compile(r"Function : (\S+)")
BRA = re.compile(r"\bBRA(?:\.\S+)?\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))")
LABEL = re.compile(r"^\.L_x_(\d+):")
LABEL_REF = re.compile(r"`\(\.L_x_(\d+)\)")


def parse(path):
    """{function: [(address, instruction text)]}, labels resolved."""
    funcs, name, labels = {}, None, {}
    pending = []
    for raw in open(path, errors="replace"):
        m = FUNC.search(raw)
        if m:
            name = m.group(1)
            funcs[name] = []
            labels[name] = {}
            continue
        if name is None:
            continue
        lm = LABEL.match(raw.strip())
        if lm:
            pending.append(lm.group(1))
            continue
        m = LINE.search(raw)
        if m:
            addr = int(m.group(1), 16)
            for label in pending:
                labels[name][label] = addr
            pending = []
            funcs[name].append((addr, m.group(2)))
    return funcs, labels


def opcode(text):
    text = re.sub(r"^@!?U?P\w+\s+", "", text)
    return text.split()[0] if text else ""


def klass(op):
    base = op.split(".")[0]
    if op.startswith("WARPGROUP."):
        return ".".join(op.split(".")[:2])
    if base == "SYNCS":
        return ".".join(op.split(".")[:2])
    if base in ("HGMMA", "QGMMA", "FFMA", "FMUL", "FADD", "LDS", "LDSM", "STS", "STSM", "R2UR",
                "BAR", "MOV", "BRA", "NOP", "WARPSYNC", "ELECT", "SHFL", "F2FP", "LDG",
                "UTMALDG", "UBLKCP", "ISETP", "UISETP", "SEL", "VOTEU", "DEPBAR"):
        return base
    if base.startswith("U"):
        return "uniform (U*)"
    if base in ("IMAD", "IADD3", "LOP3", "SHF", "LEA", "IABS", "PRMT", "ISCADD", "IMNMX",
                "SGXT", "BMSK", "LOP", "FLO", "POPC"):
        return "integer"
    return base


def loops(insts, labels):
    """(start, end) index ranges of backward branches, innermost first."""
    index = {a: i for i, (a, _) in enumerate(insts)}
    out = []
    for i, (addr, text) in enumerate(insts):
        if "BRA" not in text:
            continue
        m = LABEL_REF.search(text)
        target = labels.get(m.group(1)) if m else None
        if target is None:
            h = re.search(r"BRA\S*\s+0x([0-9a-f]+)", text)
            target = int(h.group(1), 16) if h else None
        if target is not None and target <= addr and target in index:
            out.append((index[target], i))
    return sorted(out, key=lambda r: r[1] - r[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sass")
    ap.add_argument("--kernel", default="", help="only functions whose name contains this")
    ap.add_argument("--order", action="store_true", help="print the loop's issue order")
    args = ap.parse_args(argv)
    funcs, labels = parse(args.sass)
    for name, insts in funcs.items():
        if args.kernel not in name or not insts:
            continue
        total = Counter(klass(opcode(t)) for _, t in insts)
        print(f"== {name}: {len(insts)} instructions, {total['QGMMA'] + total['HGMMA']} wgmma (QGMMA/HGMMA)")
        regs = [t for _, t in insts if "USETMAXREG" in t or "SETMAXREG" in t]
        for t in regs:
            print("   ", t)
        seen = []
        for lo, hi in loops(insts, labels[name]):
            body = insts[lo:hi + 1]
            if not any(opcode(t)[1:].startswith("GMMA") for _, t in body):
                continue
            if any(lo <= s and e <= hi for s, e in seen):
                continue  # an outer loop of one already shown
            seen.append((lo, hi))
            c = Counter(klass(opcode(t)) for _, t in body)
            print(f"  loop {insts[lo][0]:#06x}-{insts[hi][0]:#06x}: {len(body)} instructions, "
                  f"{c['QGMMA'] + c['HGMMA']} wgmma")
            print("   ", ", ".join(f"{k} {v}" for k, v in c.most_common()))
            if args.order:
                runs = []
                for _, t in body:
                    k = klass(opcode(t))
                    if k in ("HGMMA", "QGMMA", "WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR", "SYNCS.ARRIVE",
                             "SYNCS.PHASECHK", "BAR", "BRA", "LDS", "R2UR"):
                        k = opcode(t)
                    if runs and runs[-1][0] == k:
                        runs[-1][1] += 1
                    else:
                        runs.append([k, 1])
                print("    order:", " | ".join(f"{k}" + (f" x{n}" if n > 1 else "")
                                             for k, n in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
