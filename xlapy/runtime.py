"""`xlapy.compile` and `xlapy.execute`: one module, compiled once, run many times."""

from __future__ import annotations

from xlapy import stablehlo
from xlapy.backends import Executable, get_backend
from xlapy.hlo import parse
from xlapy.hlo.ir import HloModule


def compile(module: HloModule | str, backend: str | None = None) -> Executable:  # noqa: A001
    """Compile `module` (an HloModule, HLO text, or StableHLO text as JAX prints it)
    for `backend`."""
    if isinstance(module, str | bytes):
        module = stablehlo.parse(module) if stablehlo.is_stablehlo(module) else parse(module)
    return get_backend(backend).compile(module)


def execute(module_or_text: HloModule | str, arrays=(), backend: str | None = None) -> list:
    """Parse if needed, compile, run once; returns the results as NumPy arrays."""
    return compile(module_or_text, backend).execute(*arrays)
