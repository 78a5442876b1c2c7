"""`xlapy run-hlo`: run a module on a backend and compare with a reference
backend, like XLA's run_hlo_module."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from xlapy.backends import get_backend
from xlapy.hlo import parse
from xlapy.tools.fake_data import fake_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", help="HLO text files")
    parser.add_argument("--backend", default=None, help="backend to test (default: the default)")
    parser.add_argument("--reference", default="interpreter",
                        help="backend to compare with; '' for none (default: interpreter)")
    parser.add_argument("--abs-error-bound", type=float, default=1e-3)
    parser.add_argument("--rel-error-bound", type=float, default=1e-3)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="seed of the fake arguments")
    parser.add_argument("--print-literals", action="store_true")


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        with open(path) as f:
            module = parse(f.read())
        arguments = fake_arguments(module, args.seed)
        executable = get_backend(args.backend).compile(module)
        start = time.perf_counter()
        for _ in range(args.iterations):
            results = executable.execute(*arguments)
        seconds = (time.perf_counter() - start) / args.iterations
        print(f"{path}: {module.name} on {executable.backend}: {seconds * 1e3:.3f} ms")
        if args.print_literals:
            for i, value in enumerate(results):
                print(f"  result {i}: {value!r}")
        if args.reference:
            expected = get_backend(args.reference).compile(module).execute(*arguments)
            ok = compare(results, expected, args.abs_error_bound, args.rel_error_bound)
            print(f"  vs {args.reference}: {'close enough' if ok else 'MISMATCH'}")
            status |= 0 if ok else 1
    return status


def compare(results, expected, atol: float, rtol: float) -> bool:
    """True when every leaf agrees within the bounds (NaNs equal, ints exact)."""
    if isinstance(results, (list, tuple)):
        return len(results) == len(expected) and all(
            compare(r, e, atol, rtol) for r, e in zip(results, expected))
    r, e = np.asarray(results), np.asarray(expected)
    if r.dtype.kind in "biu":
        return bool(np.array_equal(r, e))
    return bool(np.allclose(r.astype(np.complex128), e.astype(np.complex128),
                            atol=atol, rtol=rtol, equal_nan=True))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    add_arguments(p)
    sys.exit(run(p.parse_args()))
