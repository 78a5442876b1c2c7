"""Checking derivatives numerically: central finite differences in float64 and
the dot-product test between forward and reverse mode.

For f: R^n -> R^m, random directions v (inputs) and u (output):
- forward mode:  jvp(f)(x, v) ≈ (f(x + εv) - f(x - εv)) / 2ε
- reverse mode:  ⟨v, vjp(f)(x)(u)⟩ ≈ ⟨u, (f(x + εv) - f(x - εv)) / 2ε⟩
- both agree:    ⟨jvp(f)(x, v), u⟩ = ⟨v, vjp(f)(x)(u)⟩ to rounding
Each is checked eagerly and under jit (which must agree with eager).
"""

from __future__ import annotations

import numpy as np

import xlapy


def _flat(out) -> list[np.ndarray]:
    if isinstance(out, (tuple, list)):
        return [np.asarray(o, dtype=np.float64) for o in out]
    return [np.asarray(out, dtype=np.float64)]


def _inner(a, b) -> float:
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64))
                     for x, y in zip(a, b)))


def _scale(a) -> float:
    return max(1.0, max((float(np.max(np.abs(x))) for x in a if np.size(x)), default=1.0))


def check_grads(f, args, *, eps: float = 1e-6, rtol: float = 1e-5, atol: float = 1e-7,
                modes=("fwd", "rev"), seed: int = 0, use_jit: bool = True,
                wrt: tuple[int, ...] | None = None) -> None:
    """Assert f's JVP and VJP at `args` (float64 arrays) match finite differences
    and each other. `wrt` selects the arguments differentiated (default: all
    floating-point ones); f returns an array or a tuple of arrays."""
    args = [np.asarray(a) for a in args]
    if wrt is None:
        wrt = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")
    rng = np.random.default_rng(seed)
    v = [rng.standard_normal(args[i].shape) for i in wrt]

    def f_wrt(*diff):
        full = list(args)
        for i, d in zip(wrt, diff):
            full[i] = d
        return f(*full)

    def shifted(sign):
        moved = [args[i] + sign * eps * d for i, d in zip(wrt, v)]
        return _flat(f_wrt(*moved))

    fd = [(p - m) / (2 * eps) for p, m in zip(shifted(+1), shifted(-1))]
    primal = [args[i] for i in wrt]
    out = _flat(f_wrt(*primal))
    u = [rng.standard_normal(o.shape) for o in out]
    tol = rtol * _scale(fd) * max(1, sum(np.size(x) for x in fd)) ** 0.5 + atol

    calls = [lambda fn: fn]
    if use_jit:
        calls.append(xlapy.jit)
    results = []
    for wrap in calls:
        got = {}
        if "fwd" in modes:
            def forward(*xs):
                return xlapy.jvp(f_wrt, tuple(xs[:len(wrt)]), tuple(xs[len(wrt):]))[1]
            tangent = _flat(wrap(forward)(*primal, *v))
            for t, d in zip(tangent, fd):
                np.testing.assert_allclose(t, d, rtol=rtol * 10, atol=tol,
                                           err_msg="JVP differs from finite differences")
            got["fwd"] = tangent
        if "rev" in modes:
            def reverse(*xs):
                out, pullback = xlapy.vjp(f_wrt, *xs[:len(wrt)])
                cts = xs[len(wrt):]
                return pullback(tuple(cts) if isinstance(out, (tuple, list)) else cts[0])
            cotangent = _flat(wrap(reverse)(*primal, *u))
            lhs, rhs = _inner(v, cotangent), _inner(u, fd)
            assert abs(lhs - rhs) <= tol * (1 + _scale([np.array(lhs)])) * 10, \
                f"VJP differs from finite differences: <v, J^T u> = {lhs}, <u, FD> = {rhs}"
            got["rev"] = cotangent
        if len(got) == 2:
            lhs, rhs = _inner(got["fwd"], u), _inner(v, got["rev"])
            assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs) + abs(rhs)) * \
                max(1, sum(np.size(x) for x in v)), \
                f"dot-product test failed: <Jv, u> = {lhs}, <v, J^T u> = {rhs}"
        results.append(got)
    if len(results) == 2:
        for mode in results[0]:
            for a, b in zip(results[0][mode], results[1][mode]):
                np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12,
                                           err_msg=f"{mode} under jit differs from eager")
