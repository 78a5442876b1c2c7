"""vjp_module / jvp_module on modules parsed from text, as XLA and JAX write them.

Each derivative module runs in the interpreter and is checked against central
finite differences of the source module (also run in the interpreter), in
float64 where the module allows, with the dot-product test between the two.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import xlapy
from xlapy import hlo
from xlapy.autodiff import jvp_module, vjp_module
from xlapy.errors import CompileError

CORPUS = Path(__file__).parent.parent / "hlo" / "corpus"

TANH_MUL = """HloModule m
ENTRY main {
  x = f64[3] parameter(0)
  y = f64[3] parameter(1)
  t = f64[3] tanh(x)
  ROOT m = f64[3] multiply(t, y)
}"""


def _run(module, args):
    return xlapy.execute(module, list(args), backend="interpreter")


def _float_params(module):
    return [i for i, p in enumerate(module.entry_computation.parameters)
            if not p.shape.is_tuple and p.shape.dtype.kind == "f"]


def _random_args(module, rng):
    args = []
    for p in sorted(module.entry_computation.parameters, key=lambda p: p.parameter_number):
        dtype, dims = p.shape.dtype, p.shape.dimensions
        if dtype.kind == "f":
            args.append((rng.standard_normal(dims) * 0.5).astype(dtype))
        elif dtype == np.bool_:
            args.append(rng.random(dims) > 0.5)
        else:
            args.append(rng.integers(0, 3, dims).astype(dtype))
    return args


def _check_module(module, rng, eps, tol):
    args = _random_args(module, rng)
    wrt = _float_params(module)
    outs = _run(module, args)
    vjp, jvp = vjp_module(module), jvp_module(module)
    hlo.verify(vjp)
    hlo.verify(jvp)
    v = [rng.standard_normal(args[i].shape).astype(args[i].dtype) for i in wrt]
    u = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) for o in outs]
    float_outs = [k for k, o in enumerate(outs) if np.asarray(o).dtype.kind == "f"]

    def moved(sign):
        shifted = list(args)
        for i, d in zip(wrt, v):
            shifted[i] = (args[i] + sign * eps * d).astype(args[i].dtype)
        return _run(module, shifted)

    plus, minus = moved(+1), moved(-1)
    fd = [(np.asarray(plus[k], np.float64) - np.asarray(minus[k], np.float64)) / (2 * eps)
          for k in float_outs]
    tangents = _run(jvp, args + v)[len(outs):]
    for t, d in zip(tangents, fd):
        np.testing.assert_allclose(t, d, rtol=tol, atol=tol * (1 + np.max(np.abs(d))))
    grads = _run(vjp, args + u)[len(outs):]
    lhs = sum(float(np.vdot(a, b)) for a, b in zip(v, grads))
    rhs = sum(float(np.vdot(u[k], d)) for k, d in zip(float_outs, fd))
    assert abs(lhs - rhs) <= tol * 10 * (1 + abs(rhs))
    jv_u = sum(float(np.vdot(u[k], t)) for k, t in zip(float_outs, tangents))
    assert abs(jv_u - lhs) <= 1e-4 * (1 + abs(lhs))


def test_vjp_module_of_a_parsed_module():
    module = hlo.parse(TANH_MUL)
    x, y, ct = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0]), np.ones(3)
    out, gx, gy = _run(vjp_module(module), [x, y, ct])
    np.testing.assert_allclose(out, np.tanh(x) * y)
    np.testing.assert_allclose(gx, (1 - np.tanh(x) ** 2) * y)
    np.testing.assert_allclose(gy, np.tanh(x))
    assert module == hlo.parse(TANH_MUL), "the source module must not change"


def test_jvp_module_of_a_parsed_module():
    module = hlo.parse(TANH_MUL)
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    out, t = _run(jvp_module(module, wrt=[0]), [x, y, np.ones(3)])
    np.testing.assert_allclose(t, (1 - np.tanh(x) ** 2) * y)


def test_wrt_must_name_a_float_parameter():
    module = hlo.parse(TANH_MUL.replace("y = f64[3]", "y = s32[3]").replace(
        "multiply(t, y)", "multiply(t, t)"))
    with pytest.raises(CompileError, match="parameter 1"):
        vjp_module(module, wrt=[1])
    with pytest.raises(CompileError, match="no parameter 5"):
        vjp_module(module, wrt=[5])


# JAX-lowered modules from the corpus whose derivatives the rules cover
CORPUS_MODULES = ["jax_mlp_relu.hlo", "jax_softmax.hlo", "jax_layernorm_frames.hlo",
                  "jax_conv2d_nhwc.hlo", "jax_lstm_scan.hlo",
                  "jax_pad_slice_concat.hlo", "jax_batched_matmul.hlo",
                  "jax_take_along_axis.hlo", "jax_switch.hlo", "jax_embedding_gather.hlo"]


@pytest.mark.parametrize("name", CORPUS_MODULES)
def test_derivatives_of_jax_lowered_modules(name):
    module = hlo.parse((CORPUS / name).read_text())
    _check_module(module, np.random.default_rng(0), eps=1e-2, tol=2e-2)


def test_derivative_of_the_seeds_mnist_train_step_module():
    """The real MNIST training step JAX wrote differentiates again (second order)."""
    module = hlo.parse((CORPUS / "jax_mnist_train_step.hlo").read_text())
    _check_module(module, np.random.default_rng(1), eps=1e-2, tol=3e-2)


def test_a_loop_with_a_traced_trip_count_runs_forward_but_not_in_reverse():
    """jax_fori_loop.hlo loops `n` times, n a parameter: reverse mode cannot know how
    many carries to keep (JAX refuses too); forward mode needs no trip count."""
    module = hlo.parse((CORPUS / "jax_fori_loop.hlo").read_text())
    with pytest.raises(CompileError, match="trip count"):
        vjp_module(module)
    n, x = np.int32(4), np.array([0.5, -1.0, 2.0], np.float32)
    outs = _run(module, [n, x])
    jvp_outs = _run(jvp_module(module), [n, x, np.ones(3, np.float32)])
    for a, b in zip(outs, jvp_outs):
        np.testing.assert_array_equal(a, b)
    assert len(jvp_outs) == len(outs) + sum(np.asarray(o).dtype.kind == "f" for o in outs)
