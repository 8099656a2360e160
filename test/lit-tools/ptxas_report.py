#!/usr/bin/env python3
"""Assembles every .ptx in DIR with `ptxas -arch=ARCH -v` and reports each
kernel's resources (registers, shared memory, spills) and any warning, then
a summary line the lit tests check:

    N kernels assembled, S with spills, W with wgmma serialization warnings, F failed

    ptxas_report.py PTXAS ARCH DIR
"""
import pathlib
import re
import subprocess
import sys


def kernel_sections(log):
    """(entry name, text) per kernel of a `ptxas -v` log: a PTX file may hold
    several entries (every kernel of a gpu.module)."""
    parts = re.split(r"Compiling entry function '([^']+)'", log)
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts) - 1, 2)]


def main():
    ptxas, arch, directory = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3])
    files = sorted(directory.glob("*.ptx"))
    kernels = spills = serialized = failed = 0
    seen = set()
    assembled = set()  # the texts assembled: a module's PTX is written per kernel
    for ptx in files:
        text = ptx.read_bytes()
        if text in assembled:
            continue
        assembled.add(text)
        proc = subprocess.run([ptxas, f"-arch={arch}", "-v", str(ptx), "-o", "/dev/null"],
                              capture_output=True, text=True)
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            failed += 1
            print(f"FAILED {ptx.name}:\n{log}")
            continue
        for line in log.splitlines():
            if "warning" in line:
                print(f"  {ptx.name}: {line}")
        for entry, text in kernel_sections(log):
            if entry in seen:  # the same module's PTX written for each kernel
                continue
            seen.add(entry)
            kernels += 1
            registers = re.search(r"Used (\d+) registers", text)
            smem = re.search(r"(\d+) bytes smem", text)
            spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
            has_spill = bool(spill and (int(spill.group(1)) or int(spill.group(2))))
            is_serialized = "wgmma.mma_async instructions are serialized" in text
            spills += has_spill
            serialized += is_serialized
            print(f"{entry}: {registers.group(1) if registers else '?'} registers, "
                  f"{smem.group(1) if smem else 0} bytes static smem, "
                  f"spills {spill.group(1) + '/' + spill.group(2) if spill else '?'}"
                  + (", WGMMA SERIALIZED" if is_serialized else ""))
    print(f"{kernels} kernels assembled, {spills} with spills, "
          f"{serialized} with wgmma serialization warnings, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
