"""xlapy: XLA, the compiler for linear algebra and machine learning, in Python."""

from xlapy import config, hlo, stablehlo
from xlapy.backends import available_backends
from xlapy.core.array import Array
from xlapy.core.lazy import block_until_ready, jit_scope
from xlapy.errors import CompileError, ExecutionError, ParseError, VerifierError, XlapyError
from xlapy.jit import RecompileWarning, jit

from xlapy import report  # noqa: E402,F401  isort: skip - its dump hook (--xlapy_dump_report)

from xlapy import lax, nn, numpy, random  # noqa: E402  isort: skip - after jit: they import it
from xlapy.runtime import compile, execute

from xlapy.autodiff import (  # noqa: E402  isort: skip - rules use lax
    custom_jvp,
    custom_vjp,
    float0,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    stop_gradient,
    value_and_grad,
    vjp,
)

from xlapy import distributed, sharding  # noqa: E402  isort: skip
from xlapy.spmd import pmap, shard_map  # noqa: E402  isort: skip
from xlapy.backends import default_backend, runnable_backends
from xlapy.backends.gpu import device_put
from xlapy.version import __version__  # noqa: F401  (xlapy.__version__)


def devices() -> list[str]:
    """The backends this machine can run, default first (`gpu` where a CUDA device
    and its driver are present)."""
    names = runnable_backends()
    return [default_backend()] + [n for n in names if n != default_backend()]


__all__ = ["Array", "CompileError", "ExecutionError", "ParseError", "RecompileWarning",
           "VerifierError", "XlapyError", "available_backends", "block_until_ready", "compile",
           "config",
           "custom_jvp", "custom_vjp", "device_put", "devices", "distributed", "execute",
           "float0", "grad", "hessian", "hlo", "jacfwd", "jacrev", "jit", "jit_scope", "jvp",
           "lax", "nn", "numpy", "pmap", "random", "shard_map", "sharding", "stablehlo",
           "stop_gradient",
           "value_and_grad", "vjp"]
