"""The eager shortcut for + - * /: the same values, dtypes and weak types as
the general path and as `jit`, and the general path wherever it must decide."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from xlapy.numpy import _eager_fast

pytestmark = pytest.mark.eager_only

OPS = {"add": (np.add, lambda a, b: a + b), "subtract": (np.subtract, lambda a, b: a - b),
       "multiply": (np.multiply, lambda a, b: a * b), "divide": (np.divide, lambda a, b: a / b)}


def _values(dtype, shape, rng):
    if np.dtype(dtype).kind == "f":
        v = rng.standard_normal(shape).astype(dtype)
        v.flat[0] = 0.0          # division by zero, -0.0, inf and nan travel through
        if v.size > 2:
            v.flat[1], v.flat[2] = np.inf, np.nan
        return v
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)  # wraps


@given(op=st.sampled_from(sorted(OPS)),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]),
       shapes=st.sampled_from([((5,), (5,)), ((3, 4), (4,)), ((2, 1, 3), (4, 1)), ((), (6,))]),
       scalar=st.sampled_from([None, "left", "right"]), seed=st.integers(0, 100))
def test_eager_equals_jit(op, dtype, shapes, scalar, seed):
    if op == "divide" and np.dtype(dtype).kind == "i":
        return
    rng = np.random.default_rng(seed)
    a, b = (xnp.asarray(_values(dtype, s, rng)) for s in shapes)
    number = 3 if np.dtype(dtype).kind == "i" else 2.5
    args = {"left": (number, b), "right": (a, number), None: (a, b)}[scalar]
    fn = OPS[op][1]
    eager = fn(*args)
    jitted = xlapy.jit(fn)(*args)
    assert eager.dtype == jitted.dtype and eager.weak_type == jitted.weak_type
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))


def test_shortcut_taken_only_where_it_agrees():
    f32 = xnp.asarray(np.ones(3, np.float32))
    i32 = xnp.asarray(np.ones(3, np.int32))
    assert _eager_fast.binary(np.add, f32, f32) is not None
    assert _eager_fast.binary(np.add, f32, 2) is not None
    assert _eager_fast.binary(np.add, i32, 2) is not None
    assert _eager_fast.binary(np.add, i32, 2.5) is None            # promotes to float
    assert _eager_fast.binary(np.add, f32, i32) is None            # mixed dtypes
    assert _eager_fast.binary(np.add, f32, True) is None           # bools promote differently
    assert _eager_fast.binary(np.add, i32, 2 ** 40) is None        # does not fit int32
    assert _eager_fast.binary(np.divide, i32, i32, floats_only=True) is None
    f16 = xnp.asarray(np.ones(3, np.float16))
    assert _eager_fast.binary(np.add, f16, f16) is None
    assert _eager_fast.binary(np.add, np.ones(3, np.float32), f32) is None   # NumPy operand


def test_shortcut_results_are_immutable_arrays():
    a = xnp.asarray(np.float32(2.0))
    out = a * 3
    assert isinstance(np.asarray(out), np.ndarray) and out.shape == ()
    with pytest.raises(ValueError):
        np.asarray(out)[()] = 1.0


def test_shortcut_not_taken_under_a_trace():
    def f(x):
        return x * 2.0 + 1.0
    text = xlapy.jit(f).lower(np.ones(3, np.float32)).as_text()
    assert "multiply" in text and "add" in text
    assert float(xlapy.grad(lambda x: xnp.sum(x * x))(xnp.asarray(np.float32(3.0)))) == 6.0
