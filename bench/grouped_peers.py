"""The implementations bench/bench_grouped.py times on one case
(grouped_problems): fp8mlir's grouped kernel, torch._scaled_grouped_mm
(rowwise) and DeepGEMM's grouped kernels where `deep_gemm` imports.

Each `*_impl(case)` prepares everything that does not belong in the timed
call (kernel lookup, operand lists, output buffers) for every input copy
and returns (call, outputs): call(i) runs the GEMM on copy i into
outputs[i]. One that cannot run the case raises gemm_peers.Unavailable,
whose message the report keeps.
"""

import concurrent.futures
import multiprocessing
import time

import torch

from gemm_peers import Unavailable

FP8MLIR = "fp8mlir"
TORCH_GROUPED = "torch._scaled_grouped_mm"
DEEPGEMM = "deepgemm"


def _outputs(case, shape, dtype=torch.bfloat16):
    return [torch.empty(shape, dtype=dtype, device="cuda") for _ in range(case.count)]


# --- fp8mlir ------------------------------------------------------------------

def fp8mlir_spec(case):
    from fp8mlir.grouped import GroupedScaledMatmul
    return GroupedScaledMatmul(case.recipe, groups=case.g, n=case.n, k=case.k,
                               layout=case.layout, config=getattr(case, "config", None))


def fp8mlir_impl(case):
    """The kernel of the case's spec from the kernel cache, launched through
    the runtime on operands made once per copy: one kernel launch per call
    (the public grouped_scaled_mm of m_masked would also copy the 1x128
    scales into the MN-major layout each call; here they already are).
    m_masked: the kernel the runtime picks for the expected_m hint DeepGEMM
    gets (grouped_scaled_mm(..., expected_m=) picks the same)."""
    from fp8mlir import _grouped_ops, _torch_ops as ops
    device = torch.device("cuda", torch.cuda.current_device())
    (kernel,) = ops.kernels_for(fp8mlir_spec(case), device)
    if case.layout == "m_masked":
        kernel = _grouped_ops._kernel_for_expected_m(kernel, case.expected_m, device)
    groups = "masked_m" if case.layout == "m_masked" else "group_index"
    shape = (case.g, case.m, case.n) if case.layout == "m_masked" else (case.m, case.n)
    outs = _outputs(case, shape)
    operands = []
    for c, d in zip(case.copies, outs):
        sa = c["sa"]
        if case.recipe == "blockwise":  # the MN-major storage under the logical view
            sa = sa.transpose(-1, -2)
            sa = sa.as_strided((*sa.shape[:-1], sa.stride(-2)), sa.stride())
        named = {"a": c["a"], "b": c["b"], "a_scale_inv": sa, "b_scale_inv": c["sb"],
                 groups: c[groups], "d": d}
        operands.append([named.get(name) for name in kernel.operand_names])

    def call(i):
        ops.launch(kernel, operands[i])
        return outs[i]
    return call, outs, kernel.name


def fp8mlir_api_output(case):
    """fp8mlir.grouped_scaled_mm (the public API) on copy 0, for checking
    that it gives the timed kernel's bits."""
    import fp8mlir
    c = case.copies[0]
    if case.layout == "m_masked":
        return fp8mlir.grouped_scaled_mm(c["a"], c["b"], c["sa"], c["sb"], masked_m=c["masked_m"],
                                         expected_m=case.expected_m)
    return fp8mlir.grouped_scaled_mm(c["a"], c["b"], c["sa"], c["sb"],
                                     group_index=c["group_index"])


def fp8mlir_kgrouped_impl(case):
    """fp8mlir's k_grouped layout through the public API:
    fp8mlir.grouped_scaled_mm(A [M, sum K], B [N, sum K], their 1x128
    scales [M | N, sum K / 128] (MN-major storage, taken without a copy),
    k_sizes= the experts' token counts, out_dtype=f32, out=) -> [G, M, N]:
    one kernel launch per call. With a case config (bench_grouped.py
    --config k_grouped=<...>), the same path with that #fp8.gemm_config
    instead of the tile heuristic's."""
    import fp8mlir
    from fp8mlir import _grouped_ops
    outs = _outputs(case, (case.g, case.m, case.n), torch.float32)
    config = getattr(case, "config", None)

    def call(i):
        c = case.copies[i]
        if config:
            return _grouped_ops._run_k_grouped(c["a_cat"], c["b_cat"], c["sa_mn"], c["sb_mn"],
                                               c["ks"], "blockwise", "fast", outs[i],
                                               config=config)
        return fp8mlir.grouped_scaled_mm(c["a_cat"], c["b_cat"], c["sa_mn"], c["sb_mn"],
                                         k_sizes=c["ks"], out_dtype=torch.float32,
                                         out=outs[i])
    try:
        call(0)
    except Exception as e:  # noqa: BLE001 - reported for this case, the others still run
        raise Unavailable(f"fp8mlir k_grouped call failed: {type(e).__name__}: {e}") from None

    def timed(i):
        call(i)
        return outs[i]
    return timed, outs, "grouped_scaled_mm(k_sizes=)" + (f" {config}" if config else "")


# --- torch ----------------------------------------------------------------------

def torch_grouped_impl(case):
    """torch._scaled_grouped_mm (2-D x 3-D, rowwise): mat_b is B[g]^T
    column-major (our [G, N, K] transposed), offs the padded groups' end
    rows."""
    if case.layout != "m_contiguous" or case.recipe != "rowwise":
        raise Unavailable(f"{TORCH_GROUPED} is timed for rowwise m_contiguous only")
    if not hasattr(torch, "_scaled_grouped_mm"):
        raise Unavailable(f"torch {torch.__version__} has no torch._scaled_grouped_mm")
    offs = case.offsets(torch)
    outs = [None] * case.count

    def call(i):
        c = case.copies[i]
        outs[i] = torch._scaled_grouped_mm(c["a"], c["b"].transpose(-2, -1), c["sa"], c["sb"],
                                           offs=offs, out_dtype=torch.bfloat16)
        return outs[i]
    return call, outs, TORCH_GROUPED


# --- DeepGEMM -------------------------------------------------------------------

def deep_gemm_function(*names):
    try:
        import deep_gemm
    except Exception as e:  # ImportError, or the extension failing to load
        raise Unavailable(f"deep_gemm not importable ({type(e).__name__}: {e}); "
                          f"bench/README.md says how to build it") from None
    for name in names:
        fn = getattr(deep_gemm, name, None)
        if fn is not None:
            return fn
    raise Unavailable(f"deep_gemm {getattr(deep_gemm, '__version__', '?')} has none of "
                      f"{', '.join(names)}")


def deepgemm_impl(case):
    """DeepGEMM's sm_90 grouped kernels with float scales (1x128 x 128x128):
    m_grouped_fp8_gemm_nt_contiguous((a, sfa), (b, sfb), d, m_indices)
    and m_grouped_fp8_gemm_nt_masked(..., masked_m, expected_m), on the same
    buffers as fp8mlir (sfa MN-major TMA-aligned, so it takes them without
    a copy; m_indices is our group index); k_grouped_fp8_gemm_nt_contiguous
    ((a, sfa), (b, sfb), d, ks, ks_tensor, c=d) with 1x128 x 1x128."""
    if case.recipe == "rowwise":
        raise Unavailable("DeepGEMM's grouped kernels are blockwise only")
    if case.layout == "k_grouped":
        return _deepgemm_kgrouped(case)
    masked = case.layout == "m_masked"
    fn = deep_gemm_function(*(("m_grouped_fp8_gemm_nt_masked", "fp8_m_grouped_gemm_nt_masked")
                              if masked else ("m_grouped_fp8_gemm_nt_contiguous",)))
    outs = _outputs(case, (case.g, case.m, case.n) if masked else (case.m, case.n))

    def call(i):
        c = case.copies[i]
        if masked:
            fn((c["a"], c["sa"]), (c["b"], c["sb"]), outs[i], c["masked_m"], case.expected_m)
        else:
            fn((c["a"], c["sa"]), (c["b"], c["sb"]), outs[i], c["group_index"])
        return outs[i]
    return call, outs, fn.__name__


def _deepgemm_kgrouped(case):
    fn = deep_gemm_function("k_grouped_fp8_gemm_nt_contiguous")
    outs = _outputs(case, (case.g, case.m, case.n), torch.float32)
    for d in outs:
        d.zero_()

    def call(i):
        c = case.copies[i]
        fn((c["a_flat"], c["sa_mn"]), (c["b_flat"], c["sb_mn"]), outs[i], case.ks, c["ks"],
           c=outs[i])
        return outs[i]
    return call, outs, fn.__name__


# --- DeepGEMM's JIT, ahead of the benchmark -----------------------------------------

def _warm(job):
    """In a worker process: one DeepGEMM call of the case `job` describes on
    zero inputs of its shapes, so that its JIT compiles (and caches on
    disk) the kernel the benchmark will ask for."""
    kind, g, m, n, k, extra = job
    start = time.perf_counter()
    try:
        z = torch.zeros

        def z8(shape):  # FP8 zeros (as bytes: fill kernels may lack FP8)
            return torch.zeros(shape, dtype=torch.uint8, device="cuda").view(torch.float8_e4m3fn)
        if kind == "k_grouped":
            ks = extra
            total = sum(ks)
            sa = z((total // 128, m), device="cuda").t()
            sb = z((total // 128, n), device="cuda").t()
            d = z((g, m, n), device="cuda")
            _deepgemm_call(kind)((z8(total * m), sa),
                                 (z8(total * n), sb), d, list(ks),
                                 torch.tensor(ks, dtype=torch.int32, device="cuda"), c=d)
        else:
            lead = (g,) if kind == "m_masked" else ()
            a = z8((*lead, m, k))
            sa = z((*lead, k // 128, m), device="cuda").transpose(-1, -2)
            b = (z8((g, n, k)),
                 z((g, -(-n // 128), k // 128), device="cuda"))
            d = z((*lead, m, n), dtype=torch.bfloat16, device="cuda")
            if kind == "m_masked":
                counts, expected_m = extra
                _deepgemm_call(kind)((a, sa), b, d, torch.tensor(counts, dtype=torch.int32,
                                                                 device="cuda"), expected_m)
            else:
                _deepgemm_call(kind)((a, sa), b, d, z(m, dtype=torch.int32, device="cuda"))
        torch.cuda.synchronize()
        return job, time.perf_counter() - start, None
    except Exception as e:  # noqa: BLE001 - the benchmark reports it again
        return job, time.perf_counter() - start, f"{type(e).__name__}: {e}"


def _deepgemm_call(kind):
    return deep_gemm_function({"m_contiguous": "m_grouped_fp8_gemm_nt_contiguous",
                               "m_masked": "m_grouped_fp8_gemm_nt_masked",
                               "k_grouped": "k_grouped_fp8_gemm_nt_contiguous"}[kind])


def warm_deepgemm(jobs, processes):
    """Compiles DeepGEMM's kernels for `jobs` ((layout, G, M, N, K, extra):
    extra is (counts, expected_m) for m_masked, the K of each expert for
    k_grouped) in
    `processes` spawned processes at once (its JIT runs NVCC for each new
    kernel, 6-10 s; the benchmark then finds them in DeepGEMM's disk
    cache). Returns the seconds it took; prints failures."""
    try:
        deep_gemm_function("m_grouped_fp8_gemm_nt_contiguous")
    except Unavailable as e:
        print(f"DeepGEMM: {e}", flush=True)
        return 0.0
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max(1, processes), mp_context=context) as pool:
        for job, seconds, error in pool.map(_warm, sorted(set(jobs))):
            if error:
                print(f"DeepGEMM warm-up {job[:5]}: {error}", flush=True)
    seconds = time.perf_counter() - start
    print(f"DeepGEMM JIT warm-up: {len(set(jobs))} shapes in {seconds:.1f} s "
          f"({processes} processes)", flush=True)
    return seconds
