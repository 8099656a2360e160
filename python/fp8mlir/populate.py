"""Fills a kernel cache with compiled linear-layer modules, on a machine
with the compiler, for a GPU machine without one:

    PYTHONPATH=python /usr/bin/python3 -m fp8mlir.populate CACHE_DIR \\
        [--chip sm_90a] [--suite gpu-tests|train|bench-linear|grouped ...] \\
        [--train-args "--hidden 4096"] [--bench-args "--tokens 8192"] \\
        [--linear SIGNATURE:M ...] [--jobs 2] [--archive CACHE.tar.xz]

Suites (default: the first three): ``gpu-tests`` (python/tests/test_gpu_linear.py,
fp8mlir.testing.linear_cases), ``train`` (bench/train_fp8.py --impl fp8mlir
with --train-args), ``bench-linear`` (bench/bench_linear.py with
--bench-args) and ``dist`` (the quantize and GEMM kernels of the 2-GPU
scripts bench/dist_exactness.py, dist_speed.py and train_tp.py with their
defaults, fp8mlir.testing.dist_cases, and the modules with collective steps of
bench/dist_module.py, fp8mlir.testing.dist_module_cases; ``--world`` GPUs),
``grouped`` (the grouped GEMM kernels of bench/bench_grouped.py and
python/tests/test_gpu_grouped.py, fp8mlir.testing.grouped_cases) and
``grouped-linear`` (python/tests/test_gpu_grouped_linear.py,
fp8mlir.testing.grouped_linear_cases); ``--linear`` adds one module by the signature and token count
a cache-miss error names. Modules already in the cache are kept. Identical
files across modules (kernels of the same shapes) are hard-linked;
``--archive`` also writes the cache as one .tar.xz (PTX compresses about
60x), which python/tests/run_gpu.sh takes in place of the directory.
"""

import argparse
import concurrent.futures
import hashlib
import os
import sys
import tarfile
import time
from pathlib import Path

from .grouped_linear_step import GroupedLinearStep
from .linear_step import LinearStep
from .ops import KernelCache
from .testing import dist_cases, grouped_cases, grouped_linear_cases, linear_cases

# The specs that are modules (module.json + kernels), not single kernels.
MODULE_SPECS = (LinearStep, GroupedLinearStep, grouped_linear_cases.WeightQuantization)


def _compile(directory, spec, chip):
    cache = KernelCache(directory)
    if not isinstance(spec, MODULE_SPECS):  # a kernel (quantize, GEMM)
        start = time.perf_counter()
        cache.compile(spec, chip)
        return spec, "kernel", time.perf_counter() - start
    if (cache.module_path(spec) / "module.json").is_file():
        return spec, "cached", 0.0
    start = time.perf_counter()
    cache.compile_module(spec)
    return spec, "compiled", time.perf_counter() - start


def dedupe(directory):
    """Hard-links files of identical content under `directory`; returns
    the bytes saved."""
    seen, saved = {}, 0
    for path in sorted(Path(directory).rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        first = seen.setdefault(digest, path)
        if first != path and not path.samefile(first):
            saved += path.stat().st_size
            tmp = path.with_name(path.name + ".link")
            os.link(first, tmp)
            os.replace(tmp, path)
    return saved


def disk_bytes(directory):
    inodes = {}
    for path in Path(directory).rglob("*"):
        if path.is_file():
            st = path.stat()
            inodes[(st.st_dev, st.st_ino)] = st.st_size
    return sum(inodes.values())


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cache", help="the kernel cache directory ($FP8MLIR_KERNEL_CACHE there)")
    p.add_argument("--chip", default="sm_90a")
    p.add_argument("--suite", action="append",
                   choices=sorted(linear_cases.SUITES) + ["dist", "grouped", "grouped-linear"])
    p.add_argument("--world", type=int, default=2, help="the GPU count of the dist suite")
    p.add_argument("--train-args", default="", help="bench/train_fp8.py arguments")
    p.add_argument("--bench-args", default="", help="bench/bench_linear.py arguments")
    p.add_argument("--linear", action="append", default=[], metavar="SIGNATURE:M",
                   # M: a token count, or "inference" for the inference forward
                   help="one module, as a cache-miss error names it")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--archive", help="also write the cache as this .tar.xz")
    return p.parse_args(argv)


def steps_of(args):
    suites = args.suite if args.suite is not None else ([] if args.linear else
                                                        list(linear_cases.SUITES))
    extra = {"train": args.train_args, "bench-linear": args.bench_args}
    steps = []
    for suite in suites:
        if suite == "dist":
            steps += dist_cases.all_specs(args.world)
            continue
        if suite == "grouped":
            steps += grouped_cases.all_specs()
            continue
        if suite == "grouped-linear":
            steps += grouped_linear_cases.all_modules(args.chip)
            continue
        steps += linear_cases.SUITES[suite](extra.get(suite, ""), args.chip)
    for text in args.linear:
        signature, _, m = text.rpartition(":")
        steps.append(LinearStep.from_signature(signature, None if m == "inference" else int(m),
                                               args.chip))
    unique = {}
    for step in steps:
        unique.setdefault(step.cache_key, step)
    return list(unique.values())


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    steps = steps_of(args)
    directory = Path(args.cache)
    directory.mkdir(parents=True, exist_ok=True)
    print(f"{len(steps)} modules for {args.chip} into {directory}", flush=True)
    failed = 0
    with concurrent.futures.ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = {pool.submit(_compile, str(directory), s, args.chip): s for s in steps}
        for future in concurrent.futures.as_completed(futures):
            spec = futures[future]
            try:
                _, what, seconds = future.result()
                print(f"{what:>8} {spec.cache_key} ({seconds:.1f} s)", flush=True)
            except Exception as error:  # noqa: BLE001 - report each, fail at the end
                failed += 1
                print(f"  FAILED {spec.cache_key}: {error}", flush=True)
    if "dist" in (args.suite or []):
        # The module programs with collective steps of bench/dist_module.py.
        from .testing import dist_module_cases
        try:
            for path in dist_module_cases.compile_all(directory, args.chip, args.world):
                print(f"  module {path.relative_to(directory)}", flush=True)
        except Exception as error:  # noqa: BLE001 - reported, fails at the end
            failed += 1
            print(f"  FAILED {dist_module_cases.DIRECTORY}: {error}", flush=True)
    saved = dedupe(directory)
    print(f"cache: {disk_bytes(directory) / 2**20:.1f} MiB on disk "
          f"({saved / 2**20:.1f} MiB of identical files hard-linked)")
    if args.archive:
        with tarfile.open(args.archive, "w:xz") as tar:
            tar.add(directory, arcname=".")
        print(f"archive: {args.archive}, {Path(args.archive).stat().st_size / 2**20:.1f} MiB")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
