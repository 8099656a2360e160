#!/usr/bin/env python3
"""The wgmma K loop of an sm_90a kernel in SASS.

    scripts/sass-loop.py KERNEL.ptx [FUNCTION] [--list] [--function-counts]
    scripts/sass-loop.py KERNEL.sass [SUBSTRING] [--list]

A `cuobjdump -sass` dump (any file not ending in .ptx; the GPU machine has
cuobjdump) is read as text: for every function whose name holds SUBSTRING
(default: all), its instruction classes and each innermost loop holding
wgmma (QGMMA for FP8, HGMMA), counted by class (an unrolled loop holds
several K blocks: compare per wgmma); --list adds the loop's issue order.

A .ptx file is assembled here instead, without a disassembler:

it assembles one entry function of KERNEL.ptx (default: the first) with ptxas
-arch=sm_90a, finds the innermost loop holding wgmma instructions (a
backward branch over them) and prints ptxas's register and spill line, the
loop's instruction count and a count per opcode; --list also prints the
loop's opcodes in order (runs collapsed as NAMExN).

There is no disassembler on the build machine, so the opcodes are read
from the cubin: an sm_90 instruction is 16 bytes, its opcode the low 12
bits. Only the opcodes below were identified, by assembling small PTX
kernels whose instructions are known (a wgmma with a per-thread descriptor
gives R2UR before the HGMMA, and so on) and by counting (96 FFMA per K
block for the 128x192 tile's 96 accumulator elements per thread); any other
opcode is printed in hex. Good enough to count R2UR, wgmmas, shared loads
and promotion FMAs per K block and to see their order; for anything finer,
use cuobjdump -sass on the GPU machine.
"""
import argparse
import collections
import os
import re
import struct
import subprocess
import sys
import tempfile
from collections import Counter

OPCODES = {
    0x2ca: "R2UR", 0x9f3: "HGMMA", 0x9c5: "WARPGROUP", 0x223: "FFMA",
    0x423: "FFMA", 0x220: "FMUL", 0x984: "LDS", 0x388: "STS", 0x986: "STG",
    0x947: "BRA", 0x94d: "EXIT", 0x5a7: "SYNCS.TRYWAIT", 0x9a7: "SYNCS.ARRIVE",
    0x918: "NOP",
    # Matched against a GPU's `cuobjdump -sass` of the same cubin.
    0x82f: "ELECT", 0x5b4: "UTMALDG", 0x3ba: "UBLKCP", 0x81c: "PLOP3",
    0x5b2: "SYNCS.EXCH", 0x9b0: "ARRIVES", 0x882: "UMOV", 0x890: "UIADD3",
    0x805: "CS2R", 0x23e: "F2FP",
}
WGMMA, BRANCH = 0x9f3, 0x947


def elf_sections(data):
    if data[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
               for i in range(shnum)]
    names = headers[shstrndx][4]
    sections = {}
    for name, _, _, _, offset, size in headers:
        end = data.index(b"\0", names + name)
        sections[data[names + name:end].decode()] = data[offset:offset + size]
    return sections


def branch_target(index, lo, hi):
    """BRA's target index: a signed offset in 4-byte units after the next
    instruction, its low 8 bits at bits 16-23 and the rest from bit 34."""
    value = ((((hi & ((1 << 18) - 1)) << 30) | (lo >> 34)) << 8) | ((lo >> 16) & 0xFF)
    if value >= 1 << 55:
        value -= 1 << 56
    return index + 1 + value // 4


def entry_functions(ptx):
    names = []
    for line in ptx.splitlines():
        if line.startswith(".visible .entry "):
            names.append(line.split()[2].split("(")[0])
    return names


def assemble(ptx_path, function):
    """(ptxas -v lines of `function`, its instructions as (lo, hi) pairs)."""
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "k.cubin")
        ptxas = os.environ.get("PTXAS", "ptxas")
        proc = subprocess.run([ptxas, "-arch=sm_90a", "-v", ptx_path, "-o", cubin],
                              capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(proc.stderr)
        text = elf_sections(open(cubin, "rb").read())[".text." + function]
    lines = proc.stderr.splitlines()
    start = next(i for i, l in enumerate(lines)
                 if l.rstrip().endswith(f"Function properties for {function}"))
    info = "; ".join(l.replace("ptxas info    :", "").strip()
                     for l in lines[start + 1:start + 3])
    return info, [struct.unpack_from("<QQ", text, i) for i in range(0, len(text), 16)]


def innermost_wgmma_loop(instructions):
    wgmmas = [i for i, (lo, _) in enumerate(instructions) if lo & 0xFFF == WGMMA]
    loops = []
    for i, (lo, hi) in enumerate(instructions):
        if lo & 0xFFF == BRANCH:
            target = branch_target(i, lo, hi)
            if target <= i and any(target <= w <= i for w in wgmmas):
                loops.append((target, i))
    return min(loops, key=lambda loop: loop[1] - loop[0]) if loops else None


def name(opcode):
    return OPCODES.get(opcode, f"{opcode:03x}")


LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
FUNC = re.compile(r"Function : (\S+)")
BRA = re.compile(r"\bBRA(?:\.\S+)?\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))")
LABEL = re.compile(r"^\.L_x_(\d+):")
LABEL_REF = re.compile(r"`\(\.L_x_(\d+)\)")


def parse_dump(path):
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


def dump_loops(insts, labels):
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


def dump_report(path, kernel, order):
    """Report of a `cuobjdump -sass` dump: every function whose name holds
    `kernel`, its instruction classes and the innermost loops holding wgmma
    (QGMMA for FP8, HGMMA), each by class and, with `order`, in issue order."""
    funcs, labels = parse_dump(path)
    for name, insts in funcs.items():
        if kernel not in name or not insts:
            continue
        total = Counter(klass(opcode(t)) for _, t in insts)
        print(f"== {name}: {len(insts)} instructions, {total['QGMMA'] + total['HGMMA']} wgmma (QGMMA/HGMMA)")
        for t in (t for _, t in insts if "SETMAXREG" in t):
            print("   ", t)
        seen = []
        for lo, hi in dump_loops(insts, labels[name]):
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
            if order:
                kept = ("HGMMA", "QGMMA", "WARPGROUP.ARRIVE", "WARPGROUP.DEPBAR", "SYNCS.ARRIVE",
                        "SYNCS.PHASECHK", "BAR", "BRA", "LDS", "R2UR")
                print("    order:", collapsed(opcode(t) if klass(opcode(t)) in kept
                                              else klass(opcode(t)) for _, t in body))
    return 0


def collapsed(names):
    """The names in order, runs written NAMExN."""
    runs = []
    for op in names:
        if runs and runs[-1][0] == op:
            runs[-1][1] += 1
        else:
            runs.append([op, 1])
    return " ".join(op if n == 1 else f"{op}x{n}" for op, n in runs)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ptx", help="a .ptx file, or a cuobjdump -sass dump")
    parser.add_argument("function", nargs="?",
                        help="entry function (.ptx), or a substring of the functions' names")
    parser.add_argument("--list", action="store_true", help="print the loop's opcodes in order")
    parser.add_argument("--function-counts", action="store_true",
                        help="(.ptx) also count the whole function's opcodes, e.g. the "
                             "producer's ELECT / R2UR lane loops around its TMA copies")
    args = parser.parse_args(argv)
    if not args.ptx.endswith(".ptx"):
        return dump_report(args.ptx, args.function or "", args.list)
    functions = entry_functions(open(args.ptx).read())
    function = args.function or (functions[0] if functions else None)
    if function not in functions:
        print(f"error: no entry function {function!r} in {args.ptx}", file=sys.stderr)
        return 2
    info, instructions = assemble(args.ptx, function)
    print(f"{function}: {info}")
    if args.function_counts:
        whole = collections.Counter(name(lo & 0xFFF) for lo, _ in instructions)
        print(f"function: {len(instructions)} instructions: "
              + ", ".join(f"{op} {n}" for op, n in whole.most_common()))
    loop = innermost_wgmma_loop(instructions)
    if loop is None:
        print("no loop with wgmma instructions")
        return 1
    first, last = loop
    ops = [name(instructions[i][0] & 0xFFF) for i in range(first, last + 1)]
    counts = collections.Counter(ops)
    print(f"K loop: instructions {first}-{last} ({len(ops)}): "
          + ", ".join(f"{op} {n}" for op, n in counts.most_common()))
    if args.list:
        print(collapsed(ops))
    return 0


if __name__ == "__main__":
    sys.exit(main())
