"""Ahead-of-time compilation: the tfcompile of xlapy.

`compile_aot(module, name, target)` compiles an HLO module into an object
file and a C header (`AotResult.write(dir)` writes NAME.o and NAME.h);
`trace(fn, shapes, constants)` makes the module from a Python function;
`write_test` writes a C program that checks the object against the
interpreter. The command line is `xlapy aot` (xlapy/tools/aot.py).
"""

from xlapy.aot.compiler import TARGETS, AotResult, compile_aot
from xlapy.aot.signature import Signature
from xlapy.aot.test_program import write_test
from xlapy.aot.trace import parse_shape, trace

__all__ = ["TARGETS", "AotResult", "Signature", "compile_aot", "parse_shape", "trace",
           "write_test"]
