"""GroupedScaledMatmul through libFP8CAPI.so (no GPU): the kernel, its
metadata (the grouped operands) and the spec's checks."""

import re

import pytest

import fp8mlir
from fp8mlir import CompileError, GroupedScaledMatmul
from fp8mlir.testing import grouped_cases, torch_ops_cases


@pytest.mark.parametrize("recipe, b_scale", [("tensorwise", [3]), ("rowwise", [3, 256]),
                                             ("blockwise", [3, 2, 4])])
def test_grouped_kernel_metadata(recipe, b_scale):
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=512),
                             chip="sm_90a")
    assert kernel.name.startswith(f"fp8_grouped_gemm_{recipe}_e4m3_e4m3_bf16_n256_k512_")
    assert kernel.name.endswith("_g3") or "_g3_" in kernel.name
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert [op["name"] for op in meta["operands"]] == [
        "a", "b", "a_scale_inv", "b_scale_inv", "group_index", "d"]
    assert operands["b"]["shape"] == [3, 256, 512]
    assert operands["b_scale_inv"]["shape"] == b_scale
    assert operands["group_index"] == {"name": "group_index", "dtype": "i32", "shape": ["M"],
                                       "role": "input"}
    assert [p["name"] for p in meta["params"]][-2:] == ["group_index", "m"]
    tma_b = next(m for m in meta["tensor_maps"] if m["name"] == "tma_b")
    assert tma_b["dims"] == [512, 3 * 256]  # the stacked [G * N, K] view
    assert meta["gemm"]["groups"] == 3
    assert meta["gemm"]["group_layout"] == "m_contiguous"
    assert meta["gemm"]["cluster"] == [1, 1, 1]
    assert "variants" not in meta


@pytest.mark.parametrize("recipe, b_scale", [("tensorwise", [2]), ("rowwise", [2, 256])])
def test_grouped_sm_100a_f8f6f4_kernels(recipe, b_scale):
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=2, n=256, k=512),
                             chip="sm_100a")
    assert kernel.name.startswith(f"fp8_grouped_gemm_{recipe}_e4m3_e4m3_bf16_n256_k512_t128x")
    assert "tcgen05.mma.cta_group::1.kind::f8f6f4" in kernel.ptx
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert operands["b_scale_inv"]["shape"] == b_scale
    tma_b = next(m for m in meta["tensor_maps"] if m["name"] == "tma_b")
    assert tma_b["dims"] == [512, 2 * 256]


def test_grouped_mxfp8_on_sm_100a():
    """MX scales (UE8M0, 1x32) on the block-scaled MMA: A's atoms
    [ceil(M/128), K/128, 512], each group's B atoms [N/128, K/128, 512]
    stacked, read through one 3-D tensor map over all groups."""
    kernel = fp8mlir.compile(GroupedScaledMatmul("mxfp8", groups=3, n=256, k=512),
                             chip="sm_100a")
    assert kernel.name == "fp8_grouped_gemm_mxfp8_e4m3_e4m3_bf16_n256_k512_t128x256x128_s3_g3_fast"
    assert "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale" in kernel.ptx
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert operands["a_scale_inv"]["dtype"] == "ue8m0"
    assert operands["a_scale_inv"]["shape"] == ["M_ATOMS", 4, 512]
    assert operands["b_scale_inv"] == {"name": "b_scale_inv", "dtype": "ue8m0",
                                       "shape": [3, 2, 4, 512], "role": "input"}
    maps = {m["name"]: m for m in meta["tensor_maps"]}
    assert maps["tma_sfb"]["dims"] == [128, 16, 3 * 2]
    assert maps["tma_sfb"]["box"] == [128, 4, 2]
    assert [p["name"] for p in meta["params"]][3:5] == ["tma_sfa", "tma_sfb"]
    assert meta["gemm"]["a_granularity"] == meta["gemm"]["b_granularity"] == "mx 1x32"


def test_grouped_mxfp8_on_sm_90a_is_an_error():
    with pytest.raises(CompileError, match="MXFP8 .* needs block-scaled tensor-core MMA"):
        fp8mlir.compile(GroupedScaledMatmul("mxfp8", groups=2, n=256, k=512), chip="sm_90a")


def test_grouped_f32_blockwise_on_sm_100a_is_an_error():
    with pytest.raises(CompileError, match="take their A scales as f8E8M0FNU"):
        fp8mlir.compile(GroupedScaledMatmul("blockwise", groups=2, n=256, k=512),
                        chip="sm_100a")


def test_mx_scale_atoms_layout():
    """scale_atoms.to_atoms puts the scale of (row, block) where the
    kernel's atom layout says, padding with 2^0."""
    np = pytest.importorskip("numpy")
    from fp8mlir.scale_atoms import atom_byte, atom_shape, to_atoms
    rows, k = 200, 416  # 2 atom rows, 4 atom columns (13 blocks, padded to 16)
    blocks = 13
    codes = (np.arange(rows * blocks) % 251).astype(np.uint8).reshape(rows, blocks)
    atoms = to_atoms(codes, rows, k, lambda shape, v: np.full(shape, v, np.uint8))
    assert atoms.shape == atom_shape(rows, k) == (2, 4, 512)
    for r in range(256):
        for b in range(16):
            i, g, byte = atom_byte(r, b)
            expected = codes[r, b] if r < rows and b < blocks else 127
            assert atoms[i, g, byte] == expected


@pytest.mark.parametrize("recipe, a_scale", [("tensorwise", []), ("rowwise", [3, "M"]),
                                             ("blockwise", [3, 4, "roundup(M, 4)"])])
def test_masked_kernel_metadata(recipe, a_scale):
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=512,
                                                 layout="m_masked"), chip="sm_90a")
    assert kernel.name.startswith(f"fp8_grouped_masked_gemm_{recipe}_e4m3_e4m3_bf16_n256_k512_")
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert [op["name"] for op in meta["operands"]] == [
        "a", "b", "a_scale_inv", "b_scale_inv", "masked_m", "d"]
    assert operands["a"]["shape"] == [3, "M", 512]
    assert operands["a_scale_inv"]["shape"] == a_scale
    assert operands["masked_m"] == {"name": "masked_m", "dtype": "i32", "shape": [3],
                                    "role": "input"}
    assert operands["d"]["shape"] == [3, "M", 256]
    assert [p["name"] for p in meta["params"]][-2:] == ["masked_m", "m"]
    # D is stored directly (only the valid rows); A is a 3-D tensor map.
    assert "d" in [p["name"] for p in meta["params"]]
    tma_a = next(m for m in meta["tensor_maps"] if m["name"] == "tma_a")
    assert tma_a["dims"] == [512, "M", 3]
    assert tma_a["strides_bytes"] == [512, "M*512"]
    assert tma_a["box"][2] == 1
    assert meta["gemm"]["group_layout"] == "m_masked"
    # Launch variants of smaller tiles, chosen by the caller's expected_m.
    assert meta["variant_choice"] == "expected_m"
    assert meta["variants"] == [v.name + ".json" for v in kernel.variants]
    tiles = [tuple(v.metadata["gemm"]["tile"][:2]) for v in kernel.variants]
    assert {(64, 128), (64, 64)} <= set(tiles) and (128, 128) in set(tiles) | {
        tuple(meta["gemm"]["tile"][:2])}
    # Tile M 128 down to 112 columns and 64 down to 16, in steps of 16, not
    # wider than the kernel's (N = 256: 128), the kernel's not repeated.
    own = tuple(meta["gemm"]["tile"][:2])
    assert own == (128, 128)
    assert tiles == [(128, 112)] + [(64, n) for n in range(128, 0, -16)]
    for variant in kernel.variants:
        assert variant.variant_of == kernel.name
        assert "variants" not in variant.metadata
        assert "variant_choice" not in variant.metadata
        assert variant.metadata["operands"] == meta["operands"]


def test_masked_blockwise_variants_span_tile_n_in_steps_of_16():
    """DeepSeek-V3's blockwise decode GEMM (N = 4096): the 128x192 kernel and
    its variants, 128 or 64 rows by every tile N of 16 to 192 the blockwise
    kernel takes (no 176: its tiles would span three 128x128 B blocks)."""
    kernel = fp8mlir.compile(GroupedScaledMatmul("blockwise", groups=2, n=4096, k=512,
                                                 layout="m_masked"), chip="sm_90a")
    assert kernel.metadata["gemm"]["tile"][:2] == [128, 192]
    tiles = [tuple(v.metadata["gemm"]["tile"][:2]) for v in kernel.variants]
    assert tiles == ([(128, n) for n in (160, 144, 128, 112)]
                     + [(64, n) for n in (192, 160, 144, 128, 112, 96, 80, 64, 48, 32, 16)])
    assert kernel.metadata["variants"] == [v.name + ".json" for v in kernel.variants]


def test_masked_fp8_result_has_no_variants():
    kernel = fp8mlir.compile(GroupedScaledMatmul("blockwise", groups=2, n=256, k=512,
                                                 layout="m_masked", out_dtype="e4m3",
                                                 result_recipe="blockwise"), chip="sm_90a")
    assert "variants" not in kernel.metadata and not kernel.variants


def test_the_runtime_picks_the_masked_kernel_for_expected_m(runtime_library, tmp_path):
    """fp8rt_kernel_for_expected_m through the package's runtime binding: 4
    groups of N = 4096 (32 columns of 128-wide tiles), on 132 SMs."""
    from fp8mlir import _runtime
    compiled = fp8mlir.compile(GroupedScaledMatmul("rowwise", groups=4, n=4096, k=512,
                                                   layout="m_masked"), chip="sm_90a")
    tiles = {v.name: tuple(v.metadata["gemm"]["tile"][:2]) for v in compiled.variants}
    assert compiled.metadata["gemm"]["tile"][:2] == [128, 128]
    with _runtime.Kernel(compiled.save(tmp_path), runtime_library) as kernel:
        # 16 rows: 128 tiles of 128x128 or 64x128 (one wave each, the
        # fullest; narrower tiles make two), the 64x128 ones the smaller.
        small = kernel.for_expected_m(16, 132)
        assert tiles[small.name] == (64, 128)
        assert small.operand_names == kernel.operand_names
        assert kernel.for_expected_m(16, 132) is small
        # 1024 rows: 1024 tiles of 128x128 (8 waves) against 1184 of 128x112
        # (9) and 2048 of 64x128 (16): the kernel's own.
        assert kernel.for_expected_m(1024, 132) is kernel
        with pytest.raises(RuntimeError, match="expected_m = 0: expected the rows a group is "
                                               "expected to hold, at least 1"):
            kernel.for_expected_m(0, 132)
        with pytest.raises(RuntimeError, match="num_sms = 0"):
            kernel.for_expected_m(16, 0)
    with pytest.raises(RuntimeError, match="is closed"):
        small.handle  # noqa: B018 (closed with its kernel)


@pytest.mark.parametrize("value, m, message", [
    (0, None, "expected_m: expected a positive int, the rows each group is expected to hold, "
              "got 0"),
    (-3, 64, "got -3"), (True, 64, "got True"), (2.5, 64, "got 2.5"), ("64", 64, "got '64'"),
    (65, 64, "expected_m = 65 exceeds M = 64, the most rows a group holds")])
def test_bad_expected_m_is_an_error(value, m, message):
    from fp8mlir.grouped import check_expected_m
    with pytest.raises(ValueError, match=re.escape(message)):
        check_expected_m(value, m)


def test_good_expected_m_is_accepted():
    from fp8mlir.grouped import check_expected_m
    for value, m in ((None, 64), (1, 64), (64, 64), (5000, None), (7, 0)):
        check_expected_m(value, m)


def test_masked_fp8mlir_signature():
    text = GroupedScaledMatmul("blockwise", groups=2, n=256, k=512, layout="m_masked").to_mlir()
    assert ("(%a: tensor<2x?x512xf8E4M3FN>, %b: tensor<2x256x512xf8E4M3FN>, "
            "%sa: tensor<2x?x4xf32>, %sb: tensor<2x2x4xf32>, %groups: tensor<2xi32>) "
            "-> tensor<2x?x256xbf16>") in text


@pytest.mark.parametrize("recipe, a_scale, b_scale", [
    ("tensorwise", [3], [3]), ("rowwise", [3, "M"], [3, 256]),
    ("blockwise", ["ceildiv(K, 128)", "roundup(M, 4)"], ["ceildiv(K, 128)", 256])])
def test_k_grouped_kernel_metadata(recipe, a_scale, b_scale):
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=None,
                                                 layout="k_grouped"), chip="sm_90a")
    name = "blockwise_1d1d" if recipe == "blockwise" else recipe
    assert kernel.name.startswith(f"fp8_grouped_k_gemm_{name}_e4m3_e4m3_bf16_n256_kdyn_")
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    assert [op["name"] for op in meta["operands"]] == [
        "a", "b", "a_scale_inv", "b_scale_inv", "ks", "d"]
    assert operands["a"]["shape"] == ["M", "K"]
    assert operands["b"]["shape"] == [256, "K"]
    assert operands["a_scale_inv"]["shape"] == a_scale
    assert operands["b_scale_inv"]["shape"] == b_scale
    assert operands["ks"] == {"name": "ks", "dtype": "i32", "shape": [3], "role": "input"}
    assert operands["d"]["shape"] == [3, "M", 256]
    params = {p["name"]: p for p in meta["params"]}
    assert [p["name"] for p in meta["params"]][-3:] == ["ks", "m", "k"]
    assert params["k"]["value"] == "K" and params["k"]["multiple_of"] == 128
    assert "d" in params  # direct stores
    tma_a = next(m for m in meta["tensor_maps"] if m["name"] == "tma_a")
    tma_b = next(m for m in meta["tensor_maps"] if m["name"] == "tma_b")
    assert tma_a["dims"] == ["K", "M"] and tma_a["strides_bytes"] == ["K"]
    assert tma_b["dims"] == ["K", 256]  # one B: tiles address their group's columns
    assert meta["gemm"]["k"] == "K"
    assert meta["gemm"]["group_layout"] == "k_grouped"
    assert "variants" not in meta


def test_k_grouped_fp8mlir_signature():
    text = GroupedScaledMatmul("blockwise", groups=2, n=256, k=None,
                               layout="k_grouped").to_mlir()
    assert ("(%a: tensor<?x?xf8E4M3FN>, %b: tensor<256x?xf8E4M3FN>, "
            "%sa: tensor<?x?xf32>, %sb: tensor<256x?xf32>, %groups: tensor<2xi32>) "
            "-> tensor<2x?x256xbf16>") in text
    assert "b_granularity = #fp8.granularity<tile 1x128>" in text


@pytest.mark.parametrize("layout, k", [("m_masked", 512), ("k_grouped", None)])
def test_masked_and_k_grouped_gemms_on_sm_100a_are_errors(layout, k):
    with pytest.raises(CompileError, match="sm_100a grouped kernels take the m_contiguous "
                                           f"layout only, not {layout}"):
        fp8mlir.compile(GroupedScaledMatmul("rowwise", groups=2, n=256, k=k,
                                            layout=layout), chip="sm_100a")


@pytest.mark.parametrize("kwargs, message", [
    (dict(recipe="nvfp4"), "unknown recipe 'nvfp4'"),
    (dict(layout="k_grouped"), "k_grouped takes K at run time: k must be None"),
    (dict(layout="k_grouped", k=None, out_dtype="e4m3", result_recipe="delayed"),
     "k_grouped writes a bf16, f16 or f32 D: no result_recipe"),
    (dict(layout="n_grouped"), "layout 'n_grouped'"),
    (dict(recipe="mxfp8", layout="m_masked"), "takes the m_contiguous layout only"),
    (dict(groups=0), "groups must be a positive integer"),
    (dict(out_dtype="e4m3"), "out_dtype 'e4m3'"),
])
def test_grouped_spec_checks(kwargs, message):
    args = dict(recipe="rowwise", groups=2, n=256, k=512)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        GroupedScaledMatmul(**args)


def test_grouped_kernels_are_in_the_gpu_table():
    keys = {spec.cache_key for spec in torch_ops_cases.all_specs()}
    assert all(spec.cache_key in keys for spec in grouped_cases.all_specs())
    assert len({s.cache_key for s in grouped_cases.all_specs()}) == len(grouped_cases.all_specs())


@pytest.mark.parametrize("layout, result_recipe, scale_shape", [
    ("m_contiguous", "blockwise", [2, "roundup(M, 4)"]),
    ("m_contiguous", "delayed", []),
    ("m_masked", "blockwise", [3, 2, "roundup(M, 4)"]),
    ("m_masked", "delayed", []),
])
def test_grouped_fp8_result_metadata(layout, result_recipe, scale_shape):
    """An FP8 D: its scale_inv after d (1x128: MN-major, per group with
    m_masked), the given scale before it (delayed)."""
    recipe = "blockwise" if result_recipe == "blockwise" else "rowwise"
    kernel = fp8mlir.compile(GroupedScaledMatmul(recipe, groups=3, n=256, k=512,
                                                 layout=layout, out_dtype="e4m3",
                                                 result_recipe=result_recipe),
                             chip="sm_90a")
    suffix = "_q1x128" if result_recipe == "blockwise" else "_qtensor"
    assert kernel.name.endswith(suffix) and "_e4m3_e4m3_e4m3_" in kernel.name
    meta = kernel.metadata
    operands = {op["name"]: op for op in meta["operands"]}
    names = [op["name"] for op in meta["operands"]]
    groups = "masked_m" if layout == "m_masked" else "group_index"
    given = ["result_scale"] if result_recipe == "delayed" else []
    assert names == ["a", "b", "a_scale_inv", "b_scale_inv", groups] + given + [
        "d", "result_scale_inv"]
    assert operands["result_scale_inv"]["shape"] == scale_shape
    assert operands["d"]["dtype"] == "e4m3"
    # m_contiguous stores through TMA; m_masked directly, guarded by the counts.
    params = [p["name"] for p in meta["params"]]
    assert ("tma_d" in params) == (layout == "m_contiguous")


def test_grouped_fp8_result_other_recipes_are_errors():
    text = GroupedScaledMatmul("rowwise", groups=2, n=256, k=512).to_mlir()
    text = text.replace("-> tensor<?x256xbf16>", "-> (tensor<?x256xf8E4M3FN>, tensor<?x1xf32>)")
    text = text.replace("%d = ", "%d, %ds = ").replace(
        "accumulation = #fp8.accumulation<fast>}",
        "accumulation = #fp8.accumulation<fast>, result_recipe = #fp8.current<>, "
        "result_granularity = #fp8.granularity<row>}")
    text = text.replace("return %d : tensor<?x256xbf16>",
                        "return %d, %ds : tensor<?x256xf8E4M3FN>, tensor<?x1xf32>")
    with pytest.raises(CompileError, match="whose scales reduce over more than one tile"):
        fp8mlir.compile(text, chip="sm_90a")


def test_bench_cases_and_their_populate_suite():
    """bench/bench_grouped.py's group sizes (uneven; empty experts among 4
    or more in m_masked; counts within the launch's rows) and every kernel
    it runs in `fp8mlir.populate --suite grouped`."""
    from fp8mlir import populate
    for groups, mean in grouped_cases.BENCH_CONTIGUOUS:
        rows = grouped_cases.bench_contiguous_rows(groups, mean, seed=3)
        assert len(rows) == groups and len(set(rows)) > 1
        assert all(0.7 * mean <= r <= 1.3 * mean for r in rows)
    for groups, mean in grouped_cases.BENCH_MASKED:
        counts = grouped_cases.bench_masked_counts(groups, mean, seed=3)
        assert len(counts) == groups
        assert all(0 <= c <= grouped_cases.BENCH_MASKED_MAX_M for c in counts)
        assert (0 in counts) == (groups >= 4) and any(counts)
    assert grouped_cases.bench_masked_counts(2, 512, seed=3) == \
        grouped_cases.bench_masked_counts(2, 512, seed=3)
    steps = populate.steps_of(populate.parse_args(["cache", "--suite", "grouped"]))
    keys = {s.cache_key for s in steps}
    wanted = [GroupedScaledMatmul(r, groups=g, n=n, k=k) for r in grouped_cases.BENCH_RECIPES
              for g, _ in grouped_cases.BENCH_CONTIGUOUS for n, k in grouped_cases.BENCH_SHAPES]
    wanted += [GroupedScaledMatmul("blockwise", groups=g, n=n, k=k, layout="m_masked")
               for g, _ in grouped_cases.BENCH_MASKED for n, k in grouped_cases.BENCH_SHAPES]
    assert all(spec.cache_key in keys for spec in wanted)
    assert keys == {s.cache_key for s in grouped_cases.all_specs()}
