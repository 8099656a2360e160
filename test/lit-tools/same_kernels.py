#!/usr/bin/env python3
"""Compares the kernels fp8-compile wrote into two directories: every
NAME.ptx and kernel metadata NAME.json ("format": "fp8-mlir-kernel") must be
in both, byte for byte (other files, such as a module description, are not
compared). Prints the differences, then

    N kernels, D differ, A only in the first, B only in the second

    same_kernels.py DIR_A DIR_B
"""
import json
import pathlib
import sys


def kernels(directory):
    names = set()
    for path in pathlib.Path(directory).glob("*.json"):
        try:
            if json.loads(path.read_text()).get("format") == "fp8-mlir-kernel":
                names.add(path.stem)
        except (ValueError, AttributeError):
            continue
    return names


def main():
    a, b = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    ka, kb = kernels(a), kernels(b)
    differ = 0
    for name in sorted(ka & kb):
        for ext in (".ptx", ".json"):
            if (a / (name + ext)).read_bytes() != (b / (name + ext)).read_bytes():
                differ += 1
                print(f"differs: {name}{ext}")
    for name in sorted(ka - kb):
        print(f"only in {a}: {name}")
    for name in sorted(kb - ka):
        print(f"only in {b}: {name}")
    print(f"{len(ka | kb)} kernels, {differ} differ, {len(ka - kb)} only in the "
          f"first, {len(kb - ka)} only in the second")
    return 1 if differ or ka != kb else 0


if __name__ == "__main__":
    sys.exit(main())
