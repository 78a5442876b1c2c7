"""JAX's 64-bit switch: `xlapy.config.enable_x64` and `--xlapy_enable_x64`.

Every case runs in both modes against dtypes written down from JAX 0.10.2
(`jax.config.update("jax_enable_x64", ...)`), so the tests need no JAX; where
JAX is installed the same cases also run against it as the oracle.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from xlapy import config, lax

MODES = [False, True]
MODE_IDS = ["x32", "x64"]


@pytest.fixture(params=MODES, ids=MODE_IDS)
def x64(request):
    """Runs the test in one mode, and puts the process-wide switch back after."""
    with config.enable_x64(request.param):
        yield request.param
    config.update("enable_x64", None)


def _jax():
    jax = pytest.importorskip("jax")
    return jax, jax.numpy


def _typeof(value) -> tuple[str, bool]:
    return str(np.dtype(value.dtype)), bool(getattr(value, "weak_type", False))


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


# name: (expression over a NumPy-like module, x32 dtype, x64 dtype, weak)
CREATION = {
    "zeros": (lambda m: m.zeros(3), "float32", "float64", False),
    "ones": (lambda m: m.ones((2, 2)), "float32", "float64", False),
    "empty": (lambda m: m.empty(3), "float32", "float64", False),
    "full_float": (lambda m: m.full(3, 1.5), "float32", "float64", True),
    "full_int": (lambda m: m.full(3, 2), "int32", "int64", True),
    "full_np_float64": (lambda m: m.full(3, np.float64(1.5)), "float32", "float64", False),
    "full_float_type": (lambda m: m.zeros(3, float), "float32", "float64", False),
    "zeros_int_type": (lambda m: m.zeros(3, int), "int32", "int64", False),
    "arange_int": (lambda m: m.arange(5), "int32", "int64", False),
    "arange_float": (lambda m: m.arange(5.0), "float32", "float64", False),
    "arange_np_int64": (lambda m: m.arange(np.int64(5)), "int32", "int64", False),
    "arange_step": (lambda m: m.arange(0, 1, 0.25), "float32", "float64", False),
    "linspace": (lambda m: m.linspace(0, 1, 5), "float32", "float64", False),
    "linspace_int_array": (lambda m: m.linspace(m.int32(0), 5, 3), "float32", "float32", False),
    "logspace": (lambda m: m.logspace(0, 1, 3), "float32", "float64", False),
    "geomspace": (lambda m: m.geomspace(1, 10, 3), "float32", "float64", False),
    "eye": (lambda m: m.eye(3), "float32", "float64", False),
    "identity": (lambda m: m.identity(2), "float32", "float64", False),
    "tri": (lambda m: m.tri(3), "float32", "float32", False),   # jnp.tri: float32 always
    "indices": (lambda m: m.indices((2, 3)), "int32", "int64", False),
    "asarray_floats": (lambda m: m.asarray([1.0, 2.0]), "float32", "float64", False),
    "asarray_ints": (lambda m: m.asarray([1, 2]), "int32", "int64", False),
    "asarray_complex": (lambda m: m.asarray([1j]), "complex64", "complex128", False),
    "asarray_bools": (lambda m: m.array([True]), "bool", "bool", False),
    "asarray_empty": (lambda m: m.array([]), "float32", "float64", False),
    "asarray_scalar": (lambda m: m.asarray(1.5), "float32", "float64", True),
    "asarray_np_float64": (lambda m: m.asarray(np.ones(3)), "float32", "float64", False),
    "asarray_np_int64": (lambda m: m.asarray(np.ones(3, np.int64)), "int32", "int64", False),
    "asarray_np_uint64": (lambda m: m.asarray(np.ones(3, np.uint64)), "uint32", "uint64", False),
    "asarray_np_complex128": (lambda m: m.asarray(np.ones(3, np.complex128)), "complex64",
                              "complex128", False),
    "asarray_np_float16": (lambda m: m.asarray(np.ones(3, np.float16)), "float16", "float16",
                           False),
    "asarray_np_scalar": (lambda m: m.asarray(np.float64(1)), "float32", "float64", False),
    "zeros_like_np": (lambda m: m.zeros_like(np.ones(3)), "float32", "float64", False),
    "ones_like_np_int64": (lambda m: m.ones_like(np.ones(2, np.int64)), "int32", "int64", False),
    "full_like_scalar": (lambda m: m.full_like(1.0, 1), "float32", "float64", True),
    "astype_float": (lambda m: m.ones(2, np.int32).astype(float), "float32", "float64", False),
    "astype_int": (lambda m: m.ones(2, np.float32).astype(int), "int32", "int64", False),
}

PROMOTION = {
    "f32_plus_float": (lambda m: m.ones(3, np.float32) + 1.5, "float32", "float32", False),
    "f32_plus_np_float64": (lambda m: m.ones(3, np.float32) + np.float64(1.5), "float32",
                            "float64", False),
    "f32_plus_np_array": (lambda m: m.ones(3, np.float32) + np.ones(3), "float32", "float64",
                          False),
    "i32_plus_float": (lambda m: m.ones(3, np.int32) + 1.5, "float32", "float64", True),
    "i32_plus_int": (lambda m: m.ones(3, np.int32) + 2, "int32", "int32", False),
    "f16_plus_float": (lambda m: m.ones(3, np.float16) + 1.5, "float16", "float16", False),
    "i8_plus_int": (lambda m: m.ones(3, np.int8) + 2, "int8", "int8", False),
    "i32_plus_np_int64": (lambda m: m.ones(3, np.int32) + np.ones(3, np.int64), "int32", "int64",
                          False),
    "u32_plus_i32": (lambda m: m.ones(3, np.uint32) + m.ones(3, np.int32), "int32", "int64",
                     False),
    "bool_plus_float": (lambda m: m.ones(3, bool) + 1.5, "float32", "float64", True),
    "f32_plus_complex": (lambda m: m.ones(3, np.float32) + 1j, "complex64", "complex64", False),
    "default_plus_int": (lambda m: m.ones(3) + 1, "float32", "float64", False),
    "multiply_np_float": (lambda m: m.multiply(np.ones(3), 2.0), "float32", "float64", False),
    "sin_np": (lambda m: m.sin(np.ones(3)), "float32", "float64", False),
    "sin_float": (lambda m: m.sin(1.0), "float32", "float64", True),
    "sqrt_int": (lambda m: m.sqrt(2), "float32", "float64", True),
    "sqrt_int32": (lambda m: m.sqrt(m.ones(3, np.int32)), "float32", "float32", False),
    "sqrt_np_int64": (lambda m: m.sqrt(np.ones(3, np.int64)), "float32", "float64", False),
    "divide_int32": (lambda m: m.ones(3, np.int32) / 2, "float32", "float32", False),
    "np_scalars": (lambda m: m.add(np.float64(1), np.float32(1)), "float32", "float64", False),
    "np_scalar_plus_float": (lambda m: m.add(np.float64(1), 1.0), "float32", "float64", False),
    "where_floats": (lambda m: m.where(True, 1.0, 2.0), "float32", "float64", True),
    "clip_int32_floats": (lambda m: m.clip(m.ones(2, np.int32), 0.5, 1.5), "float32", "float64",
                          True),
    "sum_np_int64": (lambda m: m.sum(np.ones(3, np.int64)), "int32", "int64", False),
    "sum_int32": (lambda m: m.sum(m.ones(3, np.int32)), "int32", "int64", False),
    "sum_bool": (lambda m: m.sum(m.ones(3, bool)), "int32", "int64", False),
    "sum_uint8": (lambda m: m.sum(m.ones(3, np.uint8)), "uint32", "uint64", False),
    "prod_int8": (lambda m: m.prod(m.ones(3, np.int8)), "int32", "int64", False),
    "cumsum_int8": (lambda m: m.cumsum(m.ones(3, np.int8)), "int8", "int8", False),
    "cumsum_bool": (lambda m: m.cumsum(m.ones(3, bool)), "int32", "int64", False),
    "count_nonzero": (lambda m: m.count_nonzero(m.ones(3)), "int32", "int64", False),
    "mean_int32": (lambda m: m.mean(m.ones(3, np.int32)), "float32", "float32", False),
    "mean_np_int64": (lambda m: m.mean(np.ones(3, np.int64)), "float32", "float64", False),
    "var_int32": (lambda m: m.var(m.ones(3, np.int32)), "float32", "float32", False),
    "argmax": (lambda m: m.argmax(m.ones(3)), "int32", "int64", False),
    "result_type_float": (lambda m: np.zeros((), m.result_type(1.0)), "float32", "float64",
                          False),
    "result_type_int_type": (lambda m: np.zeros((), m.result_type(int)), "int32", "int64",
                             False),
    "result_type_np_array": (lambda m: np.zeros((), m.result_type(np.ones(3))), "float32",
                             "float64", False),
    "result_type_u32_i32": (lambda m: np.zeros((), m.result_type(np.uint32, np.int32)),
                            "int32", "int64", False),
}


def _key(r):
    return r.PRNGKey(0)


RANDOM = {
    "normal": (lambda r: r.normal(_key(r), (3,)), "float32", "float64"),
    "uniform": (lambda r: r.uniform(_key(r), (3,)), "float32", "float64"),
    "uniform_bounds": (lambda r: r.uniform(_key(r), (3,), minval=np.float32(0)), "float32",
                       "float64"),
    "truncated_normal": (lambda r: r.truncated_normal(_key(r), -1, 1, (3,)), "float32",
                         "float64"),
    "exponential": (lambda r: r.exponential(_key(r), (3,)), "float32", "float64"),
    "gumbel": (lambda r: r.gumbel(_key(r), (3,)), "float32", "float64"),
    "laplace": (lambda r: r.laplace(_key(r), (3,)), "float32", "float64"),
    "logistic": (lambda r: r.logistic(_key(r), (3,)), "float32", "float64"),
    "cauchy": (lambda r: r.cauchy(_key(r), (3,)), "float32", "float64"),
    "randint": (lambda r: r.randint(_key(r), (3,), 0, 5), "int32", "int64"),
    "rademacher": (lambda r: r.rademacher(_key(r), (3,)), "int32", "int64"),
    "bernoulli": (lambda r: r.bernoulli(_key(r), 0.5, (3,)), "bool", "bool"),
    "categorical": (lambda r: r.categorical(_key(r), np.zeros(3, np.float32)), "int32",
                    "int64"),
    "permutation": (lambda r: r.permutation(_key(r), 5), "int32", "int64"),
    "choice": (lambda r: r.choice(_key(r), 5, (2,)), "int32", "int64"),
    "bits": (lambda r: r.bits(_key(r), (3,)), "uint32", "uint64"),
    "key": (lambda r: r.PRNGKey(0), "uint32", "uint32"),
    "split": (lambda r: r.split(_key(r)), "uint32", "uint32"),
}


def _expected(x32, x64_dtype, mode):
    return x64_dtype if mode else x32


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_dtypes(name, x64):
    fn, x32, x64_dtype, weak = CREATION[name]
    assert _typeof(fn(xnp)) == (_expected(x32, x64_dtype, x64), weak)


@pytest.mark.parametrize("name", sorted(PROMOTION))
def test_promotion_with_python_scalars(name, x64):
    fn, x32, x64_dtype, weak = PROMOTION[name]
    assert _typeof(fn(xnp)) == (_expected(x32, x64_dtype, x64), weak)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_dtypes(name, x64):
    fn, x32, x64_dtype = RANDOM[name]
    assert str(fn(xlapy.random).dtype) == _expected(x32, x64_dtype, x64)


@pytest.mark.parametrize("name", sorted(CREATION) + sorted(PROMOTION))
def test_dtypes_agree_with_jax(name, x64):
    jax, jnp = _jax()
    fn = {**CREATION, **PROMOTION}[name][0]
    with jax.enable_x64(x64):
        expected = _typeof(_quiet(fn, jnp))
    assert _typeof(fn(xnp)) == expected


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_agrees_with_jax(name, x64):
    jax, _ = _jax()
    with jax.enable_x64(x64):
        expected = np.asarray(RANDOM[name][0](jax.random))
    got = np.asarray(RANDOM[name][0](xlapy.random))
    assert got.dtype == expected.dtype
    # JAX's own bits: integer and discrete draws exactly, floats to an ulp or two
    # (XLA's and NumPy's log/erf_inv differ there).
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, expected, rtol=8 * np.finfo(got.dtype).eps)
    else:
        np.testing.assert_array_equal(got, expected)


# -- explicit 64-bit requests -------------------------------------------------------------
# (expression, the function named in the warning, JAX's requested and truncated dtypes)
EXPLICIT = {
    "zeros": (lambda m: m.zeros(3, np.float64), "zeros", "float64", "float32"),
    "zeros_str": (lambda m: m.zeros(3, "float64"), "zeros", "float64", "float32"),
    "zeros_int64": (lambda m: m.zeros(3, np.int64), "zeros", "int64", "int32"),
    "zeros_uint64": (lambda m: m.zeros(3, np.uint64), "zeros", "uint64", "uint32"),
    "zeros_complex128": (lambda m: m.zeros(3, np.complex128), "zeros", "complex128",
                         "complex64"),
    "zeros_float_": (lambda m: m.zeros(3, m.float_), "zeros", "float64", "float32"),
    "ones": (lambda m: m.ones(3, "int64"), "ones", "int64", "int32"),
    "full": (lambda m: m.full(3, 1.5, np.float64), "full", "float64", "float32"),
    "arange": (lambda m: m.arange(5, dtype=np.float64), "arange", "float64", "float32"),
    "linspace": (lambda m: m.linspace(0, 1, 5, dtype=np.float64), "linspace", "float64",
                 "float32"),
    "eye": (lambda m: m.eye(3, dtype=np.float64), "eye", "float64", "float32"),
    "tri": (lambda m: m.tri(3, dtype=np.float64), "tri", "float64", "float32"),
    "asarray": (lambda m: m.asarray([1.0], np.float64), "asarray", "float64", "float32"),
    "asarray_np": (lambda m: m.asarray(np.ones(3), np.float64), "asarray", "float64",
                   "float32"),
    "array": (lambda m: m.array(np.ones(3, np.float32), dtype=np.float64), "array",
              "float64", "float32"),
    "astype": (lambda m: m.ones(3).astype(np.float64), "astype", "float64", "float32"),
    "astype_int64": (lambda m: m.ones(3).astype(np.int64), "astype", "int64", "int32"),
    "scalar_type": (lambda m: m.float64(1), "asarray", "float64", "float32"),
    "int_type": (lambda m: m.int_(3), "asarray", "int64", "int32"),
    "zeros_like": (lambda m: m.zeros_like(m.ones(3), np.float64), "zeros_like", "float64",
                   "float32"),
    "full_like": (lambda m: m.full_like(m.ones(3), 1, np.float64), "full_like", "float64",
                  "float32"),
    "cumsum": (lambda m: m.cumsum(m.ones(3, np.int32), dtype=np.float64), "cumsum", "float64",
               "float32"),
    "mean": (lambda m: m.mean(m.ones(3), dtype=np.float64), "mean", "float64", "float32"),
    "result_type": (lambda m: np.zeros((), m.result_type("float64")), "dtype", "float64",
                    "float32"),
}
RANDOM_EXPLICIT = {
    "normal": (lambda r: r.normal(r.PRNGKey(0), (3,), np.float64), "float64", "float32"),
    "normal_complex": (lambda r: r.normal(r.PRNGKey(0), (3,), np.complex128), "complex128",
                       "complex64"),
    "uniform": (lambda r: r.uniform(r.PRNGKey(0), (3,), np.float64), "float64", "float32"),
    "randint": (lambda r: r.randint(r.PRNGKey(0), (3,), 0, 5, np.int64), "int64", "int32"),
    "bits": (lambda r: r.bits(r.PRNGKey(0), (3,), np.uint64), "uint64", "uint32"),
}
SILENT = {
    "zeros_float": lambda m: m.zeros(3, float),
    "zeros_int": lambda m: m.zeros(3, int),
    "astype_float": lambda m: m.ones(3).astype(float),
    "asarray_np_float64": lambda m: m.asarray(np.ones(3)),
    "asarray_np_int64": lambda m: m.asarray(np.arange(3)),
    "full_np_float64": lambda m: m.full(3, np.float64(2)),
    "add_np_float64": lambda m: m.ones(3) + np.ones(3),
    "zeros_like_np": lambda m: m.zeros_like(np.ones(3)),
    "sum_np_int64": lambda m: m.sum(np.arange(3)),
}


def _record(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _truncation(requested: str, where: str, truncated: str) -> str:
    where = f" requested in {where}" if where else ""
    return (f"Explicitly requested dtype {requested}{where} is not available, and will be "
            f"truncated to dtype {truncated}. To enable more dtypes, set the ")


@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_explicit_64_bit_request_is_truncated_with_jax_warning(name, x64):
    fn, where, requested, truncated = EXPLICIT[name]
    result, messages = _record(fn, xnp)
    if x64:
        assert str(result.dtype) == requested and messages == []
        return
    assert str(result.dtype) == truncated
    assert len(messages) == 1 and messages[0].startswith(_truncation(requested, where,
                                                                     truncated))
    assert "xlapy.config.update('enable_x64', True)" in messages[0]
    assert "--xlapy_enable_x64" in messages[0]


@pytest.mark.parametrize("name", sorted(RANDOM_EXPLICIT))
def test_explicit_64_bit_random_request(name, x64):
    fn, requested, truncated = RANDOM_EXPLICIT[name]
    result, messages = _record(fn, xlapy.random)
    if x64:
        assert str(result.dtype) == requested and messages == []
        return
    assert str(result.dtype) == truncated
    assert len(messages) == 1 and messages[0].startswith(_truncation(requested, "", truncated))


@pytest.mark.parametrize("name", sorted(SILENT))
def test_canonicalizing_data_is_silent(name, x64):
    _, messages = _record(SILENT[name], xnp)
    assert messages == []


def test_the_warning_points_at_the_users_line():
    with config.enable_x64(False), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        xnp.zeros(2, np.float64)
    assert [w.filename for w in caught] == [__file__]


@pytest.mark.parametrize("name", sorted(EXPLICIT))
def test_warnings_agree_with_jax(name, x64):
    jax, jnp = _jax()
    fn, where, requested, truncated = EXPLICIT[name]
    with jax.enable_x64(x64):
        expected, jax_messages = _record(fn, jnp)
    result, messages = _record(fn, xnp)
    assert str(result.dtype) == str(expected.dtype)
    assert len(messages) == len([m for m in jax_messages if "Explicitly requested" in m]) or \
        name in ("mean",)   # JAX's mean warns twice (mean, then its convert_element_type)
    for ours, theirs in zip(messages, jax_messages):
        assert ours.split(" To enable")[0] == theirs.split(" To enable")[0]


# -- the programs -----------------------------------------------------------------
def _scan_program(m, scan):
    xs = np.linspace(0.0, 1.0, 4)             # float64 NumPy data

    def body(carry, x):
        carry = carry * 0.5 + x * carry + x   # Python scalars, the data, the carry
        return carry, carry

    return scan(body, m.zeros(()), xs)        # a default-dtype carry


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_scan_carry_with_float64_data_and_default_zeros(x64, jitted):
    run = (lambda: _scan_program(xnp, lax.scan))
    carry, ys = xlapy.jit(run)() if jitted else run()
    dtype = "float64" if x64 else "float32"
    assert (str(carry.dtype), str(ys.dtype)) == (dtype, dtype)
    expected, values = 0.0, []
    for x in np.linspace(0.0, 1.0, 4):
        expected = expected * 0.5 + x * expected + x
        values.append(expected)
    np.testing.assert_allclose(np.asarray(ys), values, rtol=1e-6 if not x64 else 1e-15)


def test_scan_carry_agrees_with_jax(x64):
    jax, jnp = _jax()
    with jax.enable_x64(x64):
        carry, ys = _scan_program(jnp, jax.lax.scan)
        expected = (str(carry.dtype), str(ys.dtype)), np.asarray(ys)
    carry, ys = _scan_program(xnp, lax.scan)
    assert (str(carry.dtype), str(ys.dtype)) == expected[0]
    np.testing.assert_allclose(np.asarray(ys), expected[1], rtol=1e-6 if not x64 else 1e-15)


def test_second_derivative_computes_in_the_default_float(x64):
    value = xlapy.grad(xlapy.grad(xnp.sin))(0.7)
    assert _typeof(value) == ("float64" if x64 else "float32", True)
    if x64:
        assert float(value) == pytest.approx(-np.sin(0.7), rel=1e-15)
    else:
        assert float(value) == pytest.approx(-np.sin(0.7), rel=1e-6)
        assert float(value) != -np.sin(0.7)   # float32, not a float64 in disguise


def test_second_derivative_agrees_with_jax(x64):
    jax, jnp = _jax()
    with jax.enable_x64(x64):
        expected = jax.grad(jax.grad(jnp.sin))(0.7)
        expected = _typeof(expected), np.asarray(expected)
    value = xlapy.grad(xlapy.grad(xnp.sin))(0.7)
    assert _typeof(value) == expected[0]
    np.testing.assert_allclose(np.asarray(value), expected[1], rtol=1e-15 if x64 else 1e-6)


# -- jit ---------------------------------------------------------------------------------
def test_jit_retraces_when_the_mode_flips():
    f = xlapy.jit(lambda x: x * 2.0 + xnp.zeros(()))
    with config.enable_x64(False):
        assert str(f(1.5).dtype) == "float32"
        assert str(f(np.ones(2)).dtype) == "float32"   # float64 data enters as float32
        assert str(f(np.ones(2, np.float32)).dtype) == "float32"   # the same signature
    assert f.compile_count == 2
    with config.enable_x64(True):
        assert str(f(1.5).dtype) == "float64"
        assert str(f(np.ones(2)).dtype) == "float64"
    assert f.compile_count == 4
    assert "x64 mode (xlapy.config.enable_x64) changed: False -> True" in f.cache_misses[1]
    with config.enable_x64(False):
        assert str(f(np.ones(2)).dtype) == "float32"
    assert f.compile_count == 4   # both modes stay cached


def test_jit_lowers_canonical_parameters(x64):
    text = xlapy.jit(lambda x: x + 1).lower(np.ones(2)).as_text()
    assert ("f64[2]" in text) == x64 and ("f32[2]" in text) == (not x64)


# -- what the switch leaves alone ---------------------------------------------------------
def test_hlo_entry_points_keep_exact_types(x64):
    text = ("HloModule m\n\nENTRY e {\n  p = f64[2] parameter(0)\n"
            "  ROOT r = f64[2] add(p, p)\n}\n")
    (out,) = xlapy.execute(text, [np.array([0.1, 0.2])])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [0.2, 0.4])


def test_arrays_keep_their_dtype_across_modes():
    with config.enable_x64(True):
        x = xnp.ones(2) * 0.1
    with config.enable_x64(False):
        assert str((x + 1.0).dtype) == "float64"
        assert str(xnp.sum(x).dtype) == "float64"


def test_lax_takes_dtypes_literally(x64):
    assert str(lax.convert_element_type(xnp.ones(2, np.float32), np.float64).dtype) == "float64"


# -- the switch itself -------------------------------------------------------------------
def test_update_read_and_jax_spelling():
    try:
        config.update("enable_x64", True)
        assert config.read("enable_x64") is True and config.enable_x64.value is True
        assert str(xnp.zeros(1).dtype) == "float64"
        config.update("jax_enable_x64", False)
        assert config.read("jax_enable_x64") is False
        assert str(xnp.zeros(1).dtype) == "float32"
    finally:
        config.update("enable_x64", None)


def test_context_manager_restores_the_outer_value():
    outer = config.enable_x64.value
    with config.enable_x64(not outer):
        assert config.enable_x64.value is (not outer)
        with config.enable_x64(outer):
            assert config.enable_x64.value is outer
        assert config.enable_x64.value is (not outer)
    assert config.enable_x64.value is outer


def test_misuse_is_an_error():
    with pytest.raises(AttributeError, match="no option 'enable_x46'"):
        config.update("enable_x46", True)
    with pytest.raises(TypeError, match="True or False"):
        config.update("enable_x64", "yes")
    with pytest.raises(TypeError, match=r"enable_x64\.value"):
        bool(config.enable_x64)


@pytest.mark.parametrize("flags, expected", [("--xlapy_enable_x64", "True float64 int64"),
                                             ("", "False float32 int32")])
def test_the_flag_sets_the_default(flags, expected):
    program = ("import xlapy, xlapy.numpy as xnp; "
               "print(xlapy.config.read('enable_x64'), xnp.zeros(1).dtype, xnp.arange(2).dtype)")
    env = {**os.environ, "XLAPY_FLAGS": flags}
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=120, check=True)
    assert out.stdout.split("\n")[-2] == expected
