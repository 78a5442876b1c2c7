"""`xlapy.jit`: one compile per signature, pytrees, static and donated
arguments, must-compile errors that point at the user's line, metadata."""

import collections
import inspect
import warnings

import numpy as np
import pytest

import xlapy
from xlapy import config, lax
from xlapy.core.errors import ConcretizationError
from xlapy.core.trace import as_array
from xlapy.flags import flags_set
from xlapy.hlo import parse
from xlapy.hlo.opcode import Opcode
from xlapy.jit import JitFunction

X = np.arange(3, dtype=np.float32)


def line_of(marker: str) -> int:
    """The line of this file holding `marker` (to check reported locations)."""
    source = inspect.getsource(inspect.getmodule(line_of)).splitlines()
    return next(i + 1 for i, text in enumerate(source) if marker in text and "line_of" not in text)


def test_one_compile_per_signature():
    f = xlapy.jit(lambda x, y: lax.add(x, lax.mul(y, 2.0)))
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(f(X, X)), X * 3)
    assert f.compile_count == 1
    f(np.arange(4, dtype=np.float32), np.ones(4, np.float32))
    assert f.compile_count == 2
    assert f.cache_misses == ["argument x: f32[3] -> f32[4]; argument y: f32[3] -> f32[4]"]
    f(X.astype(np.float64), X.astype(np.float64))   # float64 data is float32 without x64
    assert f.compile_count == 2
    with config.enable_x64(True):
        f(X.astype(np.float64), X.astype(np.float64))
    assert f.compile_count == 3 and "f64[3]" in f.cache_misses[-1]


def test_weak_type_is_part_of_the_signature():
    f = xlapy.jit(lambda x: lax.mul(x, x))
    assert np.asarray(f(3.0)).dtype == np.float32 and f(3.0).weak_type
    f(np.float32(3.0))
    assert f.compile_count == 2 and "(weak)" in f.cache_misses[0]


def test_static_arguments_by_position_and_name():
    @xlapy.jit
    def plain(x):
        return x

    def power(x, n):
        out = x
        for _ in range(n - 1):  # Python control flow on a static value is fine
            out = lax.mul(out, x)
        return out

    f = xlapy.jit(power, static_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(X, 3)), X ** 3)
    np.testing.assert_array_equal(np.asarray(f(X, 2)), X ** 2)
    assert f.compile_count == 2 and f.cache_misses == ["static argument n: 3 -> 2"]
    g = xlapy.jit(power, static_argnames="n")
    np.testing.assert_array_equal(np.asarray(g(X, n=2)), X ** 2)
    assert np.asarray(plain(X)).dtype == np.float32


def test_unhashable_static_argument():
    f = xlapy.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(TypeError, match="hashable"):
        f(X, [1, 2])


Pair = collections.namedtuple("Pair", "a b")


def test_pytrees_in_and_out():
    @xlapy.jit
    def f(params, batch):
        w, b = params["w"], params["b"]
        return Pair(lax.add(lax.mul(batch.a, w), b), None), [batch.b]

    out, rest = f({"w": X, "b": np.float32(1)}, Pair(X, np.int32(7)))
    assert isinstance(out, Pair) and out.b is None
    np.testing.assert_array_equal(np.asarray(out.a), X * X + 1)
    assert int(rest[0]) == 7


def test_decorator_with_options_and_keyword_arguments():
    @xlapy.jit(static_argnames=("scale",))
    def f(x, *, scale):
        return lax.mul(x, float(scale))

    np.testing.assert_array_equal(np.asarray(f(X, scale=2)), X * 2)


def test_python_if_on_traced_value_says_what_to_do():
    def f(x):
        if lax.gt(x, 0.0):  # BAD-IF
            return x
        return lax.neg(x)

    with pytest.raises(ConcretizationError) as info:
        xlapy.jit(f)(np.float32(1))
    message = str(info.value)
    assert "bool()" in message and "lax.cond" in message
    assert f"pred[] from gt at {__file__}:{line_of('# BAD-IF')}" in message
    assert isinstance(info.value, xlapy.CompileError)


@pytest.mark.parametrize("convert", [int, float, lambda x: np.asarray(x), lambda x: [0][x]])
def test_conversions_of_traced_values_are_errors(convert):
    with pytest.raises(ConcretizationError, match="while_loop|lax.cond"):
        xlapy.jit(lambda x: convert(x))(np.int32(0))


def test_leaked_tracer_is_an_error():
    leaked = []
    xlapy.jit(lambda x: leaked.append(x) or x)(X)
    with pytest.raises(ConcretizationError, match="outside the function"):
        lax.add(leaked[0], 1.0)


def test_metadata_points_at_the_users_line():
    def f(x):
        return lax.exp(x)  # EXP-LINE

    module = xlapy.jit(f).lower(X).module
    exp = next(i for i in module.entry_computation.instructions if i.opcode is Opcode.EXP)
    metadata = exp.attrs["metadata"]
    assert metadata.get("op_name") == "jit(f)/exp"
    assert metadata.get("source_file") == __file__
    assert metadata.get("source_line") == line_of("# EXP-LINE")


def test_lowered_text_parses_back_and_compiled_text_exists():
    f = xlapy.jit(lambda x, y: lax.reduce_precision(lax.add(x, y), 5, 10))
    text = f.lower(X, X).as_text()
    assert text.startswith("HloModule jit_")
    module = parse(text)
    assert module == parse(module.to_text())
    compiled = f.lower(X, X).compile()
    assert "ENTRY" in compiled.as_text()
    np.testing.assert_array_equal(np.asarray(compiled(X, X)), np.asarray(f(X, X)))


def test_donated_argument_becomes_an_alias_and_is_deleted():
    f = xlapy.jit(lambda x, y: lax.add(x, y), donate_argnums=0)
    alias = f.lower(X, X).module.attributes["input_output_alias"]
    assert [(a.output_index, a.parameter_number) for a in alias] == [((), 0)]
    x = as_array(X.copy())
    np.testing.assert_array_equal(np.asarray(f(x, X)), X * 2)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(x)


def test_donation_that_cannot_be_honoured_is_reported():
    f = xlapy.jit(lambda x: lax.convert_element_type(x, np.int32), donate_argnums=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f.lower(X)
    assert any("no output has that shape and dtype" in str(w.message) for w in caught)


def test_nested_jit_inlines():
    inner = xlapy.jit(lambda x: lax.mul(x, 2.0))
    outer = xlapy.jit(lambda x: lax.add(inner(x), 1.0))
    np.testing.assert_array_equal(np.asarray(outer(X)), X * 2 + 1)
    assert inner.compile_count == 0


def test_non_array_result_is_a_compile_error():
    with pytest.raises(xlapy.CompileError, match="not an array"):
        xlapy.jit(lambda x: "text")(X)


def test_every_traced_instruction_points_at_the_users_code():
    import xlapy.numpy as xnp

    def f(x, w):
        h = xnp.tanh(x @ w + 1.0)
        return lax.fori_loop(0, 2, lambda i, v: v * 2.0, h).sum(), h

    module = xlapy.jit(f).lower(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)).module
    for computation in module.computations:
        for instruction in computation.instructions:
            if instruction.opcode is Opcode.PARAMETER:
                continue
            metadata = instruction.attrs.get("metadata")
            assert metadata is not None, instruction.name
            assert metadata.get("source_file") == __file__, instruction.name


def test_a_fifth_compile_warns_once_with_every_cache_miss():
    """As XLA's and JAX's users ask: a function that keeps recompiling says so,
    naming each argument that changed, old and new, and where it was called."""
    f = xlapy.jit(lambda x, scale: lax.mul(x, scale), static_argnums=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 5):
            f(np.ones(n, np.float32), 2.0)
        assert not caught                                   # four compiles: quiet
        f(np.ones(4, np.float32), 3.0)                      # the fifth: one warning
        for n in range(5, 9):
            f(np.ones(n, np.float32), 3.0)                  # and no more
    (warning,) = [w for w in caught if issubclass(w.category, xlapy.RecompileWarning)]
    text = str(warning.message)
    assert "has compiled 5 times" in text and warning.filename == __file__
    for miss in ("argument x: f32[1] -> f32[2]", "argument x: f32[3] -> f32[4]",
                 "static argument scale: 2.0 -> 3.0"):
        assert miss in text
    assert f.compile_count == 9 and len(f.cache_misses) == 8


def test_the_librarys_own_compiled_functions_never_warn_of_recompiles():
    """xlapy.random's eager samplers compile once per shape asked for: their
    recompiles are recorded, never warned, even with --xlapy_explain_cache_misses."""
    f = JitFunction(lambda x: lax.mul(x, x), warn_recompiles=False)
    with flags_set("--xlapy_explain_cache_misses"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 8):
            f(np.ones(n, np.float32))
    assert not [w for w in caught if issubclass(w.category, xlapy.RecompileWarning)]
    assert f.compile_count == 7 and len(f.cache_misses) == 6


def test_explain_cache_misses_warns_at_every_miss_against_the_closest_signature():
    f = xlapy.jit(lambda x, y: lax.add(x, lax.convert_element_type(y, x.dtype)))
    a, b = np.ones(3, np.float32), np.ones(4, np.float32)
    with flags_set("--xlapy_explain_cache_misses"), \
            warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f(a, a)
        f(b, b)                                  # both arguments changed
        f(a, a.astype(np.int32))                 # closest: the first call, one change
    texts = [str(w.message) for w in caught if issubclass(w.category, xlapy.RecompileWarning)]
    assert len(texts) == 2
    assert "argument x: f32[3] -> f32[4]; argument y: f32[3] -> f32[4]" in texts[0]
    assert "compile 2" in texts[0] and "test_jit.py" in texts[0]
    assert texts[1].endswith("because argument y: f32[3] -> s32[3]")
