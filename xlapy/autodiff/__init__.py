"""Automatic differentiation as a transform of HLO (reverse and forward mode).

`xlapy.grad` and friends record a Python function as an HloComputation and
differentiate that; `vjp_module`/`jvp_module` do the same for any module,
parsed from text or traced. One rule per opcode lives in `rules/`.
"""

from xlapy.autodiff.api import (
    float0,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    value_and_grad,
    vjp,
)
from xlapy.autodiff.custom import custom_jvp, custom_vjp, stop_gradient
from xlapy.autodiff.module import jvp_module, vjp_module

__all__ = ["custom_jvp", "custom_vjp", "float0", "grad", "hessian", "jacfwd", "jacrev", "jvp",
           "jvp_module", "stop_gradient", "value_and_grad", "vjp", "vjp_module"]
