"""`xlapy aot`: compile a computation ahead of time into NAME.o and NAME.h.

    xlapy aot model.hlo --name mnist                       # HLO text (XLA's or JAX's)
    xlapy aot mymodel:predict --arg f32[1,784] --name mnist --constants-from params.npz
    xlapy aot mymodel:predict --arg f32[1,784] --name mnist --target aarch64-linux-gnu

A Python function is traced with zero arrays of the given shapes (in the
order of its parameters that the constants leave free). `--emit-test` adds
a C program, its data and a Makefile snippet that link the object, run it
and compare with the interpreter (`make -f NAME_test.mk check`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import xlapy
from xlapy.aot import TARGETS, compile_aot, trace, write_test
from xlapy.aot.trace import bind_constants, load_function
from xlapy.hlo import parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="an HLO text file, or module:function (file.py:function)")
    parser.add_argument("--arg", action="append", default=[], metavar="SHAPE",
                        help="a Python function's argument shape, e.g. f32[100,784] (repeat)")
    parser.add_argument("--name", required=True, help="C name of the computation (NAME_run)")
    parser.add_argument("--target", default="x86_64-linux-gnu", choices=sorted(TARGETS))
    parser.add_argument("--cpu", help="target CPU (default: generic for the target)")
    parser.add_argument("--features", help="LLVM target features, e.g. +avx2,+fma or +neon")
    parser.add_argument("--constants-from", metavar="FILE.npz",
                        help="bake these arrays in: a function's parameters (or an HLO "
                             "module's parameters, by name or argN) of the same names")
    parser.add_argument("--out", default=".", help="directory for NAME.o and NAME.h")
    parser.add_argument("--emit-test", action="store_true",
                        help="also write NAME_test.c, NAME_test.mk and NAME_test.bin")


def run(args: argparse.Namespace) -> int:
    constants = _load_npz(args.constants_from) if args.constants_from else {}
    source = Path(args.source)
    if source.suffix in (".hlo", ".txt", ".mlir") or source.is_file():
        if args.arg:
            raise ValueError("--arg is for Python functions; an HLO module declares its "
                             "parameters")
        module = parse(source.read_text())
        if constants:
            module = bind_constants(module, constants)
    else:
        module = trace(load_function(args.source), args.arg, constants)
    result = compile_aot(module, args.name, target=args.target, cpu=args.cpu,
                         features=args.features, source=args.source)
    obj, header = result.write(args.out)
    sig = result.signature
    print(f"{obj} ({len(result.object_code):,} bytes) and {header}: {sig.name}_run("
          + ", ".join(a.describe() for a in sig.arguments) + ") -> "
          + ", ".join(r.describe() for r in sig.results)
          + f", {sig.temp_bytes:,} bytes of temp, for {args.target}")
    if args.emit_test:
        rng = np.random.default_rng(0)
        inputs = [_example(a, rng) for a in sig.arguments]
        expected = xlapy.execute(module, inputs, backend="interpreter")
        files = write_test(sig, inputs, expected, args.out)
        print("test: " + ", ".join(str(f) for f in files)
              + f"  (make -C {args.out} -f {sig.name}_test.mk check)")
    return 0


def _load_npz(path: str) -> dict:
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read constants from {path}: {e}") from e


def _example(buf, rng) -> np.ndarray:
    """A deterministic input for the test: normal floats, small integers, bools."""
    dtype = buf.numpy_dtype
    if dtype == np.bool_:
        return rng.random(buf.dims) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 8, size=buf.dims).astype(dtype)
    return rng.standard_normal(buf.dims).astype(dtype)
