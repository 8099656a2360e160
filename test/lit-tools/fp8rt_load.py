#!/usr/bin/env python3
"""Loads every NAME.json under DIR with the host runtime (fp8rt_kernel_load:
the generated reader of schema/kernel.schema.json, the checks across fields,
the PTX entry's parameters, the launch variants; no GPU needed), prints each
failure, then the summary line the lit tests check:

    N kernels loaded, F failed

    fp8rt_load.py LIBFP8RT DIR
"""
import ctypes
import pathlib
import sys


def main():
    library, directory = sys.argv[1], pathlib.Path(sys.argv[2])
    lib = ctypes.CDLL(library)
    lib.fp8rt_kernel_load.argtypes = [ctypes.c_char_p,
                                      ctypes.POINTER(ctypes.c_void_p)]
    lib.fp8rt_kernel_load.restype = ctypes.c_int
    lib.fp8rt_last_error.restype = ctypes.c_char_p
    lib.fp8rt_kernel_destroy.argtypes = [ctypes.c_void_p]
    loaded = failed = 0
    for path in sorted(directory.rglob("*.json")):
        if path.name in ("module.json", "compile-times.json"):
            continue
        kernel = ctypes.c_void_p()
        if lib.fp8rt_kernel_load(str(path).encode(), ctypes.byref(kernel)):
            failed += 1
            print(f"FAILED {path}: {lib.fp8rt_last_error().decode()}")
            continue
        loaded += 1
        lib.fp8rt_kernel_destroy(kernel)
    print(f"{loaded} kernels loaded, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
