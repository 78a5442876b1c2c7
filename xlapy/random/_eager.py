"""xlapy.random's functions compiled when called eagerly, as jax.random's are
(JAX jits them): run op by op, a draw is dozens to hundreds of interpreted
operations of threefry and its transforms, 2-4 ms for ten numbers and 67 ms
for a normal f32[100, 784], against a cached executable's tens of µs.

Arguments that decide shapes and types (`shape`, `dtype`, `num`, `axis`...)
are static, as in jax.random; keys and parameters are traced (a `p` or
`minval` that changes every step compiles once). A signature compiles at
its second call: the first runs op by op, since a compile costs 50-190 ms
and a one-off draw (a layer's initial weights) is cheaper run once. Under a
trace or in lazy mode the function runs as it is: it is traced, or
recorded and replayed (`lazy_replay`), as any other.
"""

from __future__ import annotations

import functools
import inspect

from xlapy.core import compile_hook, lazy_state
from xlapy.core.dtypes import canonicalize_user_dtype
from xlapy.core.trace import current_trace

STATIC = frozenset({"shape", "dtype", "num", "axis", "replace", "independent", "mode",
                    "method"})
"""Parameters that decide the result's shape, type or algorithm."""


def compiled_when_eager(fn):
    """`fn`, run through `xlapy.jit` (its STATIC parameters static) when called
    outside any trace and outside lazy mode."""
    names = list(inspect.signature(fn).parameters)
    static = tuple(i for i, name in enumerate(names) if name in STATIC)
    dtype_at = names.index("dtype") if "dtype" in names else None
    jitted = None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        nonlocal jitted
        if current_trace() is not None or lazy_state.active() or compile_hook.JIT is None:
            return fn(*args, **kwargs)
        args = [tuple(a) if type(a) is list and i in static else a for i, a in enumerate(args)]
        kwargs = {k: tuple(v) if type(v) is list and k in STATIC else v
                  for k, v in kwargs.items()}
        # the dtype asked for, as the sampler would take it: a 64-bit one without
        # x64 warns at every call, as in JAX, not only when it compiles
        if dtype_at is not None and dtype_at < len(args) and args[dtype_at] is not None:
            args[dtype_at] = canonicalize_user_dtype(args[dtype_at])
        elif kwargs.get("dtype") is not None:
            kwargs["dtype"] = canonicalize_user_dtype(kwargs["dtype"])
        if jitted is None:
            jitted = compile_hook.JIT(fn, static)
        key = jitted.signature_key(args, kwargs)
        if key not in seen:
            if len(seen) >= SEEN:
                seen.clear()
            seen.add(key)
            return fn(*args, **kwargs)
        return jitted(*args, **kwargs)

    seen: set = set()
    return wrapper


SEEN = 1024
"""Signatures remembered per function (then forgotten all at once)."""
