#!/usr/bin/env python3
"""Checks the host side of `fp8-to-ptx` against the host-program contract
(docs/training.md, "The lowered host program"): every public function holds
only

    memref.alloc        intermediates and results
    func.call           of a kernel launcher: a bodiless function named
                        NAME_launch_into that carries `fp8.kernel`, or of
                        a collective or strided copy (a bodiless function
                        that carries `fp8.collective`)
    linalg.fill         of an arith.constant, into an allocation (zeroing)
    memref.dim          of a function argument, arith.constant of an index,
    arith.ceildivui     the run-time extents of the allocations
    memref.copy         state a kernel updates in place that is still read
    func.return

and nothing stays on tensors. For each example (or each file given) and each
chip in its `// Chips:` header, it runs `fp8-opt --fp8-to-ptx=chip=CHIP
-mlir-print-op-generic`, prints one line per public function

    EXAMPLE CHIP @FUNCTION: N launches, host program ops only
    EXAMPLE CHIP @FUNCTION: N launches, C collectives and copies, host program ops only
    EXAMPLE CHIP @FUNCTION: not a host program: OP (why), ...

and a summary the lit test checks:

    F functions in E compilations, B not host programs, X failed to compile

    host_program_ops.py FP8_OPT EXAMPLE.mlir...
"""
import re
import subprocess
import sys

FUNC = re.compile(r'^(\s*)"func\.func"\(\)')
OP = re.compile(r'^\s*(?:%[^=]+=\s*)?"([\w.]+)"')
NAME = re.compile(r'sym_name = "([^"]+)"')
CALLEE = re.compile(r'callee = @([\w$.]+)')
ALLOWED = {"memref.alloc", "func.call", "linalg.fill", "memref.dim",
           "arith.constant", "arith.ceildivui", "memref.copy", "func.return"}


def functions(text):
    """(name, header, top-level op lines) of every func.func, in order; the
    header includes the closing line, which holds the discardable
    attributes (fp8.kernel)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FUNC.match(lines[i])
        if not m:
            i += 1
            continue
        header, indent, body = lines[i], m.group(1), []
        i += 1
        if header.rstrip().endswith("({"):
            # The body ends at the `})` of the same indentation.
            while i < len(lines) and not lines[i].startswith(indent + "})"):
                body.append(lines[i])
                i += 1
            if i < len(lines):
                header += lines[i]
        # The function's own ops, not those of nested regions (a fill's).
        ops = [line for line in body if OP.match(line)]
        depth = min((len(line) - len(line.lstrip()) for line in ops), default=0)
        ops = [line for line in ops if len(line) - len(line.lstrip()) == depth]
        name = NAME.search(header)
        yield (name.group(1) if name else "?"), header, ops


def check(text):
    """(name, launches, problems) per public function of the lowered module."""
    funcs = list(functions(text))
    launchers = {name for name, header, body in funcs
                 if not body and "fp8.kernel = @" in header
                 and name.endswith("_launch_into")}
    collectives = {name for name, header, body in funcs
                   if not body and "fp8.collective = {" in header}
    results = []
    for name, header, body in funcs:
        if 'sym_visibility = "private"' in header or not body:
            continue
        launches, problems, steps = 0, [], 0
        for line in body:
            m = OP.match(line)
            if not m:
                continue
            op = m.group(1)
            if op not in ALLOWED:
                problems.append(op)
            elif "tensor<" in line:
                problems.append(f"{op} (on tensors)")
            elif op == "func.call":
                callee = CALLEE.search(line)
                if callee and callee.group(1) in collectives:
                    steps += 1
                elif not callee or callee.group(1) not in launchers:
                    problems.append(f"func.call of {callee.group(1) if callee else '?'}"
                                    " (not a kernel launcher)")
                else:
                    launches += 1
        results.append((name, launches, steps, problems))
    return results


def chips(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("// Chips:"):
                return line.split(":", 1)[1].split()
    return ["sm_90a", "sm_100a"]


def main():
    fp8_opt, examples = sys.argv[1], sys.argv[2:]
    count = bad = failed = compilations = 0
    for path in examples:
        short = path.rsplit("/", 1)[-1]
        for chip in chips(path):
            compilations += 1
            proc = subprocess.run([fp8_opt, path, f"--fp8-to-ptx=chip={chip}",
                                   "-mlir-print-op-generic"],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                failed += 1
                print(f"{short} {chip}: failed to compile:\n{proc.stderr}")
                continue
            for name, launches, steps, problems in check(proc.stdout):
                count += 1
                if problems:
                    bad += 1
                    print(f"{short} {chip} @{name}: not a host program: "
                          + ", ".join(sorted(set(problems))))
                else:
                    collective = (f"{steps} collectives and copies, "
                                  if steps else "")
                    print(f"{short} {chip} @{name}: {launches} launches, "
                          f"{collective}host program ops only")
    print(f"{count} functions in {compilations} compilations, {bad} not host "
          f"programs, {failed} failed to compile")
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
