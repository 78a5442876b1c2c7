"""The GPU backend without a GPU: every module compiles to PTX that ptxas accepts,
and the same program, its kernels compiled for the host (`emulate`), computes
what the interpreter computes.

Modules: the HLO corpus in tests/hlo/corpus and a slice of the random-program
generator the CPU backend is fuzzed with (`xlapy fuzz hlo`), plus kernels
chosen for the GPU's own emitters: row reductions (softmax, layernorm),
column reductions, GEMMs with their epilogue, control flow, scatter, sort and
random bits. An opcode the GPU does not compile must say so with its name.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xlapy
import xlapy.numpy as xnp
from benchmarks.gpu_suite import layernorm, softmax
from tests.hlo.corpus_cases import CASES
from tests.hlo.test_corpus import FILES, IDS
from xlapy import lax
from xlapy.backends import get_backend
from xlapy.backends.gpu import compiler, driver, reductions
from xlapy.backends.gpu.thunks import GemmThunk, KernelThunk, kernels_of
from xlapy.codegen import nvptx
from xlapy.errors import CompileError
from xlapy.flags import parse_flags
from xlapy.fuzz.compare import mismatch
from xlapy.fuzz.hlo_programs import arguments, random_program
from xlapy.hlo import parse

PROGRAMS = range(0, 96)
"""CI's slice of the random programs (the campaign in benchmarks runs more)."""
REFUSED_PROGRAMS = {32: "atan", 41: "cexp", 75: "acos", 92: "asinh"}
"""The programs of the slice the GPU refuses, and the call that makes it: complex
transcendental functions, which the emitter computes through the host's C library.
Every other program must compile."""
needs_ptxas = pytest.mark.skipif(nvptx.ptxas() is None, reason="ptxas (CUDA toolkit) absent")


def _compile(module):
    try:
        return get_backend("gpu").compile(module)
    except CompileError as e:
        assert "the GPU backend cannot compile" in str(e), str(e)
        pytest.skip(f"refused, with its reason: {str(e)[:160]}")


def _check_ptx(executable, arches=("sm_80",)):
    assert executable.ptx.count(".entry") == len(executable.program.kernels)
    if nvptx.ptxas() is not None:
        for arch in arches:
            ptx = executable.ptx if arch == executable.program.arch else \
                compiler.compile_program(executable.module,
                                         parse_flags(f"--xla_gpu_target={arch}")).ptx
            nvptx.check_with_ptxas(ptx, arch)


def _emulate_against_interpreter(module, args, executable=None):
    executable = executable or _compile(module)
    expected = get_backend("interpreter").compile(module).execute(*args)
    got = executable.emulate(*args)
    problem = mismatch(expected, got)
    assert problem is None, problem
    return executable


def _lowered(fn, *args):
    return xlapy.jit(fn).lower(*args).module


# -- the corpus and the random programs ------------------------------------------------
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_corpus_module_compiles_and_emulates(path):
    module = parse(path.read_text())
    executable = _compile(module)
    _check_ptx(executable, ("sm_80", "sm_90"))
    for case in CASES[path.name]:
        if case.check is None:
            _emulate_against_interpreter(module, list(case.inputs), executable)


@pytest.mark.parametrize("seed", PROGRAMS)
def test_random_program(seed):
    module = parse(random_program(seed))
    if seed in REFUSED_PROGRAMS:
        with pytest.raises(CompileError, match=REFUSED_PROGRAMS[seed]):
            get_backend("gpu").compile(module)
        return
    executable = get_backend("gpu").compile(module)
    _check_ptx(executable, ("sm_80", "sm_90") if seed % 8 == 0 else ("sm_80",))
    _emulate_against_interpreter(module, arguments(module, seed), executable)


# -- the reduction emitters ------------------------------------------------------------
@pytest.mark.parametrize("fn, most", [(softmax, 2), (layernorm, 3)],
                         ids=["softmax", "layernorm"])
def test_row_reductions_are_block_kernels_with_shuffles(fn, most):
    x = np.random.default_rng(0).standard_normal((37, 300)).astype(np.float32)
    executable = _emulate_against_interpreter(_lowered(fn, x), [x])
    kernels = kernels_of(executable.program.thunks)
    assert len(kernels) <= most
    assert any(k.launch.barriers for k in kernels)
    assert "shfl.sync.down" in executable.ptx and "bar.sync" in executable.ptx


def test_column_reduction_kernel():
    x = np.random.default_rng(1).standard_normal((500, 70)).astype(np.float32)
    executable = _emulate_against_interpreter(_lowered(lambda a: xnp.sum(a * 2.0, axis=0), x),
                                              [x])
    (kernel,) = kernels_of(executable.program.thunks)
    assert kernel.launch.barriers and kernel.launch.block == reductions.COLUMN_BLOCK


def test_reducer_without_identity_applies_init_once():
    text = """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { p = f32[4,100] parameter(0)  init = f32[] constant(10)
          ROOT r = f32[4] reduce(p, init), dimensions={1}, to_apply=add }"""
    x = np.ones((4, 100), np.float32)
    module = parse(text)
    executable = _emulate_against_interpreter(module, [x])
    assert np.allclose(executable.emulate(x)[0], 110.0)


@settings(max_examples=15, deadline=None)
@given(rows=st.integers(1, 70), cols=st.integers(1, 130), axis=st.sampled_from([0, 1, None]),
       op=st.sampled_from(["sum", "max", "min", "prod"]))
def test_reductions_of_any_shape(rows, cols, axis, op):
    x = np.random.default_rng(rows * 131 + cols).uniform(0.5, 1.5, (rows, cols)) \
        .astype(np.float32)
    fn = lambda a: getattr(xnp, op)(a, axis=axis)  # noqa: E731
    executable = _compile(_lowered(fn, x))
    got = executable.emulate(x)[0]
    np.testing.assert_allclose(got, getattr(np, op)(x, axis=axis), rtol=2e-5)


def test_argmax_variadic_row_reduction():
    x = np.random.default_rng(2).standard_normal((9, 257)).astype(np.float32)
    executable = _emulate_against_interpreter(_lowered(lambda a: xnp.argmax(a, axis=1), x), [x])
    assert "shfl.sync.down" in executable.ptx


# -- dots ------------------------------------------------------------------------------
def test_dot_is_a_gemm_and_its_epilogue_the_next_kernel():
    rng = np.random.default_rng(3)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((16, 32), (32, 8), (8,)))
    module = _lowered(lambda x, w, b: xnp.maximum(x @ w + b, 0.0), x, w, b)
    executable = _emulate_against_interpreter(module, [x, w, b])
    thunks = executable.program.thunks
    gemms = [t for t in thunks if isinstance(t, GemmThunk)]
    assert len(gemms) == 1 and (gemms[0].m, gemms[0].n, gemms[0].k) == (16, 8, 32)
    assert [type(t) for t in thunks] == [GemmThunk, KernelThunk]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_batched_and_transposed_gemm(dtype):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 10, 6)).astype(dtype)
    b = rng.standard_normal((3, 5, 6)).astype(dtype)
    module = _lowered(lambda a, b: lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,)))), a, b)
    executable = _emulate_against_interpreter(module, [a, b])
    (gemm,) = [t for t in executable.program.thunks if isinstance(t, GemmThunk)]
    assert (gemm.batch, gemm.m, gemm.n, gemm.k, gemm.trans_a, gemm.trans_b) == \
        (3, 10, 5, 6, False, True)


# -- control flow, scatter, sort, random bits -----------------------------------------
def test_while_loop_runs_its_thunks_until_the_predicate_is_false():
    def fn(x):
        return lax.fori_loop(0, 5, lambda i, v: v * 1.5 + i, x)
    x = np.arange(6, dtype=np.float32)
    _emulate_against_interpreter(_lowered(fn, x), [x])


def test_conditional_picks_its_branch():
    def fn(p, x):
        return lax.cond(p, lambda v: v + 1.0, lambda v: v * 3.0, x)
    x = np.arange(4, dtype=np.float32)
    module = _lowered(fn, np.bool_(True), x)
    for p in (True, False):
        _emulate_against_interpreter(module, [np.bool_(p), x])


def test_scatter_add_with_duplicate_indices():
    def fn(x, i, u):
        return x.at[i].add(u)
    x = np.zeros(6, np.float32)
    i = np.array([1, 1, 5, 9, 0], np.int32)
    u = np.arange(5, dtype=np.float32) + 1
    _emulate_against_interpreter(_lowered(fn, x, i, u), [x, i, u])


def test_sort_is_stable_per_row():
    keys = np.random.default_rng(5).integers(0, 4, (3, 40)).astype(np.int32)
    _emulate_against_interpreter(_lowered(lambda k: xnp.argsort(k, axis=1), keys), [keys])


def test_random_bits():
    key = xlapy.random.PRNGKey(0)
    module = _lowered(lambda k: xlapy.random.uniform(k, (5, 7)), key)
    _emulate_against_interpreter(module, [np.asarray(key)])


# -- what the user sees ----------------------------------------------------------------
def test_dumps_write_ptx_and_llvm_ir(tmp_path):
    x = np.ones((4, 8), np.float32)
    flags = parse_flags(f"--xla_dump_to={tmp_path}")
    compiler.compile_program(_lowered(softmax, x), flags)
    names = [p.name for p in tmp_path.iterdir()]
    assert any(n.endswith(".ptx") for n in names), names
    assert any(n.endswith(".ir-no-opt.ll") for n in names), names
    assert any(n.endswith("gpu_thunks.txt") for n in names), names
    ptx = next(p for p in tmp_path.iterdir() if p.name.endswith(".ptx")).read_text()
    assert ".target sm_80" in ptx


def test_target_flag():
    x = np.ones((4, 8), np.float32)
    module = _lowered(softmax, x)
    assert ".target sm_90" in compiler.compile_program(
        module, parse_flags("--xla_gpu_target=sm_90")).ptx
    with pytest.raises(CompileError, match="sm_12345"):
        compiler.compile_program(module, parse_flags("--xla_gpu_target=sm_12345"))


@pytest.mark.skipif(driver.available(), reason="checks the message of a machine without a GPU")
def test_running_without_a_gpu_says_what_is_missing():
    x = np.ones((4, 8), np.float32)
    executable = get_backend("gpu").compile(_lowered(softmax, x))
    with pytest.raises(driver.GpuUnavailable, match="compiled for the GPU"):
        executable.execute(x)
    with pytest.raises(driver.GpuUnavailable):
        xlapy.execute(_lowered(softmax, x), [x], backend="gpu")
    assert "gpu" not in xlapy.devices() and "gpu" in xlapy.available_backends()


def test_a_collective_is_refused_by_name():
    text = """HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e { p = f32[4] parameter(0)
          ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply=add }"""
    with pytest.raises(CompileError, match="cannot compile all-reduce: a collective"):
        get_backend("gpu").compile(parse(text))


def _mlp_step(w1, w2, x, labels):
    def loss(w1, w2):
        logits = xnp.maximum(x @ w1, 0.0) @ w2
        logp = logits - xnp.log(xnp.sum(xnp.exp(logits), axis=1, keepdims=True))
        return -xnp.mean(xnp.sum(logp * labels, axis=1))
    value, (g1, g2) = xlapy.value_and_grad(loss, argnums=(0, 1))(w1, w2)
    return w1 - 0.1 * g1, w2 - 0.1 * g2, value


def test_a_training_step_compiles_and_emulates():
    rng = np.random.default_rng(6)
    w1 = (rng.standard_normal((64, 32)) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((32, 10)) * 0.1).astype(np.float32)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 8)]
    module = _lowered(_mlp_step, w1, w2, x, labels)
    executable = _emulate_against_interpreter(module, [w1, w2, x, labels])
    _check_ptx(executable, ("sm_80", "sm_90"))
    assert sum(isinstance(t, GemmThunk) for t in executable.program.thunks) >= 3
