"""fp8mlir.numerics (NumPy) against the C++ library (FP8/Numerics through
libFP8CAPI.so), bit for bit."""

import ctypes

import numpy as np
import pytest

from fp8mlir import _capi
from fp8mlir import numerics as ref

FORMAT_CODES = {"e4m3": 0, "e5m2": 1}
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 448.0, 449.0, 464.0, 57344.0,
                     61440.0, 1e-10, -1e-10, 2.0**-9, 2.0**-10, 1.5 * 2.0**-10, 2.0**-16,
                     2.0**-17, 3.0 * 2.0**-18, np.finfo(np.float32).max,
                     np.finfo(np.float32).tiny, 1e-45], dtype=np.float32)


@pytest.fixture(scope="module")
def lib():
    return _capi.load()


def bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


def random_floats(count, seed):
    """Random bit patterns (every class of f32) plus the specials."""
    rng = np.random.default_rng(seed)
    patterns = rng.integers(0, 2**32, size=count, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([patterns.view(np.float32), SPECIALS])


def c_encode(lib, fmt, x):
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty(x.size, np.uint8)
    lib.fp8NumericsEncode(FORMAT_CODES[fmt], x.ctypes.data, out.ctypes.data, x.size)
    return out


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_encode_matches_on_random_bit_patterns(lib, fmt):
    x = random_floats(200_000, seed=1)
    np.testing.assert_array_equal(ref.encode(fmt, x), c_encode(lib, fmt, x))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_encode_matches_on_every_rounding_boundary(lib, fmt):
    # Midpoints between consecutive fp8 values and their f32 neighbours.
    values = ref.decode(fmt, np.arange(256, dtype=np.uint8)).astype(np.float64)
    values = np.unique(values[np.isfinite(values)])
    mid = ((values[1:] + values[:-1]) / 2).astype(np.float32)
    x = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)),
                        np.nextafter(mid, np.float32(-np.inf)), values.astype(np.float32)])
    np.testing.assert_array_equal(ref.encode(fmt, x), c_encode(lib, fmt, x))


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_decode_matches_on_every_code(lib, fmt):
    codes = np.arange(256, dtype=np.uint8)
    out = np.empty(256, np.float32)
    lib.fp8NumericsDecode(FORMAT_CODES[fmt], codes.ctypes.data, out.ctypes.data, 256)
    np.testing.assert_array_equal(bits(ref.decode(fmt, codes)), bits(out))


def c_quantize(lib, x, fmt, kind, tile, rule, transposed):
    x = np.ascontiguousarray(x, dtype=np.float32)
    gran = _capi.NumericsGranularity(kind, tile[0], tile[1])
    t = lib.fp8NumericsQuantize(x.ctypes.data, x.shape[0], x.shape[1], FORMAT_CODES[fmt],
                                gran, rule, transposed)
    try:
        error = lib.fp8QuantizedTensorGetError(t).text()
        if error:
            raise ValueError(error)
        rows, cols = lib.fp8QuantizedTensorGetRows(t), lib.fp8QuantizedTensorGetCols(t)
        srows, scols = lib.fp8QuantizedTensorGetScaleRows(t), lib.fp8QuantizedTensorGetScaleCols(t)
        data = np.ctypeslib.as_array(ctypes.cast(lib.fp8QuantizedTensorGetData(t),
                                                 ctypes.POINTER(ctypes.c_uint8)),
                                     (rows, cols)).copy()
        if kind == 3:
            scale = np.ctypeslib.as_array(ctypes.cast(lib.fp8QuantizedTensorGetScaleE8M0(t),
                                                      ctypes.POINTER(ctypes.c_uint8)),
                                          (srows, scols)).copy()
        else:
            scale = np.ctypeslib.as_array(ctypes.cast(lib.fp8QuantizedTensorGetScaleInv(t),
                                                      ctypes.POINTER(ctypes.c_float)),
                                          (srows, scols)).copy()
        return data, scale, np.float32(lib.fp8QuantizedTensorGetAmax(t))
    finally:
        lib.fp8QuantizedTensorDestroy(t)


def rule(kind, **fields):
    return _capi.NumericsScaleRule(kind=kind, **fields)


# (name, recipe, kwargs, formats, [(granularity, C kind, C tile)], C rule)
CASES = [
    ("delayed", "delayed", dict(scale=3.5), ["e4m3", "e5m2"],
     [("tensor", 0, (0, 0))], rule(0, scale=3.5)),
    ("current", "current", {}, ["e4m3", "e5m2"],
     [("tensor", 0, (0, 0)), ("row", 1, (1, 0)), ((1, 16), 2, (1, 16))], rule(1)),
    ("current-eps-pow2", "current", dict(epsilon=1.0, pow2=True), ["e4m3", "e5m2"],
     [("tensor", 0, (0, 0)), ("row", 1, (1, 0))], rule(1, epsilon=1.0, powerOfTwo=True)),
    ("blockwise-pow2", "blockwise", dict(scales="pow2", amax_clamp=1e-4), ["e4m3"],
     [((1, 16), 2, (1, 16)), ((16, 16), 2, (16, 16)), ("row", 1, (1, 0))],
     rule(2, blockKind=0, amaxClamp=1e-4)),
    ("blockwise-f32", "blockwise", dict(scales="f32"), ["e4m3"],
     [((1, 16), 2, (1, 16)), ((16, 16), 2, (16, 16))], rule(2, blockKind=1)),
    ("mxfp8-round-up", "mxfp8", dict(rounding="round_up"), ["e4m3", "e5m2"],
     [(("mx", 32), 3, (1, 32))], rule(3, ue8m0Rounding=0)),
    ("mxfp8-ocp", "mxfp8", dict(rounding="ocp"), ["e4m3", "e5m2"],
     [(("mx", 32), 3, (1, 32))], rule(3, ue8m0Rounding=1)),
]


def matrices(seed):
    """Shapes with tail blocks, magnitudes over the whole f32 range, and
    specials (a NaN block, infinities, zeros, subnormals)."""
    rng = np.random.default_rng(seed)
    out = []
    for rows, cols in [(37, 70), (16, 64), (1, 33)]:
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        x *= np.float32(2.0) ** rng.integers(-40, 40, size=(rows, 1)).astype(np.float32)
        out.append(x)
    special = rng.standard_normal((20, 40)).astype(np.float32)
    special[0, :5] = [np.inf, -np.inf, 0.0, -0.0, 1e-42]
    special[3, 7] = np.nan
    special[5:7, :] = 0.0
    special[9, :] = 1e-40
    out.append(special)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_quantize_matches_the_cpp_library(lib, case):
    _, recipe, kwargs, formats, grans, c_rule = case
    for fmt in formats:
        for gran, kind, tile in grans:
            for seed, x in enumerate(matrices(7)):
                for transposed in (False, True):
                    data, scale, amax = c_quantize(lib, x, fmt, kind, tile, c_rule, transposed)
                    q = ref.quantize(x, recipe, fmt, gran, transposed, **kwargs)
                    where = f"{fmt} {gran} matrix {seed} transposed={transposed}"
                    np.testing.assert_array_equal(q.data, data, err_msg=where)
                    if q.scale_inv.dtype == np.uint8:
                        np.testing.assert_array_equal(q.scale_inv, scale, err_msg=where)
                    else:
                        np.testing.assert_array_equal(bits(q.scale_inv), bits(scale), err_msg=where)
                    assert bits(q.amax) == bits(amax), where


def test_quantize_rejects_what_the_library_rejects(lib):
    x = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="E4M3 only"):
        c_quantize(lib, x, "e5m2", 2, (1, 4), rule(2), False)
    with pytest.raises(ValueError, match="E4M3 only"):
        ref.quantize(x, "blockwise", "e5m2", (1, 4))
    with pytest.raises(ValueError, match="per-tensor"):
        c_quantize(lib, x, "e4m3", 1, (1, 0), rule(0, scale=1.0), False)
    with pytest.raises(ValueError, match="per-tensor"):
        ref.quantize(x, "delayed", "e4m3", "row", scale=1.0)
    with pytest.raises(ValueError, match="go together"):
        ref.quantize(x, "current", "e4m3", ("mx", 32))


def test_dequantize_is_close_to_the_input():
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    q = ref.quantize(x, "blockwise", "e4m3", (1, 32))
    np.testing.assert_allclose(q.dequantize(), x, rtol=2**-3, atol=1e-6)


def test_delayed_scaling_rules_match(lib):
    history = np.array([0.5, np.nan, 3.0, 2.0], np.float32)
    for algo, code in (("max", 0), ("most_recent", 1)):
        c = lib.fp8NumericsHistoryAmax(history.ctypes.data, history.size, code)
        assert bits(ref.history_amax(history, algo)) == bits(c)
    for fmt in ("e4m3", "e5m2"):
        for amax in (3.0, 0.0, np.inf, np.nan, 1e-40):
            for margin in (0, 1, 3):
                c = lib.fp8NumericsDelayedScalingScale(amax, 2.0, FORMAT_CODES[fmt], margin)
                assert bits(ref.delayed_scaling_scale(amax, 2.0, fmt, margin)) == bits(c)
