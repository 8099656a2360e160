"""Shared pieces of the GPU check (test/GPU/check_gemm.py) and the benchmarks
(bench/bench_gemm.py, bench/power_ceiling.py).

- gemm_spec: the "gemm" section of a kernel's NAME.json, the operand and
  scale-layout conventions, and the check's tolerances (pure Python);
- gemm_inputs: random GEMM inputs quantized with the recipes' arithmetic, in
  the scale layouts the kernels take, and the f64 reference (needs torch);
- torch_ops_cases: the kernels of the PyTorch-operator GPU tests and the
  launch benchmark (pure Python; the populate step compiles them);
- linear_cases: the layer modules of the fp8mlir.nn.Linear GPU tests and of
  the benchmarks with --impl fp8mlir (pure Python; python3 -m
  fp8mlir.populate compiles them).

Nothing here is imported by `import fp8mlir`.
"""
