"""custom_vjp and custom_jvp: user-written derivative rules used in both modes,
eagerly and under jit, with JAX's conventions (nondiff_argnums first, None for
a zero subtree, forward mode refused for custom_vjp)."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import xlapy
import xlapy.numpy as xnp
from tests.autodiff.api_helpers import WRAPS, close, f64, pullback_of
from xlapy.errors import CompileError


# -- custom_vjp ----------------------------------------------------------------------------
@xlapy.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return (None, None, xnp.clip(g, lo, hi))


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


@xlapy.custom_vjp
def log1pexp(x):
    return xnp.log(1.0 + xnp.exp(x))


def _log1pexp_fwd(x):
    return log1pexp(x), x


def _log1pexp_bwd(x, g):
    return (g * (1 - 1 / (1 + xnp.exp(x))),)


log1pexp.defvjp(_log1pexp_fwd, _log1pexp_bwd)


@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_vjp_clip_gradient(wrap):
    def f(x):
        return clip_gradient(-0.75, 0.75, xnp.sin(x))

    close(f(f64(2.0)), np.sin(2.0))
    close(wrap(xlapy.grad(f))(f64(2.0)), 0.75 * np.cos(2.0))
    # bwd clips the incoming cotangent 3 to 0.75
    close(wrap(xlapy.grad(lambda x: 3 * f(x)))(f64(2.0)), 0.75 * np.cos(2.0))
    # grad(grad): the backward pass is differentiated as written
    close(wrap(xlapy.grad(xlapy.grad(f)))(f64(2.0)), -0.75 * np.sin(2.0))


@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_vjp_log1pexp_is_stable(wrap):
    naive = xlapy.grad(lambda x: xnp.log(1.0 + xnp.exp(x)))(f64(1000.0))
    assert np.isnan(np.asarray(naive))  # exp overflows: inf / inf
    close(wrap(xlapy.grad(log1pexp))(f64(1000.0)), 1.0)
    close(wrap(xlapy.grad(log1pexp))(f64(0.5)), 1 / (1 + np.exp(-0.5)))
    s = 1 / (1 + np.exp(-1.0))
    close(wrap(xlapy.grad(xlapy.grad(log1pexp)))(f64(1.0)), s * (1 - s))
    (ct,) = wrap(pullback_of(log1pexp))(np.array([0.0, 1000.0]), np.array([2.0, 1.0]))
    close(ct, [1.0, 1.0])
    with pytest.raises(TypeError, match="custom_vjp"):  # forward mode is refused, as JAX
        xlapy.jvp(log1pexp, (f64(1.0),), (f64(1.0),))


@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_vjp_nondiff_argnums(wrap):
    @functools.partial(xlapy.custom_vjp, nondiff_argnums=(0,))
    def apply(f, x):
        return f(x)

    def fwd(f, x):
        return f(x), x

    def bwd(f, x, g):  # nondiff arguments come first, as in JAX
        return (g * 5 * x,)

    apply.defvjp(fwd, bwd)
    close(apply(lambda y: y * 2, f64(3.0)), 6.0)
    close(wrap(xlapy.grad(lambda x: apply(lambda y: y * 2, x)))(f64(3.0)), 15.0)


@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_vjp_pytree_arguments_with_none(wrap):
    @xlapy.custom_vjp
    def f(p, y):
        return p["a"] * p["b"] * y

    def fwd(p, y):
        return f(p, y), (p, y)

    def bwd(res, g):
        p, y = res
        return ({"a": g * p["b"] * y, "b": None}, None)  # None: zero for a subtree

    f.defvjp(fwd, bwd)
    g = wrap(xlapy.grad(f, argnums=(0, 1)))({"a": f64(2.0), "b": f64(3.0)}, f64(4.0))
    close(g[0]["a"], 12.0)
    close(g[0]["b"], 0.0)
    close(g[1], 0.0)


def test_custom_vjp_bad_bwd_output():
    @xlapy.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, None), lambda r, g: (g,))
    with pytest.raises(CompileError, match="2 differentiable arguments"):
        xlapy.grad(f)(f64(1.0), f64(2.0))
    f.defvjp(lambda x, y: (x * y, None), lambda r, g: g)
    with pytest.raises(CompileError, match="tuple"):
        xlapy.grad(f)(f64(1.0), f64(2.0))


# -- custom_jvp ----------------------------------------------------------------------------
@xlapy.custom_jvp
def sin_times(x, y):
    return xnp.sin(x) * y


@sin_times.defjvp
def _sin_times_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return sin_times(x, y), xnp.cos(x) * x_dot * y + xnp.sin(x) * y_dot


@xlapy.custom_jvp
def safe_log1pexp(x):
    return xnp.log(1.0 + xnp.exp(x))


safe_log1pexp.defjvps(lambda t, ans, x: (1 - 1 / (1 + xnp.exp(x))) * t)


@xlapy.custom_jvp
def sin_times_jvps(x, y):
    return xnp.sin(x) * y


sin_times_jvps.defjvps(lambda x_dot, ans, x, y: xnp.cos(x) * x_dot * y,
                       lambda y_dot, ans, x, y: xnp.sin(x) * y_dot)


@pytest.mark.parametrize("fn", [sin_times, sin_times_jvps], ids=["defjvp", "defjvps"])
@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_jvp_forward_and_reverse(fn, wrap):
    x, y = np.array([0.5, 2.0]), np.array([3.0, -1.0])
    tx, ty = np.array([1.0, 0.5]), np.array([0.0, 2.0])
    out, t = wrap(lambda *a: xlapy.jvp(fn, a[:2], a[2:]))(x, y, tx, ty)
    close(out, np.sin(x) * y)
    close(t, np.cos(x) * tx * y + np.sin(x) * ty)
    # reverse mode transposes the rule
    cx, cy = wrap(pullback_of(fn))(x, y, np.array([1.0, 2.0]))
    close(cx, np.cos(x) * y * [1.0, 2.0])
    close(cy, np.sin(x) * [1.0, 2.0])
    gx = wrap(xlapy.grad(lambda x: fn(x, f64(3.0))))(f64(0.5))
    close(gx, 3 * np.cos(0.5))


def test_custom_jvp_rule_is_used():
    @xlapy.custom_jvp
    def f(x):
        return x * x

    f.defjvp(lambda primals, tangents: (f(*primals), tangents[0] * 100.0))
    close(xlapy.jvp(f, (f64(2.0),), (f64(1.0),))[1], 100.0)
    close(xlapy.grad(f)(f64(2.0)), 100.0)
    close(xlapy.jit(xlapy.grad(f))(f64(2.0)), 100.0)
    close(f(f64(3.0)), 9.0)


@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_jvp_log1pexp(wrap):
    close(wrap(xlapy.grad(safe_log1pexp))(f64(1000.0)), 1.0)
    s = 1 / (1 + np.exp(-1.0))
    close(wrap(xlapy.grad(xlapy.grad(safe_log1pexp)))(f64(1.0)), s * (1 - s))
    close(wrap(xlapy.grad(xlapy.grad(sin_times)))(f64(2.0), f64(3.0)), -3 * np.sin(2.0))


@pytest.mark.parametrize("wrap", WRAPS)
def test_custom_jvp_nondiff_argnums(wrap):
    @functools.partial(xlapy.custom_jvp, nondiff_argnums=(0,))
    def power(n, x):
        return x ** n

    @power.defjvp
    def power_jvp(n, primals, tangents):  # nondiff arguments come first, as in JAX
        (x,), (t,) = primals, tangents
        return power(n, x), n * x ** (n - 1) * t

    close(wrap(lambda x: xlapy.jvp(lambda x: power(3, x), (x,), (f64(1.0),))[1])(f64(2.0)), 12.0)
    close(wrap(xlapy.grad(lambda x: power(3, x)))(f64(2.0)), 12.0)
    with pytest.raises(TypeError, match="nondiff_argnums"):
        power.defjvps(lambda t, ans, x: t)
