"""`xlapy.compile` / `xlapy.execute`: the one-shot API, arguments checked."""

import numpy as np
import pytest

import xlapy

ADD_ONE = """
HloModule add_one
ENTRY main {
  x = f32[3] parameter(0)
  one = f32[] constant(1)
  ones = f32[3] broadcast(one), dimensions={}
  ROOT y = f32[3] add(x, ones)
}
"""

PAIR = """
HloModule pair
ENTRY main {
  x = s32[2] parameter(0)
  y = s32[2] negate(x)
  ROOT t = (s32[2], s32[2]) tuple(x, y)
}
"""


def test_execute_text_in_the_interpreter():
    (y,) = xlapy.execute(ADD_ONE, [np.arange(3, dtype=np.float32)], backend="interpreter")
    np.testing.assert_array_equal(y, [1, 2, 3])
    assert y.dtype == np.float32


def test_tuple_results_come_back_as_a_list():
    x, y = xlapy.execute(PAIR, [np.array([1, -2], np.int32)], backend="interpreter")
    np.testing.assert_array_equal(y, [-1, 2])


def test_compile_once_run_many():
    executable = xlapy.compile(xlapy.hlo.parse(ADD_ONE), backend="interpreter")
    for k in range(3):
        (y,) = executable.execute(np.full(3, k, np.float32))
        np.testing.assert_array_equal(y, np.full(3, k + 1))


def test_python_lists_are_converted():
    (y,) = xlapy.execute(ADD_ONE, [[1, 2, 3]], backend="interpreter")
    np.testing.assert_array_equal(y, [2, 3, 4])


@pytest.mark.parametrize("args, message", [
    ([], "takes 1 argument"),
    ([np.zeros(3, np.float64)], "expected f32\\[3\\], got an array of dtype float64"),
    ([np.zeros(4, np.float32)], "expected f32\\[3\\], got an array of shape \\[4\\]"),
])
def test_bad_arguments_are_errors(args, message):
    with pytest.raises(xlapy.ExecutionError, match=message):
        xlapy.execute(ADD_ONE, args, backend="interpreter")


def test_unknown_backend():
    with pytest.raises(xlapy.CompileError, match="unknown or unavailable backend 'tpu'"):
        xlapy.compile(ADD_ONE, backend="tpu")


def test_devices_lists_the_interpreter():
    assert "interpreter" in xlapy.devices()
