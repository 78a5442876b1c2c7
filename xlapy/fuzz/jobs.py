"""The work a campaign hands to its sandboxed workers, one function per kind.

Each is a plain module-level function of picklable arguments (HLO text, NumPy
arrays), so `Sandbox.run` can send it to a child process. A job raises on an
unexpected failure (a compile error, a crash of a rule): the sandbox reports
the exception, and the campaign counts it.
"""

from __future__ import annotations

import time

import numpy as np

import xlapy
from xlapy.fuzz.compare import mismatch
from xlapy.hlo import parse


def interpret(text: str, args: list) -> list:
    """The interpreter's results for module `text` (exactly the module: no passes)."""
    return xlapy.execute(text, args, backend="interpreter")


def compile_and_run(text: str, args: list, backend: str = "cpu") -> dict:
    """{'results', 'fallbacks', 'compile_seconds', 'run_seconds'} of `text` on `backend`."""
    module = parse(text)
    start = time.perf_counter()
    executable = xlapy.compile(module, backend=backend)
    compiled = time.perf_counter()
    results = executable.execute(*args)
    return {"results": _plain(results),
            "fallbacks": [i.opcode.value for i in getattr(executable, "fallbacks", [])],
            "compile_seconds": compiled - start,
            "run_seconds": time.perf_counter() - compiled}


def against_interpreter(text: str, args: list, backend: str = "cpu",
                        expected: list | None = None) -> str | None:
    """Why `backend`'s results for `text` differ from the interpreter's (or from
    `expected`, when given), or None when they agree; a compiled program that
    writes into its arguments is wrong too."""
    if expected is None:
        expected = interpret(text, args)
    before = [np.array(a, copy=True) for a in args]
    run = compile_and_run(text, args, backend)
    if run["fallbacks"]:
        return f"interpreter fallback for {run['fallbacks']}"
    return mismatch(_plain(expected), run["results"]) or _written(before, args)


def _written(before: list, after: list) -> str | None:
    """Which argument a compiled program wrote into (its caller's arrays are inputs
    only), or None."""
    for number, (old, new) in enumerate(zip(before, after)):
        if old.tobytes() != np.asarray(new).tobytes():
            return f"argument {number} was changed by the compiled program"
    return None


def _plain(results) -> list:
    """Results as nested lists/tuples of NumPy arrays (what pickles and compares)."""
    if isinstance(results, (list, tuple)):
        return type(results)(_plain(r) for r in results)
    return np.asarray(results)


def against_expected(text: str, args: list, backend: str, expected: list) -> str | None:
    """Why `backend`'s results for `text` differ from `expected` (another
    compiler's, e.g. JAX's), or None; `backend` may be the interpreter."""
    if backend == "interpreter":
        results = interpret(text, args)
    else:
        run = compile_and_run(text, args, backend)
        if run["fallbacks"]:
            return f"interpreter fallback for {run['fallbacks']}"
        results = run["results"]
    return mismatch(list(expected), _leaves(results))


def _leaves(results) -> list:
    """Nested result tuples flattened, as JAX's tree_leaves gives its results."""
    out = []
    for r in results:
        out.extend(_leaves(r) if isinstance(r, (list, tuple)) else [np.asarray(r)])
    return out
