"""What the CPU backend's calling convention must get right, whatever the
kernels: layouts of parameters and results, tuple parameters and results,
results that are parameters or constants, zero-size arrays, scalars,
donated parameters, several threads running one executable, arguments of
the wrong shape or type, arrays big enough for the parallel path, and one
foreign call per execution."""

import os
import subprocess
import sys
import threading
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import xlapy
from xlapy.backends.cpu.options import CpuOptions
from xlapy.backends.cpu.parallel import worth_parallelising
from xlapy.errors import ExecutionError
from xlapy.fuzz.compare import assert_matches
from xlapy.hlo import parse

REPO = Path(__file__).resolve().parents[3]


def module(body: str, header: str = "", computations: str = "") -> str:
    return f"HloModule m{header}\n{computations}\nENTRY main {{\n{body}\n}}\n"


def check(text: str, *args) -> list:
    """Interpreter and CPU agree on `text`; the CPU results."""
    parsed = parse(text)
    expected = xlapy.execute(parsed, list(args), backend="interpreter")
    executable = xlapy.compile(parsed, backend="cpu")
    assert not executable.fallbacks, [i.name for i in executable.fallbacks]
    actual = executable.execute(*args)
    assert_matches(expected, actual, text)
    return actual


def normal(*dims, seed=0, dtype=np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(dims).astype(dtype)


ADD = """
add {
  add_a = f32[] parameter(0)
  add_b = f32[] parameter(1)
  ROOT add_c = f32[] add(add_a, add_b)
}
"""

# -- layouts --------------------------------------------------------------------------------
LAYOUTS = {
    "column_major_in": "p = f32[3,4]{0,1} parameter(0)\n  ROOT r = f32[3,4]{1,0} negate(p)",
    "column_major_out": "p = f32[3,4]{1,0} parameter(0)\n  ROOT r = f32[3,4]{0,1} negate(p)",
    "column_major_copy": "p = f32[3,4]{0,1} parameter(0)\n  ROOT r = f32[3,4]{0,1} copy(p)",
    "layout_changing_copy":
        "p = f32[3,4]{0,1} parameter(0)\n  ROOT r = f32[3,4]{1,0} copy(p)",
    "rank3_transpose": "p = f32[2,3,4]{0,2,1} parameter(0)\n"
                       "  ROOT r = f32[4,2,3]{1,0,2} transpose(p), dimensions={2,0,1}",
    "reduce_and_parameter_result":
        "p = f32[3,4]{0,1} parameter(0)\n  z = f32[] constant(0)\n"
        "  s = f32[3]{0} reduce(p, z), dimensions={1}, to_apply=add\n"
        "  ROOT t = (f32[3]{0}, f32[3,4]{0,1}) tuple(s, p)",
    "dot": "a = f32[3,4]{0,1} parameter(0)\n  b = f32[4,2]{1,0} parameter(1)\n"
           "  ROOT d = f32[3,2]{0,1} dot(a, b), lhs_contracting_dims={1}, "
           "rhs_contracting_dims={0}",
}


@pytest.mark.parametrize("body", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_non_row_major_layouts(body):
    text = module(body, computations=ADD)
    args = [normal(*p.shape.dimensions, seed=i)
            for i, p in enumerate(parse(text).entry_computation.parameters)]
    check(text, *args)


# -- tuples ---------------------------------------------------------------------------------
def test_tuple_parameter_and_tuple_result():
    text = module("p = (f32[2,3], s32[3]) parameter(0)\n"
                  "  a = f32[2,3] get-tuple-element(p), index=0\n"
                  "  b = s32[3] get-tuple-element(p), index=1\n"
                  "  n = f32[2,3] negate(a)\n"
                  "  ROOT t = (s32[3], f32[2,3]) tuple(b, n)")
    b, n = check(text, (normal(2, 3), np.arange(3, dtype=np.int32)))
    np.testing.assert_array_equal(b, [0, 1, 2])


def test_nested_tuple_parameter():
    text = module("p = ((f32[2], f32[]), s32[2]) parameter(0)\n"
                  "  i = (f32[2], f32[]) get-tuple-element(p), index=0\n"
                  "  v = f32[2] get-tuple-element(i), index=0\n"
                  "  s = f32[] get-tuple-element(i), index=1\n"
                  "  sb = f32[2] broadcast(s), dimensions={}\n"
                  "  ROOT r = f32[2] multiply(v, sb)")
    (r,) = check(text, ((np.float32([1, 2]), np.float32(3)), np.int32([5, 6])))
    np.testing.assert_array_equal(r, [3, 6])


NESTED_ROOT = module("p = f32[2] parameter(0)\n"
                     "  n = f32[2] negate(p)\n"
                     "  t = (f32[2], f32[2]) tuple(n, p)\n"
                     "  ROOT out = ((f32[2], f32[2]), f32[2]) tuple(t, n)")


def test_nested_tuple_result_keeps_its_structure():
    (inner, n) = check(NESTED_ROOT, np.float32([1, 2]))
    assert isinstance(inner, tuple)


# -- results that are parameters or constants -----------------------------------------------
PASS_THROUGH = {
    "parameter": "ROOT p = f32[2,3] parameter(0)",
    "parameter_twice": "p = f32[2,3] parameter(0)\n  ROOT t = (f32[2,3], f32[2,3]) tuple(p, p)",
    "constant": "p = f32[2,3] parameter(0)\n  ROOT c = f32[2] constant({7, 8})",
    "constant_twice": "p = f32[2,3] parameter(0)\n  c = s32[] constant(5)\n"
                      "  ROOT t = (s32[], f32[2,3], s32[]) tuple(c, p, c)",
    "computed_twice": "p = f32[2,3] parameter(0)\n  n = f32[2,3] negate(p)\n"
                      "  ROOT t = (f32[2,3], f32[2,3], f32[2,3]) tuple(n, p, n)",
}


@pytest.mark.parametrize("body", PASS_THROUGH.values(), ids=PASS_THROUGH.keys())
def test_results_that_are_parameters_or_constants(body):
    x = normal(2, 3)
    results = check(module(body), x)
    x_copy = x.copy()
    for r in results:  # results are the caller's to keep: never views of the argument
        r[...] = 0
    np.testing.assert_array_equal(x, x_copy)


RESHAPED_PARAMETER = module("p = f32[2,1] parameter(0)\n"
                            "  r = f32[1,2] reshape(p)\n"
                            "  ROOT t = (f32[1,2], f32[2,1]) tuple(r, p)")


def test_result_that_is_a_reshaped_parameter():
    check(RESHAPED_PARAMETER, np.float32([[1], [2]]))


# -- zero-size arrays and scalars -----------------------------------------------------------
ZERO_SIZE = {
    "elementwise": "p = f32[0] parameter(0)\n  ROOT r = f32[0] exponential(p)",
    "reduce_to_init": "p = f32[3,0] parameter(0)\n  z = f32[] constant(0)\n"
                      "  ROOT r = f32[3] reduce(p, z), dimensions={1}, to_apply=add",
    "dot_of_empty_contraction":
        "p = f32[3,0] parameter(0)\n  q = f32[0,2] parameter(1)\n"
        "  ROOT d = f32[3,2] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
    "concatenate": "p = f32[3,0] parameter(0)\n  q = f32[3,2] parameter(1)\n"
                   "  ROOT c = f32[3,2] concatenate(p, q), dimensions={1}",
    "pad_of_empty": "p = f32[0,2] parameter(0)\n  z = f32[] constant(5)\n"
                    "  ROOT r = f32[2,2] pad(p, z), padding=1_1x0_0",
    "in_a_tuple": "p = f32[3,0] parameter(0)\n  q = f32[2] parameter(1)\n"
                  "  n = f32[3,0] negate(p)\n  ROOT t = (f32[3,0], f32[2]) tuple(n, q)",
    "empty_slice": "p = f32[4] parameter(0)\n  ROOT s = f32[0] slice(p), slice={[2:2]}",
}


@pytest.mark.parametrize("body", ZERO_SIZE.values(), ids=ZERO_SIZE.keys())
def test_zero_size_arrays(body):
    text = module(body, computations=ADD)
    args = [normal(*p.shape.dimensions, seed=i)
            for i, p in enumerate(parse(text).entry_computation.parameters)]
    check(text, *args)


def test_scalars():
    text = module("a = f32[] parameter(0)\n  b = s32[] parameter(1)\n"
                  "  c = pred[] parameter(2)\n  bf = f32[] convert(b)\n"
                  "  s = f32[] add(a, bf)\n  n = f32[] negate(s)\n"
                  "  m = f32[] select(c, s, n)\n  nc = pred[] not(c)\n"
                  "  ROOT t = (f32[], pred[], s32[]) tuple(m, nc, b)")
    m, nc, b = check(text, np.float32(1.5), np.int32(2), np.bool_(False))
    assert m.shape == () and m == -3.5 and nc and b == 2


@pytest.mark.parametrize("t, dtype", [
    ("s8", np.int8), ("u8", np.uint8), ("s16", np.int16), ("u16", np.uint16),
    ("s64", np.int64), ("u64", np.uint64), ("f16", np.float16), ("bf16", ml_dtypes.bfloat16),
    ("f64", np.float64), ("pred", np.bool_)])
def test_element_types_round_trip(t, dtype):
    text = module(f"p = {t}[5] parameter(0)\n  r = {t}[5] reverse(p), dimensions={{0}}\n"
                  f"  ROOT t = ({t}[5], {t}[5]) tuple(r, p)")
    x = (np.arange(5) % 2 == 0) if dtype is np.bool_ else np.arange(5).astype(dtype)
    r, p = check(text, x)
    np.testing.assert_array_equal(r, x[::-1])


UNALIGNED = module("a = f32[67,65] parameter(0)\n  b = f32[65,66] parameter(1)\n"
                   "  d = f32[67,66] dot(a, b), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={0}\n"
                   "  e = f32[67,65] exponential(a)\n  z = f32[] constant(0)\n"
                   "  s = f32[67] reduce(e, z), dimensions={1}, to_apply=add\n"
                   "  ROOT t = (f32[67,66], f32[67]) tuple(d, s)", computations=ADD)


@pytest.mark.parametrize("offset", [4, 8, 12, 32])
def test_parameters_at_any_element_aligned_address(offset):
    """NumPy hands over arrays aligned to their element only (a view into a
    buffer, an array from bytes): kernels may not assume more."""
    args = []
    for i, shape in enumerate([(67, 65), (65, 66)]):
        value = normal(*shape, seed=i)
        raw = np.empty(value.nbytes + 128, np.uint8)
        start = (-raw.ctypes.data) % 64 + offset
        view = raw[start:start + value.nbytes].view(np.float32).reshape(shape)
        view[...] = value
        args.append(view)
    check(UNALIGNED, *args)


# -- donation -------------------------------------------------------------------------------
DONATED = ("p = f32[6] parameter(0)\n  q = f32[6] parameter(1)\n"
           "  r = f32[6] reverse(p), dimensions={0}\n  s = f32[6] add(r, q)\n"
           "  ROOT t = (f32[6], f32[6]) tuple(s, q)")


@pytest.mark.parametrize("alias", ["{ {0}: (0, {}, may-alias) }",
                                   "{ {0}: (0, {}, must-alias), {1}: (1, {}, may-alias) }"])
def test_donated_parameters(alias):
    """An output written over its donated parameter is still computed from the
    parameter's old values (here reversed, so in place would be wrong)."""
    text = module(DONATED, header=f", input_output_alias={alias}")
    p, q = np.arange(6, dtype=np.float32), np.ones(6, np.float32)
    s, q_out = check(text, p.copy(), q.copy())
    np.testing.assert_array_equal(s, p[::-1] + 1)
    np.testing.assert_array_equal(q_out, q)


def test_donated_parameter_over_repeated_executions():
    """The root itself is donated: each execution may write over its argument
    (it was given away) but returns the right values."""
    text = module("p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)",
                  header=", input_output_alias={ {}: (0, {}, may-alias) }")
    executable = xlapy.compile(parse(text), backend="cpu")
    for i in range(1, 4):
        x = np.full(8, i, np.float32)
        np.testing.assert_array_equal(executable.execute(x)[0], np.full(8, -i, np.float32))


# -- threads --------------------------------------------------------------------------------
THREADED = module("p = f32[128,128] parameter(0)\n  z = f32[] constant(0)\n"
                  "  e = f32[128,128] exponential(p)\n"
                  "  s = f32[128] reduce(e, z), dimensions={1}, to_apply=add\n"
                  "  b = f32[128,128] broadcast(s), dimensions={0}\n"
                  "  d = f32[128,128] divide(e, b)\n"
                  "  m = f32[128,128] dot(d, p), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={0}\n"
                  "  ROOT t = (f32[128,128], f32[128]) tuple(m, s)", computations=ADD)


def test_one_executable_from_two_threads():
    """Concurrent executions get their own temporaries: every result is right,
    and the executions did overlap."""
    executable = xlapy.compile(parse(THREADED), backend="cpu")
    inputs = [normal(128, 128, seed=i) * 0.1 for i in range(6)]
    expected = [executable.execute(x) for x in inputs]
    failures, overlaps = [], []
    reentrant = executable._reentrant

    def counting(args):
        overlaps.append(1)
        return reentrant(args)

    executable._reentrant = counting

    def work(offset):
        k = 0
        while k < 40 or (not overlaps and k < 4000):   # fast calls rarely collide: keep on
            i = (k + offset) % len(inputs)
            k += 1
            got = executable.execute(inputs[i])
            if not all(np.array_equal(g, e) for g, e in zip(got, expected[i])):
                failures.append(i)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert overlaps


# -- argument checks ------------------------------------------------------------------------
ARGUMENTS = module("p = f32[2,3] parameter(0)\n  q = (s32[], f32[2]) parameter(1)\n"
                   "  a = s32[] get-tuple-element(q), index=0\n"
                   "  ROOT r = (f32[2,3], s32[]) tuple(p, a)")
GOOD = (np.zeros((2, 3), np.float32), (np.int32(1), np.zeros(2, np.float32)))


WRONG = {
    "dimensions": (np.zeros((3, 2), np.float32), GOOD[1]),
    "dtype": (np.zeros((2, 3), np.float64), GOOD[1]),
    "rank": (np.zeros(6, np.float32), GOOD[1]),
    "too_few": (GOOD[0],),
    "too_many": (*GOOD, GOOD[0]),
    "short_tuple": (GOOD[0], (np.int32(1),)),
    "tuple_leaf_dtype": (GOOD[0], (np.int64(1), np.zeros(2, np.float32))),
    "array_for_a_tuple": (GOOD[0], np.zeros(2, np.float32)),
}


@pytest.mark.parametrize("args", WRONG.values(), ids=WRONG.keys())
def test_wrong_arguments_raise(args):
    executable = xlapy.compile(parse(ARGUMENTS), backend="cpu")
    with pytest.raises(ExecutionError):
        executable.execute(*args)
    r, a = executable.execute(*GOOD)  # and the executable still works
    assert a == 1


def test_python_values_are_converted():
    text = module("p = f32[2,2] parameter(0)\n  s = s32[] parameter(1)\n"
                  "  f = f32[] convert(s)\n  b = f32[2,2] broadcast(f), dimensions={}\n"
                  "  ROOT r = f32[2,2] add(p, b)")
    (r,) = xlapy.compile(parse(text), backend="cpu").execute([[1, 2], [3, 4]], 10)
    np.testing.assert_array_equal(r, [[11, 12], [13, 14]])
    assert r.dtype == np.float32


# -- the parallel path ----------------------------------------------------------------------
def test_large_arrays_take_the_parallel_path_correctly():
    n = 1 << 22
    text = module(f"p = f32[{n}] parameter(0)\n  q = f32[{n}] parameter(1)\n"
                  f"  m = f32[{n}] multiply(p, q)\n  a = f32[{n}] add(m, p)\n"
                  f"  r = f32[1024,4096] reshape(a)\n  z = f32[] constant(0)\n"
                  f"  s = f32[1024] reduce(r, z), dimensions={{1}}, to_apply=add\n"
                  f"  c = f32[4096] reduce(r, z), dimensions={{0}}, to_apply=add\n"
                  f"  ROOT t = (f32[{n}], f32[1024], f32[4096]) tuple(a, s, c)",
                  computations=ADD)
    if CpuOptions.from_flags().threads > 1:  # the size is one the cost model splits
        assert worth_parallelising(n, CpuOptions.from_flags().threads) > 1
    p, q = normal(n), normal(n, seed=1)
    a, s, c = xlapy.compile(parse(text), backend="cpu").execute(p, q)
    expected = p * q + p
    np.testing.assert_array_equal(a, expected)
    wide = expected.astype(np.float64).reshape(1024, 4096)
    np.testing.assert_allclose(s, wide.sum(1), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(c, wide.sum(0), rtol=1e-4, atol=1e-3)


# -- the on-disk cache ----------------------------------------------------------------------
CACHED_DOT = """
import numpy as np, xlapy
text = ("HloModule m\\nENTRY main {\\n  a = f32[3,2] parameter(0)\\n"
        "  b = f32[3,4] parameter(1)\\n  ROOT d = f32[2,4] dot(a, b), "
        "lhs_contracting_dims={0}, rhs_contracting_dims={0}\\n}")
(d,) = xlapy.execute(text, [np.ones((3, 2), np.float32), np.ones((3, 4), np.float32)],
                     backend="cpu")
assert (d == 3).all(), d
"""


def test_a_cached_compilation_runs_in_a_fresh_process(tmp_path):
    """A module calling the runtime GEMM, read from the cache by a process that
    never compiled a dot, still finds the GEMM (it segfaulted once)."""
    env = dict(os.environ, XLAPY_FLAGS=f"--xlapy_cpu_cache_dir={tmp_path}",
               PYTHONPATH=str(REPO))
    for run in ("compiles and stores", "loads from the cache"):
        result = subprocess.run([sys.executable, "-c", CACHED_DOT], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"{run}: {result.returncode} {result.stderr[-2000:]}"


# -- one foreign call -----------------------------------------------------------------------
def test_one_execution_is_one_foreign_call():
    text = module("p = f32[16] parameter(0)\n  e = f32[16] exponential(p)\n"
                  "  z = f32[] constant(0)\n"
                  "  s = f32[] reduce(e, z), dimensions={0}, to_apply=add\n"
                  "  b = f32[16] broadcast(s), dimensions={}\n"
                  "  ROOT t = (f32[16], f32[]) tuple(b, s)", computations=ADD)
    executable = xlapy.compile(parse(text), backend="cpu")
    assert not executable.fallbacks
    calls = []
    entry = executable._entry

    def counting(*args):
        calls.append(args)
        return entry(*args)

    executable._entry = counting
    executable.execute(normal(16))
    executable.execute(normal(16, seed=1))
    assert len(calls) == 2
