#!/usr/bin/env python3
"""Prints the host program of an fp8-compile output directory (DIR/module.json)
one line per item, for FileCheck:

    module CHIP: K kernels, every NAME.json of DIR listed, every listed one written
    function NAME: S symbols, A arguments, R results, B buffers, workspace W
      symbol NAME = ARGUMENT dim D
      argument NAME DTYPE [SHAPE] align N [written]
      result NAME DTYPE [SHAPE] align N [alias of ARGUMENT]
      buffer NAME DTYPE [SHAPE] bytes B at OFFSET
      fill TARGET with BYTE
      copy SOURCE to TARGET
      copy2d SOURCE to TARGET: ROWS x ROW_BYTES, source OFFSET/PITCH, target OFFSET/PITCH [slice over GRID]
      KIND [REDUCTION] SOURCE to TARGET: COUNT DTYPE over GRID[AXES] (SIZE)
      launch KERNEL (OPERAND=TENSOR ...) {SYMBOL=VALUE ...}

An output the kernel's metadata (DIR/KERNEL.json) lets update an input in
place reads `OPERAND=TENSOR(in_place_of INPUT)`.

Kernel names are shortened to their kind and the part that tells them apart
(`fp8_gemm_...` stays whole); the first line checks the kernel list against
the directory, so a lit test of it fails when a kernel written is not named
or a named one is missing.

    module_program.py DIR
"""
import json
import os
import sys


def shape(dims):
    return "[" + ", ".join(str(d) for d in dims) + "]"


def in_place_outputs(directory, kernel):
    """{output: input} of the kernel's operands that have `in_place_of`."""
    with open(os.path.join(directory, kernel + ".json")) as f:
        metadata = json.load(f)
    return {o["name"]: o["in_place_of"] for o in metadata["operands"]
            if "in_place_of" in o}


def main(directory):
    with open(os.path.join(directory, "module.json")) as f:
        program = json.load(f)
    assert program["format"] == "fp8-mlir-module", program["format"]
    assert program["version"] == 1, program["version"]
    written = sorted(n[:-5] for n in os.listdir(directory)
                     if n.endswith(".json") and n != "module.json")
    listed = sorted(program["kernels"])
    missing = sorted(set(written) - set(listed))
    absent = sorted(set(listed) - set(written))
    status = "every NAME.json of DIR listed, every listed one written"
    if missing or absent:
        status = "not listed: %s; not written: %s" % (missing, absent)
    print("module %s: %d kernels, %s" % (program["chip"], len(listed), status))
    for fn in program["functions"]:
        print("function %s: %d symbols, %d arguments, %d results, %d buffers, "
              "workspace %s" % (fn["name"], len(fn["symbols"]),
                                len(fn["arguments"]), len(fn["results"]),
                                len(fn["buffers"]), fn["workspace_bytes"]))
        for s in fn["symbols"]:
            print("  symbol %s = %s dim %d" % (s["name"], s["argument"], s["dim"]))
        for a in fn["arguments"]:
            print("  argument %s %s %s align %d%s" % (
                a["name"], a["dtype"], shape(a["shape"]), a["alignment"],
                " written" if a.get("written") else ""))
        for r in fn["results"]:
            alias = " alias of %s" % r["alias_of"] if "alias_of" in r else ""
            print("  result %s %s %s align %d%s" % (
                r["name"], r["dtype"], shape(r["shape"]), r["alignment"], alias))
        for b in fn["buffers"]:
            print("  buffer %s %s %s bytes %s at %s" % (
                b["name"], b["dtype"], shape(b["shape"]), b["bytes"], b["offset"]))
        for step in fn["steps"]:
            kind = step["kind"]
            if kind == "fill":
                print("  fill %s with %d" % (step["target"], step["byte"]))
            elif kind == "copy":
                print("  copy %s to %s" % (step["source"], step["target"]))
            elif kind == "copy2d":
                group = step.get("slice_group")
                print("  copy2d %s to %s: %s x %s, source %s/%s, target %s/%s%s" % (
                    step["source"], step["target"], step["rows"],
                    step["row_bytes"], step["source_offset"],
                    step["source_pitch"], step["target_offset"],
                    step["target_pitch"],
                    " slice over %s" % group["grid"] if group else ""))
            elif "group" in step:
                group = step["group"]
                reduction = " " + step["reduction"] if "reduction" in step else ""
                print("  %s%s %s to %s: %s %s over %s%s (%d)" % (
                    kind, reduction, step["source"], step["target"],
                    step["count"], step["dtype"], group["grid"],
                    group["axes"], group["size"]))
            else:
                in_place = in_place_outputs(directory, step["kernel"])
                operands = " ".join(
                    "%s=%s%s" % (name, tensor, "(in_place_of %s)" % in_place[name]
                                 if name in in_place else "")
                    for name, tensor in step["operands"].items())
                symbols = " ".join("%s=%s" % kv for kv in step["symbols"].items())
                print("  launch %s (%s) {%s}" % (step["kernel"], operands, symbols))
    return 0 if not (missing or absent) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
